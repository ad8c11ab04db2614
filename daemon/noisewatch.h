/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The noise counters of the posture's noise CPUs, read at every scan, and the gate that
 * spares the scan /proc/interrupts while those CPUs take nothing but their timer. */
#pragma once

#include "noise/noise.h"
#include "source.h"

extern const SourceVTable noisewatch_vtable;

/* The counters as the last scan read them; NULL until the first pass. */
const Noise *noisewatch_noise(const Source *s);
/* The counters re-read for a reader (the bus), unless the last read is younger than
 * NOISE_REFRESH_USEC. NULL when they cannot be had. */
#define NOISE_REFRESH_USEC (100 * USEC_PER_MSEC)
const Noise *noisewatch_refresh(Source *s);
/* "perf: ..." or "off: why"; NULL with no watched CPU. */
const char *noisewatch_gate_state(const Source *s);
