/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* audit-boot-kernel.c against fake --root trees: the isolation parameters, the timer
 * parameters, boot.cmdline's one GRUB line, the preemption model and the kernel config. */
#include "audit-fixture.h"

/* The parameters the kernel line lacks: each finding names its own and refers to
 * boot.cmdline, which holds the whole line at the worst severity among them. */
static void boot_cmdline_missing(Fixture *f) {
        const char *expected_line =
                "GRUB_CMDLINE_LINUX_DEFAULT=\"quiet isolcpus=managed_irq,domain,2-3 nohz_full=2-3 rcu_nocbs=2-3 irqaffinity=0-1 "
                "skew_tick=1 nosoftlockup\" in /etc/default/grub";

        /* no isolcpus, nohz_full still there */
        tree_write(f, "proc/cmdline", "BOOT_IMAGE=/vmlinuz root=/dev/sda1 ro quiet nohz_full=2-3 rcu_nocbs=2-3 irqaffinity=0-1\n");
        tree_write(f, "sys/devices/system/cpu/isolated", "\n");
        if (fixture_run(f, healthy_config)) {
                CHECK(fires(f, "boot.isolcpus", "isolcpus", SEVERITY_WARNING), "no isolcpus=: boot.isolcpus warning");
                CHECK(message_has(f, "boot.isolcpus",
                                  "Fix: isolcpus=managed_irq,domain,2-3 on the kernel command line (the whole line is "
                                  "under boot.cmdline)."),
                      "it names the parameter it needs and refers to boot.cmdline");
                CHECK(fires(f, "boot.cmdline", "GRUB_CMDLINE_LINUX_DEFAULT", SEVERITY_WARNING) &&
                              count_id(f, "boot.cmdline") == 1,
                      "one boot.cmdline, a warning like the worst of its referrers");
                CHECK(message_has(f, "boot.cmdline", expected_line),
                      "boot.cmdline has the whole GRUB line, with the timer parameters it lacks");
                CHECK(message_has(f, "boot.cmdline",
                                  "One kernel command line fixes boot.isolcpus, boot.skew_tick and boot.nosoftlockup: "),
                      "and names the findings it fixes");
                CHECK(message_has(f, "boot.cmdline", "update-grub") && !strstr(finding_list_find(&f->findings, "boot.isolcpus", NULL)->message, "update-grub"),
                      "the how-to is in boot.cmdline only");
                CHECK(quiet(f, "boot.nohz_full") && quiet(f, "boot.rcu_nocbs") && quiet(f, "boot.irqaffinity"),
                      "the other parameters are fine");
                CHECK(quiet(f, "boot.mismatch"), "nothing asked, nothing applied: no mismatch");
        }

        /* nothing at all while the config names isolated CPUs */
        tree_write(f, "proc/cmdline", "BOOT_IMAGE=/vmlinuz root=/dev/sda1 ro\n");
        tree_write(f, "sys/devices/system/cpu/nohz_full", "(null)\n");
        if (fixture_run(f, healthy_config)) {
                CHECK(fires(f, "boot.isolcpus", "isolcpus", SEVERITY_CRITICAL), "no isolation at all: critical");
                CHECK(fires(f, "boot.nohz_full", "nohz_full", SEVERITY_WARNING), "no nohz_full=: warning");
                CHECK(message_has(f, "boot.nohz_full", "Fix: nohz_full=2-3 on the kernel command line"), "its parameter");
                CHECK(fires(f, "boot.rcu_nocbs", "rcu_nocbs", SEVERITY_WARNING), "no rcu_nocbs= nor nohz_full=: warning");
                CHECK(message_has(f, "boot.rcu_nocbs", "Isolated CPUs 2-3 are in neither") &&
                              message_has(f, "boot.rcu_nocbs", "Fix: rcu_nocbs=2-3 on"),
                      "both CPUs, and the parameter");
                CHECK(fires(f, "boot.irqaffinity", "irqaffinity", SEVERITY_INFO), "no irqaffinity=: info");
                CHECK(message_has(f, "boot.irqaffinity", "Fix: irqaffinity=0-1 on"), "housekeeping in irqaffinity=");
                CHECK(fires(f, "boot.cmdline", "GRUB_CMDLINE_LINUX_DEFAULT", SEVERITY_CRITICAL),
                      "boot.cmdline takes the worst severity among its referrers: critical");
                CHECK(message_has(f, "boot.cmdline", "GRUB_CMDLINE_LINUX_DEFAULT=\"isolcpus=managed_irq,domain,2-3 "),
                      "nothing kept from a bare command line");
                CHECK(message_has(f, "boot.cmdline",
                                  "fixes boot.isolcpus, boot.nohz_full, boot.rcu_nocbs, boot.irqaffinity, "
                                  "boot.skew_tick and boot.nosoftlockup:"),
                      "every referrer, once each");
        }
}

/* Parameters that are there, but without the flags or on other CPUs than lowlatd isolates. */
static void boot_cmdline_misplaced(Fixture *f) {
        /* isolcpus without flags: domain only, managed IRQs still spread */
        tree_write(f, "proc/cmdline", "ro isolcpus=2-3 nohz_full=2-3 irqaffinity=0-1\n");
        tree_write(f, "sys/devices/system/cpu/isolated", "2-3\n");
        tree_write(f, "sys/devices/system/cpu/nohz_full", "2-3\n");
        if (fixture_run(f, healthy_config)) {
                CHECK(fires(f, "boot.isolcpus", "isolcpus", SEVERITY_WARNING), "isolcpus= without managed_irq: warning");
                CHECK(message_has(f, "boot.isolcpus", "managed_irq"), "the message names managed_irq");
                CHECK(quiet(f, "boot.rcu_nocbs"), "nohz_full= implies rcu_nocbs=");
                CHECK(quiet(f, "boot.mismatch"), "isolcpus=2-3 applied as 2-3");
        }

        /* isolcpus on other CPUs; irqaffinity onto isolated ones */
        tree_write(f, "proc/cmdline", "ro isolcpus=managed_irq,domain,3 nohz_full=3 rcu_nocbs=3 irqaffinity=0-2\n");
        tree_write(f, "sys/devices/system/cpu/isolated", "3\n");
        tree_write(f, "sys/devices/system/cpu/nohz_full", "3\n");
        if (fixture_run(f, healthy_config)) {
                CHECK(fires(f, "boot.isolcpus", "isolcpus", SEVERITY_WARNING), "isolcpus= names other CPUs: warning");
                CHECK(message_has(f, "boot.isolcpus", "isolcpus= names CPU 3 but lowlatd treats CPUs 2-3 as isolated"),
                      "\"CPU 3\" and \"CPUs 2-3\"");
                CHECK(fires(f, "boot.nohz_full", "nohz_full", SEVERITY_WARNING), "nohz_full= names other CPUs: warning");
                CHECK(message_has(f, "boot.nohz_full", "nohz_full= names CPU 3, not the isolated CPUs 2-3"), "in words");
                CHECK(fires(f, "boot.rcu_nocbs", "rcu_nocbs", SEVERITY_WARNING), "CPU 2 is not offloaded: warning");
                CHECK(message_has(f, "boot.rcu_nocbs", "Isolated CPU 2 is "), "only CPU 2 is missing");
                CHECK(fires(f, "boot.irqaffinity", "irqaffinity", SEVERITY_WARNING), "irqaffinity= on isolated: warning");
                CHECK(quiet(f, "boot.mismatch"), "the kernel applied what was asked");
        }
}

/* What the line keeps of the running one: kernel parameters only, quoted values as the
 * kernel reads them, and no boot.cmdline when nothing is to fix. */
static void boot_cmdline_kept(Fixture *f) {
        /* init's arguments after "--" are not the kernel's: out of the line, and not read
         * as parameters (the nosoftlockup there does not count) */
        tree_write(f, "proc/cmdline", "BOOT_IMAGE=/vmlinuz ro quiet splash acpi_osi=\"!Windows $x\" nohz_full=2-3 "
                                      "-- --foo nosoftlockup \"$x\"\n");
        if (fixture_run(f, healthy_config)) {
                CHECK(message_has(f, "boot.cmdline",
                                  "GRUB_CMDLINE_LINUX_DEFAULT=\"quiet splash acpi_osi=\\\"!Windows \\$x\\\" "
                                  "isolcpus=managed_irq,domain,2-3 nohz_full=2-3 rcu_nocbs=2-3 irqaffinity=0-1 "
                                  "skew_tick=1 nosoftlockup\" in /etc/default/grub"),
                      "kernel parameters only, shell characters escaped");
                const Finding *x = finding_list_find(&f->findings, "boot.cmdline", NULL);
                CHECK(x && !strstr(x->message, "--foo") && !strstr(x->message, "=\"quiet splash -- "),
                      "nothing from \"--\" on");
                CHECK(message_has(f, "boot.cmdline", "The arguments after \"--\" on the running command line are for init"),
                      "and it says so");
                CHECK(fires(f, "boot.nosoftlockup", "nosoftlockup", SEVERITY_INFO),
                      "nosoftlockup after \"--\" is init's: boot.nosoftlockup fires");
        }

        /* quoted values, and a model kernel line otherwise */
        tree_write(f, "proc/cmdline", "ro quiet isolcpus=\"managed_irq,domain,2-3\" nohz_full=\"2-3\" rcu_nocbs=2-3 irqaffinity=0-1\n");
        tree_write(f, "sys/devices/system/cpu/isolated", "2-3\n");
        tree_write(f, "sys/devices/system/cpu/nohz_full", "2-3\n");
        if (fixture_run(f, healthy_config))
                CHECK(quiet(f, "boot.isolcpus") && quiet(f, "boot.nohz_full"), "quoted values are read as the kernel does");

        /* only an info finding refers to the line: boot.cmdline is info too */
        tree_write(f, "proc/cmdline", "BOOT_IMAGE=/vmlinuz-6.8.0-rt root=UUID=1234-abcd ro quiet skew_tick=1 "
                                      "isolcpus=managed_irq,domain,2-3 nohz_full=2-3 rcu_nocbs=2-3 irqaffinity=0-1 -- --foo\n");
        if (fixture_run(f, healthy_config)) {
                CHECK(fires(f, "boot.nosoftlockup", "nosoftlockup", SEVERITY_INFO) && count_id(f, "boot.isolcpus") == 0,
                      "only nosoftlockup is missing");
                CHECK(fires(f, "boot.cmdline", NULL, SEVERITY_INFO), "boot.cmdline is info, like its one referrer");
                CHECK(message_has(f, "boot.cmdline",
                                  "One kernel command line fixes boot.nosoftlockup: set GRUB_CMDLINE_LINUX_DEFAULT=\"quiet "
                                  "skew_tick=1 isolcpus=managed_irq,domain,2-3 nohz_full=2-3 rcu_nocbs=2-3 "
                                  "irqaffinity=0-1 nosoftlockup\" in"),
                      "the line keeps the isolation as it is and adds nosoftlockup, nothing from \"--\"");
        }

        /* nothing to fix on the command line: no boot.cmdline */
        tree_write(f, "proc/cmdline", healthy_cmdline);
        if (fixture_run(f, healthy_config))
                CHECK(quiet(f, "boot.cmdline"), "no boot finding, no boot.cmdline");
}

/* The three run on one tree in turn, each from the files the one before left. */
static void test_boot_cmdline(void) {
        Fixture f;

        fixture_init(&f);
        boot_cmdline_missing(&f);
        boot_cmdline_misplaced(&f);
        boot_cmdline_kept(&f);
        fixture_done(&f);
}

static void test_boot_nothing_isolated(void) {
        Fixture f;

        fixture_init(&f);
        tree_write(&f, "proc/cmdline", "ro quiet\n");
        tree_write(&f, "sys/devices/system/cpu/isolated", "\n");
        tree_write(&f, "sys/devices/system/cpu/nohz_full", "(null)\n");
        if (fixture_run(&f, "[cpus]\nisolated = auto\n")) {
                CHECK(fires(&f, "boot.isolcpus", "isolcpus", SEVERITY_INFO), "nothing isolated anywhere: info");
                CHECK(quiet(&f, "boot.nohz_full") && quiet(&f, "sched.stray-task") && quiet(&f, "power.governor"),
                      "with no isolated CPU, the per-CPU checks have nothing to check");
                CHECK(!strstr(finding_list_find(&f.findings, "boot.isolcpus", NULL)->message, "boot.cmdline"),
                      "the info names no CPUs to isolate, so it does not refer to boot.cmdline");
                CHECK(message_has(&f, "boot.cmdline", "GRUB_CMDLINE_LINUX_DEFAULT=\"quiet skew_tick=1 nosoftlockup\""),
                      "the timer findings still get a line, without isolation parameters of empty lists");
        }
        /* isolation parameters someone put there stay as they are */
        tree_write(&f, "proc/cmdline", "ro quiet irqaffinity=0-3 rcu_nocbs=1\n");
        if (fixture_run(&f, "[cpus]\nisolated = auto\n"))
                CHECK(message_has(&f, "boot.cmdline",
                                  "GRUB_CMDLINE_LINUX_DEFAULT=\"quiet irqaffinity=0-3 rcu_nocbs=1 skew_tick=1 nosoftlockup\""),
                      "nothing isolated: irqaffinity= and rcu_nocbs= are kept, none is added");
        fixture_done(&f);
}

static void test_boot_mismatch(void) {
        Fixture f;

        fixture_init(&f);
        /* the kernel isolated less than asked, and runs no CPU tickless */
        tree_write(&f, "sys/devices/system/cpu/isolated", "2\n");
        tree_write(&f, "sys/devices/system/cpu/nohz_full", "(null)\n");
        tree_write(&f, "boot/config-6.8.0-rt", "CONFIG_PREEMPT_RT=y\nCONFIG_HZ_1000=y\nCONFIG_RCU_NOCB_CPU=y\n");
        if (fixture_run(&f, healthy_config)) {
                CHECK(fires(&f, "boot.mismatch", "/sys/devices/system/cpu/isolated", SEVERITY_WARNING),
                      "isolcpus=2-3 applied as 2: mismatch");
                CHECK(fires(&f, "boot.mismatch", "/sys/devices/system/cpu/nohz_full", SEVERITY_WARNING),
                      "nohz_full=2-3 applied as nothing: mismatch");
                CHECK(message_has_for(&f, "boot.mismatch", "/sys/devices/system/cpu/nohz_full", "without CONFIG_NO_HZ_FULL"),
                      "the nohz_full mismatch is blamed on the kernel config");
                CHECK(fires(&f, "kernel.config.NO_HZ_FULL", NULL, SEVERITY_WARNING), "kernel.config.NO_HZ_FULL fires");
        }

        /* isolcpus without domain isolates nothing in /sys: that is expected */
        tree_write(&f, "boot/config-6.8.0-rt", kernel_config_rt);
        tree_write(&f, "proc/cmdline", "ro isolcpus=managed_irq,nohz,2-3 nohz_full=2-3 irqaffinity=0-1\n");
        tree_write(&f, "sys/devices/system/cpu/isolated", "\n");
        tree_write(&f, "sys/devices/system/cpu/nohz_full", "2-3\n");
        if (fixture_run(&f, healthy_config)) {
                CHECK(quiet(&f, "boot.mismatch"), "isolcpus= without domain: /sys isolated stays empty, no mismatch");
                CHECK(fires(&f, "boot.isolcpus", "isolcpus", SEVERITY_WARNING), "but the missing domain flag is reported");
                CHECK(message_has(&f, "boot.isolcpus", "without domain"), "and explained");
        }
        fixture_done(&f);
}

/* skew_tick=1, nosoftlockup, tsc=reliable: each fires with the one parameter to add, and
 * the GRUB line of the isolation findings carries them all. */
static void test_boot_timers(void) {
        Fixture f;
        char cmdline[512];

        fixture_init(&f);
        tree_write(&f, "proc/cmdline", "ro quiet isolcpus=managed_irq,domain,2-3 nohz_full=2-3 rcu_nocbs=2-3 irqaffinity=0-1 "
                                       "skew_tick=0\n");
        if (fixture_run(&f, healthy_config)) {
                CHECK(fires(&f, "boot.skew_tick", "skew_tick", SEVERITY_WARNING), "skew_tick=0: boot.skew_tick warning");
                CHECK(message_has(&f, "boot.skew_tick", "Fix: skew_tick=1 on the kernel command line (the whole line is "
                                                        "under boot.cmdline)."),
                      "the fix names the parameter and refers to boot.cmdline");
                CHECK(fires(&f, "boot.nosoftlockup", "nosoftlockup", SEVERITY_INFO), "no nosoftlockup: info");
                CHECK(message_has(&f, "boot.nosoftlockup", "Fix: nosoftlockup on the kernel command line"), "the fix");
                CHECK(fires(&f, "boot.cmdline", NULL, SEVERITY_WARNING) &&
                              message_has(&f, "boot.cmdline", "fixes boot.skew_tick and boot.nosoftlockup:"),
                      "boot.cmdline fixes both, a warning like skew_tick");
                CHECK(quiet(&f, "boot.tsc"), "no clocksource to look at: boot.tsc is quiet");
        }

        /* a TSC the CPU vouches for */
        tree_write(&f, "sys/devices/system/clocksource/clocksource0/current_clocksource", "tsc\n");
        tree_write(&f, "proc/cpuinfo", "processor\t: 0\nvendor_id\t: GenuineIntel\n"
                                       "flags\t\t: fpu tsc msr constant_tsc arch_perfmon nonstop_tsc rdtscp\n\n"
                                       "processor\t: 1\n");
        tree_write(&f, "proc/cmdline", healthy_cmdline);
        if (fixture_run(&f, healthy_config)) {
                CHECK(fires(&f, "boot.tsc", "tsc", SEVERITY_INFO), "a constant, non-stop TSC without tsc=reliable: info");
                CHECK(message_has(&f, "boot.tsc", "Fix: tsc=reliable on the kernel command line"), "the fix");
                CHECK(message_has(&f, "boot.cmdline", "irqaffinity=0-1 tsc=reliable\""), "the line carries it");
                CHECK(quiet(&f, "boot.skew_tick") && quiet(&f, "boot.nosoftlockup"), "skew_tick=1 and nosoftlockup: quiet");
        }

        /* whoever takes the whole line from an isolation finding gets the timer fixes too */
        tree_write(&f, "proc/cmdline", "ro quiet skew_tick=0 nohz_full=2-3 rcu_nocbs=2-3 irqaffinity=0-1\n");
        tree_write(&f, "sys/devices/system/cpu/isolated", "\n");
        if (fixture_run(&f, healthy_config))
                CHECK(message_has(&f, "boot.cmdline",
                                  "GRUB_CMDLINE_LINUX_DEFAULT=\"quiet isolcpus=managed_irq,domain,2-3 nohz_full=2-3 "
                                  "rcu_nocbs=2-3 irqaffinity=0-1 skew_tick=1 nosoftlockup tsc=reliable\""),
                      "the GRUB line: skew_tick=0 replaced, nosoftlockup and tsc=reliable added");
        tree_write(&f, "sys/devices/system/cpu/isolated", "2-3\n");

        for (size_t i = 0; i < 2; i++) {
                snprintf(cmdline, sizeof(cmdline), "%.*s %s\n", (int) strlen(healthy_cmdline) - 1, healthy_cmdline,
                         i == 0 ? "tsc=reliable" : "tsc=nowatchdog");
                tree_write(&f, "proc/cmdline", cmdline);
                if (fixture_run(&f, healthy_config))
                        CHECK(quiet(&f, "boot.tsc"), i == 0 ? "tsc=reliable: quiet" : "tsc=nowatchdog: quiet");
        }
        tree_write(&f, "proc/cmdline", healthy_cmdline);
        tree_write(&f, "proc/cpuinfo", "processor\t: 0\nflags\t\t: fpu tsc constant_tsc rdtscp\n");
        if (fixture_run(&f, healthy_config))
                CHECK(quiet(&f, "boot.tsc"), "a TSC that may stop in idle (no nonstop_tsc): not advised");
        tree_write(&f, "proc/cpuinfo", "processor\t: 0\nflags\t\t: fpu tsc constant_tsc nonstop_tsc\n");
        tree_write(&f, "sys/devices/system/clocksource/clocksource0/current_clocksource", "hpet\n");
        if (fixture_run(&f, healthy_config))
                CHECK(quiet(&f, "boot.tsc"), "the kernel left the TSC for the HPET: not advised");
        fixture_done(&f);
}

static void test_kernel_preempt(void) {
        Fixture f;

        fixture_init(&f);

        /* voluntary, built in */
        tree_write(&f, "boot/config-6.8.0-rt", kernel_config_voluntary);
        if (fixture_run(&f, healthy_config)) {
                CHECK(fires(&f, "kernel.preempt", "preempt", SEVERITY_WARNING), "voluntary kernel: kernel.preempt warning");
                CHECK(message_has(&f, "kernel.preempt", "cannot switch"), "a static model cannot be switched");
                CHECK(fires(&f, "kernel.config.PREEMPT_RT", "/boot/config-6.8.0-rt", SEVERITY_INFO),
                      "not RT: kernel.config.PREEMPT_RT info");
        }

        /* PREEMPT_DYNAMIC in voluntary mode */
        tree_write(&f, "boot/config-6.8.0-rt", kernel_config_dynamic);
        tree_write(&f, "sys/kernel/debug/sched/preempt", "none (voluntary) full\n");
        if (fixture_run(&f, healthy_config)) {
                CHECK(fires(&f, "kernel.preempt", "preempt", SEVERITY_WARNING), "dynamic, voluntary: warning");
                CHECK(message_has(&f, "kernel.preempt", "echo full > /sys/kernel/debug/sched/preempt"), "switch at run time");
                CHECK(message_has(&f, "kernel.preempt", "Fix: preempt=full on the kernel command line"),
                      "it refers to boot.cmdline for preempt=full");
                CHECK(message_has(&f, "boot.cmdline", "irqaffinity=0-1 preempt=full\"") &&
                              message_has(&f, "boot.cmdline", "fixes kernel.preempt:"),
                      "the GRUB line carries preempt=full");
        }

        /* dynamic, full and booted that way */
        tree_write(&f, "sys/kernel/debug/sched/preempt", "none voluntary (full)\n");
        tree_writef(&f, "ro quiet isolcpus=managed_irq,domain,2-3 nohz_full=2-3 rcu_nocbs=2-3 irqaffinity=0-1 preempt=full\n",
                    "proc/cmdline");
        if (fixture_run(&f, healthy_config))
                CHECK(quiet(&f, "kernel.preempt"), "dynamic, full from the command line: quiet");

        /* no debugfs: the command line tells */
        tree_remove(&f, "sys/kernel/debug");
        if (fixture_run(&f, healthy_config))
                CHECK(quiet(&f, "kernel.preempt"), "dynamic without debugfs, preempt=full: quiet");

        /* full, but set at run time only */
        tree_write(&f, "sys/kernel/debug/sched/preempt", "none voluntary (full) lazy\n");
        tree_write(&f, "proc/cmdline", healthy_cmdline);
        if (fixture_run(&f, healthy_config)) {
                CHECK(fires(&f, "kernel.preempt", "preempt", SEVERITY_INFO), "full at run time only: info");
                CHECK(message_has(&f, "kernel.preempt", "boots in voluntary"), "it says what the next boot brings");
        }

        /* lazy */
        tree_write(&f, "sys/kernel/debug/sched/preempt", "none voluntary full (lazy)\n");
        if (fixture_run(&f, healthy_config))
                CHECK(fires(&f, "kernel.preempt", "preempt", SEVERITY_INFO), "lazy: info");

        /* nothing to tell from */
        tree_remove(&f, "sys/kernel/debug");
        tree_remove(&f, "boot");
        if (fixture_run(&f, healthy_config)) {
                CHECK(fires(&f, "kernel.preempt", "preempt", SEVERITY_INFO), "unknown model: info");
                CHECK(quiet(&f, "kernel.config.PREEMPT_RT") && quiet(&f, "kernel.config.HZ_1000"),
                      "no config: the config checks are skipped");
                CHECK(quiet(&f, "kernel.config-missing"), "no /proc/config.gz either: nothing to point at");
        }
        tree_write(&f, "proc/config.gz", "\x1f\x8b\x08");
        if (fixture_run(&f, healthy_config)) {
                CHECK(fires(&f, "kernel.config-missing", "/boot/config-6.8.0-rt", SEVERITY_INFO),
                      "only /proc/config.gz: kernel.config-missing info");
                CHECK(message_has(&f, "kernel.config-missing", "zcat /proc/config.gz"), "with the command to check by hand");
        }
        fixture_done(&f);
}

static void test_kernel_config(void) {
        Fixture f;

        fixture_init(&f);
        tree_write(&f, "boot/config-6.8.0-rt", "CONFIG_PREEMPT_RT=y\n# CONFIG_HZ_1000 is not set\nCONFIG_HZ_250=y\n"
                                               "CONFIG_HZ=250\n# CONFIG_NO_HZ_FULL is not set\n"
                                               "# CONFIG_RCU_NOCB_CPU is not set\n");
        if (fixture_run(&f, healthy_config)) {
                CHECK(fires(&f, "kernel.config.HZ_1000", "/boot/config-6.8.0-rt", SEVERITY_INFO), "250 Hz: info");
                CHECK(message_has(&f, "kernel.config.HZ_1000", "4 ms"), "250 Hz is a 4 ms tick");
                CHECK(fires(&f, "kernel.config.NO_HZ_FULL", NULL, SEVERITY_WARNING), "no NO_HZ_FULL: warning");
                CHECK(fires(&f, "kernel.config.RCU_NOCB_CPU", NULL, SEVERITY_WARNING), "no RCU_NOCB_CPU: warning");
                CHECK(quiet(&f, "kernel.config.PREEMPT_RT") && quiet(&f, "kernel.preempt"), "RT kernel: quiet");
        }
        /* a release that would climb out of /boot is not used */
        tree_write(&f, "proc/sys/kernel/osrelease", "../../etc/passwd\n");
        if (fixture_run(&f, healthy_config))
                CHECK(quiet(&f, "kernel.config.HZ_1000") && fires(&f, "kernel.preempt", NULL, SEVERITY_INFO),
                      "an osrelease with '/' is not a path");
        fixture_done(&f);
}

/* audit_boot_needs(): the parameters the warning-level command-line findings ask for,
 * what makes lowlatd's condition reboot-required. */
static void test_boot_needs(void) {
        _cleanup_free_ char *params = NULL, *none = NULL, *info_only = NULL;
        Fixture f;

        fixture_init(&f);
        if (!fixture_run(&f, healthy_config))
                return;
        CHECK(audit_boot_needs(f.host, f.posture, &none) == 0 && !none,
              "the healthy command line has what the posture needs: no reboot");
        tree_write(&f, "proc/cmdline", "BOOT_IMAGE=/vmlinuz-6.8.0-rt root=UUID=1234-abcd ro quiet skew_tick=1 "
                                       "isolcpus=managed_irq,domain,2-3 irqaffinity=0-1\n");
        if (fixture_run(&f, healthy_config) &&
            CHECK(audit_boot_needs(f.host, f.posture, &params) == 1 && params, "without nohz_full= and rcu_nocbs=: 1"))
                CHECK(strstr(params, "nohz_full=2-3") && strstr(params, "rcu_nocbs=2-3") && !strstr(params, "isolcpus"),
                      "the parameters are the missing ones only");
        tree_write(&f, "proc/cmdline", "BOOT_IMAGE=/vmlinuz-6.8.0-rt root=UUID=1234-abcd ro quiet skew_tick=1 "
                                       "isolcpus=managed_irq,domain,2-3 nohz_full=2-3 rcu_nocbs=2-3 irqaffinity=0-1\n");
        if (fixture_run(&f, healthy_config))
                CHECK(audit_boot_needs(f.host, f.posture, &info_only) == 0 && !info_only &&
                              fires(&f, "boot.nosoftlockup", "nosoftlockup", SEVERITY_INFO),
                      "nosoftlockup missing is an info-level hint: no reboot for it");
        fixture_done(&f);
}

/* [cpus] partition isolates at run time: boot.isolcpus on a boot without isolcpus= and
 * nohz_full= is a warning naming the partition and the managed IRQs only a boot keeps off,
 * not critical; the isolcpus= asked for (the finding's, the line's and lowlatctl boot's
 * arguments) has no domain flag, and one without it is not reported. */
static void test_boot_partition(void) {
        static const char partition_config[] = "[cpus]\nisolated = 2-3\npartition = isolated.slice\n";
        _cleanup_free_ char *args = NULL;
        Fixture f;

        fixture_init(&f);
        tree_write(&f, "proc/cmdline", "BOOT_IMAGE=/vmlinuz root=/dev/sda1 ro skew_tick=1 nosoftlockup\n");
        tree_write(&f, "sys/devices/system/cpu/isolated", "\n");
        tree_write(&f, "sys/devices/system/cpu/nohz_full", "(null)\n");
        if (fixture_run(&f, partition_config)) {
                CHECK(fires(&f, "boot.isolcpus", "isolcpus", SEVERITY_WARNING),
                      "partition only, no isolcpus= nor nohz_full=: boot.isolcpus a warning, not critical");
                CHECK(message_has(&f, "boot.isolcpus", "[cpus] partition = isolated.slice takes CPUs 2-3 out of load "
                                                       "balancing at run time") &&
                              message_has(&f, "boot.isolcpus", "only a boot with isolcpus=managed_irq keeps them off"),
                      "the message names the partition and what only a boot adds");
                CHECK(message_has(&f, "boot.isolcpus", "Fix: isolcpus=managed_irq,2-3 on the kernel command line"),
                      "the fix asks for managed_irq without domain");
                CHECK(fires(&f, "boot.cmdline", "GRUB_CMDLINE_LINUX_DEFAULT", SEVERITY_WARNING) &&
                              message_has(&f, "boot.cmdline", "\"skew_tick=1 nosoftlockup isolcpus=managed_irq,2-3 "
                                                              "nohz_full=2-3 rcu_nocbs=2-3 irqaffinity=0-1\""),
                      "boot.cmdline: a warning, its line with isolcpus=managed_irq,2-3");
                CHECK(audit_boot_args(f.host, f.posture, &args) == 0 && args &&
                              strstr(args, "isolcpus=managed_irq,2-3 nohz_full=2-3"),
                      "lowlatctl boot's arguments: isolcpus=managed_irq,2-3");
        }
        fixture_run(&f, healthy_config);
        CHECK(fires(&f, "boot.isolcpus", "isolcpus", SEVERITY_CRITICAL), "the same boot without a partition: critical");

        tree_write(&f, "proc/cmdline", "BOOT_IMAGE=/vmlinuz root=/dev/sda1 ro skew_tick=1 nosoftlockup "
                                       "isolcpus=managed_irq,2-3 nohz_full=2-3 rcu_nocbs=2-3 irqaffinity=0-1\n");
        tree_write(&f, "sys/devices/system/cpu/nohz_full", "2-3\n");
        if (fixture_run(&f, partition_config))
                CHECK(quiet(&f, "boot.isolcpus") && quiet(&f, "boot.cmdline"),
                      "the boot line lowlatctl boot writes for a partition: nothing to report");
        if (fixture_run(&f, healthy_config))
                CHECK(fires(&f, "boot.isolcpus", "isolcpus", SEVERITY_WARNING) &&
                              message_has(&f, "boot.isolcpus", "lacks the domain flag"),
                      "without a partition, isolcpus= without domain: a warning");
        fixture_done(&f);
}

/* audit_boot_refusal(): the lone-housekeeping rule lowlatctl boot and lowlatd's Condition
 * share. */
static void test_boot_refusal(void) {
        static const struct {
                const char *online, *config;
                int want;
        } cases[] = {
                { "0-3", "[cpus]\nisolated = 1-3\n", 1 },
                { "0-2", "[cpus]\nisolated = 1-2\n", 1 },
                { "0-3", "[cpus]\nisolated = 2-3\n", 0 },
                { "0-1", "[cpus]\nisolated = 1\n", 0 },
                { "0-3", "[cpus]\nisolated = auto\n", 0 },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *reason = NULL, *what = NULL;
                Fixture f;
                int r;

                fixture_init(&f);
                faketree_cpus(f.root, cases[i].online, "", "(null)");
                if (!fixture_run(&f, cases[i].config)) {
                        fixture_done(&f);
                        continue;
                }
                r = audit_boot_refusal(f.posture, &reason);
                what = strdup_printf("online %s, %.*s: %s (%d, %s)", cases[i].online,
                                     (int) strcspn(cases[i].config + 7, "\n"), cases[i].config + 7,
                                     cases[i].want ? "refused" : "written", r, reason ?: "no reason");
                CHECK(r == cases[i].want && (r == 0) == !reason &&
                              (!reason || strstr(reason, "alone as housekeeping on a host of")),
                      what);
                fixture_done(&f);
        }
}

int main(void) {
        test_boot_refusal();
        test_boot_partition();
        test_boot_needs();
        test_boot_cmdline();
        test_boot_nothing_isolated();
        test_boot_mismatch();
        test_boot_timers();
        test_kernel_preempt();
        test_kernel_config();
        return audit_fixture_finish(AUDIT_TEST_BOOT_KERNEL);
}
