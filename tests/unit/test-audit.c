/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The posture audit against fake --root trees: a healthy host with no findings, then one
 * change at a time, so every finding id is seen firing and seen staying quiet. */
#include <fcntl.h>
#include <ftw.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "audit.h"
#include "faketree.h"
#include "setting-irq.h"
#include "setting-irqbalance.h"
#include "tap.h"
#include "task.h"
#include "util.h"

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
} FakeProcess;

static void write_task(Fixture *f, const char *dir, const FakeProcess *p, unsigned tid) {
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

static void tree_add_process(Fixture *f, const FakeProcess *p) {
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
        for (unsigned i = 0; i < ELEMENTSOF(p->fds); i++)
                if (p->fds[i]) {
                        snprintf(rel, sizeof(rel), "proc/%u/fd/%u", p->pid, i + 3);
                        tree_symlink(f, rel, p->fds[i]);
                }
}

/* Another thread of an existing process. */
static void tree_add_thread(Fixture *f, const FakeProcess *p, unsigned tid, unsigned policy, unsigned rt_priority,
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

static const char healthy_config[] = "[cpus]\nisolated = 2-3\n"
                                     "[pm]\ncpu_dma_latency = 10\ngovernor = performance\n"
                                     "[sysctl]\nnet.ipv4.tcp_congestion_control = bbr\n"
                                     "[process \"matcher\"]\npolicy = fifo\npriority = 50\nmlock = yes\nhugepages = yes\n"
                                     "[service \"engine\"]\npriority = 50\nmlock = yes\n";

/* A four-CPU host, CPUs 2-3 isolated as the guides say, with nothing to report. */
static void fixture_init(Fixture *f) {
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

/* Every id the audit knows (the table at the top of lib/audit/audit-run.c). */
static const char *const all_ids[] = {
        "boot.isolcpus", "boot.nohz_full", "boot.rcu_nocbs", "boot.irqaffinity", "boot.mismatch",
        "kernel.preempt", "kernel.config-missing", "kernel.config.PREEMPT_RT", "kernel.config.HZ_1000",
        "kernel.config.NO_HZ_FULL", "kernel.config.RCU_NOCB_CPU", "topology.smt-sibling", "topology.numa-spread",
        "sched.rt-throttling", "sched.stray-task", "sched.pid1-affinity", "sched.slice-unconfined", "power.governor", "power.min-freq", "power.cpuidle",
        "power.dma-latency-unheld", "irq.irqbalance", "irq.unmovable-isolated", "virt.steal", "app.not-running",
        "app.affinity", "app.policy", "app.priority", "app.memlock", "app.tz", "app.hugepages", "sysctl.no-effect",
        "sysctl.gone", "sysctl.conflict", "sysctl.cc-unavailable", "audit.limit", "boot.skew_tick", "boot.nosoftlockup",
        "boot.tsc", "boot.kthread_prio", "sched.movable-kthread", "sysctl.timer-migration", "sysctl.stat-interval",
        "sysctl.watchdog-cpumask", "sysctl.nmi-watchdog", "memory.swap", "boot.cmdline", "net.rps-isolated",
        "net.rps-flow-table",
};

/* Which ids some test saw firing, and whether an id outside the list was ever emitted. */
static bool id_fired[ELEMENTSOF(all_ids)];
static unsigned unknown_ids;
/* Runs whose report breaks a rule of boot.cmdline (cmdline_rules_hold()). */
static unsigned cmdline_rule_breaks;

/* The GRUB line is in boot.cmdline only, which comes when some finding refers to it, has
 * the worst severity among those findings and names each of them. Checked on every run. */
static bool cmdline_rules_hold(const FindingList *l) {
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

static void record_ids(const FindingList *l) {
        if (!cmdline_rules_hold(l))
                cmdline_rule_breaks++;
        for (size_t i = 0; i < l->n; i++) {
                bool known = false;
                for (size_t k = 0; k < ELEMENTSOF(all_ids); k++)
                        if (streq(l->items[i].id, all_ids[k]))
                                known = true;
                if (!known) {
                        printf("# undocumented id %s\n", l->items[i].id);
                        unknown_ids++;
                }
        }
}

/* Builds the posture from config_text and runs the audit (t and limits may be NULL). */
static bool fixture_run_full(Fixture *f, const char *config_text, const SettingTable *t, const AuditLimits *limits) {
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

static bool fixture_run(Fixture *f, const char *config_text) {
        return fixture_run_full(f, config_text, NULL, NULL);
}

static bool fixture_run_table(Fixture *f, const char *config_text, const SettingTable *t) {
        return fixture_run_full(f, config_text, t, NULL);
}

static bool fixture_run_limits(Fixture *f, const char *config_text, const AuditLimits *limits) {
        return fixture_run_full(f, config_text, NULL, limits);
}

static void fixture_done(Fixture *f) {
        finding_list_done(&f->findings);
        posture_free(f->posture);
        host_free(f->host);
        faketree_remove(f->root);
}

static void dump(const Fixture *f) {
        for (size_t i = 0; i < f->findings.n; i++)
                printf("#   %s %s [%s] %s\n", severity_to_string(f->findings.items[i].severity), f->findings.items[i].id,
                       f->findings.items[i].subject, f->findings.items[i].message);
}

static size_t count_id(const Fixture *f, const char *id) {
        size_t n = 0;
        for (size_t i = 0; i < f->findings.n; i++)
                n += streq(f->findings.items[i].id, id);
        return n;
}

/* The finding fires (with this subject, unless NULL) at this severity. */
static bool fires(const Fixture *f, const char *id, const char *subject, Severity severity) {
        const Finding *x = finding_list_find(&f->findings, id, subject);
        if (x && x->severity == severity) {
                for (size_t k = 0; k < ELEMENTSOF(all_ids); k++)
                        if (streq(id, all_ids[k]))
                                id_fired[k] = true;
                return true;
        }
        printf("# expected %s %s [%s]; got:\n", severity_to_string(severity), id, subject ?: "*");
        dump(f);
        return false;
}

static bool quiet(const Fixture *f, const char *id) {
        if (count_id(f, id) == 0)
                return true;
        printf("# expected no %s; got:\n", id);
        dump(f);
        return false;
}

/* The detail lines of the finding with this id: how many, and the line at index i. */
static size_t n_details(const Fixture *f, const char *id) {
        const Finding *x = finding_list_find(&f->findings, id, NULL);
        return x ? x->n_details : 0;
}

static bool detail_is(const Fixture *f, const char *id, size_t i, const char *text) {
        const Finding *x = finding_list_find(&f->findings, id, NULL);
        if (x && i < x->n_details && streq(x->details[i], text))
                return true;
        printf("# %s detail %zu is not '%s': %s\n", id, i, text, x && i < x->n_details ? x->details[i] : "(none)");
        return false;
}

/* The message of the finding with this id (and subject, unless NULL) contains text. */
static bool message_has_for(const Fixture *f, const char *id, const char *subject, const char *text) {
        const Finding *x = finding_list_find(&f->findings, id, subject);
        if (x && strstr(x->message, text))
                return true;
        printf("# %s message lacks '%s': %s\n", id, text, x ? x->message : "(no finding)");
        return false;
}

static bool message_has(const Fixture *f, const char *id, const char *text) {
        return message_has_for(f, id, NULL, text);
}

/* --- the healthy host --- */

static void test_healthy(void) {
        Fixture f;

        fixture_init(&f);
        if (CHECK(fixture_run(&f, healthy_config), "audit of the healthy host runs")) {
                if (!CHECK(f.findings.n == 0, "a healthy host has no findings"))
                        dump(&f);
                for (size_t i = 0; i < ELEMENTSOF(all_ids); i++) {
                        char what[96];
                        snprintf(what, sizeof(what), "healthy: no %s", all_ids[i]);
                        CHECK(quiet(&f, all_ids[i]), what);
                }
                CHECK(finding_list_worst(&f.findings) == SEVERITY_OK, "worst of nothing is ok");
        }
        fixture_done(&f);
}

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

/* --- 1. boot isolation --- */

static void test_boot_cmdline(void) {
        Fixture f;
        const char *expected_line =
                "GRUB_CMDLINE_LINUX_DEFAULT=\"quiet isolcpus=managed_irq,domain,2-3 nohz_full=2-3 rcu_nocbs=2-3 irqaffinity=0-1 "
                "skew_tick=1 nosoftlockup\" in /etc/default/grub";

        fixture_init(&f);

        /* no isolcpus, nohz_full still there */
        tree_write(&f, "proc/cmdline", "BOOT_IMAGE=/vmlinuz root=/dev/sda1 ro quiet nohz_full=2-3 rcu_nocbs=2-3 irqaffinity=0-1\n");
        tree_write(&f, "sys/devices/system/cpu/isolated", "\n");
        if (fixture_run(&f, healthy_config)) {
                CHECK(fires(&f, "boot.isolcpus", "isolcpus", SEVERITY_WARNING), "no isolcpus=: boot.isolcpus warning");
                CHECK(message_has(&f, "boot.isolcpus",
                                  "Fix: isolcpus=managed_irq,domain,2-3 on the kernel command line (the whole line is "
                                  "under boot.cmdline)."),
                      "it names the parameter it needs and refers to boot.cmdline");
                CHECK(fires(&f, "boot.cmdline", "GRUB_CMDLINE_LINUX_DEFAULT", SEVERITY_WARNING) &&
                              count_id(&f, "boot.cmdline") == 1,
                      "one boot.cmdline, a warning like the worst of its referrers");
                CHECK(message_has(&f, "boot.cmdline", expected_line),
                      "boot.cmdline has the whole GRUB line, with the timer parameters it lacks");
                CHECK(message_has(&f, "boot.cmdline",
                                  "One kernel command line fixes boot.isolcpus, boot.skew_tick and boot.nosoftlockup: "),
                      "and names the findings it fixes");
                CHECK(message_has(&f, "boot.cmdline", "update-grub") && !strstr(finding_list_find(&f.findings, "boot.isolcpus", NULL)->message, "update-grub"),
                      "the how-to is in boot.cmdline only");
                CHECK(quiet(&f, "boot.nohz_full") && quiet(&f, "boot.rcu_nocbs") && quiet(&f, "boot.irqaffinity"),
                      "the other parameters are fine");
                CHECK(quiet(&f, "boot.mismatch"), "nothing asked, nothing applied: no mismatch");
        }

        /* nothing at all while the config names isolated CPUs */
        tree_write(&f, "proc/cmdline", "BOOT_IMAGE=/vmlinuz root=/dev/sda1 ro\n");
        tree_write(&f, "sys/devices/system/cpu/nohz_full", "(null)\n");
        if (fixture_run(&f, healthy_config)) {
                CHECK(fires(&f, "boot.isolcpus", "isolcpus", SEVERITY_CRITICAL), "no isolation at all: critical");
                CHECK(fires(&f, "boot.nohz_full", "nohz_full", SEVERITY_WARNING), "no nohz_full=: warning");
                CHECK(message_has(&f, "boot.nohz_full", "Fix: nohz_full=2-3 on the kernel command line"), "its parameter");
                CHECK(fires(&f, "boot.rcu_nocbs", "rcu_nocbs", SEVERITY_WARNING), "no rcu_nocbs= nor nohz_full=: warning");
                CHECK(message_has(&f, "boot.rcu_nocbs", "Isolated CPUs 2-3 are in neither") &&
                              message_has(&f, "boot.rcu_nocbs", "Fix: rcu_nocbs=2-3 on"),
                      "both CPUs, and the parameter");
                CHECK(fires(&f, "boot.irqaffinity", "irqaffinity", SEVERITY_INFO), "no irqaffinity=: info");
                CHECK(message_has(&f, "boot.irqaffinity", "Fix: irqaffinity=0-1 on"), "housekeeping in irqaffinity=");
                CHECK(fires(&f, "boot.cmdline", "GRUB_CMDLINE_LINUX_DEFAULT", SEVERITY_CRITICAL),
                      "boot.cmdline takes the worst severity among its referrers: critical");
                CHECK(message_has(&f, "boot.cmdline", "GRUB_CMDLINE_LINUX_DEFAULT=\"isolcpus=managed_irq,domain,2-3 "),
                      "nothing kept from a bare command line");
                CHECK(message_has(&f, "boot.cmdline",
                                  "fixes boot.isolcpus, boot.nohz_full, boot.rcu_nocbs, boot.irqaffinity, "
                                  "boot.skew_tick and boot.nosoftlockup:"),
                      "every referrer, once each");
        }

        /* isolcpus without flags: domain only, managed IRQs still spread */
        tree_write(&f, "proc/cmdline", "ro isolcpus=2-3 nohz_full=2-3 irqaffinity=0-1\n");
        tree_write(&f, "sys/devices/system/cpu/isolated", "2-3\n");
        tree_write(&f, "sys/devices/system/cpu/nohz_full", "2-3\n");
        if (fixture_run(&f, healthy_config)) {
                CHECK(fires(&f, "boot.isolcpus", "isolcpus", SEVERITY_WARNING), "isolcpus= without managed_irq: warning");
                CHECK(message_has(&f, "boot.isolcpus", "managed_irq"), "the message names managed_irq");
                CHECK(quiet(&f, "boot.rcu_nocbs"), "nohz_full= implies rcu_nocbs=");
                CHECK(quiet(&f, "boot.mismatch"), "isolcpus=2-3 applied as 2-3");
        }

        /* isolcpus on other CPUs; irqaffinity onto isolated ones */
        tree_write(&f, "proc/cmdline", "ro isolcpus=managed_irq,domain,3 nohz_full=3 rcu_nocbs=3 irqaffinity=0-2\n");
        tree_write(&f, "sys/devices/system/cpu/isolated", "3\n");
        tree_write(&f, "sys/devices/system/cpu/nohz_full", "3\n");
        if (fixture_run(&f, healthy_config)) {
                CHECK(fires(&f, "boot.isolcpus", "isolcpus", SEVERITY_WARNING), "isolcpus= names other CPUs: warning");
                CHECK(message_has(&f, "boot.isolcpus", "isolcpus= names CPU 3 but lowlatd treats CPUs 2-3 as isolated"),
                      "\"CPU 3\" and \"CPUs 2-3\"");
                CHECK(fires(&f, "boot.nohz_full", "nohz_full", SEVERITY_WARNING), "nohz_full= names other CPUs: warning");
                CHECK(message_has(&f, "boot.nohz_full", "nohz_full= names CPU 3, not the isolated CPUs 2-3"), "in words");
                CHECK(fires(&f, "boot.rcu_nocbs", "rcu_nocbs", SEVERITY_WARNING), "CPU 2 is not offloaded: warning");
                CHECK(message_has(&f, "boot.rcu_nocbs", "Isolated CPU 2 is "), "only CPU 2 is missing");
                CHECK(fires(&f, "boot.irqaffinity", "irqaffinity", SEVERITY_WARNING), "irqaffinity= on isolated: warning");
                CHECK(quiet(&f, "boot.mismatch"), "the kernel applied what was asked");
        }

        /* init's arguments after "--" are not the kernel's: out of the line, and not read
         * as parameters (the nosoftlockup there does not count) */
        tree_write(&f, "proc/cmdline", "BOOT_IMAGE=/vmlinuz ro quiet splash acpi_osi=\"!Windows $x\" nohz_full=2-3 "
                                       "-- --foo nosoftlockup \"$x\"\n");
        if (fixture_run(&f, healthy_config)) {
                CHECK(message_has(&f, "boot.cmdline",
                                  "GRUB_CMDLINE_LINUX_DEFAULT=\"quiet splash acpi_osi=\\\"!Windows \\$x\\\" "
                                  "isolcpus=managed_irq,domain,2-3 nohz_full=2-3 rcu_nocbs=2-3 irqaffinity=0-1 "
                                  "skew_tick=1 nosoftlockup\" in /etc/default/grub"),
                      "kernel parameters only, shell characters escaped");
                const Finding *x = finding_list_find(&f.findings, "boot.cmdline", NULL);
                CHECK(x && !strstr(x->message, "--foo") && !strstr(x->message, "=\"quiet splash -- "),
                      "nothing from \"--\" on");
                CHECK(message_has(&f, "boot.cmdline", "The arguments after \"--\" on the running command line are for init"),
                      "and it says so");
                CHECK(fires(&f, "boot.nosoftlockup", "nosoftlockup", SEVERITY_INFO),
                      "nosoftlockup after \"--\" is init's: boot.nosoftlockup fires");
        }

        /* quoted values, and a model kernel line otherwise */
        tree_write(&f, "proc/cmdline", "ro quiet isolcpus=\"managed_irq,domain,2-3\" nohz_full=\"2-3\" rcu_nocbs=2-3 irqaffinity=0-1\n");
        tree_write(&f, "sys/devices/system/cpu/isolated", "2-3\n");
        tree_write(&f, "sys/devices/system/cpu/nohz_full", "2-3\n");
        if (fixture_run(&f, healthy_config))
                CHECK(quiet(&f, "boot.isolcpus") && quiet(&f, "boot.nohz_full"), "quoted values are read as the kernel does");

        /* only an info finding refers to the line: boot.cmdline is info too */
        tree_write(&f, "proc/cmdline", "BOOT_IMAGE=/vmlinuz-6.8.0-rt root=UUID=1234-abcd ro quiet skew_tick=1 "
                                       "isolcpus=managed_irq,domain,2-3 nohz_full=2-3 rcu_nocbs=2-3 irqaffinity=0-1 -- --foo\n");
        if (fixture_run(&f, healthy_config)) {
                CHECK(fires(&f, "boot.nosoftlockup", "nosoftlockup", SEVERITY_INFO) && count_id(&f, "boot.isolcpus") == 0,
                      "only nosoftlockup is missing");
                CHECK(fires(&f, "boot.cmdline", NULL, SEVERITY_INFO), "boot.cmdline is info, like its one referrer");
                CHECK(message_has(&f, "boot.cmdline",
                                  "One kernel command line fixes boot.nosoftlockup: set GRUB_CMDLINE_LINUX_DEFAULT=\"quiet "
                                  "skew_tick=1 isolcpus=managed_irq,domain,2-3 nohz_full=2-3 rcu_nocbs=2-3 "
                                  "irqaffinity=0-1 nosoftlockup\" in"),
                      "the line keeps the isolation as it is and adds nosoftlockup, nothing from \"--\"");
        }

        /* nothing to fix on the command line: no boot.cmdline */
        tree_write(&f, "proc/cmdline", healthy_cmdline);
        if (fixture_run(&f, healthy_config))
                CHECK(quiet(&f, "boot.cmdline"), "no boot finding, no boot.cmdline");

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

/* --- 2. kernel --- */

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

/* --- 3. topology --- */

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

/* --- 4. scheduling --- */

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

static void test_strays(void) {
        Fixture f;
        FakeProcess stray = { .pid = 700, .ppid = 1, .comm = "my (app) x", .allowed = "0-3" };
        FakeProcess kthread = { .pid = 40, .ppid = 2, .comm = "kworker/3:1", .allowed = "0-3", .kthread = true };
        FakeProcess old_kthread = { .pid = 41, .ppid = 2, .comm = "rcuop/3", .allowed = "0-3", .kthread = true, .no_stat = true };
        FakeProcess new_kthread = { .pid = 42, .ppid = 2, .comm = "kworker/2:0", .allowed = "2", .kthread = true, .no_stat = true };

        fixture_init(&f);
        tree_add_process(&f, &stray);
        tree_add_process(&f, &kthread);
        tree_add_process(&f, &old_kthread);
        tree_add_process(&f, &new_kthread);
        /* Linux 6.10 says so in status; its cmdline is made non-empty to show that is what counts */
        tree_write(&f, "proc/42/status", "Name:\tkworker/2:0\nKthread:\t1\nPPid:\t2\nCpus_allowed_list:\t2\n");
        tree_write(&f, "proc/42/cmdline", "x");
        if (fixture_run(&f, healthy_config)) {
                CHECK(fires(&f, "sched.stray-task", "1 task", SEVERITY_WARNING), "a user task allowed on 0-3");
                CHECK(message_has(&f, "sched.stray-task",
                                  "One task that is not a configured application may run on isolated CPUs 2-3: pid 700 "
                                  "(my (app) x) allowed on 0-3, last on CPU 0, 0.08 s CPU."),
                      "the message names it, where it may run and ran last, and its CPU time");
                CHECK(message_has(&f, "sched.stray-task", "taskset -apc 0-1 700"), "the fix moves it to housekeeping");
                CHECK(count_id(&f, "sched.stray-task") == 1,
                      "kernel threads (stat flags, status Kthread, or cmdline and ppid) are not strays");
                CHECK(n_details(&f, "sched.stray-task") == 1 &&
                              detail_is(&f, "sched.stray-task", 0, "pid 700 (my (app) x) allowed on 0-3, last on CPU 0, 0.08 s CPU"),
                      "one detail line, for the one task");
        }

        /* an allowed set inside housekeeping is fine; a task whose stat is gibberish is
         * judged from its status */
        stray.allowed = "1";
        tree_add_process(&f, &stray);
        tree_write(&f, "proc/700/stat", "garbage\n");
        if (fixture_run(&f, healthy_config))
                CHECK(quiet(&f, "sched.stray-task"), "a task on housekeeping CPUs is no stray");

        /* 11 strays: one finding, the most in the way named. pid 2003 last ran on isolated
         * CPU 3, so it comes first whatever its CPU time; then the busiest, 2010 down. */
        for (unsigned i = 0; i < 11; i++) {
                FakeProcess p = { .pid = 2000 + i, .ppid = 1, .comm = "worker", .allowed = "0-3", .cpu_ticks = 10 * i,
                                  .last_cpu = i == 3 ? 3 : i % 2 };
                tree_add_process(&f, &p);
        }
        if (fixture_run(&f, healthy_config)) {
                CHECK(fires(&f, "sched.stray-task", "11 tasks", SEVERITY_WARNING) && count_id(&f, "sched.stray-task") == 1,
                      "11 strays: one finding, \"11 tasks\"");
                CHECK(message_has(&f, "sched.stray-task",
                                  "11 tasks that are not configured applications may run on isolated CPUs 2-3: when one "
                                  "wakes up"),
                      "the count and the isolated CPUs");
                CHECK(message_has(&f, "sched.stray-task",
                                  "The 5 most in the way (last on an isolated CPU first, then by CPU time): pid 2003 "
                                  "(worker) last on CPU 3, 0.38 s CPU; pid 2010 (worker) last on CPU 0, 1.08 s CPU; pid "
                                  "2009 (worker) last on CPU 1, 0.98 s CPU; pid 2008 (worker) last on CPU 0, 0.88 s CPU; "
                                  "pid 2007 (worker) last on CPU 1, 0.78 s CPU; 6 more in lowlatctl check --json."),
                      "the one on an isolated CPU first, then by CPU time, and how many more");
                CHECK(message_has(&f, "sched.stray-task", "taskset -apc 0-1 PID for each") &&
                              message_has(&f, "sched.stray-task", "CPUAffinity=0-1") &&
                              message_has(&f, "sched.stray-task", "evict_strays = yes"),
                      "the fix once: taskset, CPUAffinity=, evict_strays");
                CHECK(n_details(&f, "sched.stray-task") == 11, "11 detail lines");
                CHECK(detail_is(&f, "sched.stray-task", 0, "pid 2003 (worker) allowed on 0-3, last on CPU 3, 0.38 s CPU") &&
                              detail_is(&f, "sched.stray-task", 10, "pid 2000 (worker) allowed on 0-3, last on CPU 0, 0.08 s CPU"),
                      "the details in the same order, with the CPUs each may use");
        }

        /* more than AUDIT_FINDINGS_PER_ID_MAX: still one finding, every task in its details */
        for (unsigned i = 11; i < 25; i++) {
                FakeProcess p = { .pid = 2000 + i, .ppid = 1, .comm = "worker", .allowed = "0-3" };
                tree_add_process(&f, &p);
        }
        if (fixture_run(&f, healthy_config)) {
                CHECK(fires(&f, "sched.stray-task", "25 tasks", SEVERITY_WARNING) && count_id(&f, "sched.stray-task") == 1,
                      "25 strays: one finding, no \"N more\" summary");
                CHECK(n_details(&f, "sched.stray-task") == 25, "the cap per id takes no task from the details");
                CHECK(message_has(&f, "sched.stray-task", "; 20 more in lowlatctl check --json."), "20 more");
        }
        fixture_done(&f);
}

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

/* Kernel threads allowed on isolated CPUs: the ones taskset can move are reported, the ones
 * bound to their CPU (PF_NO_SETAFFINITY) are not, nor those without a stat line to tell. */
static void test_movable_kthreads(void) {
        Fixture f;
        FakeProcess kswapd = { .pid = 60, .ppid = 2, .comm = "kswapd0", .allowed = "0-3", .kthread = true };
        FakeProcess bound = { .pid = 61, .ppid = 2, .comm = "kworker/3:1", .allowed = "3", .kthread = true, .percpu = true };
        FakeProcess unknown = { .pid = 62, .ppid = 2, .comm = "rcu_preempt", .allowed = "0-3", .kthread = true, .no_stat = true };

        fixture_init(&f);
        tree_add_process(&f, &kswapd);
        tree_add_process(&f, &bound);
        tree_add_process(&f, &unknown);
        if (fixture_run(&f, healthy_config)) {
                CHECK(fires(&f, "sched.movable-kthread", "1 kernel thread", SEVERITY_WARNING), "kswapd0 on 0-3: warning");
                CHECK(message_has(&f, "sched.movable-kthread", "isolated CPUs 2-3: pid 60 (kswapd0) allowed on 0-3"),
                      "it is named with where it may run");
                CHECK(message_has(&f, "sched.movable-kthread", "taskset -pc 0-1 60"), "the fix moves it to housekeeping");
                CHECK(message_has(&f, "sched.movable-kthread", "kthreads = housekeeping"), "or [cpus] kthreads");
                CHECK(count_id(&f, "sched.movable-kthread") == 1 && n_details(&f, "sched.movable-kthread") == 1,
                      "a bound kworker and a thread without stat are not reported");
                CHECK(quiet(&f, "sched.stray-task"), "kernel threads are never stray tasks");
        }
        kswapd.allowed = "0-1";
        tree_add_process(&f, &kswapd);
        if (fixture_run(&f, healthy_config))
                CHECK(quiet(&f, "sched.movable-kthread"), "kswapd0 on housekeeping: quiet");

        /* three: grouped like the strays, the one last on an isolated CPU first */
        {
                FakeProcess khugepaged = { .pid = 63, .ppid = 2, .comm = "khugepaged", .allowed = "0-3", .kthread = true,
                                           .last_cpu = 2 };
                FakeProcess kcompactd = { .pid = 64, .ppid = 2, .comm = "kcompactd0", .allowed = "0-3", .kthread = true,
                                          .cpu_ticks = 500 };
                kswapd.allowed = "0-3";
                tree_add_process(&f, &kswapd);
                tree_add_process(&f, &khugepaged);
                tree_add_process(&f, &kcompactd);
        }
        if (fixture_run(&f, "[cpus]\nisolated = 2-3\nkthreads = housekeeping\n")) {
                CHECK(fires(&f, "sched.movable-kthread", "3 kernel threads", SEVERITY_WARNING) &&
                              count_id(&f, "sched.movable-kthread") == 1 && n_details(&f, "sched.movable-kthread") == 3,
                      "three movable kernel threads: one finding with three details");
                CHECK(message_has(&f, "sched.movable-kthread",
                                  "Most in the way first: pid 63 (khugepaged) last on CPU 2, 0.08 s CPU; pid 64 "
                                  "(kcompactd0) last on CPU 0, 5.08 s CPU; pid 60 (kswapd0) last on CPU 0, 0.08 s CPU."),
                      "all three named, the one last on an isolated CPU first");
                CHECK(message_has(&f, "sched.movable-kthread", "taskset -pc 0-1 PID for each"), "the fix once");
                const Finding *x = finding_list_find(&f.findings, "sched.movable-kthread", NULL);
                CHECK(x && !strstr(x->message, "kthreads = housekeeping"), "[cpus] kthreads is not offered when set");
        }
        fixture_done(&f);
}

/* --- 5. power --- */

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

        /* nobody holds it */
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

/* --- 6. interrupts --- */

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

/* RPS onto the isolated CPUs, from the host or from [nic] rps_cpus; flow tables without the
 * global one. */
static void test_rps(void) {
        char config[1024];
        Fixture f;

        fixture_init(&f);
        tree_write(&f, "sys/class/net/eth0/queues/rx-0/rps_cpus", "c\n");
        tree_write(&f, "sys/class/net/eth0/queues/rx-0/rps_flow_cnt", "0\n");
        tree_write(&f, "sys/class/net/eth0/queues/rx-1/rps_cpus", "1\n");
        tree_write(&f, "sys/class/net/eth0/queues/rx-1/rps_flow_cnt", "0\n");
        tree_write(&f, "sys/class/net/eth0/queues/tx-0/xps_cpus", "f\n");
        tree_write(&f, "sys/class/net/eth1/queues/rx-0/rps_cpus", "3\n");
        tree_write(&f, "sys/class/net/eth1/queues/rx-0/rps_flow_cnt", "4096\n");
        tree_write(&f, "proc/sys/net/core/rps_sock_flow_entries", "0\n");
        if (fixture_run(&f, healthy_config)) {
                CHECK(fires(&f, "net.rps-isolated", "eth0", SEVERITY_WARNING), "eth0's rx-0 steers to CPUs 2-3: warning");
                CHECK(message_has(&f, "net.rps-isolated", "onto isolated CPUs 2-3"), "the isolated CPUs are named");
                CHECK(message_has(&f, "net.rps-isolated", "echo 3 > /sys/class/net/eth0/queues/rx-N/rps_cpus"),
                      "the fix writes the housekeeping mask");
                CHECK(count_id(&f, "net.rps-isolated") == 1, "eth1 (CPUs 0-1) and XPS are not reported");
                CHECK(fires(&f, "net.rps-flow-table", "net.core.rps_sock_flow_entries", SEVERITY_WARNING),
                      "eth1 has a flow table and rps_sock_flow_entries is 0: warning");
                CHECK(message_has(&f, "net.rps-flow-table", "receive queues of eth1 flow tables"),
                      "the interface with flow tables is named");
        }
        snprintf(config, sizeof(config), "%s[nic \"eth0\"]\nrps_cpus = housekeeping\n[nic \"eth1\"]\nrps_cpus = 2\n"
                 "rps_flow_cnt = 0\n", healthy_config);
        if (fixture_run(&f, config)) {
                CHECK(fires(&f, "net.rps-isolated", "eth1", SEVERITY_WARNING) && count_id(&f, "net.rps-isolated") == 1,
                      "what [nic] rps_cpus will hold counts: eth0 is fine, eth1 = 2 is reported");
                CHECK(message_has(&f, "net.rps-isolated", "(as [nic] rps_cpus asks)"), "and says the config asks it");
                CHECK(quiet(&f, "net.rps-flow-table"), "rps_flow_cnt = 0 drops eth1's flow table: quiet");
        }
        snprintf(config, sizeof(config), "%s[sysctl]\nnet.core.rps_sock_flow_entries = 32768\n", healthy_config);
        if (fixture_run(&f, config))
                CHECK(quiet(&f, "net.rps-flow-table"), "rps_sock_flow_entries in [sysctl] counts");
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

/* --- 7. virtualisation --- */

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

/* --- 8. applications --- */

static void test_app_not_running(void) {
        Fixture f;
        char config[1024];

        fixture_init(&f);
        snprintf(config, sizeof(config), "%s[process \"ghost\"]\n[service \"phantom\"]\n", healthy_config);
        if (fixture_run(&f, config)) {
                CHECK(fires(&f, "app.not-running", "process ghost", SEVERITY_WARNING), "no process named ghost");
                CHECK(fires(&f, "app.not-running", "service phantom", SEVERITY_WARNING), "no process in phantom.service");
                CHECK(count_id(&f, "app.not-running") == 2, "matcher and engine are found");
        }
        /* a unit whose name only starts the same is not the unit */
        tree_write(&f, "proc/1300/cgroup", "0::/system.slice/engine.service-helper.scope\n");
        if (fixture_run(&f, healthy_config))
                CHECK(fires(&f, "app.not-running", "service engine", SEVERITY_WARNING), "engine.service-helper is not engine.service");
        fixture_done(&f);
}

static void test_app_affinity(void) {
        Fixture f;
        FakeProcess m = proc_matcher;

        fixture_init(&f);
        m.allowed = "0-3";
        tree_add_process(&f, &m);
        if (fixture_run(&f, healthy_config)) {
                CHECK(fires(&f, "app.affinity", "pid 1234 (matcher)", SEVERITY_CRITICAL), "matcher on 0-3: critical");
                CHECK(message_has(&f, "app.affinity", "taskset -apc 2-3 1234"), "the fix for a process");
                CHECK(quiet(&f, "sched.stray-task"), "a configured application is never a stray");
        }
        m.allowed = "0-1";
        tree_add_process(&f, &m);
        if (fixture_run(&f, healthy_config))
                CHECK(fires(&f, "app.affinity", "pid 1234 (matcher)", SEVERITY_CRITICAL), "matcher on housekeeping: critical");

        /* engine: the pinned worker is fine, a second worker straddles */
        tree_add_thread(&f, &proc_engine, 1302, SCHED_FIFO, 60, "1-3");
        if (fixture_run(&f, healthy_config)) {
                CHECK(fires(&f, "app.affinity", "pid 1300 (engine)", SEVERITY_WARNING), "a straddling thread: warning");
                CHECK(message_has_for(&f, "app.affinity", "pid 1300 (engine)", "CPUAffinity=2-3"), "the fix for a service");
                CHECK(message_has_for(&f, "app.affinity", "pid 1300 (engine)", "pid 1300 (engine) of engine.service has"),
                      "a service's process is named with its unit");
        }
        fixture_done(&f);
}

static void test_app_policy(void) {
        Fixture f;
        FakeProcess m = proc_matcher;
        char config[1024];

        fixture_init(&f);
        m.policy = SCHED_OTHER;
        m.rt_priority = 0;
        tree_add_process(&f, &m);
        if (fixture_run(&f, healthy_config)) {
                CHECK(fires(&f, "app.policy", "pid 1234 (matcher)", SEVERITY_WARNING), "matcher is SCHED_OTHER");
                CHECK(message_has(&f, "app.policy", "chrt -f -a -p 50 1234"), "chrt with the configured priority");
                CHECK(quiet(&f, "app.priority"), "no RT thread: the policy finding covers the priority");
        }
        /* rr asked for, fifo found */
        m = proc_matcher;
        tree_add_process(&f, &m);
        snprintf(config, sizeof(config), "[cpus]\nisolated = 2-3\n[pm]\ncpu_dma_latency = 10\n"
                                         "[process \"matcher\"]\npolicy = rr\n");
        if (fixture_run(&f, config))
                CHECK(fires(&f, "app.policy", "pid 1234 (matcher)", SEVERITY_WARNING), "FIFO where RR is configured");
        /* the engine service: main thread SCHED_OTHER */
        tree_add_thread(&f, &proc_engine, 1301, SCHED_OTHER, 0, "3");
        if (fixture_run(&f, healthy_config)) {
                CHECK(fires(&f, "app.policy", "pid 1300 (engine)", SEVERITY_WARNING), "no thread of engine is RT");
                CHECK(message_has(&f, "app.policy", "CPUSchedulingPolicy=fifo"), "the unit directive");
        }

        /* priority */
        tree_add_thread(&f, &proc_engine, 1301, SCHED_FIFO, 60, "3");
        m.rt_priority = 10;
        tree_add_process(&f, &m);
        if (fixture_run(&f, healthy_config)) {
                CHECK(fires(&f, "app.priority", "pid 1234 (matcher)", SEVERITY_WARNING), "priority 10 < 50");
                CHECK(quiet(&f, "app.policy"), "the policy is right");
                CHECK(count_id(&f, "app.priority") == 1, "engine's worker at 60 is enough");
        }
        fixture_done(&f);
}

static void test_app_memlock_tz_hugepages(void) {
        Fixture f;
        FakeProcess m = proc_matcher;

        fixture_init(&f);
        m.memlock = "65536";
        m.environ = "PATH=/usr/bin\nLANG=C.UTF-8";
        m.anon_huge_kb = 0;
        tree_add_process(&f, &m);
        if (fixture_run(&f, healthy_config)) {
                CHECK(fires(&f, "app.memlock", "pid 1234 (matcher)", SEVERITY_WARNING), "64 KiB memlock");
                CHECK(message_has(&f, "app.memlock", "prlimit --pid 1234 --memlock=unlimited:unlimited"), "prlimit fix");
                CHECK(fires(&f, "app.tz", "pid 1234 (matcher)", SEVERITY_INFO), "no TZ");
                CHECK(message_has(&f, "app.tz", "TZ=:/etc/localtime"), "TZ fix");
                CHECK(fires(&f, "app.hugepages", "pid 1234 (matcher)", SEVERITY_WARNING), "no huge page");
        }
        /* CAP_IPC_LOCK lifts the limit; hugetlbfs pages count */
        m.cap_eff = "0000000000004000";
        m.hugetlb_kb = 4096;
        tree_add_process(&f, &m);
        if (fixture_run(&f, healthy_config)) {
                CHECK(quiet(&f, "app.memlock"), "CAP_IPC_LOCK: mlockall() works whatever the limit");
                CHECK(quiet(&f, "app.hugepages"), "HugetlbPages counts as huge pages");
        }
        /* not asked for: not checked */
        m.cap_eff = NULL;
        m.hugetlb_kb = 0;
        tree_add_process(&f, &m);
        if (fixture_run(&f, "[cpus]\nisolated = 2-3\n[pm]\ncpu_dma_latency = 10\n[process \"matcher\"]\n")) {
                CHECK(quiet(&f, "app.memlock") && quiet(&f, "app.hugepages"), "mlock and hugepages not configured");
                CHECK(fires(&f, "app.tz", NULL, SEVERITY_INFO), "TZ is always checked");
        }
        /* the service: unit directives */
        tree_write_bytes(&f, "proc/1300/environ", "PATH=/bin", 10);
        tree_write(&f, "proc/1300/limits", "Max locked memory         8388608              8388608              bytes\n");
        if (fixture_run(&f, healthy_config)) {
                CHECK(fires(&f, "app.memlock", "pid 1300 (engine)", SEVERITY_WARNING), "engine's 8 MiB");
                CHECK(message_has_for(&f, "app.memlock", "pid 1300 (engine)", "LimitMEMLOCK=infinity"), "LimitMEMLOCK=infinity");
                CHECK(fires(&f, "app.tz", "pid 1300 (engine)", SEVERITY_INFO), "engine has no TZ");
                CHECK(message_has_for(&f, "app.tz", "pid 1300 (engine)", "Environment=TZ=:/etc/localtime"),
                      "Environment=TZ=:/etc/localtime");
        }
        fixture_done(&f);
}

/* --- 9. sysctl advice --- */

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

/* RCU's per-CPU thread on an isolated CPU that still ticks, below an application's
 * real-time priority there: starved. matcher runs FIFO 80 on 2-3. */
static void test_rcu_priority(void) {
        Fixture f;
        FakeProcess rcuc = { .pid = 31, .ppid = 2, .comm = "rcuc/3", .allowed = "3", .kthread = true, .percpu = true,
                             .policy = SCHED_FIFO, .rt_priority = 1 };

        fixture_init(&f);
        tree_add_process(&f, &rcuc);
        if (fixture_run(&f, healthy_config))
                CHECK(quiet(&f, "boot.kthread_prio"), "nohz_full CPUs: RCU needs nothing there, quiet");

        tree_write(&f, "sys/devices/system/cpu/nohz_full", "(null)\n");
        if (fixture_run(&f, healthy_config)) {
                CHECK(fires(&f, "boot.kthread_prio", "pid 31 (rcuc/3)", SEVERITY_WARNING), "rcuc/3 at FIFO 1 below 80: warning");
                CHECK(message_has_for(&f, "boot.kthread_prio", "pid 31 (rcuc/3)", "of pid 1234 (matcher)"),
                      "it names the application");
                CHECK(message_has_for(&f, "boot.kthread_prio", "pid 31 (rcuc/3)", "is SCHED_FIFO priority 1, below real-time priority 80"),
                      "and both priorities");
                CHECK(message_has_for(&f, "boot.kthread_prio", "pid 31 (rcuc/3)", " rcutree.kthread_prio=81 on the kernel command line"),
                      "the fix: rcutree.kthread_prio above the application");
                CHECK(fires(&f, "boot.kthread_prio", "pid 25 (ksoftirqd/2)", SEVERITY_WARNING),
                      "CPU 2 without rcuc: ksoftirqd/2 (SCHED_OTHER) runs RCU's softirq: warning");
                CHECK(message_has_for(&f, "boot.kthread_prio", "pid 25 (ksoftirqd/2)", "rcutree.use_softirq=0 rcutree.kthread_prio=81"),
                      "the fix moves RCU's work to rcuc at that priority");
        }
        rcuc.rt_priority = 90;
        tree_add_process(&f, &rcuc);
        if (fixture_run(&f, healthy_config)) {
                CHECK(finding_list_find(&f.findings, "boot.kthread_prio", "pid 31 (rcuc/3)") == NULL,
                      "rcuc/3 at FIFO 90, above the application: not reported");
                CHECK(count_id(&f, "boot.kthread_prio") == 1, "ksoftirqd/2 still is");
        }
        if (fixture_run(&f, "[cpus]\nisolated = 2-3\n"))
                CHECK(quiet(&f, "boot.kthread_prio"), "no configured application: nothing to compare with");
        fixture_done(&f);
}

/* --- 10. memory --- */

static void test_swap(void) {
        Fixture f;

        fixture_init(&f);
        tree_write(&f, "proc/meminfo", "MemTotal:        8000000 kB\nSwapCached:          12 kB\n"
                                       "SwapTotal:       2097148 kB\nSwapFree:        2096000 kB\n");
        if (fixture_run(&f, healthy_config)) {
                CHECK(fires(&f, "memory.swap", "swap", SEVERITY_WARNING), "1148 kB swapped out: warning");
                CHECK(message_has(&f, "memory.swap", "1148 kB of swap is in use (of 2097148 kB)"), "how much");
                CHECK(message_has(&f, "memory.swap", "swapoff -a"), "the fix");
        }
        tree_write(&f, "proc/meminfo", "MemTotal:        8000000 kB\nSwapTotal:             0 kB\nSwapFree:              0 kB\n");
        if (fixture_run(&f, healthy_config))
                CHECK(quiet(&f, "memory.swap"), "no swap at all: quiet");
        tree_write(&f, "proc/meminfo", "MemTotal:        8000000 kB\nSwapTotal:    x kB\n");
        if (fixture_run(&f, healthy_config))
                CHECK(quiet(&f, "memory.swap"), "an unreadable meminfo: quiet");
        fixture_done(&f);
}

/* --- robustness --- */

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

int main(void) {
        test_severity_names();
        test_healthy();
        test_boot_cmdline();
        test_boot_nothing_isolated();
        test_boot_mismatch();
        test_boot_timers();
        test_kernel_preempt();
        test_kernel_config();
        test_topology();
        test_rt_throttling();
        test_noise_sysctls();
        test_strays();
        test_pid1_affinity();
        test_unconfined_slices();
        test_movable_kthreads();
        test_power();
        test_cpuidle();
        test_irqbalance();
        test_unmovable_irqs();
        test_rps();
        test_steal();
        test_app_not_running();
        test_app_affinity();
        test_app_policy();
        test_app_memlock_tz_hugepages();
        test_rcu_priority();
        test_sysctls();
        test_swap();
        test_bare_and_garbage_trees();
        test_process_limit();

        /* The issue's rule: every finding has a test where it fires (and test_healthy()
         * shows each one quiet). */
        for (size_t k = 0; k < ELEMENTSOF(all_ids); k++) {
                char what[96];
                snprintf(what, sizeof(what), "%s was seen firing", all_ids[k]);
                CHECK(id_fired[k], what);
        }
        CHECK(unknown_ids == 0, "every id emitted is in the documented list");
        CHECK(cmdline_rule_breaks == 0,
              "in every run the GRUB line is in boot.cmdline only, which names and outranks its referrers");
        return tap_finish();
}
