/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* NICs coming, going and changing: the rtnetlink link monitor, udev (or kernel uevents),
 * and the ethtool "monitor" group. Each only says "look at this interface again". */
#pragma once

#include "source.h"

/* open(): rtnetlink and ethtool netlink (the clients the NIC settings use), and every link
 * a dump finds planned into the table. Never fatal: without ethtool netlink the NIC
 * settings are unsupported, without rtnetlink they are not managed. plan(): every known
 * link, into a reload's new table. */
extern const SourceVTable netwatch_vtable;
