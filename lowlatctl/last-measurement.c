/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The LastMeasurement property: lowlatctl measure's last result as lowlatd keeps it, read
 * back off the bus and shown by status, as text and as JSON. */
#include <inttypes.h>
#include <string.h>

#include "bus-names.h"
#include "client.h"
#include "basic/array.h"
#include "basic/macro.h"
#include "measure.h"
#include "measurement-signature.h"
#include "basic/util.h"

void last_measurement_done(LastMeasurement *m) {
        m->cpus = mfree(m->cpus);
        m->noise = mfree(m->noise);
        m->histograms = mfree(m->histograms);
        m->n_cpus = m->n_noise = m->n_histograms = 0;
        m->reply = sd_bus_message_unref(m->reply);
        m->histogram_reply = sd_bus_message_unref(m->histogram_reply);
}

int ctl_read_last_measurement(sd_bus *bus, LastMeasurement *ret) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(last_measurement_done) LastMeasurement m = {};
        size_t allocated = 0;
        int r;

        r = sd_bus_get_property(bus, BUS_NAME, BUS_PATH, BUS_INTERFACE, "LastMeasurement", &error, &m.reply,
                                "(" MEASUREMENT_SIGNATURE ")");
        if (r < 0 && sd_bus_error_has_names(&error, SD_BUS_ERROR_UNKNOWN_PROPERTY, SD_BUS_ERROR_INVALID_ARGS)) {
                /* A lowlatd from before measure: nothing to show. */
                *ret = (LastMeasurement) { .tool = "" };
                return 0;
        }
        if (r < 0) {
                ctl_log_read_failed(bus, "LastMeasurement", &error, r);
                return r;
        }
        r = sd_bus_message_enter_container(m.reply, 'r', MEASUREMENT_SIGNATURE);
        if (r >= 0)
                r = sd_bus_message_read(m.reply, "stt", &m.tool, &m.realtime_usec, &m.duration_usec);
        if (r >= 0)
                r = sd_bus_message_enter_container(m.reply, 'a', MEASUREMENT_CPU_SIGNATURE);
        while (r >= 0) {
                MeasuredCPURow c;

                r = sd_bus_message_read(m.reply, MEASUREMENT_CPU_SIGNATURE, &c.cpu, &c.samples, &c.min_ns, &c.avg_ns,
                                        &c.p99_ns, &c.max_ns, &c.overflows, &c.p99_over);
                if (r <= 0)
                        break;
                if (array_grow(&m.cpus, &allocated, m.n_cpus + 1) < 0) {
                        r = -ENOMEM;
                        break;
                }
                m.cpus[m.n_cpus++] = c;
        }
        if (r >= 0)
                r = sd_bus_message_exit_container(m.reply);
        allocated = 0;
        if (r >= 0)
                r = sd_bus_message_enter_container(m.reply, 'a', MEASUREMENT_NOISE_SIGNATURE);
        while (r >= 0) {
                MeasuredNoiseRow n;

                r = sd_bus_message_read(m.reply, MEASUREMENT_NOISE_SIGNATURE, &n.cpu, &n.kind, &n.source,
                                        &n.description, &n.count);
                if (r <= 0)
                        break;
                if (array_grow(&m.noise, &allocated, m.n_noise + 1) < 0) {
                        r = -ENOMEM;
                        break;
                }
                m.noise[m.n_noise++] = n;
        }
        if (r >= 0)
                r = sd_bus_message_exit_container(m.reply);
        if (r >= 0)
                r = sd_bus_message_exit_container(m.reply);
        if (r < 0) {
                fprintf(stderr, "lowlatctl: cannot parse LastMeasurement: %s\n", strerror(-r));
                return r;
        }
        *ret = m;
        m = (LastMeasurement) {};
        return 0;
}

/* The rows of LastMeasurementHistogram (reply positioned in its array) into m. */
static int read_histogram_rows(sd_bus_message *reply, LastMeasurement *m) {
        size_t allocated = 0;
        int r;

        for (;;) {
                MeasuredHistogramRow h = {};
                size_t bounds_size, counts_size;

                r = sd_bus_message_enter_container(reply, 'r', "uatat");
                if (r <= 0)
                        return r;
                r = sd_bus_message_read(reply, "u", &h.cpu);
                if (r >= 0)
                        r = sd_bus_message_read_array(reply, 't', (const void **) &h.bounds_ns, &bounds_size);
                if (r >= 0)
                        r = sd_bus_message_read_array(reply, 't', (const void **) &h.counts, &counts_size);
                if (r >= 0)
                        r = sd_bus_message_exit_container(reply);
                if (r < 0)
                        return r;
                /* lowlatd checked them; a newer or confused one that sends two arrays of
                 * different lengths gets the shorter. */
                h.n = MIN(bounds_size, counts_size) / sizeof(uint64_t);
                if (array_grow(&m->histograms, &allocated, m->n_histograms + 1) < 0)
                        return -ENOMEM;
                m->histograms[m->n_histograms++] = h;
        }
}

int ctl_read_last_measurement_histogram(sd_bus *bus, LastMeasurement *m) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        uint64_t realtime_usec;
        int r;

        if (isempty(m->tool))
                return 0;
        r = sd_bus_get_property(bus, BUS_NAME, BUS_PATH, BUS_INTERFACE, "LastMeasurementHistogram", &error, &reply,
                                "(" MEASUREMENT_HISTOGRAM_SIGNATURE ")");
        if (r < 0 && sd_bus_error_has_names(&error, SD_BUS_ERROR_UNKNOWN_PROPERTY, SD_BUS_ERROR_INVALID_ARGS))
                return 0; /* a lowlatd from before the histograms: the summary is all */
        if (r < 0) {
                ctl_log_read_failed(bus, "LastMeasurementHistogram", &error, r);
                return r;
        }
        r = sd_bus_message_enter_container(reply, 'r', MEASUREMENT_HISTOGRAM_SIGNATURE);
        if (r >= 0)
                r = sd_bus_message_read(reply, "t", &realtime_usec);
        /* Another run recorded between the two reads: these are not m's. The next read
         * (the textfile collector's next run) has both of that one. */
        if (r >= 0 && realtime_usec != m->realtime_usec)
                return 0;
        if (r >= 0)
                r = sd_bus_message_enter_container(reply, 'a', MEASUREMENT_HISTOGRAM_CPU_SIGNATURE);
        if (r >= 0)
                r = read_histogram_rows(reply, m);
        if (r >= 0)
                r = sd_bus_message_exit_container(reply);
        if (r < 0) {
                m->histograms = mfree(m->histograms);
                m->n_histograms = 0;
                fprintf(stderr, "lowlatctl: cannot parse LastMeasurementHistogram: %s\n", strerror(-r));
                return r;
        }
        sd_bus_message_unref(m->histogram_reply);
        m->histogram_reply = TAKE_PTR(reply);
        return 0;
}

void last_measurement_print_text(FILE *f, const LastMeasurement *m) {
        _cleanup_free_ char *when = NULL;

        if (isempty(m->tool)) {
                fprintf(f, "%18s: %s\n", "Last measurement", "none (lowlatctl measure)");
                return;
        }
        when = format_timestamp(m->realtime_usec);
        fprintf(f, "%18s: ", "Last measurement");
        print_escaped(f, m->tool);
        fprintf(f, ", %s, %.1f s\n", when ?: "?", (double) m->duration_usec / (double) USEC_PER_SEC);
        for (size_t i = 0; i < m->n_cpus; i++) {
                const MeasuredCPURow *c = &m->cpus[i];
                LatencyStats s = { .samples = c->samples, .p99_ns = c->p99_ns, .max_ns = c->max_ns };
                uint64_t noise = 0;

                for (size_t k = 0; k < m->n_noise; k++)
                        if (m->noise[k].cpu == c->cpu)
                                noise += m->noise[k].count;
                fprintf(f, "%18s  CPU %" PRIu32 ": min ", "", c->cpu);
                print_usec(f, c->min_ns, 0);
                fputs(", avg ", f);
                print_usec(f, c->avg_ns, 0);
                fputs(c->p99_over ? ", p99 >" : ", p99 ", f);
                print_usec(f, c->p99_ns, 0);
                fputs(", max ", f);
                print_usec(f, c->max_ns, 0);
                fprintf(f, " us%s, %" PRIu64 " noise event%s\n", latency_max_is_high(&s) ? " (spike)" : "", noise,
                        noise == 1 ? "" : "s");
        }
}

void last_measurement_print_json(FILE *f, const LastMeasurement *m) {
        if (isempty(m->tool)) {
                fputs("null", f);
                return;
        }
        fputc('{', f);
        json_print_member(f, "tool", m->tool, true);
        fprintf(f, ",\"realtime_usec\":%" PRIu64 ",\"duration_usec\":%" PRIu64 ",\"cpus\":[", m->realtime_usec,
                m->duration_usec);
        for (size_t i = 0; i < m->n_cpus; i++) {
                const MeasuredCPURow *c = &m->cpus[i];
                fprintf(f,
                        "%s{\"cpu\":%" PRIu32 ",\"samples\":%" PRIu64 ",\"min_ns\":%" PRIu64 ",\"avg_ns\":%" PRIu64
                        ",\"p99_ns\":%" PRIu64 ",\"max_ns\":%" PRIu64 ",\"overflows\":%" PRIu64 ",\"p99_over\":%s}",
                        i ? "," : "", c->cpu, c->samples, c->min_ns, c->avg_ns, c->p99_ns, c->max_ns, c->overflows,
                        c->p99_over ? "true" : "false");
        }
        fputs("],\"noise\":[", f);
        for (size_t i = 0; i < m->n_noise; i++) {
                const MeasuredNoiseRow *n = &m->noise[i];
                fprintf(f, "%s{\"cpu\":%" PRIu32 ",", i ? "," : "", n->cpu);
                json_print_member(f, "kind", n->kind, true);
                json_print_member(f, "source", n->source, false);
                json_print_member(f, "description", n->description, false);
                fprintf(f, ",\"count\":%" PRIu64 "}", n->count);
        }
        fputs("]}", f);
}
