/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lowlatctl noise, and what top and measure share: Noise() read off the bus, the rows
 * ranked, and rates computed here between two reads. */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "bus-names.h"
#include "noise-view.h"
#include "client.h"
#include "basic/array.h"
#include "basic/cpuset.h"
#include "basic/macro.h"
#include "basic/util.h"

void noise_sample_done(NoiseSample *s) {
        s->sources = mfree(s->sources);
        s->n = s->allocated = 0;
        s->reply = sd_bus_message_unref(s->reply);
}

void noise_view_done(NoiseView *v) {
        v->rows = mfree(v->rows);
        v->n = 0;
}

static int noise_source_read(sd_bus_message *reply, NoiseSample *s) {
        NoiseSource src;
        int r;

        r = ctl_enter_struct(reply, "ussstd");
        if (r > 0)
                r = sd_bus_message_read(reply, "ussstd", &src.cpu, &src.kind, &src.source, &src.description,
                                        &src.count, &src.rate);
        if (r > 0)
                r = ctl_exit_struct(reply);
        if (r <= 0)
                return r;
        /* A NaN or negative rate from a confused daemon would sort and print as nonsense. */
        if (!isfinite(src.rate) || src.rate < 0)
                src.rate = 0;
        if (array_grow(&s->sources, &s->allocated, s->n + 1) < 0)
                return -ENOMEM;
        s->sources[s->n++] = src;
        return 1;
}

int noise_sample_from_reply(sd_bus_message *reply, NoiseSample *ret) {
        _cleanup_(noise_sample_done) NoiseSample s = { .reply = sd_bus_message_ref(reply) };
        int r;

        r = sd_bus_message_rewind(s.reply, true);
        if (r >= 0)
                r = sd_bus_message_read(s.reply, "tt", &s.sampled_usec, &s.interval_usec);
        if (r >= 0)
                r = ctl_enter_struct_array(s.reply, "ussstd");
        while (r >= 0 && (r = noise_source_read(s.reply, &s)) > 0)
                ;
        if (r >= 0)
                r = sd_bus_message_exit_container(s.reply);
        if (r < 0)
                return r;
        *ret = s;
        s = (NoiseSample) {};
        return 0;
}

int ctl_read_noise(sd_bus *bus, NoiseSample *ret) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        r = ctl_call_method(bus, "Noise", &error, &reply);
        if (r < 0) {
                ctl_log_call_failed(bus, "Noise", &error, r);
                return r;
        }
        r = noise_sample_from_reply(reply, ret);
        if (r == -ENOMEM)
                fprintf(stderr, "lowlatctl: out of memory\n");
        else if (r < 0)
                fprintf(stderr, "lowlatctl: cannot parse the reply of Noise: %s\n", strerror(-r));
        return r;
}

void noise_reads_done(NoiseReads *g) {
        g->gate = mfree(g->gate);
        g->cpus = mfree(g->cpus);
        g->unreadable = mfree(g->unreadable);
}

void ctl_read_noise_reads(sd_bus *bus, NoiseReads *ret) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;

        *ret = (NoiseReads) {};
        if (sd_bus_get_property_string(bus, BUS_NAME, BUS_PATH, BUS_INTERFACE, "NoiseCPUs", &error, &ret->cpus) < 0)
                ret->cpus = NULL;
        sd_bus_error_free(&error);
        if (sd_bus_get_property_string(bus, BUS_NAME, BUS_PATH, BUS_INTERFACE, "NoiseUnreadable", &error,
                                       &ret->unreadable) < 0)
                ret->unreadable = NULL;
        sd_bus_error_free(&error);
        if (sd_bus_get_property_string(bus, BUS_NAME, BUS_PATH, BUS_INTERFACE, "NoiseGate", &error, &ret->gate) < 0)
                return;
        sd_bus_error_free(&error);
        if (sd_bus_get_property(bus, BUS_NAME, BUS_PATH, BUS_INTERFACE, "NoiseReads", &error, &reply, "(tt)") < 0 ||
            sd_bus_message_read(reply, "(tt)", &ret->full_reads, &ret->gated_reads) < 0)
                ret->full_reads = ret->gated_reads = 0;
}

void noise_reads_print(FILE *f, const NoiseReads *g) {
        if (!g->gate || !g->gate[0])
                return;
        fprintf(f, "Gate: %s; %" PRIu64 " scan%s read /proc/interrupts, %" PRIu64 " did without it.\n", g->gate,
                g->full_reads, g->full_reads == 1 ? "" : "s", g->gated_reads);
}

/* ---- Rates between two samples ---------------------------------------------------- */

static bool same_source(uint32_t cpu, const char *kind, const char *source, const NoiseSource *s) {
        return s->cpu == cpu && streq(s->kind, kind) && streq(s->source, source);
}

static const NoiseSource *sample_find(const NoiseSample *s, const NoiseSource *like) {
        for (size_t i = 0; s && i < s->n; i++)
                if (same_source(like->cpu, like->kind, like->source, &s->sources[i]))
                        return &s->sources[i];
        return NULL;
}

static bool sample_has_cpu(const NoiseSample *s, uint32_t cpu) {
        for (size_t i = 0; s && i < s->n; i++)
                if (s->sources[i].cpu == cpu)
                        return true;
        return false;
}

static const NoiseViewRow *view_find(const NoiseView *v, const NoiseSource *like) {
        for (size_t i = 0; v && i < v->n; i++)
                if (v->rows[i].cpu == like->cpu && streq(v->rows[i].kind, like->kind) &&
                    streq(v->rows[i].source, like->source))
                        return &v->rows[i];
        return NULL;
}

static int compare_double_desc(double a, double b) {
        return a > b ? -1 : a < b ? 1 : 0;
}

static int compare_u64_desc(uint64_t a, uint64_t b) {
        return a > b ? -1 : a < b ? 1 : 0;
}

static int noise_row_compare(const void *x, const void *y) {
        const NoiseViewRow *a = x, *b = y;
        int c;

        if (a->cpu != b->cpu)
                return a->cpu < b->cpu ? -1 : 1;
        if ((c = compare_double_desc(a->rate, b->rate)) != 0)
                return c;
        if ((c = compare_u64_desc(a->delta, b->delta)) != 0)
                return c;
        if ((c = compare_u64_desc(a->count, b->count)) != 0)
                return c;
        if ((c = strcmp(a->kind, b->kind)) != 0)
                return c;
        return strcmp(a->source, b->source);
}

int noise_view_compute(const NoiseSample *old, const NoiseView *previous, const NoiseSample *cur, NoiseView *ret) {
        _cleanup_free_ NoiseViewRow *rows = NULL;
        uint64_t elapsed = 0;

        /* The same cached read twice (within lowlatd's 100 ms), or a clock that went back:
         * nothing can be said about rates. */
        if (old && cur->sampled_usec > old->sampled_usec)
                elapsed = cur->sampled_usec - old->sampled_usec;

        rows = calloc(MAX(cur->n, 1U), sizeof(NoiseViewRow));
        if (!rows)
                return -ENOMEM;
        for (size_t i = 0; i < cur->n; i++) {
                const NoiseSource *s = &cur->sources[i];
                const NoiseSource *before = sample_find(old, s);
                const NoiseViewRow *shown = view_find(previous, s);
                NoiseViewRow *row = &rows[i];

                *row = (NoiseViewRow) {
                        .cpu = s->cpu,
                        .kind = s->kind,
                        .source = s->source,
                        .description = s->description,
                        .count = s->count,
                };
                if (elapsed > 0) {
                        if (before)
                                /* Backwards: a new baseline, not a wrap to 2^64. */
                                row->delta = s->count >= before->count ? s->count - before->count : 0;
                        else if (sample_has_cpu(old, s->cpu))
                                /* Omitted before because it was 0 (the contract allows it). */
                                row->delta = s->count;
                        /* else: a CPU just watched (or back online) starts here. */
                        row->rate = (double) row->delta * (double) USEC_PER_SEC / (double) elapsed;
                }
                if (previous && previous->elapsed_usec > 0)
                        row->is_new = !shown || (shown->rate <= 0 && row->rate > 0);
                else if (previous)
                        row->is_new = !shown;
        }
        qsort(rows, cur->n, sizeof(NoiseViewRow), noise_row_compare);
        *ret = (NoiseView) { .rows = TAKE_PTR(rows), .n = cur->n, .elapsed_usec = elapsed };
        return 0;
}

/* ---- lowlatctl noise ---------------------------------------------------------------- */

static int noise_source_compare(const void *x, const void *y) {
        const NoiseSource *a = *(const NoiseSource *const *) x, *b = *(const NoiseSource *const *) y;
        int c;

        if ((c = compare_double_desc(a->rate, b->rate)) != 0)
                return c;
        if ((c = compare_u64_desc(a->count, b->count)) != 0)
                return c;
        if (a->cpu != b->cpu)
                return a->cpu < b->cpu ? -1 : 1;
        if ((c = strcmp(a->kind, b->kind)) != 0)
                return c;
        return strcmp(a->source, b->source);
}

/* The sources ranked by rate, highest first; NULL when out of memory. */
static const NoiseSource **noise_sample_ranked(const NoiseSample *s) {
        const NoiseSource **ranked = calloc(MAX(s->n, 1U), sizeof(NoiseSource *));

        if (!ranked)
                return NULL;
        for (size_t i = 0; i < s->n; i++)
                ranked[i] = &s->sources[i];
        qsort(ranked, s->n, sizeof(NoiseSource *), noise_source_compare);
        return ranked;
}

char *noise_sample_cpus(const NoiseSample *s) {
        _cleanup_cpuset_ CPUSet cpus = CPUSET_EMPTY;

        for (size_t i = 0; i < s->n; i++)
                if (cpuset_add(&cpus, s->sources[i].cpu) < 0)
                        return NULL;
        /* "0-1", as every CPU list lowlatd and lowlatctl print. */
        return cpuset_format_list(&cpus);
}

/* Noise() without a row: no CPU watched, or none with a counter above 0. */
static void noise_print_none(FILE *f, const NoiseReads *g) {
        if (g && !isempty(g->unreadable))
                return; /* said before the table: noise_print_unreadable() */
        if (!g || !g->cpus)
                /* A lowlatd without NoiseCPUs cannot say which. */
                fputs("No noise sources: no CPU is watched (no isolated CPUs, no [noise] cpus=), or nothing has "
                      "reached them.\n",
                      f);
        else if (isempty(g->cpus))
                fputs("No noise sources: lowlatd watches no CPU (there are no isolated CPUs, and [noise] cpus "
                      "names none).\n",
                      f);
        else {
                bool several = strpbrk(g->cpus, ",-");
                fputs(several ? "No noise sources: lowlatd watches CPUs " : "No noise sources: lowlatd watches CPU ", f);
                print_escaped(f, g->cpus);
                fputs(several ? ", and none of their counters is above 0.\n" : ", and none of its counters is above 0.\n",
                      f);
        }
}

void noise_print_table(FILE *f, const NoiseSample *s, const NoiseReads *g, bool legend) {
        enum { CPU, KIND, SOURCE, DESCRIPTION, COUNT, RATE, _COLUMNS };
        static const char *const headers[_COLUMNS] = { "CPU", "KIND", "SOURCE", "DESCRIPTION", "COUNT", "RATE/S" };
        /* Counts and rates right-aligned, as top shows them; the CPU is a name. */
        static const unsigned numbers = 1U << COUNT | 1U << RATE;
        _cleanup_free_ const NoiseSource **ranked = noise_sample_ranked(s);
        size_t width[_COLUMNS] = {};

        if (!ranked) {
                fprintf(stderr, "lowlatctl: out of memory\n");
                return;
        }
        if (g && !isempty(g->unreadable)) {
                /* The rows, if any, are the last read that worked: say so before them. */
                fputs("lowlatd cannot count the noise counters: ", f);
                print_escaped(f, g->unreadable);
                fputs(s->n > 0 ? "; what follows is its last read that worked.\n" : ".\n", f);
        }
        if (legend)
                table_measure_row(width, headers, _COLUMNS);
        for (int pass = 0; pass < 2; pass++) {
                if (pass == 1 && legend && s->n > 0)
                        table_print_row(f, width, headers, _COLUMNS, numbers);
                for (size_t i = 0; i < s->n; i++) {
                        const NoiseSource *src = ranked[i];
                        char cpu[16], count[32], rate[64];
                        const char *const cells[_COLUMNS] = {
                                cpu, src->kind, src->source, src->description, count, rate,
                        };

                        snprintf(cpu, sizeof(cpu), "%" PRIu32, src->cpu);
                        snprintf(count, sizeof(count), "%" PRIu64, src->count);
                        snprintf(rate, sizeof(rate), "%.1f", src->rate);
                        if (pass == 0)
                                table_measure_row(width, cells, _COLUMNS);
                        else
                                table_print_row(f, width, cells, _COLUMNS, numbers);
                }
        }
        if (legend) {
                _cleanup_free_ char *cpus = noise_sample_cpus(s);

                if (s->n == 0)
                        noise_print_none(f, g);
                else
                        fprintf(f, "\n%zu source%s on CPU%s %s", s->n, s->n == 1 ? "" : "s",
                                cpus && strpbrk(cpus, ",-") ? "s" : "", cpus ?: "?");
                if (s->n > 0 && s->interval_usec > 0)
                        fprintf(f, "; rates over lowlatd's last scan interval, %.1f s.\n",
                                (double) s->interval_usec / (double) USEC_PER_SEC);
                else if (s->n > 0)
                        fputs("; no rates before lowlatd's second scan.\n", f);
        }
}

void noise_print_json(FILE *f, const NoiseSample *s, const NoiseReads *g) {
        _cleanup_free_ const NoiseSource **ranked = noise_sample_ranked(s);

        if (!ranked) {
                fprintf(stderr, "lowlatctl: out of memory\n");
                return;
        }
        fprintf(f, "{\"sampled_usec\":%" PRIu64 ",\"interval_usec\":%" PRIu64 ",", s->sampled_usec, s->interval_usec);
        if (g && g->cpus) {
                /* "": no CPU is watched; a list: with no source, none of them took any. */
                json_print_member(f, "watched_cpus", g->cpus, true);
                fputc(',', f);
        }
        if (g && g->unreadable) {
                /* "": counted; else why not (the sources are then the last read that worked). */
                json_print_member(f, "unreadable", g->unreadable, true);
                fputc(',', f);
        }
        if (g && g->gate) {
                fputs("\"gate\":{", f);
                json_print_member(f, "mode", g->gate, true);
                fprintf(f, ",\"full_reads\":%" PRIu64 ",\"gated_reads\":%" PRIu64 "},", g->full_reads, g->gated_reads);
        }
        fputs("\"sources\":[", f);
        for (size_t i = 0; i < s->n; i++) {
                const NoiseSource *src = ranked[i];

                fprintf(f, "%s{\"cpu\":%" PRIu32 ",", i > 0 ? ",\n" : "\n", src->cpu);
                json_print_member(f, "kind", src->kind, true);
                json_print_member(f, "source", src->source, false);
                json_print_member(f, "description", src->description, false);
                fprintf(f, ",\"count\":%" PRIu64 ",\"rate\":%.3f}", src->count, src->rate);
        }
        fputs(s->n > 0 ? "\n]}\n" : "]}\n", f);
}
