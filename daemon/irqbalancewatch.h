/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* irqbalance starting and stopping, for [irq] irqbalance = ban: inotify on /run (its
 * runtime directory comes and goes with the service) and on /run/irqbalance (its socket,
 * irqbalance<PID>.sock). Each only says "look at irqbalance's ban again". */
#pragma once

#include "manager.h"

/* Adds the event source (after the first pass) and watches if the table has an
 * irqbalance_ban setting. Never fatal: without inotify the scan sees a restart. */
int irqbalance_watch_new(Manager *m, IrqbalanceWatch **ret);
IrqbalanceWatch *irqbalance_watch_free(IrqbalanceWatch *w);
/* Watches while the table has an irqbalance_ban setting, and stops when it has none; after
 * every reload. */
void irqbalance_watch_sync(IrqbalanceWatch *w);
