/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Table cells and JSON strings, for every report both programs print (cells.h). */
#include <string.h>

#include "basic/cells.h"
#include "basic/macro.h"
#include "basic/util.h"

/* Strings on the bus are valid UTF-8 (D-Bus guarantees it, and lowlatd cleans what it
 * sends), so only escapes are needed for valid JSON. Controls and bidi overrides are
 * escaped too (the same string to a parser, but nothing a terminal acts on when the JSON
 * is read with cat); a byte that is not UTF-8 all the same becomes U+FFFD. */
void json_print_string(FILE *f, const char *s) {
        fputc('"', f);
        while (*s) {
                uint32_t cp;
                size_t n = utf8_decode(s, &cp);

                if (n == 0) {
                        fputs("\\ufffd", f);
                        n = 1;
                } else if (cp == '"' || cp == '\\')
                        fprintf(f, "\\%c", (char) cp);
                else if (unichar_is_unsafe(cp))
                        fprintf(f, "\\u%04x", (unsigned) cp);
                else
                        fwrite(s, 1, n, f);
                s += n;
        }
        fputc('"', f);
}

void json_print_member(FILE *f, const char *key, const char *value, bool first) {
        if (!first)
                fputc(',', f);
        json_print_string(f, key);
        fputc(':', f);
        json_print_string(f, value);
}

/* Cells are escaped as text_escape() does, one character at a time, so that a table needs
 * no copy of every cell. */
size_t cell_width(const char *s) {
        size_t w = 0;

        if (isempty(s))
                return 1; /* shown as "-" */
        while (*s) {
                char esc[TEXT_ESCAPE_MAX];
                size_t len;

                s += text_escape_next(s, esc, &len);
                w += len > 0 ? len : 1;
        }
        return w;
}

void print_escaped(FILE *f, const char *s) {
        while (*s) {
                char esc[TEXT_ESCAPE_MAX];
                size_t len, n = text_escape_next(s, esc, &len);

                if (len > 0)
                        fwrite(esc, 1, len, f);
                else
                        fwrite(s, 1, n, f);
                s += n;
        }
}

static void print_cell_text(FILE *f, const char *s) {
        if (isempty(s))
                fputc('-', f);
        else
                print_escaped(f, s);
}

void print_cell(FILE *f, const char *s, size_t width, bool last) {
        print_cell_text(f, s);
        if (last)
                fputc('\n', f);
        else
                for (size_t i = cell_width(s); i < width + 2; i++)
                        fputc(' ', f);
}

void print_cell_right(FILE *f, const char *s, size_t width, bool last) {
        for (size_t i = cell_width(s); i < width; i++)
                fputc(' ', f);
        print_cell_text(f, s);
        fputs(last ? "\n" : "  ", f);
}

void table_measure_row(size_t *width, const char *const *cells, size_t n) {
        for (size_t c = 0; c < n; c++)
                width[c] = MAX(width[c], cell_width(cells[c]));
}

void table_print_row(FILE *f, const size_t *width, const char *const *cells, size_t n, unsigned right) {
        for (size_t c = 0; c < n; c++)
                if (right & (1U << c))
                        print_cell_right(f, cells[c], width[c], c + 1 == n);
                else
                        print_cell(f, cells[c], width[c], c + 1 == n);
}
