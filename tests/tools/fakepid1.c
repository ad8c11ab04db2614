/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A stand-in for PID 1's bus API on a private system bus, for the slice tests: it owns
 * org.freedesktop.systemd1 and answers the calls lowlatd makes, as systemd 252 does.
 *   fakepid1 ROOT UNIT[=CPULIST]...
 * Each unit gets an object at /org/freedesktop/systemd1/unit/ESCAPED with its type's
 * interface (Slice, Scope, Service) and the properties AllowedCPUs ("ay", empty: unset) and
 * ControlGroup ("/UNIT"). Manager.SetUnitProperties(s, b, a(sv)) takes AllowedCPUs only;
 * like systemd it writes ROOT/run/systemd/system.control/UNIT.d/50-AllowedCPUs.conf (for
 * runtime=true, through a temporary file and a rename) and ROOT/sys/fs/cgroup/UNIT/cpuset.cpus,
 * and sends PropertiesChanged once a client called Subscribe. Manager.Reload() sends
 * Reloading(true) and Reloading(false), as daemon-reload does.
 * The test drives it through org.lowlatd1.test.FakePid1 at /org/lowlatd1/test/fakepid1:
 *   Refuse(b)       refuse SetUnitProperties with AccessDenied from now on (or stop)
 *   Signals(b)      send PropertiesChanged or not (the inotify hints alone)
 *   Files(b)        write the drop-in and cpuset.cpus or not (with Signals(false): a change
 *                   only the scan, or a Reloading signal, can find)
 *   Drift(s, s)     another writer: set a unit's AllowedCPUs (a list, "" unsets), even
 *                   while refusing, with the files and the signal
 *   Calls() -> as   every SetUnitProperties so far: "UNIT runtime=yes AllowedCPUs=LIST"
 *   Subscribers() -> u  how many Subscribe calls it had
 * It prints READY when it owns the name. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "basic/cpuset.h"
#include "host/systemd-client.h"
#include "basic/util.h"

#define UNITS_MAX 16
#define CALLS_MAX 1024

typedef struct Unit {
        char *name;
        char *path;
        const char *interface;
        CPUSet cpus;
} Unit;

typedef struct Fake {
        const char *root;
        sd_bus *bus;
        Unit units[UNITS_MAX];
        size_t n_units;
        bool refuse, signals, files;
        unsigned subscribed;
        char *calls[CALLS_MAX];
        size_t n_calls;
} Fake;

static Unit *find_unit(Fake *f, const char *name) {
        for (size_t i = 0; i < f->n_units; i++)
                if (streq(f->units[i].name, name))
                        return &f->units[i];
        return NULL;
}

static int write_file(const char *path, const char *text) {
        FILE *o;
        char *dir = strdup(path);

        if (!dir)
                return -ENOMEM;
        for (char *p = dir + 1; *p; p++)
                if (*p == '/') {
                        *p = '\0';
                        (void) mkdir(dir, 0755);
                        *p = '/';
                }
        free(dir);
        o = fopen(path, "we");
        if (!o)
                return -errno;
        fputs(text, o);
        return fclose(o) == 0 ? 0 : -errno;
}

/* What systemd does when a unit's AllowedCPUs changes: a drop-in for a runtime change
 * (written aside and renamed into place), and the cgroup's cpuset.cpus. */
static void apply_files(Fake *f, Unit *u, bool runtime) {
        _cleanup_free_ char *list = cpuset_format_list(&u->cpus), *dropin = NULL, *tmp = NULL, *text = NULL,
                           *cg = NULL;
        const char *section = u->interface + strlen("org.freedesktop.systemd1.");

        if (!list)
                return;
        if (runtime) {
                dropin = strdup_printf("%s/run/systemd/system.control/%s.d/50-AllowedCPUs.conf", f->root, u->name);
                tmp = strdup_printf("%s.#tmp", dropin ?: "");
                text = strdup_printf("# This is a drop-in unit file extension, created via \"systemctl set-property\"\n"
                                     "# or an equivalent operation. Do not edit.\n[%s]\nAllowedCPUs=\nAllowedCPUs=%s\n",
                                     section, list);
                if (dropin && tmp && text && write_file(tmp, text) >= 0)
                        (void) rename(tmp, dropin);
        }
        cg = strdup_printf("%s/sys/fs/cgroup/%s/cpuset.cpus", f->root, u->name);
        if (cg)
                (void) write_file(cg, *list ? list : "\n");
}

static void set_cpus(Fake *f, Unit *u, const CPUSet *cpus, bool runtime) {
        cpuset_clear(&u->cpus);
        (void) cpuset_or(&u->cpus, cpus);
        if (f->files)
                apply_files(f, u, runtime);
        if (f->signals && f->subscribed)
                (void) sd_bus_emit_properties_changed(f->bus, u->path, u->interface, "AllowedCPUs", NULL);
}

static int get_allowed_cpus(sd_bus *bus, const char *path, const char *interface, const char *property,
                            sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        _cleanup_free_ uint8_t *bytes = NULL;
        Unit *u = userdata;
        size_t n;
        int r;

        r = cpuset_format_bytes(&u->cpus, &bytes, &n);
        if (r < 0)
                return r;
        return sd_bus_message_append_array(reply, 'y', bytes, n);
}

static int get_control_group(sd_bus *bus, const char *path, const char *interface, const char *property,
                             sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        _cleanup_free_ char *cg = strdup_printf("/%s", ((Unit *) userdata)->name);
        return cg ? sd_bus_message_append(reply, "s", cg) : -ENOMEM;
}

static const sd_bus_vtable unit_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("AllowedCPUs", "ay", get_allowed_cpus, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("ControlGroup", "s", get_control_group, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_VTABLE_END,
};

static int method_set_unit_properties(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        _cleanup_cpuset_ CPUSet cpus = CPUSET_EMPTY;
        _cleanup_free_ char *list = NULL;
        Fake *f = userdata;
        const char *name, *property;
        const void *bytes = NULL;
        bool seen = false;
        size_t n = 0;
        int runtime, r;
        Unit *u;

        r = sd_bus_message_read(m, "sb", &name, &runtime);
        if (r < 0)
                return r;
        if (f->refuse)
                return sd_bus_error_set(error, SD_BUS_ERROR_ACCESS_DENIED, "Access denied (fakepid1 was told to refuse)");
        u = find_unit(f, name);
        if (!u)
                return sd_bus_error_setf(error, "org.freedesktop.systemd1.NoSuchUnit", "Unit %s not found.", name);
        r = sd_bus_message_enter_container(m, 'a', "(sv)");
        if (r < 0)
                return r;
        while ((r = sd_bus_message_enter_container(m, 'r', "sv")) > 0) {
                r = sd_bus_message_read(m, "s", &property);
                if (r < 0)
                        return r;
                if (!streq(property, "AllowedCPUs"))
                        return sd_bus_error_setf(error, SD_BUS_ERROR_PROPERTY_READ_ONLY,
                                                 "Cannot set property %s, or unknown property.", property);
                r = sd_bus_message_enter_container(m, 'v', "ay");
                if (r >= 0)
                        r = sd_bus_message_read_array(m, 'y', &bytes, &n);
                if (r >= 0)
                        r = sd_bus_message_exit_container(m);
                if (r >= 0)
                        r = sd_bus_message_exit_container(m);
                if (r < 0)
                        return r;
                seen = true;
        }
        if (r < 0 || (r = sd_bus_message_exit_container(m)) < 0)
                return r;
        if (!seen)
                return sd_bus_error_set(error, SD_BUS_ERROR_INVALID_ARGS, "No property given");
        r = cpuset_parse_bytes(bytes, n, &cpus);
        if (r < 0)
                return sd_bus_error_set_errnof(error, r, "Bad AllowedCPUs");
        list = cpuset_format_list(&cpus);
        if (list && f->n_calls < CALLS_MAX)
                f->calls[f->n_calls++] = strdup_printf("%s runtime=%s AllowedCPUs=%s", name, runtime ? "yes" : "no", list);
        set_cpus(f, u, &cpus, runtime);
        return sd_bus_reply_method_return(m, NULL);
}

static int method_subscribe(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        ((Fake *) userdata)->subscribed++;
        return sd_bus_reply_method_return(m, NULL);
}

static int method_reload(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Fake *f = userdata;

        (void) sd_bus_emit_signal(f->bus, "/org/freedesktop/systemd1", "org.freedesktop.systemd1.Manager", "Reloading",
                                  "b", 1);
        (void) sd_bus_emit_signal(f->bus, "/org/freedesktop/systemd1", "org.freedesktop.systemd1.Manager", "Reloading",
                                  "b", 0);
        return sd_bus_reply_method_return(m, NULL);
}

static const sd_bus_vtable manager_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_METHOD("SetUnitProperties", "sba(sv)", "", method_set_unit_properties, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD("Subscribe", "", "", method_subscribe, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD("Reload", "", "", method_reload, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_SIGNAL("Reloading", "b", 0),
        SD_BUS_VTABLE_END,
};

/* Refuse(b), Signals(b), Files(b): one switch each. */
static int set_switch(sd_bus_message *m, bool *value) {
        int b, r = sd_bus_message_read(m, "b", &b);
        if (r < 0)
                return r;
        *value = b;
        return sd_bus_reply_method_return(m, NULL);
}

static int method_refuse(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        return set_switch(m, &((Fake *) userdata)->refuse);
}

static int method_signals(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        return set_switch(m, &((Fake *) userdata)->signals);
}

static int method_files(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        return set_switch(m, &((Fake *) userdata)->files);
}

static int method_drift(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        _cleanup_cpuset_ CPUSet cpus = CPUSET_EMPTY;
        Fake *f = userdata;
        const char *name, *list;
        Unit *u;
        int r;

        r = sd_bus_message_read(m, "ss", &name, &list);
        if (r < 0)
                return r;
        u = find_unit(f, name);
        if (!u || cpuset_parse_list(list, &cpus) < 0)
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS, "No unit %s or bad list '%s'", name, list);
        set_cpus(f, u, &cpus, true);
        return sd_bus_reply_method_return(m, NULL);
}

static int method_calls(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        Fake *f = userdata;
        int r;

        r = sd_bus_message_new_method_return(m, &reply);
        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'a', "s");
        for (size_t i = 0; r >= 0 && i < f->n_calls; i++)
                r = sd_bus_message_append(reply, "s", f->calls[i] ?: "?");
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        return r < 0 ? r : sd_bus_send(NULL, reply, NULL);
}

static int method_subscribers(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        return sd_bus_reply_method_return(m, "u", ((Fake *) userdata)->subscribed);
}

static const sd_bus_vtable test_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_METHOD("Refuse", "b", "", method_refuse, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD("Signals", "b", "", method_signals, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD("Files", "b", "", method_files, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD("Drift", "ss", "", method_drift, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD("Calls", "", "as", method_calls, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD("Subscribers", "", "u", method_subscribers, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_VTABLE_END,
};

int main(int argc, char *argv[]) {
        static Fake f = { .signals = true, .files = true };
        _cleanup_(sd_event_unrefp) sd_event *event = NULL;
        int r;

        if (argc < 3) {
                fprintf(stderr, "usage: fakepid1 ROOT UNIT[=CPULIST]...\n");
                return 2;
        }
        f.root = argv[1];
        for (int i = 2; i < argc && f.n_units < UNITS_MAX; i++) {
                Unit *u = &f.units[f.n_units];
                char *eq = strchr(argv[i], '=');

                u->name = eq ? strndup(argv[i], (size_t) (eq - argv[i])) : strdup(argv[i]);
                if (!u->name || !(u->interface = systemd_unit_interface(u->name)) ||
                    (eq && cpuset_parse_list(eq + 1, &u->cpus) < 0) ||
                    sd_bus_path_encode("/org/freedesktop/systemd1/unit", u->name, &u->path) < 0) {
                        fprintf(stderr, "fakepid1: bad unit '%s'\n", argv[i]);
                        return 2;
                }
                f.n_units++;
        }
        r = sd_event_default(&event);
        if (r >= 0)
                r = sd_bus_open_system(&f.bus);
        if (r >= 0)
                r = sd_bus_add_object_vtable(f.bus, NULL, "/org/freedesktop/systemd1", "org.freedesktop.systemd1.Manager",
                                             manager_vtable, &f);
        if (r >= 0)
                r = sd_bus_add_object_vtable(f.bus, NULL, "/org/lowlatd1/test/fakepid1", "org.lowlatd1.test.FakePid1",
                                             test_vtable, &f);
        for (size_t i = 0; r >= 0 && i < f.n_units; i++)
                r = sd_bus_add_object_vtable(f.bus, NULL, f.units[i].path, f.units[i].interface, unit_vtable,
                                             &f.units[i]);
        if (r >= 0)
                r = sd_bus_request_name(f.bus, "org.freedesktop.systemd1", 0);
        if (r >= 0)
                r = sd_bus_attach_event(f.bus, event, SD_EVENT_PRIORITY_NORMAL);
        if (r < 0) {
                fprintf(stderr, "fakepid1: %s\n", strerror(-r));
                return 1;
        }
        printf("READY\n");
        fflush(stdout);
        r = sd_event_loop(event);
        sd_bus_flush_close_unref(f.bus);
        return r < 0 ? 1 : 0;
}
