/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lowlatd.conf: [daemon], [cpus], [irq], [pm], [sysctl], [sysfs] and [noise]: every key's accepted
 * and rejected values (lib/config/keys.c, values.c, section-*.c). */
#include <fcntl.h>
#include <ftw.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "config/config.h"
#include "host/ethtool.h"
#include "faketree.h"
#include "basic/macro.h"
#include "tap.h"
#include "basic/util.h"

#include "config-fixture.h"
#include "config/keys.h"
#include "setting/kind.h"

static void test_scan_interval(void) {
        static const struct {
                const char *value;
                uint64_t usec;
        } good[] = {
                { "500ms", 500 * USEC_PER_MSEC },
                { "10s", 10 * USEC_PER_SEC },
                { "1min", 60 * USEC_PER_SEC },
                { "5", 5 * USEC_PER_SEC },
                { "100ms", 100 * USEC_PER_MSEC },
                { "100000us", 100 * USEC_PER_MSEC },
                { "60min", 3600 * USEC_PER_SEC },
                { "3600", 3600 * USEC_PER_SEC },
                { "1h", 3600 * USEC_PER_SEC },
                { "2m", 120 * USEC_PER_SEC },
                { "1.5s", 1500 * USEC_PER_MSEC },
                { "10 s", 10 * USEC_PER_SEC },
                { "1min 30s", 90 * USEC_PER_SEC },
        };
        static const char *const bad[] = { "99ms", "2h", "10x", "-1s", "0", "3601s", "61min", "99999us", "1h 1s",
                                           "s", "10 ss", "infinity", "99999999999999999999999" };
        char text[128], what[128];

        {
                _cleanup_config_ Config *c = parse_ok("[daemon]\n", "empty [daemon] is fine");
                CHECK(c->scan_interval_usec == 10 * USEC_PER_SEC, "scan_interval defaults to 10s");
                CHECK(c->mode == DAEMON_MODE_ENFORCE, "mode defaults to enforce");
        }
        for (size_t i = 0; i < ELEMENTSOF(good); i++) {
                snprintf(text, sizeof(text), "[daemon]\nscan_interval = %s\n", good[i].value);
                snprintf(what, sizeof(what), "scan_interval = %s is accepted", good[i].value);
                _cleanup_config_ Config *c = parse_ok(text, what);
                snprintf(what, sizeof(what), "scan_interval = %s is %llu us", good[i].value,
                         (unsigned long long) good[i].usec);
                CHECK(c->scan_interval_usec == good[i].usec, what);
        }
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                snprintf(text, sizeof(text), "[daemon]\n\nscan_interval = %s\n", bad[i]);
                snprintf(what, sizeof(what), "scan_interval = %s is rejected at line 3", bad[i]);
                check_error(text, 3, "scan_interval", what);
        }
        check_error("[daemon]\nscan_interval = 99ms\n", 2, "out of range", "99ms is out of range, not malformed");
        check_error("[daemon]\nscan_interval = 10x\n", 2, "not a duration", "10x is malformed");
        {
                _cleanup_error_list_ ErrorList errors = ERROR_LIST_EMPTY;
                _cleanup_config_ Config *c = parse("[daemon]\nscan_interval = 5s\nscan_interval = 2h\n", &errors);
                CHECK(c->scan_interval_usec == 5 * USEC_PER_SEC, "a rejected value leaves the earlier one");
        }
}

static void test_mode(void) {
        {
                _cleanup_config_ Config *c = parse_ok("[daemon]\nmode = observe\n", "mode = observe");
                CHECK(c->mode == DAEMON_MODE_OBSERVE, "mode = observe is observe");
        }
        {
                _cleanup_config_ Config *c = parse_ok("[daemon]\nmode = observe\nmode = enforce\n", "mode twice");
                CHECK(c->mode == DAEMON_MODE_ENFORCE, "duplicate key: the later one wins");
        }
        CHECK_STR(daemon_mode_to_string(DAEMON_MODE_OBSERVE), "observe", "observe's name");
        CHECK_STR(daemon_mode_to_string(DAEMON_MODE_ENFORCE), "enforce", "enforce's name");
        check_error("[daemon]\nmode = Observe\n", 2, "mode", "mode = Observe is rejected");
        check_error("[daemon]\nmode = yes\n", 2, "mode", "mode = yes is rejected");
        check_error("[daemon]\nmode =\n", 2, "empty value", "empty mode is rejected");
}

static void test_irqbalance_mode(void) {
        {
                _cleanup_config_ Config *c = parse_ok("[irq]\n", "empty [irq] is fine");
                CHECK(c->irqbalance == IRQBALANCE_REPORT, "irqbalance defaults to report");
        }
        {
                _cleanup_config_ Config *c = parse_ok("[irq]\nirqbalance = ban\n", "irqbalance = ban");
                CHECK(c->irqbalance == IRQBALANCE_BAN, "irqbalance = ban is ban");
        }
        CHECK_STR(irqbalance_mode_to_string(IRQBALANCE_REPORT), "report", "report's name");
        CHECK(irqbalance_mode_from_string("ban") == IRQBALANCE_BAN, "ban by name");
        check_error("[irq]\nirqbalance = yes\n", 2, "'yes' is not report or ban", "irqbalance = yes is rejected");
        check_error("[irq]\nirqbalance = Ban\n", 2, "irqbalance", "values are case-sensitive");
        check_error("[irq]\n\nirqbalance =\n", 3, "empty value", "an empty irqbalance is rejected");
}

static void test_noise(void) {
        {
                _cleanup_config_ Config *c = parse_ok("", "no [noise]");
                CHECK(c->noise_cpus.kind == CPUS_ISOLATED && c->noise_tick_rate_max == 10 &&
                              c->noise_alert_interval_usec == 600 * USEC_PER_SEC && c->noise_gate,
                      "[noise] defaults: isolated CPUs, 10 ticks/s, 10 min, the perf gate");
        }
        {
                _cleanup_config_ Config *c = parse_ok(
                        "[noise]\ncpus = 0-1\ntick_rate_max = 0\nalert_interval = off\ngate = off\n", "[noise] set");
                CHECK(c->noise_tick_rate_max == 0 && c->noise_alert_interval_usec == 0 && !c->noise_gate,
                      "tick_rate_max = 0, alert_interval = off, gate = off");
        }
        {
                _cleanup_config_ Config *c = parse_ok("[noise]\ngate = no\ngate = perf\n", "gate twice");
                CHECK(c->noise_gate, "gate = perf after gate = no: the later wins");
        }
        {
                _cleanup_config_ Config *c = parse_ok("[noise]\ngate = no\n", "gate = no");
                CHECK(!c->noise_gate, "gate = no is off");
        }
        check_error("[noise]\ngate = yes\n", 2, "gate: 'yes' is neither 'perf' nor 'off'",
                    "gate = yes is rejected (which gate?)");
        check_error("[noise]\ngate = tracefs\n", 2, "gate", "gate = tracefs is rejected");
        check_error("[noise]\ntick_rate_max = 100001\n", 2, "tick_rate_max", "tick_rate_max over 100000");
        check_error("[noise]\nalert_interval = 500ms\n", 2, "out of range", "alert_interval under 1 s");
        check_error("[noise]\nalert_interval = soon\n", 2, "not a duration", "alert_interval not a duration");
        check_error("[noise]\nwatch = all\n", 2, "unknown key 'watch'", "unknown [noise] key");
}

static void test_isolated(void) {
        {
                _cleanup_config_ Config *c = parse_ok("[cpus]\n", "empty [cpus]");
                CHECK(c->isolated.kind == CPUS_AUTO && c->housekeeping.kind == CPUS_UNSET, "isolated defaults to auto, housekeeping to derived");
        }
        {
                _cleanup_config_ Config *c = parse_ok("[cpus]\nisolated = auto\n", "isolated = auto");
                CHECK(c->isolated.kind == CPUS_AUTO, "isolated = auto is auto");
        }
        {
                _cleanup_config_ Config *c = parse_ok("[cpus]\nisolated = 2-3,6\n", "isolated = 2-3,6");
                _cleanup_free_ char *list = cpuset_format_list(&c->isolated.cpus);
                CHECK(c->isolated.kind == CPUS_LIST, "an explicit list is not auto");
                CHECK_STR(list, "2-3,6", "isolated list kept");
                CHECK(c->isolated.source.line == 2 && streq_ptr(c->isolated.source.file, NAME), "isolated source is t.conf:2");
        }
        {
                _cleanup_config_ Config *c = parse_ok("[cpus]\nisolated = 2-3\nisolated = auto\n", "list then auto");
                CHECK(c->isolated.kind == CPUS_AUTO && cpuset_is_empty(&c->isolated.cpus), "later isolated = auto wins over a list");
        }
        check_error("[cpus]\nisolated =\n", 2, "empty", "empty isolated is rejected");
        check_error("[cpus]\nisolated = garbage\n", 2, "not a CPU list", "isolated = garbage is rejected");
        check_error("[cpus]\nisolated = 1-\n", 2, "isolated", "isolated = 1- is rejected");
        check_error("[cpus]\nisolated = 70000\n", 2, "too large", "isolated = 70000 is a CPU number too large");
        check_error("[cpus]\nisolated = 99999999999999999999\n", 2, "isolated", "isolated with an overflowing number");
        check_error("[cpus]\nhousekeeping =\n", 2, "empty", "empty housekeeping is rejected");
        check_error("[cpus]\nhousekeeping = ,\n", 2, "housekeeping", "housekeeping = , is rejected");
        {
                _cleanup_config_ Config *c = parse_ok("[cpus]\nhousekeeping = 0-1\n", "housekeeping = 0-1");
                _cleanup_free_ char *list = cpuset_format_list(&c->housekeeping.cpus);
                CHECK(c->housekeeping.kind == CPUS_LIST, "housekeeping is explicit");
                CHECK_STR(list, "0-1", "housekeeping list kept");
        }
}

static void test_overlap(void) {
        check_error("[cpus]\nisolated = 1-3\nhousekeeping = 0-1\n", 3, "overlap", "overlap named at housekeeping, the later line");
        check_error("[cpus]\nhousekeeping = 0-1\n\nisolated = 1-3\n", 4, "overlap", "overlap named at isolated, the later line");
        check_error("[cpus]\nisolated = 1-3\nhousekeeping = 0-1\n", 3, "(CPUs 1)", "overlap error lists the shared CPUs");
        {
                /* auto resolves against the host later (posture.c); nothing to compare here */
                _cleanup_config_ Config *c = parse_ok("[cpus]\nhousekeeping = 0-2\nisolated = auto\n",
                                                      "housekeeping with isolated = auto is not an overlap yet");
        }
        {
                _cleanup_config_ Config *c = parse_ok("[cpus]\nisolated = 2-3\nhousekeeping = 0-1\n", "disjoint sets");
        }
}

static void test_slices(void) {
        {
                _cleanup_config_ Config *c = parse_ok("[cpus]\n", "no slices key");
                CHECK(c->n_slices == 0, "slices default to none");
        }
        {
                _cleanup_config_ Config *c =
                        parse_ok("[cpus]\nslices = system.slice user.slice\tinit.scope machine.slice\n", "the whole tree and machine.slice");
                CHECK(c->n_slices == 4 && streq(c->slices[0], "system.slice") && streq(c->slices[2], "init.scope") &&
                              streq(c->slices[3], "machine.slice"),
                      "units kept in order, spaces and tabs both separate");
                CHECK(c->slices_source.line == 2 && streq_ptr(c->slices_source.file, NAME), "slices source is t.conf:2");
        }
        {
                _cleanup_config_ Config *c = parse_ok("[cpus]\nslices = init.scope user.slice system.slice trade-bg.service\n"
                                                      "slices = none\n",
                                                      "a list, then none");
                CHECK(c->n_slices == 0 && !c->slices, "slices = none drops an earlier list");
        }
        {
                _cleanup_config_ Config *c = parse_ok("[cpus]\nslices = init.scope user.slice system.slice\n", "the three");
                _cleanup_error_list_ ErrorList errors = ERROR_LIST_EMPTY;
                (void) config_parse_string(c, "b.conf", "[cpus]\nslices = user.slice\n", &errors);
                CHECK(errors.n == 1 && c->n_slices == 3, "a bad later list keeps the earlier one");
        }
        check_error("[cpus]\nslices = user.slice\n", 2,
                    "a partial list makes isolation worse: the first AllowedCPUs= turns the cpuset controller on for the "
                    "whole tree, and units left out (system.slice, init.scope) then run on every CPU",
                    "a partial list is refused, naming what it leaves out");
        check_error("[cpus]\nslices = system.slice user.slice machine.slice\n", 2, "(init.scope)",
                    "init.scope is required too");
        check_error("[cpus]\nslices = system.slice user.slice init.scope sys/tem.slice\n", 2,
                    "'sys/tem.slice' is not a unit name", "a unit name with '/'");
        check_error("[cpus]\nslices = system.slice user.slice init.scope sshd.socket\n", 2,
                    "'sshd.socket' is not a slice, scope or service", "a socket unit is refused");
        check_error("[cpus]\nslices = system.slice user.slice init.scope .slice\n", 2,
                    "'.slice' is not a slice, scope or service", "a bare suffix is no unit");
        check_error("[cpus]\nslices = -.slice system.slice user.slice init.scope\n", 2,
                    "-.slice is the root of the tree", "the root slice is refused");
        check_error("[cpus]\nslices = system.slice user.slice init.scope user.slice\n", 2,
                    "'user.slice' is listed twice", "a unit listed twice");
        check_error("[cpus]\nslices = none system.slice\n", 2, "'none' is not a slice", "none mixed with units");
        check_error("[cpus]\nslices =\n", 2, "slices: empty value", "an empty value");
}

/* [cpus] partition: one top-level slice of its own, which slices must not contradict. */
static void test_partition(void) {
        {
                _cleanup_config_ Config *c = parse_ok("[cpus]\n", "no partition key");
                CHECK(!c->partition, "partition defaults to none");
        }
        {
                _cleanup_config_ Config *c = parse_ok("[cpus]\npartition = isolated.slice\n", "partition = isolated.slice");
                CHECK(streq_ptr(c->partition, "isolated.slice") && c->partition_source.line == 2 && c->n_slices == 0,
                      "the slice, its line, and no slices listed (partition implies them)");
        }
        {
                _cleanup_config_ Config *c = parse_ok("[cpus]\npartition = isolated.slice\npartition = none\n",
                                                      "partition = none after a slice");
                CHECK(!c->partition, "partition = none drops it");
        }
        {
                _cleanup_config_ Config *c = parse_ok("[cpus]\nslices = system.slice user.slice init.scope machine.slice\n"
                                                      "partition = rt.slice\n",
                                                      "partition with a slices list that leaves it out");
                CHECK(streq_ptr(c->partition, "rt.slice") && c->n_slices == 4, "both kept");
        }
        check_error("[cpus]\npartition = trading-rt.slice\n", 2, "has a dash, which nests a slice inside another",
                    "a dash nests the slice: refused");
        check_error("[cpus]\npartition = isolated\n", 2, "'isolated' is not a slice name", "no .slice suffix");
        check_error("[cpus]\npartition = isolated.service\n", 2, "'isolated.service' is not a slice name",
                    "a service is not a slice");
        check_error("[cpus]\npartition = .slice\n", 2, "'.slice' is not a slice name", "a bare suffix");
        check_error("[cpus]\npartition = -.slice\n", 2, NULL, "the root slice");
        check_error("[cpus]\npartition = a/b.slice\n", 2, "is not a slice name", "a '/' in the name");
        check_error("[cpus]\npartition = system.slice\n", 2, "system.slice is kept on the housekeeping CPUs",
                    "system.slice cannot be the partition");
        check_error("[cpus]\npartition = machine.slice\n", 2, "machine.slice is kept on the housekeeping CPUs",
                    "machine.slice cannot be the partition");
        check_error("[cpus]\nslices = none\npartition = isolated.slice\n", 2,
                    "slices = none contradicts partition = isolated.slice (t.conf:3)", "slices = none contradicts it");
        check_error("[cpus]\nslices = system.slice user.slice init.scope isolated.slice\npartition = isolated.slice\n", 2,
                    "slices lists isolated.slice, the partition (t.conf:3)", "slices listing the partition contradicts it");
        check_error("[cpus]\npartition =\n", 2, "partition: empty value", "an empty value");
}

/* [cpus] workqueues: a CPU set value, a name or a list; every bad value is an error at its
 * line that says what is expected. */
static void test_workqueues(void) {
        {
                _cleanup_config_ Config *c = parse_ok("[cpus]\n", "no workqueues key");
                CHECK(c->workqueues.kind == CPUS_NONE, "workqueues defaults to none");
        }
        for (CpusKind k = CPUS_HOUSEKEEPING; k <= CPUS_NONE; k++) {
                _cleanup_free_ char *text = strdup_printf("[cpus]\nworkqueues = %s\n", cpus_kind_to_string(k));
                _cleanup_free_ char *what = strdup_printf("workqueues = %s", cpus_kind_to_string(k));
                _cleanup_config_ Config *c = parse_ok(text, what);
                CHECK(c->workqueues.kind == k && cpuset_is_empty(&c->workqueues.cpus), what);
        }
        {
                _cleanup_config_ Config *c = parse_ok("[cpus]\n\nworkqueues = 0-1,4\n", "workqueues = 0-1,4");
                _cleanup_free_ char *list = cpuset_format_list(&c->workqueues.cpus);
                CHECK(c->workqueues.kind == CPUS_LIST, "a list is a list");
                CHECK_STR(list, "0-1,4", "workqueues list kept");
                CHECK(c->workqueues.source.line == 3 && streq_ptr(c->workqueues.source.file, NAME),
                      "workqueues remembers t.conf:3");
        }
        {
                _cleanup_config_ Config *c = parse_ok("[cpus]\nworkqueues = 0-1\nworkqueues = housekeeping\n",
                                                      "a list, then a name");
                CHECK(c->workqueues.kind == CPUS_HOUSEKEEPING && cpuset_is_empty(&c->workqueues.cpus),
                      "the later name wins and the list is dropped");
        }
        check_error("[cpus]\nworkqueues = housekeep\n", 2,
                    "workqueues: 'housekeep' is not a CPU list (e.g. 2-3,6), housekeeping, isolated or none",
                    "workqueues = housekeep: says what it takes");
        check_error("[cpus]\nworkqueues = Housekeeping\n", 2, "not a CPU list", "names are case-sensitive");
        check_error("[cpus]\nworkqueues = 0-\n", 2, "workqueues", "workqueues = 0- is rejected");
        check_error("[cpus]\nworkqueues = 3-1\n", 2, "workqueues", "workqueues = 3-1 is rejected");
        check_error("[cpus]\nworkqueues = ,\n", 2, "workqueues", "workqueues = , is rejected");
        check_error("[cpus]\nworkqueues = 70000\n", 2, "too large", "workqueues = 70000 is a CPU number too large");
        check_error("[cpus]\nworkqueues =\n", 2, "empty", "an empty workqueues is rejected");
        check_error("[cpus]\nworkqueues = none housekeeping\n", 2, "workqueues", "two values are rejected");
}

static void test_default_affinity_and_pins(void) {
        {
                _cleanup_config_ Config *c = parse_ok("[irq]\n", "empty [irq]");
                CHECK(c->default_affinity.kind == CPUS_HOUSEKEEPING && c->n_pins == 0, "default_affinity defaults to housekeeping");
        }
        {
                _cleanup_config_ Config *c = parse_ok("[irq]\ndefault_affinity = 0-1\n", "default_affinity = 0-1");
                _cleanup_free_ char *list = cpuset_format_list(&c->default_affinity.cpus);
                CHECK(c->default_affinity.kind == CPUS_LIST, "explicit default_affinity");
                CHECK_STR(list, "0-1", "default_affinity list kept");
        }
        {
                _cleanup_config_ Config *c =
                        parse_ok("[irq]\ndefault_affinity = 0\ndefault_affinity = housekeeping\n", "back to housekeeping");
                CHECK(c->default_affinity.kind == CPUS_HOUSEKEEPING, "later default_affinity = housekeeping wins");
        }
        check_error("[irq]\ndefault_affinity = somewhere\n", 2, "default_affinity", "default_affinity = somewhere rejected");
        check_error("[irq]\ndefault_affinity =\n", 2, "empty", "empty default_affinity rejected");

        {
                _cleanup_config_ Config *c = parse_ok("[irq]\npin = eth0-TxRx-* 2-3\npin = i8042 0\n# x\npin = *\t1,3\n",
                                                      "three pins");
                CHECK(c->n_pins == 3, "three pins kept");
                if (c->n_pins == 3) {
                        _cleanup_free_ char *l0 = cpuset_format_list(&c->pins[0].cpus);
                        _cleanup_free_ char *l1 = cpuset_format_list(&c->pins[1].cpus);
                        _cleanup_free_ char *l2 = cpuset_format_list(&c->pins[2].cpus);
                        CHECK_STR(c->pins[0].glob, "eth0-TxRx-*", "first pin's glob");
                        CHECK_STR(l0, "2-3", "first pin's CPUs");
                        CHECK_STR(c->pins[1].glob, "i8042", "second pin's glob");
                        CHECK_STR(l1, "0", "second pin's CPUs");
                        CHECK_STR(c->pins[2].glob, "*", "third pin's glob (tab separated)");
                        CHECK_STR(l2, "1,3", "third pin's CPUs");
                        CHECK(c->pins[0].source.line == 2 && c->pins[1].source.line == 3 && c->pins[2].source.line == 5,
                              "pins remember their lines");
                }
        }
        check_error("[irq]\npin = eth0\n", 2, "pin", "pin without a CPU list rejected");
        check_error("[irq]\npin = eth0   \n", 2, "pin", "pin with trailing blanks and no list rejected");
        check_error("[irq]\npin = eth[0 1\n", 2, "eth[0", "pin with an unterminated bracket rejected");
        check_error("[irq]\npin = eth0 abc\n", 2, "pin", "pin with a bad CPU list rejected");
        check_error("[irq]\npin = eth0 1 2\n", 2, "pin", "pin with two CPU lists rejected");
}

static void test_pm(void) {
        static const char *const bad_latency[] = { "2000000001", "-1", "abc", "1e3", "99999999999999999999", " 5x" };
        static const char *const bad_governor[] = { "Bad!", "perf ormance", "PERFORMANCE", "abcdefghijklmnop" };
        char text[128], what[128];

        {
                _cleanup_config_ Config *c = parse_ok("[pm]\n", "empty [pm]");
                CHECK(!c->cpu_dma_latency_enabled && !c->governor, "pm defaults to off");
        }
        {
                _cleanup_config_ Config *c = parse_ok("[pm]\ncpu_dma_latency = 0\n", "cpu_dma_latency = 0");
                CHECK(c->cpu_dma_latency_enabled && c->cpu_dma_latency_usec == 0, "cpu_dma_latency = 0 is enabled at 0");
        }
        {
                _cleanup_config_ Config *c = parse_ok("[pm]\ncpu_dma_latency = 2000000000\n", "cpu_dma_latency max");
                CHECK(c->cpu_dma_latency_enabled && c->cpu_dma_latency_usec == 2000000000, "cpu_dma_latency = 2000000000");
        }
        {
                _cleanup_config_ Config *c = parse_ok("[pm]\ncpu_dma_latency = 5\ncpu_dma_latency = off\n", "latency off");
                CHECK(!c->cpu_dma_latency_enabled, "later cpu_dma_latency = off wins");
        }
        for (size_t i = 0; i < ELEMENTSOF(bad_latency); i++) {
                snprintf(text, sizeof(text), "[pm]\ncpu_dma_latency = %s\n", bad_latency[i]);
                snprintf(what, sizeof(what), "cpu_dma_latency = '%s' rejected", bad_latency[i]);
                check_error(text, 2, "cpu_dma_latency", what);
        }
        check_error("[pm]\ncpu_dma_latency = 2000000001\n", 2, "out of range", "2000000001 is out of range");

        {
                _cleanup_config_ Config *c = parse_ok("[pm]\ngovernor = performance\n", "governor = performance");
                CHECK_STR(c->governor, "performance", "governor kept");
        }
        {
                _cleanup_config_ Config *c = parse_ok("[pm]\ngovernor = abcdefghijklmno\n", "15-character governor");
                CHECK_STR(c->governor, "abcdefghijklmno", "15-character governor kept");
        }
        {
                _cleanup_config_ Config *c = parse_ok("[pm]\ngovernor = performance\ngovernor = off\n", "governor off");
                CHECK(!c->governor, "later governor = off wins");
        }
        for (size_t i = 0; i < ELEMENTSOF(bad_governor); i++) {
                snprintf(text, sizeof(text), "[pm]\ngovernor = %s\n", bad_governor[i]);
                snprintf(what, sizeof(what), "governor = '%s' rejected", bad_governor[i]);
                check_error(text, 2, "governor", what);
        }
}

/* [pm] resume_latency, min_freq, energy_performance_preference, boost and their CPU sets. */
static void test_pm_power(void) {
        static const struct {
                const char *line;
                const char *needle;
        } bad[] = {
                { "resume_latency = 0", "0 means 'no restriction'" },
                { "resume_latency = -1", "not a number of microseconds" },
                { "resume_latency = abc", "not a number of microseconds" },
                { "resume_latency = NA", "not a number of microseconds" },
                { "resume_latency = 2147483647", "out of range" },
                { "resume_latency = 99999999999999999999", "out of range" },
                { "resume_latency = 5us", "not a number of microseconds" },
                { "resume_latency_cpus = none", "not a CPU list" },
                { "resume_latency_cpus = 3-2", "not a CPU list" },
                { "resume_latency_cpus = 99999", "too large" },
                { "min_freq = 0", "out of range" },
                { "min_freq = 4294967296", "out of range" },
                { "min_freq = 2GHz", "not a frequency in kHz" },
                { "min_freq = MAX", "not a frequency in kHz" },
                { "min_freq = -5", "not a frequency in kHz" },
                { "min_freq_cpus = some", "not a CPU list" },
                { "energy_performance_preference = Performance", "not a preference name" },
                { "energy_performance_preference = balance-power", "not a preference name" },
                { "energy_performance_preference = abcdefghijklmnopqrstuvwxyzabcdef", "not a preference name" },
                { "energy_performance_preference_cpus = everything", "not a CPU list" },
                { "boost = yes", "not on, off or keep" },
                { "boost = 1", "not on, off or keep" },
                { "boost_cpus = all", "unknown key 'boost_cpus'" },
        };
        char text[256], what[256];

        {
                _cleanup_config_ Config *c = parse_ok("[pm]\n", "empty [pm]");
                CHECK(!c->resume_latency && !c->min_freq_enabled && !c->energy_performance_preference &&
                              c->boost == PM_BOOST_UNSET,
                      "the power settings default to off");
                CHECK(c->resume_latency_cpus.kind == CPUS_ISOLATED && c->min_freq_cpus.kind == CPUS_ISOLATED &&
                              c->energy_performance_preference_cpus.kind == CPUS_ISOLATED,
                      "their CPU sets default to isolated");
        }
        {
                _cleanup_config_ Config *c = parse_ok("[pm]\nresume_latency = 20\nresume_latency_cpus = housekeeping\n"
                                                      "min_freq = 2400000\nmin_freq_cpus = all\n"
                                                      "energy_performance_preference = balance_performance\n"
                                                      "energy_performance_preference_cpus = 1,3\nboost = off\n",
                                                      "every power key");
                CHECK_STR(c->resume_latency, "20", "resume_latency = 20");
                CHECK(c->resume_latency_cpus.kind == CPUS_HOUSEKEEPING, "resume_latency_cpus = housekeeping");
                CHECK(c->min_freq_enabled && !c->min_freq_max && c->min_freq_khz == 2400000, "min_freq = 2400000");
                CHECK(c->min_freq_cpus.kind == CPUS_ALL, "min_freq_cpus = all");
                CHECK_STR(c->energy_performance_preference, "balance_performance", "EPP kept");
                CHECK(c->energy_performance_preference_cpus.kind == CPUS_LIST &&
                              cpuset_count(&c->energy_performance_preference_cpus.cpus) == 2 &&
                              cpuset_contains(&c->energy_performance_preference_cpus.cpus, 3),
                      "energy_performance_preference_cpus = 1,3");
                CHECK(c->boost == PM_BOOST_OFF, "boost = off");
        }
        {
                _cleanup_config_ Config *c = parse_ok("[pm]\nresume_latency = n/a\nmin_freq = max\nboost = on\n",
                                                      "n/a, max, on");
                CHECK_STR(c->resume_latency, "n/a", "resume_latency = n/a");
                CHECK(c->min_freq_enabled && c->min_freq_max, "min_freq = max");
                CHECK(c->boost == PM_BOOST_ON, "boost = on");
        }
        {
                _cleanup_config_ Config *c = parse_ok("[pm]\nresume_latency = 2147483646\n", "resume_latency max");
                CHECK_STR(c->resume_latency, "2147483646", "resume_latency = 2147483646 (S32_MAX - 1)");
        }
        {
                _cleanup_config_ Config *c = parse_ok("[pm]\nresume_latency = 5\nresume_latency = off\nmin_freq = max\n"
                                                      "min_freq = off\nenergy_performance_preference = power\n"
                                                      "energy_performance_preference = off\nboost = on\nboost = keep\n",
                                                      "later off wins");
                CHECK(!c->resume_latency && !c->min_freq_enabled && !c->energy_performance_preference &&
                              c->boost == PM_BOOST_UNSET,
                      "off (and boost = keep) in a later line turns each off again");
        }
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                snprintf(text, sizeof(text), "[pm]\n%s\n", bad[i].line);
                snprintf(what, sizeof(what), "'%s' rejected (%s)", bad[i].line, bad[i].needle);
                check_error(text, 2, bad[i].needle, what);
        }
}

static void test_sysctl(void) {
        static const char *const bad_keys[] = { "a", "net/core/x", "net..core", ".net.core", "net.core.", "net.core.x y",
                                                "net.core.x$", "net" };
        char text[512], what[128];

        CHECK(sysctl_key_is_valid("net.ipv4.tcp_rmem"), "net.ipv4.tcp_rmem is a sysctl name");
        CHECK(sysctl_key_is_valid("net.ipv4.conf.eth-0.rp_filter"), "dashes in components are fine");
        CHECK(sysctl_key_is_valid("kernel.sched_rt_runtime_us"), "two components suffice");
        for (size_t i = 0; i < ELEMENTSOF(bad_keys); i++) {
                snprintf(what, sizeof(what), "sysctl_key_is_valid('%s') is false", bad_keys[i]);
                CHECK(!sysctl_key_is_valid(bad_keys[i]), what);
                snprintf(text, sizeof(text), "[sysctl]\n%s = 1\n", bad_keys[i]);
                snprintf(what, sizeof(what), "[sysctl] '%s' rejected at its line", bad_keys[i]);
                /* A key with white space is not even a key; the rest are bad sysctl names. */
                check_error(text, 2, strchr(bad_keys[i], ' ') ? "not a key" : "not a sysctl name", what);
        }
        {
                _cleanup_config_ Config *c = parse_ok("[sysctl]\nnet.ipv4.tcp_rmem = 4096\t87380\t6291456\n", "tcp_rmem");
                CHECK(c->n_sysctls == 1, "one sysctl");
                if (c->n_sysctls == 1) {
                        CHECK_STR(c->sysctls[0].key, "net.ipv4.tcp_rmem", "sysctl key kept");
                        CHECK_STR(c->sysctls[0].value, "4096\t87380\t6291456", "tabs inside the value kept");
                        CHECK(c->sysctls[0].source.line == 2, "sysctl source line");
                }
        }
        {
                _cleanup_config_ Config *c = parse_ok("[sysctl]\nnet.core.somaxconn = 1024\nvm.swappiness = 1\n"
                                                      "net.core.somaxconn = 4096\n",
                                                      "duplicate sysctl");
                CHECK(c->n_sysctls == 2, "a duplicate sysctl key is one entry");
                if (c->n_sysctls == 2) {
                        CHECK_STR(c->sysctls[0].value, "4096", "duplicate sysctl: the later value wins");
                        CHECK(c->sysctls[0].source.line == 4, "duplicate sysctl: source is the later line");
                }
        }
        check_error("[sysctl]\nnet.core.somaxconn =\n", 2, "net.core.somaxconn", "empty sysctl value rejected");
        {
                /* "key = # comment": white space then '#' starts a comment, leaving no value */
                _cleanup_error_list_ ErrorList errors = ERROR_LIST_EMPTY;
                _cleanup_config_ Config *c = parse("[sysctl]\nnet.core.somaxconn = # just a comment\n", &errors);
                if (!CHECK(errors.n == 1 && starts_with(errors.items[0], NAME ":2: "),
                           "sysctl value that is only a comment rejected at line 2"))
                        print_errors(&errors);
                if (!CHECK(c->n_sysctls == 0, "the comment is not taken as the sysctl's value"))
                        printf("#   value: '%s'\n", c->sysctls[0].value);
        }
        check_error("[daemon]\nmode = # observe\n", 2, "empty value", "a value that is only a comment is empty");
        {
                char value[257];
                memset(value, '7', 256);
                value[256] = '\0';
                snprintf(text, sizeof(text), "[sysctl]\nnet.core.x = %s\n", value);
                check_error(text, 2, NULL, "256-character sysctl value rejected at its line");
        }
        {
                _cleanup_config_ Config *c = parse_ok("[sysctl]\nkernel.core_pattern = a#b\n", "# without a blank before");
                CHECK(c->n_sysctls == 1 && streq(c->sysctls[0].value, "a#b"), "'#' not after white space is part of the value");
        }
}

/* [sysfs]: every bad key and value at its line, with the path named; the keys are paths
 * and may hold what other keys may not (':' in a PCI address, '[' in a glob). */
static void test_sysfs(void) {
        static const struct {
                const char *line;
                const char *error;
        } bad[] = {
                { "/etc/passwd = x", "/etc/passwd is outside /sys" },
                { "/proc/sys/vm/swappiness = 1", "/proc/sys/vm/swappiness is outside /sys" },
                { "sys/kernel/mm/ksm/run = 0", "sys/kernel/mm/ksm/run is not an absolute path" },
                { "/sys/../etc/passwd = x", "/sys/../etc/passwd has a '.' or '..' component" },
                { "/sys/kernel/mm/../../../etc/shadow = x", "has a '.' or '..' component" },
                { "/sys/./kernel/mm/ksm/run = 0", "has a '.' or '..' component" },
                { "/sys/kernel//mm/ksm/run = 0", "/sys/kernel//mm/ksm/run has an empty component" },
                { "/sys/kernel/mm/ksm/ = 0", "has an empty component" },
                { "/sys/class/net/eth[0/mtu = 1500", "/sys/class/net/eth[0/mtu has a '[' without its ']'" },
                { "/sys/class/net/eth\\*/mtu = 1500", "holds a backslash" },
                { "/sys/kernel/mm/ksm/run =", "/sys/kernel/mm/ksm/run: empty value" },
                { "/sys/kernel/mm/ksm/run = # off", "/sys/kernel/mm/ksm/run: empty value" },
                { "/sys/kernel/mm/transparent_hugepage/enabled = [never]",
                  "/sys/kernel/mm/transparent_hugepage/enabled: value holds a bracket (a choice is written as the bare "
                  "word: never, not [never])" },
                { "/sys/kernel/mm/transparent_hugepage/enabled = always [never]", "value holds a bracket" },
                /* Files that act when written: kept "at their value" they would act again
                 * on every correction. */
                { "/sys/bus/pci/devices/0000:00:1f.2/remove = 1",
                  "/sys/bus/pci/devices/0000:00:1f.2/remove is a file that acts when written" },
                { "/sys/bus/pci/rescan = 1", "/sys/bus/pci/rescan is a file that acts when written" },
                { "/sys/bus/pci/devices/*/reset = 1", "/sys/bus/pci/devices/*/reset is a file that acts when written" },
                { "/sys/bus/pci/drivers/ixgbe/unbind = 0000:01:00.0", "unbind is a file that acts when written" },
                { "/sys/bus/pci/drivers/ixgbe/bind = 0000:01:00.0", "bind is a file that acts when written" },
                { "/sys/bus/pci/drivers/ixgbe/new_id = 8086 10fb", "new_id is a file that acts when written" },
                { "/sys/bus/pci/drivers/ixgbe/remove_id = 8086 10fb", "remove_id is a file that acts when written" },
                { "/sys/class/net/eth0/uevent = add", "uevent is a file that acts when written" },
                { "/sys/bus/iio/devices/trigger0/trigger_now = 1", "trigger_now is a file that acts when written" },
                { "/sys/class/scsi_host/host0/scan = - - -", "scan is a file that acts when written" },
        };
        char text[512], what[256];

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                snprintf(text, sizeof(text), "[sysfs]\n# a comment\n%s\n", bad[i].line);
                snprintf(what, sizeof(what), "[sysfs] '%s': line 3, '%s'", bad[i].line, bad[i].error);
                check_error(text, 3, bad[i].error, what);
        }
        {
                _cleanup_config_ Config *c = parse_ok(
                        "[sysfs]\n"
                        "/sys/kernel/mm/transparent_hugepage/enabled = never\n"
                        "/sys/devices/system/machinecheck/machinecheck*/ignore_ce = 1 # corrected errors\n"
                        "/sys/bus/pci/devices/0000:00:1f.2/power/control = on ; inline\n"
                        "/sys/class/net/eth[01]/queues/rx-0/rps_cpus = 4096\t87380\n"
                        "[daemon]\n"
                        "mode = enforce\n"
                        "[sysfs]\n"
                        "/sys/kernel/mm/transparent_hugepage/enabled = madvise\n",
                        "[sysfs] paths with '*', ':' and '[', comments after values, a second [sysfs]");
                CHECK(c->n_sysfs == 4, "four entries: a repeated path is one");
                if (c->n_sysfs == 4) {
                        CHECK(streq(c->sysfs[0].path, "/sys/kernel/mm/transparent_hugepage/enabled") &&
                                      streq(c->sysfs[0].value, "madvise") && c->sysfs[0].source.line == 9,
                              "the later value wins, with its line");
                        CHECK(streq(c->sysfs[1].path, "/sys/devices/system/machinecheck/machinecheck*/ignore_ce") &&
                                      streq(c->sysfs[1].value, "1") && c->sysfs[1].source.line == 3,
                              "a pattern, its '#' comment dropped");
                        CHECK(streq(c->sysfs[2].path, "/sys/bus/pci/devices/0000:00:1f.2/power/control") &&
                                      streq(c->sysfs[2].value, "on"),
                              "a path with ':' is whole (a reader splitting at colons would cut it), its ';' comment dropped");
                        CHECK(streq(c->sysfs[3].path, "/sys/class/net/eth[01]/queues/rx-0/rps_cpus") &&
                                      streq(c->sysfs[3].value, "4096\t87380"),
                              "a path with a '[' set is a key, not a section header");
                }
        }
        check_error("[sysfs]\n/sys/kernel/mm/ksm/run = 0\n[daemon]\n/sys/kernel/mm/ksm/run = 0\n", 4,
                    "unknown key '/sys/kernel/mm/ksm/run' in section [daemon]", "a path outside [sysfs] is not a key");
        check_error("[sysfs]\n/sys/kernel/mm/ksm/run = 0\n[bogus]\n/sys/kernel/mm/ksm/run = 0\n", 3,
                    "unknown section [bogus]", "after an unknown section, paths are skipped, not taken as [sysfs]");
        check_error("[sysfs]\n/sys/a b = 1\n", 2, "/sys/a b holds white space", "a path with a blank");
        check_error("[sysfs]\n= 1\n", 2, "missing key", "no path");
        {
                char value[CONFIG_LINE_MAX + 1], line[CONFIG_LINE_MAX + 64];
                memset(value, 'x', sizeof(value) - 1);
                value[sizeof(value) - 1] = '\0';
                snprintf(line, sizeof(line), "[sysfs]\n/sys/ab = %.*s\n", CONFIG_LINE_MAX - 9, value);
                check_error(line, 2, "line too long", "a [sysfs] line over the limit is refused");
                snprintf(line, sizeof(line), "[sysfs]\n/sys/%.*s = 1\n", CONFIG_LINE_MAX - 9, value);
                _cleanup_config_ Config *c = parse_ok(line, "a [sysfs] line at the limit is taken");
                CHECK(c->n_sysfs == 1 && strlen(c->sysfs[0].path) == CONFIG_LINE_MAX - 4, "with its whole path");
        }
}


/* The table itself: every row in a known section, once; every name an enum row lists is
 * one its string table knows and the parser takes; a CPU set row takes exactly the names
 * it lists. */
static void test_key_table(void) {
        bool rows_ok = true, unique = true, enums_ok = true, cpus_ok = true;
        char text[512];

        for (size_t i = 0; i < config_n_keys; i++) {
                const ConfigKey *k = &config_keys[i];
                const ConfigSection *s = config_section_find(k->section);

                if (!s || !k->parse || config_key_find(s, k->name) != k) {
                        printf("# row %zu (%s %s): unknown section, no parser, or not the row found\n", i, k->section,
                               k->name);
                        rows_ok = false;
                }
                for (size_t j = 0; j < i; j++)
                        if (streq(config_keys[j].section, k->section) && streq(config_keys[j].name, k->name))
                                unique = false;
                if (!s || s->argument_example)
                        continue; /* the rows below are tried in sections without a name */
                if (k->parse == config_parse_enum)
                        for (const char *const *n = ((const ConfigEnum *) k->data)->names; *n; n++) {
                                _cleanup_error_list_ ErrorList errors = ERROR_LIST_EMPTY;
                                snprintf(text, sizeof(text), "[%s]\n%s = %s\n", k->section, k->name, *n);
                                _cleanup_config_ Config *c = parse(text, &errors);
                                if (((const ConfigEnum *) k->data)->from_string(*n) < 0 || errors.n > 0) {
                                        printf("# %s: '%s' is listed but not taken\n", k->name, *n);
                                        enums_ok = false;
                                }
                        }
                if (k->parse == config_parse_cpus)
                        for (CpusKind kind = CPUS_HOUSEKEEPING; kind < _CPUS_KIND_MAX; kind++) {
                                _cleanup_error_list_ ErrorList errors = ERROR_LIST_EMPTY;
                                snprintf(text, sizeof(text), "[%s]\n%s = %s\n", k->section, k->name,
                                         cpus_kind_to_string(kind));
                                _cleanup_config_ Config *c = parse(text, &errors);
                                bool allowed = k->cpu_names & (1u << kind);
                                /* A name may still fail a check across keys; parsing it must not. */
                                bool parsed = errors.n == 0 || !strstr(errors.items[0], "is not a CPU list");
                                if (allowed != parsed) {
                                        printf("# %s = %s: %s\n", k->name, cpus_kind_to_string(kind),
                                               allowed ? "refused but listed" : "taken but not listed");
                                        cpus_ok = false;
                                }
                        }
        }
        CHECK(config_n_keys > 40, "the table has the keys lowlatd.conf(5) lists");
        CHECK(rows_ok, "every row's section is known, and its key finds that row");
        CHECK(unique, "no key has two rows in one section");
        CHECK(enums_ok, "every name an enum row lists is taken");
        CHECK(cpus_ok, "config_parse_cpus() takes exactly the names each row lists");
}

/* Every kind a row names is one of the registry's, so that a reader can follow the row to
 * the kind's file; and the keys of the kinds the posture plans say which. */
static void test_key_kinds(void) {
        bool good = true;
        size_t named = 0;

        for (size_t i = 0; i < config_n_keys; i++) {
                _cleanup_free_ char *copy = config_keys[i].kinds ? strdup(config_keys[i].kinds) : NULL;
                char *save = NULL;

                for (char *w = copy ? strtok_r(copy, " ", &save) : NULL; w; w = strtok_r(NULL, " ", &save)) {
                        named++;
                        if (setting_kind_from_string(w) < 0) {
                                printf("# %s.%s names '%s', not a kind\n", config_keys[i].section, config_keys[i].name, w);
                                good = false;
                        }
                }
        }
        CHECK(good, "every kind a key row names is in kind.h's registry");
        CHECK(named > 20, "the rows name the kinds they feed");
        CHECK(streq_ptr(config_key_find(config_section_find("cpus"), "hold_timestamping")->kinds, "timestamping_hold"),
              "hold_timestamping feeds timestamping_hold");
}

int main(void) {
        test_key_table();
        test_key_kinds();
        test_scan_interval();
        test_mode();
        test_irqbalance_mode();
        test_noise();
        test_isolated();
        test_overlap();
        test_slices();
        test_partition();
        test_workqueues();
        test_default_affinity_and_pins();
        test_pm();
        test_pm_power();
        test_sysctl();
        test_sysfs();
        return tap_finish();
}
