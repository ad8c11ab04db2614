/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* irqbalance starting and stopping, for [irq] irqbalance = ban: inotify on /run (its
 * runtime directory comes and goes with the service) and on /run/irqbalance (its socket,
 * irqbalance<PID>.sock). Each only says "look at irqbalance's ban again". */
#pragma once

#include "source.h"

/* Watches from start() on while the table has an irqbalance_ban setting, and stops when a
 * reload leaves it none. Never fatal: without inotify the scan sees a restart. */
extern const SourceVTable irqbalancewatch_vtable;
