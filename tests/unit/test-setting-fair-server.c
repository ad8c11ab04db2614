/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fair_server (lib/setting/fair-server.c): planned for the isolated CPUs only and only with
 * [cpus] fair_server = off, written 0, put back by restore, unsupported without the file. */
#include "setting-fixture.h"
#include "setting/fair-server.h"
#include "setting/originals.h"
#include "setting/table.h"

#define RUNTIME "sys/kernel/debug/sched/fair_server/cpu%u/runtime"

static void write_runtimes(Fixture *f, unsigned n) {
        for (unsigned cpu = 0; cpu < n; cpu++) {
                char rel[96];
                snprintf(rel, sizeof(rel), RUNTIME, cpu);
                tree_write(f, rel, "50000000\n");
        }
}

static void test_plan(void) {
        Fixture f;
        SettingTable t;

        fixture_init(&f);
        write_runtimes(&f, 4);
        if (!CHECK(fixture_start(&f, "[cpus]\nisolated = 2-3\nfair_server = off\n"), "fair_server fixture"))
                { fixture_done(&f); return; }
        table_init(&t, NULL);
        CHECK(table_plan(&t, f.host, f.posture) >= 0, "the posture plans");
        CHECK(table_find(&t, SETTING_FAIR_SERVER, "cpu2") && table_find(&t, SETTING_FAIR_SERVER, "cpu3") &&
                      !table_find(&t, SETTING_FAIR_SERVER, "cpu0") && !table_find(&t, SETTING_FAIR_SERVER, "cpu1"),
              "fair_server = off: a setting for each isolated CPU, none for the housekeeping ones");
        table_done(&t);
        fixture_done(&f);

        fixture_init(&f);
        write_runtimes(&f, 4);
        if (!CHECK(fixture_start(&f, "[cpus]\nisolated = 2-3\n"), "fair_server fixture, key unset"))
                { fixture_done(&f); return; }
        table_init(&t, NULL);
        CHECK(table_plan(&t, f.host, f.posture) >= 0, "the posture plans");
        CHECK(!table_find(&t, SETTING_FAIR_SERVER, "cpu2"), "by default: left alone, nothing planned");
        table_done(&t);
        fixture_done(&f);
}

/* A boot with nohz_full= but without isolcpus=domain (the line lowlatctl boot writes for
 * [cpus] partition, or nohz_full= alone): /sys/devices/system/cpu/isolated is empty, and
 * isolated = auto takes the nohz_full CPUs, so the fair server is kept off on them. */
static void test_plan_nohz_full_boot(void) {
        Fixture f;
        SettingTable t;

        fixture_init(&f);
        write_runtimes(&f, 4);
        tree_write(&f, "proc/cmdline", "ro nohz_full=2-3 rcu_nocbs=2-3 isolcpus=managed_irq,2-3\n");
        tree_write(&f, "sys/devices/system/cpu/isolated", "\n");
        tree_write(&f, "sys/devices/system/cpu/nohz_full", "2-3\n");
        if (!CHECK(fixture_start(&f, "[cpus]\nfair_server = off\n"), "fair_server fixture, nohz_full boot"))
                { fixture_done(&f); return; }
        table_init(&t, NULL);
        CHECK(table_plan(&t, f.host, f.posture) >= 0, "the posture plans");
        CHECK(table_find(&t, SETTING_FAIR_SERVER, "cpu2") && table_find(&t, SETTING_FAIR_SERVER, "cpu3") &&
                      !table_find(&t, SETTING_FAIR_SERVER, "cpu0") && !table_find(&t, SETTING_FAIR_SERVER, "cpu1"),
              "nohz_full=2-3 without isolcpus=domain, isolated = auto: the fair server of CPUs 2-3, no other");
        table_done(&t);
        fixture_done(&f);
}

static void test_write_restore(void) {
        _cleanup_(originals_freep) Originals *o = NULL;
        _cleanup_free_ char *dir = NULL;
        Fixture f;
        Setting *s = NULL, *missing = NULL;
        char rel[96];

        fixture_init(&f);
        write_runtimes(&f, 3);
        if (!CHECK(fixture_start(&f, "[cpus]\nisolated = 2-3\nfair_server = off\n"), "fair_server fixture"))
                { fixture_done(&f); return; }
        dir = strdup_printf("%s/run", f.root);
        CHECK(dir && originals_open(dir, f.root, &o) == 0, "originals open");
        f.rc.originals = o;
        CHECK(setting_new_fair_server(2, &s) == 0 && streq(s->object, "cpu2") && streq(s->desired, "0"),
              "cpu2's fair server: object cpu2, desired 0");
        setting_reconcile(&f.rc, s, T0, 0);
        CHECK_STR(events_take(&f), "drift corrected", "50000000 is drift, corrected");
        snprintf(rel, sizeof(rel), RUNTIME, 2u);
        CHECK_STR(tree_read(&f, rel), "0", "0 written to its runtime");
        CHECK(setting_restore(&f.rc, s) == 1, "restore: one value put back");
        CHECK_STR(strstrip((char *) tree_read(&f, rel)), "50000000", "the kernel's runtime is back");

        CHECK(setting_new_fair_server(3, &missing) == 0, "cpu3's fair server, whose file is missing");
        setting_reconcile(&f.rc, missing, T0, 0);
        CHECK_STR(events_take(&f), "unsupported", "no file: unsupported");
        if (!CHECK(missing->reason && strstr(missing->reason, "debugfs"), "the reason names debugfs"))
                printf("#   reason: %s\n", missing->reason ?: "(null)");
        setting_free(s);
        setting_free(missing);
        fixture_done(&f);
}

int main(void) {
        test_plan();
        test_plan_nohz_full_boot();
        test_write_restore();
        return tap_finish();
}
