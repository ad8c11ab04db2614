/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* [sysfs] on a fake --root tree: the path and value rules, choice lists, where a path
 * leads (host_resolve()), pattern expansion, the files refused (a link out of /sys, a file
 * another kind keeps, a directory) with FILE:LINE, and the sysfs kind itself: choices
 * compared on their selected word, a word not offered, a device that comes (a rescan finds
 * it) and goes, a missing file that appears, later entries winning, observe mode and
 * restore. */
#include <sched.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "faketree.h"
#include "setting/originals.h"
#include "setting/file.h"
#include "setting/sysfs.h"
#include "host/sysfs.h"
#include "setting/table.h"
#include "tap.h"
#include "basic/util.h"

#define T0 (1000 * USEC_PER_SEC)
#define THP "sys/kernel/mm/transparent_hugepage/enabled"
#define MCE "sys/devices/system/machinecheck"

typedef FaketreeFixture Fixture;

/* A two-CPU host with THP, two machine-check banks, a cpufreq policy reached through
 * cpu0/cpufreq, and a link that leaves /sys. */
static void fixture_init(Fixture *f) {
        *f = (Fixture) {};
        faketree_mkdtemp(f->root, sizeof(f->root), "test-sysfs");
        faketree_cpus(f->root, "0-1", "", "(null)");
        tree_mkdir(f, "proc/irq");
        tree_write(f, THP, "always [madvise] never\n");
        tree_write(f, "sys/kernel/mm/transparent_hugepage/defrag", "always defer defer+madvise [madvise] never\n");
        tree_write(f, MCE "/machinecheck0/ignore_ce", "0\n");
        tree_write(f, MCE "/machinecheck1/ignore_ce", "0\n");
        tree_write(f, "sys/devices/system/cpu/cpufreq/policy0/scaling_governor", "powersave\n");
        tree_symlink(f, "sys/devices/system/cpu/cpu0/cpufreq", "../cpufreq/policy0");
        tree_write(f, "etc/passwd", "root:x:0:0\n");
        tree_symlink(f, "sys/kernel/leak", "/etc/passwd");
        table_init(&f->table, NULL);
}

static Setting *find(Fixture *f, const char *object) {
        return table_find(&f->table, SETTING_SYSFS, object);
}

/* --- the rules a config's keys and values follow --- */

static void test_path_rules(void) {
        static const struct {
                const char *path;
                const char *problem; /* a word of the reason, NULL: accepted */
        } cases[] = {
                { "/sys/kernel/mm/transparent_hugepage/enabled", NULL },
                { "/sys/devices/system/machinecheck/machinecheck*/ignore_ce", NULL },
                { "/sys/bus/pci/devices/0000:00:1f.2/power/control", NULL },
                { "/sys/class/net/eth[01]/queues/rx-?/rps_cpus", NULL },
                { "/sys/block/*/queue/scheduler", NULL },
                { "/sys/a/[]x]/b", NULL },
                { "sys/kernel/mm/ksm/run", "absolute" },
                { "/proc/sys/vm/swappiness", "outside /sys" },
                { "/etc/passwd", "outside /sys" },
                { "/sys", "outside /sys" },
                { "/system/x", "outside /sys" },
                { "/s*s/kernel/x", "outside /sys" },
                { "/sys/../etc/passwd", "'..'" },
                { "/sys/kernel/../../etc/passwd", "'..'" },
                { "/sys/./kernel/mm", "'..'" },
                { "/sys/kernel//mm", "empty component" },
                { "/sys/kernel/mm/", "empty component" },
                { "/sys/", "empty component" },
                { "/sys/a[b/c]", "'['" },
                { "/sys/a/[", "'['" },
                { "/sys/a/b\\*", "backslash" },
                { "/sys/a b", "white space" },
                { "/sys/a\tb", "white space" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                const char *problem = sysfs_path_problem(cases[i].path);
                char what[160];

                snprintf(what, sizeof(what), "%s: %s", cases[i].path, cases[i].problem ?: "accepted");
                if (!CHECK(cases[i].problem ? problem && strstr(problem, cases[i].problem) : !problem, what))
                        printf("#   got: %s\n", problem ?: "(accepted)");
        }
        CHECK(sysfs_path_is_pattern("/sys/a/b*") && sysfs_path_is_pattern("/sys/a?/b") &&
                      sysfs_path_is_pattern("/sys/a/[01]/b") && !sysfs_path_is_pattern("/sys/bus/pci/devices/0000:00:1f.2/x"),
              "patterns are told by * ? [");

        CHECK(!sysfs_value_problem("never") && !sysfs_value_problem("4096 87380") && !sysfs_value_problem("0"),
              "words and numbers are values");
        CHECK(sysfs_value_problem("") && strstr(sysfs_value_problem(""), "empty"), "an empty value is refused");
        CHECK(sysfs_value_problem("[never]") && strstr(sysfs_value_problem("[never]"), "bare word"),
              "a bracketed choice is refused, saying how to write it");
        CHECK(sysfs_value_problem("a\x01") != NULL, "a control character is refused");
}

static void test_choices(void) {
        static const struct {
                const char *text;
                const char *selected; /* NULL: no choice list */
        } cases[] = {
                { "always madvise [never]", "never" },
                { "[always] madvise never\n", "always" },
                { "  always\t[madvise]  never ", "madvise" },
                { "[none] mq-deadline kyber bfq", "none" },
                { "[only]", "only" },
                { "always defer defer+madvise [madvise] never", "madvise" },
                { "never", NULL },
                { "4096 87380 6291456", NULL },
                { "", NULL },
                { "[a] [b]", NULL },
                { "a [] b", NULL },
                { "a [b c]", NULL },
                { "a[b] c", NULL },
                { "[[a]] b", NULL },
                { "a ] [b]", NULL },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char buf[128], what[160];
                bool choice;

                snprintf(buf, sizeof(buf), "%s", cases[i].text);
                choice = sysfs_choice_select(buf);
                snprintf(what, sizeof(what), "'%.*s': %s", (int) strcspn(cases[i].text, "\n"), cases[i].text,
                         cases[i].selected ?: "no choice list");
                if (!CHECK(cases[i].selected ? choice && streq(buf, cases[i].selected)
                                             : !choice && streq(buf, cases[i].text),
                           what))
                        printf("#   got %s '%s'\n", choice ? "selected" : "unchanged", buf);
        }
        CHECK(sysfs_choice_offers("always madvise [never]", "never") &&
                      sysfs_choice_offers("always madvise [never]", "always") &&
                      !sysfs_choice_offers("always madvise [never]", "[never]") &&
                      !sysfs_choice_offers("always madvise [never]", "mad") &&
                      !sysfs_choice_offers("always madvise [never]", ""),
              "offers: whole words, the selected one without its brackets");
        {
                _cleanup_free_ char *words = sysfs_choice_words(" always\tmadvise [never]\n");
                CHECK_STR(words, "always madvise never", "the words offered, for messages");
        }
}

/* --- the host layer: where a path leads, what a pattern matches --- */

static void test_resolve(void) {
        Fixture f;
        char *r = NULL;
        mode_t mode = 0;

        fixture_init(&f);
        if (!CHECK(host_open(f.root, &f.host) == 0, "host on the tree"))
                goto out;
        CHECK(host_resolve(f.host, THP, &r, &mode) == 0 && streq(r, THP) && S_ISREG(mode),
              "a plain file leads to itself");
        r = mfree(r);
        CHECK(host_resolve(f.host, "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", &r, NULL) == 0 &&
                      streq(r, "sys/devices/system/cpu/cpufreq/policy0/scaling_governor"),
              "a relative link is followed");
        r = mfree(r);
        CHECK(host_resolve(f.host, "sys/kernel/leak", &r, &mode) == 0 && streq(r, "etc/passwd") && S_ISREG(mode),
              "an absolute link resolves inside the root, not to the real /etc/passwd");
        r = mfree(r);
        CHECK(host_resolve(f.host, "sys/kernel/mm", &r, &mode) == 0 && streq(r, "sys/kernel/mm") && S_ISDIR(mode),
              "a directory, with its type");
        r = mfree(r);
        CHECK(host_resolve(f.host, ".", &r, NULL) == 0 && streq(r, ""), "the root itself is \"\"");
        r = mfree(r);
        CHECK(host_resolve(f.host, "sys/kernel/mm/ksm/run", &r, NULL) == -ENOENT && !r, "-ENOENT, *ret untouched");
out:
        host_free(f.host);
        faketree_remove(f.root);
}

typedef struct Collected {
        char list[512];
} Collected;

static int collect(void *userdata, const char *relpath) {
        Collected *c = userdata;
        size_t len = strlen(c->list);

        snprintf(c->list + len, sizeof(c->list) - len, "%s%s", len ? " " : "", relpath);
        return 0;
}

static int stop_at_first(void *userdata, const char *relpath) {
        (*(unsigned *) userdata)++;
        return -ECANCELED;
}

static void test_expand(void) {
        Fixture f;
        Collected c = {};
        unsigned calls = 0;

        fixture_init(&f);
        tree_write(&f, MCE "/machinecheck10/ignore_ce", "0\n");
        tree_mkdir(&f, MCE "/power");
        if (!CHECK(host_open(f.root, &f.host) == 0, "host on the tree"))
                goto out;
        CHECK(sysfs_expand(f.host, "/sys/devices/system/machinecheck/machinecheck*/ignore_ce", collect, &c) == 0, "expand");
        CHECK_STR(c.list,
                  MCE "/machinecheck0/ignore_ce " MCE "/machinecheck1/ignore_ce " MCE "/machinecheck10/ignore_ce",
                  "every bank, in name order; 'power' does not match");
        c = (Collected) {};
        CHECK(sysfs_expand(f.host, "/sys/devices/system/machinecheck/machinecheck[01]/ignore_ce", collect, &c) == 0 &&
                      streq(c.list, MCE "/machinecheck0/ignore_ce " MCE "/machinecheck1/ignore_ce"),
              "a set matches one character");
        c = (Collected) {};
        CHECK(sysfs_expand(f.host, "/sys/devices/system/machinecheck/*", collect, &c) == 0 &&
                      streq(c.list, MCE "/machinecheck0 " MCE "/machinecheck1 " MCE "/machinecheck10 " MCE "/power"),
              "a last wildcard lists directories too (the caller keeps files only)");
        c = (Collected) {};
        CHECK(sysfs_expand(f.host, "/sys/nothing/*/x", collect, &c) == 0 && streq(c.list, ""),
              "a directory that is not there matches nothing, without an error");
        c = (Collected) {};
        CHECK(sysfs_expand(f.host, "/sys/kernel/mm/ksm/run", collect, &c) == 0 && streq(c.list, "sys/kernel/mm/ksm/run"),
              "a literal path is handed over as it is, there or not");
        CHECK(sysfs_expand(f.host, "/sys/devices/system/machinecheck/*/ignore_ce", stop_at_first, &calls) == -ECANCELED &&
                      calls == 1,
              "the callback's error stops the expansion");
out:
        host_free(f.host);
        faketree_remove(f.root);
}

/* --- what [sysfs] refuses, with FILE:LINE --- */

static void test_file_check(void) {
        static const struct {
                const char *relpath;
                int verdict;
                const char *reason; /* a part of it; NULL: none given */
                const char *what;
        } cases[] = {
                { THP, SYSFS_FILE_OK, NULL, "THP may be kept" },
                { "sys/kernel/leak", SYSFS_FILE_REFUSED, "leads out of /sys (to /etc/passwd)",
                  "a link out of /sys is refused, naming where it leads" },
                { "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", SYSFS_FILE_REFUSED, "governor",
                  "the governor file is the governor kind's" },
                { "sys/devices/system/cpu/cpufreq/policy0/scaling_governor", SYSFS_FILE_REFUSED, "governor",
                  "also as cpufreq/policy0, where cpu0/cpufreq leads" },
                { "sys/devices/system/cpu/cpu1/cpuidle/state2/disable", SYSFS_FILE_REFUSED, "cpuidle",
                  "an idle state's disable file is the cpuidle kind's" },
                { "sys/bus/workqueue/devices/writeback/cpumask", SYSFS_FILE_REFUSED, "workqueue",
                  "a workqueue cpumask, reached through the bus link, is refused" },
                { "sys/kernel/mm", SYSFS_FILE_NOT_REGULAR, "directory", "a directory is no file" },
                { "sys/kernel/mm/ksm/run", -ENOENT, NULL, "a missing file: -ENOENT" },
        };
        Fixture f;

        fixture_init(&f);
        tree_write(&f, "sys/devices/virtual/workqueue/writeback/cpumask", "3\n");
        tree_symlink(&f, "sys/bus/workqueue/devices/writeback", "../../../devices/virtual/workqueue/writeback");
        tree_write(&f, "sys/devices/system/cpu/cpu1/cpuidle/state2/disable", "0\n");
        if (CHECK(host_open(f.root, &f.host) == 0, "host on the tree"))
                for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                        _cleanup_free_ char *reason = NULL;
                        int r = sysfs_file_check(f.host, cases[i].relpath, &reason);

                        if (!CHECK(r == cases[i].verdict && (cases[i].reason ? reason && strstr(reason, cases[i].reason)
                                                                              : !reason),
                                   cases[i].what))
                                printf("#   %s: %d, '%s'\n", cases[i].relpath, r, reason ?: "(no reason)");
                }
        host_free(f.host);
        faketree_remove(f.root);
}

/* Parses text as "t.conf" and checks it against the tree: the errors, joined by "|". */
static char *config_check(Fixture *f, const char *text) {
        _cleanup_error_list_ ErrorList errors = ERROR_LIST_EMPTY;
        _cleanup_config_ Config *c = config_new();

        if (!c || config_parse_string(c, "t.conf", text, &errors) < 0 || errors.n > 0) {
                printf("# the config does not parse\n");
                return strdup("<parse error>");
        }
        sysfs_config_check(c, f->host, &errors);
        return errors.n > 0 ? error_list_join(&errors, "|") : strdup("");
}

static void test_config_check(void) {
        Fixture f;

        fixture_init(&f);
        tree_write(&f, MCE "/machinecheck2/ignore_ce", "0\n");
        tree_symlink(&f, MCE "/machinecheck3", "/etc");
        tree_write(&f, "etc/ignore_ce", "0\n");
        if (!CHECK(host_open(f.root, &f.host) == 0, "host on the tree"))
                goto out;
        static const struct {
                const char *text;
                const char *errors;
        } cases[] = {
                { "[sysfs]\n/sys/kernel/mm/transparent_hugepage/enabled = never\n/sys/kernel/mm/ksm/run = 0\n", "" },
                { "[sysfs]\n/sys/devices/system/machinecheck/machinecheck[0-2]/ignore_ce = 1\n", "" },
                { "[sysfs]\n/sys/kernel/leak = 1\n", "t.conf:2: /sys/kernel/leak leads out of /sys (to /etc/passwd)" },
                { "[sysfs]\n\n/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor = performance\n",
                  "t.conf:3: /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor is kept by lowlatd's governor "
                  "settings, not by [sysfs]" },
                { "[sysfs]\n/sys/devices/system/cpu/cpu7/cpufreq/scaling_governor = performance\n",
                  "t.conf:2: /sys/devices/system/cpu/cpu7/cpufreq/scaling_governor is kept by lowlatd's governor "
                  "settings, not by [sysfs]" },
                { "[sysfs]\n/sys/devices/system/cpu/*/cpufreq/scaling_governor = performance\n",
                  "t.conf:2: /sys/devices/system/cpu/*/cpufreq/scaling_governor is kept by lowlatd's governor settings, "
                  "not by [sysfs]" },
                { "[sysfs]\n/sys/devices/system/cpu/cpu[0-3]/cpuidle/state*/disable = 1\n",
                  "t.conf:2: /sys/devices/system/cpu/cpu[0-3]/cpuidle/state*/disable is kept by lowlatd's cpuidle "
                  "settings, not by [sysfs]" },
                { "[sysfs]\n/sys/devices/virtual/workqueue/cpumask = 3\n",
                  "t.conf:2: /sys/devices/virtual/workqueue/cpumask is kept by lowlatd's workqueue_cpumask "
                  "settings, not by [sysfs]" },
                { "[sysfs]\n/sys/bus/cpu/devices/cpu0/cpufreq/scaling_governor = performance\n", "" },
                { "[sysfs]\n/sys/kernel/mm = 1\n", "t.conf:2: /sys/kernel/mm is a directory, not a file" },
                { "[sysfs]\n/sys/devices/system/machinecheck/machinecheck*/ignore_ce = 1\n",
                  "t.conf:2: /sys/devices/system/machinecheck/machinecheck*/ignore_ce matches "
                  "/sys/devices/system/machinecheck/machinecheck3/ignore_ce, which leads out of /sys (to /etc/ignore_ce)" },
                { "[sysfs]\n/sys/kernel/* = 1\n/sys/kernel/leak = 2\n",
                  "t.conf:2: /sys/kernel/* matches /sys/kernel/leak, which leads out of /sys (to /etc/passwd)|"
                  "t.conf:3: /sys/kernel/leak leads out of /sys (to /etc/passwd)" },
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *got = config_check(&f, cases[i].text);
                char what[200];

                snprintf(what, sizeof(what), "%s", *cases[i].errors ? cases[i].errors : "accepted");
                CHECK_STR(got, cases[i].errors, what);
        }
        /* A file that acts when written, matched by a pattern or reached through a link. */
        tree_write(&f, "sys/bus/pci/devices/0000:00:1f.2/remove", "");
        tree_write(&f, "sys/bus/pci/devices/0000:00:1f.2/resource", "0x0\n");
        tree_symlink(&f, "sys/kernel/knob", "../bus/pci/devices/0000:00:1f.2/remove");
        {
                _cleanup_free_ char *matched = config_check(&f, "[sysfs]\n/sys/bus/pci/devices/*/re* = 1\n");
                _cleanup_free_ char *linked = config_check(&f, "[sysfs]\n/sys/kernel/knob = 1\n");
                CHECK_STR(matched,
                          "t.conf:2: /sys/bus/pci/devices/*/re* matches /sys/bus/pci/devices/0000:00:1f.2/remove, which "
                          SYSFS_ACTS_PROBLEM,
                          "a pattern that matches a file that acts when written is refused at its line");
                CHECK_STR(linked, "t.conf:2: /sys/kernel/knob " SYSFS_ACTS_PROBLEM,
                          "a link to a file that acts when written is refused at its line");
        }
        /* The governor of a CPU the bus names is caught once the link is there to follow. */
        tree_symlink(&f, "sys/bus/cpu/devices/cpu0", "../../../devices/system/cpu/cpu0");
        {
                _cleanup_free_ char *got =
                        config_check(&f, "[sysfs]\n/sys/bus/cpu/devices/cpu0/cpufreq/scaling_governor = performance\n");
                CHECK(got && strstr(got, "t.conf:2: ") && strstr(got, "governor"),
                      "through /sys/bus/cpu/devices/cpu0, the governor file is still refused");
        }
        {
                _cleanup_free_ char *got = config_check(&f, "[sysfs]\n/sys/devices/system/machinecheck/*/ignore_ce = 1\n"
                                                            "/sys/kernel/l* = 1\n");
                CHECK(got && strstr(got, "t.conf:2: ") && strstr(got, "|t.conf:3: "), "every entry is checked");
        }
out:
        host_free(f.host);
        faketree_remove(f.root);
}

/* --- the kind --- */

static const char kind_config[] = "[sysfs]\n"
                                  "/sys/kernel/mm/transparent_hugepage/enabled = never\n"
                                  "/sys/devices/system/machinecheck/machinecheck*/ignore_ce = 1\n"
                                  "/sys/kernel/mm/ksm/run = 0\n";

static void test_kind(void) {
        Fixture f;
        Setting *thp, *mc0, *ksm;
        char path[128];

        fixture_init(&f);
        if (!CHECK(faketree_fixture_start(&f, kind_config), "kind fixture"))
                { faketree_fixture_done(&f); return; }
        CHECK(table_rescan(&f.table, f.host, f.posture) == 0 && f.table.n == 4, "four settings: THP, two banks, KSM");
        thp = find(&f, "/" THP);
        mc0 = find(&f, "/" MCE "/machinecheck0/ignore_ce");
        ksm = find(&f, "/sys/kernel/mm/ksm/run");
        CHECK(thp && mc0 && find(&f, "/" MCE "/machinecheck1/ignore_ce") && ksm, "one setting per file, by its path");
        if (!thp || !mc0 || !ksm)
                { faketree_fixture_done(&f); return; }
        CHECK(setting_watch_path(thp, 0, path, sizeof(path)) == 1 && streq(path, THP) &&
                      setting_watch_path(thp, 1, path, sizeof(path)) == 0,
              "inotify watches the file itself");
        CHECK(f.table.settings[0] == mc0 && f.table.settings[2] == ksm && f.table.settings[3] == thp,
              "listed in path order");

        table_reconcile_all(&f.table, &f.rc, T0, 0);
        CHECK(thp->state == SETTING_CORRECTED && streq(thp->observed, "never"), "THP corrected to never");
        CHECK_STR(tree_read(&f, THP), "never", "the word itself is written");
        CHECK(mc0->state == SETTING_CORRECTED && streq(tree_read(&f, MCE "/machinecheck1/ignore_ce"), "1"),
              "both banks: ignore_ce = 1");
        CHECK(ksm->state == SETTING_UNSUPPORTED && ksm->reason && strstr(ksm->reason, "not present") &&
                      strstr(ksm->reason, "/sys/kernel/mm/ksm/run"),
              "a missing file named as it is: unsupported, saying which");
        events_take(&f);

        /* The kernel shows a choice file with its list: the selected word is the value. */
        tree_write(&f, THP, "always madvise [never]\n");
        table_reconcile_all(&f.table, &f.rc, T0 + USEC_PER_SEC, 0);
        CHECK_STR(events_take(&f), "", "'always madvise [never]' is never: nothing to do");
        CHECK(thp->state == SETTING_CORRECTED && streq(thp->observed, "never"), "observed: the selected word");
        tree_write(&f, THP, "[always] madvise never\n");
        table_reconcile_one(&f.table, &f.rc, thp, T0 + 2 * USEC_PER_SEC, RECONCILE_HINTED);
        CHECK_STR(events_take(&f), "drift corrected", "'[always] madvise never' is drift, corrected");
        CHECK_STR(tree_read(&f, THP), "never", "never again");

        /* The KSM file appears (a module loaded): the next rescan keeps it. */
        tree_write(&f, "sys/kernel/mm/ksm/run", "1\n");
        CHECK(sysfs_table_rescan(&f.table, f.host, f.posture) == 1, "the rescan finds the file that appeared");
        ksm = find(&f, "/sys/kernel/mm/ksm/run");
        CHECK(ksm && ksm->state == SETTING_PENDING, "kept afresh, pending");
        if (ksm)
                table_reconcile_one(&f.table, &f.rc, ksm, T0 + 3 * USEC_PER_SEC, RECONCILE_APPLYING);
        CHECK_STR(tree_read(&f, "sys/kernel/mm/ksm/run"), "0", "and written");
        events_take(&f);
        faketree_fixture_done(&f);
}

static void test_devices_come_and_go(void) {
        Fixture f;
        Setting *s;

        fixture_init(&f);
        if (!CHECK(faketree_fixture_start(&f, kind_config), "devices fixture"))
                { faketree_fixture_done(&f); return; }
        CHECK(table_rescan(&f.table, f.host, f.posture) == 0 && f.table.n == 4, "planned");
        table_reconcile_all(&f.table, &f.rc, T0, 0);
        events_take(&f);

        CHECK(sysfs_table_rescan(&f.table, f.host, f.posture) == 0 && f.table.n == 4, "nothing new: a rescan adds nothing");
        tree_write(&f, MCE "/machinecheck2/ignore_ce", "0\n");
        tree_mkdir(&f, MCE "/machinecheck3"); /* a bank without the file yet */
        CHECK(sysfs_table_rescan(&f.table, f.host, f.posture) == 1 && f.table.n == 5,
              "a new bank: the pattern gains a match");
        s = find(&f, "/" MCE "/machinecheck2/ignore_ce");
        CHECK(s && s->state == SETTING_PENDING && streq(s->desired, "1"), "its setting, pending, at the pattern's value");
        table_reconcile_all(&f.table, &f.rc, T0 + USEC_PER_SEC, 0);
        CHECK_STR(tree_read(&f, MCE "/machinecheck2/ignore_ce"), "1", "and the new bank is written");
        CHECK(!find(&f, "/" MCE "/machinecheck3/ignore_ce"), "a bank without the file has no setting");
        events_take(&f);

        tree_remove(&f, MCE "/machinecheck1");
        CHECK(sysfs_table_rescan(&f.table, f.host, f.posture) == 0 && !find(&f, "/" MCE "/machinecheck1/ignore_ce") &&
                      f.table.n == 4,
              "a bank that went away: the rescan drops its setting");
        tree_remove(&f, MCE "/machinecheck2");
        table_reconcile_all(&f.table, &f.rc, T0 + 2 * USEC_PER_SEC, RECONCILE_FORCE);
        CHECK(!find(&f, "/" MCE "/machinecheck2/ignore_ce") && f.table.n == 3,
              "so does a read that finds the file gone (sysfs fails a kept fd)");
        CHECK_STR(events_take(&f), "", "quietly: the device is gone, nothing drifted");

        /* A new match that leads out of /sys is shown, never written. */
        tree_write(&f, "etc/ignore_ce", "0\n");
        tree_symlink(&f, MCE "/machinecheck9", "/etc");
        CHECK(sysfs_table_rescan(&f.table, f.host, f.posture) == 1, "the rescan sees the link");
        s = find(&f, "/" MCE "/machinecheck9/ignore_ce");
        if (s)
                table_reconcile_one(&f.table, &f.rc, s, T0 + 3 * USEC_PER_SEC, 0);
        CHECK(s && s->state == SETTING_UNSUPPORTED && s->reason && strstr(s->reason, "s.conf:3: ") &&
                      strstr(s->reason, "leads out of /sys (to /etc/ignore_ce)"),
              "unsupported, with the entry's FILE:LINE and where the link leads");
        CHECK_STR(tree_read(&f, "etc/ignore_ce"), "0\n", "the file outside /sys is not written");
        CHECK_STR(events_take(&f), "unsupported", "reported once");
        faketree_fixture_done(&f);
}

static void test_choice_not_offered(void) {
        Fixture f;
        Setting *s;

        fixture_init(&f);
        if (!CHECK(faketree_fixture_start(&f, "[sysfs]\n/sys/kernel/mm/transparent_hugepage/defrag = sometimes\n"),
                   "defrag fixture"))
                { faketree_fixture_done(&f); return; }
        CHECK(table_rescan(&f.table, f.host, f.posture) == 0 && (s = find(&f, "/sys/kernel/mm/transparent_hugepage/defrag")),
              "planned");
        if (!s)
                { faketree_fixture_done(&f); return; }
        table_reconcile_all(&f.table, &f.rc, T0, 0);
        CHECK(s->state == SETTING_UNSUPPORTED && s->reason &&
                      strstr(s->reason, "'sometimes' is not one of the values offered (always defer defer+madvise madvise never)"),
              "a word the file does not offer: unsupported, with the words it does");
        CHECK_STR(tree_read(&f, "sys/kernel/mm/transparent_hugepage/defrag"), "always defer defer+madvise [madvise] never\n",
                  "and nothing is written");
        CHECK_STR(events_take(&f), "drift unsupported", "reported once");
        table_reconcile_all(&f.table, &f.rc, T0 + 100 * USEC_PER_SEC, 0);
        CHECK_STR(events_take(&f), "", "not again at the next scan");
        faketree_fixture_done(&f);
}

static void test_later_wins(void) {
        Fixture f;
        Setting *s0, *s1;

        fixture_init(&f);
        if (!CHECK(faketree_fixture_start(&f, "[sysfs]\n"
                                     "/sys/devices/system/machinecheck/machinecheck0/ignore_ce = 0\n"
                                     "/sys/devices/system/machinecheck/machinecheck*/ignore_ce = 1\n"
                                     "/sys/devices/system/machinecheck/machinecheck1/ignore_ce = 0\n"),
                   "overlap fixture"))
                { faketree_fixture_done(&f); return; }
        CHECK(table_rescan(&f.table, f.host, f.posture) == 0 && f.table.n == 2, "two files, one setting each");
        s0 = find(&f, "/" MCE "/machinecheck0/ignore_ce");
        s1 = find(&f, "/" MCE "/machinecheck1/ignore_ce");
        CHECK(s0 && streq(s0->desired, "1"), "bank 0: the pattern, written after the literal line, wins");
        CHECK(s1 && streq(s1->desired, "0"), "bank 1: the literal line, written after the pattern, wins");
        faketree_fixture_done(&f);
}

static void test_observe_and_restore(void) {
        Originals *o = NULL;
        Fixture f;
        Setting *thp;

        fixture_init(&f);
        if (!CHECK(faketree_fixture_start(&f, kind_config), "restore fixture"))
                { faketree_fixture_done(&f); return; }
        CHECK(table_rescan(&f.table, f.host, f.posture) == 0 && (thp = find(&f, "/" THP)), "planned");
        if (!thp)
                { faketree_fixture_done(&f); return; }

        f.rc.observe = true;
        table_reconcile_all(&f.table, &f.rc, T0, 0);
        CHECK(thp->state == SETTING_DRIFTED && streq(thp->observed, "madvise"), "observe: madvise is drift");
        CHECK_STR(tree_read(&f, THP), "always [madvise] never\n", "observe: nothing written");
        events_take(&f);

        CHECK(faketree_fixture_originals(&f, &o) == 0, "originals open");
        f.rc.observe = false;
        table_reconcile_all(&f.table, &f.rc, T0 + USEC_PER_SEC, RECONCILE_FORCE);
        CHECK_STR(tree_read(&f, THP), "never", "enforce: never");
        CHECK_STR(o ? originals_get(o, SETTING_SYSFS, "/" THP) : NULL, "madvise",
                  "the original is the word that was selected, not the whole list");
        CHECK_STR(o ? originals_get(o, SETTING_SYSFS, "/" MCE "/machinecheck1/ignore_ce") : NULL, "0", "and the banks'");
        CHECK(!o || !originals_get(o, SETTING_SYSFS, "/sys/kernel/mm/ksm/run"), "nothing for the missing file");

        tree_write(&f, THP, "always madvise [never]\n"); /* as the kernel shows it */
        CHECK(setting_restore(&f.rc, thp) == 1, "restore");
        CHECK_STR(tree_read(&f, THP), "madvise", "THP is back to madvise");
        tree_write(&f, THP, "always [madvise] never\n");
        CHECK(o && !originals_get(o, SETTING_SYSFS, "/" THP), "and its original is forgotten");
        events_take(&f);
        originals_free(o);
        faketree_fixture_done(&f);
}

/* Under lowlatd.service most of /sys is read-only: a write refused with EROFS says how to
 * open the path, and is unsupported rather than a failure retried every minute. Needs a
 * mount namespace (root): a child makes the tree's kernel/mm a read-only bind mount. */
static void test_read_only(void) {
        Fixture f;
        Setting *thp;
        pid_t pid;
        int status = 0;

        fixture_init(&f);
        if (!CHECK(faketree_fixture_start(&f, kind_config), "read-only fixture"))
                { faketree_fixture_done(&f); return; }
        CHECK(table_rescan(&f.table, f.host, f.posture) == 0 && (thp = find(&f, "/" THP)), "planned");
        if (!thp)
                { faketree_fixture_done(&f); return; }
        fflush(stdout);
        pid = fork();
        if (pid == 0) {
                _cleanup_free_ char *dir = strdup_printf("%s/sys/kernel/mm", f.root);
                if (geteuid() != 0 || !dir || unshare(CLONE_NEWNS) < 0 ||
                    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 || mount(dir, dir, NULL, MS_BIND, NULL) < 0 ||
                    mount(NULL, dir, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) < 0)
                        _exit(77);
                /* The root fd was opened in the namespace before: look from a new one. */
                host_free(f.host);
                if (host_open(f.root, &f.host) < 0)
                        _exit(1);
                f.rc.host = f.host;
                setting_reconcile(&f.rc, thp, T0, 0);
                _exit(thp->state == SETTING_UNSUPPORTED && thp->reason && strstr(thp->reason, "read-only file system") &&
                                      strstr(thp->reason, "ReadWritePaths=") &&
                                      strstr(thp->reason, "/sys/kernel/mm/transparent_hugepage/enabled")
                              ? 0
                              : 1);
        }
        if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
                status = -1;
        if (WIFEXITED(status) && WEXITSTATUS(status) == 77)
                CHECK(true, "EROFS: unsupported, saying how to open the path # SKIP needs root and a mount namespace");
        else
                CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "EROFS: unsupported, saying how to open the path");
        CHECK_STR(tree_read(&f, THP), "always [madvise] never\n", "and nothing was written");
        faketree_fixture_done(&f);
}

int main(void) {
        test_path_rules();
        test_choices();
        test_resolve();
        test_expand();
        test_file_check();
        test_config_check();
        test_kind();
        test_devices_come_and_go();
        test_choice_not_offered();
        test_later_wins();
        test_observe_and_restore();
        test_read_only();
        return tap_finish();
}
