/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* irq_default_affinity (setting-default-affinity.c): a mask compared by its CPUs. */
#include "setting/default-affinity.h"
#include "setting-fixture.h"

static void test_default_affinity(void) {
        Fixture f;
        Setting *s = NULL;

        fixture_init(&f);
        if (!CHECK(fixture_start(&f, "[cpus]\nisolated = 2-3\n"), "default affinity fixture"))
                { fixture_done(&f); return; }
        CHECK(setting_new_default_affinity(f.posture, &s) == 0, "default affinity setting");
        CHECK_STR(s->desired, "3", "desired default affinity is the housekeeping mask");
        setting_reconcile(&f.rc, s, T0, 0);
        CHECK_STR(events_take(&f), "drift corrected", "default_smp_affinity f is corrected");
        CHECK_STR(tree_read(&f, "proc/irq/default_smp_affinity"), "3", "default_smp_affinity written as a mask");
        tree_write(&f, "proc/irq/default_smp_affinity", "00000003\n");
        setting_reconcile(&f.rc, s, T0 + USEC_PER_SEC, 0);
        CHECK_STR(events_take(&f), "", "a zero-padded mask with the same CPUs is ok");
        setting_free(s);
        fixture_done(&f);
}

int main(void) {
        test_default_affinity();
        return tap_finish();
}
