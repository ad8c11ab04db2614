/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The noise gate: tells the scan whether anything but the local timer interrupted a watched
 * CPU since the last look, without reading /proc/interrupts (which the kernel formats whole,
 * IRQs x online CPUs, at each read).
 *
 * Per watched CPU, one perf ring buffer into which the kernel writes a 16-byte record at
 * each entry into an interrupt handler on that CPU: the irq:irq_handler_entry, irq_vectors:
 * *_entry, ipi:ipi_entry and nmi:nmi_handler tracepoints, those this kernel has, opened as
 * CPU-wide perf events with a sample period of 1 and their output redirected into the one
 * ring. Looking at a ring is two loads and a store in memory shared with the kernel: no
 * system call, and no IPI to the watched CPU (read() of a counting perf event bound to
 * another CPU sends one, which is why counting mode is not used). A quiet CPU writes no
 * record, so the check costs the same whatever the host's size. The records of the local
 * timer (irq_vectors:local_timer_entry, x86) are counted instead: LOC rises without a full
 * read, and a nohz_full CPU's residual 1 Hz tick does not open the gate.
 *
 * The cost on the watched CPU: a record per interrupt it takes (the tracepoint and a write
 * into its ring, well under a microsecond), nothing while it is quiet; a wakeup (an IRQ work
 * self-IPI) once per ring's worth of records, never on a CPU taking fewer interrupts between
 * two scans than a ring holds. Lost records (a full ring) open the gate. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "host/host.h"
#include "basic/macro.h"

/* Records a ring holds: 16 bytes each, one data page. A nohz_full CPU running one task takes
 * about one tick a second; a CPU whose tick runs at HZ fills it between two 10 s scans, and
 * the gate is then open at every scan (the full read, as without a gate). */
#define NOISE_GATE_RING_PAGES 1

typedef struct NoiseGateRing {
        unsigned cpu;
        int *fds;        /* the ring's events; fds[0] owns the mapping */
        uint64_t *ids;   /* PERF_EVENT_IOC_ID of each */
        size_t n_fds;
        void *map;       /* the perf_event_mmap_page, then the data pages; NULL: no ring */
        size_t map_size;
        uint64_t timer_id; /* the local timer's event, 0: none */
} NoiseGateRing;

typedef struct NoiseGate {
        NoiseGateRing *rings; /* one per watched CPU, in their order */
        size_t n_rings;
        unsigned n_events;    /* tracepoints opened per CPU */
        bool has_timer;       /* the local timer is counted apart */
} NoiseGate;

/* Opens the rings for cpus (n of them) on the live host h (tracepoint ids under
 * sys/kernel/tracing, or sys/kernel/debug/tracing). A CPU that is offline gets no ring and is
 * counted at full reads only. Returns 0, or -errno: -ENOENT (no tracefs or no
 * irq:irq_handler_entry), -EACCES/-EPERM (no perf for us), -ENOSYS (no perf_event_open);
 * *ret_event then names the tracepoint ("irq/irq_handler_entry") it failed on, if any. */
int noise_gate_open(const Host *h, const unsigned *cpus, size_t n, NoiseGate **ret, const char **ret_event);
NoiseGate *noise_gate_free(NoiseGate *g);

/* A gate of n rings in anonymous memory, laid out as perf's (a header page, then
 * NOISE_GATE_RING_PAGES data pages) and timer_id as the timer's event: for the tests and the
 * benchmark, which write the kernel's side of the records themselves. */
int noise_gate_new_in_memory(size_t n, uint64_t timer_id, NoiseGate **ret);
DEFINE_POINTER_CLEANUP(NoiseGate, noise_gate_free);

/* Empties every ring: timer[i] gets the local timer records of the i-th watched CPU (0 on a
 * CPU with no ring), and the return is whether any other record was there (another
 * interrupt, a lost record). */
bool noise_gate_drain(NoiseGate *g, uint64_t *timer);

/* The ring protocol on one mapping, pure for the tests: consumes the records between
 * data_tail and data_head of page (a struct perf_event_mmap_page) whose data area is
 * data_size bytes (a power of two) at data. Adds the samples of timer_id (0: none) to
 * *timer; returns whether any other record was there. */
bool noise_gate_consume(void *page, const void *data, uint64_t data_size, uint64_t timer_id, uint64_t *timer);
