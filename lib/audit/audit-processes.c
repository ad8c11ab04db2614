/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The one pass over /proc and what it finds: stray tasks on the isolated CPUs, the
 * /dev/cpu_dma_latency holder, irqbalance, and the configured applications (section 8). */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "basic/array.h"
#include "config/apps.h"
#include "audit/audit-internal.h"
#include "host/task.h"
#include "basic/util.h"
#include "host/host.h"

#define CAP_IPC_LOCK_BIT 14
#define FDS_PER_PROCESS_MAX 65536U
/* Tasks a grouped finding names in its message; its details list every one. */
#define TASKS_NAMED_MAX 5U

/* task_status_field(), noting an allocation failure in the audit; NULL when absent. */
static char *field_value(Audit *a, const char *text, const char *key) {
        char *v;
        return audit_check_errno(a, task_status_field(text, key, &v)) < 0 ? NULL : v;
}

/* task_status_cpus_allowed(), noting an allocation failure in the audit. */
static int cpus_allowed(Audit *a, const char *status, CPUSet *ret, char **ret_list) {
        return audit_check_errno(a, task_status_cpus_allowed(status, ret, ret_list));
}

/* The lowest max numeric entries of a directory (pids, tids), sorted: host_list_numbers(),
 * noting an allocation failure in the audit. */
static int audit_list_numbers(Audit *a, const char *relpath, size_t max, unsigned **ret, size_t *ret_n,
                              size_t *ret_total) {
        return audit_check_errno(a, host_list_numbers(a->host, relpath, max, ret, ret_n, ret_total));
}

/* --- processes: one pass over /proc --- */

static void app_add_pid(Audit *a, size_t app, unsigned pid) {
        AppPids *ap = &a->apps[app];
        if (audit_check_errno(a, array_grow(&ap->pids, &ap->allocated, ap->n + 1)) < 0)
                return;
        ap->pids[ap->n++] = pid;
}

/* Whether fd name of pid is open for writing: the flags line of its fdinfo, in octal.
 * Only a writer's request counts (the kernel adds a PM QoS request at every open, but a
 * reader's asks for the default, which constrains nothing; lowlatd --observe is one).
 * 1 a writer, 0 a reader or closed meanwhile, -errno when it cannot be told. */
static int fd_open_for_writing(Audit *a, unsigned pid, const char *name) {
        _cleanup_free_ char *info = NULL;
        unsigned long flags;
        char *line, *end;
        int r;

        r = audit_read_file(a, &info, "proc/%u/fdinfo/%s", pid, name);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        for (line = info; line; line = (end = strchr(line, '\n')) ? end + 1 : NULL)
                if (strncmp(line, "flags:", strlen("flags:")) == 0) {
                        line += strlen("flags:");
                        line += strspn(line, " \t");
                        errno = 0;
                        flags = strtoul(line, &end, 8);
                        if (errno != 0 || end == line || (*end != '\n' && *end != '\0'))
                                return -EBADMSG;
                        return (flags & O_ACCMODE) != O_RDONLY;
                }
        return -EBADMSG;
}

/* 1 when a process has /dev/cpu_dma_latency open for writing, 0 when not, -errno when its
 * fds cannot be read. The links are read where they are, never followed. */
static int process_holds_dma_latency(Audit *a, unsigned pid) {
        _cleanup_free_ char *path = audit_check_alloc(a, strdup_printf("proc/%u/fd", pid));
        struct dirent *de;
        size_t seen = 0;
        int r, found = 0;
        DIR *d;

        if (!path)
                return -ENOMEM;
        r = host_opendir(a->host, path, &d);
        if (r < 0)
                return r;
        while ((de = readdir(d)) && found == 0) {
                char target[64];
                ssize_t n;

                if (de->d_name[0] == '.')
                        continue;
                if (a->fd_budget == 0 || ++seen > FDS_PER_PROCESS_MAX)
                        break;
                a->fd_budget--;
                n = readlinkat(dirfd(d), de->d_name, target, sizeof(target) - 1);
                if (n < 0)
                        continue;
                target[n] = '\0';
                if (streq(target, "/dev/cpu_dma_latency"))
                        found = fd_open_for_writing(a, pid, de->d_name);
        }
        closedir(d);
        return found;
}

/* The kernel's PM_QOS_CPU_LATENCY_DEFAULT_VALUE (2000 * USEC_PER_SEC, include/linux/pm_qos.h):
 * what /dev/cpu_dma_latency reads while no request below it is in force. */
#define DMA_LATENCY_DEFAULT_USEC 2000000000

/* Whether a latency request is in force: the device reads the current target (an s32, 4
 * bytes; a fake tree may hold it as text), and only a target below the default constrains
 * anything. Reading opens the device, which adds a request at the default for as long as it
 * is open: that changes no target. 1 in force, 0 not, -errno when it cannot be told. */
static int dma_latency_in_force(Audit *a) {
        _cleanup_free_ char *buf = NULL;
        size_t len;
        int32_t v;
        int r;

        r = host_read_file_max(a->host, "dev/cpu_dma_latency", 64, &buf, &len);
        if (r < 0)
                return r;
        if (len == sizeof(v) && strspn(buf, "0123456789") != len) {
                memcpy(&v, buf, sizeof(v));
        } else {
                char *end;
                long long t;

                errno = 0;
                t = strtoll(buf, &end, 10);
                if (errno != 0 || end == buf || (*end != '\n' && *end != '\0') || t < INT32_MIN || t > INT32_MAX)
                        return -EBADMSG;
                v = (int32_t) t;
        }
        return v >= 0 && v < DMA_LATENCY_DEFAULT_USEC;
}

/* Appends {pid, comm, *allowed} to a list of tasks (taking *allowed), with what st (NULL
 * without a stat line) says of where and how much it ran. */
static void tasks_append(Audit *a, Stray **list, size_t *n, size_t *allocated, unsigned pid, const char *comm,
                         char **allowed, const TaskStat *st) {
        Stray *l;

        if (audit_check_errno(a, array_grow(list, allocated, *n + 1)) < 0)
                return;
        l = *list;
        l[*n] = (Stray) {
                .pid = pid,
                .comm = audit_check_alloc(a, strdup(comm)),
                .allowed = TAKE_PTR(*allowed),
                .cpu_time = st ? st->cpu_time : 0,
                .last_cpu = st ? st->processor : 0,
                .have_last_cpu = st && st->have_processor,
        };
        if (!l[*n].comm)
                free(l[*n].allowed);
        else
                (*n)++;
}

/* The CPU of a per-CPU kernel thread named prefix followed by the CPU ("rcuc/3"). */
static bool percpu_kthread_cpu(const char *comm, const char *prefix, unsigned *ret) {
        size_t len = strlen(prefix);

        return strncmp(comm, prefix, len) == 0 && parse_unsigned(comm + len, ret) >= 0;
}

/* A kernel thread allowed on isolated CPUs: one that could be moved off them, or a per-CPU
 * one that does RCU's work there. PF_NO_SETAFFINITY marks the threads bound to their CPU
 * (per-CPU kthreads, workqueue workers): nobody can move those. */
static void note_kernel_thread(Audit *a, unsigned pid, const TaskStat *st, const char *status) {
        const Posture *p = a->posture;
        _cleanup_cpuset_ CPUSet cpus = CPUSET_EMPTY;
        _cleanup_free_ char *allowed = NULL;
        PercpuKthread *k;
        unsigned cpu;

        if (cpuset_is_empty(&p->isolated) || !status || cpus_allowed(a, status, &cpus, &allowed) < 0 ||
            !cpuset_intersects(&cpus, &p->isolated))
                return;
        if (!(st->flags & PF_NO_SETAFFINITY)) {
                tasks_append(a, &a->movable_kthreads, &a->n_movable_kthreads, &a->allocated_movable_kthreads, pid,
                             st->comm, &allowed, st);
                return;
        }
        if (!(percpu_kthread_cpu(st->comm, "rcuc/", &cpu) || percpu_kthread_cpu(st->comm, "ksoftirqd/", &cpu)) ||
            !cpuset_contains(&p->isolated, cpu))
                return;
        if (audit_check_errno(a, array_grow(&a->rcu_kthreads, &a->allocated_rcu_kthreads, a->n_rcu_kthreads + 1)) < 0)
                return;
        k = a->rcu_kthreads;
        k[a->n_rcu_kthreads] = (PercpuKthread) {
                .pid = pid,
                .cpu = cpu,
                .policy = st->have_policy ? st->policy : SCHED_OTHER,
                .rt_priority = st->have_policy ? st->rt_priority : 0,
        };
        snprintf(k[a->n_rcu_kthreads].comm, sizeof(k->comm), "%s", st->comm);
        a->n_rcu_kthreads++;
}

static void scan_process(Audit *a, unsigned pid) {
        const Posture *p = a->posture;
        const Config *c = a->config;
        _cleanup_free_ char *stat = NULL, *status = NULL, *comm = NULL, *allowed = NULL;
        _cleanup_cpuset_ CPUSet cpus = CPUSET_EMPTY;
        TaskStat st = {};
        bool have_stat, is_app = false;
        int r;

        have_stat = audit_read_file(a, &stat, "proc/%u/stat", pid) >= 0 && task_stat_parse(stat, &st) >= 0;
        (void) audit_read_file(a, &status, "proc/%u/status", pid);
        if (!have_stat && !status)
                return; /* gone, or not a process */
        a->n_examined++;
        /* A stat line without PF_KTHREAD is a user task, however it looks: the audit only
         * reports, so it does not hide a stray behind kthreadd's look (evict_strays, which
         * moves tasks, is more careful; see process_look() in strays.c). */
        r = audit_check_errno(a, task_is_kernel_thread(a->host, pid, have_stat ? &st : NULL, status));
        if (r > 0 && have_stat)
                note_kernel_thread(a, pid, &st, status);
        if (r != 0)
                return;

        if (audit_read_value(a, &comm, "proc/%u/comm", pid) < 0 || isempty(comm)) {
                free(comm);
                comm = audit_check_alloc(a, strdup(have_stat ? st.comm : ""));
                if (comm && isempty(comm) && status) {
                        free(comm);
                        comm = field_value(a, status, "Name");
                }
        }
        if (!comm)
                return;

        r = audit_check_errno(a, task_match_apps(a->host, c, pid, comm, a->app_matched));
        if (r < 0)
                return;
        is_app = r > 0;
        for (size_t i = 0; is_app && i < c->n_apps; i++)
                if (a->app_matched[i])
                        app_add_pid(a, i, pid);

        if (streq(comm, "irqbalance") && a->irqbalance_pid == 0)
                a->irqbalance_pid = pid;
        if (streq(comm, "stalld") && a->stalld_pid == 0)
                a->stalld_pid = pid;

        /* PID 1 has its own finding, with its own fix (audit-systemd.c). */
        if (!is_app && pid != 1 && status && !cpuset_is_empty(&p->isolated) && cpus_allowed(a, status, &cpus, &allowed) >= 0 &&
            cpuset_intersects(&cpus, &p->isolated))
                tasks_append(a, &a->strays, &a->n_strays, &a->allocated_strays, pid, comm, &allowed,
                             have_stat ? &st : NULL);

        if (a->dma_device_exists && !a->dma_default_in_force && a->dma_holder_pid == 0) {
                r = process_holds_dma_latency(a, pid);
                if (r > 0) {
                        a->dma_holder_pid = pid;
                        a->dma_holder_comm = audit_check_alloc(a, strdup(comm));
                } else if (r < 0 && r != -ENOENT)
                        a->dma_unknown = true;
        }
}

void audit_scan_processes(Audit *a) {
        _cleanup_free_ unsigned *pids = NULL;
        size_t n = 0;

        a->apps = audit_check_alloc(a, calloc(MAX(a->config->n_apps, 1U), sizeof(AppPids)));
        a->app_matched = audit_check_alloc(a, calloc(MAX(a->config->n_apps, 1U), sizeof(bool)));
        if (!a->apps || !a->app_matched)
                return;
        a->dma_device_exists = audit_path_exists(a, "dev/cpu_dma_latency");
        if (a->dma_device_exists) {
                /* A writer holds a request only while a value below the default is in
                 * force; at the default, nobody does (a writer that wrote nothing, or the
                 * default). Unreadable: the writers are counted, as before. */
                int r = dma_latency_in_force(a);
                if (r == 0)
                        a->dma_default_in_force = true;
        }
        if (audit_list_numbers(a, "proc", a->max_processes, &pids, &n, &a->n_pids_total) < 0)
                return;
        for (size_t i = 0; i < n && a->error == 0; i++)
                scan_process(a, pids[i]);
        a->proc_listed = a->n_examined > 0;
        if (a->fd_budget == 0)
                a->dma_unknown = true;
}

/* --- 4. scheduling: tasks allowed on isolated CPUs --- */

/* The order of a grouped finding, most in the way first: a task that last ran on an
 * isolated CPU is there now or was a moment ago; then the one that uses the most CPU
 * wakes up the most; then by pid, so that equal tasks keep one order. */
static int compare_tasks(const void *x, const void *y, void *userdata) {
        const Stray *s = x, *t = y;
        const CPUSet *isolated = userdata;
        bool s_on = s->have_last_cpu && cpuset_contains(isolated, s->last_cpu);
        bool t_on = t->have_last_cpu && cpuset_contains(isolated, t->last_cpu);

        if (s_on != t_on)
                return s_on ? -1 : 1;
        if (s->cpu_time != t->cpu_time)
                return s->cpu_time > t->cpu_time ? -1 : 1;
        return s->pid < t->pid ? -1 : s->pid > t->pid;
}

/* "pid 1276 (bash) allowed on 0-1, last on CPU 1, 0.52 s CPU": one task, as the details
 * list it; without "allowed on 0-1" for the few a message names among many, where it is
 * mostly the same for all. */
static char *task_line(Audit *a, const Stray *s, long ticks_per_second, bool allowed) {
        _cleanup_free_ char *where = NULL;
        uint64_t tps = (uint64_t) ticks_per_second;

        where = s->have_last_cpu ? strdup_printf("last on CPU %u, ", s->last_cpu) : strdup("");
        if (!audit_check_alloc(a, where))
                return NULL;
        return audit_check_alloc(a, strdup_printf("pid %u (%s)%s%s%s %s%" PRIu64 ".%02" PRIu64 " s CPU", s->pid, s->comm,
                                                  allowed ? " allowed on " : "", allowed ? s->allowed : "",
                                                  allowed ? "," : "", where, s->cpu_time / tps,
                                                  s->cpu_time % tps * 100 / tps));
}

/* The lines of a grouped finding, until finding_add_details() takes them. */
typedef struct TaskLines {
        char **items;
        size_t n;
} TaskLines;

static void task_lines_done(TaskLines *l) {
        for (size_t i = 0; i < l->n; i++)
                free(l->items[i]);
        free(l->items);
        *l = (TaskLines) {};
}

/* User tasks that are no configured application (strays), or kernel threads that could be
 * moved: one finding for all, which names the few most in the way and gives the fix once;
 * its details list every task (a busy host has hundreds). */
static void report_tasks_on_isolated(Audit *a, bool kernel_threads) {
        const Posture *p = a->posture;
        Stray *list = kernel_threads ? a->movable_kthreads : a->strays;
        size_t n = kernel_threads ? a->n_movable_kthreads : a->n_strays, n_named = MIN(n, (size_t) TASKS_NAMED_MAX);
        const char *what = kernel_threads ? "kernel thread" : "task";
        const char *what_is = kernel_threads ? "kernel thread not bound to a CPU (no PF_NO_SETAFFINITY)"
                                             : "task that is not a configured application";
        const char *what_are = kernel_threads ? "kernel threads not bound to a CPU (no PF_NO_SETAFFINITY)"
                                              : "tasks that are not configured applications";
        _cleanup_free_ char *housekeeping = NULL, *isolated = NULL, *subject = NULL, *named = NULL, *head = NULL,
                            *fix = NULL;
        _cleanup_(task_lines_done) TaskLines lines = {};
        long ticks_per_second = sysconf(_SC_CLK_TCK);

        if (n == 0)
                return;
        if (ticks_per_second <= 0)
                ticks_per_second = 100; /* USER_HZ on every architecture Linux has */
        housekeeping = audit_cpus_list(a, &p->housekeeping);
        isolated = audit_cpus_phrase(a, &p->isolated);
        subject = audit_check_alloc(a, strdup_printf("%zu %s%s", n, what, n == 1 ? "" : "s"));
        lines.items = audit_check_alloc(a, calloc(n, sizeof(char *)));
        if (!housekeeping || !isolated || !subject || !lines.items)
                return;
        qsort_r(list, n, sizeof(Stray), compare_tasks, (void *) &p->isolated);
        for (; lines.n < n; lines.n++)
                if (!(lines.items[lines.n] = task_line(a, &list[lines.n], ticks_per_second, true)))
                        return;

        /* The few most in the way, "; "-separated: a line itself has commas. */
        named = audit_check_alloc(a, strdup(""));
        for (size_t i = 0; named && i < n_named; i++) {
                _cleanup_free_ char *line = n == 1 ? NULL : task_line(a, &list[i], ticks_per_second, false);
                char *more = audit_check_alloc(
                        a, strdup_printf("%s%s%s", named, i > 0 ? "; " : "", n == 1 ? lines.items[i] : line ?: "?"));
                free(named);
                named = more;
        }
        if (!named)
                return;
        if (n == 1)
                head = strdup_printf("One %s may run on isolated %s: %s. When it wakes up it can run there and preempt "
                                     "the application.",
                                     what_is, isolated, named);
        else if (n <= n_named)
                head = strdup_printf("%zu %s may run on isolated %s: when one wakes up it can run there and preempt "
                                     "the application. Most in the way first: %s.",
                                     n, what_are, isolated, named);
        else
                head = strdup_printf("%zu %s may run on isolated %s: when one wakes up it can run there and preempt "
                                     "the application. The %zu most in the way (last on an isolated CPU first, then "
                                     "by CPU time): %s; %zu more in lowlatctl check --json.",
                                     n, what_are, isolated, n_named, named, n - n_named);
        /* taskset -a takes every thread of a process; a kernel thread is one. */
        fix = n == 1 ? strdup_printf("taskset -%spc %s %u", kernel_threads ? "" : "a", housekeeping, list[0].pid)
                     : strdup_printf("taskset -%spc %s PID for each", kernel_threads ? "" : "a", housekeeping);
        if (!audit_check_alloc(a, head) || !audit_check_alloc(a, fix))
                return;

        if (kernel_threads)
                finding_add_details(a, SEVERITY_WARNING, "sched.movable-kthread", subject, &lines.items, &lines.n,
                                    "%s Move %s: %s (until the next boot; with nohz_full= for the isolated CPUs on "
                                    "the kernel command line, kernel threads start on the housekeeping CPUs).%s",
                                    head, n == 1 ? "it" : "them", fix,
                                    a->config->kthreads_housekeeping
                                            ? ""
                                            : " Or set kthreads = housekeeping in [cpus] and lowlatd keeps them there.");
        else
                finding_add_details(a, SEVERITY_WARNING, "sched.stray-task", subject, &lines.items, &lines.n,
                                    "%s Move %s: %s; keep services off the isolated CPUs with CPUAffinity=%s in "
                                    "/etc/systemd/system.conf (or the unit), or boot with isolcpus=domain so new "
                                    "tasks start on housekeeping CPUs.%s",
                                    head, n == 1 ? "it" : "them", fix, housekeeping,
                                    a->config->evict_strays
                                            ? ""
                                            : " Or set evict_strays = yes in [cpus] and lowlatd moves such tasks as "
                                              "they appear.");
}

void audit_check_strays(Audit *a) {
        report_tasks_on_isolated(a, false);
}

void audit_check_kthreads(Audit *a) {
        report_tasks_on_isolated(a, true);
}

/* --- 8. applications --- */

/* SCHED_FIFO, ...: the kernel's constant for a policy of task.h's table, as the guides write
 * it, in buf. */
#define POLICY_NAME_MAX sizeof("an unknown policy")
static const char *policy_name(unsigned policy, char buf[static POLICY_NAME_MAX]) {
        const char *name = policy < _SCHED_POLICY_MAX ? sched_policy_to_string((SchedPolicy) policy) : NULL;

        if (!name)
                return "an unknown policy";
        (void) snprintf(buf, POLICY_NAME_MAX, "SCHED_%s", name);
        for (char *c = buf + strlen("SCHED_"); *c; c++)
                *c = (char) toupper((unsigned char) *c);
        return buf;
}

typedef struct ThreadSummary {
        size_t n, n_rt, n_inside, n_straddle, n_outside;
        unsigned max_rt_priority;
        unsigned main_policy;
        char *main_allowed;
        unsigned realtime_priority; /* the highest SCHED_FIFO/RR priority of any thread */
        CPUSet realtime_isolated;   /* the isolated CPUs such threads may run on */
} ThreadSummary;

static bool policy_matches(const AppSection *app, unsigned policy) {
        if (app->policy >= 0)
                return policy == (unsigned) app->policy;
        return policy == SCHED_FIFO || policy == SCHED_RR;
}

/* Reads one task (dir is "proc/PID" or "proc/PID/task/TID") into the summary. */
static void summarize_task(Audit *a, const AppSection *app, const char *dir, bool main_thread, ThreadSummary *s) {
        const Posture *p = a->posture;
        _cleanup_free_ char *stat = NULL, *status = NULL, *allowed = NULL;
        _cleanup_cpuset_ CPUSet cpus = CPUSET_EMPTY;
        TaskStat st = {};
        bool realtime = false;

        if (audit_read_file(a, &stat, "%s/stat", dir) >= 0 && task_stat_parse(stat, &st) >= 0 && st.have_policy) {
                realtime = st.policy == SCHED_FIFO || st.policy == SCHED_RR;
                s->n++;
                if (policy_matches(app, st.policy)) {
                        s->n_rt++;
                        s->max_rt_priority = MAX(s->max_rt_priority, st.rt_priority);
                }
                if (main_thread)
                        s->main_policy = st.policy;
        }
        if (audit_read_file(a, &status, "%s/status", dir) < 0 || cpus_allowed(a, status, &cpus, &allowed) < 0)
                return;
        if (realtime && cpuset_intersects(&cpus, &p->isolated)) {
                _cleanup_cpuset_ CPUSet there = CPUSET_EMPTY;

                s->realtime_priority = MAX(s->realtime_priority, st.rt_priority);
                if (cpuset_copy(&there, &cpus) < 0)
                        a->error = -ENOMEM;
                cpuset_and(&there, &p->isolated);
                if (cpuset_or(&s->realtime_isolated, &there) < 0)
                        a->error = -ENOMEM;
        }
        if (cpuset_is_empty(&p->isolated) || cpuset_is_empty(&cpus))
                ;
        else if (cpuset_is_subset(&cpus, &p->isolated))
                s->n_inside++;
        else if (cpuset_intersects(&cpus, &p->isolated))
                s->n_straddle++;
        else
                s->n_outside++;
        if (main_thread && !s->main_allowed)
                s->main_allowed = TAKE_PTR(allowed);
}

static char *app_subject(Audit *a, unsigned pid, const char *comm) {
        return audit_check_alloc(a, strdup_printf("pid %u (%s)", pid, comm));
}

static char *app_what(Audit *a, const AppSection *app) {
        return audit_check_alloc(a, app->kind == APP_SERVICE ? strdup_printf("%s.service", app->name)
                                                             : strdup_printf("process %s", app->name));
}

/* "pid 1300 (engine) of engine.service", or "pid 1234 (matcher)" for a [process]. */
static char *app_who(Audit *a, const AppSection *app, const char *subject) {
        return audit_check_alloc(a, app->kind == APP_SERVICE ? strdup_printf("%s of %s.service", subject, app->name)
                                                             : strdup(subject));
}

/* One process of a configured application, and the names its findings give it. */
typedef struct AppProcess {
        const AppSection *app;
        unsigned pid;
        bool is_service;
        char *subject;  /* "pid 1234 (matcher)" */
        char *what;     /* "engine.service", or "process matcher" */
        char *who;      /* app_who() */
        char *isolated; /* the isolated CPUs, as a list */
        char *status;   /* /proc/PID/status, once a check has read it */
} AppProcess;

static void app_process_done(AppProcess *ap) {
        free(ap->subject);
        free(ap->what);
        free(ap->who);
        free(ap->isolated);
        free(ap->status);
}

/* The names of the process; false when they cannot be made (out of memory). */
static bool app_process_name(Audit *a, AppProcess *ap) {
        const AppSection *app = ap->app;
        _cleanup_free_ char *comm = NULL;

        if (audit_read_value(a, &comm, "proc/%u/comm", ap->pid) < 0) {
                comm = audit_check_alloc(a, strdup(app->kind == APP_PROCESS ? app->name : "?"));
                if (!comm)
                        return false;
        }
        ap->subject = app_subject(a, ap->pid, comm);
        ap->what = app_what(a, app);
        ap->who = ap->subject ? app_who(a, app, ap->subject) : NULL;
        ap->isolated = audit_cpus_list(a, &a->posture->isolated);
        return ap->subject && ap->what && ap->who && ap->isolated;
}

static void summarize_app_threads(Audit *a, const AppProcess *ap, ThreadSummary *s) {
        const AppSection *app = ap->app;
        _cleanup_free_ unsigned *tids = NULL;
        size_t n_tids = 0;

        /* Threads one by one: a program often makes only its hot thread real-time and
         * pins it, leaving helpers on housekeeping CPUs. */
        {
                _cleanup_free_ char *task = audit_check_alloc(a, strdup_printf("proc/%u/task", ap->pid));
                if (task && audit_list_numbers(a, task, AUDIT_THREADS_MAX, &tids, &n_tids, NULL) < 0)
                        n_tids = 0;
        }
        for (size_t i = 0; i < n_tids; i++) {
                _cleanup_free_ char *dir = audit_check_alloc(a, strdup_printf("proc/%u/task/%u", ap->pid, tids[i]));
                if (dir)
                        summarize_task(a, app, dir, tids[i] == ap->pid, s);
        }
        if (s->n == 0 && s->n_inside + s->n_straddle + s->n_outside == 0) {
                _cleanup_free_ char *dir = audit_check_alloc(a, strdup_printf("proc/%u", ap->pid));
                if (dir)
                        summarize_task(a, app, dir, true, s);
        }
}

static void check_app_affinity(Audit *a, const AppProcess *ap, const ThreadSummary *s) {
        const Posture *p = a->posture;

        if (!cpuset_is_empty(&p->isolated) && s->n_inside + s->n_straddle + s->n_outside > 0 &&
            (s->n_inside == 0 || s->n_straddle > 0)) {
                _cleanup_free_ char *main_words = audit_cpus_phrase_of_list(a, s->main_allowed ?: "?"),
                                    *isolated_words = audit_cpus_phrase(a, &p->isolated);
                _cleanup_free_ char *fix = audit_check_alloc(
                        a, ap->is_service ? strdup_printf("systemctl edit %s and add CPUAffinity=%s under [Service], then "
                                                          "systemctl restart %s",
                                                          ap->what, ap->isolated, ap->what)
                                          : strdup_printf("taskset -apc %s %u now, and start it under taskset -c %s", ap->isolated,
                                                          ap->pid, ap->isolated));
                if (fix && main_words && isolated_words)
                        finding_add(a, s->n_inside == 0 ? SEVERITY_CRITICAL : SEVERITY_WARNING, "app.affinity", ap->subject,
                                    "%s %s (the main thread may use %s, lowlatd isolates %s): "
                                    "%s. Fix: %s; then pin each latency-critical thread to one CPU of its own "
                                    "with pthread_setaffinity_np().",
                                    ap->who,
                                    s->n_inside == 0 ? "has no thread confined to the isolated CPUs" : "has threads that straddle isolated and other CPUs",
                                    main_words, isolated_words,
                                    s->n_inside == 0 ? "it runs among the housekeeping load, so the isolation does not protect it"
                                                     : "the scheduler may move them between an isolated CPU and a busy one",
                                    fix);
        }
}

static void check_app_policy(Audit *a, const AppProcess *ap, const ThreadSummary *s) {
        const AppSection *app = ap->app;
        unsigned want_priority = app->priority > 0 ? app->priority : 80;
        bool rr = app->policy == SCHED_RR;

        if (s->n > 0 && s->n_rt == 0) {
                const char *want = app->policy == SCHED_FIFO ? "SCHED_FIFO" : app->policy == SCHED_RR ? "SCHED_RR" : "SCHED_FIFO or SCHED_RR";
                _cleanup_free_ char *fix = audit_check_alloc(
                        a, ap->is_service ? strdup_printf("systemctl edit %s and add CPUSchedulingPolicy=%s and "
                                                          "CPUSchedulingPriority=%u under [Service]",
                                                          ap->what, rr ? "rr" : "fifo", want_priority)
                                          : strdup_printf("chrt %s -a -p %u %u now, and start it under chrt %s %u",
                                                          rr ? "-r" : "-f", want_priority, ap->pid, rr ? "-r" : "-f",
                                                          want_priority));
                char name[POLICY_NAME_MAX];

                if (fix)
                        finding_add(a, SEVERITY_WARNING, "app.policy", ap->subject,
                                    "No thread of %s runs %s (the main thread is %s): a normal task can be made "
                                    "to wait behind other tasks and kernel threads on its CPU. Fix: %s.",
                                    ap->who, want, policy_name(s->main_policy, name), fix);
        } else if (s->n_rt > 0 && app->priority > 0 && s->max_rt_priority < app->priority &&
                   (app->policy < 0 || app->policy == SCHED_FIFO || app->policy == SCHED_RR)) {
                _cleanup_free_ char *fix = audit_check_alloc(
                        a, ap->is_service ? strdup_printf("CPUSchedulingPriority=%u (systemctl edit %s)", app->priority, ap->what)
                                          : strdup_printf("chrt %s -a -p %u %u", rr ? "-r" : "-f", app->priority, ap->pid));
                if (fix)
                        finding_add(a, SEVERITY_WARNING, "app.priority", ap->subject,
                                    "The highest real-time priority among the threads of %s is %u, below the "
                                    "priority = %u configured: real-time threads of higher priority (IRQ threads "
                                    "run at 50) preempt it. Fix: %s.",
                                    ap->who, s->max_rt_priority, app->priority, fix);
        }
}

/* mlockall() needs the limit or CAP_IPC_LOCK. */
static void check_app_memlock(Audit *a, AppProcess *ap) {
        _cleanup_free_ char *limits = NULL, *cap = NULL;
        uint64_t caps = 0;
        bool has_cap = false;

        if (audit_read_file(a, &ap->status, "proc/%u/status", ap->pid) >= 0 && (cap = field_value(a, ap->status, "CapEff"))) {
                char *end;
                errno = 0;
                caps = strtoull(cap, &end, 16);
                has_cap = errno == 0 && end != cap && *end == '\0' && (caps >> CAP_IPC_LOCK_BIT) & 1;
        }
        if (!has_cap && audit_read_file(a, &limits, "proc/%u/limits", ap->pid) >= 0) {
                const char *line = strstr(limits, "Max locked memory");
                if (line) {
                        char soft[32] = "";
                        const char *v = line + strlen("Max locked memory");
                        size_t n;
                        while (*v == ' ')
                                v++;
                        n = strcspn(v, " \n");
                        if (n > 0 && n < sizeof(soft)) {
                                memcpy(soft, v, n);
                                soft[n] = '\0';
                        }
                        if (*soft && !streq(soft, "unlimited")) {
                                _cleanup_free_ char *fix = audit_check_alloc(
                                        a, ap->is_service ? strdup_printf("systemctl edit %s and add "
                                                                          "LimitMEMLOCK=infinity under [Service]",
                                                                          ap->what)
                                                          : strdup_printf("prlimit --pid %u --memlock=unlimited:unlimited "
                                                                          "now, and raise it where it starts "
                                                                          "(ulimit -l unlimited, or memlock in "
                                                                          "/etc/security/limits.conf)",
                                                                          ap->pid));
                                if (fix)
                                        finding_add(a, SEVERITY_WARNING, "app.memlock", ap->subject,
                                                    "%s may lock only %s bytes of memory and lacks "
                                                    "CAP_IPC_LOCK: mlockall() fails, so its pages can be "
                                                    "reclaimed and fault back in at the worst moment. Fix: %s.",
                                                    ap->who, soft, fix);
                        }
                }
        }
}

/* TZ: without it glibc stat()s /etc/localtime on every localtime(). */
static void check_app_tz(Audit *a, const AppProcess *ap) {
        _cleanup_free_ char *env = NULL;
        size_t environ_len = 0;

        if (audit_read_environ(a, ap->pid, &env, &environ_len) >= 0) {
                _cleanup_free_ char *tz_fix = audit_check_alloc(
                        a, ap->is_service ? strdup_printf("systemctl edit %s and add Environment=TZ=:/etc/localtime under "
                                                          "[Service]",
                                                          ap->what)
                                          : strdup("start it with TZ=:/etc/localtime in its environment"));
                bool has_tz = false;
                for (size_t off = 0; off < environ_len; off += strlen(env + off) + 1)
                        if (strncmp(env + off, "TZ=", 3) == 0)
                                has_tz = true;
                if (!has_tz)
                        finding_add(a, SEVERITY_INFO, "app.tz", ap->subject,
                                    "%s has no TZ in its environment: glibc then checks /etc/localtime with a "
                                    "stat() system call on every localtime(), thousands of needless syscalls a "
                                    "minute for a program that logs. Fix: %s.",
                                    ap->who,
                                    tz_fix ?: "Environment=TZ=:/etc/localtime");
        }
}

/* Huge pages: transparent ones in smaps_rollup, hugetlbfs ones in status. */
static void check_app_hugepages(Audit *a, AppProcess *ap) {
        _cleanup_free_ char *rollup = NULL, *anon = NULL, *hugetlb = NULL;
        bool known = false, uses = false;
        uint64_t kb;

        if (audit_read_file(a, &rollup, "proc/%u/smaps_rollup", ap->pid) >= 0 && (anon = field_value(a, rollup, "AnonHugePages"))) {
                known = true;
                uses = sscanf(anon, "%" SCNu64, &kb) == 1 && kb > 0;
        }
        if (!uses && (ap->status || audit_read_file(a, &ap->status, "proc/%u/status", ap->pid) >= 0) &&
            (hugetlb = field_value(a, ap->status, "HugetlbPages"))) {
                known = true;
                uses = sscanf(hugetlb, "%" SCNu64, &kb) == 1 && kb > 0;
        }
        if (known && !uses) {
                _cleanup_free_ char *thp = NULL;
                (void) audit_read_value(a, &thp, "sys/kernel/mm/transparent_hugepage/enabled");
                finding_add(a, SEVERITY_WARNING, "app.hugepages", ap->subject,
                            "%s maps no huge page (AnonHugePages and HugetlbPages are 0), though "
                            "hugepages = yes: its working set takes TLB misses on 4 KiB pages. %s%s%s"
                            "Enable transparent huge pages (echo always > "
                            "/sys/kernel/mm/transparent_hugepage/enabled, or madvise plus "
                            "madvise(MADV_HUGEPAGE) in the program), or reserve huge pages with "
                            "vm.nr_hugepages in [sysctl] and map them with MAP_HUGETLB.",
                            ap->who, thp ? "Transparent huge pages are set to \"" : "", thp ?: "",
                            thp ? "\". " : "");
        }
}

/* For audit_check_rcu_priority(): where its real-time threads may keep a CPU. Takes
 * ap->who and s->realtime_isolated when it keeps them. */
static void app_realtime_add(Audit *a, AppProcess *ap, ThreadSummary *s) {
        if (s->realtime_priority > 0 && !cpuset_is_empty(&s->realtime_isolated)) {
                if (audit_check_errno(a, array_grow(&a->app_realtime, &a->allocated_app_realtime,
                                                    a->n_app_realtime + 1)) >= 0) {
                        AppRealtime *rt = a->app_realtime;
                        rt[a->n_app_realtime] = (AppRealtime) {
                                .who = TAKE_PTR(ap->who),
                                .priority = s->realtime_priority,
                                .isolated = s->realtime_isolated,
                        };
                        s->realtime_isolated = CPUSET_EMPTY;
                        a->n_app_realtime++;
                }
        }
}

static void check_app_process(Audit *a, const AppSection *app, unsigned pid) {
        _cleanup_(app_process_done) AppProcess ap = { .app = app, .pid = pid, .is_service = app->kind == APP_SERVICE };
        ThreadSummary s = {};

        if (!app_process_name(a, &ap))
                return;
        summarize_app_threads(a, &ap, &s);
        check_app_affinity(a, &ap, &s);
        check_app_policy(a, &ap, &s);
        if (app->mlock)
                check_app_memlock(a, &ap);
        check_app_tz(a, &ap);
        if (app->hugepages)
                check_app_hugepages(a, &ap);
        app_realtime_add(a, &ap, &s);
        cpuset_done(&s.realtime_isolated);
        free(s.main_allowed);
}

void audit_check_apps(Audit *a) {
        const Config *c = a->config;

        for (size_t i = 0; i < c->n_apps && a->error == 0; i++) {
                const AppSection *app = &c->apps[i];
                if (a->apps[i].n == 0) {
                        _cleanup_free_ char *subject = audit_check_alloc(
                                a, strdup_printf("%s %s", app_kind_to_string(app->kind), app->name));
                        if (!subject || !a->proc_listed)
                                continue;
                        finding_add(a, SEVERITY_WARNING, "app.not-running", subject,
                                    app->kind == APP_SERVICE
                                            ? "No process of %s.service was found (no /proc/PID/cgroup under "
                                              "%s.service), so its placement, policy and limits could not be "
                                              "checked. Start it (systemctl start %s), or remove the [service] "
                                              "section if it no longer runs here."
                                            : "No process named %s was found (/proc/PID/comm), so its placement, "
                                              "policy and limits could not be checked. Start it, or fix the "
                                              "name in the [process \"%s\"] section (at most 15 characters, as "
                                              "ps -o comm shows it)%s.",
                                    app->name, app->name, app->kind == APP_SERVICE ? app->name : "");
                        continue;
                }
                for (size_t j = 0; j < a->apps[i].n; j++)
                        check_app_process(a, app, a->apps[i].pids[j]);
        }
}

/* "SCHED_OTHER", or "SCHED_FIFO priority 1". */
static char *priority_text(Audit *a, unsigned policy, unsigned rt_priority) {
        char name[POLICY_NAME_MAX];

        if (policy != SCHED_FIFO && policy != SCHED_RR)
                return audit_check_alloc(a, strdup(policy_name(policy, name)));
        return audit_check_alloc(a, strdup_printf("%s priority %u", policy_name(policy, name), rt_priority));
}

/* RCU's per-CPU work on a CPU: rcuc/N where the kernel runs it in a thread (real-time
 * kernels, rcutree.use_softirq=0), else the RCU softirq, which ksoftirqd/N runs when
 * interrupts leave it over. A real-time application above that thread on a CPU that still
 * ticks starves it (Documentation/RCU/stallwarn.rst): callbacks are not invoked, memory is
 * not freed, stall warnings follow. A nohz_full CPU running user code needs nothing from
 * RCU, and its callbacks are offloaded. */
void audit_check_rcu_priority(Audit *a) {
        const Posture *p = a->posture;
        _cleanup_cpuset_ CPUSet tickless = CPUSET_EMPTY;

        if (a->n_app_realtime == 0 || a->n_rcu_kthreads == 0)
                return;
        if (audit_read_cpus(a, &tickless, "sys/devices/system/cpu/nohz_full") < 0)
                cpuset_clear(&tickless);
        CPUSET_FOREACH(cpu, &p->isolated) {
                const AppRealtime *app = NULL;
                const PercpuKthread *rcu = NULL;
                _cleanup_free_ char *runs = NULL, *subject = NULL;
                unsigned priority;
                bool rcuc;

                if (cpuset_contains(&tickless, (unsigned) cpu))
                        continue;
                for (size_t i = 0; i < a->n_app_realtime; i++)
                        if (cpuset_contains(&a->app_realtime[i].isolated, (unsigned) cpu) &&
                            (!app || a->app_realtime[i].priority > app->priority))
                                app = &a->app_realtime[i];
                for (size_t i = 0; i < a->n_rcu_kthreads; i++)
                        if (a->rcu_kthreads[i].cpu == (unsigned) cpu &&
                            (!rcu || strncmp(a->rcu_kthreads[i].comm, "rcuc/", 5) == 0))
                                rcu = &a->rcu_kthreads[i];
                if (!app || !rcu)
                        continue;
                priority = rcu->policy == SCHED_FIFO || rcu->policy == SCHED_RR ? rcu->rt_priority : 0;
                if (priority >= app->priority)
                        continue;
                rcuc = strncmp(rcu->comm, "rcuc/", 5) == 0;
                runs = priority_text(a, rcu->policy, rcu->rt_priority);
                subject = audit_check_alloc(a, strdup_printf("pid %u (%s)", rcu->pid, rcu->comm));
                if (!runs || !subject)
                        return;
                finding_add(a, SEVERITY_WARNING, "boot.kthread_prio", subject,
                            "%s (pid %u), which runs RCU's work for isolated CPU %d%s, is %s, below real-time priority "
                            "%u of %s there, and CPU %d is not tickless (nohz_full): while the application keeps the "
                            "CPU, RCU cannot finish its work there, callbacks pile up without freeing memory and RCU "
                            "stall warnings follow. Keep RCU off the CPU with nohz_full=%d rcu_nocbs=%d (the whole "
                            "isolated list, see boot.nohz_full), or let RCU preempt the application: "
                            "%srcutree.kthread_prio=%u on the kernel command line in /etc/default/grub, then "
                            "update-grub and reboot.",
                            rcu->comm, rcu->pid, cpu, rcuc ? "" : " (the RCU softirq, and what interrupts leave over)",
                            runs, app->priority, app->who, cpu, cpu, cpu, rcuc ? "" : "rcutree.use_softirq=0 ",
                            MIN(app->priority + 1, 99U));
        }
}
