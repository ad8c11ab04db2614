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

/* list --state and --kind: names from one of liblowlat's string tables, one bit each. */
typedef struct FilterNames {
        const char *option; /* "--state" */
        const char *noun;   /* "state" */
        unsigned n;
        const char *(*name)(unsigned i);
} FilterNames;

static const char *state_name(unsigned i) {
        return setting_state_to_string((SettingState) i);
}

static const char *kind_name(unsigned i) {
        return setting_kind_to_string((SettingKind) i);
}

static const FilterNames state_names = { "--state", "state", _SETTING_STATE_MAX, state_name };
static const FilterNames kind_names = { "--kind", "kind", _SETTING_KIND_MAX, kind_name };

_Static_assert(_SETTING_STATE_MAX <= sizeof(StateFilter) * 8, "StateFilter has a bit for every state");
_Static_assert(_SETTING_KIND_MAX <= sizeof(KindFilter) * 8, "KindFilter has a bit for every kind");

static int filter_name_index(const FilterNames *names, const char *s) {
        for (unsigned i = 0; i < names->n; i++)
                if (streq(names->name(i), s))
                        return (int) i;
        return -EINVAL;
}

static int filter_parse(const FilterNames *names, const char *list, uint64_t *ret) {
        uint64_t filter = 0;

        for (const char *p = list; *p;) {
                size_t len = strcspn(p, ",");

                if (len > 0) {
                        _cleanup_free_ char *name = strndup(p, len);
                        int i;

                        if (!name)
                                return -ENOMEM;
                        i = filter_name_index(names, name);
                        if (i < 0) {
                                /* A typo must not look like "no setting is in that state". */
                                fprintf(stderr, "lowlatctl: %s: unknown %s '%.*s'; the %ss are", names->option,
                                        names->noun, (int) len, p, names->noun);
                                for (unsigned k = 0; k < names->n; k++)
                                        fprintf(stderr, " %s", names->name(k));
                                fputc('\n', stderr);
                                return -EINVAL;
                        }
                        filter |= UINT64_C(1) << i;
                }
                p += len;
                if (*p == ',')
                        p++;
        }
        if (filter == 0) {
                fprintf(stderr, "lowlatctl: %s needs a %s (%s=help lists them)\n", names->option, names->noun,
                        names->option);
                return -EINVAL;
        }
        *ret = filter;
        return 0;
}

static bool filter_matches(const FilterNames *names, uint64_t filter, const char *name) {
        int i;

        if (filter == 0)
                return true;
        i = filter_name_index(names, name);
        return i >= 0 && (filter & (UINT64_C(1) << i));
}

static void filter_names_print(const FilterNames *names, FILE *f) {
        for (unsigned i = 0; i < names->n; i++)
                fprintf(f, "%s\n", names->name(i));
}

int state_filter_parse(const char *list, StateFilter *ret) {
        return filter_parse(&state_names, list, ret);
}

bool state_filter_matches(StateFilter filter, const char *name) {
        return filter_matches(&state_names, filter, name);
}

void state_names_print(FILE *f) {
        filter_names_print(&state_names, f);
}

int kind_filter_parse(const char *list, KindFilter *ret) {
        return filter_parse(&kind_names, list, ret);
}

bool kind_filter_matches(KindFilter filter, const char *name) {
        return filter_matches(&kind_names, filter, name);
}

void kind_names_print(FILE *f) {
        filter_names_print(&kind_names, f);
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
