/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cpuset_partition: with [cpus] partition = SLICE, that top-level slice holds the isolated
 * CPUs as an `isolated` cgroup v2 cpuset partition: the kernel takes them out of load
 * balancing (6.1), and later kernels out of the unbound workqueues and more, at run time. */
#pragma once

#include "setting/setting.h"
#include "setting/table.h"

/* The observed value of a slice whose cgroup does not exist (not started, or stopped), and
 * the original that makes restore stop the slice lowlatd started. */
#define PARTITION_ABSENT "absent"

/* Desired: "isolated"; the object is the slice's name. */
int setting_new_cpuset_partition(const char *slice, Setting **ret);
/* The cpuset_partition setting of this slice, NULL when there is none. */
Setting *partition_table_find(const SettingTable *t, const char *slice);
bool setting_is_partition(const Setting *s);
