/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* irq_affinity (lib/setting/irq.c): drift and correction, a lagging effective CPU, observe mode,
 * unmovable IRQs, pins, and the IRQ scan as names come and go. */
#include "setting-fixture.h"
#include "setting/irq.h"
#include "setting/table.h"

static void test_irq_corrected(void) {
        Fixture f;
        Setting *s = NULL, *ok = NULL;

        fixture_init(&f);
        tree_add_irq(&f, 24, "0-3\n");
        tree_add_irq(&f, 25, "1\n");
        if (!CHECK(fixture_start(&f, "[cpus]\nisolated = 2-3\n"), "fixture with CPUs 2-3 isolated"))
                { fixture_done(&f); return; }

        CHECK(setting_new_irq(f.posture, 24, "ACPI:Ged", &s) == 0, "IRQ 24 setting");
        CHECK_STR(s->desired, "0-1", "an unpinned IRQ's desired list is housekeeping");
        CHECK(!setting_irq_is_exact(s), "an unpinned IRQ is not exact");
        CHECK(setting_reconcile(&f.rc, s, T0, 0) == 0, "first reconcile of IRQ 24");
        CHECK_STR(events_take(&f), "drift corrected", "IRQ on isolated CPUs: drift, then corrected");
        CHECK(s->state == SETTING_CORRECTED, "IRQ 24 is corrected");
        CHECK_STR(strstrip((char *) tree_read(&f, "proc/irq/24/smp_affinity_list")), "0-1",
                  "smp_affinity_list now holds the housekeeping list");
        CHECK(f.rc.counters.drift_events == 1 && f.rc.counters.corrections == 1, "counters: one drift, one correction");

        CHECK(setting_reconcile(&f.rc, s, T0 + USEC_PER_SEC, 0) == 0, "second reconcile");
        CHECK_STR(events_take(&f), "", "no change: a second reconcile emits nothing");
        CHECK(setting_reconcile(&f.rc, s, T0 + 2 * USEC_PER_SEC, RECONCILE_FORCE) == 0, "forced reconcile");
        CHECK_STR(events_take(&f), "", "no change: a forced reconcile emits nothing either");
        CHECK(f.rc.counters.corrections == 1, "still one correction");

        CHECK(setting_new_irq(f.posture, 25, NULL, &ok) == 0, "IRQ 25 setting");
        CHECK(setting_reconcile(&f.rc, ok, T0, 0) == 0, "reconcile IRQ 25");
        CHECK_STR(events_take(&f), "", "an unpinned IRQ on a subset of housekeeping is fine");
        CHECK(ok->state == SETTING_OK, "IRQ 25 is ok");
        CHECK_STR(tree_read(&f, "proc/irq/25/smp_affinity_list"), "1\n", "IRQ 25 is not rewritten");

        /* drift again later: logged again, corrected again */
        tree_add_irq(&f, 24, "3\n");
        CHECK(setting_reconcile(&f.rc, s, T0 + 3 * USEC_PER_SEC, 0) == 0, "reconcile after new drift");
        CHECK_STR(events_take(&f), "drift corrected", "a new drift is reported and corrected");
        CHECK_STR(tree_read(&f, "proc/irq/24/smp_affinity_list"), "0-1", "corrected again");

        setting_free(s);
        setting_free(ok);
        fixture_done(&f);
}

/* x86 without interrupt remapping moves the effective CPU only at the IRQ's next
 * interrupt: a quiet IRQ keeps an isolated effective CPU after a good write. That is not
 * drift (the VM e2e run saw such IRQs marked failed after every correction). */
static void test_irq_effective_lags(void) {
        Fixture f;
        Setting *s = NULL;

        fixture_init(&f);
        tree_add_irq(&f, 24, "0-3\n");
        tree_write(&f, "proc/irq/24/effective_affinity_list", "3\n");
        if (!CHECK(fixture_start(&f, "[cpus]\nisolated = 2-3\n"), "fixture with CPUs 2-3 isolated"))
                { fixture_done(&f); return; }
        CHECK(setting_new_irq(f.posture, 24, "ACPI:Ged", &s) == 0, "IRQ 24 setting");
        CHECK(setting_reconcile(&f.rc, s, T0, 0) == 0, "reconcile IRQ 24");
        CHECK_STR(events_take(&f), "drift corrected", "affinity 0-3: drift, corrected although effective is still 3");
        CHECK(s->state == SETTING_CORRECTED, "IRQ 24 is corrected, not failed");
        CHECK_STR(s->observed, "0-1", "observed is the affinity, as the kernel lists it");
        {
                _cleanup_cpuset_ CPUSet effective = CPUSET_EMPTY;
                char buf[128];
                CHECK(setting_irq_effective(s, f.host, &effective) == 0 && cpuset_count(&effective) == 1 &&
                              cpuset_contains(&effective, 3),
                      "the effective CPUs are kept as a CPU set: {3}");
                CHECK_STR(setting_describe_observed(s, &f.rc, buf, sizeof(buf)), "0-1 (effective 3)",
                          "the lagging effective CPU stays visible where people look");
        }
        CHECK(!s->rewritten, "a first correction is not a rewrite of a held value");
        CHECK(setting_reconcile(&f.rc, s, T0 + USEC_PER_SEC, RECONCILE_FORCE) == 0, "forced look");
        CHECK_STR(events_take(&f), "", "and is not drift on the next look");

        tree_add_irq(&f, 24, "2\n");
        CHECK(setting_reconcile(&f.rc, s, T0 + 2 * USEC_PER_SEC, 0) == 0, "someone moves it");
        CHECK_STR(events_take(&f), "drift corrected", "a rewrite of the held value: drift, corrected");
        CHECK(s->rewritten, "and flagged as a rewrite (the IRQ-writer report counts these)");
        setting_free(s);
        fixture_done(&f);
}

static void test_irq_observe(void) {
        Fixture f;
        Setting *s = NULL;

        fixture_init(&f);
        tree_add_irq(&f, 24, "0-3\n");
        if (!CHECK(fixture_start(&f, "[cpus]\nisolated = 2-3\n"), "observe fixture"))
                { fixture_done(&f); return; }
        f.rc.observe = true;
        CHECK(setting_new_irq(f.posture, 24, "ACPI:Ged", &s) == 0, "IRQ 24 setting");
        setting_reconcile(&f.rc, s, T0, 0);
        setting_reconcile(&f.rc, s, T0 + USEC_PER_SEC, 0);
        setting_reconcile(&f.rc, s, T0 + 2 * USEC_PER_SEC, RECONCILE_FORCE);
        CHECK_STR(events_take(&f), "drift", "observe: drift reported once over three passes");
        CHECK(s->state == SETTING_DRIFTED, "observe: IRQ stays drifted");
        CHECK_STR(tree_read(&f, "proc/irq/24/smp_affinity_list"), "0-3\n", "observe: nothing written");
        CHECK(f.rc.counters.corrections == 0, "observe: no corrections counted");
        setting_free(s);
        fixture_done(&f);
}

static void test_irq_unmovable(void) {
        Fixture f;
        Setting *s = NULL;

        fixture_init(&f);
        tree_add_irq(&f, 24, "0-3\n");
        tree_chmod(&f, "proc/irq/24/smp_affinity_list", 0444);
        if (!CHECK(fixture_start(&f, "[cpus]\nisolated = 2-3\n"), "unmovable fixture"))
                { fixture_done(&f); return; }
        CHECK(setting_new_irq(f.posture, 24, "ACPI:Ged", &s) == 0, "IRQ 24 setting");
        CHECK(setting_reconcile(&f.rc, s, T0, 0) == 0, "reconcile a read-only IRQ");
        CHECK(s->state == SETTING_UNMOVABLE, "a 0444 smp_affinity_list makes the IRQ unmovable");
        CHECK(s->reason && *s->reason, "unmovable carries a reason");
        {
                const char *ev = events_take(&f);
                const char *first = strstr(ev, "unmovable");
                if (!CHECK(first && !strstr(first + 1, "unmovable"), "exactly one unmovable event"))
                        printf("#   events: '%s'\n", ev);
        }
        CHECK_STR(tree_read(&f, "proc/irq/24/smp_affinity_list"), "0-3\n", "a read-only IRQ is not written");

        CHECK(setting_reconcile(&f.rc, s, T0 + 20 * USEC_PER_SEC, 0) == 0, "reconcile it again");
        CHECK_STR(events_take(&f), "", "reconciling an unmovable IRQ again reports nothing");
        /* someone (root) moves it: in place, keeping the mode, and without needing root here */
        tree_chmod(&f, "proc/irq/24/smp_affinity_list", 0644);
        tree_write(&f, "proc/irq/24/smp_affinity_list", "1-3\n");
        tree_chmod(&f, "proc/irq/24/smp_affinity_list", 0444);
        CHECK(setting_reconcile(&f.rc, s, T0 + 120 * USEC_PER_SEC, 0) == 0, "reconcile after it moved elsewhere");
        CHECK_STR(events_take(&f), "", "still nothing reported");
        CHECK_STR(tree_read(&f, "proc/irq/24/smp_affinity_list"), "1-3\n", "still not written");
        CHECK(s->state == SETTING_UNMOVABLE, "still unmovable");

        CHECK(setting_reconcile(&f.rc, s, T0 + 200 * USEC_PER_SEC, RECONCILE_FORCE) == 0, "forced reconcile (reload)");
        CHECK_STR(tree_read(&f, "proc/irq/24/smp_affinity_list"), "1-3\n", "a forced pass does not write it either");
        CHECK(s->state == SETTING_UNMOVABLE, "unmovable after a forced pass");
        {
                const char *ev = events_take(&f);
                if (!CHECK(streq(ev, ""), "a forced pass does not report the unmovable IRQ again (reported once)"))
                        printf("#   events: '%s'\n", ev);
        }
        setting_free(s);
        fixture_done(&f);
}

static void test_irq_pin_exact(void) {
        Fixture f;
        Setting *sub = NULL, *super = NULL, *same = NULL, *free_irq = NULL;

        fixture_init(&f);
        tree_add_irq(&f, 131, "0\n");
        tree_add_irq(&f, 132, "0-2\n");
        tree_add_irq(&f, 133, "0-1\n");
        tree_add_irq(&f, 0, "0-3\n");
        if (!CHECK(fixture_start(&f, "[irq]\npin = eth0-TxRx-* 0-1\n"), "pin fixture"))
                { fixture_done(&f); return; }

        CHECK(setting_new_irq(f.posture, 131, "eth0-TxRx-0", &sub) == 0, "IRQ 131 setting");
        CHECK(setting_irq_is_exact(sub), "a pinned IRQ is exact");
        CHECK_STR(sub->desired, "0-1", "a pinned IRQ's desired list is its pin");
        setting_reconcile(&f.rc, sub, T0, 0);
        CHECK_STR(events_take(&f), "drift corrected", "a pinned IRQ on a subset of its pin is drifted");
        CHECK_STR(tree_read(&f, "proc/irq/131/smp_affinity_list"), "0-1", "the pin is written");

        CHECK(setting_new_irq(f.posture, 132, "eth0-TxRx-1", &super) == 0, "IRQ 132 setting");
        setting_reconcile(&f.rc, super, T0, 0);
        CHECK_STR(events_take(&f), "drift corrected", "a pinned IRQ on a superset of its pin is drifted");

        CHECK(setting_new_irq(f.posture, 133, "eth0-TxRx-2", &same) == 0, "IRQ 133 setting");
        setting_reconcile(&f.rc, same, T0, 0);
        CHECK_STR(events_take(&f), "", "a pinned IRQ on exactly its pin is ok");

        CHECK(setting_new_irq(f.posture, 0, "timer", &free_irq) == 0, "IRQ 0 setting");
        setting_reconcile(&f.rc, free_irq, T0, 0);
        CHECK_STR(events_take(&f), "", "with nothing isolated an unpinned IRQ is ok anywhere");
        CHECK_STR(tree_read(&f, "proc/irq/0/smp_affinity_list"), "0-3\n", "and is left alone");

        setting_free(sub);
        setting_free(super);
        setting_free(same);
        setting_free(free_irq);
        fixture_done(&f);
}

static void test_table_irq_named_later(void) {
        Fixture f;
        SettingTable t;
        Setting *s;

        fixture_init(&f);
        /* IRQ 140 exists (its descriptor is allocated) but no driver has requested it yet:
         * /proc/interrupts has no line for it. */
        tree_add_irq(&f, 140, "0-3\n");
        if (!CHECK(fixture_start(&f, "[irq]\npin = eth0-TxRx-* 1\n"), "named-later fixture"))
                { fixture_done(&f); return; }
        table_init(&t, NULL);
        CHECK(irq_table_scan(&t, f.host, f.posture) == 1, "scan finds IRQ 140");
        s = table_find(&t, SETTING_IRQ_AFFINITY, "140");
        CHECK(s && !setting_irq_is_exact(s), "IRQ 140 without an action has no pin");

        /* the driver requests it as eth0-TxRx-0 */
        {
                _cleanup_free_ char *text = strdup_printf("%s140:          0          0          0          0  "
                                                          "PCI-MSIX-0000:03:00.0   8-edge      eth0-TxRx-0\n",
                                                          interrupts);
                tree_write(&f, "proc/interrupts", text);
        }
        CHECK(irq_table_scan(&t, f.host, f.posture) == 1, "rescan finds IRQ 140");
        s = table_find(&t, SETTING_IRQ_AFFINITY, "140");
        if (!CHECK(s && setting_irq_is_exact(s) && streq(s->desired, "1"), "an IRQ that gains a matching action name gets its pin"))
                printf("#   label '%s', desired '%s'\n", s && s->label ? s->label : "(null)", s ? s->desired : "?");
        table_reconcile_all(&t, &f.rc, T0, 0);
        CHECK_STR(tree_read(&f, "proc/irq/140/smp_affinity_list"), "1", "and is moved to it");
        events_take(&f);

        /* the driver frees it: back to the unpinned rule */
        tree_write(&f, "proc/interrupts", interrupts);
        CHECK(irq_table_scan(&t, f.host, f.posture) == 1, "scan after the driver freed IRQ 140");
        s = table_find(&t, SETTING_IRQ_AFFINITY, "140");
        CHECK(s && !setting_irq_is_exact(s) && !s->label && streq(s->desired, "0-3"), "an IRQ that loses its name loses its pin");
        table_done(&t);
        fixture_done(&f);
}

static void test_table_without_interrupts_file(void) {
        Fixture f;
        SettingTable t;

        fixture_init(&f);
        tree_add_irq(&f, 7, "0-3\n");
        tree_remove(&f, "proc/interrupts");
        if (!CHECK(fixture_start(&f, "[cpus]\nisolated = 3\n"), "fixture without /proc/interrupts"))
                { fixture_done(&f); return; }
        table_init(&t, NULL);
        CHECK(irq_table_scan(&t, f.host, f.posture) == 1 && t.n == 1, "without pins, /proc/interrupts is not needed");
        table_reconcile_all(&t, &f.rc, T0, 0);
        CHECK_STR(tree_read(&f, "proc/irq/7/smp_affinity_list"), "0-2", "the IRQ is still kept off isolated CPUs");
        table_done(&t);
        fixture_done(&f);
}

int main(void) {
        test_irq_corrected();
        test_irq_effective_lags();
        test_irq_observe();
        test_irq_unmovable();
        test_irq_pin_exact();
        test_table_irq_named_later();
        test_table_without_interrupts_file();
        return tap_finish();
}
