/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The daemon's state and its event sources: the scan timer, inotify hints, signals. All
 * of them only ever say "look at X again"; setting_reconcile() does the rest. */
#pragma once

#include <stdbool.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "ethtool.h"
#include "host.h"
#include "rtnl.h"
#include "posture.h"
#include "table.h"

typedef enum ManagerState {
        MANAGER_STARTING,
        MANAGER_ENFORCING,
        MANAGER_OBSERVING,
        MANAGER_DEGRADED,
} ManagerState;

const char *manager_state_to_string(ManagerState s);

/* What was last announced with PropertiesChanged. */
typedef struct BusSnapshot {
        ManagerState state;
        uint64_t drift_events, corrections, failures;
        unsigned settings, settings_not_ok;
        uint64_t reload_usec;
        unsigned generation;
} BusSnapshot;

/* An interface as last seen, to tell a rename or a link coming up from other updates. */
typedef struct KnownLink {
        int ifindex;
        char name[16];
        unsigned flags;
} KnownLink;

/* This many distinct IRQs rewritten within FIGHT_WINDOW_USEC is another IRQ balancer. */
#define IRQ_WRITER_IRQS 5

typedef struct CheckJob CheckJob;

typedef struct Manager {
        sd_event *event;
        sd_event_source *scan_timer;
        sd_event_source *inotify_source;
        sd_event_source *dirty_source;

        Host *host;
        char *config_path;
        bool observe_override; /* --observe */
        bool restored;         /* Restore() happened: observing until the next good reload */

        Posture *posture;
        SettingTable table;
        struct Originals *originals;
        Reconciler rc;

        int inotify_fd;
        bool inotify_full_reported;
        bool rewatch; /* a watched file went away: re-add missing watches at the next scan */
        Setting **by_watch; /* inotify wd -> setting */
        size_t n_by_watch;
        Setting **dirty;
        size_t n_dirty, allocated_dirty;

        uint64_t watchdog_usec; /* WATCHDOG_USEC from systemd, 0 when off */

        /* IRQ balancers move many IRQs once each, which no single setting sees as a
         * fight: the last few distinct IRQs whose held affinity was rewritten, and when. */
        struct {
                unsigned irq[IRQ_WRITER_IRQS];
                uint64_t at[IRQ_WRITER_IRQS];
                bool reported;
                uint64_t last_usec;
        } irq_writer;

        bool initial_pass;
        bool quiet; /* a pass whose drift is already explained (after a restore) */
        size_t initial_corrections[_SETTING_KIND_MAX];
        char *last_status;
        char *last_online; /* sys/devices/system/cpu/online as last read */
        uint64_t last_reload_usec; /* CLOCK_REALTIME */
        char *last_reload_error;
        unsigned posture_generation; /* bumped by every successful reload */

        Rtnl *rtnl;
        EthtoolClient *ethtool;
        struct udev *udev;
        struct udev_monitor *udev_monitor;
        sd_event_source *rtnl_source;
        sd_event_source *ethtool_source;
        sd_event_source *udev_source;
        KnownLink *links;
        size_t n_links;

        sd_bus *bus;
        sd_event_source *bus_retry;
        sd_event_source *bus_socket_watch; /* the bus socket's directory, while disconnected */
        char *bus_socket_name;
        uint64_t bus_retry_usec;
        bool bus_failure_logged;
        BusSnapshot bus_emitted;
        CheckJob *check_job; /* the running Check() audit, NULL when none */
} Manager;

int manager_new(const char *config_path, Host *host, Posture *posture, bool observe_override, Manager **ret);
Manager *manager_free(Manager *m);
DEFINE_POINTER_CLEANUP(Manager, manager_free);

ManagerState manager_state(const Manager *m);

/* The first full pass: scan IRQs, reconcile everything. */
int manager_apply(Manager *m);
/* Sets up signals, timers, inotify, watchdog, and notifies READY=1. */
int manager_start(Manager *m);
int manager_run(Manager *m);

/* SIGHUP: reparse; on success swap posture and reconcile; on failure keep the old one. */
int manager_reload(Manager *m);
/* A full pass now, retrying failed and unsupported settings. */
void manager_reapply(Manager *m);

/* For the event sources in netwatch.c. */
void manager_queue_dirty(Manager *m, Setting *s);
void manager_update_status(Manager *m);
/* One line for what putting a posture in place changed (start, reload, a new NIC). */
void manager_log_applied(Manager *m, const char *what);

/* Puts every recorded original back and switches to observe mode. Returns the number of
 * settings restored, or -errno (the first failure; the others are still tried). */
int manager_restore(Manager *m, const char *why);

/* Prints the posture report (--once). Returns the number of settings that are not good. */
size_t manager_print_report(Manager *m, FILE *f);
