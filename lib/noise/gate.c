/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The noise gate: a perf ring per watched CPU fed by the interrupt-entry tracepoints. */
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "noise/gate.h"
#include "basic/util.h"

/* Where the kernel enters an interrupt handler; the first is the timer, counted apart. All
 * but irq:irq_handler_entry are optional: a kernel (or an architecture) has the ones it has.
 * irq_vectors' are x86's system vectors; ipi:ipi_entry is the generic IPI entry (arm64 and
 * others); nmi:nmi_handler sees NMIs (the watchdog, perf). Only the *_entry events: each
 * interrupt writes one record. */
static const char *const gate_events[] = {
        "irq_vectors/local_timer_entry",
        "irq/irq_handler_entry",
        "irq_vectors/reschedule_entry",
        "irq_vectors/call_function_entry",
        "irq_vectors/call_function_single_entry",
        "irq_vectors/irq_work_entry",
        "irq_vectors/x86_platform_ipi_entry",
        "irq_vectors/thermal_apic_entry",
        "irq_vectors/threshold_apic_entry",
        "irq_vectors/deferred_error_apic_entry",
        "irq_vectors/error_apic_entry",
        "irq_vectors/spurious_apic_entry",
        "ipi/ipi_entry",
        "nmi/nmi_handler",
};
#define GATE_TIMER_EVENT 0
#define GATE_REQUIRED_EVENT 1

/* The tracepoint's id, from tracefs where it is mounted (or under debugfs). */
static int tracepoint_id(const Host *h, const char *event, uint64_t *ret) {
        static const char *const roots[] = { "sys/kernel/tracing", "sys/kernel/debug/tracing" };
        int r = -ENOENT;

        for (size_t i = 0; i < ELEMENTSOF(roots); i++) {
                _cleanup_free_ char *path = strdup_printf("%s/events/%s/id", roots[i], event), *text = NULL;
                if (!path)
                        return -ENOMEM;
                r = host_read_file(h, path, &text);
                if (r == -ENOENT || r == -ENOTDIR)
                        continue;
                if (r < 0)
                        return r;
                return parse_uint64(strstrip(text), ret) < 0 || *ret == 0 ? -EBADMSG : 0;
        }
        return r;
}

static int perf_open(uint64_t id, unsigned cpu, uint64_t data_size) {
        struct perf_event_attr a = {
                .type = PERF_TYPE_TRACEPOINT,
                .size = sizeof(a),
                .config = id,
                .sample_period = 1,
                .sample_type = PERF_SAMPLE_IDENTIFIER,
                /* Wake a reader only when a whole ring's worth was written: nobody polls,
                 * and each wakeup is an IRQ work on the watched CPU. */
                .watermark = 1,
                .wakeup_watermark = (uint32_t) data_size,
        };
        long fd = syscall(SYS_perf_event_open, &a, -1, (int) cpu, -1, PERF_FLAG_FD_CLOEXEC);

        return fd < 0 ? negative_errno() : (int) fd;
}

static void ring_done(NoiseGateRing *r) {
        if (r->map)
                munmap(r->map, r->map_size);
        for (size_t i = 0; i < r->n_fds; i++)
                safe_close(r->fds[i]);
        free(r->fds);
        free(r->ids);
        *r = (NoiseGateRing) {};
}

NoiseGate *noise_gate_free(NoiseGate *g) {
        if (!g)
                return NULL;
        for (size_t i = 0; i < g->n_rings; i++)
                ring_done(&g->rings[i]);
        free(g->rings);
        free(g);
        return NULL;
}

/* One CPU's ring: every event that has an id, the first mapped, the others writing into it. */
static int ring_open(NoiseGateRing *r, unsigned cpu, const uint64_t *ids, size_t n_ids, const char **ret_event) {
        size_t page = (size_t) sysconf(_SC_PAGESIZE), data_size = page * NOISE_GATE_RING_PAGES;

        r->cpu = cpu;
        r->fds = malloc(n_ids * sizeof(int));
        r->ids = calloc(n_ids, sizeof(uint64_t));
        if (!r->fds || !r->ids)
                return -ENOMEM;
        for (size_t e = 0; e < n_ids; e++) {
                int fd;
                if (ids[e] == 0)
                        continue;
                *ret_event = gate_events[e];
                fd = perf_open(ids[e], cpu, data_size);
                if (fd < 0)
                        return fd;
                r->fds[r->n_fds] = fd;
                if (ioctl(fd, PERF_EVENT_IOC_ID, &r->ids[r->n_fds]) < 0) {
                        r->n_fds++;
                        return negative_errno();
                }
                if (e == GATE_TIMER_EVENT)
                        r->timer_id = r->ids[r->n_fds];
                r->n_fds++;
                if (r->n_fds == 1) {
                        r->map_size = page + data_size;
                        r->map = mmap(NULL, r->map_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
                        if (r->map == MAP_FAILED) {
                                r->map = NULL;
                                return negative_errno();
                        }
                } else if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, r->fds[0]) < 0)
                        return negative_errno();
        }
        return 0;
}

int noise_gate_open(const Host *h, const unsigned *cpus, size_t n, NoiseGate **ret, const char **ret_event) {
        _cleanup_(noise_gate_freep) NoiseGate *g = calloc(1, sizeof(NoiseGate));
        uint64_t ids[ELEMENTSOF(gate_events)] = {};
        int r;

        if (!g)
                return -ENOMEM;
        *ret_event = NULL;
        for (size_t e = 0; e < ELEMENTSOF(gate_events); e++) {
                *ret_event = gate_events[e];
                r = tracepoint_id(h, gate_events[e], &ids[e]);
                if (r == -ENOMEM || (r < 0 && e == GATE_REQUIRED_EVENT))
                        return r;
                if (r >= 0)
                        g->n_events++;
        }
        g->has_timer = ids[GATE_TIMER_EVENT] != 0;
        g->rings = calloc(MAX(n, (size_t) 1), sizeof(NoiseGateRing));
        if (!g->rings)
                return -ENOMEM;
        g->n_rings = n;
        for (size_t i = 0; i < n; i++) {
                r = ring_open(&g->rings[i], cpus[i], ids, ELEMENTSOF(ids), ret_event);
                if (r == -ENODEV) { /* offline: counted at full reads */
                        ring_done(&g->rings[i]);
                        g->rings[i].cpu = cpus[i];
                        continue;
                }
                if (r < 0)
                        return r;
        }
        *ret_event = NULL;
        *ret = TAKE_PTR(g);
        return 0;
}

int noise_gate_new_in_memory(size_t n, uint64_t timer_id, NoiseGate **ret) {
        _cleanup_(noise_gate_freep) NoiseGate *g = calloc(1, sizeof(NoiseGate));
        size_t page = (size_t) sysconf(_SC_PAGESIZE);

        if (!g || !(g->rings = calloc(MAX(n, (size_t) 1), sizeof(NoiseGateRing))))
                return -ENOMEM;
        g->n_rings = n;
        g->has_timer = timer_id != 0;
        for (size_t i = 0; i < n; i++) {
                NoiseGateRing *r = &g->rings[i];
                r->map_size = page * (1 + NOISE_GATE_RING_PAGES);
                r->map = mmap(NULL, r->map_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
                if (r->map == MAP_FAILED) {
                        r->map = NULL;
                        return negative_errno();
                }
                r->timer_id = timer_id;
        }
        *ret = TAKE_PTR(g);
        return 0;
}

/* Copies len bytes at offset off of the circular data area (size a power of two). */
static void ring_copy(void *dst, const uint8_t *data, uint64_t size, uint64_t off, size_t len) {
        uint64_t at = off & (size - 1);
        size_t first = (size_t) MIN((uint64_t) len, size - at);

        memcpy(dst, data + at, first);
        memcpy((uint8_t *) dst + first, data, len - first);
}

bool noise_gate_consume(void *page, const void *data, uint64_t data_size, uint64_t timer_id, uint64_t *timer) {
        struct perf_event_mmap_page *pg = page;
        /* Acquire: the records up to data_head are written before it is (the kernel's
         * smp_store_release in perf_output_put_handle). */
        uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
        uint64_t tail = pg->data_tail;
        bool other = false;

        /* A head behind the tail or more than a ring ahead is no state the kernel makes. */
        if (head < tail || head - tail > data_size) {
                other = true;
                tail = head;
        }
        while (tail < head) {
                struct perf_event_header hdr;
                uint64_t id;
                if (head - tail < sizeof(hdr)) {
                        other = true;
                        break;
                }
                ring_copy(&hdr, data, data_size, tail, sizeof(hdr));
                if (hdr.size < sizeof(hdr) || hdr.size > head - tail) {
                        other = true;
                        break;
                }
                if (hdr.type == PERF_RECORD_SAMPLE && hdr.size >= sizeof(hdr) + sizeof(id) && timer_id != 0) {
                        ring_copy(&id, data, data_size, tail + sizeof(hdr), sizeof(id));
                        if (id == timer_id)
                                (*timer)++;
                        else
                                other = true;
                } else
                        other = true; /* another interrupt, or PERF_RECORD_LOST, THROTTLE */
                tail += hdr.size;
        }
        /* Release: the records are read before the kernel may write over them. */
        __atomic_store_n(&pg->data_tail, head, __ATOMIC_RELEASE);
        return other;
}

bool noise_gate_drain(NoiseGate *g, uint64_t *timer) {
        size_t page = (size_t) sysconf(_SC_PAGESIZE);
        bool other = false;

        for (size_t i = 0; i < g->n_rings; i++) {
                NoiseGateRing *r = &g->rings[i];
                timer[i] = 0;
                if (!r->map)
                        continue;
                other |= noise_gate_consume(r->map, (const uint8_t *) r->map + page, r->map_size - page, r->timer_id,
                                            &timer[i]);
        }
        return other;
}
