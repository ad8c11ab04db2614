/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lowlatctl measure's pure half: the tools' command lines, and their reports (cyclictest's
 * histogram file, oslat's summary, rtla timerlat hist's table) parsed into per-CPU figures
 * with p99 taken from the histogram. No I/O: unit-tested on captured reports. */
#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "basic/array.h"
#include "basic/macro.h"
#include "measure.h"
#include "basic/util.h"

/* A hostile or broken report cannot make us allocate more than this per CPU. */
#define MAX_BUCKETS 100000U
#define MAX_COLUMNS 8192U

void measure_result_done(MeasureResult *r) {
        for (size_t i = 0; r->cpus && i < r->n; i++)
                free(r->cpus[i].histogram);
        r->cpus = mfree(r->cpus);
        r->n = 0;
}

char **strv_free_all(char **l) {
        for (char **i = l; i && *i; i++)
                free(*i);
        free(l);
        return NULL;
}

char **measure_tool_argv(MeasureTool tool, const CPUSet *cpus, unsigned duration_sec, const char *histfile) {
        _cleanup_free_ char *list = cpuset_format_list(cpus);
        char **argv = calloc(16, sizeof(char *));
        size_t n = 0;
        bool ok = true;

        if (!list || !argv) {
                free(argv);
                return NULL;
        }
#define ARG(...)                                                   \
        do {                                                       \
                if (ok && !(argv[n++] = strdup_printf(__VA_ARGS__))) \
                        ok = false;                                \
        } while (0)
        switch (tool) {
        case MEASURE_TOOL_TIMERLAT:
                ARG("rtla");
                ARG("timerlat");
                ARG("hist");
                ARG("--cpus=%s", list);
                ARG("--duration=%u", duration_sec); /* seconds, rtla's default unit */
                ARG("--priority=f:%u", MEASURE_PRIORITY);
                ARG("--entries=%u", MEASURE_HISTOGRAM_USEC);
                ARG("--no-irq"); /* the thread's latency is what an application sees */
                break;
        case MEASURE_TOOL_CYCLICTEST:
                ARG("cyclictest");
                ARG("--quiet");
                ARG("--mlockall");
                ARG("--laptop");
                ARG("--priority=%u", MEASURE_PRIORITY);
                ARG("--interval=%u", MEASURE_INTERVAL_USEC);
                ARG("--threads=%u", cpuset_count(cpus));
                ARG("--affinity=%s", list);
                ARG("--histogram=%u", MEASURE_HISTOGRAM_USEC);
                ARG("--histfile=%s", histfile);
                ARG("--duration=%u", duration_sec);
                break;
        case MEASURE_TOOL_OSLAT:
                ARG("oslat");
                ARG("--cpu-list=%s", list);
                ARG("--duration=%u", duration_sec);
                ARG("--quiet");
                break;
        default:
                ok = false;
        }
#undef ARG
        if (!ok)
                return strv_free_all(argv);
        return argv;
}

/* Counts from a report are the tool's, or anything: sums saturate rather than wrap. */
size_t histogram_p99(const uint64_t *buckets, size_t n_buckets, uint64_t overflows, bool *ret_over) {
        uint64_t total = overflows, seen = 0, target;

        for (size_t i = 0; i < n_buckets; i++)
                total = add_saturating(total, buckets[i]);
        /* ceil(0.99 × total) without floating point: exact for any count. */
        target = total / 100 * 99 + ((total % 100) * 99 + 99) / 100;
        *ret_over = false;
        if (total == 0)
                return 0;
        for (size_t i = 0; i < n_buckets; i++) {
                seen = add_saturating(seen, buckets[i]);
                if (seen >= target)
                        return i;
        }
        *ret_over = true;
        return n_buckets;
}

bool latency_max_is_high(const LatencyStats *s) {
        return s->samples > 0 && s->max_ns > 2 * s->p99_ns && s->max_ns - s->p99_ns >= 10 * NSEC_PER_USEC;
}

/* ---- Reading the reports ------------------------------------------------------------- */

static const char *skip_blanks(const char *p) {
        while (*p == ' ' || *p == '\t')
                p++;
        return p;
}

/* The next whitespace-separated token of *p as an unsigned decimal; -EBADMSG at anything
 * else, -ENODATA at the end of the line. */
static int next_u64(const char **p, uint64_t *ret) {
        const char *s = skip_blanks(*p);
        char *end;

        if (*s == '\0' || *s == '\n')
                return -ENODATA;
        if (!isdigit((unsigned char) *s))
                return -EBADMSG;
        errno = 0;
        *ret = strtoull(s, &end, 10);
        if (errno != 0 || (*end && !isspace((unsigned char) *end)))
                return -EBADMSG;
        *p = end;
        return 0;
}

/* A decimal that may have a fraction ("1.053"), or "-" (no value: 0). */
static int next_double(const char **p, double *ret) {
        const char *s = skip_blanks(*p);
        char *end;

        if (*s == '\0' || *s == '\n')
                return -ENODATA;
        if (*s == '-' && (s[1] == '\0' || isspace((unsigned char) s[1]))) {
                *ret = 0;
                *p = s + 1;
                return 0;
        }
        if (!isdigit((unsigned char) *s))
                return -EBADMSG;
        errno = 0;
        *ret = strtod(s, &end);
        if (errno != 0 || !isfinite(*ret) || (*end && !isspace((unsigned char) *end)))
                return -EBADMSG;
        *p = end;
        return 0;
}

/* Exactly n numbers (the rest of the line may be text when trailing_text). */
static int read_row(const char *p, double *values, size_t n, bool trailing_text) {
        for (size_t i = 0; i < n; i++)
                if (next_double(&p, &values[i]) < 0)
                        return -EBADMSG;
        p = skip_blanks(p);
        if (*p && *p != '\n' && !trailing_text)
                return -EBADMSG;
        return 0;
}

static int read_u64_row(const char *p, uint64_t *values, size_t n, bool trailing_text) {
        for (size_t i = 0; i < n; i++) {
                int r = next_u64(&p, &values[i]);
                if (r < 0)
                        return -EBADMSG;
        }
        p = skip_blanks(p);
        if (*p && *p != '\n' && !trailing_text)
                return -EBADMSG;
        return 0;
}

static int histogram_set(LatencyStats *s, uint64_t bucket, uint64_t count) {
        if (bucket >= MAX_BUCKETS)
                return -EBADMSG;
        /* Empty buckets count too: they say how far the histogram reaches, which is where
         * a p99 among the overflows starts. */
        if (bucket >= s->n_buckets) {
                uint64_t *h = reallocarray(s->histogram, bucket + 1, sizeof(uint64_t));
                if (!h)
                        return -ENOMEM;
                memset(h + s->n_buckets, 0, (bucket + 1 - s->n_buckets) * sizeof(uint64_t));
                s->histogram = h;
                s->n_buckets = bucket + 1;
        }
        s->histogram[bucket] = add_saturating(s->histogram[bucket], count);
        return 0;
}

/* Samples and p99 from the histogram; the tools' own min, avg and max stay. */
static void stats_finish(LatencyStats *s, uint64_t reported_samples) {
        uint64_t sum = s->overflows;
        size_t p99;

        for (size_t i = 0; i < s->n_buckets; i++)
                sum = add_saturating(sum, s->histogram[i]);
        s->samples = MAX(sum, reported_samples);
        p99 = histogram_p99(s->histogram, s->n_buckets, s->overflows, &s->p99_over);
        s->p99_ns = (uint64_t) p99 * s->bucket_ns;
        /* A histogram bucket is a floor: the p99 can never be above the max. */
        if (s->samples > 0 && s->p99_ns > s->max_ns)
                s->p99_ns = s->max_ns;
}

static int stats_compare(const void *x, const void *y) {
        const LatencyStats *a = x, *b = y;
        return a->cpu < b->cpu ? -1 : a->cpu > b->cpu;
}

/* Leading blanks skipped; the line's label up to its colon ("Min Latencies") compared. */
static const char *after_label(const char *line, const char *label) {
        size_t n = strlen(label);

        line = skip_blanks(line);
        if (strncmp(line, label, n) != 0)
                return NULL;
        return line + n;
}

typedef int (*LineParser)(const char *line, void *state);

/* Calls parse on each line of text (a copy, NUL-terminated per line). */
static int for_each_line(const char *text, LineParser parse, void *state) {
        const char *p = text;

        while (*p) {
                size_t len = strcspn(p, "\n");
                _cleanup_free_ char *line = strndup(p, len);
                int r;

                if (!line)
                        return -ENOMEM;
                r = parse(line, state);
                if (r < 0)
                        return r;
                p += len;
                if (*p == '\n')
                        p++;
        }
        return 0;
}

typedef struct ReportState {
        LatencyStats *stats;
        size_t n;
        uint64_t *reported_samples;
        bool have_min, have_avg, have_max, have_rows;
        double unit_ns;
        uint64_t measured_usec; /* oslat's "Duration:" */
        /* timerlat: the index of each column's CPU in stats, -1 for a column not kept. */
        ssize_t *columns;
        size_t n_columns, allocated_columns;
} ReportState;

static void report_state_done(ReportState *s) {
        for (size_t i = 0; s->stats && i < s->n; i++)
                free(s->stats[i].histogram);
        s->stats = mfree(s->stats);
        s->reported_samples = mfree(s->reported_samples);
        s->columns = mfree(s->columns);
}

static int report_state_alloc(ReportState *s, size_t n, double unit_ns) {
        if (n == 0 || n > MAX_COLUMNS)
                return -EBADMSG;
        s->stats = calloc(n, sizeof(LatencyStats));
        s->reported_samples = calloc(n, sizeof(uint64_t));
        if (!s->stats || !s->reported_samples)
                return -ENOMEM;
        s->n = n;
        s->unit_ns = unit_ns;
        for (size_t i = 0; i < n; i++)
                s->stats[i].bucket_ns = (uint64_t) unit_ns;
        return 0;
}

/* v (never negative: the readers take digits only) rounded to the nearest integer. Not
 * llround(): its long stops at 9.2e18, and beyond it the result is unspecified (x86 gives
 * LONG_MIN, a count or latency that came out as 2^63). */
static uint64_t round_u64(double v) {
        if (!(v > 0))
                return 0;
        if (v >= 18446744073709551616.0) /* 2^64 */
                return UINT64_MAX;
        return (uint64_t) (v + 0.5);
}

static uint64_t to_ns(double v, double unit_ns) {
        double ns = v * unit_ns;
        return ns >= 1.8e19 ? UINT64_MAX : round_u64(ns);
}

static int report_finish(ReportState *s, MeasureTool tool, MeasureResult *ret) {
        if (!s->have_min || !s->have_avg || !s->have_max || !s->have_rows)
                return -EBADMSG;
        for (size_t i = 0; i < s->n; i++)
                stats_finish(&s->stats[i], s->reported_samples[i]);
        qsort(s->stats, s->n, sizeof(LatencyStats), stats_compare);
        for (size_t i = 1; i < s->n; i++)
                if (s->stats[i].cpu == s->stats[i - 1].cpu)
                        return -EBADMSG;
        *ret = (MeasureResult) { .tool = tool, .n = s->n, .measured_usec = s->measured_usec };
        /* cyclictest and timerlat sample once an interval: the most samples a CPU has is
         * how long they measured. */
        for (size_t i = 0; tool != MEASURE_TOOL_OSLAT && i < s->n; i++)
                ret->measured_usec = MAX(ret->measured_usec, s->stats[i].samples * MEASURE_INTERVAL_USEC);
        ret->cpus = TAKE_PTR(s->stats);
        s->n = 0;
        return 0;
}

/* A count from a report, where it is read as a decimal like every other value. */
static uint64_t to_count(double v) {
        return round_u64(MIN(v, 1.8e19));
}

/* Stores a row of n values (one per CPU) into the stats' field at offset. */
static int store_row(ReportState *s, const char *p, size_t offset, bool as_ns, bool trailing_text) {
        _cleanup_free_ double *v = calloc(s->n, sizeof(double));

        if (!v)
                return -ENOMEM;
        if (read_row(p, v, s->n, trailing_text) < 0)
                return -EBADMSG;
        for (size_t i = 0; i < s->n; i++) {
                uint64_t *field = (uint64_t *) ((uint8_t *) &s->stats[i] + offset);
                *field = as_ns ? to_ns(v[i], s->unit_ns) : to_count(v[i]);
        }
        return 0;
}

/* One histogram row of cyclictest or oslat: the count of bucket for each CPU, from p
 * (trailing_text: oslat's last row ends in "(including overflows)"). */
static int store_histogram_row(ReportState *s, uint64_t bucket, const char *p, bool trailing_text) {
        _cleanup_free_ uint64_t *v = calloc(s->n, sizeof(uint64_t));
        int r;

        if (!v)
                return -ENOMEM;
        if (read_u64_row(p, v, s->n, trailing_text) < 0)
                return -EBADMSG;
        for (size_t i = 0; i < s->n; i++) {
                r = histogram_set(&s->stats[i], bucket, v[i]);
                if (r < 0)
                        return r;
        }
        s->have_rows = true;
        return 0;
}

/* What cyclictest and oslat call their per-CPU minimum, average and maximum lines. */
typedef struct MinAvgMaxLabels {
        const char *min, *avg, *max;
} MinAvgMaxLabels;

/* Stores line when it is the minimum, average or maximum line (in µs): returns 1 then,
 * 0 when it is none of them, or a negative errno. */
static int store_min_avg_max(ReportState *s, const char *line, const MinAvgMaxLabels *labels, bool trailing_text) {
        const struct {
                const char *label;
                size_t offset;
                bool *seen;
        } lines[] = {
                { labels->min, offsetof(LatencyStats, min_ns), &s->have_min },
                { labels->avg, offsetof(LatencyStats, avg_ns), &s->have_avg },
                { labels->max, offsetof(LatencyStats, max_ns), &s->have_max },
        };

        for (size_t i = 0; i < ELEMENTSOF(lines); i++) {
                const char *p = after_label(line, lines[i].label);
                int r;

                if (!p)
                        continue;
                *lines[i].seen = true;
                r = store_row(s, p, lines[i].offset, true, trailing_text);
                return r < 0 ? r : 1;
        }
        return 0;
}

/* cyclictest's "# Total:" counts the histogram's samples only; cyclictest_parse() adds
 * the overflows on top. */
static int cyclictest_store_total(ReportState *s, const char *p) {
        _cleanup_free_ uint64_t *v = calloc(s->n, sizeof(uint64_t));

        if (!v)
                return -ENOMEM;
        if (read_u64_row(p, v, s->n, false) < 0)
                return -EBADMSG;
        memcpy(s->reported_samples, v, s->n * sizeof(uint64_t));
        return 0;
}

/* cyclictest --histogram --histfile: "NNNNNN count count ..." per µs, one column per
 * thread, then "# Total:", "# Min Latencies:", "# Avg Latencies:", "# Max Latencies:",
 * "# Histogram Overflows:" with one value per thread. */
static int cyclictest_line(const char *line, void *userdata) {
        static const MinAvgMaxLabels labels = { "# Min Latencies:", "# Avg Latencies:", "# Max Latencies:" };
        ReportState *s = userdata;
        const char *p;
        uint64_t bucket;
        int r;

        r = store_min_avg_max(s, line, &labels, false);
        if (r != 0)
                return r < 0 ? r : 0;
        if ((p = after_label(line, "# Histogram Overflows:")))
                return store_row(s, p, offsetof(LatencyStats, overflows), false, false);
        if ((p = after_label(line, "# Total:")))
                return cyclictest_store_total(s, p);
        p = skip_blanks(line);
        if (*p == '#' || *p == '\0')
                return 0;
        if (next_u64(&p, &bucket) < 0)
                return -EBADMSG;
        return store_histogram_row(s, bucket, p, false);
}

int cyclictest_parse(const char *text, const CPUSet *cpus, MeasureResult *ret) {
        _cleanup_(report_state_done) ReportState s = {};
        size_t i = 0;
        int r;

        r = report_state_alloc(&s, cpuset_count(cpus), 1000);
        if (r < 0)
                return r;
        /* Threads are pinned round-robin over the affinity set in ascending CPU order. */
        CPUSET_FOREACH(cpu, cpus)
                s.stats[i++].cpu = (uint32_t) cpu;
        r = for_each_line(text, cyclictest_line, &s);
        if (r < 0)
                return r;
        for (i = 0; i < s.n; i++)
                s.reported_samples[i] = add_saturating(s.reported_samples[i], s.stats[i].overflows);
        return report_finish(&s, MEASURE_TOOL_CYCLICTEST, ret);
}

/* oslat's "Core:" line: the CPUs, one column each, which sizes the report. */
static int oslat_read_cores(ReportState *s, const char *p) {
        const char *q = p;
        uint64_t cpu;
        size_t n = 0;
        int r;

        if (s->stats)
                return -EBADMSG;
        while ((r = next_u64(&q, &cpu)) == 0)
                n++;
        if (r != -ENODATA)
                return -EBADMSG;
        r = report_state_alloc(s, n, 1000);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                (void) next_u64(&p, &cpu);
                if (cpu > UINT32_MAX)
                        return -EBADMSG;
                s->stats[i].cpu = (uint32_t) cpu;
        }
        return 0;
}

/* oslat: "Core:" names the CPUs, "NNN (us): count count ..." the buckets (the last one
 * "(including overflows)"), then "Minimum:", "Average:", "Maximum:" in µs. */
static int oslat_line(const char *line, void *userdata) {
        static const MinAvgMaxLabels labels = { "Minimum:", "Average:", "Maximum:" };
        ReportState *s = userdata;
        const char *p;
        uint64_t bucket;
        int r;

        if ((p = after_label(line, "Core:")))
                return oslat_read_cores(s, p);
        if (!s->stats)
                return 0; /* the banner */
        r = store_min_avg_max(s, line, &labels, true);
        if (r != 0)
                return r < 0 ? r : 0;
        if ((p = after_label(line, "Duration:"))) {
                double sec;
                /* Seconds; "0.996 (sec)". */
                if (next_double(&p, &sec) < 0 || sec > 1e9)
                        return -EBADMSG;
                s->measured_usec = round_u64(sec * 1e6);
                return 0;
        }
        p = skip_blanks(line);
        if (!isdigit((unsigned char) *p))
                return 0; /* Counter Freq, Max-Min */
        if (next_u64(&p, &bucket) < 0)
                return -EBADMSG;
        p = after_label(p, "(us):");
        if (!p)
                return -EBADMSG;
        return store_histogram_row(s, bucket, p, true);
}

int oslat_parse(const char *text, MeasureResult *ret) {
        _cleanup_(report_state_done) ReportState s = {};
        int r;

        r = for_each_line(text, oslat_line, &s);
        if (r < 0)
                return r;
        if (!s.stats)
                return -EBADMSG;
        return report_finish(&s, MEASURE_TOOL_OSLAT, ret);
}

/* rtla's header "Index IRQ-001 Thr-001 IRQ-002 Thr-002 ...", first pass: which columns
 * are kept (the Thr- ones, in s->columns) and how many. */
static int timerlat_read_columns(ReportState *s, const char *header, size_t *ret_n_threads) {
        _cleanup_free_ char *copy = strdup(header);
        size_t n_threads = 0;
        char *save = NULL;

        if (!copy)
                return -ENOMEM;
        for (char *t = strtok_r(copy, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
                if (s->n_columns >= MAX_COLUMNS)
                        return -EBADMSG;
                if (array_grow(&s->columns, &s->allocated_columns, s->n_columns + 1) < 0)
                        return -ENOMEM;
                s->columns[s->n_columns++] = strncmp(t, "Thr-", 4) == 0 ? (ssize_t) n_threads++ : -1;
        }
        *ret_n_threads = n_threads;
        return 0;
}

/* The header's second pass, once the stats are there: the CPU of each kept column
 * ("Thr-003" is CPU 3). */
static int timerlat_read_column_cpus(ReportState *s, const char *header) {
        _cleanup_free_ char *copy = strdup(header);
        char *save = NULL;
        size_t k = 0;

        if (!copy)
                return -ENOMEM;
        for (char *t = strtok_r(copy, " \t", &save); t; t = strtok_r(NULL, " \t", &save), k++) {
                uint32_t cpu;
                const char *num = t + 4;

                if (s->columns[k] < 0)
                        continue;
                while (*num == '0' && num[1])
                        num++;
                if (parse_uint32(num, &cpu) < 0)
                        return -EBADMSG;
                s->stats[s->columns[k]].cpu = cpu;
        }
        return 0;
}

static int timerlat_read_header(ReportState *s, const char *header) {
        size_t n_threads;
        int r;

        if (s->columns)
                return -EBADMSG;
        r = timerlat_read_columns(s, header, &n_threads);
        if (r < 0)
                return r;
        r = report_state_alloc(s, n_threads, s->unit_ns);
        if (r < 0)
                return r;
        return timerlat_read_column_cpus(s, header);
}

/* A line of rtla's table from p on: one value for each column, kept or not. */
static int timerlat_read_values(const ReportState *s, const char *p, double **ret) {
        _cleanup_free_ double *v = calloc(s->n_columns, sizeof(double));

        if (!v)
                return -ENOMEM;
        if (read_row(p, v, s->n_columns, false) < 0)
                return -EBADMSG;
        *ret = TAKE_PTR(v);
        return 0;
}

typedef struct TimerlatSummary {
        const char *label;
        size_t offset; /* the LatencyStats field; "count:" goes to reported_samples instead */
        bool as_ns;
} TimerlatSummary;

static const TimerlatSummary timerlat_summary[] = {
        { "over:", offsetof(LatencyStats, overflows), false },
        { "count:", 0, false },
        { "min:", offsetof(LatencyStats, min_ns), true },
        { "avg:", offsetof(LatencyStats, avg_ns), true },
        { "max:", offsetof(LatencyStats, max_ns), true },
};

static int timerlat_summary_row(ReportState *s, const TimerlatSummary *summary, const char *p) {
        _cleanup_free_ double *v = NULL;
        bool is_count = streq(summary->label, "count:");
        int r;

        r = timerlat_read_values(s, p, &v);
        if (r < 0)
                return r;
        for (size_t k = 0; k < s->n_columns; k++) {
                ssize_t i = s->columns[k];
                uint64_t *field;

                if (i < 0)
                        continue;
                if (is_count) {
                        s->reported_samples[i] = to_count(v[k]);
                        continue;
                }
                field = (uint64_t *) ((uint8_t *) &s->stats[i] + summary->offset);
                *field = summary->as_ns ? to_ns(v[k], s->unit_ns) : to_count(v[k]);
        }
        /* report_finish() wants min, avg and max; over and count may be missing. */
        if (streq(summary->label, "min:"))
                s->have_min = true;
        else if (streq(summary->label, "avg:"))
                s->have_avg = true;
        else if (streq(summary->label, "max:"))
                s->have_max = true;
        return 0;
}

/* "N count ...": bucket N's count in each column. */
static int timerlat_histogram_row(ReportState *s, const char *line) {
        _cleanup_free_ double *v = NULL;
        const char *p = skip_blanks(line);
        uint64_t bucket;
        int r;

        if (*p == '#' || *p == '\0')
                return 0;
        if (next_u64(&p, &bucket) < 0)
                return -EBADMSG;
        r = timerlat_read_values(s, p, &v);
        if (r < 0)
                return r;
        for (size_t k = 0; k < s->n_columns; k++) {
                if (s->columns[k] < 0)
                        continue;
                r = histogram_set(&s->stats[s->columns[k]], bucket, to_count(v[k]));
                if (r < 0)
                        return r;
        }
        s->have_rows = true;
        return 0;
}

/* rtla timerlat hist: "# Time unit is microseconds (us)" (or nanoseconds with -n), a
 * header "Index IRQ-001 Thr-001 ...", rows "N count ...", then "over:", "count:", "min:",
 * "avg:", "max:" per column. The Thr- columns (the thread's wake-up latency) are kept. */
static int timerlat_line(const char *line, void *userdata) {
        ReportState *s = userdata;
        const char *p;

        if (after_label(line, "# Time unit is nanoseconds")) {
                s->unit_ns = 1;
                return 0;
        }
        if ((p = after_label(line, "Index")))
                return timerlat_read_header(s, p);
        if (!s->columns)
                return 0; /* the banner */
        for (size_t i = 0; i < ELEMENTSOF(timerlat_summary); i++)
                if ((p = after_label(line, timerlat_summary[i].label)))
                        return timerlat_summary_row(s, &timerlat_summary[i], p);
        return timerlat_histogram_row(s, line);
}

int timerlat_parse(const char *text, MeasureResult *ret) {
        _cleanup_(report_state_done) ReportState s = { .unit_ns = 1000 };
        int r;

        r = for_each_line(text, timerlat_line, &s);
        if (r < 0)
                return r;
        if (!s.stats)
                return -EBADMSG;
        /* A quiet CPU may have no rows (rtla leaves out all-zero rows): still a report. */
        s.have_rows = true;
        return report_finish(&s, MEASURE_TOOL_TIMERLAT, ret);
}

/* ---- The histogram for people ---------------------------------------------------------- */

void latency_print_histogram(FILE *f, const LatencyStats *s, size_t rows) {
        uint64_t peak = 0;
        size_t first = SIZE_MAX, last = 0, per_row;

        for (size_t i = 0; i < s->n_buckets; i++)
                if (s->histogram[i] > 0) {
                        first = MIN(first, i);
                        last = i;
                }
        if (first == SIZE_MAX && s->overflows == 0) {
                fputs("    (no samples)\n", f);
                return;
        }
        if (first == SIZE_MAX)
                first = last = 0;
        rows = MAX(rows, 1U);
        per_row = (last - first) / rows + 1;
        /* Overflows alone (a report with no buckets) have no bucket rows to print. */
        for (size_t b = first; b <= last && s->n_buckets > 0; b += per_row) {
                uint64_t c = 0;
                for (size_t i = b; i < MIN(b + per_row, last + 1); i++)
                        c = add_saturating(c, s->histogram[i]);
                peak = MAX(peak, c);
        }
        peak = MAX(peak, s->overflows);
        for (size_t b = first; b <= last && s->n_buckets > 0; b += per_row) {
                uint64_t c = 0, from = b * s->bucket_ns / 1000, to = (MIN(b + per_row, last + 1)) * s->bucket_ns / 1000;
                char range[48];
                size_t bar;

                for (size_t i = b; i < MIN(b + per_row, last + 1); i++)
                        c = add_saturating(c, s->histogram[i]);
                bar = peak ? (size_t) ceil(40.0 * (double) c / (double) peak) : 0;
                snprintf(range, sizeof(range), "%" PRIu64 "-%" PRIu64, from, to);
                fprintf(f, "    %13s us %10" PRIu64 " ", range, c);
                for (size_t i = 0; i < bar; i++)
                        fputc('#', f);
                fputc('\n', f);
        }
        if (s->overflows > 0)
                fprintf(f, "    %16s %10" PRIu64 " (beyond the histogram's %u us)\n", "overflows", s->overflows,
                        MEASURE_HISTOGRAM_USEC);
}
