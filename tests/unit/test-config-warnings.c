/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lowlatd.conf's warnings (lib/config/warnings.c, and a key set twice as reader.c reads
 * it): valid configurations that will hurt are accepted and said, once, at their line. */
#include "config/config.h"
#include "tap.h"
#include "basic/util.h"

#include "config-fixture.h"

/* text parses without an error, and warns exactly once, at line, with needle. */
static void check_warning(const char *text, unsigned line, const char *needle, const char *what) {
        _cleanup_error_list_ ErrorList errors = ERROR_LIST_EMPTY;
        _cleanup_config_ Config *c = parse(text, &errors);
        char prefix[64];
        bool ok;

        config_check_warnings(c);
        snprintf(prefix, sizeof(prefix), NAME ":%u: warning: ", line);
        ok = errors.n == 0 && c->warnings.n == 1 && starts_with(c->warnings.items[0], prefix) &&
             strstr(c->warnings.items[0], needle);
        if (!CHECK(ok, what)) {
                printf("#   expected one warning starting '%s' containing '%s'\n", prefix, needle);
                print_errors(&errors);
                print_errors(&c->warnings);
        }
}

static void check_quiet(const char *text, const char *what) {
        _cleanup_error_list_ ErrorList errors = ERROR_LIST_EMPTY;
        _cleanup_config_ Config *c = parse(text, &errors);

        config_check_warnings(c);
        if (!CHECK(errors.n == 0 && c->warnings.n == 0, what)) {
                print_errors(&errors);
                print_errors(&c->warnings);
        }
}

static void test_set_twice(void) {
        check_warning("[daemon]\nscan_interval = 5s\n\nscan_interval = 10s\n", 4, "scan_interval is set again; this line replaces line 2's",
                      "a key set twice in one section: a warning at the second line");
        check_warning("[daemon]\nmode = observe\n[cpus]\nisolated = 1\n[daemon]\nmode = enforce\n", 6, "mode is set again",
                      "... also when the section header comes again");
        check_warning("[sysctl]\nvm.swappiness = 10\nvm.swappiness = 1\n", 3, "vm.swappiness is set again",
                      "a sysctl set twice");
        check_warning("[sysfs]\n/sys/kernel/mm/ksm/run = 0\n/sys/kernel/mm/ksm/run = 1\n", 3, "is set again",
                      "a [sysfs] path set twice");
        check_warning("[irq]\npin = eth0-* 0\npin = eth1-* 1\npin = eth0-* 1\n", 4, "'eth0-*' is pinned again",
                      "the same IRQ pattern pinned twice: the first has no effect");
        check_quiet("[irq]\npin = eth0-* 0\npin = eth1-* 1\n", "two pins of two patterns: no warning");
        check_quiet("[nic \"eth0\"]\ntxqueuelen = 10\n[nic \"eth1\"]\ntxqueuelen = 10\n",
                    "one key in two [nic] sections: no warning");
        check_warning("[nic \"eth0\"]\ntxqueuelen = 10\n[cpus]\nisolated = 1\n[nic \"eth0\"]\ntxqueuelen = 20\n", 6,
                      "txqueuelen is set again; this line replaces line 2's",
                      "a named section repeated, one key set in both: a warning as for a duplicate key");
        check_quiet("[nic \"eth0\"]\ntxqueuelen = 10\n[nic \"eth0\"]\nrx_usecs = 0\n",
                    "a named section repeated, two different keys: no warning");
        /* ethtool's parameters and feature.NAME are no rows of keys.c: [nic]'s assign reads them */
        check_warning("[nic \"eth0\"]\nrx_usecs = 10\nrx_usecs = 20\n", 3, "rx_usecs is set again; this line replaces line 2's",
                      "an ethtool parameter set twice in one [nic] section");
        check_warning("[nic \"eth0\"]\nfeature.rx-gro-hw = on\n[nic \"eth0\"]\nfeature.rx-gro-hw = off\n", 4,
                      "feature.rx-gro-hw is set again", "a feature.NAME set twice in a named section repeated");
        check_quiet("[nic \"eth0\"]\nrx_usecs = 10\n[nic \"eth1\"]\nrx_usecs = 10\nfeature.rx-gro-hw = on\n"
                    "[nic \"eth0\"]\nfeature.rx-gro-hw = on\n",
                    "one ethtool parameter or feature in two [nic] sections: no warning");
}

static void test_hurts(void) {
        check_warning("[sysctl]\nkernel.sched_rt_runtime_us = -1\n", 2, "throttling off",
                      "kernel.sched_rt_runtime_us = -1");
        check_quiet("[sysctl]\nkernel.sched_rt_runtime_us = 980000\n", "a throttling budget is no warning");
        check_warning("[nic \"*\"]\ntxqueuelen = 1\n", 1, "loopback interface lo", "[nic \"*\"] takes in lo");
        check_warning("[nic \"l?\"]\ntxqueuelen = 1\n", 1, "loopback interface lo", "... as does [nic \"l?\"]");
        check_quiet("[nic \"eth*\"]\ntxqueuelen = 1\n", "[nic \"eth*\"]: no warning");
        check_warning("[nic \"abcdefghijklmnop*\"]\ntxqueuelen = 1\n", 1, "can match no interface",
                      "a [nic] pattern of 16 characters and a star");
        check_quiet("[nic \"abcdefghijklmno*\"]\ntxqueuelen = 1\n", "... of 15: no warning");
        check_quiet("[nic \"[abc][abc][abc][abc][abc][abc]*\"]\ntxqueuelen = 1\n",
                    "a bracket is one character: no warning");
        check_warning("[kthread \"*\"]\npolicy = fifo\npriority = 99\ncpus = 0\n", 2, "every kernel thread real-time",
                      "[kthread \"*\"] policy = fifo");
        check_warning("[kthread \"**\"]\npolicy = rr\npriority = 1\n", 2, "(rr, priority 1)", "[kthread \"**\"] rr");
        check_quiet("[kthread \"*\"]\ncpus = housekeeping\n", "[kthread \"*\"] moved, not real-time: no warning");
        check_quiet("[kthread \"ksoftirqd/*\"]\npolicy = fifo\npriority = 2\n", "named threads real-time: no warning");
}

static void test_pins_isolated(void) {
        _cleanup_config_ Config *c = parse_ok("[irq]\npin = * 0-3\npin = ** 1\npin = eth* 2-3\n", "pins parse");
        _cleanup_cpuset_ CPUSet isolated = CPUSET_EMPTY;

        cpuset_add(&isolated, 2);
        cpuset_add(&isolated, 3);
        config_warn_pins_isolated(c, &isolated);
        CHECK(c->warnings.n == 1 && starts_with(c->warnings.items[0], NAME ":2: warning: pin = * puts") &&
                      strstr(c->warnings.items[0], "isolated CPUs 2-3"),
              "pin = * onto isolated CPUs: a warning naming them; '** 1' (housekeeping) and 'eth* 2-3' (named) none");
}

int main(void) {
        test_set_twice();
        test_hurts();
        test_pins_isolated();
        return tap_finish();
}
