/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* New kernel threads as the kernel creates them: the proc connector's forks by kthreadd.
 * Each only says "look at this kernel thread again, a moment from now". */
#pragma once

#include "manager.h"

/* Opens the proc connector when the posture manages kernel threads, so that threads
 * created during the first pass are queued. Never fatal: without it new kernel threads
 * are found by the periodic scan, and that is said once. */
int procwatch_new(Manager *m, ProcWatch **ret);
ProcWatch *procwatch_free(ProcWatch *w);
/* Adds the event sources (the loop exists now). */
int procwatch_start(ProcWatch *w);
/* After a reload: opens or closes the connector as the new posture wants. */
void procwatch_update(ProcWatch *w);
