/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The fixed-window limiter behind the unprivileged methods, and the hold while a backlog
 * waits (bus-limit.h says why). The table of senders lives for one window only, so it
 * never grows past the calls a window admits, whoever connects and goes. */
#include <stdlib.h>
#include <string.h>

#include "bus-limit.h"

void bus_limit_clear(BusLimit *l) {
        for (unsigned i = 0; i < l->n_senders; i++)
                free(l->senders[i].name);
        l->n_senders = 0;
        l->spent_usec = 0;
}

/* Whether a window that started at start (0: none yet) is over at now; a clock that went
 * back ends it too. */
static bool window_over(uint64_t start, uint64_t now, uint64_t length) {
        return start == 0 || now < start || now - start >= length;
}

/* A refusal for others waiting holds off everyone's next calls for BUS_LIMIT_HOLDOFF_USEC;
 * no other refusal does. */
static BusLimitVerdict refuse(BusLimit *l, uint64_t now, BusLimitVerdict v) {
        l->refused++;
        if (v == BUS_LIMIT_OTHERS_WAITING)
                l->last_waiting = now ?: 1;
        return v;
}

BusLimitVerdict bus_limit_admit(BusLimit *l, const char *sender, uint64_t now, bool others_waiting) {
        BusLimitSender *s = NULL;

        if (window_over(l->window_start, now, BUS_LIMIT_WINDOW_USEC)) {
                bus_limit_clear(l);
                l->window_start = now ?: 1;
        }
        if (others_waiting)
                return refuse(l, now, BUS_LIMIT_OTHERS_WAITING);
        if (!window_over(l->last_waiting, now, BUS_LIMIT_HOLDOFF_USEC))
                return refuse(l, now, BUS_LIMIT_HOLDING_OFF);
        sender = sender ?: "";
        for (unsigned i = 0; i < l->n_senders && !s; i++)
                if (streq(l->senders[i].name, sender))
                        s = &l->senders[i];
        if (s && s->calls >= BUS_LIMIT_PER_SENDER)
                return refuse(l, now, BUS_LIMIT_SENDER_OVER);
        if (!s) {
                /* A full table refuses a new sender as a spent budget would: the window
                 * has admitted BUS_LIMIT_SENDERS_MAX connections already. */
                char *name = l->n_senders < BUS_LIMIT_SENDERS_MAX ? strdup(sender) : NULL;
                if (!name)
                        return refuse(l, now, BUS_LIMIT_BUDGET_SPENT);
                s = &l->senders[l->n_senders++];
                *s = (BusLimitSender) { .name = name };
        }
        if (l->spent_usec >= BUS_LIMIT_BUDGET_USEC)
                return refuse(l, now, BUS_LIMIT_BUDGET_SPENT);
        s->calls++;
        return BUS_LIMIT_ADMIT;
}

void bus_limit_charge(BusLimit *l, uint64_t usec) {
        l->spent_usec += usec;
}
