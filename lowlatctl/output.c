/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lowlatctl's output for people and programs: status, list and the audit's report, as text
 * (control characters escaped, columns aligned) and as JSON. */
#include <ctype.h>
#include <inttypes.h>
#include <string.h>
#include <time.h>

#include "client.h"
#include "basic/macro.h"
#include "basic/util.h"

static void json_print_setting(FILE *f, const SettingRow *row) {
        fputc('{', f);
        json_print_member(f, "kind", row->kind, true);
        json_print_member(f, "object", row->object, false);
        json_print_member(f, "desired", row->desired, false);
        json_print_member(f, "observed", row->observed, false);
        json_print_member(f, "state", row->state, false);
        if (!isempty(row->label))
                json_print_member(f, "label", row->label, false);
        fputc('}', f);
}

typedef bool (*RowFilter)(const SettingRow *row, const void *userdata);

static bool list_filter_matches(const SettingRow *row, const void *userdata) {
        const ListFilter *filter = userdata;
        return state_filter_matches(filter->states, row->state) && kind_filter_matches(filter->kinds, row->kind);
}

static bool filter_not_good(const SettingRow *row, _unused_ const void *userdata) {
        return !setting_state_name_is_good(row->state);
}

static void print_settings_table(FILE *f, const SettingList *l, RowFilter filter, const void *userdata,
                                 bool legend) {
        static const char *const headers[] = { "KIND", "OBJECT", "DESIRED", "OBSERVED", "STATE" };
        size_t width[ELEMENTSOF(headers)] = {};
        size_t shown = 0;

        if (legend)
                table_measure_row(width, headers, ELEMENTSOF(headers));
        /* Two passes over the same rows: the first measures the columns, the second prints. */
        for (int pass = 0; pass < 2; pass++) {
                if (pass == 1 && legend && shown > 0)
                        table_print_row(f, width, headers, ELEMENTSOF(headers), 0);
                for (size_t i = 0; i < l->n; i++) {
                        const SettingRow *row = &l->rows[i];
                        _cleanup_free_ char *object = NULL;
                        const char *cells[] = { row->kind, row->object, row->desired, row->observed, row->state };

                        if (!filter(row, userdata))
                                continue;
                        /* "24 virtio0-input.0": the number and what it is. */
                        if (!isempty(row->label) && (object = strdup_printf("%s %s", row->object, row->label)))
                                cells[1] = object;
                        if (pass == 0) {
                                table_measure_row(width, cells, ELEMENTSOF(cells));
                                shown++;
                        } else
                                table_print_row(f, width, cells, ELEMENTSOF(cells), 0);
                }
        }
        if (legend)
                fprintf(f, "%s%zu setting%s listed.\n", shown > 0 ? "\n" : "", shown, shown == 1 ? "" : "s");
}

static void print_field(FILE *f, const char *label, const char *value) {
        fprintf(f, "%18s: ", label);
        print_escaped(f, value);
        fputc('\n', f);
}

/* Continuation lines of a multi-line value, aligned under the first. */
static void print_field_lines(FILE *f, const char *label, const char *text) {
        const char *p = text;
        bool first = true;

        do {
                size_t len = strcspn(p, "\n");
                _cleanup_free_ char *line = strndup(p, len);
                fprintf(f, "%18s%s ", first ? label : "", first ? ":" : " ");
                print_escaped(f, line ?: "?");
                fputc('\n', f);
                first = false;
                p += len;
                if (*p == '\n')
                        p++;
        } while (*p);
}

/* "2 drifted, 1 failed": the settings that need attention, by state, in the order states
 * first appear. Sets *ret_n to their number; NULL on allocation failure. */
static char *summarize_not_good(const SettingList *l, size_t *ret_n) {
        _cleanup_(string_set_done) StringSet states = {};
        _cleanup_free_ size_t *counts = NULL;
        _cleanup_free_ char *buf = NULL;
        size_t size = 0, n = 0;
        FILE *f;

        for (size_t i = 0; i < l->n; i++)
                if (!setting_state_name_is_good(l->rows[i].state) && string_set_put(&states, l->rows[i].state) < 0)
                        return NULL;
        counts = calloc(MAX(states.n, 1U), sizeof(size_t));
        if (!counts)
                return NULL;
        for (size_t i = 0; i < l->n; i++)
                if (!setting_state_name_is_good(l->rows[i].state)) {
                        counts[string_set_put(&states, l->rows[i].state)]++;
                        n++;
                }

        f = open_memstream(&buf, &size);
        if (!f)
                return NULL;
        for (size_t i = 0; i < states.n; i++)
                fprintf(f, "%s%zu %s", i > 0 ? ", " : "", counts[i], states.items[i]);
        if (fclose(f) != 0)
                return NULL;
        *ret_n = n;
        return TAKE_PTR(buf);
}

void status_print_text(FILE *f, const ManagerInfo *info, const SettingList *l, int verdict) {
        _cleanup_free_ char *settings = NULL, *reload = NULL, *latency = NULL, *summary = NULL, *verdict_upper = NULL;
        size_t not_good = 0;

        /* The first line is what a monitoring system shows next to the exit status. */
        summary = summarize_not_good(l, &not_good);
        verdict_upper = strdup(verdict_to_string(verdict));
        for (char *c = verdict_upper; c && *c; c++)
                *c = (char) toupper((unsigned char) *c);
        fprintf(f, "LOWLATD %s: ", verdict_upper ?: "?");
        print_escaped(f, info->state);
        if (not_good == 0)
                fprintf(f, ", %zu settings, all ok or corrected", l->n);
        else {
                fprintf(f, ", %zu of %zu settings need attention (", not_good, l->n);
                print_escaped(f, summary ?: "?");
                fputc(')', f);
        }
        /* The host's one word, after what monitoring plugins have always read. */
        if (info->condition) {
                fputs("; ", f);
                print_escaped(f, info->condition);
        }
        fputc('\n', f);

        if (info->condition) {
                print_field(f, "Condition", info->condition);
                for (size_t i = 0; info->condition_reasons && info->condition_reasons[i]; i++) {
                        fprintf(f, "%18s  ", "");
                        print_escaped(f, info->condition_reasons[i]);
                        fputc('\n', f);
                }
        }
        if (info->reboot_required >= 0)
                print_field(f, "Reboot required", info->reboot_required ? "yes" : "no");
        print_field(f, "Version", info->version);
        print_field(f, "Mode", info->mode);
        print_field(f, "State", info->state);
        print_field(f, "Isolated CPUs", isempty(info->isolated_cpus) ? "none" : info->isolated_cpus);
        print_field(f, "Housekeeping CPUs", info->housekeeping_cpus);
        for (size_t i = 0; info->profiles && info->profiles[i]; i++) {
                fprintf(f, "%18s%s ", i == 0 ? "Profiles" : "", i == 0 ? ":" : " ");
                print_escaped(f, info->profiles[i]);
                fputc('\n', f);
        }
        if (!info->config_files || !info->config_files[0])
                print_field(f, "Config files", "none");
        for (size_t i = 0; info->config_files && info->config_files[i]; i++) {
                fprintf(f, "%18s%s ", i == 0 ? "Config files" : "", i == 0 ? ":" : " ");
                print_escaped(f, info->config_files[i]);
                fputc('\n', f);
        }

        if (info->last_reload_usec == 0)
                print_field(f, "Last reload", "never");
        else {
                _cleanup_free_ char *when = format_timestamp(info->last_reload_usec);
                reload = strdup_printf("%s%s", when ?: "?", isempty(info->last_reload_error) ? "" : " (failed)");
                print_field(f, "Last reload", reload ?: "?");
        }
        if (!isempty(info->last_reload_error))
                print_field_lines(f, "Last reload error", info->last_reload_error);
        for (size_t i = 0; info->config_warnings && info->config_warnings[i]; i++) {
                fprintf(f, "%18s%s ", i == 0 ? "Config warnings" : "", i == 0 ? ":" : " ");
                print_escaped(f, info->config_warnings[i]);
                fputc('\n', f);
        }

        settings = strdup_printf("%" PRIu32 " (%" PRIu32 " not ok)", info->settings, info->settings_not_ok);
        print_field(f, "Settings", settings ?: "?");
        fprintf(f, "%18s: %" PRIu64 "\n", "Drift events", info->drift_events);
        fprintf(f, "%18s: %" PRIu64 "\n", "Corrections", info->corrections);
        fprintf(f, "%18s: %" PRIu64 "\n", "Failures", info->failures);
        fprintf(f, "%18s: %" PRIu64 "\n", "Fights", info->fights);
        fprintf(f, "%18s: %" PRIu64 "\n", "Applied settings", info->applied_settings);
        if (info->cpu_dma_latency_usec < 0)
                print_field(f, "cpu_dma_latency", "off");
        else if (manager_info_dma_latency_held(info)) {
                latency = strdup_printf("%" PRIi32 " us (held)", info->cpu_dma_latency_usec);
                print_field(f, "cpu_dma_latency", latency ?: "?");
        } else {
                /* Observe mode only reads the device; enforce mode may have failed to open it.
                 * What the host runs with is then the system's value, whoever asked for it. */
                _cleanup_free_ char *system = info->cpu_dma_latency_system_usec >= 0 ?
                        strdup_printf("; system value %" PRIi32 " us", info->cpu_dma_latency_system_usec) : NULL;
                latency = strdup_printf("%" PRIi32 " us, not held (%s)%s", info->cpu_dma_latency_usec,
                                        streq_ptr(info->mode, "observe") ? "observe mode" : "see list",
                                        system ?: "");
                print_field(f, "cpu_dma_latency", latency ?: "?");
        }

        if (info->measurement)
                last_measurement_print_text(f, info->measurement);

        if (not_good > 0) {
                fputc('\n', f);
                print_settings_table(f, l, filter_not_good, NULL, true);
        }
}

/* A JSON array of the lines of text ([] when empty): LastReloadError holds one error a
 * line. */
static void json_print_lines(FILE *f, const char *text) {
        fputc('[', f);
        for (const char *p = text; !isempty(p);) {
                size_t len = strcspn(p, "\n");
                _cleanup_free_ char *line = strndup(p, len);

                if (p != text)
                        fputc(',', f);
                json_print_string(f, line ?: "?");
                p += len;
                p += *p == '\n';
        }
        fputc(']', f);
}

void status_print_json(FILE *f, const ManagerInfo *info, const SettingList *l, int verdict) {
        bool first = true;

        fputc('{', f);
        json_print_member(f, "version", info->version, true);
        json_print_member(f, "mode", info->mode, false);
        json_print_member(f, "state", info->state, false);
        json_print_member(f, "verdict", verdict_to_string(verdict), false);
        fputs(",\"condition\":", f);
        if (info->condition)
                json_print_string(f, info->condition);
        else
                fputs("null", f);
        fputs(",\"condition_reasons\":[", f);
        for (size_t i = 0; info->condition_reasons && info->condition_reasons[i]; i++) {
                if (i > 0)
                        fputc(',', f);
                json_print_string(f, info->condition_reasons[i]);
        }
        fprintf(f, "],\"reboot_required\":%s",
                info->reboot_required < 0 ? "null" : info->reboot_required ? "true" : "false");
        json_print_member(f, "isolated_cpus", info->isolated_cpus, false);
        json_print_member(f, "housekeeping_cpus", info->housekeeping_cpus, false);
        fputs(",\"config_files\":[", f);
        for (size_t i = 0; info->config_files && info->config_files[i]; i++) {
                if (i > 0)
                        fputc(',', f);
                json_print_string(f, info->config_files[i]);
        }
        fprintf(f, "],\"last_reload_usec\":%" PRIu64, info->last_reload_usec);
        fputs(",\"last_reload_error\":", f);
        json_print_lines(f, info->last_reload_error);
        fputs(",\"profiles\":[", f);
        for (size_t i = 0; info->profiles && info->profiles[i]; i++) {
                if (i > 0)
                        fputc(',', f);
                json_print_string(f, info->profiles[i]);
        }
        fputs("],\"config_warnings\":[", f);
        for (size_t i = 0; info->config_warnings && info->config_warnings[i]; i++) {
                if (i > 0)
                        fputc(',', f);
                json_print_string(f, info->config_warnings[i]);
        }
        fputc(']', f);
        fprintf(f, ",\"drift_events\":%" PRIu64 ",\"corrections\":%" PRIu64 ",\"failures\":%" PRIu64
                   ",\"fights\":%" PRIu64 ",\"applied_settings\":%" PRIu64 ",\"cpu_dma_latency_usec\":%" PRIi32
                   ",\"cpu_dma_latency_held\":%s,\"cpu_dma_latency_system_usec\":%" PRIi32 ",\"n_settings\":%" PRIu32
                   ",\"n_settings_not_ok\":%" PRIu32 ",\"settings_not_ok\":[",
                   info->drift_events, info->corrections, info->failures, info->fights, info->applied_settings,
                   info->cpu_dma_latency_usec, manager_info_dma_latency_held(info) ? "true" : "false",
                   info->cpu_dma_latency_system_usec, info->settings, info->settings_not_ok);
        for (size_t i = 0; i < l->n; i++) {
                if (setting_state_name_is_good(l->rows[i].state))
                        continue;
                if (!first)
                        fputc(',', f);
                json_print_setting(f, &l->rows[i]);
                first = false;
        }
        fputs("],\"last_measurement\":", f);
        if (info->measurement)
                last_measurement_print_json(f, info->measurement);
        else
                fputs("null", f);
        fputs("}\n", f);
}

void status_print_unknown(FILE *f, const char *reason, bool json) {
        if (json) {
                fputc('{', f);
                json_print_member(f, "verdict", verdict_to_string(EXIT_UNKNOWN), true);
                json_print_member(f, "reason", reason ?: "", false);
                fputs("}\n", f);
                return;
        }
        fputs("LOWLATD UNKNOWN: ", f);
        print_escaped(f, reason ?: "?");
        fputc('\n', f);
}

void list_print_table(FILE *f, const SettingList *l, const ListFilter *filter, bool legend) {
        print_settings_table(f, l, list_filter_matches, filter, legend);
}

void list_print_json(FILE *f, const SettingList *l, const ListFilter *filter) {
        bool first = true;

        fputc('[', f);
        for (size_t i = 0; i < l->n; i++) {
                if (!list_filter_matches(&l->rows[i], filter))
                        continue;
                fputs(first ? "\n" : ",\n", f);
                json_print_setting(f, &l->rows[i]);
                first = false;
        }
        fputs(first ? "]\n" : "\n]\n", f);
}

/* Prints text indented and folded at spaces to fit width columns (a word longer than
 * the width, like a long command, stays whole on its own line). */
static void print_wrapped(FILE *f, const char *text, size_t indent, size_t width) {
        const char *p = text;

        while (*p) {
                size_t room = width > indent ? width - indent : 20, len = strcspn(p, "\n"), cut = len;

                if (len > room) {
                        cut = room;
                        while (cut > 0 && p[cut] != ' ')
                                cut--;
                        if (cut == 0) /* one long word: up to the next space */
                                cut = strcspn(p, " \n");
                }
                _cleanup_free_ char *line = strndup(p, cut);

                /* Findings quote the host (task names, file contents): escaped as cells are. */
                fprintf(f, "%*s", (int) indent, "");
                print_escaped(f, line ?: "?");
                fputc('\n', f);
                p += cut;
                while (*p == ' ' || *p == '\n')
                        p++;
        }
}


/* The findings worst first, and in the order lowlatd gives them within a severity;
 * findings of a severity this lowlatctl does not know are left out. */
void check_print(FILE *f, const CheckReport *report, bool json) {
        size_t n = 0, counts[SEVERITY_RANKS] = {};
        bool first = true;

        if (json)
                fputc('[', f);
        for (int pass = 0; pass < SEVERITY_RANKS; pass++)
                for (size_t i = 0; i < report->n; i++) {
                        const CheckFinding *finding = &report->findings[i];

                        if (severity_rank(finding->severity) != pass)
                                continue;
                        n++;
                        counts[pass]++;
                        if (json) {
                                fputs(first ? "\n{" : ",\n{", f);
                                json_print_member(f, "severity", finding->severity, true);
                                json_print_member(f, "id", finding->id, false);
                                json_print_member(f, "subject", finding->subject, false);
                                json_print_member(f, "message", finding->message, false);
                                /* Every item a finding sums up: the message names only a few. */
                                if (finding->n_details > 0) {
                                        fputs(",\"details\":[", f);
                                        for (size_t k = 0; k < finding->n_details; k++) {
                                                if (k > 0)
                                                        fputc(',', f);
                                                json_print_string(f, finding->details[k]);
                                        }
                                        fputc(']', f);
                                }
                                fputc('}', f);
                        } else {
                                fprintf(f, "%s%-8s %s  ", first ? "" : "\n", finding->severity, finding->id);
                                print_escaped(f, finding->subject);
                                fputc('\n', f);
                                print_wrapped(f, finding->message, 9, 88);
                        }
                        first = false;
                }
        if (json)
                fputs(first ? "]\n" : "\n]\n", f);
        else
                fprintf(f, "%s%zu finding%s: %zu critical, %zu warning, %zu info\n", n ? "\n" : "", n,
                        n == 1 ? "" : "s", counts[0], counts[1], counts[2]);
}
