/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lowlatctl's verdicts: every state liblowlat knows has one, "needs attention" is the
 * library's setting_state_is_good(), and a state only a newer lowlatd knows is unknown. */
#include "lowlatctl.h"
#include "setting.h"
#include "tap.h"
#include "util.h"

/* The verdict of lowlatd enforcing with one setting in this state. */
static int verdict_of(const char *state) {
        ManagerInfo info = { .state = "enforcing" };
        SettingRow row = { "sysctl", "net.core.somaxconn", "8192", "4096", state };
        SettingList l = { .rows = &row, .n = 1, .allocated = 1 };

        return posture_verdict(&info, &l);
}

static void test_setting_states(void) {
        for (SettingState s = 0; s < _SETTING_STATE_MAX; s++) {
                const char *name = setting_state_to_string(s);
                _cleanup_free_ char *what = strdup_printf("state %s: a verdict, and good as the library says", name);

                CHECK(verdict_of(name) != EXIT_UNKNOWN && setting_state_name_is_good(name) == setting_state_is_good(s),
                      what ?: name);
        }
        CHECK(verdict_of("ok") == EXIT_OK && verdict_of("drifted") == EXIT_WARNING &&
                      verdict_of("failed") == EXIT_CRITICAL,
              "ok is ok, drifted a warning, failed critical");
        CHECK(verdict_of("fighting") == EXIT_UNKNOWN && !setting_state_name_is_good("fighting"),
              "a state of a newer lowlatd: unknown, and shown by status");
}

int main(void) {
        test_setting_states();
        return tap_finish();
}
