/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* NIC settings (lib/setting/nic.c): replanning an interface keeps each setting's history. */
#include "setting-fixture.h"
#include "setting/nic.h"
#include "setting/table.h"

/* Replanning an interface (a rename, a link coming up) keeps what was learnt about each of
 * its settings, through setting_inherit(): an unsupported one is not reported again, a
 * fight and a failure's retry time go on. */
static void test_nic_replan_keeps_history(void) {
        Fixture f;
        SettingTable t;
        Setting *s;

        fixture_init(&f);
        if (!CHECK(fixture_start(&f, "[nic \"eth*\"]\nrx_usecs = 0\n[nic \"eth1\"]\nrx_frames = 1\n"),
                   "NIC fixture"))
                { fixture_done(&f); return; }
        table_init(&t, NULL);
        /* No ethtool client: the kernel "has no ethtool netlink", so the setting is
         * unsupported, which is what a replan must remember. */
        CHECK(nic_table_plan(&t, NULL, f.host, f.posture, 7, "eth0") == 1 && t.n == 1, "eth0 is planned: one setting");
        table_reconcile_all(&t, &f.rc, T0, 0);
        CHECK_STR(events_take(&f), "unsupported", "without ethtool netlink: unsupported, reported");
        s = table_find(&t, SETTING_NIC_COALESCE, "eth0/rx_usecs");
        if (!CHECK(s && s->state == SETTING_UNSUPPORTED, "eth0/rx_usecs is unsupported"))
                goto out;
        s->fighting = true;
        s->last_drift_usec = T0;
        s->last_correction_usec = T0 + 1;
        s->retry_after_usec = T0 + 42;

        CHECK(nic_table_plan(&t, NULL, f.host, f.posture, 7, "eth1") == 1 && t.n == 2, "renamed to eth1: two settings");
        CHECK(!table_find(&t, SETTING_NIC_COALESCE, "eth0/rx_usecs"), "the old name is gone");
        s = table_find(&t, SETTING_NIC_COALESCE, "eth1/rx_usecs");
        CHECK(s && s->state == SETTING_UNSUPPORTED && s->reason && strstr(s->reason, "ethtool netlink"),
              "the same key under the new name keeps its state and reason");
        CHECK(s && s->fighting && s->last_drift_usec == T0 && s->last_correction_usec == T0 + 1 &&
                      s->retry_after_usec == T0 + 42,
              "and its history: the fight, the last drift and correction, the retry time");
        s = table_find(&t, SETTING_NIC_COALESCE, "eth1/rx_frames");
        CHECK(s && s->state == SETTING_PENDING, "a key only the new name has starts afresh");
        table_reconcile_all(&t, &f.rc, T0 + USEC_PER_SEC, 0);
        CHECK_STR(events_take(&f), "unsupported", "only the new key is reported: the kept one is not reported again");

        CHECK(nic_table_drop(&t, f.posture, 7) == 0 && t.n == 0 && !nic_table_has(&t, 7), "dropping eth1 drops both");
out:
        table_done(&t);
        fixture_done(&f);
}

int main(void) {
        test_nic_replan_keeps_history();
        return tap_finish();
}
