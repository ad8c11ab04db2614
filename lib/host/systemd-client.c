/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* PID 1's D-Bus API: AllowedCPUs= of units, and the signals that say they changed. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <systemd/sd-bus.h>
#include <time.h>

#include "basic/array.h"
#include "host/systemd-client.h"
#include "basic/util.h"

#define SYSTEMD_DESTINATION "org.freedesktop.systemd1"
#define SYSTEMD_PATH "/org/freedesktop/systemd1"
#define SYSTEMD_MANAGER "org.freedesktop.systemd1.Manager"
#define SYSTEMD_UNIT_PREFIX "/org/freedesktop/systemd1/unit"

struct SystemdClient {
        const Host *host;
        sd_bus *bus; /* NULL while not connected */
        sd_event *event;
        SystemdUnitHandler handler;
        void *userdata;
        char **units; /* the units asked about: their PropertiesChanged are matched */
        size_t n_units, allocated_units;
        uint64_t quiet_until; /* CLOCK_MONOTONIC: after a timeout, no call before this */
};

int systemd_client_new(const Host *h, SystemdClient **ret) {
        SystemdClient *c = calloc(1, sizeof(SystemdClient));

        if (!c)
                return -ENOMEM;
        c->host = h;
        *ret = c;
        return 0;
}

SystemdClient *systemd_client_free(SystemdClient *c) {
        if (!c)
                return NULL;
        sd_bus_flush_close_unref(c->bus);
        sd_event_unref(c->event);
        for (size_t i = 0; i < c->n_units; i++)
                free(c->units[i]);
        free(c->units);
        free(c);
        return NULL;
}

int systemd_host_supports_allowed_cpus(const Host *h, char **ret_reason) {
        /* Paths as the host's own, or under --root. */
        const char *root = streq(h->root_path, "/") ? "" : h->root_path;
        _cleanup_free_ char *controllers = NULL;
        char *save = NULL;
        int r;

        if (!host_systemd_is_init(h))
                *ret_reason = strdup_printf("systemd is not PID 1 here (no %s/run/systemd/system), and AllowedCPUs= needs "
                                            "its bus API",
                                            root);
        else if ((r = host_read_file(h, "sys/fs/cgroup/cgroup.controllers", &controllers)) < 0)
                *ret_reason = strdup_printf("no cgroup v2 tree at %s/sys/fs/cgroup (%s), and AllowedCPUs= needs its "
                                            "cpuset controller",
                                            root,
                                            r == -ENOENT ? "no cgroup.controllers: cgroup v1 or hybrid" : strerror(-r));
        else {
                for (char *w = strtok_r(controllers, " \t\n", &save); w; w = strtok_r(NULL, " \t\n", &save))
                        if (streq(w, "cpuset"))
                                return 0;
                *ret_reason = strdup_printf("the cgroup v2 tree at %s/sys/fs/cgroup has no cpuset controller, and "
                                            "AllowedCPUs= needs it",
                                            root);
        }
        return *ret_reason ? -EOPNOTSUPP : -ENOMEM;
}

const char *systemd_unit_interface(const char *unit) {
        static const struct {
                const char *suffix, *interface;
        } types[] = {
                { ".slice", "org.freedesktop.systemd1.Slice" },
                { ".scope", "org.freedesktop.systemd1.Scope" },
                { ".service", "org.freedesktop.systemd1.Service" },
        };
        size_t n = unit ? strlen(unit) : 0;

        for (size_t i = 0; i < ELEMENTSOF(types); i++) {
                size_t k = strlen(types[i].suffix);
                if (n > k && streq(unit + n - k, types[i].suffix))
                        return types[i].interface;
        }
        return NULL;
}

static void set_error(char **ret_error, const char *fmt, ...) _printf_(2, 3);
static void set_error(char **ret_error, const char *fmt, ...) {
        va_list ap;
        char *s;

        if (!ret_error)
                return;
        va_start(ap, fmt);
        s = strdup_vprintf(fmt, ap);
        va_end(ap);
        free(*ret_error);
        *ret_error = s;
}

static int on_properties_changed(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        SystemdClient *c = userdata;
        _cleanup_free_ char *unit = NULL;

        if (c->handler && sd_bus_path_decode(sd_bus_message_get_path(m), SYSTEMD_UNIT_PREFIX, &unit) > 0)
                c->handler(c->userdata, unit);
        return 0;
}

/* daemon-reload re-reads every unit file and drop-in: any unit may have another value. */
static int on_reloading(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        SystemdClient *c = userdata;
        int active;

        if (c->handler && sd_bus_message_read(m, "b", &active) >= 0 && !active)
                c->handler(c->userdata, NULL);
        return 0;
}

/* PID 1 took its name again (daemon-reexec, or a restart of the bus's view of it): it
 * forgets subscribers that were not serialised, and units may have other values now. */
static int on_owner_changed(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        SystemdClient *c = userdata;
        const char *name, *old_owner, *new_owner;

        if (sd_bus_message_read(m, "sss", &name, &old_owner, &new_owner) < 0 || isempty(new_owner))
                return 0;
        (void) sd_bus_call_method_async(c->bus, NULL, SYSTEMD_DESTINATION, SYSTEMD_PATH, SYSTEMD_MANAGER, "Subscribe",
                                        NULL, NULL, NULL);
        if (c->handler)
                c->handler(c->userdata, NULL);
        return 0;
}

/* The next call connects again; the scan makes one soon enough. */
static int on_disconnected(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        SystemdClient *c = userdata;

        c->bus = sd_bus_flush_close_unref(c->bus);
        return 0;
}

static int match_unit(SystemdClient *c, const char *unit) {
        _cleanup_free_ char *path = NULL;
        int r;

        r = sd_bus_path_encode(SYSTEMD_UNIT_PREFIX, unit, &path);
        if (r < 0)
                return r;
        return sd_bus_match_signal(c->bus, NULL, SYSTEMD_DESTINATION, path, "org.freedesktop.DBus.Properties",
                                   "PropertiesChanged", on_properties_changed, c);
}

static int client_connect(SystemdClient *c, char **ret_error) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_free_ char *reason = NULL;
        int r;

        if (c->bus)
                return 0;
        r = systemd_host_supports_allowed_cpus(c->host, &reason);
        if (r < 0) {
                if (ret_error) {
                        free(*ret_error);
                        *ret_error = TAKE_PTR(reason);
                }
                return r;
        }
        r = sd_bus_open_system(&bus);
        if (r < 0) {
                set_error(ret_error, "cannot connect to the system bus to reach PID 1: %s", strerror(-r));
                return r;
        }
        (void) sd_bus_set_exit_on_disconnect(bus, false);
        (void) sd_bus_set_method_call_timeout(bus, SYSTEMD_CLIENT_TIMEOUT_USEC);
        r = sd_bus_match_signal(bus, NULL, "org.freedesktop.DBus.Local", "/org/freedesktop/DBus/Local",
                                "org.freedesktop.DBus.Local", "Disconnected", on_disconnected, c);
        if (r >= 0)
                r = sd_bus_match_signal(bus, NULL, SYSTEMD_DESTINATION, SYSTEMD_PATH, SYSTEMD_MANAGER, "Reloading",
                                        on_reloading, c);
        if (r >= 0)
                r = sd_bus_add_match(bus, NULL,
                                     "type='signal',sender='org.freedesktop.DBus',path='/org/freedesktop/DBus',"
                                     "interface='org.freedesktop.DBus',member='NameOwnerChanged',"
                                     "arg0='" SYSTEMD_DESTINATION "'",
                                     on_owner_changed, c);
        if (r < 0) {
                set_error(ret_error, "cannot subscribe to PID 1's signals: %s", strerror(-r));
                return r;
        }
        /* PID 1 sends unit signals on the system bus only while a client is subscribed. A
         * refusal costs only the signals: inotify and the scan still see changes. */
        (void) sd_bus_call_method(bus, SYSTEMD_DESTINATION, SYSTEMD_PATH, SYSTEMD_MANAGER, "Subscribe", NULL, NULL,
                                  NULL);
        if (c->event) {
                r = sd_bus_attach_event(bus, c->event, SD_EVENT_PRIORITY_NORMAL);
                if (r < 0) {
                        set_error(ret_error, "cannot watch the connection to PID 1: %s", strerror(-r));
                        return r;
                }
        }
        c->bus = TAKE_PTR(bus);
        for (size_t i = 0; i < c->n_units; i++)
                (void) match_unit(c, c->units[i]);
        return 0;
}

/* Remembers a unit asked about, and matches its signals on this connection. */
static int client_watch_unit(SystemdClient *c, const char *unit) {
        for (size_t i = 0; i < c->n_units; i++)
                if (streq(c->units[i], unit))
                        return 0;
        if (array_grow(&c->units, &c->allocated_units, c->n_units + 1) < 0)
                return -ENOMEM;
        c->units[c->n_units] = strdup(unit);
        if (!c->units[c->n_units])
                return -ENOMEM;
        c->n_units++;
        return match_unit(c, unit);
}

/* Connected, or why not; and the unit's object path and interface. */
static int client_prepare(SystemdClient *c, const char *unit, char **ret_path, const char **ret_interface,
                          char **ret_error) {
        const char *interface = systemd_unit_interface(unit);
        int r;

        if (!interface) {
                set_error(ret_error, "%s is not a slice, scope or service", unit);
                return -EINVAL;
        }
        if (now_usec(CLOCK_MONOTONIC) < c->quiet_until) {
                set_error(ret_error, "PID 1 did not answer within %u s; asking again %u s after that",
                          (unsigned) (SYSTEMD_CLIENT_TIMEOUT_USEC / USEC_PER_SEC),
                          (unsigned) (SYSTEMD_CLIENT_QUIET_USEC / USEC_PER_SEC));
                return -ETIMEDOUT;
        }
        r = client_connect(c, ret_error);
        if (r < 0)
                return r;
        (void) client_watch_unit(c, unit);
        r = sd_bus_path_encode(SYSTEMD_UNIT_PREFIX, unit, ret_path);
        if (r < 0)
                return r;
        *ret_interface = interface;
        return 0;
}

/* After a failed call: PID 1's words, and what the failure says about the connection. */
static int client_call_failed(SystemdClient *c, int r, const sd_bus_error *error, const char *what, char **ret_error) {
        if (sd_bus_error_is_set(error))
                set_error(ret_error, "%s: %s: %s", what, error->name, error->message ?: "");
        else
                set_error(ret_error, "%s: %s", what, strerror(-r));
        if (r == -ETIMEDOUT)
                c->quiet_until = now_usec(CLOCK_MONOTONIC) + SYSTEMD_CLIENT_QUIET_USEC;
        if (c->bus && sd_bus_is_open(c->bus) <= 0)
                c->bus = sd_bus_flush_close_unref(c->bus);
        return r;
}

int systemd_client_get_allowed_cpus(SystemdClient *c, const char *unit, CPUSet *ret, char **ret_error) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_free_ char *path = NULL;
        const char *interface;
        int r;

        r = client_prepare(c, unit, &path, &interface, ret_error);
        if (r < 0)
                return r;
        r = sd_bus_get_property(c->bus, SYSTEMD_DESTINATION, path, interface, "AllowedCPUs", &error, &reply, "ay");
        if (r < 0)
                return client_call_failed(c, r, &error, "reading AllowedCPUs", ret_error);
        r = systemd_allowed_cpus_read(reply, ret);
        if (r < 0)
                set_error(ret_error, "PID 1's AllowedCPUs of %s cannot be read: %s", unit, strerror(-r));
        return r;
}

/* ("AllowedCPUs", <ay>) in an a(sv) being built: the one property both the confined
 * slices and the partition's slice are given. */
static int append_allowed_cpus(sd_bus_message *m, const CPUSet *cpus) {
        _cleanup_free_ uint8_t *bytes = NULL;
        size_t n;
        int r;

        r = cpuset_format_bytes(cpus, &bytes, &n);
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'r', "sv");
        if (r >= 0)
                r = sd_bus_message_append(m, "s", "AllowedCPUs");
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'v', "ay");
        if (r >= 0)
                r = sd_bus_message_append_array(m, 'y', bytes, n);
        for (unsigned i = 0; r >= 0 && i < 2; i++)
                r = sd_bus_message_close_container(m);
        return r;
}

int systemd_client_set_allowed_cpus(SystemdClient *c, const char *unit, const CPUSet *cpus, char **ret_error) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        _cleanup_free_ char *path = NULL;
        const char *interface;
        int r;

        r = client_prepare(c, unit, &path, &interface, ret_error);
        if (r < 0)
                return r;
        /* runtime = true: the change lives in /run/systemd/system.control and ends with the
         * boot, like the rest of what lowlatd does. */
        r = sd_bus_message_new_method_call(c->bus, &m, SYSTEMD_DESTINATION, SYSTEMD_PATH, SYSTEMD_MANAGER,
                                           "SetUnitProperties");
        if (r >= 0)
                r = sd_bus_message_append(m, "sb", unit, 1);
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'a', "(sv)");
        if (r >= 0)
                r = append_allowed_cpus(m, cpus);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        if (r < 0) {
                set_error(ret_error, "cannot build SetUnitProperties: %s", strerror(-r));
                return r;
        }
        r = sd_bus_call(c->bus, m, 0, &error, NULL);
        if (r < 0)
                return client_call_failed(c, r, &error, "PID 1 refused SetUnitProperties", ret_error);
        return 0;
}

int systemd_allowed_cpus_read(sd_bus_message *m, CPUSet *ret) {
        const void *bytes;
        size_t n;
        int r;

        r = sd_bus_message_read_array(m, 'y', &bytes, &n);
        if (r < 0)
                return r;
        if (r == 0)
                return -EBADMSG; /* no array here: the reply ended */
        return cpuset_parse_bytes(bytes, n, ret);
}

/* An absolute path with no empty, "." or ".." component, so that it stays below
 * /sys/fs/cgroup when put after it; "/" is the root cgroup. */
static bool control_group_is_valid(const char *cg) {
        if (cg[0] != '/')
                return false;
        if (streq(cg, "/"))
                return true;
        for (const char *p = cg; *p == '/';) {
                size_t len = strcspn(p + 1, "/");
                if (len == 0 || (len == 1 && p[1] == '.') || (len == 2 && p[1] == '.' && p[2] == '.'))
                        return false;
                p += 1 + len;
        }
        return true;
}

int systemd_control_group_read(sd_bus_message *m, char **ret) {
        const char *cg;
        char *copy;
        int r;

        r = sd_bus_message_read_basic(m, 's', &cg);
        if (r < 0)
                return r;
        if (r == 0)
                return -EBADMSG;
        /* Empty: the unit has no cgroup (it is not running). */
        if (!isempty(cg) && !control_group_is_valid(cg))
                return -EBADMSG;
        copy = strdup(cg);
        if (!copy)
                return -ENOMEM;
        *ret = copy;
        return 0;
}

int systemd_client_get_control_group(SystemdClient *c, const char *unit, char **ret, char **ret_error) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_free_ char *path = NULL;
        const char *interface;
        int r;

        r = client_prepare(c, unit, &path, &interface, ret_error);
        if (r < 0)
                return r;
        r = sd_bus_get_property(c->bus, SYSTEMD_DESTINATION, path, interface, "ControlGroup", &error, &reply, "s");
        if (r < 0)
                return client_call_failed(c, r, &error, "reading ControlGroup", ret_error);
        r = systemd_control_group_read(reply, ret);
        if (r < 0)
                set_error(ret_error, "PID 1's ControlGroup of %s is not a cgroup path", unit);
        return r;
}

int systemd_client_attach(SystemdClient *c, sd_event *e, SystemdUnitHandler handler, void *userdata) {
        int r;

        c->handler = handler;
        c->userdata = userdata;
        if (c->event != e) {
                sd_event_unref(c->event);
                c->event = sd_event_ref(e);
        }
        if (!c->bus || sd_bus_get_event(c->bus))
                return 0;
        r = sd_bus_attach_event(c->bus, e, SD_EVENT_PRIORITY_NORMAL);
        return r < 0 ? r : 0;
}

/* ("AllowedCPUs", ay) and ("Description", s) in an a(sv) being built. */
static int append_slice_properties(sd_bus_message *m, const CPUSet *cpus, const char *description) {
        int r;

        r = sd_bus_message_open_container(m, 'a', "(sv)");
        if (r >= 0)
                r = sd_bus_message_append(m, "(sv)", "Description", "s", description);
        if (r >= 0)
                r = append_allowed_cpus(m, cpus);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        return r;
}

/* The one unit-level call both StartUnit and StopUnit are: (unit, mode) -> job. */
static int call_unit_job(SystemdClient *c, const char *method, const char *unit, char **ret_error) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_free_ char *what = strdup_printf("PID 1 refused %s", method);
        int r;

        r = sd_bus_call_method(c->bus, SYSTEMD_DESTINATION, SYSTEMD_PATH, SYSTEMD_MANAGER, method, &error, NULL, "ss",
                               unit, "replace");
        return r < 0 ? client_call_failed(c, r, &error, what ?: method, ret_error) : 0;
}

int systemd_client_start_slice(SystemdClient *c, const char *slice, const CPUSet *cpus, const char *description,
                               char **ret_error) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        _cleanup_free_ char *path = NULL;
        const char *interface;
        int r;

        r = client_prepare(c, slice, &path, &interface, ret_error);
        if (r < 0)
                return r;
        r = sd_bus_message_new_method_call(c->bus, &m, SYSTEMD_DESTINATION, SYSTEMD_PATH, SYSTEMD_MANAGER,
                                           "StartTransientUnit");
        if (r >= 0)
                r = sd_bus_message_append(m, "ss", slice, "fail");
        if (r >= 0)
                r = append_slice_properties(m, cpus, description);
        if (r >= 0)
                r = sd_bus_message_append(m, "a(sa(sv))", 0);
        if (r < 0) {
                set_error(ret_error, "cannot build StartTransientUnit: %s", strerror(-r));
                return r;
        }
        r = sd_bus_call(c->bus, m, 0, &error, NULL);
        if (r >= 0)
                return 0;
        /* Loaded already (a unit file, or a transient unit not yet collected): start it as it is. */
        if (sd_bus_error_has_name(&error, "org.freedesktop.systemd1.UnitExists"))
                return call_unit_job(c, "StartUnit", slice, ret_error);
        return client_call_failed(c, r, &error, "PID 1 refused StartTransientUnit", ret_error);
}

int systemd_client_stop_unit(SystemdClient *c, const char *unit, char **ret_error) {
        _cleanup_free_ char *path = NULL;
        const char *interface;
        int r;

        r = client_prepare(c, unit, &path, &interface, ret_error);
        return r < 0 ? r : call_unit_job(c, "StopUnit", unit, ret_error);
}
