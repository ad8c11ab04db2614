/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Devices coming and going, for the [sysfs] patterns: a uevent monitor that expands them
 * again, so that a new device's files are kept at once rather than at the next scan. */
#pragma once

#include "manager.h"

/* Starts, keeps or stops the monitor to fit m->posture: it exists only while some [sysfs]
 * key is a pattern, and listens where [daemon] udev_source says. Never fatal: without it
 * the periodic scan finds new matches. */
void sysfswatch_update(Manager *m);
SysfsWatch *sysfswatch_free(SysfsWatch *w);
