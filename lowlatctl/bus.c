/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lowlatctl's side of org.lowlatd1: connecting, reading the properties, ListSettings and
 * Check into plain structs, calling the methods, and saying why a call failed. */
#include <stdarg.h>
#include <string.h>
#include <systemd/sd-bus.h>
#include <unistd.h>

#include "bus-address.h"
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
        info->config_warnings = strv_free(info->config_warnings);
        info->profiles = strv_free(info->profiles);
        info->condition_reasons = strv_free(info->condition_reasons);
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

/* Says why into *why when the caller takes it (status prints it as its verdict's reason),
 * else on stderr. Returns r. */
static int fail(char **why, int r, const char *format, ...) _printf_(3, 4);
static int fail(char **why, int r, const char *format, ...) {
        char *text = NULL;
        va_list ap;

        va_start(ap, format);
        if (vasprintf(&text, format, ap) < 0)
                text = NULL;
        va_end(ap);
        if (why) {
                free(*why);
                *why = text;
        } else {
                /* Errors quote lowlatd's, which quote the host and the config files. */
                _cleanup_free_ char *shown = text ? text_escape_lines(text) : NULL;

                fprintf(stderr, "lowlatctl: %s\n", shown ?: strerror(-r));
                free(text);
        }
        return r;
}

/* The system bus as a person would look for it: the socket's path, else the address. */
static char *system_bus_location(void) {
        const char *address = bus_system_address();
        return bus_address_socket_path(address) ?: strdup(address);
}

static char *not_running_text(void) {
        _cleanup_free_ char *where = system_bus_location();
        return strdup_printf("lowlatd is not running (%s is not on the system bus at %s); start it: systemctl start "
                             "lowlatd",
                             BUS_NAME, where ?: "?");
}

/* The methods only root may call (conf/org.lowlatd1.conf; lowlatd's vtable leaves them
 * privileged), by the verb that calls them. */
static const struct {
        const char *method;
        const char *verb;
} privileged_methods[] = {
        { "Reload", "reload" },
        { "Reapply", "reapply" },
        { "Restore", "restore" },
        { "RecordMeasurement", "measure" },
        { "RecordMeasurementHistogram", "measure" },
        { "Diff", "diff" },
        { "ReloadIfUnchanged", "reload" },
};

/* AccessDenied: from the bus's policy or from lowlatd's own check. NULL when there is
 * nothing better to say than the bus's words. */
static char *access_denied_text(sd_bus *bus, const char *member) {
        uid_t uid = geteuid();
        BusFeature feature;

        for (size_t i = 0; i < ELEMENTSOF(privileged_methods); i++)
                if (uid != 0 && streq(member, privileged_methods[i].method))
                        return strdup_printf("%s needs root: lowlatd lets only root call %s (this is uid %u)",
                                             privileged_methods[i].verb, member, (unsigned) uid);
        /* A member anyone may call, refused by the bus: lowlatd and its policy from before
         * it, or a policy file that is not the running lowlatd's. */
        feature = bus_feature_from_member(member);
        if (feature < 0 || !bus)
                return NULL;
        switch (ctl_daemon_offers(bus, feature)) {
        case 0:
                return ctl_lacking_text(bus, member);
        case 1:
                return strdup_printf("the system bus refuses %s to uid %u although lowlatd has it: the D-Bus policy "
                                     "for %s (org.lowlatd1.conf) is not the running lowlatd's; install lowlatd's own",
                                     member, (unsigned) uid, BUS_NAME);
        default:
                return NULL;
        }
}

char *ctl_call_failure(sd_bus *bus, const char *what, const char *member, const sd_bus_error *error, int r) {
        if (sd_bus_error_has_names(error, SD_BUS_ERROR_SERVICE_UNKNOWN, SD_BUS_ERROR_NAME_HAS_NO_OWNER))
                return not_running_text();
        if (member && sd_bus_error_has_names(error, SD_BUS_ERROR_UNKNOWN_METHOD, SD_BUS_ERROR_UNKNOWN_PROPERTY))
                return ctl_lacking_text(bus, member);
        if (member && sd_bus_error_has_name(error, SD_BUS_ERROR_ACCESS_DENIED)) {
                char *text = access_denied_text(bus, member);
                if (text)
                        return text;
        }
        if (sd_bus_error_is_set(error) && error->message && strchr(error->message, '\n'))
                /* InvalidConfig: one "FILE:LINE: reason" per line; keep them whole. */
                return strdup_printf("%s failed (%s):\n%s", what, error->name, error->message);
        if (sd_bus_error_is_set(error))
                return strdup_printf("%s failed: %s (%s)", what, bus_error_text(error, r), error->name);
        return strdup_printf("%s failed: %s", what, strerror(-r));
}

void ctl_log_call_failed(sd_bus *bus, const char *method, const sd_bus_error *error, int r) {
        _cleanup_free_ char *text = ctl_call_failure(bus, method, method, error, r);
        fail(NULL, r, "%s", text ?: method);
}

void ctl_log_read_failed(sd_bus *bus, const char *property, const sd_bus_error *error, int r) {
        _cleanup_free_ char *what = strdup_printf("Reading %s", property);
        _cleanup_free_ char *text = ctl_call_failure(bus, what ?: property, property, error, r);
        fail(NULL, r, "%s", text ?: property);
}

char *ctl_connect_failure(int r) {
        _cleanup_free_ char *where = system_bus_location();
        const char *hint = "is D-Bus running? systemctl start lowlatd starts it too";

        if (r == -ENOENT)
                return strdup_printf("cannot connect to the system bus: there is no socket %s (D-Bus is not running; "
                                     "systemctl start lowlatd starts it too)",
                                     where ?: "?");
        if (r == -ECONNREFUSED)
                return strdup_printf("cannot connect to the system bus at %s: nobody listens there (%s)", where ?: "?",
                                     hint);
        if (r == -EACCES || r == -EPERM)
                return strdup_printf("cannot connect to the system bus at %s: %s", where ?: "?", strerror(-r));
        return strdup_printf("cannot connect to the system bus at %s: %s (%s)", where ?: "?", strerror(-r), hint);
}

/* A caller only: no name, no event loop, and sd-bus's default 25 s call timeout, since
 * Check() answers only once its audit is done. lowlatd's own connection (bus_publish() in
 * daemon/bus.c) serves instead, and waits 5 s at most so a hung bus cannot stall it. */
int ctl_call_method(sd_bus *bus, const char *method, sd_bus_error *error, sd_bus_message **reply) {
        uint64_t wait_usec = 50 * USEC_PER_MSEC, waited = 0;
        int r;

        for (;;) {
                r = sd_bus_call_method(bus, BUS_NAME, BUS_PATH, BUS_INTERFACE, method, error, reply, NULL);
                if (r >= 0 || !sd_bus_error_has_name(error, BUS_ERROR_BUSY) || waited >= 2 * USEC_PER_SEC)
                        return r;
                sd_bus_error_free(error);
                (void) usleep(wait_usec);
                waited += wait_usec;
                wait_usec = MIN(wait_usec * 2, 500 * USEC_PER_MSEC);
        }
}

int ctl_bus_connect(sd_bus **ret, char **why) {
        _cleanup_(sd_bus_unrefp) sd_bus *bus = NULL;
        int r;

        /* Honours $DBUS_SYSTEM_BUS_ADDRESS. */
        r = sd_bus_open_system(&bus);
        if (r < 0) {
                _cleanup_free_ char *text = ctl_connect_failure(r);
                return fail(why, r, "%s", text ?: strerror(-r));
        }
        *ret = TAKE_PTR(bus);
        return 0;
}

/* ---- Reading the properties ----------------------------------------------------- */

typedef struct PropertyField {
        const char *name;
        const char *signature;
        size_t offset;
        bool optional; /* newer than the spec: a lowlatd without it leaves the default */
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
        { "CpuDmaLatencyHeld", "b", offsetof(ManagerInfo, cpu_dma_latency_held), .optional = true },
        { "CpuDmaLatencySystemUSec", "i", offsetof(ManagerInfo, cpu_dma_latency_system_usec), .optional = true },
        { "Settings", "u", offsetof(ManagerInfo, settings) },
        { "SettingsNotOk", "u", offsetof(ManagerInfo, settings_not_ok) },
        { "ConfigWarnings", "as", offsetof(ManagerInfo, config_warnings), .optional = true },
        { "Profiles", "as", offsetof(ManagerInfo, profiles), .optional = true },
        { "Condition", "s", offsetof(ManagerInfo, condition), .optional = true },
        { "ConditionReasons", "as", offsetof(ManagerInfo, condition_reasons), .optional = true },
        { "RebootRequired", "b", offsetof(ManagerInfo, reboot_required), .optional = true },
};

static int read_property_value(sd_bus_message *m, const PropertyField *field, ManagerInfo *info) {
        void *p = (uint8_t *) info + field->offset;
        int r;

        /* -ENXIO: not of the type the spec says. */
        r = sd_bus_message_enter_container(m, 'v', field->signature);
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
 * would make every verdict a guess. Returns -errno after saying why (see fail()). */
int ctl_read_manager_info(sd_bus *bus, ManagerInfo *ret, char **why) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(manager_info_done) ManagerInfo info = {
                .cpu_dma_latency_held = -1,
                .cpu_dma_latency_system_usec = -1,
                .reboot_required = -1,
        };
        bool seen[ELEMENTSOF(manager_fields)] = {};
        int r;

        r = sd_bus_call_method(bus, BUS_NAME, BUS_PATH, "org.freedesktop.DBus.Properties", "GetAll", &error,
                               &info.reply, "s", BUS_INTERFACE);
        if (r < 0) {
                _cleanup_free_ char *text = ctl_call_failure(bus, "Reading the properties of " BUS_NAME, NULL, &error, r);
                return fail(why, r, "%s", text ?: strerror(-r));
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
                if (r == -ENXIO)
                        return fail(why, -EBADMSG, "property %s does not have type '%s'", field->name,
                                    field->signature);
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
                if (!seen[i] && !manager_fields[i].optional) {
                        _cleanup_free_ char *text = ctl_lacking_text(bus, manager_fields[i].name);
                        return fail(why, -EBADMSG, "%s", text ?: manager_fields[i].name);
                }
        *ret = info;
        info = (ManagerInfo) {};
        return 0;

bad_message:
        return fail(why, r, "cannot parse the properties of %s: %s", BUS_NAME, strerror(-r));
}

/* Reads one element of an array reply into list: 1 when it read one, 0 at the end of the
 * array, or -errno. */
typedef int (*ElementReader)(sd_bus_message *reply, void *list);

/* Calls method, which takes no arguments and returns an array of structs that start with
 * fields (a newer lowlatd may have added more at their end), and hands its elements one by
 * one to read_element. The strings read point into *reply. Says why it failed (see fail())
 * and returns -errno; error is set when lowlatd answered with one. */
static int call_for_array(sd_bus *bus, const char *method, const char *fields, sd_bus_error *error,
                          sd_bus_message **reply, ElementReader read_element, void *list, char **why) {
        int r;

        r = ctl_call_method(bus, method, error, reply);
        if (r < 0) {
                _cleanup_free_ char *text = ctl_call_failure(bus, method, method, error, r);
                return fail(why, r, "%s", text ?: method);
        }

        r = ctl_enter_struct_array(*reply, fields);
        while (r >= 0 && (r = read_element(*reply, list)) > 0)
                ;
        if (r >= 0)
                r = sd_bus_message_exit_container(*reply);
        if (r == -ENOMEM)
                return fail(why, r, "out of memory");
        if (r < 0)
                return fail(why, r, "cannot parse the reply of %s: %s", method, strerror(-r));
        return 0;
}

static int setting_row_read(sd_bus_message *reply, void *list) {
        SettingList *l = list;
        SettingRow row;
        int r;

        r = ctl_enter_struct(reply, "ssssss");
        if (r > 0)
                r = sd_bus_message_read(reply, "ssssss", &row.kind, &row.object, &row.desired, &row.observed,
                                        &row.state, &row.label);
        if (r > 0)
                r = ctl_exit_struct(reply);
        if (r <= 0)
                return r;
        if (array_grow(&l->rows, &l->allocated, l->n + 1) < 0)
                return -ENOMEM;
        l->rows[l->n++] = row;
        return 1;
}

int ctl_read_settings(sd_bus *bus, SettingList *ret, char **why) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(setting_list_done) SettingList l = {};
        int r;

        r = call_for_array(bus, "ListSettings", "ssssss", &error, &l.reply, setting_row_read, &l, why);
        if (r < 0)
                return r;
        *ret = l;
        l = (SettingList) {};
        return 0;
}

int ctl_read_posture(sd_bus *bus, ManagerInfo *ret_info, SettingList *ret_list, char **why) {
        _cleanup_(manager_info_done) ManagerInfo info = {};
        int r;

        r = ctl_read_manager_info(bus, &info, why);
        if (r < 0)
                return r;
        r = ctl_read_settings(bus, ret_list, why);
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
 * through a package upgrade), or either with fields a newer lowlatd added after them. */
static int check_finding_read(sd_bus_message *reply, void *list) {
        CheckReport *report = list;
        CheckFinding finding = {};
        const char *contents;
        char type;
        int r;

        r = ctl_enter_struct(reply, "ssss");
        if (r <= 0)
                return r;
        r = sd_bus_message_read(reply, "ssss", &finding.severity, &finding.id, &finding.subject, &finding.message);
        if (r >= 0)
                r = sd_bus_message_peek_type(reply, &type, &contents);
        if (r > 0 && type == 'a' && streq(contents, "s"))
                r = check_details_read(reply, &finding);
        if (r >= 0)
                r = ctl_exit_struct(reply);
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

        r = call_for_array(bus, "Check", "ssss", &error, &report.reply, check_finding_read, &report, NULL);
        if (r < 0)
                /* A parse failure sets no error, so it counts as "could not be asked". */
                return bus_error_is_unreachable(&error) ? r : 1;
        *ret = report;
        report = (CheckReport) {};
        return 0;
}

int ctl_read_config_warnings(sd_bus *bus, char ***ret) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;

        return sd_bus_get_property_strv(bus, BUS_NAME, BUS_PATH, BUS_INTERFACE, "ConfigWarnings", &error, ret);
}

int ctl_read_restore_skipped(sd_bus *bus, uint32_t *ret) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;

        return sd_bus_get_property_trivial(bus, BUS_NAME, BUS_PATH, BUS_INTERFACE, "RestoreSkipped", &error, 'u', ret);
}

int ctl_call_action(sd_bus *bus, const char *method) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        r = ctl_call_method(bus, method, &error, &reply);
        if (r < 0) {
                ctl_log_call_failed(bus, method, &error, r);
                return bus_error_is_unreachable(&error) ? r : 1;
        }
        return 0;
}

/* A method with arguments, answered by the daemon: 0 with *reply, 1 after saying why it
 * refused, or -errno after saying why it could not be asked. */
static int call_with_arguments(sd_bus *bus, const char *method, sd_bus_message **reply, const char *types, ...) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL;
        va_list ap;
        int r;

        r = sd_bus_message_new_method_call(bus, &call, BUS_NAME, BUS_PATH, BUS_INTERFACE, method);
        if (r >= 0) {
                va_start(ap, types);
                r = sd_bus_message_appendv(call, types, ap);
                va_end(ap);
        }
        if (r >= 0)
                r = sd_bus_call(bus, call, 0, &error, reply);
        if (r < 0) {
                ctl_log_call_failed(bus, method, &error, r);
                return bus_error_is_unreachable(&error) || !sd_bus_error_is_set(&error) ? r : 1;
        }
        return 0;
}

int ctl_call_diff(sd_bus *bus, const char *text, const char *name, sd_bus_message **reply) {
        return call_with_arguments(bus, "Diff", reply, "ss", text, name);
}

int ctl_call_reload_if_unchanged(sd_bus *bus, uint64_t digest) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;

        return call_with_arguments(bus, "ReloadIfUnchanged", &reply, "t", digest);
}
