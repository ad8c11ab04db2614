/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lowlatctl's words when lowlatd cannot answer: a status that still says something on
 * stdout, what an older lowlatd lacks, and where the bus it could not reach is. */
#include <stdlib.h>

#include "client.h"
#include "tap.h"
#include "basic/util.h"

static char *printed_unknown(const char *reason, bool json) {
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);

        if (!f)
                return NULL;
        status_print_unknown(f, reason, json);
        fclose(f);
        return buf;
}

static void test_status_unknown(void) {
        _cleanup_free_ char *text = printed_unknown("lowlatd is not running", false);
        _cleanup_free_ char *json = printed_unknown("a \"quoted\" reason\n", true);
        _cleanup_free_ char *odd = printed_unknown("bell\a", false);

        CHECK_STR(text, "LOWLATD UNKNOWN: lowlatd is not running\n", "text: the verdict line and the reason");
        CHECK_STR(json, "{\"verdict\":\"unknown\",\"reason\":\"a \\\"quoted\\\" reason\\u000a\"}\n",
                  "JSON: verdict unknown and the reason, escaped");
        CHECK_STR(odd, "LOWLATD UNKNOWN: bell\\x07\n", "text: control characters shown as \\xNN");
}

static void test_lacking(void) {
        _cleanup_free_ char *noise = ctl_lacking_text(NULL, "Noise");
        _cleanup_free_ char *gate = ctl_lacking_text(NULL, "NoiseGate");
        _cleanup_free_ char *core = ctl_lacking_text(NULL, "Fights");

        CHECK_STR(noise, "this lowlatd has no noise counters; upgrade it", "Noise: no noise counters");
        CHECK_STR(gate, "this lowlatd has no noise counters; upgrade it", "NoiseGate is part of the same feature");
        CHECK_STR(core, "this lowlatd has no Fights, which this lowlatctl needs; upgrade it",
                  "a member outside the features is named");
}

static void test_connect_failure(void) {
        _cleanup_free_ char *missing = NULL, *refused = NULL, *other = NULL;

        setenv("DBUS_SYSTEM_BUS_ADDRESS", "unix:path=/tmp/bus%2dx", 1);
        missing = ctl_connect_failure(-ENOENT);
        refused = ctl_connect_failure(-ECONNREFUSED);
        setenv("DBUS_SYSTEM_BUS_ADDRESS", "tcp:host=localhost,port=1", 1);
        other = ctl_connect_failure(-ETIMEDOUT);
        CHECK(missing && strstr(missing, "there is no socket /tmp/bus-x") && strstr(missing, "systemctl start lowlatd"),
              "no socket: its path, unescaped, and the command that starts lowlatd");
        CHECK(refused && strstr(refused, "at /tmp/bus-x: nobody listens there") &&
                      strstr(refused, "systemctl start lowlatd"),
              "a refused socket: its path and the command");
        CHECK(other && strstr(other, "at tcp:host=localhost,port=1: "), "not a socket path: the address");
}

int main(void) {
        test_status_unknown();
        test_lacking();
        test_connect_failure();
        return tap_finish();
}
