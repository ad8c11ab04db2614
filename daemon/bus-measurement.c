/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* RecordMeasurement() and LastMeasurement: lowlatctl measure runs the tool in the caller's
 * session (not confined by lowlatd.service's sandbox or CPU affinity) and hands the result
 * here, where status, the bus and monitoring find it. The record is validated as if it
 * were hostile: it comes from a root client, but a bad one must not make lowlatd show
 * nonsense or grow without bound. */
#include <stdint.h>
#include <string.h>

#include "bus-measurement.h"
#include "bus-names.h"
#include "log/log.h"
#include "measure-tool.h"
#include "measurement-histogram.h"
#include "basic/array.h"
#include "basic/util.h"

#define MEASUREMENT_MAX_CPUS 8192U
#define MEASUREMENT_MAX_NOISE 65536U
#define MEASUREMENT_MAX_STRING 256U

typedef struct MeasuredCPU {
        uint32_t cpu;
        uint64_t samples, min_ns, avg_ns, p99_ns, max_ns, overflows;
        int p99_over; /* 'b' is an int on the bus */
} MeasuredCPU;

typedef struct MeasuredNoise {
        uint32_t cpu;
        char *kind, *source, *description;
        uint64_t count;
} MeasuredNoise;

struct MeasurementStore {
        char *tool; /* NULL: nothing measured since lowlatd started */
        uint64_t realtime_usec, duration_usec;
        MeasuredCPU *cpus;
        size_t n_cpus;
        MeasuredNoise *noise;
        size_t n_noise;
        /* RecordMeasurementHistogram()'s, for this measurement only: a new
         * RecordMeasurement() drops them, so that no histogram outlives its run. */
        MeasuredHistogram *histograms;
        size_t n_histograms;
};

static void histograms_free(MeasuredHistogram *h, size_t n) {
        for (size_t i = 0; i < n; i++)
                measured_histogram_done(&h[i]);
        free(h);
}

static void measurement_clear(MeasurementStore *s) {
        for (size_t i = 0; i < s->n_noise; i++) {
                free(s->noise[i].kind);
                free(s->noise[i].source);
                free(s->noise[i].description);
        }
        s->noise = mfree(s->noise);
        histograms_free(s->histograms, s->n_histograms);
        s->histograms = NULL;
        s->n_histograms = 0;
        s->cpus = mfree(s->cpus);
        s->tool = mfree(s->tool);
        s->n_cpus = s->n_noise = 0;
        s->realtime_usec = s->duration_usec = 0;
}

MeasurementStore *measurement_store_free(MeasurementStore *s) {
        if (!s)
                return NULL;
        measurement_clear(s);
        return mfree(s);
}

int measurement_store_new(MeasurementStore **ret) {
        MeasurementStore *s = calloc(1, sizeof(MeasurementStore));
        if (!s)
                return -ENOMEM;
        *ret = s;
        return 0;
}

static bool text_is_fit(const char *s) {
        return strlen(s) <= MEASUREMENT_MAX_STRING && utf8_is_valid(s);
}

/* RecordMeasurement()'s per-CPU figures into new. -errno, with error set for what the
 * caller got wrong. */
static int measurement_read_cpus(sd_bus_message *message, MeasurementStore *new, sd_bus_error *error) {
        size_t allocated = 0;
        int r;

        r = sd_bus_message_enter_container(message, 'a', MEASUREMENT_CPU_SIGNATURE);
        if (r < 0)
                return r;
        for (;;) {
                MeasuredCPU c;

                r = sd_bus_message_read(message, MEASUREMENT_CPU_SIGNATURE, &c.cpu, &c.samples, &c.min_ns, &c.avg_ns,
                                        &c.p99_ns, &c.max_ns, &c.overflows, &c.p99_over);
                if (r < 0)
                        return r;
                if (r == 0)
                        break;
                if (new->n_cpus >= MEASUREMENT_MAX_CPUS)
                        return sd_bus_error_set(error, SD_BUS_ERROR_INVALID_ARGS, "Too many CPUs");
                /* The order every report has; anything else is a confused client. */
                if (c.samples > 0 && (c.min_ns > c.avg_ns || c.avg_ns > c.max_ns || c.p99_ns > c.max_ns ||
                                      c.overflows > c.samples))
                        return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                                 "CPU %u: min <= avg <= max and p99 <= max do not hold", c.cpu);
                if (c.samples == 0 && (c.min_ns | c.avg_ns | c.p99_ns | c.max_ns | c.overflows) != 0)
                        return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                                 "CPU %u: figures without samples", c.cpu);
                for (size_t i = 0; i < new->n_cpus; i++)
                        if (new->cpus[i].cpu == c.cpu)
                                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS, "CPU %u given twice",
                                                         c.cpu);
                if (array_grow(&new->cpus, &allocated, new->n_cpus + 1) < 0)
                        return -ENOMEM;
                c.p99_over = !!c.p99_over;
                new->cpus[new->n_cpus++] = c;
        }
        return sd_bus_message_exit_container(message);
}

/* RecordMeasurement()'s noise sources into new, their names copied. -errno, with error set
 * for what the caller got wrong. */
static int measurement_read_noise(sd_bus_message *message, MeasurementStore *new, sd_bus_error *error) {
        size_t allocated = 0;
        int r;

        r = sd_bus_message_enter_container(message, 'a', MEASUREMENT_NOISE_SIGNATURE);
        if (r < 0)
                return r;
        for (;;) {
                const char *kind, *source, *description;
                MeasuredNoise *n;
                uint32_t cpu;
                uint64_t count;

                r = sd_bus_message_read(message, MEASUREMENT_NOISE_SIGNATURE, &cpu, &kind, &source, &description,
                                        &count);
                if (r < 0)
                        return r;
                if (r == 0)
                        break;
                if (new->n_noise >= MEASUREMENT_MAX_NOISE)
                        return sd_bus_error_set(error, SD_BUS_ERROR_INVALID_ARGS, "Too many noise sources");
                if (!text_is_fit(kind) || !text_is_fit(source) || !text_is_fit(description))
                        return sd_bus_error_set(error, SD_BUS_ERROR_INVALID_ARGS, "A noise source name is too long");
                if (array_grow(&new->noise, &allocated, new->n_noise + 1) < 0)
                        return -ENOMEM;
                n = &new->noise[new->n_noise];
                *n = (MeasuredNoise) { .cpu = cpu, .count = count };
                new->n_noise++;
                n->kind = strdup(kind);
                n->source = strdup(source);
                n->description = strdup(description);
                if (!n->kind || !n->source || !n->description)
                        return -ENOMEM;
        }
        return sd_bus_message_exit_container(message);
}

/* RecordMeasurement()'s arguments, read and checked into a store of their own. -errno,
 * with error set for what the caller got wrong. */
static int measurement_read(sd_bus_message *message, MeasurementStore **ret, sd_bus_error *error) {
        _cleanup_(measurement_store_freep) MeasurementStore *new = NULL;
        const char *tool;
        int r;

        r = measurement_store_new(&new);
        if (r < 0)
                return r;
        r = sd_bus_message_read(message, "stt", &tool, &new->realtime_usec, &new->duration_usec);
        if (r < 0)
                return r;
        if (measure_tool_from_string(tool) < 0)
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS, "Unknown measuring tool '%s'", tool);
        if (new->duration_usec == 0)
                return sd_bus_error_set(error, SD_BUS_ERROR_INVALID_ARGS, "A measurement takes some time");
        new->tool = strdup(tool);
        if (!new->tool)
                return -ENOMEM;

        r = measurement_read_cpus(message, new, error);
        if (r < 0)
                return r;
        if (new->n_cpus == 0)
                return sd_bus_error_set(error, SD_BUS_ERROR_INVALID_ARGS, "No CPU measured");

        r = measurement_read_noise(message, new, error);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(new);
        return 0;
}

static int method_record_measurement(sd_bus_message *message, void *userdata, sd_bus_error *error) {
        _cleanup_(measurement_store_freep) MeasurementStore *new = NULL;
        MeasurementStore *s = userdata;
        int r;

        r = measurement_read(message, &new, error);
        if (r < 0)
                return r;
        measurement_clear(s);
        *s = *new;
        *new = (MeasurementStore) {};
        log_info("Recorded a latency measurement by %s on %zu CPU%s", s->tool, s->n_cpus, s->n_cpus == 1 ? "" : "s");
        (void) sd_bus_emit_properties_changed(sd_bus_message_get_bus(message), BUS_PATH, BUS_INTERFACE,
                                              "LastMeasurement", "LastMeasurementHistogram", NULL);
        return sd_bus_reply_method_return(message, NULL);
}

static const MeasuredCPU *measurement_find_cpu(const MeasurementStore *s, uint32_t cpu) {
        for (size_t i = 0; i < s->n_cpus; i++)
                if (s->cpus[i].cpu == cpu)
                        return &s->cpus[i];
        return NULL;
}

/* One CPU's row of RecordMeasurementHistogram() into h, checked against what s measured
 * on that CPU. 1, 0 at the end of the array, -errno with error set for a bad row. */
static int measurement_read_histogram(sd_bus_message *message, const MeasurementStore *s, MeasuredHistogram *h,
                                      sd_bus_error *error) {
        const MeasuredCPU *c;
        const uint64_t *bounds, *counts;
        size_t bounds_size, counts_size;
        const char *why;
        int r;

        r = sd_bus_message_enter_container(message, 'r', "uatat");
        if (r <= 0)
                return r;
        r = sd_bus_message_read(message, "u", &h->cpu);
        if (r >= 0)
                r = sd_bus_message_read_array(message, 't', (const void **) &bounds, &bounds_size);
        if (r >= 0)
                r = sd_bus_message_read_array(message, 't', (const void **) &counts, &counts_size);
        if (r >= 0)
                r = sd_bus_message_exit_container(message);
        if (r < 0)
                return r;
        c = measurement_find_cpu(s, h->cpu);
        if (!c)
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS, "CPU %u was not measured", h->cpu);
        why = measured_histogram_check(bounds, bounds_size / sizeof(uint64_t), counts, counts_size / sizeof(uint64_t),
                                       c->samples);
        if (why)
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS, "CPU %u: %s", h->cpu, why);
        h->n = bounds_size / sizeof(uint64_t);
        h->bounds_ns = malloc(bounds_size);
        h->counts = malloc(counts_size);
        if (!h->bounds_ns || !h->counts)
                return -ENOMEM;
        memcpy(h->bounds_ns, bounds, bounds_size);
        memcpy(h->counts, counts, counts_size);
        return 1;
}

/* RecordMeasurementHistogram()'s arguments, checked against s (the measurement they must
 * belong to), into a new array: all or nothing. -errno with error set for a bad row. */
static int measurement_read_histograms(sd_bus_message *message, const MeasurementStore *s, MeasuredHistogram **ret,
                                       size_t *ret_n, sd_bus_error *error) {
        MeasuredHistogram *new = NULL;
        size_t n = 0, n_started = 0, allocated = 0;
        uint64_t realtime_usec;
        int r;

        r = sd_bus_message_read(message, "t", &realtime_usec);
        if (r < 0)
                return r;
        /* The start tells the run apart: a histogram sent after another lowlatctl measure
         * recorded its own summary belongs to neither. */
        if (!s->tool || realtime_usec != s->realtime_usec)
                return sd_bus_error_set(error, SD_BUS_ERROR_INVALID_ARGS,
                                        "Not the histogram of the last measurement lowlatd keeps");
        /* Bounded without a count of its own: each row is of a measured CPU, and no CPU
         * twice, so there are never more rows than CPUs measured (plus the one being read). */
        r = sd_bus_message_enter_container(message, 'a', MEASUREMENT_HISTOGRAM_CPU_SIGNATURE);
        while (r >= 0) {
                if (array_grow(&new, &allocated, n + 1) < 0) {
                        r = -ENOMEM;
                        break;
                }
                new[n] = (MeasuredHistogram) {};
                n_started = n + 1; /* the row being read is freed on failure too */
                r = measurement_read_histogram(message, s, &new[n], error);
                if (r <= 0)
                        break;
                for (size_t i = 0; i < n && r >= 0; i++)
                        if (new[i].cpu == new[n].cpu)
                                r = sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS, "CPU %u given twice",
                                                      new[n].cpu);
                n++;
        }
        if (r >= 0)
                r = sd_bus_message_exit_container(message);
        if (r < 0) {
                histograms_free(new, n_started);
                return r;
        }
        *ret = new;
        *ret_n = n;
        return 0;
}

static int method_record_measurement_histogram(sd_bus_message *message, void *userdata, sd_bus_error *error) {
        MeasurementStore *s = userdata;
        MeasuredHistogram *new = NULL;
        size_t n = 0;
        int r;

        r = measurement_read_histograms(message, s, &new, &n, error);
        if (r < 0)
                return r;
        histograms_free(s->histograms, s->n_histograms);
        s->histograms = new;
        s->n_histograms = n;
        log_debug("Recorded the histogram of the latency measurement by %s on %zu CPU%s", s->tool, n,
                  n == 1 ? "" : "s");
        (void) sd_bus_emit_properties_changed(sd_bus_message_get_bus(message), BUS_PATH, BUS_INTERFACE,
                                              "LastMeasurementHistogram", NULL);
        return sd_bus_reply_method_return(message, NULL);
}

static int property_get_last_measurement(sd_bus *bus, const char *path, const char *interface, const char *property,
                                         sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        MeasurementStore *s = userdata;
        int r;

        r = sd_bus_message_open_container(reply, 'r', MEASUREMENT_SIGNATURE);
        if (r >= 0)
                r = sd_bus_message_append(reply, "stt", s->tool ?: "", s->realtime_usec, s->duration_usec);
        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'a', MEASUREMENT_CPU_SIGNATURE);
        for (size_t i = 0; r >= 0 && i < s->n_cpus; i++) {
                const MeasuredCPU *c = &s->cpus[i];
                r = sd_bus_message_append(reply, MEASUREMENT_CPU_SIGNATURE, c->cpu, c->samples, c->min_ns, c->avg_ns,
                                          c->p99_ns, c->max_ns, c->overflows, c->p99_over);
        }
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'a', MEASUREMENT_NOISE_SIGNATURE);
        for (size_t i = 0; r >= 0 && i < s->n_noise; i++) {
                const MeasuredNoise *n = &s->noise[i];
                r = sd_bus_message_append(reply, MEASUREMENT_NOISE_SIGNATURE, n->cpu, n->kind, n->source,
                                          n->description, n->count);
        }
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        return r;
}

static int property_get_last_measurement_histogram(sd_bus *bus, const char *path, const char *interface,
                                                   const char *property, sd_bus_message *reply, void *userdata,
                                                   sd_bus_error *error) {
        MeasurementStore *s = userdata;
        int r;

        r = sd_bus_message_open_container(reply, 'r', MEASUREMENT_HISTOGRAM_SIGNATURE);
        if (r >= 0)
                r = sd_bus_message_append(reply, "t", s->n_histograms > 0 ? s->realtime_usec : 0);
        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'a', MEASUREMENT_HISTOGRAM_CPU_SIGNATURE);
        for (size_t i = 0; r >= 0 && i < s->n_histograms; i++) {
                const MeasuredHistogram *h = &s->histograms[i];

                r = sd_bus_message_open_container(reply, 'r', "uatat");
                if (r >= 0)
                        r = sd_bus_message_append(reply, "u", h->cpu);
                if (r >= 0)
                        r = sd_bus_message_append_array(reply, 't', h->bounds_ns, h->n * sizeof(uint64_t));
                if (r >= 0)
                        r = sd_bus_message_append_array(reply, 't', h->counts, h->n * sizeof(uint64_t));
                if (r >= 0)
                        r = sd_bus_message_close_container(reply);
        }
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        return r;
}

/* RecordMeasurement and RecordMeasurementHistogram are privileged: not
 * SD_BUS_VTABLE_UNPRIVILEGED, so sd-bus wants root (or CAP_SYS_ADMIN), and the policy file
 * allows them to root only. */
static const sd_bus_vtable measurement_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("LastMeasurement", "(" MEASUREMENT_SIGNATURE ")", property_get_last_measurement, 0,
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_METHOD_WITH_ARGS("RecordMeasurement",
                                SD_BUS_ARGS("s", tool, "t", realtime_usec, "t", duration_usec,
                                            "a" MEASUREMENT_CPU_SIGNATURE, cpus, "a" MEASUREMENT_NOISE_SIGNATURE, noise),
                                SD_BUS_NO_RESULT, method_record_measurement, 0),
        /* A member of its own rather than a field more: RecordMeasurement's arguments and
         * LastMeasurement's shape never change (lowlatd(8), COMPATIBILITY). */
        SD_BUS_PROPERTY("LastMeasurementHistogram", "(" MEASUREMENT_HISTOGRAM_SIGNATURE ")",
                        property_get_last_measurement_histogram, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_METHOD_WITH_ARGS("RecordMeasurementHistogram",
                                SD_BUS_ARGS("t", realtime_usec, "a" MEASUREMENT_HISTOGRAM_CPU_SIGNATURE, cpus),
                                SD_BUS_NO_RESULT, method_record_measurement_histogram, 0),
        SD_BUS_VTABLE_END,
};

int measurement_store_add_to_bus(MeasurementStore *s, sd_bus *bus) {
        /* A second vtable on the same interface: sd-bus merges them (introspection, GetAll). */
        return sd_bus_add_object_vtable(bus, NULL, BUS_PATH, BUS_INTERFACE, measurement_vtable, s);
}
