/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* New kernel threads as the kernel creates them: the proc connector's forks by kthreadd.
 * Each only says "look at this kernel thread again, a moment from now". */
#pragma once

#include "source.h"

/* open(): the proc connector when the posture manages kernel threads, so that threads
 * created during the first pass are queued; a reload opens or closes it as the new posture
 * wants. Never fatal: without it new kernel threads are found by the periodic scan, and
 * that is said once. */
extern const SourceVTable procwatch_vtable;
