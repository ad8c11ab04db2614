/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One task as /proc shows it under the root: its stat line, the fields of its status file,
 * whether it is a kernel thread, and which [service]/[process] sections it is. The audit,
 * evict_strays and the kernel-thread settings all read tasks through here, so they agree
 * on what a task is; the last two also move them through here. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "basic/cpuset.h"
#include "host/host.h"
#include "basic/string-table.h"

/* task_struct->flags bits (include/linux/sched.h), as /proc/PID/stat field 9 shows them. */
#define PF_KTHREAD 0x00200000U
#define PF_NO_SETAFFINITY 0x04000000U

typedef struct TaskStat {
        char comm[64];
        char state; /* R, S, D, Z, X, ... */
        unsigned ppid;
        uint64_t flags;
        uint64_t cpu_time;   /* utime + stime (fields 14 and 15), clock ticks: how much it ran */
        uint64_t start_time; /* field 22, clock ticks since boot: with the tid, one task */
        unsigned processor;  /* field 39: the CPU it last ran on, when have_processor */
        bool have_processor;
        unsigned rt_priority;
        unsigned policy;
        bool have_policy;
} TaskStat;

/* "pid (comm) state ppid ... flags(9) ... utime(14) stime(15) ... starttime(22) ...
 * processor(39) rt_priority(40) policy(41)".
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

/* The first process (in /proc's order) whose comm is one of names[0..n-1]: 0 with its pid
 * in *ret_pid and the index of its name in *ret_index (may be NULL), -ESRCH when none runs,
 * or another -errno when /proc cannot be listed. */
int task_find_by_comm(const Host *h, const char *const *names, size_t n, unsigned *ret_pid, size_t *ret_index);
/* Scheduling policies, by the kernel's numbers (SCHED_OTHER, ...), as /proc/PID/stat field
 * 41 shows them; named "other", "fifo", "rr", "batch", "idle", "deadline". */
typedef enum SchedPolicy {
        SCHED_POLICY_OTHER = 0,
        SCHED_POLICY_FIFO = 1,
        SCHED_POLICY_RR = 2,
        SCHED_POLICY_BATCH = 3,
        SCHED_POLICY_IDLE = 5,
        SCHED_POLICY_DEADLINE = 6,
        _SCHED_POLICY_MAX,
        _SCHED_POLICY_INVALID = -EINVAL,
} SchedPolicy;

DECLARE_STRING_TABLE_LOOKUP(sched_policy, SchedPolicy);
bool sched_policy_is_realtime(SchedPolicy policy);
/* "fifo:50", "rr:1", "other": a real-time policy with its priority, any other alone. */
int sched_format(SchedPolicy policy, unsigned priority, char *buf, size_t size);
/* The reverse, for what sched_format() wrote of other, fifo, rr, batch, idle or deadline:
 * a real-time policy needs ":1" to ":99", any other takes none. -EINVAL otherwise. */
int sched_parse(const char *text, SchedPolicy *ret_policy, unsigned *ret_priority);

/* The real movers (TaskAffinitySetter and TaskSchedulerSetter in lib/setting/setting.h):
 * sched_setaffinity() and sched_setscheduler(). Only for a live host (host_is_live()).
 * 0 or -errno: ESRCH when the task exited, EINVAL when the kernel will not (a thread with
 * PF_NO_SETAFFINITY, a cpuset without those CPUs). */
int task_set_affinity(void *userdata, pid_t tid, const CPUSet *cpus);
int task_set_scheduler(void *userdata, pid_t tid, SchedPolicy policy, unsigned priority);

/* A thread's allowed CPUs from the kernel (sched_getaffinity(), one system call, several
 * times cheaper than parsing its status file): 1 with them added to *ret; 0, with nothing
 * built, when only_if is not NULL and the thread may use none of its CPUs (the common
 * case for a scan that looks for threads on the isolated CPUs); -errno (ESRCH: exited).
 * Only for a live host. */
int task_read_affinity(pid_t tid, const CPUSet *only_if, CPUSet *ret);
