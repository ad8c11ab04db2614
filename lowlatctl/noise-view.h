/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lowlatctl's view of lowlatd's Noise(): what still reaches the watched CPUs, read off the
 * bus, ranked, and the rates lowlatctl computes itself between two reads (top, measure).
 * Internal to lowlatctl. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <systemd/sd-bus.h>

/* One (cpu, kind, source) of Noise(); the strings point into the sample's reply. */
typedef struct NoiseSource {
        uint32_t cpu;
        const char *kind;
        const char *source;
        const char *description;
        uint64_t count;
        double rate; /* lowlatd's, over its last scan interval */
} NoiseSource;

typedef struct NoiseSample {
        sd_bus_message *reply;
        uint64_t sampled_usec;  /* CLOCK_MONOTONIC of the counters' read */
        uint64_t interval_usec; /* what lowlatd's rates cover; 0 before its second scan */
        NoiseSource *sources;
        size_t n, allocated;
} NoiseSample;

void noise_sample_done(NoiseSample *s);
/* Reads a reply of Noise() (the sample takes a reference on it); -errno, printing nothing. */
int noise_sample_from_reply(sd_bus_message *reply, NoiseSample *ret);
/* Calls Noise(). Prints why before returning -errno. */
int ctl_read_noise(sd_bus *bus, NoiseSample *ret);

/* How lowlatd reads the counters: the NoiseGate, NoiseReads and NoiseCPUs properties. */
typedef struct NoiseReads {
        char *gate;                       /* "perf: ...", "off: why"; NULL: an older lowlatd */
        uint64_t full_reads, gated_reads; /* scans that read /proc/interrupts, that did without */
        char *cpus;                       /* NoiseCPUs, the watched CPUs: "" none; NULL: an older lowlatd */
        char *unreadable;                 /* NoiseUnreadable: why they cannot be counted; "" or NULL: they can */
} NoiseReads;

void noise_reads_done(NoiseReads *g);
/* Reads the properties; a lowlatd without them leaves *ret empty. Never fails the verb. */
void ctl_read_noise_reads(sd_bus *bus, NoiseReads *ret);
void noise_reads_print(FILE *f, const NoiseReads *g);

/* A source as top and measure show it: counted between two samples. */
typedef struct NoiseViewRow {
        uint32_t cpu;
        const char *kind, *source, *description; /* point into the newer sample */
        uint64_t count;                          /* the kernel's total */
        uint64_t delta;                          /* events between the two samples */
        double rate;                             /* delta per second */
        bool is_new;                             /* not in the older view, or its rate went from 0 */
} NoiseViewRow;

typedef struct NoiseView {
        NoiseViewRow *rows;
        size_t n;
        uint64_t elapsed_usec; /* between the two samples; 0 for a first view */
} NoiseView;

void noise_view_done(NoiseView *v);
/* The rows of cur, with what happened since old (NULL: a first sample, every delta and
 * rate 0 and nothing new). previous (NULL or the view made from old) says which sources
 * are new. A counter lower than before (a CPU that went offline and came back, a
 * wrapped counter) starts again from its new value: delta 0, never negative or huge. A
 * source missing from old on a CPU that old had sources for counted from 0; one on a
 * CPU old did not have at all starts from its value. The rows are ranked: by CPU, then
 * rate, then count, highest first. -ENOMEM. */
int noise_view_compute(const NoiseSample *old, const NoiseView *previous, const NoiseSample *cur, NoiseView *ret);

/* lowlatctl noise: lowlatd's totals and rates, ranked by rate. */
/* With no source, g (NULL: none) says whether no CPU is watched or none took any. */
void noise_print_table(FILE *f, const NoiseSample *s, const NoiseReads *g, bool legend);
void noise_print_json(FILE *f, const NoiseSample *s, const NoiseReads *g);
/* "0-1,3": the CPUs that have a row in s, as every CPU list is written; NULL when out of
 * memory. */
char *noise_sample_cpus(const NoiseSample *s);
