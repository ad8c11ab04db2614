/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sysctl: one /proc/sys file per [sysctl] key (lib/setting/sysctl.c). */
#pragma once

#include "setting/setting.h"

/* key as sysctl(8) writes it ("net.core.busy_poll"); -EINVAL for a key that is no sysctl
 * name. */
int setting_new_sysctl(const char *key, const char *value, Setting **ret);
