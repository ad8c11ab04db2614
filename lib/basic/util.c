/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* String and number parsing with full error checks, and small fd helpers. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <inttypes.h>
#include <strings.h>
#include <time.h>

#include "basic/util.h"

int parse_uint64(const char *s, uint64_t *ret) {
        char *end = NULL;
        unsigned long long v;

        if (isempty(s) || !isdigit((unsigned char) s[0]))
                return -EINVAL;
        errno = 0;
        v = strtoull(s, &end, 10);
        if (errno == ERANGE)
                return -ERANGE;
        if (errno != 0 || !end || *end != '\0')
                return -EINVAL;
        *ret = (uint64_t) v;
        return 0;
}

int parse_uint32(const char *s, uint32_t *ret) {
        uint64_t v;
        int r = parse_uint64(s, &v);
        if (r < 0)
                return r;
        if (v > UINT32_MAX)
                return -ERANGE;
        *ret = (uint32_t) v;
        return 0;
}

int parse_int32(const char *s, int32_t *ret) {
        uint32_t v;
        bool negative = s && *s == '-';
        int r = parse_uint32(negative ? s + 1 : s, &v);

        if (r < 0)
                return r;
        if (v > (negative ? (uint32_t) INT32_MAX + 1 : (uint32_t) INT32_MAX))
                return -ERANGE;
        *ret = negative ? (int32_t) (-(int64_t) v) : (int32_t) v;
        return 0;
}

int parse_unsigned(const char *s, unsigned *ret) {
        uint32_t v;
        int r = parse_uint32(s, &v);
        if (r < 0)
                return r;
        *ret = v;
        return 0;
}

int parse_kernel_release(const char *s, unsigned *ret_major, unsigned *ret_minor) {
        unsigned v[2] = {};
        const char *p = s;

        if (!s)
                return -EINVAL;
        for (size_t i = 0; i < 2; i++) {
                size_t digits = 0;
                while (isdigit((unsigned char) *p) && digits < 6) {
                        v[i] = v[i] * 10 + (unsigned) (*p++ - '0');
                        digits++;
                }
                if (digits == 0 || isdigit((unsigned char) *p) || (i == 0 && *p++ != '.'))
                        return -EINVAL;
        }
        *ret_major = v[0];
        *ret_minor = v[1];
        return 0;
}

int parse_boolean(const char *s, bool *ret) {
        static const char *const yes[] = { "1", "yes", "on", "true" };
        static const char *const no[] = { "0", "no", "off", "false" };

        if (!s)
                return -EINVAL;
        for (size_t i = 0; i < ELEMENTSOF(yes); i++)
                if (strcasecmp(s, yes[i]) == 0) {
                        *ret = true;
                        return 0;
                }
        for (size_t i = 0; i < ELEMENTSOF(no); i++)
                if (strcasecmp(s, no[i]) == 0) {
                        *ret = false;
                        return 0;
                }
        return -EINVAL;
}

/* systemd's time units (systemd.time(7), parse_sec()), each word exactly: "m" is minutes,
 * "M" months; both micro signs (U+00B5, U+03BC) spell "µs". */
static const struct {
        const char *word;
        uint64_t usec;
} duration_units[] = {
        { "usec", 1 },
        { "us", 1 },
        { "\xc2\xb5s", 1 },
        { "\xce\xbcs", 1 },
        { "msec", USEC_PER_MSEC },
        { "ms", USEC_PER_MSEC },
        { "seconds", USEC_PER_SEC },
        { "second", USEC_PER_SEC },
        { "sec", USEC_PER_SEC },
        { "s", USEC_PER_SEC },
        { "minutes", 60 * USEC_PER_SEC },
        { "minute", 60 * USEC_PER_SEC },
        { "min", 60 * USEC_PER_SEC },
        { "m", 60 * USEC_PER_SEC },
        { "hours", 3600 * USEC_PER_SEC },
        { "hour", 3600 * USEC_PER_SEC },
        { "hr", 3600 * USEC_PER_SEC },
        { "h", 3600 * USEC_PER_SEC },
        { "days", 86400 * USEC_PER_SEC },
        { "day", 86400 * USEC_PER_SEC },
        { "d", 86400 * USEC_PER_SEC },
        { "weeks", 604800 * USEC_PER_SEC },
        { "week", 604800 * USEC_PER_SEC },
        { "w", 604800 * USEC_PER_SEC },
        { "months", 2629800 * USEC_PER_SEC }, /* 30.44 days, as systemd counts */
        { "month", 2629800 * USEC_PER_SEC },
        { "M", 2629800 * USEC_PER_SEC },
        { "years", 31557600 * USEC_PER_SEC }, /* 365.25 days */
        { "year", 31557600 * USEC_PER_SEC },
        { "y", 31557600 * USEC_PER_SEC },
};

#define DURATION_SPACE " \t\n\r"

/* The unit word at p ("" for none: seconds), its length in *ret_len. */
static int duration_unit(const char *p, uint64_t *ret_usec, size_t *ret_len) {
        size_t n = 0;

        /* A word: ASCII letters and the bytes of the two micro signs. */
        while (isalpha((unsigned char) p[n]) || (unsigned char) p[n] >= 0x80)
                n++;
        if (n == 0) {
                *ret_usec = USEC_PER_SEC;
                *ret_len = 0;
                return 0;
        }
        for (size_t i = 0; i < ELEMENTSOF(duration_units); i++)
                if (strlen(duration_units[i].word) == n && strncmp(p, duration_units[i].word, n) == 0) {
                        *ret_usec = duration_units[i].usec;
                        *ret_len = n;
                        return 0;
                }
        return -EINVAL;
}

/* One term at *p, "1.5 h", added to *sum; *p moves past it. */
static int duration_term(const char **p, uint64_t *sum) {
        const char *q = *p, *whole = q, *fraction;
        uint64_t value = 0, unit, part;
        size_t nwhole, nfraction = 0, len;
        int r;

        while (isdigit((unsigned char) *q))
                q++;
        nwhole = (size_t) (q - whole);
        fraction = q;
        if (*q == '.') {
                fraction = ++q;
                while (isdigit((unsigned char) *q))
                        q++;
                nfraction = (size_t) (q - fraction);
        }
        if (nwhole + nfraction == 0)
                return -EINVAL;
        q += strspn(q, DURATION_SPACE);
        r = duration_unit(q, &unit, &len);
        if (r < 0)
                return r;
        for (size_t i = 0; i < nwhole; i++)
                if (__builtin_mul_overflow(value, 10, &value) ||
                    __builtin_add_overflow(value, (uint64_t) (whole[i] - '0'), &value))
                        return -ERANGE;
        if (__builtin_mul_overflow(value, unit, &value))
                return -ERANGE;
        /* Each digit after the point is worth a tenth of the one before, down to 1 us. */
        part = unit;
        for (size_t i = 0; i < nfraction && part > 0; i++) {
                part /= 10;
                if (__builtin_add_overflow(value, part * (uint64_t) (fraction[i] - '0'), &value))
                        return -ERANGE;
        }
        if (__builtin_add_overflow(*sum, value, sum))
                return -ERANGE;
        *p = q + len;
        return 0;
}

int parse_duration_usec(const char *s, uint64_t *ret) {
        uint64_t sum = 0;
        const char *p;
        int r;

        if (!s)
                return -EINVAL;
        p = s + strspn(s, DURATION_SPACE);
        if (*p == '\0')
                return -EINVAL;
        while (*p != '\0') {
                r = duration_term(&p, &sum);
                if (r < 0)
                        return r;
                p += strspn(p, DURATION_SPACE);
        }
        *ret = sum;
        return 0;
}

char *format_duration_usec(uint64_t usec) {
        /* The largest unit that divides it, up to hours ("100ms", "10min", "24h"): what a
         * person writes, and what parse_duration_usec() reads back. */
        static const struct {
                const char *suffix;
                uint64_t usec;
        } units[] = {
                { "h", 3600 * USEC_PER_SEC }, { "min", 60 * USEC_PER_SEC }, { "s", USEC_PER_SEC },
                { "ms", USEC_PER_MSEC },      { "us", 1 },
        };

        for (size_t i = 0; i + 1 < ELEMENTSOF(units); i++)
                if (usec % units[i].usec == 0 && (usec > 0 || streq(units[i].suffix, "s")))
                        return strdup_printf("%" PRIu64 "%s", usec / units[i].usec, units[i].suffix);
        return strdup_printf("%" PRIu64 "us", usec);
}

/* isspace() in the C locale lowlatd runs in, without a call per byte: strstrip() runs on
 * every value every scan reads. */
static bool is_c_space(char c) {
        return c == ' ' || (c >= '\t' && c <= '\r');
}

char *strstrip(char *s) {
        char *e;

        while (is_c_space(*s))
                s++;
        e = s + strlen(s);
        while (e > s && is_c_space(e[-1]))
                e--;
        *e = '\0';
        return s;
}

char *normalize_whitespace_in_place(char *s) {
        char *o = s;
        bool pending_space = false;

        /* The output never outruns the input: a run of white space becomes at most one. */
        for (const char *i = s; *i; i++) {
                if (isspace((unsigned char) *i)) {
                        pending_space = o != s;
                        continue;
                }
                if (pending_space)
                        *o++ = ' ';
                pending_space = false;
                *o++ = *i;
        }
        *o = '\0';
        return s;
}

char *normalize_whitespace(const char *s) {
        char *out = strdup(s);

        return out ? normalize_whitespace_in_place(out) : NULL;
}

bool word_list_contains(const char *list, const char *word) {
        size_t len = strlen(word);

        if (len == 0)
                return false;
        for (const char *w = list; *w;) {
                size_t n;

                while (isspace((unsigned char) *w))
                        w++;
                n = strcspn(w, " \t\n\r\f\v");
                if (n == len && strncmp(w, word, n) == 0)
                        return true;
                w += n;
        }
        return false;
}

size_t utf8_decode(const char *s, uint32_t *ret_code_point) {
        const unsigned char *u = (const unsigned char *) s;
        uint32_t cp;
        size_t n;

        if (u[0] < 0x80) {
                *ret_code_point = u[0];
                return 1;
        }
        if (u[0] >= 0xc2 && u[0] <= 0xdf)
                n = 2, cp = u[0] & 0x1f;
        else if (u[0] >= 0xe0 && u[0] <= 0xef)
                n = 3, cp = u[0] & 0x0f;
        else if (u[0] >= 0xf0 && u[0] <= 0xf4)
                n = 4, cp = u[0] & 0x07;
        else
                return 0;
        for (size_t i = 1; i < n; i++) {
                if ((u[i] & 0xc0) != 0x80)
                        return 0;
                cp = (cp << 6) | (u[i] & 0x3f);
        }
        /* Overlong forms, UTF-16 surrogates and code points past U+10FFFF. */
        if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) || (cp >= 0xd800 && cp <= 0xdfff))
                return 0;
        *ret_code_point = cp;
        return n;
}

bool utf8_is_valid(const char *s) {
        uint32_t cp;

        while (*s) {
                /* What a kernel file says is nearly always ASCII: a byte is a compare. */
                if ((unsigned char) *s < 0x80) {
                        s++;
                        continue;
                }
                size_t n = utf8_decode(s, &cp);
                if (n == 0)
                        return false;
                s += n;
        }
        return true;
}

char *utf8_escape(const char *s) {
        char *out = malloc(strlen(s) * 4 + 1), *o = out;
        uint32_t cp;

        if (!out)
                return NULL;
        while (*s) {
                size_t n = utf8_decode(s, &cp);
                if (n == 0) {
                        o += sprintf(o, "\\x%02x", (unsigned char) *s++);
                        continue;
                }
                memcpy(o, s, n);
                o += n;
                s += n;
        }
        *o = '\0';
        return out;
}

bool unichar_is_unsafe(uint32_t cp) {
        return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || /* C0, DEL, C1 (U+009B is CSI) */
               cp == 0x061c || cp == 0x200e || cp == 0x200f || /* bidi marks */
               (cp >= 0x2028 && cp <= 0x202e) ||               /* line breaks, embeddings, overrides */
               (cp >= 0x2066 && cp <= 0x2069);                 /* isolates */
}

size_t text_escape_next(const char *s, char buf[static TEXT_ESCAPE_MAX], size_t *ret_len) {
        uint32_t cp;
        size_t n = utf8_decode(s, &cp);

        if (n == 0) {
                *ret_len = (size_t) snprintf(buf, TEXT_ESCAPE_MAX, "\\x%02x", (unsigned char) *s);
                return 1;
        }
        if (!unichar_is_unsafe(cp))
                *ret_len = 0;
        else if (cp < 0x80)
                *ret_len = (size_t) snprintf(buf, TEXT_ESCAPE_MAX, "\\x%02x", (unsigned) cp);
        else
                *ret_len = (size_t) snprintf(buf, TEXT_ESCAPE_MAX, "\\u%04x", (unsigned) cp);
        return n;
}

static char *text_escape_full(const char *s, bool keep_line_feeds) {
        /* An invalid byte or an ASCII control (1 byte) grows to 4; an unsafe code point
         * (2 or 3 bytes) to 6: never more than 4 times. */
        char *out = malloc(strlen(s) * 4 + 1), *o = out;

        if (!out)
                return NULL;
        while (*s) {
                char esc[TEXT_ESCAPE_MAX];
                size_t len, n = text_escape_next(s, esc, &len);

                if (len > 0 && !(keep_line_feeds && *s == '\n')) {
                        memcpy(o, esc, len);
                        o += len;
                } else {
                        memcpy(o, s, n);
                        o += n;
                }
                s += n;
        }
        *o = '\0';
        return out;
}

char *text_escape(const char *s) {
        return text_escape_full(s, false);
}

char *text_escape_lines(const char *s) {
        return text_escape_full(s, true);
}

char *strdup_vprintf(const char *fmt, va_list ap) {
        char *s = NULL;

        return vasprintf(&s, fmt, ap) < 0 ? NULL : s;
}

char *strdup_printf(const char *fmt, ...) {
        va_list ap;
        char *s;

        va_start(ap, fmt);
        s = strdup_vprintf(fmt, ap);
        va_end(ap);
        return s;
}

ssize_t pread_string(int fd, char *buf, size_t size) {
        ssize_t n;

        if (size == 0)
                return -EINVAL;
        n = pread(fd, buf, size - 1, 0);
        if (n < 0)
                return negative_errno();
        buf[n] = '\0';
        return n;
}

int write_string_fd(int fd, const char *s) {
        size_t len = strlen(s);
        ssize_t n;

        n = pwrite(fd, s, len, 0);
        if (n < 0)
                return negative_errno();
        if ((size_t) n != len)
                return -EIO;
        return 0;
}

uint64_t now_usec(int clock) {
        struct timespec ts;

        if (clock_gettime(clock, &ts) < 0)
                return 0;
        return (uint64_t) ts.tv_sec * USEC_PER_SEC + (uint64_t) ts.tv_nsec / NSEC_PER_USEC;
}
