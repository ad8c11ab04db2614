/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* An index of items by (kind, name): the settings table by kind and object, the originals
 * file's entries the same way. Open addressing with linear probing, at most half full, so
 * that a lookup costs one hash of a short name whatever the number of IRQs. The items
 * stay the caller's; the index only points at them. */
#pragma once

#include <stddef.h>

/* Reads an item's key. */
typedef void (*KeyIndexKey)(const void *item, int *ret_kind, const char **ret_name);

typedef struct KeyIndex {
        /* NULL: free. No hash beside each item: at most half full, a lookup probes about
         * 1.5 slots, and comparing those names costs less than the 8 bytes a slot would
         * take per item (16 kB at 1,000 IRQs, in each of the two indexes). */
        void **slots;
        size_t size; /* a power of two, or 0 before the first add */
        size_t n;
        KeyIndexKey key;
} KeyIndex;

void key_index_init(KeyIndex *x, KeyIndexKey key);
void key_index_done(KeyIndex *x);
/* Adds item, whose key must not be in the index yet. 0 or -ENOMEM. */
int key_index_add(KeyIndex *x, void *item);
void *key_index_find(const KeyIndex *x, int kind, const char *name);
/* Removes item if it is there. */
void key_index_remove(KeyIndex *x, const void *item);
