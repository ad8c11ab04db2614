/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The daemon's state, the scan timer and signals, and the wiring of the event sources
 * (daemon/source.h), which only ever say "look at X again"; setting_reconcile() does the
 * rest. The bus reads this state and is told of changes through ManagerListener; the
 * manager knows nothing of D-Bus. */
#pragma once

#include <stdbool.h>
#include <stdio.h>
#include <systemd/sd-event.h>

#include "host/host.h"
#include "noise/noise.h"
#include "config/posture.h"
#include "setting/irq.h"
#include "source.h"
#include "basic/string-table.h"
#include "setting/table.h"

typedef enum ManagerState {
        MANAGER_STARTING,
        MANAGER_ENFORCING,
        MANAGER_OBSERVING,
        MANAGER_DEGRADED,
        _MANAGER_STATE_MAX,
        _MANAGER_STATE_INVALID = -EINVAL,
} ManagerState;

DECLARE_STRING_TABLE_LOOKUP(manager_state, ManagerState);

/* Who hears about changes (lowlatd's bus object). */
typedef struct ManagerListener {
        /* Something a property shows may have changed: say what differs. */
        void (*changed)(void *userdata);
        /* A setting drifted, or was corrected; observed as people read it. */
        void (*drift)(void *userdata, const Setting *s, const char *observed, bool corrected);
        void *userdata;
} ManagerListener;

typedef struct Manager {
        sd_event *event;
        sd_event_source *scan_timer;
        sd_event_source *dirty_source;

        Host *host;
        char *config_path;
        bool observe_override; /* --observe */
        bool restored;         /* Restore() happened: observing until the next good reload */
        /* The originals on file the last restore did not write, as values their setting could
         * not have had (RestoreSkipped on the bus: Restore()'s reply keeps its one number). */
        uint32_t restore_skipped;
        int irq_names_error; /* irq_table_names_error() as last logged */

        Posture *posture;
        SettingTable table;
        Originals *originals;
        SettingContext rc;

        Setting **dirty; /* what the sources asked to look at */
        size_t n_dirty, allocated_dirty;

        uint64_t watchdog_usec; /* WATCHDOG_USEC from systemd, 0 when off */
        IrqWriterWatch irq_writer;

        bool starting; /* the first pass has not finished */
        size_t applied[_SETTING_KIND_MAX]; /* corrections while putting a posture in place */
        char *last_status; /* the last STATUS= line, and what it was made of */
        ManagerState last_status_state;
        size_t last_status_n, last_status_counts[_SETTING_STATE_MAX];
        char *last_online; /* sys/devices/system/cpu/online as last read */
        uint64_t last_reload_usec; /* CLOCK_REALTIME */
        char *last_reload_error;
        char *last_refused_reload; /* why the last ReloadIfUnchanged() was refused */
        char *boot_params; /* what the kernel command line lacks (condition.h), NULL: nothing */
        char *boot_refused; /* why lowlatctl boot writes no line for this posture (audit_boot_refusal()), or NULL */
        unsigned posture_generation; /* bumped by every successful reload */

        SourceRegistry sources;
        Source *noise_source; /* one of sources, for the bus */
        ManagerListener listener;
} Manager;

int manager_new(const char *config_path, Host *host, Posture *posture, bool observe_override, Manager **ret);
Manager *manager_free(Manager *m);
DEFINE_POINTER_CLEANUP(Manager, manager_free);

ManagerState manager_state(const Manager *m);
/* Observe mode: --observe, the config's mode, or after a restore. */
bool manager_observing(const Manager *m);

/* The first full pass: plan, scan IRQs, reconcile everything. */
int manager_apply(Manager *m);
/* Sets up signals, the scan timer, the watchdog, and starts every event source. */
int manager_start(Manager *m);
/* READY=1, once whoever listens (the bus) is set up too. */
void manager_ready(Manager *m);
int manager_run(Manager *m);

/* SIGHUP: reparse; on success swap posture and reconcile; on failure keep the old one. */
int manager_reload(Manager *m);
/* manager_reload() if the files read have digest (the Config.digest a diff reported),
 * else nothing: -ESTALE, with m->last_refused_reload saying why. */
int manager_reload_if_unchanged(Manager *m, uint64_t digest);
/* A full pass now, retrying failed and unsupported settings. */
void manager_reapply(Manager *m);

void manager_update_status(Manager *m);

/* Puts every recorded original back and switches to observe mode. Returns the number of
 * settings restored, or -errno (the first failure; the others are still tried). */
int manager_restore(Manager *m, const char *why);

/* The noise counters re-read for a reader (the bus), unless the last read is younger
 * than NOISE_REFRESH_USEC (daemon/noisewatch.h). NULL when they cannot be had. */
const Noise *manager_noise(Manager *m);
/* As the last scan read them, NULL until the first pass; and the gate they are read
 * through ("perf: ..." or "off: why"; NULL with no watched CPU). */
const Noise *manager_noise_counters(const Manager *m);
const char *manager_noise_gate(const Manager *m);
