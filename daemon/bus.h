/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* org.lowlatd1 on the system bus: one vtable, properties that announce their changes,
 * the Drift signal, and reconnection when the bus goes away. It reads the manager, and
 * hears of its changes as the manager's listener. */
#pragma once

#include "manager.h"

typedef struct Bus Bus;

/* Connects (or schedules retries) and publishes the object. Never fatal: lowlatd keeps
 * enforcing without a bus. */
int bus_new(Manager *m, Bus **ret);
Bus *bus_free(Bus *b);
DEFINE_POINTER_CLEANUP(Bus, bus_free);
