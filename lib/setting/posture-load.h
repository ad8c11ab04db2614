/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The posture from the files, with what the settings refuse: it stands above the config
 * (config/posture.h) and the [sysfs] kind (setting/sysfs.h), which knows the files other
 * kinds keep. */
#pragma once

#include "config/posture.h"

/* The posture from the files: config_load() of config_path (and its drop-ins), the host's
 * CPUs, then posture_build(), with the [sysfs] paths checked against the host (lib/setting/sysfs.h: a link out of /sys, a file another kind keeps).
 * Every problem goes to errors; -ENODEV when the host's CPUs cannot be read (the host, not
 * the configuration, is at fault). */
int posture_load(const char *config_path, const Host *h, Posture **ret, ErrorList *errors);
/* posture_load() with the main file's text given (config_load_with()). */
int posture_load_with(const char *config_path, const ConfigMainText *main, const Host *h, Posture **ret,
                      ErrorList *errors);
