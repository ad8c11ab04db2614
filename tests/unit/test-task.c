/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The task readers the audit and evict_strays share: stat and status parsing, telling a
 * kernel thread (by each kind of evidence), finding a daemon by its comm, against a small
 * fake /proc. */
#include <stdlib.h>
#include <unistd.h>

#include "faketree.h"
#include "tap.h"
#include "host/task.h"
#include "basic/util.h"

static char root[32];

static void test_stat_parse(void) {
        TaskStat ts;

        CHECK(task_stat_parse("42 (a (b) c) R 7 1 1 0 -1 4194560 0 0 0 0 1 1 0 0 20 0 3 0 98765 1000 10\n", &ts) == 0,
              "a stat line with parentheses in comm parses");
        CHECK_STR(ts.comm, "a (b) c", "comm runs to the last ')'");
        CHECK(ts.state == 'R' && ts.ppid == 7 && ts.flags == 4194560 && ts.start_time == 98765,
              "state, ppid, flags and start time");
        CHECK(ts.cpu_time == 2 && !ts.have_processor, "CPU time is utime + stime; a short line has no processor");
        CHECK(task_stat_parse("42 (x) R\n", &ts) == -EINVAL, "a truncated line is refused");
        CHECK(cgroup_in_unit("0::/system.slice/trader.service/worker\n", "trader.service"), "a service's sub-cgroup");
        CHECK(!cgroup_in_unit("0::/system.slice/trader.service-x\n", "trader.service"), "not a prefix match");
}

/* Lines from a real 6.18 kernel: a per-CPU kernel thread's flags and its SCHED_FIFO 99. */
static void test_stat_kthread(void) {
        TaskStat ts;

        CHECK(task_stat_parse("21 (migration/1) S 2 0 0 0 -1 69238848 0 0 0 0 0 54 0 0 -100 0 1 0 26 0 0 "
                              "18446744073709551615 0 0 0 0 0 0 0 2147483647 0 1 0 0 17 1 99 1 0 0 0 0 0 0 0 0 0 0 0\n",
                              &ts) == 0,
              "a kernel thread's stat line parses");
        CHECK((ts.flags & PF_KTHREAD) && (ts.flags & PF_NO_SETAFFINITY), "PF_KTHREAD and PF_NO_SETAFFINITY");
        CHECK(ts.have_policy && ts.policy == SCHED_POLICY_FIFO && ts.rt_priority == 99, "SCHED_FIFO 99");
        CHECK(ts.ppid == 2 && ts.start_time == 26, "parent kthreadd, start time 26");
        CHECK(ts.cpu_time == 54 && ts.have_processor && ts.processor == 1, "54 ticks of system time, last on CPU 1");
        CHECK(task_stat_parse("7 (spin) R 1 7 7 0 -1 4194304 0 0 0 0 18446744073709551615 5 0 0 20 0 1 0 9 0 0 0 "
                              "0 0 0 0 0 0 0 0 0 0 0 0 17 x 0 0\n",
                              &ts) == 0 &&
                      ts.cpu_time == UINT64_MAX && !ts.have_processor,
              "CPU time saturates instead of wrapping; a processor that is not a number is not had");
        CHECK(task_stat_parse("2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 0 0 0 20 0 1 0 26\n", &ts) == 0 &&
                      !ts.have_policy,
              "a line that stops before field 41 has no policy");
}

static void test_sched(void) {
        char buf[32];
        SchedPolicy policy;
        unsigned prio;

        CHECK(sched_format(SCHED_POLICY_FIFO, 50, buf, sizeof(buf)) == 0, "format fifo 50");
        CHECK_STR(buf, "fifo:50", "a real-time policy with its priority");
        CHECK(sched_format(SCHED_POLICY_OTHER, 0, buf, sizeof(buf)) == 0, "format other");
        CHECK_STR(buf, "other", "any other policy alone");
        CHECK(sched_format((SchedPolicy) 4, 0, buf, sizeof(buf)) == 0, "format a policy without a name");
        CHECK_STR(buf, "policy4", "by its number");
        CHECK(sched_format(SCHED_POLICY_RR, 1, buf, 4) == -ENOBUFS, "a short buffer is -ENOBUFS");
        CHECK(sched_parse("rr:99", &policy, &prio) == 0 && policy == SCHED_POLICY_RR && prio == 99, "parse rr:99");
        CHECK(sched_parse("idle", &policy, &prio) == 0 && policy == SCHED_POLICY_IDLE && prio == 0, "parse idle");
        CHECK(sched_parse("fifo", &policy, &prio) == -EINVAL, "fifo without a priority is refused");
        CHECK(sched_parse("other:1", &policy, &prio) == -EINVAL, "other with a priority is refused");
        CHECK(sched_parse("fifo:0", &policy, &prio) == -EINVAL && sched_parse("fifo:100", &policy, &prio) == -EINVAL,
              "priorities outside 1..99 are refused");
        CHECK(sched_parse("fifo:5x", &policy, &prio) == -EINVAL && sched_parse(":5", &policy, &prio) == -EINVAL &&
                      sched_parse("", &policy, &prio) == -EINVAL && sched_parse("policy4", &policy, &prio) == -EINVAL,
              "junk is refused");
}

static void test_status_fields(void) {
        static const char status[] = "Name:\tengine\nPPid:\t1\nCpus_allowed:\tf\nCpus_allowed_list:\t 2-3 \n"
                                     "HugetlbPages:\t0 kB";
        _cleanup_cpuset_ CPUSet cpus = CPUSET_EMPTY;
        _cleanup_free_ char *value = NULL, *last = NULL, *list = NULL;

        CHECK(task_status_field(status, "Name", &value) == 0, "a field is found");
        CHECK_STR(value, "engine", "its value, without the tab");
        CHECK(task_status_field(status, "HugetlbPages", &last) == 0, "the last line needs no newline");
        CHECK_STR(last, "0 kB", "its value");
        CHECK(task_status_field(status, "Cpus", &value) == -ENOENT, "a key is never a prefix of another");
        CHECK(task_status_field(status, "Kthread", &value) == -ENOENT, "an absent key is -ENOENT");
        CHECK_STR(value, "engine", "and *ret is left alone");

        CHECK(task_status_cpus_allowed(status, &cpus, &list) == 0, "Cpus_allowed_list parses");
        CHECK(cpuset_count(&cpus) == 2 && cpuset_contains(&cpus, 2) && cpuset_contains(&cpus, 3), "CPUs 2-3");
        CHECK_STR(list, "2-3", "the list as written, trimmed");
        CHECK(task_status_cpus_allowed("Name:\tx\n", &cpus, NULL) == -ENOENT, "no Cpus_allowed_list: -ENOENT");
        CHECK(task_status_cpus_allowed("Cpus_allowed_list:\t3-1\n", &cpus, NULL) == -EINVAL, "not a CPU list: -EINVAL");
        CHECK(cpuset_count(&cpus) == 2, "and *ret is left alone");
}

static void test_kernel_thread(const Host *h) {
        TaskStat kthread = { .flags = PF_KTHREAD, .ppid = 2 }, user = { .flags = 0x400000, .ppid = 2 };

        faketree_writef(root, "", "proc/2/cmdline");
        faketree_writef(root, "", "proc/30/cmdline");
        faketree_writef(root, "nschild", "proc/31/cmdline");

        CHECK(task_looks_like_kthread(h, 2, 0) == 1, "kthreadd: pid 2, empty command line");
        CHECK(task_looks_like_kthread(h, 30, 2) == 1, "its child with an empty command line");
        CHECK(task_looks_like_kthread(h, 31, 2) == 0, "a child of pid 2 with a command line: a PID namespace");
        CHECK(task_looks_like_kthread(h, 32, 2) == 0, "an unreadable command line is no kernel thread");
        CHECK(task_looks_like_kthread(h, 30, 1) == 0, "an empty command line alone is not enough");

        CHECK(task_is_kernel_thread(h, 30, &kthread, NULL) == 1, "PF_KTHREAD");
        CHECK(task_is_kernel_thread(h, 30, &user, "Kthread:\t1\n") == 0,
              "a stat line without PF_KTHREAD decides, whatever else the task looks like");
        CHECK(task_is_kernel_thread(h, 31, NULL, "Kthread:\t1\nPPid:\t1\n") == 1, "no stat: Kthread: 1");
        CHECK(task_is_kernel_thread(h, 30, NULL, "Kthread:\t0\nPPid:\t2\n") == 0, "no stat: Kthread: 0 decides");
        CHECK(task_is_kernel_thread(h, 30, NULL, "Name:\tx\nPPid:\t2\n") == 1,
              "no stat, no Kthread (before 6.10): parent 2 and no command line");
        CHECK(task_is_kernel_thread(h, 31, NULL, "Name:\tx\nPPid:\t2\n") == 0, "... but not with a command line");
        CHECK(task_is_kernel_thread(h, 30, NULL, "Name:\tx\nPPid:\tx\n") == 0, "an unreadable PPid is no parent 2");
        CHECK(task_is_kernel_thread(h, 2, NULL, NULL) == 1, "nothing but the command line: kthreadd itself");
}

static void test_find_by_comm(const Host *h) {
        static const char *const names[] = { "irqbalance", "tuned" };
        unsigned pid = 77;
        size_t i = 9;

        CHECK(task_find_by_comm(h, names, ELEMENTSOF(names), &pid, &i) == -ESRCH && pid == 77 && i == 9,
              "none runs: -ESRCH, nothing written");
        faketree_writef(root, "tuned\n", "proc/412/comm");
        faketree_writef(root, "irqbalancer\n", "proc/413/comm");
        CHECK(task_find_by_comm(h, names, ELEMENTSOF(names), &pid, &i) == 0 && pid == 412 && i == 1,
              "tuned (pid 412), the second name; a longer comm is not a match");
        CHECK(task_find_by_comm(h, names, 1, &pid, NULL) == -ESRCH, "one name only: irqbalance, which does not run");
        faketree_remove_at(root, "proc/412");
        faketree_remove_at(root, "proc/413");
}

int main(void) {
        _cleanup_(host_freep) Host *h = NULL;

        snprintf(root, sizeof(root), "/tmp/test-task-XXXXXX");
        if (!mkdtemp(root))
                abort();
        faketree_writef(root, "", "proc/.keep");
        test_stat_parse();
        test_stat_kthread();
        test_sched();
        test_status_fields();
        if (CHECK(host_open(root, &h) == 0, "the fake tree opens")) {
                test_kernel_thread(h);
                test_find_by_comm(h);
        }
        faketree_remove(root);
        return tap_finish();
}
