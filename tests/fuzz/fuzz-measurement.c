/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fuzzes what lowlatd reads of RecordMeasurement() and RecordMeasurementHistogram()
 * (daemon/bus-measurement.c, compiled into this harness for its readers, with
 * daemon/measurement-histogram.c): a root client's record, which the daemon validates as
 * if it were hostile. The input is decoded into the two calls' arguments, built with
 * sd-bus as the bus would deliver them: a tool name (byte 0 picks one of the three or a
 * bogus one), the start and duration, up to 8 CPUs' figures and up to 4 noise sources
 * (strings the input's, as far as sd-bus takes them), then the histogram call's start
 * (the record's or another) and up to 4 rows of up to 70 bounds and counts. Numbers are
 * read from the input, small ones more often (a length byte says how many bytes).
 * Promises checked: no crash, leak or undefined behaviour; a record is kept only when
 * every CPU's figures hold min <= avg <= max, p99 <= max, overflows <= samples (all zero
 * without samples), no CPU twice, and the names are short UTF-8; histograms are all or
 * nothing, each of a measured CPU, no CPU twice, with ascending bounds and counts that
 * never decrease nor pass the CPU's samples. */
#include <errno.h>
#include <stdbool.h>
#include <sys/socket.h>

#include "fuzz.h"
#include "bus-measurement.c"

typedef struct Reader {
        const uint8_t *p;
        size_t left;
} Reader;

static uint8_t byte(Reader *r) {
        if (r->left == 0)
                return 0;
        r->left--;
        return *r->p++;
}

/* A number of 0 to 8 bytes, little-endian, after a byte that says how many (modulo 9). */
static uint64_t number(Reader *r) {
        unsigned n = byte(r) % 9;
        uint64_t v = 0;

        for (unsigned i = 0; i < n; i++)
                v |= (uint64_t) byte(r) << (8 * i);
        return v;
}

/* A string of up to 255 bytes, cut at a NUL. */
static char *string(Reader *r) {
        size_t n = byte(r);
        char *s;

        n = MIN(n, r->left);
        s = fuzz_strndup(r->p, n);

        r->p += n;
        r->left -= n;
        return s;
}

static sd_bus *bus;

static sd_bus_message *new_call(const char *member) {
        sd_bus_message *m = NULL;

        if (!bus) {
                int fds[2];
                /* Messages are made only on a bus being opened: one half of a socket pair,
                 * its authentication never answered. */
                FUZZ_CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) == 0, "socketpair: %m");
                FUZZ_CHECK(sd_bus_new(&bus) >= 0 && sd_bus_set_fd(bus, fds[0], fds[0]) >= 0 && sd_bus_start(bus) >= 0,
                           "cannot set up a bus");
        }
        FUZZ_CHECK(sd_bus_message_new_method_call(bus, &m, BUS_NAME, BUS_PATH, BUS_INTERFACE, member) >= 0,
                   "sd_bus_message_new_method_call()");
        return m;
}

/* RecordMeasurement()'s arguments from the input; false when sd-bus would not carry them. */
static bool build_record(Reader *r, sd_bus_message *m) {
        static const char *const tools[] = { "timerlat", "cyclictest", "oslat", "rtla" };
        unsigned n_cpus = byte(r) % 9, n_noise = byte(r) % 5;
        int e;

        const char *tool = tools[byte(r) % ELEMENTSOF(tools)];
        uint64_t realtime_usec = number(r), duration_usec = number(r);

        e = sd_bus_message_append(m, "stt", tool, realtime_usec, duration_usec);
        if (e >= 0)
                e = sd_bus_message_open_container(m, 'a', MEASUREMENT_CPU_SIGNATURE);
        for (unsigned i = 0; e >= 0 && i < n_cpus; i++) {
                uint32_t cpu = byte(r);
                uint64_t samples = number(r), min = number(r), avg = number(r), p99 = number(r), max = number(r),
                         overflows = number(r);
                int over = byte(r) & 1;
                e = sd_bus_message_append(m, MEASUREMENT_CPU_SIGNATURE, cpu, samples, min, avg, p99, max, overflows,
                                          over);
        }
        if (e >= 0)
                e = sd_bus_message_close_container(m);
        if (e >= 0)
                e = sd_bus_message_open_container(m, 'a', MEASUREMENT_NOISE_SIGNATURE);
        for (unsigned i = 0; e >= 0 && i < n_noise; i++) {
                _cleanup_free_ char *kind = string(r), *source = string(r), *description = string(r);
                uint32_t cpu = byte(r);
                uint64_t count = number(r);
                e = sd_bus_message_append(m, MEASUREMENT_NOISE_SIGNATURE, cpu, kind, source, description, count);
        }
        if (e >= 0)
                e = sd_bus_message_close_container(m);
        return e >= 0;
}

static bool build_histograms(Reader *r, sd_bus_message *m, uint64_t realtime_usec) {
        unsigned n_rows = byte(r) % 5;
        uint64_t start = byte(r) & 1 ? number(r) : realtime_usec;
        int e;

        e = sd_bus_message_append(m, "t", start);
        if (e >= 0)
                e = sd_bus_message_open_container(m, 'a', MEASUREMENT_HISTOGRAM_CPU_SIGNATURE);
        for (unsigned i = 0; e >= 0 && i < n_rows; i++) {
                uint64_t bounds[70], counts[70];
                size_t n_bounds = byte(r) % 71, n_counts = byte(r) & 1 ? n_bounds : byte(r) % 71;

                for (size_t k = 0; k < n_bounds; k++)
                        bounds[k] = number(r);
                for (size_t k = 0; k < n_counts; k++)
                        counts[k] = number(r);
                e = sd_bus_message_open_container(m, 'r', "uatat");
                uint32_t cpu = byte(r);
                if (e >= 0)
                        e = sd_bus_message_append(m, "u", cpu);
                if (e >= 0)
                        e = sd_bus_message_append_array(m, 't', bounds, n_bounds * sizeof(uint64_t));
                if (e >= 0)
                        e = sd_bus_message_append_array(m, 't', counts, n_counts * sizeof(uint64_t));
                if (e >= 0)
                        e = sd_bus_message_close_container(m);
        }
        if (e >= 0)
                e = sd_bus_message_close_container(m);
        return e >= 0;
}

static void check_record(const MeasurementStore *s) {
        FUZZ_CHECK(s->tool && measure_tool_from_string(s->tool) >= 0 && s->duration_usec > 0, "a record's tool");
        FUZZ_CHECK(s->n_cpus > 0 && s->n_cpus <= MEASUREMENT_MAX_CPUS, "%zu CPUs kept", s->n_cpus);
        for (size_t i = 0; i < s->n_cpus; i++) {
                const MeasuredCPU *c = &s->cpus[i];
                if (c->samples > 0)
                        FUZZ_CHECK(c->min_ns <= c->avg_ns && c->avg_ns <= c->max_ns && c->p99_ns <= c->max_ns &&
                                           c->overflows <= c->samples,
                                   "CPU %u kept with figures out of order", c->cpu);
                else
                        FUZZ_CHECK((c->min_ns | c->avg_ns | c->p99_ns | c->max_ns | c->overflows) == 0,
                                   "CPU %u kept with figures and no samples", c->cpu);
                FUZZ_CHECK(c->p99_over == 0 || c->p99_over == 1, "p99_over %d", c->p99_over);
                for (size_t k = 0; k < i; k++)
                        FUZZ_CHECK(s->cpus[k].cpu != c->cpu, "CPU %u kept twice", c->cpu);
        }
        for (size_t i = 0; i < s->n_noise; i++) {
                const MeasuredNoise *n = &s->noise[i];
                FUZZ_CHECK(text_is_fit(n->kind) && text_is_fit(n->source) && text_is_fit(n->description),
                           "noise source %zu kept with unfit names", i);
        }
}

static void check_histograms(const MeasurementStore *s, const MeasuredHistogram *h, size_t n) {
        FUZZ_CHECK(n <= s->n_cpus, "%zu histograms for %zu CPUs", n, s->n_cpus);
        for (size_t i = 0; i < n; i++) {
                const MeasuredCPU *c = measurement_find_cpu(s, h[i].cpu);
                FUZZ_CHECK(c, "a histogram of CPU %u, not measured", h[i].cpu);
                FUZZ_CHECK(h[i].n >= 1 && h[i].n <= MEASUREMENT_HISTOGRAM_MAX_BOUNDS, "%zu bounds", h[i].n);
                for (size_t k = 0; k < h[i].n; k++) {
                        FUZZ_CHECK(k == 0 || h[i].bounds_ns[k - 1] < h[i].bounds_ns[k], "bounds out of order");
                        FUZZ_CHECK(k == 0 || h[i].counts[k - 1] <= h[i].counts[k], "counts decrease");
                        FUZZ_CHECK(h[i].counts[k] <= c->samples, "a count above CPU %u's samples", c->cpu);
                }
                for (size_t k = 0; k < i; k++)
                        FUZZ_CHECK(h[k].cpu != h[i].cpu, "CPU %u's histogram twice", h[i].cpu);
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *record = NULL, *histogram = NULL;
        _cleanup_(measurement_store_freep) MeasurementStore *s = NULL;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        MeasuredHistogram *h = NULL;
        Reader r = { data, size };
        size_t n = 0;
        int e;

        record = new_call("RecordMeasurement");
        if (!build_record(&r, record))
                return 0;
        FUZZ_CHECK(sd_bus_message_seal(record, 1, 0) >= 0, "seal");
        e = measurement_read(record, &s, &error);
        FUZZ_CHECK(e <= 0, "measurement_read() returned %d", e);
        FUZZ_CHECK((e < 0) == !s, "measurement_read() returned %d and %s store", e, s ? "a" : "no");
        if (e < 0)
                return 0;
        check_record(s);

        histogram = new_call("RecordMeasurementHistogram");
        if (!build_histograms(&r, histogram, s->realtime_usec))
                return 0;
        FUZZ_CHECK(sd_bus_message_seal(histogram, 2, 0) >= 0, "seal");
        e = measurement_read_histograms(histogram, s, &h, &n, &error);
        FUZZ_CHECK(e <= 0, "measurement_read_histograms() returned %d", e);
        if (e == 0) {
                check_histograms(s, h, n);
                histograms_free(h, n);
        }
        return 0;
}
