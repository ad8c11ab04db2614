/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The event source registry (daemon/source.c): every source made from its table, told of
 * each moment in registry order, a failed start stopping the rest, all stopped at the end. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "source.h"
#include "tap.h"

typedef struct FakeSource {
        Source source;
        char tag;
        int start_result;
} FakeSource;

static char calls[256];

static void note(Source *s, const char *what) {
        size_t len = strlen(calls);
        snprintf(calls + len, sizeof(calls) - len, "%s%c.%s", len ? " " : "", ((FakeSource *) s)->tag ?: '?', what);
}

static void fake_init_a(Source *s) {
        ((FakeSource *) s)->tag = 'a';
        note(s, "init");
}

static void fake_init_b(Source *s) {
        ((FakeSource *) s)->tag = 'b';
        note(s, "init");
}

static int fake_open(Source *s) {
        note(s, "open");
        return 0;
}

static int fake_start(Source *s) {
        note(s, "start");
        return ((FakeSource *) s)->start_result;
}

static int fake_plan(Source *s, SettingTable *t, const Posture *p) {
        note(s, "plan");
        return 0;
}

static void fake_posture_changed(Source *s) {
        note(s, "posture");
}

static void fake_pass_end(Source *s, ReconcileFlags flags) {
        note(s, flags & RECONCILE_FORCE ? "pass_end:force" : "pass_end");
}

static void fake_setting_added(Source *s, Setting *setting) {
        note(s, "added");
}

static void fake_stop(Source *s) {
        note(s, "stop");
}

/* a has every operation the test calls; b only some: the others are skipped for it. */
static const SourceVTable fake_a = {
        .name = "a",
        .size = sizeof(FakeSource),
        .init = fake_init_a,
        .open = fake_open,
        .start = fake_start,
        .plan = fake_plan,
        .posture_changed = fake_posture_changed,
        .pass_end = fake_pass_end,
        .setting_added = fake_setting_added,
        .stop = fake_stop,
};

static const SourceVTable fake_b = {
        .name = "b",
        .size = sizeof(FakeSource),
        .init = fake_init_b,
        .start = fake_start,
        .pass_end = fake_pass_end,
        .stop = fake_stop,
};

static void test_order(void) {
        static const SourceVTable *const vtables[] = { &fake_a, &fake_b };
        SourceRegistry r;
        int host_token;

        calls[0] = '\0';
        CHECK(source_registry_new(&r, vtables, 2, (SourceHost *) &host_token) == 0, "registry made");
        CHECK(r.n == 2, "one source per table");
        CHECK(r.sources[0]->vtable == &fake_a && r.sources[1]->vtable == &fake_b, "in table order");
        CHECK(r.sources[1]->host == (SourceHost *) &host_token, "each source knows its host");
        CHECK(source_registry_find(&r, &fake_b) == r.sources[1], "found by its table");
        source_registry_open(&r);
        CHECK(source_registry_start(&r) == 0, "every start succeeded");
        CHECK(source_registry_plan(&r, NULL, NULL) == 0, "plan");
        source_registry_posture_changed(&r);
        source_registry_pass_end(&r, RECONCILE_FORCE);
        source_registry_setting_added(&r, NULL);
        source_registry_pass_begin(&r, 0); /* neither has it */
        source_registry_done(&r);
        CHECK_STR(calls,
                  "a.init b.init a.open a.start b.start a.plan a.posture a.pass_end:force b.pass_end:force a.added "
                  "a.stop b.stop",
                  "operations in registry order, missing ones skipped");
        CHECK(r.n == 0 && !r.sources, "registry emptied");
}

static void test_failed_start(void) {
        static const SourceVTable *const vtables[] = { &fake_a, &fake_b, &fake_a };
        SourceRegistry r;

        calls[0] = '\0';
        CHECK(source_registry_new(&r, vtables, 3, NULL) == 0, "registry of three made");
        ((FakeSource *) r.sources[1])->start_result = -EIO;
        CHECK(source_registry_start(&r) == -EIO, "the failed start's error comes back");
        source_registry_done(&r);
        CHECK_STR(calls, "a.init b.init a.init a.start b.start a.stop b.stop a.stop",
                  "no start after the failed one; every source stopped");
}

int main(void) {
        test_order();
        test_failed_start();
        return tap_finish();
}
