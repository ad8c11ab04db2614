/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Shared by the libFuzzer targets: turning the fuzzer's bytes into the C strings the parsers
 * take, and invariant checks that abort (so libFuzzer saves the input) with a reason. */
#pragma once

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The reason is printed before abort(): libFuzzer then records the input as a crash, and the
 * line tells which promise the library broke. */
#define FUZZ_CHECK(expr, ...)                                                                  \
        do {                                                                                   \
                if (!(expr)) {                                                                 \
                        fprintf(stderr, "%s:%d: invariant violated: %s: ", __FILE__, __LINE__, \
                                #expr);                                                        \
                        fprintf(stderr, __VA_ARGS__);                                          \
                        fputc('\n', stderr);                                                   \
                        abort();                                                               \
                }                                                                              \
        } while (0)

/* The text as a C string would carry it: up to the first NUL. Text from the kernel is read
 * with pread_string(), so an embedded NUL ends it there too. Aborts on allocation failure,
 * which under the fuzzer's malloc limit is itself a finding. */
static inline char *fuzz_strndup(const uint8_t *data, size_t size) {
        char *s = strndup((const char *) data, size);
        FUZZ_CHECK(s, "out of memory copying %zu bytes", size);
        return s;
}
