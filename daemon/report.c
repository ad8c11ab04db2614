/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lowlatd --once: the state of every setting after one pass, as a table sized to its
 * cells or as JSON, and the count of each state. */
#include <string.h>

#include "basic/cells.h"
#include "basic/macro.h"
#include "basic/util.h"
#include "manager.h"
#include "report.h"
#include "setting/irq.h"

enum { COLUMN_KIND, COLUMN_OBJECT, COLUMN_DESIRED, COLUMN_OBSERVED, COLUMN_STATE, _COLUMN_MAX };

/* One setting's row, in the words of the table and of the JSON. */
typedef struct ReportRow {
        char *object; /* "24 virtio0-input.0": the number and what it is */
        char *state;  /* "would change", "unsupported: REASON" */
        const char *observed;
        char observed_buf[4096];
} ReportRow;

static void report_row_done(ReportRow *row) {
        row->object = mfree(row->object);
        row->state = mfree(row->state);
}

static const char *report_state_name(const Manager *m, const Setting *s) {
        /* Observe mode wrote nothing: drift there is what enforce mode would change. */
        return manager_observing(m) && s->state == SETTING_DRIFTED ? "would change" : setting_state_to_string(s->state);
}

static int report_row_fill(Manager *m, Setting *s, ReportRow *ret) {
        *ret = (ReportRow) {};
        ret->object = s->label ? strdup_printf("%s %s", s->object, s->label) : strdup(s->object);
        ret->state = strdup_printf("%s%s%s", report_state_name(m, s), s->reason ? ": " : "", s->reason ?: "");
        ret->observed = setting_describe_observed(s, &m->rc, ret->observed_buf, sizeof(ret->observed_buf));
        if (!ret->object || !ret->state) {
                report_row_done(ret);
                return -ENOMEM;
        }
        return 0;
}

static bool report_shows(const Setting *s, ReportFlags flags) {
        return !(flags & REPORT_CHANGED) || s->state != SETTING_OK;
}

static int report_print_table(Manager *m, FILE *f, ReportFlags flags) {
        static const char *const headers[_COLUMN_MAX] = { "KIND", "OBJECT", "DESIRED", "OBSERVED", "STATE" };
        size_t width[_COLUMN_MAX] = {}, shown = 0;

        table_measure_row(width, headers, _COLUMN_MAX);
        for (int pass = 0; pass < 2; pass++) {
                if (pass == 1 && shown > 0)
                        table_print_row(f, width, headers, _COLUMN_MAX, 0);
                for (size_t i = 0; i < m->table.n; i++) {
                        Setting *s = m->table.settings[i];
                        ReportRow row;

                        if (!report_shows(s, flags))
                                continue;
                        if (report_row_fill(m, s, &row) < 0)
                                return -ENOMEM;
                        const char *const cells[_COLUMN_MAX] = {
                                setting_kind_to_string(s->kind), row.object, s->desired, row.observed, row.state,
                        };
                        if (pass == 0) {
                                table_measure_row(width, cells, _COLUMN_MAX);
                                shown++;
                        } else
                                table_print_row(f, width, cells, _COLUMN_MAX, 0);
                        report_row_done(&row);
                }
        }
        return (int) MIN(shown, (size_t) INT32_MAX);
}

static void report_print_counts_text(Manager *m, FILE *f, bool any_shown) {
        size_t counts[_SETTING_STATE_MAX];

        table_count(&m->table, counts);
        fprintf(f, "%s%zu settings: %zu ok, %zu corrected, %zu %s, %zu failed, %zu unmovable, %zu unsupported\n",
                any_shown ? "\n" : "", m->table.n, counts[SETTING_OK], counts[SETTING_CORRECTED],
                counts[SETTING_DRIFTED], manager_observing(m) ? "would change" : "drifted", counts[SETTING_FAILED],
                counts[SETTING_UNMOVABLE], counts[SETTING_UNSUPPORTED]);
}

static int report_print_json(Manager *m, FILE *f, ReportFlags flags) {
        size_t counts[_SETTING_STATE_MAX];
        bool first = true;

        fputc('{', f);
        json_print_member(f, "mode", manager_observing(m) ? "observe" : "enforce", true);
        fputs(",\"settings\":[", f);
        for (size_t i = 0; i < m->table.n; i++) {
                Setting *s = m->table.settings[i];
                char buf[4096];
                const char *observed;

                if (!report_shows(s, flags))
                        continue;
                observed = setting_describe_observed(s, &m->rc, buf, sizeof(buf));
                fputs(first ? "\n{" : ",\n{", f);
                first = false;
                /* The state names of the bus and of lowlatctl list --json: one vocabulary. */
                json_print_member(f, "kind", setting_kind_to_string(s->kind), true);
                json_print_member(f, "object", s->object, false);
                if (s->label)
                        json_print_member(f, "label", s->label, false);
                json_print_member(f, "desired", s->desired ?: "", false);
                json_print_member(f, "observed", observed ?: "", false);
                json_print_member(f, "state", setting_state_to_string(s->state), false);
                if (s->reason)
                        json_print_member(f, "reason", s->reason, false);
                fputc('}', f);
        }
        table_count(&m->table, counts);
        fprintf(f, "%s],\"n_settings\":%zu,\"counts\":{", first ? "" : "\n", m->table.n);
        for (SettingState st = 0; st < _SETTING_STATE_MAX; st++)
                fprintf(f, "%s\"%s\":%zu", st > 0 ? "," : "", setting_state_to_string(st), counts[st]);
        fputs("}}\n", f);
        return 0;
}

size_t manager_print_report(Manager *m, FILE *f, ReportFlags flags) {
        size_t bad = 0;
        int r;

        (void) irq_table_refresh_names(&m->table, m->host);
        if (flags & REPORT_JSON)
                r = report_print_json(m, f, flags);
        else {
                r = report_print_table(m, f, flags);
                if (r >= 0)
                        report_print_counts_text(m, f, r > 0);
        }
        if (r < 0)
                fprintf(stderr, "lowlatd: cannot print the report: %s\n", strerror(-r));
        for (size_t i = 0; i < m->table.n; i++)
                if (m->table.settings[i]->state == SETTING_DRIFTED || m->table.settings[i]->state == SETTING_FAILED)
                        bad++;
        return bad;
}
