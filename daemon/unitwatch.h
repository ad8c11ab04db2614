/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* PID 1's units changing: the client for its bus API (the slice settings use it) and its
 * signals, which only say "look at this unit again". */
#pragma once

#include "source.h"

/* open(): the client (it connects when the first slice setting is read); start(): the
 * connection handed to the event loop. Never fatal. */
extern const SourceVTable unitwatch_vtable;
