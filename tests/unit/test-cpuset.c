/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* CPU lists and the kernel's comma-grouped hex masks, including sets above 64 CPUs. */
#include <stdlib.h>
#include <string.h>

#include "basic/cpuset.h"
#include "basic/macro.h"
#include "tap.h"

static void test_list_roundtrip(void) {
        static const struct {
                const char *in, *out;
        } cases[] = {
                { "0-3\t", "0-3" },
                { "0,2,4-6", "0,2,4-6" },
                { "  7 ", "7" },
                { "", "" },
                { "3,1,2", "1-3" },
                { "0-63,64-127", "0-127" },
                { "63-64", "63-64" },
                { "1000-1002,4095", "1000-1002,4095" },
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_cpuset_ CPUSet s = CPUSET_EMPTY;
                _cleanup_free_ char *f = NULL;
                char what[128];

                snprintf(what, sizeof(what), "list '%s' parses", cases[i].in);
                CHECK(cpuset_parse_list(cases[i].in, &s) == 0, what);
                f = cpuset_format_list(&s);
                snprintf(what, sizeof(what), "list '%s' formats as '%s'", cases[i].in, cases[i].out);
                CHECK_STR(f, cases[i].out, what);
        }
}

static void test_list_errors(void) {
        static const char *const bad[] = { "a", "1-", "-1", "3-1", "1,,2", "1,", ",1", "1 2", "1-2-3", "0x1", "1:2",
                                           "99999999999", "65536" };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                CPUSet s = CPUSET_EMPTY;
                char what[128];

                cpuset_add(&s, 5);
                snprintf(what, sizeof(what), "list '%s' is rejected", bad[i]);
                CHECK(cpuset_parse_list(bad[i], &s) < 0, what);
                snprintf(what, sizeof(what), "list '%s' leaves the set alone", bad[i]);
                CHECK(cpuset_contains(&s, 5) && cpuset_count(&s) == 1, what);
                cpuset_done(&s);
        }
}

static void test_masks(void) {
        _cleanup_cpuset_ CPUSet s = CPUSET_EMPTY;
        _cleanup_free_ char *m1 = NULL, *m2 = NULL, *m3 = NULL, *list = NULL;

        CHECK(cpuset_parse_mask("3\n", &s) == 0 && cpuset_count(&s) == 2 && cpuset_contains(&s, 1), "mask 3 is CPUs 0-1");
        CHECK(cpuset_parse_mask("00000001,00000000,00000000", &s) == 0 && cpuset_count(&s) == 1 &&
                      cpuset_contains(&s, 64),
              "three-group mask is CPU 64");
        CHECK(cpuset_parse_mask("ff,ffffffff", &s) == 0 && cpuset_count(&s) == 40, "ff,ffffffff is 40 CPUs");
        list = cpuset_format_list(&s);
        CHECK_STR(list, "0-39", "40-CPU mask lists as 0-39");
        m1 = cpuset_format_mask(&s, 40);
        CHECK_STR(m1, "ff,ffffffff", "40 CPUs format like the kernel");

        CHECK(cpuset_parse_list("0-1", &s) == 0, "0-1 parses");
        m2 = cpuset_format_mask(&s, 2);
        CHECK_STR(m2, "3", "two possible CPUs print one digit, like the kernel");
        CHECK(cpuset_parse_list("2-3,130", &s) == 0, "2-3,130 parses");
        m3 = cpuset_format_mask(&s, 192);
        CHECK_STR(m3, "00000000,00000004,00000000,00000000,00000000,0000000c", "192-bit mask with CPU 130");

        static const char *const bad[] = { "", "g", "1,,2", ",1", "1,", "123456789", "ff ff" };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                char what[64];
                snprintf(what, sizeof(what), "mask '%s' is rejected", bad[i]);
                CHECK(cpuset_parse_mask(bad[i], &s) < 0, what);
        }
}

static void test_algebra(void) {
        _cleanup_cpuset_ CPUSet a = CPUSET_EMPTY, b = CPUSET_EMPTY, c = CPUSET_EMPTY;

        cpuset_parse_list("0-7,100", &a);
        cpuset_parse_list("4-5", &b);
        CHECK(cpuset_intersects(&a, &b), "0-7,100 meets 4-5");
        CHECK(cpuset_is_subset(&b, &a), "4-5 is within 0-7,100");
        CHECK(!cpuset_is_subset(&a, &b), "0-7,100 is not within 4-5");
        cpuset_copy(&c, &a);
        cpuset_subtract(&c, &b);
        CHECK(cpuset_count(&c) == 7 && !cpuset_contains(&c, 4) && cpuset_contains(&c, 100), "subtract");
        cpuset_and(&c, &b);
        CHECK(cpuset_is_empty(&c), "and of disjoint sets is empty");
        { CPUSet none = CPUSET_EMPTY; CHECK(cpuset_equal(&c, &none), "empty equals unallocated empty"); }
        CHECK(cpuset_last(&a) == 100 && cpuset_next(&a, 8) == 100 && cpuset_next(&a, 101) == -1, "last and next");
        cpuset_or(&c, &a);
        CHECK(cpuset_equal(&c, &a), "or into empty copies");
        CHECK(cpuset_add(&c, CPUSET_MAX_CPUS) == -ERANGE, "CPU beyond the bound is refused");
}

/* systemd's AllowedCPUs "ay": CPU n is bit n % 8 of byte n / 8 (its test-cpu-set-util.c
 * encodes "1 3 8 100-200" as 0a 01 00 ... f0 ff ...). */
static void test_bytes(void) {
        static const uint8_t systemd_example[26] = { 0x0a, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xf0,
                                                     0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                                     0xff, 0xff, 0xff, 0x01 };
        static const uint8_t padded[] = { 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00 };
        _cleanup_cpuset_ CPUSet s = CPUSET_EMPTY;
        _cleanup_free_ char *list = NULL;
        _cleanup_free_ uint8_t *bytes = NULL;
        uint8_t *big;
        size_t n = 99;

        CHECK(cpuset_parse_bytes(systemd_example, sizeof(systemd_example), &s) == 0, "systemd's own example parses");
        list = cpuset_format_list(&s);
        CHECK_STR(list, "1,3,8,100-200", "and is CPUs 1,3,8,100-200");
        CHECK(cpuset_format_bytes(&s, &bytes, &n) == 0 && n == sizeof(systemd_example) &&
                      memcmp(bytes, systemd_example, n) == 0,
              "formatting gives the same bytes back");
        CHECK(cpuset_parse_bytes(padded, sizeof(padded), &s) == 0 && cpuset_count(&s) == 2 && cpuset_contains(&s, 1),
              "zero bytes after the last CPU are allowed (CPU_ALLOC_SIZE padding)");
        free(bytes);
        bytes = NULL;
        CHECK(cpuset_parse_bytes(NULL, 0, &s) == 0 && cpuset_is_empty(&s), "no bytes is the empty set (unset)");
        CHECK(cpuset_format_bytes(&s, &bytes, &n) == 0 && n == 0 && !bytes, "the empty set is no bytes");
        big = calloc(CPUSET_MAX_CPUS / 8 + 1, 1);
        if (!big)
                abort();
        cpuset_add(&s, 7);
        big[CPUSET_MAX_CPUS / 8] = 1;
        CHECK(cpuset_parse_bytes(big, CPUSET_MAX_CPUS / 8 + 1, &s) == -ERANGE && cpuset_count(&s) == 1 &&
                      cpuset_contains(&s, 7),
              "a CPU past the bound is -ERANGE and leaves the set alone");
        big[CPUSET_MAX_CPUS / 8] = 0;
        CHECK(cpuset_parse_bytes(big, CPUSET_MAX_CPUS / 8 + 1, &s) == 0 && cpuset_is_empty(&s),
              "zero bytes past the bound are only padding");
        free(big);
}

int main(void) {
        test_list_roundtrip();
        test_list_errors();
        test_masks();
        test_algebra();
        test_bytes();
        return tap_finish();
}
