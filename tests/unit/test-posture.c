/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The posture: a config resolved against the host's CPUs (given by hand here), its
 * errors naming file:line, and which pin an IRQ gets. */
#include <sched.h>
#include <stdlib.h>

#include "config/posture.h"
#include "tap.h"
#include "basic/util.h"

#define NAME "p.conf"

static void print_errors(const ErrorList *errors) {
        for (size_t i = 0; i < errors->n; i++)
                printf("#   error: %s\n", errors->items[i]);
}

static void set_list(CPUSet *s, const char *list) {
        if (cpuset_parse_list(list, s) < 0)
                abort();
}

static void host_cpus(HostCpus *h, const char *online, const char *possible, const char *isolated,
                      const char *nohz_full) {
        *h = (HostCpus) {};
        set_list(&h->online, online);
        set_list(&h->possible, possible);
        set_list(&h->isolated, isolated);
        set_list(&h->nohz_full, nohz_full);
}

/* Parses text and builds a posture against cpus. Returns posture_build()'s result. */
static int build(const char *text, const HostCpus *cpus, Posture **ret, ErrorList *errors) {
        _cleanup_config_ Config *c = config_new();
        int r;

        if (!c || config_parse_string(c, NAME, text, errors) < 0)
                abort();
        config_validate(c, errors);
        if (errors->n > 0) {
                printf("# config errors before posture_build():\n");
                print_errors(errors);
                return -EINVAL;
        }
        r = posture_build(&c, cpus, ret, errors);
        if (r < 0 && !c)
                printf("# posture_build() failed but took the config\n");
        if (r >= 0 && c)
                printf("# posture_build() succeeded but left the config with the caller\n");
        return r;
}

static Posture *build_ok(const char *text, const HostCpus *cpus, const char *what) {
        _cleanup_error_list_ ErrorList errors = ERROR_LIST_EMPTY;
        Posture *p = NULL;
        int r = build(text, cpus, &p, &errors);

        if (!CHECK(r == 0 && p && errors.n == 0, what))
                print_errors(&errors);
        return p;
}

/* Exactly one error, "p.conf:LINE: ..." containing needle; no posture returned. */
static void check_error(const char *text, const HostCpus *cpus, unsigned line, const char *needle, const char *what) {
        _cleanup_error_list_ ErrorList errors = ERROR_LIST_EMPTY;
        Posture *p = NULL;
        char prefix[64];
        int r = build(text, cpus, &p, &errors);
        bool ok;

        snprintf(prefix, sizeof(prefix), NAME ":%u: ", line);
        ok = r == -EINVAL && !p && errors.n == 1 && strncmp(errors.items[0], prefix, strlen(prefix)) == 0 &&
             (!needle || strstr(errors.items[0], needle));
        if (!CHECK(ok, what)) {
                printf("#   r=%d, expected one error starting '%s' containing '%s'\n", r, prefix, needle ?: "");
                print_errors(&errors);
        }
        posture_free(p);
}

static void check_list(const CPUSet *s, const char *want, const char *what) {
        _cleanup_free_ char *list = cpuset_format_list(s);
        CHECK_STR(list, want, what);
}

static void test_auto_isolation(void) {
        HostCpus cpus;

        host_cpus(&cpus, "0-7", "0-7", "2-3", "1-7");
        {
                _cleanup_(posture_freep) Posture *p = build_ok("", &cpus, "empty config builds");
                if (p) {
                        check_list(&p->isolated, "2-3", "auto takes the kernel's isolated CPUs over nohz_full");
                        check_list(&p->housekeeping, "0-1,4-7", "housekeeping is online minus isolated");
                        check_list(&p->default_affinity, "0-1,4-7", "default affinity is housekeeping");
                        CHECK(p->mode == DAEMON_MODE_ENFORCE, "mode carried over");
                        CHECK(p->config != NULL, "posture owns the config");
                }
        }
        host_cpus_done(&cpus);

        host_cpus(&cpus, "0-7", "0-7", "", "4-7");
        {
                _cleanup_(posture_freep) Posture *p = build_ok("[cpus]\nisolated = auto\n", &cpus, "nohz_full only");
                if (p) {
                        check_list(&p->isolated, "4-7", "auto falls back to nohz_full when isolated is empty");
                        check_list(&p->housekeeping, "0-3", "housekeeping is online minus nohz_full");
                }
        }
        host_cpus_done(&cpus);

        host_cpus(&cpus, "0-3", "0-3", "", "");
        {
                _cleanup_(posture_freep) Posture *p = build_ok("[daemon]\nmode = observe\n", &cpus, "nothing isolated");
                if (p) {
                        CHECK(cpuset_is_empty(&p->isolated), "auto may resolve to empty");
                        check_list(&p->housekeeping, "0-3", "then housekeeping is every online CPU");
                        CHECK(p->mode == DAEMON_MODE_OBSERVE, "observe mode carried over");
                }
        }
        host_cpus_done(&cpus);

        host_cpus(&cpus, "0-3", "0-3", "0-3", "");
        {
                _cleanup_error_list_ ErrorList errors = ERROR_LIST_EMPTY;
                Posture *p = NULL;
                int r = build("", &cpus, &p, &errors);
                if (!CHECK(r == -EINVAL && !p && errors.n == 1, "the kernel isolating every CPU leaves no housekeeping: error"))
                        print_errors(&errors);
        }
        check_error("[cpus]\n\nhousekeeping = 0-1\n", &cpus, 3, "housekeeping",
                    "explicit housekeeping overlapping the kernel's isolated CPUs");
        host_cpus_done(&cpus);
}

/* [cpus] partition needs CPUs: the boot's, or a list. */
static void test_partition(void) {
        HostCpus cpus;

        host_cpus(&cpus, "0-3", "0-3", "", "");
        check_error("[cpus]\npartition = isolated.slice\n", &cpus, 2,
                    "partition = isolated.slice needs CPUs to isolate, and the kernel isolated none at boot",
                    "a partition with nothing isolated at boot and no isolated list: error at its line");
        {
                _cleanup_(posture_freep) Posture *p =
                        build_ok("[cpus]\nisolated = 2-3\npartition = isolated.slice\n", &cpus, "isolated names them");
                if (p)
                        check_list(&p->isolated, "2-3", "the partition's CPUs are the list");
        }
        host_cpus_done(&cpus);
        host_cpus(&cpus, "0-3", "0-3", "2-3", "2-3");
        {
                _cleanup_(posture_freep) Posture *p =
                        build_ok("[cpus]\npartition = isolated.slice\n", &cpus, "the boot isolated some: auto takes them");
                if (p)
                        check_list(&p->isolated, "2-3", "the partition's CPUs are the boot's");
        }
        host_cpus_done(&cpus);
}

static void test_explicit_sets(void) {
        HostCpus cpus;

        host_cpus(&cpus, "0-7", "0-15", "", "");
        {
                _cleanup_(posture_freep) Posture *p = build_ok("[cpus]\nisolated = 2-3,6\n", &cpus, "explicit isolated");
                if (p) {
                        check_list(&p->isolated, "2-3,6", "explicit isolated kept");
                        check_list(&p->housekeeping, "0-1,4-5,7", "housekeeping derived from online, not possible");
                        CHECK(p->mask_bits == 16, "mask_bits follows the possible CPUs (16), not online (8)");
                }
        }
        {
                _cleanup_(posture_freep) Posture *p =
                        build_ok("[cpus]\nisolated = 4-7\nhousekeeping = 0-1\n[irq]\ndefault_affinity = 0\n", &cpus,
                                 "explicit isolated, housekeeping and default_affinity");
                if (p) {
                        check_list(&p->housekeeping, "0-1", "explicit housekeeping kept");
                        check_list(&p->default_affinity, "0", "explicit default_affinity kept");
                }
        }
        check_error("[cpus]\nisolated = 2,8\n", &cpus, 2, "8", "isolated CPU that does not exist");
        check_error("[cpus]\nisolated = 2\n\nhousekeeping = 0,9-10\n", &cpus, 4, "9-10", "housekeeping CPU that does not exist");
        check_error("[cpus]\nisolated = 0-7\n", &cpus, 2, "housekeeping", "isolated covering every online CPU");
        check_error("[cpus]\nisolated = 2-3\n[irq]\ndefault_affinity = 1-2\n", &cpus, 4, "isolated",
                    "default_affinity including an isolated CPU");
        check_error("[irq]\ndefault_affinity = 12\n", &cpus, 2, "12", "default_affinity CPU that does not exist");
        check_error("[irq]\npin = eth0 0\npin = eth1 7-8\n", &cpus, 3, "8", "pin to a CPU that does not exist");
        host_cpus_done(&cpus);

        /* CPU 2 is possible but offline: the spec checks against online */
        host_cpus(&cpus, "0-1,3", "0-3", "", "");
        check_error("[cpus]\nisolated = 2\n", &cpus, 2, "2", "isolated CPU that is offline");
        {
                _cleanup_(posture_freep) Posture *p = build_ok("[cpus]\nisolated = 3\n", &cpus, "online hole");
                if (p) {
                        check_list(&p->housekeeping, "0-1", "housekeeping leaves out the offline CPU");
                        CHECK(p->mask_bits == 4, "mask_bits is 4 with CPUs 0-3 possible");
                }
        }
        host_cpus_done(&cpus);
}

static void test_mask_bits(void) {
        HostCpus cpus;

        host_cpus(&cpus, "0-3", "0-255", "", "");
        {
                _cleanup_(posture_freep) Posture *p = build_ok("", &cpus, "256 possible CPUs");
                CHECK(p && p->mask_bits == 256, "mask_bits is 256");
        }
        host_cpus_done(&cpus);
        host_cpus(&cpus, "0-1", "0-1", "", "");
        {
                _cleanup_(posture_freep) Posture *p = build_ok("", &cpus, "2 possible CPUs");
                CHECK(p && p->mask_bits == 2, "mask_bits is 2");
        }
        host_cpus_done(&cpus);
}

static void test_irq_pins(void) {
        HostCpus cpus;

        host_cpus(&cpus, "0-7", "0-7", "", "");
        _cleanup_(posture_freep) Posture *p = build_ok("[irq]\n"
                                                       "pin = eth0-* 0\n"
                                                       "pin = eth0-TxRx-1 1\n"
                                                       "pin = rtc0 2\n"
                                                       "pin = nvme?q[0-3] 3\n",
                                                       &cpus, "four pins");
        host_cpus_done(&cpus);
        if (!p)
                return;
        const IrqPin *pins = p->config->pins;

        CHECK(posture_irq_pin(p, "eth0-TxRx-1") == &pins[1], "the last matching pin wins (eth0-TxRx-1 → 1)");
        CHECK(posture_irq_pin(p, "eth0-TxRx-0") == &pins[0], "an earlier pin applies when no later one matches");
        CHECK(posture_irq_pin(p, "i8042, rtc0") == &pins[2], "one action of a shared IRQ matches");
        CHECK(posture_irq_pin(p, "rtc0, i8042") == &pins[2], "the first action of a shared IRQ matches");
        CHECK(posture_irq_pin(p, "nvme0q2") == &pins[3], "bracket globs match");
        CHECK(posture_irq_pin(p, "nvme0q7") == NULL, "bracket globs do not over-match");
        CHECK(posture_irq_pin(p, "i8042") == NULL, "no pin matches i8042");
        CHECK(posture_irq_pin(p, "rtc") == NULL, "a glob matches whole action names, not prefixes");
        CHECK(posture_irq_pin(p, "xrtc0") == NULL, "a glob matches whole action names, not suffixes");
        CHECK(posture_irq_pin(p, NULL) == NULL, "an IRQ without a name has no pin");
        CHECK(posture_irq_pin(p, "") == NULL, "an empty name has no pin");

        host_cpus(&cpus, "0-7", "0-7", "", "");
        _cleanup_(posture_freep) Posture *q = build_ok("[irq]\npin = eth0-TxRx-1 1\npin = * 0\n", &cpus, "catch-all last");
        host_cpus_done(&cpus);
        if (q)
                CHECK(posture_irq_pin(q, "eth0-TxRx-1") == &q->config->pins[1], "a later catch-all overrides an earlier pin");
}

static void test_kthreads(void) {
        _cleanup_(posture_freep) Posture *p = NULL, *q = NULL, *r = NULL;
        KthreadTarget t;
        HostCpus cpus;

        host_cpus(&cpus, "0-3", "0-3", "2-3", "2-3");
        p = build_ok("[cpus]\nkthreads = housekeeping\n"
                     "[kthread \"rcu*\"]\ncpus = 1\n"
                     "[kthread \"rcuc/*\"]\npolicy = fifo\npriority = 3\n"
                     "[kthread \"rcuc/2\"]\ncpus = isolated\n"
                     "[kthread \"kswapd*\"]\ncpus = housekeeping\npolicy = other\n",
                     &cpus, "kthreads = housekeeping with four sections");
        if (p) {
                CHECK(posture_manages_kthreads(p), "it manages kernel threads");
                CHECK(posture_kthread_target(p, "kworker/u8:1", &t) && !t.cpus && t.off_isolated && t.policy == -1,
                      "a thread no section names: off the isolated CPUs, policy left alone");
                CHECK(posture_kthread_target(p, "rcuc/3", &t) && t.cpus && !t.off_isolated && t.policy == SCHED_FIFO &&
                              t.priority == 3,
                      "rcuc/3: CPUs from rcu*, policy from rcuc/*");
                check_list(t.cpus, "1", "rcuc/3's CPUs are rcu*'s list");
                CHECK(posture_kthread_target(p, "rcuc/2", &t) && t.cpus && t.policy == SCHED_FIFO,
                      "rcuc/2: a later section's CPUs win");
                check_list(t.cpus, "2-3", "cpus = isolated resolves to the isolated CPUs");
                CHECK(posture_kthread_target(p, "kswapd0", &t) && t.policy == SCHED_OTHER && t.priority == 0,
                      "kswapd0: policy other");
                check_list(t.cpus, "0-1", "cpus = housekeeping resolves to the housekeeping CPUs");
                CHECK(!posture_kthread_target(p, "irq/30-eth0", &t) && !t.cpus && !t.off_isolated,
                      "a threaded IRQ handler is not moved by kthreads = housekeeping");
        }
        q = build_ok("[cpus]\nkthreads = housekeeping\nisolated = 2\n[kthread \"irq/*-eth0*\"]\ncpus = 3\n", &cpus,
                     "an explicit section for IRQ threads");
        if (q) {
                CHECK(posture_kthread_target(q, "irq/30-eth0-TxRx", &t) && t.cpus, "a section may place IRQ threads");
                check_list(t.cpus, "3", "on its CPUs");
        }
        host_cpus_done(&cpus);

        host_cpus(&cpus, "0-3", "0-3", "", "");
        r = build_ok("[cpus]\nkthreads = housekeeping\n", &cpus, "kthreads = housekeeping without isolated CPUs");
        if (r)
                CHECK(!posture_manages_kthreads(r) && !posture_kthread_target(r, "kswapd0", &t),
                      "nothing to keep off when nothing is isolated");
        check_error("[kthread \"x\"]\ncpus = isolated\n", &cpus, 2, "cpus = isolated, but no CPU is isolated",
                    "cpus = isolated on a host with none");
        check_error("[kthread \"x\"]\ncpus = 6\n", &cpus, 2, "cpus: CPU 6 does not exist or is offline",
                    "a CPU the host lacks");
        host_cpus_done(&cpus);
}

/* [cpus] workqueues: a name resolves to the posture's set, a list is checked against the
 * online CPUs, none leaves workqueues alone. */
static void test_workqueues(void) {
        HostCpus cpus;

        host_cpus(&cpus, "0-3", "0-7", "2-3", "2-3");
        {
                _cleanup_(posture_freep) Posture *p = build_ok("[cpus]\n", &cpus, "no workqueues key");
                CHECK(p && cpuset_is_empty(&p->workqueues), "by default workqueues are left alone (empty set)");
        }
        {
                _cleanup_(posture_freep) Posture *p = build_ok("[cpus]\nworkqueues = housekeeping\n", &cpus, "housekeeping");
                if (p)
                        check_list(&p->workqueues, "0-1", "workqueues = housekeeping is 0-1");
        }
        {
                _cleanup_(posture_freep) Posture *p =
                        build_ok("[cpus]\nisolated = 3\nworkqueues = housekeeping\n", &cpus, "housekeeping, one isolated");
                if (p)
                        check_list(&p->workqueues, "0-2", "housekeeping follows the isolated set");
        }
        {
                _cleanup_(posture_freep) Posture *p = build_ok("[cpus]\nworkqueues = isolated\n", &cpus, "isolated");
                if (p)
                        check_list(&p->workqueues, "2-3", "workqueues = isolated is 2-3");
        }
        {
                _cleanup_(posture_freep) Posture *p = build_ok("[cpus]\nworkqueues = 0,3\n", &cpus, "a list");
                if (p)
                        check_list(&p->workqueues, "0,3", "a list is taken as written");
        }
        {
                _cleanup_(posture_freep) Posture *p = build_ok("[cpus]\nworkqueues = none\n", &cpus, "none");
                CHECK(p && cpuset_is_empty(&p->workqueues), "workqueues = none: left alone");
        }
        check_error("[cpus]\nworkqueues = 1,5\n", &cpus, 2, "workqueues: CPU 5 does not exist or is offline",
                    "a list naming a possible but offline CPU");
        host_cpus_done(&cpus);

        host_cpus(&cpus, "0-3", "0-3", "", "");
        check_error("[cpus]\n\nworkqueues = isolated\n", &cpus, 3, "workqueues = isolated, but no CPU is isolated",
                    "isolated when nothing is isolated");
        host_cpus_done(&cpus);
}

/* [pm] *_cpus resolved: the posture's sets for resume_latency, min_freq and the EPP. */
static void test_pm_cpus(void) {
        HostCpus cpus;

        host_cpus(&cpus, "0-3", "0-7", "2-3", "2-3");
        {
                _cleanup_(posture_freep) Posture *p = build_ok("[pm]\n", &cpus, "no power keys");
                CHECK(p && cpuset_is_empty(&p->resume_latency_cpus) && cpuset_is_empty(&p->min_freq_cpus) &&
                              cpuset_is_empty(&p->energy_performance_preference_cpus),
                      "settings that are off have no CPUs");
        }
        {
                _cleanup_(posture_freep) Posture *p = build_ok("[pm]\nresume_latency = 10\nmin_freq = max\n"
                                                               "energy_performance_preference = performance\n",
                                                               &cpus, "defaults");
                if (p) {
                        check_list(&p->resume_latency_cpus, "2-3", "resume_latency defaults to the isolated CPUs");
                        check_list(&p->min_freq_cpus, "2-3", "min_freq defaults to the isolated CPUs");
                        check_list(&p->energy_performance_preference_cpus, "2-3", "the EPP defaults to them too");
                }
        }
        {
                _cleanup_(posture_freep) Posture *p =
                        build_ok("[pm]\nresume_latency = n/a\nresume_latency_cpus = housekeeping\nmin_freq = 2000000\n"
                                 "min_freq_cpus = all\nenergy_performance_preference = power\n"
                                 "energy_performance_preference_cpus = 1,6\n",
                                 &cpus, "named sets and a list");
                if (p) {
                        check_list(&p->resume_latency_cpus, "0-1", "housekeeping");
                        check_list(&p->min_freq_cpus, "0-3", "all: the online CPUs");
                        check_list(&p->energy_performance_preference_cpus, "1,6",
                                   "a list may name a possible CPU that is offline now");
                }
        }
        check_error("[pm]\nresume_latency = 10\nresume_latency_cpus = 2,9\n", &cpus, 3,
                    "resume_latency_cpus: CPU 9 does not exist (possible CPUs: 0-7)", "a CPU the host cannot have");
        host_cpus_done(&cpus);

        host_cpus(&cpus, "0-3", "0-3", "", "");
        check_error("[pm]\nmin_freq = max\n", &cpus, 2, "min_freq_cpus = isolated (the default), but no CPU is isolated",
                    "the default isolated set with nothing isolated: the error names min_freq's line");
        check_error("[pm]\nboost = off\nenergy_performance_preference = power\nenergy_performance_preference_cpus = isolated\n",
                    &cpus, 4, "energy_performance_preference_cpus = isolated, but no CPU is isolated",
                    "isolated named with nothing isolated");
        {
                _cleanup_(posture_freep) Posture *p =
                        build_ok("[pm]\nresume_latency_cpus = isolated\n", &cpus, "a CPU set for a setting that is off");
                CHECK(p && cpuset_is_empty(&p->resume_latency_cpus), "is not resolved, and not an error");
        }
        host_cpus_done(&cpus);
}

int main(void) {
        test_auto_isolation();
        test_explicit_sets();
        test_mask_bits();
        test_irq_pins();
        test_kthreads();
        test_workqueues();
        test_partition();
        test_pm_cpus();
        return tap_finish();
}
