/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cpu_dma_latency (lib/setting/dma.c): the request held open, and a stricter one is fine. */
#include "setting/dma.h"
#include "setting-fixture.h"

static void test_cpu_dma_latency(void) {
        Fixture f;
        Setting *s = NULL, *lax = NULL;
        int hold;

        fixture_init(&f);
        if (!CHECK(fixture_start(&f, ""), "latency fixture"))
                { fixture_done(&f); return; }

        CHECK(setting_new_cpu_dma_latency(10, &s) == 0, "latency setting");
        CHECK_STR(s->desired, "10", "desired latency as decimal");
        setting_reconcile(&f.rc, s, T0, 0);
        CHECK_STR(events_take(&f), "drift corrected", "latency 2000000000 → 10");
        CHECK(tree_size(&f, "dev/cpu_dma_latency") == (off_t) sizeof(int32_t), "the file holds 4 bytes");
        CHECK(tree_read_int32(&f, "dev/cpu_dma_latency") == 10, "the file holds a native int32 10");
        CHECK(fd_is_open(setting_dma_hold_fd(s)), "hold_fd is kept open");
        CHECK_STR(s->observed, "10", "observed latency is 10");
        hold = setting_dma_hold_fd(s);

        setting_reconcile(&f.rc, s, T0 + USEC_PER_SEC, 0);
        CHECK_STR(events_take(&f), "", "no change: nothing reported");
        CHECK(setting_dma_hold_fd(s) == hold && fd_is_open(hold), "the same hold_fd stays open");

        tree_write_int32(&f, "dev/cpu_dma_latency", 100);
        setting_reconcile(&f.rc, s, T0 + 2 * USEC_PER_SEC, 0);
        CHECK_STR(events_take(&f), "drift corrected", "a laxer value is drift, corrected");
        CHECK(tree_read_int32(&f, "dev/cpu_dma_latency") == 10, "written back through the hold");
        CHECK(setting_dma_hold_fd(s) == hold, "through the same hold_fd");

        tree_write_int32(&f, "dev/cpu_dma_latency", 5);
        CHECK(setting_new_cpu_dma_latency(20, &lax) == 0, "second latency setting");
        setting_reconcile(&f.rc, lax, T0, 0);
        CHECK_STR(events_take(&f), "", "a stricter (lower) observed latency counts as ok");
        CHECK(lax->state == SETTING_OK, "stricter latency state is ok");
        /* lowlatd.conf(5): lowlatd holds the file open for as long as it runs; without a hold
         * of its own, lowlatd's constraint vanishes when the stricter holder closes its fd. */
        CHECK(fd_is_open(setting_dma_hold_fd(lax)), "enforce mode holds its own request even when a stricter one exists");

        setting_free(s);
        setting_free(lax);
        fixture_done(&f);
}

int main(void) {
        test_cpu_dma_latency();
        return tap_finish();
}
