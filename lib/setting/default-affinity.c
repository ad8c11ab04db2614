/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* irq_default_affinity: /proc/irq/default_smp_affinity, the mask the kernel gives new IRQs,
 * kept to the housekeeping CPUs as a CPU mask compared by its CPUs. */
#include <string.h>

#include "setting/default-affinity.h"
#include "setting/file.h"
#include "setting/table.h"

int setting_new_default_affinity(const Posture *p, Setting **ret) {
        return mask_file_setting_new(SETTING_IRQ_DEFAULT_AFFINITY, strdup("proc/irq/default_smp_affinity"),
                                     "default_smp_affinity", &p->default_affinity, p->mask_bits, ret);
}

static int default_affinity_plan(SettingTable *t, const Host *h, const Posture *p) {
        Setting *s = NULL;
        int r;

        /* With nothing isolated and no explicit default there is nothing to keep new IRQs
         * away from; leave the boot-time irqaffinity= choice alone. */
        if (cpuset_is_empty(&p->isolated) && p->config->default_affinity.kind == CPUS_HOUSEKEEPING)
                return 0;
        r = setting_new_default_affinity(p, &s);
        return r < 0 ? r : table_add(t, s);
}

/* An original is what the file read: a mask of some of this host's CPUs, never none (the
 * kernel refuses an empty default). */
static const char *default_affinity_original_problem(const Setting *s, SettingContext *rc, const char *value) {
        (void) s;
        return setting_cpu_mask_problem(rc, value, false);
}

const SettingVTable irq_default_affinity_vtable = {
        FILE_SETTING_OPS,
        .object_size = sizeof(MaskFileSetting),
        .read = file_setting_read_present,
        .write = file_setting_write,
        .matches = mask_file_setting_matches,
        .original_problem = default_affinity_original_problem,
        .done = mask_file_setting_done,
        .plan = default_affinity_plan,
};
