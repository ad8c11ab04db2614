/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The fixed-window limiter behind the unprivileged methods (bus-limit.h says why). The
 * table of senders lives for one window only, so it never grows past the calls a window
 * admits, whoever connects and goes. */
#include <stdlib.h>
#include <string.h>

#include "bus-limit.h"

void bus_limit_clear(BusLimit *l) {
        for (unsigned i = 0; i < l->n_senders; i++)
                free(l->senders[i].name);
        l->n_senders = 0;
        l->spent_usec = 0;
}

BusLimitVerdict bus_limit_admit(BusLimit *l, const char *sender, uint64_t now) {
        BusLimitSender *s = NULL;

        if (l->window_start == 0 || now < l->window_start || now - l->window_start >= BUS_LIMIT_WINDOW_USEC) {
                bus_limit_clear(l);
                l->window_start = now ?: 1;
        }
        sender = sender ?: "";
        for (unsigned i = 0; i < l->n_senders && !s; i++)
                if (streq(l->senders[i].name, sender))
                        s = &l->senders[i];
        if (s && s->calls >= BUS_LIMIT_PER_SENDER) {
                l->refused++;
                return BUS_LIMIT_SENDER_OVER;
        }
        if (!s) {
                /* A full table refuses a new sender as a spent budget would: the window
                 * has admitted BUS_LIMIT_SENDERS_MAX connections already. */
                char *name = l->n_senders < BUS_LIMIT_SENDERS_MAX ? strdup(sender) : NULL;
                if (!name) {
                        l->refused++;
                        return BUS_LIMIT_BUDGET_SPENT;
                }
                s = &l->senders[l->n_senders++];
                *s = (BusLimitSender) { .name = name };
        }
        if (l->spent_usec >= BUS_LIMIT_BUDGET_USEC) {
                l->refused++;
                return BUS_LIMIT_BUDGET_SPENT;
        }
        s->calls++;
        return BUS_LIMIT_ADMIT;
}

void bus_limit_charge(BusLimit *l, uint64_t usec) {
        l->spent_usec += usec;
}
