/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A tiny TAP producer in the spirit of ell's lib/test.c: each test is a function,
 * checks print "ok N - what" / "not ok N - what", the plan goes at the end. */
#pragma once

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static unsigned tap_count, tap_failed;

static inline bool tap_check(bool ok, const char *file, int line, const char *what) {
        tap_count++;
        printf("%sok %u - %s\n", ok ? "" : "not ", tap_count, what);
        if (!ok) {
                tap_failed++;
                printf("# failed at %s:%d\n", file, line);
        }
        fflush(stdout);
        return ok;
}

#define CHECK(cond, what) tap_check(!!(cond), __FILE__, __LINE__, (what))
#define CHECK_STR(a, b, what)                                                                      \
        do {                                                                                       \
                const char *_a = (a), *_b = (b);                                                   \
                if (!tap_check(_a && _b && strcmp(_a, _b) == 0, __FILE__, __LINE__, (what)))       \
                        printf("#   got '%s', expected '%s'\n", _a ? _a : "(null)", _b ? _b : "(null)"); \
        } while (0)

static inline int tap_finish(void) {
        printf("1..%u\n", tap_count);
        return tap_failed ? 1 : 0;
}
