/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Table cells and JSON strings, for every report both programs print (cells.h). */
#include <string.h>

#include "basic/cells.h"
#include "basic/macro.h"
#include "basic/util.h"

/* Strings on the bus are valid UTF-8 (D-Bus guarantees it, and lowlatd cleans what it
 * sends), so only escapes are needed for valid JSON. */
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

void json_print_member(FILE *f, const char *key, const char *value, bool first) {
        if (!first)
                fputc(',', f);
        json_print_string(f, key);
        fputc(':', f);
        json_print_string(f, value);
}

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
