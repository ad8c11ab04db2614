/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Number, kernel release, duration, white space and UTF-8 helpers. */
#include "basic/errorlist.h"
#include "tap.h"
#include "basic/util.h"

static void test_numbers(void) {
        uint64_t v;
        uint32_t u;

        CHECK(parse_uint64("0", &v) == 0 && v == 0, "0 parses");
        CHECK(parse_uint64("18446744073709551615", &v) == 0 && v == UINT64_MAX, "UINT64_MAX parses");
        CHECK(parse_uint64("18446744073709551616", &v) == -ERANGE, "UINT64_MAX+1 is out of range");
        CHECK(parse_uint64("-1", &v) == -EINVAL, "a sign is refused");
        CHECK(parse_uint64(" 1", &v) == -EINVAL, "leading space is refused");
        CHECK(parse_uint64("1x", &v) == -EINVAL, "trailing garbage is refused");
        CHECK(parse_uint64("", &v) == -EINVAL, "empty is refused");
        CHECK(parse_uint32("4294967296", &u) == -ERANGE, "UINT32_MAX+1 is out of range for 32 bits");
}

static void test_kernel_release(void) {
        static const char *const bad[] = { "", "6", "6.", ".1", "x6.1", "6.x", "1234567.1", "6.1234567", "-6.1" };
        unsigned major = 0, minor = 0;
        bool ok = true;

        CHECK(parse_kernel_release("6.1.0-57-rt-amd64", &major, &minor) == 0 && major == 6 && minor == 1,
              "6.1.0-57-rt-amd64: 6.1");
        CHECK(parse_kernel_release("6.12.9+bpo-rt-amd64", &major, &minor) == 0 && major == 6 && minor == 12,
              "6.12.9+bpo-rt-amd64: 6.12, not 6.1");
        CHECK(parse_kernel_release("7.0", &major, &minor) == 0 && major == 7 && minor == 0, "7.0: nothing after it");
        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                if (parse_kernel_release(bad[i], &major, &minor) != -EINVAL) {
                        printf("# '%s' parsed\n", bad[i]);
                        ok = false;
                }
        CHECK(ok && parse_kernel_release(NULL, &major, &minor) == -EINVAL,
              "no MAJOR.MINOR at the start, or more than six digits: -EINVAL");
}

static void test_durations(void) {
        uint64_t v;
        _cleanup_free_ char *a = NULL, *b = NULL, *c = NULL;

        CHECK(parse_duration_usec("250ms", &v) == 0 && v == 250 * USEC_PER_MSEC, "250ms");
        CHECK(parse_duration_usec("10s", &v) == 0 && v == 10 * USEC_PER_SEC, "10s");
        CHECK(parse_duration_usec("2min", &v) == 0 && v == 120 * USEC_PER_SEC, "2min");
        CHECK(parse_duration_usec("5", &v) == 0 && v == 5 * USEC_PER_SEC, "a bare number is seconds");
        CHECK(parse_duration_usec("2m", &v) == 0 && v == 120 * USEC_PER_SEC, "2m is minutes, as in systemd");
        CHECK(parse_duration_usec("1h", &v) == 0 && v == 3600 * USEC_PER_SEC, "1h");
        CHECK(parse_duration_usec("10min", &v) == 0 && v == 600 * USEC_PER_SEC, "10min");
        CHECK(parse_duration_usec("1M", &v) == 0 && v == 2629800 * USEC_PER_SEC, "1M is a month (30.44 days)");
        CHECK(parse_duration_usec("2 weeks", &v) == 0 && v == 14 * 86400 * USEC_PER_SEC, "a long unit after a space");
        CHECK(parse_duration_usec("1h 30min", &v) == 0 && v == 5400 * USEC_PER_SEC, "terms are summed");
        CHECK(parse_duration_usec("1h30min5s", &v) == 0 && v == 5405 * USEC_PER_SEC, "terms need no space");
        CHECK(parse_duration_usec("1.5s", &v) == 0 && v == 1500 * USEC_PER_MSEC, "a fraction");
        CHECK(parse_duration_usec(".25 ms", &v) == 0 && v == 250, "a fraction alone");
        CHECK(parse_duration_usec("0.0000001s", &v) == 0 && v == 0, "digits below a microsecond count nothing");
        CHECK(parse_duration_usec("3\xc2\xb5s", &v) == 0 && v == 3, "3 us with the micro sign U+00B5");
        CHECK(parse_duration_usec("3\xce\xbcs", &v) == 0 && v == 3, "3 us with the Greek mu U+03BC");
        CHECK(parse_duration_usec(" 7 ", &v) == 0 && v == 7 * USEC_PER_SEC, "white space around is allowed");
        CHECK(parse_duration_usec("1hour", &v) == 0 && v == 3600 * USEC_PER_SEC, "hour");
        CHECK(parse_duration_usec("1 fortnight", &v) == -EINVAL, "unknown unit");
        CHECK(parse_duration_usec("1H", &v) == -EINVAL, "units are case-sensitive (H is none)");
        CHECK(parse_duration_usec("s", &v) == -EINVAL, "unit without number");
        CHECK(parse_duration_usec("-1s", &v) == -EINVAL, "a sign is refused");
        CHECK(parse_duration_usec("infinity", &v) == -EINVAL, "infinity is refused");
        CHECK(parse_duration_usec("", &v) == -EINVAL && parse_duration_usec("  ", &v) == -EINVAL, "empty is refused");
        CHECK(parse_duration_usec("1s,2s", &v) == -EINVAL, "a comma is no separator");
        CHECK(parse_duration_usec("99999999999999999999s", &v) == -ERANGE, "overflow is refused");
        CHECK(parse_duration_usec("584555y", &v) == -ERANGE, "past 2^64 us after the unit: -ERANGE");
        CHECK(parse_duration_usec("18446744073709551615us 1us", &v) == -ERANGE, "a sum past 2^64 us: -ERANGE");
        CHECK(parse_duration_usec("18446744073709551615us", &v) == 0 && v == UINT64_MAX, "2^64-1 us exactly");
        a = format_duration_usec(120 * USEC_PER_SEC);
        b = format_duration_usec(1500 * USEC_PER_MSEC);
        c = format_duration_usec(7);
        CHECK_STR(a, "2min", "format minutes");
        CHECK_STR(b, "1500ms", "format milliseconds");
        CHECK_STR(c, "7us", "format microseconds");
        {
                _cleanup_free_ char *hour = format_duration_usec(3600 * USEC_PER_SEC),
                                    *day = format_duration_usec(24 * 3600 * USEC_PER_SEC),
                                    *mixed = format_duration_usec(5400 * USEC_PER_SEC),
                                    *zero = format_duration_usec(0);
                /* Bounds in messages ("out of range (100ms to 1h)") are written this way. */
                CHECK_STR(hour, "1h", "format an hour as 1h, not 60min");
                CHECK_STR(day, "24h", "format a day as 24h");
                CHECK_STR(mixed, "90min", "1h 30min: the largest unit that divides it");
                CHECK_STR(zero, "0s", "format zero as 0s");
        }
}

static void test_whitespace(void) {
        _cleanup_free_ char *a = normalize_whitespace("  4096\t131072 \t 6291456\n");
        _cleanup_free_ char *b = normalize_whitespace("");
        char s[] = " \t x y \n";

        CHECK_STR(a, "4096 131072 6291456", "runs collapse and ends trim");
        CHECK_STR(b, "", "empty stays empty");
        CHECK_STR(strstrip(s), "x y", "strstrip trims both ends");
        {
                /* Exactly isspace() of the C locale: \t \n \v \f \r and the space; not \x1c or
                 * a non-breaking space's byte. */
                char w[] = "\v\f\r \t\n\x1c" "1\xa0\r\v\f\t\n ";
                CHECK_STR(strstrip(w), "\x1c" "1\xa0", "strstrip trims C-locale white space only");
        }
        {
                char t[] = "\n always  madvise\t[never] \n", u[] = " \t ";
                CHECK_STR(normalize_whitespace_in_place(t), "always madvise [never]", "in place: the same rules");
                CHECK_STR(normalize_whitespace_in_place(u), "", "in place: white space only becomes empty");
        }
        CHECK(word_list_contains("performance powersave", "powersave") &&
                      word_list_contains("\tperformance\n  powersave\n", "performance"),
              "word_list_contains: any word, whatever the white space");
        CHECK(!word_list_contains("performance powersave", "power") &&
                      !word_list_contains("performance powersave", "performance powersave") &&
                      !word_list_contains("performance", "") && !word_list_contains("", "x"),
              "word_list_contains: whole words only, an empty word never");
}

static void test_utf8(void) {
        _cleanup_free_ char *a = utf8_escape("caf\xe9-\xff\xfe");
        _cleanup_free_ char *b = utf8_escape("café ✓");
        _cleanup_free_ char *c = utf8_escape("\xc0\xaf\xed\xa0\x80");

        CHECK(utf8_is_valid("plain ascii"), "ASCII is valid");
        CHECK(utf8_is_valid("café ✓ 😀"), "two-, three- and four-byte sequences are valid");
        CHECK(!utf8_is_valid("caf\xe9"), "a Latin-1 byte is not");
        CHECK(!utf8_is_valid("\xc0\xaf"), "an overlong form is not");
        CHECK(!utf8_is_valid("\xed\xa0\x80"), "a UTF-16 surrogate is not");
        CHECK(!utf8_is_valid("\xf4\x90\x80\x80"), "past U+10FFFF is not");
        CHECK(!utf8_is_valid("\xe2\x9c"), "a truncated sequence is not");
        CHECK_STR(a, "caf\\xe9-\\xff\\xfe", "invalid bytes are escaped");
        CHECK_STR(b, "café ✓", "valid text is unchanged");
        CHECK(utf8_is_valid(c), "escaping yields valid UTF-8");

        _cleanup_error_list_ ErrorList errors = ERROR_LIST_EMPTY;
        CHECK(error_list_add(&errors, "t.conf:1: unknown key '%s'", "caf\xe9") == 0, "error added");
        CHECK_STR(errors.items[0], "t.conf:1: unknown key 'caf\\xe9'", "error messages are escaped to UTF-8");
}

/* Text for a terminal or a journal MESSAGE: IRQ names come from drivers, which name them
 * after network devices, and those may hold any byte. */
static void test_text_escape(void) {
        _cleanup_free_ char *hostile = text_escape("eth\xff\x1b[2J\xc2\x9b""31m\xe2\x80\xaetxt.exe\xe2\x81\xa6x\x7f");
        _cleanup_free_ char *kept = text_escape("café ✓ 😀 \xc2\xa0nbsp \xe2\x80\x8bzwsp");
        _cleanup_free_ char *truncated = text_escape("a\xe2\x80");
        char esc[TEXT_ESCAPE_MAX];
        size_t len;
        uint32_t cp = 0;

        CHECK(utf8_decode("\xc2\x9b", &cp) == 2 && cp == 0x9b, "utf8_decode: U+009B is two bytes");
        CHECK(utf8_decode("\xe2\x80\xae", &cp) == 3 && cp == 0x202e, "utf8_decode: U+202E is three bytes");
        CHECK(utf8_decode("\xff", &cp) == 0 && cp == 0x202e, "utf8_decode: an invalid byte is 0, nothing written");
        CHECK(unichar_is_unsafe(0x1b) && unichar_is_unsafe(0x7f) && unichar_is_unsafe(0x80) && unichar_is_unsafe(0x9f) &&
                      unichar_is_unsafe(0x202a) && unichar_is_unsafe(0x202e) && unichar_is_unsafe(0x2066) &&
                      unichar_is_unsafe(0x2069) && unichar_is_unsafe(0x200f) && unichar_is_unsafe(0x2028),
              "unsafe: C0, DEL, C1, bidi embeddings, overrides, isolates and marks, line separators");
        CHECK(!unichar_is_unsafe(' ') && !unichar_is_unsafe('~') && !unichar_is_unsafe(0xa0) && !unichar_is_unsafe(0xe9) &&
                      !unichar_is_unsafe(0x2027) && !unichar_is_unsafe(0x202f) && !unichar_is_unsafe(0x206a) &&
                      !unichar_is_unsafe(0x1f600),
              "safe: printable ASCII, Latin-1 letters, the neighbours of the unsafe ranges, emoji");
        CHECK_STR(hostile, "eth\\xff\\x1b[2J\\u009b31m\\u202etxt.exe\\u2066x\\x7f",
                  "text_escape: invalid bytes and C0 as \\xNN, C1 and bidi as \\uNNNN");
        CHECK(utf8_is_valid(hostile), "text_escape: the result is valid UTF-8");
        CHECK_STR(kept, "café ✓ 😀 \xc2\xa0nbsp \xe2\x80\x8bzwsp", "text_escape: safe text is kept byte for byte");
        CHECK_STR(truncated, "a\\xe2\\x80", "text_escape: a truncated sequence at the end, byte by byte");
        CHECK(text_escape_next("\xe2\x80\xae!", esc, &len) == 3 && len == 6 && memcmp(esc, "\\u202e", 6) == 0,
              "text_escape_next: takes the whole sequence, writes its escape");
        CHECK(text_escape_next("\xc3\xa9", esc, &len) == 2 && len == 0, "text_escape_next: a safe character is kept");
        _cleanup_free_ char *lines = text_escape_lines("a.conf:1: bad\n\tb.conf:2: \x1b[31m");
        _cleanup_free_ char *one = text_escape("a\nb");
        CHECK_STR(lines, "a.conf:1: bad\n\\x09b.conf:2: \\x1b[31m", "text_escape_lines: line feeds kept, the rest escaped");
        CHECK_STR(one, "a\\x0ab", "text_escape: a line feed is escaped");
}

int main(void) {
        test_numbers();
        test_kernel_release();
        test_durations();
        test_whitespace();
        test_utf8();
        test_text_escape();
        return tap_finish();
}
