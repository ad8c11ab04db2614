/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lowlatctl measure: where its threads may run (the CPUs online, the caller's affinity and
 * cgroup cpuset) and where they ran (each measuring thread's CPU, sampled from /proc). */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "basic/cpuset.h"

/* The CPUs in ROOT/sys/devices/system/cpu/online (root NULL: "/"). 0 or -errno. */
int measure_cpus_online(const char *root, CPUSet *ret);

/* The cpuset.cpus.effective of this process's cgroup: the cgroup-v2 line ("0::PATH") of
 * ROOT/proc/self/cgroup, read under ROOT/sys/fs/cgroup, or of its nearest ancestor that
 * has the file (a cgroup without the cpuset controller inherits its parent's CPUs).
 * ret_cgroup: that cgroup's path ("/user.slice"). -ENOENT where no cgroup v2 cpuset is
 * visible: nothing there confines the CPUs. */
int measure_cgroup_cpus(const char *root, CPUSet *ret, char **ret_cgroup);

/* A top-level slice of ROOT/sys/fs/cgroup that is a valid cpuset partition holding every
 * CPU of cpus (lowlatd's [cpus] partition): 1 with its name, 0 when there is none, -errno. */
int measure_partition_slice(const char *root, const CPUSet *cpus, char **ret);

/* The number of a thread's last CPU: field 39 of /proc/PID/task/TID/stat (counted after
 * the ")" that ends the command name, which may hold spaces and parentheses). */
int thread_stat_last_cpu(const char *stat, unsigned *ret);

/* Per measured CPU, the CPUs its thread was seen on. Thread i of the tool (by thread id,
 * the main thread left out) measures the i-th CPU of the list: cyclictest and oslat start
 * one thread per CPU in ascending CPU order. A thread keeps its CPU by its id once seen,
 * so that the others' exits at the end of the run do not shift the order. */
typedef struct ThreadPlacement {
        uint32_t cpu;     /* the CPU it measures */
        pid_t tid;        /* the thread, once seen; 0 before */
        CPUSet ran_on;    /* where it was seen once its affinity was cpu alone */
        CPUSet before;    /* where it was seen until then: pinning itself, or never pinned */
        unsigned looks;   /* how many scans found it */
        bool pinned;      /* its Cpus_allowed_list was cpu alone at a look */
} ThreadPlacement;

typedef struct MeasurePlacement {
        ThreadPlacement *threads;
        size_t n;
        unsigned samples; /* scans of /proc/PID/task */
        /* The first scans that find a thread are not counted: a tool that pins a thread
         * from inside it (rather than before starting it) needs a moment. */
        unsigned skip_looks;
} MeasurePlacement;

int measure_placement_init(MeasurePlacement *p, const CPUSet *cpus);
void measure_placement_done(MeasurePlacement *p);
/* One scan of ROOT/proc/PID/task; a thread that has gone is skipped. 0 or -errno. */
int measure_placement_sample(MeasurePlacement *p, const char *root, pid_t pid);
/* After the last sample: a thread never pinned to its CPU ran where it was seen (ran_on
 * takes those CPUs, so that reports show them). */
int measure_placement_finish(MeasurePlacement *p);
/* Whether a thread's /proc/PID/task/TID/status says it may run on cpu alone
 * (Cpus_allowed_list). */
bool thread_status_pinned_to(const char *status, unsigned cpu);
/* Whether every thread was pinned to its own CPU and seen there, and on no other CPU after. */
bool measure_placement_ok(const MeasurePlacement *p);
