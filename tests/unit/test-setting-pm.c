/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lib/setting/pm.c: the frequency floor's clamp (pure), and the plans of resume_latency,
 * min_freq, energy_performance_preference and boost on fake trees: which CPUs get a
 * setting, the one unsupported setting of a host without cpufreq, boost through no_turbo,
 * and reads, writes and restores through the state machine. */
#include <inttypes.h>
#include <stdlib.h>

#include "faketree.h"
#include "setting/originals.h"
#include "setting/pm.h"
#include "setting/table.h"
#include "tap.h"
#include "basic/util.h"

#define CPU "sys/devices/system/cpu"
#define T0 (1000 * USEC_PER_SEC) /* a "now" far from zero, as CLOCK_MONOTONIC is */

typedef FaketreeFixture Fixture;

static void test_clamp(void) {
        static const struct {
                uint64_t asked;
                bool max;
                uint64_t cpuinfo_min, cpuinfo_max, scaling_max;
                int r;
                uint64_t want;
                const char *bound;
                const char *what;
        } cases[] = {
                { 2000000, false, 400000, 3500000, 3500000, 0, 2000000, NULL, "within the range: as asked" },
                { 5000000, false, 400000, 3500000, 3500000, 0, 3500000, "cpuinfo_max_freq", "above: cpuinfo_max_freq" },
                { 5000000, false, 400000, 3500000, 3000000, 0, 3000000, "scaling_max_freq",
                  "above a lower scaling_max_freq: that one" },
                { 3200000, false, 400000, 3500000, 3000000, 0, 3000000, "scaling_max_freq",
                  "between scaling_max_freq and cpuinfo_max_freq: scaling_max_freq" },
                { 100000, false, 400000, 3500000, 3500000, 0, 400000, "cpuinfo_min_freq", "below: cpuinfo_min_freq" },
                { 100000, false, 0, 3500000, 0, 0, 100000, NULL, "no cpuinfo_min_freq: not clamped from below" },
                { 9000000, false, 0, 0, 0, 0, 9000000, NULL, "no bounds known: as asked" },
                { 0, true, 400000, 3500000, 3000000, 0, 3000000, NULL, "max: the lower of the two highest" },
                { 0, true, 400000, 0, 2800000, 0, 2800000, NULL, "max without cpuinfo_max_freq: scaling_max_freq" },
                { 0, true, 400000, 0, 0, -EOPNOTSUPP, 0, NULL, "max with no highest frequency: unsupported" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                uint64_t khz = 0;
                const char *bound = "unset";
                int r = pm_min_freq_clamp(cases[i].asked, cases[i].max, cases[i].cpuinfo_min, cases[i].cpuinfo_max,
                                          cases[i].scaling_max, &khz, &bound);

                if (!CHECK(r == cases[i].r && (r < 0 || (khz == cases[i].want && streq_ptr(bound, cases[i].bound))),
                           cases[i].what))
                        printf("#   r=%d khz=%" PRIu64 " bound=%s\n", r, khz, bound ?: "(null)");
        }
}

/* Four CPUs, 2-3 isolated, each with a resume latency file; with_cpufreq: a cpufreq
 * directory per CPU with an EPP on CPUs 0-2 only, and cpufreq/boost. */
static void fixture_init(Fixture *f, bool with_cpufreq) {
        *f = (Fixture) {};
        faketree_mkdtemp(f->root, sizeof(f->root), "test-pm");
        faketree_cpus(f->root, "0-3", "2-3", "(null)");
        for (unsigned cpu = 0; cpu < 4; cpu++) {
                char rel[128];

                snprintf(rel, sizeof(rel), CPU "/cpu%u/power/pm_qos_resume_latency_us", cpu);
                tree_write(f, rel, "0\n");
                if (!with_cpufreq)
                        continue;
                snprintf(rel, sizeof(rel), CPU "/cpu%u/cpufreq/scaling_min_freq", cpu);
                tree_write(f, rel, "800000\n");
                snprintf(rel, sizeof(rel), CPU "/cpu%u/cpufreq/cpuinfo_max_freq", cpu);
                tree_write(f, rel, "3500000\n");
                snprintf(rel, sizeof(rel), CPU "/cpu%u/cpufreq/scaling_max_freq", cpu);
                tree_write(f, rel, cpu == 3 ? "3000000\n" : "3500000\n");
                if (cpu == 3)
                        continue;
                snprintf(rel, sizeof(rel), CPU "/cpu%u/cpufreq/energy_performance_preference", cpu);
                tree_write(f, rel, "balance_performance\n");
        }
        if (with_cpufreq)
                tree_write(f, CPU "/cpufreq/boost", "1\n");
}

static bool fixture_start(Fixture *f, const char *config_text) {
        if (!faketree_reconciler(f->root, config_text, &f->host, &f->posture, &f->rc, f->events))
                return false;
        table_init(&f->table, NULL);
        return table_plan(&f->table, f->host, f->posture) >= 0;
}

static size_t count_kind(const SettingTable *t, SettingKind k) {
        size_t n = 0;

        for (size_t i = 0; i < t->n; i++)
                n += t->settings[i]->kind == k;
        return n;
}

static void test_plan_cpus(void) {
        Fixture f;

        fixture_init(&f, true);
        if (CHECK(fixture_start(&f, "[pm]\nresume_latency = 20\nmin_freq = 5000000\nmin_freq_cpus = all\n"
                                    "energy_performance_preference = performance\nboost = off\n"),
                  "fixture with every power key")) {
                Setting *s;

                CHECK(count_kind(&f.table, SETTING_RESUME_LATENCY) == 2 && table_find(&f.table, SETTING_RESUME_LATENCY, "cpu2") &&
                              table_find(&f.table, SETTING_RESUME_LATENCY, "cpu3"),
                      "resume_latency: the isolated CPUs 2-3 by default");
                CHECK(count_kind(&f.table, SETTING_MIN_FREQ) == 4, "min_freq_cpus = all: four CPUs");
                s = table_find(&f.table, SETTING_MIN_FREQ, "cpu0");
                CHECK(s && streq(s->desired, "3500000") && s->clamped && strstr(s->clamped, "cpuinfo_max_freq"),
                      "CPU 0's floor clamped to cpuinfo_max_freq, and said so");
                s = table_find(&f.table, SETTING_MIN_FREQ, "cpu3");
                CHECK(s && streq(s->desired, "3000000") && s->clamped && strstr(s->clamped, "scaling_max_freq is 3000000"),
                      "CPU 3's floor clamped to its lower scaling_max_freq");
                s = table_find(&f.table, SETTING_BOOST, "boost");
                CHECK(s && streq(s->desired, "off"), "one host-wide boost setting, off");

                /* Through the state machine: written, and the original recorded as read. */
                s = table_find(&f.table, SETTING_BOOST, "boost");
                if (s) {
                        CHECK(setting_reconcile(&f.rc, s, T0, RECONCILE_FORCE) == 0 && s->state == SETTING_CORRECTED &&
                                      streq(faketree_read(f.root, CPU "/cpufreq/boost"), "0"),
                              "boost off: cpufreq/boost is written 0");
                        CHECK(streq_ptr(s->observed, "off"), "and reads back as off");
                }
                s = table_find(&f.table, SETTING_ENERGY_PERFORMANCE_PREFERENCE, "cpu3");
                if (CHECK(s, "CPU 3 has an EPP setting")) {
                        CHECK(setting_reconcile(&f.rc, s, T0, RECONCILE_FORCE) == 0 && s->state == SETTING_UNSUPPORTED &&
                                      s->reason && strstr(s->reason, "offers no energy_performance_preference"),
                              "CPU 3's driver has no EPP file: unsupported, with the reason");
                }
                s = table_find(&f.table, SETTING_RESUME_LATENCY, "cpu2");
                if (s) {
                        CHECK(setting_reconcile(&f.rc, s, T0, RECONCILE_FORCE) == 0 &&
                                      streq(faketree_read(f.root, CPU "/cpu2/power/pm_qos_resume_latency_us"), "20"),
                              "resume_latency of CPU 2 is written");
                        faketree_remove_at(f.root, CPU "/cpu2");
                        CHECK(setting_reconcile(&f.rc, s, T0 + USEC_PER_SEC, RECONCILE_FORCE) == -ENOENT,
                              "a CPU whose directory went away: the setting is gone, not unsupported");
                }
        }
        faketree_fixture_done(&f);

        fixture_init(&f, true);
        if (CHECK(fixture_start(&f, "[pm]\nresume_latency = n/a\nresume_latency_cpus = 0,3\n"), "a list"))
                CHECK(count_kind(&f.table, SETTING_RESUME_LATENCY) == 2 && table_find(&f.table, SETTING_RESUME_LATENCY, "cpu0") &&
                              table_find(&f.table, SETTING_RESUME_LATENCY, "cpu3"),
                      "resume_latency_cpus = 0,3: CPUs 0 and 3");
        faketree_fixture_done(&f);

        fixture_init(&f, true);
        if (CHECK(fixture_start(&f, "[pm]\nresume_latency = 5\nresume_latency_cpus = housekeeping\n"), "housekeeping"))
                CHECK(count_kind(&f.table, SETTING_RESUME_LATENCY) == 2 && table_find(&f.table, SETTING_RESUME_LATENCY, "cpu1"),
                      "resume_latency_cpus = housekeeping: CPUs 0-1");
        faketree_fixture_done(&f);
}

static void test_no_cpufreq(void) {
        Fixture f;

        fixture_init(&f, false);
        if (CHECK(fixture_start(&f, "[pm]\nmin_freq = max\nmin_freq_cpus = all\nenergy_performance_preference = power\n"
                                    "boost = on\nresume_latency = 10\n"),
                  "fixture without cpufreq")) {
                SettingKind kinds[] = { SETTING_MIN_FREQ, SETTING_ENERGY_PERFORMANCE_PREFERENCE };

                for (size_t i = 0; i < ELEMENTSOF(kinds); i++) {
                        Setting *s = table_find(&f.table, kinds[i], "cpufreq");
                        char what[128];

                        snprintf(what, sizeof(what), "%s: one setting for the host, unsupported with the reason",
                                 setting_kind_to_string(kinds[i]));
                        CHECK(count_kind(&f.table, kinds[i]) == 1 && s &&
                                      setting_reconcile(&f.rc, s, T0, RECONCILE_FORCE) == 0 && s->state == SETTING_UNSUPPORTED &&
                                      s->reason && strstr(s->reason, "no cpufreq driver on this host"),
                              what);
                }
                {
                        Setting *s = table_find(&f.table, SETTING_BOOST, "boost");
                        CHECK(s && setting_reconcile(&f.rc, s, T0, RECONCILE_FORCE) == 0 && s->state == SETTING_UNSUPPORTED &&
                                      s->reason && strstr(s->reason, "no boost control"),
                              "boost without a boost file: unsupported");
                }
                CHECK(count_kind(&f.table, SETTING_RESUME_LATENCY) == 2, "resume_latency does not need cpufreq");
        }
        faketree_fixture_done(&f);
}

static void test_no_turbo(void) {
        Originals *o = NULL;
        Fixture f;

        fixture_init(&f, false);
        tree_write(&f, CPU "/intel_pstate/no_turbo", "0\n");
        if (CHECK(fixture_start(&f, "[pm]\nboost = off\n") && faketree_fixture_originals(&f, &o) == 0,
                  "fixture with intel_pstate, and originals")) {
                Setting *s = table_find(&f.table, SETTING_BOOST, "boost");

                if (CHECK(s, "a boost setting")) {
                        CHECK(setting_reconcile(&f.rc, s, T0, RECONCILE_FORCE) == 0 && s->state == SETTING_CORRECTED &&
                                      streq(faketree_read(f.root, CPU "/intel_pstate/no_turbo"), "1"),
                              "boost = off writes no_turbo 1");
                        tree_write(&f, CPU "/intel_pstate/no_turbo", "0\n");
                        CHECK(setting_reconcile(&f.rc, s, T0 + USEC_PER_SEC, 0) == 0 && streq_ptr(s->observed, "off") &&
                                      streq(faketree_read(f.root, CPU "/intel_pstate/no_turbo"), "1"),
                              "no_turbo 0 reads as on: drift, corrected");
                        CHECK(setting_restore(&f.rc, s) == 1 && streq(faketree_read(f.root, CPU "/intel_pstate/no_turbo"), "0"),
                              "restore writes the original (on) back as no_turbo 0");
                }
        }
        originals_free(o);
        faketree_fixture_done(&f);
}

int main(void) {
        test_clamp();
        test_plan_cpus();
        test_no_cpufreq();
        test_no_turbo();
        return tap_finish();
}
