/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* slice_cpus (lib/setting/slices.c): what can be checked without PID 1 (test_slices.py talks
 * to a fake one). */
#include <stdlib.h>

#include "setting-fixture.h"
#include "setting/slices.h"
#include "host/systemd-client.h"
#include "setting/table.h"

#define SLICES_CONFIG "[cpus]\nisolated = 2-3\nslices = system.slice user.slice init.scope\n"

static void test_slices_plan(void) {
        Fixture f;
        SettingTable t;
        Setting *s;

        fixture_init(&f);
        if (!CHECK(fixture_start(&f, SLICES_CONFIG), "slices fixture"))
                { fixture_done(&f); return; }
        table_init(&t, NULL);
        CHECK(table_plan(&t, f.host, f.posture) == 0 && t.kind_counts[SETTING_SLICE_CPUS] == 3,
              "one slice_cpus setting per unit in [cpus] slices");
        s = slice_table_find(&t, "user.slice");
        CHECK(s && setting_is_slice(s) && streq_ptr(s->desired, "0-1"), "desired: the housekeeping CPUs");
        CHECK(!slice_table_find(&t, "machine.slice"), "nothing for a unit not listed");
        if (s) {
                char buf[128], path[128];
                CHECK(setting_describe(s, buf, sizeof(buf)) == 0 && streq(buf, "AllowedCPUs= of user.slice"),
                      "messages name it \"AllowedCPUs= of user.slice\"");
                CHECK(setting_watch_path(s, 0, path, sizeof(path)) == 1 &&
                              streq(path, "run/systemd/system.control/user.slice.d"),
                      "watch 0: the unit's runtime drop-in directory, which set-property --runtime writes");
                CHECK(setting_watch_path(s, 1, path, sizeof(path)) == 0,
                      "watch 1 (the cgroup's cpuset.cpus) waits until PID 1 named the cgroup");
        }
        table_done(&t);
        fixture_done(&f);

        fixture_init(&f);
        if (!CHECK(fixture_start(&f, "[cpus]\nslices = system.slice user.slice init.scope\n"), "no isolated CPU"))
                { fixture_done(&f); return; }
        table_init(&t, NULL);
        CHECK(table_plan(&t, f.host, f.posture) == 0 && t.kind_counts[SETTING_SLICE_CPUS] == 0,
              "nothing isolated: no unit is confined (it would only turn the cpuset controller on)");
        table_done(&t);
        fixture_done(&f);

        CHECK_STR(systemd_unit_interface("user.slice"), "org.freedesktop.systemd1.Slice", "a slice's interface");
        CHECK_STR(systemd_unit_interface("init.scope"), "org.freedesktop.systemd1.Scope", "a scope's interface");
        CHECK_STR(systemd_unit_interface("sshd.service"), "org.freedesktop.systemd1.Service", "a service's interface");
        CHECK(!systemd_unit_interface("sshd.socket") && !systemd_unit_interface(".slice"), "no cgroup interface");
}

/* Unsupported once, with the reason, for every way the host lacks what AllowedCPUs= needs;
 * and a system bus that is not there is a failure (PID 1 is, only unreachable). */
static void test_slices_unsupported(void) {
        static const struct {
                bool init;
                const char *controllers; /* NULL: no cgroup.controllers */
                const char *reason;
        } cases[] = {
                { false, "cpuset cpu io memory pids\n", "systemd is not PID 1 here (no " },
                { true, NULL, "no cgroup.controllers: cgroup v1 or hybrid" },
                { true, "cpu io memory pids\n", "has no cpuset controller" },
        };
        const char *old_bus = getenv("DBUS_SYSTEM_BUS_ADDRESS");
        _cleanup_free_ char *saved_bus = old_bus ? strdup(old_bus) : NULL;

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_(systemd_client_freep) SystemdClient *client = NULL;
                Setting *s = NULL;
                char what[160];
                Fixture f;

                fixture_init(&f);
                if (cases[i].init)
                        tree_mkdir(&f, "run/systemd/system");
                if (cases[i].controllers)
                        tree_write(&f, "sys/fs/cgroup/cgroup.controllers", cases[i].controllers);
                if (!CHECK(fixture_start(&f, SLICES_CONFIG), "slices fixture"))
                        { fixture_done(&f); continue; }
                CHECK(systemd_client_new(f.host, &client) == 0, "a client");
                f.rc.systemd = client;
                CHECK(setting_new_slice_cpus("user.slice", &f.posture->housekeeping, &s) == 0, "user.slice setting");
                setting_reconcile(&f.rc, s, T0, 0);
                setting_reconcile(&f.rc, s, T0 + 20 * USEC_PER_SEC, 0);
                snprintf(what, sizeof(what), "case %zu: unsupported, reported once: '%s'", i, s->reason ?: "");
                CHECK(streq(events_take(&f), "unsupported") && s->state == SETTING_UNSUPPORTED, what);
                snprintf(what, sizeof(what), "case %zu: the reason says '%s'", i, cases[i].reason);
                CHECK(s->reason && strstr(s->reason, cases[i].reason), what);
                setting_free(s);
                fixture_done(&f);
        }

        {
                _cleanup_(systemd_client_freep) SystemdClient *client = NULL;
                Setting *s = NULL;
                Fixture f;

                fixture_init(&f);
                tree_mkdir(&f, "run/systemd/system");
                tree_write(&f, "sys/fs/cgroup/cgroup.controllers", "cpuset cpu\n");
                if (CHECK(fixture_start(&f, SLICES_CONFIG), "slices fixture with PID 1 but no bus")) {
                        _cleanup_free_ char *nobus = strdup_printf("unix:path=%s/no-bus", f.root);
                        setenv("DBUS_SYSTEM_BUS_ADDRESS", nobus, 1);
                        CHECK(systemd_client_new(f.host, &client) == 0 &&
                                      setting_new_slice_cpus("user.slice", &f.posture->housekeeping, &s) == 0,
                              "client and setting");
                        f.rc.systemd = client;
                        setting_reconcile(&f.rc, s, T0, 0);
                        CHECK(streq(events_take(&f), "correction-failed") && s->state == SETTING_FAILED &&
                                      s->reason && strstr(s->reason, "cannot connect to the system bus"),
                              "no system bus: a failure that says so");
                        setting_free(s);
                        s = NULL;
                        f.rc.systemd = NULL;
                        CHECK(setting_new_slice_cpus("user.slice", &f.posture->housekeeping, &s) == 0, "setting");
                        setting_reconcile(&f.rc, s, T0, 0);
                        CHECK(streq(events_take(&f), "unsupported") && s->reason && strstr(s->reason, "no connection to PID 1"),
                              "no client at all (a caller that set none up): unsupported");
                        setting_free(s);
                }
                fixture_done(&f);
        }
        if (saved_bus)
                setenv("DBUS_SYSTEM_BUS_ADDRESS", saved_bus, 1);
        else
                unsetenv("DBUS_SYSTEM_BUS_ADDRESS");
}

int main(void) {
        test_slices_plan();
        test_slices_unsupported();
        return tap_finish();
}
