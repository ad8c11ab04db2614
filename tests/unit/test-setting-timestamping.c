/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* timestamping_hold (lib/setting/timestamping.c): planned only with [cpus] hold_timestamping
 * = yes; the socket is the running kernel's, so under a fake root it is unsupported with the
 * reason and never opened; its original is "released" and restore closes what is held. The
 * socket itself is opened only on / (integration test_pm, and the VM suite). */
#include "setting-fixture.h"
#include "setting/originals.h"
#include "setting/table.h"
#include "setting/timestamping.h"

static void test_plan(void) {
        Fixture f;
        SettingTable t;

        fixture_init(&f);
        if (!CHECK(fixture_start(&f, "[cpus]\nisolated = 1\nhold_timestamping = yes\n"), "timestamping fixture"))
                { fixture_done(&f); return; }
        table_init(&t, NULL);
        CHECK(table_plan(&t, f.host, f.posture) >= 0, "the posture plans");
        CHECK(table_find(&t, SETTING_TIMESTAMPING_HOLD, "SO_TIMESTAMP"), "hold_timestamping = yes: one hold planned");
        table_done(&t);
        fixture_done(&f);

        fixture_init(&f);
        if (!CHECK(fixture_start(&f, "[cpus]\nisolated = 1\n"), "timestamping fixture, key unset"))
                { fixture_done(&f); return; }
        table_init(&t, NULL);
        CHECK(table_plan(&t, f.host, f.posture) >= 0, "the posture plans");
        CHECK(!table_find(&t, SETTING_TIMESTAMPING_HOLD, "SO_TIMESTAMP"), "by default: nothing held, nothing planned");
        table_done(&t);
        fixture_done(&f);
}

static void test_fake_root(void) {
        _cleanup_(originals_freep) Originals *o = NULL;
        _cleanup_free_ char *dir = NULL, *original = NULL;
        Fixture f;
        Setting *s = NULL;

        fixture_init(&f);
        if (!CHECK(fixture_start(&f, "[cpus]\nisolated = 1\nhold_timestamping = yes\n"), "timestamping fixture"))
                { fixture_done(&f); return; }
        dir = strdup_printf("%s/run", f.root);
        CHECK(dir && originals_open(dir, f.root, &o) == 0, "originals open");
        f.rc.originals = o;
        CHECK(setting_new_timestamping_hold(&s) == 0 && streq(s->object, "SO_TIMESTAMP") && streq(s->desired, "held"),
              "the hold: object SO_TIMESTAMP, desired held");
        setting_reconcile(&f.rc, s, T0, 0);
        CHECK_STR(events_take(&f), "unsupported", "under a fake root: unsupported, no socket of this kernel opened");
        if (!CHECK(s->reason && strstr(s->reason, "--root") && strstr(s->reason, f.root), "the reason names the root"))
                printf("#   reason: %s\n", s->reason ?: "(null)");
        CHECK(SETTING_VTABLE(s)->original(s, &original) == 0 && streq(original, "released"), "its original: released");
        CHECK(setting_restore(&f.rc, s) >= 0, "restore closes what is held and fails nothing");
        setting_free(s);
        fixture_done(&f);
}

int main(void) {
        test_plan();
        test_fake_root();
        return tap_finish();
}
