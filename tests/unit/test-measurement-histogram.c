/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* daemon/measurement-histogram.c: what RecordMeasurementHistogram() refuses (InvalidArgs
 * with the reason given here) and what it takes. */
#include <stdio.h>

#include "basic/macro.h"
#include "measurement-histogram.h"
#include "tap.h"

static void test_check(void) {
        const uint64_t bounds[] = { 1000, 2000, 5000 }, counts[] = { 0, 990, 1000 };
        const uint64_t unsorted[] = { 1000, 5000, 2000 }, twice[] = { 1000, 1000, 5000 };
        const uint64_t decreasing[] = { 10, 990, 900 };
        uint64_t many[MEASUREMENT_HISTOGRAM_MAX_BOUNDS + 1], flat[MEASUREMENT_HISTOGRAM_MAX_BOUNDS + 1] = {};
        const char *why;

        for (size_t i = 0; i < ELEMENTSOF(many); i++)
                many[i] = (i + 1) * 1000;

        CHECK(!measured_histogram_check(bounds, 3, counts, 3, 1000), "ascending bounds, cumulative counts: taken");
        CHECK(!measured_histogram_check(bounds, 3, counts, 3, 1005), "fewer in the buckets than samples: taken");
        CHECK(!measured_histogram_check(many, MEASUREMENT_HISTOGRAM_MAX_BOUNDS, flat, MEASUREMENT_HISTOGRAM_MAX_BOUNDS,
                                        0),
              "the most bounds there may be: taken");
        why = measured_histogram_check(bounds, 3, counts, 2, 1000);
        CHECK(why && strstr(why, "one count per bound"), "two counts for three bounds: refused");
        why = measured_histogram_check(bounds, 0, counts, 0, 1000);
        CHECK(why && strstr(why, "no bucket"), "no bucket: refused");
        why = measured_histogram_check(many, ELEMENTSOF(many), flat, ELEMENTSOF(flat), 0);
        CHECK(why && strstr(why, "too many"), "one bound more than MEASUREMENT_HISTOGRAM_MAX_BOUNDS: refused");
        why = measured_histogram_check(unsorted, 3, counts, 3, 1000);
        CHECK(why && strstr(why, "ascending"), "unsorted bounds: refused");
        why = measured_histogram_check(twice, 3, counts, 3, 1000);
        CHECK(why && strstr(why, "ascending"), "a bound twice: refused");
        why = measured_histogram_check(bounds, 3, decreasing, 3, 1000);
        CHECK(why && strstr(why, "decrease"), "counts that decrease (not cumulative): refused");
        why = measured_histogram_check(bounds, 3, counts, 3, 999);
        CHECK(why && strstr(why, "more samples"), "more in the buckets than the CPU's samples: refused");
}

int main(void) {
        test_check();
        return tap_finish();
}
