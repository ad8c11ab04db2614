/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lowlatctl suggest: a configuration drawn from this host's topology (client.h). The rules,
 * each said in a comment of what it prints:
 *   - whole cores only: a CPU is isolated with every SMT sibling of its core;
 *   - never CPU 0's core (the kernel's own work lands there: timekeeping, early IRQs);
 *   - at least one whole core left on every NUMA node for housekeeping, and never fewer
 *     than two housekeeping CPUs on CPU 0's node (a single CPU would carry every IRQ,
 *     kernel thread and system task);
 *   - on the named NICs' NUMA nodes (else the node with the most cores to give), half of
 *     what each node can give unless --cores says how many;
 *   - a NIC's IRQs on the housekeeping CPUs of its own node;
 *   - where the boot already isolated CPUs and --cores is not given, those (isolated =
 *     auto), with a word when they split a core.
 * The boot line the choice needs is printed as a comment; lowlatctl check audits it. */
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client.h"
#include "config/config.h"
#include "basic/array.h"
#include "basic/cpuset.h"
#include "basic/util.h"
#include "host/host.h"
#include "setting/posture-load.h"

typedef struct Core {
        CPUSet cpus; /* the CPU and its SMT siblings, all online */
        int node;
        bool cpu0;
} Core;

typedef struct SuggestNic {
        const char *name;
        int node; /* -1: the device does not say (no NUMA, or a virtual NIC) */
        CPUSet irq_cpus;
} SuggestNic;

typedef struct Topology {
        CPUSet online;
        CPUSet boot_isolated;
        Core *cores;
        size_t n_cores, allocated_cores;
        int n_nodes; /* highest node + 1 */
        unsigned packages;
        unsigned smt; /* CPUs in the largest core */
} Topology;

static void topology_done(Topology *t) {
        cpuset_done(&t->online);
        cpuset_done(&t->boot_isolated);
        for (size_t i = 0; i < t->n_cores; i++)
                cpuset_done(&t->cores[i].cpus);
        free(t->cores);
}

/* A CPU list file: "node" with n, sys/devices/system/node/nodeN/cpulist; else
 * sys/devices/system/cpu/cpuN/topology/thread_siblings_list. */
static int read_cpu_list(const Host *h, CPUSet *ret, bool node, unsigned n) {
        _cleanup_free_ char *text = NULL;
        int r = node ? host_read_filef(h, &text, "sys/devices/system/node/node%u/cpulist", n)
                     : host_read_filef(h, &text, "sys/devices/system/cpu/cpu%u/topology/thread_siblings_list", n);

        return r < 0 ? r : cpuset_parse_list(text, ret);
}

/* The NUMA node of every online CPU (sys/devices/system/node/online, then each node's
 * cpulist); all on node 0 where the host says nothing of NUMA. */
static int read_nodes(const Host *h, const CPUSet *online, int *node_of_cpu, size_t n_cpus) {
        _cleanup_free_ char *text = NULL;
        _cleanup_cpuset_ CPUSet nodes = {};

        if (host_read_file(h, "sys/devices/system/node/online", &text) < 0 || cpuset_parse_list(text, &nodes) < 0)
                return 0;
        CPUSET_FOREACH(node, &nodes) {
                _cleanup_cpuset_ CPUSet cpus = {};

                if (read_cpu_list(h, &cpus, true, (unsigned) node) < 0)
                        continue;
                cpuset_and(&cpus, online);
                CPUSET_FOREACH(cpu, &cpus)
                        if ((size_t) cpu < n_cpus)
                                node_of_cpu[cpu] = node;
        }
        return 0;
}

#define SUGGEST_DROPIN "50-lowlatctl-suggest.conf"

static int topology_read(const Host *h, Topology *t) {
        _cleanup_free_ char *online = NULL, *isolated = NULL;
        _cleanup_free_ int *node_of_cpu = NULL;
        CPUSet packages = {};
        size_t n_cpus;
        int r;

        r = host_read_file(h, "sys/devices/system/cpu/online", &online);
        if (r >= 0)
                r = cpuset_parse_list(online, &t->online);
        if (r < 0)
                return r;
        if (host_read_file(h, "sys/devices/system/cpu/isolated", &isolated) >= 0)
                (void) cpuset_parse_list(isolated, &t->boot_isolated);
        n_cpus = (size_t) (cpuset_last(&t->online) + 1);
        node_of_cpu = calloc(n_cpus + 1, sizeof(int));
        if (!node_of_cpu)
                return -ENOMEM;
        (void) read_nodes(h, &t->online, node_of_cpu, n_cpus);
        CPUSET_FOREACH(cpu, &t->online) {
                _cleanup_cpuset_ CPUSet siblings = {};
                _cleanup_free_ char *package = NULL;
                bool known = false;

                if (read_cpu_list(h, &siblings, false, (unsigned) cpu) < 0 || !cpuset_contains(&siblings, (unsigned) cpu))
                        r = cpuset_add(&siblings, (unsigned) cpu) < 0 ? -ENOMEM : 0;
                cpuset_and(&siblings, &t->online);
                if (host_read_filef(h, &package, "sys/devices/system/cpu/cpu%d/topology/physical_package_id", cpu) >= 0)
                        (void) cpuset_add(&packages, (unsigned) atoi(package));
                for (size_t i = 0; i < t->n_cores && !known; i++)
                        known = cpuset_contains(&t->cores[i].cpus, (unsigned) cpu);
                if (known)
                        continue;
                if (array_grow(&t->cores, &t->allocated_cores, t->n_cores + 1) < 0) {
                        cpuset_done(&packages);
                        return -ENOMEM;
                }
                Core *c = &t->cores[t->n_cores++];
                *c = (Core) { .cpus = siblings, .node = node_of_cpu[cpu], .cpu0 = cpuset_contains(&siblings, 0) };
                siblings = (CPUSet) {};
                t->n_nodes = MAX(t->n_nodes, c->node + 1);
                t->smt = MAX(t->smt, cpuset_count(&c->cpus));
        }
        t->packages = MAX(cpuset_count(&packages), 1U);
        cpuset_done(&packages);
        return 0;
}

/* The cores of node that may be isolated: not CPU 0's, one kept on every node, and on CPU
 * 0's node a second one where CPU 0's core is a single CPU: housekeeping is never one CPU
 * alone (every IRQ, kernel thread and system task would share it). */
static size_t node_candidates(const Topology *t, int node, size_t *ret, size_t max) {
        unsigned keep = 1;
        size_t n = 0;

        for (size_t i = 0; i < t->n_cores; i++)
                if (t->cores[i].node == node && t->cores[i].cpu0)
                        keep = cpuset_count(&t->cores[i].cpus) > 1 ? 0 : 1;
        for (size_t i = 0; i < t->n_cores && n < max; i++) {
                if (t->cores[i].node != node || t->cores[i].cpu0)
                        continue;
                if (keep > 0) { /* the node's first cores stay for housekeeping */
                        keep--;
                        continue;
                }
                ret[n++] = i;
        }
        return n;
}

static int nic_node(const Host *h, const char *name, int *ret) {
        _cleanup_free_ char *text = NULL, *path = NULL;

        /* An interface name (IFNAMSIZ - 1 characters, no '/'): never a path out of
         * sys/class/net. */
        if (isempty(name) || strlen(name) > 15 || strchr(name, '/') || streq(name, ".") || streq(name, ".."))
                return -EINVAL;
        path = strdup_printf("sys/class/net/%s", name);
        if (!path)
                return -ENOMEM;
        if (!host_path_exists(h, path))
                return -ENOENT;
        *ret = host_read_filef(h, &text, "sys/class/net/%s/device/numa_node", name) >= 0 ? atoi(text) : -1;
        return 0;
}

static void print_core_list(FILE *f, const Topology *t, const CPUSet *cpus) {
        bool first = true;

        for (size_t i = 0; i < t->n_cores; i++) {
                _cleanup_free_ char *list = NULL;

                if (!cpuset_is_subset(&t->cores[i].cpus, cpus))
                        continue;
                list = cpuset_format_list(&t->cores[i].cpus);
                fprintf(f, "%s%s", first ? "" : " ", list ?: "?");
                first = false;
        }
}

/* Whether every core is either wholly in cpus or wholly out. */
static bool whole_cores(const Topology *t, const CPUSet *cpus) {
        for (size_t i = 0; i < t->n_cores; i++)
                if (cpuset_intersects(&t->cores[i].cpus, cpus) && !cpuset_is_subset(&t->cores[i].cpus, cpus))
                        return false;
        return true;
}

/* The suggestion as a drop-in beside config_path (never over a file that is there), then
 * the whole configuration checked as lowlatd would load it on this host; a drop-in that
 * makes it invalid is taken away again. */
static int suggest_write(const Host *h, const char *config_path, const char *text) {
        _cleanup_error_list_ ErrorList errors = ERROR_LIST_EMPTY;
        _cleanup_(posture_freep) Posture *posture = NULL;
        _cleanup_free_ char *dir = strdup_printf("%s.d", config_path), *file = NULL;
        _cleanup_close_ int fd = -1;
        int r;

        if (!dir)
                return -ENOMEM;
        file = strdup_printf("%s/" SUGGEST_DROPIN, dir);
        if (!file)
                return -ENOMEM;
        if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
                fprintf(stderr, "lowlatctl: cannot make %s: %m\n", dir);
                return EXIT_REFUSED;
        }
        fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (fd < 0) {
                fprintf(stderr, "lowlatctl: %s: %s%s\n", file, strerror(errno),
                        errno == EEXIST ? " (a suggestion was written before: read it, then remove it to write "
                                          "another)" : "");
                return EXIT_REFUSED;
        }
        if (write(fd, text, strlen(text)) != (ssize_t) strlen(text)) {
                fprintf(stderr, "lowlatctl: cannot write %s: %m\n", file);
                (void) unlink(file);
                return EXIT_REFUSED;
        }
        r = posture_load(config_path, h, &posture, &errors);
        if (r < 0) {
                for (size_t i = 0; i < errors.n; i++)
                        fprintf(stderr, "lowlatctl: %s\n", errors.items[i]);
                fprintf(stderr, "lowlatctl: with %s the configuration is not valid (%s); the drop-in is removed "
                                "again\n",
                        file, errors.n ? "the errors above" : strerror(-r));
                (void) unlink(file);
                return EXIT_REFUSED;
        }
        fprintf(stderr, "lowlatctl: wrote %s; the configuration with it is valid (%zu warning%s): "
                        "systemctl reload lowlatd applies it\n",
                file, posture->config->warnings.n, posture->config->warnings.n == 1 ? "" : "s");
        return finish_output(EXIT_OK);
}

/* What was chosen: the CPUs to isolate and each NIC's IRQ CPUs. */
typedef struct Plan {
        CPUSet isolated, housekeeping;
        bool from_boot;
        char *iso, *hk; /* the two as lists */
} Plan;

static void plan_done(Plan *p) {
        cpuset_done(&p->isolated);
        cpuset_done(&p->housekeeping);
        free(p->iso);
        free(p->hk);
}

/* Cores from the nodes asked for (the NICs'), else from the node with the most to give:
 * half of each node's, or args->cores in all. 0, or the exit status after saying why. */
static int plan_cores(const Topology *t, const SuggestArguments *args, bool *want_node, size_t max_nodes,
                      CPUSet *isolated) {
        _cleanup_free_ size_t *candidates = calloc(t->n_cores + 1, sizeof(size_t));
        size_t given = 0, nodes_used = 0;
        bool any_node = false;
        int r = 0;

        if (!candidates)
                return -ENOMEM;
        for (int node = 0; node < t->n_nodes && (size_t) node < max_nodes; node++)
                any_node = any_node || want_node[node];
        if (!any_node) {
                size_t best = 0;
                int best_node = 0;
                for (int node = 0; node < t->n_nodes && (size_t) node < max_nodes; node++) {
                        size_t n = node_candidates(t, node, candidates, t->n_cores);
                        if (n > best) {
                                best = n;
                                best_node = node;
                        }
                }
                want_node[best_node] = true;
        }
        for (int node = 0; node < t->n_nodes && (size_t) node < max_nodes; node++) {
                size_t n, take;

                if (!want_node[node])
                        continue;
                n = node_candidates(t, node, candidates, t->n_cores);
                take = args->cores ? MIN(n, args->cores - given) : MAX(n / 2, n > 0 ? 1U : 0U);
                for (size_t k = 0; k < take && r >= 0; k++)
                        r = cpuset_or(isolated, &t->cores[candidates[k]].cpus);
                given += take;
                nodes_used++;
        }
        if (r < 0)
                return r;
        if (args->cores && given < args->cores) {
                fprintf(stderr, "lowlatctl: --cores %zu: only %zu whole core%s can be isolated on the chosen node%s "
                                "(CPU 0's core and one core per node stay for housekeeping)\n",
                        args->cores, given, given == 1 ? "" : "s", nodes_used > 1 ? "s" : "");
                return EXIT_USAGE;
        }
        return 0;
}

/* The plan, each NIC's IRQ CPUs filled in: 0, or the exit status after saying why. */
static int plan_make(const Topology *t, const SuggestArguments *args, SuggestNic *nics, Plan *p) {
        bool want_node[1024] = {};
        int r;

        for (size_t i = 0; i < args->n_nics; i++)
                if (nics[i].node >= 0 && nics[i].node < (int) ELEMENTSOF(want_node))
                        want_node[nics[i].node] = true;
        if (!cpuset_is_empty(&t->boot_isolated) && args->cores == 0) {
                p->from_boot = true;
                r = cpuset_copy(&p->isolated, &t->boot_isolated);
        } else
                r = plan_cores(t, args, want_node, ELEMENTSOF(want_node), &p->isolated);
        if (r != 0)
                return r;
        if (cpuset_is_empty(&p->isolated)) {
                fprintf(stderr, "lowlatctl: this host is too small to isolate anything: %u CPU%s in %zu core%s%s; "
                                "lowlatctl suggest keeps CPU 0's core (and a second CPU beside it), one whole core "
                                "per NUMA node for housekeeping, and isolates whole cores only\n",
                        cpuset_count(&t->online), cpuset_count(&t->online) == 1 ? "" : "s", t->n_cores,
                        t->n_cores == 1 ? "" : "s", t->smt > 1 ? " (SMT siblings share a core)" : "");
                return EXIT_NO_CPUS;
        }
        r = cpuset_copy(&p->housekeeping, &t->online);
        if (r < 0)
                return r;
        cpuset_subtract(&p->housekeeping, &p->isolated);
        for (size_t i = 0; i < args->n_nics; i++) {
                /* Its own node's housekeeping CPUs; all of them where it does not say. */
                for (size_t c = 0; c < t->n_cores && r >= 0; c++)
                        if (nics[i].node < 0 || t->cores[c].node == nics[i].node)
                                r = cpuset_or(&nics[i].irq_cpus, &t->cores[c].cpus);
                cpuset_and(&nics[i].irq_cpus, &p->housekeeping);
                if (r >= 0 && cpuset_is_empty(&nics[i].irq_cpus))
                        r = cpuset_copy(&nics[i].irq_cpus, &p->housekeeping);
        }
        p->iso = cpuset_format_list(&p->isolated);
        p->hk = cpuset_format_list(&p->housekeeping);
        return r < 0 ? r : !p->iso || !p->hk ? -ENOMEM : 0;
}

/* The configuration, commented. */
static char *plan_text(const Topology *t, const SuggestArguments *args, const SuggestNic *nics, const Plan *p) {
        char *text = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&text, &size);

        if (!f)
                return NULL;
        fprintf(f, "# Suggested by lowlatctl suggest from this host's topology: %u package%s, %zu core%s, %u CPU%s "
                   "(%u per core), %d NUMA node%s.\n",
                t->packages, t->packages == 1 ? "" : "s", t->n_cores, t->n_cores == 1 ? "" : "s",
                cpuset_count(&t->online), cpuset_count(&t->online) == 1 ? "" : "s", MAX(t->smt, 1U),
                MAX(t->n_nodes, 1), t->n_nodes > 1 ? "s" : "");
        for (size_t i = 0; i < args->n_nics; i++)
                if (nics[i].node >= 0)
                        fprintf(f, "# NIC %s is on NUMA node %d.\n", nics[i].name, nics[i].node);
                else
                        fprintf(f, "# NIC %s does not say its NUMA node (a virtual NIC, or no NUMA).\n", nics[i].name);
        if (args->profile)
                fprintf(f, "\n[daemon]\nprofile = %s\n", args->profile);
        fputs("\n[cpus]\n", f);
        if (p->from_boot) {
                fprintf(f, "# The CPUs the boot isolated (%s): kept as they are.\n", p->iso);
                if (!whole_cores(t, &p->isolated))
                        fputs("# They split a core: an SMT sibling left for housekeeping shares the isolated CPU's\n"
                              "# caches and pipeline. Isolate whole cores (lowlatctl suggest --cores N).\n",
                              f);
                fputs("isolated = auto\n", f);
        } else {
                fputs("# Whole cores (each CPU with its SMT siblings): ", f);
                print_core_list(f, t, &p->isolated);
                fputs(".\n# CPU 0's core (with a second CPU where it has one alone) and at least one core on\n"
                      "# every NUMA node stay for housekeeping.\n", f);
                fprintf(f, "isolated = %s\n", p->iso);
        }
        for (size_t i = 0; i < args->n_nics; i++) {
                _cleanup_free_ char *irq = cpuset_format_list(&nics[i].irq_cpus);

                fprintf(f, "\n[nic \"%s\"]\n", nics[i].name);
                if (nics[i].node >= 0)
                        fprintf(f, "# Its IRQs on the housekeeping CPUs of its own node (%d).\n", nics[i].node);
                else
                        fputs("# Its IRQs on the housekeeping CPUs.\n", f);
                fprintf(f, "irq_cpus = %s\n", irq ?: "?");
        }
        fprintf(f, "\n# The boot line for these CPUs (lowlatctl check says what the running one lacks):\n"
                   "#   isolcpus=managed_irq,domain,%s nohz_full=%s rcu_nocbs=%s\n",
                p->iso, p->iso, p->iso);
        if (fclose(f) != 0) {
                free(text);
                return NULL;
        }
        return text;
}

static void plan_print_json(const SuggestArguments *args, const SuggestNic *nics, const Plan *p, const char *text) {
        _cleanup_free_ char *boot = strdup_printf("isolcpus=managed_irq,domain,%s nohz_full=%s rcu_nocbs=%s", p->iso,
                                                  p->iso, p->iso);

        fputc('{', stdout);
        json_print_member(stdout, "isolated", p->iso, true);
        json_print_member(stdout, "housekeeping", p->hk, false);
        printf(",\"from_boot\":%s,\"nics\":[", p->from_boot ? "true" : "false");
        for (size_t i = 0; i < args->n_nics; i++) {
                _cleanup_free_ char *irq = cpuset_format_list(&nics[i].irq_cpus);

                fputs(i ? ",{" : "{", stdout);
                json_print_member(stdout, "name", nics[i].name, true);
                printf(",\"node\":%d", nics[i].node);
                json_print_member(stdout, "irq_cpus", irq ?: "?", false);
                fputc('}', stdout);
        }
        fputc(']', stdout);
        json_print_member(stdout, "boot_args", boot ?: "?", false);
        json_print_member(stdout, "config", text, false);
        fputs("}\n", stdout);
}

int verb_suggest_run(const SuggestArguments *args) {
        _cleanup_(host_freep) Host *h = NULL;
        _cleanup_(topology_done) Topology t = {};
        _cleanup_(plan_done) Plan plan = {};
        _cleanup_free_ SuggestNic *nics = NULL;
        _cleanup_free_ char *text = NULL;
        int r;

        r = host_open(args->root ?: "/", &h);
        if (r < 0) {
                fprintf(stderr, "lowlatctl: cannot open %s: %s\n", args->root ?: "/", strerror(-r));
                return EXIT_UNKNOWN;
        }
        r = topology_read(h, &t);
        if (r < 0) {
                fprintf(stderr, "lowlatctl: cannot read the CPUs (sys/devices/system/cpu under %s): %s\n",
                        args->root ?: "/", strerror(-r));
                return EXIT_UNKNOWN;
        }
        nics = calloc(args->n_nics + 1, sizeof(SuggestNic));
        if (!nics)
                return -ENOMEM;
        for (size_t i = 0; i < args->n_nics; i++) {
                nics[i].name = args->nics[i];
                r = nic_node(h, args->nics[i], &nics[i].node);
                if (r == -ENOMEM)
                        return r;
                if (r < 0) {
                        fprintf(stderr, "lowlatctl: --nic %s: no such network interface on this host\n", args->nics[i]);
                        return EXIT_USAGE;
                }
        }
        r = plan_make(&t, args, nics, &plan);
        for (size_t i = 0; i < args->n_nics; i++)
                if (r != 0)
                        cpuset_done(&nics[i].irq_cpus);
        if (r != 0)
                return r;
        text = plan_text(&t, args, nics, &plan);
        if (!text)
                return -ENOMEM;
        if (args->json)
                plan_print_json(args, nics, &plan, text);
        else
                fputs(text, stdout);
        for (size_t i = 0; i < args->n_nics; i++)
                cpuset_done(&nics[i].irq_cpus);
        if (args->write)
                return suggest_write(h, args->config_path, text);
        return finish_output(EXIT_OK);
}
