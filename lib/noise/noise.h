/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Noise on the watched CPUs: what still interrupts them, counted from /proc/interrupts,
 * /proc/softirqs and /proc/schedstat with persistent fds, and the rate over the last scan
 * interval. Parsing is pure (noise_parse_*); noise_read() is the thin host access. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "host/host.h"
#include "noise/gate.h"
#include "basic/string-table.h"

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
        uint64_t delta;    /* events between the last two scans; noise_cell_rate() per second */
        bool present;      /* the last read had this CPU's column */
        bool has_baseline; /* false until a scan saw it (a CPU that came online, a new row) */
} NoiseCell;

/* The journal alert about one source on one CPU, rate-limited. Apart from the cells: few
 * rows ever alert (a device IRQ on a watched CPU, LOC), and every row has cells. */
typedef struct NoiseAlertState {
        uint64_t alert_usec;       /* when the last one was sent, 0: never */
        uint64_t suppressed;       /* scans with an alert not sent since */
        uint64_t suppressed_count; /* events in them */
} NoiseAlertState;

/* One line of a file: a source, with one cell per watched CPU. */
typedef struct NoiseCounterRow {
        NoiseKind kind;
        char *source;      /* "42", "LOC", "NET_RX", "ctxsw" */
        char *description; /* action names of a device IRQ, the text of an arch line, "" */
        size_t source_len, description_len;
        unsigned generation;
        /* So that a scan touches only the rows that can have moved: touched, a count was
         * set since the last scan; moving, some delta of the last scan was above 0. */
        bool touched, moving;
        NoiseAlertState *alerts; /* Noise.n_cpus of them, NULL until the row's first alert */
        NoiseCell cells[]; /* Noise.n_cpus */
} NoiseCounterRow;

typedef enum NoiseFormat {
        NOISE_FORMAT_INTERRUPTS,
        NOISE_FORMAT_SOFTIRQS,
        NOISE_FORMAT_SCHEDSTAT,
        _NOISE_FORMAT_MAX,
} NoiseFormat;

/* What is kept of a line of the previous read, so that an unchanged line is recognised by
 * its length and hash and not parsed again: not its text, which would be a second copy of
 * the file held between reads. */
typedef struct NoiseLine {
        uint64_t hash;          /* of its bytes and whether a newline ends it (line_hash()) */
        size_t length;          /* without the newline */
        NoiseCounterRow *row;   /* NULL: a line that is no source (ERR:, MIS:, garbage) */
} NoiseLine;

typedef struct NoiseFile {
        NoiseFormat format;
        int fd;           /* -1 until opened */
        bool missing;     /* the file is not there (no /proc/schedstat): not looked for again */
        char *text;       /* what noise_read() reads into, kept for the next read */
        size_t text_size;
        NoiseLine *lines; /* of the last read; the next one overwrites them as it goes */
        size_t n_lines, lines_size;
        int *columns;     /* per watched CPU: its column in the header, -1 when not printed */
        size_t n_columns; /* columns in the header */
        NoiseCounterRow **rows;  /* in file order */
        size_t n_rows;
        uint64_t *scratch; /* one count per header column, while a line is parsed */
        unsigned bad_lines; /* in the last read */
        bool parsed;        /* a read was parsed: rows that appear later are new since then */
        bool duplicates;    /* it named a source twice: parse every line of the next one */
} NoiseFile;

/* Per watched CPU: whether it is nohz_full, and how busy it was (/proc/stat), which the
 * tick alert needs; /proc/stat is read only while a nohz_full CPU ticks too often. */
typedef struct NoiseCpu {
        bool nohz_full;
        uint64_t idle_ticks;     /* idle + iowait, USER_HZ ticks, at the last /proc/stat read */
        unsigned idle_scan;      /* the scan (Noise.scans) of that read, 0: none */
        double busy_share;       /* 1 - idle share over the last scan interval */
        bool busy_known;         /* busy_share covers the last interval */
} NoiseCpu;

typedef struct Noise {
        unsigned *cpus; /* watched, ascending */
        size_t n_cpus;
        NoiseCpu *cpu_state; /* n_cpus */
        unsigned scans;
        int stat_fd;
        char *stat_text;
        size_t stat_size;
        NoiseFile files[_NOISE_FORMAT_MAX];
        unsigned generation;
        bool read_once;
        uint64_t sampled_usec;  /* CLOCK_MONOTONIC of the last read */
        uint64_t scan_usec;     /* of the last scan */
        uint64_t interval_usec; /* between the last two scans, 0 before the second */
        /* With a gate, a scan reads /proc/interrupts only when a watched CPU took an
         * interrupt other than its timer, and at least every NOISE_RESYNC_USEC. */
        NoiseGate *gate;
        uint64_t *gate_timer;   /* n_cpus: timer records of the last drain */
        bool gate_dirty;        /* a record came in during the last full read */
        uint64_t full_usec;     /* CLOCK_MONOTONIC of the last full read */
        uint64_t full_reads;    /* reads of /proc/interrupts */
        uint64_t gated_reads;   /* scans that did without it */
        /* The most of a file read (PROC_INTERRUPTS_MAX; a test may set less). */
        size_t file_max;
        /* Why the last full read could not count (a file too large, unreadable, without a
         * header), in words; NULL when it could. Its counts are then the last good ones. */
        char *unreadable;
} Noise;

/* The longest a gated Noise goes without reading /proc/interrupts: the lines no tracepoint
 * announces (MCE, MCP, PMI, HYP, ...) and LOC are then re-read from the kernel's totals. */
#define NOISE_RESYNC_USEC (60 * USEC_PER_SEC)

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

/* Gives n the gate g (NULL: none), which it then owns and frees. */
void noise_set_gate(Noise *n, NoiseGate *g);

/* The scan's read: with a gate that says the watched CPUs took no interrupt but their timer
 * since the last read (and that read is under NOISE_RESYNC_USEC old), /proc/interrupts is not
 * read: LOC gets the timer's records and only /proc/softirqs and /proc/schedstat are read.
 * Otherwise noise_read(). */
int noise_read_scan(Noise *n, const Host *h, uint64_t now);

/* Takes the counts of the last read as a scan at now: every cell gets its delta and rate
 * over the interval since the previous scan. A count that went backwards (a CPU offline
 * and back, a wrapped counter) or a cell with no baseline gets delta and rate 0, and the
 * count becomes the baseline. */
void noise_scan(Noise *n, uint64_t now);

/* Every row of every file, in order: interrupts, softirqs, schedstat. Returns NULL after
 * the last one; *iterator starts at 0. */
NoiseCounterRow *noise_next_row(const Noise *n, size_t *iterator);

/* A cell's delta over the last scan interval, events per second; 0 before the second scan.
 * Computed, not kept: 8 bytes less in every cell of every row. */
double noise_cell_rate(const Noise *n, const NoiseCell *c);

/* The index of cpu among the watched CPUs, or -1. */
int noise_cpu_index(const Noise *n, unsigned cpu);

/* Marks the watched CPUs that are nohz_full. */
void noise_set_nohz_full(Noise *n, const CPUSet *nohz_full);

/* The idle and iowait times of the watched CPUs in one read of /proc/stat (text, length
 * bytes), taken as of the last scan; with the read of the scan before, each CPU's busy
 * share over that interval. user_hz: the unit of the times (sysconf(_SC_CLK_TCK)). */
int noise_parse_stat(Noise *n, const char *text, size_t length, unsigned long user_hz);

typedef enum NoiseAlertKind {
        NOISE_ALERT_DEVICE_IRQ, /* a device IRQ was serviced on a watched CPU */
        NOISE_ALERT_TICK,       /* a nohz_full CPU running one task ticked more than expected */
        _NOISE_ALERT_KIND_MAX,
} NoiseAlertKind;

typedef struct NoiseAlert {
        NoiseAlertKind kind;
        unsigned cpu;
        const NoiseCounterRow *row;       /* the IRQ's row, or LOC's */
        uint64_t count;            /* events in the last scan interval */
        double rate;               /* per second */
        uint64_t suppressed;       /* alerts like this one not sent since the last one sent */
        uint64_t suppressed_count; /* events in those */
} NoiseAlert;

typedef struct NoiseAlertPolicy {
        uint32_t tick_rate_max;    /* ticks per second; a nohz_full CPU running one task above it alerts */
        uint64_t interval_usec;    /* at most one alert per source and CPU per interval; 0: no alerts */
        double busy_share_min;     /* "runs a task": busy at least this share of the interval */
} NoiseAlertPolicy;

#define NOISE_BUSY_SHARE_MIN 0.9

/* Whether the tick alert needs /proc/stat at this scan: some nohz_full CPU ticked above
 * the limit in the last interval, or did in the interval before (its busy share then
 * needs this read as its end). */
bool noise_wants_stat(const Noise *n, const NoiseAlertPolicy *policy);
/* Reads /proc/stat through a persistent fd and calls noise_parse_stat(). */
int noise_read_stat(Noise *n, const Host *h);

/* After noise_scan() (and noise_read_stat() where wanted): calls handler for each alert
 * due at now. A device IRQ alerts when its count on a watched CPU rose over the interval;
 * the tick alerts when LOC's rate on a nohz_full CPU is above policy->tick_rate_max while
 * the CPU runs a single task: busy (idle and iowait under 1 - busy_share_min of the
 * interval) and, where /proc/schedstat is there, switching tasks no more often than
 * tick_rate_max times a second. Each source on each CPU alerts at most once per
 * policy->interval_usec; the ones held back are counted into the next. */
typedef void (*NoiseAlertHandler)(const NoiseAlert *a, void *userdata);
void noise_check_alerts(Noise *n, const NoiseAlertPolicy *policy, uint64_t now, NoiseAlertHandler handler,
                        void *userdata);
