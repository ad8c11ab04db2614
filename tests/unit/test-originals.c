/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The originals file: appended before each first change, kept across a restart, dropped
 * for another root, rewritten once after restores. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "faketree.h"
#include "setting/originals.h"
#include "tap.h"
#include "basic/util.h"

/* Lines that are not exactly KIND<TAB>OBJECT<TAB>VALUE are skipped, never guessed at. */
static void test_strict_lines(const char *dir) {
        _cleanup_free_ char *boot = faketree_read_file("/proc/sys/kernel/random/boot_id"), *strict = NULL;
        char *nl = boot ? strchr(boot, '\n') : NULL;
        Originals *o = NULL;

        if (nl)
                *nl = '\0';
        strict = strdup_printf("boot_id %s\nroot /fake/root\n"
                               "\tsysctl\tvm.a\t1\n"         /* a leading tab: an empty kind */
                               "sysctl\t\tvm.b\t1\n"         /* an empty object */
                               "sysctl\tvm.c\t1\t2\n"        /* a tab in the value */
                               "sysctl\tvm.d\n"              /* two fields */
                               "bogus\tvm.e\t1\n"            /* an unknown kind */
                               "sysctl\tvm.f\t\n"            /* an empty value: kept */
                               "sysctl\tvm.g\t7\n"
                               "sysctl\tvm.g\t8\n",          /* named again: the first stays */
                               boot ?: "?");
        if (strict)
                faketree_write(dir, "originals", strict);
        CHECK(strict && originals_open(dir, "/fake/root", &o) == 0,
              "open a file with malformed lines");
        CHECK(o && o->n == 2 && streq_ptr(originals_get(o, SETTING_SYSCTL, "vm.f"), "") &&
                      streq_ptr(originals_get(o, SETTING_SYSCTL, "vm.g"), "7"),
              "only the well-formed lines are entries");
        originals_free(o);
}

int main(void) {
        char dir[40];
        _cleanup_free_ char *file = NULL, *text = NULL;
        Originals *o = NULL;
        struct stat st;

        faketree_mkdtemp(dir, sizeof(dir), "test-originals");
        file = strdup_printf("%s/originals", dir);

        CHECK(originals_open(dir, "/fake/root", &o) == 0, "open a fresh originals file");
        CHECK(stat(file, &st) == 0 && (st.st_mode & 0777) == 0600, "the file exists, mode 0600");
        CHECK(originals_record(o, SETTING_SYSCTL, "net.core.somaxconn", "4096") == 0, "record somaxconn");
        CHECK(originals_record(o, SETTING_SYSCTL, "net.core.somaxconn", "8192") == 0, "record it again");
        CHECK_STR(originals_get(o, SETTING_SYSCTL, "net.core.somaxconn"), "4096", "the first value stays");
        CHECK(originals_record(o, SETTING_IRQ_AFFINITY, "42", "0-3") == 0, "record an IRQ");
        CHECK(originals_record(o, SETTING_SYSCTL, "bad\tkey", "1") == -EINVAL, "a tab in an object is refused");
        text = faketree_read_file(file);
        CHECK(text && strstr(text, "sysctl\tnet.core.somaxconn\t4096\n") && strstr(text, "irq_affinity\t42\t0-3\n"),
              "entries are on disk at once");
        originals_free(o);

        CHECK(originals_open(dir, "/fake/root", &o) == 0, "reopen, as a restarted daemon");
        CHECK_STR(originals_get(o, SETTING_SYSCTL, "net.core.somaxconn"), "4096", "the original survives a restart");
        CHECK(originals_record(o, SETTING_SYSCTL, "net.core.somaxconn", "8192") == 0 &&
                      streq(originals_get(o, SETTING_SYSCTL, "net.core.somaxconn"), "4096"),
              "a restarted daemon does not take its own value for the original");
        originals_forget(o, SETTING_IRQ_AFFINITY, "42");
        CHECK(!originals_get(o, SETTING_IRQ_AFFINITY, "42"), "forget drops the entry in memory");
        CHECK(originals_commit(o) == 0, "commit rewrites the file");
        free(text);
        text = faketree_read_file(file);
        CHECK(text && !strstr(text, "irq_affinity\t42") && strstr(text, "net.core.somaxconn"),
              "the rewritten file lacks the forgotten entry only");

        /* An interface renamed: its settings' originals follow it. */
        CHECK(originals_record(o, SETTING_NIC_TXQUEUELEN, "eth0/txqueuelen", "1000") == 0 &&
                      originals_record(o, SETTING_NIC_TXQUEUELEN, "eth1/txqueuelen", "500") == 0,
              "record eth0's txqueuelen, and a stale entry of an earlier eth1");
        CHECK(originals_rename(o, SETTING_NIC_TXQUEUELEN, "eth0/txqueuelen", "eth1/txqueuelen") == 1,
              "eth0 renamed eth1: its entry moves");
        CHECK(!originals_get(o, SETTING_NIC_TXQUEUELEN, "eth0/txqueuelen") &&
                      streq_ptr(originals_get(o, SETTING_NIC_TXQUEUELEN, "eth1/txqueuelen"), "1000"),
              "under the new name, replacing what an earlier eth1 left");
        CHECK(originals_rename(o, SETTING_NIC_TXQUEUELEN, "eth9/txqueuelen", "eth1/txqueuelen") == 0 &&
                      streq_ptr(originals_get(o, SETTING_NIC_TXQUEUELEN, "eth1/txqueuelen"), "1000"),
              "a rename of nothing changes nothing");
        CHECK(originals_commit(o) == 0, "commit");
        originals_free(o);
        CHECK(originals_open(dir, "/fake/root", &o) == 0 &&
                      streq_ptr(originals_get(o, SETTING_NIC_TXQUEUELEN, "eth1/txqueuelen"), "1000") &&
                      !originals_get(o, SETTING_NIC_TXQUEUELEN, "eth0/txqueuelen"),
              "the rename is on disk: a restarted daemon has the entry under the new name only");
        originals_free(o);

        test_strict_lines(dir);

        CHECK(originals_open(dir, "/another/root", &o) == 0, "open for another --root");
        CHECK(o->n == 0, "entries recorded for another root are not originals here");
        originals_free(o);

        /* Each root its own directory: a run on a fake tree never opens the host's file. */
        _cleanup_free_ char *host_dir = NULL, *tree_dir = NULL, *odd_dir = NULL, *long_root = NULL, *none = NULL;
        CHECK(originals_state_dir("/run/lowlatd", "/", &host_dir) == 0 && streq(host_dir, "/run/lowlatd"),
              "the host's originals are in the runtime directory itself");
        CHECK(originals_state_dir("/run/lowlatd", "/srv/fake-tree/", &tree_dir) == 0 &&
                      streq(tree_dir, "/run/lowlatd/root/srv-fake\\x2dtree"),
              "a --root tree's are in root/ESCAPED, as systemd-escape --path writes it");
        CHECK(originals_state_dir("/run/lowlatd", "/.a/b c", &odd_dir) == 0 &&
                      streq(odd_dir, "/run/lowlatd/root/\\x2ea-b\\x20c"),
              "a leading dot and a space are escaped");
        CHECK(originals_state_dir("/run/lowlatd", "relative/tree", &none) == -EINVAL && !none,
              "a relative root is refused");
        long_root = calloc(1, 300);
        if (long_root) {
                memset(long_root, 'a', 299);
                long_root[0] = '/';
        }
        CHECK(long_root && originals_state_dir("/run/lowlatd", long_root, &none) == -ENAMETOOLONG && !none,
              "a name longer than NAME_MAX is refused");

        _cleanup_free_ char *nested = strdup_printf("%s/run/root/srv-tree", dir), *nested_file = NULL;
        CHECK(nested && originals_open(nested, "/srv/tree", &o) == 0, "open creates the missing parents");
        nested_file = strdup_printf("%s/originals", nested);
        CHECK(nested_file && stat(nested_file, &st) == 0 && stat(nested, &st) == 0 && (st.st_mode & 0777) == 0700,
              "the state directory is private (0700)");
        originals_free(o);

        faketree_remove(dir);
        return tap_finish();
}
