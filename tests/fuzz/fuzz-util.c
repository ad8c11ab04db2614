/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fuzzes util.c's text helpers against small reference implementations written from their
 * documentation: durations, unsigned numbers, booleans, white space, and UTF-8 (validity,
 * escaping, and the escaping error_list_add() applies before text reaches the bus). */
#include <ctype.h>
#include <inttypes.h>
#include <stdbool.h>
#include <strings.h>

#include "basic/errorlist.h"
#include "fuzz.h"
#include "basic/util.h"

/* Length of the well-formed UTF-8 sequence at s (Unicode table 3-7), 0 when there is none.
 * Written from the table, not from util.c, so that the two can disagree. */
static size_t reference_utf8_length(const unsigned char *s) {
        unsigned char lo = 0x80, hi = 0xbf;
        size_t n;

        if (s[0] <= 0x7f)
                return 1;
        if (s[0] >= 0xc2 && s[0] <= 0xdf)
                n = 2;
        else if (s[0] >= 0xe0 && s[0] <= 0xef) {
                n = 3;
                if (s[0] == 0xe0)
                        lo = 0xa0; /* overlong */
                else if (s[0] == 0xed)
                        hi = 0x9f; /* surrogates */
        } else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
                n = 4;
                if (s[0] == 0xf0)
                        lo = 0x90; /* overlong */
                else if (s[0] == 0xf4)
                        hi = 0x8f; /* past U+10FFFF */
        } else
                return 0;
        if (s[1] < lo || s[1] > hi)
                return 0;
        for (size_t i = 2; i < n; i++)
                if (s[i] < 0x80 || s[i] > 0xbf)
                        return 0;
        return n;
}

static bool reference_utf8_is_valid(const char *s) {
        const unsigned char *p = (const unsigned char *) s;
        while (*p) {
                size_t n = reference_utf8_length(p);
                if (n == 0)
                        return false;
                p += n;
        }
        return true;
}

static char *reference_utf8_escape(const char *s) {
        const unsigned char *p = (const unsigned char *) s;
        char *out = malloc(strlen(s) * 4 + 1), *o = out;

        FUZZ_CHECK(out, "out of memory");
        while (*p) {
                size_t n = reference_utf8_length(p);
                if (n == 0) {
                        o += sprintf(o, "\\x%02x", *p++);
                        continue;
                }
                memcpy(o, p, n);
                o += n;
                p += n;
        }
        *o = '\0';
        return out;
}

static void check_utf8(const char *s) {
        bool valid = utf8_is_valid(s);
        char *escaped = utf8_escape(s), *expected = reference_utf8_escape(s);
        ErrorList errors = ERROR_LIST_EMPTY;

        FUZZ_CHECK(valid == reference_utf8_is_valid(s), "utf8_is_valid() says %d", valid);
        FUZZ_CHECK(escaped, "utf8_escape() returned NULL");
        FUZZ_CHECK(utf8_is_valid(escaped) && reference_utf8_is_valid(escaped),
                   "utf8_escape() output is not valid UTF-8");
        FUZZ_CHECK(!valid || streq(escaped, s), "utf8_escape() changed valid UTF-8");
        FUZZ_CHECK(streq(escaped, expected), "utf8_escape() gave '%s', expected '%s'", escaped, expected);
        /* Escaping is a fixed point: the output has nothing left to escape. */
        free(expected);
        expected = utf8_escape(escaped);
        FUZZ_CHECK(expected && streq(expected, escaped), "utf8_escape() is not idempotent");

        /* What error_list_add() stores must be valid UTF-8 whatever the input. */
        FUZZ_CHECK(error_list_add(&errors, "x:1: '%s'", s) == 0, "error_list_add() failed");
        FUZZ_CHECK(errors.n == 1 && reference_utf8_is_valid(errors.items[0]),
                   "error_list_add() stored invalid UTF-8");
        error_list_done(&errors);
        free(expected);
        free(escaped);
}

/* parse_uint64() per util.h: digits only, base 10, no overflow. */
static bool reference_parse_uint64(const char *s, size_t len, uint64_t *ret) {
        uint64_t v = 0;

        if (len == 0)
                return false;
        for (size_t i = 0; i < len; i++) {
                if (!isdigit((unsigned char) s[i]))
                        return false;
                if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, (uint64_t) (s[i] - '0'), &v))
                        return false;
        }
        *ret = v;
        return true;
}

/* parse_duration_usec() per util.h and lowlatd.conf(5), written apart from util.c: the
 * string is read as number and word tokens, and each number with the word after it (if
 * any) is summed in 128 bits; the first token that is wrong or takes the sum past 2^64 - 1
 * decides. */
static bool reference_unit(const char *word, size_t n, uint64_t *ret) {
        static const char *const names[][5] = {
                { "us", "usec", "\xc2\xb5s", "\xce\xbcs" }, { "ms", "msec" },
                { "s", "sec", "second", "seconds" },         { "m", "min", "minute", "minutes" },
                { "h", "hr", "hour", "hours" },             { "d", "day", "days" },
                { "w", "week", "weeks" },                   { "M", "month", "months" },
                { "y", "year", "years" },
        };
        static const uint64_t usec[] = { 1, 1000, 1000000, 60000000, 3600000000, 86400000000, 604800000000,
                                         2629800000000, 31557600000000 };

        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                for (size_t j = 0; j < 5 && names[i][j]; j++)
                        if (strlen(names[i][j]) == n && memcmp(names[i][j], word, n) == 0) {
                                *ret = usec[i];
                                return true;
                        }
        return false;
}

/* 0: fine, -EINVAL, -ERANGE, as parse_duration_usec() answers. */
static int reference_parse_duration(const char *s, uint64_t *ret) {
        unsigned __int128 total = 0;
        bool any = false, too_big = false;
        size_t i = 0, len = strlen(s);

        for (;;) {
                unsigned __int128 whole = 0, term;
                size_t start, point = SIZE_MAX, end, word, word_end;
                uint64_t unit = 1000000;

                while (i < len && strchr(" \t\n\r", s[i]))
                        i++;
                if (i == len)
                        break;
                start = i;
                while (i < len && ((s[i] >= '0' && s[i] <= '9') || (s[i] == '.' && point == SIZE_MAX))) {
                        if (s[i] == '.')
                                point = i;
                        i++;
                }
                end = i;
                if (end == start || (end - start == 1 && point == start))
                        return -EINVAL; /* no digit */
                while (i < len && strchr(" \t\n\r", s[i]))
                        i++;
                word = i;
                while (i < len && (((s[i] | 0x20) >= 'a' && (s[i] | 0x20) <= 'z') || (unsigned char) s[i] >= 0x80))
                        i++;
                word_end = i;
                if (word_end > word && !reference_unit(s + word, word_end - word, &unit))
                        return -EINVAL;
                for (size_t k = start; k < (point == SIZE_MAX ? end : point); k++) {
                        whole = whole * 10 + (unsigned) (s[k] - '0');
                        if (whole > UINT64_MAX)
                                too_big = true, whole = (unsigned __int128) UINT64_MAX + 1;
                }
                term = whole * unit;
                if (point != SIZE_MAX) {
                        uint64_t step = unit;
                        for (size_t k = point + 1; k < end && step > 0; k++) {
                                step /= 10;
                                term += (unsigned __int128) step * (unsigned) (s[k] - '0');
                        }
                }
                total += term;
                if (too_big || total > UINT64_MAX)
                        return -ERANGE; /* the first term that cannot be told wins, as in util.c */
                any = true;
        }
        if (!any)
                return -EINVAL;
        *ret = (uint64_t) total;
        return 0;
}

static void check_numbers(const char *s) {
        uint64_t got = 0, want = 0;
        bool ok = false, want_ok;
        int r;

        r = parse_uint64(s, &got);
        want_ok = reference_parse_uint64(s, strlen(s), &want);
        FUZZ_CHECK((r == 0) == want_ok, "parse_uint64() returned %d", r);
        FUZZ_CHECK(r != 0 || got == want, "parse_uint64() gave %" PRIu64 ", expected %" PRIu64, got, want);
        FUZZ_CHECK(r == 0 || r == -EINVAL || r == -ERANGE, "parse_uint64() returned %d", r);

        r = parse_duration_usec(s, &got);
        FUZZ_CHECK(r == reference_parse_duration(s, &want), "parse_duration_usec() returned %d, expected %d", r,
                   reference_parse_duration(s, &want));
        if (r == 0) {
                uint64_t again = 0;
                char *formatted = format_duration_usec(got);

                FUZZ_CHECK(got == want, "parse_duration_usec() gave %" PRIu64 ", expected %" PRIu64, got, want);
                FUZZ_CHECK(formatted, "format_duration_usec() returned NULL");
                FUZZ_CHECK(parse_duration_usec(formatted, &again) == 0 && again == got,
                           "'%s' does not read back as %" PRIu64 "us", formatted, got);
                free(formatted);
        }

        r = parse_boolean(s, &ok);
        want_ok = false;
        for (size_t i = 0; i < 8; i++) {
                static const char *const words[] = { "1", "yes", "on", "true", "0", "no", "off", "false" };
                if (strcasecmp(s, words[i]) == 0) {
                        want_ok = true;
                        FUZZ_CHECK(r == 0 && ok == (i < 4), "parse_boolean() got '%s' wrong", s);
                }
        }
        FUZZ_CHECK(want_ok || r == -EINVAL, "parse_boolean() accepted '%s'", s);
}

static void check_format_duration(const uint8_t *data, size_t size) {
        uint64_t usec = 0, again = 0;
        char *formatted;

        memcpy(&usec, data, MIN(size, sizeof(usec)));
        formatted = format_duration_usec(usec);
        FUZZ_CHECK(formatted, "format_duration_usec() returned NULL");
        FUZZ_CHECK(parse_duration_usec(formatted, &again) == 0 && again == usec,
                   "format_duration_usec(%" PRIu64 ") = '%s' does not read back", usec, formatted);
        free(formatted);
}

static void check_whitespace(const char *s) {
        char *normalized = normalize_whitespace(s), *again, *copy, *stripped;
        const char *p = s, *q;

        FUZZ_CHECK(normalized, "normalize_whitespace() returned NULL");
        /* No white space at the ends, none but single spaces inside, and the same
         * non-space bytes in the same order. */
        q = normalized;
        FUZZ_CHECK(*q != ' ', "leading space in '%s'", normalized);
        for (; *q; q++) {
                if (*q == ' ') {
                        FUZZ_CHECK(q[1] != ' ' && q[1] != '\0', "double or trailing space in '%s'", normalized);
                        continue;
                }
                FUZZ_CHECK(!isspace((unsigned char) *q), "white space 0x%02x left in output", (unsigned char) *q);
                while (isspace((unsigned char) *p))
                        p++;
                FUZZ_CHECK(*p == *q, "byte 0x%02x lost or changed", (unsigned char) *p);
                p++;
        }
        while (isspace((unsigned char) *p))
                p++;
        FUZZ_CHECK(*p == '\0', "input bytes dropped from the end");
        again = normalize_whitespace(normalized);
        FUZZ_CHECK(again && streq(again, normalized), "normalize_whitespace() is not idempotent");

        copy = strdup(s);
        FUZZ_CHECK(copy, "out of memory");
        stripped = strstrip(copy);
        FUZZ_CHECK(!isspace((unsigned char) stripped[0]), "strstrip() left leading white space");
        FUZZ_CHECK(stripped[0] == '\0' || !isspace((unsigned char) stripped[strlen(stripped) - 1]),
                   "strstrip() left trailing white space");
        FUZZ_CHECK(strstr(s, stripped), "strstrip() result is not a part of its input");

        free(copy);
        free(again);
        free(normalized);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *s = fuzz_strndup(data, size);

        check_utf8(s);
        check_numbers(s);
        check_whitespace(s);
        check_format_duration(data, size);
        free(s);
        return 0;
}
