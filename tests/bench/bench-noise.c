/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the noise counters add to the periodic scan, as a ratio to the scan without them,
 * both measured in this process on the same tree:
 *   - a fake host with 1,000 IRQs and 64 CPUs, 4 of them isolated (and watched): a
 *     /proc/interrupts of 1,000 lines x 64 columns (~750 kB), /proc/softirqs, /proc/irq;
 *     with no line changed between scans, with 10% of the lines changed, and with every
 *     line changed (the parse of each line is then paid in full);
 *   - this host's own /proc (read only): the scan in observe mode, with and without noise
 *     counters for CPUs 0-1, and, for the choice of source, one read of /proc/interrupts
 *     against one read of every /sys/kernel/irq/N/per_cpu_count through fds kept open.
 *   bench-noise [DIR]   builds the fake tree under DIR (default /dev/shm). */
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <malloc.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config/config.h"
#include "host/host.h"
#include "log/log.h"
#include "noise/noise.h"
#include "config/posture.h"
#include "setting/irq.h"
#include "setting/table.h"
#include "basic/util.h"

#define REPEATS 101

/* A fake host: its CPUs (the last 4 isolated and watched) and its IRQs. */
typedef struct Shape {
        unsigned ncpus, nirqs;
} Shape;

static uint64_t now_ns(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000000ULL + (uint64_t) ts.tv_nsec;
}

static int write_file(const char *path, const char *text) {
        FILE *f = fopen(path, "we");
        if (!f)
                return -errno;
        fputs(text, f);
        return fclose(f) == 0 ? 0 : -errno;
}

/* /proc/interrupts as kernel/irq/proc.c and arch/x86/kernel/irq.c print it; generation
 * changes the counts of every tenth line (step 10) or of every line (step 1). */
static char *interrupts_text(const Shape *sh, unsigned generation, unsigned step, size_t *ret_len) {
        static const char *const arch[][2] = {
                { "NMI", "Non-maskable interrupts" }, { "LOC", "Local timer interrupts" },
                { "SPU", "Spurious interrupts" },     { "PMI", "Performance monitoring interrupts" },
                { "IWI", "IRQ work interrupts" },     { "RES", "Rescheduling interrupts" },
                { "CAL", "Function call interrupts" }, { "TLB", "TLB shootdowns" },
                { "MCP", "Machine check polls" },
        };
        size_t size = (size_t) (sh->nirqs + 20) * (sh->ncpus * 11 + 80), len = 0;
        char *t = malloc(size);

        if (!t)
                abort();
        len += (size_t) snprintf(t + len, size - len, "      ");
        for (unsigned c = 0; c < sh->ncpus; c++)
                len += (size_t) snprintf(t + len, size - len, "CPU%-8u", c);
        t[len++] = '\n';
        for (unsigned i = 0; i < sh->nirqs + ELEMENTSOF(arch); i++) {
                unsigned bump = step && i % step == 0 ? generation : 0;
                if (i < sh->nirqs)
                        len += (size_t) snprintf(t + len, size - len, "%4u:", 24 + i);
                else
                        len += (size_t) snprintf(t + len, size - len, "%4s:", arch[i - sh->nirqs][0]);
                for (unsigned c = 0; c < sh->ncpus; c++)
                        len += (size_t) snprintf(t + len, size - len, " %10u", (i * 7919 + c * 104729) % 100000 + bump);
                if (i < sh->nirqs)
                        len += (size_t) snprintf(t + len, size - len, "  IR-PCI-MSI %u-edge      eth%u-TxRx-%u\n",
                                                 524288 + i, i / 64, i % 64);
                else
                        len += (size_t) snprintf(t + len, size - len, "   %s\n", arch[i - sh->nirqs][1]);
        }
        len += (size_t) snprintf(t + len, size - len, " ERR:          0\n MIS:          0\n");
        *ret_len = len;
        return t;
}

static int build_tree(const char *root, const Shape *sh) {
        _cleanup_cpuset_ CPUSet housekeeping = CPUSET_EMPTY;
        _cleanup_free_ char *mask = NULL;
        char path[8192], text_buf[64], *text;
        size_t len;
        static const char *const dirs[] = { "proc", "proc/irq", "sys", "sys/devices", "sys/devices/system",
                                            "sys/devices/system/cpu" };
        FILE *f;

        for (size_t i = 0; i < ELEMENTSOF(dirs); i++) {
                snprintf(path, sizeof(path), "%s/%s", root, dirs[i]);
                if (mkdir(path, 0755) < 0 && errno != EEXIST)
                        return -errno;
        }
        snprintf(path, sizeof(path), "%s/sys/devices/system/cpu/online", root);
        snprintf(text_buf, sizeof(text_buf), "0-%u\n", sh->ncpus - 1);
        write_file(path, text_buf);
        snprintf(text_buf, sizeof(text_buf), "%u-%u\n", sh->ncpus - 4, sh->ncpus - 1);
        snprintf(path, sizeof(path), "%s/sys/devices/system/cpu/isolated", root);
        write_file(path, text_buf);
        snprintf(path, sizeof(path), "%s/sys/devices/system/cpu/nohz_full", root);
        write_file(path, text_buf);
        for (unsigned c = 0; c + 4 < sh->ncpus; c++)
                if (cpuset_add(&housekeeping, c) < 0)
                        return -ENOMEM;
        mask = cpuset_format_mask(&housekeeping, sh->ncpus);
        if (!mask)
                return -ENOMEM;
        snprintf(path, sizeof(path), "%s/proc/irq/default_smp_affinity", root);
        write_file(path, mask);
        snprintf(text_buf, sizeof(text_buf), "0-%u\n", sh->ncpus - 5);
        for (unsigned i = 0; i < sh->nirqs; i++) {
                unsigned irq = 24 + i;
                snprintf(path, sizeof(path), "%s/proc/irq/%u", root, irq);
                if (mkdir(path, 0755) < 0 && errno != EEXIST)
                        return -errno;
                snprintf(path, sizeof(path), "%s/proc/irq/%u/smp_affinity_list", root, irq);
                write_file(path, text_buf);
                snprintf(path, sizeof(path), "%s/proc/irq/%u/effective_affinity_list", root, irq);
                write_file(path, "0\n");
        }
        text = interrupts_text(sh, 0, 0, &len);
        snprintf(path, sizeof(path), "%s/proc/interrupts", root);
        f = fopen(path, "we");
        if (!f)
                return -errno;
        fwrite(text, 1, len, f);
        fclose(f);
        free(text);
        snprintf(path, sizeof(path), "%s/proc/softirqs", root);
        f = fopen(path, "we");
        if (!f)
                return -errno;
        fprintf(f, "                    ");
        for (unsigned c = 0; c < sh->ncpus; c++)
                fprintf(f, "CPU%-8u", c);
        fputc('\n', f);
        static const char *const softirqs[] = { "HI", "TIMER", "NET_TX", "NET_RX", "BLOCK",
                                                "IRQ_POLL", "TASKLET", "SCHED", "HRTIMER", "RCU" };
        for (size_t i = 0; i < ELEMENTSOF(softirqs); i++) {
                fprintf(f, "%12s:", softirqs[i]);
                for (unsigned c = 0; c < sh->ncpus; c++)
                        fprintf(f, " %10u", (unsigned) (i * 1000 + c));
                fputc('\n', f);
        }
        fclose(f);
        /* /proc/schedstat (version 15): a cpu line and, on a 64-CPU two-socket host, three
         * sched-domain lines (SMT, MC, NUMA) of 45 numbers each per CPU: ~70 kB. */
        snprintf(path, sizeof(path), "%s/proc/schedstat", root);
        f = fopen(path, "we");
        if (!f)
                return -errno;
        fprintf(f, "version 15\ntimestamp 4295892312\n");
        for (unsigned c = 0; c < sh->ncpus; c++) {
                fprintf(f, "cpu%u 0 0 0 %u %u %u %u %u %u\n", c, 1000 + c, 500 + c, 400 + c, 123456789u + c,
                        23456789u + c, 2000 + c);
                for (unsigned d = 0; d < 3; d++) {
                        fprintf(f, "domain%u %s", d, d == 0 ? "00000000,00000003" : d == 1 ? "00000000,ffffffff" : "ffffffff,ffffffff");
                        for (unsigned k = 0; k < 45; k++)
                                fprintf(f, " %u", (c * 31 + d * 7 + k * 13) % 5000);
                        fputc('\n', f);
                }
        }
        fclose(f);
        return 0;
}

/* k timer records in each ring, as a nohz_full CPU running one task takes in k seconds. */
static void fake_gate_ticks(NoiseGate *g, unsigned k) {
        size_t page = (size_t) sysconf(_SC_PAGESIZE);

        for (size_t i = 0; i < g->n_rings; i++) {
                struct perf_event_mmap_page *pg = g->rings[i].map;
                uint8_t *data = (uint8_t *) g->rings[i].map + page;
                for (unsigned j = 0; j < k; j++) {
                        struct perf_event_header h = { .type = PERF_RECORD_SAMPLE, .size = 16 };
                        uint64_t id = 7, at = pg->data_head & (page - 1);
                        memcpy(data + at, &h, sizeof(h)); /* 16-byte records never wrap inside */
                        memcpy(data + at + sizeof(h), &id, sizeof(id));
                        pg->data_head += 16;
                }
        }
}

typedef struct Scan {
        const Shape *shape;
        Host *host;
        Posture *posture;
        SettingTable table;
        SettingContext rc;
        Noise *noise;
        NoiseAlertPolicy policy;
        bool fake_gate;
} Scan;

static void alert_sink(const NoiseAlert *a, void *userdata) {
        (*(unsigned *) userdata)++;
}

static int scan_open(Scan *s, const Shape *sh, const char *root, const char *config_text, bool observe) {
        _cleanup_error_list_ ErrorList errors = ERROR_LIST_EMPTY;
        Config *config = config_new();
        HostCpus cpus = {};
        unsigned watched[64];
        size_t n = 0;
        int r;

        *s = (Scan) { .shape = sh };
        if (!config || host_open(root, &s->host) < 0 || host_read_cpus(s->host, &cpus) < 0)
                return fprintf(stderr, "cannot open %s\n", root), -1;
        config_parse_string(config, "bench.conf", config_text, &errors);
        r = posture_build(&config, &cpus, &s->posture, &errors);
        if (r < 0 || errors.n > 0) {
                host_cpus_done(&cpus);
                return fprintf(stderr, "bad bench config: %s\n", errors.n ? errors.items[0] : "?"), -1;
        }
        table_init(&s->table, NULL);
        r = irq_table_scan(&s->table, s->host, s->posture);
        if (r < 0)
                return fprintf(stderr, "cannot list %s/proc/irq: %s\n", root, strerror(-r)), -1;
        s->rc = (SettingContext) { .host = s->host, .posture = s->posture, .observe = observe };
        table_reconcile_all(&s->table, &s->rc, 1, 0); /* opens the persistent fds */
        CPUSET_FOREACH(cpu, &s->posture->noise_cpus)
                if (n < ELEMENTSOF(watched))
                        watched[n++] = (unsigned) cpu;
        if (noise_new(watched, n, &s->noise) < 0)
                return -1;
        noise_set_nohz_full(s->noise, &cpus.nohz_full);
        host_cpus_done(&cpus);
        s->policy = (NoiseAlertPolicy) { s->posture->config->noise_tick_rate_max,
                                         s->posture->config->noise_alert_interval_usec, NOISE_BUSY_SHARE_MIN };
        return 0;
}

static void scan_close(Scan *s) {
        table_done(&s->table);
        cpuset_done(&s->rc.scratch);
        noise_free(s->noise);
        posture_free(s->posture);
        host_free(s->host);
}

/* Exactly what the scan timer does: list /proc/irq, look at each IRQ; with noise, then
 * read the counters (noise_read_scan(), as the daemon: through the gate when the Noise has
 * one), take the rates, check the alerts. t: seconds. */
static uint64_t scan_round(Scan *s, bool noise, uint64_t t) {
        uint64_t start = now_ns();
        unsigned alerts = 0;

        irq_table_scan(&s->table, s->host, s->posture);
        table_reconcile_all(&s->table, &s->rc, t, 0);
        if (noise) {
                if (noise_read_scan(s->noise, s->host, t * USEC_PER_SEC) < 0)
                        abort();
                noise_scan(s->noise, t * USEC_PER_SEC);
                if (noise_wants_stat(s->noise, &s->policy))
                        (void) noise_read_stat(s->noise, s->host);
                noise_check_alerts(s->noise, &s->policy, t * USEC_PER_SEC, alert_sink, &alerts);
        }
        return now_ns() - start;
}

static int compare_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;
        return (x > y) - (x < y);
}

/* Rounds alternate, so a burst of noise from elsewhere hits both sides alike; best of each.
 * step: rewrite /proc/interrupts before each round with that share of its lines changed
 * (0: unchanged), outside the timed part. */
static double compare(const char *label, Scan *s, const char *interrupts_path, unsigned step) {
        uint64_t best_without = UINT64_MAX, best_with = UINT64_MAX, best_read = UINT64_MAX;
        uint64_t full0 = s->noise->full_reads, gated0 = s->noise->gated_reads;
        double ratios[REPEATS], median;
        size_t size = (size_t) (s->shape ? s->shape->nirqs + 64 : 4096) * ((s->shape ? s->shape->ncpus : 256) * 11 + 128);
        char *buf = malloc(size);
        int fd = open(interrupts_path ?: "/proc/interrupts", O_RDONLY | O_CLOEXEC);

        if (!buf || fd < 0)
                abort();

        /* Two versions of the file, written in turn: each round sees the changed lines
         * changed. Made beforehand, so that making them does not empty the caches. */
        char *texts[2] = {};
        size_t lens[2] = {};
        int wfd = -1;
        if (step) {
                texts[0] = interrupts_text(s->shape, 1, step, &lens[0]);
                texts[1] = interrupts_text(s->shape, 2, step, &lens[1]);
                wfd = open(interrupts_path, O_WRONLY | O_CLOEXEC);
                if (wfd < 0)
                        abort();
        }
        for (unsigned rep = 0; rep < REPEATS; rep++) {
                if (step && pwrite(wfd, texts[rep % 2], lens[rep % 2], 0) != (ssize_t) lens[rep % 2])
                        abort();
                if (s->fake_gate)
                        fake_gate_ticks(s->noise->gate, 10);
                /* Which goes first alternates too: the first after the write pays for it. */
                uint64_t with, without;
                if (rep % 2) {
                        with = scan_round(s, true, 10 + 2 * (uint64_t) rep);
                        without = scan_round(s, false, 11 + 2 * (uint64_t) rep);
                } else {
                        without = scan_round(s, false, 10 + 2 * (uint64_t) rep);
                        with = scan_round(s, true, 11 + 2 * (uint64_t) rep);
                }
                best_with = MIN(best_with, with);
                best_without = MIN(best_without, without);
                ratios[rep] = (double) with / (double) without;
                /* The floor of any reader of the file: one pread() of it whole. */
                uint64_t start = now_ns();
                ssize_t k;
                off_t off = 0;
                while ((k = pread(fd, buf + off, size - (size_t) off, off)) > 0)
                        off += k;
                best_read = MIN(best_read, now_ns() - start);
        }
        close(fd);
        safe_close(wfd);
        free(texts[0]);
        free(texts[1]);
        free(buf);
        /* The median of each round's pair, taken a few microseconds apart: a burst from
         * elsewhere that spoils a whole stretch of rounds moves it less than the bests. */
        qsort(ratios, REPEATS, sizeof(double), compare_double);
        median = ratios[REPEATS / 2];
        printf("%-52s scan %7.1f us  with noise %7.1f us  ratio %.3f (+%.1f%%), median of pairs %+.1f%%; reading "
               "/proc/interrupts alone %.1f us (+%.1f%%)\n",
               label, best_without / 1e3, best_with / 1e3, (double) best_with / (double) best_without,
               ((double) best_with / (double) best_without - 1) * 100, (median - 1) * 100, best_read / 1e3,
               (double) best_read / (double) best_without * 100);
        if (s->noise->gate)
                printf("%-52s   the gate: %" PRIu64 " scans read /proc/interrupts, %" PRIu64 " did without it\n", "",
                       s->noise->full_reads - full0, s->noise->gated_reads - gated0);
        return median - 1;
}

/* One read of /proc/interrupts through a kept fd, against one pread of every
 * /sys/kernel/irq/N/per_cpu_count (fds opened once): the two per-IRQ sources. */
static void compare_sources(void) {
        char buf[65536];
        int fds[8192], fd;
        size_t n = 0;
        uint64_t best_proc = UINT64_MAX, best_sys = UINT64_MAX;
        DIR *d = opendir("/sys/kernel/irq");
        struct dirent *de;

        fd = open("/proc/interrupts", O_RDONLY | O_CLOEXEC);
        if (fd < 0 || !d) {
                printf("this host: no /proc/interrupts or /sys/kernel/irq, sources not compared\n");
                if (d)
                        closedir(d);
                safe_close(fd);
                return;
        }
        while ((de = readdir(d)) && n < ELEMENTSOF(fds)) {
                char path[512];
                if (de->d_name[0] == '.')
                        continue;
                snprintf(path, sizeof(path), "/sys/kernel/irq/%s/per_cpu_count", de->d_name);
                int f = open(path, O_RDONLY | O_CLOEXEC);
                if (f >= 0)
                        fds[n++] = f;
        }
        closedir(d);
        for (int rep = 0; rep < REPEATS; rep++) {
                uint64_t start = now_ns();
                ssize_t k;
                off_t off = 0;
                while ((k = pread(fd, buf, sizeof(buf), off)) > 0)
                        off += k;
                best_proc = MIN(best_proc, now_ns() - start);
                start = now_ns();
                for (size_t i = 0; i < n; i++)
                        if (pread(fds[i], buf, sizeof(buf), 0) < 0)
                                abort();
                best_sys = MIN(best_sys, now_ns() - start);
        }
        printf("this host: /proc/interrupts %8.1f us per read; every /sys/kernel/irq/N/per_cpu_count (%zu IRQs) "
               "%8.1f us; ratio %.2f\n",
               best_proc / 1e3, n, best_sys / 1e3, (double) best_sys / (double) best_proc);
        for (size_t i = 0; i < n; i++)
                close(fds[i]);
        close(fd);
}

/* The heap the noise counters of a fake tree hold once read (the text of each file, what
 * is kept of each line of its previous read, the rows), from malloc's own count, and the time of one
 * read of every file against one pread of /proc/interrupts alone. */
static void noise_footprint(const Scan *s, const char *interrupts_path) {
        unsigned watched[] = { s->shape->ncpus - 4, s->shape->ncpus - 3, s->shape->ncpus - 2, s->shape->ncpus - 1 };
        uint64_t best_read = UINT64_MAX, best_pread = UINT64_MAX;
        struct mallinfo2 before = mallinfo2(), after;
        size_t size = 0;
        char *buf = NULL;
        Noise *n = NULL;
        int fd = open(interrupts_path, O_RDONLY | O_CLOEXEC);
        struct stat st;

        if (fd < 0 || fstat(fd, &st) < 0 || noise_new(watched, ELEMENTSOF(watched), &n) < 0)
                abort();
        for (unsigned rep = 0; rep < 11; rep++) {
                uint64_t start = now_ns();
                if (noise_read(n, s->host, (uint64_t) (rep + 1) * USEC_PER_SEC) < 0 || n->unreadable)
                        abort();
                best_read = MIN(best_read, now_ns() - start);
        }
        after = mallinfo2();
        size = (size_t) st.st_size + 1;
        buf = malloc(size);
        for (unsigned rep = 0; buf && rep < 11; rep++) {
                uint64_t start = now_ns();
                ssize_t k;
                off_t off = 0;
                while ((k = pread(fd, buf + off, size - (size_t) off, off)) > 0)
                        off += k;
                best_pread = MIN(best_pread, now_ns() - start);
        }
        printf("  /proc/interrupts %.1f MB: the counters hold %.1f MB of heap once read (%.2fx the file); a read of "
               "every file %.1f ms, one pread of /proc/interrupts alone %.1f ms (%.2fx)\n",
               st.st_size / 1e6,
               ((double) (after.uordblks + after.hblkhd) - (double) (before.uordblks + before.hblkhd)) / 1e6,
               ((double) (after.uordblks + after.hblkhd) - (double) (before.uordblks + before.hblkhd)) / (double) st.st_size,
               best_read / 1e6, best_pread / 1e6, (double) best_read / (double) best_pread);
        free(buf);
        noise_free(n);
        close(fd);
}

/* The scan with and without the counters on a fake tree of shape sh (under base), the gate
 * open and closed; with footprint, the counters' heap too. */
static int bench_fake_tree(const char *base, const Shape *sh, bool footprint) {
        char root[4096], path[4200], cmd[4300], config[128];
        double full, gated;
        Scan s;

        snprintf(root, sizeof(root), "%s/lowlatd-bench-noise-XXXXXX", base);
        if (!mkdtemp(root) || build_tree(root, sh) < 0)
                return fprintf(stderr, "cannot build a tree under %s\n", base), -1;
        snprintf(path, sizeof(path), "%s/proc/interrupts", root);
        printf("Noise counters' cost in the periodic scan (best of %d), %u IRQs x %u CPUs, 4 watched:\n", REPEATS,
               sh->nirqs, sh->ncpus);
        snprintf(config, sizeof(config), "[cpus]\nisolated = %u-%u\n", sh->ncpus - 4, sh->ncpus - 1);
        if (scan_open(&s, sh, root, config, false) < 0)
                return -1;
        if (footprint)
                noise_footprint(&s, path);
        full = compare("fake tree, no line changed (gate off or open)", &s, path, 0);
        compare("fake tree, 10% of the lines changed (gate open)", &s, path, 10);
        compare("fake tree, every line changed (gate open)", &s, path, 1);
        /* The gate closed: the watched CPUs took only their timer (10 ticks each between
         * two scans), /proc/interrupts unchanged. Rings in memory (no perf for the fake
         * tree's CPUs): the scan reads them with the same loads as the kernel's. */
        {
                NoiseGate *g = NULL;
                if (noise_gate_new_in_memory(s.noise->n_cpus, 7, &g) < 0)
                        abort();
                noise_set_gate(s.noise, g);
        }
        s.fake_gate = true;
        gated = compare("fake tree, gate closed (only 10 ticks per CPU)", &s, path, 0);
        printf("  at the default 10 s scan the gate re-reads /proc/interrupts once a minute: 5 gated scans and one full "
               "read in 6, %+.1f%% on average (medians of pairs)\n",
               (5 * gated + full) / 6 * 100);
        scan_close(&s);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
        if (system(cmd) != 0)
                fprintf(stderr, "could not remove %s\n", root);
        return 0;
}

int main(int argc, char *argv[]) {
        static const Shape server = { 64, 1000 }, large = { 512, 3200 };
        const char *base = argc > 1 ? argv[1] : "/dev/shm";
        struct rlimit rl;
        Scan s;

        if (getrlimit(RLIMIT_NOFILE, &rl) >= 0) {
                rl.rlim_cur = rl.rlim_max;
                (void) setrlimit(RLIMIT_NOFILE, &rl);
        }
        log_open(LOG_TARGET_STDERR);
        log_set_max_level(LOG_ERR);
        if (bench_fake_tree(base, &server, true) < 0)
                return 1;
        /* A large host: /proc/interrupts of 18 MB, over what lowlatd once read at most. */
        if (bench_fake_tree(base, &large, true) < 0)
                return 1;

        /* The real procfs, read only: observe mode never writes. */
        if (scan_open(&s, NULL, "/", "[cpus]\nisolated = auto\n\n[noise]\ncpus = 0-1\n", true) < 0)
                return 1;
        compare("this host's /proc (observe), CPUs 0-1", &s, NULL, 0);
        {
                unsigned cpus[] = { 0, 1 };
                NoiseGate *g = NULL;
                const char *event = NULL;
                int r = noise_gate_open(s.host, cpus, sysconf(_SC_NPROCESSORS_ONLN) >= 2 ? 2 : 1, &g, &event);
                if (r < 0)
                        printf("this host: no perf rings (%s), the gate not measured on real CPUs\n", strerror(-r));
                else {
                        noise_set_gate(s.noise, g);
                        compare("this host's /proc, CPUs 0-1 through real perf rings", &s, NULL, 0);
                }
        }
        scan_close(&s);
        compare_sources();
        return 0;
}
