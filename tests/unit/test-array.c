/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* basic/array.h: growth, what it keeps, and what it refuses. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "basic/array.h"
#include "basic/macro.h"
#include "tap.h"

/* The refusals below ask malloc for more than any machine has: under ASan that must come
 * back as NULL, as it does from glibc, not abort the test. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) {
        return "allocator_may_return_null=1";
}

typedef struct Triple {
        uint64_t a, b, c;
} Triple;

static void test_growth(void) {
        _cleanup_free_ unsigned *items = NULL;
        size_t allocated = 0, moves = 0;
        bool kept = true, room = true;
        unsigned *before;

        CHECK(array_grow(&items, &allocated, 0) == 0 && !items && allocated == 0,
              "nothing needed: nothing allocated");
        for (unsigned i = 0; i < 10000; i++) {
                size_t was = allocated;
                if (array_grow(&items, &allocated, i + 1) < 0)
                        break;
                if (allocated != was)
                        moves++;
                room = room && allocated >= i + 1;
                items[i] = i;
        }
        for (unsigned i = 0; i < 10000; i++)
                kept = kept && items[i] == i;
        CHECK(room && allocated >= 10000, "room for every element appended");
        CHECK(kept, "the contents survive every growth");
        /* Doubling from 16: 16, 32, ... 16384 is eleven allocations, not ten thousand. */
        CHECK(moves == 11, "one element at a time grows by doubling");

        before = items;
        CHECK(array_grow(&items, &allocated, allocated) == 0 && items == before && allocated == 16384,
              "enough already: the array is left alone");
        CHECK(array_grow(&items, &allocated, 100000) == 0 && allocated == 100000 && items[9999] == 9999,
              "more than double: exactly what was asked for");
}

static void test_element_size(void) {
        _cleanup_free_ Triple *t = NULL;
        size_t allocated = 0;

        CHECK(array_grow(&t, &allocated, 3) == 0 && allocated >= 3, "an array of structs grows");
        /* Under ASan, writing every slot proves the size was sizeof(Triple), not of a pointer. */
        for (size_t i = 0; i < allocated; i++)
                t[i] = (Triple) { i, i, i };
        CHECK(t[allocated - 1].c == allocated - 1, "every slot holds a whole element");
}

static void test_refusals(void) {
        _cleanup_free_ uint64_t *items = NULL;
        size_t allocated = 0, huge;
        uint64_t *before;
        int r;

        CHECK(array_grow(&items, &allocated, 5) == 0, "a small array to refuse growing");
        for (size_t i = 0; i < 5; i++)
                items[i] = 100 + i;
        before = items;

        r = array_grow(&items, &allocated, SIZE_MAX / sizeof(uint64_t) + 1);
        CHECK(r == -ENOMEM && items == before && allocated == 16, "need * size past SIZE_MAX: -ENOMEM, not a wrap");
        r = array_grow(&items, &allocated, SIZE_MAX);
        CHECK(r == -ENOMEM && items == before && allocated == 16, "SIZE_MAX elements: -ENOMEM");

        /* Fits a size_t, but no allocator hands that out: realloc() itself fails. */
        r = array_grow(&items, &allocated, SIZE_MAX / sizeof(uint64_t));
        CHECK(r == -ENOMEM && items == before && allocated == 16, "a failed realloc(): -ENOMEM, array untouched");

        /* A capacity whose double overflows asks for just what is needed (and that fails
         * here too); the doubling never wraps to something small. */
        huge = SIZE_MAX / 2 + 1;
        {
                char *bytes = (char *) before;
                size_t capacity = huge;
                r = array_grow(&bytes, &capacity, huge + 1);
                CHECK(r == -ENOMEM && bytes == (char *) before && capacity == huge,
                      "a capacity that cannot double: no wrap, -ENOMEM, untouched");
        }

        CHECK(items[0] == 100 && items[4] == 104, "the old contents are still there");
        CHECK(array_grow(&items, &allocated, 6) == 0 && items[4] == 104, "and it still grows after a refusal");
}

int main(void) {
        test_growth();
        test_element_size();
        test_refusals();
        return tap_finish();
}
