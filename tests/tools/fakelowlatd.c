/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A lowlatd of another version on a private system bus, for lowlatctl's compatibility
 * tests: it owns org.lowlatd1 and serves org.lowlatd1.Manager at /org/lowlatd1 with the
 * members of this build's lowlatd (tests/integration/test_compat.py checks them against
 * the real daemon's introspection), from a fixed state:
 *   fakelowlatd [--version V] [--without MEMBER]... [--newer]
 *   --version V       the Version property (default "0.0.0-fake")
 *   --without MEMBER  a method or property taken away, as a lowlatd from before it; the
 *                     Features property then leaves out the features that member shows
 *   --newer           as a lowlatd from after this build, within lowlatd(8)'s
 *                     COMPATIBILITY: a method Frobnicate(), a property Colour, a feature
 *                     "time-travel", and a field more ("s") at the end of every struct of
 *                     ListSettings, Check and Noise
 * The state: enforcing, CPUs 2-3 isolated, two settings (a sysctl ok, an IRQ drifted),
 * one audit finding with two detail lines, one noise source on CPU 2. Reload, Reapply,
 * Restore, RecordMeasurement, RecordMeasurementHistogram, Diff and ReloadIfUnchanged are
 * privileged, as lowlatd's are, and do nothing (Diff answers that nothing would change) but
 * say on standard error that they were called.
 * It prints READY when it owns the name. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "bus-features.h"
#include "bus-names.h"
#include "measurement-signature.h"
#include "basic/macro.h"
#include "basic/util.h"

#define WITHOUT_MAX 32

typedef struct Fake {
        const char *version;
        const char *without[WITHOUT_MAX];
        size_t n_without;
        bool newer;
} Fake;

static bool fake_lacks(const Fake *f, const char *member) {
        for (size_t i = 0; i < f->n_without; i++)
                if (streq(f->without[i], member))
                        return true;
        return false;
}

static int get_string(sd_bus *bus, const char *path, const char *interface, const char *property,
                      sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        static const struct {
                const char *name, *value;
        } values[] = {
                { "Mode", "enforce" },        { "State", "enforcing" },     { "IsolatedCPUs", "2-3" },
                { "HousekeepingCPUs", "0-1" }, { "LastReloadError", "" },    { "NoiseGate", "off: fakelowlatd" },
                { "NoiseCPUs", "2-3" },       { "NoiseUnreadable", "" },    { "Colour", "octarine" },
                { "Condition", "degraded" },
        };
        const Fake *f = userdata;

        if (streq(property, "Version"))
                return sd_bus_message_append(reply, "s", f->version);
        for (size_t i = 0; i < ELEMENTSOF(values); i++)
                if (streq(property, values[i].name))
                        return sd_bus_message_append(reply, "s", values[i].value);
        return -ENOENT;
}

/* As the fake's one drifted IRQ would make it, were it fighting. */
static int get_condition_reasons(sd_bus *bus, const char *path, const char *interface, const char *property,
                                 sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        return sd_bus_message_append(reply, "as", 1, "another writer fights lowlatd over 1 setting: IRQ 24 (eth0-TxRx-0)");
}

static int get_number(sd_bus *bus, const char *path, const char *interface, const char *property,
                      sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        if (streq(property, "CpuDmaLatencyUSec") || streq(property, "CpuDmaLatencySystemUSec"))
                return sd_bus_message_append(reply, "i", (int32_t) 0);
        if (streq(property, "CpuDmaLatencyHeld"))
                return sd_bus_message_append(reply, "b", 1);
        if (streq(property, "RebootRequired"))
                return sd_bus_message_append(reply, "b", 0);
        if (streq(property, "Settings"))
                return sd_bus_message_append(reply, "u", (uint32_t) 2);
        if (streq(property, "SettingsNotOk"))
                return sd_bus_message_append(reply, "u", (uint32_t) 1);
        /* DriftEvents, Corrections, ...: one each, and no reload yet. */
        return sd_bus_message_append(reply, "t", (uint64_t) (streq(property, "LastReloadUSec") ? 0 : 1));
}

static int get_config_files(sd_bus *bus, const char *path, const char *interface, const char *property,
                            sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        return sd_bus_message_append(reply, "as", 1, "/etc/lowlatd/lowlatd.conf");
}

static int get_features(sd_bus *bus, const char *path, const char *interface, const char *property,
                        sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        const Fake *f = userdata;
        int r;

        r = sd_bus_message_open_container(reply, 'a', "s");
        for (BusFeature k = 0; r >= 0 && k < _BUS_FEATURE_MAX; k++) {
                const char *member = bus_feature_member(k);
                if (!member || !fake_lacks(f, member))
                        r = sd_bus_message_append(reply, "s", bus_feature_to_string(k));
        }
        if (r >= 0 && f->newer)
                r = sd_bus_message_append(reply, "s", "time-travel");
        if (r < 0)
                return r;
        return sd_bus_message_close_container(reply);
}

static int get_noise_reads(sd_bus *bus, const char *path, const char *interface, const char *property,
                           sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        return sd_bus_message_append(reply, "(tt)", (uint64_t) 3, (uint64_t) 0);
}

static int get_last_measurement(sd_bus *bus, const char *path, const char *interface, const char *property,
                                sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        return sd_bus_message_append(reply, "(" MEASUREMENT_SIGNATURE ")", "", (uint64_t) 0, (uint64_t) 0, 0, 0);
}

static int get_last_measurement_histogram(sd_bus *bus, const char *path, const char *interface,
                                          const char *property, sd_bus_message *reply, void *userdata,
                                          sd_bus_error *error) {
        return sd_bus_message_append(reply, "(" MEASUREMENT_HISTOGRAM_SIGNATURE ")", (uint64_t) 0, 0);
}

/* Replies with prefix_types' two numbers (if any) and an array of n structs of fields, each
 * with a field more for --newer. */
static int reply_rows(sd_bus_message *call, const Fake *f, const char *prefix_types, const char *fields,
                      int (*append_row)(sd_bus_message *m, size_t i), size_t n) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_free_ char *row = strdup_printf("%s%s", fields, f->newer ? "s" : "");
        _cleanup_free_ char *element = strdup_printf("(%s)", row ?: "");
        int r;

        if (!row || !element)
                return -ENOMEM;
        r = sd_bus_message_new_method_return(call, &reply);
        if (r >= 0 && prefix_types)
                r = sd_bus_message_append(reply, prefix_types, (uint64_t) 1000000, (uint64_t) 1000000);
        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'a', element);
        for (size_t i = 0; r >= 0 && i < n; i++) {
                r = sd_bus_message_open_container(reply, 'r', row);
                if (r >= 0)
                        r = append_row(reply, i);
                if (r >= 0 && f->newer)
                        r = sd_bus_message_append(reply, "s", "from the future");
                if (r >= 0)
                        r = sd_bus_message_close_container(reply);
        }
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}

static int setting_row(sd_bus_message *m, size_t i) {
        return i == 0 ? sd_bus_message_append(m, "ssssss", "sysctl", "net.core.somaxconn", "8192", "8192", "ok", "")
                      : sd_bus_message_append(m, "ssssss", "irq_affinity", "24", "0-1", "0-3", "drifted",
                                              "eth0-TxRx-0");
}

static int finding_row(sd_bus_message *m, size_t i) {
        return sd_bus_message_append(m, "ssssas", "warning", "power.governor", "cpu2-3",
                                     "CPUs 2-3 run the powersave governor", 2, "cpu2", "cpu3");
}

static int noise_row(sd_bus_message *m, size_t i) {
        return sd_bus_message_append(m, "ussstd", (uint32_t) 2, "irq", "24", "eth0-TxRx-0", (uint64_t) 42, 1.5);
}

static int method_list_settings(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        return reply_rows(m, userdata, NULL, "ssssss", setting_row, 2);
}

static int method_check(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        return reply_rows(m, userdata, NULL, "ssssas", finding_row, 1);
}

static int method_noise(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        return reply_rows(m, userdata, "tt", "ussstd", noise_row, 1);
}

static int method_nothing(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        /* To standard error, which the tests keep: whether a client called it at all. */
        fprintf(stderr, "fakelowlatd: %s() called\n", sd_bus_message_get_member(m));
        return sd_bus_reply_method_return(m, NULL);
}

/* No key, no setting: the files are those in force. */
static int method_diff(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        return sd_bus_reply_method_return(m, "tba(sss)a(ssssssss)as", (uint64_t) 0x0123456789abcdef, 1, 0, 0, 0);
}

static int method_restore(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        return sd_bus_reply_method_return(m, "u", (uint32_t) 0);
}

#define CONST SD_BUS_VTABLE_PROPERTY_CONST
#define CHANGES SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE
#define ANYONE SD_BUS_VTABLE_UNPRIVILEGED
/* lowlatd's members, then --newer's. */
static const sd_bus_vtable full_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("Version", "s", get_string, 0, CONST),
        SD_BUS_PROPERTY("Features", "as", get_features, 0, CONST),
        SD_BUS_PROPERTY("Mode", "s", get_string, 0, CHANGES),
        SD_BUS_PROPERTY("State", "s", get_string, 0, CHANGES),
        SD_BUS_PROPERTY("IsolatedCPUs", "s", get_string, 0, CHANGES),
        SD_BUS_PROPERTY("HousekeepingCPUs", "s", get_string, 0, CHANGES),
        SD_BUS_PROPERTY("ConfigFiles", "as", get_config_files, 0, CHANGES),
        SD_BUS_PROPERTY("LastReloadUSec", "t", get_number, 0, CHANGES),
        SD_BUS_PROPERTY("LastReloadError", "s", get_string, 0, CHANGES),
        SD_BUS_PROPERTY("Condition", "s", get_string, 0, CHANGES),
        SD_BUS_PROPERTY("ConditionReasons", "as", get_condition_reasons, 0, CHANGES),
        SD_BUS_PROPERTY("RebootRequired", "b", get_number, 0, CHANGES),
        SD_BUS_PROPERTY("DriftEvents", "t", get_number, 0, CHANGES),
        SD_BUS_PROPERTY("Corrections", "t", get_number, 0, CHANGES),
        SD_BUS_PROPERTY("Failures", "t", get_number, 0, CHANGES),
        SD_BUS_PROPERTY("AppliedSettings", "t", get_number, 0, CHANGES),
        SD_BUS_PROPERTY("Fights", "t", get_number, 0, CHANGES),
        SD_BUS_PROPERTY("CpuDmaLatencyUSec", "i", get_number, 0, CHANGES),
        SD_BUS_PROPERTY("CpuDmaLatencyHeld", "b", get_number, 0, CHANGES),
        SD_BUS_PROPERTY("CpuDmaLatencySystemUSec", "i", get_number, 0, CHANGES),
        SD_BUS_PROPERTY("NoiseGate", "s", get_string, 0, 0),
        SD_BUS_PROPERTY("NoiseReads", "(tt)", get_noise_reads, 0, 0),
        SD_BUS_PROPERTY("NoiseCPUs", "s", get_string, 0, CHANGES),
        SD_BUS_PROPERTY("NoiseUnreadable", "s", get_string, 0, 0),
        SD_BUS_PROPERTY("Settings", "u", get_number, 0, CHANGES),
        SD_BUS_PROPERTY("SettingsNotOk", "u", get_number, 0, CHANGES),
        SD_BUS_PROPERTY("LastMeasurement", "(" MEASUREMENT_SIGNATURE ")", get_last_measurement, 0, CHANGES),
        SD_BUS_METHOD("ListSettings", "", "a(ssssss)", method_list_settings, ANYONE),
        SD_BUS_METHOD("Check", "", "a(ssssas)", method_check, ANYONE),
        SD_BUS_METHOD("Noise", "", "tta(ussstd)", method_noise, ANYONE),
        SD_BUS_METHOD("Reload", "", "", method_nothing, 0),
        SD_BUS_METHOD("Reapply", "", "", method_nothing, 0),
        SD_BUS_METHOD("Restore", "", "u", method_restore, 0),
        SD_BUS_METHOD("RecordMeasurement", MEASUREMENT_SIGNATURE, "", method_nothing, 0),
        SD_BUS_PROPERTY("LastMeasurementHistogram", "(" MEASUREMENT_HISTOGRAM_SIGNATURE ")",
                        get_last_measurement_histogram, 0, CHANGES),
        SD_BUS_METHOD("RecordMeasurementHistogram", "ta" MEASUREMENT_HISTOGRAM_CPU_SIGNATURE, "", method_nothing, 0),
        SD_BUS_METHOD_WITH_ARGS("Diff", SD_BUS_ARGS("s", text, "s", name),
                                SD_BUS_RESULT("t", digest, "b", writes, "a(sss)", keys, "a(ssssssss)", settings, "as",
                                              warnings),
                                method_diff, 0),
        SD_BUS_METHOD_WITH_ARGS("ReloadIfUnchanged", SD_BUS_ARGS("t", digest), SD_BUS_NO_RESULT, method_nothing, 0),
        SD_BUS_SIGNAL("Drift", "ssssb", 0),
        /* --newer */
        SD_BUS_PROPERTY("Colour", "s", get_string, 0, CONST),
        SD_BUS_METHOD("Frobnicate", "", "", method_nothing, ANYONE),
        SD_BUS_VTABLE_END,
};

static const char *vtable_member(const sd_bus_vtable *v) {
        switch (v->type) {
        case _SD_BUS_VTABLE_METHOD:
                return v->x.method.member;
        case _SD_BUS_VTABLE_PROPERTY:
        case _SD_BUS_VTABLE_WRITABLE_PROPERTY:
                return v->x.property.member;
        case _SD_BUS_VTABLE_SIGNAL:
                return v->x.signal.member;
        default:
                return NULL;
        }
}

/* full_vtable less the members taken away (and, unless --newer, the newer ones), with the
 * struct signatures --newer has grown. */
static sd_bus_vtable *fake_vtable(const Fake *f) {
        sd_bus_vtable *v = calloc(ELEMENTSOF(full_vtable), sizeof(sd_bus_vtable));
        size_t n = 0;

        if (!v)
                return NULL;
        for (size_t i = 0; i < ELEMENTSOF(full_vtable); i++) {
                const char *member = vtable_member(&full_vtable[i]);

                if (member && (fake_lacks(f, member) || (!f->newer && (streq(member, "Colour") ||
                                                                       streq(member, "Frobnicate")))))
                        continue;
                v[n] = full_vtable[i];
                if (f->newer && member && streq(member, "ListSettings"))
                        v[n].x.method.result = "a(sssssss)";
                if (f->newer && member && streq(member, "Check"))
                        v[n].x.method.result = "a(ssssass)";
                if (f->newer && member && streq(member, "Noise"))
                        v[n].x.method.result = "tta(ussstds)";
                n++;
        }
        return v;
}

static int parse_arguments(int argc, char *argv[], Fake *f) {
        static const struct option options[] = {
                { "version", required_argument, NULL, 'v' },
                { "without", required_argument, NULL, 'w' },
                { "newer", no_argument, NULL, 'n' },
                {},
        };
        int c;

        *f = (Fake) { .version = "0.0.0-fake" };
        while ((c = getopt_long(argc, argv, "", options, NULL)) >= 0)
                if (c == 'v')
                        f->version = optarg;
                else if (c == 'w' && f->n_without < WITHOUT_MAX)
                        f->without[f->n_without++] = optarg;
                else if (c == 'n')
                        f->newer = true;
                else
                        return -EINVAL;
        return optind == argc ? 0 : -EINVAL;
}

int main(int argc, char *argv[]) {
        _cleanup_(sd_event_unrefp) sd_event *event = NULL;
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_free_ sd_bus_vtable *vtable = NULL;
        Fake f;
        int r;

        if (parse_arguments(argc, argv, &f) < 0) {
                fprintf(stderr, "usage: fakelowlatd [--version V] [--without MEMBER]... [--newer]\n");
                return 2;
        }
        vtable = fake_vtable(&f);
        r = vtable ? sd_event_default(&event) : -ENOMEM;
        if (r >= 0)
                r = sd_bus_open_system(&bus);
        if (r >= 0)
                r = sd_bus_add_object_vtable(bus, NULL, BUS_PATH, BUS_INTERFACE, vtable, &f);
        if (r >= 0)
                r = sd_bus_request_name(bus, BUS_NAME, 0);
        if (r >= 0)
                r = sd_bus_attach_event(bus, event, SD_EVENT_PRIORITY_NORMAL);
        if (r < 0) {
                fprintf(stderr, "fakelowlatd: %s\n", strerror(-r));
                return 1;
        }
        printf("READY\n");
        fflush(stdout);
        r = sd_event_loop(event);
        return r < 0 ? 1 : 0;
}
