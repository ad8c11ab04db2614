/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The table of settings in force: the static ones planned from the posture, and one per
 * IRQ found in /proc/irq, kept in step with the host by table_scan(). */
#pragma once

#include "interrupts.h"
#include "setting.h"

typedef struct SettingTableHooks {
        void (*added)(void *userdata, Setting *s);
        void (*removed)(void *userdata, Setting *s); /* called before the setting is freed */
        void *userdata;
} SettingTableHooks;

/* A NIC's irq_cpus: its IRQs go exactly there. */
typedef struct NicIrqPin {
        int ifindex;
        unsigned *irqs;
        size_t n_irqs;
        CPUSet cpus;
} NicIrqPin;

typedef struct SettingTable {
        Setting **settings;
        size_t n, allocated;
        Setting **by_irq; /* index by IRQ number, NULL where none */
        size_t n_by_irq;
        IrqNames names;
        NicIrqPin *nic_pins;
        size_t n_nic_pins;
        SettingTableHooks hooks;
} SettingTable;

/* IRQ numbers above this are ignored (the kernel's limit is far lower; this bounds a
 * hostile or corrupt tree). */
#define IRQ_NUMBER_MAX (1U << 20)

void table_init(SettingTable *t, const SettingTableHooks *hooks);
void table_done(SettingTable *t);
int table_add(SettingTable *t, Setting *s);

/* Adds the settings that do not depend on IRQs: default affinity, sysctls,
 * cpu_dma_latency, governors, and stray_tasks ([cpus] evict_strays). */
int table_plan_static(SettingTable *t, const Posture *p);
/* With a cpu_dma_latency target: every cpuidle state of an isolated CPU whose exit latency
 * is above it, disabled (a state that deep would break the target on that CPU whatever
 * the latency request says, where the driver ignores PM QoS). Reads the host's states. */
int table_plan_cpuidle(SettingTable *t, const Host *h, const Posture *p);

/* Lists /proc/irq: adds a setting for each new IRQ (names from /proc/interrupts), drops
 * the ones that are gone. Returns the number of IRQs present, or -errno. */
int table_scan_irqs(SettingTable *t, const Host *h, const Posture *p);

/* Adds the settings the [nic] sections ask of this interface (and pins its IRQs when
 * irq_cpus is set). Returns 1 when a section matched, 0 when none did. */
int table_plan_nic(SettingTable *t, const Host *h, const Posture *p, int ifindex, const char *ifname);
/* Drops every setting of this interface and releases its IRQ pins. */
int table_drop_nic(SettingTable *t, const Posture *p, int ifindex);
bool table_has_nic(const SettingTable *t, int ifindex);

/* Reconciles every setting. Vanished IRQs are dropped. */
void table_reconcile_all(SettingTable *t, Reconciler *rc, uint64_t now, bool force);
/* Reconciles one; drops it if its object vanished. */
void table_reconcile_one(SettingTable *t, Reconciler *rc, Setting *s, uint64_t now, bool force);

/* Moves fds and history from old settings that match new ones (reload). old is emptied;
 * settings of old with no counterpart are released. */
void table_inherit(SettingTable *t, SettingTable *old);

/* Counts by state. */
void table_count(const SettingTable *t, size_t counts[_SETTING_STATE_MAX]);
