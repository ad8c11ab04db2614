/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What lowlatd's and lowlatctl's reports print with: table cells with control characters
 * escaped, columns as wide as their widest cell, and JSON strings. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* A JSON string (escaped), and "key":"value" (a comma before it unless first). */
void json_print_string(FILE *f, const char *s);
void json_print_member(FILE *f, const char *key, const char *value, bool first);

/* Table cells: text as text_escape() (basic/util.h) shows it, so that a hostile or
 * corrupt name (an IRQ's, a file's contents) cannot move the cursor, break the columns or
 * reorder the line: invalid UTF-8, C0 controls and DEL as \xNN, C1 controls and bidi
 * controls as \uNNNN. An empty cell is "-". The width counts code points, not bytes. */
size_t cell_width(const char *s);
void print_escaped(FILE *f, const char *s);
/* s padded to width + 2 columns, or ended with a newline when last. */
void print_cell(FILE *f, const char *s, size_t width, bool last);
/* s right-aligned in width columns, then two spaces, or a newline when last. */
void print_cell_right(FILE *f, const char *s, size_t width, bool last);

/* A table in two passes over the same rows, since every width must be known before the
 * first line goes out: table_measure_row() for each row (and the header), then
 * table_print_row(). right: bit c set for a column of numbers, right-aligned. */
void table_measure_row(size_t *width, const char *const *cells, size_t n);
void table_print_row(FILE *f, const size_t *width, const char *const *cells, size_t n, unsigned right);
