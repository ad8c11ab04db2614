/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The checks of a measurement's histogram (measurement-histogram.h). A root client sends
 * it, but a confused one must not make monitoring show buckets that are not a histogram:
 * Prometheus' histogram_quantile() takes whatever it is given and answers nonsense. */
#include <stdlib.h>

#include "measurement-histogram.h"
#include "basic/macro.h"

void measured_histogram_done(MeasuredHistogram *h) {
        h->bounds_ns = mfree(h->bounds_ns);
        h->counts = mfree(h->counts);
        h->n = 0;
}

const char *measured_histogram_check(const uint64_t *bounds_ns, size_t n_bounds, const uint64_t *counts,
                                     size_t n_counts, uint64_t samples) {
        if (n_bounds != n_counts)
                return "not one count per bound";
        if (n_bounds == 0)
                return "no bucket";
        if (n_bounds > MEASUREMENT_HISTOGRAM_MAX_BOUNDS)
                return "too many buckets";
        for (size_t i = 1; i < n_bounds; i++) {
                if (bounds_ns[i] <= bounds_ns[i - 1])
                        return "bounds not strictly ascending";
                /* Cumulative: a bucket holds every sample of the ones below it. */
                if (counts[i] < counts[i - 1])
                        return "counts decrease (they are cumulative)";
        }
        if (counts[n_bounds - 1] > samples)
                return "more samples in the buckets than the CPU's measurement has";
        return NULL;
}
