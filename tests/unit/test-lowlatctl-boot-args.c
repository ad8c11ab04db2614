/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lowlatctl boot's argument lists (lowlatctl/boot-args.c): words edited in place with the
 * rest of the text byte for byte, the plan against the administrator's list (their words
 * kept, their value of a parameter lowlatd sets replaced, a parameter given twice
 * refused), the recorded changes undone (a word changed since left), and the state file
 * read back as written. */
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "boot.h"
#include "tap.h"
#include "basic/util.h"

static void test_words_edit(void) {
        _cleanup_free_ char *appended = boot_words_edit("root=UUID=1 ro  quiet\n", NULL, "nohz_full=2-3");
        _cleanup_free_ char *replaced = boot_words_edit("a nohz_full=1-3\tb\n", "nohz_full=1-3", "nohz_full=2-3");
        _cleanup_free_ char *removed = boot_words_edit("a  b c\n", "c", NULL);
        _cleanup_free_ char *first = boot_words_edit("a b\n", "a", NULL);
        _cleanup_free_ char *missing = boot_words_edit("ab b\n", "a", NULL);
        _cleanup_free_ char *into_empty = boot_words_edit("", NULL, "x=1");
        const char *at = NULL;
        size_t len = 0;

        CHECK_STR(appended, "root=UUID=1 ro  quiet nohz_full=2-3\n", "appended after the last word, before the newline");
        CHECK_STR(replaced, "a nohz_full=2-3\tb\n", "replaced in place, the tab kept");
        CHECK_STR(removed, "a  b\n", "removed with the one blank before it");
        CHECK_STR(first, "b\n", "the first word removed with the blank after it");
        CHECK(!missing, "a word that is only the start of another is not found");
        CHECK_STR(into_empty, "x=1", "appended to nothing");
        CHECK(boot_words_contain("a nohz_full=2-3\n", "nohz_full=2-3") && !boot_words_contain("a nohz_full=2-3", "nohz_full"),
              "words are found whole");
        CHECK(boot_words_count_param("a nohz_full=1 nohz_full b", "nohz_full=2", &at, &len) == 2 &&
                      strncmp(at, "nohz_full=1", len) == 0 && len == 11,
              "a parameter counted bare and with a value, the first one returned");
}

static void test_plan_and_undo(void) {
        const char *admin = "root=UUID=1 nohz_full=1-3 nosoftlockup\n";
        _cleanup_(boot_arg_state_done) BootArgState plan = {}, twice = {};
        _cleanup_free_ char *undone = NULL, *applied = strdup(admin);
        size_t missing = 9;

        CHECK(boot_args_plan(admin, "nohz_full=2-3 rcu_nocbs=2-3 nosoftlockup", &plan) == 0 && plan.n_changes == 2,
              "two changes: the admin's nosoftlockup is theirs");
        CHECK(plan.n_changes == 2 && streq_ptr(plan.changes[0].old, "nohz_full=1-3") &&
                      streq(plan.changes[0].new, "nohz_full=2-3") && !plan.changes[1].old &&
                      streq(plan.changes[1].new, "rcu_nocbs=2-3"),
              "nohz_full replaced (its old value kept), rcu_nocbs added");
        for (size_t i = 0; applied && i < plan.n_changes; i++) {
                char *more = boot_words_edit(applied, plan.changes[i].old, plan.changes[i].new);
                free(applied);
                applied = more;
        }
        CHECK_STR(applied, "root=UUID=1 nohz_full=2-3 nosoftlockup rcu_nocbs=2-3\n", "the plan applied");
        CHECK(applied && boot_args_undo(applied, &plan, &undone, &missing) == 0 && missing == 0 &&
                      streq_ptr(undone, admin),
              "undone: the admin's text byte for byte");
        undone = mfree(undone);
        CHECK(boot_args_undo("root=UUID=1 nohz_full=3 nosoftlockup rcu_nocbs=2-3\n", &plan, &undone, &missing) == 0 &&
                      missing == 1 && streq_ptr(undone, "root=UUID=1 nohz_full=3 nosoftlockup\n"),
              "a word of ours changed since: left, and counted");
        CHECK(boot_args_plan("isolcpus=1 isolcpus=2\n", "isolcpus=2-3", &twice) == EXIT_REFUSED && twice.n_changes == 0,
              "a parameter given twice: refused, no plan");
}

static void test_state_file(void) {
        char dir[] = "/tmp/test-boot-args-XXXXXX";
        _cleanup_(host_freep) Host *h = NULL;
        _cleanup_(boot_arg_state_done) BootArgState s = { .loader = BOOT_LOADER_SYSTEMD_BOOT }, back = {};
        _cleanup_free_ char *var = NULL, *lib = NULL, *file = NULL, *statedir = NULL;

        if (!CHECK(mkdtemp(dir), "a temporary root"))
                return;
        var = strdup_printf("%s/var", dir);
        lib = strdup_printf("%s/var/lib", dir);
        file = strdup_printf("%s/" BOOT_STATE, dir);
        statedir = strdup_printf("%s/" BOOT_STATE_DIR, dir);
        CHECK(var && lib && mkdir(var, 0755) == 0 && mkdir(lib, 0755) == 0 && host_open(dir, &h) == 0,
              "var/lib under it");
        s.created = strdup("root=UUID=1 quiet");
        CHECK(h && boot_arg_state_add(&s, NULL, "rcu_nocbs=2-3") == 0 &&
                      boot_arg_state_add(&s, "nohz_full=1-3", "nohz_full=2-3") == 0 && boot_arg_state_write(h, &s) == 0,
              "written");
        CHECK(h && boot_arg_state_read(h, &back) == 1 && back.loader == BOOT_LOADER_SYSTEMD_BOOT &&
                      back.n_changes == 2 && !back.changes[0].old && streq(back.changes[0].new, "rcu_nocbs=2-3") &&
                      streq_ptr(back.changes[1].old, "nohz_full=1-3") && streq(back.changes[1].new, "nohz_full=2-3") &&
                      streq_ptr(back.created, "root=UUID=1 quiet"),
              "read back as written: the loader, each change, the created file's text");
        CHECK(h && boot_arg_state_remove(h) == 0 && boot_arg_state_read(h, &back) == 0, "removed: no state");
        if (file && statedir) {
                FILE *f = fopen(file, "we");
                if (f) {
                        fputs("loader bls\nadd x\n", f);
                        fclose(f);
                }
                CHECK(h && boot_arg_state_read(h, &back) == -EBADMSG, "a file without lowlatctl's header: -EBADMSG");
                (void) unlink(file);
                (void) rmdir(statedir);
        }
        (void) rmdir(lib);
        (void) rmdir(var);
        (void) rmdir(dir);
}

int main(void) {
        test_words_edit();
        test_plan_and_undo();
        test_state_file();
        return tap_finish();
}
