/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lowlatctl measure's placement checks on fake trees: the online CPUs, the cgroup cpuset
 * that confines this process (its own cgroup's cpuset.cpus.effective, or its nearest
 * ancestor's), the slice of lowlatd's cpuset partition, a thread's last CPU from its stat line, and where the measuring threads were
 * seen from a fake /proc/PID/task. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "basic/macro.h"
#include "basic/util.h"
#include "measure-placement.h"
#include "tap.h"

static char root[] = "/tmp/test-measure-placement-XXXXXX";

/* Writes ROOT/relative, making its folders; a failure fails the test run. */
static void put(const char *relative, const char *text) {
        _cleanup_free_ char *path = strdup_printf("%s/%s", root, relative);
        _cleanup_free_ char *cmd = NULL;
        FILE *f;

        cmd = path ? strdup_printf("mkdir -p \"$(dirname '%s')\"", path) : NULL;
        if (!cmd || system(cmd) != 0 || !(f = fopen(path, "we"))) {
                printf("Bail out! cannot write %s\n", path ?: relative);
                exit(1);
        }
        fputs(text, f);
        fclose(f);
}

static void unput(const char *relative) {
        _cleanup_free_ char *path = strdup_printf("%s/%s", root, relative);
        if (!path || unlink(path) < 0) {
                printf("Bail out! cannot remove %s\n", relative);
                exit(1);
        }
}

static char *cgroup_cpus(int *ret_r, char **ret_cgroup) {
        _cleanup_cpuset_ CPUSet s = {};

        *ret_cgroup = NULL;
        *ret_r = measure_cgroup_cpus(root, &s, ret_cgroup);
        return *ret_r < 0 ? NULL : cpuset_format_list(&s);
}

static void test_online(void) {
        _cleanup_cpuset_ CPUSet s = {};
        _cleanup_free_ char *list = NULL;

        put("sys/devices/system/cpu/online", "0-1\n");
        CHECK(measure_cpus_online(root, &s) == 0 && (list = cpuset_format_list(&s)) && streq(list, "0-1") &&
              !cpuset_contains(&s, 5), "online: 0-1 from the fake tree; CPU 5 is not among them");
}

static void test_cgroup(void) {
        _cleanup_free_ char *list = NULL, *cg = NULL;
        int r;

        /* The guest of the report: user.slice confined to 0-1, the session scope below it
         * without the cpuset controller of its own. */
        put("proc/self/cgroup", "0::/user.slice/user-0.slice/session-3.scope\n");
        put("sys/fs/cgroup/cpuset.cpus.effective", "0-3\n");
        put("sys/fs/cgroup/user.slice/cpuset.cpus.effective", "0-1\n");
        list = cgroup_cpus(&r, &cg);
        CHECK(r == 0 && list && streq(list, "0-1") && cg && streq(cg, "/user.slice"),
              "a session scope without cpuset files: user.slice's 0-1 apply");
        list = mfree(list);
        cg = mfree(cg);

        put("sys/fs/cgroup/user.slice/user-0.slice/session-3.scope/cpuset.cpus.effective", "1\n");
        list = cgroup_cpus(&r, &cg);
        CHECK(r == 0 && list && streq(list, "1") && cg && streq(cg, "/user.slice/user-0.slice/session-3.scope"),
              "the process's own cgroup has the file: its CPUs");
        list = mfree(list);
        cg = mfree(cg);
        unput("sys/fs/cgroup/user.slice/user-0.slice/session-3.scope/cpuset.cpus.effective");

        /* Hybrid hierarchy: v1 lines first, then the unified one. */
        put("proc/self/cgroup", "3:cpuset:/\n1:name=systemd:/system.slice/x.service\n0::/system.slice/x.service\n");
        list = cgroup_cpus(&r, &cg);
        CHECK(r == 0 && list && streq(list, "0-3") && cg && streq(cg, "/"),
              "system.slice without cpuset files: the root cgroup's 0-3");
        list = mfree(list);
        cg = mfree(cg);

        put("proc/self/cgroup", "3:cpuset:/\n1:name=systemd:/\n");
        list = cgroup_cpus(&r, &cg);
        CHECK(r == -ENOENT && !list, "cgroup v1 only: -ENOENT (nothing seen to confine)");
        list = mfree(list);

        put("proc/self/cgroup", "0::/\n");
        unput("sys/fs/cgroup/cpuset.cpus.effective");
        list = cgroup_cpus(&r, &cg);
        CHECK(r == -ENOENT && !list, "no cpuset.cpus.effective up to the root: -ENOENT");
        list = mfree(list);

        put("proc/self/cgroup", "0::/a/../../etc\n");
        list = cgroup_cpus(&r, &cg);
        CHECK(r == -EBADMSG && !list, "a cgroup path that climbs out: refused");
}

static const char *stat_on(unsigned cpu) {
        static char buf[512];
        /* A command name with a space and a ")" in it: field 39 is counted after the last ")". */
        snprintf(buf, sizeof(buf),
                 "4242 (cyc lic) test) S 1 4242 4242 0 -1 4194560 100 0 0 0 5 6 0 0 -96 0 3 0 100 1000 200 "
                 "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 -1 %u 95 1 0 0 0 0 0\n", cpu);
        return buf;
}

/* Thread TID of process 500: last on CPU cpu, allowed on the CPUs of allowed. */
static void put_thread(unsigned tid, unsigned cpu, const char *allowed) {
        char file[64], status[128];

        snprintf(file, sizeof(file), "proc/500/task/%u/stat", tid);
        put(file, stat_on(cpu));
        snprintf(file, sizeof(file), "proc/500/task/%u/status", tid);
        snprintf(status, sizeof(status), "Name:\tcyclictest\nCpus_allowed:\tf\nCpus_allowed_list:\t%s\n", allowed);
        put(file, status);
}

/* Thread TID of process 500 exits. */
static void drop_thread(unsigned tid) {
        char path[256];

        snprintf(path, sizeof(path), "%s/proc/500/task/%u/stat", root, tid);
        (void) unlink(path);
        snprintf(path, sizeof(path), "%s/proc/500/task/%u/status", root, tid);
        (void) unlink(path);
        snprintf(path, sizeof(path), "%s/proc/500/task/%u", root, tid);
        (void) rmdir(path);
}

static void test_stat(void) {
        unsigned cpu = 99;

        CHECK(thread_stat_last_cpu(stat_on(7), &cpu) == 0 && cpu == 7, "stat: field 39 is the last CPU (7)");
        CHECK(thread_stat_last_cpu("4242 (x) S 1 2 3\n", &cpu) == -EBADMSG, "stat: too few fields: an error");
        CHECK(thread_stat_last_cpu("no parenthesis", &cpu) == -EBADMSG, "stat: no command name: an error");
        CHECK(thread_status_pinned_to("Name:\tx\nCpus_allowed_list:\t3\nMems_allowed_list:\t0\n", 3),
              "status: Cpus_allowed_list 3 is pinned to 3");
        CHECK(!thread_status_pinned_to("Cpus_allowed_list:\t2-3\n", 3) &&
                      !thread_status_pinned_to("Cpus_allowed_list:\t2\n", 3) && !thread_status_pinned_to("Name:\tx\n", 3),
              "status: 2-3, another CPU or no line: not pinned to 3");
}

static void test_placement(void) {
        _cleanup_(measure_placement_done) MeasurePlacement p = {};
        _cleanup_cpuset_ CPUSet cpus = {};

        if (cpuset_parse_list("2-3", &cpus) < 0 || measure_placement_init(&p, &cpus) < 0) {
                printf("Bail out! cannot set up\n");
                exit(1);
        }
        /* The main thread 500 (on 0) is left out; by thread id, in creation order, 501
         * measures 2 and 502 measures 3. */
        put_thread(500, 0, "0-3");
        put_thread(501, 2, "2");
        put_thread(502, 3, "3");
        CHECK(measure_placement_sample(&p, root, 500) == 0 && p.samples == 1 && measure_placement_ok(&p),
              "threads 501 and 502 on 2 and 3, the main thread left out: ok");
        /* The cgroup of the report: the thread of CPU 3 let run on 1 only. */
        put_thread(502, 1, "3");
        CHECK(measure_placement_sample(&p, root, 500) == 0 && !measure_placement_ok(&p) &&
              cpuset_contains(&p.threads[1].ran_on, 1) && cpuset_contains(&p.threads[1].ran_on, 3) &&
              p.threads[1].cpu == 3, "the thread of CPU 3 seen on 1: not ok, both CPUs noted");
        CHECK(measure_placement_sample(&p, root, 999) == -ENOENT, "a process gone: -ENOENT");
}

static void test_never_seen(void) {
        _cleanup_(measure_placement_done) MeasurePlacement p = {};
        _cleanup_cpuset_ CPUSet cpus = {};

        if (cpuset_parse_list("2-4", &cpus) < 0 || measure_placement_init(&p, &cpus) < 0) {
                printf("Bail out! cannot set up\n");
                exit(1);
        }
        CHECK(measure_placement_sample(&p, root, 500) == 0 && !measure_placement_ok(&p) &&
              cpuset_is_empty(&p.threads[2].ran_on), "a CPU whose thread was never seen: not ok");
        /* With skip_looks 1, a thread's first look (before it pinned itself) does not count. */
        measure_placement_done(&p);
        if (measure_placement_init(&p, &cpus) < 0) {
                printf("Bail out! cannot set up\n");
                exit(1);
        }
        p.skip_looks = 1;
        put_thread(503, 4, "4");
        put_thread(502, 1, "0-4");
        CHECK(measure_placement_sample(&p, root, 500) == 0 && cpuset_is_empty(&p.threads[1].ran_on),
              "skip_looks 1: the first look at each thread is not counted");
        put_thread(502, 3, "3");
        CHECK(measure_placement_sample(&p, root, 500) == 0 && measure_placement_ok(&p) &&
              p.threads[1].looks == 2, "the second is: every thread on its CPU, CPU 1 of the first look forgotten");
}

/* A slow guest: a thread still where it was born after skip_looks, then on its CPU for
 * good, is fine; one that leaves its CPU after that is not; one never on it ran where seen. */
static char *partition_of(const char *list, int *ret_r) {
        _cleanup_cpuset_ CPUSet cpus = {};
        char *name = NULL;

        *ret_r = cpuset_parse_list(list, &cpus) < 0 ? -EINVAL : measure_partition_slice(root, &cpus, &name);
        return name;
}

/* lowlatd's [cpus] partition: the slice that measure's scope must go in, since every other
 * slice is kept off the isolated CPUs (a scope under the root would be refused them). */
static void test_partition(void) {
        _cleanup_free_ char *name = NULL;
        int r;

        put("sys/fs/cgroup/cpuset.cpus.effective", "0-3\n");
        put("sys/fs/cgroup/user.slice/cpuset.cpus.effective", "0-1\n");
        put("sys/fs/cgroup/user.slice/cpuset.cpus.partition", "member\n");
        name = partition_of("2-3", &r);
        CHECK(r == 0 && !name, "no partition: none to name");

        put("sys/fs/cgroup/isolated.slice/cpuset.cpus.effective", "2-3\n");
        put("sys/fs/cgroup/isolated.slice/cpuset.cpus.partition", "isolated\n");
        put("sys/fs/cgroup/system.service/cpuset.cpus.effective", "2-3\n");
        put("sys/fs/cgroup/system.service/cpuset.cpus.partition", "isolated\n");
        name = partition_of("2-3", &r);
        CHECK(r == 1 && name && streq(name, "isolated.slice"), "isolated.slice, an isolated partition of 2-3: named");
        name = mfree(name);
        name = partition_of("3", &r);
        CHECK(r == 1 && name && streq(name, "isolated.slice"), "and for CPU 3 alone");
        name = mfree(name);
        name = partition_of("1-2", &r);
        CHECK(r == 0 && !name, "CPUs 1-2: the partition does not hold CPU 1, none named");

        put("sys/fs/cgroup/isolated.slice/cpuset.cpus.partition", "isolated invalid (Cpu list in cpuset.cpus not exclusive)\n");
        name = partition_of("2-3", &r);
        CHECK(r == 0 && !name, "an invalid partition is none (the kernel gave its CPUs back)");
        put("sys/fs/cgroup/isolated.slice/cpuset.cpus.partition", "root\n");
        name = partition_of("2-3", &r);
        CHECK(r == 1 && name && streq(name, "isolated.slice"), "a root partition holds them too");
        name = mfree(name);
}

static void test_late_pin(void) {
        _cleanup_(measure_placement_done) MeasurePlacement p = {};
        _cleanup_cpuset_ CPUSet cpus = {};

        if (cpuset_parse_list("2-3", &cpus) < 0 || measure_placement_init(&p, &cpus) < 0) {
                printf("Bail out! cannot set up\n");
                exit(1);
        }
        /* Not pinned yet, wherever the scheduler put them: on 2 by chance, and on 1. */
        put_thread(501, 2, "0-3");
        put_thread(502, 1, "0-3");
        (void) measure_placement_sample(&p, root, 500);
        put_thread(501, 0, "0-3");
        (void) measure_placement_sample(&p, root, 500);
        put_thread(501, 2, "2");
        put_thread(502, 3, "3");
        (void) measure_placement_sample(&p, root, 500);
        (void) measure_placement_sample(&p, root, 500);
        CHECK(measure_placement_finish(&p) == 0 && measure_placement_ok(&p) &&
                      cpuset_count(&p.threads[0].ran_on) == 1 && cpuset_contains(&p.threads[0].before, 0),
              "seen on 2, 0 and 1 before pinning themselves, then only on their CPUs: ok (the first looks kept apart)");
        put_thread(501, 0, "0-3");
        (void) measure_placement_sample(&p, root, 500);
        CHECK(!measure_placement_ok(&p) && cpuset_contains(&p.threads[0].ran_on, 0),
              "its affinity widened later (a cgroup, a hotplug) and seen on 0: not ok");

        measure_placement_done(&p);
        if (measure_placement_init(&p, &cpus) < 0) {
                printf("Bail out! cannot set up\n");
                exit(1);
        }
        put_thread(501, 2, "2");
        put_thread(502, 1, "1");
        (void) measure_placement_sample(&p, root, 500);
        (void) measure_placement_sample(&p, root, 500);
        CHECK(measure_placement_finish(&p) == 0 && !measure_placement_ok(&p) &&
                      cpuset_count(&p.threads[1].ran_on) == 1 && cpuset_contains(&p.threads[1].ran_on, 1),
              "never pinned to its CPU 3 (a cgroup allowed 1 only): not ok, and it ran on 1");

        /* The end of a run: the first thread exits before the second. */
        measure_placement_done(&p);
        if (measure_placement_init(&p, &cpus) < 0) {
                printf("Bail out! cannot set up\n");
                exit(1);
        }
        put_thread(501, 2, "2");
        put_thread(502, 3, "3");
        (void) measure_placement_sample(&p, root, 500);
        drop_thread(501);
        (void) measure_placement_sample(&p, root, 500);
        CHECK(measure_placement_finish(&p) == 0 && measure_placement_ok(&p) && p.threads[1].tid == 502 &&
                      cpuset_count(&p.threads[0].ran_on) == 1 && cpuset_contains(&p.threads[0].ran_on, 2),
              "the thread of CPU 2 gone first: the other keeps CPU 3, nothing moves");
}

int main(void) {
        _cleanup_free_ char *cleanup = NULL;

        if (!mkdtemp(root)) {
                printf("Bail out! mkdtemp: %m\n");
                return 1;
        }
        test_online();
        test_cgroup();
        test_partition();
        test_late_pin();
        test_stat();
        test_placement();
        test_never_seen();
        cleanup = strdup_printf("rm -rf '%s'", root);
        if (cleanup)
                (void) system(cleanup);
        return tap_finish();
}
