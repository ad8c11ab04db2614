/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What reads of .stats, .control and the per-IRQ files return. */

#include "fakeirq.h"

#include <inttypes.h>
#include <stdio.h>


static void render_stats_line(struct strbuf *b, const char *name, const struct counters *c, bool present) {
        strbuf_printf(b, "%s %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %s\n",
                      name, c->writes, c->failed, c->opens, c->reads,
                      present ? "present" : "vanished");
}

void render_stats(struct fakeirq *st, struct strbuf *b) {
        strbuf_printf(b, "# irq writes failed opens reads state\n");
        render_stats_line(b, "default_smp_affinity", &st->default_stats, true);
        for (unsigned i = 0; i < st->irq_capacity; i++) {
                char name[16];

                if (!st->irqs[i])
                        continue;
                snprintf(name, sizeof(name), "%u", i);
                render_stats_line(b, name, &st->irqs[i]->stats, st->irqs[i]->present);
        }
}

/* "LABEL LIST": the IRQs for which @pick holds (built in irq_scratch). */
static void render_irq_set(struct fakeirq *st, struct strbuf *b, const char *label,
                           bool (*pick)(const struct fake_irq *irq)) {
        bitmap_zero(st->irq_scratch, FAKEIRQ_IRQ_LIMIT);
        for (unsigned i = 0; i < st->irq_capacity; i++)
                if (st->irqs[i] && pick(st->irqs[i]))
                        bit_set(st->irq_scratch, i);
        strbuf_printf(b, "%s", label);
        if (bitmap_next(st->irq_scratch, FAKEIRQ_IRQ_LIMIT, 0) < FAKEIRQ_IRQ_LIMIT) {
                strbuf_printf(b, " ");
                strbuf_put_mask_list(b, st->irq_scratch, FAKEIRQ_IRQ_LIMIT);
        }
        strbuf_printf(b, "\n");
}

static bool irq_is_present(const struct fake_irq *irq) {
        return irq->present;
}

static bool irq_is_managed(const struct fake_irq *irq) {
        return irq->present && irq->managed;
}

static bool irq_is_vanished(const struct fake_irq *irq) {
        return !irq->present;
}

static bool irq_vanishes_after_read(const struct fake_irq *irq) {
        return irq->present && irq->vanish_after_read;
}

static bool irq_has_fault(const struct fake_irq *irq) {
        return irq->present && irq->fail_errno != 0;
}

void render_control(struct fakeirq *st, struct strbuf *b) {
        strbuf_printf(b, "cpus %u\nonline ", st->nr_cpus);
        strbuf_put_mask_list(b, st->online, st->nr_cpus);
        strbuf_printf(b, "\ndefault-affinity ");
        strbuf_put_mask_list(b, st->default_affinity, st->nr_cpus);
        strbuf_printf(b, "\nmanaged-abi %s\n", st->abi == MANAGED_ABI_MODERN ? "modern" : "legacy");
        render_irq_set(st, b, "irqs", irq_is_present);
        render_irq_set(st, b, "managed", irq_is_managed);
        render_irq_set(st, b, "vanish-after-read", irq_vanishes_after_read);
        render_irq_set(st, b, "failing", irq_has_fault);
        render_irq_set(st, b, "vanished", irq_is_vanished);
}

void render_irq_file(struct fakeirq *st, struct fake_irq *irq, enum irq_file file, struct strbuf *b) {
        switch (file) {
        case IRQ_FILE_NODE:
                strbuf_printf(b, "%d\n", irq->node);
                break;
        case IRQ_FILE_SPURIOUS:
                strbuf_printf(b, "count 0\nunhandled 0\nlast_unhandled 0 ms\n");
                break;
        case IRQ_FILE_SMP_AFFINITY:
                strbuf_put_mask_hex(b, irq_affinity(st, irq), st->nr_cpus);
                strbuf_printf(b, "\n");
                break;
        case IRQ_FILE_AFFINITY_HINT:
                strbuf_put_mask_hex(b, irq_hint(st, irq), st->nr_cpus);
                strbuf_printf(b, "\n");
                break;
        case IRQ_FILE_SMP_AFFINITY_LIST:
                strbuf_put_mask_list(b, irq_affinity(st, irq), st->nr_cpus);
                strbuf_printf(b, "\n");
                break;
        case IRQ_FILE_EFFECTIVE_AFFINITY:
                strbuf_put_mask_hex(b, irq_effective(st, irq), st->nr_cpus);
                strbuf_printf(b, "\n");
                break;
        case IRQ_FILE_EFFECTIVE_AFFINITY_LIST:
                strbuf_put_mask_list(b, irq_effective(st, irq), st->nr_cpus);
                strbuf_printf(b, "\n");
                break;
        case IRQ_FILE_COUNT:
        case IRQ_ATTR_COUNT:
                break;
        }
}
