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
                all = all && bus_limit_admit(&l, ":1.5", T0 + i, false) == BUS_LIMIT_ADMIT;
        CHECK(all, "a connection's first calls of a window are admitted");
        CHECK(bus_limit_admit(&l, ":1.5", T0 + 10, false) == BUS_LIMIT_SENDER_OVER, "the next one is refused");
        CHECK(bus_limit_admit(&l, ":1.6", T0 + 11, false) == BUS_LIMIT_ADMIT, "another connection still gets its share");
        CHECK(l.refused == 1, "the refusal is counted");
        CHECK(bus_limit_admit(&l, ":1.5", T0 + BUS_LIMIT_WINDOW_USEC, false) == BUS_LIMIT_ADMIT,
              "a new window forgets the last");
        CHECK(l.n_senders == 1, "and its senders");
        CHECK(bus_limit_admit(&l, NULL, T0 + BUS_LIMIT_WINDOW_USEC + 1, false) == BUS_LIMIT_ADMIT,
              "a message without a sender (a direct connection) is one sender too");
        bus_limit_clear(&l);
}

static void test_budget(void) {
        BusLimit l = {};

        CHECK(bus_limit_admit(&l, ":1.1", T0, false) == BUS_LIMIT_ADMIT, "a first call is admitted");
        bus_limit_charge(&l, BUS_LIMIT_BUDGET_USEC);
        CHECK(bus_limit_admit(&l, ":1.2", T0 + 1, false) == BUS_LIMIT_BUDGET_SPENT,
              "once the window's loop time is spent, no one is admitted");
        CHECK(bus_limit_admit(&l, ":1.1", T0 + 2, false) == BUS_LIMIT_BUDGET_SPENT, "not even a sender with calls left");
        CHECK(bus_limit_admit(&l, ":1.2", T0 + BUS_LIMIT_WINDOW_USEC, false) == BUS_LIMIT_ADMIT,
              "the next window has its budget back: a spent budget holds no one off beyond it");
        CHECK(bus_limit_admit(&l, ":1.2", T0 - 1, false) == BUS_LIMIT_ADMIT && l.window_start == T0 - 1,
              "a clock that went back starts a window");
        bus_limit_clear(&l);
}

/* Others waiting on the connection (a root call may be among them): refused whatever the
 * window says, counted, no sender's share spent on it; and everyone held off a while. */
static void test_others_waiting(void) {
        BusLimit l = {};

        CHECK(bus_limit_admit(&l, ":1.1", T0, true) == BUS_LIMIT_OTHERS_WAITING, "a call with others waiting is refused");
        CHECK(l.refused == 1 && l.n_senders == 0, "counted as refused, its sender's share untouched");
        CHECK(bus_limit_admit(&l, ":1.2", T0 + 1, false) == BUS_LIMIT_HOLDING_OFF,
              "the next calls, of any connection, are held off");
        CHECK(bus_limit_admit(&l, ":1.2", T0 + BUS_LIMIT_HOLDOFF_USEC - 1, false) == BUS_LIMIT_HOLDING_OFF,
              "until BUS_LIMIT_HOLDOFF_USEC after the refusal, however often they retry");
        CHECK(bus_limit_admit(&l, ":1.2", T0 + BUS_LIMIT_HOLDOFF_USEC, false) == BUS_LIMIT_ADMIT,
              "then admitted: retries while held off did not extend it");
        CHECK(bus_limit_admit(&l, ":1.3", T0 + BUS_LIMIT_HOLDOFF_USEC + 1, true) == BUS_LIMIT_OTHERS_WAITING &&
                      bus_limit_admit(&l, ":1.2", T0 + 2 * BUS_LIMIT_HOLDOFF_USEC, false) == BUS_LIMIT_HOLDING_OFF,
              "a backlog seen again holds off again, from then");
        bus_limit_clear(&l);
}

static void test_senders_bounded(void) {
        BusLimit l = {};
        bool all = true;
        char name[32];

        for (unsigned i = 0; i < BUS_LIMIT_SENDERS_MAX; i++) {
                snprintf(name, sizeof(name), ":1.%u", i);
                all = all && bus_limit_admit(&l, name, T0, false) == BUS_LIMIT_ADMIT;
        }
        CHECK(all && l.n_senders == BUS_LIMIT_SENDERS_MAX, "a window admits up to its table of senders");
        CHECK(bus_limit_admit(&l, ":2.0", T0, false) == BUS_LIMIT_BUDGET_SPENT && l.n_senders == BUS_LIMIT_SENDERS_MAX,
              "one more sender is refused, and the table does not grow");
        CHECK(bus_limit_admit(&l, ":1.0", T0, false) == BUS_LIMIT_ADMIT, "a sender in the table still is admitted");
        bus_limit_clear(&l);
        CHECK(l.n_senders == 0 && l.spent_usec == 0, "clear empties the table");
}

int main(void) {
        test_per_sender();
        test_budget();
        test_others_waiting();
        test_senders_bounded();
        return tap_finish();
}
