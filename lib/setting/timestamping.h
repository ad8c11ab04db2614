/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* timestamping_hold: a socket with SO_TIMESTAMP held open, so that the kernel's network
 * timestamping stays enabled (lib/setting/timestamping.c). */
#pragma once

#include "setting/setting.h"

int setting_new_timestamping_hold(Setting **ret);
