/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The setting table (table.c): planning, the scan's hooks and order, and the per-state
 * counts kept in step, also after a move. */
#include "setting-fixture.h"
#include "setting/irq.h"
#include "setting/table.h"

typedef struct HookCounts {
        unsigned added, removed;
} HookCounts;

static void hook_added(void *userdata, Setting *s) {
        ((HookCounts *) userdata)->added++;
}

static void hook_removed(void *userdata, Setting *s) {
        ((HookCounts *) userdata)->removed++;
}

static void test_table_scan(void) {
        Fixture f;
        HookCounts counts = {};
        SettingTableHooks hooks = { hook_added, hook_removed, &counts };
        SettingTable t;
        Setting *s;

        fixture_init(&f);
        tree_add_irq(&f, 0, "0-3\n");
        tree_add_irq(&f, 24, "0-1\n");
        tree_add_irq(&f, 131, "0-3\n");
        if (!CHECK(fixture_start(&f, "[cpus]\nisolated = 2-3\n[irq]\npin = eth0-TxRx-* 0\n"
                                     "[sysctl]\nnet.core.somaxconn = 4096\n"),
                   "table fixture"))
                { fixture_done(&f); return; }

        table_init(&t, &hooks);
        CHECK(table_plan(&t, f.host, f.posture) == 0 && table_find(&t, SETTING_IRQ_DEFAULT_AFFINITY, "default_smp_affinity") &&
                      table_find(&t, SETTING_SYSCTL, "net.core.somaxconn"),
              "plan: default affinity and one sysctl");
        CHECK(irq_table_scan(&t, f.host, f.posture) == 3, "scan finds three IRQs");
        CHECK(t.n == 5 && counts.added == 5, "five settings");
        s = table_find(&t, SETTING_IRQ_AFFINITY, "131");
        CHECK(s && setting_irq_is_exact(s) && streq_ptr(s->label, "eth0-TxRx-0") && streq(s->desired, "0"),
              "IRQ 131 is named from /proc/interrupts and pinned");
        s = table_find(&t, SETTING_IRQ_AFFINITY, "24");
        CHECK(s && !setting_irq_is_exact(s) && streq_ptr(s->label, "ACPI:Ged") && streq(s->desired, "0-1"), "IRQ 24 unpinned");
        CHECK(table_find(&t, SETTING_IRQ_AFFINITY, "131") && table_find(&t, SETTING_IRQ_AFFINITY, "24") &&
                      table_find(&t, SETTING_IRQ_AFFINITY, "0") && !table_find(&t, SETTING_SYSCTL, "131"),
              "IRQs indexed by kind and number");
        CHECK(t.n == 5 && t.settings[0]->kind != SETTING_IRQ_AFFINITY && t.settings[1]->kind != SETTING_IRQ_AFFINITY &&
                      streq(t.settings[2]->object, "0") && streq(t.settings[3]->object, "24") &&
                      streq(t.settings[4]->object, "131"),
              "static settings first, then IRQs in numeric order");

        table_reconcile_all(&t, &f.rc, T0, 0);
        CHECK_STR(tree_read(&f, "proc/irq/131/smp_affinity_list"), "0", "the pinned IRQ is moved by a full pass");
        events_take(&f);

        tree_add_irq(&f, 200, "0-3\n");
        tree_remove(&f, "proc/irq/24");
        CHECK(irq_table_scan(&t, f.host, f.posture) == 3, "second scan finds three IRQs");
        CHECK(t.n == 5, "still five settings");
        CHECK(table_find(&t, SETTING_IRQ_AFFINITY, "200") != NULL, "the new IRQ 200 is added");
        CHECK(table_find(&t, SETTING_IRQ_AFFINITY, "24") == NULL, "the removed IRQ 24 is dropped");
        CHECK(table_find(&t, SETTING_IRQ_AFFINITY, "24") == NULL, "and unindexed");
        CHECK(table_find(&t, SETTING_SYSCTL, "net.core.somaxconn") != NULL, "static settings survive a scan");
        s = table_find(&t, SETTING_IRQ_AFFINITY, "131");
        CHECK(s && s->state == SETTING_CORRECTED, "a kept IRQ keeps its setting and state");
        CHECK(counts.added == 6 && counts.removed == 1, "hooks saw one addition and one removal");
        CHECK(streq(t.settings[t.n - 1]->object, "200"), "the new IRQ sorts last");

        table_done(&t);
        CHECK(counts.removed == 6, "table_done() removes every setting through the hook");
        fixture_done(&f);
}

/* Every IRQ listed is found as itself, whatever order the directory lists them in and
 * wherever the scan's neighbour hint points (irq.c looks next to the last IRQ found, then
 * searches): none added twice, none dropped while present. */
static bool each_irq_once(const SettingTable *t, const bool *present, unsigned max) {
        size_t n = 0;

        for (unsigned irq = 0; irq < max; irq++) {
                char name[16];
                Setting *s;
                unsigned v;

                snprintf(name, sizeof(name), "%u", irq);
                s = table_find(t, SETTING_IRQ_AFFINITY, name);
                if (!!s != present[irq] || (s && (!setting_is_irq(s, &v) || v != irq)))
                        return false;
                n += present[irq];
        }
        return t->kind_counts[SETTING_IRQ_AFFINITY] == n;
}

static void test_table_scan_lookup(void) {
        static const unsigned order[] = { 7, 3, 40, 12, 0, 33, 21, 5, 39, 18, 26, 1, 30, 9, 15 };
        bool present[41] = {};
        Fixture f;
        SettingTable t;
        int n = 0;

        fixture_init(&f);
        for (size_t i = 0; i < ELEMENTSOF(order); i++, n++) {
                tree_add_irq(&f, order[i], "0-1\n");
                present[order[i]] = true;
        }
        if (!CHECK(fixture_start(&f, "[cpus]\nisolated = 2-3\n"), "look-up fixture"))
                { fixture_done(&f); return; }
        table_init(&t, NULL);
        CHECK(table_plan(&t, f.host, f.posture) == 0 && irq_table_scan(&t, f.host, f.posture) == n &&
                      each_irq_once(&t, present, ELEMENTSOF(present)),
              "first scan: each IRQ once");
        CHECK(irq_table_scan(&t, f.host, f.posture) == n && each_irq_once(&t, present, ELEMENTSOF(present)),
              "second scan (found by the hint): each IRQ once, none dropped");
        /* IRQs appear between and around the known ones, others go. */
        for (unsigned irq = 2; irq < 41; irq += 8) {
                n += !present[irq];
                tree_add_irq(&f, irq, "0-1\n");
                present[irq] = true;
        }
        tree_remove(&f, "proc/irq/21");
        tree_remove(&f, "proc/irq/0");
        present[21] = present[0] = false;
        n -= 2;
        CHECK(irq_table_scan(&t, f.host, f.posture) == n && each_irq_once(&t, present, ELEMENTSOF(present)),
              "after IRQs came and went: each present IRQ once");
        CHECK(irq_table_scan(&t, f.host, f.posture) == n && each_irq_once(&t, present, ELEMENTSOF(present)),
              "and at the next scan");
        table_done(&t);
        fixture_done(&f);
}

/* table_count() is kept in step with every state change, also after the table moved (a
 * reload builds the new table on the stack and moves it into the manager). */
static bool counts_match(const SettingTable *t) {
        size_t kept[_SETTING_STATE_MAX], counted[_SETTING_STATE_MAX] = {};

        table_count(t, kept);
        for (size_t i = 0; i < t->n; i++)
                counted[t->settings[i]->state]++;
        return memcmp(kept, counted, sizeof(kept)) == 0;
}

static void test_table_counts(void) {
        Fixture f;
        SettingTable t, moved;
        size_t counts[_SETTING_STATE_MAX];

        fixture_init(&f);
        tree_add_irq(&f, 24, "0-3\n");
        tree_add_irq(&f, 25, "0-1\n");
        tree_chmod(&f, "proc/irq/24/smp_affinity_list", 0444);
        if (!CHECK(fixture_start(&f, "[cpus]\nisolated = 2-3\n[sysctl]\nnet.core.somaxconn = 4096\n"), "counts fixture"))
                { fixture_done(&f); return; }
        table_init(&t, NULL);
        CHECK(table_plan(&t, f.host, f.posture) == 0 && irq_table_scan(&t, f.host, f.posture) == 2, "planned");
        table_count(&t, counts);
        CHECK(counts[SETTING_PENDING] == t.n && counts_match(&t), "all pending at first");
        table_reconcile_all(&t, &f.rc, T0, 0);
        table_count(&t, counts);
        CHECK(counts_match(&t) && counts[SETTING_UNMOVABLE] == 1 && counts[SETTING_PENDING] == 0,
              "after a pass: one unmovable IRQ, nothing pending, counts match the states");
        table_move(&moved, &t);
        CHECK(t.n == 0 && moved.n > 0 && counts_match(&moved), "moved: the counts came along");
        tree_write(&f, "proc/sys/net/core/somaxconn", "128\n");
        f.rc.observe = true;
        table_reconcile_all(&moved, &f.rc, T0 + USEC_PER_SEC, 0);
        table_count(&moved, counts);
        CHECK(counts[SETTING_DRIFTED] == 1 && counts_match(&moved), "a state change after the move is counted there");
        table_remove(&moved, table_find(&moved, SETTING_SYSCTL, "net.core.somaxconn"));
        table_count(&moved, counts);
        CHECK(counts[SETTING_DRIFTED] == 0 && counts_match(&moved), "a removed setting leaves the counts");
        events_take(&f);
        table_done(&moved);
        table_done(&t);
        fixture_done(&f);
}

int main(void) {
        test_table_scan();
        test_table_scan_lookup();
        test_table_counts();
        return tap_finish();
}
