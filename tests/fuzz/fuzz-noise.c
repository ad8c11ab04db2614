/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fuzzes the noise counters' parsers (lib/noise/noise.c): /proc/interrupts, /proc/softirqs,
 * /proc/schedstat and /proc/stat. The input is a series of reads separated by NUL bytes;
 * the first byte picks the watched CPUs, each read's first byte its file. Promises
 * checked: no crash or leak on any text; every rate (the delta over the interval, computed)
 * finite and non-negative; the incremental parse (unchanged lines not parsed again)
 * gives the same rows and counts as a fresh parse of the same text wherever the text
 * names each source once; the alerts' counts are the deltas. */
#include <math.h>
#include <stdbool.h>

#include "fuzz.h"
#include "noise/noise.h"
#include "basic/util.h"

static void check_same(const Noise *inc, const Noise *fresh, NoiseFormat format) {
        const NoiseFile *a = &inc->files[format], *b = &fresh->files[format];
        size_t mapped = 0;

        for (size_t i = 0; i < b->n_lines; i++)
                mapped += b->lines[i].row != NULL;
        /* A source printed twice (only in corrupt text) is one row, whose counts depend on
         * which of its lines changed last: only unique sources are comparable. */
        if (format == NOISE_FORMAT_SCHEDSTAT || mapped != b->n_rows)
                return;
        FUZZ_CHECK(a->n_rows == b->n_rows, "%zu rows incrementally, %zu fresh", a->n_rows, b->n_rows);
        for (size_t i = 0; i < a->n_rows; i++) {
                const NoiseCounterRow *x = a->rows[i], *y = b->rows[i];
                FUZZ_CHECK(streq(x->source, y->source) && x->kind == y->kind && streq(x->description, y->description),
                           "row %zu: '%s' (%d) '%s' incrementally, '%s' (%d) '%s' fresh", i, x->source, x->kind,
                           x->description, y->source, y->kind, y->description);
                for (size_t c = 0; c < inc->n_cpus; c++) {
                        FUZZ_CHECK(x->cells[c].present == y->cells[c].present, "row '%s' CPU %u: present %d vs %d",
                                   x->source, inc->cpus[c], x->cells[c].present, y->cells[c].present);
                        FUZZ_CHECK(!x->cells[c].present || x->cells[c].count == y->cells[c].count,
                                   "row '%s' CPU %u: %llu incrementally, %llu fresh", x->source, inc->cpus[c],
                                   (unsigned long long) x->cells[c].count, (unsigned long long) y->cells[c].count);
                }
        }
}

static void check_rates(const Noise *n) {
        size_t it = 0;
        NoiseCounterRow *r;

        while ((r = noise_next_row(n, &it)))
                for (size_t c = 0; c < n->n_cpus; c++) {
                        const NoiseCell *cell = &r->cells[c];
                        double rate = noise_cell_rate(n, cell);
                        FUZZ_CHECK(isfinite(rate) && rate >= 0, "rate %f", rate);
                        FUZZ_CHECK(cell->delta <= cell->count || !cell->present, "delta %llu above count %llu",
                                   (unsigned long long) cell->delta, (unsigned long long) cell->count);
                }
}

static void on_alert(const NoiseAlert *a, void *userdata) {
        FUZZ_CHECK(a->row && (a->kind == NOISE_ALERT_TICK || a->count > 0), "an alert about nothing");
        (*(unsigned *) userdata)++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        unsigned cpus[2], alerts = 0;
        NoiseAlertPolicy policy = { 10, 1, NOISE_BUSY_SHARE_MIN };
        CPUSet nohz = CPUSET_EMPTY;
        Noise *inc = NULL;
        uint64_t now = USEC_PER_SEC;

        if (size < 1)
                return 0;
        cpus[0] = data[0] % 4;
        cpus[1] = cpus[0] + 1 + (data[0] >> 2) % 8;
        FUZZ_CHECK(noise_new(cpus, 2, &inc) == 0, "noise_new");
        FUZZ_CHECK(cpuset_add(&nohz, cpus[0]) >= 0, "cpuset_add");
        noise_set_nohz_full(inc, &nohz);
        data++, size--;

        while (size > 0) {
                const uint8_t *end = memchr(data, 0, size);
                size_t len = end ? (size_t) (end - data) : size;
                NoiseFormat format;
                Noise *fresh = NULL;
                int r;

                if (len > 0) {
                        format = (NoiseFormat) (data[0] % (_NOISE_FORMAT_MAX + 1));
                        if ((int) format == _NOISE_FORMAT_MAX)
                                (void) noise_parse_stat(inc, (const char *) data + 1, len - 1, 100);
                        else {
                                r = noise_parse(inc, format, (const char *) data + 1, len - 1);
                                FUZZ_CHECK(r == 0 || r == -EBADMSG, "noise_parse() returned %d", r);
                                FUZZ_CHECK(noise_new(cpus, 2, &fresh) == 0, "noise_new");
                                FUZZ_CHECK(noise_parse(fresh, format, (const char *) data + 1, len - 1) == r,
                                           "a fresh parse returns something else");
                                if (r == 0)
                                        check_same(inc, fresh, format);
                                noise_free(fresh);
                        }
                        now += (uint64_t) data[len - 1] * 10000 + 1;
                        noise_scan(inc, now);
                        check_rates(inc);
                        noise_check_alerts(inc, &policy, now, on_alert, &alerts);
                }
                data += len + (end != NULL);
                size -= len + (end != NULL);
        }
        cpuset_done(&nohz);
        noise_free(inc);
        return 0;
}
