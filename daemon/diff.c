/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Diff(): a reload's plan without its apply (diff.h). The new table is planned as a
 * reload plans it (table_plan(), the sources' settings, table_rescan()), but with no hooks:
 * nothing is watched or indexed, and its settings are only read. The settings in force
 * are not read again: a look that is not a reconcile would hide the next drift from it
 * (setting_reconcile() judges only a value that changed), so a setting that would go is
 * shown as lowlatd last saw it. */
#include <string.h>

#include "diff.h"
#include "basic/array.h"
#include "basic/util.h"
#include "setting/originals.h"
#include "setting/posture-load.h"

static const char *const diff_change_table[_DIFF_CHANGE_MAX] = {
        [DIFF_ADDED] = "added",
        [DIFF_REMOVED] = "removed",
        [DIFF_CHANGED] = "changed",
};
DEFINE_STRING_TABLE_LOOKUP(diff_change, DiffChange);

static const char *const diff_effect_table[_DIFF_EFFECT_MAX] = {
        [DIFF_WRITE] = "write",
        [DIFF_NONE] = "none",
        [DIFF_RESTORE] = "restore",
        [DIFF_LEAVE] = "leave",
        [DIFF_REFUSED] = "refused",
        [DIFF_UNREADABLE] = "unreadable",
};
DEFINE_STRING_TABLE_LOOKUP(diff_effect, DiffEffect);

static char *strdup_or_null(const char *s) {
        return s ? strdup(s) : NULL;
}

static int add_row(Diff *d, DiffChange change, DiffEffect effect, const Setting *s, const char *was,
                   const char *will, const char *now, const char *why) {
        DiffRow *row;

        if (array_grow(&d->rows, &d->allocated_rows, d->n_rows + 1) < 0)
                return -ENOMEM;
        row = &d->rows[d->n_rows];
        *row = (DiffRow) {
                .change = change,
                .effect = effect,
                .kind = s->kind,
                .object = strdup(s->object),
                .was = strdup_or_null(was),
                .will = strdup_or_null(will),
                .now = strdup_or_null(now),
                .why = strdup_or_null(why),
        };
        d->n_rows++;
        if (!row->object || (was && !row->was) || (will && !row->will) || (now && !row->now) || (why && !row->why))
                return -ENOMEM;
        return 0;
}

/* A setting the new configuration asks for (was: the value in force, NULL when new),
 * read on the host now. */
static int add_planned(Diff *d, SettingContext *rc, Setting *s, const char *was) {
        char buf[4096];
        const char *now;
        int r = setting_probe(rc, s);
        DiffEffect effect = r == SETTING_OK          ? DIFF_NONE
                            : r == SETTING_DRIFTED   ? DIFF_WRITE
                            : r == -EOPNOTSUPP       ? DIFF_REFUSED
                            : r < 0                  ? DIFF_UNREADABLE
                                                     : DIFF_REFUSED;
        const char *why = r == SETTING_UNMOVABLE      ? "the kernel does not let it be changed (unmovable)"
                          : r == SETTING_UNSUPPORTED ? (s->reason ?: "unsupported on this host")
                          : r < 0                    ? (s->reason ?: strerror(-r))
                                                     : NULL;

        if (r == -ENOMEM)
                return r;
        now = r >= 0 ? setting_describe_observed(s, rc, buf, sizeof(buf)) : NULL;
        return add_row(d, was ? DIFF_CHANGED : DIFF_ADDED, effect, s, was, s->desired, now, why);
}

/* A setting in force that the new configuration drops: a reload restores what lowlatd
 * found, when it kept it (manager_reload_because()). */
static int add_removed(Diff *d, Manager *m, Setting *s) {
        const char *original = m->originals ? originals_get(m->originals, s->kind, s->object) : NULL;
        DiffEffect effect = !original                         ? DIFF_LEAVE
                            : streq_ptr(original, s->observed) ? DIFF_NONE
                                                              : DIFF_RESTORE;
        char buf[4096];

        return add_row(d, DIFF_REMOVED, effect, s, s->desired, NULL, setting_describe_observed(s, &m->rc, buf, sizeof(buf)),
                       effect == DIFF_RESTORE ? original : NULL);
}

static int compare_tables(Diff *d, Manager *m, SettingContext *rc, SettingTable *t) {
        int r = 0;

        for (size_t i = 0; r >= 0 && i < t->n; i++) {
                Setting *s = t->settings[i], *o = table_find(&m->table, s->kind, s->object);
                if (!o || !streq_ptr(o->desired, s->desired))
                        r = add_planned(d, rc, s, o ? o->desired : NULL);
        }
        for (size_t i = 0; r >= 0 && i < m->table.n; i++) {
                Setting *o = m->table.settings[i];
                if (!table_find(t, o->kind, o->object))
                        r = add_removed(d, m, o);
        }
        return r;
}

static int plan_table(Manager *m, Posture *p, SettingTable *t) {
        int r;

        table_init(t, NULL);
        r = table_plan(t, m->host, p);
        if (r >= 0)
                r = source_registry_plan(&m->sources, t, p);
        if (r >= 0)
                r = table_rescan(t, m->host, p);
        if (r >= 0)
                table_sort(t);
        return r;
}

static int load_posture(Manager *m, const ConfigMainText *main, Posture **ret, char **ret_error) {
        _cleanup_error_list_ ErrorList errors = ERROR_LIST_EMPTY;
        int r = posture_load_with(m->config_path, main, m->host, ret, &errors);

        if (r < 0)
                *ret_error = errors.n > 0 ? error_list_join(&errors, "\n") : strdup(strerror(-r));
        return r;
}

int manager_diff(Manager *m, const ConfigMainText *main, Diff *d, char **ret_error) {
        _cleanup_(posture_freep) Posture *p = NULL;
        SettingContext rc;
        SettingTable t;
        int r;

        *d = (Diff) { .warnings = ERROR_LIST_EMPTY };
        r = load_posture(m, main, &p, ret_error);
        if (r < 0)
                return r;
        d->digest = p->config->digest;
        d->writes = p->config->mode == DAEMON_MODE_ENFORCE && !m->observe_override;
        for (size_t i = 0; i < p->config->warnings.n; i++)
                if (error_list_add(&d->warnings, "%s", p->config->warnings.items[i]) < 0)
                        return -ENOMEM;
        r = config_diff_keys(m->posture->config, p->config, &d->keys, &d->n_keys);
        if (r < 0)
                return r;

        r = plan_table(m, p, &t);
        if (r < 0) {
                table_done(&t);
                *ret_error = strdup_printf("cannot plan the new posture: %s", strerror(-r));
                return r;
        }
        /* The context of a reconcile in observe mode that tells nobody: no handler, no
         * originals, a parse buffer of its own. */
        rc = m->rc;
        rc.posture = p;
        rc.observe = true;
        rc.handler = NULL;
        rc.userdata = NULL;
        rc.originals = NULL;
        rc.scratch = CPUSET_EMPTY;
        rc.counters = (ReconcileCounters) {};
        r = compare_tables(d, m, &rc, &t);
        cpuset_done(&rc.scratch);
        table_done(&t); /* releases what its reads opened (a /dev/cpu_dma_latency fd) */
        if (r < 0)
                *ret_error = strdup(strerror(-r));
        return r;
}

void diff_done(Diff *d) {
        config_key_changes_free(d->keys, d->n_keys);
        for (size_t i = 0; i < d->n_rows; i++) {
                free(d->rows[i].object);
                free(d->rows[i].was);
                free(d->rows[i].will);
                free(d->rows[i].now);
                free(d->rows[i].why);
        }
        free(d->rows);
        error_list_done(&d->warnings);
        *d = (Diff) {};
}
