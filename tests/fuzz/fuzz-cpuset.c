/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fuzzes the kernel's two CPU set text forms (cpuset.c): both parsers against references
 * written from cpuset.h, round trips through both formatters, the two forms agreeing on the
 * same set, and the set algebra. Input: one text, or two separated by '|' for the algebra. */
#include <ctype.h>
#include <stdbool.h>

#include "basic/cpuset.h"
#include "fuzz.h"
#include "basic/macro.h"
#include "basic/util.h"

#define REF_WORDS (CPUSET_MAX_CPUS / 64)

typedef struct ReferenceSet {
        uint64_t words[REF_WORDS];
} ReferenceSet;

static bool reference_add(ReferenceSet *r, unsigned long cpu) {
        if (cpu >= CPUSET_MAX_CPUS)
                return false;
        r->words[cpu / 64] |= UINT64_C(1) << (cpu % 64);
        return true;
}

static bool reference_equal(const ReferenceSet *r, const CPUSet *s) {
        for (size_t i = 0; i < REF_WORDS; i++)
                if (r->words[i] != (i < s->n_words ? s->words[i] : 0))
                        return false;
        for (size_t i = REF_WORDS; i < s->n_words; i++)
                if (s->words[i])
                        return false;
        return true;
}

/* cpuset.h: "0-3,8,10-11" with optional surrounding white space; "" is the empty set. */
static bool reference_parse_list(const char *p, ReferenceSet *ret) {
        memset(ret, 0, sizeof(*ret));
        while (isspace((unsigned char) *p))
                p++;
        while (*p && !isspace((unsigned char) *p)) {
                unsigned long first = 0, last;

                if (!isdigit((unsigned char) *p))
                        return false;
                for (; isdigit((unsigned char) *p); p++)
                        if ((first = first * 10 + (unsigned long) (*p - '0')) >= CPUSET_MAX_CPUS)
                                return false;
                last = first;
                if (*p == '-') {
                        p++;
                        if (!isdigit((unsigned char) *p))
                                return false;
                        for (last = 0; isdigit((unsigned char) *p); p++)
                                if ((last = last * 10 + (unsigned long) (*p - '0')) >= CPUSET_MAX_CPUS)
                                        return false;
                        if (last < first)
                                return false;
                }
                for (unsigned long cpu = first; cpu <= last; cpu++)
                        reference_add(ret, cpu);
                if (*p == ',') {
                        p++;
                        if (!isdigit((unsigned char) *p))
                                return false;
                } else if (*p && !isspace((unsigned char) *p))
                        return false;
        }
        while (isspace((unsigned char) *p))
                p++;
        return *p == '\0';
}

/* cpuset.h: comma-separated groups of up to 8 hex digits (32 bits), most significant first,
 * optional surrounding white space; at least one digit. *ret_groups says how many. */
static bool reference_parse_mask(const char *text, ReferenceSet *ret, size_t *ret_groups) {
        const char *start, *end;
        size_t groups = 1, group = 0;

        memset(ret, 0, sizeof(*ret));
        while (isspace((unsigned char) *text))
                text++;
        start = text;
        end = start + strlen(start);
        while (end > start && isspace((unsigned char) end[-1]))
                end--;
        if (start == end)
                return false;
        for (const char *p = start; p < end; p++)
                groups += *p == ',';
        *ret_groups = groups;

        for (const char *p = start; p <= end; p++) {
                const char *g = p;
                size_t digits;

                while (p < end && *p != ',')
                        p++;
                digits = (size_t) (p - g);
                if (digits == 0 || digits > 8)
                        return false;
                group++;
                for (size_t i = 0; i < digits; i++) {
                        char c = g[digits - 1 - i];
                        unsigned v;
                        if (!isxdigit((unsigned char) c))
                                return false;
                        v = (unsigned) (isdigit((unsigned char) c) ? c - '0' : tolower((unsigned char) c) - 'a' + 10);
                        for (unsigned b = 0; b < 4; b++)
                                if (v & (1U << b) &&
                                    !reference_add(ret, (unsigned long) (groups - group) * 32 + i * 4 + b))
                                        return false;
                }
        }
        return true;
}

static void check_consistent(const CPUSet *s) {
        unsigned n = 0;
        int previous = -1;

        CPUSET_FOREACH(cpu, s) {
                FUZZ_CHECK(cpu > previous && cpuset_contains(s, (unsigned) cpu), "CPUSET_FOREACH went wrong at %d", cpu);
                previous = cpu;
                n++;
        }
        FUZZ_CHECK(n == cpuset_count(s), "cpuset_count() says %u, FOREACH found %u", cpuset_count(s), n);
        FUZZ_CHECK(cpuset_last(s) == previous, "cpuset_last() says %d, FOREACH ended at %d", cpuset_last(s), previous);
        FUZZ_CHECK(cpuset_is_empty(s) == (n == 0), "cpuset_is_empty() disagrees with the count");
}

/* format(s) must reparse to s in both forms, and formatting the reparsed set must give the
 * same text: each form has one canonical spelling per set. */
static void check_round_trips(const CPUSet *s, unsigned nbits) {
        CPUSet from_list = CPUSET_EMPTY, from_mask = CPUSET_EMPTY;
        char *list = cpuset_format_list(s), *list_again, *mask, *mask_again, small[64];
        size_t len, groups;
        unsigned want_bits;
        int r;

        check_consistent(s);

        FUZZ_CHECK(list, "cpuset_format_list() returned NULL");
        r = cpuset_parse_list(list, &from_list);
        FUZZ_CHECK(r == 0 && cpuset_equal(&from_list, s), "'%s' does not reparse to the set (%d)", list, r);
        list_again = cpuset_format_list(&from_list);
        FUZZ_CHECK(list_again && streq(list, list_again), "list not canonical: '%s' then '%s'", list, list_again);
        len = strlen(list);
        FUZZ_CHECK(cpuset_format_list_buf(s, small, sizeof(small)) == (len < sizeof(small) ? (int) len : -ENOBUFS),
                   "cpuset_format_list_buf() into 64 bytes disagrees with '%s'", list);
        FUZZ_CHECK(len >= sizeof(small) || streq(small, list), "cpuset_format_list_buf() wrote '%s'", small);

        mask = cpuset_format_mask(s, nbits);
        FUZZ_CHECK(mask, "cpuset_format_mask() returned NULL");
        /* "Mask covering at least nbits bits", the top group as wide as it needs. */
        want_bits = MAX(MAX(nbits, (unsigned) (cpuset_last(s) + 1)), 1U);
        groups = (want_bits + 31) / 32;
        FUZZ_CHECK(strlen(mask) == groups * 9 - 1 - (8 - ((want_bits - (groups - 1) * 32) + 3) / 4),
                   "cpuset_format_mask(%u) = '%s' has the wrong width", nbits, mask);
        r = cpuset_parse_mask(mask, &from_mask);
        FUZZ_CHECK(r == 0 && cpuset_equal(&from_mask, s), "mask '%s' does not reparse to the set (%d)", mask, r);
        mask_again = cpuset_format_mask(&from_mask, nbits);
        FUZZ_CHECK(mask_again && streq(mask, mask_again), "mask not canonical: '%s' then '%s'", mask, mask_again);

        /* The two forms of one set name the same CPUs. */
        FUZZ_CHECK(cpuset_equal(&from_list, &from_mask), "list '%s' and mask '%s' disagree", list, mask);

        free(mask_again);
        free(mask);
        free(list_again);
        free(list);
        cpuset_done(&from_mask);
        cpuset_done(&from_list);
}

/* Parses text both ways; on failure the set passed in must be left as it was. Returns
 * whether either parser accepted it, with that set in *ret. */
static bool parse_both(const char *text, CPUSet *ret, unsigned nbits) {
        static ReferenceSet want;
        CPUSet s = CPUSET_EMPTY, sentinel = CPUSET_EMPTY;
        bool want_ok, any = false;
        size_t groups = 0;
        int r;

        FUZZ_CHECK(cpuset_add(&sentinel, 1) == 0 && cpuset_add(&sentinel, 100) == 0, "cpuset_add() failed");

        FUZZ_CHECK(cpuset_copy(&s, &sentinel) == 0, "cpuset_copy() failed");
        r = cpuset_parse_list(text, &s);
        want_ok = reference_parse_list(text, &want);
        FUZZ_CHECK((r == 0) == want_ok, "cpuset_parse_list() returned %d", r);
        FUZZ_CHECK(r == 0 || r == -EINVAL || r == -ERANGE, "cpuset_parse_list() returned %d", r);
        if (r == 0) {
                FUZZ_CHECK(reference_equal(&want, &s), "cpuset_parse_list() parsed a different set");
                check_round_trips(&s, nbits);
                FUZZ_CHECK(cpuset_copy(ret, &s) == 0, "cpuset_copy() failed");
                any = true;
        } else
                FUZZ_CHECK(cpuset_equal(&s, &sentinel), "a failed cpuset_parse_list() changed the set");

        FUZZ_CHECK(cpuset_copy(&s, &sentinel) == 0, "cpuset_copy() failed");
        r = cpuset_parse_mask(text, &s);
        want_ok = reference_parse_mask(text, &want, &groups);
        /* More groups than CPUSET_MAX_CPUS needs may be refused even when all zero. */
        FUZZ_CHECK((r == 0) == want_ok || (r == -ERANGE && groups > CPUSET_MAX_CPUS / 32),
                   "cpuset_parse_mask() returned %d (%zu groups)", r, groups);
        FUZZ_CHECK(r == 0 || r == -EINVAL || r == -ERANGE, "cpuset_parse_mask() returned %d", r);
        if (r == 0) {
                FUZZ_CHECK(reference_equal(&want, &s), "cpuset_parse_mask() parsed a different set");
                check_round_trips(&s, nbits);
                FUZZ_CHECK(cpuset_copy(ret, &s) == 0, "cpuset_copy() failed");
                any = true;
        } else
                FUZZ_CHECK(cpuset_equal(&s, &sentinel), "a failed cpuset_parse_mask() changed the set");

        cpuset_done(&s);
        cpuset_done(&sentinel);
        return any;
}

static void check_algebra(const CPUSet *a, const CPUSet *b) {
        CPUSet or = CPUSET_EMPTY, and = CPUSET_EMPTY, minus = CPUSET_EMPTY;
        unsigned top = (unsigned) MAX(cpuset_last(a), cpuset_last(b)) + 2;
        bool intersects = false, subset = true, equal = true;

        FUZZ_CHECK(cpuset_copy(&or, a) == 0 && cpuset_or(&or, b) == 0, "cpuset_or() failed");
        FUZZ_CHECK(cpuset_copy(&and, a) == 0, "cpuset_copy() failed");
        cpuset_and(&and, b);
        FUZZ_CHECK(cpuset_copy(&minus, a) == 0, "cpuset_copy() failed");
        cpuset_subtract(&minus, b);

        for (unsigned cpu = 0; cpu < top; cpu++) {
                bool in_a = cpuset_contains(a, cpu), in_b = cpuset_contains(b, cpu);
                FUZZ_CHECK(cpuset_contains(&or, cpu) == (in_a || in_b), "union wrong at CPU %u", cpu);
                FUZZ_CHECK(cpuset_contains(&and, cpu) == (in_a && in_b), "intersection wrong at CPU %u", cpu);
                FUZZ_CHECK(cpuset_contains(&minus, cpu) == (in_a && !in_b), "difference wrong at CPU %u", cpu);
                intersects = intersects || (in_a && in_b);
                subset = subset && (!in_a || in_b);
                equal = equal && in_a == in_b;
        }
        FUZZ_CHECK(cpuset_intersects(a, b) == intersects, "cpuset_intersects() says %d", !intersects);
        FUZZ_CHECK(cpuset_is_subset(a, b) == subset, "cpuset_is_subset() says %d", !subset);
        FUZZ_CHECK(cpuset_equal(a, b) == equal && cpuset_equal(b, a) == equal, "cpuset_equal() says %d", !equal);
        check_consistent(&or);
        check_consistent(&and);
        check_consistent(&minus);

        cpuset_done(&minus);
        cpuset_done(&and);
        cpuset_done(&or);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *text = fuzz_strndup(data, size), *bar;
        CPUSet a = CPUSET_EMPTY, b = CPUSET_EMPTY;
        unsigned nbits;

        /* Mask width from the text's length, like the number of possible CPUs would be:
         * sometimes below, sometimes above the highest CPU; never more than the limit. */
        nbits = (unsigned) (size * 7) % (CPUSET_MAX_CPUS + 1);

        bar = strchr(text, '|');
        if (!bar)
                (void) parse_both(text, &a, nbits);
        else {
                bool have_a, have_b;

                *bar = '\0';
                have_a = parse_both(text, &a, nbits);
                have_b = parse_both(bar + 1, &b, nbits);
                if (have_a && have_b)
                        check_algebra(&a, &b);
        }
        cpuset_done(&b);
        cpuset_done(&a);
        free(text);
        return 0;
}
