/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* audit-processes.c against fake --root trees: stray tasks, movable kernel threads, the
 * configured applications (affinity, policy, memlock, TZ, huge pages) and RCU's priority. */
#include "audit-fixture.h"

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

int main(void) {
        test_strays();
        test_movable_kthreads();
        test_app_not_running();
        test_app_affinity();
        test_app_policy();
        test_app_memlock_tz_hugepages();
        test_rcu_priority();
        return audit_fixture_finish(AUDIT_TEST_PROCESSES);
}
