/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* [nic "GLOB"] resolution: every matching section in order, later keys winning. */
#include "config/config.h"
#include "config/nic-posture.h"
#include "tap.h"
#include "basic/util.h"

static Config *parse(const char *text) {
        _cleanup_error_list_ ErrorList errors = ERROR_LIST_EMPTY;
        Config *c = config_new();

        if (!c || config_parse_string(c, "t.conf", text, &errors) < 0 || errors.n > 0) {
                for (size_t i = 0; i < errors.n; i++)
                        printf("#   %s\n", errors.items[i]);
                abort();
        }
        return c;
}

static const NicFeature *feature(const NicPosture *p, const char *name) {
        for (size_t i = 0; i < p->n_features; i++)
                if (streq(p->features[i]->name, name))
                        return p->features[i];
        return NULL;
}

static void test_resolve(void) {
        _cleanup_config_ Config *c = parse("[nic \"eth*\"]\n"
                                           "rx_usecs = 0\n"
                                           "adaptive_rx = off\n"
                                           "gro = off\n"
                                           "qdisc = fq\n"
                                           "[nic \"eth1\"]\n"
                                           "rx_usecs = 50\n"
                                           "gro = on\n"
                                           "irq_cpus = 1\n"
                                           "[nic \"lo\"]\n"
                                           "qdisc = noqueue\n");
        NicPosture p;

        CHECK(nic_posture_resolve(c, NULL, "eth0", &p) == 1, "eth0 matches");
        CHECK(p.param_set[ETHTOOL_PARAM_RX_USECS] && p.param[ETHTOOL_PARAM_RX_USECS] == 0, "eth0 rx_usecs 0");
        CHECK(feature(&p, "rx-gro") && !feature(&p, "rx-gro")->on, "eth0 gro off");
        CHECK(p.qdisc && streq(p.qdisc, "fq"), "eth0 qdisc fq");
        CHECK(!p.irq_cpus, "eth0 has no irq_cpus");
        nic_posture_done(&p);

        CHECK(nic_posture_resolve(c, NULL, "eth1", &p) == 1, "eth1 matches both sections");
        CHECK(p.param[ETHTOOL_PARAM_RX_USECS] == 50, "the later section's rx_usecs wins");
        CHECK(p.param_set[ETHTOOL_PARAM_ADAPTIVE_RX] && p.param[ETHTOOL_PARAM_ADAPTIVE_RX] == 0,
              "keys the later section does not set come from the earlier one");
        CHECK(p.n_features == 1 && feature(&p, "rx-gro")->on, "gro overridden to on, once");
        CHECK(p.qdisc && streq(p.qdisc, "fq"), "qdisc from the earlier section");
        CHECK(p.irq_cpus && cpuset_contains(p.irq_cpus, 1), "irq_cpus from the later section");
        nic_posture_done(&p);

        CHECK(nic_posture_resolve(c, NULL, "wlan0", &p) == 0, "no section matches wlan0");
        CHECK(nic_posture_resolve(c, NULL, "eth10", &p) == 1 && p.param[ETHTOOL_PARAM_RX_USECS] == 0,
              "eth10 matches eth* but not eth1");
        nic_posture_done(&p);
}

static void test_order_across_files(void) {
        _cleanup_config_ Config *c = config_new();
        _cleanup_error_list_ ErrorList errors = ERROR_LIST_EMPTY;
        NicPosture p;

        config_parse_string(c, "main.conf", "[nic \"eth0\"]\nrx_usecs = 1\ntx_usecs = 2\n", &errors);
        config_parse_string(c, "10-drop.conf", "[nic \"eth*\"]\nrx_usecs = 3\n", &errors);
        CHECK(errors.n == 0, "both files parse");
        CHECK(nic_posture_resolve(c, NULL, "eth0", &p) == 1, "eth0 matches");
        CHECK(p.param[ETHTOOL_PARAM_RX_USECS] == 3, "a drop-in's broader section still overrides, being later");
        CHECK(p.param[ETHTOOL_PARAM_TX_USECS] == 2, "key by key: tx_usecs stays");
        nic_posture_done(&p);
}

int main(void) {
        test_resolve();
        test_order_across_files();
        return tap_finish();
}
