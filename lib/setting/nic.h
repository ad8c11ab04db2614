/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A NIC's settings from its [nic "GLOB"] sections: coalescing, rings, channels,
 * features, pause frames and EEE through ethtool netlink, the root qdisc and the transmit
 * queue length through rtnetlink, and its IRQs' pin (irq_cpus). Planned per interface by the link monitor, not from the posture alone. */
#pragma once

#include <stdbool.h>

#include "host/ethtool.h"
#include "setting/nic-head.h"
#include "setting/setting.h"
#include "setting/table.h"


int setting_new_nic_param(int ifindex, const char *ifname, EthtoolParam p, uint32_t value, Setting **ret);
int setting_new_nic_feature(int ifindex, const char *ifname, const char *feature, bool on, Setting **ret);
int setting_new_nic_qdisc(int ifindex, const char *ifname, const char *kind, Setting **ret);
int setting_new_nic_txqueuelen(int ifindex, const char *ifname, uint32_t txqueuelen, Setting **ret);

/* ListSettings order within the NIC group: by interface. */
uint64_t setting_nic_sort_key(const Setting *s);
/* The interface a NIC setting belongs to; -1 for any other setting. */
int setting_nic_ifindex(const Setting *s);
/* Whether an ethtool notification of this group about this interface concerns s. */
bool setting_nic_notified_by(const Setting *s, int ifindex, EthtoolGroup group);

/* Adds the settings the [nic] sections ask of this interface (and pins its IRQs when
 * irq_cpus is set). Feature patterns (tso = tx-tcp*-segmentation) are matched against
 * the names ethtool (may be NULL) has from the kernel. Replanning an interface (renamed,
 * up again) keeps what was learnt about each of its settings. Returns 1 when a section
 * matched, 0 when none did. */
int nic_table_plan(SettingTable *t, EthtoolClient *ethtool, const Host *h, const Posture *p, int ifindex,
                   const char *ifname);
/* The same for the link monitor, which holds the daemon's reconciler: a renamed
 * interface's originals follow its settings to the new name, and what the new name no
 * longer matches is put back as lowlatd found it (counted in *ret_restored, may be NULL),
 * as a reload does for what the configuration no longer asks for; so is a queue the
 * listing did not show while it is there (nothing lowlatd set is left without the
 * setting that restores it). Put-backs that failed on a queue or link that is still there
 * are counted in *ret_failed (may be NULL). */
int nic_table_replan(SettingTable *t, SettingContext *rc, EthtoolClient *ethtool, const Host *h, const Posture *p,
                     int ifindex, const char *ifname, unsigned *ret_restored, unsigned *ret_failed);
/* Drops every setting of this interface and releases its IRQ pins. */
int nic_table_drop(SettingTable *t, const Posture *p, int ifindex);
bool nic_table_has(const SettingTable *t, int ifindex);
