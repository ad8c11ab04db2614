/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lowlatctl measure's pure half: which tool, its command line, and its report parsed into
 * per-CPU latency figures with a histogram (p99 from the histogram). No I/O. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "basic/cpuset.h"
#include "measure-tool.h"

/* The histogram's width: latencies up to this many µs get a bucket of their own, the rest
 * count as overflows. */
#define MEASURE_HISTOGRAM_USEC 1000U
/* cyclictest's and rtla's SCHED_FIFO priority: above every IRQ thread (50) on a
 * PREEMPT_RT kernel, as the rt-tests documentation runs it. */
#define MEASURE_PRIORITY 95U

typedef struct LatencyStats {
        uint32_t cpu;
        uint64_t samples; /* overflows included */
        uint64_t min_ns, avg_ns, p99_ns, max_ns;
        uint64_t overflows;     /* samples beyond the histogram */
        bool p99_over;          /* the p99 is among the overflows: p99_ns is a lower bound */
        uint64_t bucket_ns;     /* width of a bucket */
        uint64_t *histogram;    /* counts of bucket i: latencies in [i, i+1) × bucket_ns */
        size_t n_buckets;       /* up to the last non-empty bucket */
} LatencyStats;

typedef struct MeasureResult {
        MeasureTool tool;
        LatencyStats *cpus; /* in CPU order */
        size_t n;
        /* How long the tool measured, by its own account: oslat's "Duration:" (which leaves
         * out its one second of pre-heat), or the most samples of a CPU times the wake-up
         * interval (cyclictest, timerlat). 0 when the report does not say. */
        uint64_t measured_usec;
} MeasureResult;

/* The wake-up interval of cyclictest (--interval) and rtla timerlat (its default --period),
 * in µs: one sample each. */
#define MEASURE_INTERVAL_USEC 1000U

void measure_result_done(MeasureResult *r);

/* The command line to run tool on cpus for duration_sec seconds, NULL-terminated, or
 * NULL when out of memory. cyclictest gets --laptop: it would otherwise hold
 * /dev/cpu_dma_latency at 0 for the run, a power-management posture the host may not
 * have (see lowlatctl(1), measure). histfile: where cyclictest writes its histogram. */
char **measure_tool_argv(MeasureTool tool, const CPUSet *cpus, unsigned duration_sec, const char *histfile);
char **strv_free_all(char **l);

/* The reports. cpus: the CPUs the run was given (cyclictest's report numbers threads, one
 * per CPU in ascending order). 0, or -EBADMSG for a report that is not what the tool
 * writes (or misses a CPU), -ENOMEM. */
int cyclictest_parse(const char *text, const CPUSet *cpus, MeasureResult *ret);
int oslat_parse(const char *text, MeasureResult *ret);
int timerlat_parse(const char *text, MeasureResult *ret);

/* The p99 of a histogram of buckets counts plus overflows: the first bucket at which 99%
 * of the samples are reached; *ret_over when it lies among the overflows. Returns the
 * bucket index (n_buckets when over). */
size_t histogram_p99(const uint64_t *buckets, size_t n_buckets, uint64_t overflows, bool *ret_over);

/* Whether a CPU's max is "high": above twice its p99 and at least 10 µs over it — a
 * spike rather than the body of the distribution, worth the noise counted beside it. */
bool latency_max_is_high(const LatencyStats *s);

/* The histogram of s for monitoring (measure-buckets.c): the samples below each of
 * measure_bucket_bounds_ns, cumulative, the bounds it cannot vouch for left out (beyond
 * the tool's reach while samples lie beyond it). */
#define MEASURE_BUCKETS 21U
extern const uint64_t measure_bucket_bounds_ns[MEASURE_BUCKETS];

typedef struct MeasureBuckets {
        uint64_t bounds_ns[MEASURE_BUCKETS];
        uint64_t counts[MEASURE_BUCKETS]; /* samples below the bound */
        size_t n;
} MeasureBuckets;

void latency_stats_buckets(const LatencyStats *s, MeasureBuckets *ret);

/* Prints the histogram of s as rows "  <from>-<to> us  count  bar", folded into at most
 * rows lines. */
void latency_print_histogram(FILE *f, const LatencyStats *s, size_t rows);
