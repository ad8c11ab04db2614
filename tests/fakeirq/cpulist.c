/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The kernel's cpulist and hex mask parsers, ported so that every string the daemon
 * can write is accepted or refused with the kernel's errno. */

#include "fakeirq.h"

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <strings.h>

/* Ports of lib/bitmap-str.c (bitmap_parselist(), bitmap_parse()) so every string the
 * daemon can write is accepted or refused with the kernel's errno. */

static bool kernel_isspace(char c) {
        unsigned char u = (unsigned char) c;

        /* lib/ctype.c: \t..\r, space, and Latin-1 NBSP are _S */
        return u == ' ' || (u >= '\t' && u <= '\r') || u == 0xa0;
}

static bool end_of_str(char c) {
        return c == '\0' || c == '\n';
}

static bool region_separator(char c) {      /* __end_of_region() */
        return kernel_isspace(c) || c == ',';
}

static bool end_of_region(char c) {
        return region_separator(c) || end_of_str(c);
}

struct region {
        unsigned start;
        unsigned off;
        unsigned group_len;
        unsigned end;
        unsigned nbits;
};

static int region_getnum(const char **str, unsigned *ret_num, unsigned lastbit) {
        const char *p = *str;
        unsigned long long n = 0;
        bool overflow = false;
        size_t len = 0;

        if (p[0] == 'N') {
                *ret_num = lastbit;
                *str = p + 1;
                return 0;
        }

        for (; p[len] >= '0' && p[len] <= '9'; len++) {
                unsigned digit = (unsigned) (p[len] - '0');

                if (n > (ULLONG_MAX - digit) / 10u)
                        overflow = true;
                n = n * 10u + digit;
        }
        if (len == 0)
                return -EINVAL;
        if (overflow || n > UINT_MAX)
                return -EOVERFLOW;

        *ret_num = (unsigned) n;
        *str = p + len;
        return 0;
}

static const char *region_find(const char *str) {
        while (region_separator(*str))
                str++;
        return end_of_str(*str) ? NULL : str;
}

/* On success *str is where the next region search starts, or NULL at the end. */
static int region_parse(const char **str, struct region *r) {
        unsigned lastbit = r->nbits - 1;
        const char *p = *str;
        int e;

        if (strncasecmp(p, "all", 3) == 0) {
                r->start = 0;
                r->end = lastbit;
                p += 3;
                goto check_pattern;
        }

        e = region_getnum(&p, &r->start, lastbit);
        if (e < 0)
                return e;
        if (end_of_region(*p))
                goto no_end;
        if (*p != '-')
                return -EINVAL;
        p++;
        e = region_getnum(&p, &r->end, lastbit);
        if (e < 0)
                return e;

check_pattern:
        if (end_of_region(*p))
                goto no_pattern;
        if (*p != ':')
                return -EINVAL;
        p++;
        e = region_getnum(&p, &r->off, lastbit);
        if (e < 0)
                return e;
        if (*p != '/')
                return -EINVAL;
        p++;
        e = region_getnum(&p, &r->group_len, lastbit);
        if (e < 0)
                return e;
        *str = p;
        return 0;

no_end:
        r->end = r->start;
no_pattern:
        r->off = r->end + 1;
        r->group_len = r->end + 1;
        *str = end_of_str(*p) ? NULL : p;
        return 0;
}

static int region_check(const struct region *r) {
        if (r->start > r->end || r->group_len == 0 || r->off > r->group_len)
                return -EINVAL;
        if (r->end >= r->nbits)
                return -ERANGE;
        return 0;
}

static void region_apply(const struct region *r, uint32_t *mask) {
        for (unsigned start = r->start; start <= r->end; start += r->group_len) {
                unsigned len = r->end - start + 1;

                bitmap_set_range(mask, start, len < r->off ? len : r->off);
        }
}

/* bitmap_parselist(): @buf ends at NUL or newline. */
int kernel_parse_list(const char *buf, uint32_t *mask, unsigned nbits) {
        struct region r = { .nbits = nbits };

        bitmap_zero(mask, nbits);
        while (buf) {
                int e;

                buf = region_find(buf);
                if (!buf)
                        return 0;
                e = region_parse(&buf, &r);
                if (e < 0)
                        return e;
                e = region_check(&r);
                if (e < 0)
                        return e;
                region_apply(&r, mask);
        }
        return 0;
}

static int hex_digit(char c) {
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}

/* bitmap_get_x32_reverse(), with an index instead of a pointer so that stepping
 * before the start of the string stays defined. */
static int parse_x32_reverse(const char *start, ptrdiff_t *end_io, uint32_t *ret_word) {
        ptrdiff_t end = *end_io;
        uint32_t word = 0;

        for (unsigned shift = 0; shift < 32; shift += 4) {
                int digit = hex_digit(start[end--]);

                if (digit < 0)
                        return -EINVAL;
                word |= (uint32_t) digit << shift;
                if (end < 0 || region_separator(start[end]))
                        goto out;
        }
        if (hex_digit(start[end--]) >= 0)
                return -EOVERFLOW;
out:
        *ret_word = word;
        *end_io = end;
        return 0;
}

/* bitmap_parse(): hex words from the right, 32 bits per comma-separated group. */
int kernel_parse_hex(const char *start, uint32_t *mask, unsigned nbits) {
        ptrdiff_t end = (ptrdiff_t) strcspn(start, "\n") - 1;
        size_t chunks = bitmap_words(nbits);
        unsigned parsed_bits;

        bitmap_zero(mask, nbits);
        for (size_t chunk = 0;; chunk++) {
                int e;

                while (end >= 0 && region_separator(start[end]))
                        end--;
                if (end < 0)
                        break;
                if (chunks == 0)
                        return -EOVERFLOW;
                chunks--;
                e = parse_x32_reverse(start, &end, &mask[chunk]);
                if (e < 0)
                        return e;
        }

        parsed_bits = (unsigned) (bitmap_words(nbits) - chunks) * 32u;
        if (parsed_bits < nbits)
                return 0;
        if (bitmap_next(mask, parsed_bits, nbits) != parsed_bits)
                return -EOVERFLOW;
        return 0;
}
