/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lowlatctl: the client of org.lowlatd1 on the system bus. Shows the posture for humans
 * (status, list), for programs (--json) and for Prometheus (metrics), with exit statuses
 * that follow the monitoring-plugin convention, and asks lowlatd to reload or reapply. */
#include <ctype.h>
#include <getopt.h>
#include <inttypes.h>
#include <string.h>
#include <time.h>
#include <systemd/sd-bus.h>

#include "build-config.h"
#include "bus-names.h"
#include "macro.h"
#include "util.h"

/* Monitoring-plugin exit statuses (status, list), and the others lowlatctl uses. */
#define EXIT_OK 0
#define EXIT_WARNING 1
#define EXIT_CRITICAL 2
#define EXIT_UNKNOWN 3
#define EXIT_REFUSED 1 /* reload, reapply: lowlatd answered no */
#define EXIT_USAGE 64  /* EX_USAGE */
#define EXIT_OUTPUT 74 /* EX_IOERR: standard output could not be written */

typedef enum Verb {
        VERB_STATUS,
        VERB_LIST,
        VERB_METRICS,
        VERB_RELOAD,
        VERB_REAPPLY,
        VERB_RESTORE,
        VERB_CHECK,
} Verb;

typedef struct Arguments {
        Verb verb;
        bool json;
        bool legend;
        const char *state_filter; /* comma-separated states, NULL for all */
} Arguments;

/* ---- What lowlatd reports ------------------------------------------------------- */

/* Strings point into reply, which this struct holds a reference on. */
typedef struct ManagerInfo {
        sd_bus_message *reply;
        const char *version;
        const char *mode;
        const char *state;
        const char *isolated_cpus;
        const char *housekeeping_cpus;
        char **config_files;
        uint64_t last_reload_usec;
        const char *last_reload_error;
        uint64_t drift_events;
        uint64_t corrections;
        uint64_t failures;
        int32_t cpu_dma_latency_usec;
        uint32_t settings;
        uint32_t settings_not_ok;
} ManagerInfo;

typedef struct SettingRow {
        const char *kind;
        const char *object;
        const char *desired;
        const char *observed;
        const char *state;
} SettingRow;

typedef struct SettingList {
        sd_bus_message *reply;
        SettingRow *rows;
        size_t n, allocated;
} SettingList;

static char **strv_free(char **l) {
        if (l)
                for (char **i = l; *i; i++)
                        free(*i);
        free(l);
        return NULL;
}

static void manager_info_done(ManagerInfo *info) {
        info->config_files = strv_free(info->config_files);
        info->reply = sd_bus_message_unref(info->reply);
}

static void setting_list_done(SettingList *l) {
        l->rows = mfree(l->rows);
        l->n = l->allocated = 0;
        l->reply = sd_bus_message_unref(l->reply);
}

/* ---- Errors ------------------------------------------------------------------- */

/* The daemon is not there, or the bus is not: the answer is unknown rather than "no". */
static bool bus_error_is_unreachable(const sd_bus_error *error) {
        static const char *const names[] = {
                SD_BUS_ERROR_SERVICE_UNKNOWN,
                SD_BUS_ERROR_NAME_HAS_NO_OWNER,
                SD_BUS_ERROR_NO_REPLY,
                SD_BUS_ERROR_DISCONNECTED,
                SD_BUS_ERROR_TIMEOUT,
                SD_BUS_ERROR_NO_SERVER,
                SD_BUS_ERROR_UNKNOWN_OBJECT,
        };

        if (!sd_bus_error_is_set(error))
                return true; /* a local failure, not an answer from anyone */
        /* sd-bus names errors it raised itself from an errno "System.Error.EFOO". */
        if (strncmp(error->name, "System.Error.", 13) == 0)
                return true;
        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                if (streq(error->name, names[i]))
                        return true;
        return false;
}

static const char *bus_error_text(const sd_bus_error *error, int r) {
        if (sd_bus_error_is_set(error) && !isempty(error->message))
                return error->message;
        if (sd_bus_error_is_set(error))
                return error->name;
        return strerror(r < 0 ? -r : r);
}

/* Prints why a call failed, in the words most useful to whoever reads it. */
static void log_call_failed(const char *what, const sd_bus_error *error, int r) {
        if (sd_bus_error_has_names(error, SD_BUS_ERROR_SERVICE_UNKNOWN, SD_BUS_ERROR_NAME_HAS_NO_OWNER))
                fprintf(stderr, "lowlatctl: lowlatd is not running (%s is not on the system bus)\n", BUS_NAME);
        else if (sd_bus_error_is_set(error) && error->message && strchr(error->message, '\n'))
                /* InvalidConfig: one "FILE:LINE: reason" per line; keep them whole. */
                fprintf(stderr, "lowlatctl: %s failed (%s):\n%s\n", what, error->name, error->message);
        else if (sd_bus_error_is_set(error))
                fprintf(stderr, "lowlatctl: %s failed: %s (%s)\n", what, bus_error_text(error, r), error->name);
        else
                fprintf(stderr, "lowlatctl: %s failed: %s\n", what, strerror(-r));
}

static int bus_connect(sd_bus **ret) {
        _cleanup_(sd_bus_unrefp) sd_bus *bus = NULL;
        int r;

        /* Honours $DBUS_SYSTEM_BUS_ADDRESS. */
        r = sd_bus_open_system(&bus);
        if (r < 0) {
                fprintf(stderr, "lowlatctl: cannot connect to the system bus: %s\n", strerror(-r));
                return r;
        }
        *ret = TAKE_PTR(bus);
        return 0;
}

/* ---- Reading the properties ----------------------------------------------------- */

typedef struct PropertyField {
        const char *name;
        const char *signature;
        size_t offset;
} PropertyField;

static const PropertyField manager_fields[] = {
        { "Version", "s", offsetof(ManagerInfo, version) },
        { "Mode", "s", offsetof(ManagerInfo, mode) },
        { "State", "s", offsetof(ManagerInfo, state) },
        { "IsolatedCPUs", "s", offsetof(ManagerInfo, isolated_cpus) },
        { "HousekeepingCPUs", "s", offsetof(ManagerInfo, housekeeping_cpus) },
        { "ConfigFiles", "as", offsetof(ManagerInfo, config_files) },
        { "LastReloadUSec", "t", offsetof(ManagerInfo, last_reload_usec) },
        { "LastReloadError", "s", offsetof(ManagerInfo, last_reload_error) },
        { "DriftEvents", "t", offsetof(ManagerInfo, drift_events) },
        { "Corrections", "t", offsetof(ManagerInfo, corrections) },
        { "Failures", "t", offsetof(ManagerInfo, failures) },
        { "CpuDmaLatencyUSec", "i", offsetof(ManagerInfo, cpu_dma_latency_usec) },
        { "Settings", "u", offsetof(ManagerInfo, settings) },
        { "SettingsNotOk", "u", offsetof(ManagerInfo, settings_not_ok) },
};

static int read_property_value(sd_bus_message *m, const PropertyField *field, ManagerInfo *info) {
        void *p = (uint8_t *) info + field->offset;
        int r;

        r = sd_bus_message_enter_container(m, 'v', field->signature);
        if (r == -ENXIO) {
                fprintf(stderr, "lowlatctl: property %s does not have type '%s'\n", field->name, field->signature);
                return -EBADMSG;
        }
        if (r < 0)
                return r;
        if (streq(field->signature, "as")) {
                char ***l = p;
                *l = strv_free(*l); /* a repeated key must not leak the first */
                r = sd_bus_message_read_strv(m, l);
        } else
                r = sd_bus_message_read_basic(m, field->signature[0], p);
        if (r < 0)
                return r;
        return sd_bus_message_exit_container(m);
}

/* Fills *ret from GetAll. Every property of the spec must be there: a half-known daemon
 * would make every verdict below a guess. Returns -errno after printing why. */
static int manager_info_get(sd_bus *bus, ManagerInfo *ret) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(manager_info_done) ManagerInfo info = {};
        bool seen[ELEMENTSOF(manager_fields)] = {};
        int r;

        r = sd_bus_call_method(bus, BUS_NAME, BUS_PATH, "org.freedesktop.DBus.Properties", "GetAll", &error,
                               &info.reply, "s", BUS_INTERFACE);
        if (r < 0) {
                log_call_failed("Reading the properties of " BUS_NAME, &error, r);
                return r;
        }

        r = sd_bus_message_enter_container(info.reply, 'a', "{sv}");
        if (r < 0)
                goto bad_message;
        while ((r = sd_bus_message_enter_container(info.reply, 'e', "sv")) > 0) {
                const PropertyField *field = NULL;
                const char *name;

                r = sd_bus_message_read_basic(info.reply, 's', &name);
                if (r < 0)
                        goto bad_message;
                for (size_t i = 0; i < ELEMENTSOF(manager_fields); i++)
                        if (streq(name, manager_fields[i].name)) {
                                field = &manager_fields[i];
                                seen[i] = true;
                                break;
                        }
                if (field)
                        r = read_property_value(info.reply, field, &info);
                else
                        r = sd_bus_message_skip(info.reply, "v"); /* newer daemon, more properties */
                if (r == -EBADMSG)
                        return r;
                if (r < 0)
                        goto bad_message;
                r = sd_bus_message_exit_container(info.reply);
                if (r < 0)
                        goto bad_message;
        }
        if (r < 0)
                goto bad_message;
        r = sd_bus_message_exit_container(info.reply);
        if (r < 0)
                goto bad_message;

        for (size_t i = 0; i < ELEMENTSOF(manager_fields); i++)
                if (!seen[i]) {
                        fprintf(stderr, "lowlatctl: lowlatd did not report property %s\n", manager_fields[i].name);
                        return -EBADMSG;
                }
        *ret = info;
        info = (ManagerInfo) {};
        return 0;

bad_message:
        fprintf(stderr, "lowlatctl: cannot parse the properties of %s: %s\n", BUS_NAME, strerror(-r));
        return r;
}

static int setting_list_append(SettingList *l, const SettingRow *row) {
        if (l->n == l->allocated) {
                size_t n = l->allocated ? l->allocated * 2 : 64;
                SettingRow *rows = reallocarray(l->rows, n, sizeof(SettingRow));
                if (!rows)
                        return -ENOMEM;
                l->rows = rows;
                l->allocated = n;
        }
        l->rows[l->n++] = *row;
        return 0;
}

static int setting_list_get(sd_bus *bus, SettingList *ret) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(setting_list_done) SettingList l = {};
        int r;

        r = sd_bus_call_method(bus, BUS_NAME, BUS_PATH, BUS_INTERFACE, "ListSettings", &error, &l.reply, NULL);
        if (r < 0) {
                log_call_failed("ListSettings", &error, r);
                return r;
        }

        r = sd_bus_message_enter_container(l.reply, 'a', "(sssss)");
        if (r < 0)
                goto bad_message;
        for (;;) {
                SettingRow row;

                r = sd_bus_message_read(l.reply, "(sssss)", &row.kind, &row.object, &row.desired, &row.observed,
                                        &row.state);
                if (r < 0)
                        goto bad_message;
                if (r == 0)
                        break;
                r = setting_list_append(&l, &row);
                if (r < 0) {
                        fprintf(stderr, "lowlatctl: out of memory\n");
                        return r;
                }
        }
        r = sd_bus_message_exit_container(l.reply);
        if (r < 0)
                goto bad_message;

        *ret = l;
        l = (SettingList) {};
        return 0;

bad_message:
        fprintf(stderr, "lowlatctl: cannot parse the reply of ListSettings: %s\n", strerror(-r));
        return r;
}

/* ---- Verdict ------------------------------------------------------------------ */

/* Worst first when combining: critical, then unknown (lowlatd said something this
 * lowlatctl does not understand), then warning. */
static int verdict_combine(int a, int b) {
        static const int rank[] = { [EXIT_OK] = 0, [EXIT_WARNING] = 1, [EXIT_UNKNOWN] = 2, [EXIT_CRITICAL] = 3 };
        return rank[a] >= rank[b] ? a : b;
}

static int verdict_of_setting_state(const char *state) {
        if (streq(state, "ok") || streq(state, "corrected") || streq(state, "unsupported") ||
            streq(state, "unmovable"))
                return EXIT_OK;
        if (streq(state, "drifted") || streq(state, "pending"))
                return EXIT_WARNING;
        if (streq(state, "failed"))
                return EXIT_CRITICAL;
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

static int posture_verdict(const ManagerInfo *info, const SettingList *l) {
        int v = verdict_of_manager_state(info->state);

        for (size_t i = 0; i < l->n; i++)
                v = verdict_combine(v, verdict_of_setting_state(l->rows[i].state));
        return v;
}

static const char *verdict_to_string(int v) {
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

/* "ok" and "corrected" need no attention; everything else is shown by status. */
static bool setting_state_is_good(const char *state) {
        return streq(state, "ok") || streq(state, "corrected");
}

/* A small set of strings that keeps first-seen order (kinds, states). */
typedef struct StringSet {
        const char **items;
        size_t n, allocated;
} StringSet;

static void string_set_done(StringSet *s) {
        s->items = mfree(s->items);
        s->n = s->allocated = 0;
}

/* Index of s, adding it if new; -ENOMEM. */
static ssize_t string_set_put(StringSet *set, const char *s) {
        for (size_t i = 0; i < set->n; i++)
                if (streq(set->items[i], s))
                        return (ssize_t) i;
        if (set->n == set->allocated) {
                size_t n = set->allocated ? set->allocated * 2 : 16;
                const char **items = reallocarray(set->items, n, sizeof(char *));
                if (!items)
                        return -ENOMEM;
                set->items = items;
                set->allocated = n;
        }
        set->items[set->n] = s;
        return (ssize_t) set->n++;
}

/* ---- Output helpers ----------------------------------------------------------- */

/* D-Bus guarantees valid UTF-8 in strings, so only escapes are needed for valid JSON. */
static void json_print_string(FILE *f, const char *s) {
        fputc('"', f);
        for (const unsigned char *p = (const unsigned char *) s; *p; p++) {
                if (*p == '"' || *p == '\\') {
                        fputc('\\', f);
                        fputc(*p, f);
                } else if (*p < 0x20 || *p == 0x7f)
                        fprintf(f, "\\u%04x", *p);
                else
                        fputc(*p, f);
        }
        fputc('"', f);
}

/* Prints ("key":"value"), preceded by a comma unless it opens its object. */
static void json_print_member(FILE *f, const char *key, const char *value, bool first) {
        if (!first)
                fputc(',', f);
        json_print_string(f, key);
        fputc(':', f);
        json_print_string(f, value);
}

static void json_print_setting(FILE *f, const SettingRow *row) {
        fputc('{', f);
        json_print_member(f, "kind", row->kind, true);
        json_print_member(f, "object", row->object, false);
        json_print_member(f, "desired", row->desired, false);
        json_print_member(f, "observed", row->observed, false);
        json_print_member(f, "state", row->state, false);
        fputc('}', f);
}

/* Table cells: control characters (a hostile or corrupt file's contents) are shown as
 * \xNN so they cannot move the cursor or break the columns. Width counts UTF-8 code
 * points, not bytes. */
static size_t cell_width(const char *s) {
        size_t w = 0;

        if (isempty(s))
                return 1; /* shown as "-" */
        for (const unsigned char *p = (const unsigned char *) s; *p; p++)
                if (*p < 0x20 || *p == 0x7f)
                        w += 4;
                else if ((*p & 0xc0) != 0x80)
                        w++;
        return w;
}

static void print_escaped(FILE *f, const char *s) {
        for (const unsigned char *p = (const unsigned char *) s; *p; p++)
                if (*p < 0x20 || *p == 0x7f)
                        fprintf(f, "\\x%02x", *p);
                else
                        fputc(*p, f);
}

static void print_cell(FILE *f, const char *s, size_t width, bool last) {
        size_t w = cell_width(s);

        if (isempty(s))
                fputc('-', f);
        else
                print_escaped(f, s);
        if (last)
                fputc('\n', f);
        else
                for (size_t i = w; i < width + 2; i++)
                        fputc(' ', f);
}

static bool row_matches_filter(const SettingRow *row, const char *filter) {
        size_t n = strlen(row->state);

        if (!filter)
                return true;
        for (const char *p = filter; *p;) {
                size_t len = strcspn(p, ",");
                if (len == n && strncmp(p, row->state, n) == 0)
                        return true;
                p += len;
                if (*p == ',')
                        p++;
        }
        return false;
}

typedef bool (*RowFilter)(const SettingRow *row, const void *userdata);

static bool filter_by_state_list(const SettingRow *row, const void *userdata) {
        return row_matches_filter(row, userdata);
}

static bool filter_not_good(const SettingRow *row, _unused_ const void *userdata) {
        return !setting_state_is_good(row->state);
}

static void print_settings_table(FILE *f, const SettingList *l, RowFilter filter, const void *userdata,
                                 bool legend) {
        static const char *const headers[] = { "KIND", "OBJECT", "DESIRED", "OBSERVED", "STATE" };
        size_t width[ELEMENTSOF(headers)];
        size_t shown = 0;

        for (size_t c = 0; c < ELEMENTSOF(headers); c++)
                width[c] = legend ? strlen(headers[c]) : 0;
        for (size_t i = 0; i < l->n; i++) {
                const SettingRow *row = &l->rows[i];
                const char *cells[] = { row->kind, row->object, row->desired, row->observed, row->state };

                if (!filter(row, userdata))
                        continue;
                for (size_t c = 0; c < ELEMENTSOF(cells); c++)
                        width[c] = MAX(width[c], cell_width(cells[c]));
                shown++;
        }

        if (legend && shown > 0)
                for (size_t c = 0; c < ELEMENTSOF(headers); c++)
                        print_cell(f, headers[c], width[c], c + 1 == ELEMENTSOF(headers));
        for (size_t i = 0; i < l->n; i++) {
                const SettingRow *row = &l->rows[i];
                const char *cells[] = { row->kind, row->object, row->desired, row->observed, row->state };

                if (!filter(row, userdata))
                        continue;
                for (size_t c = 0; c < ELEMENTSOF(cells); c++)
                        print_cell(f, cells[c], width[c], c + 1 == ELEMENTSOF(cells));
        }
        if (legend)
                fprintf(f, "%s%zu setting%s listed.\n", shown > 0 ? "\n" : "", shown, shown == 1 ? "" : "s");
}

/* Local time as "Tue 2024-05-07 10:00:00 CEST"; NULL on failure. */
static char *format_timestamp(uint64_t usec) {
        time_t t = (time_t) (usec / USEC_PER_SEC);
        struct tm tm;

        if (!localtime_r(&t, &tm))
                return NULL;
        for (size_t size = 64; size <= 4096; size *= 2) {
                _cleanup_free_ char *buf = malloc(size);
                if (!buf)
                        return NULL;
                if (strftime(buf, size, "%a %Y-%m-%d %H:%M:%S %Z", &tm) > 0)
                        return TAKE_PTR(buf);
        }
        return NULL;
}

/* Exit status for a verb that printed something: the verdict, unless stdout failed. */
static int finish_output(int verdict) {
        if (fflush(stdout) != 0 || ferror(stdout)) {
                fprintf(stderr, "lowlatctl: cannot write to standard output: %s\n", strerror(errno));
                return EXIT_OUTPUT;
        }
        return verdict;
}

/* ---- Verbs -------------------------------------------------------------------- */
/* Each returns the exit status, or a negative errno after printing why (exit 3). */

static void print_field(const char *label, const char *value) {
        printf("%18s: ", label);
        print_escaped(stdout, value);
        putchar('\n');
}

/* Continuation lines of a multi-line value, aligned under the first. */
static void print_field_lines(const char *label, const char *text) {
        const char *p = text;
        bool first = true;

        do {
                size_t len = strcspn(p, "\n");
                _cleanup_free_ char *line = strndup(p, len);
                printf("%18s%s ", first ? label : "", first ? ":" : " ");
                print_escaped(stdout, line ?: "?");
                putchar('\n');
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
                if (!setting_state_is_good(l->rows[i].state) && string_set_put(&states, l->rows[i].state) < 0)
                        return NULL;
        counts = calloc(MAX(states.n, 1U), sizeof(size_t));
        if (!counts)
                return NULL;
        for (size_t i = 0; i < l->n; i++)
                if (!setting_state_is_good(l->rows[i].state)) {
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

static void status_print_text(const ManagerInfo *info, const SettingList *l, int verdict) {
        _cleanup_free_ char *settings = NULL, *reload = NULL, *latency = NULL, *summary = NULL, *verdict_upper = NULL;
        size_t not_good = 0;

        /* The first line is what a monitoring system shows next to the exit status. */
        summary = summarize_not_good(l, &not_good);
        verdict_upper = strdup(verdict_to_string(verdict));
        for (char *c = verdict_upper; c && *c; c++)
                *c = (char) toupper((unsigned char) *c);
        printf("LOWLATD %s: ", verdict_upper ?: "?");
        print_escaped(stdout, info->state);
        if (not_good == 0)
                printf(", %zu settings, all ok or corrected\n", l->n);
        else {
                printf(", %zu of %zu settings need attention (", not_good, l->n);
                print_escaped(stdout, summary ?: "?");
                fputs(")\n", stdout);
        }

        print_field("Version", info->version);
        print_field("Mode", info->mode);
        print_field("State", info->state);
        print_field("Isolated CPUs", isempty(info->isolated_cpus) ? "none" : info->isolated_cpus);
        print_field("Housekeeping CPUs", info->housekeeping_cpus);
        if (!info->config_files || !info->config_files[0])
                print_field("Config files", "none");
        for (size_t i = 0; info->config_files && info->config_files[i]; i++) {
                printf("%18s%s ", i == 0 ? "Config files" : "", i == 0 ? ":" : " ");
                print_escaped(stdout, info->config_files[i]);
                putchar('\n');
        }

        if (info->last_reload_usec == 0)
                print_field("Last reload", "never");
        else {
                _cleanup_free_ char *when = format_timestamp(info->last_reload_usec);
                reload = strdup_printf("%s%s", when ?: "?", isempty(info->last_reload_error) ? "" : " (failed)");
                print_field("Last reload", reload ?: "?");
        }
        if (!isempty(info->last_reload_error))
                print_field_lines("Last reload error", info->last_reload_error);

        settings = strdup_printf("%" PRIu32 " (%" PRIu32 " not ok)", info->settings, info->settings_not_ok);
        print_field("Settings", settings ?: "?");
        printf("%18s: %" PRIu64 "\n", "Drift events", info->drift_events);
        printf("%18s: %" PRIu64 "\n", "Corrections", info->corrections);
        printf("%18s: %" PRIu64 "\n", "Failures", info->failures);
        if (info->cpu_dma_latency_usec < 0)
                print_field("cpu_dma_latency", "off");
        else {
                latency = strdup_printf("%" PRIi32 " us (held)", info->cpu_dma_latency_usec);
                print_field("cpu_dma_latency", latency ?: "?");
        }

        if (not_good > 0) {
                putchar('\n');
                print_settings_table(stdout, l, filter_not_good, NULL, true);
        }
}

static void status_print_json(const ManagerInfo *info, const SettingList *l, int verdict) {
        bool first = true;

        fputc('{', stdout);
        json_print_member(stdout, "version", info->version, true);
        json_print_member(stdout, "mode", info->mode, false);
        json_print_member(stdout, "state", info->state, false);
        json_print_member(stdout, "verdict", verdict_to_string(verdict), false);
        json_print_member(stdout, "isolated_cpus", info->isolated_cpus, false);
        json_print_member(stdout, "housekeeping_cpus", info->housekeeping_cpus, false);
        fputs(",\"config_files\":[", stdout);
        for (size_t i = 0; info->config_files && info->config_files[i]; i++) {
                if (i > 0)
                        fputc(',', stdout);
                json_print_string(stdout, info->config_files[i]);
        }
        printf("],\"last_reload_usec\":%" PRIu64, info->last_reload_usec);
        json_print_member(stdout, "last_reload_error", info->last_reload_error, false);
        printf(",\"drift_events\":%" PRIu64 ",\"corrections\":%" PRIu64 ",\"failures\":%" PRIu64
               ",\"cpu_dma_latency_usec\":%" PRIi32 ",\"n_settings\":%" PRIu32 ",\"n_settings_not_ok\":%" PRIu32
               ",\"settings_not_ok\":[",
               info->drift_events, info->corrections, info->failures, info->cpu_dma_latency_usec, info->settings,
               info->settings_not_ok);
        for (size_t i = 0; i < l->n; i++) {
                if (setting_state_is_good(l->rows[i].state))
                        continue;
                if (!first)
                        fputc(',', stdout);
                json_print_setting(stdout, &l->rows[i]);
                first = false;
        }
        fputs("]}\n", stdout);
}

static int verb_status(sd_bus *bus, const Arguments *args) {
        _cleanup_(manager_info_done) ManagerInfo info = {};
        _cleanup_(setting_list_done) SettingList l = {};
        int r, verdict;

        r = manager_info_get(bus, &info);
        if (r < 0)
                return r;
        r = setting_list_get(bus, &l);
        if (r < 0)
                return r;

        verdict = posture_verdict(&info, &l);
        if (args->json)
                status_print_json(&info, &l, verdict);
        else
                status_print_text(&info, &l, verdict);
        return finish_output(verdict);
}

static int verb_list(sd_bus *bus, const Arguments *args) {
        _cleanup_(manager_info_done) ManagerInfo info = {};
        _cleanup_(setting_list_done) SettingList l = {};
        int r;

        /* The State property takes part in the verdict (degraded). */
        r = manager_info_get(bus, &info);
        if (r < 0)
                return r;
        r = setting_list_get(bus, &l);
        if (r < 0)
                return r;

        if (args->json) {
                bool first = true;

                fputc('[', stdout);
                for (size_t i = 0; i < l.n; i++) {
                        if (!row_matches_filter(&l.rows[i], args->state_filter))
                                continue;
                        fputs(first ? "\n" : ",\n", stdout);
                        json_print_setting(stdout, &l.rows[i]);
                        first = false;
                }
                fputs(first ? "]\n" : "\n]\n", stdout);
        } else
                print_settings_table(stdout, &l, filter_by_state_list, args->state_filter, args->legend);
        return finish_output(posture_verdict(&info, &l));
}

/* ---- metrics ------------------------------------------------------------------ */

/* Label values: backslash, double quote and line feed are escaped (text format 0.0.4). */
static void prom_print_label_value(FILE *f, const char *s) {
        fputc('"', f);
        for (const char *p = s; *p; p++)
                if (*p == '\\')
                        fputs("\\\\", f);
                else if (*p == '"')
                        fputs("\\\"", f);
                else if (*p == '\n')
                        fputs("\\n", f);
                else
                        fputc(*p, f);
        fputc('"', f);
}

static void prom_print_header(FILE *f, const char *name, const char *type, const char *help) {
        fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* lowlatd_settings: every known kind and state, zeros included, so that a series does not
 * vanish (and go stale) when its last setting changes state; plus any kind or state a
 * newer lowlatd reports. */
static int metrics_print_settings(FILE *f, const SettingList *l) {
        static const char *const known_kinds[] = { "irq_affinity", "irq_default_affinity", "sysctl",
                                                   "cpu_dma_latency", "governor" };
        static const char *const known_states[] = { "ok",     "drifted",     "corrected", "failed",
                                                    "unsupported", "unmovable", "pending" };
        _cleanup_(string_set_done) StringSet kinds = {}, states = {};
        _cleanup_free_ size_t *counts = NULL;
        ssize_t k, s;

        for (size_t i = 0; i < ELEMENTSOF(known_kinds); i++)
                if (string_set_put(&kinds, known_kinds[i]) < 0)
                        return -ENOMEM;
        for (size_t i = 0; i < ELEMENTSOF(known_states); i++)
                if (string_set_put(&states, known_states[i]) < 0)
                        return -ENOMEM;
        for (size_t i = 0; i < l->n; i++)
                if (string_set_put(&kinds, l->rows[i].kind) < 0 || string_set_put(&states, l->rows[i].state) < 0)
                        return -ENOMEM;

        counts = calloc(kinds.n * states.n, sizeof(size_t));
        if (!counts)
                return -ENOMEM;
        for (size_t i = 0; i < l->n; i++) {
                k = string_set_put(&kinds, l->rows[i].kind);
                s = string_set_put(&states, l->rows[i].state);
                counts[(size_t) k * states.n + (size_t) s]++;
        }

        prom_print_header(f, "lowlatd_settings", "gauge", "Settings lowlatd keeps, by kind and state.");
        for (size_t i = 0; i < kinds.n; i++)
                for (size_t j = 0; j < states.n; j++) {
                        fputs("lowlatd_settings{kind=", f);
                        prom_print_label_value(f, kinds.items[i]);
                        fputs(",state=", f);
                        prom_print_label_value(f, states.items[j]);
                        fprintf(f, "} %zu\n", counts[i * states.n + j]);
                }
        return 0;
}

static void metrics_print_up(FILE *f, int up) {
        prom_print_header(f, "lowlatd_up", "gauge", "Whether lowlatd answered on the system bus.");
        fprintf(f, "lowlatd_up %d\n", up);
}

static int verb_metrics(sd_bus *bus) {
        _cleanup_(manager_info_done) ManagerInfo info = {};
        _cleanup_(setting_list_done) SettingList l = {};
        int r;

        r = bus ? manager_info_get(bus, &info) : -ENOTCONN;
        if (r >= 0)
                r = setting_list_get(bus, &l);
        if (r < 0) {
                /* Still a valid scrape: the textfile collector should say "down", not go stale. */
                metrics_print_up(stdout, 0);
                return finish_output(EXIT_UNKNOWN);
        }

        metrics_print_up(stdout, 1);
        prom_print_header(stdout, "lowlatd_info", "gauge", "Version, mode and state of lowlatd (always 1).");
        fputs("lowlatd_info{version=", stdout);
        prom_print_label_value(stdout, info.version);
        fputs(",mode=", stdout);
        prom_print_label_value(stdout, info.mode);
        fputs(",state=", stdout);
        prom_print_label_value(stdout, info.state);
        fputs("} 1\n", stdout);

        r = metrics_print_settings(stdout, &l);
        if (r < 0) {
                fprintf(stderr, "lowlatctl: out of memory\n");
                return r;
        }

        prom_print_header(stdout, "lowlatd_cpu_dma_latency_microseconds", "gauge",
                          "The /dev/cpu_dma_latency request lowlatd holds, -1 when off.");
        printf("lowlatd_cpu_dma_latency_microseconds %" PRIi32 "\n", info.cpu_dma_latency_usec);
        prom_print_header(stdout, "lowlatd_last_reload_timestamp_seconds", "gauge",
                          "Time of the last reload attempt, 0 when there was none.");
        if (info.last_reload_usec == 0)
                fputs("lowlatd_last_reload_timestamp_seconds 0\n", stdout);
        else
                printf("lowlatd_last_reload_timestamp_seconds %" PRIu64 ".%06" PRIu64 "\n",
                       info.last_reload_usec / USEC_PER_SEC, info.last_reload_usec % USEC_PER_SEC);
        prom_print_header(stdout, "lowlatd_last_reload_success", "gauge",
                          "1 when the last reload succeeded or there was none, 0 when it failed.");
        printf("lowlatd_last_reload_success %d\n", isempty(info.last_reload_error) ? 1 : 0);
        prom_print_header(stdout, "lowlatd_drift_events_total", "counter",
                          "Settings found drifted since lowlatd started.");
        printf("lowlatd_drift_events_total %" PRIu64 "\n", info.drift_events);
        prom_print_header(stdout, "lowlatd_corrections_total", "counter",
                          "Successful corrections since lowlatd started.");
        printf("lowlatd_corrections_total %" PRIu64 "\n", info.corrections);
        prom_print_header(stdout, "lowlatd_failures_total", "counter",
                          "Failed corrections and read failures since lowlatd started.");
        printf("lowlatd_failures_total %" PRIu64 "\n", info.failures);

        /* The posture is in the numbers; the exit status only says whether they are real,
         * so "metrics > file && mv" publishes drift too. */
        return finish_output(EXIT_OK);
}

/* ---- check --------------------------------------------------------------------- */

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
                fprintf(f, "%*s%.*s\n", (int) indent, "", (int) cut, p);
                p += cut;
                while (*p == ' ' || *p == '\n')
                        p++;
        }
}

/* The audit's findings, in the order lowlatd gives them, worst first when printed. */
static int severity_rank(const char *severity) {
        static const char *const order[] = { "critical", "warning", "info", "ok" };
        for (size_t i = 0; i < ELEMENTSOF(order); i++)
                if (streq(severity, order[i]))
                        return (int) i;
        return (int) ELEMENTSOF(order);
}

static int verb_check(sd_bus *bus, const Arguments *args) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int verdict = EXIT_OK, r, worst = 4;
        size_t n = 0, counts[5] = {};
        bool first = true;

        r = sd_bus_call_method(bus, BUS_NAME, BUS_PATH, BUS_INTERFACE, "Check", &error, &reply, NULL);
        if (r < 0) {
                log_call_failed("Check", &error, r);
                return bus_error_is_unreachable(&error) ? r : EXIT_UNKNOWN;
        }
        r = sd_bus_message_enter_container(reply, 'a', "(ssss)");
        if (r < 0)
                return r;
        if (args->json)
                fputc('[', stdout);
        for (int pass = 0; pass < 4 && r >= 0; pass++) {
                /* One pass per severity, worst first: the reply is read again each time. */
                if (pass > 0) {
                        r = sd_bus_message_rewind(reply, false);
                        if (r < 0)
                                break;
                }
                const char *severity, *id, *subject, *message;
                while ((r = sd_bus_message_read(reply, "(ssss)", &severity, &id, &subject, &message)) > 0) {
                        if (severity_rank(severity) != pass)
                                continue;
                        n++;
                        counts[pass]++;
                        worst = MIN(worst, pass);
                        if (args->json) {
                                fputs(first ? "\n{" : ",\n{", stdout);
                                json_print_member(stdout, "severity", severity, true);
                                json_print_member(stdout, "id", id, false);
                                json_print_member(stdout, "subject", subject, false);
                                json_print_member(stdout, "message", message, false);
                                fputc('}', stdout);
                        } else {
                                printf("%s%-8s %s  %s\n", first ? "" : "\n", severity, id, subject);
                                print_wrapped(stdout, message, 9, 88);
                        }
                        first = false;
                }
        }
        if (r < 0)
                return r;
        if (args->json)
                fputs(first ? "]\n" : "\n]\n", stdout);
        else
                printf("%s%zu finding%s: %zu critical, %zu warning, %zu info\n", n ? "\n" : "", n, n == 1 ? "" : "s",
                       counts[0], counts[1], counts[2]);
        verdict = worst == 0 ? EXIT_CRITICAL : worst == 1 ? EXIT_WARNING : EXIT_OK;
        return finish_output(verdict);
}

/* ---- reload, reapply, restore ------------------------------------------------------------ */

static int verb_call(sd_bus *bus, const char *method) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        r = sd_bus_call_method(bus, BUS_NAME, BUS_PATH, BUS_INTERFACE, method, &error, &reply, NULL);
        if (r < 0) {
                log_call_failed(method, &error, r);
                return bus_error_is_unreachable(&error) ? r : EXIT_REFUSED;
        }
        return EXIT_OK;
}

/* ---- Command line ------------------------------------------------------------- */

static void help(void) {
        printf("Usage: lowlatctl [OPTIONS] [COMMAND]\n\n"
               "Query and control lowlatd, the low-latency posture daemon.\n\n"
               "Commands:\n"
               "  status            Summary of the posture and the settings that are not ok (default)\n"
               "  list              Every setting: kind, object, desired, observed, state\n"
               "  metrics           Prometheus text format, for node_exporter's textfile collector\n"
               "  reload            Reload the configuration (root only)\n"
               "  check             Audit the host: boot isolation, kernel, topology, power, tasks, apps\n"
               "  reapply           Check and correct every setting now (root only)\n"
               "  restore           Put back every original value and switch to observe mode (root only)\n\n"
               "Options:\n"
               "     --json         JSON output (status, list, check)\n"
               "     --state=STATE  list: only settings in STATE (comma-separated)\n"
               "     --no-legend    list: no header and footer\n"
               "  -h --help         Show this help\n"
               "     --version      Show the version\n\n"
               "Exit status: 0 ok, 1 warning (drift) or refused, 2 critical (failed, degraded),\n"
               "3 unknown (lowlatd unreachable), 64 usage error. See lowlatctl(1).\n");
}

/* Returns 1 to go on, 0 to exit successfully (--help, --version), -EINVAL on bad usage. */
static int parse_arguments(int argc, char *argv[], Arguments *args) {
        enum { ARG_VERSION = 0x100, ARG_JSON, ARG_STATE, ARG_NO_LEGEND };
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, ARG_VERSION },
                { "json", no_argument, NULL, ARG_JSON },
                { "state", required_argument, NULL, ARG_STATE },
                { "no-legend", no_argument, NULL, ARG_NO_LEGEND },
                {},
        };
        static const struct {
                const char *name;
                Verb verb;
        } verbs[] = {
                { "status", VERB_STATUS },   { "list", VERB_LIST },       { "metrics", VERB_METRICS },
                { "reload", VERB_RELOAD },   { "reapply", VERB_REAPPLY }, { "restore", VERB_RESTORE },
                { "check", VERB_CHECK },
        };
        bool have_state = false;
        int c;

        *args = (Arguments) { .verb = VERB_STATUS, .legend = true };
        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        help();
                        return 0;
                case ARG_VERSION:
                        printf("lowlatctl %s\n", LOWLATD_VERSION);
                        return 0;
                case ARG_JSON:
                        args->json = true;
                        break;
                case ARG_STATE:
                        if (isempty(optarg)) {
                                fprintf(stderr, "lowlatctl: --state needs a state\n");
                                return -EINVAL;
                        }
                        args->state_filter = optarg;
                        have_state = true;
                        break;
                case ARG_NO_LEGEND:
                        args->legend = false;
                        break;
                default:
                        return -EINVAL;
                }

        if (optind < argc) {
                bool found = false;

                for (size_t i = 0; i < ELEMENTSOF(verbs); i++)
                        if (streq(argv[optind], verbs[i].name)) {
                                args->verb = verbs[i].verb;
                                found = true;
                        }
                if (!found) {
                        fprintf(stderr, "lowlatctl: unknown command '%s'; see --help\n", argv[optind]);
                        return -EINVAL;
                }
                optind++;
        }
        if (optind < argc) {
                fprintf(stderr, "lowlatctl: unexpected argument '%s'\n", argv[optind]);
                return -EINVAL;
        }
        if (args->json && args->verb != VERB_STATUS && args->verb != VERB_LIST && args->verb != VERB_CHECK) {
                fprintf(stderr, "lowlatctl: --json applies to status, list and check only\n");
                return -EINVAL;
        }
        if ((have_state || !args->legend) && args->verb != VERB_LIST) {
                fprintf(stderr, "lowlatctl: --state and --no-legend apply to list only\n");
                return -EINVAL;
        }
        return 1;
}

int main(int argc, char *argv[]) {
        _cleanup_(sd_bus_unrefp) sd_bus *bus = NULL;
        Arguments args;
        int r;

        r = parse_arguments(argc, argv, &args);
        if (r <= 0)
                return r < 0 ? EXIT_USAGE : EXIT_SUCCESS;

        r = bus_connect(&bus);
        if (r < 0 && args.verb != VERB_METRICS)
                return EXIT_UNKNOWN;

        switch (args.verb) {
        case VERB_STATUS:
                r = verb_status(bus, &args);
                break;
        case VERB_LIST:
                r = verb_list(bus, &args);
                break;
        case VERB_METRICS:
                r = verb_metrics(bus);
                break;
        case VERB_RELOAD:
                r = verb_call(bus, "Reload");
                break;
        case VERB_REAPPLY:
                r = verb_call(bus, "Reapply");
                break;
        case VERB_RESTORE:
                r = verb_call(bus, "Restore");
                break;
        case VERB_CHECK:
                r = verb_check(bus, &args);
                break;
        }
        return r < 0 ? EXIT_UNKNOWN : r;
}
