/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* audit-net.c against fake --root trees: RPS onto isolated CPUs and flow tables. */
#include "audit-fixture.h"

/* RPS onto the isolated CPUs, from the host or from [nic] rps_cpus; flow tables without the
 * global one. */
static void test_rps(void) {
        char config[1024];
        Fixture f;

        fixture_init(&f);
        tree_write(&f, "sys/class/net/eth0/queues/rx-0/rps_cpus", "c\n");
        tree_write(&f, "sys/class/net/eth0/queues/rx-0/rps_flow_cnt", "0\n");
        tree_write(&f, "sys/class/net/eth0/queues/rx-1/rps_cpus", "1\n");
        tree_write(&f, "sys/class/net/eth0/queues/rx-1/rps_flow_cnt", "0\n");
        tree_write(&f, "sys/class/net/eth0/queues/tx-0/xps_cpus", "f\n");
        tree_write(&f, "sys/class/net/eth1/queues/rx-0/rps_cpus", "3\n");
        tree_write(&f, "sys/class/net/eth1/queues/rx-0/rps_flow_cnt", "4096\n");
        tree_write(&f, "proc/sys/net/core/rps_sock_flow_entries", "0\n");
        if (fixture_run(&f, healthy_config)) {
                CHECK(fires(&f, "net.rps-isolated", "eth0", SEVERITY_WARNING), "eth0's rx-0 steers to CPUs 2-3: warning");
                CHECK(message_has(&f, "net.rps-isolated", "onto isolated CPUs 2-3"), "the isolated CPUs are named");
                CHECK(message_has(&f, "net.rps-isolated", "echo 3 > /sys/class/net/eth0/queues/rx-N/rps_cpus"),
                      "the fix writes the housekeeping mask");
                CHECK(count_id(&f, "net.rps-isolated") == 1, "eth1 (CPUs 0-1) and XPS are not reported");
                CHECK(fires(&f, "net.rps-flow-table", "net.core.rps_sock_flow_entries", SEVERITY_WARNING),
                      "eth1 has a flow table and rps_sock_flow_entries is 0: warning");
                CHECK(message_has(&f, "net.rps-flow-table", "receive queues of eth1 flow tables"),
                      "the interface with flow tables is named");
        }
        snprintf(config, sizeof(config), "%s[nic \"eth0\"]\nrps_cpus = housekeeping\n[nic \"eth1\"]\nrps_cpus = 2\n"
                 "rps_flow_cnt = 0\n", healthy_config);
        if (fixture_run(&f, config)) {
                CHECK(fires(&f, "net.rps-isolated", "eth1", SEVERITY_WARNING) && count_id(&f, "net.rps-isolated") == 1,
                      "what [nic] rps_cpus will hold counts: eth0 is fine, eth1 = 2 is reported");
                CHECK(message_has(&f, "net.rps-isolated", "(as [nic] rps_cpus asks)"), "and says the config asks it");
                CHECK(quiet(&f, "net.rps-flow-table"), "rps_flow_cnt = 0 drops eth1's flow table: quiet");
        }
        snprintf(config, sizeof(config), "%s[sysctl]\nnet.core.rps_sock_flow_entries = 32768\n", healthy_config);
        if (fixture_run(&f, config))
                CHECK(quiet(&f, "net.rps-flow-table"), "rps_sock_flow_entries in [sysctl] counts");
        fixture_done(&f);
}

static void test_timestamping(void) {
        Fixture f;

        fixture_init(&f);
        if (fixture_run(&f, "[cpus]\nisolated = 2-3\n"))
                CHECK(fires(&f, "net.timestamping-unheld", "SO_TIMESTAMP", SEVERITY_INFO) &&
                              message_has(&f, "net.timestamping-unheld", "hold_timestamping = yes"),
                      "not held by lowlatd: info, the key named");
        if (fixture_run(&f, "[cpus]\nisolated = 2-3\nhold_timestamping = yes\n"))
                CHECK(quiet(&f, "net.timestamping-unheld"), "held by lowlatd: quiet");
        if (fixture_run(&f, "[daemon]\nmode = observe\n[cpus]\nisolated = 2-3\nhold_timestamping = yes\n"))
                CHECK(fires(&f, "net.timestamping-unheld", "SO_TIMESTAMP", SEVERITY_INFO) &&
                              message_has(&f, "net.timestamping-unheld", "observes"),
                      "configured but observing: info, saying so");
        if (fixture_run(&f, "[cpus]\nisolated = none\n"))
                CHECK(quiet(&f, "net.timestamping-unheld"), "no isolated CPU: nothing to protect, quiet");
        fixture_done(&f);
}

int main(void) {
        test_timestamping();
        test_rps();
        return audit_fixture_finish(AUDIT_TEST_NET);
}
