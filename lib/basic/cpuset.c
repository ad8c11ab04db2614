/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* CPU sets of any size and the kernel's list and mask text forms. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "basic/cpuset.h"
#include "basic/macro.h"

#define BITS_PER_WORD 64U

void cpuset_done(CPUSet *s) {
        free(s->words);
        *s = CPUSET_EMPTY;
}

static int cpuset_reserve(CPUSet *s, size_t n_words) {
        uint64_t *w;

        if (n_words <= s->n_words)
                return 0;
        w = realloc(s->words, n_words * sizeof(uint64_t));
        if (!w)
                return -ENOMEM;
        memset(w + s->n_words, 0, (n_words - s->n_words) * sizeof(uint64_t));
        s->words = w;
        s->n_words = n_words;
        return 0;
}

int cpuset_add(CPUSet *s, unsigned cpu) {
        int r;

        if (cpu >= CPUSET_MAX_CPUS)
                return -ERANGE;
        r = cpuset_reserve(s, cpu / BITS_PER_WORD + 1);
        if (r < 0)
                return r;
        s->words[cpu / BITS_PER_WORD] |= UINT64_C(1) << (cpu % BITS_PER_WORD);
        return 0;
}

int cpuset_add_range(CPUSet *s, unsigned first, unsigned last) {
        int r;

        if (first > last)
                return -EINVAL;
        if (last >= CPUSET_MAX_CPUS)
                return -ERANGE;
        r = cpuset_reserve(s, last / BITS_PER_WORD + 1);
        if (r < 0)
                return r;
        for (unsigned cpu = first; cpu <= last; cpu++)
                s->words[cpu / BITS_PER_WORD] |= UINT64_C(1) << (cpu % BITS_PER_WORD);
        return 0;
}

void cpuset_clear(CPUSet *s) {
        if (s->words)
                memset(s->words, 0, s->n_words * sizeof(uint64_t));
}

bool cpuset_contains(const CPUSet *s, unsigned cpu) {
        if (cpu / BITS_PER_WORD >= s->n_words)
                return false;
        return s->words[cpu / BITS_PER_WORD] & (UINT64_C(1) << (cpu % BITS_PER_WORD));
}

unsigned cpuset_count(const CPUSet *s) {
        unsigned n = 0;
        for (size_t i = 0; i < s->n_words; i++)
                n += (unsigned) __builtin_popcountll(s->words[i]);
        return n;
}

bool cpuset_is_empty(const CPUSet *s) {
        for (size_t i = 0; i < s->n_words; i++)
                if (s->words[i])
                        return false;
        return true;
}

int cpuset_last(const CPUSet *s) {
        for (size_t i = s->n_words; i > 0; i--)
                if (s->words[i - 1])
                        return (int) ((i - 1) * BITS_PER_WORD + 63 - (unsigned) __builtin_clzll(s->words[i - 1]));
        return -1;
}

int cpuset_next(const CPUSet *s, unsigned from) {
        size_t i = from / BITS_PER_WORD;
        uint64_t w;

        if (i >= s->n_words)
                return -1;
        w = s->words[i] & (~UINT64_C(0) << (from % BITS_PER_WORD));
        for (;;) {
                if (w)
                        return (int) (i * BITS_PER_WORD + (unsigned) __builtin_ctzll(w));
                if (++i >= s->n_words)
                        return -1;
                w = s->words[i];
        }
}

static uint64_t word_at(const CPUSet *s, size_t i) {
        return i < s->n_words ? s->words[i] : 0;
}

bool cpuset_equal(const CPUSet *a, const CPUSet *b) {
        size_t n = MAX(a->n_words, b->n_words);
        for (size_t i = 0; i < n; i++)
                if (word_at(a, i) != word_at(b, i))
                        return false;
        return true;
}

bool cpuset_intersects(const CPUSet *a, const CPUSet *b) {
        size_t n = MIN(a->n_words, b->n_words);
        for (size_t i = 0; i < n; i++)
                if (a->words[i] & b->words[i])
                        return true;
        return false;
}

bool cpuset_is_subset(const CPUSet *sub, const CPUSet *super) {
        for (size_t i = 0; i < sub->n_words; i++)
                if (sub->words[i] & ~word_at(super, i))
                        return false;
        return true;
}

int cpuset_copy(CPUSet *dst, const CPUSet *src) {
        int r = cpuset_reserve(dst, src->n_words);
        if (r < 0)
                return r;
        cpuset_clear(dst);
        if (src->n_words)
                memcpy(dst->words, src->words, src->n_words * sizeof(uint64_t));
        return 0;
}

int cpuset_or(CPUSet *dst, const CPUSet *src) {
        int r = cpuset_reserve(dst, src->n_words);
        if (r < 0)
                return r;
        for (size_t i = 0; i < src->n_words; i++)
                dst->words[i] |= src->words[i];
        return 0;
}

void cpuset_and(CPUSet *dst, const CPUSet *src) {
        for (size_t i = 0; i < dst->n_words; i++)
                dst->words[i] &= word_at(src, i);
}

void cpuset_subtract(CPUSet *dst, const CPUSet *src) {
        for (size_t i = 0; i < dst->n_words; i++)
                dst->words[i] &= ~word_at(src, i);
}

static int parse_cpu_number(const char **p, unsigned *ret) {
        unsigned long v = 0;
        const char *s = *p;

        if (!isdigit((unsigned char) *s))
                return -EINVAL;
        while (isdigit((unsigned char) *s)) {
                v = v * 10 + (unsigned long) (*s - '0');
                if (v >= CPUSET_MAX_CPUS)
                        return -ERANGE;
                s++;
        }
        *p = s;
        *ret = (unsigned) v;
        return 0;
}

int cpuset_parse_list(const char *text, CPUSet *s) {
        _cleanup_cpuset_ CPUSet parsed = CPUSET_EMPTY;
        const char *p = text;
        int r;

        while (isspace((unsigned char) *p))
                p++;
        while (*p && !isspace((unsigned char) *p)) {
                unsigned first, last;

                r = parse_cpu_number(&p, &first);
                if (r < 0)
                        return r;
                last = first;
                if (*p == '-') {
                        p++;
                        r = parse_cpu_number(&p, &last);
                        if (r < 0)
                                return r;
                        if (last < first)
                                return -EINVAL;
                }
                r = cpuset_add_range(&parsed, first, last);
                if (r < 0)
                        return r;
                if (*p == ',') {
                        p++;
                        if (!isdigit((unsigned char) *p))
                                return -EINVAL;
                } else if (*p && !isspace((unsigned char) *p))
                        return -EINVAL;
        }
        while (isspace((unsigned char) *p))
                p++;
        if (*p)
                return -EINVAL;

        cpuset_done(s);
        *s = parsed;
        parsed = CPUSET_EMPTY;
        return 0;
}

static int hex_value(char c) {
        if (c >= '0' && c <= '9')
                return c - '0';
        c = (char) tolower((unsigned char) c);
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        return -1;
}

int cpuset_parse_mask(const char *text, CPUSet *s) {
        _cleanup_cpuset_ CPUSet parsed = CPUSET_EMPTY;
        const char *start, *end;
        unsigned bit = 0;
        int r;

        while (isspace((unsigned char) *text))
                text++;
        start = text;
        end = start + strlen(start);
        while (end > start && isspace((unsigned char) end[-1]))
                end--;
        if (end == start)
                return -EINVAL;

        /* Walk the groups from the least significant (rightmost) one. */
        while (end > start) {
                const char *g = end;
                unsigned digits = 0;

                while (g > start && g[-1] != ',')
                        g--;
                if (g == end)
                        return -EINVAL; /* empty group: ",," or a trailing comma */
                for (const char *q = end; q > g; q--, digits++) {
                        int v = hex_value(q[-1]);
                        if (v < 0 || digits >= 8)
                                return -EINVAL;
                        for (unsigned b = 0; b < 4; b++)
                                if (v & (1 << b)) {
                                        unsigned cpu = bit + digits * 4 + b;
                                        if (cpu >= CPUSET_MAX_CPUS)
                                                return -ERANGE;
                                        r = cpuset_add(&parsed, cpu);
                                        if (r < 0)
                                                return r;
                                }
                }
                bit += 32;
                end = g;
                if (end > start) {
                        end--; /* the comma */
                        if (end == start)
                                return -EINVAL; /* leading comma */
                }
                if (bit > CPUSET_MAX_CPUS + 32)
                        return -ERANGE;
        }

        cpuset_done(s);
        *s = parsed;
        parsed = CPUSET_EMPTY;
        return 0;
}

int cpuset_format_list_buf(const CPUSet *s, char *buf, size_t size) {
        size_t len = 0;
        int cpu;

        if (size == 0)
                return -ENOBUFS;
        buf[0] = '\0';
        cpu = cpuset_next(s, 0);
        while (cpu >= 0) {
                int last = cpu, n;

                while (cpuset_contains(s, (unsigned) last + 1))
                        last++;
                if (last == cpu)
                        n = snprintf(buf + len, size - len, "%s%d", len ? "," : "", cpu);
                else
                        n = snprintf(buf + len, size - len, "%s%d-%d", len ? "," : "", cpu, last);
                if (n < 0 || (size_t) n >= size - len)
                        return -ENOBUFS;
                len += (size_t) n;
                cpu = cpuset_next(s, (unsigned) last + 1);
        }
        return (int) len;
}

char *cpuset_format_list(const CPUSet *s) {
        /* Worst case is every other CPU: "0,2,4,..." at up to 6 bytes each. */
        size_t size = (size_t) cpuset_count(s) * 8 + 1;
        char *buf = malloc(size);

        if (!buf)
                return NULL;
        if (cpuset_format_list_buf(s, buf, size) < 0) {
                free(buf);
                return NULL;
        }
        return buf;
}

char *cpuset_format_mask(const CPUSet *s, unsigned nbits) {
        unsigned groups, last = (unsigned) (cpuset_last(s) + 1);
        size_t len = 0;
        char *buf;

        nbits = MIN(MAX(MAX(nbits, last), 1U), CPUSET_MAX_CPUS);
        groups = (nbits + 31) / 32;
        buf = malloc((size_t) groups * 9 + 1);
        if (!buf)
                return NULL;

        for (unsigned g = groups; g > 0; g--) {
                uint32_t v = 0;
                unsigned base = (g - 1) * 32;

                for (unsigned b = 0; b < 32; b++)
                        if (cpuset_contains(s, base + b))
                                v |= UINT32_C(1) << b;
                if (g == groups) {
                        /* The kernel prints the top group only as wide as nbits needs. */
                        unsigned top_bits = nbits - base, width = (top_bits + 3) / 4;
                        len += (size_t) sprintf(buf + len, "%0*x", (int) width, v);
                } else
                        len += (size_t) sprintf(buf + len, ",%08x", v);
        }
        return buf;
}

int cpuset_parse_bytes(const uint8_t *bytes, size_t n, CPUSet *s) {
        _cleanup_cpuset_ CPUSet parsed = CPUSET_EMPTY;
        int r;

        for (size_t i = 0; i < n; i++)
                for (unsigned b = 0; b < 8; b++) {
                        if (!(bytes[i] & (1U << b)))
                                continue;
                        if (i >= CPUSET_MAX_CPUS / 8)
                                return -ERANGE;
                        r = cpuset_add(&parsed, (unsigned) i * 8 + b);
                        if (r < 0)
                                return r;
                }
        cpuset_done(s);
        *s = parsed;
        parsed = CPUSET_EMPTY;
        return 0;
}

int cpuset_format_bytes(const CPUSet *s, uint8_t **ret, size_t *ret_n) {
        int last = cpuset_last(s);
        uint8_t *bytes;
        size_t n;

        if (last < 0) {
                *ret = NULL;
                *ret_n = 0;
                return 0;
        }
        n = (size_t) last / 8 + 1;
        bytes = calloc(n, 1);
        if (!bytes)
                return -ENOMEM;
        CPUSET_FOREACH(cpu, s)
                bytes[cpu / 8] |= (uint8_t) (1U << (cpu % 8));
        *ret = bytes;
        *ret_n = n;
        return 0;
}
