/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Profiles: named configurations that a configuration takes in with [daemon] profile =
 * NAME... (lowlatd.conf(5), PROFILES). Each is a file NAME.conf, looked up first in the
 * profiles/ directory beside the main file (/etc/lowlatd/profiles: the administrator's,
 * which override the shipped ones of the same name), then among the shipped ones
 * (config_profiles_shipped_dir()). config_load() reads them before the main file, in the order named, so a
 * later profile overrides an earlier one, and the main file and its drop-ins override
 * them all. */
#pragma once

#include <stdbool.h>

#include "build-config.h"

#define PROFILE_NAME_MAX 64
#define PROFILES_USER_SUBDIR "profiles"

/* Letters, digits, '-', '_' and '.', not starting with '.' or '-': a file name, never a
 * path. */
bool config_profile_name_is_valid(const char *name);
/* The shipped profiles: $LOWLATD_PROFILES_DIR (not for setuid callers), else
 * LOWLATD_PROFILES_DIR, where meson installs them. */
const char *config_profiles_shipped_dir(void);
/* The administrator's profiles: the directory "profiles" beside config_path. */
char *config_profile_user_dir(const char *config_path);
/* The file of profile name for the configuration at config_path: 0 with *ret set, -ENOENT
 * when neither directory has it, -EINVAL for a name that is not one. */
int config_profile_find(const char *config_path, const char *name, char **ret);
void config_profiles_free(char **profiles, size_t n);
