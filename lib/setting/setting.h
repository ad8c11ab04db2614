/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A setting is one thing lowlatd keeps: a desired value, the value last observed on the
 * host, and a state. setting_reconcile() is the single path from "look at X again" to
 * reading, comparing, correcting and reporting, whatever X is; what differs between kinds
 * of setting is behind a table of operations (SettingVTable), one file per kind. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "basic/cpuset.h"
#include "basic/event.h"
#include "host/host.h"
#include "config/posture.h"
#include "basic/string-table.h"
#include "host/task.h"
#include "setting/kind.h"

typedef enum SettingState {
        SETTING_PENDING, /* not looked at yet */
        SETTING_OK,
        SETTING_DRIFTED,
        SETTING_CORRECTED,
        SETTING_FAILED,
        SETTING_UNSUPPORTED,
        SETTING_UNMOVABLE,
        _SETTING_STATE_MAX,
        _SETTING_STATE_INVALID = -EINVAL,
} SettingState;

DECLARE_STRING_TABLE_LOOKUP(setting_state, SettingState);

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
/* Files one setting may ask inotify to watch. */
#define SETTING_WATCHES_MAX 2

/* What every setting has, whatever its kind. A kind's own data follows in a struct that
 * starts with this one (see SettingVTable.object_size); only its file looks inside. */
typedef struct Setting {
        SettingKind kind;
        /* "42", "net.core.busy_poll", "cpu3", "eth0/rx_usecs", ...: in the setting's own
         * allocation (setting_alloc()), never freed or replaced on its own */
        char *object;
        char *label;   /* extra words for humans (an IRQ's action names), may be NULL */
        /* How planning had to change the value asked for to one the host takes (a frequency
         * floor clamped to the driver's range), in words; reported when the setting is
         * added (EVENT_CLAMPED). NULL when nothing was changed. */
        char *clamped;
        char *desired; /* text form of the desired value */

        SettingState state; /* changed through setting_set_state() only */
        size_t *state_counts; /* the table's count of settings per state, NULL outside one */
        char *observed; /* text form of the last observed value, NULL before the first read */
        char *reason;   /* why failed, unsupported or unmovable */

        /* Ring of FIGHT_CORRECTIONS recent correction times, allocated at the first
         * correction outside applying a posture and freed when a fight ends: most settings
         * are never corrected, and at 1,000 IRQs 40 bytes each were 40 kB of an idle
         * daemon's memory. NULL: no correction since. */
        uint64_t *corrections_at;
        unsigned corrections_pos;
        bool fighting;
        bool rewritten; /* the last drift moved a value lowlatd held (not a new object) */
        uint64_t last_correction_usec;
        uint64_t last_drift_usec;
        uint64_t retry_after_usec;

        int watches[SETTING_WATCHES_MAX]; /* inotify watch descriptors, -1 when none */
        bool dirty;          /* queued for a look by an event source */
        bool readback_retry; /* a read-back mismatch had its one more look */
        bool empty_seen;     /* the last scan read "" (a writer between O_TRUNC and write?) */
        unsigned seen_scan;  /* the table scan of its kind that last found it (table_scan_mark()) */
} Setting;

/* How one look at a setting came about; passed down, never kept. */
typedef enum ReconcileFlags {
        /* Look again even if the value is unchanged, open files afresh, and retry what
         * failed or was unsupported (reload, Reapply, a link that came up). */
        RECONCILE_FORCE = 1 << 0,
        /* An event said this may have changed (an inotify hint, a netlink notification).
         * An empty read is then a writer caught between open(O_TRUNC) and write(), never
         * a value; and a kind whose events carry the value (ethtool's FEATURES_NTF) may
         * take it from there instead of asking. */
        RECONCILE_HINTED = 1 << 1,
        /* Putting a posture in place (start, reload, a new NIC): corrections are not a
         * fight, and the handler summarises them instead of reporting each. */
        RECONCILE_APPLYING = 1 << 2,
        /* Drift that is already explained (the pass after a restore): not reported. */
        RECONCILE_QUIET = 1 << 3,
        /* The read right after a write: a kind whose write came back with the kernel's
         * own account of the result (FEATURES_SET's reply) may take the value from it. */
        RECONCILE_READBACK = 1 << 4,
} ReconcileFlags;

/* Drift and corrections count only what happened to a posture already in place: what a
 * pass under RECONCILE_APPLYING (start, reload, a new NIC or device) set is counted in
 * applied instead, and the pass after a restore (RECONCILE_QUIET) counts no drift, so
 * that an alert on drift does not fire at every start. Failures count at any time. */
typedef struct ReconcileCounters {
        uint64_t drift_events;
        uint64_t corrections;
        uint64_t failures;
        uint64_t applied;
        uint64_t fights; /* fights begun (FIGHT_CORRECTIONS within FIGHT_WINDOW_USEC) */
} ReconcileCounters;

typedef void (*SettingEventHandler)(void *userdata, EventId event, const Setting *s, ReconcileFlags flags);

typedef struct SettingTable SettingTable;
typedef struct EthtoolClient EthtoolClient;
typedef struct Rtnl Rtnl;
typedef struct Originals Originals;
typedef struct SystemdClient SystemdClient;
/* Changes one thread's affinity; 0 or -errno (ESRCH: it exited). */
typedef int (*TaskAffinitySetter)(void *userdata, pid_t tid, const CPUSet *cpus);
/* Changes one thread's scheduling policy and real-time priority; 0 or -errno (ESRCH: it
 * exited). */
typedef int (*TaskSchedulerSetter)(void *userdata, pid_t tid, SchedPolicy policy, unsigned priority);

/* Everything a look at a setting may need from its surroundings. */
typedef struct SettingContext {
        const Host *host;
        const Posture *posture;
        EthtoolClient *ethtool; /* NULL when the kernel has no ethtool netlink */
        Rtnl *rtnl;
        SystemdClient *systemd; /* PID 1's bus API (slice_cpus); NULL when not set up */
        Originals *originals; /* NULL: nothing is recorded, restore is not possible */
        bool observe;
        unsigned fd_limit; /* RLIMIT_NOFILE; persistent fds stop short of it, 0 = no check */
        SettingEventHandler handler;
        void *userdata;
        /* stray_tasks, kthread_affinity: how a task is moved. NULL: sched_setaffinity(), and
         * only on a live host (host_is_live()); tests set their own to act on a fake tree. */
        TaskAffinitySetter set_task_affinity;
        void *task_affinity_userdata;
        /* kthread_policy: how a task's policy is set. NULL: sched_setscheduler(), the same way. */
        TaskSchedulerSetter set_task_scheduler;
        void *task_scheduler_userdata;
        ReconcileCounters counters;
        CPUSet scratch; /* parse buffer, so a scan does not allocate */
        /* While a drift is reported after its correction's write: what the kind described
         * before the write (setting_describe_observed()), NULL otherwise. The handler
         * reports this text, not one described after the write changed what it reads. */
        const char *drift_described;
} SettingContext;

/* Where a kind's settings stand in ListSettings: host-wide ones, then each NIC's, then
 * each IRQ's, then each kernel thread's; within a group by sort key (ifindex, IRQ number,
 * thread id), kind, then object. */
typedef enum SettingGroup {
        SETTING_GROUP_HOST,
        SETTING_GROUP_NIC,
        SETTING_GROUP_IRQ,
        SETTING_GROUP_KTHREAD,
} SettingGroup;

/* What a read-back that still differs after a good write means. */
typedef enum SettingReadback {
        READBACK_FAILS,       /* the write did not take: a failure */
        READBACK_LOOKS_AGAIN, /* one more look before it is a failure (a NIC being torn down
                               * answers a write, then reads back empty before its removal
                               * is announced) */
        READBACK_IS_DRIFT,    /* the value is a set that grows by itself (new stray tasks
                               * appear all the time): still drift, no failure */
} SettingReadback;

/* A kind of setting: the operations the state machine calls. Adding a kind is one file
 * that defines `const SettingVTable NAME_vtable` and one line in SETTING_KINDS above.
 *
 * The return values steer the state machine, so a kind maps the host's errors onto them
 * and puts the host's own words in s->reason (setting_set_reason()):
 *   0 (or, for write, a positive count)  done;
 *   -ENOENT      the object is gone from the host (an IRQ freed, an interface removed):
 *                the setting is dropped, and planned again if the object returns. A kind
 *                whose objects cannot vanish never returns it (a missing sysctl is
 *                -EOPNOTSUPP);
 *   -EOPNOTSUPP  this host cannot do it: unsupported, reported once, retried only when
 *                forced;
 *   -EPERM       (write) the kernel refuses to change this object for good: unmovable,
 *                reported once, never written again;
 *   other -errno a failure, reported once and retried after FAILED_RETRY_USEC. */
typedef struct SettingVTable {
        /* Size of the kind's struct, which starts with a Setting. */
        size_t object_size;
        SettingGroup group;
        /* Journal and messages call the object "<noun> <object>"; NULL: the kind's name. */
        const char *noun;
        /* The journal field that carries s->label, NULL when the label is not sent. */
        const char *label_field;
        SettingReadback readback;

        /* Required. Reads the current value as text into buf. RECONCILE_FORCE: the object
         * may have been replaced (a module reloaded): open it afresh. */
        int (*read)(Setting *s, SettingContext *rc, char *buf, size_t size, ReconcileFlags flags);
        /* Required. Writes value: the desired value, or on restore the original. */
        int (*write)(Setting *s, SettingContext *rc, const char *value);
        /* Whether the host would refuse the desired value, told without writing: -EPERM
         * (unmovable: a kernel thread with PF_NO_SETAFFINITY, a read-only affinity file) or
         * -EOPNOTSUPP (unsupported), with s->reason set; 0 when only a write can tell.
         * Observe mode asks it where enforce mode writes, so that both give a refused
         * setting the same state; write() refuses the same things the same way (it may
         * call this first). NULL: nothing is known before a write. */
        int (*refuses)(Setting *s, SettingContext *rc);
        /* Whether s->observed is the desired value. NULL: the two texts are equal. */
        bool (*matches)(Setting *s, SettingContext *rc);
        /* Before every comparison in enforce mode: a kind whose value is a request held
         * open (cpu_dma_latency) takes or renews it, even when the value looks right. */
        void (*prepare)(Setting *s, SettingContext *rc);

        /* The value to record before the first write, so that restore can put it back
         * (*ret = NULL: nothing is recorded, and nothing restored). NULL: s->observed. */
        int (*original)(const Setting *s, char **ret);
        /* Whether an original read back from the file is a value this kind could have read
         * from the host, by the rules its desired values follow: NULL when it is, else why
         * not, in words. Restore writes no original that fails (the file is only as
         * trustworthy as the directory it is in). NULL: only the rules every kind shares
         * (shorter than any read, no control characters). */
        const char *(*original_problem)(const Setting *s, SettingContext *rc, const char *value);
        /* Puts the original back. NULL: write it, unless the host has it already. */
        int (*restore)(Setting *s, SettingContext *rc, const char *original);

        /* A setting that acts on many things at once (stray tasks): the ones it had to
         * leave alone since the last call, as a reason for one failure report. Returns 1
         * with *ret_reason set, 0 when there are none. */
        int (*take_left_alone)(Setting *s, char **ret_reason);
        /* After a good read-back: whether the write changed anything (the strays may have
         * exited by themselves). NULL: it did. */
        bool (*changed_anything)(const Setting *s);

        /* The observed value as people read it (an IRQ adds its effective CPUs). NULL:
         * s->observed. */
        int (*describe_observed)(Setting *s, SettingContext *rc, char *buf, size_t size);
        /* File i (0..SETTING_WATCHES_MAX-1) to watch with inotify, relative to the root;
         * 0 when there is none. NULL: nothing to watch. */
        int (*watch_path)(const Setting *s, unsigned i, char *buf, size_t size);
        /* Files under the root that this kind keeps, as fnmatch() patterns with FNM_PATHNAME
         * relative to the root (see governor_files in setting/governor.c), NULL-terminated;
         * NULL: none. [sysfs] refuses them: one file, one keeper. */
        const char *const *owns;
        /* Order within the group (IRQ number, ifindex). NULL: 0. */
        uint64_t (*sort_key)(const Setting *s);
        /* Further conditions for two settings to be the same (an IRQ's pin). NULL: kind,
         * object and desired decide. */
        bool (*same)(const Setting *a, const Setting *b);

        /* Moves what the kind holds (fds, the latency request, tasks left alone) from old
         * to s when a reload keeps the object. same_value: the desired value is unchanged. */
        void (*inherit)(Setting *s, Setting *old, bool same_value);
        /* Closes fds and drops what is held; the setting may be looked at again later. */
        void (*release)(Setting *s);
        /* Frees the kind's own data (release() has run). */
        void (*done)(Setting *s);

        /* Planning (lib/setting/table.c calls these). Adds the settings the posture asks of this
         * kind, as the host is now. NULL: someone else plans them (NIC settings: the link
         * monitor, through lib/setting/nic.h). */
        int (*plan)(SettingTable *t, const Host *h, const Posture *p);
        /* Objects that come and go (IRQs): adds the new ones and drops the vanished ones;
         * called on every full pass. */
        int (*rescan)(SettingTable *t, const Host *h, const Posture *p);
        /* Frees what the kind keeps in the table beside its settings (kind_state). */
        void (*free_table_state)(void *state);
} SettingVTable;

extern const SettingVTable *const setting_vtables[_SETTING_KIND_MAX];
#define SETTING_VTABLE(s) (setting_vtables[(s)->kind])

/* For the kinds' constructors: a setting of kind k with object (copied), state pending,
 * and the kind's own data zeroed. NULL when out of memory. */
Setting *setting_alloc(SettingKind k, const char *object);
Setting *setting_free(Setting *s);
DEFINE_POINTER_CLEANUP(Setting, setting_free);
/* Changes the state, keeping the table's counts in step (a status line after every event
 * then costs nothing, whatever the number of IRQs). */
static inline void setting_set_state(Setting *s, SettingState state) {
        if (s->state_counts) {
                s->state_counts[s->state]--;
                s->state_counts[state]++;
        }
        s->state = state;
}
/* For the kinds: sets s->reason. */
void setting_set_reason(Setting *s, const char *fmt, ...) _printf_(2, 3);
/* For the kinds: replaces s->desired. */
int setting_set_desired(Setting *s, const char *desired);
/* For the kinds whose value is an affinity (IRQs, kernel threads): whether the CPU list
 * observed is in order, exactly the CPUs in exact when given, else none of the isolated
 * ones. An empty or unreadable list never is. */
bool setting_affinity_matches(SettingContext *rc, const char *observed, const CPUSet *exact);

/* The checks the kinds' original_problem() share: NULL when an original read back from
 * the file could have been read from the host, else why not, in words. */
/* A CPU list (may_be_empty: or none at all), of this host's possible CPUs (an affinity may
 * keep one that is offline now). */
const char *setting_cpu_list_problem(SettingContext *rc, const char *value, bool may_be_empty);
/* A CPU mask in the kernel's comma-grouped hex, of this host's possible CPUs; all zeros
 * only where may_be_empty (RPS and XPS off). */
const char *setting_cpu_mask_problem(SettingContext *rc, const char *value, bool may_be_empty);
/* An unsigned decimal number, at most max. */
const char *setting_number_problem(const char *value, uint64_t max);
/* One of the words of the NULL-terminated list. */
const char *setting_word_problem(const char *value, const char *const *words);

/* Two settings are the same thing held to the same value: a reload keeps the old one
 * (its fds, its hold on /dev/cpu_dma_latency, its history). */
bool setting_same(const Setting *a, const Setting *b);
/* Moves what was learnt about old (fds, watches, and, when the desired value is the same,
 * state and history) to its replacement n. The caller decides that they describe the
 * same object: the same kind and object, or the same NIC key under a new name. */
void setting_inherit(Setting *n, Setting *old);

/* Reads the setting, and corrects it if it drifted and the mode allows. Without
 * RECONCILE_FORCE an unchanged value is not looked at again, and failed or unsupported
 * settings wait. Returns -ENOENT when the object vanished (an IRQ freed), else 0. */
int setting_reconcile(SettingContext *rc, Setting *s, uint64_t now, ReconcileFlags flags);

/* The setting on the host now, judged but not acted on (lowlatctl diff): no state, event,
 * original or write, and nothing prepared for a write. s->observed is what was read.
 * Returns SETTING_OK when the host already has the desired value, SETTING_DRIFTED when
 * applying it would write, SETTING_UNMOVABLE or SETTING_UNSUPPORTED when the host refuses
 * it (as far as that is known without a write), or a negative errno when it cannot be
 * read (s->reason says why). */
int setting_probe(SettingContext *rc, Setting *s);

/* Puts back the value recorded before lowlatd first changed s, and forgets it (the caller
 * commits the originals file after a batch). Returns 1 when something was restored, 0
 * when there was nothing to restore, -EBADMSG when the original on file is not a value
 * the kind could have read (nothing written, the entry forgotten, s->reason says why),
 * or -errno. */
int setting_restore(SettingContext *rc, Setting *s);

/* Checks whether a fight has calmed down; called from the periodic scan. */
void setting_tick(SettingContext *rc, Setting *s, uint64_t now, ReconcileFlags flags);

/* Drops what the setting holds (the /dev/cpu_dma_latency request) and closes its fds. */
void setting_release(Setting *s);

/* The observed value as people read it, into buf ("-" before the first read). */
const char *setting_describe_observed(Setting *s, SettingContext *rc, char *buf, size_t size);
/* "IRQ 24 (virtio0-input.0)", "sysctl net.core.busy_poll": how messages name s. */
int setting_describe(const Setting *s, char *buf, size_t size);
/* File i to watch with inotify (see SettingVTable.watch_path). */
int setting_watch_path(const Setting *s, unsigned i, char *buf, size_t size);
/* ListSettings order. */
int setting_compare(const Setting *a, const Setting *b);
