/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Growable arrays: the one way to make room for more elements, in the manner of systemd's
 * GREEDY_REALLOC (amortized doubling, the allocated size kept beside the array). */
#pragma once

#include <stddef.h>

/* Makes *array (of *capacity elements of size bytes) hold at least need elements: 0, with
 * *array and *capacity updated (the contents kept, the new slots uninitialized), or
 * -ENOMEM with both untouched, also when need * size would not fit a size_t. Doubles,
 * so that appending one element at a time costs amortized constant time; an array that
 * is already big enough is left alone. */
int array_grow_size(void **array, size_t *capacity, size_t need, size_t size);

/* array_grow(&items, &allocated, n + 1): the element size is that of *items. Goes
 * through a void * of its own, so that no T ** is ever written through as a void **. */
#define array_grow(array, capacity, need)                                               \
        ({                                                                              \
                __typeof__(*(array)) *_array = (array);                                 \
                void *_grown = *_array;                                                 \
                int _r = array_grow_size(&_grown, (capacity), (need), sizeof(**_array)); \
                if (_r >= 0)                                                            \
                        *_array = _grown;                                               \
                _r;                                                                     \
        })
