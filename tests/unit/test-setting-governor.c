/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* governor (lib/setting/governor.c): available governors only, trimmed reads, CPUs without
 * cpufreq. */
#include "setting-fixture.h"
#include "setting/governor.h"

static void test_governor(void) {
        Fixture f;
        Setting *good = NULL, *bad = NULL, *nocpufreq = NULL;

        fixture_init(&f);
        if (!CHECK(fixture_start(&f, ""), "governor fixture"))
                { fixture_done(&f); return; }

        CHECK(setting_new_governor(0, "performance", &good) == 0, "cpu0 governor setting");
        CHECK_STR(good->object, "cpu0", "governor object is cpu0");
        setting_reconcile(&f.rc, good, T0, 0);
        CHECK_STR(events_take(&f), "drift corrected", "an available governor is set");
        CHECK_STR(strstrip((char *) tree_read(&f, "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")),
                  "performance", "scaling_governor written");

        /* Leading white space in what the kernel prints is not part of the value. */
        tree_write(&f, "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "  performance\n");
        setting_reconcile(&f.rc, good, T0 + USEC_PER_SEC, 0);
        CHECK_STR(events_take(&f), "", "leading white space in the file is not drift");
        CHECK_STR(good->observed, "performance", "observed value is trimmed at the start");

        CHECK(setting_new_governor(1, "schedutil", &bad) == 0, "cpu1 governor setting");
        setting_reconcile(&f.rc, bad, T0, 0);
        setting_reconcile(&f.rc, bad, T0 + USEC_PER_SEC, 0);
        {
                const char *ev = events_take(&f);
                const char *first = strstr(ev, "unsupported");
                if (!CHECK(first && !strstr(first + 1, "unsupported") && !strstr(ev, "correction-failed"),
                           "an unavailable governor is unsupported once, not a failure"))
                        printf("#   events: '%s'\n", ev);
        }
        CHECK(bad->state == SETTING_UNSUPPORTED, "unavailable governor state");
        if (!CHECK(bad->reason && strstr(bad->reason, "performance") && strstr(bad->reason, "powersave"),
                   "the reason names the available governors"))
                printf("#   reason: %s\n", bad->reason ?: "(null)");
        CHECK_STR(tree_read(&f, "sys/devices/system/cpu/cpu1/cpufreq/scaling_governor"), "powersave\n",
                  "an unavailable governor is not written");

        CHECK(setting_new_governor(2, "performance", &nocpufreq) == 0, "cpu2 governor setting");
        setting_reconcile(&f.rc, nocpufreq, T0, 0);
        CHECK_STR(events_take(&f), "unsupported", "a CPU without cpufreq is unsupported");
        setting_free(good);
        setting_free(bad);
        setting_free(nocpufreq);
        fixture_done(&f);
}

int main(void) {
        test_governor();
        return tap_finish();
}
