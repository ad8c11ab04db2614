/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One task as /proc shows it under the root: its stat line, the fields of its status file,
 * whether it is a kernel thread, and which [service]/[process] sections it is. The audit
 * and evict_strays both read tasks through here, so they agree on what a task is. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "cpuset.h"
#include "host.h"

/* task_struct->flags bits (include/linux/sched.h), as /proc/PID/stat field 9 shows them. */
#define PF_KTHREAD 0x00200000U
#define PF_NO_SETAFFINITY 0x04000000U

typedef struct TaskStat {
        char comm[64];
        char state; /* R, S, D, Z, X, ... */
        unsigned ppid;
        uint64_t flags;
        uint64_t start_time; /* field 22, clock ticks since boot: with the tid, one task */
        unsigned rt_priority;
        unsigned policy;
        bool have_policy;
} TaskStat;

/* "pid (comm) state ppid ... flags(9) ... starttime(22) ... rt_priority(40) policy(41)".
 * comm may hold spaces and parentheses: the fields start after the last ')'. -EINVAL
 * unless ppid and flags were found. */
int task_stat_parse(const char *text, TaskStat *ret);

/* The value of "Key:" at the start of a line of a "Key:\tvalue" file (/proc/PID/status,
 * smaps_rollup), white space trimmed at both ends: 0 with a new string in *ret, -ENOENT
 * when no line has the key, -ENOMEM. */
int task_status_field(const char *text, const char *key, char **ret);

/* "Cpus_allowed_list:" of a status text: 0 with the CPUs in *ret (and, when ret_list is
 * not NULL, the list as the kernel wrote it, newly allocated, for messages), -ENOENT when
 * absent, -EINVAL when it is not a CPU list, -ENOMEM. */
int task_status_cpus_allowed(const char *status, CPUSet *ret, char **ret_list);

/* Whether a task looks like kthreadd or one of its children: pid 2 or parent 2, and an
 * empty command line. The command line matters: in a PID namespace pid 2 is an ordinary
 * process, and so are its children, and those have one. 1, 0, or -ENOMEM. */
int task_looks_like_kthread(const Host *h, unsigned pid, unsigned ppid);

/* Whether a task is a kernel thread, by the best evidence given: PF_KTHREAD decides when
 * st (its parsed /proc/PID/stat) is given; else "Kthread:" of status (Linux 6.10 and
 * later); else task_looks_like_kthread() with status's "PPid:". st and status are NULL
 * when unreadable. 1, 0, or -ENOMEM. */
int task_is_kernel_thread(const Host *h, unsigned pid, const TaskStat *st, const char *status);

/* Whether a /proc/PID/cgroup text ("hierarchy:controllers:path" lines) puts the task in
 * unit ("NAME.service") or below it. */
bool cgroup_in_unit(const char *text, const char *unit);

/* Whether a process is one of the configured applications: its comm for [process
 * "COMM"], its cgroup (NULL when unreadable) for [service "NAME"]. */
bool app_matches(const AppSection *app, const char *comm, const char *cgroup);

/* Which of c's [service]/[process] sections the process pid (named comm) is, reading its
 * /proc/PID/cgroup once, and only when a [service] section needs it (an unreadable one
 * matches no service). matched is NULL, or has c->n_apps entries, each set to whether
 * that section matches; when NULL the search stops at the first match. Returns how many
 * matched, or -ENOMEM. */
int task_match_apps(const Host *h, const Config *c, unsigned pid, const char *comm, bool *matched);

/* The first process (in /proc's order) whose comm is one of names[0..n-1]: 0 with its pid
 * in *ret_pid and the index of its name in *ret_index (may be NULL), -ESRCH when none runs,
 * or another -errno when /proc cannot be listed. */
int task_find_by_comm(const Host *h, const char *const *names, size_t n, unsigned *ret_pid, size_t *ret_index);
