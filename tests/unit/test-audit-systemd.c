/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* audit-systemd.c and audit-isolation.c against fake --root trees: PID 1's affinity, slices
 * [cpus] slices leaves unconfined, the state of [cpus] partition, and per CPU which
 * isolation mechanism is in force and from where. */
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

#define PARTITION_FILE "sys/fs/cgroup/isolated.slice/cpuset.cpus.partition"

static void partition_config(char *buf, size_t size) {
        snprintf(buf, size, "%s[cpus]\npartition = isolated.slice\n", healthy_config);
}

/* sched.partition: each state the partition file can read, in the kernel's words. */
static void test_partition_state(void) {
        char config[1024];
        Fixture f;

        partition_config(config, sizeof(config));
        fixture_init(&f);
        if (fixture_run(&f, healthy_config))
                CHECK(quiet(&f, "sched.partition"), "no [cpus] partition: nothing said of one");
        if (fixture_run(&f, config)) {
                CHECK(fires(&f, "sched.partition", "isolated.slice", SEVERITY_WARNING), "the slice has no cgroup");
                CHECK(message_has(&f, "sched.partition", "(state: absent)"), "it says absent");
        }
        tree_mkdir(&f, "sys/fs/cgroup/isolated.slice");
        if (fixture_run(&f, config))
                CHECK(fires(&f, "sched.partition", "isolated.slice", SEVERITY_WARNING) &&
                              message_has(&f, "sched.partition", "has no cpuset.cpus.partition"),
                      "a cgroup without the partition file: no partitions, or no cpuset controller");
        tree_write(&f, PARTITION_FILE, "isolated invalid (Cpu list in cpuset.cpus not exclusive)\n");
        if (fixture_run(&f, config))
                CHECK(fires(&f, "sched.partition", "isolated.slice", SEVERITY_WARNING) &&
                              message_has(&f, "sched.partition",
                                          "reads \"isolated invalid (Cpu list in cpuset.cpus not exclusive)\""),
                      "invalid: reported with the kernel's reason");
        tree_write(&f, PARTITION_FILE, "member\n");
        if (fixture_run(&f, config))
                CHECK(fires(&f, "sched.partition", "isolated.slice", SEVERITY_WARNING) &&
                              message_has(&f, "sched.partition", "reads \"member\", not \"isolated\""),
                      "member: not isolated");
        tree_write(&f, PARTITION_FILE, "isolated\n");
        tree_write(&f, "sys/fs/cgroup/isolated.slice/cpuset.cpus.effective", "2-3\n");
        if (fixture_run(&f, config))
                CHECK(fires(&f, "sched.partition", "isolated.slice", SEVERITY_INFO) &&
                              message_has(&f, "sched.partition", "reads \"isolated\" and holds CPUs 2-3"),
                      "isolated: info, with its CPUs");
        tree_write(&f, "sys/fs/cgroup/cpuset.cpus.isolated", "2\n");
        if (fixture_run(&f, config))
                CHECK(fires(&f, "sched.partition", "isolated.slice", SEVERITY_WARNING) &&
                              message_has(&f, "sched.partition", "isolates CPU 2 only: CPU 3 of the isolated CPUs is not"),
                      "6.12 after a hotplug: the root isolates fewer CPUs than the slice has");
        fixture_done(&f);
}

/* isolation.mechanisms: per group of CPUs, what is in force and from where, what is
 * missing, and the boot parameters for what only a boot gives. */
static void test_mechanisms(void) {
        static const char bare_cmdline[] = "BOOT_IMAGE=/vmlinuz-6.8.0-rt root=UUID=1234-abcd ro quiet skew_tick=1 "
                                           "nosoftlockup irqaffinity=0-1\n";
        char config[1024];
        Fixture f;

        partition_config(config, sizeof(config));
        fixture_init(&f);
        tree_write(&f, "sys/devices/virtual/workqueue/cpumask", "3\n");
        tree_mkdir(&f, "sys/fs/cgroup/isolated.slice");
        tree_write(&f, PARTITION_FILE, "isolated\n");
        tree_write(&f, "sys/fs/cgroup/isolated.slice/cpuset.cpus.effective", "2-3\n");
        if (fixture_run(&f, healthy_config))
                CHECK(quiet(&f, "isolation.mechanisms"), "the boot gives every mechanism, no partition: nothing said");
        if (fixture_run(&f, config)) {
                CHECK(fires(&f, "isolation.mechanisms", "cpus 2-3", SEVERITY_INFO) &&
                              message_has(&f, "isolation.mechanisms",
                                          "every isolation mechanism is in force: load balancing (boot: isolcpus=domain), "
                                          "unbound workqueues (partition isolated.slice), timer migration (sysctl "
                                          "kernel.timer_migration=0), tick (boot: nohz_full)"),
                      "boot isolation and a partition: all in force, said once for CPUs 2-3");
                CHECK(n_details(&f, "isolation.mechanisms") == 6 &&
                              detail_is(&f, "isolation.mechanisms", 0, "load balancing: in force (boot: isolcpus=domain)") &&
                              detail_is(&f, "isolation.mechanisms", 1,
                                        "unbound workqueues: in force (partition isolated.slice)") &&
                              detail_is(&f, "isolation.mechanisms", 2,
                                        "timer migration: in force (sysctl kernel.timer_migration=0)") &&
                              detail_is(&f, "isolation.mechanisms", 3, "tick: in force (boot: nohz_full)") &&
                              detail_is(&f, "isolation.mechanisms", 4, "RCU callbacks: in force (boot: nohz_full)") &&
                              detail_is(&f, "isolation.mechanisms", 5, "managed IRQs: in force (boot: isolcpus=managed_irq)"),
                      "the details: each mechanism and where it comes from");
        }

        /* Booted without isolation: the partition gives what it can, the rest needs a boot. */
        tree_write(&f, "proc/cmdline", bare_cmdline);
        faketree_cpus(f.root, "0-3", "", "(null)");
        if (fixture_run(&f, config)) {
                CHECK(fires(&f, "isolation.mechanisms", "cpus 2-3", SEVERITY_INFO) &&
                              message_has(&f, "isolation.mechanisms",
                                          "Isolated CPUs 2-3: missing tick, RCU callbacks, managed IRQs; in force: load "
                                          "balancing (partition isolated.slice), unbound workqueues (partition "
                                          "isolated.slice)") &&
                              message_has(&f, "isolation.mechanisms",
                                          "add nohz_full=2-3 rcu_nocbs=2-3 isolcpus=managed_irq,2-3 to the kernel"),
                      "partition only: tick, RCU and managed IRQs missing, with the boot parameters for them");
                CHECK(detail_is(&f, "isolation.mechanisms", 0, "load balancing: in force (partition isolated.slice)") &&
                              detail_is(&f, "isolation.mechanisms", 3, "tick: missing, only a boot gives it"),
                      "load balancing from the partition, the tick missing");
        }

        /* 6.12 after a hotplug: the root isolates CPU 2 only, so CPU 3 is balanced again. */
        tree_write(&f, "sys/fs/cgroup/cpuset.cpus.isolated", "2\n");
        if (fixture_run(&f, config)) {
                CHECK(fires(&f, "isolation.mechanisms", "cpu2", SEVERITY_INFO) &&
                              fires(&f, "isolation.mechanisms", "cpu3", SEVERITY_INFO),
                      "CPUs with different reports are told apart");
                CHECK(message_has_for(&f, "isolation.mechanisms", "cpu3", "missing load balancing, tick,"),
                      "CPU 3: load balancing missing too");
        }

        /* Nothing at all: no partition, no boot isolation, workqueues everywhere, timers
         * migrating. */
        tree_write(&f, "sys/devices/virtual/workqueue/cpumask", "f\n");
        tree_write(&f, "proc/sys/kernel/timer_migration", "1\n");
        if (fixture_run(&f, healthy_config)) {
                CHECK(message_has_for(&f, "isolation.mechanisms", "cpus 2-3",
                                      "missing load balancing, unbound workqueues, timer migration, tick, RCU callbacks, "
                                      "managed IRQs") &&
                              message_has(&f, "isolation.mechanisms", "kernel.timer_migration = 0 in [sysctl]") &&
                              message_has(&f, "isolation.mechanisms", "[cpus] workqueues = housekeeping keeps") &&
                              message_has(&f, "isolation.mechanisms", "isolcpus=managed_irq,domain,2-3") &&
                              message_has(&f, "isolation.mechanisms", "[cpus] partition = SLICE"),
                      "no isolation: every mechanism missing, the boot line and the run-time partition offered");
        }
        fixture_done(&f);
}

/* isolation.mechanisms on a host booted without isolation whose kernel's partitions leave
 * the unbound workqueues alone (6.1) or take them (6.8 and later). */
static void test_mechanisms_workqueues(void) {
        char config[1024];
        Fixture f;

        partition_config(config, sizeof(config));
        fixture_init(&f);
        tree_mkdir(&f, "sys/fs/cgroup/isolated.slice");
        tree_write(&f, PARTITION_FILE, "isolated\n");
        tree_write(&f, "sys/fs/cgroup/isolated.slice/cpuset.cpus.effective", "2-3\n");
        tree_write(&f, "proc/cmdline", "BOOT_IMAGE=/vmlinuz-6.1.0 root=UUID=1234-abcd ro quiet skew_tick=1 nosoftlockup\n");
        faketree_cpus(f.root, "0-3", "", "(null)");
        /* 6.1: its partitions leave the unbound workqueues alone (the mask stays f) and its
         * root has no cpuset.cpus.isolated: unsupported here, with the reason. */
        tree_write(&f, "sys/devices/virtual/workqueue/cpumask", "f\n");
        if (fixture_run(&f, config)) {
                CHECK(detail_is(&f, "isolation.mechanisms", 0, "load balancing: in force (partition isolated.slice)") &&
                              detail_is(&f, "isolation.mechanisms", 1,
                                        "unbound workqueues: missing, not on this kernel: its partitions leave the "
                                        "unbound workqueues alone (the root cgroup has no cpuset.cpus.isolated; 6.8 and "
                                        "later take them)"),
                      "6.1: the workqueues missing, unsupported by this kernel's partitions, and why");
                CHECK(message_has(&f, "isolation.mechanisms", "missing unbound workqueues, tick,") &&
                              message_has(&f, "isolation.mechanisms",
                                          "The partition takes them out of the unbound workqueues not on this kernel") &&
                              message_has(&f, "isolation.mechanisms", "[cpus] workqueues = housekeeping keeps"),
                      "6.1: the message says so, and names the fix that works on any kernel");
        }
        /* A kernel whose partitions take the workqueues (the root file there) but whose mask
         * still has them: missing, and no such reason given. */
        tree_write(&f, "sys/fs/cgroup/cpuset.cpus.isolated", "2-3\n");
        if (fixture_run(&f, config))
                CHECK(detail_is(&f, "isolation.mechanisms", 1, "unbound workqueues: missing") &&
                              !message_has(&f, "isolation.mechanisms", "not on this kernel"),
                      "6.12 with the mask rewritten: missing, not called unsupported");
        fixture_done(&f);
}

int main(void) {
        test_pid1_affinity();
        test_unconfined_slices();
        test_partition_state();
        test_mechanisms();
        test_mechanisms_workqueues();
        return audit_fixture_finish(AUDIT_TEST_SYSTEMD);
}
