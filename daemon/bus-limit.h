/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* How much of the event loop the methods open to every caller (ListSettings, Check,
 * Noise) may take: a client that sends thousands of calls and never reads the answers
 * must not hold back corrections, nor a root caller's State read queued behind them. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "basic/util.h"

/* Per window of BUS_LIMIT_WINDOW_USEC: at most BUS_LIMIT_PER_SENDER such calls from one
 * connection, and no new one once their answers took BUS_LIMIT_BUDGET_USEC of loop time
 * in all. Over either, the call is answered at once with BUS_LIMIT_ERROR. 16 a second
 * leaves room for lowlatctl top at its fastest (--interval 100ms, one Noise() each);
 * the budget bounds the loop's share. */
#define BUS_LIMIT_WINDOW_USEC (1 * USEC_PER_SEC)
#define BUS_LIMIT_PER_SENDER 16U
#define BUS_LIMIT_BUDGET_USEC (250 * USEC_PER_MSEC)
/* And none while more than this waits to be read on the bus connection (bytes in the
 * socket, or messages sd-bus has read but not dispatched), nor for BUS_LIMIT_HOLDOFF_USEC
 * after such a refusal: a root call may be among what waits, and it would wait behind the
 * answers. The budget bounds the loop's share, not that wait: a backlog of 8,000 calls
 * was worked through at 250 ms of CPU a second (and at 20 ms per 100 ms too, as each
 * window renewed), and a root read behind it waited up to 1.4 s on a loaded machine.
 * Only the backlog holds everyone off, never a budget spent by calls made one after the
 * other (lowlatctl's), and a refusal while held off does not extend it (a client that
 * retries on Busy would hold itself off for good). What lowlatd sees waiting is only
 * what reached its socket; dbus-daemon may hold thousands more, hence the hold. */
#define BUS_LIMIT_WAITING_BYTES_MAX (16U * 1024U)
#define BUS_LIMIT_WAITING_MESSAGES_MAX 8U
#define BUS_LIMIT_HOLDOFF_USEC (1 * USEC_PER_SEC)
#define BUS_LIMIT_SENDERS_MAX 64U
#define BUS_LIMIT_ERROR "org.lowlatd1.Error.Busy" /* common/bus-names.h: BUS_ERROR_BUSY */

typedef struct BusLimitSender {
        char *name;
        unsigned calls;
} BusLimitSender;

typedef struct BusLimit {
        uint64_t window_start; /* 0: no window yet */
        uint64_t spent_usec;   /* loop time the admitted calls took in this window */
        uint64_t refused;      /* since the start, for the log */
        uint64_t last_waiting; /* when a call was last refused for others waiting; 0: never */
        BusLimitSender senders[BUS_LIMIT_SENDERS_MAX];
        unsigned n_senders;
} BusLimit;

typedef enum BusLimitVerdict {
        BUS_LIMIT_ADMIT,
        BUS_LIMIT_SENDER_OVER,  /* this connection had its share of the window */
        BUS_LIMIT_BUDGET_SPENT, /* the window's loop time is spent, or too many senders */
        BUS_LIMIT_OTHERS_WAITING, /* other messages wait on the connection */
        BUS_LIMIT_HOLDING_OFF,    /* one was refused so less than BUS_LIMIT_HOLDOFF_USEC ago */
} BusLimitVerdict;

/* Whether a call from SENDER (a unique bus name) at NOW may be answered, with
 * others_waiting whether more than BUS_LIMIT_WAITING_* waits behind it; counts it if so.
 * Pure: no clock, no I/O. */
BusLimitVerdict bus_limit_admit(BusLimit *l, const char *sender, uint64_t now, bool others_waiting);
/* What an admitted call took on the loop. */
void bus_limit_charge(BusLimit *l, uint64_t usec);
void bus_limit_clear(BusLimit *l);
