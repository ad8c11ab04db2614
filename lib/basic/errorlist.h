/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A list of human-readable error lines ("file:line: reason"), collected so that every
 * problem in a config is reported at once rather than only the first. */
#pragma once

#include <stddef.h>

#include "basic/macro.h"

typedef struct ErrorList {
        char **items;
        size_t n, allocated;
} ErrorList;

#define ERROR_LIST_EMPTY ((ErrorList) { NULL, 0, 0 })

/* Returns 0, or -ENOMEM. */
int error_list_add(ErrorList *l, const char *fmt, ...) _printf_(2, 3);
void error_list_done(ErrorList *l);
/* All items joined by "\n"; newly allocated ("" when empty). */
char *error_list_join(const ErrorList *l, const char *separator);

static inline void error_list_donep(ErrorList *l) {
        error_list_done(l);
}
#define _cleanup_error_list_ _cleanup_(error_list_donep)
