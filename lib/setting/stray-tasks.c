/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Stray user tasks: found through /proc under the root, moved with sched_setaffinity().
 *
 * Never a stray, so never moved:
 * - kernel threads: PF_KTHREAD in /proc/PID/stat; also kthreadd (pid 2) and its children
 *   when their command line is empty. The empty command line matters: in a PID namespace
 *   pid 2 is an ordinary process, and so are its children.
 * - the configured applications, all their threads: a process whose comm is a [process
 *   "COMM"] section's, or whose cgroup is in a [service "NAME"] section's unit, the same
 *   rule as the audit (task_match_apps() in lib/host/task.c), so a forked child of the
 *   application counts too;
 * - lowlatd itself (it pins itself to the housekeeping CPUs);
 * - PID 1: listed as "left alone", not moved. systemd applies its own CPUAffinity=
 *   (system.conf) and resets the affinity it does not configure on daemon-reexec, so
 *   moving it would start a fight with init; CPUAffinity= is the right place, and it also
 *   keeps every service started later off the isolated CPUs.
 * - zombies, and threads that exit during the scan.
 * A thread with PF_NO_SETAFFINITY (io_uring workers) or that the kernel refuses to move
 * (EINVAL: a cpuset cgroup with only isolated CPUs; EPERM) is excluded, with the reason,
 * for as long as that task lives: reported once, not retried on every scan. */
#include <dirent.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>

#include "config/apps.h"
#include "basic/array.h"
#include "setting/stray-tasks.h"
#include "basic/util.h"

Strays *strays_new(void) {
        return calloc(1, sizeof(Strays));
}

static void strays_clear_threads(Strays *st) {
        for (size_t i = 0; i < st->n_threads; i++)
                cpuset_done(&st->threads[i].allowed);
        st->threads = mfree(st->threads);
        st->n_threads = st->allocated_threads = 0;
}

static void excluded_done(StrayExcluded *e) {
        free(e->what);
        free(e->why);
}

Strays *strays_free(Strays *st) {
        if (!st)
                return NULL;
        strays_clear_threads(st);
        for (size_t i = 0; i < st->n_excluded; i++)
                excluded_done(&st->excluded[i]);
        free(st->excluded);
        free(st->moved);
        free(st);
        return NULL;
}

/* comm is the task's to choose: anything but printable ASCII becomes '?', for the
 * journal, the bus (UTF-8 only) and the ", " and "; " the observed text is made of. */
static void printable(char *s) {
        for (; *s; s++)
                if ((unsigned char) *s < 0x20 || (unsigned char) *s >= 0x7f)
                        *s = '?';
}

static StrayExcluded *excluded_find(Strays *st, pid_t tid, uint64_t start_time) {
        for (size_t i = 0; i < st->n_excluded; i++)
                if (st->excluded[i].tid == tid && st->excluded[i].start_time == start_time)
                        return &st->excluded[i];
        return NULL;
}

_printf_(6, 7) static int excluded_add(Strays *st, pid_t pid, pid_t tid, uint64_t start_time, const char *comm,
                                       const char *why_fmt, ...) {
        StrayExcluded e = { .pid = pid, .tid = tid, .start_time = start_time, .seen = true };
        va_list ap;

        va_start(ap, why_fmt);
        e.why = strdup_vprintf(why_fmt, ap);
        va_end(ap);
        if (!e.why)
                return -ENOMEM;
        e.what = pid == tid ? strdup_printf("pid %d (%s)", (int) pid, comm)
                            : strdup_printf("pid %d (%s) thread %d", (int) pid, comm, (int) tid);
        if (!e.what || array_grow(&st->excluded, &st->allocated_excluded, st->n_excluded + 1) < 0) {
                excluded_done(&e);
                return -ENOMEM;
        }
        st->excluded[st->n_excluded++] = e;
        return 0;
}

static bool was_moved(const Strays *st, pid_t tid, uint64_t start_time) {
        for (size_t i = 0; i < st->n_moved; i++)
                if (st->moved[i].tid == tid && st->moved[i].start_time == start_time)
                        return true;
        return false;
}

/* What a process is, found out only once one of its threads is allowed on an isolated
 * CPU: on a host in order that is almost never, and reading /proc/PID/stat for every
 * process would cost more than the whole affinity scan. */
typedef struct ProcessInfo {
        bool looked;
        bool left_alone; /* a kernel thread, a configured application, or gone */
        char comm[64];
} ProcessInfo;

static int process_look(const Host *h, const Posture *p, pid_t pid, ProcessInfo *info) {
        _cleanup_free_ char *stat = NULL;
        TaskStat ts;
        int r;

        info->looked = true;
        info->left_alone = true;
        if (host_read_filef(h, &stat, "proc/%d/stat", (int) pid) < 0 || task_stat_parse(stat, &ts) < 0)
                return 0; /* gone */
        /* The audit lets PF_KTHREAD decide when it has a stat line. Eviction acts, so it
         * also leaves alone a task without the flag that looks like kthreadd's child (an
         * odd kernel, a fake tree): a false "kernel thread" only goes unmoved, a false
         * stray would be moved. */
        r = task_is_kernel_thread(h, (unsigned) pid, &ts, NULL);
        if (r == 0)
                r = task_looks_like_kthread(h, (unsigned) pid, ts.ppid);
        if (r == 0)
                r = task_match_apps(h, p->config, (unsigned) pid, ts.comm, NULL);
        if (r != 0)
                return MIN(r, 0);
        info->left_alone = false;
        printable(ts.comm);
        snprintf(info->comm, sizeof(info->comm), "%s", ts.comm);
        return 0;
}

static int scan_thread(Strays *st, const Host *h, const Posture *p, pid_t pid, pid_t tid, ProcessInfo *info,
                       size_t *n_still_stray) {
        _cleanup_free_ char *status = NULL, *stat = NULL, *list = NULL;
        _cleanup_cpuset_ CPUSet allowed = CPUSET_EMPTY;
        StrayExcluded *e;
        StrayThread *t;
        TaskStat ts;
        const char *comm;
        int r;

        if (st->live) {
                r = task_read_affinity(tid, &p->isolated, &allowed);
                if (r == -ENOMEM)
                        return r;
                if (r <= 0)
                        return 0; /* exited, or not a stray */
                list = cpuset_format_list(&allowed);
                if (!list)
                        return -ENOMEM;
        } else {
                if (host_read_filef(h, &status, "proc/%d/task/%d/status", (int) pid, (int) tid) < 0)
                        return 0; /* exited */
                r = task_status_cpus_allowed(status, &allowed, &list);
                if (r == -ENOMEM)
                        return r;
                if (r < 0 || !cpuset_intersects(&allowed, &p->isolated))
                        return 0;
        }
        if (!info->looked) {
                r = process_look(h, p, pid, info);
                if (r < 0)
                        return r;
        }
        if (info->left_alone)
                return 0;
        comm = info->comm;
        if (host_read_filef(h, &stat, "proc/%d/task/%d/stat", (int) pid, (int) tid) < 0 || task_stat_parse(stat, &ts) < 0)
                return 0;
        if (ts.state == 'Z' || ts.state == 'X' || (ts.flags & PF_KTHREAD))
                return 0;

        e = excluded_find(st, tid, ts.start_time);
        if (e) {
                e->seen = true;
                return 0;
        }
        if (pid == 1) {
                r = excluded_add(st, pid, tid, ts.start_time, comm, "PID 1");
                if (r >= 0)
                        st->excluded[st->n_excluded - 1].reported = true; /* a choice, not a failure */
                return r;
        }
        if (ts.flags & PF_NO_SETAFFINITY)
                return excluded_add(st, pid, tid, ts.start_time, comm, "PF_NO_SETAFFINITY");
        if (was_moved(st, tid, ts.start_time)) {
                (*n_still_stray)++;
                return excluded_add(st, pid, tid, ts.start_time, comm, "still allowed on %s after the move", list);
        }

        if (array_grow(&st->threads, &st->allocated_threads, st->n_threads + 1) < 0)
                return -ENOMEM;
        t = &st->threads[st->n_threads];
        *t = (StrayThread) { .pid = pid, .tid = tid, .start_time = ts.start_time, .allowed = allowed };
        allowed = CPUSET_EMPTY;
        snprintf(t->comm, sizeof(t->comm), "%s", comm);
        st->n_threads++;
        return 0;
}

static int scan_process(Strays *st, const Host *h, const Posture *p, pid_t self, pid_t pid, size_t *n_still_stray) {
        _cleanup_free_ char *task_dir = NULL;
        _cleanup_free_ unsigned *tids = NULL;
        ProcessInfo info = {};
        size_t n_tids = 0;
        int r;

        if (pid <= 0 || pid == self)
                return 0; /* pid <= 0: a number beyond pid_t, only ever in a fake tree */
        task_dir = strdup_printf("proc/%d/task", (int) pid);
        if (!task_dir)
                return -ENOMEM;
        r = host_list_numbers(h, task_dir, STRAYS_THREADS_MAX, &tids, &n_tids, NULL);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return 0;
        for (size_t i = 0; i < n_tids; i++) {
                if ((pid_t) tids[i] <= 0)
                        continue;
                r = scan_thread(st, h, p, pid, (pid_t) tids[i], &info, n_still_stray);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Appends to buf (of size) at *len unless that would pass limit; false when it did not
 * fit. */
_printf_(5, 6) static bool append(char *buf, size_t size, size_t *len, size_t limit, const char *fmt, ...) {
        char entry[512];
        va_list ap;
        int n;

        va_start(ap, fmt);
        n = vsnprintf(entry, sizeof(entry), fmt, ap);
        va_end(ap);
        if (n < 0 || (size_t) n >= sizeof(entry) || *len + (size_t) n >= MIN(size, limit))
                return false;
        memcpy(buf + *len, entry, (size_t) n + 1);
        *len += (size_t) n;
        return true;
}

/* Room kept at the end for ", and 65535 more". */
#define MORE_RESERVE 24U

static void format_text(const Strays *st, char *buf, size_t size) {
        size_t len = 0, limit = MIN(size, (size_t) STRAYS_TEXT_MAX) - MORE_RESERVE, shown = 0, groups = 0;
        size_t excluded_left = 0;

        buf[0] = '\0';
        if (st->n_threads == 0)
                (void) append(buf, size, &len, SIZE_MAX, "none");
        for (size_t i = 0; i < st->n_threads;) {
                const StrayThread *t = &st->threads[i];
                char cpus[256];
                size_t j = i;

                while (j < st->n_threads && st->threads[j].pid == t->pid)
                        j++;
                groups++;
                if (cpuset_format_list_buf(&t->allowed, cpus, sizeof(cpus)) < 0)
                        snprintf(cpus, sizeof(cpus), "?");
                if (shown == groups - 1 &&
                    append(buf, size, &len, limit, "%spid %d (%s) on %s", shown ? ", " : "", (int) t->pid, t->comm, cpus)) {
                        if (j - i > 1)
                                (void) append(buf, size, &len, limit, " (%zu threads)", j - i);
                        shown++;
                }
                i = j;
        }
        if (groups > shown)
                (void) append(buf, size, &len, SIZE_MAX, ", and %zu more", groups - shown);

        for (size_t i = 0; i < st->n_excluded; i++) {
                const StrayExcluded *e = &st->excluded[i];
                if (excluded_left == 0 &&
                    append(buf, size, &len, limit, "%s%s: %s", i == 0 ? "; left alone: " : ", ", e->what, e->why))
                        continue;
                excluded_left++;
        }
        if (excluded_left > 0)
                (void) append(buf, size, &len, SIZE_MAX, "%s%zu more", st->n_excluded == excluded_left ? "; left alone: " : ", and ",
                              excluded_left);
}

static int compare_threads(const void *a, const void *b) {
        const StrayThread *x = a, *y = b;
        if (x->pid != y->pid)
                return x->pid < y->pid ? -1 : 1;
        return x->tid < y->tid ? -1 : x->tid > y->tid;
}

int strays_scan(Strays *st, const Host *h, const Posture *p, pid_t self, char *buf, size_t size) {
        _cleanup_free_ unsigned *pids = NULL;
        size_t n_pids = 0, n_still_stray = 0;
        int r;

        if (size < 64)
                return -ENOBUFS;
        strays_clear_threads(st);
        r = host_list_numbers(h, "proc", STRAYS_PROCESSES_MAX, &pids, &n_pids, NULL);
        if (r < 0)
                return r;
        for (size_t i = 0; i < st->n_excluded; i++)
                st->excluded[i].seen = false;
        for (size_t i = 0; i < n_pids; i++) {
                r = scan_process(st, h, p, self, (pid_t) pids[i], &n_still_stray);
                if (r < 0)
                        return r;
        }
        /* A task that exited (or was moved off by someone else) is forgotten: its tid may
         * come back as another task. */
        for (size_t i = st->n_excluded; i > 0; i--)
                if (!st->excluded[i - 1].seen) {
                        excluded_done(&st->excluded[i - 1]);
                        memmove(st->excluded + i - 1, st->excluded + i, (st->n_excluded - i) * sizeof(StrayExcluded));
                        st->n_excluded--;
                }
        st->n_confirmed = st->n_moved >= n_still_stray ? st->n_moved - n_still_stray : 0;
        st->moved = mfree(st->moved);
        st->n_moved = 0;

        if (st->n_threads > 1)
                qsort(st->threads, st->n_threads, sizeof(StrayThread), compare_threads);
        format_text(st, buf, size);
        return 0;
}

int strays_evict(Strays *st, const Posture *p, TaskAffinitySetter set, void *userdata) {
        int first_error = 0;

        st->moved = mfree(st->moved);
        st->n_moved = 0;
        st->n_confirmed = 0;
        if (st->n_threads == 0)
                return 0;
        st->moved = calloc(st->n_threads, sizeof(StrayMoved));
        if (!st->moved)
                return -ENOMEM;

        for (size_t i = 0; i < st->n_threads; i++) {
                const StrayThread *t = &st->threads[i];
                _cleanup_cpuset_ CPUSet target = CPUSET_EMPTY;
                int r;

                if (posture_cpus_off_isolated(p, &t->allowed, &target) < 0)
                        return -ENOMEM;

                r = set(userdata, t->tid, &target);
                if (r >= 0) {
                        st->moved[st->n_moved++] = (StrayMoved) { t->tid, t->start_time };
                        continue;
                }
                if (r == -ESRCH)
                        continue; /* exited: nothing to move */
                if (r == -EINVAL || r == -EPERM || r == -EACCES) {
                        r = excluded_add(st, t->pid, t->tid, t->start_time, t->comm, "sched_setaffinity: %s", strerror(-r));
                        if (r < 0)
                                return r;
                        continue;
                }
                if (first_error == 0)
                        first_error = r;
        }
        return st->n_moved > 0 || first_error == 0 ? (int) st->n_moved : first_error;
}

int strays_take_unreported(Strays *st, char **ret) {
        char buf[STRAYS_TEXT_MAX];
        size_t len = 0, n = 0, left = 0;

        buf[0] = '\0';
        for (size_t i = 0; i < st->n_excluded; i++) {
                StrayExcluded *e = &st->excluded[i];
                if (e->reported)
                        continue;
                e->reported = true;
                if (left == 0 && append(buf, sizeof(buf), &len, sizeof(buf) - MORE_RESERVE, "%s%s: %s", n ? ", " : "",
                                        e->what, e->why))
                        n++;
                else
                        left++;
        }
        if (n == 0 && left == 0)
                return 0;
        if (left > 0)
                (void) append(buf, sizeof(buf), &len, SIZE_MAX, "%s%zu more", n ? ", and " : "", left);
        *ret = strdup(buf);
        return *ret ? 1 : -ENOMEM;
}
