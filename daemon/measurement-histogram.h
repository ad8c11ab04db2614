/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A measurement's histogram as RecordMeasurementHistogram() takes it and lowlatd keeps it:
 * one CPU's cumulative buckets, and the checks they must pass (pure, unit-tested). */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "measurement-signature.h"

typedef struct MeasuredHistogram {
        uint32_t cpu;
        uint64_t *bounds_ns; /* upper bounds, strictly ascending */
        uint64_t *counts;    /* samples at or below each bound */
        size_t n;
} MeasuredHistogram;

void measured_histogram_done(MeasuredHistogram *h);

/* Why bounds and counts (n_bounds and n_counts of them) cannot be a histogram of a CPU
 * with samples samples, or NULL when they can: one count per bound, at least one and at
 * most MEASUREMENT_HISTOGRAM_MAX_BOUNDS bounds, strictly ascending, counts that never
 * decrease and never exceed samples. */
const char *measured_histogram_check(const uint64_t *bounds_ns, size_t n_bounds, const uint64_t *counts,
                                     size_t n_counts, uint64_t samples);
