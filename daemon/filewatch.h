/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* inotify hints on the files the settings read: one watch per file, mapped back to its
 * setting. Each only says "look at this setting again". */
#pragma once

#include "source.h"

/* Never fatal: without inotify drift is found by the periodic scan only. */
extern const SourceVTable filewatch_vtable;
