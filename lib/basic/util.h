/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* String and number parsing with full error checks, and small fd helpers. */
#pragma once

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include "basic/macro.h"

static inline bool streq(const char *a, const char *b) {
        return strcmp(a, b) == 0;
}

static inline bool streq_ptr(const char *a, const char *b) {
        if (!a || !b)
                return a == b;
        return streq(a, b);
}

/* a + b, or UINT64_MAX where the sum would wrap: counts from a report are never trusted
 * to be small. */
static inline uint64_t add_saturating(uint64_t a, uint64_t b) {
        uint64_t r;
        return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

static inline bool isempty(const char *s) {
        return !s || !*s;
}

/* Strict unsigned parse: digits only (no sign, no leading space), base 10, no overflow. */
int parse_uint64(const char *s, uint64_t *ret);
int parse_uint32(const char *s, uint32_t *ret);
int parse_unsigned(const char *s, unsigned *ret);
/* The same with an optional leading '-'. */
int parse_int32(const char *s, int32_t *ret);

/* "on|off|yes|no|true|false|1|0" */
int parse_boolean(const char *s, bool *ret);

/* The major and minor version at the start of a kernel release ("6.1.0-57-rt-amd64",
 * "6.12.9+bpo"; uname -r): -EINVAL unless it starts with MAJOR.MINOR of at most six digits
 * each, the minor followed by anything but a digit. */
int parse_kernel_release(const char *s, unsigned *ret_major, unsigned *ret_minor);

/* A duration as systemd reads one (systemd.time(7)): terms of a number, with a fraction
 * if wanted, and a unit ("us", "ms", "s", "min" or "m", "h", "d", "w", "M", "y" and their
 * long forms), summed: "250ms", "10s", "2m", "1.5h", "1h 30min". A bare number is seconds.
 * -EINVAL for anything else (a sign, "infinity", an unknown unit), -ERANGE past 2^64 us. */
int parse_duration_usec(const char *s, uint64_t *ret);
/* Formats a duration the way parse_duration_usec() reads it back. */
char *format_duration_usec(uint64_t usec);

/* Trims white space at both ends, in place; returns s. */
char *strstrip(char *s);

/* Collapses every run of white space to one space and trims the ends; newly allocated. */
char *normalize_whitespace(const char *s);
/* The same in place (the text can only get shorter); returns s. */
char *normalize_whitespace_in_place(char *s);
/* Whether word is one of the white-space separated words of list. */
bool word_list_contains(const char *list, const char *word);

/* The code point of the valid UTF-8 sequence s starts with, and its length in bytes; 0
 * (and ret_code_point untouched) when s does not start one: an overlong form, a surrogate,
 * a stray continuation byte, a truncated sequence. */
size_t utf8_decode(const char *s, uint32_t *ret_code_point);
/* Whether s is valid UTF-8 (what D-Bus strings must be). */
bool utf8_is_valid(const char *s);
/* A copy of s where every byte that is not part of valid UTF-8 is written "\xNN", so
 * text from the kernel or a config file can go on the bus and in messages; newly
 * allocated. */
char *utf8_escape(const char *s);

/* Whether a code point must not reach a terminal or a journal MESSAGE as it is: C0
 * controls, DEL, C1 controls (U+009B is a CSI to many terminals), the bidirectional marks,
 * embeddings, overrides and isolates (U+061C, U+200E, U+200F, U+202A..U+202E,
 * U+2066..U+2069: they reorder what a reader sees) and the line and paragraph separators
 * U+2028, U+2029. */
bool unichar_is_unsafe(uint32_t code_point);
/* The longest escape text_escape_next() writes, with its NUL. */
#define TEXT_ESCAPE_MAX 8
/* One step of text_escape() at s (which is not at its end): returns how many bytes of s
 * it took, and writes their escape to buf with its length in *ret_len, or sets *ret_len
 * to 0 when they are safe as they are. */
size_t text_escape_next(const char *s, char buf[static TEXT_ESCAPE_MAX], size_t *ret_len);
/* s made safe to show: valid UTF-8 with no unsafe code point. A byte that is not part of
 * valid UTF-8, a C0 control or DEL is written "\xNN", any other unsafe code point
 * "\uNNNN" (U+009B is "\u009b"); all else is kept. Newly allocated. */
char *text_escape(const char *s);
/* The same, but a line feed is kept: text of several lines (a message, an error that
 * lists one problem a line). */
char *text_escape_lines(const char *s);

/* Like asprintf() but returns the string, NULL on allocation failure. */
char *strdup_printf(const char *fmt, ...) _printf_(1, 2);
/* strdup_printf() of a va_list: the new string, or NULL when out of memory (vasprintf()
 * leaves its pointer undefined on failure; this never does). */
char *strdup_vprintf(const char *fmt, va_list ap) _printf_(1, 0);

/* Reads up to size-1 bytes at offset 0 and NUL-terminates; returns the length or -errno. */
ssize_t pread_string(int fd, char *buf, size_t size);

/* Writes all of buf at offset 0 (one write() for procfs semantics); returns 0 or -errno. */
int write_string_fd(int fd, const char *s);

uint64_t now_usec(int clock);
