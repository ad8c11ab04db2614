/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The table of settings in force, and its index by kind and object. */
#include <stdlib.h>
#include <string.h>

#include "basic/array.h"
#include "setting/table.h"
#include "basic/util.h"

static void setting_key(const void *item, int *ret_kind, const char **ret_name);

void table_init(SettingTable *t, const SettingTableHooks *hooks) {
        *t = (SettingTable) {};
        key_index_init(&t->index, setting_key);
        if (hooks)
                t->hooks = *hooks;
}

static void setting_key(const void *item, int *ret_kind, const char **ret_name) {
        const Setting *s = item;

        *ret_kind = (int) s->kind;
        *ret_name = s->object;
}

Setting *table_find(const SettingTable *t, SettingKind kind, const char *object) {
        return key_index_find(&t->index, (int) kind, object);
}

/* --- the table --- */

static Setting *table_take(SettingTable *t, size_t i) {
        Setting *s = t->settings[i];

        t->counts[s->state]--;
        t->kind_counts[s->kind]--;
        s->state_counts = NULL;
        if (t->hooks.removed)
                t->hooks.removed(t->hooks.userdata, s);
        key_index_remove(&t->index, s);
        /* Keep the order (ListSettings shows it); objects vanish rarely. */
        memmove(t->settings + i, t->settings + i + 1, (t->n - i - 1) * sizeof(Setting *));
        t->n--;
        return s;
}

static void table_drop(SettingTable *t, size_t i) {
        setting_free(table_take(t, i));
}

void table_move(SettingTable *dst, SettingTable *src) {
        *dst = *src;
        /* The settings count themselves in their table's counts, which just moved. */
        for (size_t i = 0; i < dst->n; i++)
                dst->settings[i]->state_counts = dst->counts;
        table_init(src, NULL);
}

void table_done(SettingTable *t) {
        while (t->n > 0)
                table_drop(t, t->n - 1);
        free(t->settings);
        key_index_done(&t->index);
        for (size_t k = 0; k < _SETTING_KIND_MAX; k++)
                if (t->kind_state[k] && setting_vtables[k]->free_table_state)
                        setting_vtables[k]->free_table_state(t->kind_state[k]);
        *t = (SettingTable) {};
}

int table_add(SettingTable *t, Setting *s) {
        int r;

        if (array_grow(&t->settings, &t->allocated, t->n + 1) < 0) {
                setting_free(s);
                return -ENOMEM;
        }
        r = key_index_add(&t->index, s);
        if (r < 0) {
                setting_free(s);
                return r;
        }
        t->settings[t->n++] = s;
        s->state_counts = t->counts;
        t->counts[s->state]++;
        t->kind_counts[s->kind]++;
        if (t->hooks.added)
                t->hooks.added(t->hooks.userdata, s);
        return 0;
}

Setting *table_detach(SettingTable *t, Setting *s) {
        for (size_t i = t->n; i > 0; i--)
                if (t->settings[i - 1] == s)
                        return table_take(t, i - 1);
        return NULL;
}

void table_remove(SettingTable *t, Setting *s) {
        setting_free(table_detach(t, s));
}

static int compare_settings(const void *a, const void *b) {
        return setting_compare(*(Setting *const *) a, *(Setting *const *) b);
}

void table_sort(SettingTable *t) {
        if (t->n == 0)
                return; /* an empty table may have no array; qsort() wants one */
        qsort(t->settings, t->n, sizeof(Setting *), compare_settings);
}

void table_scan_begin(SettingTable *t, SettingKind kind) {
        t->kind_scans[kind]++;
        t->kind_marked[kind] = 0;
}

bool table_scan_marked(const SettingTable *t, const Setting *s) {
        return s->seen_scan == t->kind_scans[s->kind];
}

void table_scan_mark(SettingTable *t, Setting *s) {
        if (table_scan_marked(t, s))
                return;
        s->seen_scan = t->kind_scans[s->kind];
        t->kind_marked[s->kind]++;
}

int table_scan_add(SettingTable *t, Setting *s) {
        int r = table_add(t, s);

        if (r >= 0)
                table_scan_mark(t, s);
        return r;
}

void table_scan_end(SettingTable *t, SettingKind kind, size_t added) {
        if (t->kind_marked[kind] < t->kind_counts[kind])
                for (size_t i = t->n; i > 0; i--) {
                        Setting *s = t->settings[i - 1];
                        if (s->kind == kind && !table_scan_marked(t, s))
                                table_drop(t, i - 1);
                }
        /* ListSettings shows the table in order; the sort is paid only when settings appear. */
        if (added > 0)
                table_sort(t);
}

int table_plan(SettingTable *t, const Host *h, const Posture *p) {
        for (size_t k = 0; k < _SETTING_KIND_MAX; k++) {
                if (!setting_vtables[k]->plan)
                        continue;
                int r = setting_vtables[k]->plan(t, h, p);
                if (r < 0)
                        return r;
        }
        table_sort(t);
        return 0;
}

int table_rescan(SettingTable *t, const Host *h, const Posture *p) {
        int r = 0;

        for (size_t k = 0; k < _SETTING_KIND_MAX; k++) {
                if (!setting_vtables[k]->rescan)
                        continue;
                int q = setting_vtables[k]->rescan(t, h, p);
                if (q < 0 && r == 0)
                        r = q;
        }
        return r;
}

void table_reconcile_one(SettingTable *t, SettingContext *rc, Setting *s, uint64_t now, ReconcileFlags flags) {
        if (setting_reconcile(rc, s, now, flags) == -ENOENT)
                table_remove(t, s);
}

void table_reconcile_all(SettingTable *t, SettingContext *rc, uint64_t now, ReconcileFlags flags) {
        for (size_t i = t->n; i > 0; i--) {
                Setting *s = t->settings[i - 1];
                if (setting_reconcile(rc, s, now, flags) == -ENOENT)
                        table_drop(t, i - 1);
                else
                        setting_tick(rc, s, now, flags);
        }
}

void table_inherit(SettingTable *t, SettingTable *old) {
        for (size_t i = 0; i < t->n; i++) {
                Setting *n = t->settings[i], *o = table_find(old, n->kind, n->object);
                if (o)
                        setting_inherit(n, o);
        }
        table_done(old);
}

void table_count(const SettingTable *t, size_t counts[_SETTING_STATE_MAX]) {
        memcpy(counts, t->counts, sizeof(t->counts));
}
