/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* daemon/bus-limit.c: one connection's share, the window's loop-time budget, the table of
 * senders that lasts one window, and a new window forgetting the last. */
#include <stdio.h>

#include "bus-limit.h"
#include "tap.h"

#define T0 (1000 * USEC_PER_SEC)

static void test_per_sender(void) {
        BusLimit l = {};
        bool all = true;

        for (unsigned i = 0; i < BUS_LIMIT_PER_SENDER; i++)
                all = all && bus_limit_admit(&l, ":1.5", T0 + i) == BUS_LIMIT_ADMIT;
        CHECK(all, "a connection's first calls of a window are admitted");
        CHECK(bus_limit_admit(&l, ":1.5", T0 + 10) == BUS_LIMIT_SENDER_OVER, "the next one is refused");
        CHECK(bus_limit_admit(&l, ":1.6", T0 + 11) == BUS_LIMIT_ADMIT, "another connection still gets its share");
        CHECK(l.refused == 1, "the refusal is counted");
        CHECK(bus_limit_admit(&l, ":1.5", T0 + BUS_LIMIT_WINDOW_USEC) == BUS_LIMIT_ADMIT,
              "a new window forgets the last");
        CHECK(l.n_senders == 1, "and its senders");
        CHECK(bus_limit_admit(&l, NULL, T0 + BUS_LIMIT_WINDOW_USEC + 1) == BUS_LIMIT_ADMIT,
              "a message without a sender (a direct connection) is one sender too");
        bus_limit_clear(&l);
}

static void test_budget(void) {
        BusLimit l = {};

        CHECK(bus_limit_admit(&l, ":1.1", T0) == BUS_LIMIT_ADMIT, "a first call is admitted");
        bus_limit_charge(&l, BUS_LIMIT_BUDGET_USEC);
        CHECK(bus_limit_admit(&l, ":1.2", T0 + 1) == BUS_LIMIT_BUDGET_SPENT,
              "once the window's loop time is spent, no one is admitted");
        CHECK(bus_limit_admit(&l, ":1.1", T0 + 2) == BUS_LIMIT_BUDGET_SPENT, "not even a sender with calls left");
        CHECK(bus_limit_admit(&l, ":1.2", T0 + BUS_LIMIT_WINDOW_USEC) == BUS_LIMIT_ADMIT,
              "the next window has its budget back");
        CHECK(bus_limit_admit(&l, ":1.2", T0 - 1) == BUS_LIMIT_ADMIT && l.window_start == T0 - 1,
              "a clock that went back starts a window");
        bus_limit_clear(&l);
}

static void test_senders_bounded(void) {
        BusLimit l = {};
        bool all = true;
        char name[32];

        for (unsigned i = 0; i < BUS_LIMIT_SENDERS_MAX; i++) {
                snprintf(name, sizeof(name), ":1.%u", i);
                all = all && bus_limit_admit(&l, name, T0) == BUS_LIMIT_ADMIT;
        }
        CHECK(all && l.n_senders == BUS_LIMIT_SENDERS_MAX, "a window admits up to its table of senders");
        CHECK(bus_limit_admit(&l, ":2.0", T0) == BUS_LIMIT_BUDGET_SPENT && l.n_senders == BUS_LIMIT_SENDERS_MAX,
              "one more sender is refused, and the table does not grow");
        CHECK(bus_limit_admit(&l, ":1.0", T0) == BUS_LIMIT_ADMIT, "a sender in the table still is admitted");
        bus_limit_clear(&l);
        CHECK(l.n_senders == 0 && l.spent_usec == 0, "clear empties the table");
}

int main(void) {
        test_per_sender();
        test_budget();
        test_senders_bounded();
        return tap_finish();
}
