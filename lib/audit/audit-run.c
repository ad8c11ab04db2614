/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The run of the posture audit: every check in order, over facts read once; and the table
 * of the finding ids the checks emit. */

/*
 * Finding ids. They are stable: scripts, `lowlatctl check --json` and the man page key on
 * them. A healthy check emits nothing. At most AUDIT_FINDINGS_PER_ID_MAX findings per id are
 * listed; one more with subject "N more" counts the rest. Findings fixed on the kernel
 * command line name the parameters they need and refer to boot.cmdline, which gives the
 * whole GRUB line once. Tasks are grouped: one finding names the few most in the way and
 * its details list every task.
 *
 * id                          severity            fires when
 * --------------------------  ------------------  --------------------------------------------
 * boot.isolcpus               critical            the config names isolated CPUs and the kernel
 *                                                 command line has neither isolcpus= nor
 *                                                 nohz_full=, and no [cpus] partition
 *                             warning             isolcpus= is missing, names other CPUs than
 *                                                 the isolated set, or lacks managed_irq/domain
 *                                                 (domain not asked for with a partition)
 *                             info                no CPU is isolated at all (isolated = auto and
 *                                                 the kernel isolated none)
 * boot.nohz_full              warning             nohz_full= is missing or differs from the
 *                                                 isolated set
 * boot.rcu_nocbs              warning             an isolated CPU is in neither rcu_nocbs= nor
 *                                                 nohz_full= (which implies it)
 * boot.irqaffinity            warning             irqaffinity= includes an isolated CPU
 *                             info                irqaffinity= is missing
 * boot.mismatch               warning             what the kernel applied (/sys/devices/system/
 *                                                 cpu/{isolated,nohz_full}) differs from what
 *                                                 /proc/cmdline asked for
 * boot.skew_tick              warning             the command line lacks skew_tick=1 (or sets 0)
 * boot.nosoftlockup           info                the command line lacks nosoftlockup
 * boot.tsc                    info                the TSC is the clocksource, /proc/cpuinfo has
 *                                                 constant_tsc and nonstop_tsc, and the command
 *                                                 line has neither tsc=reliable nor
 *                                                 tsc=nowatchdog
 * boot.cmdline                critical/warning/   a finding above refers to it (boot.isolcpus,
 *                             info                boot.nohz_full, boot.rcu_nocbs, boot.irqaffinity,
 *                                                 boot.mismatch of isolcpus=, boot.skew_tick,
 *                                                 boot.nosoftlockup, boot.tsc, kernel.preempt when
 *                                                 preempt=full is the fix): the worst severity among
 *                                                 them; the one GRUB_CMDLINE_LINUX_DEFAULT line,
 *                                                 kernel parameters only (nothing from "--" on),
 *                                                 that fixes them all, and how to install it
 * boot.kthread_prio           warning             on an isolated CPU that is not nohz_full, the
 *                                                 thread that runs RCU's work (rcuc/N, else
 *                                                 ksoftirqd/N) is below the real-time priority
 *                                                 of a [service]/[process] thread allowed there;
 *                                                 the fix names rcutree.kthread_prio
 * kernel.preempt              warning             the preemption model is none or voluntary
 *                             info                lazy; full set at run time only; or unknown
 * kernel.config-missing       info                /boot/config-$(uname -r) is unreadable (only
 *                                                 /proc/config.gz, which is not decompressed)
 * kernel.config.PREEMPT_RT    info                not a PREEMPT_RT kernel
 * kernel.config.HZ_1000       info                the tick is not 1000 Hz
 * kernel.config.NO_HZ_FULL    warning             nohz_full= is ignored by this kernel
 * kernel.config.RCU_NOCB_CPU  warning             rcu_nocbs= is ignored by this kernel
 * topology.smt-sibling        warning             an isolated CPU's SMT sibling is not isolated
 * topology.numa-spread        info                the isolated CPUs span NUMA nodes
 * sched.rt-throttling         warning             kernel.sched_rt_runtime_us is -1 (on the host
 *                                                 or in [sysctl]) and stalld does not run
 *                                                 info                the same while stalld runs
 * sysctl.timer-migration      warning             kernel.timer_migration is 1 and CPUs are isolated
 * sysctl.stat-interval        warning             vm.stat_interval is below 10 and CPUs are
 *                                                 isolated
 * sysctl.watchdog-cpumask     warning             a lockup detector is on (kernel.watchdog, and
 *                                                 soft_watchdog without nosoftlockup or
 *                                                 nmi_watchdog) and kernel.watchdog_cpumask
 *                                                 includes isolated CPUs
 * sysctl.nmi-watchdog         info                kernel.nmi_watchdog is 1 and CPUs are isolated
 * sched.stray-task            warning             user tasks that are not configured
 *                                                 applications (nor PID 1) may run on an
 *                                                 isolated CPU: one finding, "N tasks", naming
 *                                                 the 5 most in the way (last on an isolated CPU,
 *                                                 then CPU time), every task in its details
 * sched.pid1-affinity         warning             PID 1 may run on an isolated CPU (with
 *                                                 systemd: the system.conf.d drop-in with
 *                                                 CPUAffinity= that fixes it)
 * sched.slice-unconfined      warning             [cpus] slices is set and machine.slice exists
 *                                                 but is not in it
 * sched.partition             info                [cpus] partition's slice reads "isolated" and
 *                                                 holds every isolated CPU online (its CPUs)
 *                             warning             it reads "isolated invalid (REASON)" (the
 *                                                 kernel's reason), "member" or another state,
 *                                                 isolates only some of them (6.12 after a
 *                                                 hotplug), has no partition file, or the slice
 *                                                 has no cgroup ("absent")
 * isolation.mechanisms        info                per group of isolated CPUs with the same
 *                                                 report: some mechanism is missing (load
 *                                                 balancing, unbound workqueues, timer
 *                                                 migration, the tick, RCU
 *                                                 callbacks, managed IRQs), or a partition is
 *                                                 configured; the details say for each where it
 *                                                 is in force from (boot isolcpus=, nohz_full=,
 *                                                 rcu_nocbs=, the partition, the workqueue
 *                                                 cpumask), the message the boot parameters for
 *                                                 what only a boot gives
 * sched.movable-kthread       warning             kernel threads without PF_NO_SETAFFINITY (that
 *                                                 taskset can move) may run on an isolated CPU:
 *                                                 one finding, "N kernel threads", grouped as
 *                                                 sched.stray-task
 * power.governor              warning             an isolated CPU's governor is not [pm]
 *                                                 governor (default: performance)
 * power.min-freq              warning             a scaling governor other than performance
 *                                                 lets an isolated CPU drop below its maximum
 * power.cpuidle               warning             an idle state slower to leave than [pm]
 *                                                 cpu_dma_latency is enabled on an isolated CPU
 *                                                 and nobody holds /dev/cpu_dma_latency
 *                             info                the same while a request is held
 * power.dma-latency-unheld    warning             [pm] cpu_dma_latency is set but no process
 *                                                 holds /dev/cpu_dma_latency open
 *                             info                nobody holds it and it is not configured
 * irq.irqbalance              warning             irqbalance runs without the isolated CPUs in
 *                                                 IRQBALANCE_BANNED_CPULIST, and the kernel did
 *                                                 not isolate them, a ban list that misses them
 *                                                 replaces irqbalance's own isolcpus= reading,
 *                                                 or lowlatd pins IRQs
 *                             info                the same, but irqbalance (1.1+) already skips
 *                                                 the kernel's isolated CPUs; or [irq]
 *                                                 irqbalance = ban told it to leave them alone
 * irq.unmovable-isolated      warning             an IRQ the kernel refuses to move is served
 *                                                 on an isolated CPU
 * net.rps-isolated            warning             an interface's receive queues' RPS masks (or
 *                                                 what [nic] rps_cpus will hold) include
 *                                                 isolated CPUs
 * net.rps-flow-table          warning             some receive queue has (or [nic] rps_flow_cnt
 *                                                 gives it) an RFS flow table, and
 *                                                 net.core.rps_sock_flow_entries is 0 (on the
 *                                                 host, or in [sysctl])
 * virt.steal                  warning             steal time since boot is at least 1%
 *                             info                some steal time (a VM)
 * app.not-running             warning             no process of a [service]/[process] is found
 * app.affinity                critical            no thread of the application is confined to
 *                                                 the isolated CPUs
 *                             warning             some threads may run on isolated and other
 *                                                 CPUs alike
 * app.policy                  warning             no thread runs SCHED_FIFO/RR (or the policy
 *                                                 configured)
 * app.priority                warning             the highest RT priority is below priority=
 * app.memlock                 warning             mlock = yes and mlockall() would fail (limit
 *                                                 and no CAP_IPC_LOCK)
 * app.tz                      info                TZ is not in the environment (glibc then
 *                                                 stat()s /etc/localtime on every localtime())
 * app.hugepages               warning             hugepages = yes and it maps no huge page
 * sysctl.no-effect            info                [sysctl] sets net.ipv4.tcp_low_latency
 *                                                 (nothing since Linux 4.14)
 * sysctl.gone                 warning             [sysctl] sets a key that was removed or moved
 *                                                 (tcp_tw_recycle, the scheduler knobs that
 *                                                 went to debugfs in 5.13) and the host lacks it
 * sysctl.conflict             warning             tcp_timestamps = 0 with tcp_tw_reuse on
 * sysctl.cc-unavailable       warning             [sysctl] asks for a congestion control that
 *                                                 is not loaded
 * memory.swap                 warning             swap is in use (SwapFree below SwapTotal in
 *                                                 /proc/meminfo)
 * audit.limit                 info                more processes than AUDIT_PROCESSES_MAX (lowest
 *                                                 pids are examined)
 * config.profiles             info                the configuration takes in profiles ([daemon]
 *                                                 profile): which, from which files
 *
 * Steal time is read once: the share since boot, not a rate. Threads of configured
 * applications are examined one by one; other tasks by their thread group leader. Kernel
 * threads (PF_KTHREAD in /proc/PID/stat; without a stat line, Kthread: 1 in the status or
 * an empty cmdline and parent 2: task_is_kernel_thread()) are never strays; those that can
 * be moved are sched.movable-kthread, judged only with a stat line (PF_NO_SETAFFINITY is
 * in its flags).
 * /proc/config.gz is not read: lowlatd links no decompressor.
 */
#include <stddef.h>

#include "audit/audit-internal.h"
#include "basic/util.h"

/* --- the run --- */

/* The profiles in force: said, so that a report read later tells where the posture came
 * from (lowlatctl cat-config shows each value's file and line). */
static void audit_report_profiles(Audit *a) {
        _cleanup_free_ char *list = NULL;
        const Config *c = a->config;

        if (c->n_profiles == 0)
                return;
        for (size_t i = 0; i < c->n_profiles; i++) {
                const char *file = i < c->n_profile_files ? c->files[i] : NULL;
                char *more = strdup_printf("%s%s%s%s%s", list ?: "", list ? ", " : "", c->profiles[i],
                                           file ? " from " : "", file ?: "");
                if (!more)
                        return;
                free(list);
                list = more;
        }
        finding_add(a, SEVERITY_INFO, "config.profiles", "profiles",
                    "The configuration takes in %zu profile%s, read before its own files: %s. Every key of the "
                    "main file and its drop-ins overrides theirs; lowlatctl cat-config shows where each value "
                    "comes from.",
                    c->n_profiles, c->n_profiles == 1 ? "" : "s", list);
}

int audit_run(const Host *h, const Posture *p, const SettingTable *t, FindingList *ret) {
        return audit_run_with_limits(h, p, t, NULL, ret);
}

int audit_run_with_limits(const Host *h, const Posture *p, const SettingTable *t, const AuditLimits *limits,
                          FindingList *ret) {
        Audit a = {
                .host = h,
                .posture = p,
                .config = p ? p->config : NULL,
                .table = t,
                .max_processes = limits && limits->max_processes ? limits->max_processes : AUDIT_PROCESSES_MAX,
                .fd_budget = limits && limits->max_fds ? limits->max_fds : AUDIT_FDS_MAX,
        };

        if (!h || !p || !p->config || !ret)
                return -EINVAL;

        /* The facts first: the checks only read them. The checks run in the order of the
         * sections, which is the order of the findings. */
        audit_load_kernel_facts(&a);
        audit_scan_processes(&a);

        audit_report_profiles(&a);
        audit_check_boot(&a);
        audit_check_boot_timers(&a);
        audit_check_kernel(&a);
        audit_check_kernel_config_missing(&a);
        audit_check_boot_cmdline(&a);
        audit_check_topology(&a);
        audit_check_numa(&a);
        audit_check_rt_throttling(&a);
        audit_check_noise_sysctls(&a);
        audit_check_strays(&a);
        audit_check_pid1_affinity(&a);
        audit_check_unconfined_slices(&a);
        audit_check_isolation(&a);
        audit_check_kthreads(&a);
        audit_check_power(&a);
        audit_check_dma_latency(&a);
        audit_check_fair_server(&a);
        audit_check_irqbalance(&a);
        audit_check_unmovable_irqs(&a);
        audit_check_rps(&a);
        audit_check_timestamping(&a);
        audit_check_steal(&a);
        audit_check_apps(&a);
        audit_check_rcu_priority(&a); /* after the applications, whose priorities it compares */
        audit_check_sysctls(&a);
        audit_check_swap(&a);
        if (a.n_pids_total > a.max_processes)
                finding_add(&a, SEVERITY_INFO, "audit.limit", "/proc",
                            "%zu processes exist; only the %u with the lowest pids were examined for strays, "
                            "applications and the /dev/cpu_dma_latency holder.",
                            a.n_pids_total, a.max_processes);
        audit_add_omitted_summaries(&a);

        if (a.error < 0) {
                int r = a.error;
                audit_done(&a);
                return r;
        }
        *ret = a.findings;
        a.findings = FINDING_LIST_EMPTY;
        audit_done(&a);
        return 0;
}
