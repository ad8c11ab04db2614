/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* org.lowlatd1.Manager: state as read-only properties, actions as methods. Reading is
 * open to everyone; Reload and Reapply are privileged, which sd-bus enforces itself
 * (methods not marked SD_BUS_VTABLE_UNPRIVILEGED need the caller to be root or hold
 * CAP_SYS_ADMIN). The policy file in conf/ is the second fence. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <systemd/sd-bus.h>

#include "audit.h"
#include "build-config.h"
#include "bus-names.h"
#include "bus.h"
#include "checkjob.h"
#include "log.h"
#include "util.h"

#define BUS_RETRY_MIN_USEC (1 * USEC_PER_SEC)
#define BUS_RETRY_MAX_USEC (30 * USEC_PER_SEC)

static int property_get_string(sd_bus *bus, const char *path, const char *interface, const char *property,
                               sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        _cleanup_free_ char *owned = NULL;
        const char *v = "";

        if (streq(property, "Version"))
                v = LOWLATD_VERSION;
        else if (streq(property, "Mode"))
                v = m->observe_override || m->restored || m->posture->mode == DAEMON_MODE_OBSERVE ? "observe" : "enforce";
        else if (streq(property, "State"))
                v = manager_state_to_string(manager_state(m));
        else if (streq(property, "IsolatedCPUs"))
                v = owned = cpuset_format_list(&m->posture->isolated);
        else if (streq(property, "HousekeepingCPUs"))
                v = owned = cpuset_format_list(&m->posture->housekeeping);
        else if (streq(property, "LastReloadError"))
                v = m->last_reload_error ?: "";
        if (!v)
                return -ENOMEM;
        return sd_bus_message_append(reply, "s", v);
}

static int property_get_config_files(sd_bus *bus, const char *path, const char *interface, const char *property,
                                     sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        const Config *c = m->posture->config;
        int r;

        r = sd_bus_message_open_container(reply, 'a', "s");
        for (size_t i = 0; r >= 0 && i < c->n_files; i++)
                r = sd_bus_message_append(reply, "s", c->files[i]);
        if (r < 0)
                return r;
        return sd_bus_message_close_container(reply);
}

static int property_get_counter(sd_bus *bus, const char *path, const char *interface, const char *property,
                                sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        uint64_t v = 0;

        if (streq(property, "DriftEvents"))
                v = m->rc.counters.drift_events;
        else if (streq(property, "Corrections"))
                v = m->rc.counters.corrections;
        else if (streq(property, "Failures"))
                v = m->rc.counters.failures;
        else if (streq(property, "LastReloadUSec"))
                v = m->last_reload_usec;
        return sd_bus_message_append(reply, "t", v);
}

static unsigned settings_not_ok(const Manager *m) {
        size_t counts[_SETTING_STATE_MAX];

        table_count(&m->table, counts);
        return (unsigned) (counts[SETTING_DRIFTED] + counts[SETTING_FAILED] + counts[SETTING_UNMOVABLE] +
                           counts[SETTING_UNSUPPORTED]);
}

static int property_get_uint32(sd_bus *bus, const char *path, const char *interface, const char *property,
                               sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        uint32_t v = streq(property, "Settings") ? (uint32_t) m->table.n : settings_not_ok(m);
        return sd_bus_message_append(reply, "u", v);
}

static int property_get_dma_latency(sd_bus *bus, const char *path, const char *interface, const char *property,
                                    sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        const Config *c = m->posture->config;
        return sd_bus_message_append(reply, "i", c->cpu_dma_latency_enabled ? c->cpu_dma_latency_usec : -1);
}

static int method_list_settings(sd_bus_message *message, void *userdata, sd_bus_error *error) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        Manager *m = userdata;
        int r;

        r = sd_bus_message_new_method_return(message, &reply);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(reply, 'a', "(sssss)");
        for (size_t i = 0; r >= 0 && i < m->table.n; i++) {
                const Setting *s = m->table.settings[i];
                r = sd_bus_message_append(reply, "(sssss)", setting_kind_to_string(s->kind), s->object, s->desired,
                                          s->observed ?: "", setting_state_to_string(s->state));
        }
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}

static int method_check(sd_bus_message *message, void *userdata, sd_bus_error *error) {
        /* Off the event loop: any user may call this, and the audit takes milliseconds. */
        return check_job_submit(userdata, message);
}

static int method_reload(sd_bus_message *message, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;

        int r = manager_reload(m);

        if (r == -EINVAL)
                return sd_bus_error_set(error, "org.lowlatd1.Error.InvalidConfig",
                                        m->last_reload_error ?: "invalid configuration");
        if (r < 0)
                return sd_bus_error_set_errnof(error, r, "Reload failed: %s", m->last_reload_error ?: strerror(-r));
        return sd_bus_reply_method_return(message, NULL);
}

static int method_restore(sd_bus_message *message, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        int r;

        if (!m->originals)
                return sd_bus_error_set(error, "org.lowlatd1.Error.NoOriginals",
                                        "No original values were kept (no runtime directory); nothing to restore");
        r = manager_restore(m, "Restore() on the bus");
        if (r < 0)
                return sd_bus_error_set_errnof(error, r, "Some settings could not be restored: %s", strerror(-r));
        return sd_bus_reply_method_return(message, "u", (uint32_t) r);
}

static int method_reapply(sd_bus_message *message, void *userdata, sd_bus_error *error) {
        manager_reapply(userdata);
        return sd_bus_reply_method_return(message, NULL);
}

#define CHANGES SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE
static const sd_bus_vtable manager_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("Version", "s", property_get_string, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("Mode", "s", property_get_string, 0, CHANGES),
        SD_BUS_PROPERTY("State", "s", property_get_string, 0, CHANGES),
        SD_BUS_PROPERTY("IsolatedCPUs", "s", property_get_string, 0, CHANGES),
        SD_BUS_PROPERTY("HousekeepingCPUs", "s", property_get_string, 0, CHANGES),
        SD_BUS_PROPERTY("ConfigFiles", "as", property_get_config_files, 0, CHANGES),
        SD_BUS_PROPERTY("LastReloadUSec", "t", property_get_counter, 0, CHANGES),
        SD_BUS_PROPERTY("LastReloadError", "s", property_get_string, 0, CHANGES),
        SD_BUS_PROPERTY("DriftEvents", "t", property_get_counter, 0, CHANGES),
        SD_BUS_PROPERTY("Corrections", "t", property_get_counter, 0, CHANGES),
        SD_BUS_PROPERTY("Failures", "t", property_get_counter, 0, CHANGES),
        SD_BUS_PROPERTY("CpuDmaLatencyUSec", "i", property_get_dma_latency, 0, CHANGES),
        SD_BUS_PROPERTY("Settings", "u", property_get_uint32, 0, CHANGES),
        SD_BUS_PROPERTY("SettingsNotOk", "u", property_get_uint32, 0, CHANGES),
        SD_BUS_METHOD_WITH_ARGS("ListSettings", SD_BUS_NO_ARGS,
                                SD_BUS_RESULT("a(sssss)", settings),
                                method_list_settings, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Check", SD_BUS_NO_ARGS, SD_BUS_RESULT("a(ssss)", findings), method_check,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD("Reload", "", "", method_reload, 0),
        SD_BUS_METHOD("Reapply", "", "", method_reapply, 0),
        SD_BUS_METHOD_WITH_ARGS("Restore", SD_BUS_NO_ARGS, SD_BUS_RESULT("u", restored), method_restore, 0),
        SD_BUS_SIGNAL_WITH_ARGS("Drift",
                                SD_BUS_ARGS("s", kind, "s", object, "s", expected, "s", observed, "b", corrected),
                                0),
        SD_BUS_VTABLE_END,
};

static void bus_schedule_retry(Manager *m);
static bool bus_watch_socket(Manager *m);

static int on_bus_disconnected(sd_bus_message *message, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;

        log_warning("Lost the system bus; still enforcing, reconnecting");
        m->bus = sd_bus_flush_close_unref(m->bus);
        m->bus_retry_usec = BUS_RETRY_MIN_USEC;
        m->bus_failure_logged = true; /* said above */
        (void) bus_watch_socket(m);
        bus_schedule_retry(m);
        return 0;
}

static int bus_connect(Manager *m) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        int r;

        r = sd_bus_open_system(&bus);
        if (r < 0)
                return r;
        (void) sd_bus_set_exit_on_disconnect(bus, false);
        /* A hung bus must not hold up READY=1 for the default 25 s. */
        (void) sd_bus_set_method_call_timeout(bus, 5 * USEC_PER_SEC);
        r = sd_bus_add_object_vtable(bus, NULL, BUS_PATH, BUS_INTERFACE, manager_vtable, m);
        if (r < 0)
                return r;
        r = sd_bus_match_signal_async(bus, NULL, "org.freedesktop.DBus.Local", "/org/freedesktop/DBus/Local",
                                      "org.freedesktop.DBus.Local", "Disconnected", on_bus_disconnected, NULL, m);
        if (r < 0)
                return r;
        r = sd_bus_attach_event(bus, m->event, SD_EVENT_PRIORITY_NORMAL);
        if (r < 0)
                return r;
        /* Synchronous, so a failure (the policy refuses us, the bus is not there) is known
         * here and retried rather than lost in an async reply. */
        r = sd_bus_request_name(bus, BUS_NAME, 0);
        if (r < 0)
                return r;
        m->bus = TAKE_PTR(bus);
        return 0;
}

/* The socket path of a "unix:path=..." system bus address (the default one when
 * DBUS_SYSTEM_BUS_ADDRESS is unset), %XX-unescaped; NULL for any other transport. */
static char *bus_socket_path(void) {
        const char *address = secure_getenv("DBUS_SYSTEM_BUS_ADDRESS") ?: "unix:path=/run/dbus/system_bus_socket";
        const char *p;
        char *path, *o;

        if (strncmp(address, "unix:path=", strlen("unix:path=")) != 0)
                return NULL;
        p = address + strlen("unix:path=");
        path = o = malloc(strlen(p) + 1);
        if (!path)
                return NULL;
        for (; *p && *p != ',' && *p != ';'; p++) {
                unsigned v;
                if (*p == '%' && sscanf(p + 1, "%2x", &v) == 1 && isxdigit((unsigned char) p[1]) &&
                    isxdigit((unsigned char) p[2])) {
                        *o++ = (char) v;
                        p += 2;
                } else
                        *o++ = *p;
        }
        *o = '\0';
        return path;
}

static int bus_try_connect(Manager *m);

static int on_bus_socket_created(sd_event_source *source, const struct inotify_event *event, void *userdata) {
        Manager *m = userdata;

        if (m->bus || !event->len || !streq(event->name, m->bus_socket_name))
                return 0;
        m->bus_retry_usec = BUS_RETRY_MIN_USEC;
        return bus_try_connect(m);
}

/* With a socket path, dbus-daemon (re)creating its socket is an event: no polling while
 * the bus is simply absent, and a restarted bus is found at once. */
static bool bus_watch_socket(Manager *m) {
        _cleanup_free_ char *path = NULL;
        char *slash;
        int r;

        if (m->bus_socket_watch)
                return true;
        path = bus_socket_path();
        if (!path || !(slash = strrchr(path, '/')) || slash == path)
                return false;
        *slash = '\0';
        free(m->bus_socket_name);
        m->bus_socket_name = strdup(slash + 1);
        if (!m->bus_socket_name)
                return false;
        r = sd_event_add_inotify(m->event, &m->bus_socket_watch, path, IN_CREATE | IN_MOVED_TO | IN_ONLYDIR,
                                 on_bus_socket_created, m);
        return r >= 0;
}

static int bus_try_connect(Manager *m) {
        bool watched;
        int r;

        r = bus_connect(m);
        if (r >= 0) {
                log_info("Connected to the system bus as %s", BUS_NAME);
                m->bus_socket_watch = sd_event_source_disable_unref(m->bus_socket_watch);
                m->bus_failure_logged = false;
                m->bus_retry_usec = BUS_RETRY_MIN_USEC;
                bus_flush_changes(m);
                return 0;
        }
        watched = bus_watch_socket(m);
        if (!m->bus_failure_logged) {
                log_warning_errno(r, "Cannot publish %s on the system bus, %s", BUS_NAME,
                                  r == -ENOENT && watched ? "waiting for its socket" : "retrying with backoff");
                m->bus_failure_logged = true;
        }
        /* A socket that is there but refuses (a dead daemon's leftover) needs polling; a
         * missing one will announce itself. */
        if (r == -ENOENT && watched)
                return 0;
        m->bus_retry_usec = MIN(m->bus_retry_usec * 2, BUS_RETRY_MAX_USEC);
        bus_schedule_retry(m);
        return 0;
}

static int on_bus_retry(sd_event_source *source, uint64_t usec, void *userdata) {
        return bus_try_connect(userdata);
}

static void bus_schedule_retry(Manager *m) {
        int r;

        if (!m->bus_retry) {
                r = sd_event_add_time_relative(m->event, &m->bus_retry, CLOCK_MONOTONIC, m->bus_retry_usec,
                                               USEC_PER_SEC / 4, on_bus_retry, m);
                if (r < 0)
                        log_warning_errno(r, "Cannot schedule a bus reconnect");
                return;
        }
        (void) sd_event_source_set_time_relative(m->bus_retry, m->bus_retry_usec);
        (void) sd_event_source_set_enabled(m->bus_retry, SD_EVENT_ONESHOT);
}

void bus_setup(Manager *m) {
        m->bus_retry_usec = BUS_RETRY_MIN_USEC;
        (void) bus_try_connect(m);
}

void bus_done(Manager *m) {
        check_job_abandon(m);
        m->bus_retry = sd_event_source_disable_unref(m->bus_retry);
        m->bus_socket_watch = sd_event_source_disable_unref(m->bus_socket_watch);
        m->bus_socket_name = mfree(m->bus_socket_name);
        m->bus = sd_bus_flush_close_unref(m->bus);
}

void bus_flush_changes(Manager *m) {
        BusSnapshot now = {
                .state = manager_state(m),
                .drift_events = m->rc.counters.drift_events,
                .corrections = m->rc.counters.corrections,
                .failures = m->rc.counters.failures,
                .settings = (unsigned) m->table.n,
                .settings_not_ok = settings_not_ok(m),
                .reload_usec = m->last_reload_usec,
                .generation = m->posture_generation,
        };
        const BusSnapshot *was = &m->bus_emitted;
        const char *names[16];
        size_t n = 0;

        if (!m->bus) {
                m->bus_emitted = now;
                return;
        }
        if (now.state != was->state)
                names[n++] = "State";
        if (now.drift_events != was->drift_events)
                names[n++] = "DriftEvents";
        if (now.corrections != was->corrections)
                names[n++] = "Corrections";
        if (now.failures != was->failures)
                names[n++] = "Failures";
        if (now.settings != was->settings)
                names[n++] = "Settings";
        if (now.settings_not_ok != was->settings_not_ok)
                names[n++] = "SettingsNotOk";
        if (now.reload_usec != was->reload_usec) {
                names[n++] = "LastReloadUSec";
                names[n++] = "LastReloadError";
        }
        if (now.generation != was->generation) {
                names[n++] = "Mode";
                names[n++] = "IsolatedCPUs";
                names[n++] = "HousekeepingCPUs";
                names[n++] = "ConfigFiles";
                names[n++] = "CpuDmaLatencyUSec";
        }
        names[n] = NULL;
        m->bus_emitted = now;
        if (n > 0)
                (void) sd_bus_emit_properties_changed_strv(m->bus, BUS_PATH, BUS_INTERFACE, (char **) names);
}

void bus_emit_drift(Manager *m, const Setting *s, bool corrected) {
        if (!m->bus)
                return;
        (void) sd_bus_emit_signal(m->bus, BUS_PATH, BUS_INTERFACE, "Drift", "ssssb", setting_kind_to_string(s->kind),
                                  s->object, s->desired, s->observed ?: "", corrected);
}
