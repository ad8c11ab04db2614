/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* irq_affinity: every IRQ in /proc/irq kept off the isolated CPUs, or exactly on its pin
 * ([irq] pin by action name, a NIC's irq_cpus). The table's IRQs follow /proc/irq. */
#pragma once

#include "setting/setting.h"
#include "setting/table.h"
#include "host/interrupts.h"

/* IRQ numbers above this are ignored (the kernel's limit is far lower; this bounds a
 * hostile or corrupt tree). */
#define IRQ_NUMBER_MAX (1U << 20)

int setting_new_irq(const Posture *p, unsigned irq, const char *irq_name, Setting **ret);
/* An IRQ's action names changed (a driver requested or released it): recompute its
 * target from the pins. */
int setting_irq_retarget(const Posture *p, Setting *s, const char *irq_name);
/* The same with the target given: cpus, exactly (a pin) or as "stay within". Returns 1
 * when the target changed, 0 when it was already that. */
int setting_irq_set_target(Setting *s, const char *irq_name, const CPUSet *cpus, bool exact);

/* Whether s is an IRQ's affinity; its number in *ret_irq (may be NULL). */
bool setting_is_irq(const Setting *s, unsigned *ret_irq);
/* Whether the IRQ is pinned: its affinity must equal the pin, not merely avoid the
 * isolated CPUs. */
bool setting_irq_is_exact(const Setting *s);
/* The CPUs the IRQ's chip delivers it to now (effective_affinity_list, read when asked:
 * the scan judges the affinity asked for and never needs it). -ENODATA when the kernel
 * has no such file for it. */
int setting_irq_effective(const Setting *s, const Host *h, CPUSet *ret);
/* The CPUs the IRQ is served on: the effective ones where the kernel says, else its
 * affinity as last observed. */
int setting_irq_served_cpus(const Setting *s, const Host *h, CPUSet *ret);
/* The persistent fds a scan reads (for the benchmark's floor); -1 where none. */
int setting_irq_fd(const Setting *s);

/* Lists /proc/irq: adds a setting for each new IRQ (named from /proc/interrupts), drops
 * the ones that are gone. With pins, which match on names, /proc/interrupts is read on
 * every scan; without, only when IRQs appear. Returns the number of IRQs present, or
 * -errno. */
int irq_table_scan(SettingTable *t, const Host *h, const Posture *p);
/* Reads /proc/interrupts again and gives every IRQ setting the name it has now (its
 * label; no other change): for what people read (ListSettings, the report), as a driver
 * may request an IRQ long after it appeared. */
int irq_table_refresh_names(SettingTable *t, const Host *h);
/* Why the last read of the IRQ names failed: -EFBIG when /proc/interrupts is larger than
 * PROC_INTERRUPTS_MAX, another -errno, or 0 when it worked (or none was needed yet). */
int irq_table_names_error(SettingTable *t);
/* A NIC's irq_cpus: the interface's IRQs (its device's MSI vectors, and the action names
 * that are its name or start with it and a dash) go exactly to cpus; wins over [irq]
 * pins. */
int irq_table_pin_nic(SettingTable *t, const Host *h, const Posture *p, int ifindex, const char *ifname,
                      const CPUSet *cpus);
/* The IRQs of one interface: its device's MSI vectors (sys/class/net/IFNAME/device/
 * msi_irqs), and the IRQs in names whose action is the interface's name or starts with it
 * and a dash (eth0-TxRx-3). A device without MSI has none of the first kind. */
int irq_nic_irqs(const Host *h, const IrqNames *names, const char *ifname, unsigned **ret, size_t *ret_n);
/* Forgets an interface's irq_cpus. Returns 1 when it had some: its IRQs then need their
 * targets again (irq_table_retarget(), once the caller is done changing pins). */
int irq_table_unpin_nic(SettingTable *t, int ifindex);
/* Every IRQ's target from the pins and names as they are now. */
int irq_table_retarget(SettingTable *t, const Posture *p);
bool irq_table_has_nic_pin(const SettingTable *t, int ifindex);

/* This many distinct IRQs rewritten within FIGHT_WINDOW_USEC is another IRQ balancer. */
#define IRQ_WRITER_IRQS 5

/* IRQ balancers move many IRQs once each, which no single setting sees as a fight: the
 * last few distinct IRQs whose held affinity was rewritten, and when. */
typedef struct IrqWriterWatch {
        unsigned irq[IRQ_WRITER_IRQS];
        uint64_t at[IRQ_WRITER_IRQS];
        bool reported;
        uint64_t last_usec;
} IrqWriterWatch;

/* Called for each correction (or, observing, each drift) of a setting whose held value
 * someone rewrote. Returns 1 when IRQ_WRITER_IRQS distinct IRQs were rewritten within
 * the fight window and that is news, with their numbers in irqs (space separated); 0
 * otherwise (s is not an IRQ, too few, already reported). */
int irq_writer_note(IrqWriterWatch *w, const Setting *s, uint64_t now, char *irqs, size_t size);
/* From the scan: returns true (and forgets) when a reported writer has been quiet for
 * FIGHT_QUIET_USEC, so that a new burst is news again. */
bool irq_writer_tick(IrqWriterWatch *w, uint64_t now);
