/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lowlatctl measure: where its threads may run and where they ran. A tool asked to pin a
 * thread to a CPU outside the caller's affinity or cgroup cpuset does not fail: the kernel
 * refuses the affinity, the tool warns (or not) and measures wherever it was let run. So
 * measure checks before it starts, and watches the threads while they run. */
#include <dirent.h>
#include <fcntl.h>
#include <string.h>

#include "basic/array.h"
#include "basic/macro.h"
#include "basic/util.h"
#include "measure-placement.h"

/* Reads ROOT/relative (root NULL: "/") into a string; -errno. */
static int read_file_under(const char *root, const char *relative, char **ret) {
        _cleanup_free_ char *path = strdup_printf("%s/%s", isempty(root) ? "" : root, relative);
        _cleanup_close_ int fd = -EBADF;
        char buf[65536];
        ssize_t n;

        if (!path)
                return -ENOMEM;
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return negative_errno();
        n = pread_string(fd, buf, sizeof(buf));
        if (n < 0)
                return (int) n;
        *ret = strdup(buf);
        return *ret ? 0 : -ENOMEM;
}

static int read_cpu_list_under(const char *root, const char *relative, CPUSet *ret) {
        _cleanup_free_ char *text = NULL;
        _cleanup_cpuset_ CPUSet s = {};
        int r;

        r = read_file_under(root, relative, &text);
        if (r < 0)
                return r;
        r = cpuset_parse_list(strstrip(text), &s);
        if (r < 0)
                return r;
        *ret = s;
        s = CPUSET_EMPTY;
        return 0;
}

int measure_cpus_online(const char *root, CPUSet *ret) {
        return read_cpu_list_under(root, "sys/devices/system/cpu/online", ret);
}

/* The path of the "0::PATH" line of /proc/self/cgroup's text, or NULL (cgroup v1 only). */
static char *cgroup_v2_path(const char *text) {
        for (const char *p = text; *p;) {
                size_t len = strcspn(p, "\n");

                if (len > 3 && strncmp(p, "0::", 3) == 0 && p[3] == '/')
                        return strndup(p + 3, len - 3);
                p += len;
                if (*p == '\n')
                        p++;
        }
        return NULL;
}

int measure_cgroup_cpus(const char *root, CPUSet *ret, char **ret_cgroup) {
        _cleanup_free_ char *text = NULL, *cgroup = NULL;
        int r;

        r = read_file_under(root, "proc/self/cgroup", &text);
        if (r < 0)
                return r;
        cgroup = cgroup_v2_path(text);
        if (!cgroup)
                return -ENOENT;
        if (strstr(cgroup, "/../") || strstr(cgroup, "/./"))
                return -EBADMSG;
        /* Up from the process's own cgroup to the root: the first that has the file is the
         * one whose CPUs apply. */
        for (;;) {
                _cleanup_free_ char *file = strdup_printf("sys/fs/cgroup%s%scpuset.cpus.effective", cgroup,
                                                          streq(cgroup, "/") ? "" : "/");
                _cleanup_cpuset_ CPUSet s = {};
                char *slash;

                if (!file)
                        return -ENOMEM;
                r = read_cpu_list_under(root, file, &s);
                if (r >= 0 && !cpuset_is_empty(&s)) {
                        *ret = s;
                        s = CPUSET_EMPTY;
                        if (ret_cgroup)
                                *ret_cgroup = TAKE_PTR(cgroup);
                        return 0;
                }
                if (r < 0 && r != -ENOENT)
                        return r;
                if (streq(cgroup, "/"))
                        return -ENOENT;
                slash = strrchr(cgroup, '/');
                slash[slash == cgroup ? 1 : 0] = '\0';
        }
}

/* Whether ROOT/sys/fs/cgroup/NAME is a valid partition ("isolated" or "root", not "...
 * invalid (REASON)") whose CPUs take in every CPU of cpus. */
static bool partition_holds(const char *root, const char *name, const CPUSet *cpus) {
        _cleanup_free_ char *file = strdup_printf("sys/fs/cgroup/%s/cpuset.cpus.partition", name), *text = NULL;
        _cleanup_free_ char *effective = strdup_printf("sys/fs/cgroup/%s/cpuset.cpus.effective", name);
        _cleanup_cpuset_ CPUSet s = {};
        const char *type;

        if (!file || !effective || read_file_under(root, file, &text) < 0)
                return false;
        type = strstrip(text);
        if (!streq(type, "isolated") && !streq(type, "root"))
                return false;
        return read_cpu_list_under(root, effective, &s) >= 0 && cpuset_is_subset(cpus, &s);
}

int measure_partition_slice(const char *root, const CPUSet *cpus, char **ret) {
        _cleanup_free_ char *path = strdup_printf("%s/sys/fs/cgroup", isempty(root) ? "" : root), *found = NULL;
        struct dirent *de;
        DIR *d;

        if (!path)
                return -ENOMEM;
        d = opendir(path);
        if (!d)
                return errno == ENOENT || errno == ENOTDIR ? 0 : negative_errno();
        while ((de = readdir(d))) {
                size_t n = strlen(de->d_name);

                if (n > strlen(".slice") && streq(de->d_name + n - strlen(".slice"), ".slice") &&
                    partition_holds(root, de->d_name, cpus)) {
                        found = strdup(de->d_name);
                        (void) closedir(d);
                        if (!found)
                                return -ENOMEM;
                        *ret = TAKE_PTR(found);
                        return 1;
                }
        }
        (void) closedir(d);
        return 0;
}

int thread_stat_last_cpu(const char *stat, unsigned *ret) {
        const char *p = strrchr(stat, ')');

        if (!p)
                return -EBADMSG;
        p++;
        /* Field 3 (the state) follows ")"; field 39 is 36 fields further. */
        for (unsigned field = 3; field <= 39; field++) {
                size_t len;

                p += strspn(p, " ");
                len = strcspn(p, " \n");
                if (len == 0)
                        return -EBADMSG;
                if (field == 39) {
                        _cleanup_free_ char *num = strndup(p, len);
                        if (!num)
                                return -ENOMEM;
                        return parse_unsigned(num, ret) < 0 ? -EBADMSG : 0;
                }
                p += len;
        }
        return -EBADMSG;
}

int measure_placement_init(MeasurePlacement *p, const CPUSet *cpus) {
        size_t i = 0;

        *p = (MeasurePlacement) {};
        p->threads = calloc(MAX(cpuset_count(cpus), 1U), sizeof(ThreadPlacement));
        if (!p->threads)
                return -ENOMEM;
        CPUSET_FOREACH(cpu, cpus)
                p->threads[i++].cpu = (uint32_t) cpu;
        p->n = i;
        return 0;
}

void measure_placement_done(MeasurePlacement *p) {
        for (size_t i = 0; p->threads && i < p->n; i++) {
                cpuset_done(&p->threads[i].ran_on);
                cpuset_done(&p->threads[i].before);
        }
        p->threads = mfree(p->threads);
        p->n = 0;
}

static int compare_pid(const void *x, const void *y) {
        pid_t a = *(const pid_t *) x, b = *(const pid_t *) y;
        return a < b ? -1 : a > b;
}

/* The thread ids of ROOT/proc/PID/task but PID itself, ascending: creation order, short
 * of the ids wrapping around in the middle of a run. */
static int list_threads(const char *root, pid_t pid, pid_t **ret, size_t *ret_n) {
        _cleanup_free_ char *dirpath = strdup_printf("%s/proc/%d/task", isempty(root) ? "" : root, (int) pid);
        _cleanup_free_ pid_t *tids = NULL;
        size_t n = 0, allocated = 0;
        DIR *d;

        if (!dirpath)
                return -ENOMEM;
        d = opendir(dirpath);
        if (!d)
                return negative_errno();
        for (struct dirent *de; (de = readdir(d));) {
                uint32_t tid;

                if (parse_uint32(de->d_name, &tid) < 0 || (pid_t) tid == pid)
                        continue;
                if (array_grow(&tids, &allocated, n + 1) < 0) {
                        closedir(d);
                        return -ENOMEM;
                }
                tids[n++] = (pid_t) tid;
        }
        closedir(d);
        if (n > 1)
                qsort(tids, n, sizeof(pid_t), compare_pid);
        *ret = TAKE_PTR(tids);
        *ret_n = n;
        return 0;
}

/* The placement of thread tid: the one it was given when first seen, else the next one
 * not given yet (thread ids grow in the order the tool creates its threads). */
static ThreadPlacement *placement_of(MeasurePlacement *p, pid_t tid) {
        for (size_t i = 0; i < p->n; i++)
                if (p->threads[i].tid == tid)
                        return &p->threads[i];
        for (size_t i = 0; i < p->n; i++)
                if (p->threads[i].tid == 0) {
                        p->threads[i].tid = tid;
                        return &p->threads[i];
                }
        return NULL;
}

int measure_placement_sample(MeasurePlacement *p, const char *root, pid_t pid) {
        _cleanup_free_ pid_t *tids = NULL;
        size_t n;
        int r;

        r = list_threads(root, pid, &tids, &n);
        if (r < 0)
                return r;
        for (size_t k = 0; k < n; k++) {
                ThreadPlacement *t = placement_of(p, tids[k]);
                _cleanup_free_ char *file = NULL, *stat = NULL;
                unsigned cpu;

                if (!t)
                        continue; /* one thread more than CPUs: not a measuring thread */
                file = strdup_printf("proc/%d/task/%d/stat", (int) pid, (int) tids[k]);
                if (!file)
                        return -ENOMEM;
                if (read_file_under(root, file, &stat) < 0 || thread_stat_last_cpu(stat, &cpu) < 0)
                        continue; /* gone meanwhile */
                if (t->looks++ < p->skip_looks)
                        continue;
                /* Until its affinity is its CPU alone, a thread that pins itself may still be
                 * where it was born (on a slow or loaded machine for longer than
                 * skip_looks): where it is seen then is kept apart. After that, only a
                 * changed affinity (a cgroup, a hotplug) lets it run elsewhere. */
                if (!t->pinned) {
                        _cleanup_free_ char *status_file = strdup_printf("proc/%d/task/%d/status", (int) pid,
                                                                        (int) tids[k]);
                        _cleanup_free_ char *status = NULL;
                        if (!status_file)
                                return -ENOMEM;
                        t->pinned = read_file_under(root, status_file, &status) >= 0 &&
                                    thread_status_pinned_to(status, t->cpu);
                }
                r = cpuset_add(t->pinned ? &t->ran_on : &t->before, cpu);
                if (r < 0)
                        return r;
        }
        p->samples++;
        return 0;
}

bool thread_status_pinned_to(const char *status, unsigned cpu) {
        _cleanup_cpuset_ CPUSet allowed = {};
        _cleanup_free_ char *list = NULL;
        const char *line = status;

        while (line && strncmp(line, "Cpus_allowed_list:", 18) != 0) {
                line = strchr(line, '\n');
                if (line)
                        line++;
        }
        if (!line)
                return false;
        line += 18;
        list = strndup(line, strcspn(line, "\n"));
        return list && cpuset_parse_list(strstrip(list), &allowed) >= 0 && cpuset_count(&allowed) == 1 &&
               cpuset_contains(&allowed, cpu);
}

int measure_placement_finish(MeasurePlacement *p) {
        for (size_t i = 0; i < p->n; i++) {
                ThreadPlacement *t = &p->threads[i];
                int r = cpuset_is_empty(&t->ran_on) ? cpuset_or(&t->ran_on, &t->before) : 0;
                if (r < 0)
                        return r;
        }
        return 0;
}

bool measure_placement_ok(const MeasurePlacement *p) {
        for (size_t i = 0; i < p->n; i++) {
                const ThreadPlacement *t = &p->threads[i];

                if (cpuset_count(&t->ran_on) != 1 || !cpuset_contains(&t->ran_on, t->cpu))
                        return false;
        }
        return true;
}
