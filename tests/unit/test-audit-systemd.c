/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* audit-systemd.c against fake --root trees: PID 1's affinity and slices [cpus] slices
 * leaves unconfined. */
#include "audit-fixture.h"

/* PID 1's own affinity: its own finding, never a stray; with systemd, the drop-in. */
static void test_pid1_affinity(void) {
        FakeProcess pid1 = { .pid = 1, .ppid = 0, .comm = "systemd", .allowed = "0-3" };
        char config[1024];
        Fixture f;

        fixture_init(&f);
        tree_add_process(&f, &pid1);
        if (fixture_run(&f, healthy_config)) {
                CHECK(fires(&f, "sched.pid1-affinity", "pid 1", SEVERITY_WARNING),
                      "PID 1 allowed on 0-3, no run/systemd/system: the generic finding");
                CHECK(message_has(&f, "sched.pid1-affinity", "PID 1 (systemd) is allowed on CPUs 0-3") &&
                              message_has(&f, "sched.pid1-affinity", "isolcpus=domain,2-3"),
                      "it names the CPUs and the boot-time fix");
                CHECK(quiet(&f, "sched.stray-task"), "PID 1 is not also listed as a stray task");
        }
        tree_mkdir(&f, "run/systemd/system");
        if (fixture_run(&f, healthy_config)) {
                CHECK(fires(&f, "sched.pid1-affinity", "pid 1 (systemd)", SEVERITY_WARNING), "systemd as PID 1");
                CHECK(message_has(&f, "sched.pid1-affinity",
                                  "create /etc/systemd/system.conf.d/50-lowlatd-cpu-affinity.conf with the two lines "
                                  "\"[Manager]\" and \"CPUAffinity=0-1\", then run systemctl daemon-reload"),
                      "the exact system.conf.d drop-in, with the housekeeping CPUs");
                CHECK(message_has(&f, "sched.pid1-affinity", "[cpus] slices = system.slice user.slice init.scope"),
                      "and [cpus] slices for the running units");
        }
        snprintf(config, sizeof(config), "%s[cpus]\nslices = system.slice user.slice init.scope\n", healthy_config);
        if (fixture_run(&f, config)) {
                const Finding *x = finding_list_find(&f.findings, "sched.pid1-affinity", NULL);
                CHECK(x && !strstr(x->message, "[cpus] slices ="), "with slices configured it does not suggest them again");
        }
        pid1.allowed = "0-1";
        tree_add_process(&f, &pid1);
        if (fixture_run(&f, healthy_config))
                CHECK(quiet(&f, "sched.pid1-affinity"), "PID 1 on the housekeeping CPUs: nothing to say");
        fixture_done(&f);
}

/* machine.slice exists and [cpus] slices leaves it out. */
static void test_unconfined_slices(void) {
        char config[1024];
        Fixture f;

        fixture_init(&f);
        snprintf(config, sizeof(config), "%s[cpus]\nslices = system.slice user.slice init.scope\n", healthy_config);
        if (fixture_run(&f, config))
                CHECK(quiet(&f, "sched.slice-unconfined"), "no machine.slice on the host: nothing to say");
        tree_mkdir(&f, "sys/fs/cgroup/machine.slice");
        if (fixture_run(&f, healthy_config))
                CHECK(quiet(&f, "sched.slice-unconfined"), "no [cpus] slices: the cpuset controller is not lowlatd's doing");
        if (fixture_run(&f, config)) {
                CHECK(fires(&f, "sched.slice-unconfined", "machine.slice", SEVERITY_WARNING),
                      "machine.slice exists and is not confined");
                CHECK(message_has(&f, "sched.slice-unconfined", "Add machine.slice to [cpus] slices (audit.conf:"),
                      "the fix names the line of the config");
        }
        snprintf(config, sizeof(config), "%s[cpus]\nslices = system.slice user.slice init.scope machine.slice\n", healthy_config);
        if (fixture_run(&f, config))
                CHECK(quiet(&f, "sched.slice-unconfined"), "machine.slice in the list: nothing to say");
        fixture_done(&f);
}

int main(void) {
        test_pid1_affinity();
        test_unconfined_slices();
        return audit_fixture_finish(AUDIT_TEST_SYSTEMD);
}
