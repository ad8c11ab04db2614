/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* org.lowlatd1 on the system bus: one vtable, properties that announce their changes,
 * the Drift signal, and reconnection when the bus goes away. */
#pragma once

#include "manager.h"

/* Connects (or schedules retries) and publishes the object. Never fatal: lowlatd keeps
 * enforcing without a bus. */
void bus_setup(Manager *m);
void bus_done(Manager *m);

/* Emits PropertiesChanged for whatever changed since the last call. */
void bus_flush_changes(Manager *m);
void bus_emit_drift(Manager *m, const Setting *s, bool corrected);
