/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What every kind in SETTING_GROUP_NIC starts with (the ethtool and qdisc kinds of
 * lib/setting/nic.c, the steering kinds of lib/setting/rps.c): the interface, which the
 * link monitor replans and drops settings by. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "setting/setting.h"

typedef struct NicSettingHead {
        Setting setting;
        int ifindex;
} NicSettingHead;

bool setting_is_nic(const Setting *s);
/* The interface of a setting of SETTING_GROUP_NIC, -1 for any other. */
int setting_nic_ifindex(const Setting *s);
/* SettingVTable.sort_key of every NIC kind: settings of one interface together. */
uint64_t setting_nic_sort_key(const Setting *s);
