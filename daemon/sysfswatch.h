/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Devices coming and going, for the [sysfs] patterns: a uevent monitor that expands them
 * again, so that a new device's files are kept at once rather than at the next scan. */
#pragma once

#include "source.h"

/* From start() on, and after every reload, the monitor exists only while some [sysfs] key
 * is a pattern. Never fatal: without it the periodic scan finds new matches. */
extern const SourceVTable sysfswatch_vtable;
