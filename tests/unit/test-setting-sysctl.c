/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sysctl (lib/setting/sysctl.c): the path from the key, unsupported sysctls, white space. */
#include "setting/file.h"
#include "setting-fixture.h"
#include "setting/sysctl.h"

static void test_sysctl(void) {
        Fixture f;
        Setting *s = NULL, *missing = NULL, *rmem = NULL, *rmem2 = NULL;

        fixture_init(&f);
        if (!CHECK(fixture_start(&f, ""), "sysctl fixture"))
                { fixture_done(&f); return; }

        CHECK(setting_new_sysctl("net.core.somaxconn", "4096", &s) == 0, "somaxconn setting");
        CHECK_STR(setting_file_path(s), "proc/sys/net/core/somaxconn", "dots become slashes in the path");
        setting_reconcile(&f.rc, s, T0, 0);
        CHECK_STR(events_take(&f), "drift corrected", "somaxconn 128 → 4096");
        CHECK_STR(strstrip((char *) tree_read(&f, "proc/sys/net/core/somaxconn")), "4096", "somaxconn written");

        CHECK(setting_new_sysctl("net.core.no_such_thing", "1", &missing) == 0, "missing sysctl setting");
        setting_reconcile(&f.rc, missing, T0, 0);
        setting_reconcile(&f.rc, missing, T0 + USEC_PER_SEC, 0);
        setting_reconcile(&f.rc, missing, T0 + 2 * USEC_PER_SEC, RECONCILE_FORCE);
        CHECK_STR(events_take(&f), "unsupported", "a missing sysctl is unsupported, reported once");
        CHECK(missing->state == SETTING_UNSUPPORTED, "missing sysctl state");
        CHECK(missing->reason && strstr(missing->reason, "sysctl"), "missing sysctl reason");
        CHECK(tree_size(&f, "proc/sys/net/core/no_such_thing") < 0, "a missing sysctl is not created");

        CHECK(setting_new_sysctl("net.ipv4.tcp_rmem", "4096 131072  6291456", &rmem) == 0, "tcp_rmem setting");
        setting_reconcile(&f.rc, rmem, T0, 0);
        CHECK_STR(events_take(&f), "", "tcp_rmem with tabs equals the value with spaces");
        CHECK(rmem->state == SETTING_OK, "tcp_rmem ok");
        CHECK_STR(tree_read(&f, "proc/sys/net/ipv4/tcp_rmem"), "4096\t131072\t6291456\n", "tcp_rmem not rewritten");

        tree_write(&f, "proc/sys/net/ipv4/tcp_rmem", "4096 131072 6291456\n");
        CHECK(setting_new_sysctl("net.ipv4.tcp_rmem", "4096\t131072\t6291456", &rmem2) == 0, "tcp_rmem with tabs");
        setting_reconcile(&f.rc, rmem2, T0, 0);
        CHECK_STR(events_take(&f), "", "a desired value with tabs equals the file with spaces");

        /* Originals read back from the file: what a [sysctl] value may be, numbers where
         * the value asked for is numbers. */
        const SettingVTable *vt = SETTING_VTABLE(rmem);
        CHECK(vt->original_problem && !vt->original_problem(rmem, &f.rc, "4096 87380 6291456") &&
                      !vt->original_problem(rmem, &f.rc, "-1 0\t2") && !vt->original_problem(rmem, &f.rc, ""),
              "a tcp_rmem original of numbers passes (and an empty one)");
        CHECK(vt->original_problem(rmem, &f.rc, "1 2 3 $(x)") != NULL, "'1 2 3 $(x)' is not numbers: refused");
        CHECK(vt->original_problem(rmem, &f.rc, "1 2 3x") != NULL, "'3x' is not a number");
        CHECK(setting_set_desired(rmem, "bbr") >= 0 && !vt->original_problem(rmem, &f.rc, "cubic"),
              "a word where the value asked for is a word passes");
        CHECK(vt->original_problem(rmem, &f.rc, "cu\001bic") != NULL, "a control character never does");

        CHECK(setting_new_sysctl("net..core", "1", &missing) == -EINVAL, "a bad sysctl key is refused");
        setting_free(s);
        setting_free(missing);
        setting_free(rmem);
        setting_free(rmem2);
        fixture_done(&f);
}

int main(void) {
        test_sysctl();
        return tap_finish();
}
