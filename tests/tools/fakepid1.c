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
 * Manager.StartTransientUnit(s, s, a(sv), a(sa(sv))) takes a slice with AllowedCPUs (and a
 * Description): a new unit, whose cgroup ROOT/sys/fs/cgroup/UNIT it makes with cpuset.cpus
 * and, as the kernel does, cpuset.cpus.partition reading "member"; a unit it knows already is
 * refused with UnitExists. StartUnit(s, s) makes a known unit's cgroup the same way, and
 * StopUnit(s, s) removes the cgroup, and the unit itself when it was transient (systemd
 * forgets a stopped transient unit).
 * The test drives it through org.lowlatd1.test.FakePid1 at /org/lowlatd1/test/fakepid1:
 *   Refuse(b)       refuse SetUnitProperties with AccessDenied from now on (or stop)
 *   Signals(b)      send PropertiesChanged or not (the inotify hints alone)
 *   Files(b)        write the drop-in and cpuset.cpus or not (with Signals(false): a change
 *                   only the scan, or a Reloading signal, can find)
 *   Drift(s, s)     another writer: set a unit's AllowedCPUs (a list, "" unsets), even
 *                   while refusing, with the files and the signal
 *   Stop(s)         stop a unit as StopUnit does, even while refusing (someone else's
 *                   systemctl stop)
 *   Partitions(b)   whether cgroups it makes have cpuset.cpus.partition (a kernel before
 *                   5.11 has none)
 *   Calls() -> as   every SetUnitProperties so far: "UNIT runtime=yes AllowedCPUs=LIST";
 *                   "StartTransientUnit UNIT AllowedCPUs=LIST", "StartUnit UNIT", "StopUnit UNIT"
 *   Subscribers() -> u  how many Subscribe calls it had
 *   Reads() -> u    how many times AllowedCPUs was read, all units together
 * It prints READY when it owns the name. */
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
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
        bool transient;
        sd_bus_slot *slot;
        unsigned reads; /* AllowedCPUs read over the bus */
} Unit;

typedef struct Fake {
        const char *root;
        sd_bus *bus;
        Unit units[UNITS_MAX];
        size_t n_units;
        bool refuse, signals, files, partitions;
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

static void record_call(Fake *f, char *call) {
        if (call && f->n_calls < CALLS_MAX)
                f->calls[f->n_calls++] = call;
        else
                free(call);
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

        u->reads++;
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
        if (list)
                record_call(f, strdup_printf("%s runtime=%s AllowedCPUs=%s", name, runtime ? "yes" : "no", list));
        set_cpus(f, u, &cpus, runtime);
        return sd_bus_reply_method_return(m, NULL);
}

/* The unit's cgroup, as the kernel shows a new child of the root once PID 1 made it. */
static int make_cgroup(Fake *f, Unit *u) {
        _cleanup_free_ char *list = cpuset_format_list(&u->cpus),
                           *cpus = strdup_printf("%s/sys/fs/cgroup/%s/cpuset.cpus", f->root, u->name),
                           *partition = strdup_printf("%s/sys/fs/cgroup/%s/cpuset.cpus.partition", f->root, u->name);
        int r;

        if (!list || !cpus || !partition)
                return -ENOMEM;
        r = write_file(cpus, *list ? list : "\n");
        if (r >= 0 && f->partitions)
                r = write_file(partition, "member\n");
        return r;
}

/* Gone at once, as rmdir of a cgroup is: moved aside, then emptied. */
static void remove_cgroup(Fake *f, Unit *u) {
        _cleanup_free_ char *path = strdup_printf("%s/sys/fs/cgroup/%s", f->root, u->name),
                           *dir = strdup_printf("%s/sys/fs/cgroup/.%s.gone", f->root, u->name);
        DIR *d = path && dir && rename(path, dir) >= 0 ? opendir(dir) : NULL;
        struct dirent *e;

        if (!d)
                return;
        while ((e = readdir(d)))
                if (e->d_name[0] != '.')
                        (void) unlinkat(dirfd(d), e->d_name, 0);
        closedir(d);
        (void) rmdir(dir);
}

/* StartTransientUnit's properties: AllowedCPUs and Description, nothing else. */
static int read_transient_properties(sd_bus_message *m, CPUSet *cpus, sd_bus_error *error) {
        const char *property, *description;
        const void *bytes = NULL;
        size_t n = 0;
        int r;

        r = sd_bus_message_enter_container(m, 'a', "(sv)");
        while (r >= 0 && (r = sd_bus_message_enter_container(m, 'r', "sv")) > 0) {
                r = sd_bus_message_read(m, "s", &property);
                if (r >= 0 && streq(property, "AllowedCPUs")) {
                        r = sd_bus_message_enter_container(m, 'v', "ay");
                        if (r >= 0)
                                r = sd_bus_message_read_array(m, 'y', &bytes, &n);
                        if (r >= 0)
                                r = cpuset_parse_bytes(bytes, n, cpus);
                } else if (r >= 0 && streq(property, "Description")) {
                        r = sd_bus_message_enter_container(m, 'v', "s");
                        if (r >= 0)
                                r = sd_bus_message_read(m, "s", &description);
                } else if (r >= 0)
                        return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS, "Unexpected property %s", property);
                if (r >= 0)
                        r = sd_bus_message_exit_container(m);
                if (r >= 0)
                        r = sd_bus_message_exit_container(m);
        }
        if (r >= 0)
                r = sd_bus_message_exit_container(m);
        return r;
}

static int method_start_transient_unit(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        _cleanup_cpuset_ CPUSet cpus = CPUSET_EMPTY;
        _cleanup_free_ char *list = NULL;
        Fake *f = userdata;
        const char *name, *mode;
        Unit *u;
        int r;

        r = sd_bus_message_read(m, "ss", &name, &mode);
        if (r < 0)
                return r;
        if (f->refuse)
                return sd_bus_error_set(error, SD_BUS_ERROR_ACCESS_DENIED, "Access denied (fakepid1 was told to refuse)");
        if (find_unit(f, name))
                return sd_bus_error_setf(error, "org.freedesktop.systemd1.UnitExists", "Unit %s was already loaded or "
                                         "has a fragment file.", name);
        if (f->n_units >= UNITS_MAX || !systemd_unit_interface(name))
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS, "Cannot make unit %s", name);
        r = read_transient_properties(m, &cpus, error);
        if (r < 0 || sd_bus_error_is_set(error))
                return r;
        u = &f->units[f->n_units];
        *u = (Unit) { .name = strdup(name), .interface = systemd_unit_interface(name), .transient = true };
        if (!u->name || cpuset_copy(&u->cpus, &cpus) < 0 ||
            sd_bus_path_encode("/org/freedesktop/systemd1/unit", name, &u->path) < 0 ||
            sd_bus_add_object_vtable(f->bus, &u->slot, u->path, u->interface, unit_vtable, u) < 0)
                return -ENOMEM;
        f->n_units++;
        list = cpuset_format_list(&cpus);
        record_call(f, strdup_printf("StartTransientUnit %s AllowedCPUs=%s", name, list ?: "?"));
        r = make_cgroup(f, u);
        if (r < 0)
                return sd_bus_error_set_errnof(error, r, "Cannot make the cgroup of %s", name);
        return sd_bus_reply_method_return(m, "o", "/org/freedesktop/systemd1/job/1");
}

/* StartUnit, StopUnit, and the test's Stop (neither refused nor recorded, no job). */
static int method_start_stop_unit(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        const char *member = sd_bus_message_get_member(m), *name, *mode;
        bool start = streq(member, "StartUnit"), by_test = streq(member, "Stop");
        Fake *f = userdata;
        Unit *u;
        int r;

        r = by_test ? sd_bus_message_read(m, "s", &name) : sd_bus_message_read(m, "ss", &name, &mode);
        if (r < 0)
                return r;
        if (f->refuse && !by_test)
                return sd_bus_error_set(error, SD_BUS_ERROR_ACCESS_DENIED, "Access denied (fakepid1 was told to refuse)");
        u = find_unit(f, name);
        if (!u)
                return sd_bus_error_setf(error, "org.freedesktop.systemd1.NoSuchUnit", "Unit %s not loaded.", name);
        if (!by_test)
                record_call(f, strdup_printf("%s %s", member, name));
        if (start) {
                r = make_cgroup(f, u);
                if (r < 0)
                        return sd_bus_error_set_errnof(error, r, "Cannot make the cgroup of %s", name);
        } else {
                remove_cgroup(f, u);
                if (u->transient) {
                        /* Forgotten: the last unit (a transient one too) takes its place. */
                        sd_bus_slot_unref(u->slot);
                        free(u->name);
                        free(u->path);
                        cpuset_done(&u->cpus);
                        *u = f->units[--f->n_units];
                        f->units[f->n_units] = (Unit) {};
                        if (u->slot)
                                sd_bus_slot_set_userdata(u->slot, u);
                }
        }
        return by_test ? sd_bus_reply_method_return(m, NULL)
                       : sd_bus_reply_method_return(m, "o", "/org/freedesktop/systemd1/job/2");
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
        SD_BUS_METHOD("StartTransientUnit", "ssa(sv)a(sa(sv))", "o", method_start_transient_unit,
                      SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD("StartUnit", "ss", "o", method_start_stop_unit, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD("StopUnit", "ss", "o", method_start_stop_unit, SD_BUS_VTABLE_UNPRIVILEGED),
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

static int method_partitions(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        return set_switch(m, &((Fake *) userdata)->partitions);
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

static int method_reads(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Fake *f = userdata;
        unsigned n = 0;

        for (size_t i = 0; i < f->n_units; i++)
                n += f->units[i].reads;
        return sd_bus_reply_method_return(m, "u", n);
}

static const sd_bus_vtable test_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_METHOD("Refuse", "b", "", method_refuse, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD("Signals", "b", "", method_signals, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD("Files", "b", "", method_files, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD("Partitions", "b", "", method_partitions, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD("Stop", "s", "", method_start_stop_unit, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD("Drift", "ss", "", method_drift, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD("Calls", "", "as", method_calls, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD("Subscribers", "", "u", method_subscribers, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD("Reads", "", "u", method_reads, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_VTABLE_END,
};

int main(int argc, char *argv[]) {
        static Fake f = { .signals = true, .files = true, .partitions = true };
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
