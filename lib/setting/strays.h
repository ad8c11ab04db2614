/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* stray_tasks: with [cpus] evict_strays = yes, user tasks allowed on the isolated CPUs
 * are moved off them (lib/setting/stray-tasks.c finds them and says what is never moved). */
#pragma once

#include "setting/setting.h"
#include "setting/stray-tasks.h"

/* Desired "none"; the object is the isolated CPU list. */
int setting_new_stray_tasks(const Posture *p, Setting **ret);
/* The last scan's strays and the tasks left alone (for tests). */
Strays *setting_strays(const Setting *s);
