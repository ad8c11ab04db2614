/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sysfs: the files [sysfs] keeps, one setting each (lib/setting/sysfs.c). */
#pragma once

#include "setting/setting.h"
#include "setting/table.h"

/* A setting for the file object ("/sys/kernel/mm/ksm/run") held at value. from_pattern:
 * a pattern matched it, so its going away drops the setting. refused: NULL, or why
 * lowlatd does not keep the file ("FILE:LINE: ..."): it is then unsupported, never
 * written. */
int setting_new_sysfs(const char *object, const char *value, bool from_pattern, const char *refused,
                      Setting **ret);

/* Expands every [sysfs] entry under the root: adds a setting for each file that has none
 * yet (a device came, a file named in the config appeared) and drops those of files no
 * pattern matches any more (a device went). Returns how many were added, or -errno. */
int sysfs_table_rescan(SettingTable *t, const Host *h, const Posture *p);
