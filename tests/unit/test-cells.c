/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* basic/cells.h: widths of cells (escapes, UTF-8), padding left and right, a table whose
 * columns follow their widest cell, and JSON strings. */
#include <stdio.h>
#include <stdlib.h>

#include "basic/cells.h"
#include "basic/macro.h"
#include "tap.h"

/* What call printed to f, a memory stream: buf, NUL-terminated (NULL on failure). */
#define PRINTED(buf, size, call)                              \
        ({                                                    \
                FILE *_f = open_memstream(&(buf), &(size));   \
                if (_f) {                                     \
                        FILE *f = _f;                         \
                        call;                                 \
                        fclose(_f);                           \
                }                                             \
                (buf);                                        \
        })

static void test_width(void) {
        CHECK(cell_width("abc") == 3, "three ASCII characters: width 3");
        CHECK(cell_width("\xc2\xb5s") == 2, "µs: two code points, three bytes: width 2");
        CHECK(cell_width("a\nb") == 6, "a control character counts as its \\x0a escape (4)");
        CHECK(cell_width("a\xc2\x9b") == 7, "a C1 control counts as its \\u009b escape (6)");
        CHECK(cell_width("\xe2\x80\xae") == 6 && cell_width("x\xff") == 5,
              "a bidi override counts as \\u202e (6), an invalid byte as \\xff (4)");
        CHECK(cell_width("") == 1 && cell_width(NULL) == 1, "empty or NULL: width 1, shown as -");
}

static void test_cells(void) {
        _cleanup_free_ char *left = NULL, *right = NULL, *last = NULL, *escaped = NULL, *hostile = NULL,
                            *kept = NULL;
        size_t size = 0;

        CHECK_STR(PRINTED(left, size, print_cell(f, "ab", 4, false)), "ab    ", "left: padded to width + 2");
        CHECK_STR(PRINTED(right, size, print_cell_right(f, "42", 5, false)), "   42  ",
                  "right: spaces before, two after");
        CHECK_STR(PRINTED(last, size, print_cell_right(f, "", 3, true)), "  -\n", "last and empty: -, then newline");
        CHECK_STR(PRINTED(escaped, size, print_cell(f, "x\x1b[2J", 8, true)), "x\\x1b[2J\n",
                  "an escape sequence is shown, never sent");
        CHECK_STR(PRINTED(hostile, size, print_cell(f, "\xc2\x9b""2J\xe2\x80\xae\xe2\x81\xa9\xfe", 20, true)),
                  "\\u009b2J\\u202e\\u2069\\xfe\n",
                  "C1 controls, bidi overrides and isolates, invalid bytes: shown, never sent");
        CHECK_STR(PRINTED(kept, size, print_cell(f, "café", 4, false)), "café  ", "UTF-8 text kept, padded by code points");
}

static void test_table(void) {
        const char *const header[] = { "NAME", "COUNT", "WHAT" };
        const char *const rows[][3] = {
                { "a-rather-long-name", "7", "x" },
                { "b", "123456789012345", "" },
        };
        _cleanup_free_ char *out = NULL;
        size_t width[3] = {}, size = 0;

        table_measure_row(width, header, 3);
        for (size_t i = 0; i < ELEMENTSOF(rows); i++)
                table_measure_row(width, rows[i], 3);
        CHECK(width[0] == 18 && width[1] == 15 && width[2] == 4, "each column as wide as its widest cell");
        PRINTED(out, size, {
                table_print_row(f, width, header, 3, 1U << 1);
                for (size_t i = 0; i < ELEMENTSOF(rows); i++)
                        table_print_row(f, width, rows[i], 3, 1U << 1);
        });
        CHECK_STR(out,
                  "NAME                          COUNT  WHAT\n"
                  "a-rather-long-name                7  x\n"
                  "b                   123456789012345  -\n",
                  "the table: names left, counts right-aligned under their header");
}

static void test_json(void) {
        _cleanup_free_ char *out = NULL;
        size_t size = 0;

        PRINTED(out, size, {
                fputc('{', f);
                json_print_member(f, "k", "a\"b\\c\n", true);
                json_print_member(f, "l", "", false);
                fputc('}', f);
        });
        CHECK_STR(out, "{\"k\":\"a\\\"b\\\\c\\u000a\",\"l\":\"\"}", "JSON: quotes, backslashes, control characters");
        free(out);
        out = NULL;
        PRINTED(out, size, json_print_string(f, "\x1b\xc2\x9b\xe2\x80\xae\xc3\xa9\xff"));
        CHECK_STR(out, "\"\\u001b\\u009b\\u202e\xc3\xa9\\ufffd\"",
                  "JSON: C1 and bidi controls as \\u escapes (the same string), an invalid byte as U+FFFD");
}

int main(void) {
        test_width();
        test_cells();
        test_table();
        test_json();
        return tap_finish();
}
