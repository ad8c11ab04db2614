/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* [sysfs] on a fake --root tree: the path and value rules, choice lists, where a path
 * leads (host_resolve()), pattern expansion, and the files refused (a link out of /sys, a
 * file another kind keeps, a directory) with FILE:LINE. */
#include <stdlib.h>
#include <sys/stat.h>

#include "faketree.h"
#include "sysfs.h"
#include "tap.h"
#include "util.h"

#define T0 (1000 * USEC_PER_SEC)
#define THP "sys/kernel/mm/transparent_hugepage/enabled"
#define MCE "sys/devices/system/machinecheck"

typedef struct Fixture {
        char root[32];
        Host *host;
} Fixture;

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
        Fixture f;
        char *reason = NULL;

        fixture_init(&f);
        tree_write(&f, "sys/devices/virtual/workqueue/writeback/cpumask", "3\n");
        tree_symlink(&f, "sys/bus/workqueue/devices/writeback", "../../../devices/virtual/workqueue/writeback");
        tree_write(&f, "sys/devices/system/cpu/cpu1/cpuidle/state2/disable", "0\n");
        if (!CHECK(host_open(f.root, &f.host) == 0, "host on the tree"))
                goto out;
        CHECK(sysfs_file_check(f.host, THP, &reason) == SYSFS_FILE_OK && !reason, "THP may be kept");
        CHECK(sysfs_file_check(f.host, "sys/kernel/leak", &reason) == SYSFS_FILE_REFUSED && reason &&
                      strstr(reason, "leads out of /sys (to /etc/passwd)"),
              "a link out of /sys is refused, naming where it leads");
        reason = mfree(reason);
        CHECK(sysfs_file_check(f.host, "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", &reason) ==
                              SYSFS_FILE_REFUSED &&
                      reason && strstr(reason, "governor"),
              "the governor file is the governor kind's");
        reason = mfree(reason);
        CHECK(sysfs_file_check(f.host, "sys/devices/system/cpu/cpufreq/policy0/scaling_governor", &reason) ==
                              SYSFS_FILE_REFUSED &&
                      reason && strstr(reason, "governor"),
              "also as cpufreq/policy0, where cpu0/cpufreq leads");
        reason = mfree(reason);
        CHECK(sysfs_file_check(f.host, "sys/devices/system/cpu/cpu1/cpuidle/state2/disable", &reason) ==
                              SYSFS_FILE_REFUSED &&
                      reason && strstr(reason, "cpuidle"),
              "an idle state's disable file is the cpuidle kind's");
        reason = mfree(reason);
        CHECK(sysfs_file_check(f.host, "sys/bus/workqueue/devices/writeback/cpumask", &reason) == SYSFS_FILE_REFUSED &&
                      reason && strstr(reason, "workqueue"),
              "a workqueue cpumask, reached through the bus link, is refused");
        reason = mfree(reason);
        CHECK(sysfs_file_check(f.host, "sys/kernel/mm", &reason) == SYSFS_FILE_NOT_REGULAR && reason &&
                      strstr(reason, "directory"),
              "a directory is no file");
        reason = mfree(reason);
        CHECK(sysfs_file_check(f.host, "sys/kernel/mm/ksm/run", &reason) == -ENOENT && !reason, "a missing file: -ENOENT");
out:
        free(reason);
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
                  "t.conf:2: /sys/devices/virtual/workqueue/cpumask is a workqueue cpumask, kept by lowlatd's "
                  "workqueue settings, not by [sysfs]" },
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

int main(void) {
        test_path_rules();
        test_choices();
        test_resolve();
        test_expand();
        test_file_check();
        test_config_check();
        return tap_finish();
}
