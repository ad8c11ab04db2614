/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Noise on the watched CPUs: what still interrupts them, counted from /proc/interrupts,
 * /proc/softirqs and /proc/schedstat with persistent fds, and the rate over the last scan
 * interval. Parsing is pure (noise_parse_*); noise_read() is the thin host access. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "host.h"
#include "string-table.h"

typedef enum NoiseKind {
        NOISE_IRQ,     /* a numbered device IRQ line */
        NOISE_TIMER,   /* LOC: the local timer (the tick and hrtimers) */
        NOISE_IPI,     /* every other arch line: RES, CAL, TLB, IWI, NMI, PMI, ... */
        NOISE_SOFTIRQ, /* a /proc/softirqs row */
        NOISE_CTXSW,   /* context switches on the CPU (/proc/schedstat) */
        _NOISE_KIND_MAX,
        _NOISE_KIND_INVALID = -EINVAL,
} NoiseKind;

/* "irq", "timer", "ipi", "softirq", "ctxsw": the bus's, the metrics' and the journal's names. */
DECLARE_STRING_TABLE_LOOKUP(noise_kind, NoiseKind);

/* One counter of one source on one watched CPU. */
typedef struct NoiseCell {
        uint64_t count;    /* as last read, since boot as the kernel reports it */
        uint64_t baseline; /* count at the last scan */
        uint64_t delta;    /* events between the last two scans */
        double rate;       /* delta / interval, events per second */
        bool present;      /* the last read had this CPU's column */
        bool has_baseline; /* false until a scan saw it (a CPU that came online, a new row) */
} NoiseCell;

/* One line of a file: a source, with one cell per watched CPU. */
typedef struct NoiseRow {
        NoiseKind kind;
        char *source;      /* "42", "LOC", "NET_RX", "ctxsw" */
        char *description; /* action names of a device IRQ, the text of an arch line, "" */
        unsigned generation;
        NoiseCell cells[]; /* Noise.n_cpus */
} NoiseRow;

typedef enum NoiseFormat {
        NOISE_FORMAT_INTERRUPTS,
        NOISE_FORMAT_SOFTIRQS,
        NOISE_FORMAT_SCHEDSTAT,
        _NOISE_FORMAT_MAX,
} NoiseFormat;

/* A line of the previous read and the row it updated, so that an unchanged line is
 * recognised by a memcmp() and not parsed again. */
typedef struct NoiseLine {
        size_t offset, length; /* in NoiseFile.previous */
        NoiseRow *row;         /* NULL: a line that is no source (ERR:, MIS:, garbage) */
} NoiseLine;

typedef struct NoiseFile {
        NoiseFormat format;
        int fd;           /* -1 when the file is missing */
        char *text, *previous;
        size_t text_size, previous_length, previous_size;
        NoiseLine *lines;
        size_t n_lines, lines_size;
        int *columns;     /* per watched CPU: its column in the header, -1 when not printed */
        size_t n_columns; /* columns in the header */
        NoiseRow **rows;  /* in file order */
        size_t n_rows;
        uint64_t *scratch; /* one count per header column, while a line is parsed */
        unsigned bad_lines; /* in the last read */
        bool parsed;        /* a read was parsed: rows that appear later are new since then */
} NoiseFile;

typedef struct Noise {
        unsigned *cpus; /* watched, ascending */
        size_t n_cpus;
        NoiseFile files[_NOISE_FORMAT_MAX];
        unsigned generation;
        bool read_once;
        uint64_t sampled_usec;  /* CLOCK_MONOTONIC of the last read */
        uint64_t scan_usec;     /* of the last scan */
        uint64_t interval_usec; /* between the last two scans, 0 before the second */
} Noise;

/* The counters of cpus (n of them; may be 0). No host access yet. */
int noise_new(const unsigned *cpus, size_t n, Noise **ret);
Noise *noise_free(Noise *n);
DEFINE_POINTER_CLEANUP(Noise, noise_free);

/* Parses one read of a file (text, length bytes, need not be NUL-terminated) into the
 * counts. Lines equal to the previous read's are not parsed again. Returns 0, or
 * -EBADMSG when the text has no header naming CPUs (nothing is changed then); lines
 * that cannot be read are skipped and counted in bad_lines. */
int noise_parse(Noise *n, NoiseFormat format, const char *text, size_t length);

/* Reads the three files through persistent fds (pread at offset 0), opened on first use
 * relative to the host's root; a missing file just has no sources. now: CLOCK_MONOTONIC. */
int noise_read(Noise *n, const Host *h, uint64_t now);

/* Takes the counts of the last read as a scan at now: every cell gets its delta and rate
 * over the interval since the previous scan. A count that went backwards (a CPU offline
 * and back, a wrapped counter) or a cell with no baseline gets delta and rate 0, and the
 * count becomes the baseline. */
void noise_scan(Noise *n, uint64_t now);

/* Every row of every file, in order: interrupts, softirqs, schedstat. Returns NULL after
 * the last one; *iterator starts at 0. */
NoiseRow *noise_next_row(const Noise *n, size_t *iterator);

/* The index of cpu among the watched CPUs, or -1. */
int noise_cpu_index(const Noise *n, unsigned cpu);
