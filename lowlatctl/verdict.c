/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What lowlatd's states and the audit's severities mean to lowlatctl: the exit status (the
 * monitoring-plugin verdict), which settings need attention, which ones list --state picks. */
#include <string.h>

#include "client.h"
#include "basic/macro.h"
#include "setting/setting.h"
#include "basic/util.h"

/* Worst first when combining: critical, then unknown (lowlatd said something this
 * lowlatctl does not understand), then warning. */
static int verdict_combine(int a, int b) {
        static const int rank[] = { [EXIT_OK] = 0, [EXIT_WARNING] = 1, [EXIT_UNKNOWN] = 2, [EXIT_CRITICAL] = 3 };
        return rank[a] >= rank[b] ? a : b;
}

static int verdict_of_setting_state(const char *name) {
        SettingState state = setting_state_from_string(name);

        if (state < 0)
                return EXIT_UNKNOWN; /* a state only a newer lowlatd knows */
        /* No default: -Wswitch (an error under -Werror) stops a state added to the library
         * until it has a verdict here. */
        switch (state) {
        case SETTING_OK:
        case SETTING_CORRECTED:
        case SETTING_UNSUPPORTED:
        case SETTING_UNMOVABLE:
                return EXIT_OK;
        case SETTING_DRIFTED:
        case SETTING_PENDING:
                return EXIT_WARNING;
        case SETTING_FAILED:
                return EXIT_CRITICAL;
        case _SETTING_STATE_MAX:
        case _SETTING_STATE_INVALID:
                break;
        }
        return EXIT_UNKNOWN;
}

static int verdict_of_manager_state(const char *state) {
        if (streq(state, "enforcing") || streq(state, "observing"))
                return EXIT_OK;
        if (streq(state, "starting"))
                return EXIT_WARNING;
        if (streq(state, "degraded"))
                return EXIT_CRITICAL;
        return EXIT_UNKNOWN;
}

int posture_verdict(const ManagerInfo *info, const SettingList *l) {
        int v = verdict_of_manager_state(info->state);

        for (size_t i = 0; i < l->n; i++)
                v = verdict_combine(v, verdict_of_setting_state(l->rows[i].state));
        return v;
}

const char *verdict_to_string(int v) {
        switch (v) {
        case EXIT_OK:
                return "ok";
        case EXIT_WARNING:
                return "warning";
        case EXIT_CRITICAL:
                return "critical";
        default:
                return "unknown";
        }
}

bool setting_state_name_is_good(const char *name) {
        return setting_state_is_good(setting_state_from_string(name));
}

/* One bit per state. */
_Static_assert(_SETTING_STATE_MAX <= sizeof(StateFilter) * 8, "StateFilter has a bit for every state");

int state_filter_parse(const char *list, StateFilter *ret) {
        StateFilter filter = 0;

        for (const char *p = list; *p;) {
                size_t len = strcspn(p, ",");
                SettingState state;

                if (len > 0) {
                        _cleanup_free_ char *name = strndup(p, len);
                        if (!name)
                                return -ENOMEM;
                        state = setting_state_from_string(name);
                        if (state < 0) {
                                /* A typo must not look like "no setting is in that state". */
                                fprintf(stderr, "lowlatctl: --state: unknown state '%.*s'; the states are",
                                        (int) len, p);
                                for (state = 0; state < _SETTING_STATE_MAX; state++)
                                        fprintf(stderr, " %s", setting_state_to_string(state));
                                fputc('\n', stderr);
                                return -EINVAL;
                        }
                        filter |= 1U << state;
                }
                p += len;
                if (*p == ',')
                        p++;
        }
        if (filter == STATE_FILTER_ALL) {
                fprintf(stderr, "lowlatctl: --state needs a state\n");
                return -EINVAL;
        }
        *ret = filter;
        return 0;
}

bool state_filter_matches(StateFilter filter, const char *name) {
        SettingState state;

        if (filter == STATE_FILTER_ALL)
                return true;
        state = setting_state_from_string(name);
        return state >= 0 && (filter & (1U << state));
}

/* The audit's findings, worst first when printed: critical is rank 0. */
int severity_rank(const char *severity) {
        Severity s = severity_from_string(severity);

        return s < 0 ? SEVERITY_RANKS : SEVERITY_CRITICAL - s;
}

/* The worst finding decides; info and ok findings need nothing done. */
int check_verdict(const CheckReport *report) {
        int worst = SEVERITY_RANKS;

        for (size_t i = 0; i < report->n; i++)
                worst = MIN(worst, severity_rank(report->findings[i].severity));
        return worst == 0 ? EXIT_CRITICAL : worst == 1 ? EXIT_WARNING : EXIT_OK;
}
