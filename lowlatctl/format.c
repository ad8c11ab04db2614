/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The pieces every printer of lowlatctl shares: JSON strings, table cells with control
 * characters escaped, timestamps and microseconds, and the exit status once printed. */
#include <ctype.h>
#include <inttypes.h>
#include <string.h>
#include <time.h>

#include "client.h"
#include "basic/macro.h"
#include "basic/util.h"

/* D-Bus guarantees valid UTF-8 in strings, so only escapes are needed for valid JSON. */
void json_print_string(FILE *f, const char *s) {
        fputc('"', f);
        for (const unsigned char *p = (const unsigned char *) s; *p; p++) {
                if (*p == '"' || *p == '\\') {
                        fputc('\\', f);
                        fputc(*p, f);
                } else if (*p < 0x20 || *p == 0x7f)
                        fprintf(f, "\\u%04x", *p);
                else
                        fputc(*p, f);
        }
        fputc('"', f);
}

/* Prints ("key":"value"), preceded by a comma unless it opens its object. */
void json_print_member(FILE *f, const char *key, const char *value, bool first) {
        if (!first)
                fputc(',', f);
        json_print_string(f, key);
        fputc(':', f);
        json_print_string(f, value);
}

/* Table cells: control characters (a hostile or corrupt file's contents) are shown as
 * \xNN so they cannot move the cursor or break the columns. Width counts UTF-8 code
 * points, not bytes. */
size_t cell_width(const char *s) {
        size_t w = 0;

        if (isempty(s))
                return 1; /* shown as "-" */
        for (const unsigned char *p = (const unsigned char *) s; *p; p++)
                if (*p < 0x20 || *p == 0x7f)
                        w += 4;
                else if ((*p & 0xc0) != 0x80)
                        w++;
        return w;
}

void print_escaped(FILE *f, const char *s) {
        for (const unsigned char *p = (const unsigned char *) s; *p; p++)
                if (*p < 0x20 || *p == 0x7f)
                        fprintf(f, "\\x%02x", *p);
                else
                        fputc(*p, f);
}

void print_cell(FILE *f, const char *s, size_t width, bool last) {
        size_t w = cell_width(s);

        if (isempty(s))
                fputc('-', f);
        else
                print_escaped(f, s);
        if (last)
                fputc('\n', f);
        else
                for (size_t i = w; i < width + 2; i++)
                        fputc(' ', f);
}

/* Local time as "Tue 2024-05-07 10:00:00 CEST"; NULL on failure. */
char *format_timestamp(uint64_t usec) {
        time_t t = (time_t) (usec / USEC_PER_SEC);
        struct tm tm;

        if (!localtime_r(&t, &tm))
                return NULL;
        for (size_t size = 64; size <= 4096; size *= 2) {
                _cleanup_free_ char *buf = malloc(size);
                if (!buf)
                        return NULL;
                if (strftime(buf, size, "%a %Y-%m-%d %H:%M:%S %Z", &tm) > 0)
                        return TAKE_PTR(buf);
        }
        return NULL;
}

/* Exit status for a verb that printed something: the verdict, unless stdout failed. */
int finish_output(int verdict) {
        if (fflush(stdout) != 0 || ferror(stdout)) {
                fprintf(stderr, "lowlatctl: cannot write to standard output: %s\n", strerror(errno));
                return EXIT_OUTPUT;
        }
        return verdict;
}
/* Nanoseconds as µs: whole when they are (cyclictest's), else with one decimal. */
const char *format_usec(char *buf, size_t size, const char *prefix, uint64_t ns) {
        if (ns % 1000 == 0)
                snprintf(buf, size, "%s%" PRIu64, prefix, ns / 1000);
        else
                snprintf(buf, size, "%s%.1f", prefix, (double) ns / 1000.0);
        return buf;
}

void print_usec(FILE *f, uint64_t ns, int width) {
        char buf[48];
        fprintf(f, "%*s", width, format_usec(buf, sizeof(buf), "", ns));
}
