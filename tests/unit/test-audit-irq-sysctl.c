/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* audit-irq-sysctl.c against fake --root trees: RT throttling, the noise sysctls,
 * irqbalance, unmovable IRQs on isolated CPUs and the sysctl advice. */
#include "audit-fixture.h"
#include "setting/irq.h"
#include "setting/irqbalance.h"

static void test_rt_throttling(void) {
        Fixture f;
        char config[1024];

        fixture_init(&f);
        tree_write(&f, "proc/sys/kernel/sched_rt_runtime_us", "-1\n");
        if (fixture_run(&f, healthy_config))
                CHECK(fires(&f, "sched.rt-throttling", "kernel.sched_rt_runtime_us", SEVERITY_WARNING), "-1 on the host");
        tree_write(&f, "proc/sys/kernel/sched_rt_runtime_us", "950000\n");
        snprintf(config, sizeof(config), "%s[sysctl]\nkernel.sched_rt_runtime_us = -1\n", healthy_config);
        if (fixture_run(&f, config)) {
                CHECK(fires(&f, "sched.rt-throttling", "kernel.sched_rt_runtime_us", SEVERITY_WARNING), "-1 in [sysctl]");
                CHECK(message_has(&f, "sched.rt-throttling", "audit.conf"), "names the file that sets it");
        }
        snprintf(config, sizeof(config), "%s[sysctl]\nkernel.sched_rt_runtime_us = 900000\n", healthy_config);
        tree_write(&f, "proc/sys/kernel/sched_rt_runtime_us", "-1\n");
        if (fixture_run(&f, config))
                CHECK(quiet(&f, "sched.rt-throttling"), "the [sysctl] value replaces the host's -1");
        if (fixture_run(&f, healthy_config))
                CHECK(message_has(&f, "sched.rt-throttling", "systemctl enable --now stalld"),
                      "without stalld the warning offers it as the companion of -1");
        {
                FakeProcess stalld = { .pid = 900, .ppid = 1, .comm = "stalld", .allowed = "0-1" };
                tree_add_process(&f, &stalld);
        }
        if (fixture_run(&f, healthy_config)) {
                CHECK(fires(&f, "sched.rt-throttling", "kernel.sched_rt_runtime_us", SEVERITY_INFO),
                      "-1 while stalld runs: info");
                CHECK(message_has(&f, "sched.rt-throttling", "stalld (pid 900) runs"), "naming stalld");
                CHECK(message_has(&f, "sched.rt-throttling", "systemctl enable stalld"), "the fix keeps it at boot");
        }
        tree_write(&f, "proc/sys/kernel/sched_rt_runtime_us", "950000\n");
        if (fixture_run(&f, healthy_config))
                CHECK(quiet(&f, "sched.rt-throttling"), "stalld with throttling on: quiet");
        fixture_done(&f);
}

/* timer_migration, stat_interval, the lockup detectors: from the host, or from [sysctl],
 * which lowlatd keeps. */
static void test_noise_sysctls(void) {
        Fixture f;
        char config[1024];

        fixture_init(&f);
        tree_write(&f, "proc/sys/kernel/timer_migration", "1\n");
        tree_write(&f, "proc/sys/vm/stat_interval", "1\n");
        tree_write(&f, "proc/sys/kernel/nmi_watchdog", "1\n");
        tree_write(&f, "proc/sys/kernel/watchdog_cpumask", "0-3\n");
        if (fixture_run(&f, healthy_config)) {
                CHECK(fires(&f, "sysctl.timer-migration", "kernel.timer_migration", SEVERITY_WARNING), "timer_migration 1: warning");
                CHECK(message_has(&f, "sysctl.timer-migration", "add kernel.timer_migration = 0 to [sysctl] in lowlatd.conf"),
                      "the fix is a [sysctl] line");
                CHECK(fires(&f, "sysctl.stat-interval", "vm.stat_interval", SEVERITY_WARNING), "stat_interval 1: warning");
                CHECK(message_has(&f, "sysctl.stat-interval", "sysctl -w vm.stat_interval=10"), "the fix, now");
                CHECK(fires(&f, "sysctl.watchdog-cpumask", "kernel.watchdog_cpumask", SEVERITY_WARNING),
                      "watchdog_cpumask 0-3 with the NMI watchdog on: warning");
                CHECK(message_has(&f, "sysctl.watchdog-cpumask", "kernel.watchdog_cpumask = 0-1"), "the fix keeps housekeeping");
                CHECK(message_has(&f, "sysctl.watchdog-cpumask", "which includes isolated CPUs 2-3:"),
                      "two isolated CPUs: \"isolated CPUs 2-3\"");
                CHECK(message_has(&f, "sysctl.watchdog-cpumask", "NMI"), "and names the NMI");
                CHECK(fires(&f, "sysctl.nmi-watchdog", "kernel.nmi_watchdog", SEVERITY_INFO), "nmi_watchdog 1: info");
        }
        snprintf(config, sizeof(config),
                 "%s[sysctl]\nkernel.timer_migration = 0\nvm.stat_interval = 10\nkernel.nmi_watchdog = 0\n"
                 "kernel.watchdog_cpumask = 0-1\n",
                 healthy_config);
        if (fixture_run(&f, "[cpus]\nisolated = 3\n"))
                CHECK(message_has(&f, "sysctl.watchdog-cpumask", "which includes isolated CPU 3:"),
                      "one isolated CPU: \"isolated CPU 3\", not \"CPUs 3\"");
        if (fixture_run(&f, config))
                CHECK(quiet(&f, "sysctl.timer-migration") && quiet(&f, "sysctl.stat-interval") &&
                              quiet(&f, "sysctl.watchdog-cpumask") && quiet(&f, "sysctl.nmi-watchdog"),
                      "the values lowlatd keeps in [sysctl] count");

        /* the soft-lockup detector alone: on unless nosoftlockup */
        tree_write(&f, "proc/sys/kernel/nmi_watchdog", "0\n");
        if (fixture_run(&f, healthy_config))
                CHECK(quiet(&f, "sysctl.watchdog-cpumask"), "nosoftlockup and no NMI watchdog: no detector runs");
        tree_write(&f, "proc/cmdline", "ro quiet skew_tick=1 isolcpus=managed_irq,domain,2-3 nohz_full=2-3 rcu_nocbs=2-3 "
                                       "irqaffinity=0-1\n");
        if (fixture_run(&f, healthy_config)) {
                CHECK(fires(&f, "sysctl.watchdog-cpumask", NULL, SEVERITY_WARNING), "the soft-lockup detector on 0-3: warning");
                const Finding *x = finding_list_find(&f.findings, "sysctl.watchdog-cpumask", NULL);
                CHECK(x && !strstr(x->message, "NMI"), "no NMI mentioned without the NMI watchdog");
        }
        tree_write(&f, "proc/sys/kernel/watchdog", "0\n");
        if (fixture_run(&f, healthy_config))
                CHECK(quiet(&f, "sysctl.watchdog-cpumask"), "kernel.watchdog = 0: quiet");

        /* nothing isolated: nothing to keep quiet */
        tree_write(&f, "sys/devices/system/cpu/isolated", "\n");
        tree_write(&f, "sys/devices/system/cpu/nohz_full", "(null)\n");
        if (fixture_run(&f, "[cpus]\nisolated = auto\n"))
                CHECK(quiet(&f, "sysctl.timer-migration") && quiet(&f, "sysctl.stat-interval"),
                      "with no CPU isolated these are not reported");
        fixture_done(&f);
}

static void test_irqbalance(void) {
        Fixture f;
        SettingTable t;
        Setting *ban = NULL;
        char config[1024];
        FakeProcess irqbalance = { .pid = 800, .ppid = 1, .comm = "irqbalance", .allowed = "0-1",
                                   .environ = "PATH=/usr/bin\nIRQBALANCE_ARGS=" };

        fixture_init(&f);
        tree_add_process(&f, &irqbalance);
        if (fixture_run(&f, healthy_config)) {
                CHECK(fires(&f, "irq.irqbalance", "pid 800 (irqbalance)", SEVERITY_INFO),
                      "no ban, but the kernel isolated the CPUs (irqbalance 1.1+ skips them): info");
                CHECK(message_has(&f, "irq.irqbalance", "IRQBALANCE_BANNED_CPULIST=2-3 to /etc/default/irqbalance"), "the fix");
        }
        snprintf(config, sizeof(config), "%s[irq]\npin = eth0-TxRx-* 2-3\n", healthy_config);
        if (fixture_run(&f, config)) {
                CHECK(fires(&f, "irq.irqbalance", "pid 800 (irqbalance)", SEVERITY_WARNING), "with pins, the two fight: warning");
                CHECK(message_has(&f, "irq.irqbalance", "it moves the IRQs lowlatd pins"), "and says so");
        }
        tree_write(&f, "sys/devices/system/cpu/isolated", "\n");
        tree_write(&f, "sys/devices/system/cpu/nohz_full", "3\n");
        if (fixture_run(&f, healthy_config)) {
                CHECK(fires(&f, "irq.irqbalance", "pid 800 (irqbalance)", SEVERITY_WARNING),
                      "the kernel did not isolate CPU 2: warning");
                CHECK(message_has(&f, "irq.irqbalance", "the kernel did not isolate them"), "and says so");
        }
        tree_write(&f, "etc/default/irqbalance", "# irqbalance\nIRQBALANCE_BANNED_CPULIST=\"2-3\"\n");
        if (fixture_run(&f, healthy_config)) {
                CHECK(fires(&f, "irq.irqbalance", NULL, SEVERITY_WARNING), "the file bans them, the process does not");
                CHECK(message_has(&f, "irq.irqbalance", "restart it"), "so it needs a restart");
        }
        irqbalance.environ = "PATH=/usr/bin\nIRQBALANCE_BANNED_CPULIST=2-3";
        tree_add_process(&f, &irqbalance);
        if (fixture_run(&f, healthy_config))
                CHECK(quiet(&f, "irq.irqbalance"), "IRQBALANCE_BANNED_CPULIST=2-3 in its environment");
        irqbalance.environ = "IRQBALANCE_BANNED_CPUS=0000000c";
        tree_add_process(&f, &irqbalance);
        if (fixture_run(&f, healthy_config))
                CHECK(quiet(&f, "irq.irqbalance"), "the older mask form IRQBALANCE_BANNED_CPUS=c");
        irqbalance.environ = "IRQBALANCE_BANNED_CPULIST=3";
        tree_add_process(&f, &irqbalance);
        if (fixture_run(&f, healthy_config))
                CHECK(fires(&f, "irq.irqbalance", NULL, SEVERITY_WARNING), "banning CPU 3 only is not enough");
        /* On an isolcpus= kernel a ban that misses the isolated CPUs is worse than none:
         * irqbalance then skips its own isolcpus= reading (the e2e guest saw it place IRQs
         * on 2-3 with IRQBALANCE_BANNED_CPUS=0). An empty value counts as no ban. */
        tree_write(&f, "sys/devices/system/cpu/isolated", "2-3\n");
        tree_write(&f, "sys/devices/system/cpu/nohz_full", "2-3\n");
        tree_write(&f, "etc/default/irqbalance", "IRQBALANCE_BANNED_CPUS=0\n");
        irqbalance.environ = "IRQBALANCE_BANNED_CPUS=0";
        tree_add_process(&f, &irqbalance);
        if (fixture_run(&f, healthy_config)) {
                CHECK(fires(&f, "irq.irqbalance", NULL, SEVERITY_WARNING),
                      "IRQBALANCE_BANNED_CPUS=0 on an isolcpus=2-3 kernel: warning");
                CHECK(message_has(&f, "irq.irqbalance", "its ban list replaces its own reading of isolcpus="), "and says why");
        }
        irqbalance.environ = "IRQBALANCE_BANNED_CPULIST=\nIRQBALANCE_BANNED_CPUS=''";
        tree_add_process(&f, &irqbalance);
        if (fixture_run(&f, healthy_config)) {
                CHECK(fires(&f, "irq.irqbalance", NULL, SEVERITY_INFO), "empty ban values count as no ban: info");
                CHECK(message_has(&f, "irq.irqbalance", "Or set [irq] irqbalance = ban in lowlatd.conf"),
                      "without [irq] irqbalance = ban, the finding offers it");
        }

        /* Which ban is in force: the one lowlatd told it ([irq] irqbalance = ban, its
         * setting in the table), or none. */
        table_init(&t, NULL);
        if (CHECK(setting_new_irqbalance_ban(f.posture, &ban) == 0, "an irqbalance_ban setting")) {
                ban->state = SETTING_OK;
                ban->observed = strdup("0,2-3");
                table_add(&t, ban);
                if (fixture_run_table(&f, healthy_config, &t)) {
                        CHECK(fires(&f, "irq.irqbalance", "pid 800 (irqbalance)", SEVERITY_INFO), "lowlatd's ban is in force: info");
                        CHECK(message_has(&f, "irq.irqbalance", "because lowlatd told it so over its socket ([irq] "
                                                                "irqbalance = ban; it bans 0,2-3)"),
                              "and says so, with what it bans");
                }
                if (fixture_run_table(&f, config, &t)) {
                        CHECK(fires(&f, "irq.irqbalance", NULL, SEVERITY_WARNING), "with pins it still fights: warning");
                        CHECK(message_has(&f, "irq.irqbalance", "It still moves the IRQs lowlatd pins"), "and says so");
                }
                setting_set_state(ban, SETTING_UNSUPPORTED);
                setting_set_reason(ban, "irqbalance (pid 800) answered \"setup\" with \"?\"");
                if (fixture_run_table(&f, healthy_config, &t)) {
                        CHECK(fires(&f, "irq.irqbalance", NULL, SEVERITY_INFO), "the ban could not be told: as without it");
                        CHECK(message_has(&f, "irq.irqbalance", "[irq] irqbalance = ban could not tell it to: irqbalance "
                                                                "(pid 800) answered"),
                              "and the finding says why");
                }
        }
        table_done(&t);
        fixture_done(&f);
}

static void test_unmovable_irqs(void) {
        Fixture f;
        SettingTable t;
        Setting *on_isolated = NULL, *on_housekeeping = NULL, *movable = NULL;

        fixture_init(&f);
        table_init(&t, NULL);
        if (CHECK(fixture_run(&f, healthy_config), "posture for the IRQ table") &&
            CHECK(setting_new_irq(f.posture, 40, "nvme0q3", &on_isolated) >= 0 &&
                          setting_new_irq(f.posture, 41, "nvme0q1", &on_housekeeping) >= 0 &&
                          setting_new_irq(f.posture, 42, "eth0-TxRx-2", &movable) >= 0,
                  "three IRQ settings")) {
                /* The effective CPUs are the kernel's (read from the tree when asked), the
                 * observed text is the affinity. */
                tree_write(&f, "proc/irq/40/effective_affinity_list", "3\n");
                tree_write(&f, "proc/irq/41/effective_affinity_list", "1\n");
                on_isolated->state = SETTING_UNMOVABLE;
                on_isolated->observed = strdup("2-3");
                on_isolated->reason = strdup("writing smp_affinity_list: Input/output error");
                on_housekeeping->state = SETTING_UNMOVABLE;
                on_housekeeping->observed = strdup("0-3");
                movable->state = SETTING_DRIFTED;
                movable->observed = strdup("2");
                table_add(&t, TAKE_PTR(on_isolated));
                table_add(&t, TAKE_PTR(on_housekeeping));
                table_add(&t, TAKE_PTR(movable));

                if (fixture_run_table(&f, healthy_config, &t)) {
                        CHECK(fires(&f, "irq.unmovable-isolated", "irq 40 (nvme0q3)", SEVERITY_WARNING),
                              "unmovable IRQ served on CPU 3");
                        CHECK(message_has(&f, "irq.unmovable-isolated", "isolated CPU 3 "), "the effective CPU is named");
                        CHECK(count_id(&f, "irq.unmovable-isolated") == 1,
                              "an unmovable IRQ served on housekeeping, or a movable one, is not reported");
                }
                if (fixture_run_table(&f, healthy_config, NULL))
                        CHECK(quiet(&f, "irq.unmovable-isolated"), "without a table: quiet");
        }
        setting_free(on_isolated);
        setting_free(on_housekeeping);
        setting_free(movable);
        table_done(&t);
        fixture_done(&f);
}

static void test_sysctls(void) {
        Fixture f;
        char config[1024];

        fixture_init(&f);
        snprintf(config, sizeof(config), "%s[sysctl]\nnet.ipv4.tcp_low_latency = 1\nnet.ipv4.tcp_tw_recycle = 1\n"
                                         "kernel.sched_min_granularity_ns = 100000\nnet.ipv4.tcp_timestamps = 0\n",
                 healthy_config);
        if (fixture_run(&f, config)) {
                CHECK(fires(&f, "sysctl.no-effect", "net.ipv4.tcp_low_latency", SEVERITY_INFO), "tcp_low_latency");
                CHECK(fires(&f, "sysctl.gone", "net.ipv4.tcp_tw_recycle", SEVERITY_WARNING), "tcp_tw_recycle");
                CHECK(fires(&f, "sysctl.gone", "kernel.sched_min_granularity_ns", SEVERITY_WARNING), "moved to debugfs");
                CHECK(fires(&f, "sysctl.conflict", "net.ipv4.tcp_timestamps", SEVERITY_WARNING),
                      "timestamps 0 in [sysctl], tcp_tw_reuse 2 on the host");
        }
        /* an old kernel that still has them */
        tree_write(&f, "proc/sys/kernel/osrelease", "4.9.0-13-amd64\n");
        tree_write(&f, "proc/sys/net/ipv4/tcp_tw_recycle", "0\n");
        tree_write(&f, "proc/sys/kernel/sched_min_granularity_ns", "3000000\n");
        tree_write(&f, "proc/sys/net/ipv4/tcp_tw_reuse", "0\n");
        if (fixture_run(&f, config)) {
                CHECK(quiet(&f, "sysctl.no-effect"), "tcp_low_latency still works on 4.9");
                CHECK(quiet(&f, "sysctl.gone"), "the keys exist on this kernel");
                CHECK(quiet(&f, "sysctl.conflict"), "tcp_tw_reuse = 0: nothing to break");
        }
        /* the conflict on the host alone */
        tree_write(&f, "proc/sys/net/ipv4/tcp_timestamps", "0\n");
        tree_write(&f, "proc/sys/net/ipv4/tcp_tw_reuse", "1\n");
        if (fixture_run(&f, healthy_config)) {
                CHECK(fires(&f, "sysctl.conflict", NULL, SEVERITY_WARNING), "host timestamps 0 and tw_reuse 1");
                CHECK(message_has(&f, "sysctl.conflict", "(on the host)"), "says where the values come from");
        }

        /* bbr not loaded */
        tree_write(&f, "proc/sys/net/ipv4/tcp_available_congestion_control", "reno cubic\n");
        if (fixture_run(&f, healthy_config)) {
                CHECK(fires(&f, "sysctl.cc-unavailable", "net.ipv4.tcp_congestion_control", SEVERITY_WARNING), "bbr not loaded");
                CHECK(message_has(&f, "sysctl.cc-unavailable", "modprobe tcp_bbr"), "modprobe");
                CHECK(message_has(&f, "sysctl.cc-unavailable", "echo tcp_bbr > /etc/modules-load.d/bbr.conf"), "at boot");
        }
        if (fixture_run(&f, "[cpus]\nisolated = 2-3\n"))
                CHECK(quiet(&f, "sysctl.cc-unavailable"), "no congestion control configured: quiet");
        fixture_done(&f);
}

int main(void) {
        test_rt_throttling();
        test_noise_sysctls();
        test_irqbalance();
        test_unmovable_irqs();
        test_sysctls();
        return audit_fixture_finish(AUDIT_TEST_IRQ_SYSCTL);
}
