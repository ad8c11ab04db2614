/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* audit-cpu.c against fake --root trees: SMT siblings, NUMA spread, the governor and
 * frequency floor, idle states, /dev/cpu_dma_latency and steal time. */
#include "audit-fixture.h"

static void test_topology(void) {
        Fixture f;

        fixture_init(&f);
        /* lscpu's example: CPU n and n+2 share a core, so 2 pairs with 0 and 3 with 1 */
        tree_write(&f, "sys/devices/system/cpu/cpu2/topology/thread_siblings_list", "0,2\n");
        tree_write(&f, "sys/devices/system/cpu/cpu3/topology/thread_siblings_list", "1,3\n");
        if (fixture_run(&f, healthy_config)) {
                CHECK(fires(&f, "topology.smt-sibling", "cpu2", SEVERITY_WARNING), "cpu2's sibling is housekeeping");
                CHECK(fires(&f, "topology.smt-sibling", "cpu3", SEVERITY_WARNING), "cpu3's sibling is housekeeping");
                CHECK(message_has(&f, "topology.smt-sibling", "CPU 0,"), "the sibling is named");
                CHECK(message_has(&f, "topology.smt-sibling", "smt/control"), "SMT off is offered");
        }

        /* one whole core isolated, one split: 8 CPUs, siblings n and n+4 */
        tree_write(&f, "sys/devices/system/cpu/online", "0-7\n");
        tree_write(&f, "sys/devices/system/cpu/possible", "0-7\n");
        for (unsigned cpu = 0; cpu < 8; cpu++) {
                char list[16];
                snprintf(list, sizeof(list), "%u,%u\n", cpu % 4, cpu % 4 + 4);
                tree_writef(&f, list, "sys/devices/system/cpu/cpu%u/topology/thread_siblings_list", cpu);
        }
        tree_write(&f, "sys/devices/system/node/node0/cpulist", "0-7\n");
        tree_write(&f, "proc/cmdline", "ro isolcpus=managed_irq,domain,3,6-7 nohz_full=3,6-7 rcu_nocbs=3,6-7 irqaffinity=0-2,4-5\n");
        tree_write(&f, "sys/devices/system/cpu/isolated", "3,6-7\n");
        tree_write(&f, "sys/devices/system/cpu/nohz_full", "3,6-7\n");
        if (fixture_run(&f, "[cpus]\nisolated = 3,6-7\n")) {
                CHECK(fires(&f, "topology.smt-sibling", "cpu6", SEVERITY_WARNING), "cpu6 shares a core with cpu2");
                CHECK(quiet(&f, "boot.isolcpus"), "(the boot parameters match)");
                CHECK(count_id(&f, "topology.smt-sibling") == 1, "cpu3 and cpu7 are a whole core: one finding");
                CHECK(message_has(&f, "topology.smt-sibling", "isolate 2-3,6-7 (adding CPU 2), or keep only CPUs 3,7"),
                      "both ways to whole cores are spelled out, one CPU as \"CPU 2\", two as \"CPUs 3,7\"");
                CHECK(quiet(&f, "topology.numa-spread"), "one node: no spread");
        }

        /* two nodes */
        tree_write(&f, "sys/devices/system/node/node0/cpulist", "0-3\n");
        tree_write(&f, "sys/devices/system/node/node1/cpulist", "4-7\n");
        if (fixture_run(&f, "[cpus]\nisolated = 3,6-7\n")) {
                CHECK(fires(&f, "topology.numa-spread", "isolated cpus 3,6-7", SEVERITY_INFO), "isolated CPUs on two nodes");
                CHECK(message_has(&f, "topology.numa-spread", "node 0: 3, node 1: 6-7"), "per node");
        }
        if (fixture_run(&f, "[cpus]\nisolated = 6-7\n"))
                CHECK(quiet(&f, "topology.numa-spread"), "isolated CPUs within node 1: no spread");
        fixture_done(&f);
}

static void test_power(void) {
        Fixture f;
        char config[1024];

        fixture_init(&f);
        tree_write(&f, "sys/devices/system/cpu/cpu2/cpufreq/scaling_governor", "powersave\n");
        if (fixture_run(&f, healthy_config)) {
                CHECK(fires(&f, "power.governor", "cpu2", SEVERITY_WARNING), "cpu2 on powersave");
                CHECK(message_has(&f, "power.governor", "echo performance > /sys/devices/system/cpu/cpu2/cpufreq/scaling_governor"),
                      "the exact command");
                CHECK(fires(&f, "power.min-freq", "cpu2", SEVERITY_WARNING), "powersave lets cpu2 drop to 800 MHz");
                CHECK(message_has(&f, "power.min-freq", "echo 3000000 > /sys/devices/system/cpu/cpu2/cpufreq/scaling_min_freq"),
                      "raising the floor to the maximum");
        }
        tree_write(&f, "sys/devices/system/cpu/cpu3/cpufreq/scaling_governor", "powersave\n");
        if (fixture_run(&f, healthy_config)) {
                CHECK(fires(&f, "power.governor", "cpus 2-3", SEVERITY_WARNING), "both isolated CPUs, one finding");
                CHECK(message_has(&f, "power.governor", "for c in 2 3; do echo performance >"), "a loop over both");
        }
        /* schedutil asked for: no governor finding, but the floor still matters */
        snprintf(config, sizeof(config), "%s[pm]\ngovernor = schedutil\n", healthy_config);
        tree_write(&f, "sys/devices/system/cpu/cpu2/cpufreq/scaling_governor", "schedutil\n");
        tree_write(&f, "sys/devices/system/cpu/cpu3/cpufreq/scaling_governor", "schedutil\n");
        if (fixture_run(&f, config)) {
                CHECK(quiet(&f, "power.governor"), "the configured governor is in place");
                CHECK(fires(&f, "power.min-freq", "cpus 2-3", SEVERITY_WARNING), "schedutil with a low floor");
        }
        tree_write(&f, "sys/devices/system/cpu/cpu2/cpufreq/scaling_min_freq", "3000000\n");
        tree_write(&f, "sys/devices/system/cpu/cpu3/cpufreq/scaling_min_freq", "3000000\n");
        if (fixture_run(&f, config))
                CHECK(quiet(&f, "power.min-freq"), "floor at the maximum: quiet");

        /* a VM without cpufreq */
        tree_remove(&f, "sys/devices/system/cpu/cpu2/cpufreq");
        tree_remove(&f, "sys/devices/system/cpu/cpu3/cpufreq");
        if (fixture_run(&f, healthy_config))
                CHECK(quiet(&f, "power.governor") && quiet(&f, "power.min-freq"), "no cpufreq: nothing to say");
        fixture_done(&f);
}

static void test_cpuidle(void) {
        Fixture f;
        FakeProcess lowlatd_without = proc_lowlatd;

        fixture_init(&f);
        tree_write(&f, "sys/devices/system/cpu/cpu2/cpuidle/state2/disable", "0\n");
        tree_write(&f, "sys/devices/system/cpu/cpu3/cpuidle/state2/disable", "0\n");
        if (fixture_run(&f, healthy_config)) {
                CHECK(fires(&f, "power.cpuidle", "cpus 2-3", SEVERITY_INFO), "C6 enabled while lowlatd holds the request: info");
                CHECK(message_has(&f, "power.cpuidle", "echo 1 > /sys/devices/system/cpu/cpu$c/cpuidle/state2/disable"),
                      "the command disables state2");
                CHECK(message_has(&f, "power.cpuidle", "(C6)"), "the state is named");
                CHECK(message_has(&f, "power.cpuidle", "held now (by pid 500, lowlatd)"), "and the holder");
                CHECK(quiet(&f, "power.dma-latency-unheld"), "lowlatd holds /dev/cpu_dma_latency");
        }

        /* lowlatd --observe reads the device: a request at the default, which holds nothing */
        lowlatd_without.fd_flags[2] = "0100000";
        tree_remove(&f, "proc/500");
        tree_add_process(&f, &lowlatd_without);
        if (fixture_run(&f, healthy_config)) {
                CHECK(fires(&f, "power.dma-latency-unheld", "/dev/cpu_dma_latency", SEVERITY_WARNING),
                      "opened read-only (O_RDONLY|O_LARGEFILE in fdinfo): not a holder, unheld warning");
                CHECK(!message_has(&f, "power.cpuidle", "by pid 500"), "and not named as the holder");
        }
        /* O_WRONLY holds as O_RDWR does */
        lowlatd_without.fd_flags[2] = "02000001";
        tree_remove(&f, "proc/500");
        tree_add_process(&f, &lowlatd_without);
        if (fixture_run(&f, healthy_config)) {
                CHECK(quiet(&f, "power.dma-latency-unheld"), "opened O_WRONLY|O_CLOEXEC: held");
                CHECK(message_has(&f, "power.cpuidle", "by pid 500, lowlatd"), "and named as the holder");
        }
        /* a writer holds a request only while a value below the default is in force: the
         * device reads the current target, 4 bytes (or text in a fake tree) */
        {
                int32_t dflt = 2000000000, ten = 10;

                tree_write_bytes(&f, "dev/cpu_dma_latency", &dflt, sizeof(dflt));
                if (fixture_run(&f, healthy_config)) {
                        CHECK(fires(&f, "power.dma-latency-unheld", "/dev/cpu_dma_latency", SEVERITY_WARNING),
                              "a writer, the default in force (4 bytes): not a holder, unheld warning");
                        CHECK(!message_has(&f, "power.cpuidle", "by pid 500"), "and not named as the holder");
                }
                tree_write(&f, "dev/cpu_dma_latency", "2000000000\n");
                if (fixture_run(&f, healthy_config))
                        CHECK(fires(&f, "power.dma-latency-unheld", "/dev/cpu_dma_latency", SEVERITY_WARNING),
                              "a writer, the default in force (text): not a holder");
                tree_write_bytes(&f, "dev/cpu_dma_latency", &ten, sizeof(ten));
                if (fixture_run(&f, healthy_config)) {
                        CHECK(quiet(&f, "power.dma-latency-unheld"), "a writer, 10 us in force: held");
                        CHECK(message_has(&f, "power.cpuidle", "by pid 500, lowlatd"), "and named as the holder");
                }
                tree_write(&f, "dev/cpu_dma_latency", "10\n");
                if (fixture_run(&f, healthy_config))
                        CHECK(quiet(&f, "power.dma-latency-unheld"), "a writer, 10 us in force (text): held");
                tree_write(&f, "dev/cpu_dma_latency", "");
        }

        /* nobody holds it */
        lowlatd_without.fd_flags[2] = NULL;
        lowlatd_without.fds[2] = NULL;
        tree_remove(&f, "proc/500");
        tree_add_process(&f, &lowlatd_without);
        if (fixture_run(&f, healthy_config)) {
                CHECK(fires(&f, "power.cpuidle", "cpus 2-3", SEVERITY_WARNING), "C6 enabled and nobody holding: warning");
                CHECK(fires(&f, "power.dma-latency-unheld", "/dev/cpu_dma_latency", SEVERITY_WARNING),
                      "configured and not held: warning");
        }
        if (fixture_run(&f, "[cpus]\nisolated = 2-3\n")) {
                CHECK(fires(&f, "power.dma-latency-unheld", "/dev/cpu_dma_latency", SEVERITY_INFO), "not configured: info");
                CHECK(quiet(&f, "power.cpuidle"), "no latency target: idle states are not judged");
        }
        /* a larger target tolerates C6 */
        if (fixture_run(&f, "[cpus]\nisolated = 2-3\n[pm]\ncpu_dma_latency = 200\n"))
                CHECK(quiet(&f, "power.cpuidle"), "C6's 133 us is within a 200 us target");
        /* no device: nothing to hold */
        tree_remove(&f, "dev/cpu_dma_latency");
        if (fixture_run(&f, healthy_config))
                CHECK(quiet(&f, "power.dma-latency-unheld"), "no /dev/cpu_dma_latency: quiet");
        fixture_done(&f);
}

static void test_steal(void) {
        Fixture f;

        fixture_init(&f);
        tree_write(&f, "proc/stat", "cpu  1000 0 500 7000 10 0 5 1500 0 0\ncpu0 250 0 125 2000 3 0 1 375 0 0\n");
        if (fixture_run(&f, healthy_config)) {
                CHECK(fires(&f, "virt.steal", "/proc/stat", SEVERITY_WARNING), "15% steal: warning");
                CHECK(message_has(&f, "virt.steal", "14.97%"), "the share is given (1500 of 10015)");
        }
        tree_write(&f, "proc/stat", "cpu  1000 0 500 98000 10 0 5 50 0 0\n");
        if (fixture_run(&f, healthy_config))
                CHECK(fires(&f, "virt.steal", "/proc/stat", SEVERITY_INFO), "0.05% steal: info");
        tree_write(&f, "proc/stat", "cpu  1000 0 500 98000 10 0 5\n");
        if (fixture_run(&f, healthy_config))
                CHECK(quiet(&f, "virt.steal"), "no steal column: quiet");
        tree_write(&f, "proc/stat", "cpu  1000 0 500 x 10 0 5 50\n");
        if (fixture_run(&f, healthy_config))
                CHECK(quiet(&f, "virt.steal"), "a malformed line: quiet");
        fixture_done(&f);
}

static void test_fair_server(void) {
        static const char off_config[] = "[cpus]\nisolated = 2-3\nfair_server = off\n";
        Fixture f;

        fixture_init(&f);
        if (fixture_run(&f, healthy_config))
                CHECK(quiet(&f, "sched.fair-server"), "no fair server files (6.1, or no debugfs), key unset: quiet");
        if (fixture_run(&f, off_config))
                CHECK(fires(&f, "sched.fair-server", "/sys/kernel/debug/sched/fair_server", SEVERITY_WARNING) &&
                              message_has(&f, "sched.fair-server", "debugfs is not mounted"),
                      "fair_server = off without the files: warning, debugfs named");
        for (unsigned cpu = 0; cpu < 4; cpu++)
                tree_writef(&f, "50000000\n", "sys/kernel/debug/sched/fair_server/cpu%u/runtime", cpu);
        if (fixture_run(&f, healthy_config))
                CHECK(fires(&f, "sched.fair-server", "fair_server", SEVERITY_INFO) &&
                              message_has(&f, "sched.fair-server", "runs on CPUs 2-3"),
                      "running on the isolated nohz_full CPUs, key unset: info naming them");
        if (fixture_run(&f, off_config))
                CHECK(quiet(&f, "sched.fair-server"), "fair_server = off with the files: the setting's business, quiet");
        tree_writef(&f, "0\n", "sys/kernel/debug/sched/fair_server/cpu%u/runtime", 2u);
        tree_writef(&f, "0\n", "sys/kernel/debug/sched/fair_server/cpu%u/runtime", 3u);
        if (fixture_run(&f, healthy_config))
                CHECK(quiet(&f, "sched.fair-server"), "runtime 0 on both (set by hand): quiet");

        /* nohz_full= without isolcpus=domain: the kernel's isolated list is empty, isolated =
         * auto takes the nohz_full CPUs, and the finding names them. */
        tree_writef(&f, "50000000\n", "sys/kernel/debug/sched/fair_server/cpu%u/runtime", 2u);
        tree_writef(&f, "50000000\n", "sys/kernel/debug/sched/fair_server/cpu%u/runtime", 3u);
        tree_write(&f, "proc/cmdline", "ro nohz_full=2-3 rcu_nocbs=2-3 isolcpus=managed_irq,2-3 irqaffinity=0-1\n");
        tree_write(&f, "sys/devices/system/cpu/isolated", "\n");
        if (fixture_run(&f, "[cpus]\n"))
                CHECK(fires(&f, "sched.fair-server", "fair_server", SEVERITY_INFO) &&
                              message_has(&f, "sched.fair-server", "runs on CPUs 2-3 (isolated, nohz_full)"),
                      "a nohz_full boot without domain, isolated = auto: the finding names CPUs 2-3");
        if (fixture_run(&f, "[cpus]\nfair_server = off\n"))
                CHECK(quiet(&f, "sched.fair-server"), "and with fair_server = off and the files there: quiet");
        fixture_done(&f);
}

int main(void) {
        test_fair_server();
        test_topology();
        test_power();
        test_cpuidle();
        test_steal();
        return audit_fixture_finish(AUDIT_TEST_CPU);
}
