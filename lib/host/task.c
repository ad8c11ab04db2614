/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One task under /proc, read through the root: the parsers of its stat and status files,
 * kernel-thread detection, and matching it to the configured applications; and the two
 * system calls that change a task (affinity, scheduling policy) with the one that reads
 * its affinity on a live host. Pure parsing here is unit tested directly; the reads are
 * host_read_filef() of one small file. */
#include <dirent.h>
#include <sched.h>
#include <string.h>

#include "host/task.h"
#include "basic/util.h"

int task_stat_parse(const char *text, TaskStat *ret) {
        const char *open = strchr(text, '('), *close = strrchr(text, ')'), *p;
        TaskStat st = {};
        unsigned field = 3;
        bool have_ppid = false, have_flags = false, have_prio = false;
        uint64_t utime = 0, stime = 0;

        if (!open || !close || close < open)
                return -EINVAL;
        snprintf(st.comm, sizeof(st.comm), "%.*s", (int) MIN((size_t) (close - open - 1), sizeof(st.comm) - 1), open + 1);
        p = close + 1;
        while (*p && field <= 41) {
                char token[32];
                size_t n;

                while (*p == ' ')
                        p++;
                n = strcspn(p, " \n");
                if (n == 0)
                        break;
                if (field == 3)
                        st.state = *p;
                if (n < sizeof(token) && (field == 4 || field == 9 || field == 14 || field == 15 || field == 22 ||
                                          field == 39 || field == 40 || field == 41)) {
                        memcpy(token, p, n);
                        token[n] = '\0';
                        if (field == 4)
                                have_ppid = parse_unsigned(token, &st.ppid) >= 0;
                        else if (field == 9)
                                have_flags = parse_uint64(token, &st.flags) >= 0;
                        else if (field == 14)
                                (void) parse_uint64(token, &utime);
                        else if (field == 15)
                                (void) parse_uint64(token, &stime);
                        else if (field == 22)
                                (void) parse_uint64(token, &st.start_time);
                        else if (field == 39)
                                st.have_processor = parse_unsigned(token, &st.processor) >= 0;
                        else if (field == 40)
                                have_prio = parse_unsigned(token, &st.rt_priority) >= 0;
                        else
                                st.have_policy = have_prio && parse_unsigned(token, &st.policy) >= 0;
                }
                p += n;
                field++;
        }
        if (!have_ppid || !have_flags)
                return -EINVAL;
        /* Each is a sum of ticks the kernel keeps in 64 bits; saturate rather than wrap. */
        st.cpu_time = utime > UINT64_MAX - stime ? UINT64_MAX : utime + stime;
        *ret = st;
        return 0;
}

int task_status_field(const char *text, const char *key, char **ret) {
        size_t klen = strlen(key);

        for (const char *line = text; line && *line;) {
                const char *end = strchr(line, '\n');
                size_t len = end ? (size_t) (end - line) : strlen(line);

                if (len > klen && strncmp(line, key, klen) == 0 && line[klen] == ':') {
                        char *v = strndup(line + klen + 1, len - klen - 1), *s;
                        if (!v)
                                return -ENOMEM;
                        s = strstrip(v);
                        memmove(v, s, strlen(s) + 1);
                        *ret = v;
                        return 0;
                }
                line = end ? end + 1 : NULL;
        }
        return -ENOENT;
}

int task_status_cpus_allowed(const char *status, CPUSet *ret, char **ret_list) {
        _cleanup_free_ char *list = NULL;
        int r;

        r = task_status_field(status, "Cpus_allowed_list", &list);
        if (r < 0)
                return r;
        r = cpuset_parse_list(list, ret);
        if (r < 0)
                return r;
        if (ret_list)
                *ret_list = TAKE_PTR(list);
        return 0;
}

int task_looks_like_kthread(const Host *h, unsigned pid, unsigned ppid) {
        _cleanup_free_ char *cmdline = NULL;
        int r;

        if (pid != 2 && ppid != 2)
                return 0;
        r = host_read_filef(h, &cmdline, "proc/%u/cmdline", pid);
        if (r == -ENOMEM)
                return r;
        return r >= 0 && isempty(cmdline);
}

int task_is_kernel_thread(const Host *h, unsigned pid, const TaskStat *st, const char *status) {
        _cleanup_free_ char *kthread = NULL, *ppid_text = NULL;
        unsigned ppid = 0;
        int r;

        if (st)
                return !!(st->flags & PF_KTHREAD);
        if (!status)
                return task_looks_like_kthread(h, pid, 0);
        r = task_status_field(status, "Kthread", &kthread);
        if (r >= 0)
                return streq(kthread, "1");
        if (r == -ENOMEM)
                return r;
        /* Before 6.10 and without a stat line, kthreadd's look is all there is. */
        r = task_status_field(status, "PPid", &ppid_text);
        if (r == -ENOMEM)
                return r;
        if (r >= 0 && parse_unsigned(ppid_text, &ppid) < 0)
                ppid = 0;
        return task_looks_like_kthread(h, pid, ppid);
}

bool cgroup_in_unit(const char *text, const char *unit) {
        size_t ulen = strlen(unit);

        for (const char *line = text; line && *line;) {
                const char *end = strchr(line, '\n'), *path;
                const char *stop = end ?: line + strlen(line);

                path = memchr(line, ':', (size_t) (stop - line));
                path = path ? memchr(path + 1, ':', (size_t) (stop - path - 1)) : NULL;
                for (const char *s = path; s && s < stop;) {
                        const char *seg = s + 1, *next = memchr(seg, '/', (size_t) (stop - seg));
                        size_t len = (size_t) ((next ?: stop) - seg);
                        if (len == ulen && strncmp(seg, unit, ulen) == 0)
                                return true;
                        s = next;
                }
                line = end ? end + 1 : NULL;
        }
        return false;
}

int task_find_by_comm(const Host *h, const char *const *names, size_t n, unsigned *ret_pid, size_t *ret_index) {
        struct dirent *de;
        DIR *d;
        int r;

        r = host_opendir(h, "proc", &d);
        if (r < 0)
                return r;
        while ((de = readdir(d))) {
                _cleanup_free_ char *comm = NULL;
                unsigned pid;

                if (parse_unsigned(de->d_name, &pid) < 0 || pid == 0 ||
                    host_read_filef(h, &comm, "proc/%u/comm", pid) < 0)
                        continue;
                comm[strcspn(comm, "\n")] = '\0';
                for (size_t i = 0; i < n; i++)
                        if (streq(comm, names[i])) {
                                closedir(d);
                                *ret_pid = pid;
                                if (ret_index)
                                        *ret_index = i;
                                return 0;
                        }
        }
        closedir(d);
        return -ESRCH;
}

static const char *const sched_policy_table[_SCHED_POLICY_MAX] = {
        [SCHED_POLICY_OTHER] = "other",
        [SCHED_POLICY_FIFO] = "fifo",
        [SCHED_POLICY_RR] = "rr",
        [SCHED_POLICY_BATCH] = "batch",
        [SCHED_POLICY_IDLE] = "idle",
        [SCHED_POLICY_DEADLINE] = "deadline",
};
DEFINE_STRING_TABLE_LOOKUP(sched_policy, SchedPolicy);

bool sched_policy_is_realtime(SchedPolicy policy) {
        return policy == SCHED_POLICY_FIFO || policy == SCHED_POLICY_RR;
}

int sched_format(SchedPolicy policy, unsigned priority, char *buf, size_t size) {
        const char *name = sched_policy_to_string(policy);
        int n;

        if (sched_policy_is_realtime(policy))
                n = snprintf(buf, size, "%s:%u", name, priority);
        else if (name)
                n = snprintf(buf, size, "%s", name);
        else
                n = snprintf(buf, size, "policy%d", (int) policy);
        return n < 0 ? -EIO : (size_t) n >= size ? -ENOBUFS : 0;
}

int sched_parse(const char *text, SchedPolicy *ret_policy, unsigned *ret_priority) {
        char name[16];
        const char *colon = strchr(text, ':');
        size_t n = colon ? (size_t) (colon - text) : strlen(text);
        unsigned priority = 0;
        SchedPolicy policy;

        if (n == 0 || n >= sizeof(name))
                return -EINVAL;
        memcpy(name, text, n);
        name[n] = '\0';
        policy = sched_policy_from_string(name);
        if (policy < 0)
                return -EINVAL;
        if (sched_policy_is_realtime(policy) != !!colon)
                return -EINVAL;
        if (colon && (parse_unsigned(colon + 1, &priority) < 0 || priority < 1 || priority > 99))
                return -EINVAL;
        *ret_policy = policy;
        *ret_priority = priority;
        return 0;
}

int task_set_affinity(void *userdata, pid_t tid, const CPUSet *cpus) {
        int last = cpuset_last(cpus);
        size_t size;
        cpu_set_t *set;
        int r = 0;

        (void) userdata;
        if (last < 0)
                return -EINVAL;
        size = CPU_ALLOC_SIZE((size_t) last + 1);
        set = CPU_ALLOC((size_t) last + 1);
        if (!set)
                return -ENOMEM;
        CPU_ZERO_S(size, set);
        CPUSET_FOREACH(cpu, cpus)
                CPU_SET_S((size_t) cpu, size, set);
        if (sched_setaffinity(tid, size, set) < 0)
                r = negative_errno();
        CPU_FREE(set);
        return r;
}

/* Builds the set from the kernel's mask, unless only_if is given and the mask has none of
 * its CPUs (the common case for a scan: only those bits are looked at, nothing is built). */
static int affinity_from_mask(const cpu_set_t *set, size_t size, size_t ncpus, const CPUSet *only_if, CPUSet *ret) {
        if (only_if) {
                bool hit = false;

                CPUSET_FOREACH(cpu, only_if)
                        if ((size_t) cpu < ncpus && CPU_ISSET_S((size_t) cpu, size, set)) {
                                hit = true;
                                break;
                        }
                if (!hit)
                        return 0;
        }
        for (size_t cpu = 0; cpu < ncpus; cpu++)
                if (CPU_ISSET_S(cpu, size, set) && cpuset_add(ret, (unsigned) cpu) < 0)
                        return -ENOMEM;
        return 1;
}

int task_read_affinity(pid_t tid, const CPUSet *only_if, CPUSet *ret) {
        cpu_set_t small; /* 1,024 CPUs, on the stack: enough for nearly every host */

        if (sched_getaffinity(tid, sizeof(small), &small) == 0)
                return affinity_from_mask(&small, sizeof(small), CPU_SETSIZE, only_if, ret);
        if (errno != EINVAL)
                return negative_errno();
        /* EINVAL: the kernel has more CPUs than the mask holds */
        for (size_t ncpus = 2 * CPU_SETSIZE; ncpus <= (1U << 20); ncpus *= 2) {
                size_t size = CPU_ALLOC_SIZE(ncpus);
                cpu_set_t *set = CPU_ALLOC(ncpus);
                int r;

                if (!set)
                        return -ENOMEM;
                CPU_ZERO_S(size, set);
                r = sched_getaffinity(tid, size, set) < 0 ? negative_errno()
                                                          : affinity_from_mask(set, size, ncpus, only_if, ret);
                CPU_FREE(set);
                if (r != -EINVAL)
                        return r;
        }
        return -EINVAL;
}

int task_set_scheduler(void *userdata, pid_t tid, SchedPolicy policy, unsigned priority) {
        struct sched_param param = { .sched_priority = (int) priority };

        (void) userdata;
        if (policy < 0 || (!sched_policy_is_realtime(policy) && priority != 0))
                return -EINVAL;
        return sched_setscheduler(tid, (int) policy, &param) < 0 ? negative_errno() : 0;
}
