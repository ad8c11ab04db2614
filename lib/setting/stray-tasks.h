/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Stray user tasks: threads allowed on isolated CPUs that are neither kernel threads nor
 * the configured applications. The audit reports them; with [cpus] evict_strays = yes the
 * stray_tasks setting moves them off with sched_setaffinity(). What both read of a task
 * is in task.h. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "config/config.h"
#include "basic/cpuset.h"
#include "host/host.h"
#include "config/posture.h"
#include "setting/setting.h"
#include "host/task.h"

/* The observed text is cut here (", and N more"): it goes to the journal and the bus. */
#define STRAYS_TEXT_MAX 1024U
/* Processes looked at in one scan (lowest pids first, as /proc lists them). */
#define STRAYS_PROCESSES_MAX 65536U
/* Threads of one process looked at in one scan. */
#define STRAYS_THREADS_MAX 4096U

/* A thread to move, from the last scan. */
typedef struct StrayThread {
        pid_t pid, tid;
        uint64_t start_time;
        char comm[64]; /* the process's, printable */
        CPUSet allowed;
} StrayThread;

/* A thread left alone, and why. Kept while the same task (tid and start time) lives, so
 * that it is neither retried nor reported again on every scan. */
typedef struct StrayExcluded {
        pid_t pid, tid;
        uint64_t start_time;
        char *what; /* "pid 55 (foo)", "pid 55 (foo) thread 57" */
        char *why;  /* short: "PID 1", "PF_NO_SETAFFINITY", "sched_setaffinity: Invalid argument" */
        bool reported; /* a failure that was reported, or a choice that needs no report */
        bool seen;     /* scan bookkeeping */
} StrayExcluded;

typedef struct StrayMoved {
        pid_t tid;
        uint64_t start_time;
} StrayMoved;

typedef struct Strays {
        StrayThread *threads;
        size_t n_threads, allocated_threads;
        StrayExcluded *excluded;
        size_t n_excluded, allocated_excluded;
        StrayMoved *moved; /* moved by the last strays_evict(), judged by the next scan */
        size_t n_moved;
        size_t n_confirmed; /* of those, how many the scan after the move found moved */
        /* A live host: a thread's CPUs come from sched_getaffinity(), one syscall, instead
         * of parsing /proc/PID/task/TID/status, which costs several times more. */
        bool live;
} Strays;

Strays *strays_new(void);
Strays *strays_free(Strays *st);
DEFINE_POINTER_CLEANUP(Strays, strays_free);

/* Looks at every task under h's /proc against the posture: fills st->threads with the
 * stray threads to move, keeps the exclusions of tasks that still live, and writes the
 * observed text into buf: "none", or "pid 123 (comm) on 0-3, pid 200 (x) on 2 (3
 * threads), ...", followed by "; left alone: pid 1 (systemd): PID 1, ..." when some are
 * excluded. self (lowlatd's pid) is never a stray. A thread that the last strays_evict()
 * moved and that is still stray is excluded ("still allowed on isolated CPUs"). Tasks
 * that exit meanwhile are skipped. Returns 0, or -errno when /proc cannot be listed. */
int strays_scan(Strays *st, const Host *h, const Posture *p, pid_t self, char *buf, size_t size);

/* Moves each thread of the last scan to its allowed CPUs minus the isolated ones (the
 * online ones among them), or to the housekeeping CPUs when none is left. A thread that
 * exited is skipped; one the kernel refuses (EINVAL, EPERM, EACCES) is excluded with the
 * reason. Returns the number moved, or -errno when none could be moved for another
 * reason. */
int strays_evict(Strays *st, const Posture *p, TaskAffinitySetter set, void *userdata);

/* The exclusions that are failures not reported yet, as one text ("pid 55 (foo) thread
 * 57: sched_setaffinity: Invalid argument, ..."), and marks them reported. Returns 1 with
 * *ret set, 0 when there is nothing to report, -ENOMEM. */
int strays_take_unreported(Strays *st, char **ret);
