/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Periodic-scan cost per IRQ, as a ratio to the floor: a minimal loop that pread()s the
 * same files through fds opened once. Both run in the same process on the same tree,
 * so the ratio holds on a noisy machine where the absolute figures do not.
 *   bench-scan [DIR]   builds fake trees with 1,000 and 10,000 IRQs under DIR
 *                      (default /dev/shm), then also measures this host's real
 *                      /proc/irq read-only (observe mode: nothing is written). */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include "config/config.h"
#include "host/host.h"
#include "log/log.h"
#include "config/posture.h"
#include "setting/irq.h"
#include "setting/table.h"
#include "basic/util.h"

#define REPEATS 31

static int write_file(const char *path, const char *text) {
        FILE *f = fopen(path, "we");
        if (!f)
                return -errno;
        fputs(text, f);
        return fclose(f) == 0 ? 0 : -errno;
}

static int build_tree(const char *root, unsigned nirqs) {
        char path[8192];
        static const char *const dirs[] = { "proc", "proc/irq", "sys", "sys/devices", "sys/devices/system",
                                            "sys/devices/system/cpu" };

        for (size_t i = 0; i < ELEMENTSOF(dirs); i++) {
                snprintf(path, sizeof(path), "%s/%s", root, dirs[i]);
                if (mkdir(path, 0755) < 0 && errno != EEXIST)
                        return -errno;
        }
        snprintf(path, sizeof(path), "%s/sys/devices/system/cpu/online", root);
        write_file(path, "0-3\n");
        snprintf(path, sizeof(path), "%s/sys/devices/system/cpu/isolated", root);
        write_file(path, "2-3\n");
        snprintf(path, sizeof(path), "%s/proc/irq/default_smp_affinity", root);
        write_file(path, "3\n");
        for (unsigned i = 0; i < nirqs; i++) {
                unsigned irq = 24 + i;
                snprintf(path, sizeof(path), "%s/proc/irq/%u", root, irq);
                if (mkdir(path, 0755) < 0 && errno != EEXIST)
                        return -errno;
                snprintf(path, sizeof(path), "%s/proc/irq/%u/smp_affinity_list", root, irq);
                write_file(path, "0-1\n");
                snprintf(path, sizeof(path), "%s/proc/irq/%u/smp_affinity", root, irq);
                write_file(path, "3\n");
                snprintf(path, sizeof(path), "%s/proc/irq/%u/effective_affinity_list", root, irq);
                write_file(path, "0\n");
        }
        return 0;
}

static uint64_t now_ns(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000000ULL + (uint64_t) ts.tv_nsec;
}

/* The floor: the file the scan reads per IRQ (smp_affinity_list; the effective CPUs are
 * read only when someone asks), the same open fds, pread at 0, nothing else. */
typedef struct Floor {
        int *fds;
        size_t n;
} Floor;

static int floor_init(Floor *f, const SettingTable *t) {
        f->n = 0;
        f->fds = calloc(t->n * 2, sizeof(int));
        if (!f->fds)
                return -ENOMEM;
        for (size_t i = 0; i < t->n; i++) {
                const Setting *s = t->settings[i];
                if (setting_is_irq(s, NULL) && setting_irq_fd(s) >= 0)
                        f->fds[f->n++] = setting_irq_fd(s);
        }
        return 0;
}

static uint64_t floor_round_ns(const Floor *f) {
        char buf[4096];
        uint64_t start = now_ns();

        for (size_t i = 0; i < f->n; i++)
                if (pread(f->fds[i], buf, sizeof(buf) - 1, 0) < 0) {
                        perror("pread");
                        abort();
                }
        return now_ns() - start;
}

/* One round of exactly what the scan timer does: list /proc/irq, then look at each IRQ.
 * Not inlined, so a profiler can count it alone: valgrind --tool=callgrind
 * --toggle-collect=scan_round --toggle-collect=floor_round_ns build/tests/bench/bench-scan */
static __attribute__((noinline)) uint64_t scan_round(SettingTable *table, const Host *host, const Posture *posture,
                                                     SettingContext *rc, uint64_t now) {
        uint64_t start = now_ns();

        irq_table_scan(table, host, posture);
        table_reconcile_all(table, rc, now, 0);
        return now_ns() - start;
}

static int measure(const char *label, const char *root, const char *config_text, bool observe) {
        _cleanup_(host_freep) Host *host = NULL;
        _cleanup_(posture_freep) Posture *posture = NULL;
        _cleanup_error_list_ ErrorList errors = ERROR_LIST_EMPTY;
        Config *config = config_new();
        HostCpus cpus = {};
        SettingTable table;
        SettingContext rc = {};
        uint64_t best = UINT64_MAX;
        size_t nirqs = 0;
        int r;

        if (!config || host_open(root, &host) < 0 || host_read_cpus(host, &cpus) < 0)
                return fprintf(stderr, "cannot open %s\n", root), -1;
        config_parse_string(config, "bench.conf", config_text, &errors);
        r = posture_build(&config, &cpus, &posture, &errors);
        host_cpus_done(&cpus);
        if (r < 0)
                return fprintf(stderr, "bad bench config: %s\n", errors.n ? errors.items[0] : "?"), -1;

        table_init(&table, NULL);
        r = irq_table_scan(&table, host, posture);
        if (r < 0)
                return fprintf(stderr, "cannot list %s/proc/irq: %s\n", root, strerror(-r)), -1;
        rc = (SettingContext) { .host = host, .posture = posture, .observe = observe };
        table_reconcile_all(&table, &rc, 1, 0); /* opens the persistent fds */
        for (size_t i = 0; i < table.n; i++)
                nirqs += setting_is_irq(table.settings[i], NULL);

        Floor fl;
        uint64_t best_floor = UINT64_MAX;
        if (floor_init(&fl, &table) < 0)
                return -1;
        /* Rounds alternate, so a burst of noise hits both sides alike; best of each. */
        for (int rep = 0; rep < REPEATS; rep++) {
                /* Into variables first: MIN() evaluates its arguments twice, and would run
                 * a round again whenever it was the best yet, keeping the second time. */
                uint64_t scan_ns = scan_round(&table, host, posture, &rc, 2 + (uint64_t) rep);
                uint64_t floor_ns = floor_round_ns(&fl);
                best = MIN(best, scan_ns);
                best_floor = MIN(best_floor, floor_ns);
        }
        free(fl.fds);
        double floor = (double) best_floor / (double) table.n, scan = (double) best / (double) table.n;
        printf("%-30s %6zu IRQs  scan %8.0f ns/IRQ  pread floor %8.0f ns/IRQ  ratio %.2fx\n", label, nirqs, scan,
               floor, scan / floor);
        table_done(&table);
        cpuset_done(&rc.scratch);
        return 0;
}

int main(int argc, char *argv[]) {
        const char *base = argc > 1 ? argv[1] : "/dev/shm";
        static const unsigned sizes[] = { 1000, 10000 };
        char root[4096];
        struct rlimit rl;

        /* Two persistent fds per IRQ, as lowlatd itself raises its limit. */
        if (getrlimit(RLIMIT_NOFILE, &rl) >= 0) {
                rl.rlim_cur = rl.rlim_max;
                (void) setrlimit(RLIMIT_NOFILE, &rl);
        }
        log_open(LOG_TARGET_STDERR);
        log_set_max_level(LOG_ERR);
        printf("Periodic scan cost (best of %d), ratio to a bare pread loop over the same fds:\n", REPEATS);
        for (size_t i = 0; i < ELEMENTSOF(sizes); i++) {
                char label[64];
                snprintf(root, sizeof(root), "%s/lowlatd-bench-%u-XXXXXX", base, sizes[i]);
                if (!mkdtemp(root) || build_tree(root, sizes[i]) < 0)
                        return fprintf(stderr, "cannot build a tree under %s\n", base), 1;
                snprintf(label, sizeof(label), "fake tree (tmpfs)");
                if (measure(label, root, "[cpus]\nisolated = 2-3\n", false) < 0)
                        return 1;
                char cmd[4200];
                snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
                if (system(cmd) != 0)
                        fprintf(stderr, "could not remove %s\n", root);
        }
        /* The real procfs, read only: observe mode never writes. */
        if (measure("this host's /proc/irq (observe)", "/", "[cpus]\nisolated = auto\n", true) < 0)
                return 1;
        return 0;
}
