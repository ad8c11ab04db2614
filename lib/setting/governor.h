/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* governor: each online CPU's cpufreq scaling_governor (lib/setting/governor.c). */
#pragma once

#include "setting/setting.h"

int setting_new_governor(unsigned cpu, const char *governor, Setting **ret);
