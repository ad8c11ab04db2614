/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* NICs coming, going and changing: the rtnetlink link monitor, udev (or kernel uevents),
 * and the ethtool "monitor" group. Each only says "look at this interface again". */
#pragma once

#include "manager.h"

/* Opens rtnetlink and ethtool netlink (the clients the NIC settings use, in m->rc), and
 * plans every link found by a dump into m->table. Never fatal: without ethtool netlink
 * the NIC settings are unsupported, without rtnetlink they are not managed. */
int netwatch_new(Manager *m, NetWatch **ret);
NetWatch *netwatch_free(NetWatch *w);
/* Adds the event sources (after the first pass). */
int netwatch_start(NetWatch *w);

/* Plans every known link into table t (a reload's new table). */
int netwatch_plan_links(NetWatch *w, SettingTable *t, const Posture *p);
