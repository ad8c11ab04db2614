/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fuzzes the readers of PID 1's replies (host/systemd-client.c): AllowedCPUs, an "ay" made
 * a CPU set, and ControlGroup, a "s" that becomes part of a path under /sys/fs/cgroup. The
 * reply is built as sd-bus would hand it over (a sealed message of a bus never connected),
 * with one value from the input: byte 0 picks its type (ay, s, a string in a variant, an
 * ai, u, or nothing), the rest is the value (the string up to its first NUL; sd-bus refuses
 * what is not UTF-8, as the bus would).
 * Promises checked: no crash, leak or undefined behaviour; either reader fails cleanly on
 * any other type; a set read from an "ay" holds exactly the bits set in it and is written
 * back as the same bytes, trailing zero bytes aside; a bit past CPUSET_MAX_CPUS is
 * -ERANGE; a control group is read exactly when it is "" or an absolute path without an
 * empty, "." or ".." component (a reference written from that rule). */
#include <errno.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <systemd/sd-bus.h>

#include "fuzz.h"
#include "basic/cpuset.h"
#include "host/systemd-client.h"
#include "basic/util.h"

static sd_bus *bus;

static void check_cpus(const uint8_t *bytes, size_t n, int r, const CPUSet *cpus) {
        _cleanup_free_ uint8_t *written = NULL;
        size_t used = n, n_written;
        bool too_high = false;

        while (used > 0 && bytes[used - 1] == 0)
                used--;
        too_high = used > CPUSET_MAX_CPUS / 8;
        FUZZ_CHECK(r == (too_high ? -ERANGE : 0), "%zu bytes (%zu in use) read as %d", n, used, r);
        if (r < 0)
                return;
        FUZZ_CHECK(cpuset_format_bytes(cpus, &written, &n_written) == 0, "cpuset_format_bytes()");
        FUZZ_CHECK(n_written == used && (used == 0 || memcmp(written, bytes, used) == 0),
                   "%zu bytes written back as %zu, or other bits", used, n_written);
}

/* Written from the rule: "/", or '/' and a component, again and again, none empty, "."
 * or "..". */
static bool reference_control_group(const char *cg) {
        size_t len = strlen(cg);

        if (len == 0 || cg[0] != '/')
                return false;
        if (len == 1)
                return true;
        for (size_t start = 1; start <= len;) {
                size_t end = start;
                while (end < len && cg[end] != '/')
                        end++;
                if (end == start || (end - start == 1 && cg[start] == '.') ||
                    (end - start == 2 && cg[start] == '.' && cg[start + 1] == '.'))
                        return false;
                start = end + 1;
        }
        return true;
}

static void check_control_group(const char *cg) {
        FUZZ_CHECK(isempty(cg) || cg[0] == '/', "a relative control group '%s'", cg);
        FUZZ_CHECK(!strstr(cg, "//") && !strstr(cg, "/./") && !strstr(cg, "/../"), "control group '%s'", cg);
        if (strlen(cg) > 1) {
                const char *last = strrchr(cg, '/');
                FUZZ_CHECK(!streq(last, "/") && !streq(last, "/.") && !streq(last, "/.."),
                           "control group '%s' ends in '%s'", cg, last);
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        _cleanup_free_ char *text = NULL, *cg = NULL;
        _cleanup_cpuset_ CPUSet cpus = CPUSET_EMPTY;
        uint8_t type;
        int r;

        if (size < 1)
                return 0;
        if (!bus) {
                int fds[2];

                /* Messages are made only on a bus being opened: one half of a socket pair,
                 * its authentication never answered. */
                FUZZ_CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) == 0, "socketpair: %m");
                FUZZ_CHECK(sd_bus_new(&bus) >= 0 && sd_bus_set_fd(bus, fds[0], fds[0]) >= 0 && sd_bus_start(bus) >= 0,
                           "cannot set up a bus");
        }
        type = data[0] % 6;
        data++;
        size--;
        text = fuzz_strndup(data, size);
        r = sd_bus_message_new_method_call(bus, &m, "org.freedesktop.systemd1",
                                           "/org/freedesktop/systemd1/unit/fuzz_2eslice",
                                           "org.freedesktop.DBus.Properties", "Get");
        FUZZ_CHECK(r >= 0, "sd_bus_message_new_method_call(): %d", r);
        switch (type) {
        case 0:
                r = sd_bus_message_append_array(m, 'y', data, size);
                break;
        case 1:
                r = sd_bus_message_append(m, "s", text);
                break;
        case 2:
                r = sd_bus_message_append(m, "v", "s", text);
                break;
        case 3:
                r = sd_bus_message_append_array(m, 'i', data, size / 4 * 4);
                break;
        case 4:
                r = sd_bus_message_append(m, "u", (uint32_t) size);
                break;
        default:
                r = 0;
        }
        if (r < 0)
                return 0; /* not UTF-8, or not an object path: the bus would not carry it */
        FUZZ_CHECK(sd_bus_message_seal(m, 1, 0) >= 0, "sd_bus_message_seal()");

        FUZZ_CHECK(sd_bus_message_rewind(m, true) >= 0, "rewind");
        r = systemd_allowed_cpus_read(m, &cpus);
        if (type == 0)
                check_cpus(data, size, r, &cpus);
        else
                FUZZ_CHECK(r < 0 && cpuset_is_empty(&cpus), "AllowedCPUs read from type %u", type);

        FUZZ_CHECK(sd_bus_message_rewind(m, true) >= 0, "rewind");
        r = systemd_control_group_read(m, &cg);
        FUZZ_CHECK(r == 0 || r == -EBADMSG || r == -ENXIO || r == -ENOMEM, "ControlGroup: %d", r);
        FUZZ_CHECK(r < 0 || type == 1, "ControlGroup read from type %u", type);
        if (type == 1)
                FUZZ_CHECK((r == 0) == (isempty(text) || reference_control_group(text)),
                           "ControlGroup '%s' read as %d", text, r);
        if (r == 0) {
                FUZZ_CHECK(streq(cg, text), "ControlGroup '%s' read as '%s'", text, cg);
                check_control_group(cg);
        }
        return 0;
}
