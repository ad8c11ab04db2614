/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Writes to smp_affinity, smp_affinity_list and default_smp_affinity, refused in
 * the kernel's order with the kernel's errno. */

#include "fakeirq.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>


/* Copies the written bytes NUL-terminated, as memdup_user_nul() does. */
char *copy_user_buffer(const char *buf, size_t size) {
        char *s = malloc(size + 1);

        if (!s)
                return NULL;
        memcpy(s, buf, size);
        s[size] = '\0';
        return s;
}

/* write_irq_affinity() */
int irq_write_affinity(struct fakeirq *st, struct fake_irq *irq, bool list, const char *text) {
        int e;

        if (irq->managed)
                return st->abi == MANAGED_ABI_MODERN ? -EPERM : -EIO;

        e = list ? kernel_parse_list(text, st->scratch, st->nr_cpus)
                 : kernel_parse_hex(text, st->scratch, st->nr_cpus);
        if (e < 0)
                return e;

        /* Empty or all-offline: irq_select_affinity_usr() refuses on x86. */
        if (!bitmap_intersects(st->scratch, st->online, st->nr_cpus))
                return -EINVAL;

        if (irq->fail_errno != 0 && irq->fail_remaining != 0) {
                if (irq->fail_remaining > 0)
                        irq->fail_remaining--;
                return -irq->fail_errno;
        }

        bitmap_copy(irq_affinity(st, irq), st->scratch, st->nr_cpus);
        irq_update_effective(st, irq);
        return 0;
}

/* default_affinity_write() */
int default_affinity_write(struct fakeirq *st, const char *text) {
        int e = kernel_parse_hex(text, st->scratch, st->nr_cpus);

        if (e < 0)
                return e;
        if (!bitmap_intersects(st->scratch, st->online, st->nr_cpus))
                return -EINVAL;
        bitmap_copy(st->default_affinity, st->scratch, st->nr_cpus);
        return 0;
}
