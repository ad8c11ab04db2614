/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The CPUs themselves (sections 3, 5 and 7): SMT siblings and NUMA nodes of the isolated
 * CPUs, their frequency and idle states, the wake-up latency request, and steal time. */
#include <dirent.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "basic/array.h"
#include "audit/audit-internal.h"
#include "basic/util.h"

#define CPUIDLE_STATES_MAX 64U
#define NUMA_NODES_MAX 4096U

static int compare_unsigned(const void *a, const void *b) {
        unsigned x = *(const unsigned *) a, y = *(const unsigned *) b;
        return x < y ? -1 : x > y;
}

/* "cpu3" for one CPU, "cpus 2-3" for several. */
static char *cpus_subject(Audit *a, const CPUSet *s) {
        _cleanup_free_ char *list = audit_cpus_list(a, s);
        if (!list)
                return NULL;
        return audit_check_alloc(a, cpuset_count(s) == 1 ? strdup_printf("cpu%s", list) : strdup_printf("cpus %s", list));
}

/* "echo VALUE > /sys/devices/system/cpu/cpuN/FILE" for each CPU, as one shell line. */
static char *cpu_write_command(Audit *a, const CPUSet *s, const char *value, const char *file) {
        _cleanup_free_ char *words = NULL;
        size_t len = 0;

        if (cpuset_count(s) == 1)
                return audit_check_alloc(a, strdup_printf("echo %s > /sys/devices/system/cpu/cpu%d/%s", value,
                                                          cpuset_next(s, 0), file));
        CPUSET_FOREACH(cpu, s) {
                char *w = realloc(words, len + 16);
                if (!w)
                        return audit_check_alloc(a, NULL);
                words = w;
                len += (size_t) snprintf(words + len, 16, "%s%d", len ? " " : "", cpu);
        }
        return audit_check_alloc(a, strdup_printf("for c in %s; do echo %s > /sys/devices/system/cpu/cpu$c/%s; done",
                                                  words ?: "", value, file));
}

/* --- 3. topology --- */

/* The CPUs that share cpu's core, cpu included: thread_siblings_list, or core_cpus_list,
 * its newer name, where only that one exists. */
static int read_smt_siblings(Audit *a, int cpu, CPUSet *ret) {
        if (audit_read_cpus(a, ret, "sys/devices/system/cpu/cpu%d/topology/thread_siblings_list", cpu) >= 0)
                return 0;
        return audit_read_cpus(a, ret, "sys/devices/system/cpu/cpu%d/topology/core_cpus_list", cpu);
}

void audit_check_topology(Audit *a) {
        const Posture *p = a->posture;
        _cleanup_cpuset_ CPUSet whole = CPUSET_EMPTY, drop = CPUSET_EMPTY, add = CPUSET_EMPTY;
        _cleanup_free_ char *whole_list = NULL, *drop_list = NULL, *add_list = NULL;
        size_t n_split = 0;

        if (cpuset_is_empty(&p->isolated))
                return;

        /* First pass: which isolated CPUs share a core with a CPU that is not isolated. */
        CPUSET_FOREACH(cpu, &p->isolated) {
                _cleanup_cpuset_ CPUSet siblings = CPUSET_EMPTY;
                if (read_smt_siblings(a, cpu, &siblings) < 0)
                        continue;
                if (cpuset_or(&whole, &siblings) < 0)
                        a->error = -ENOMEM;
                cpuset_and(&siblings, &p->online);
                cpuset_subtract(&siblings, &p->isolated);
                if (!cpuset_is_empty(&siblings)) {
                        n_split++;
                        if (cpuset_add(&drop, (unsigned) cpu) < 0)
                                a->error = -ENOMEM;
                }
        }
        if (n_split == 0)
                return;
        cpuset_and(&whole, &p->online);
        if (cpuset_copy(&add, &whole) < 0)
                a->error = -ENOMEM;
        cpuset_subtract(&add, &p->isolated);
        if (cpuset_copy(&whole, &p->isolated) < 0 || cpuset_or(&whole, &add) < 0)
                a->error = -ENOMEM;
        whole_list = audit_cpus_list(a, &whole);
        add_list = audit_cpus_phrase(a, &add);
        {
                _cleanup_cpuset_ CPUSet kept = CPUSET_EMPTY;
                if (cpuset_copy(&kept, &p->isolated) < 0)
                        a->error = -ENOMEM;
                cpuset_subtract(&kept, &drop);
                drop_list = audit_cpus_phrase(a, &kept);
        }
        if (!whole_list || !add_list || !drop_list)
                return;

        CPUSET_FOREACH(cpu, &drop) {
                _cleanup_cpuset_ CPUSet siblings = CPUSET_EMPTY;
                _cleanup_free_ char *others = NULL, *subject = NULL;

                if (read_smt_siblings(a, cpu, &siblings) < 0)
                        continue;
                cpuset_and(&siblings, &p->online);
                cpuset_subtract(&siblings, &p->isolated);
                others = audit_cpus_phrase(a, &siblings);
                subject = audit_check_alloc(a, strdup_printf("cpu%d", cpu));
                if (!others || !subject)
                        return;
                finding_add(a, SEVERITY_WARNING, "topology.smt-sibling", subject,
                            "Isolated CPU %d shares its physical core with %s, which %s not isolated: "
                            "whatever runs there competes for the core's execution units and caches, so the "
                            "isolated thread still sees the housekeeping load (lscpu -e=CPU,CORE shows the "
                            "pairs). Reserve whole cores: isolate %s (adding %s), or keep only %s; or turn "
                            "SMT off with echo off > /sys/devices/system/cpu/smt/control (nosmt on the kernel "
                            "command line to keep it).",
                            cpu, others, cpuset_count(&siblings) == 1 ? "is" : "are", whole_list, add_list,
                            drop_list);
        }
}

void audit_check_numa(Audit *a) {
        const Posture *p = a->posture;
        _cleanup_free_ unsigned *nodes = NULL;
        _cleanup_free_ char *detail = NULL, *subject = NULL, *isolated = NULL;
        size_t n_nodes = 0, allocated_nodes = 0, n_spanned = 0;
        struct dirent *de;
        DIR *d;

        if (cpuset_is_empty(&p->isolated))
                return;
        if (host_opendir(a->host, "sys/devices/system/node", &d) < 0)
                return;
        while ((de = readdir(d)) && n_nodes < NUMA_NODES_MAX) {
                unsigned node;
                if (strncmp(de->d_name, "node", 4) != 0 || parse_unsigned(de->d_name + 4, &node) < 0)
                        continue;
                if (audit_check_errno(a, array_grow(&nodes, &allocated_nodes, n_nodes + 1)) < 0)
                        break;
                nodes[n_nodes++] = node;
        }
        closedir(d);
        if (n_nodes > 1)
                qsort(nodes, n_nodes, sizeof(unsigned), compare_unsigned);

        detail = audit_check_alloc(a, strdup(""));
        for (size_t i = 0; i < n_nodes && detail; i++) {
                _cleanup_cpuset_ CPUSet cpus = CPUSET_EMPTY;
                _cleanup_free_ char *list = NULL;
                char *more;
                if (audit_read_cpus(a, &cpus, "sys/devices/system/node/node%u/cpulist", nodes[i]) < 0)
                        continue;
                cpuset_and(&cpus, &p->isolated);
                if (cpuset_is_empty(&cpus))
                        continue;
                n_spanned++;
                list = audit_cpus_list(a, &cpus);
                more = audit_check_alloc(a, strdup_printf("%s%snode %u: %s", detail, *detail ? ", " : "", nodes[i], list ?: "?"));
                free(detail);
                detail = more;
        }
        if (n_spanned < 2 || !detail)
                return;
        isolated = audit_cpus_list(a, &p->isolated);
        subject = audit_check_alloc(a, strdup_printf("isolated cpus %s", isolated ?: "?"));
        if (!subject)
                return;
        finding_add(a, SEVERITY_INFO, "topology.numa-spread", subject,
                    "The isolated CPUs span %zu NUMA nodes (%s): a thread on one node that touches memory or a "
                    "NIC attached to the other pays the interconnect on every access. Keep each application "
                    "within one node (numactl --cpunodebind=N --membind=N, or CPUAffinity= and "
                    "NUMAPolicy=bind with NUMAMask= in its unit), preferably the node of its NIC "
                    "(/sys/class/net/DEV/device/numa_node).",
                    n_spanned, detail);
}

/* --- 5. power --- */

typedef struct CpuGroup {
        char *key;
        char *label;
        uint64_t v1, v2;
        CPUSet cpus;
} CpuGroup;

typedef struct CpuGroups {
        CpuGroup *items;
        size_t n, allocated;
} CpuGroups;

static void cpu_groups_done(CpuGroups *g) {
        for (size_t i = 0; i < g->n; i++) {
                free(g->items[i].key);
                free(g->items[i].label);
                cpuset_done(&g->items[i].cpus);
        }
        free(g->items);
        *g = (CpuGroups) {};
}

/* Adds cpu to the group with this key, creating it. */
static void cpu_groups_add(Audit *a, CpuGroups *g, const char *key, const char *label, uint64_t v1, uint64_t v2,
                           unsigned cpu) {
        CpuGroup *items;

        for (size_t i = 0; i < g->n; i++)
                if (streq(g->items[i].key, key)) {
                        if (cpuset_add(&g->items[i].cpus, cpu) < 0)
                                a->error = -ENOMEM;
                        return;
                }
        if (audit_check_errno(a, array_grow(&g->items, &g->allocated, g->n + 1)) < 0)
                return;
        items = g->items;
        items[g->n] = (CpuGroup) { .key = strdup(key), .label = strdup(label ?: ""), .v1 = v1, .v2 = v2 };
        if (!items[g->n].key || !items[g->n].label || cpuset_add(&items[g->n].cpus, cpu) < 0) {
                free(items[g->n].key);
                free(items[g->n].label);
                cpuset_done(&items[g->n].cpus);
                a->error = -ENOMEM;
                return;
        }
        g->n++;
}

/* The governor and the frequency floor of the isolated CPUs: one finding for each group of
 * CPUs that read the same. */
static void check_cpufreq(Audit *a) {
        const Posture *p = a->posture;
        const char *want = a->config->governor ?: "performance";
        CpuGroups governors = {}, floors = {};

        CPUSET_FOREACH(cpu, &p->isolated) {
                _cleanup_free_ char *governor = NULL;
                uint64_t min, max;

                if (audit_read_value(a, &governor, "sys/devices/system/cpu/cpu%d/cpufreq/scaling_governor", cpu) < 0)
                        continue; /* no cpufreq: a VM, or the firmware owns the frequency */
                if (!streq(governor, want))
                        cpu_groups_add(a, &governors, governor, governor, 0, 0, (unsigned) cpu);
                if (streq(governor, "performance"))
                        continue;
                if (audit_read_u64(a, &min, "sys/devices/system/cpu/cpu%d/cpufreq/scaling_min_freq", cpu) >= 0 &&
                    audit_read_u64(a, &max, "sys/devices/system/cpu/cpu%d/cpufreq/cpuinfo_max_freq", cpu) >= 0 && min < max) {
                        _cleanup_free_ char *key = strdup_printf("%" PRIu64 " %" PRIu64 " %s", min, max, governor);
                        if (audit_check_alloc(a, key))
                                cpu_groups_add(a, &floors, key, governor, min, max, (unsigned) cpu);
                }
        }
        for (size_t i = 0; i < governors.n; i++) {
                _cleanup_free_ char *subject = cpus_subject(a, &governors.items[i].cpus);
                _cleanup_free_ char *cmd = cpu_write_command(a, &governors.items[i].cpus, want, "cpufreq/scaling_governor");
                if (!subject || !cmd)
                        break;
                finding_add(a, SEVERITY_WARNING, "power.governor", subject,
                            "The cpufreq governor of isolated %s is %s, not %s: the CPU clocks down when idle "
                            "and takes time to ramp back up when work arrives, adding latency and jitter. "
                            "Set it now with %s (as root), and keep it with [pm] governor = %s in "
                            "lowlatd.conf.",
                            subject, governors.items[i].key, want, cmd, want);
        }
        for (size_t i = 0; i < floors.n; i++) {
                _cleanup_free_ char *subject = cpus_subject(a, &floors.items[i].cpus);
                _cleanup_free_ char *value = audit_check_alloc(a, strdup_printf("%" PRIu64, floors.items[i].v2));
                _cleanup_free_ char *cmd = value ? cpu_write_command(a, &floors.items[i].cpus, value,
                                                                     "cpufreq/scaling_min_freq")
                                                 : NULL;
                if (!subject || !cmd)
                        break;
                finding_add(a, SEVERITY_WARNING, "power.min-freq", subject,
                            "Isolated %s may run as slow as %" PRIu64 " kHz (scaling_min_freq) under the %s "
                            "governor, against %" PRIu64 " kHz at most: each burst of work after a quiet spell "
                            "starts slow. Raise the floor with %s, or use the performance governor ([pm] "
                            "governor = performance).",
                            subject, floors.items[i].v1, floors.items[i].label, floors.items[i].v2, cmd);
        }
        cpu_groups_done(&governors);
        cpu_groups_done(&floors);
}

/* Idle states slower to leave than the configured wake-up latency. */
static void check_cpuidle(Audit *a) {
        const Posture *p = a->posture;
        uint64_t target = (uint64_t) a->config->cpu_dma_latency_usec;
        bool held = a->dma_holder_pid > 0;
        _cleanup_free_ char *holder = held ? audit_check_alloc(a, strdup_printf(" (by pid %u, %s)", a->dma_holder_pid,
                                                                                a->dma_holder_comm ?: "?"))
                                           : NULL;
        CpuGroups idle = {};

        CPUSET_FOREACH(cpu, &p->isolated)
                for (unsigned s = 0; s < CPUIDLE_STATES_MAX; s++) {
                        _cleanup_free_ char *name = NULL, *disable = NULL, *key = NULL;
                        uint64_t latency;
                        int r = audit_read_u64(a, &latency, "sys/devices/system/cpu/cpu%d/cpuidle/state%u/latency", cpu, s);
                        if (r == -ENOENT)
                                break;
                        if (r < 0 || latency <= target)
                                continue;
                        if (audit_read_value(a, &disable, "sys/devices/system/cpu/cpu%d/cpuidle/state%u/disable", cpu, s) < 0 ||
                            !streq(disable, "0"))
                                continue;
                        if (audit_read_value(a, &name, "sys/devices/system/cpu/cpu%d/cpuidle/state%u/name", cpu, s) < 0)
                                name = strdup("?");
                        key = name ? strdup_printf("%u %s %" PRIu64, s, name, latency) : NULL;
                        if (audit_check_alloc(a, key))
                                cpu_groups_add(a, &idle, key, name, s, latency, (unsigned) cpu);
                }
        for (size_t i = 0; i < idle.n; i++) {
                const CpuGroup *g = &idle.items[i];
                _cleanup_free_ char *subject = cpus_subject(a, &g->cpus);
                _cleanup_free_ char *file = audit_check_alloc(a, strdup_printf("cpuidle/state%" PRIu64 "/disable", g->v1));
                _cleanup_free_ char *cmd = file ? cpu_write_command(a, &g->cpus, "1", file) : NULL;
                _cleanup_free_ char *list = audit_cpus_list(a, &g->cpus);
                if (!subject || !cmd || !list || (held && !holder))
                        break;
                finding_add(a, held ? SEVERITY_INFO : SEVERITY_WARNING, "power.cpuidle", subject,
                            "Idle state %" PRIu64 " (%s) takes %" PRIu64 " us to leave, more than the %" PRIu64
                            " us of [pm] cpu_dma_latency, and is enabled on isolated %s: %s%s%s. Disable it "
                            "there with %s (or cpupower -c %s idle-set -d %" PRIu64 ").",
                            g->v1, g->label, g->v2, target, subject,
                            held ? "the /dev/cpu_dma_latency request held now" : "nobody holds /dev/cpu_dma_latency",
                            held ? holder : "",
                            held ? " keeps the CPU out of it, but only while that request is held; "
                                   "disabling it on the isolated CPUs alone also lets the rest of the "
                                   "host sleep deeply"
                                 : ", so the CPU enters it whenever it idles and the next wake-up pays "
                                   "the exit latency",
                            cmd, list, g->v1);
        }
        cpu_groups_done(&idle);
}

void audit_check_power(Audit *a) {
        if (cpuset_is_empty(&a->posture->isolated))
                return;
        check_cpufreq(a);
        if (a->config->cpu_dma_latency_enabled)
                check_cpuidle(a);
}

void audit_check_dma_latency(Audit *a) {
        if (!a->dma_device_exists || !a->proc_listed || a->dma_holder_pid > 0 || a->dma_unknown)
                return;
        if (a->config->cpu_dma_latency_enabled)
                finding_add(a, SEVERITY_WARNING, "power.dma-latency-unheld", "/dev/cpu_dma_latency",
                            "[pm] cpu_dma_latency = %" PRId32 " but no process holds /dev/cpu_dma_latency open: "
                            "the request lasts only as long as the open file, so the CPUs may enter deep idle "
                            "states and take tens to hundreds of microseconds to wake. Is lowlatd running "
                            "(systemctl status lowlatd)? In observe mode it does not hold the request.",
                            a->config->cpu_dma_latency_usec);
        else
                finding_add(a, SEVERITY_INFO, "power.dma-latency-unheld", "/dev/cpu_dma_latency",
                            "No process holds /dev/cpu_dma_latency open, so nothing limits how deep the CPUs "
                            "sleep when idle: waking from a deep C-state takes tens to hundreds of "
                            "microseconds. Set [pm] cpu_dma_latency = 0 (or the largest wake-up latency the "
                            "application tolerates, in microseconds) and lowlatd holds the request.");
}

/* The scheduler's fair server on the isolated nohz_full CPUs (6.12 and later): it turns
 * the tick back on whenever a normal task waits behind a real-time one. [cpus]
 * fair_server = off keeps it at 0 (a setting of its own); this says where it runs while
 * nothing does, and when that key cannot work because debugfs is not mounted. */
void audit_check_fair_server(Audit *a) {
        _cleanup_cpuset_ CPUSet nohz = {}, running = {};
        _cleanup_free_ char *list = NULL;
        bool any = false;

        if (cpuset_is_empty(&a->posture->isolated))
                return;
        (void) audit_read_cpus(a, &nohz, "sys/devices/system/cpu/nohz_full");
        CPUSET_FOREACH(cpu, &a->posture->isolated) {
                uint64_t runtime;
                if (audit_read_u64(a, &runtime, "sys/kernel/debug/sched/fair_server/cpu%u/runtime", (unsigned) cpu) < 0)
                        continue;
                any = true;
                if (runtime > 0 && cpuset_contains(&nohz, cpu) && cpuset_add(&running, cpu) < 0) {
                        (void) audit_check_alloc(a, NULL);
                        return;
                }
        }
        if (a->config->fair_server_off && !any)
                finding_add(a, SEVERITY_WARNING, "sched.fair-server", "/sys/kernel/debug/sched/fair_server",
                            "[cpus] fair_server = off, but there is no /sys/kernel/debug/sched/fair_server/cpuN/runtime "
                            "for the isolated CPUs: debugfs is not mounted (mount -t debugfs debugfs "
                            "/sys/kernel/debug, or enable sys-kernel-debug.mount), or this kernel has no fair "
                            "server (it came in 6.12).");
        else if (!a->config->fair_server_off && !cpuset_is_empty(&running) && (list = audit_cpus_phrase(a, &running)))
                finding_add(a, SEVERITY_INFO, "sched.fair-server", "fair_server",
                            "The scheduler's fair server runs on %s (isolated, nohz_full): whenever a normal task "
                            "waits there behind a real-time one, it turns the tick back on. If a real-time thread "
                            "shares its CPU with normal tasks, [cpus] fair_server = off sets its runtime to 0; read "
                            "the risk in lowlatd.conf(5) first (a real-time task that never sleeps then starves "
                            "them: run stalld).",
                            list);
}

/* --- 7. virtualisation --- */

void audit_check_steal(Audit *a) {
        _cleanup_free_ char *text = NULL;
        uint64_t values[8], total = 0, bp;
        char *line, *tok, *save = NULL;
        size_t n = 0;

        if (audit_read_file(a, &text, "proc/stat") < 0)
                return;
        line = text;
        if (strncmp(line, "cpu ", 4) != 0)
                return;
        line[strcspn(line, "\n")] = '\0';
        for (tok = strtok_r(line + 4, " \t", &save); tok && n < 8; tok = strtok_r(NULL, " \t", &save)) {
                if (parse_uint64(tok, &values[n]) < 0)
                        return;
                if (values[n] > UINT64_MAX / 16 || total > UINT64_MAX / 2)
                        return;
                total += values[n++];
        }
        if (n < 8 || total == 0 || values[7] == 0)
                return; /* before 2.6.11 there is no steal column */
        bp = values[7] > UINT64_MAX / 10000 ? values[7] / (total / 10000 ?: 1) : values[7] * 10000 / total;
        finding_add(a, bp >= AUDIT_STEAL_WARNING_BP ? SEVERITY_WARNING : SEVERITY_INFO, "virt.steal", "/proc/stat",
                    "The hypervisor has taken %" PRIu64 ".%02" PRIu64 "%% of this machine's CPU time since boot "
                    "(steal time): this is a virtual machine whose vCPUs are paused while the host runs other "
                    "guests, and those pauses reach the application however well the guest is tuned. "
                    "Watch the st column of vmstat 1 under load; for stable latency ask for dedicated "
                    "(pinned) vCPUs or move to bare metal.",
                    bp / 100, bp % 100);
}
