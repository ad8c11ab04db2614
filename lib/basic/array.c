/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Growable arrays (see array.h). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "basic/array.h"

/* The smallest array worth allocating: appends of a few elements cost one allocation. */
#define ARRAY_CAPACITY_MIN 16U

int array_grow_size(void **array, size_t *capacity, size_t need, size_t size) {
        size_t grown;
        void *p;

        if (need <= *capacity)
                return 0;
        if (size == 0)
                return -EINVAL;
        if (need > SIZE_MAX / size)
                return -ENOMEM;
        grown = need;
        if (*capacity <= SIZE_MAX / 2 && *capacity * 2 > grown)
                grown = *capacity * 2;
        if (grown < ARRAY_CAPACITY_MIN)
                grown = ARRAY_CAPACITY_MIN;
        /* Doubling past what a size_t can count: exactly what was asked for is enough. */
        if (grown > SIZE_MAX / size)
                grown = need;
        p = realloc(*array, grown * size);
        if (!p)
                return -ENOMEM;
        *array = p;
        *capacity = grown;
        return 0;
}
