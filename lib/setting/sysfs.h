/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sysfs: the files [sysfs] keeps, one setting each, and the files it refuses to keep
 * (lib/setting/sysfs.c). */
#pragma once

#include "config/config.h"
#include "basic/errorlist.h"
#include "host/host.h"
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

typedef enum SysfsFileVerdict {
        SYSFS_FILE_OK,
        SYSFS_FILE_REFUSED,     /* a link out of /sys, or a file another kind keeps */
        SYSFS_FILE_NOT_REGULAR, /* a directory (which a pattern may well match too) */
} SysfsFileVerdict;

/* Whether [sysfs] may keep relpath ("sys/..."): a SysfsFileVerdict, with the reason in
 * *ret_reason unless it is SYSFS_FILE_OK ("leads out of /sys (to /etc/passwd)"); -ENOENT
 * when nothing is there; another -errno when it cannot be resolved. */
int sysfs_file_check(const Host *h, const char *relpath, char **ret_reason);

/* The [sysfs] entries against the host and the other kinds: a pattern that names a file
 * another kind keeps, and every file an entry matches now that [sysfs] may not keep, are
 * errors "FILE:LINE: PATH: reason"; a pattern that matches read-only files here (counters)
 * is a warning in c->warnings. */
void sysfs_config_check(Config *c, const Host *h, ErrorList *errors);
/* Whether some [sysfs] key is a pattern (so devices coming and going matter). */
bool sysfs_config_has_patterns(const Config *c);
