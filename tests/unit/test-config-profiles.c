/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* [daemon] profile (lib/config/profiles.c, load.c): profiles read before the main file,
 * key by key under the main file and its drop-ins, a later profile over an earlier one, the
 * administrator's over the shipped ones, and every way of naming one wrongly. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config/config.h"
#include "config/profiles.h"
#include "faketree.h"
#include "tap.h"
#include "basic/util.h"

#include "config-fixture.h"

typedef struct Tree {
        char dir[40];
        char *main_path;
        char *shipped;
} Tree;

static void tree_start(Tree *t, const char *main_text) {
        snprintf(t->dir, sizeof(t->dir), "/tmp/test-profiles-XXXXXX");
        if (!mkdtemp(t->dir))
                abort();
        /* The directories are root's and not writable by others: the trust check passes. */
        chmod(t->dir, 0755);
        t->main_path = strdup_printf("%s/etc/lowlatd.conf", t->dir);
        t->shipped = strdup_printf("%s/shipped", t->dir);
        if (!t->main_path || !t->shipped)
                abort();
        faketree_mkdir(t->dir, "shipped");
        faketree_mkdir(t->dir, "etc/profiles");
        faketree_write(t->dir, "etc/lowlatd.conf", main_text);
        setenv("LOWLATD_PROFILES_DIR", t->shipped, 1);
}

static void tree_done(Tree *t) {
        faketree_remove(t->dir);
        free(t->main_path);
        free(t->shipped);
        unsetenv("LOWLATD_PROFILES_DIR");
}

static Config *load(const Tree *t, ErrorList *errors) {
        Config *c = NULL;

        if (config_load(t->main_path, &c, errors) < 0)
                return NULL;
        return c;
}

static bool errors_have(const ErrorList *errors, const char *a, const char *b) {
        for (size_t i = 0; i < errors->n; i++)
                if (strstr(errors->items[i], a) && (!b || strstr(errors->items[i], b)))
                        return true;
        return false;
}

static void test_order(void) {
        _cleanup_error_list_ ErrorList errors = ERROR_LIST_EMPTY;
        _cleanup_config_ Config *c = NULL;
        Tree t;

        tree_start(&t, "[daemon]\nprofile = base extra\nscan_interval = 30s\n[sysctl]\nvm.swappiness = 5\n");
        faketree_write(t.dir, "shipped/base.conf",
                       "[daemon]\nscan_interval = 2s\nmode = observe\n[pm]\ngovernor = performance\n"
                       "cpu_dma_latency = 10\n[sysctl]\nvm.swappiness = 10\nvm.stat_interval = 10\n");
        faketree_write(t.dir, "shipped/extra.conf", "[pm]\ngovernor = schedutil\n");
        faketree_mkdir(t.dir, "etc/lowlatd.conf.d");
        faketree_write(t.dir, "etc/lowlatd.conf.d/50-local.conf", "[pm]\ncpu_dma_latency = 0\n");

        c = load(&t, &errors);
        if (!CHECK(c, "a configuration with two shipped profiles loads"))
                print_errors(&errors);
        if (c) {
                CHECK(c->scan_interval_usec == 30 * USEC_PER_SEC, "the main file overrides a profile's key");
                CHECK(c->mode == DAEMON_MODE_OBSERVE, "a key only the profile sets is kept");
                CHECK_STR(c->governor, "schedutil", "the later profile overrides the earlier one");
                CHECK(c->cpu_dma_latency_enabled && c->cpu_dma_latency_usec == 0,
                      "a drop-in overrides the profile too");
                bool swappiness = false, stat_interval = false;
                for (size_t i = 0; i < c->n_sysctls; i++) {
                        swappiness = swappiness || (streq(c->sysctls[i].key, "vm.swappiness") &&
                                                    streq(c->sysctls[i].value, "5"));
                        stat_interval = stat_interval || (streq(c->sysctls[i].key, "vm.stat_interval") &&
                                                          streq(c->sysctls[i].value, "10"));
                }
                CHECK(swappiness && stat_interval && c->n_sysctls == 2,
                      "sysctls: the main file's value wins, the profile's other one stays");
                CHECK(c->n_profiles == 2 && streq(c->profiles[0], "base") && streq(c->profiles[1], "extra"),
                      "the profiles in force, in order");
                CHECK(c->n_files == 4 && c->n_profile_files == 2, "four files: two profiles first, main, drop-in");
                if (c->n_files == 4) {
                        _cleanup_free_ char *base = strdup_printf("%s/base.conf", t.shipped);
                        CHECK_STR(c->files[0], base, "the first file is the first profile");
                        CHECK_STR(c->files[2], t.main_path, "then the main file");
                }
        }
        tree_done(&t);
}

static void test_user_overrides_shipped(void) {
        _cleanup_error_list_ ErrorList errors = ERROR_LIST_EMPTY;
        _cleanup_config_ Config *c = NULL;
        _cleanup_free_ char *user = NULL;
        Tree t;

        tree_start(&t, "[daemon]\nprofile = base\n");
        faketree_write(t.dir, "shipped/base.conf", "[pm]\ngovernor = performance\n");
        faketree_write(t.dir, "etc/profiles/base.conf", "[pm]\ngovernor = powersave\n");
        c = load(&t, &errors);
        if (!CHECK(c, "a profile in both directories loads"))
                print_errors(&errors);
        CHECK(c && streq_ptr(c->governor, "powersave") && c->n_files == 2,
              "/etc/lowlatd/profiles/NAME.conf is read instead of the shipped one, not besides it");
        user = strdup_printf("%s/etc/profiles/base.conf", t.dir);
        CHECK(c && c->n_files == 2 && streq_ptr(c->files[0], user), "and it is the file named");
        tree_done(&t);
}

static void test_none_in_dropin(void) {
        _cleanup_error_list_ ErrorList errors = ERROR_LIST_EMPTY;
        _cleanup_config_ Config *c = NULL;
        Tree t;

        tree_start(&t, "[daemon]\nprofile = base\n");
        faketree_write(t.dir, "shipped/base.conf", "[pm]\ngovernor = performance\n");
        faketree_mkdir(t.dir, "etc/lowlatd.conf.d");
        faketree_write(t.dir, "etc/lowlatd.conf.d/90-off.conf", "[daemon]\nprofile = none\n");
        c = load(&t, &errors);
        CHECK(c && c->n_profiles == 0 && !c->governor && c->n_files == 2,
              "profile = none in a drop-in: no profile is read");
        tree_done(&t);
}

static void test_errors(void) {
        static const struct {
                const char *main_text;
                const char *profile; /* written to shipped/bad.conf, or NULL */
                const char *a, *b;
                const char *what;
        } cases[] = {
                { "[daemon]\nprofile = missing\n", NULL, "lowlatd.conf:2: profile: no profile 'missing'", "shipped",
                  "an unknown profile: the key's FILE:LINE and both directories" },
                { "[daemon]\nprofile = ../etc/x\n", NULL, "lowlatd.conf:2: profile: '../etc/x' is not a profile name",
                  NULL, "a path is no profile name" },
                { "[daemon]\nprofile = bad bad\n", "[pm]\ngovernor = performance\n", "'bad' is named twice", NULL,
                  "a profile named twice" },
                { "[daemon]\nprofile = bad\n", "[daemon]\nprofile = other\n",
                  "bad.conf:2: profile: a profile cannot take in other profiles", "lowlatd.conf:2",
                  "a profile that names profiles" },
                { "[daemon]\nprofile = bad\n", "[daemon]\nprofile = bad\n",
                  "bad.conf:2: profile: a profile cannot take in other profiles", "lowlatd.conf:2",
                  "a profile that names itself: refused, no loop" },
                { "[daemon]\nprofile = bad\n", "[pm]\ngovernor = 1nvalid!\n", "bad.conf:2: governor", NULL,
                  "an error in a profile is reported at the profile's FILE:LINE" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_error_list_ ErrorList errors = ERROR_LIST_EMPTY;
                _cleanup_config_ Config *c = NULL;
                Tree t;

                tree_start(&t, cases[i].main_text);
                if (cases[i].profile)
                        faketree_write(t.dir, "shipped/bad.conf", cases[i].profile);
                c = load(&t, &errors);
                if (!CHECK(!c && errors_have(&errors, cases[i].a, cases[i].b), cases[i].what))
                        print_errors(&errors);
                tree_done(&t);
        }
}

/* config_print_merged(): the lines in force under their sections, each with FILE:LINE. */
static void test_merged(void) {
        _cleanup_error_list_ ErrorList errors = ERROR_LIST_EMPTY;
        _cleanup_config_ Config *c = NULL;
        _cleanup_free_ char *text = NULL, *want = NULL, *base = NULL, *dropin = NULL;
        size_t size = 0;
        FILE *f;
        Tree t;

        tree_start(&t, "[daemon]\nprofile = base\nscan_interval = 30s\n[irq]\npin = b 1\n[sysctl]\nvm.swappiness = 5\n");
        faketree_write(t.dir, "shipped/base.conf",
                       "[daemon]\nmode = observe\nscan_interval = 2s\n[irq]\npin = a 0\n[nic \"eth*\"]\nrx_usecs = 10\n");
        faketree_mkdir(t.dir, "etc/lowlatd.conf.d");
        faketree_write(t.dir, "etc/lowlatd.conf.d/50-nic.conf", "[nic \"eth*\"]\nrx_usecs = 20\n");
        base = strdup_printf("%s/base.conf", t.shipped);
        dropin = strdup_printf("%s/etc/lowlatd.conf.d/50-nic.conf", t.dir);
        c = load(&t, &errors);
        if (!CHECK(c && base && dropin, "a profile, a main file and a drop-in load"))
                print_errors(&errors);
        f = open_memstream(&text, &size);
        if (c && f)
                config_print_merged(f, c);
        if (f)
                fclose(f);
        want = strdup_printf("# The configuration in force, each value with the file and line it came from.\n"
                             "# Files read, in order:\n"
                             "#   %1$s (profile base)\n"
                             "#   %2$s\n"
                             "#   %3$s\n"
                             "\n[daemon]\n"
                             "mode = observe  # %1$s:2\n"
                             "profile = base  # %2$s:2\n"
                             "scan_interval = 30s  # %2$s:3\n"
                             "\n[irq]\n"
                             "pin = a 0  # %1$s:5\n"
                             "pin = b 1  # %2$s:5\n"
                             "\n[nic \"eth*\"]\n"
                             "rx_usecs = 20  # %3$s:2\n"
                             "\n[sysctl]\n"
                             "vm.swappiness = 5  # %2$s:7\n",
                             base ?: "?", t.main_path, dropin ?: "?");
        if (!CHECK(text && want && streq(text, want),
                   "merged: sections in the order first read, the lines not replaced, pins all, FILE:LINE each"))
                printf("# got:\n%s# want:\n%s", text ?: "(none)", want ?: "(none)");
        tree_done(&t);
}

static void test_names(void) {
        CHECK(config_profile_name_is_valid("network-latency") && config_profile_name_is_valid("rt_2.1"),
              "letters, digits, '-', '_' and '.'");
        CHECK(!config_profile_name_is_valid("") && !config_profile_name_is_valid(".hidden") &&
                      !config_profile_name_is_valid("-x") && !config_profile_name_is_valid("a/b") &&
                      !config_profile_name_is_valid("a b"),
              "not empty, a dot file, an option, a path or two words");
}

int main(void) {
        test_order();
        test_user_overrides_shipped();
        test_none_in_dropin();
        test_errors();
        test_merged();
        test_names();
        return tap_finish();
}
