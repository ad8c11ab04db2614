/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* org.lowlatd1.Manager: state as read-only properties, actions as methods. Reading is
 * open to everyone; Reload and Reapply are privileged, which sd-bus enforces itself
 * (methods not marked SD_BUS_VTABLE_UNPRIVILEGED need the caller to be root or hold
 * CAP_SYS_ADMIN). The policy file in conf/ is the second fence. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>
#include <systemd/sd-bus.h>

#include "audit/audit.h"
#include "version.h"
#include "bus-address.h"
#include "bus-features.h"
#include "bus-limit.h"
#include "bus-measurement.h"
#include "bus-names.h"
#include "bus.h"
#include "checkjob.h"
#include "condition.h"
#include "diff.h"
#include "log/log.h"
#include "setting/dma.h"
#include "setting/irq.h"
#include "basic/util.h"

#define BUS_RETRY_MIN_USEC (1 * USEC_PER_SEC)
#define BUS_RETRY_MAX_USEC (30 * USEC_PER_SEC)
/* After the socket (or its directory) appeared: bound but maybe not listening yet. */
#define BUS_RETRY_FRESH_USEC (50 * USEC_PER_MSEC)
/* ListSettings reads /proc/interrupts for the IRQs' names at most this often: the file
 * is megabytes on a large host (tens of milliseconds to parse), and a name that a driver
 * requested since is worth at most this much delay, not the loop's time at every call. */
#define BUS_NAMES_REFRESH_USEC (5 * USEC_PER_SEC)

/* What was last announced with PropertiesChanged. */
typedef struct BusSnapshot {
        ManagerState state;
        Condition condition;
        bool reboot_required;
        uint64_t drift_events, corrections, failures, applied, fights;
        unsigned settings, settings_not_ok;
        uint64_t reload_usec;
        unsigned generation;
        DmaLatencyStatus dma;
} BusSnapshot;

struct Bus {
        Manager *manager;
        sd_bus *bus;
        sd_event_source *retry;
        sd_event_source *socket_watch; /* the bus socket's directory (or its parent), while disconnected */
        char *watched_name;            /* what appearing there is news: the socket, or its directory */
        uint64_t retry_usec;
        bool failure_logged;
        BusSnapshot emitted;
        CheckJob *check_job; /* the running Check() audit, NULL when none */
        MeasurementStore *measurement; /* lowlatctl measure's last result; outlives reconnections */
        BusLimit limit;                /* the unprivileged methods' share of the loop */
        uint64_t names_read_usec;      /* when ListSettings last read the IRQ names; 0: never */
};

/* Whether more than BUS_LIMIT_WAITING_* waits on the connection message came on: the bytes
 * in its socket, and what sd-bus read but has not dispatched. */
static bool bus_others_waiting(sd_bus_message *message) {
        sd_bus *bus = sd_bus_message_get_bus(message);
        uint64_t queued = 0;
        int fd, bytes = 0;

        if (!bus)
                return false;
        if (sd_bus_get_n_queued_read(bus, &queued) >= 0 && queued > BUS_LIMIT_WAITING_MESSAGES_MAX)
                return true;
        fd = sd_bus_get_fd(bus);
        return fd >= 0 && ioctl(fd, FIONREAD, &bytes) >= 0 && bytes > (int) BUS_LIMIT_WAITING_BYTES_MAX;
}

/* Whether an unprivileged method may be answered now (bus-limit.h); if not, the error
 * that says so, at the cost of one small message. Only the unique name is looked at:
 * asking the bus for the caller's uid would be a blocking round trip per call. */
static int bus_admit(Bus *b, sd_bus_message *message, sd_bus_error *error) {
        BusLimitVerdict v = bus_limit_admit(&b->limit, sd_bus_message_get_sender(message), now_usec(CLOCK_MONOTONIC),
                                            bus_others_waiting(message));

        if (v == BUS_LIMIT_ADMIT)
                return 0;
        if (v == BUS_LIMIT_OTHERS_WAITING || v == BUS_LIMIT_HOLDING_OFF) {
                if (b->limit.refused == 1)
                        log_notice("Refusing %s() from %s: other calls are waiting (further refusals are not logged)",
                                   sd_bus_message_get_member(message), sd_bus_message_get_sender(message) ?: "?");
                return sd_bus_error_set(error, BUS_LIMIT_ERROR, "Too many calls waiting; try again in a second");
        }
        if (b->limit.refused == 1)
                log_notice("Refusing %s() from %s: too many calls (further refusals are not logged)",
                           sd_bus_message_get_member(message), sd_bus_message_get_sender(message) ?: "?");
        return sd_bus_error_setf(error, BUS_LIMIT_ERROR,
                                 v == BUS_LIMIT_SENDER_OVER ? "Too many calls from this connection; at most %u a second"
                                                            : "Too many calls; the share of %u ms a second is spent",
                                 v == BUS_LIMIT_SENDER_OVER ? BUS_LIMIT_PER_SENDER
                                                            : (unsigned) (BUS_LIMIT_BUDGET_USEC / USEC_PER_MSEC));
}

static int property_get_string(sd_bus *bus, const char *path, const char *interface, const char *property,
                               sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        Manager *m = ((Bus *) userdata)->manager;
        _cleanup_free_ char *owned = NULL;
        const char *v = "";

        if (streq(property, "Version"))
                v = LOWLATD_VERSION;
        else if (streq(property, "Mode"))
                v = daemon_mode_to_string(manager_observing(m) ? DAEMON_MODE_OBSERVE : DAEMON_MODE_ENFORCE);
        else if (streq(property, "State"))
                v = manager_state_to_string(manager_state(m));
        else if (streq(property, "IsolatedCPUs"))
                v = owned = cpuset_format_list(&m->posture->isolated);
        else if (streq(property, "HousekeepingCPUs"))
                v = owned = cpuset_format_list(&m->posture->housekeeping);
        else if (streq(property, "LastReloadError"))
                v = m->last_reload_error ?: "";
        else if (streq(property, "NoiseUnreadable")) {
                const Noise *n = manager_noise_counters(m);
                v = n && n->unreadable ? n->unreadable : "";
        } else if (streq(property, "NoiseCPUs"))
                /* With Noise() empty, "" says no CPU is watched, a list that none took any. */
                v = owned = cpuset_format_list(&m->posture->noise_cpus);
        if (!v)
                return -ENOMEM;
        /* The reload error quotes the files; what cannot be read names host files too. */
        _cleanup_free_ char *text = utf8_escape(v);
        if (!text)
                return -ENOMEM;
        return sd_bus_message_append(reply, "s", text);
}

/* An "as" of n strings, each made valid UTF-8 (a file name, a path in a warning: any bytes). */
static int append_strings(sd_bus_message *reply, char *const *items, size_t n) {
        int r;

        r = sd_bus_message_open_container(reply, 'a', "s");
        for (size_t i = 0; r >= 0 && i < n; i++) {
                _cleanup_free_ char *text = utf8_escape(items[i]);
                r = text ? sd_bus_message_append(reply, "s", text) : -ENOMEM;
        }
        if (r < 0)
                return r;
        return sd_bus_message_close_container(reply);
}

static int property_get_config_files(sd_bus *bus, const char *path, const char *interface, const char *property,
                                     sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        Manager *m = ((Bus *) userdata)->manager;

        return append_strings(reply, m->posture->config->files, m->posture->config->n_files);
}

/* Every feature this build has: the interface is the build's, whatever the config. */
static int property_get_features(sd_bus *bus, const char *path, const char *interface, const char *property,
                                 sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        int r;

        r = sd_bus_message_open_container(reply, 'a', "s");
        for (BusFeature f = 0; r >= 0 && f < _BUS_FEATURE_MAX; f++)
                r = sd_bus_message_append(reply, "s", bus_feature_to_string(f));
        if (r < 0)
                return r;
        return sd_bus_message_close_container(reply);
}

/* ConfigWarnings: "FILE:LINE: warning: reason" for each warning of the configuration in
 * effect (the one lowlatd started with or last reloaded; lowlatd.conf(5), WARNINGS). */
static int property_get_config_warnings(sd_bus *bus, const char *path, const char *interface,
                                        const char *property, sd_bus_message *reply, void *userdata,
                                        sd_bus_error *error) {
        Manager *m = ((Bus *) userdata)->manager;
        const ErrorList *w = &m->posture->config->warnings;

        return append_strings(reply, w->items, w->n);
}

/* Profiles: the [daemon] profile names of the configuration in effect, in the order read. */
static int property_get_profiles(sd_bus *bus, const char *path, const char *interface, const char *property,
                                 sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        Manager *m = ((Bus *) userdata)->manager;

        return append_strings(reply, m->posture->config->profiles, m->posture->config->n_profiles);
}

/* Condition, ConditionReasons, RebootRequired (condition.h). */
static int property_get_condition(sd_bus *bus, const char *path, const char *interface, const char *property,
                                  sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        Manager *m = ((Bus *) userdata)->manager;
        char **reasons = NULL;
        size_t n = 0;
        int c, r;

        if (streq(property, "RebootRequired"))
                return sd_bus_message_append(reply, "b", manager_reboot_required(m));
        if (streq(property, "Condition"))
                return sd_bus_message_append(reply, "s", condition_to_string(manager_condition(m, NULL)));
        c = manager_condition(m, &reasons);
        if (c < 0)
                return c;
        while (reasons[n])
                n++;
        r = append_strings(reply, reasons, n);
        for (size_t i = 0; i < n; i++)
                free(reasons[i]);
        free(reasons);
        return r;
}

/* LastReloadErrors: LastReloadError's lines, one error each. */
static int property_get_reload_errors(sd_bus *bus, const char *path, const char *interface, const char *property,
                                      sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        Manager *m = ((Bus *) userdata)->manager;
        int r;

        r = sd_bus_message_open_container(reply, 'a', "s");
        for (const char *p = m->last_reload_error; r >= 0 && !isempty(p);) {
                size_t len = strcspn(p, "\n");
                _cleanup_free_ char *line = strndup(p, len);

                _cleanup_free_ char *text = line ? utf8_escape(line) : NULL;

                r = text ? sd_bus_message_append(reply, "s", text) : -ENOMEM;
                p += len;
                p += *p == '\n';
        }
        if (r < 0)
                return r;
        return sd_bus_message_close_container(reply);
}

static int property_get_counter(sd_bus *bus, const char *path, const char *interface, const char *property,
                                sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        Manager *m = ((Bus *) userdata)->manager;
        uint64_t v = 0;

        if (streq(property, "DriftEvents"))
                v = m->rc.counters.drift_events;
        else if (streq(property, "Corrections"))
                v = m->rc.counters.corrections;
        else if (streq(property, "Failures"))
                v = m->rc.counters.failures;
        else if (streq(property, "AppliedSettings"))
                v = m->rc.counters.applied;
        else if (streq(property, "Fights"))
                v = m->rc.counters.fights;
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
        Manager *m = ((Bus *) userdata)->manager;
        uint32_t v = streq(property, "Settings")         ? (uint32_t) m->table.n
                     : streq(property, "RestoreSkipped") ? m->restore_skipped
                                                         : settings_not_ok(m);
        return sd_bus_message_append(reply, "u", v);
}

/* NoiseGate and NoiseReads: how the scan reads the noise counters (lib/noise/gate.h). */
static int property_get_noise_gate(sd_bus *bus, const char *path, const char *interface, const char *property,
                                   sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        Manager *m = ((Bus *) userdata)->manager;
        return sd_bus_message_append(reply, "s", manager_noise_gate(m) ?: "");
}

static int property_get_noise_reads(sd_bus *bus, const char *path, const char *interface, const char *property,
                                    sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        const Noise *n = manager_noise_counters(((Bus *) userdata)->manager);
        return sd_bus_message_append(reply, "(tt)", n ? n->full_reads : 0, n ? n->gated_reads : 0);
}

static int property_get_dma_latency(sd_bus *bus, const char *path, const char *interface, const char *property,
                                    sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        Manager *m = ((Bus *) userdata)->manager;
        const Config *c = m->posture->config;
        return sd_bus_message_append(reply, "i", c->cpu_dma_latency_enabled ? (int32_t) c->cpu_dma_latency_usec : -1);
}

/* CpuDmaLatencyUSec is the request asked for; whether it is held is apart: observe mode
 * only reads the device, and then the system's own value is what a reader needs. */
static int property_get_dma_latency_status(sd_bus *bus, const char *path, const char *interface,
                                           const char *property, sd_bus_message *reply, void *userdata,
                                           sd_bus_error *error) {
        DmaLatencyStatus st;

        table_dma_latency_status(&((Bus *) userdata)->manager->table, &st);
        if (streq(property, "CpuDmaLatencyHeld"))
                return sd_bus_message_append(reply, "b", st.held);
        return sd_bus_message_append(reply, "i", st.system_usec);
}

static int list_settings(Bus *b, sd_bus_message *message) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        Manager *m = b->manager;
        uint64_t now = now_usec(CLOCK_MONOTONIC);
        int r;

        r = sd_bus_message_new_method_return(message, &reply);
        if (r < 0)
                return r;
        /* Names as they are now, within BUS_NAMES_REFRESH_USEC: a driver may have
         * requested an IRQ since it appeared. */
        if (b->names_read_usec == 0 || now - b->names_read_usec >= BUS_NAMES_REFRESH_USEC) {
                (void) irq_table_refresh_names(&m->table, m->host);
                b->names_read_usec = now;
        }
        r = sd_bus_message_open_container(reply, 'a', "(ssssss)");
        for (size_t i = 0; r >= 0 && i < m->table.n; i++) {
                Setting *s = m->table.settings[i];
                char buf[4096];
                /* Host text (IRQ and interface names, sysfs values, comms): one row with a
                 * byte that is not UTF-8 would fail the whole reply. */
                _cleanup_free_ char *object = utf8_escape(s->object), *desired = utf8_escape(s->desired),
                                    *observed = utf8_escape(setting_describe_observed(s, &m->rc, buf, sizeof(buf)) ?: ""),
                                    *label = utf8_escape(s->label ?: "");
                if (!object || !desired || !observed || !label)
                        return -ENOMEM;
                r = sd_bus_message_append(reply, "(ssssss)", setting_kind_to_string(s->kind), object, desired, observed,
                                          setting_state_to_string(s->state), label);
        }
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}

/* The answer's CPU time is charged to the window it was admitted in: CPU, not wall time,
 * so that a busy host, which also delays the answer, does not spend the budget. */
static int method_list_settings(sd_bus_message *message, void *userdata, sd_bus_error *error) {
        Bus *b = userdata;
        uint64_t start = now_usec(CLOCK_THREAD_CPUTIME_ID);
        int r = bus_admit(b, message, error);

        if (r < 0)
                return r;
        r = list_settings(b, message);
        bus_limit_charge(&b->limit, now_usec(CLOCK_THREAD_CPUTIME_ID) - start);
        return r;
}

/* Noise(): the watched CPUs' counters, re-read now (at most every NOISE_REFRESH_USEC), with
 * the rates of the last scan interval. Counters at 0 are left out. */
static int noise(Bus *b, sd_bus_message *message) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        const Noise *n = manager_noise(b->manager);
        int r;

        r = sd_bus_message_new_method_return(message, &reply);
        if (r < 0)
                return r;
        r = sd_bus_message_append(reply, "tt", n ? n->sampled_usec : 0, n ? n->interval_usec : 0);
        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'a', "(ussstd)");
        for (size_t i = 0; r >= 0 && n && i < n->n_cpus; i++) {
                size_t it = 0;
                NoiseCounterRow *row;
                while (r >= 0 && (row = noise_next_row(n, &it))) {
                        const NoiseCell *c = &row->cells[i];
                        _cleanup_free_ char *source = NULL, *description = NULL;
                        if (!c->present || c->count == 0)
                                continue;
                        /* Kernel text: D-Bus strings must be valid UTF-8. */
                        source = utf8_escape(row->source);
                        description = utf8_escape(row->description);
                        if (!source || !description)
                                return -ENOMEM;
                        r = sd_bus_message_append(reply, "(ussstd)", n->cpus[i], noise_kind_to_string(row->kind),
                                                  source, description, c->count, noise_cell_rate(n, c));
                }
        }
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}

static int method_noise(sd_bus_message *message, void *userdata, sd_bus_error *error) {
        Bus *b = userdata;
        uint64_t start = now_usec(CLOCK_THREAD_CPUTIME_ID);
        int r = bus_admit(b, message, error);

        if (r < 0)
                return r;
        r = noise(b, message);
        bus_limit_charge(&b->limit, now_usec(CLOCK_THREAD_CPUTIME_ID) - start);
        return r;
}

static int method_check(sd_bus_message *message, void *userdata, sd_bus_error *error) {
        Bus *b = userdata;
        int r = bus_admit(b, message, error);

        if (r < 0)
                return r;
        /* Off the event loop: any user may call this, and the audit takes milliseconds. The
         * answers are built on the loop when it ends, one per caller: the limit counts
         * them, whatever share of the audit they wait for. */
        return check_job_submit(&b->check_job, b->manager, message);
}

static int method_reload(sd_bus_message *message, void *userdata, sd_bus_error *error) {
        Manager *m = ((Bus *) userdata)->manager;

        int r = manager_reload(m);

        if (r == -EINVAL || r == -ENOENT) /* a missing file is no valid configuration either */
                return sd_bus_error_set(error, "org.lowlatd1.Error.InvalidConfig",
                                        m->last_reload_error ?: "invalid configuration");
        if (r < 0)
                return sd_bus_error_set_errnof(error, r, "Reload failed: %s", m->last_reload_error ?: strerror(-r));
        return sd_bus_reply_method_return(message, NULL);
}

static int method_restore(sd_bus_message *message, void *userdata, sd_bus_error *error) {
        Manager *m = ((Bus *) userdata)->manager;
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
        manager_reapply(((Bus *) userdata)->manager);
        return sd_bus_reply_method_return(message, NULL);
}

/* Diff()'s answer: host text (IRQ names, sysfs values) escaped as ListSettings escapes it. */
static int append_diff(sd_bus_message *reply, const Diff *d) {
        int r = sd_bus_message_append(reply, "tb", d->digest, d->writes);

        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'a', "(sss)");
        for (size_t i = 0; r >= 0 && i < d->n_keys; i++) {
                _cleanup_free_ char *key = utf8_escape(d->keys[i].key), *was = utf8_escape(d->keys[i].was ?: ""),
                                    *will = utf8_escape(d->keys[i].will ?: "");
                if (!key || !was || !will)
                        return -ENOMEM;
                r = sd_bus_message_append(reply, "(sss)", key, was, will);
        }
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'a', "(ssssssss)");
        for (size_t i = 0; r >= 0 && i < d->n_rows; i++) {
                const DiffRow *row = &d->rows[i];
                _cleanup_free_ char *object = utf8_escape(row->object), *was = utf8_escape(row->was ?: ""),
                                    *will = utf8_escape(row->will ?: ""), *now = utf8_escape(row->now ?: ""),
                                    *why = utf8_escape(row->why ?: "");
                if (!object || !was || !will || !now || !why)
                        return -ENOMEM;
                r = sd_bus_message_append(reply, "(ssssssss)", diff_change_to_string(row->change),
                                          diff_effect_to_string(row->effect), setting_kind_to_string(row->kind), object,
                                          was, will, now, why);
        }
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        if (r >= 0)
                r = sd_bus_message_append_strv(reply, d->warnings.items ?: (char *[]) { NULL });
        return r;
}

/* Privileged, as Reload: it parses text a caller wrote, and its answer holds the host's
 * values of whatever [sysfs] paths that text names, root-only files included. */
static int method_diff(sd_bus_message *message, void *userdata, sd_bus_error *error) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(diff_done) Diff d = {};
        _cleanup_free_ char *why = NULL;
        Manager *m = ((Bus *) userdata)->manager;
        const char *text, *name;
        ConfigMainText main;
        int r;

        r = sd_bus_message_read(message, "ss", &text, &name);
        if (r < 0)
                return r;
        if (strlen(text) > BUS_DIFF_TEXT_MAX)
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS, "The configuration text is longer than %u bytes",
                                         (unsigned) BUS_DIFF_TEXT_MAX);
        main = (ConfigMainText) { isempty(text) ? NULL : text, isempty(name) ? "(the text given)" : name };
        r = manager_diff(m, &main, &d, &why);
        if (r == -EINVAL || r == -ENOENT)
                return sd_bus_error_set(error, "org.lowlatd1.Error.InvalidConfig", why ?: "invalid configuration");
        if (r < 0)
                return sd_bus_error_set_errnof(error, r, "Diff failed: %s", why ?: strerror(-r));
        r = sd_bus_message_new_method_return(message, &reply);
        if (r >= 0)
                r = append_diff(reply, &d);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}

static int method_reload_if_unchanged(sd_bus_message *message, void *userdata, sd_bus_error *error) {
        Manager *m = ((Bus *) userdata)->manager;
        uint64_t digest;
        int r;

        r = sd_bus_message_read(message, "t", &digest);
        if (r < 0)
                return r;
        r = manager_reload_if_unchanged(m, digest);
        if (r == -ESTALE)
                return sd_bus_error_set(error, BUS_ERROR_CONFIG_CHANGED,
                                        m->last_refused_reload ?: "the configuration files changed since the diff");
        if (r == -EINVAL || r == -ENOENT)
                return sd_bus_error_set(error, "org.lowlatd1.Error.InvalidConfig",
                                        m->last_reload_error ?: "invalid configuration");
        if (r < 0)
                return sd_bus_error_set_errnof(error, r, "Reload failed: %s", m->last_reload_error ?: strerror(-r));
        return sd_bus_reply_method_return(message, NULL);
}

#define CHANGES SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE
static const sd_bus_vtable manager_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("Version", "s", property_get_string, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("Features", "as", property_get_features, 0, SD_BUS_VTABLE_PROPERTY_CONST),
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
        SD_BUS_PROPERTY("AppliedSettings", "t", property_get_counter, 0, CHANGES),
        SD_BUS_PROPERTY("Fights", "t", property_get_counter, 0, CHANGES),
        SD_BUS_PROPERTY("CpuDmaLatencyUSec", "i", property_get_dma_latency, 0, CHANGES),
        SD_BUS_PROPERTY("CpuDmaLatencyHeld", "b", property_get_dma_latency_status, 0, CHANGES),
        SD_BUS_PROPERTY("CpuDmaLatencySystemUSec", "i", property_get_dma_latency_status, 0, CHANGES),
        /* Not announced: NoiseReads changes at every scan. */
        SD_BUS_PROPERTY("NoiseGate", "s", property_get_noise_gate, 0, 0),
        SD_BUS_PROPERTY("NoiseReads", "(tt)", property_get_noise_reads, 0, 0),
        SD_BUS_PROPERTY("NoiseCPUs", "s", property_get_string, 0, CHANGES),
        /* Not announced either: it is found out at a scan, as NoiseReads counts. */
        SD_BUS_PROPERTY("NoiseUnreadable", "s", property_get_string, 0, 0),
        SD_BUS_PROPERTY("Settings", "u", property_get_uint32, 0, CHANGES),
        SD_BUS_PROPERTY("SettingsNotOk", "u", property_get_uint32, 0, CHANGES),
        SD_BUS_PROPERTY("LastReloadErrors", "as", property_get_reload_errors, 0, CHANGES),
        SD_BUS_PROPERTY("ConfigWarnings", "as", property_get_config_warnings, 0, CHANGES),
        SD_BUS_PROPERTY("Profiles", "as", property_get_profiles, 0, CHANGES),
        SD_BUS_PROPERTY("Condition", "s", property_get_condition, 0, CHANGES),
        SD_BUS_PROPERTY("ConditionReasons", "as", property_get_condition, 0, CHANGES),
        SD_BUS_PROPERTY("RebootRequired", "b", property_get_condition, 0, CHANGES),
        SD_BUS_METHOD_WITH_ARGS("ListSettings", SD_BUS_NO_ARGS,
                                SD_BUS_RESULT("a(ssssss)", settings),
                                method_list_settings, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Check", SD_BUS_NO_ARGS, SD_BUS_RESULT("a(ssssas)", findings), method_check,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Noise", SD_BUS_NO_ARGS,
                                SD_BUS_RESULT("t", sampled_usec, "t", interval_usec, "a(ussstd)", sources),
                                method_noise, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD("Reload", "", "", method_reload, 0),
        SD_BUS_METHOD("Reapply", "", "", method_reapply, 0),
        SD_BUS_METHOD_WITH_ARGS("Diff", SD_BUS_ARGS("s", text, "s", name),
                                SD_BUS_RESULT("t", digest, "b", writes, "a(sss)", keys, "a(ssssssss)", settings, "as",
                                              warnings),
                                method_diff, 0),
        SD_BUS_METHOD_WITH_ARGS("ReloadIfUnchanged", SD_BUS_ARGS("t", digest), SD_BUS_NO_RESULT,
                                method_reload_if_unchanged, 0),
        SD_BUS_METHOD_WITH_ARGS("Restore", SD_BUS_NO_ARGS, SD_BUS_RESULT("u", restored), method_restore, 0),
        /* Not announced: set by Restore() before its reply, which is when a client reads it. */
        SD_BUS_PROPERTY("RestoreSkipped", "u", property_get_uint32, 0, 0),
        SD_BUS_SIGNAL_WITH_ARGS("Drift",
                                SD_BUS_ARGS("s", kind, "s", object, "s", expected, "s", observed, "b", corrected),
                                0),
        SD_BUS_VTABLE_END,
};

static void bus_schedule_retry(Bus *b);
static void bus_flush_changes(Bus *b);
static bool bus_watch_socket(Bus *b);

static int on_bus_disconnected(sd_bus_message *message, void *userdata, sd_bus_error *error) {
        Bus *b = userdata;

        log_warning("Lost the system bus; still enforcing, reconnecting");
        b->bus = sd_bus_flush_close_unref(b->bus);
        b->retry_usec = BUS_RETRY_MIN_USEC;
        b->failure_logged = true; /* said above */
        (void) bus_watch_socket(b);
        bus_schedule_retry(b);
        return 0;
}

/* Connects and serves: the vtables, the name, the event loop. Not lowlatctl's
 * ctl_bus_connect(), which only calls out and keeps sd-bus's default 25 s timeout. */
static int bus_publish(Bus *b) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        int r;

        r = sd_bus_open_system(&bus);
        if (r < 0)
                return r;
        (void) sd_bus_set_exit_on_disconnect(bus, false);
        /* A hung bus must not hold up READY=1 for the default 25 s. */
        (void) sd_bus_set_method_call_timeout(bus, 5 * USEC_PER_SEC);
        r = sd_bus_add_object_vtable(bus, NULL, BUS_PATH, BUS_INTERFACE, manager_vtable, b);
        if (r < 0)
                return r;
        r = measurement_store_add_to_bus(b->measurement, bus);
        if (r < 0)
                return r;
        r = sd_bus_match_signal_async(bus, NULL, "org.freedesktop.DBus.Local", "/org/freedesktop/DBus/Local",
                                      "org.freedesktop.DBus.Local", "Disconnected", on_bus_disconnected, NULL, b);
        if (r < 0)
                return r;
        r = sd_bus_attach_event(bus, b->manager->event, SD_EVENT_PRIORITY_NORMAL);
        if (r < 0)
                return r;
        /* Synchronous, so a failure (the policy refuses us, the bus is not there) is known
         * here and retried rather than lost in an async reply. */
        r = sd_bus_request_name(bus, BUS_NAME, 0);
        if (r < 0)
                return r;
        b->bus = TAKE_PTR(bus);
        return 0;
}

static int bus_try_connect(Bus *b);

static int on_bus_socket_created(sd_event_source *source, const struct inotify_event *event, void *userdata) {
        Bus *b = userdata;

        /* The watched directory removed or renamed away: a bus that comes back makes its
         * socket in whatever is at the path now, which this watch never sees. */
        bool gone = event->mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED);

        if (!gone && (!event->len || !streq(event->name, b->watched_name)))
                return 0;
        /* Watch the path afresh, at the level that exists now. */
        b->socket_watch = sd_event_source_disable_unref(b->socket_watch);
        if (b->bus)
                return 0;
        b->retry_usec = BUS_RETRY_FRESH_USEC;
        return bus_try_connect(b);
}

static int bus_watch_name_in(Bus *b, char *path) {
        char *slash = strrchr(path, '/');

        if (!slash || slash == path)
                return -EINVAL;
        *slash = '\0';
        free(b->watched_name);
        b->watched_name = strdup(slash + 1);
        if (!b->watched_name)
                return -ENOMEM;
        return sd_event_add_inotify(b->manager->event, &b->socket_watch, path,
                                    IN_CREATE | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR,
                                    on_bus_socket_created, b);
}

/* With a socket path, dbus-daemon (re)creating its socket is an event: no polling while
 * the bus is simply absent, and a restarted bus is found at once. The socket's directory
 * is watched; while it does not exist, its parent, for the directory to come back. */
static bool bus_watch_socket(Bus *b) {
        int r = -ENOENT;

        if (b->socket_watch)
                return true;
        /* A directory made between the look at it and the watch on its parent would never
         * be seen: look again once the parent is watched, and watch the directory itself
         * if it is there by then (it may come and go again: a few rounds at most). */
        for (unsigned round = 0; round < 3; round++) {
                _cleanup_free_ char *path = bus_address_socket_path(bus_system_address()), *dir = NULL;

                if (!path)
                        return false;
                r = bus_watch_name_in(b, path); /* path is now the directory */
                if (r != -ENOENT)
                        break;
                dir = strdup(path);
                if (!dir)
                        return false;
                r = bus_watch_name_in(b, path); /* the parent, for the directory's name */
                if (r < 0 || access(dir, F_OK) < 0)
                        break;
                b->socket_watch = sd_event_source_disable_unref(b->socket_watch);
                r = -ENOENT;
        }
        return r >= 0;
}

/* Whether the socket is there now: it may have been made between a failed connect and
 * the watch that would have seen it. */
static bool bus_socket_exists(void) {
        _cleanup_free_ char *path = bus_address_socket_path(bus_system_address());
        return path && access(path, F_OK) >= 0;
}

static int bus_try_connect(Bus *b) {
        bool watched;
        int r;

        r = bus_publish(b);
        if (r >= 0) {
                log_info("Connected to the system bus as %s", BUS_NAME);
                b->socket_watch = sd_event_source_disable_unref(b->socket_watch);
                b->failure_logged = false;
                b->retry_usec = BUS_RETRY_MIN_USEC;
                bus_flush_changes(b);
                return 0;
        }
        watched = bus_watch_socket(b);
        if (!b->failure_logged) {
                log_warning_errno(r, "Cannot publish %s on the system bus, %s", BUS_NAME,
                                  r == -ENOENT && watched ? "waiting for its socket" : "retrying with backoff");
                b->failure_logged = true;
        }
        /* A socket that is there but refuses (a dead daemon's leftover) needs polling; a
         * missing one will announce itself, unless it appeared before the watch did. */
        if (r == -ENOENT && watched) {
                if (bus_socket_exists())
                        bus_schedule_retry(b);
                return 0;
        }
        b->retry_usec = MIN(b->retry_usec * 2, BUS_RETRY_MAX_USEC);
        bus_schedule_retry(b);
        return 0;
}

static int on_bus_retry(sd_event_source *source, uint64_t usec, void *userdata) {
        return bus_try_connect(userdata);
}

static void bus_schedule_retry(Bus *b) {
        int r;

        if (!b->retry) {
                r = sd_event_add_time_relative(b->manager->event, &b->retry, CLOCK_MONOTONIC, b->retry_usec,
                                               USEC_PER_SEC / 4, on_bus_retry, b);
                if (r < 0)
                        log_warning_errno(r, "Cannot schedule a bus reconnect");
                return;
        }
        (void) sd_event_source_set_time_relative(b->retry, b->retry_usec);
        (void) sd_event_source_set_enabled(b->retry, SD_EVENT_ONESHOT);
}

static void bus_flush_changes(Bus *b) {
        Manager *m = b->manager;
        BusSnapshot now = {
                .state = manager_state(m),
                .condition = manager_condition(m, NULL),
                .reboot_required = manager_reboot_required(m),
                .drift_events = m->rc.counters.drift_events,
                .corrections = m->rc.counters.corrections,
                .failures = m->rc.counters.failures,
                .applied = m->rc.counters.applied,
                .fights = m->rc.counters.fights,
                .settings = (unsigned) m->table.n,
                .settings_not_ok = settings_not_ok(m),
                .reload_usec = m->last_reload_usec,
                .generation = m->posture_generation,
        };
        const BusSnapshot *was = &b->emitted;
        const char *names[32];
        size_t n = 0;

        table_dma_latency_status(&m->table, &now.dma);
        if (!b->bus) {
                b->emitted = now;
                return;
        }
        if (now.dma.held != was->dma.held)
                names[n++] = "CpuDmaLatencyHeld";
        if (now.dma.system_usec != was->dma.system_usec)
                names[n++] = "CpuDmaLatencySystemUSec";
        if (now.state != was->state)
                names[n++] = "State";
        if (now.condition != was->condition)
                names[n++] = "Condition";
        /* The reasons name settings and counts: invalidated with anything they are made of. */
        if (now.condition != was->condition || now.settings_not_ok != was->settings_not_ok ||
            now.fights != was->fights || now.generation != was->generation)
                names[n++] = "ConditionReasons";
        if (now.reboot_required != was->reboot_required)
                names[n++] = "RebootRequired";
        if (now.drift_events != was->drift_events)
                names[n++] = "DriftEvents";
        if (now.corrections != was->corrections)
                names[n++] = "Corrections";
        if (now.failures != was->failures)
                names[n++] = "Failures";
        if (now.applied != was->applied)
                names[n++] = "AppliedSettings";
        if (now.fights != was->fights)
                names[n++] = "Fights";
        if (now.settings != was->settings)
                names[n++] = "Settings";
        if (now.settings_not_ok != was->settings_not_ok)
                names[n++] = "SettingsNotOk";
        if (now.reload_usec != was->reload_usec) {
                names[n++] = "LastReloadUSec";
                names[n++] = "LastReloadError";
                names[n++] = "LastReloadErrors";
        }
        if (now.generation != was->generation) {
                names[n++] = "Mode";
                names[n++] = "IsolatedCPUs";
                names[n++] = "HousekeepingCPUs";
                names[n++] = "ConfigFiles";
                names[n++] = "CpuDmaLatencyUSec";
                names[n++] = "NoiseCPUs";
                names[n++] = "ConfigWarnings";
                names[n++] = "Profiles";
        }
        names[n] = NULL;
        b->emitted = now;
        if (n > 0)
                (void) sd_bus_emit_properties_changed_strv(b->bus, BUS_PATH, BUS_INTERFACE, (char **) names);
}

static void on_manager_changed(void *userdata) {
        bus_flush_changes(userdata);
}

static void on_manager_drift(void *userdata, const Setting *s, const char *observed, bool corrected) {
        Bus *b = userdata;

        if (!b->bus)
                return;
        _cleanup_free_ char *object = utf8_escape(s->object), *desired = utf8_escape(s->desired),
                            *obs = utf8_escape(observed ?: "");
        if (!object || !desired || !obs)
                return;
        (void) sd_bus_emit_signal(b->bus, BUS_PATH, BUS_INTERFACE, "Drift", "ssssb", setting_kind_to_string(s->kind),
                                  object, desired, obs, corrected);
}

int bus_new(Manager *m, Bus **ret) {
        Bus *b = calloc(1, sizeof(Bus));

        if (!b)
                return -ENOMEM;
        b->manager = m;
        b->retry_usec = BUS_RETRY_MIN_USEC;
        if (measurement_store_new(&b->measurement) < 0) {
                free(b);
                return -ENOMEM;
        }
        m->listener = (ManagerListener) { on_manager_changed, on_manager_drift, b };
        (void) bus_try_connect(b);
        *ret = b;
        return 0;
}

Bus *bus_free(Bus *b) {
        if (!b)
                return NULL;
        b->manager->listener = (ManagerListener) {};
        check_job_abandon(&b->check_job);
        sd_event_source_disable_unref(b->retry);
        sd_event_source_disable_unref(b->socket_watch);
        free(b->watched_name);
        sd_bus_flush_close_unref(b->bus);
        bus_limit_clear(&b->limit);
        measurement_store_free(b->measurement);
        free(b);
        return NULL;
}
