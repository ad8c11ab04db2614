/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* workqueue_cpumask: with [cpus] workqueues, the CPUs of the kernel's unbound workqueues
 * (/sys/devices/virtual/workqueue/cpumask and each workqueue's own cpumask). */
#pragma once

#include "setting/setting.h"
#include "setting/table.h"

/* The object of the mask that confines every unbound workqueue. */
#define WORKQUEUE_UNBOUND_OBJECT "cpumask"

/* The mask of workqueue name, or with name NULL the mask for all of them; desired: the
 * posture's workqueue CPUs. */
int setting_new_workqueue(const Posture *p, const char *name, Setting **ret);

/* Lists the workqueues that have a cpumask: adds a setting for each new one, drops the ones
 * that are gone. Nothing when the posture leaves workqueues alone. Returns the number of
 * workqueues with a cpumask, or -errno. */
int workqueue_table_scan(SettingTable *t, const Host *h, const Posture *p);
