/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lowlatd.conf: the sections with a quoted name: [nic "PATTERN"], [service]/[process] and [kthread
 * "GLOB"] (lib/config/section-nic.c, section-apps.c, section-kthread.c). */
#include <fcntl.h>
#include <ftw.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "config/apps.h"
#include "config/config.h"
#include "basic/errorlist.h"
#include "host/ethtool.h"
#include "faketree.h"
#include "basic/macro.h"
#include "tap.h"
#include "basic/util.h"

#include "config-fixture.h"

static const NicFeature *find_feature(const NicSection *n, const char *name) {
        for (size_t i = 0; i < n->n_features; i++)
                if (streq(n->features[i].name, name))
                        return &n->features[i];
        return NULL;
}

static void test_nic_sections(void) {
        _cleanup_config_ Config *c = parse_ok("[nic \"eth*\"]\n"
                                              "adaptive_rx = off\n"
                                              "rx_usecs = 0\n"
                                              "rx_frames_irq = 8\n"
                                              "rx_ring = 4096\n"
                                              "combined_channels = 4\n"
                                              "gro = off\n"
                                              "tso = on\n"
                                              "feature.rx-udp-gro-forwarding = on\n"
                                              "qdisc = fq\n"
                                              "irq_cpus = 2-3\n"
                                              "[nic \"eth[01]\"]\n"
                                              "rx_usecs = 8\n",
                                              "a full [nic] section and one whose glob holds ']' parse");
        const NicSection *n;

        if (!CHECK(c->n_nics == 2, "two [nic] sections"))
                return;
        n = &c->nics[0];
        CHECK_STR(n->glob, "eth*", "first glob");
        CHECK_STR(c->nics[1].glob, "eth[01]", "a glob with brackets is kept whole");
        CHECK(n->params[ETHTOOL_PARAM_ADAPTIVE_RX].set && n->params[ETHTOOL_PARAM_ADAPTIVE_RX].value == 0,
              "adaptive_rx = off");
        CHECK(n->params[ETHTOOL_PARAM_RX_USECS].set && n->params[ETHTOOL_PARAM_RX_USECS].value == 0, "rx_usecs = 0");
        CHECK(n->params[ETHTOOL_PARAM_RX_FRAMES_IRQ].value == 8, "rx_frames_irq = 8");
        CHECK(n->params[ETHTOOL_PARAM_RX_RING].value == 4096, "rx_ring = 4096");
        CHECK(n->params[ETHTOOL_PARAM_COMBINED_CHANNELS].value == 4, "combined_channels = 4");
        CHECK(!n->params[ETHTOOL_PARAM_TX_USECS].set, "a key not written is not set");
        CHECK(find_feature(n, "rx-gro") && !find_feature(n, "rx-gro")->on, "gro = off is rx-gro off");
        CHECK(find_feature(n, "tx-tcp*-segmentation") && !find_feature(n, "tx-tcp-segmentation"),
              "tso is ethtool's own pattern tx-tcp*-segmentation, matched against the kernel's names when a NIC is "
              "planned (a fixed list misses what a newer kernel adds)");
        CHECK(find_feature(n, "rx-udp-gro-forwarding") && find_feature(n, "rx-udp-gro-forwarding")->on,
              "feature.NAME = on");
        CHECK_STR(n->qdisc, "fq", "qdisc = fq");
        CHECK(n->irq_cpus.kind == CPUS_LIST && cpuset_count(&n->irq_cpus.cpus) == 2, "irq_cpus = 2-3");
        CHECK(n->params[ETHTOOL_PARAM_RX_USECS].source.line == 3, "values remember their line");
}

static void test_nic_link_keys(void) {
        _cleanup_config_ Config *c = parse_ok("[nic \"eth*\"]\n"
                                              "pause_autoneg = off\n"
                                              "pause_rx = off\n"
                                              "pause_tx = on\n"
                                              "eee = off\n"
                                              "txqueuelen = 10000\n"
                                              "[nic \"eth1\"]\n"
                                              "txqueuelen = 0\n",
                                              "pause, eee and txqueuelen parse");
        const NicSection *n;

        if (!CHECK(c->n_nics == 2, "two [nic] sections"))
                return;
        n = &c->nics[0];
        CHECK(n->params[ETHTOOL_PARAM_PAUSE_AUTONEG].set && n->params[ETHTOOL_PARAM_PAUSE_AUTONEG].value == 0,
              "pause_autoneg = off");
        CHECK(n->params[ETHTOOL_PARAM_PAUSE_RX].set && n->params[ETHTOOL_PARAM_PAUSE_RX].value == 0, "pause_rx = off");
        CHECK(n->params[ETHTOOL_PARAM_PAUSE_TX].set && n->params[ETHTOOL_PARAM_PAUSE_TX].value == 1, "pause_tx = on");
        CHECK(n->params[ETHTOOL_PARAM_EEE].set && n->params[ETHTOOL_PARAM_EEE].value == 0, "eee = off");
        CHECK(ethtool_param_group(ETHTOOL_PARAM_PAUSE_RX) == ETHTOOL_GROUP_PAUSE &&
                      ethtool_param_group(ETHTOOL_PARAM_EEE) == ETHTOOL_GROUP_EEE,
              "pause_* are PAUSE_SET attributes, eee an EEE_SET one");
        CHECK(n->txqueuelen_set && n->txqueuelen == 10000 && n->txqueuelen_source.line == 6, "txqueuelen = 10000, line 6");
        CHECK(c->nics[1].txqueuelen_set && c->nics[1].txqueuelen == 0, "txqueuelen = 0 is a value (IFLA_TXQLEN allows it)");

        check_error("[nic \"eth0\"]\npause_rx = sometimes\n", 2, "pause_rx: 'sometimes' is not on or off",
                    "pause_rx not a boolean");
        check_error("[nic \"eth0\"]\npause_autoneg = 2\n", 2, "on or off", "pause_autoneg not a boolean");
        check_error("[nic \"eth0\"]\neee = \n", 2, "eee", "an empty eee");
        check_error("[nic \"eth0\"]\ntxqueuelen = -5\n", 2, "txqueuelen: '-5' is not a number",
                    "a negative txqueuelen");
        check_error("[nic \"eth0\"]\ntxqueuelen = 4294967296\n", 2, "out of range (0 to 4294967295)", "a txqueuelen past 32 bits");
        check_error("[nic \"eth0\"]\ntxqueuelen = 1000 packets\n", 2, "txqueuelen", "a txqueuelen with a unit");
        check_error("[nic \"eth0\"]\npause = off\n", 2, "unknown key 'pause'", "pause is pause_rx/pause_tx");
}

static void test_nic_errors(void) {
        check_error("[nic]\nrx_usecs = 0\n", 1, "[nic \"PATTERN\"]", "[nic] without a pattern");
        check_error("[nic eth0]\n", 1, "[nic \"PATTERN\"]", "an unquoted pattern");
        check_error("[nic \"eth0\"\n", 1, "']'", "no ']' after the pattern");
        check_error("[nic \"eth0\"] x\n", 1, "unexpected text", "text after the header");
        check_error("[nic \"\"]\n", 1, "interface name pattern", "an empty pattern");
        check_error("[nic \"eth[0\"]\n", 1, "interface name pattern", "an unterminated bracket");
        check_error("[nic \"eth0\"]\nrx_usecs = -1\n", 2, "rx_usecs", "a negative delay");
        check_error("[nic \"eth0\"]\nrx_usecs = 4294967296\n", 2, "out of range (0 to 4294967295)", "a delay past 32 bits");
        check_error("[nic \"eth0\"]\nadaptive_rx = maybe\n", 2, "on or off", "adaptive_rx not a boolean");
        check_error("[nic \"eth0\"]\nrx_ring = 0\n", 2, "0 entries", "an empty ring");
        check_error("[nic \"eth0\"]\ngro = 1x\n", 2, "on or off", "gro not a boolean");
        check_error("[nic \"eth0\"]\nfeature.Rx_GRO = on\n", 2, "feature name", "a feature name in capitals");
        check_error("[nic \"eth0\"]\nfeature. = on\n", 2, "feature name", "an empty feature name");
        check_error("[nic \"eth0\"]\nqdisc = fq codel\n", 2, "qdisc kind", "a qdisc kind with a space");
        check_error("[nic \"eth0\"]\nirq_cpus = \n", 2, "empty value", "empty irq_cpus");
        check_error("[nic \"eth0\"]\nirq_cpus = 3-1\n", 2, "CPU list", "a backwards irq_cpus range");
        check_error("[nic \"eth0\"]\nbogus = 1\n", 2, "unknown key 'bogus' in section [nic \"eth0\"]", "unknown nic key");
        check_error("[nic \"eth0\"\nrx_usecs = 1\n", 1, "']'",
                    "keys under a broken [nic] header are skipped, not reported again");
        check_error("[daemon]\nudev_source = systemd\n", 2, "udev_source", "udev_source must be udev or kernel");
}

static void test_app_sections(void) {
        _cleanup_config_ Config *c = parse_ok("[service \"trader.service\"]\npolicy = fifo\npriority = 80\nmlock = yes\n"
                                              "[process \"matcher\"]\npolicy = rr\nhugepages = yes\n",
                                              "[service] and [process] sections parse");

        if (CHECK(c->n_apps == 2, "two application sections")) {
                CHECK(c->apps[0].kind == APP_SERVICE && streq(c->apps[0].name, "trader"),
                      "a service name loses its .service suffix");
                CHECK(c->apps[0].policy == SCHED_FIFO && c->apps[0].priority == 80 && c->apps[0].mlock &&
                              !c->apps[0].hugepages,
                      "service keys");
                CHECK(c->apps[1].kind == APP_PROCESS && streq(c->apps[1].name, "matcher") &&
                              c->apps[1].policy == SCHED_RR && c->apps[1].hugepages && c->apps[1].priority == 0,
                      "process keys, priority unchecked by default");
        }
        check_error("[process \"waytoolongprocessname\"]\n", 1, "at most 15", "a comm longer than the kernel's");
        check_error("[service \"a b\"]\n", 1, "unit name", "a unit name with a space");
        /* #24 item 3: lowlatd names no unit it did not read here, and these hold no byte a
         * terminal or the journal would act on: ESC, U+009B (CSI), U+202E, a byte not UTF-8. */
        check_error("[service \"a\x1b[2Jb\"]\n", 1, "unit name", "a unit name with ESC");
        check_error("[service \"a\xc2\x9b" "1mb\"]\n", 1, "unit name", "a unit name with U+009B (CSI)");
        check_error("[service \"a\xe2\x80\xae" "b\"]\n", 1, "unit name", "a unit name with U+202E");
        check_error("[service \"a\xff" "b\"]\n", 1, "unit name", "a unit name with a byte that is not UTF-8");
        check_error("[service trader]\n", 1, "expected [service", "an unquoted service name");
        check_error("[service \"t\"]\npriority = 100\n", 2, "1 to 99", "a priority above 99");
        check_error("[service \"t\"]\npriority = 0\n", 2, "1 to 99", "a priority of 0");
        check_error("[process \"m\"]\npolicy = other\n", 2, "fifo or rr", "a policy that is not real-time");
        check_error("[process \"m\"]\nmlock = maybe\n", 2, "yes or no", "mlock not a boolean");
        check_error("[process \"m\"]\nbogus = 1\n", 2, "unknown key 'bogus' in section [process \"m\"]",
                    "unknown key in [process]");
}

/* Which sections a running process is (task_match_apps(), section-apps.c), on a fake /proc. */
static void check_match_apps(const Host *h) {
        _cleanup_error_list_ ErrorList errors = ERROR_LIST_EMPTY;
        _cleanup_config_ Config *c = config_new();
        static const char text[] = "[process \"engine\"]\n[service \"trader\"]\n[process \"x\"]\n";
        bool matched[3] = { true, true, true };

        if (!CHECK(c && config_parse_string(c, "t.conf", text, &errors) == 0 && errors.n == 0 && c->n_apps == 3,
                   "a config with three applications"))
                return;

        CHECK(task_match_apps(h, c, 100, "engine", matched) == 2, "comm and cgroup both match");
        CHECK(matched[0] && matched[1] && !matched[2], "each section is marked");
        CHECK(task_match_apps(h, c, 100, "engine", NULL) == 1, "without the array, the first match ends it");
        CHECK(task_match_apps(h, c, 101, "engine", matched) == 1 && !matched[1], "another cgroup: the process only");
        CHECK(task_match_apps(h, c, 101, "other", NULL) == 0, "neither");
        CHECK(task_match_apps(h, c, 102, "other", matched) == 0 && !matched[1],
              "an unreadable cgroup matches no service");
        CHECK(app_matches(&c->apps[0], "engine", NULL), "[process] needs no cgroup");
        CHECK(!app_matches(&c->apps[1], "trader", NULL), "[service] is never matched by comm");
}

/* Which sections a running process is (task_match_apps(), section-apps.c), on a fake /proc. */
static void test_match_apps(void) {
        _cleanup_(host_freep) Host *h = NULL;
        char root[64];

        faketree_mkdtemp(root, sizeof(root), "test-config-apps");
        faketree_writef(root, "0::/system.slice/trader.service/worker\n", "proc/100/cgroup");
        faketree_writef(root, "0::/user.slice\n", "proc/101/cgroup");
        if (CHECK(host_open(root, &h) == 0, "the fake tree opens"))
                check_match_apps(h);
        faketree_remove(root);
}

static void test_kthreads(void) {
        _cleanup_config_ Config *c = parse_ok("[cpus]\nkthreads = housekeeping\n"
                                              "[kthread \"ksoftirqd/*\"]\npolicy = fifo\npriority = 2\n"
                                              "[kthread \"rcuo*\"]\ncpus = housekeeping\n"
                                              "[kthread \"kswapd0\"]\ncpus = 0-1\npolicy = other\n"
                                              "[kthread \"rcuc/*\"]\ncpus = isolated\npolicy = rr\npriority = 99\n",
                                              "kthreads and [kthread] sections parse");

        CHECK(c->kthreads_housekeeping, "kthreads = housekeeping");
        if (CHECK(c->n_kthread_sections == 4, "four [kthread] sections")) {
                const KthreadSection *k = c->kthread_sections;
                CHECK(streq(k[0].glob, "ksoftirqd/*") && k[0].cpus.kind == CPUS_UNSET &&
                              k[0].policy == SCHED_FIFO && k[0].priority == 2,
                      "ksoftirqd/*: fifo 2, CPUs left alone");
                CHECK(k[1].cpus.kind == CPUS_HOUSEKEEPING && k[1].policy == -1 && k[1].source.line == 6,
                      "rcuo*: housekeeping CPUs, policy left alone, the header's line kept");
                CHECK(k[2].cpus.kind == CPUS_LIST && cpuset_count(&k[2].cpus.cpus) == 2 && k[2].policy == SCHED_OTHER &&
                              k[2].priority == 0,
                      "kswapd0: CPUs 0-1, policy other");
                CHECK(k[3].cpus.kind == CPUS_ISOLATED && k[3].policy == SCHED_RR && k[3].priority == 99,
                      "rcuc/*: isolated CPUs, rr 99");
        }
        config_free(c);
        c = parse_ok("[cpus]\nkthreads = housekeeping\nkthreads = none\n", "kthreads = none");
        CHECK(!c->kthreads_housekeeping, "the later line wins");

        check_error("[cpus]\nkthreads = yes\n", 2, "kthreads: 'yes' is not housekeeping or none",
                    "kthreads takes housekeeping or none");
        check_error("[kthread]\ncpus = 0\n", 1, "expected [kthread \"GLOB\"]", "a [kthread] header without a glob");
        check_error("[kthread ksoftirqd/*]\n", 1, "expected [kthread \"GLOB\"]", "an unquoted glob");
        check_error("[kthread \"a b\"]\npolicy = other\n", 1, "not a valid kernel thread name pattern",
                    "a glob with a space");
        check_error("[kthread \"irq[1\"]\n", 1, "not a valid kernel thread name pattern", "a glob with an open bracket");
        check_error("[kthread \"x\"] junk\n", 1, "unexpected text after section header: 'junk'", "text after the header");
        check_error("[kthread \"x\"]\npolicy = batch\npriority = 5\n", 2, "policy: 'batch'",
                    "a bad policy is reported once, not also as missing for the priority");
        check_error("[kthread \"x\"]\ncpus = 9-3\n", 2, "cpus: '9-3' is not a CPU list", "a backwards CPU range");
        check_error("[kthread \"x\"]\ncpus = none\n", 2, "cpus: 'none' is not a CPU list (e.g. 2-3,6), housekeeping or isolated",
                    "cpus = none");
        check_error("[kthread \"x\"]\ncpus = 99999\n", 2, "too large", "a CPU number beyond the limit");
        check_error("[kthread \"x\"]\npolicy = deadline\n", 2, "policy: 'deadline' is not fifo, rr or other",
                    "an unsupported policy");
        check_error("[kthread \"x\"]\npolicy = fifo\npriority = 0\n", 3, "1 to 99", "priority 0");
        check_error("[kthread \"x\"]\npolicy = fifo\npriority = 100\n", 3, "1 to 99", "priority 100");
        check_error("[kthread \"x\"]\npolicy = fifo\npriority = high\n", 3, "1 to 99", "a priority that is no number");
        check_error("[kthread \"x\"]\npolicy = fifo\n", 2, "policy = fifo needs priority", "fifo without a priority");
        check_error("[kthread \"x\"]\npolicy = rr\n", 2, "policy = rr needs priority", "rr without a priority");
        check_error("[kthread \"x\"]\npriority = 5\n", 2, "priority needs policy = fifo or rr in the same [kthread \"x\"]",
                    "a priority without a policy");
        check_error("[kthread \"x\"]\npolicy = other\npriority = 5\n", 3, "policy = other takes no priority",
                    "other with a priority");
        check_error("[kthread \"x\"]\nnice = 5\n", 2, "unknown key 'nice' in section [kthread \"x\"]",
                    "an unknown key in [kthread]");
        check_error("[kthread \"x\"]\ncpus =\n", 2, "cpus: empty value", "an empty value");
        check_error("[kthreads]\n", 1, "unknown section [kthreads]", "[kthreads] is no [kthread] header");
}

int main(void) {
        test_nic_sections();
        test_nic_link_keys();
        test_nic_errors();
        test_app_sections();
        test_match_apps();
        test_kthreads();
        return tap_finish();
}
