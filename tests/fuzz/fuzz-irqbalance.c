/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fuzzes what lowlatd reads from irqbalance (irqbalance.c): the answer to "setup" and the
 * names of the sockets under /run/irqbalance. Promises checked: the answer is parsed over
 * its whole length (a NUL inside is garbage, never a shorter answer), every accepted answer
 * is irqbalance's shape (SLEEP first, BANNED last), a failure leaves *ret alone, the banned
 * set comes back from the answer irqbalance would write for it, the command built from it
 * names that set, and a socket name is accepted exactly when it is one irqbalance writes. */
#include <stdbool.h>

#include "basic/cpuset.h"
#include "fuzz.h"
#include "host/irqbalance.h"
#include "basic/util.h"

/* The mask as irqbalance's bitmap_scnprintf() prints it: 32-bit groups of 8 hex digits,
 * leading zero groups left out. */
static char *irqbalance_mask(const CPUSet *s) {
        int last = cpuset_last(s);
        unsigned groups = last < 0 ? 1 : (unsigned) last / 32 + 1;
        char *out = malloc(groups * 9 + 1), *o = out;

        FUZZ_CHECK(out, "out of memory");
        for (unsigned g = groups; g-- > 0;) {
                uint32_t v = 0;
                for (unsigned b = 0; b < 32; b++)
                        if (cpuset_contains(s, g * 32 + b))
                                v |= UINT32_C(1) << b;
                o += sprintf(o, "%s%08x", g + 1 == groups ? "" : ",", v);
        }
        return out;
}

static void check_setup(const char *data, size_t size) {
        IrqbalanceSetup setup = { .sleep_sec = 4242 }, again = {};
        char *text, *mask, *command, *list;
        int r;

        r = irqbalance_parse_setup(data, size, &setup);
        FUZZ_CHECK(r == 0 || r == -EBADMSG, "irqbalance_parse_setup() returned %d", r);
        if (r < 0) {
                FUZZ_CHECK(setup.sleep_sec == 4242 && cpuset_is_empty(&setup.banned), "a failed parse wrote *ret");
                return;
        }
        FUZZ_CHECK(!memchr(data, '\0', size), "an answer with a NUL inside parsed");
        FUZZ_CHECK(size >= 15 && memcmp(data, "SLEEP ", 6) == 0, "accepted without SLEEP first");
        FUZZ_CHECK(memmem(data, size, " BANNED ", 8), "accepted without BANNED");

        mask = irqbalance_mask(&setup.banned);
        text = strdup_printf("SLEEP %u BANNED %s", setup.sleep_sec, mask);
        FUZZ_CHECK(text, "out of memory");
        r = irqbalance_parse_setup(text, strlen(text), &again);
        FUZZ_CHECK(r == 0, "irqbalance's own answer '%s' does not parse: %d", text, r);
        FUZZ_CHECK(again.sleep_sec == setup.sleep_sec && cpuset_equal(&again.banned, &setup.banned),
                   "'%s' reads back as another answer", text);

        command = irqbalance_ban_command(&setup.banned);
        list = cpuset_format_list(&setup.banned);
        FUZZ_CHECK(command && list, "out of memory");
        if (cpuset_is_empty(&setup.banned))
                FUZZ_CHECK(streq(command, "settings cpus NULL"), "no CPUs: '%s'", command);
        else
                FUZZ_CHECK(strncmp(command, "settings cpus ", 14) == 0 && streq(command + 14, list),
                           "'%s' for CPUs %s", command, list);
        free(list);
        free(command);
        free(text);
        free(mask);
        irqbalance_setup_done(&again);
        irqbalance_setup_done(&setup);
}

static void check_socket_name(const char *name) {
        unsigned pid = 0;
        char expected[64];

        if (irqbalance_socket_pid(name, &pid) < 0) {
                FUZZ_CHECK(pid == 0, "a rejected name wrote *ret_pid");
                return;
        }
        snprintf(expected, sizeof(expected), "irqbalance%u.sock", pid);
        FUZZ_CHECK(pid > 0 && streq(name, expected), "'%s' read as pid %u", name, pid);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *name;

        check_setup((const char *) data, size);
        name = fuzz_strndup(data, MIN(size, (size_t) 64));
        check_socket_name(name);
        free(name);
        return 0;
}
