/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A list of human-readable error lines. */
#include <stdarg.h>
#include <string.h>

#include "basic/array.h"
#include "basic/errorlist.h"
#include "basic/util.h"

int error_list_add(ErrorList *l, const char *fmt, ...) {
        va_list ap;
        char *s;

        va_start(ap, fmt);
        s = strdup_vprintf(fmt, ap);
        va_end(ap);
        if (!s)
                return -ENOMEM;
        /* Errors quote file names and values, which may hold any bytes; they end up in
         * D-Bus strings (LastReloadError), which must be UTF-8. */
        if (!utf8_is_valid(s)) {
                char *escaped = utf8_escape(s);
                free(s);
                if (!escaped)
                        return -ENOMEM;
                s = escaped;
        }
        if (array_grow(&l->items, &l->allocated, l->n + 1) < 0) {
                free(s);
                return -ENOMEM;
        }
        l->items[l->n++] = s;
        return 0;
}

void error_list_done(ErrorList *l) {
        for (size_t i = 0; i < l->n; i++)
                free(l->items[i]);
        free(l->items);
        *l = ERROR_LIST_EMPTY;
}

char *error_list_join(const ErrorList *l, const char *separator) {
        size_t len = 1, seplen = strlen(separator);
        char *s, *p;

        for (size_t i = 0; i < l->n; i++)
                len += strlen(l->items[i]) + seplen;
        s = p = malloc(len);
        if (!s)
                return NULL;
        *p = '\0';
        for (size_t i = 0; i < l->n; i++) {
                if (i > 0)
                        p = stpcpy(p, separator);
                p = stpcpy(p, l->items[i]);
        }
        return s;
}
