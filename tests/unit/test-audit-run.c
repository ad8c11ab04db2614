/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The audit as a whole (audit-run.c, audit-findings.c, audit-facts.c) against fake --root
 * trees: severities, the healthy host with no findings, bare and garbled trees, the bounds. */
#include "audit-fixture.h"

static void test_severity_names(void) {
        FindingList l = FINDING_LIST_EMPTY;
        Finding items[2] = {
                { .severity = SEVERITY_INFO, .id = (char *) "a", .subject = (char *) "x", .message = (char *) "m" },
                { .severity = SEVERITY_CRITICAL, .id = (char *) "b", .subject = (char *) "y", .message = (char *) "m" },
        };

        CHECK_STR(severity_to_string(SEVERITY_OK), "ok", "ok");
        CHECK_STR(severity_to_string(SEVERITY_INFO), "info", "info");
        CHECK_STR(severity_to_string(SEVERITY_WARNING), "warning", "warning");
        CHECK_STR(severity_to_string(SEVERITY_CRITICAL), "critical", "critical");
        CHECK(severity_to_string((Severity) 42) == NULL && severity_to_string(_SEVERITY_INVALID) == NULL,
              "out of range: NULL (bounds-checked)");
        CHECK(severity_from_string("warning") == SEVERITY_WARNING && severity_from_string("bad") == _SEVERITY_INVALID &&
                      severity_from_string(NULL) == _SEVERITY_INVALID,
              "and back from the name");
        CHECK(finding_list_worst(&l) == SEVERITY_OK, "empty list: ok");
        l.items = items;
        l.n = 2;
        CHECK(finding_list_worst(&l) == SEVERITY_CRITICAL, "worst of info and critical");
        CHECK(finding_list_find(&l, "b", NULL) == &items[1], "find by id");
        CHECK(finding_list_find(&l, "b", "x") == NULL, "find by id and subject");
}

static void test_healthy(void) {
        Fixture f;

        fixture_init(&f);
        if (CHECK(fixture_run(&f, healthy_config), "audit of the healthy host runs")) {
                if (!CHECK(f.findings.n == 0, "a healthy host has no findings"))
                        dump(&f);
                for (size_t i = 0; i < ELEMENTSOF(all_ids); i++) {
                        char what[96];
                        snprintf(what, sizeof(what), "healthy: no %s", all_ids[i].id);
                        CHECK(quiet(&f, all_ids[i].id), what);
                }
                CHECK(finding_list_worst(&f.findings) == SEVERITY_OK, "worst of nothing is ok");
        }
        fixture_done(&f);
}

static void test_bare_and_garbage_trees(void) {
        Fixture f;
        static const char *const garbage_files[] = {
                "proc/cmdline", "proc/stat", "proc/sys/kernel/osrelease", "boot/config-6.8.0-rt",
                "sys/kernel/debug/sched/preempt", "proc/1234/stat", "proc/1234/status", "proc/1234/limits",
                "proc/1234/cgroup", "proc/1234/smaps_rollup", "proc/1234/task/1234/stat", "proc/1300/cgroup",
                "proc/1300/task/1301/status", "sys/devices/system/cpu/cpu2/topology/thread_siblings_list",
                "sys/devices/system/node/node0/cpulist", "sys/devices/system/cpu/cpu2/cpuidle/state2/latency",
                "sys/devices/system/cpu/cpu3/cpufreq/scaling_min_freq", "proc/sys/kernel/sched_rt_runtime_us",
                "proc/sys/net/ipv4/tcp_available_congestion_control", "proc/sys/net/ipv4/tcp_timestamps",
        };

        /* only what a posture needs */
        *(&f) = (Fixture) {};
        faketree_mkdtemp(f.root, sizeof(f.root), "test-audit");
        tree_write(&f, "sys/devices/system/cpu/online", "0-3\n");
        if (fixture_run(&f, healthy_config)) {
                CHECK(true, "a bare tree: audit_run succeeds");
                CHECK(fires(&f, "kernel.preempt", NULL, SEVERITY_INFO), "a bare tree: the preemption model is unknown");
                CHECK(quiet(&f, "app.not-running"), "no /proc at all: applications are not declared missing");
                CHECK(quiet(&f, "power.dma-latency-unheld"), "no /proc: the holder is not judged");
        } else
                CHECK(false, "a bare tree: audit_run succeeds");
        fixture_done(&f);

        /* every input garbled: binary, truncated, absurd numbers */
        fixture_init(&f);
        for (size_t i = 0; i < ELEMENTSOF(garbage_files); i++)
                tree_write_bytes(&f, garbage_files[i], "\xff\xfe(\x01)\n99999999999999999999999 -1 ((\n", 36);
        tree_write(&f, "proc/1234/comm", "m\xff\xfe\n");
        tree_write(&f, "proc/99/stat", "99 (x");
        tree_write(&f, "proc/98/stat", "98 (y) S");
        if (CHECK(fixture_run(&f, healthy_config), "a garbled tree: audit_run succeeds"))
                for (size_t i = 0; i < f.findings.n; i++)
                        if (!utf8_is_valid(f.findings.items[i].subject) || !utf8_is_valid(f.findings.items[i].message)) {
                                CHECK(false, "every finding is valid UTF-8");
                                break;
                        }
        fixture_done(&f);
}

static void test_process_limit(void) {
        Fixture f;
        char rel[32];
        AuditLimits limits = { .max_processes = 8 };

        /* The default bound is 65536; a tree that size takes minutes on some file systems,
         * so the same path is driven with a bound of 8. The healthy tree has 6 processes. */
        fixture_init(&f);
        if (fixture_run_limits(&f, healthy_config, &limits))
                CHECK(quiet(&f, "audit.limit"), "6 processes under a bound of 8: quiet");
        for (unsigned pid = 100000; pid < 100004; pid++) {
                snprintf(rel, sizeof(rel), "proc/%u", pid);
                tree_mkdir(&f, rel);
        }
        if (fixture_run_limits(&f, healthy_config, &limits)) {
                CHECK(fires(&f, "audit.limit", "/proc", SEVERITY_INFO), "10 processes over a bound of 8: audit.limit");
                CHECK(message_has(&f, "audit.limit", "10 processes exist; only the 8"), "how many, and how many were seen");
                CHECK(quiet(&f, "app.not-running"), "the lowest pids, the applications among them, were examined");
        }
        fixture_done(&f);
}

/* The profiles in force: one info finding naming them (the fixture parses the text alone,
 * so no profile file is read: the names only). */
static void test_profiles(void) {
        char config[1024];
        Fixture f;

        fixture_init(&f);
        if (fixture_run(&f, healthy_config))
                CHECK(quiet(&f, "config.profiles"), "no profile: nothing to say");
        snprintf(config, sizeof(config), "%s[daemon]\nprofile = network-latency mine\n", healthy_config);
        if (fixture_run(&f, config)) {
                CHECK(fires(&f, "config.profiles", "profiles", SEVERITY_INFO), "two profiles: config.profiles, info");
                CHECK(message_has(&f, "config.profiles", "takes in 2 profiles, read before its own files: "
                                                           "network-latency, mine."),
                      "it names them in order");
        }
        fixture_done(&f);
}

int main(void) {
        test_severity_names();
        test_profiles();
        test_healthy();
        test_bare_and_garbage_trees();
        test_process_limit();
        return audit_fixture_finish(AUDIT_TEST_RUN);
}
