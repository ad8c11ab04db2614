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
