/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The table of settings in force: what each kind plans from the posture, kept in step
 * with the host (IRQs come and go), indexed by kind and object, in ListSettings order.
 * It knows nothing of any kind: each plans and rescans through its SettingVTable. */
#pragma once

#include "basic/keyindex.h"
#include "setting/setting.h"

typedef struct SettingTableHooks {
        void (*added)(void *userdata, Setting *s);
        void (*removed)(void *userdata, Setting *s); /* called before the setting is freed */
        void *userdata;
} SettingTableHooks;

struct SettingTable {
        Setting **settings; /* in ListSettings order (setting_compare) once sorted */
        size_t n, allocated;
        KeyIndex index; /* by kind and object */
        size_t counts[_SETTING_STATE_MAX]; /* settings per state (setting_set_state()) */
        size_t kind_counts[_SETTING_KIND_MAX]; /* settings per kind */
        /* What a kind keeps about its planning beyond its settings (an IRQ's names from
         * /proc/interrupts, the NICs' IRQ pins): owned by the kind, freed by its
         * free_table_state(). */
        void *kind_state[_SETTING_KIND_MAX];
        /* Per kind: the number of its latest scan, and how many settings it has marked. */
        unsigned kind_scans[_SETTING_KIND_MAX];
        size_t kind_marked[_SETTING_KIND_MAX];
        SettingTableHooks hooks;
};

void table_init(SettingTable *t, const SettingTableHooks *hooks);
/* Moves a table to another place (a reload builds the new one beside the old); src is
 * left empty. A plain struct copy would leave the settings counting into the old place. */
void table_move(SettingTable *dst, SettingTable *src);
void table_done(SettingTable *t);
/* Takes s, also on failure (then freed). */
int table_add(SettingTable *t, Setting *s);
Setting *table_find(const SettingTable *t, SettingKind kind, const char *object);
/* Takes s out of the table (the removed hook runs) without freeing it; returns s, or
 * NULL when it was not in the table. */
Setting *table_detach(SettingTable *t, Setting *s);
/* Drops s from the table and frees it. */
void table_remove(SettingTable *t, Setting *s);
/* Puts the settings in ListSettings order. */
void table_sort(SettingTable *t);

/* Mark and sweep, for the kinds whose settings mirror a listing of the host's (the IRQs in
 * /proc/irq, the workqueues, the files [sysfs] patterns match): a scan of a kind begins
 * with table_scan_begin(), marks each setting it finds with table_scan_mark(), and ends
 * with table_scan_end(), which drops the kind's settings the scan did not mark (the walk
 * over the table happens only when some are missing) and sorts the table when the scan
 * added any. */
void table_scan_begin(SettingTable *t, SettingKind kind);
/* Marks s as found by the scan of its kind under way; a second mark counts once. */
void table_scan_mark(SettingTable *t, Setting *s);
bool table_scan_marked(const SettingTable *t, const Setting *s);
/* table_add() of a setting the scan under way found: marked. Takes s, also on failure. */
int table_scan_add(SettingTable *t, Setting *s);
void table_scan_end(SettingTable *t, SettingKind kind, size_t added);

/* Every kind's plan(), in registry order; the table is sorted after. Objects that come
 * and go are listed by table_rescan(). */
int table_plan(SettingTable *t, const Host *h, const Posture *p);
/* Every kind's rescan(). Returns 0, or the first error (the others still run). */
int table_rescan(SettingTable *t, const Host *h, const Posture *p);

/* Reconciles every setting; vanished ones are dropped. */
void table_reconcile_all(SettingTable *t, SettingContext *rc, uint64_t now, ReconcileFlags flags);
/* Reconciles one; drops it if its object vanished. */
void table_reconcile_one(SettingTable *t, SettingContext *rc, Setting *s, uint64_t now, ReconcileFlags flags);

/* Moves fds and history from old settings that match new ones (reload). old is emptied;
 * settings of old with no counterpart are released. */
void table_inherit(SettingTable *t, SettingTable *old);

/* Counts by state. */
void table_count(const SettingTable *t, size_t counts[_SETTING_STATE_MAX]);
