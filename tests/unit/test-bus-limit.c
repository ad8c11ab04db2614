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
        uint64_t t;

        CHECK(bus_limit_admit(&l, ":1.1", T0, false) == BUS_LIMIT_ADMIT, "a first call is admitted");
        bus_limit_charge(&l, BUS_LIMIT_BUDGET_USEC);
        CHECK(bus_limit_admit(&l, ":1.2", T0 + 1, false) == BUS_LIMIT_BUDGET_SPENT,
              "once the window's loop time is spent, no one is admitted");
        CHECK(bus_limit_admit(&l, ":1.1", T0 + 2, false) == BUS_LIMIT_HOLDING_OFF,
              "nor, for a while, a sender with calls left");
        CHECK(bus_limit_admit(&l, ":1.2", T0 + BUS_LIMIT_BUDGET_WINDOW_USEC, false) == BUS_LIMIT_HOLDING_OFF,
              "the next budget window does not reopen it while refusals are recent");
        t = T0 + 1 + BUS_LIMIT_HOLDOFF_USEC - 1;
        CHECK(bus_limit_admit(&l, ":1.2", t, false) == BUS_LIMIT_HOLDING_OFF,
              "held off until a second after the refusal for the budget");
        t += 1;
        CHECK(bus_limit_admit(&l, ":1.2", t, false) == BUS_LIMIT_ADMIT,
              "then admitted: the refusals while held off (a client retrying on Busy) did not extend it");
        bus_limit_charge(&l, BUS_LIMIT_BUDGET_USEC / 2);
        CHECK(bus_limit_admit(&l, ":1.3", t + 1, false) == BUS_LIMIT_ADMIT, "within the budget, others too");
        CHECK(BUS_LIMIT_BUDGET_WINDOW_USEC <= 100 * USEC_PER_MSEC && BUS_LIMIT_BUDGET_USEC < BUS_LIMIT_BUDGET_WINDOW_USEC,
              "the budget window is no longer than the 100 ms a root read may wait");
        CHECK(bus_limit_admit(&l, ":1.2", T0 - 1, false) == BUS_LIMIT_ADMIT && l.window_start == T0 - 1,
              "a clock that went back starts a window");
        bus_limit_clear(&l);
}

/* One connection over its share is refused alone: the others go on. */
static void test_sender_over_holds_off_no_one(void) {
        BusLimit l = {};

        for (unsigned i = 0; i <= BUS_LIMIT_PER_SENDER; i++)
                (void) bus_limit_admit(&l, ":1.1", T0 + i, false);
        CHECK(bus_limit_admit(&l, ":1.1", T0 + 100, false) == BUS_LIMIT_SENDER_OVER, "the connection over its share");
        CHECK(bus_limit_admit(&l, ":1.2", T0 + 101, false) == BUS_LIMIT_ADMIT, "another one is admitted");
        bus_limit_clear(&l);
}

/* Others waiting on the connection (a root call may be among them): refused whatever the
 * windows say, counted, and no sender's share spent on it. */
static void test_others_waiting(void) {
        BusLimit l = {};

        CHECK(bus_limit_admit(&l, ":1.1", T0, true) == BUS_LIMIT_OTHERS_WAITING, "a call with others waiting is refused");
        CHECK(l.refused == 1 && l.n_senders == 0, "counted as refused, its sender's share untouched");
        CHECK(bus_limit_admit(&l, ":1.1", T0 + 1, false) == BUS_LIMIT_HOLDING_OFF,
              "the next call soon after is held off too");
        CHECK(bus_limit_admit(&l, ":1.1", T0 + BUS_LIMIT_HOLDOFF_USEC, false) == BUS_LIMIT_ADMIT,
              "once they are answered and a quiet while passed, admitted");
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
        CHECK(bus_limit_admit(&l, ":1.0", T0 + BUS_LIMIT_HOLDOFF_USEC / 2, false) == BUS_LIMIT_HOLDING_OFF,
              "then all are held off for a while");
        bus_limit_clear(&l);
        CHECK(l.n_senders == 0 && l.spent_usec == 0, "clear empties the table");
}

int main(void) {
        test_per_sender();
        test_budget();
        test_sender_over_holds_off_no_one();
        test_others_waiting();
        test_senders_bounded();
        return tap_finish();
}
