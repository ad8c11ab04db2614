/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The fake /proc/irq's state: IRQs appearing and vanishing, their masks and modes,
 * and the log lines every part writes. */

#include "fakeirq.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const irq_file_names[IRQ_FILE_COUNT] = {
        [IRQ_FILE_NODE] = "node",
        [IRQ_FILE_SPURIOUS] = "spurious",
        [IRQ_FILE_SMP_AFFINITY] = "smp_affinity",
        [IRQ_FILE_AFFINITY_HINT] = "affinity_hint",
        [IRQ_FILE_SMP_AFFINITY_LIST] = "smp_affinity_list",
        [IRQ_FILE_EFFECTIVE_AFFINITY] = "effective_affinity",
        [IRQ_FILE_EFFECTIVE_AFFINITY_LIST] = "effective_affinity_list",
};

uint32_t *irq_affinity(const struct fakeirq *st UNUSED, struct fake_irq *irq) {
        return irq->masks;
}

uint32_t *irq_effective(const struct fakeirq *st, struct fake_irq *irq) {
        return irq->masks + st->mask_words;
}

uint32_t *irq_hint(const struct fakeirq *st, struct fake_irq *irq) {
        return irq->masks + 2 * st->mask_words;
}

PRINTF_LIKE(2, 3)
void log_verbose(const struct fakeirq *st, const char *fmt, ...) {
        va_list ap;

        if (!st->verbose)
                return;
        va_start(ap, fmt);
        fputs("fakeirqfs: ", stderr);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        va_end(ap);
}

PRINTF_LIKE(1, 2)
void log_error(const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        fputs("fakeirqfs: ", stderr);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        va_end(ap);
}

struct fake_irq *irq_find(const struct fakeirq *st, unsigned number) {
        return number < st->irq_capacity ? st->irqs[number] : NULL;
}

struct fake_irq *irq_find_present(const struct fakeirq *st, unsigned number) {
        struct fake_irq *irq = irq_find(st, number);

        return irq && irq->present ? irq : NULL;
}

static mode_t irq_affinity_file_mode(const struct fakeirq *st, bool managed) {
        return managed && st->abi == MANAGED_ABI_MODERN ? 0444 : 0644;
}

void irq_set_managed(struct fakeirq *st, struct fake_irq *irq, bool managed) {
        mode_t mode = irq_affinity_file_mode(st, managed);

        irq->managed = managed;
        irq->attr[IRQ_FILE_SMP_AFFINITY].mode = mode;
        irq->attr[IRQ_FILE_SMP_AFFINITY_LIST].mode = mode;
}

/* Effective affinity as x86 vector allocation picks it for a single-target chip:
 * the first online CPU of the mask; with none, the first online CPU. */
void irq_update_effective(struct fakeirq *st, struct fake_irq *irq) {
        uint32_t *effective = irq_effective(st, irq);
        unsigned cpu = bitmap_next_and(irq_affinity(st, irq), st->online, st->nr_cpus, 0);

        if (cpu >= st->nr_cpus)
                cpu = bitmap_next(st->online, st->nr_cpus, 0);
        bitmap_zero(effective, st->nr_cpus);
        if (cpu < st->nr_cpus)
                bit_set(effective, cpu);
}

/* A new IRQ appears (request_irq()): affinity @affinity or the default. */
int irq_appear(struct fakeirq *st, unsigned number, const uint32_t *affinity) {
        struct fake_irq *irq;

        if (number >= FAKEIRQ_IRQ_LIMIT)
                return -ERANGE;
        if (number >= st->irq_capacity) {
                unsigned capacity = st->irq_capacity ? st->irq_capacity : 64;
                struct fake_irq **irqs;

                while (capacity <= number)
                        capacity *= 2;
                irqs = realloc(st->irqs, capacity * sizeof(*irqs));
                if (!irqs)
                        return -ENOMEM;
                memset(irqs + st->irq_capacity, 0, (capacity - st->irq_capacity) * sizeof(*irqs));
                st->irqs = irqs;
                st->irq_capacity = capacity;
        }

        irq = st->irqs[number];
        if (irq && irq->present)
                return -EEXIST;
        if (!irq) {
                irq = calloc(1, sizeof(*irq) + 3 * st->mask_words * sizeof(uint32_t));
                if (!irq)
                        return -ENOMEM;
                st->irqs[number] = irq;
        }

        irq->number = number;
        irq->present = true;
        st->irqs_present++;
        irq->vanish_after_read = false;
        irq->generation = ++st->next_generation;
        irq->node = st->default_node;
        irq->fail_errno = 0;
        irq->fail_remaining = 0;
        irq->stats = (struct counters) {};
        for (unsigned i = 0; i < IRQ_ATTR_COUNT; i++)
                irq->attr[i] = (struct node_attr) { .mode = 0444 };
        irq->attr[IRQ_ATTR_DIR].mode = 0555;
        irq_set_managed(st, irq, false);
        bitmap_copy(irq_affinity(st, irq), affinity ? affinity : st->default_affinity, st->nr_cpus);
        bitmap_zero(irq_hint(st, irq), st->nr_cpus);
        irq_update_effective(st, irq);
        return 0;
}

void irq_vanish(struct fakeirq *st, struct fake_irq *irq) {
        irq->present = false;
        irq->vanish_after_read = false;
        st->irqs_present--;
        log_verbose(st, "irq %u vanished", irq->number);
}

void open_file_free(struct open_file *f) {
        strbuf_free(&f->snapshot);
        free(f);
}

void fakeirq_free(struct fakeirq *st) {
        if (!st)
                return;
        while (st->open_files) {
                struct open_file *f = st->open_files;

                st->open_files = f->next;
                open_file_free(f);
        }
        for (unsigned i = 0; i < st->irq_capacity; i++)
                free(st->irqs[i]);
        free(st->irqs);
        free(st->online);
        free(st->default_affinity);
        free(st->scratch);
        free(st->irq_scratch);
        free(st);
}
