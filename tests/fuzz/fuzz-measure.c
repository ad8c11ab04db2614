/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fuzzes lowlatctl measure's readers of the tools' reports (lowlatctl/measure.c): cyclictest's
 * histogram file, oslat's summary, rtla timerlat hist's table. The first byte picks the
 * reader (and, for cyclictest, the CPUs the run was given: its low four bits); the rest is
 * the report. Promises checked: no crash or leak on any text; a report that parses has
 * CPUs in ascending order, each once; samples are at least the histogram's counts; a p99
 * from the histogram never above the max when there were samples; the histogram printer
 * copes with what the reader made. */
#include <stdbool.h>

#include "fuzz.h"
#include "measure.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        MeasureResult res = {};
        CPUSet cpus = CPUSET_EMPTY;
        char *text;
        int r;

        if (size < 1)
                return 0;
        text = fuzz_strndup(data + 1, size - 1);
        switch (data[0] % 3) {
        case 0:
                for (unsigned c = 0; c < 4; c++)
                        if ((data[0] >> 2) & (1U << c))
                                FUZZ_CHECK(cpuset_add(&cpus, c * 3) >= 0, "cpuset_add");
                if (cpuset_is_empty(&cpus))
                        FUZZ_CHECK(cpuset_add(&cpus, 1) >= 0, "cpuset_add");
                r = cyclictest_parse(text, &cpus, &res);
                break;
        case 1:
                r = oslat_parse(text, &res);
                break;
        default:
                r = timerlat_parse(text, &res);
        }
        FUZZ_CHECK(r == 0 || r == -EBADMSG || r == -ENOMEM, "unexpected error %d", r);
        if (r == 0) {
                FUZZ_CHECK(res.n > 0, "a report with no CPU parsed");
                for (size_t i = 0; i < res.n; i++) {
                        const LatencyStats *s = &res.cpus[i];
                        uint64_t sum = 0;
                        char *buf = NULL;
                        size_t n = 0;
                        FILE *f;

                        FUZZ_CHECK(i == 0 || res.cpus[i - 1].cpu < s->cpu, "CPUs out of order at %zu", i);
                        for (size_t b = 0; b < s->n_buckets; b++)
                                if (__builtin_add_overflow(sum, s->histogram[b], &sum))
                                        sum = UINT64_MAX;
                        FUZZ_CHECK(s->samples >= sum, "CPU %u: %llu samples, %llu counted",
                                   s->cpu, (unsigned long long) s->samples, (unsigned long long) sum);
                        FUZZ_CHECK(s->samples == 0 || s->p99_ns <= s->max_ns, "CPU %u: p99 %llu > max %llu", s->cpu,
                                   (unsigned long long) s->p99_ns, (unsigned long long) s->max_ns);
                        f = open_memstream(&buf, &n);
                        FUZZ_CHECK(f, "open_memstream");
                        latency_print_histogram(f, s, 12);
                        fclose(f);
                        free(buf);
                }
        }
        measure_result_done(&res);
        cpuset_done(&cpus);
        free(text);
        return 0;
}
