/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lowlatctl's verdicts: every state liblowlat knows has one, "needs attention" is the
 * library's setting_state_is_good(), and a state only a newer lowlatd knows is unknown;
 * list --state takes the library's state names and no others. */
#include "client.h"
#include "setting/setting.h"
#include "tap.h"
#include "basic/util.h"

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

static void test_state_filter(void) {
        StateFilter filter = STATE_FILTER_ALL;

        CHECK(state_filter_parse("drifted,failed", &filter) == 0 && state_filter_matches(filter, "drifted") &&
                      state_filter_matches(filter, "failed") && !state_filter_matches(filter, "ok") &&
                      !state_filter_matches(filter, "fighting"),
              "--state=drifted,failed: those two states only");
        CHECK(state_filter_parse("ok,", &filter) == 0 && state_filter_matches(filter, "ok") &&
                      !state_filter_matches(filter, "corrected"),
              "--state=ok,: an empty name between commas is passed over");
        for (SettingState s = 0; s < _SETTING_STATE_MAX; s++) {
                const char *name = setting_state_to_string(s);
                _cleanup_free_ char *what = strdup_printf("--state=%s is accepted and picks %s", name, name);

                CHECK(state_filter_parse(name, &filter) == 0 && state_filter_matches(filter, name), what ?: name);
        }
        filter = STATE_FILTER_ALL;
        CHECK(state_filter_parse("drifed", &filter) == -EINVAL && filter == STATE_FILTER_ALL,
              "--state=drifed (a typo): -EINVAL, nothing written");
        CHECK(state_filter_parse("ok,drifted,okay", &filter) == -EINVAL, "one unknown name in a list: -EINVAL");
        CHECK(state_filter_parse(",", &filter) == -EINVAL, "--state=,: no state at all, -EINVAL");
        CHECK(state_filter_matches(STATE_FILTER_ALL, "fighting"), "no filter: every setting, unknown states too");
}

static void test_kind_filter(void) {
        KindFilter filter = KIND_FILTER_ALL;

        CHECK(kind_filter_parse("sysctl,governor", &filter) == 0 && kind_filter_matches(filter, "sysctl") &&
                      kind_filter_matches(filter, "governor") && !kind_filter_matches(filter, "irq_affinity") &&
                      !kind_filter_matches(filter, "a_kind_of_tomorrow"),
              "--kind=sysctl,governor: those two kinds only");
        for (SettingKind k = 0; k < _SETTING_KIND_MAX; k++) {
                const char *name = setting_kind_to_string(k);
                _cleanup_free_ char *what = strdup_printf("--kind=%s is accepted and picks %s", name, name);

                CHECK(kind_filter_parse(name, &filter) == 0 && kind_filter_matches(filter, name), what ?: name);
        }
        filter = KIND_FILTER_ALL;
        CHECK(kind_filter_parse("sysctls", &filter) == -EINVAL && filter == KIND_FILTER_ALL,
              "--kind=sysctls (a typo): -EINVAL, nothing written");
        CHECK(kind_filter_parse(",", &filter) == -EINVAL, "--kind=,: no kind at all, -EINVAL");
        CHECK(kind_filter_matches(KIND_FILTER_ALL, "a_kind_of_tomorrow"), "no filter: every kind, unknown ones too");
}

int main(void) {
        test_setting_states();
        test_state_filter();
        test_kind_filter();
        return tap_finish();
}
