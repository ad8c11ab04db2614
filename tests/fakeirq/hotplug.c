/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* CPU hotplug: offline migrates the IRQs off the CPU as the kernel does, online
 * starts managed IRQs that were shut down again. */

#include "fakeirq.h"

#include <errno.h>


int cpu_set_offline(struct fakeirq *st, unsigned cpu) {
        if (cpu >= st->nr_cpus)
                return -ERANGE;
        if (!bit_test(st->online, cpu))
                return 0;
        if (bitmap_weight(st->online, st->nr_cpus) == 1)
                return -EBUSY;
        bit_clear(st->online, cpu);

        /* irq_migrate_all_off_this_cpu() */
        for (unsigned i = 0; i < st->irq_capacity; i++) {
                struct fake_irq *irq = st->irqs[i];
                uint32_t *effective;

                if (!irq || !irq->present)
                        continue;
                effective = irq_effective(st, irq);
                if (!bit_test(effective, cpu))
                        continue;
                if (bitmap_intersects(irq_affinity(st, irq), st->online, st->nr_cpus))
                        irq_update_effective(st, irq);
                else if (irq->managed)
                        bitmap_zero(effective, st->nr_cpus);        /* shut down */
                else {
                        bitmap_copy(irq_affinity(st, irq), st->online, st->nr_cpus);
                        irq_update_effective(st, irq);
                }
        }
        return 0;
}

int cpu_set_online(struct fakeirq *st, unsigned cpu) {
        if (cpu >= st->nr_cpus)
                return -ERANGE;
        if (bit_test(st->online, cpu))
                return 0;
        bit_set(st->online, cpu);

        /* managed IRQs shut down for lack of an online CPU start up again */
        for (unsigned i = 0; i < st->irq_capacity; i++) {
                struct fake_irq *irq = st->irqs[i];

                if (irq && irq->present && irq->managed &&
                    bitmap_next(irq_effective(st, irq), st->nr_cpus, 0) >= st->nr_cpus &&
                    bit_test(irq_affinity(st, irq), cpu))
                        irq_update_effective(st, irq);
        }
        return 0;
}
