/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A setting is one thing lowlatd keeps: a desired value, the value last observed on the
 * host, and a state. setting_reconcile() is the single path from "look at X again" to
 * reading, comparing, correcting and reporting, whatever X is. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "cpuset.h"
#include "ethtool.h"
#include "host.h"
#include "posture.h"
#include "rtnl.h"
#include "strays.h"

typedef enum SettingKind {
        SETTING_IRQ_AFFINITY,
        SETTING_IRQ_DEFAULT_AFFINITY,
        SETTING_SYSCTL,
        SETTING_CPU_DMA_LATENCY,
        SETTING_GOVERNOR,
        SETTING_CPUIDLE,
        SETTING_STRAY_TASKS,
        SETTING_NIC_COALESCE,
        SETTING_NIC_RING,
        SETTING_NIC_CHANNELS,
        SETTING_NIC_FEATURE,
        SETTING_NIC_QDISC,
        _SETTING_KIND_MAX,
} SettingKind;

typedef enum SettingState {
        SETTING_PENDING, /* not looked at yet */
        SETTING_OK,
        SETTING_DRIFTED,
        SETTING_CORRECTED,
        SETTING_FAILED,
        SETTING_UNSUPPORTED,
        SETTING_UNMOVABLE,
        _SETTING_STATE_MAX,
} SettingState;

const char *setting_kind_to_string(SettingKind k);
const char *setting_state_to_string(SettingState s);
static inline bool setting_state_is_good(SettingState s) {
        return s == SETTING_OK || s == SETTING_CORRECTED;
}

/* Someone else rewriting a setting this often is a fight; corrections then slow down. */
#define FIGHT_CORRECTIONS 5
#define FIGHT_WINDOW_USEC (60 * USEC_PER_SEC)
#define FIGHT_BACKOFF_USEC (10 * USEC_PER_SEC)
#define FIGHT_QUIET_USEC (60 * USEC_PER_SEC)
/* A failed correction is tried again this much later, not on every scan. */
#define FAILED_RETRY_USEC (60 * USEC_PER_SEC)
/* fds kept free of persistent reads, for writes, sockets and the event loop. */
#define SETTING_FD_RESERVE 256U

typedef struct Setting {
        SettingKind kind;
        char *object;  /* "42", "net.core.busy_poll", "cpu3", ... */
        char *path;    /* relative to the root; read and written */
        char *label;   /* extra words for humans (an IRQ's action names), may be NULL */
        char *desired; /* text form of the desired value */

        SettingState state;
        char *observed; /* text form of the last observed value, NULL before the first read */
        char *reason;   /* why failed, unsupported or unmovable */

        int fd;           /* persistent read fd, opened on first use */
        int effective_fd; /* IRQs: effective_affinity_list, -1 when the kernel has none */
        int hold_fd;      /* cpu_dma_latency: the open request that keeps the constraint */

        int ifindex;         /* NIC settings: the interface, and */
        EthtoolParam param;  /* the ethtool parameter, or */
        char *feature;       /* the feature name ("rx-gro") */
        uint32_t value;      /* NIC parameters: the desired value */

        CPUSet cpus;   /* IRQs: desired CPUs; default affinity: the mask */
        bool exact;    /* IRQs: pinned, so the affinity must equal cpus */
        int32_t latency_usec;
        int32_t held_usec;   /* cpu_dma_latency: the value our request holds now */
        Strays *strays;      /* stray_tasks: the last scan, and the tasks left alone */

        uint64_t corrections_at[FIGHT_CORRECTIONS]; /* ring of recent correction times */
        unsigned corrections_pos;
        bool fighting;
        bool rewritten; /* the last drift moved a value lowlatd held (not a new object) */
        uint64_t last_correction_usec;
        uint64_t last_drift_usec;
        uint64_t retry_after_usec;

        int watches[2]; /* inotify watch descriptors, -1 when none */
        bool seen;      /* scan bookkeeping: still present on the host */
        bool dirty;     /* queued for a look by an event source */
        bool readback_retry; /* NIC settings: a read-back mismatch gets one more look */
        bool empty_seen; /* the last scan read "" (a writer between O_TRUNC and write?) */
} Setting;

typedef enum SettingEvent {
        SETTING_EVENT_DRIFT,
        SETTING_EVENT_CORRECTED,
        SETTING_EVENT_CORRECTION_FAILED,
        SETTING_EVENT_UNSUPPORTED,
        SETTING_EVENT_UNMOVABLE,
        SETTING_EVENT_FIGHT,
        SETTING_EVENT_FIGHT_ENDED,
        SETTING_EVENT_RECOVERED,
        _SETTING_EVENT_MAX,
} SettingEvent;

typedef struct ReconcileCounters {
        uint64_t drift_events;
        uint64_t corrections;
        uint64_t failures;
} ReconcileCounters;

const char *setting_event_to_string(SettingEvent e);

typedef void (*SettingEventHandler)(void *userdata, SettingEvent event, const Setting *s);

typedef struct Reconciler {
        const Host *host;
        const Posture *posture;
        EthtoolClient *ethtool; /* NULL when the kernel has no ethtool netlink */
        struct Originals *originals; /* NULL: nothing is recorded, restore is not possible */
        Rtnl *rtnl;
        bool observe;
        bool hinted;   /* looking because of an inotify hint rather than the scan */
        bool applying; /* putting a new posture in place (start, reload): not a fight */
        unsigned fd_limit; /* RLIMIT_NOFILE; persistent fds stop short of it, 0 = no check */
        SettingEventHandler handler;
        void *userdata;
        /* stray_tasks: how a task is moved. NULL: sched_setaffinity(), and only on a live
         * host (host_is_live()); tests set their own to act on a fake tree. */
        TaskAffinitySetter set_task_affinity;
        void *task_affinity_userdata;
        ReconcileCounters counters;
        CPUSet scratch; /* parse buffer, so a scan does not allocate */
} Reconciler;

/* Constructors; desired values come from the posture. */
int setting_new_irq(const Posture *p, unsigned irq, const char *irq_name, Setting **ret);
int setting_new_default_affinity(const Posture *p, Setting **ret);
/* An IRQ's action names changed (a driver requested or released it): recompute its
 * target from the pins. */
int setting_irq_retarget(const Posture *p, Setting *s, const char *irq_name);
/* The same with the target given: cpus, exactly (a pin) or as "stay within". Returns 1
 * when the target changed, 0 when it was already that. */
int setting_irq_set_target(Setting *s, const char *irq_name, const CPUSet *cpus, bool exact);
int setting_new_sysctl(const char *key, const char *value, Setting **ret);
int setting_new_cpu_dma_latency(int32_t usec, Setting **ret);
int setting_new_governor(unsigned cpu, const char *governor, Setting **ret);
/* An idle state deeper than the latency target, kept disabled on an isolated CPU. */
int setting_new_cpuidle(unsigned cpu, unsigned state, const char *name, Setting **ret);
/* [cpus] evict_strays: user tasks allowed on the isolated CPUs, desired "none" (see
 * lib/strays.c for what is never moved). The object is the isolated CPU list. */
int setting_new_stray_tasks(const Posture *p, Setting **ret);
int setting_new_nic_param(int ifindex, const char *ifname, EthtoolParam p, uint32_t value, Setting **ret);
int setting_new_nic_feature(int ifindex, const char *ifname, const char *feature, bool on, Setting **ret);
int setting_new_nic_qdisc(int ifindex, const char *ifname, const char *kind, Setting **ret);
static inline bool setting_kind_is_nic(SettingKind k) {
        return k >= SETTING_NIC_COALESCE && k <= SETTING_NIC_QDISC;
}
Setting *setting_free(Setting *s);
DEFINE_POINTER_CLEANUP(Setting, setting_free);

/* Two settings are the same thing held to the same value: a reload keeps the old one
 * (its fds, its hold on /dev/cpu_dma_latency, its history). */
bool setting_same(const Setting *a, const Setting *b);
/* Moves history and fds from old to new when they describe the same object. */
void setting_inherit(Setting *new_setting, Setting *old);

/* Reads the setting, and corrects it if it drifted and the mode allows. force: look again
 * even if the value is unchanged since the last read and retry failed/unsupported ones.
 * Returns -ENOENT when the object vanished (an IRQ freed), else 0. */
int setting_reconcile(Reconciler *rc, Setting *s, uint64_t now, bool force);

/* Puts back the value recorded before lowlatd first changed s, and forgets it (the caller
 * commits the originals file after a batch). Returns 1
 * when something was restored, 0 when there was nothing to restore, or -errno. */
int setting_restore(Reconciler *rc, Setting *s);

/* Checks whether a fight has calmed down; called from the periodic scan. */
void setting_tick(Reconciler *rc, Setting *s, uint64_t now);

/* Drops the hold on /dev/cpu_dma_latency and closes fds. */
void setting_release(Setting *s);
