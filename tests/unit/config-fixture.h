/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the config tests share: parsing text as "t.conf" and checking its errors. A header
 * of static functions, as tap.h counts checks per test binary. */
#pragma once

#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "tap.h"
#include "basic/util.h"

#define NAME "t.conf"

_unused_ static void print_errors(const ErrorList *errors) {
        for (size_t i = 0; i < errors->n; i++)
                printf("#   error: %s\n", errors->items[i]);
}

_unused_ static bool starts_with(const char *s, const char *prefix) {
        return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Parses text as NAME and validates it; the caller frees both. */
_unused_ static Config *parse(const char *text, ErrorList *errors) {
        Config *c = config_new();

        if (!c)
                abort();
        if (config_parse_string(c, NAME, text, errors) < 0)
                printf("# config_parse_string() failed\n");
        config_validate(c, errors);
        return c;
}

/* Checks that text parses without a single error and returns the config. */
_unused_ static Config *parse_ok(const char *text, const char *what) {
        _cleanup_error_list_ ErrorList errors = ERROR_LIST_EMPTY;
        Config *c = parse(text, &errors);

        if (!CHECK(errors.n == 0, what))
                print_errors(&errors);
        return c;
}

/* Checks that text gives exactly one error, "t.conf:LINE: ..." containing needle. */
_unused_ static void check_error(const char *text, unsigned line, const char *needle, const char *what) {
        _cleanup_error_list_ ErrorList errors = ERROR_LIST_EMPTY;
        _cleanup_config_ Config *c = parse(text, &errors);
        char prefix[64];
        bool ok;

        snprintf(prefix, sizeof(prefix), NAME ":%u: ", line);
        ok = errors.n == 1 && starts_with(errors.items[0], prefix) && (!needle || strstr(errors.items[0], needle));
        if (!CHECK(ok, what)) {
                printf("#   expected one error starting '%s'%s%s\n", prefix, needle ? " containing " : "",
                       needle ?: "");
                print_errors(&errors);
        }
}
