/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lowlatctl measure's parsers on the tools' real reports (tests/unit/measure-data, see its
 * README: cyclictest and oslat captured, rtla written after its documented format), p99
 * from a histogram, the command lines, and hostile reports that must give an error. And
 * top's rates between two Noise() samples: a counter going backwards never gives a
 * negative or huge rate. The histogram folded into monitoring's buckets: cumulative,
 * never above the samples, no bound the tool's histogram cannot vouch for. */
#include <fcntl.h>
#include <math.h>
#include <string.h>

#include "noise-view.h"
#include "basic/macro.h"
#include "measure.h"
#include "tap.h"
#include "basic/util.h"

static char *read_data(const char *name) {
        const char *dir = getenv("MEASURE_DATA");
        _cleanup_free_ char *path = strdup_printf("%s/%s", dir ?: ".", name);
        _cleanup_fclose_ FILE *f = path ? fopen(path, "re") : NULL;
        char *buf = NULL;
        size_t size = 0;
        FILE *out;
        int c;

        if (!f) {
                /* A test helper that cannot get its data fails the test. */
                printf("Bail out! cannot open %s\n", path ?: name);
                exit(1);
        }
        out = open_memstream(&buf, &size);
        while ((c = fgetc(f)) != EOF)
                fputc(c, out);
        fclose(out);
        return buf;
}

static CPUSet cpus_of(const char *list) {
        CPUSet s = {};
        if (cpuset_parse_list(list, &s) < 0)
                abort();
        return s;
}

static void test_p99(void) {
        uint64_t flat[100];
        uint64_t two[] = { 98, 1, 1 };
        bool over;

        for (size_t i = 0; i < ELEMENTSOF(flat); i++)
                flat[i] = 1;
        CHECK(histogram_p99(flat, 100, 0, &over) == 98 && !over, "100 samples one per bucket: the 99th is bucket 98");
        CHECK(histogram_p99(two, 3, 0, &over) == 1 && !over, "98,1,1: 99 reached at bucket 1");
        CHECK(histogram_p99(two, 3, 2, &over) == 3 && over, "two more overflows: the p99 is beyond the histogram");
        CHECK(histogram_p99(two, 0, 0, &over) == 0 && !over, "no samples: 0, not over");
        uint64_t big[] = { UINT64_MAX / 2, UINT64_MAX / 4 };
        CHECK(histogram_p99(big, 2, 0, &over) == 1 && !over, "huge counts do not overflow the arithmetic");
}

static void test_cyclictest(void) {
        _cleanup_free_ char *text = read_data("cyclictest-cpus-0-1.hist");
        _cleanup_(measure_result_done) MeasureResult r = {};
        _cleanup_cpuset_ CPUSet cpus = cpus_of("0-1");
        _cleanup_cpuset_ CPUSet three = cpus_of("0-2");
        MeasureResult bad = {};

        CHECK(cyclictest_parse(text, &cpus, &r) == 0 && r.n == 2, "cyclictest: two threads, two CPUs");
        if (r.n != 2)
                return;
        CHECK(r.cpus[0].cpu == 0 && r.cpus[1].cpu == 1, "threads on CPUs 0 and 1 in order");
        CHECK(r.cpus[0].min_ns == 22000 && r.cpus[0].avg_ns == 47000 && r.cpus[0].max_ns == 1295000,
              "thread 0: min 22, avg 47, max 1295 us as cyclictest says");
        CHECK(r.cpus[1].min_ns == 13000 && r.cpus[1].max_ns == 1044000, "thread 1: min 13, max 1044 us");
        CHECK(r.cpus[0].overflows == 27 && r.cpus[0].samples == 1972 + 27, "thread 0: Total plus 27 overflows");
        CHECK(r.measured_usec == (1972 + 27) * 1000ULL,
              "cyclictest: measured for the most samples of a thread (1999) times its 1 ms interval");
        CHECK(r.cpus[0].p99_over && r.cpus[0].p99_ns == 200000,
              "thread 0: 1% is 20 samples, 27 overflowed: p99 beyond the 200 us histogram");
        CHECK(!r.cpus[1].p99_over && r.cpus[1].p99_ns == 171000, "thread 1: p99 171 us, from the histogram");
        CHECK(latency_max_is_high(&r.cpus[1]), "1044 us against a p99 of 171: a high max");
        CHECK(cyclictest_parse(text, &three, &bad) == -EBADMSG, "three CPUs for two columns: an error");
}

/* Values beyond what a long holds (9.2e18): an overflow count of 1e19 is kept, a maximum
 * of 1e16 us (1e19 ns) too, and one of 1e17 us saturates; llround() gave 2^63 for all. */
static void test_cyclictest_huge(void) {
        static const char text[] = "000000 000001\n# Total: 000000001\n# Min Latencies: 00001\n"
                                   "# Avg Latencies: 00001\n# Max Latencies: 10000000000000000\n"
                                   "# Histogram Overflows: 10000000000000000000\n";
        static const char sat[] = "000000 000001\n# Total: 000000001\n# Min Latencies: 00001\n"
                                  "# Avg Latencies: 00001\n# Max Latencies: 100000000000000000\n";
        _cleanup_(measure_result_done) MeasureResult r = {}, s = {};
        _cleanup_cpuset_ CPUSet one = cpus_of("0");

        CHECK(cyclictest_parse(text, &one, &r) == 0 && r.n == 1 && r.cpus[0].overflows == 10000000000000000000ULL &&
                      r.cpus[0].max_ns == 10000000000000000000ULL,
              "cyclictest: 1e19 overflows and a 1e16 us maximum kept as they are, not wrapped");
        CHECK(cyclictest_parse(sat, &one, &s) == 0 && s.n == 1 && s.cpus[0].max_ns == UINT64_MAX,
              "cyclictest: a 1e17 us maximum saturates");
}

static void test_oslat(void) {
        _cleanup_free_ char *one = read_data("oslat-cpu-1.txt"), *two = read_data("oslat-cpus-0-1.txt");
        _cleanup_(measure_result_done) MeasureResult r1 = {}, r2 = {};

        CHECK(oslat_parse(one, &r1) == 0 && r1.n == 1 && r1.cpus[0].cpu == 1, "oslat: core 1");
        /* --duration 1 ran 2 s of wall clock (its pre-heat second): the report's own
         * "Duration: 0.996 (sec)" is what was measured. */
        CHECK(r1.measured_usec == 996000, "oslat: measured for its Duration: 0.996 s, not the wall clock");
        if (r1.n == 1) {
                CHECK(r1.cpus[0].min_ns == 1000 && r1.cpus[0].avg_ns == 1024 && r1.cpus[0].max_ns == 24110000,
                      "oslat: min 1, avg 1.024, max 24110 us");
                CHECK(r1.cpus[0].samples == 20427227 && r1.cpus[0].p99_ns == 1000, "oslat: samples summed, p99 1 us");
        }
        CHECK(oslat_parse(two, &r2) == 0 && r2.n == 2 && r2.cpus[0].cpu == 0 && r2.cpus[1].cpu == 1,
              "oslat: cores 0 and 1");
        if (r2.n == 2)
                CHECK(r2.cpus[1].max_ns == 84032000 && r2.cpus[0].samples == 13436059 &&
                              r2.cpus[1].samples == 17081984,
                      "oslat: core 1 max 84032 us; the counts of each column");
}

static void test_timerlat(void) {
        _cleanup_free_ char *text = read_data("rtla-timerlat-hist-cpus-2-3.txt");
        _cleanup_(measure_result_done) MeasureResult r = {};

        CHECK(timerlat_parse(text, &r) == 0 && r.n == 2, "timerlat: the two Thr- columns, IRQ- ones left out");
        if (r.n != 2)
                return;
        CHECK(r.cpus[0].cpu == 2 && r.cpus[1].cpu == 3, "CPUs 2 and 3 from Thr-002, Thr-003");
        CHECK(r.cpus[0].max_ns == 40000 && r.cpus[1].max_ns == 12000 && r.cpus[0].min_ns == 1000,
              "max 40 and 12 us, min 1 (the thread's, not the IRQ's)");
        CHECK(r.cpus[0].samples == 5000 && r.cpus[0].p99_ns == 3000 && r.cpus[1].p99_ns == 4000,
              "5000 samples; p99 3 and 4 us");
}

static void test_hostile(void) {
        static const char *const cyclictest_bad[] = {
                "",
                "000000 000001\n# Min Latencies: 00001\n# Avg Latencies: 00001\n",            /* no max */
                "000000 000001 0002\n# Min Latencies: 1\n# Avg Latencies: 1\n# Max Latencies: 1\n", /* columns */
                "99999999999999999999 1\n# Min Latencies: 1\n# Avg Latencies: 1\n# Max Latencies: 1\n",
                "000100000 1\n# Min Latencies: 1\n# Avg Latencies: 1\n# Max Latencies: 1\n", /* bucket too far */
                "000000 -1\n# Min Latencies: 1\n# Avg Latencies: 1\n# Max Latencies: 1\n",
                "000000 1\n# Min Latencies: 1e999\n# Avg Latencies: 1\n# Max Latencies: 1\n",
                "000000 1\n# Min Latencies: 1\n# Avg Latencies: nan\n# Max Latencies: 1\n",
        };
        static const char *const oslat_bad[] = {
                "", "oslat V 2.40\n", "Core:\t 1\n001 (us):\t x\n", "Core:\t 1 1\n001 (us): 1 1\nMinimum: 1 1\nAverage: 1 1\nMaximum: 1 1\n",
                "Core:\t 1\nCore:\t 1\n", "Core:\t 1\n001 (us):\t 1\nMinimum:\t 1 (us)\n",
        };
        static const char *const timerlat_bad[] = {
                "", "Index Thr-x\n", "Index Thr-000\n0 1 2\nmin: 1\navg: 1\nmax: 1\n", "Index Thr-000\nIndex Thr-000\n",
                "Index Thr-000 Thr-000\n0 1 1\nmin: 1 1\navg: 1 1\nmax: 1 1\n",
        };
        _cleanup_cpuset_ CPUSet one = cpus_of("0");
        bool ok = true;

        for (size_t i = 0; i < ELEMENTSOF(cyclictest_bad); i++) {
                MeasureResult r = {};
                if (cyclictest_parse(cyclictest_bad[i], &one, &r) != -EBADMSG) {
                        printf("# cyclictest case %zu parsed\n", i);
                        ok = false;
                }
                measure_result_done(&r);
        }
        for (size_t i = 0; i < ELEMENTSOF(oslat_bad); i++) {
                MeasureResult r = {};
                if (oslat_parse(oslat_bad[i], &r) != -EBADMSG) {
                        printf("# oslat case %zu parsed\n", i);
                        ok = false;
                }
                measure_result_done(&r);
        }
        for (size_t i = 0; i < ELEMENTSOF(timerlat_bad); i++) {
                MeasureResult r = {};
                if (timerlat_parse(timerlat_bad[i], &r) != -EBADMSG) {
                        printf("# timerlat case %zu parsed\n", i);
                        ok = false;
                }
                measure_result_done(&r);
        }
        CHECK(ok, "truncated, malformed, huge and duplicated reports: -EBADMSG, no crash");
}

static void test_argv(void) {
        _cleanup_cpuset_ CPUSet cpus = cpus_of("2-3");
        char **a = measure_tool_argv(MEASURE_TOOL_CYCLICTEST, &cpus, 5, "/tmp/h");
        bool laptop = false, affinity = false, threads = false;

        for (char **i = a; i && *i; i++) {
                laptop = laptop || streq(*i, "--laptop");
                affinity = affinity || streq(*i, "--affinity=2-3");
                threads = threads || streq(*i, "--threads=2");
        }
        CHECK(a && streq(a[0], "cyclictest") && laptop && affinity && threads,
              "cyclictest: --laptop (no cpu_dma_latency of its own), one thread per CPU pinned to them");
        strv_free_all(a);
        a = measure_tool_argv(MEASURE_TOOL_TIMERLAT, &cpus, 5, NULL);
        CHECK(a && streq(a[0], "rtla") && streq(a[1], "timerlat") && streq(a[2], "hist") && streq(a[3], "--cpus=2-3"),
              "timerlat: rtla timerlat hist --cpus=2-3");
        strv_free_all(a);
        CHECK(measure_tool_from_string("oslat") == MEASURE_TOOL_OSLAT && measure_tool_from_string("rtla") < 0 &&
                      streq(measure_tool_program(MEASURE_TOOL_TIMERLAT), "rtla"),
              "tool names: timerlat is run by rtla");
}

/* ---- Rates between Noise() samples ----------------------------------------------------- */

static NoiseSample sample(uint64_t usec, NoiseSource *sources, size_t n) {
        return (NoiseSample) { .sampled_usec = usec, .sources = sources, .n = n, .allocated = n };
}

static const NoiseViewRow *row_of(const NoiseView *v, uint32_t cpu, const char *source) {
        for (size_t i = 0; i < v->n; i++)
                if (v->rows[i].cpu == cpu && streq(v->rows[i].source, source))
                        return &v->rows[i];
        return NULL;
}

static void test_noise_view(void) {
        NoiseSource a[] = {
                { 2, "timer", "LOC", "Local timer interrupts", 1000, 0 },
                { 2, "irq", "42", "eth0-TxRx-0", 10, 0 },
        };
        NoiseSource b[] = {
                { 2, "timer", "LOC", "Local timer interrupts", 1004, 0 },
                { 2, "irq", "42", "eth0-TxRx-0", 30, 0 },
                { 2, "softirq", "NET_RX", "", 5, 0 },  /* omitted before: was 0 */
                { 3, "timer", "LOC", "Local timer interrupts", 123456789, 0 }, /* CPU just watched */
        };
        NoiseSource c[] = {
                { 2, "timer", "LOC", "Local timer interrupts", 3, 0 }, /* went backwards */
                { 2, "irq", "42", "eth0-TxRx-0", 30, 0 },
                { 2, "softirq", "NET_RX", "", 5, 0 },
                { 3, "timer", "LOC", "Local timer interrupts", 123456799, 0 },
        };
        NoiseSample sa = sample(1000000, a, 2), sb = sample(3000000, b, 4), sc = sample(4000000, c, 4),
                    same = sample(3000000, b, 4);
        _cleanup_(noise_view_done) NoiseView v1 = {}, v2 = {}, v3 = {}, v4 = {};
        const NoiseViewRow *r;
        bool finite = true;

        CHECK(noise_view_compute(NULL, NULL, &sa, &v1) == 0 && v1.n == 2 && v1.elapsed_usec == 0 && !v1.rows[0].is_new &&
                      v1.rows[0].rate == 0,
              "first sample: no rates, nothing new");
        CHECK(noise_view_compute(&sa, &v1, &sb, &v2) == 0 && v2.elapsed_usec == 2000000, "second sample, 2 s later");
        r = row_of(&v2, 2, "42");
        CHECK(r && r->delta == 20 && fabs(r->rate - 10.0) < 1e-9 && !r->is_new, "IRQ 42: 20 in 2 s, 10/s");
        r = row_of(&v2, 2, "NET_RX");
        CHECK(r && r->delta == 5 && r->is_new, "NET_RX, absent before on a watched CPU: counted from 0, new");
        r = row_of(&v2, 3, "LOC");
        CHECK(r && r->delta == 0 && r->rate == 0 && r->is_new, "CPU 3 just watched: starts here, no huge rate");
        CHECK(v2.rows[0].cpu == 2 && streq(v2.rows[0].source, "42") && streq(v2.rows[1].source, "NET_RX"),
              "ranked by CPU, then rate");
        CHECK(noise_view_compute(&sb, &v2, &sc, &v3) == 0, "third sample");
        r = row_of(&v3, 2, "LOC");
        CHECK(r && r->delta == 0 && r->rate == 0, "LOC went backwards (1004 -> 3): a new baseline, rate 0");
        r = row_of(&v3, 3, "LOC");
        CHECK(r && r->delta == 10 && fabs(r->rate - 10.0) < 1e-9 && r->is_new, "CPU 3 LOC: 0/s before, 10/s now: new");
        r = row_of(&v3, 2, "42");
        CHECK(r && r->rate == 0 && !r->is_new, "IRQ 42 quiet now: not new");
        for (size_t i = 0; i < v3.n; i++)
                finite = finite && isfinite(v3.rows[i].rate) && v3.rows[i].rate >= 0 && v3.rows[i].rate < 1e6;
        CHECK(finite, "no negative, infinite or huge rate");
        CHECK(noise_view_compute(&sb, &v2, &same, &v4) == 0 && v4.elapsed_usec == 0 && v4.rows[0].rate == 0,
              "the same cached read twice: no rates, no division by zero");
}

static char *printed(void (*print)(FILE *, const NoiseSample *), const NoiseSample *s) {
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);

        print(f, s);
        fclose(f);
        return buf;
}

static void print_table_legend(FILE *f, const NoiseSample *s) {
        noise_print_table(f, s, NULL, true);
}

static const NoiseReads *print_reads;
static void print_json(FILE *f, const NoiseSample *s) {
        noise_print_json(f, s, print_reads);
}

static void test_noise_print(void) {
        NoiseSource src[] = {
                { 2, "irq", "42", "eth0\n\x1b[2J\"x\"", 10, 1.5 },
                { 3, "timer", "LOC", "Local timer interrupts", 999, 250.0 },
        };
        NoiseSample s = sample(1, src, 2);
        _cleanup_free_ char *table = NULL, *json = NULL;

        s.interval_usec = 10 * USEC_PER_SEC;
        table = printed(print_table_legend, &s);
        json = printed(print_json, &s);
        CHECK(table && strstr(table, "CPU  KIND   SOURCE  DESCRIPTION") == table &&
                      strstr(table, "\n3    timer  LOC") && strstr(table, "LOC") < strstr(table, "42"),
              "noise table: header, ranked by rate (LOC 250/s before IRQ 42 1.5/s)");
        CHECK(table && !strchr(table, '\x1b') && strstr(table, "eth0\\x0a\\x1b[2J"),
              "noise table: control characters of an IRQ name shown as \\xNN, never sent to the terminal");
        CHECK(table && strstr(table, "2 sources on CPUs 2-3; rates over lowlatd's last scan interval, 10.0 s."),
              "noise table: the footer, the CPUs as every list is written (2-3, not 2,3)");
        CHECK(table && strstr(table, "COUNT  RATE/S\n") && strstr(table, "Local timer interrupts    999   250.0\n") &&
                      strstr(table, "   10     1.5\n"),
              "noise table: counts and rates right-aligned, as top shows them");
        CHECK(json && strstr(json, "\"description\":\"eth0\\u000a\\u001b[2J\\\"x\\\"\"") &&
                      strstr(json, "\"rate\":250.000") < strstr(json, "\"rate\":1.500"),
              "noise JSON: escaped strings, ranked by rate");
        CHECK(json && !strstr(json, "\"gate\""), "noise JSON: no gate member from a lowlatd without the property");
        {
                NoiseReads g = { .gate = (char *) "perf: 13 tracepoints", .full_reads = 3, .gated_reads = 40 };
                _cleanup_free_ char *jg = NULL, *tg = NULL;
                char *buf = NULL;
                size_t size = 0;
                FILE *f = open_memstream(&buf, &size);

                print_reads = &g;
                jg = printed(print_json, &s);
                print_reads = NULL;
                noise_reads_print(f, &g);
                fclose(f);
                tg = buf;
                CHECK(jg && strstr(jg, "\"gate\":{\"mode\":\"perf: 13 tracepoints\",\"full_reads\":3,\"gated_reads\":40},"),
                      "noise JSON: the gate, its full and gated reads");
                CHECK(tg && streq(tg, "Gate: perf: 13 tracepoints; 3 scans read /proc/interrupts, 40 did without it.\n"),
                      "noise table: the gate line");
        }
}

/* A report with overflows and no bucket at all (an rtla table whose rows were all beyond
 * the histogram): the fuzzer found the printer indexing the absent histogram. */
static void test_histogram_overflows_only(void) {
        LatencyStats st = { .cpu = 2, .samples = 5, .overflows = 5, .bucket_ns = 1000 };
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);

        latency_print_histogram(f, &st, 10);
        fclose(f);
        CHECK(buf && strstr(buf, "overflows") && strstr(buf, " 5 (beyond the histogram") && !strstr(buf, " us "),
              "histogram: overflows only, no bucket rows, no read of an absent histogram");
        free(buf);
}

/* Whether b's counts never decrease and never exceed samples, its bounds a strictly
 * ascending part of measure_bucket_bounds_ns. */
static bool buckets_sound(const MeasureBuckets *b, uint64_t samples) {
        size_t next = 0;

        for (size_t k = 0; k < b->n; k++) {
                while (next < MEASURE_BUCKETS && measure_bucket_bounds_ns[next] != b->bounds_ns[k])
                        next++;
                if (next == MEASURE_BUCKETS || b->counts[k] > samples || (k > 0 && b->counts[k] < b->counts[k - 1]))
                        return false;
                next++;
        }
        return true;
}

static uint64_t bucket_count(const MeasureBuckets *b, uint64_t bound_ns) {
        for (size_t k = 0; k < b->n; k++)
                if (b->bounds_ns[k] == bound_ns)
                        return b->counts[k];
        return UINT64_MAX;
}

static void test_buckets(void) {
        uint64_t small[3] = { 0, 990, 10 }, reach100[100] = {}, ns[5000] = {};
        LatencyStats s = { .samples = 1000, .max_ns = 2500, .bucket_ns = 1000, .histogram = small, .n_buckets = 3 };
        MeasureBuckets b;

        latency_stats_buckets(&s, &b);
        CHECK(b.n == MEASURE_BUCKETS && buckets_sound(&b, 1000), "1 us buckets, no overflows: every bound, cumulative");
        CHECK(bucket_count(&b, 1000) == 0 && bucket_count(&b, 2000) == 990 && bucket_count(&b, 3000) == 1000 &&
                      bucket_count(&b, 10000000) == 1000,
              "below 1 us: 0; below 2 us: 990; at or above the max (2.5 us): all 1000");
        CHECK(MEASURE_BUCKETS <= 32 && measure_bucket_bounds_ns[0] == 1000, "a few tens of bounds, from 1 us");

        /* A reach of 100 us with 5 samples beyond it, the max at 3 ms: between the two,
         * nobody knows how many lie below a bound. */
        reach100[10] = 900;
        reach100[60] = 95;
        s = (LatencyStats) { .samples = 1000, .max_ns = 3000000, .overflows = 5, .bucket_ns = 1000,
                             .histogram = reach100, .n_buckets = 100 };
        latency_stats_buckets(&s, &b);
        CHECK(buckets_sound(&b, 1000) && b.n == 14, "overflows: the 12 bounds up to the reach and the 2 above the max");
        CHECK(bucket_count(&b, 10000) == 0 && bucket_count(&b, 15000) == 900 && bucket_count(&b, 70000) == 995 &&
                      bucket_count(&b, 100000) == 995,
              "up to the reach: the tool's counts below each bound");
        CHECK(bucket_count(&b, 150000) == UINT64_MAX && bucket_count(&b, 2000000) == UINT64_MAX &&
                      bucket_count(&b, 5000000) == 1000,
              "beyond the reach and below the max: left out; above the max: every sample");

        /* rtla -n: 1 ns buckets, 5 us of them, nothing beyond: every bound is known. */
        ns[1500] = 7;
        ns[4999] = 3;
        s = (LatencyStats) { .samples = 10, .max_ns = 4999, .bucket_ns = 1, .histogram = ns, .n_buckets = 5000 };
        latency_stats_buckets(&s, &b);
        CHECK(b.n == MEASURE_BUCKETS && bucket_count(&b, 1000) == 0 && bucket_count(&b, 2000) == 7 &&
                      bucket_count(&b, 5000) == 10,
              "1 ns buckets: counted to the nanosecond");

        /* A tool's 2 us buckets do not fall on 1, 3, 5 or 7 us. */
        s = (LatencyStats) { .samples = 1000, .max_ns = 9000, .overflows = 0, .bucket_ns = 2000, .histogram = small,
                             .n_buckets = 3 };
        latency_stats_buckets(&s, &b);
        CHECK(bucket_count(&b, 1000) == UINT64_MAX && bucket_count(&b, 3000) == UINT64_MAX &&
                      bucket_count(&b, 5000) == UINT64_MAX && bucket_count(&b, 2000) == 0 &&
                      bucket_count(&b, 10000) == 1000 && buckets_sound(&b, 1000),
              "2 us buckets: the bounds between two of them left out");

        s = (LatencyStats) { .bucket_ns = 1000 };
        latency_stats_buckets(&s, &b);
        CHECK(b.n == MEASURE_BUCKETS && bucket_count(&b, 10000000) == 0, "no samples: every bound, all 0");
        s = (LatencyStats) { .samples = 5, .max_ns = 5000, .overflows = 5, .bucket_ns = 0 };
        latency_stats_buckets(&s, &b);
        CHECK(b.n == 0, "no bucket width: no buckets");
}

static void test_buckets_of_reports(void) {
        _cleanup_free_ char *text = read_data("cyclictest-cpus-0-1.hist");
        _cleanup_(measure_result_done) MeasureResult r = {};
        CPUSet cpus = cpus_of("0-1");
        bool sound = true;

        CHECK(cyclictest_parse(text, &cpus, &r) == 0 && r.n == 2, "cyclictest's captured report parses");
        for (size_t i = 0; i < r.n; i++) {
                MeasureBuckets b;

                latency_stats_buckets(&r.cpus[i], &b);
                sound = sound && b.n > 0 && buckets_sound(&b, r.cpus[i].samples);
                if (r.cpus[i].overflows > 0)
                        sound = sound && bucket_count(&b, 1000000) == UINT64_MAX;
        }
        CHECK(sound, "cyclictest's captured report: sound buckets, none claimed beyond its reach");
        cpuset_done(&cpus);
}

int main(void) {
        test_p99();
        test_cyclictest();
        test_cyclictest_huge();
        test_oslat();
        test_timerlat();
        test_hostile();
        test_argv();
        test_noise_view();
        test_noise_print();
        test_histogram_overflows_only();
        test_buckets();
        test_buckets_of_reports();
        return tap_finish();
}
