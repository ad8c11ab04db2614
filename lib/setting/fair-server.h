/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fair_server: the scheduler's fair server runtime of each isolated CPU
 * (lib/setting/fair-server.c). */
#pragma once

#include "setting/setting.h"

int setting_new_fair_server(unsigned cpu, Setting **ret);
