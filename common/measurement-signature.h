/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The wire shape of a measurement: what lowlatctl measure sends to RecordMeasurement and
 * reads back from the LastMeasurement property, and what lowlatd checks and serves. */
#pragma once

/* The signature both sides use: tool, wall-clock start (µs), duration (µs), per CPU
 * (cpu, samples, min, avg, p99, max in ns, overflows, p99 beyond the histogram), and the
 * noise counted on those CPUs during the run (cpu, kind, source, description, count). */
#define MEASUREMENT_CPU_SIGNATURE "(uttttttb)"
#define MEASUREMENT_NOISE_SIGNATURE "(ussst)"
#define MEASUREMENT_SIGNATURE "stta" MEASUREMENT_CPU_SIGNATURE "a" MEASUREMENT_NOISE_SIGNATURE

/* The histogram of a measurement, recorded after it (RecordMeasurementHistogram) and read
 * back (LastMeasurementHistogram): per CPU (cpu, upper bounds in ns, strictly ascending,
 * and the samples at or below each bound, so never decreasing). Cumulative as Prometheus
 * keeps a histogram, so that a bound lowlatctl cannot vouch for is simply left out; the
 * samples above the last bound are the CPU's samples less the last count. */
#define MEASUREMENT_HISTOGRAM_CPU_SIGNATURE "(uatat)"
/* The property: the start (µs) of the measurement it belongs to (0: none kept), and the
 * rows. A reader of both properties compares the start with LastMeasurement's. */
#define MEASUREMENT_HISTOGRAM_SIGNATURE "ta" MEASUREMENT_HISTOGRAM_CPU_SIGNATURE
/* Bounds a CPU may have: what monitoring can carry per CPU (a series each), with room
 * over the few tens lowlatctl sends. */
#define MEASUREMENT_HISTOGRAM_MAX_BOUNDS 64U
