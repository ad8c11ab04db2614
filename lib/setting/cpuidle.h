/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cpuidle: idle states kept disabled on isolated CPUs (lib/setting/cpuidle.c). */
#pragma once

#include "setting/setting.h"

/* An idle state deeper than the latency target, kept disabled on an isolated CPU; name is
 * the state's name for humans (the label), may be NULL. */
int setting_new_cpuidle(unsigned cpu, unsigned state, const char *name, Setting **ret);
