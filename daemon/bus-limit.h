/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* How much of the event loop the methods open to every caller (ListSettings, Check,
 * Noise) may take: a client that sends thousands of calls and never reads the answers
 * must not hold back corrections, nor a root caller's State read queued behind them. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "basic/util.h"

/* Per window of BUS_LIMIT_WINDOW_USEC at most BUS_LIMIT_PER_SENDER such calls from one
 * connection; and per BUS_LIMIT_BUDGET_WINDOW_USEC no new one once the answers admitted
 * in it took BUS_LIMIT_BUDGET_USEC of the loop's wall time in all. Over either, the call
 * is answered at once with BUS_LIMIT_ERROR. 16 a second leaves room for lowlatctl top at
 * its fastest (--interval 100ms, one Noise() each). The budget is what bounds how long a
 * root call waits behind the answers queued in front of it: one short window's budget
 * and the call that overran it, never a second's worth (250 ms of CPU a second held a root
 * read 176 to 1,296 ms on a loaded machine). Wall time, not CPU time: a loaded host that
 * stretches the answers spends the budget sooner, and the wait is what a caller sees. */
#define BUS_LIMIT_WINDOW_USEC (1 * USEC_PER_SEC)
#define BUS_LIMIT_PER_SENDER 16U
#define BUS_LIMIT_BUDGET_WINDOW_USEC (100 * USEC_PER_MSEC)
#define BUS_LIMIT_BUDGET_USEC (20 * USEC_PER_MSEC)
/* And none while more than this waits to be read on the bus connection (bytes in the
 * socket, or messages sd-bus has read but not dispatched): a root call may be among them,
 * and it would wait behind the answer. The windows alone bound the loop's share, not the
 * wait: they renew while a backlog drains (a budget of 20 ms in 100 ms still put 200 ms of
 * the loop's CPU in front of a root read behind a burst of 8,000 calls). */
#define BUS_LIMIT_WAITING_BYTES_MAX (16U * 1024U)
/* Nor for this long after a refusal for the loop's sake (the budget, the senders' table,
 * others waiting; not one connection over its share): a burst gets a budget a second, not
 * one every short window (what lowlatd can see waiting is only what reached its socket;
 * dbus-daemon may hold thousands more, a root call among them). */
#define BUS_LIMIT_HOLDOFF_USEC (1 * USEC_PER_SEC)
#define BUS_LIMIT_WAITING_MESSAGES_MAX 8U
#define BUS_LIMIT_SENDERS_MAX 64U
#define BUS_LIMIT_ERROR "org.lowlatd1.Error.Busy" /* common/bus-names.h: BUS_ERROR_BUSY */

typedef struct BusLimitSender {
        char *name;
        unsigned calls;
} BusLimitSender;

typedef struct BusLimit {
        uint64_t window_start; /* of the senders' window; 0: no window yet */
        uint64_t budget_start; /* of the budget's window; 0: none yet */
        uint64_t spent_usec;   /* loop time the admitted calls took in the budget's window */
        uint64_t refused;      /* since the start, for the log */
        uint64_t last_refused; /* when a call was last refused for the loop's sake; 0: never */
        BusLimitSender senders[BUS_LIMIT_SENDERS_MAX];
        unsigned n_senders;
} BusLimit;

typedef enum BusLimitVerdict {
        BUS_LIMIT_ADMIT,
        BUS_LIMIT_SENDER_OVER,  /* this connection had its share of the window */
        BUS_LIMIT_BUDGET_SPENT, /* the budget window's loop time is spent, or too many senders */
        BUS_LIMIT_OTHERS_WAITING, /* other messages wait on the connection */
        BUS_LIMIT_HOLDING_OFF,    /* one was refused for the loop less than BUS_LIMIT_HOLDOFF_USEC ago */
} BusLimitVerdict;

/* Whether a call from SENDER (a unique bus name) at NOW may be answered, with
 * others_waiting whether more than BUS_LIMIT_WAITING_* waits behind it; counts it if so.
 * Pure: no clock, no I/O. */
BusLimitVerdict bus_limit_admit(BusLimit *l, const char *sender, uint64_t now, bool others_waiting);
/* What an admitted call took on the loop. */
void bus_limit_charge(BusLimit *l, uint64_t usec);
void bus_limit_clear(BusLimit *l);
