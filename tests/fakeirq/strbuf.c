/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Growing text buffers, and masks printed as the kernel prints them ("%*pb",
 * "%*pbl"). */

#include "fakeirq.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void strbuf_free(struct strbuf *b) {
        free(b->data);
        *b = (struct strbuf) {};
}

static bool strbuf_reserve(struct strbuf *b, size_t extra) {
        size_t want;
        char *p;

        if (b->failed)
                return false;
        if (b->len + extra + 1 <= b->cap)
                return true;
        want = b->cap ? b->cap : 64;
        while (want < b->len + extra + 1)
                want *= 2;
        p = realloc(b->data, want);
        if (!p) {
                b->failed = true;
                return false;
        }
        b->data = p;
        b->cap = want;
        return true;
}

PRINTF_LIKE(2, 3)
void strbuf_printf(struct strbuf *b, const char *fmt, ...) {
        va_list ap;
        int n;

        va_start(ap, fmt);
        n = vsnprintf(NULL, 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
                b->failed = true;
                return;
        }
        if (!strbuf_reserve(b, (size_t) n))
                return;
        va_start(ap, fmt);
        vsnprintf(b->data + b->len, b->cap - b->len, fmt, ap);
        va_end(ap);
        b->len += (size_t) n;
}

/* "%*pb": 32-bit words, high first, comma-separated, zero-padded to the width of
 * the word; the leading word only as wide as the bits above the last full word. */
void strbuf_put_mask_hex(struct strbuf *b, const uint32_t *mask, unsigned nbits) {
        unsigned chunk_bits = nbits % 32u ? nbits % 32u : 32u;
        bool first = true;

        for (long i = (long) bitmap_words(nbits) - 1; i >= 0; i--) {
                uint32_t chunk_mask = (uint32_t) ((UINT64_C(1) << chunk_bits) - 1);

                strbuf_printf(b, "%s%0*" PRIx32, first ? "" : ",",
                              (int) ((chunk_bits + 3u) / 4u), mask[i] & chunk_mask);
                first = false;
                chunk_bits = 32;
        }
}

/* "%*pbl": ranges "a-b", single CPUs "a", comma-separated, empty for no CPU. */
void strbuf_put_mask_list(struct strbuf *b, const uint32_t *mask, unsigned nbits) {
        bool first = true;

        for (unsigned bit = bitmap_next(mask, nbits, 0); bit < nbits;) {
                unsigned last = bit;

                while (last + 1 < nbits && bit_test(mask, last + 1))
                        last++;
                if (last == bit)
                        strbuf_printf(b, "%s%u", first ? "" : ",", bit);
                else
                        strbuf_printf(b, "%s%u-%u", first ? "" : ",", bit, last);
                first = false;
                bit = bitmap_next(mask, nbits, last + 1);
        }
}
