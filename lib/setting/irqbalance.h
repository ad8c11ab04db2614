/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* irqbalance_ban: with [irq] irqbalance = ban, a running irqbalance leaves the isolated
 * CPUs alone because lowlatd tells it so over its control socket (lib/host/irqbalance.h). */
#pragma once

#include "setting/setting.h"

/* The object of the one irqbalance_ban setting. */
#define IRQBALANCE_BAN_OBJECT "irqbalance"

/* Desired: the isolated CPU list, all of it among the CPUs irqbalance bans. */
int setting_new_irqbalance_ban(const Posture *p, Setting **ret);
/* The table's irqbalance_ban setting; NULL when [irq] irqbalance is not ban (or no CPU is
 * isolated). For the daemon's irqbalance watch and the audit. */
Setting *setting_irqbalance_ban_find(const SettingTable *t);
/* The PID of the irqbalance it looked at last, 0 when none ran. */
unsigned setting_irqbalance_ban_pid(const Setting *s);
/* Its last look found irqbalance's socket refusing connections, or gone (it binds before
 * it listens): worth another look soon. */
bool setting_irqbalance_ban_refused(const Setting *s);
