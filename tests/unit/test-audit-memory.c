/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* audit-memory.c against fake --root trees: swap in use. */
#include "audit-fixture.h"

static void test_swap(void) {
        Fixture f;

        fixture_init(&f);
        tree_write(&f, "proc/meminfo", "MemTotal:        8000000 kB\nSwapCached:          12 kB\n"
                                       "SwapTotal:       2097148 kB\nSwapFree:        2096000 kB\n");
        if (fixture_run(&f, healthy_config)) {
                CHECK(fires(&f, "memory.swap", "swap", SEVERITY_WARNING), "1148 kB swapped out: warning");
                CHECK(message_has(&f, "memory.swap", "1148 kB of swap is in use (of 2097148 kB)"), "how much");
                CHECK(message_has(&f, "memory.swap", "swapoff -a"), "the fix");
        }
        tree_write(&f, "proc/meminfo", "MemTotal:        8000000 kB\nSwapTotal:             0 kB\nSwapFree:              0 kB\n");
        if (fixture_run(&f, healthy_config))
                CHECK(quiet(&f, "memory.swap"), "no swap at all: quiet");
        tree_write(&f, "proc/meminfo", "MemTotal:        8000000 kB\nSwapTotal:    x kB\n");
        if (fixture_run(&f, healthy_config))
                CHECK(quiet(&f, "memory.swap"), "an unreadable meminfo: quiet");
        fixture_done(&f);
}

int main(void) {
        test_swap();
        return audit_fixture_finish(AUDIT_TEST_MEMORY);
}
