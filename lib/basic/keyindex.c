/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* An index of items by (kind, name). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "basic/keyindex.h"

void key_index_init(KeyIndex *x, KeyIndexKey key) {
        *x = (KeyIndex) { .key = key };
}

void key_index_done(KeyIndex *x) {
        free(x->slots);
        key_index_init(x, x->key);
}

static size_t hash(int kind, const char *name) {
        /* FNV-1a: names are short ("1234", "eth0/rx_usecs"). */
        size_t h = (size_t) 14695981039346656037ULL ^ (size_t) (unsigned) kind;

        for (const unsigned char *c = (const unsigned char *) name; *c; c++)
                h = (h ^ *c) * (size_t) 1099511628211ULL;
        return h;
}

static size_t item_hash(const KeyIndex *x, const void *item) {
        const char *name;
        int kind;

        x->key(item, &kind, &name);
        return hash(kind, name);
}

/* The slot holding (kind, name), or the free slot where it would go. */
static size_t slot_of(const KeyIndex *x, int kind, const char *name, size_t h) {
        size_t mask = x->size - 1, i = h & mask;

        for (; x->slots[i]; i = (i + 1) & mask) {
                const char *n;
                int k;

                x->key(x->slots[i], &k, &n);
                if (k == kind && strcmp(n, name) == 0)
                        break;
        }
        return i;
}

static void put(KeyIndex *x, void *item, size_t h) {
        size_t mask = x->size - 1, i = h & mask;

        while (x->slots[i])
                i = (i + 1) & mask;
        x->slots[i] = item;
}

static int grow(KeyIndex *x, size_t want) {
        size_t size = x->size ? x->size : 64, old_size = x->size;
        void **old = x->slots;

        while (size < 2 * want)
                size *= 2;
        if (size == x->size)
                return 0;
        x->slots = calloc(size, sizeof(void *));
        if (!x->slots) {
                x->slots = old;
                return -ENOMEM;
        }
        x->size = size;
        for (size_t i = 0; i < old_size; i++)
                if (old[i])
                        put(x, old[i], item_hash(x, old[i]));
        free(old);
        return 0;
}

int key_index_add(KeyIndex *x, void *item) {
        int r = grow(x, x->n + 1);

        if (r < 0)
                return r;
        put(x, item, item_hash(x, item));
        x->n++;
        return 0;
}

void *key_index_find(const KeyIndex *x, int kind, const char *name) {
        if (x->size == 0)
                return NULL;
        return x->slots[slot_of(x, kind, name, hash(kind, name))];
}

/* Deletion without tombstones: the items after the hole that probed past it move up. */
void key_index_remove(KeyIndex *x, const void *item) {
        size_t mask = x->size - 1, i, j;
        const char *name;
        int kind;

        if (x->size == 0)
                return;
        x->key(item, &kind, &name);
        i = slot_of(x, kind, name, hash(kind, name));
        if (x->slots[i] != item)
                return;
        x->slots[i] = NULL;
        x->n--;
        for (j = (i + 1) & mask; x->slots[j]; j = (j + 1) & mask) {
                size_t home = item_hash(x, x->slots[j]) & mask;
                /* Move j into the hole at i unless its home lies cyclically in (i, j]. */
                if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
                        x->slots[i] = x->slots[j];
                        x->slots[j] = NULL;
                        i = j;
                }
        }
}
