/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Packet steering: each queue's RPS and XPS masks and RPS flow table (nic_rps_cpus,
 * nic_xps_cpus, nic_rps_flow_cnt, one setting per queue file) and the mask the kernel gives
 * new receive queues (rps_default_mask). See lib/setting/rps.c. */
#pragma once

#include <stdbool.h>

#include "config/nic-posture.h"
#include "setting/setting.h"
#include "setting/table.h"

/* A queue's steering file: kind is SETTING_NIC_RPS_CPUS, SETTING_NIC_XPS_CPUS (cpus is the
 * mask, mask_bits wide) or SETTING_NIC_RPS_FLOW_CNT (flow_cnt). queue: "rx-0", "tx-3". */
int setting_new_nic_queue(SettingKind kind, int ifindex, const char *ifname, const char *queue, const CPUSet *cpus,
                          unsigned mask_bits, uint32_t flow_cnt, Setting **ret);

/* Whether s is one of the three queue kinds. */
bool setting_is_nic_queue(const Setting *s);
/* Two queue settings of one kind and interface are the same when they name the same queue
 * (a rename changes the object, not the queue). */
bool nic_queue_same_key(const Setting *a, const Setting *b);

/* Whether the queue of setting s (one of the queue kinds) is there now, under the name its
 * interface has now (looked up through rc's rtnetlink by its index, else the name it was
 * planned under). */
bool nic_queue_exists_now(const Setting *s, SettingContext *rc);

/* Adds a setting for every queue file of interface ifname that np asks for and the table
 * does not hold yet, listing sys/class/net/IFNAME/queues under the root. Returns how many
 * were added, or -errno; an interface that is gone meanwhile adds none. */
int nic_queue_add_settings(SettingTable *t, const Host *h, unsigned mask_bits, const NicPosture *np, int ifindex,
                           const char *ifname);

/* Whether the table holds a setting for exactly the queue files the posture asks of
 * interface ifname as sys/class/net lists them now: 1 yes, 0 no (queues came or went, the
 * interface was renamed), -errno when it cannot tell. A queue uevent that changes nothing
 * (the queues of a link just planned) then costs a listing, not a replan. */
int nic_queue_table_in_step(const SettingTable *t, const Host *h, const Posture *p, int ifindex, const char *ifname);

/* Adds the settings of queues that appeared on interfaces whose queues are kept already
 * (lowlatd was not told: a lost uevent); the vanished ones go at their next read. Returns
 * how many were added, or -errno. */
int nic_queue_table_rescan(SettingTable *t, const Host *h, const Posture *p);
