/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One task as /proc shows it under the root: its stat line, and which [service]/[process]
 * sections it is. The audit and evict_strays both read tasks through here, so they agree
 * on what a task is. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "config.h"

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

/* Whether a /proc/PID/cgroup text ("hierarchy:controllers:path" lines) puts the task in
 * unit ("NAME.service") or below it. */
bool cgroup_in_unit(const char *text, const char *unit);

/* Whether a process is one of the configured applications: its comm for [process
 * "COMM"], its cgroup (NULL when unreadable) for [service "NAME"]. */
bool app_matches(const AppSection *app, const char *comm, const char *cgroup);
