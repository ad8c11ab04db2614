/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the audit's unit tests share (one test file per file of lib/audit/): the fake host
 * of a healthy four-CPU machine, the runs on it, the questions asked of the findings, and
 * the ids each file must see firing. */
#pragma once

#include <sched.h>
#include <stdlib.h>

#include "audit/audit.h"
#include "faketree.h"
#include "tap.h"
#include "host/task.h"
#include "basic/util.h"

/* The audit's test files; each id in all_ids names the one that must see it fire. */
typedef enum AuditTestFile {
        AUDIT_TEST_RUN,         /* test-audit-run.c: audit-run.c, audit-findings.c, audit-facts.c */
        AUDIT_TEST_BOOT_KERNEL, /* test-audit-boot-kernel.c */
        AUDIT_TEST_CPU,         /* test-audit-cpu.c */
        AUDIT_TEST_IRQ_SYSCTL,  /* test-audit-irq-sysctl.c */
        AUDIT_TEST_PROCESSES,   /* test-audit-processes.c */
        AUDIT_TEST_SYSTEMD,     /* test-audit-systemd.c */
        AUDIT_TEST_NET,         /* test-audit-net.c */
        AUDIT_TEST_MEMORY,      /* test-audit-memory.c */
} AuditTestFile;

typedef struct Fixture {
        char root[40];
        Host *host;
        Posture *posture;
        FindingList findings;
} Fixture;

/* --- the fake tree: the tree_*() chores are faketree.h's --- */

/* A process as the audit sees it in /proc. Unset fields take the healthy defaults. */
typedef struct FakeProcess {
        unsigned pid, ppid;
        const char *comm;
        const char *allowed;     /* Cpus_allowed_list; NULL: "0-1" */
        bool kthread;            /* PF_KTHREAD in stat, empty cmdline */
        bool percpu;             /* a kernel thread bound to its CPU: PF_NO_SETAFFINITY in stat */
        bool no_stat;            /* no /proc/PID/stat: detection falls back on cmdline and ppid */
        unsigned policy, rt_priority;
        unsigned cpu_ticks;      /* user time on top of the 5 + 3 ticks every task has used */
        unsigned last_cpu;       /* the stat line's processor */
        const char *cgroup;      /* NULL: a login session */
        const char *environ;     /* '\n' between entries; NULL: PATH and TZ */
        const char *memlock;     /* soft limit; NULL: "8388608" */
        const char *cap_eff;     /* NULL: none */
        unsigned anon_huge_kb, hugetlb_kb;
        const char *fds[3];      /* symlink targets of fd 3, 4, 5 */
        const char *fd_flags[3]; /* their fdinfo flags (octal); NULL: "02" (O_RDWR) */
} FakeProcess;

static inline void write_task(Fixture *f, const char *dir, const FakeProcess *p, unsigned tid) {
        char stat[512], status[1024], rel[128];
        unsigned flags = (p->kthread ? 0x00208040U : 0x00400100U) | (p->percpu ? PF_NO_SETAFFINITY : 0U);
        int prio = p->policy == SCHED_FIFO || p->policy == SCHED_RR ? -1 - (int) p->rt_priority : 20;

        /* fields 1-52; 9 flags, 14 utime, 15 stime, 39 processor, 40 rt_priority, 41 policy */
        snprintf(stat, sizeof(stat),
                 "%u (%s) S %u %u %u 0 -1 %u 100 0 0 0 %u 3 0 0 %d 0 1 0 100 1000000 200 18446744073709551615 "
                 "1 1 0 0 0 0 0 0 0 0 0 0 17 %u %u %u 0 0 0 0 0 0 0 0 0 0 0\n",
                 tid, p->comm, p->ppid, p->pid, p->pid, flags, 5 + p->cpu_ticks, prio, p->last_cpu, p->rt_priority,
                 p->policy);
        snprintf(status, sizeof(status),
                 "Name:\t%s\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t%u\nPid:\t%u\nPPid:\t%u\n"
                 "VmLck:\t0 kB\nHugetlbPages:\t%u kB\nThreads:\t1\nCapInh:\t0000000000000000\n"
                 "CapEff:\t%s\nCpus_allowed:\tf\nCpus_allowed_list:\t%s\nMems_allowed_list:\t0\n",
                 p->comm, p->pid, tid, p->ppid, p->hugetlb_kb, p->cap_eff ?: "0000000000000000",
                 p->allowed ?: "0-1");
        if (!p->no_stat) {
                snprintf(rel, sizeof(rel), "%s/stat", dir);
                tree_write(f, rel, stat);
        }
        snprintf(rel, sizeof(rel), "%s/status", dir);
        tree_write(f, rel, status);
}

static inline void tree_add_process(Fixture *f, const FakeProcess *p) {
        char dir[64], rel[128], text[1024];
        const char *env = p->environ ?: "PATH=/usr/bin\nTZ=:/etc/localtime";
        size_t n;

        snprintf(dir, sizeof(dir), "proc/%u", p->pid);
        write_task(f, dir, p, p->pid);
        snprintf(dir, sizeof(dir), "proc/%u/task/%u", p->pid, p->pid);
        write_task(f, dir, p, p->pid);

        snprintf(rel, sizeof(rel), "proc/%u/comm", p->pid);
        snprintf(text, sizeof(text), "%s\n", p->comm);
        tree_write(f, rel, text);

        snprintf(rel, sizeof(rel), "proc/%u/cmdline", p->pid);
        if (p->kthread)
                tree_write(f, rel, "");
        else
                tree_write_bytes(f, rel, p->comm, strlen(p->comm) + 1);

        snprintf(rel, sizeof(rel), "proc/%u/cgroup", p->pid);
        tree_write(f, rel, p->cgroup ?: "0::/user.slice/user-1000.slice/session-1.scope\n");

        /* environ: NUL-separated and NUL-terminated */
        snprintf(rel, sizeof(rel), "proc/%u/environ", p->pid);
        n = (size_t) snprintf(text, sizeof(text), "%s", p->kthread ? "" : env);
        for (size_t i = 0; i < n; i++)
                if (text[i] == '\n')
                        text[i] = '\0';
        tree_write_bytes(f, rel, text, n ? n + 1 : 0);

        snprintf(rel, sizeof(rel), "proc/%u/limits", p->pid);
        snprintf(text, sizeof(text),
                 "Limit                     Soft Limit           Hard Limit           Units     \n"
                 "Max cpu time              unlimited            unlimited            seconds   \n"
                 "Max open files            1024                 524288               files     \n"
                 "Max locked memory         %-20s %-20s bytes     \n"
                 "Max realtime priority     0                    0                                \n",
                 p->memlock ?: "8388608", p->memlock ?: "8388608");
        tree_write(f, rel, text);

        snprintf(rel, sizeof(rel), "proc/%u/smaps_rollup", p->pid);
        snprintf(text, sizeof(text),
                 "00400000-7ffd1000 ---p 00000000 00:00 0                          [rollup]\n"
                 "Rss:                4096 kB\nAnonymous:          2048 kB\nAnonHugePages:      %u kB\n"
                 "Shared_Hugetlb:        0 kB\nPrivate_Hugetlb:       0 kB\n",
                 p->anon_huge_kb);
        tree_write(f, rel, text);

        snprintf(rel, sizeof(rel), "proc/%u/fd", p->pid);
        tree_mkdir(f, rel);
        snprintf(rel, sizeof(rel), "proc/%u/fdinfo", p->pid);
        tree_mkdir(f, rel);
        for (unsigned i = 0; i < ELEMENTSOF(p->fds); i++)
                if (p->fds[i]) {
                        snprintf(rel, sizeof(rel), "proc/%u/fd/%u", p->pid, i + 3);
                        tree_symlink(f, rel, p->fds[i]);
                        snprintf(rel, sizeof(rel), "proc/%u/fdinfo/%u", p->pid, i + 3);
                        snprintf(text, sizeof(text), "pos:\t0\nflags:\t%s\nmnt_id:\t25\nino:\t%u\n",
                                 p->fd_flags[i] ?: "02", 1000 + i);
                        tree_write(f, rel, text);
                }
}

/* Another thread of an existing process. */
static inline void tree_add_thread(Fixture *f, const FakeProcess *p, unsigned tid, unsigned policy, unsigned rt_priority,
                            const char *allowed) {
        FakeProcess t = *p;
        char dir[64];

        t.policy = policy;
        t.rt_priority = rt_priority;
        t.allowed = allowed;
        snprintf(dir, sizeof(dir), "proc/%u/task/%u", p->pid, tid);
        write_task(f, dir, &t, tid);
}

static const FakeProcess proc_systemd = { .pid = 1, .ppid = 0, .comm = "systemd", .allowed = "0-1" };
/* With nohz_full= kernel threads start on the housekeeping CPUs, kthreadd included. */
static const FakeProcess proc_kthreadd = { .pid = 2, .ppid = 0, .comm = "kthreadd", .allowed = "0-1", .kthread = true };
static const FakeProcess proc_ksoftirqd = {
        .pid = 25, .ppid = 2, .comm = "ksoftirqd/2", .allowed = "2", .kthread = true, .percpu = true,
};
static const FakeProcess proc_lowlatd = {
        .pid = 500, .ppid = 1, .comm = "lowlatd", .allowed = "0-1",
        .cgroup = "0::/system.slice/lowlatd.service\n",
        .fds = { "/dev/null", "socket:[12345]", "/dev/cpu_dma_latency" },
};
static const FakeProcess proc_matcher = {
        .pid = 1234, .ppid = 1, .comm = "matcher", .allowed = "2-3",
        .policy = SCHED_FIFO, .rt_priority = 80, .memlock = "unlimited", .anon_huge_kb = 2048,
        .fds = { "/dev/null" },
};
/* A service whose main thread stays on housekeeping CPUs and whose worker is real-time
 * and pinned: healthy, thread by thread. */
static const FakeProcess proc_engine = {
        .pid = 1300, .ppid = 1, .comm = "engine", .allowed = "0-1",
        .cgroup = "1:name=systemd:/system.slice/engine.service\n0::/system.slice/engine.service/main\n",
        .memlock = "unlimited",
};

static const char kernel_config_rt[] = "#\n# Linux/x86 6.8.0 Kernel Configuration\n#\n"
                                       "CONFIG_PREEMPT_BUILD=y\n# CONFIG_PREEMPT_NONE is not set\n"
                                       "# CONFIG_PREEMPT_VOLUNTARY is not set\n# CONFIG_PREEMPT is not set\n"
                                       "CONFIG_PREEMPT_RT=y\nCONFIG_PREEMPT_COUNT=y\nCONFIG_PREEMPTION=y\n"
                                       "CONFIG_NO_HZ_COMMON=y\nCONFIG_NO_HZ_FULL=y\nCONFIG_RCU_NOCB_CPU=y\n"
                                       "CONFIG_HZ_1000=y\nCONFIG_HZ=1000\n";

static const char kernel_config_voluntary[] = "CONFIG_PREEMPT_VOLUNTARY=y\n# CONFIG_PREEMPT is not set\n"
                                              "# CONFIG_PREEMPT_RT is not set\n"
                                              "CONFIG_NO_HZ_FULL=y\nCONFIG_RCU_NOCB_CPU=y\n"
                                              "CONFIG_HZ_1000=y\nCONFIG_HZ=1000\n";

/* Ubuntu 24.04 generic: dynamic, voluntary by default, 250 Hz in older releases. */
static const char kernel_config_dynamic[] = "CONFIG_PREEMPT_VOLUNTARY=y\n# CONFIG_PREEMPT is not set\n"
                                            "CONFIG_PREEMPT_DYNAMIC=y\n# CONFIG_PREEMPT_RT is not set\n"
                                            "CONFIG_NO_HZ_FULL=y\nCONFIG_RCU_NOCB_CPU=y\n"
                                            "CONFIG_HZ_1000=y\nCONFIG_HZ=1000\n";

static const char healthy_cmdline[] = "BOOT_IMAGE=/vmlinuz-6.8.0-rt root=UUID=1234-abcd ro quiet skew_tick=1 "
                                      "nosoftlockup isolcpus=managed_irq,domain,2-3 nohz_full=2-3 rcu_nocbs=2-3 "
                                      "irqaffinity=0-1\n";

static const char healthy_config[] = "[cpus]\nisolated = 2-3\nhold_timestamping = yes\n"
                                     "[pm]\ncpu_dma_latency = 10\ngovernor = performance\n"
                                     "[sysctl]\nnet.ipv4.tcp_congestion_control = bbr\n"
                                     "[process \"matcher\"]\npolicy = fifo\npriority = 50\nmlock = yes\nhugepages = yes\n"
                                     "[service \"engine\"]\npriority = 50\nmlock = yes\n";

/* A four-CPU host, CPUs 2-3 isolated as the guides say, with nothing to report. */
static inline void fixture_init(Fixture *f) {
        *f = (Fixture) {};
        faketree_mkdtemp(f->root, sizeof(f->root), "test-audit");
        faketree_cpus(f->root, "0-3", "2-3", "2-3");
        tree_write(f, "proc/cmdline", healthy_cmdline);
        tree_write(f, "proc/sys/kernel/osrelease", "6.8.0-rt\n");
        tree_write(f, "boot/config-6.8.0-rt", kernel_config_rt);
        tree_write(f, "proc/sys/kernel/sched_rt_runtime_us", "950000\n");
        tree_write(f, "proc/sys/net/ipv4/tcp_available_congestion_control", "reno cubic bbr\n");
        tree_write(f, "proc/sys/net/ipv4/tcp_timestamps", "1\n");
        tree_write(f, "proc/sys/net/ipv4/tcp_tw_reuse", "2\n");
        tree_write(f, "proc/sys/kernel/timer_migration", "0\n");
        tree_write(f, "proc/sys/vm/stat_interval", "10\n");
        tree_write(f, "proc/sys/kernel/watchdog", "1\n");
        tree_write(f, "proc/sys/kernel/soft_watchdog", "1\n");
        tree_write(f, "proc/sys/kernel/nmi_watchdog", "0\n");
        tree_write(f, "proc/sys/kernel/watchdog_cpumask", "0-1\n");
        tree_write(f, "proc/meminfo", "MemTotal:        8000000 kB\nMemFree:         6000000 kB\n"
                                      "SwapTotal:       2097148 kB\nSwapFree:        2097148 kB\n");
        tree_write(f, "proc/stat", "cpu  1000 0 500 100000 10 0 5 0 0 0\ncpu0 250 0 125 25000 3 0 1 0 0 0\n"
                                   "intr 12345\nctxt 67890\n");
        tree_write(f, "sys/devices/system/node/node0/cpulist", "0-3\n");
        tree_write(f, "dev/cpu_dma_latency", "\x00\x00\x00\x00");
        for (unsigned cpu = 0; cpu < 4; cpu++) {
                tree_writef(f, cpu < 2 ? "0-1\n" : "2-3\n", "sys/devices/system/cpu/cpu%u/topology/thread_siblings_list", cpu);
                tree_writef(f, "performance\n", "sys/devices/system/cpu/cpu%u/cpufreq/scaling_governor", cpu);
                tree_writef(f, "800000\n", "sys/devices/system/cpu/cpu%u/cpufreq/scaling_min_freq", cpu);
                tree_writef(f, "3000000\n", "sys/devices/system/cpu/cpu%u/cpufreq/cpuinfo_max_freq", cpu);
                static const char *const names[] = { "POLL", "C1", "C6" };
                static const char *const latencies[] = { "0\n", "2\n", "133\n" };
                static const char *const disabled[] = { "0\n", "0\n", "1\n" };
                for (unsigned s = 0; s < 3; s++) {
                        char v[16];
                        snprintf(v, sizeof(v), "%s\n", names[s]);
                        tree_writef(f, v, "sys/devices/system/cpu/cpu%u/cpuidle/state%u/name", cpu, s);
                        tree_writef(f, latencies[s], "sys/devices/system/cpu/cpu%u/cpuidle/state%u/latency", cpu, s);
                        tree_writef(f, disabled[s], "sys/devices/system/cpu/cpu%u/cpuidle/state%u/disable", cpu, s);
                }
        }
        tree_add_process(f, &proc_systemd);
        tree_add_process(f, &proc_kthreadd);
        tree_add_process(f, &proc_ksoftirqd);
        tree_add_process(f, &proc_lowlatd);
        tree_add_process(f, &proc_matcher);
        tree_add_process(f, &proc_engine);
        tree_add_thread(f, &proc_engine, 1301, SCHED_FIFO, 60, "3");
}

/* Every id the audit knows (the table at the top of lib/audit/audit-run.c), each with the
 * test file whose tests make it fire: that file checks it was seen firing. */
static const struct {
        const char *id;
        AuditTestFile file;
} all_ids[] = {
        { "boot.isolcpus", AUDIT_TEST_BOOT_KERNEL },
        { "boot.nohz_full", AUDIT_TEST_BOOT_KERNEL },
        { "boot.rcu_nocbs", AUDIT_TEST_BOOT_KERNEL },
        { "boot.irqaffinity", AUDIT_TEST_BOOT_KERNEL },
        { "boot.mismatch", AUDIT_TEST_BOOT_KERNEL },
        { "kernel.preempt", AUDIT_TEST_BOOT_KERNEL },
        { "kernel.config-missing", AUDIT_TEST_BOOT_KERNEL },
        { "kernel.config.PREEMPT_RT", AUDIT_TEST_BOOT_KERNEL },
        { "kernel.config.HZ_1000", AUDIT_TEST_BOOT_KERNEL },
        { "kernel.config.NO_HZ_FULL", AUDIT_TEST_BOOT_KERNEL },
        { "kernel.config.RCU_NOCB_CPU", AUDIT_TEST_BOOT_KERNEL },
        { "topology.smt-sibling", AUDIT_TEST_CPU },
        { "topology.numa-spread", AUDIT_TEST_CPU },
        { "sched.rt-throttling", AUDIT_TEST_IRQ_SYSCTL },
        { "sched.stray-task", AUDIT_TEST_PROCESSES },
        { "sched.pid1-affinity", AUDIT_TEST_SYSTEMD },
        { "sched.slice-unconfined", AUDIT_TEST_SYSTEMD },
        { "sched.partition", AUDIT_TEST_SYSTEMD },
        { "isolation.mechanisms", AUDIT_TEST_SYSTEMD },
        { "power.governor", AUDIT_TEST_CPU },
        { "power.min-freq", AUDIT_TEST_CPU },
        { "power.cpuidle", AUDIT_TEST_CPU },
        { "power.dma-latency-unheld", AUDIT_TEST_CPU },
        { "sched.fair-server", AUDIT_TEST_CPU },
        { "irq.irqbalance", AUDIT_TEST_IRQ_SYSCTL },
        { "irq.unmovable-isolated", AUDIT_TEST_IRQ_SYSCTL },
        { "virt.steal", AUDIT_TEST_CPU },
        { "app.not-running", AUDIT_TEST_PROCESSES },
        { "app.affinity", AUDIT_TEST_PROCESSES },
        { "app.policy", AUDIT_TEST_PROCESSES },
        { "app.priority", AUDIT_TEST_PROCESSES },
        { "app.memlock", AUDIT_TEST_PROCESSES },
        { "app.tz", AUDIT_TEST_PROCESSES },
        { "app.hugepages", AUDIT_TEST_PROCESSES },
        { "sysctl.no-effect", AUDIT_TEST_IRQ_SYSCTL },
        { "sysctl.gone", AUDIT_TEST_IRQ_SYSCTL },
        { "sysctl.conflict", AUDIT_TEST_IRQ_SYSCTL },
        { "sysctl.cc-unavailable", AUDIT_TEST_IRQ_SYSCTL },
        { "audit.limit", AUDIT_TEST_RUN },
        { "config.profiles", AUDIT_TEST_RUN },
        { "boot.skew_tick", AUDIT_TEST_BOOT_KERNEL },
        { "boot.nosoftlockup", AUDIT_TEST_BOOT_KERNEL },
        { "boot.tsc", AUDIT_TEST_BOOT_KERNEL },
        { "boot.kthread_prio", AUDIT_TEST_PROCESSES },
        { "sched.movable-kthread", AUDIT_TEST_PROCESSES },
        { "sysctl.timer-migration", AUDIT_TEST_IRQ_SYSCTL },
        { "sysctl.stat-interval", AUDIT_TEST_IRQ_SYSCTL },
        { "sysctl.watchdog-cpumask", AUDIT_TEST_IRQ_SYSCTL },
        { "sysctl.nmi-watchdog", AUDIT_TEST_IRQ_SYSCTL },
        { "memory.swap", AUDIT_TEST_MEMORY },
        { "boot.cmdline", AUDIT_TEST_BOOT_KERNEL },
        { "net.rps-isolated", AUDIT_TEST_NET },
        { "net.timestamping-unheld", AUDIT_TEST_NET },
        { "net.rps-flow-table", AUDIT_TEST_NET },
};

/* Which ids some test saw firing, and whether an id outside the list was ever emitted. */
static bool id_fired[ELEMENTSOF(all_ids)];
static unsigned unknown_ids;
/* Runs whose report breaks a rule of boot.cmdline (cmdline_rules_hold()). */
static unsigned cmdline_rule_breaks;

/* The GRUB line is in boot.cmdline only, which comes when some finding refers to it, has
 * the worst severity among those findings and names each of them. Checked on every run. */
static inline bool cmdline_rules_hold(const FindingList *l) {
        const Finding *cmdline = finding_list_find(l, "boot.cmdline", NULL);
        Severity worst = SEVERITY_OK;
        size_t n_cmdline = 0, n_referrers = 0;

        for (size_t i = 0; i < l->n; i++) {
                const Finding *x = &l->items[i];
                if (streq(x->id, "boot.cmdline")) {
                        n_cmdline++;
                        continue;
                }
                if (strstr(x->message, "GRUB_CMDLINE_LINUX_DEFAULT=")) {
                        printf("# %s [%s] has a GRUB line of its own\n", x->id, x->subject);
                        return false;
                }
                if (!strstr(x->message, "under boot.cmdline"))
                        continue;
                n_referrers++;
                worst = MAX(worst, x->severity);
                if (!cmdline || !strstr(cmdline->message, x->id)) {
                        printf("# %s refers to boot.cmdline, which does not name it\n", x->id);
                        return false;
                }
        }
        if (n_cmdline != (n_referrers > 0 ? 1U : 0U) || (cmdline && cmdline->severity != worst)) {
                printf("# %zu boot.cmdline findings for %zu referrers (severity %s, worst %s)\n", n_cmdline, n_referrers,
                       cmdline ? severity_to_string(cmdline->severity) : "-", severity_to_string(worst));
                return false;
        }
        if (cmdline && (!strstr(cmdline->message, "GRUB_CMDLINE_LINUX_DEFAULT=\"") || strstr(cmdline->message, " -- "))) {
                printf("# boot.cmdline: %s\n", cmdline->message);
                return false;
        }
        return true;
}

static inline void record_ids(const FindingList *l) {
        if (!cmdline_rules_hold(l))
                cmdline_rule_breaks++;
        for (size_t i = 0; i < l->n; i++) {
                bool known = false;
                for (size_t k = 0; k < ELEMENTSOF(all_ids); k++)
                        if (streq(l->items[i].id, all_ids[k].id))
                                known = true;
                if (!known) {
                        printf("# undocumented id %s\n", l->items[i].id);
                        unknown_ids++;
                }
        }
}

/* Builds the posture from config_text and runs the audit (t and limits may be NULL). */
static inline bool fixture_run_full(Fixture *f, const char *config_text, const SettingTable *t, const AuditLimits *limits) {
        int r;

        finding_list_done(&f->findings);
        f->posture = posture_free(f->posture);
        f->host = host_free(f->host);
        if (!faketree_posture(f->root, "audit.conf", config_text, &f->host, &f->posture))
                return false;
        r = limits ? audit_run_with_limits(f->host, f->posture, t, limits, &f->findings)
                   : audit_run(f->host, f->posture, t, &f->findings);
        if (r < 0) {
                printf("# audit_run: %s\n", strerror(-r));
                return false;
        }
        record_ids(&f->findings);
        return true;
}

static inline bool fixture_run(Fixture *f, const char *config_text) {
        return fixture_run_full(f, config_text, NULL, NULL);
}

static inline bool fixture_run_table(Fixture *f, const char *config_text, const SettingTable *t) {
        return fixture_run_full(f, config_text, t, NULL);
}

static inline bool fixture_run_limits(Fixture *f, const char *config_text, const AuditLimits *limits) {
        return fixture_run_full(f, config_text, NULL, limits);
}

static inline void fixture_done(Fixture *f) {
        finding_list_done(&f->findings);
        posture_free(f->posture);
        host_free(f->host);
        faketree_remove(f->root);
}

static inline void dump(const Fixture *f) {
        for (size_t i = 0; i < f->findings.n; i++)
                printf("#   %s %s [%s] %s\n", severity_to_string(f->findings.items[i].severity), f->findings.items[i].id,
                       f->findings.items[i].subject, f->findings.items[i].message);
}

static inline size_t count_id(const Fixture *f, const char *id) {
        size_t n = 0;
        for (size_t i = 0; i < f->findings.n; i++)
                n += streq(f->findings.items[i].id, id);
        return n;
}

/* The finding fires (with this subject, unless NULL) at this severity. */
static inline bool fires(const Fixture *f, const char *id, const char *subject, Severity severity) {
        const Finding *x = finding_list_find(&f->findings, id, subject);
        if (x && x->severity == severity) {
                for (size_t k = 0; k < ELEMENTSOF(all_ids); k++)
                        if (streq(id, all_ids[k].id))
                                id_fired[k] = true;
                return true;
        }
        printf("# expected %s %s [%s]; got:\n", severity_to_string(severity), id, subject ?: "*");
        dump(f);
        return false;
}

static inline bool quiet(const Fixture *f, const char *id) {
        if (count_id(f, id) == 0)
                return true;
        printf("# expected no %s; got:\n", id);
        dump(f);
        return false;
}

/* The detail lines of the finding with this id: how many, and the line at index i. */
static inline size_t n_details(const Fixture *f, const char *id) {
        const Finding *x = finding_list_find(&f->findings, id, NULL);
        return x ? x->n_details : 0;
}

static inline bool detail_is(const Fixture *f, const char *id, size_t i, const char *text) {
        const Finding *x = finding_list_find(&f->findings, id, NULL);
        if (x && i < x->n_details && streq(x->details[i], text))
                return true;
        printf("# %s detail %zu is not '%s': %s\n", id, i, text, x && i < x->n_details ? x->details[i] : "(none)");
        return false;
}

/* The message of the finding with this id (and subject, unless NULL) contains text. */
static inline bool message_has_for(const Fixture *f, const char *id, const char *subject, const char *text) {
        const Finding *x = finding_list_find(&f->findings, id, subject);
        if (x && strstr(x->message, text))
                return true;
        printf("# %s message lacks '%s': %s\n", id, text, x ? x->message : "(no finding)");
        return false;
}

static inline bool message_has(const Fixture *f, const char *id, const char *text) {
        return message_has_for(f, id, NULL, text);
}

/* The end of a test file's main(): every id that file owns was seen firing (test_healthy()
 * in test-audit-run.c shows each one quiet), and its runs kept the rules every run must
 * keep. Returns tap_finish()'s exit status. */
static inline int audit_fixture_finish(AuditTestFile file) {
        for (size_t k = 0; k < ELEMENTSOF(all_ids); k++) {
                char what[96];

                if (all_ids[k].file != file)
                        continue;
                snprintf(what, sizeof(what), "%s was seen firing", all_ids[k].id);
                CHECK(id_fired[k], what);
        }
        CHECK(unknown_ids == 0, "every id emitted is in the documented list");
        CHECK(cmdline_rule_breaks == 0,
              "in every run the GRUB line is in boot.cmdline only, which names and outranks its referrers");
        return tap_finish();
}
