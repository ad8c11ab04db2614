/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* PID 1's units changing: the client for its bus API (the slice settings use it, in
 * m->rc) and its signals, which only say "look at this unit again". */
#pragma once

#include "manager.h"

/* Sets up the client (it connects when the first slice setting is read). Never fatal. */
int unitwatch_new(Manager *m, UnitWatch **ret);
UnitWatch *unitwatch_free(UnitWatch *w);
/* Hands the connection to the event loop (after the first pass). */
int unitwatch_start(UnitWatch *w);
