/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cpuset_partition (setting/partition.c): the plan, and every value the partition file can
 * have, on a fake cgroup tree whose slice exists already, so that PID 1 is not asked
 * (test_partition.py talks to a fake one for the rest). */
#include <stdlib.h>

#include "setting-fixture.h"
#include "setting/partition.h"
#include "setting/slices.h"
#include "host/systemd-client.h"
#include "setting/table.h"

#define PARTITION_CONFIG "[cpus]\nisolated = 2-3\npartition = isolated.slice\n"
#define PARTITION_FILE "sys/fs/cgroup/isolated.slice/cpuset.cpus.partition"

/* A host with systemd as PID 1, the cpuset controller, and the slice's cgroup. */
static void tree_cgroups(Fixture *f, const char *controllers, const char *partition) {
        tree_mkdir(f, "run/systemd/system");
        tree_write(f, "sys/fs/cgroup/cgroup.controllers", controllers);
        tree_write(f, "sys/fs/cgroup/isolated.slice/cpuset.cpus", "2-3\n");
        if (partition)
                tree_write(f, PARTITION_FILE, partition);
}

static void test_partition_plan(void) {
        SettingTable t;
        Setting *s;
        Fixture f;

        fixture_init(&f);
        tree_mkdir(&f, "sys/fs/cgroup/machine.slice");
        if (!CHECK(fixture_start(&f, PARTITION_CONFIG), "partition fixture"))
                { fixture_done(&f); return; }
        table_init(&t, NULL);
        CHECK(table_plan(&t, f.host, f.posture) == 0 && t.kind_counts[SETTING_CPUSET_PARTITION] == 1,
              "one cpuset_partition setting");
        s = partition_table_find(&t, "isolated.slice");
        CHECK(s && setting_is_partition(s) && streq_ptr(s->desired, "isolated"), "desired: isolated");
        CHECK(t.kind_counts[SETTING_SLICE_CPUS] == 4 && slice_table_find(&t, "init.scope") &&
                      slice_table_find(&t, "machine.slice"),
              "partition implies slices: system.slice, user.slice, init.scope, and machine.slice where it exists");
        if (s) {
                char buf[128], path[128];
                CHECK(setting_describe(s, buf, sizeof(buf)) == 0 && streq(buf, "cpuset partition of isolated.slice"),
                      "messages name it \"cpuset partition of isolated.slice\"");
                CHECK(setting_watch_path(s, 0, path, sizeof(path)) == 1 && streq(path, PARTITION_FILE),
                      "watch 0: the cgroup's cpuset.cpus.partition");
                CHECK(setting_watch_path(s, 1, path, sizeof(path)) == 1 &&
                              streq(path, "sys/fs/cgroup/isolated.slice/cpuset.cpus"),
                      "watch 1: the cgroup's cpuset.cpus, which PID 1 writes for every AllowedCPUs= change");
        }
        table_done(&t);
        fixture_done(&f);

        fixture_init(&f);
        if (!CHECK(fixture_start(&f, "[cpus]\nisolated = 2-3\nslices = system.slice user.slice init.scope\n"),
                   "slices without a partition"))
                { fixture_done(&f); return; }
        table_init(&t, NULL);
        CHECK(table_plan(&t, f.host, f.posture) == 0 && t.kind_counts[SETTING_CPUSET_PARTITION] == 0 &&
                      t.kind_counts[SETTING_SLICE_CPUS] == 3,
              "no partition key: no partition, and slices only as listed (machine.slice is not there)");
        table_done(&t);
        fixture_done(&f);
}

/* What observe mode sees for each value of the file (and of the root's isolated set). */
static void test_partition_observed(void) {
        static const struct {
                const char *partition;     /* NULL: the slice has no cgroup */
                const char *root_isolated; /* the root's cpuset.cpus.isolated, NULL: none (6.1) */
                const char *observed;
                const char *slice_cpus; /* the slice's cpuset.cpus, NULL: 2-3 */
        } cases[] = {
                { "isolated\n", "2-3\n", "isolated" },
                { "isolated\n", NULL, "isolated" },
                { "isolated\n", "2\n", "isolated partial (the kernel isolates 2 of 2-3)" },
                { "isolated\n", "\n", "isolated partial (the kernel isolates none of 2-3)" },
                { "member\n", "\n", "member" },
                { "isolated invalid (Cpu list in cpuset.cpus not exclusive)\n", NULL,
                  "isolated invalid (Cpu list in cpuset.cpus not exclusive)" },
                { NULL, NULL, PARTITION_ABSENT },
                /* AllowedCPUs= of the slice changed by someone: drift, whatever the file says */
                { "isolated\n", NULL, "isolated on CPUs 2, not 2-3", "2\n" },
                { "isolated invalid (Cpu list in cpuset.cpus not exclusive)\n", NULL,
                  "isolated invalid (Cpu list in cpuset.cpus not exclusive) on CPUs 0-3, not 2-3", "0-3\n" },
                /* empty: PID 1 has not written it yet, which write() waits for */
                { "member\n", NULL, "member", "\n" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *what = NULL;
                Setting *s = NULL;
                Fixture f;

                fixture_init(&f);
                tree_cgroups(&f, "cpuset cpu\n", cases[i].partition);
                if (!cases[i].partition)
                        tree_remove(&f, "sys/fs/cgroup/isolated.slice");
                if (cases[i].root_isolated)
                        tree_write(&f, "sys/fs/cgroup/cpuset.cpus.isolated", cases[i].root_isolated);
                if (cases[i].slice_cpus)
                        tree_write(&f, "sys/fs/cgroup/isolated.slice/cpuset.cpus", cases[i].slice_cpus);
                if (!CHECK(fixture_start(&f, PARTITION_CONFIG), "fixture"))
                        { fixture_done(&f); continue; }
                f.rc.observe = true;
                CHECK(setting_new_cpuset_partition("isolated.slice", &s) == 0, "setting");
                setting_reconcile(&f.rc, s, T0, 0);
                what = strdup_printf("case %zu: observed '%s' (%s), want '%s'", i, s->observed ?: "",
                                     setting_state_to_string(s->state), cases[i].observed);
                CHECK(streq_ptr(s->observed, cases[i].observed) &&
                              s->state == (streq(cases[i].observed, "isolated") ? SETTING_OK : SETTING_DRIFTED),
                      what);
                setting_free(s);
                fixture_done(&f);
        }
}

/* Enforced on a tree whose slice exists: the file is written without PID 1. */
static void test_partition_enforced(void) {
        static const char *const before[] = { "member\n", "isolated invalid (Cpu list in cpuset.cpus not exclusive)\n",
                                              "root\n" };

        for (size_t i = 0; i < ELEMENTSOF(before); i++) {
                _cleanup_(systemd_client_freep) SystemdClient *client = NULL;
                _cleanup_free_ char *what = NULL;
                const char *now;
                Setting *s = NULL;
                Fixture f;

                fixture_init(&f);
                tree_cgroups(&f, "cpuset cpu\n", before[i]);
                if (!CHECK(fixture_start(&f, PARTITION_CONFIG), "fixture"))
                        { fixture_done(&f); continue; }
                CHECK(systemd_client_new(f.host, &client) == 0, "a client (never connected: the slice exists)");
                f.rc.systemd = client;
                CHECK(setting_new_cpuset_partition("isolated.slice", &s) == 0, "setting");
                setting_reconcile(&f.rc, s, T0, 0);
                now = tree_read(&f, PARTITION_FILE);
                what = strdup_printf("from '%.*s': corrected to isolated (%s, %s)", (int) strcspn(before[i], "\n"),
                                     before[i], setting_state_to_string(s->state), s->reason ?: "");
                CHECK(s->state == SETTING_CORRECTED && streq_ptr(now, "isolated") &&
                              strstr(events_take(&f), "corrected"),
                      what);
                setting_free(s);
                fixture_done(&f);
        }
}

/* A cgroup PID 1 has made but not yet given its CPUs: "isolated" written then is "isolated
 * invalid (cpuset.cpus and cpuset.cpus.exclusive are empty)" on 6.12. write() waits for
 * cpuset.cpus; still empty after the wait, it fails (tried again) and leaves the file be. */
static void test_partition_waits_for_cpus(void) {
        _cleanup_(systemd_client_freep) SystemdClient *client = NULL;
        _cleanup_free_ char *what = NULL;
        Setting *s = NULL;
        Fixture f;

        fixture_init(&f);
        tree_cgroups(&f, "cpuset cpu\n", "member\n");
        tree_write(&f, "sys/fs/cgroup/isolated.slice/cpuset.cpus", "\n");
        if (!CHECK(fixture_start(&f, PARTITION_CONFIG), "fixture"))
                { fixture_done(&f); return; }
        CHECK(systemd_client_new(f.host, &client) == 0, "a client (never connected: the slice exists)");
        f.rc.systemd = client;
        CHECK(setting_new_cpuset_partition("isolated.slice", &s) == 0, "setting");
        setting_reconcile(&f.rc, s, T0, 0);
        what = strdup_printf("empty cpuset.cpus: failed, the file left member (%s, '%.*s', '%s')",
                             setting_state_to_string(s->state), (int) strcspn(tree_read(&f, PARTITION_FILE) ?: "", "\n"),
                             tree_read(&f, PARTITION_FILE) ?: "", s->reason ?: "");
        CHECK(s->state == SETTING_FAILED && streq_ptr(tree_read(&f, PARTITION_FILE), "member\n") && s->reason &&
                      strstr(s->reason, "cpuset.cpus of isolated.slice is still empty"),
              what);
        free(what);
        (void) events_take(&f);
        tree_write(&f, "sys/fs/cgroup/isolated.slice/cpuset.cpus", "2-3\n");
        setting_reconcile(&f.rc, s, T0 + 600 * USEC_PER_SEC, 0);
        what = strdup_printf("PID 1 wrote cpuset.cpus: corrected to isolated (%s, '%s')",
                             setting_state_to_string(s->state), tree_read(&f, PARTITION_FILE));
        CHECK(s->state == SETTING_CORRECTED && streq_ptr(tree_read(&f, PARTITION_FILE), "isolated"), what);
        setting_free(s);
        fixture_done(&f);
}

/* Unsupported once, with the reason, for each way the host lacks a partition. */
static void test_partition_unsupported(void) {
        static const struct {
                bool init;
                const char *controllers;
                bool partition_file;
                const char *reason;
        } cases[] = {
                { false, "cpuset cpu\n", true, "systemd is not PID 1 here" },
                { true, "cpu io memory pids\n", true, "has no cpuset controller" },
                { true, "cpuset cpu\n", false,
                  "the cgroup of isolated.slice has no cpuset.cpus.partition: this kernel has no cpuset partitions" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *what = NULL;
                Setting *s = NULL;
                Fixture f;

                fixture_init(&f);
                tree_cgroups(&f, cases[i].controllers, cases[i].partition_file ? "member\n" : NULL);
                if (!cases[i].init)
                        tree_remove(&f, "run/systemd/system");
                if (!CHECK(fixture_start(&f, PARTITION_CONFIG), "fixture"))
                        { fixture_done(&f); continue; }
                CHECK(setting_new_cpuset_partition("isolated.slice", &s) == 0, "setting");
                setting_reconcile(&f.rc, s, T0, 0);
                setting_reconcile(&f.rc, s, T0 + 20 * USEC_PER_SEC, 0);
                what = strdup_printf("case %zu: unsupported once, saying '%s' ('%s')", i, cases[i].reason,
                                     s->reason ?: "");
                CHECK(streq(events_take(&f), "unsupported") && s->state == SETTING_UNSUPPORTED && s->reason &&
                              strstr(s->reason, cases[i].reason),
                      what);
                setting_free(s);
                fixture_done(&f);
        }
}

int main(void) {
        test_partition_plan();
        test_partition_observed();
        test_partition_enforced();
        test_partition_waits_for_cpus();
        test_partition_unsupported();
        return tap_finish();
}
