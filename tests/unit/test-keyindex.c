/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The index by (kind, name): adds, finds and removals in random order against a plain
 * array, so that a removal's backward shift (which recomputes each moved item's home from
 * its key) never loses an item that probed past the hole. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "basic/keyindex.h"
#include "basic/macro.h"
#include "tap.h"

#define ITEMS 3000

typedef struct Item {
        int kind;
        char name[16];
        bool indexed;
} Item;

static void item_key(const void *item, int *ret_kind, const char **ret_name) {
        const Item *i = item;
        *ret_kind = i->kind;
        *ret_name = i->name;
}

/* Every item is found exactly when it is indexed, as itself. */
static bool index_agrees(const KeyIndex *x, Item *items, size_t n) {
        size_t indexed = 0;

        for (size_t i = 0; i < n; i++) {
                void *found = key_index_find(x, items[i].kind, items[i].name);
                if (found != (items[i].indexed ? &items[i] : NULL))
                        return false;
                indexed += items[i].indexed;
        }
        return indexed == x->n;
}

static void test_random_order(void) {
        static Item items[ITEMS];
        KeyIndex x;
        bool agrees = true, added = true;
        unsigned seed = 1;

        key_index_init(&x, item_key);
        CHECK(key_index_find(&x, 0, "1") == NULL, "an empty index finds nothing");
        for (size_t i = 0; i < ITEMS; i++) {
                /* Two kinds share names, as IRQ "42" and a sysctl "42" would. */
                items[i] = (Item) { .kind = (int) (i % 2) };
                snprintf(items[i].name, sizeof(items[i].name), "%zu", i / 2);
        }
        for (unsigned round = 0; round < 20000; round++) {
                size_t i;
                seed = seed * 1103515245u + 12345u;
                i = (seed >> 8) % ITEMS;
                if (items[i].indexed) {
                        key_index_remove(&x, &items[i]);
                        items[i].indexed = false;
                } else {
                        added = added && key_index_add(&x, &items[i]) == 0;
                        items[i].indexed = true;
                }
                if (round % 997 == 0)
                        agrees = agrees && index_agrees(&x, items, ITEMS);
        }
        CHECK(added, "every add succeeds");
        CHECK(agrees && index_agrees(&x, items, ITEMS), "after 20,000 random adds and removals it finds exactly what is in it");
        CHECK(x.size >= 2 * x.n, "it stays at most half full");
        for (size_t i = 0; i < ITEMS; i++)
                if (items[i].indexed) {
                        key_index_remove(&x, &items[i]);
                        items[i].indexed = false;
                }
        CHECK(x.n == 0 && index_agrees(&x, items, ITEMS), "removing everything leaves it empty");
        key_index_remove(&x, &items[0]);
        CHECK(x.n == 0, "removing what is not there changes nothing");
        key_index_done(&x);
}

int main(void) {
        test_random_order();
        return tap_finish();
}
