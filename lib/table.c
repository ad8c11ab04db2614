/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The table of settings in force, and its index by kind and object. */
#include <stdlib.h>
#include <string.h>

#include "table.h"
#include "util.h"

void table_init(SettingTable *t, const SettingTableHooks *hooks) {
        *t = (SettingTable) {};
        if (hooks)
                t->hooks = *hooks;
}

/* --- the index: open addressing with linear probing, at most half full --- */

static size_t index_hash(SettingKind kind, const char *object) {
        /* FNV-1a: objects are short ("1234", "eth0/rx_usecs"). */
        size_t h = (size_t) 14695981039346656037ULL ^ (size_t) kind;

        for (const unsigned char *c = (const unsigned char *) object; *c; c++)
                h = (h ^ *c) * (size_t) 1099511628211ULL;
        return h;
}

static size_t index_slot(const SettingTable *t, SettingKind kind, const char *object) {
        size_t mask = t->index_size - 1, i = index_hash(kind, object) & mask;

        while (t->index[i] && (t->index[i]->kind != kind || !streq(t->index[i]->object, object)))
                i = (i + 1) & mask;
        return i;
}

static int index_grow(SettingTable *t, size_t want) {
        size_t size = t->index_size ? t->index_size : 64;
        Setting **old = t->index;
        size_t old_size = t->index_size;

        while (size < 2 * want)
                size *= 2;
        if (size == t->index_size)
                return 0;
        t->index = calloc(size, sizeof(Setting *));
        if (!t->index) {
                t->index = old;
                return -ENOMEM;
        }
        t->index_size = size;
        for (size_t i = 0; i < old_size; i++)
                if (old[i])
                        t->index[index_slot(t, old[i]->kind, old[i]->object)] = old[i];
        free(old);
        return 0;
}

/* Deletion without tombstones: the entries after the hole that probed past it move up. */
static void index_remove(SettingTable *t, const Setting *s) {
        size_t mask = t->index_size - 1, i, j;

        if (t->index_size == 0)
                return;
        i = index_slot(t, s->kind, s->object);
        if (t->index[i] != s)
                return;
        t->index[i] = NULL;
        for (j = (i + 1) & mask; t->index[j]; j = (j + 1) & mask) {
                size_t home = index_hash(t->index[j]->kind, t->index[j]->object) & mask;
                /* Move j into the hole i unless its home lies cyclically in (i, j]. */
                if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
                        t->index[i] = t->index[j];
                        t->index[j] = NULL;
                        i = j;
                }
        }
}

Setting *table_find(const SettingTable *t, SettingKind kind, const char *object) {
        if (t->index_size == 0)
                return NULL;
        return t->index[index_slot(t, kind, object)];
}

/* --- the table --- */

static Setting *table_take(SettingTable *t, size_t i) {
        Setting *s = t->settings[i];

        if (t->hooks.removed)
                t->hooks.removed(t->hooks.userdata, s);
        index_remove(t, s);
        /* Keep the order (ListSettings shows it); objects vanish rarely. */
        memmove(t->settings + i, t->settings + i + 1, (t->n - i - 1) * sizeof(Setting *));
        t->n--;
        return s;
}

static void table_drop(SettingTable *t, size_t i) {
        setting_free(table_take(t, i));
}

void table_done(SettingTable *t) {
        while (t->n > 0)
                table_drop(t, t->n - 1);
        free(t->settings);
        free(t->index);
        for (size_t k = 0; k < _SETTING_KIND_MAX; k++)
                if (t->kind_state[k] && setting_vtables[k]->free_table_state)
                        setting_vtables[k]->free_table_state(t->kind_state[k]);
        *t = (SettingTable) {};
}

int table_add(SettingTable *t, Setting *s) {
        int r;

        if (t->n == t->allocated) {
                size_t n = t->allocated ? t->allocated * 2 : 64;
                Setting **a = realloc(t->settings, n * sizeof(Setting *));
                if (!a) {
                        setting_free(s);
                        return -ENOMEM;
                }
                t->settings = a;
                t->allocated = n;
        }
        r = index_grow(t, t->n + 1);
        if (r < 0) {
                setting_free(s);
                return r;
        }
        t->index[index_slot(t, s->kind, s->object)] = s;
        t->settings[t->n++] = s;
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
        qsort(t->settings, t->n, sizeof(Setting *), compare_settings);
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

void table_reconcile_one(SettingTable *t, Reconciler *rc, Setting *s, uint64_t now, ReconcileFlags flags) {
        if (setting_reconcile(rc, s, now, flags) == -ENOENT)
                table_remove(t, s);
}

void table_reconcile_all(SettingTable *t, Reconciler *rc, uint64_t now, ReconcileFlags flags) {
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
        memset(counts, 0, sizeof(size_t) * _SETTING_STATE_MAX);
        for (size_t i = 0; i < t->n; i++)
                counts[t->settings[i]->state]++;
}
