/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The interface every NIC setting belongs to (nic-head.h). */
#include "setting/nic-head.h"

#define NIC_HEAD(s) ((const NicSettingHead *) (s))

bool setting_is_nic(const Setting *s) {
        return SETTING_VTABLE(s)->group == SETTING_GROUP_NIC;
}

int setting_nic_ifindex(const Setting *s) {
        return setting_is_nic(s) ? NIC_HEAD(s)->ifindex : -1;
}

uint64_t setting_nic_sort_key(const Setting *s) {
        return (uint64_t) NIC_HEAD(s)->ifindex;
}
