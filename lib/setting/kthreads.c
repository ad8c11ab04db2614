/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* kthread_affinity and kthread_policy: a kernel thread's allowed CPUs and its scheduling
 * policy, one setting each per thread, the object its thread id. A thread is one task for
 * as long as its id and start time (field 22 of /proc/TID/stat) stay the same; another
 * task with the same id is another object, so the setting is dropped and planned afresh.
 *
 * The kernel refuses to move a thread with PF_NO_SETAFFINITY (per-CPU threads: ksoftirqd,
 * migration, cpuhp, bound kworkers; workqueue workers and rescuers) or answers EINVAL:
 * unmovable, reported once, never written again, and no original is kept for it. A thread
 * that exits between being listed and being moved (ESRCH) is gone, not a failure.
 *
 * Like evict_strays, the moves need this host's own tasks (--root / with our own /proc):
 * under a fake root the ids are not this host's threads, and the settings are unsupported
 * unless a test gives its own movers (SettingContext.set_task_affinity, set_task_scheduler). */
#include <inttypes.h>
#include <string.h>

#include "basic/array.h"
#include "setting/originals.h"
#include "setting/file.h"
#include "setting/kthreads.h"
#include "basic/util.h"

typedef struct KthreadSetting {
        Setting setting;
        pid_t tid;
        uint64_t start_time; /* the task's, from the plan; a read that finds another is gone */
        SettingFile stat;    /* proc/TID/stat through a persistent fd */
        uint64_t flags;      /* PF_* as last read */
        int live;            /* host_is_live(), asked once; -1 until then */
        /* kthread_affinity */
        bool exact;   /* a [kthread] section's cpus=: exactly cpus; else off the isolated CPUs */
        CPUSet cpus;  /* exact: the target */
        CPUSet allowed; /* as last read: a move keeps what is not isolated */
        /* kthread_policy */
        SchedPolicy policy;
        unsigned priority;
} KthreadSetting;

#define KTHREAD(s) ((KthreadSetting *) (s))

bool setting_is_kthread(const Setting *s, pid_t *ret_tid) {
        if (s->kind != SETTING_KTHREAD_AFFINITY && s->kind != SETTING_KTHREAD_POLICY)
                return false;
        if (ret_tid)
                *ret_tid = KTHREAD(s)->tid;
        return true;
}

/* comm is the kernel's choice, but the bus takes only UTF-8 and the journal one line. */
static void printable(char *s) {
        for (; *s; s++)
                if ((unsigned char) *s < 0x20 || (unsigned char) *s >= 0x7f)
                        *s = '?';
}

static int kthread_setting_new(SettingKind kind, const Posture *p, pid_t tid, const TaskStat *ts,
                               const KthreadTarget *target, Setting **ret) {
        _cleanup_(setting_freep) Setting *s = NULL;
        _cleanup_free_ char *desired = NULL;
        char object[16], comm[sizeof(ts->comm)], sched[32];
        KthreadSetting *k;

        snprintf(object, sizeof(object), "%d", (int) tid);
        s = setting_alloc(kind, object);
        if (!s)
                return -ENOMEM;
        k = KTHREAD(s);
        k->tid = tid;
        k->start_time = ts->start_time;
        k->live = -1;
        setting_file_init(&k->stat, strdup_printf("proc/%d/stat", (int) tid));
        snprintf(comm, sizeof(comm), "%s", ts->comm);
        printable(comm);
        if (!k->stat.path || !(s->label = strdup(comm)))
                return -ENOMEM;

        if (kind == SETTING_KTHREAD_AFFINITY) {
                /* Off the isolated CPUs reads as the housekeeping list, as for an IRQ
                 * without a pin: any CPUs that are not isolated will do. */
                k->exact = target->cpus != NULL;
                if (cpuset_copy(&k->cpus, target->cpus ?: &p->housekeeping) < 0 || !(desired = cpuset_format_list(&k->cpus)))
                        return -ENOMEM;
        } else {
                k->policy = (SchedPolicy) target->policy;
                k->priority = target->priority;
                if (sched_format(k->policy, k->priority, sched, sizeof(sched)) < 0 || !(desired = strdup(sched)))
                        return -ENOMEM;
        }
        if (setting_set_desired(s, desired) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(s);
        return 0;
}

/* --- reading --- */

static bool kthread_can_act(Setting *s, SettingContext *rc) {
        KthreadSetting *k = KTHREAD(s);
        bool own_mover = s->kind == SETTING_KTHREAD_AFFINITY ? rc->set_task_affinity != NULL : rc->set_task_scheduler != NULL;

        if (k->live < 0)
                k->live = host_is_live(rc->host);
        return k->live || own_mover;
}

/* The task is gone (or its id is another task's now): what was kept to put it back goes
 * with it, or a later thread with this id would be "restored" to it. */
static int kthread_gone(Setting *s, SettingContext *rc) {
        if (rc->originals && originals_get(rc->originals, s->kind, s->object)) {
                originals_forget(rc->originals, s->kind, s->object);
                (void) originals_commit(rc->originals);
        }
        return -ENOENT;
}

/* "VALUE @START": an original is the value and whose it was. Returns the start time and
 * the value's length, -EINVAL when the text is not of that form. */
static int original_split(const char *text, size_t *ret_len, uint64_t *ret_start) {
        const char *at = strrchr(text, '@');

        if (!at || at == text || at[-1] != ' ' || parse_uint64(at + 1, ret_start) < 0)
                return -EINVAL;
        *ret_len = (size_t) (at - 1 - text);
        return 0;
}

/* An original left by an earlier task with this id (a restarted daemon reads the file
 * back) is not this task's. */
static void drop_stale_original(Setting *s, SettingContext *rc) {
        const char *o;
        uint64_t start;
        size_t len;

        if (!rc->originals || !(o = originals_get(rc->originals, s->kind, s->object)))
                return;
        if (original_split(o, &len, &start) >= 0 && start == KTHREAD(s)->start_time)
                return;
        originals_forget(rc->originals, s->kind, s->object);
        (void) originals_commit(rc->originals);
}

/* The thread's stat line, checked to be the same kernel thread as planned. */
static int kthread_read_stat(Setting *s, SettingContext *rc, ReconcileFlags flags, TaskStat *ret) {
        KthreadSetting *k = KTHREAD(s);
        char buf[1024];
        TaskStat ts;
        int r;

        if (!kthread_can_act(s, rc)) {
                setting_set_reason(s,
                                   "kernel threads are kept only with --root / (the thread ids under %s are not this "
                                   "host's threads, so none is changed)",
                                   rc->host->root_path);
                return -EOPNOTSUPP;
        }
        r = setting_file_read(&k->stat, rc, buf, sizeof(buf), flags);
        if (r == -ENOENT || r == -ESRCH)
                return kthread_gone(s, rc);
        if (r < 0) {
                setting_set_reason(s, "reading /%s failed: %s", k->stat.path, strerror(-r));
                return r;
        }
        if (task_stat_parse(buf, &ts) < 0) {
                setting_set_reason(s, "/%s is not a stat line: '%.64s'", k->stat.path, buf);
                return -EIO;
        }
        if (ts.start_time != k->start_time || !(ts.flags & PF_KTHREAD))
                return kthread_gone(s, rc);
        k->flags = ts.flags;
        /* Workqueue workers show the queue they serve in their name; keep it current. */
        printable(ts.comm);
        if (!streq_ptr(s->label, ts.comm)) {
                char *label = strdup(ts.comm);
                if (label) {
                        free(s->label);
                        s->label = label;
                }
        }
        if (!s->observed)
                drop_stale_original(s, rc);
        *ret = ts;
        return 0;
}

static int kthread_affinity_read(Setting *s, SettingContext *rc, char *buf, size_t size, ReconcileFlags flags) {
        KthreadSetting *k = KTHREAD(s);
        _cleanup_cpuset_ CPUSet allowed = CPUSET_EMPTY;
        TaskStat ts;
        int r;

        r = kthread_read_stat(s, rc, flags, &ts);
        if (r < 0)
                return r;
        if (k->live > 0) {
                r = task_read_affinity(k->tid, NULL, &allowed);
                if (r == -ESRCH)
                        return kthread_gone(s, rc);
        } else {
                _cleanup_free_ char *status = NULL;

                r = host_read_filef(rc->host, &status, "proc/%d/status", (int) k->tid);
                if (r == -ENOENT || r == -ESRCH)
                        return kthread_gone(s, rc);
                if (r >= 0)
                        r = task_status_cpus_allowed(status, &allowed, NULL);
        }
        if (r < 0) {
                setting_set_reason(s, "reading the allowed CPUs of thread %d failed: %s", (int) k->tid, strerror(-r));
                return r == -ENOENT ? -EIO : r;
        }
        r = cpuset_format_list_buf(&allowed, buf, size);
        if (r < 0)
                return r;
        cpuset_done(&k->allowed);
        k->allowed = allowed;
        allowed = CPUSET_EMPTY;
        return 0;
}

static int kthread_policy_read(Setting *s, SettingContext *rc, char *buf, size_t size, ReconcileFlags flags) {
        TaskStat ts;
        int r;

        r = kthread_read_stat(s, rc, flags, &ts);
        if (r < 0)
                return r;
        if (!ts.have_policy) {
                setting_set_reason(s, "/%s has no scheduling policy (field 41)", KTHREAD(s)->stat.path);
                return -EOPNOTSUPP;
        }
        return sched_format((SchedPolicy) ts.policy, ts.rt_priority, buf, size);
}

static bool kthread_affinity_matches(Setting *s, SettingContext *rc) {
        return setting_affinity_matches(rc, s->observed, KTHREAD(s)->exact ? &KTHREAD(s)->cpus : NULL);
}

/* --- writing --- */

static int kthread_set_affinity(Setting *s, SettingContext *rc, const CPUSet *cpus) {
        return (rc->set_task_affinity ?: task_set_affinity)(rc->task_affinity_userdata, KTHREAD(s)->tid, cpus);
}

static int kthread_set_scheduler(Setting *s, SettingContext *rc, SchedPolicy policy, unsigned priority) {
        return (rc->set_task_scheduler ?: task_set_scheduler)(rc->task_scheduler_userdata, KTHREAD(s)->tid, policy,
                                                              priority);
}

/* The kernel's answer to a change, in the state machine's terms. */
static int kthread_write_result(Setting *s, SettingContext *rc, int r, const char *call, const CPUSet *target) {
        if (r >= 0)
                return 0;
        if (r == -ESRCH)
                return kthread_gone(s, rc); /* exited between the look and the change */
        if (r == -EINVAL && target && !cpuset_intersects(target, &rc->posture->online)) {
                _cleanup_free_ char *list = cpuset_format_list(target);
                setting_set_reason(s, cpuset_count(target) == 1 ? "CPU %s is not online" : "none of CPUs %s is online", list ?: "?");
                return -EAGAIN;
        }
        if (r == -EINVAL && target) {
                setting_set_reason(s, "%s: %s (the kernel will not move this thread)", call, strerror(-r));
                return -EPERM;
        }
        if (r == -EPERM || r == -EACCES) {
                setting_set_reason(s, "%s: %s (lowlatd needs CAP_SYS_NICE%s)", call, strerror(-r),
                                   target ? "" : "; real-time policies under systemd also RestrictRealtime=no");
                return -EACCES;
        }
        setting_set_reason(s, "%s: %s", call, strerror(-r));
        return r;
}

/* What the kernel refuses without being asked: a thread with PF_NO_SETAFFINITY. */
static int kthread_affinity_refuses(Setting *s, SettingContext *rc) {
        if (!kthread_can_act(s, rc))
                return -EOPNOTSUPP; /* belt and braces: the read refused already */
        if (KTHREAD(s)->flags & PF_NO_SETAFFINITY) {
                setting_set_reason(s, "PF_NO_SETAFFINITY: the kernel keeps this thread on its CPUs (a per-CPU thread, or "
                                      "a workqueue's, whose CPUs are the workqueue's cpumask)");
                return -EPERM;
        }
        return 0;
}

static int kthread_affinity_write(Setting *s, SettingContext *rc, const char *value) {
        KthreadSetting *k = KTHREAD(s);
        _cleanup_cpuset_ CPUSet target = CPUSET_EMPTY;
        int r;

        r = kthread_affinity_refuses(s, rc);
        if (r < 0)
                return r;
        if (k->exact)
                r = cpuset_copy(&target, &k->cpus);
        else
                r = posture_cpus_off_isolated(rc->posture, &k->allowed, &target);
        if (r < 0)
                return r;
        return kthread_write_result(s, rc, kthread_set_affinity(s, rc, &target), "sched_setaffinity", &target);
}

static int kthread_policy_refuses(Setting *s, SettingContext *rc) {
        return kthread_can_act(s, rc) ? 0 : -EOPNOTSUPP;
}

static int kthread_policy_write(Setting *s, SettingContext *rc, const char *value) {
        KthreadSetting *k = KTHREAD(s);

        if (kthread_policy_refuses(s, rc) < 0)
                return -EOPNOTSUPP;
        return kthread_write_result(s, rc, kthread_set_scheduler(s, rc, k->policy, k->priority), "sched_setscheduler",
                                    NULL);
}

/* --- restore --- */

/* "0-3 @5000", "other @5000". A thread the kernel keeps on its CPUs was never changed and
 * never will be: nothing to keep. */
static int kthread_original(const Setting *s, char **ret) {
        if (s->kind == SETTING_KTHREAD_AFFINITY && (KTHREAD(s)->flags & PF_NO_SETAFFINITY)) {
                *ret = NULL;
                return 0;
        }
        *ret = strdup_printf("%s @%" PRIu64, s->observed, KTHREAD(s)->start_time);
        return *ret ? 0 : -ENOMEM;
}

/* Puts the thread back as it was found, if it is still the thread that was found (same
 * id, same start time); one that exited took its original with it. */
static int kthread_restore(Setting *s, SettingContext *rc, const char *original) {
        KthreadSetting *k = KTHREAD(s);
        _cleanup_free_ char *value = NULL;
        char now[256];
        uint64_t start;
        size_t len;
        int r;

        if (original_split(original, &len, &start) < 0) {
                setting_set_reason(s, "the original '%s' is not 'VALUE @START'", original);
                return -EINVAL;
        }
        if (start != k->start_time)
                return 0;
        r = SETTING_VTABLE(s)->read(s, rc, now, sizeof(now), RECONCILE_FORCE);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        value = strndup(original, len);
        if (!value)
                return -ENOMEM;
        if (streq(now, value))
                return 0;

        if (s->kind == SETTING_KTHREAD_AFFINITY) {
                _cleanup_cpuset_ CPUSet cpus = CPUSET_EMPTY;
                if (cpuset_parse_list(value, &cpus) < 0 || cpuset_is_empty(&cpus))
                        return -EINVAL;
                r = kthread_set_affinity(s, rc, &cpus);
        } else {
                SchedPolicy policy;
                unsigned priority;
                if (sched_parse(value, &policy, &priority) < 0)
                        return -EINVAL;
                r = kthread_set_scheduler(s, rc, policy, priority);
        }
        if (r == -ESRCH)
                return 0;
        if (r < 0)
                setting_set_reason(s, "putting back %s failed: %s", value, strerror(-r));
        return r;
}

/* "VALUE @START", VALUE what the thread had: a CPU list of this host, or a policy and
 * priority as sched_parse() reads them. */
static const char *kthread_original_problem(const Setting *s, SettingContext *rc, const char *value) {
        _cleanup_free_ char *v = NULL;
        SchedPolicy policy;
        unsigned priority;
        uint64_t start;
        size_t len;

        if (original_split(value, &len, &start) < 0)
                return "not 'VALUE @START'";
        v = strndup(value, len);
        if (!v)
                return "out of memory";
        if (s->kind == SETTING_KTHREAD_AFFINITY)
                return setting_cpu_list_problem(rc, v, false) ? "not a CPU list of this host" : NULL;
        return sched_parse(v, &policy, &priority) < 0 ? "not a policy and priority" : NULL;
}

/* --- the rest of the table of operations --- */

/* "2 (PF_NO_SETAFFINITY)": beside the value, why the kernel keeps the thread there (the
 * state says unmovable in either mode, see kthread_affinity_refuses()). */
static int kthread_affinity_describe_observed(Setting *s, SettingContext *rc, char *buf, size_t size) {
        if (!(KTHREAD(s)->flags & PF_NO_SETAFFINITY))
                return -ENODATA;
        snprintf(buf, size, "%s (PF_NO_SETAFFINITY)", s->observed);
        return 0;
}

static uint64_t kthread_sort_key(const Setting *s) {
        return (uint64_t) KTHREAD(s)->tid;
}

static bool kthread_same(const Setting *a, const Setting *b) {
        return KTHREAD(a)->exact == KTHREAD(b)->exact && KTHREAD(a)->start_time == KTHREAD(b)->start_time;
}

static void kthread_inherit(Setting *s, Setting *old, bool same_value) {
        if (KTHREAD(s)->start_time != KTHREAD(old)->start_time)
                return; /* another task with the same id: nothing of the old one applies */
        setting_file_inherit(&KTHREAD(s)->stat, &KTHREAD(old)->stat);
        KTHREAD(s)->live = KTHREAD(old)->live;
}

static void kthread_release(Setting *s) {
        setting_file_close(&KTHREAD(s)->stat);
}

static void kthread_done(Setting *s) {
        setting_file_done(&KTHREAD(s)->stat);
        cpuset_done(&KTHREAD(s)->cpus);
        cpuset_done(&KTHREAD(s)->allowed);
}

/* --- the table's kernel threads --- */

/* Adds what the posture asks of one kernel thread and t lacks. Returns the number of
 * settings the thread has in t, or -errno. */
static int plan_thread(SettingTable *t, const Posture *p, pid_t tid, const TaskStat *ts, size_t *added) {
        static const SettingKind kinds[] = { SETTING_KTHREAD_AFFINITY, SETTING_KTHREAD_POLICY };
        KthreadTarget target;
        char object[16];
        int n = 0;

        if (!posture_kthread_target(p, ts->comm, &target))
                return 0;
        snprintf(object, sizeof(object), "%d", (int) tid);
        for (size_t i = 0; i < ELEMENTSOF(kinds); i++) {
                bool wanted = kinds[i] == SETTING_KTHREAD_AFFINITY ? target.cpus || target.off_isolated : target.policy >= 0;
                Setting *s = table_find(t, kinds[i], object);
                int r;

                if (!wanted)
                        continue;
                n++;
                if (s && KTHREAD(s)->start_time == ts->start_time)
                        continue;
                if (s)
                        table_remove(t, s); /* an earlier task with the same id */
                r = kthread_setting_new(kinds[i], p, tid, ts, &target, &s);
                if (r >= 0)
                        r = table_add(t, s);
                if (r < 0)
                        return r;
                (*added)++;
        }
        return n;
}

/* A kernel thread's stat line: 1 with it in *ret, 0 when tid is no kernel thread,
 * -EAGAIN while it still has kthreadd's name, -ENOENT when it is gone. */
static int read_kthread(const Host *h, pid_t tid, TaskStat *ret) {
        _cleanup_free_ char *text = NULL;
        int r;

        r = host_read_filef(h, &text, "proc/%d/stat", (int) tid);
        if (r == -ENOMEM)
                return r;
        if (r < 0 || task_stat_parse(text, ret) < 0)
                return -ENOENT;
        if (!(ret->flags & PF_KTHREAD))
                return 0;
        /* kthreadd's fresh copy, before kthread_create() named it: its name, CPUs and flags
         * are not its own yet. */
        if (tid != 2 && streq(ret->comm, "kthreadd"))
                return -EAGAIN;
        return 1;
}

int kthread_table_add(SettingTable *t, const Host *h, const Posture *p, pid_t tid) {
        size_t added = 0;
        TaskStat ts;
        int r;

        if (!posture_manages_kthreads(p))
                return 0;
        r = read_kthread(h, tid, &ts);
        if (r <= 0)
                return r;
        r = plan_thread(t, p, tid, &ts, &added);
        if (added > 0)
                table_sort(t);
        return r < 0 ? r : r > 0;
}

/* kthreadd's children, which are every kernel thread but kthreadd; else every process. */
static int list_kthreads(const Host *h, unsigned **ret, size_t *ret_n) {
        _cleanup_free_ char *children = NULL;
        _cleanup_free_ unsigned *tids = NULL;
        size_t n = 0, allocated = 0;
        char *p, *end;

        if (host_read_file(h, "proc/2/task/2/children", &children) < 0)
                return host_list_numbers(h, "proc", KTHREADS_MAX, ret, ret_n, NULL);
        if (array_grow(&tids, &allocated, 64) < 0)
                return -ENOMEM;
        tids[n++] = 2;
        for (p = children; n < KTHREADS_MAX; p = end) {
                unsigned long v;

                while (*p == ' ' || *p == '\n')
                        p++;
                if (*p < '0' || *p > '9')
                        break;
                errno = 0;
                v = strtoul(p, &end, 10);
                if (errno != 0 || end == p || v == 0 || v > INT32_MAX)
                        break;
                if (array_grow(&tids, &allocated, n + 1) < 0)
                        return -ENOMEM;
                tids[n++] = (unsigned) v;
        }
        *ret = TAKE_PTR(tids);
        *ret_n = n;
        return 0;
}

int kthread_table_scan(SettingTable *t, const Host *h, const Posture *p) {
        _cleanup_free_ unsigned *tids = NULL;
        size_t n = 0, added = 0;
        int r;

        if (!posture_manages_kthreads(p))
                return 0;
        r = list_kthreads(h, &tids, &n);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                char object[16];
                TaskStat ts;

                if (tids[i] == 0 || tids[i] > INT32_MAX)
                        continue;
                /* Already planned: its own look tells whether it is still the same thread. */
                snprintf(object, sizeof(object), "%u", tids[i]);
                if (table_find(t, SETTING_KTHREAD_AFFINITY, object) || table_find(t, SETTING_KTHREAD_POLICY, object))
                        continue;
                r = read_kthread(h, (pid_t) tids[i], &ts);
                if (r == -ENOMEM)
                        return r;
                if (r <= 0)
                        continue;
                r = plan_thread(t, p, (pid_t) tids[i], &ts, &added);
                if (r < 0)
                        return r;
        }
        if (added > 0)
                table_sort(t);
        return (int) MIN(added, (size_t) INT32_MAX);
}

static int kthreads_rescan(SettingTable *t, const Host *h, const Posture *p) {
        int r = kthread_table_scan(t, h, p);
        return r < 0 ? r : 0;
}

/* procfs sends no inotify events for a task's affinity or policy: the scan looks, and
 * new threads come from the proc connector. The rescan that lists them is one kind's. */
const SettingVTable kthread_affinity_vtable = {
        .object_size = sizeof(KthreadSetting),
        .group = SETTING_GROUP_KTHREAD,
        .noun = "kernel thread",
        .label_field = "LOWLATD_KTHREAD_NAME",
        .read = kthread_affinity_read,
        .write = kthread_affinity_write,
        .refuses = kthread_affinity_refuses,
        .matches = kthread_affinity_matches,
        .original = kthread_original,
        .original_problem = kthread_original_problem,
        .restore = kthread_restore,
        .describe_observed = kthread_affinity_describe_observed,
        .sort_key = kthread_sort_key,
        .same = kthread_same,
        .inherit = kthread_inherit,
        .release = kthread_release,
        .done = kthread_done,
        .rescan = kthreads_rescan,
};

const SettingVTable kthread_policy_vtable = {
        .object_size = sizeof(KthreadSetting),
        .group = SETTING_GROUP_KTHREAD,
        .noun = "kernel thread",
        .label_field = "LOWLATD_KTHREAD_NAME",
        .read = kthread_policy_read,
        .write = kthread_policy_write,
        .refuses = kthread_policy_refuses,
        .original = kthread_original,
        .original_problem = kthread_original_problem,
        .restore = kthread_restore,
        .sort_key = kthread_sort_key,
        .same = kthread_same,
        .inherit = kthread_inherit,
        .release = kthread_release,
        .done = kthread_done,
};
