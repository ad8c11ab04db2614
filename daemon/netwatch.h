/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* NICs coming, going and changing: the rtnetlink link monitor, udev (or kernel uevents),
 * and the ethtool "monitor" group. Each only says "look at this interface again". */
#pragma once

#include "manager.h"

/* Opens rtnetlink and ethtool netlink, and plans every link found by a dump. Never
 * fatal: without ethtool netlink the NIC settings are unsupported. */
int netwatch_open(Manager *m);
/* Adds the event sources (after the first pass). */
int netwatch_start(Manager *m);
void netwatch_close(Manager *m);

/* Plans every known link into table t (a reload's new table). */
int netwatch_plan_links(Manager *m, SettingTable *t, const Posture *p);
