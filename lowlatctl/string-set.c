/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* StringSet: names in first-seen order, for counting settings by kind and state when the
 * names come from lowlatd and may be ones this lowlatctl has never heard of. */
#include "client.h"
#include "basic/array.h"
#include "basic/macro.h"
#include "basic/util.h"

void string_set_done(StringSet *s) {
        s->items = mfree(s->items);
        s->n = s->allocated = 0;
}

ssize_t string_set_put(StringSet *set, const char *s) {
        for (size_t i = 0; i < set->n; i++)
                if (streq(set->items[i], s))
                        return (ssize_t) i;
        if (array_grow(&set->items, &set->allocated, set->n + 1) < 0)
                return -ENOMEM;
        set->items[set->n] = s;
        return (ssize_t) set->n++;
}
