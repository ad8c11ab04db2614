/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A measurement's histogram as monitoring keeps it (measure.h, MeasureBuckets): the tool's
 * narrow buckets (1 µs, or 1 ns from rtla -n) folded into a fixed, short list of bounds.
 * Pure: unit-tested in tests/unit/test-measure.c. */
#include "basic/macro.h"
#include "basic/util.h"
#include "measure.h"

/* About 1.5× apart, from the tools' 1 µs resolution to 10 ms: histogram_quantile()
 * interpolates within a bucket, so a step of 1.5 keeps its guess within a third of the
 * truth, and 21 bounds (22 series with +Inf) per CPU keep a fleet's series count down.
 * The same list for every tool and run, so that a series does not come and go with the
 * tool's own bucket width. */
const uint64_t measure_bucket_bounds_ns[MEASURE_BUCKETS] = {
        1000,   2000,   3000,   5000,    7000,    10000,   15000,   20000,  30000,  50000,   70000,
        100000, 150000, 200000, 300000, 500000, 700000, 1000000, 2000000, 5000000, 10000000,
};

void latency_stats_buckets(const LatencyStats *s, MeasureBuckets *ret) {
        uint64_t reach_ns, below = 0, in_histogram;
        size_t next = 0;

        *ret = (MeasureBuckets) {};
        if (s->bucket_ns == 0)
                return;
        reach_ns = s->n_buckets > UINT64_MAX / s->bucket_ns ? UINT64_MAX : s->n_buckets * s->bucket_ns;
        in_histogram = s->overflows;
        for (size_t i = 0; i < s->n_buckets; i++)
                in_histogram = add_saturating(in_histogram, s->histogram[i]);

        for (size_t k = 0; k < MEASURE_BUCKETS; k++) {
                uint64_t bound = measure_bucket_bounds_ns[k], count;

                if (bound >= s->max_ns && s->samples > 0)
                        /* Every sample is at or below the max, whatever the tool's reach. */
                        count = s->samples;
                else if (bound <= reach_ns && bound % s->bucket_ns == 0) {
                        /* The tool's buckets below bound: bucket i holds [i, i+1) × width,
                         * so these are the samples below it. */
                        for (; next < bound / s->bucket_ns; next++)
                                below = add_saturating(below, s->histogram[next]);
                        count = below;
                } else if (bound > reach_ns && s->overflows == 0)
                        count = in_histogram;
                else
                        /* Beyond the tool's reach with samples out there, or between two of
                         * its buckets: how many lie below is not known, and a guessed count
                         * would be a histogram that lies. Left out. */
                        continue;
                ret->bounds_ns[ret->n] = bound;
                /* A count above the one before would only come from a report whose
                 * figures disagree (a max below its histogram's last bucket): keep the
                 * buckets cumulative, as RecordMeasurementHistogram() wants them. */
                ret->counts[ret->n] = ret->n > 0 ? MAX(count, ret->counts[ret->n - 1]) : count;
                ret->n++;
        }
        /* Never more than the CPU's samples, which the +Inf bucket counts. */
        for (size_t k = 0; k < ret->n; k++)
                ret->counts[k] = MIN(ret->counts[k], MAX(s->samples, in_histogram));
}
