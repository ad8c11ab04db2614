/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What [cpus] evict_strays costs per scan, per task, on this host's real /proc, read
 * only: nothing is moved (strays_scan() looks; only strays_evict() would move).
 *
 * The bench forks CHILDREN sleeping processes pinned to CPU 0, as on a host where the
 * services already keep off the isolated CPUs (the steady state the scan runs in), and
 * treats CPU 1 as isolated. It times, in the same process and the same run:
 *   floor   list /proc and every task directory, sched_getaffinity() for each thread;
 *   live    strays_scan() as lowlatd runs it on a live host (sched_getaffinity());
 *   text    strays_scan() reading /proc/PID/task/TID/status instead, as on a fake tree.
 * and prints microseconds per task and the ratios to the floor. Needs 2+ CPUs. */
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "config/config.h"
#include "basic/errorlist.h"
#include "host/host.h"
#include "log/log.h"
#include "config/posture.h"
#include "setting/stray-tasks.h"
#include "basic/util.h"

#define CHILDREN 1000
#define REPEATS 21

static uint64_t now_ns(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000000ULL + (uint64_t) ts.tv_nsec;
}

static int compare_u64(const void *a, const void *b) {
        uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
        return x < y ? -1 : x > y;
}

static uint64_t median(uint64_t *v, size_t n) {
        qsort(v, n, sizeof(uint64_t), compare_u64);
        return v[n / 2];
}

/* The floor: what any scan must do. Returns the number of threads looked at. */
static size_t floor_scan(void) {
        DIR *proc = opendir("/proc");
        struct dirent *de;
        size_t n = 0;
        cpu_set_t set;

        if (!proc)
                return 0;
        while ((de = readdir(proc))) {
                char path[300];
                struct dirent *te;
                DIR *task;

                if (de->d_name[0] < '0' || de->d_name[0] > '9')
                        continue;
                snprintf(path, sizeof(path), "/proc/%s/task", de->d_name);
                task = opendir(path);
                if (!task)
                        continue;
                while ((te = readdir(task))) {
                        if (te->d_name[0] < '0' || te->d_name[0] > '9')
                                continue;
                        if (sched_getaffinity(atoi(te->d_name), sizeof(set), &set) == 0)
                                n++;
                }
                closedir(task);
        }
        closedir(proc);
        return n;
}

int main(void) {
        _cleanup_error_list_ ErrorList errors = ERROR_LIST_EMPTY;
        _cleanup_config_ Config *c = config_new();
        uint64_t t_floor[REPEATS], t_live[REPEATS], t_text[REPEATS];
        Posture *posture = NULL;
        HostCpus cpus = {};
        Host *host = NULL;
        Strays *st = strays_new();
        pid_t children[CHILDREN];
        size_t n_children = 0, n_tasks = 0;
        char buf[8192];
        cpu_set_t zero;
        int r;

        log_open(LOG_TARGET_STDERR);
        if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
                printf("SKIP: needs 2 online CPUs (CPU 1 plays the isolated one)\n");
                return 77;
        }
        r = host_open("/", &host);
        if (r >= 0)
                r = host_read_cpus(host, &cpus);
        if (r >= 0 && c && config_parse_string(c, "bench.conf", "[cpus]\nisolated = 1\nevict_strays = yes\n", &errors) >= 0) {
                config_validate(c, &errors);
                if (errors.n == 0)
                        r = posture_build(&c, &cpus, &posture, &errors);
        }
        host_cpus_done(&cpus);
        if (r < 0 || !posture || !st) {
                for (size_t i = 0; i < errors.n; i++)
                        fprintf(stderr, "%s\n", errors.items[i]);
                fprintf(stderr, "cannot set up: %s\n", strerror(r < 0 ? -r : EINVAL));
                return 1;
        }

        /* Sleepers on CPU 0: tasks the scan must look at and find in order. */
        CPU_ZERO(&zero);
        CPU_SET(0, &zero);
        for (; n_children < CHILDREN; n_children++) {
                pid_t pid = fork();
                if (pid < 0)
                        break;
                if (pid == 0) {
                        (void) sched_setaffinity(0, sizeof(zero), &zero);
                        pause();
                        _exit(0);
                }
                children[n_children] = pid;
        }
        usleep(300000); /* let them pin themselves */

        for (int i = 0; i < REPEATS; i++) {
                uint64_t t0 = now_ns();
                n_tasks = floor_scan();
                t_floor[i] = now_ns() - t0;

                st->live = true;
                t0 = now_ns();
                r = strays_scan(st, host, posture, getpid(), buf, sizeof(buf));
                t_live[i] = now_ns() - t0;
                if (r < 0)
                        break;

                st->live = false;
                t0 = now_ns();
                r = strays_scan(st, host, posture, getpid(), buf, sizeof(buf));
                t_text[i] = now_ns() - t0;
                if (r < 0)
                        break;
        }
        for (size_t i = 0; i < n_children; i++)
                kill(children[i], SIGKILL);
        for (size_t i = 0; i < n_children; i++)
                (void) waitpid(children[i], NULL, 0);
        if (r < 0) {
                fprintf(stderr, "strays_scan: %s\n", strerror(-r));
                return 1;
        }

        uint64_t f = median(t_floor, REPEATS), l = median(t_live, REPEATS), t = median(t_text, REPEATS);
        printf("evict_strays scan, %zu threads (%zu sleepers on CPU 0 + this host's tasks), CPU 1 isolated,\n"
               "median of %d:\n", n_tasks, n_children, REPEATS);
        printf("  floor (list /proc, sched_getaffinity per thread): %8.1f us  %5.2f us/thread\n", f / 1e3,
               f / 1e3 / (double) (n_tasks ?: 1));
        printf("  strays_scan, live (sched_getaffinity):             %8.1f us  %5.2f us/thread  %.2fx floor\n",
               l / 1e3, l / 1e3 / (double) (n_tasks ?: 1), (double) l / (double) (f ?: 1));
        printf("  strays_scan, text (/proc/PID/task/TID/status):     %8.1f us  %5.2f us/thread  %.2fx floor\n",
               t / 1e3, t / 1e3 / (double) (n_tasks ?: 1), (double) t / (double) (f ?: 1));
        printf("  observed: %.120s\n", buf);
        strays_free(st);
        posture_free(posture);
        host_free(host);
        return 0;
}
