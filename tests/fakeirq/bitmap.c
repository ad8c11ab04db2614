/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fakeirqfs's CPU and IRQ masks: arrays of 32-bit words, the layout the kernel's
 * hex parser and printer work in. */

#include "fakeirq.h"

#include <string.h>

/* Masks are arrays of 32-bit words, bit N of the mask is bit N%32 of word N/32:
 * the layout the kernel's hex parser and printer work in. */

size_t bitmap_words(unsigned nbits) {
        return (nbits + 31u) / 32u;
}

bool bit_test(const uint32_t *mask, unsigned bit) {
        return (mask[bit / 32u] >> (bit % 32u)) & 1u;
}

void bit_set(uint32_t *mask, unsigned bit) {
        mask[bit / 32u] |= UINT32_C(1) << (bit % 32u);
}

void bit_clear(uint32_t *mask, unsigned bit) {
        mask[bit / 32u] &= ~(UINT32_C(1) << (bit % 32u));
}

void bitmap_zero(uint32_t *mask, unsigned nbits) {
        memset(mask, 0, bitmap_words(nbits) * sizeof(uint32_t));
}

void bitmap_copy(uint32_t *dst, const uint32_t *src, unsigned nbits) {
        memcpy(dst, src, bitmap_words(nbits) * sizeof(uint32_t));
}

void bitmap_set_range(uint32_t *mask, unsigned start, unsigned len) {
        for (unsigned bit = start; bit < start + len; bit++)
                bit_set(mask, bit);
}

/* First set bit at or after @from in [0, nbits), or nbits. */
unsigned bitmap_next(const uint32_t *mask, unsigned nbits, unsigned from) {
        for (unsigned bit = from; bit < nbits; bit++) {
                if (bit % 32u == 0 && mask[bit / 32u] == 0) {
                        bit += 31u;
                        continue;
                }
                if (bit_test(mask, bit))
                        return bit;
        }
        return nbits;
}

unsigned bitmap_next_and(const uint32_t *a, const uint32_t *b, unsigned nbits, unsigned from) {
        for (unsigned bit = from; bit < nbits; bit++)
                if (bit_test(a, bit) && bit_test(b, bit))
                        return bit;
        return nbits;
}

bool bitmap_intersects(const uint32_t *a, const uint32_t *b, unsigned nbits) {
        return bitmap_next_and(a, b, nbits, 0) < nbits;
}

unsigned bitmap_weight(const uint32_t *mask, unsigned nbits) {
        unsigned n = 0;

        for (unsigned bit = 0; bit < nbits; bit++)
                n += bit_test(mask, bit);
        return n;
}
