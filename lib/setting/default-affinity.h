/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* irq_default_affinity: the mask new IRQs get (lib/setting/default-affinity.c). */
#pragma once

#include "setting/setting.h"

/* The default affinity the posture asks for, as a mask as wide as the possible CPUs. */
int setting_new_default_affinity(const Posture *p, Setting **ret);
