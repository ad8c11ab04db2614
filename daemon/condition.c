/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The host's condition (condition.h), from the settings' states and what the kernel
 * command line lacks. Computed when asked: a walk of the table. */
#include <string.h>

#include "condition.h"
#include "basic/array.h"
#include "basic/util.h"


/* How many settings a reason names before "and N more". */
#define REASON_NAMES_MAX 3U

typedef struct Reasons {
        char **lines;
        size_t n, allocated;
        int error;
} Reasons;

_printf_(2, 3) static void reason_add(Reasons *r, const char *fmt, ...) {
        va_list ap;
        char *line;

        if (r->error < 0)
                return;
        va_start(ap, fmt);
        line = strdup_vprintf(fmt, ap);
        va_end(ap);
        if (!line || array_grow(&r->lines, &r->allocated, r->n + 2) < 0) {
                free(line);
                r->error = -ENOMEM;
                return;
        }
        r->lines[r->n++] = line;
        r->lines[r->n] = NULL;
}

/* "sysctl net.core.busy_poll (why), IRQ 42 (why) and 3 more", of the settings keep()
 * takes, counted in *ret_n. */
static char *names_of(const Manager *m, bool (*keep)(const Setting *s), size_t *ret_n) {
        _cleanup_free_ char *text = strdup("");
        size_t n = 0;

        for (size_t i = 0; text && i < m->table.n; i++) {
                const Setting *s = m->table.settings[i];
                char what[512];
                char *more;

                if (!keep(s))
                        continue;
                if (n++ >= REASON_NAMES_MAX || setting_describe(s, what, sizeof(what)) < 0)
                        continue;
                more = strdup_printf("%s%s%s%s%s%s", text, *text ? "; " : "", what, s->reason ? " (" : "",
                                     s->reason ?: "", s->reason ? ")" : "");
                free(text);
                text = more;
        }
        if (text && n > REASON_NAMES_MAX) {
                char *more = strdup_printf("%s; and %zu more", text, n - REASON_NAMES_MAX);
                free(text);
                text = more;
        }
        *ret_n = n;
        return TAKE_PTR(text);
}

static bool is_failed(const Setting *s) {
        return s->state == SETTING_FAILED;
}

static bool is_fought(const Setting *s) {
        return s->fighting;
}

static bool is_in_progress(const Setting *s) {
        return s->state == SETTING_PENDING || (s->state == SETTING_DRIFTED && !s->fighting);
}

static Condition observing_reasons(const Manager *m, Reasons *r) {
        if (m->observe_override)
                reason_add(r, "lowlatd runs with --observe: it reports drift and changes nothing");
        else if (m->restored)
                reason_add(r, "lowlatctl restore put the original values back: observing until the next reload");
        else
                reason_add(r, "mode = observe in the configuration: lowlatd reports drift and changes nothing");
        return CONDITION_OBSERVING;
}

static Condition condition_with(const Manager *m, Reasons *r) {
        _cleanup_free_ char *failed = NULL, *fought = NULL, *moving = NULL;
        size_t n_failed, n_fought, n_moving;

        if (manager_observing(m))
                return observing_reasons(m, r);
        failed = names_of(m, is_failed, &n_failed);
        fought = names_of(m, is_fought, &n_fought);
        if (!failed || !fought) {
                r->error = -ENOMEM;
                return CONDITION_DEGRADED;
        }
        if (n_failed > 0)
                reason_add(r, "%zu setting%s failed: %s", n_failed, n_failed == 1 ? "" : "s", failed);
        if (n_fought > 0)
                reason_add(r, "another writer fights lowlatd over %zu setting%s: %s", n_fought, n_fought == 1 ? "" : "s",
                           fought);
        /* A line lowlatctl boot refuses to write is no reboot away: the configuration is. */
        if (m->boot_params && m->boot_refused)
                reason_add(r, "the kernel command line lacks %s, and lowlatctl boot refuses to write that line: %s",
                           m->boot_params, m->boot_refused);
        if (n_failed > 0 || n_fought > 0 || (m->boot_params && m->boot_refused))
                return CONDITION_DEGRADED;
        if (m->boot_params) {
                reason_add(r, "the kernel command line lacks %s: lowlatctl check gives the whole line (boot.cmdline); "
                              "then reboot",
                           m->boot_params);
                return CONDITION_REBOOT_REQUIRED;
        }
        moving = names_of(m, is_in_progress, &n_moving);
        if (!moving) {
                r->error = -ENOMEM;
                return CONDITION_PROGRESSING;
        }
        if (m->starting)
                reason_add(r, "lowlatd is putting the posture in place");
        else if (n_moving > 0)
                reason_add(r, "%zu setting%s being put in place: %s", n_moving, n_moving == 1 ? "" : "s", moving);
        return m->starting || n_moving > 0 ? CONDITION_PROGRESSING : CONDITION_APPLIED;
}

/* The condition alone, as condition_with() decides it, from the table's counts: the bus
 * asks for it after every event, a correction's too, and three walks of a table of
 * thousands of IRQs are what it cost there. Only a setting being fought needs a walk,
 * and there is none unless a fight ever began (every one is counted when it begins; a
 * reload's settings inherit theirs from settings that were counted). */
static Condition condition_only(const Manager *m) {
        const size_t *counts = m->table.counts;

        if (manager_observing(m))
                return CONDITION_OBSERVING;
        if (counts[SETTING_FAILED] > 0)
                return CONDITION_DEGRADED;
        if (m->rc.counters.fights > 0)
                for (size_t i = 0; i < m->table.n; i++)
                        if (is_fought(m->table.settings[i]))
                                return CONDITION_DEGRADED;
        if (m->boot_params && m->boot_refused)
                return CONDITION_DEGRADED;
        if (m->boot_params)
                return CONDITION_REBOOT_REQUIRED;
        /* No setting is fought here: every drifted one is in progress. */
        return m->starting || counts[SETTING_PENDING] > 0 || counts[SETTING_DRIFTED] > 0 ? CONDITION_PROGRESSING
                                                                                        : CONDITION_APPLIED;
}

int manager_condition(const Manager *m, char ***ret_reasons) {
        Reasons r = {};
        Condition c;

        if (!ret_reasons)
                return condition_only(m);
        c = condition_with(m, &r);

        if (!ret_reasons || r.error < 0) {
                for (size_t i = 0; i < r.n; i++)
                        free(r.lines[i]);
                free(r.lines);
                if (ret_reasons)
                        return r.error;
                return c;
        }
        if (!r.lines) {
                r.lines = calloc(1, sizeof(char *));
                if (!r.lines)
                        return -ENOMEM;
        }
        *ret_reasons = r.lines;
        return c;
}

bool manager_reboot_required(const Manager *m) {
        return m->boot_params && !m->boot_refused;
}
