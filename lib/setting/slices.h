/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* slice_cpus: with [cpus] slices, each unit named there (system.slice, user.slice,
 * init.scope, ...) is held to the housekeeping CPUs with systemd's own AllowedCPUs=, set at
 * run time through PID 1's bus API (lib/host/systemd-client.h). */
#pragma once

#include "setting/setting.h"
#include "setting/table.h"

/* The value of a unit without AllowedCPUs= (it may use every CPU): the observed value, and
 * the original that a restore puts back by unsetting it. */
#define SLICE_CPUS_UNSET "unset"

/* Desired: the housekeeping CPU list; the object is the unit's name. */
int setting_new_slice_cpus(const char *unit, const CPUSet *cpus, Setting **ret);
/* The slice_cpus setting of this unit, NULL when there is none. */
Setting *slice_table_find(const SettingTable *t, const char *unit);
bool setting_is_slice(const Setting *s);
