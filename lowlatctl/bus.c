/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lowlatctl's side of org.lowlatd1: connecting, reading the properties, ListSettings and
 * Check into plain structs, calling the methods, and saying why a call failed. */
#include <string.h>
#include <systemd/sd-bus.h>

#include "bus-names.h"
#include "client.h"
#include "basic/array.h"
#include "basic/macro.h"
#include "basic/util.h"

static char **strv_free(char **l) {
        if (l)
                for (char **i = l; *i; i++)
                        free(*i);
        free(l);
        return NULL;
}

void manager_info_done(ManagerInfo *info) {
        info->config_files = strv_free(info->config_files);
        info->reply = sd_bus_message_unref(info->reply);
}

void setting_list_done(SettingList *l) {
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
void ctl_log_call_failed(const char *what, const sd_bus_error *error, int r) {
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

/* A caller only: no name, no event loop, and sd-bus's default 25 s call timeout, since
 * Check() answers only once its audit is done. lowlatd's own connection (bus_publish() in
 * daemon/bus.c) serves instead, and waits 5 s at most so a hung bus cannot stall it. */
int ctl_bus_connect(sd_bus **ret) {
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
        { "AppliedSettings", "t", offsetof(ManagerInfo, applied_settings) },
        { "Fights", "t", offsetof(ManagerInfo, fights) },
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
 * would make every verdict a guess. Returns -errno after printing why. */
int ctl_read_manager_info(sd_bus *bus, ManagerInfo *ret) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(manager_info_done) ManagerInfo info = {};
        bool seen[ELEMENTSOF(manager_fields)] = {};
        int r;

        r = sd_bus_call_method(bus, BUS_NAME, BUS_PATH, "org.freedesktop.DBus.Properties", "GetAll", &error,
                               &info.reply, "s", BUS_INTERFACE);
        if (r < 0) {
                ctl_log_call_failed("Reading the properties of " BUS_NAME, &error, r);
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

/* Reads one element of an array reply into list: 1 when it read one, 0 at the end of the
 * array, or -errno. */
typedef int (*ElementReader)(sd_bus_message *reply, void *list);

/* Calls method, which takes no arguments and returns an array of contents (NULL: of
 * whatever read_element tells apart), and hands its elements one by one to read_element.
 * The strings read point into *reply. Prints why it failed and returns -errno; error is
 * set when lowlatd answered with one. */
static int call_for_array(sd_bus *bus, const char *method, const char *contents, sd_bus_error *error,
                          sd_bus_message **reply, ElementReader read_element, void *list) {
        int r;

        r = sd_bus_call_method(bus, BUS_NAME, BUS_PATH, BUS_INTERFACE, method, error, reply, NULL);
        if (r < 0) {
                ctl_log_call_failed(method, error, r);
                return r;
        }

        if (!contents) {
                char type;
                r = sd_bus_message_peek_type(*reply, &type, &contents);
                if (r >= 0 && type != 'a')
                        r = -EBADMSG;
        }
        if (r >= 0)
                r = sd_bus_message_enter_container(*reply, 'a', contents);
        while (r >= 0 && (r = read_element(*reply, list)) > 0)
                ;
        if (r >= 0)
                r = sd_bus_message_exit_container(*reply);
        if (r == -ENOMEM)
                fprintf(stderr, "lowlatctl: out of memory\n");
        else if (r < 0)
                fprintf(stderr, "lowlatctl: cannot parse the reply of %s: %s\n", method, strerror(-r));
        return MIN(r, 0);
}

static int setting_row_read(sd_bus_message *reply, void *list) {
        SettingList *l = list;
        SettingRow row;
        int r;

        r = sd_bus_message_read(reply, "(ssssss)", &row.kind, &row.object, &row.desired, &row.observed, &row.state,
                                &row.label);
        if (r <= 0)
                return r;
        if (array_grow(&l->rows, &l->allocated, l->n + 1) < 0)
                return -ENOMEM;
        l->rows[l->n++] = row;
        return 1;
}

int ctl_read_settings(sd_bus *bus, SettingList *ret) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(setting_list_done) SettingList l = {};
        int r;

        r = call_for_array(bus, "ListSettings", "(ssssss)", &error, &l.reply, setting_row_read, &l);
        if (r < 0)
                return r;
        *ret = l;
        l = (SettingList) {};
        return 0;
}

int ctl_read_posture(sd_bus *bus, ManagerInfo *ret_info, SettingList *ret_list) {
        _cleanup_(manager_info_done) ManagerInfo info = {};
        int r;

        r = ctl_read_manager_info(bus, &info);
        if (r < 0)
                return r;
        r = ctl_read_settings(bus, ret_list);
        if (r < 0)
                return r;
        *ret_info = info;
        info = (ManagerInfo) {};
        return 0;
}

/* A finding's detail lines, as pointers into reply; NULL and 0 when there are none. */
static int check_details_read(sd_bus_message *reply, CheckFinding *finding) {
        _cleanup_free_ const char **lines = NULL;
        size_t n = 0, allocated = 0;
        const char *line;
        int r;

        r = sd_bus_message_enter_container(reply, 'a', "s");
        while (r >= 0 && (r = sd_bus_message_read_basic(reply, 's', &line)) > 0) {
                if (array_grow(&lines, &allocated, n + 1) < 0)
                        return -ENOMEM;
                lines[n++] = line;
        }
        if (r >= 0)
                r = sd_bus_message_exit_container(reply);
        if (r < 0)
                return r;
        finding->details = n > 0 ? TAKE_PTR(lines) : NULL;
        finding->n_details = n;
        return 0;
}

/* (ssssas), or the (ssss) of a lowlatd from before the detail lines (one still running
 * through a package upgrade). */
static int check_finding_read(sd_bus_message *reply, void *list) {
        CheckReport *report = list;
        CheckFinding finding = {};
        const char *contents;
        char type;
        int r;

        r = sd_bus_message_peek_type(reply, &type, &contents);
        if (r <= 0)
                return r;
        if (type != 'r' || (!streq(contents, "ssss") && !streq(contents, "ssssas")))
                return -EBADMSG;
        r = sd_bus_message_enter_container(reply, 'r', contents);
        if (r >= 0)
                r = sd_bus_message_read(reply, "ssss", &finding.severity, &finding.id, &finding.subject,
                                        &finding.message);
        if (r >= 0 && streq(contents, "ssssas"))
                r = check_details_read(reply, &finding);
        if (r >= 0)
                r = sd_bus_message_exit_container(reply);
        if (r < 0) {
                free(finding.details);
                return r;
        }
        if (array_grow(&report->findings, &report->allocated, report->n + 1) < 0) {
                free(finding.details);
                return -ENOMEM;
        }
        report->findings[report->n++] = finding;
        return 1;
}

void check_report_done(CheckReport *report) {
        for (size_t i = 0; i < report->n; i++)
                free(report->findings[i].details);
        report->findings = mfree(report->findings);
        report->n = report->allocated = 0;
        report->reply = sd_bus_message_unref(report->reply);
}

int ctl_read_check_report(sd_bus *bus, CheckReport *ret) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(check_report_done) CheckReport report = {};
        int r;

        r = call_for_array(bus, "Check", NULL, &error, &report.reply, check_finding_read, &report);
        if (r < 0)
                /* A parse failure sets no error, so it counts as "could not be asked". */
                return bus_error_is_unreachable(&error) ? r : 1;
        *ret = report;
        report = (CheckReport) {};
        return 0;
}

int ctl_call_action(sd_bus *bus, const char *method) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        r = sd_bus_call_method(bus, BUS_NAME, BUS_PATH, BUS_INTERFACE, method, &error, &reply, NULL);
        if (r < 0) {
                ctl_log_call_failed(method, &error, r);
                return bus_error_is_unreachable(&error) ? r : 1;
        }
        return 0;
}
