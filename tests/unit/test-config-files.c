/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lowlatd.conf: the files (lib/config/config.c): drop-ins, errors across files, who may write them, the
 * digest. */
#include <fcntl.h>
#include <ftw.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/config.h"
#include "host/ethtool.h"
#include "faketree.h"
#include "basic/macro.h"
#include "tap.h"
#include "basic/util.h"

#include "config-fixture.h"

static void test_load_dropins(void) {
        char dir[] = "/tmp/test-config-XXXXXX";
        _cleanup_error_list_ ErrorList errors = ERROR_LIST_EMPTY;
        _cleanup_config_ Config *c = NULL;
        _cleanup_free_ char *main_path = NULL;
        int r;

        if (!mkdtemp(dir))
                abort();
        main_path = strdup_printf("%s/lowlatd.conf", dir);
        faketree_write(dir, "lowlatd.conf", "[daemon]\nmode = observe\nscan_interval = 30s\n[sysctl]\nvm.swappiness = 60\n");
        faketree_mkdir(dir, "lowlatd.conf.d");
        /* written in reverse so that directory order is unlikely to be lexical by chance */
        faketree_write(dir, "lowlatd.conf.d/20-b.conf", "[daemon]\nmode = enforce\n[pm]\ngovernor = powersave\n");
        faketree_write(dir, "lowlatd.conf.d/10-a.conf", "[daemon]\nscan_interval = 5s\n[pm]\ngovernor = performance\n"
                                                   "[sysctl]\nvm.swappiness = 1\n");
        faketree_write(dir, "lowlatd.conf.d/README", "this is not a config file\n");
        faketree_write(dir, "lowlatd.conf.d/30-c.conf.disabled", "[bogus]\n");
        faketree_write(dir, "lowlatd.conf.d/.hidden.conf", "[bogus]\n");

        r = config_load(main_path, &c, &errors);
        if (!CHECK(r == 0 && c, "main file and drop-ins load"))
                print_errors(&errors);
        if (c) {
                CHECK(c->mode == DAEMON_MODE_ENFORCE, "20-b.conf is read after 10-a.conf and after the main file");
                CHECK(c->scan_interval_usec == 5 * USEC_PER_SEC, "10-a.conf overrides the main file key by key");
                CHECK_STR(c->governor, "powersave", "20-b.conf wins over 10-a.conf");
                CHECK(c->n_sysctls == 1 && streq(c->sysctls[0].value, "1"), "drop-in sysctl overrides the main file's");
                CHECK(c->n_files == 3, "three files read: non-.conf and hidden files ignored");
                if (c->n_files == 3) {
                        _cleanup_free_ char *a = strdup_printf("%s/lowlatd.conf.d/10-a.conf", dir);
                        _cleanup_free_ char *b = strdup_printf("%s/lowlatd.conf.d/20-b.conf", dir);
                        CHECK_STR(c->files[0], main_path, "main file first");
                        CHECK_STR(c->files[1], a, "10-a.conf second");
                        CHECK_STR(c->files[2], b, "20-b.conf third");
                }
        }
        faketree_remove(dir);
}

static void test_load_errors(void) {
        char dir[] = "/tmp/test-config-XXXXXX";
        _cleanup_free_ char *main_path = NULL, *dropin = NULL, *prefix = NULL;
        int r;

        if (!mkdtemp(dir))
                abort();
        main_path = strdup_printf("%s/lowlatd.conf", dir);
        dropin = strdup_printf("%s/lowlatd.conf.d/20-b.conf", dir);
        faketree_write(dir, "lowlatd.conf", "[daemon]\nmode = observe\n[cpus]\nhousekeeping = 0-1\n");
        faketree_mkdir(dir, "lowlatd.conf.d");
        faketree_write(dir, "lowlatd.conf.d/20-b.conf", "[pm]\ngovernor = Bad!\n[daemon]\nfoo = 1\n");

        {
                _cleanup_error_list_ ErrorList errors = ERROR_LIST_EMPTY;
                Config *c = NULL;

                r = config_load(main_path, &c, &errors);
                CHECK(r == -EINVAL && !c, "config_load fails and returns no config when a drop-in is bad");
                prefix = strdup_printf("%s:2: ", dropin);
                bool ok = errors.n == 2 && starts_with(errors.items[0], prefix);
                free(prefix);
                prefix = strdup_printf("%s:4: ", dropin);
                ok = ok && starts_with(errors.items[1], prefix);
                if (!CHECK(ok, "errors in a drop-in name the drop-in's path and line"))
                        print_errors(&errors);
                config_free(c);
        }

        /* isolated in a drop-in, housekeeping in the main file: the drop-in is the later line */
        faketree_write(dir, "lowlatd.conf.d/20-b.conf", "[cpus]\nisolated = 1-3\n");
        {
                _cleanup_error_list_ ErrorList errors = ERROR_LIST_EMPTY;
                Config *c = NULL;

                r = config_load(main_path, &c, &errors);
                free(prefix);
                prefix = strdup_printf("%s:2: ", dropin);
                bool ok = r == -EINVAL && errors.n == 1 && starts_with(errors.items[0], prefix) &&
                          strstr(errors.items[0], "overlap");
                if (!CHECK(ok, "overlap across files names the later line, in the drop-in"))
                        print_errors(&errors);
                config_free(c);
        }
        /* and the other way round */
        faketree_write(dir, "lowlatd.conf", "[cpus]\nisolated = 1-3\n");
        faketree_write(dir, "lowlatd.conf.d/20-b.conf", "\n[cpus]\nhousekeeping = 0-1\n");
        {
                _cleanup_error_list_ ErrorList errors = ERROR_LIST_EMPTY;
                Config *c = NULL;

                r = config_load(main_path, &c, &errors);
                free(prefix);
                prefix = strdup_printf("%s:3: ", dropin);
                bool ok = r == -EINVAL && errors.n == 1 && starts_with(errors.items[0], prefix);
                if (!CHECK(ok, "overlap with housekeeping in a drop-in names the drop-in"))
                        print_errors(&errors);
                config_free(c);
        }

        faketree_remove(dir);
}

/* What the reader refuses in a file, and files that cannot be read. */
static void test_load_unreadable(void) {
        char dir[] = "/tmp/test-config-XXXXXX";
        _cleanup_free_ char *main_path = NULL, *prefix = NULL, *missing = NULL, *subdir = NULL;
        int r;

        if (!mkdtemp(dir))
                abort();
        main_path = strdup_printf("%s/lowlatd.conf", dir);
        faketree_mkdir(dir, "lowlatd.conf.d");
        /* NUL byte: only a file can carry one */
        {
                static const char with_nul[] = "[daemon]\nmode = obs\0erve\nfoo = 1\n";
                faketree_write_bytes(dir, "lowlatd.conf", with_nul, sizeof(with_nul) - 1);
        }
        {
                _cleanup_error_list_ ErrorList errors = ERROR_LIST_EMPTY;
                Config *c = NULL;

                r = config_load(main_path, &c, &errors);
                prefix = strdup_printf("%s:2: ", main_path);
                _cleanup_free_ char *prefix3 = strdup_printf("%s:3: ", main_path);
                bool ok = r == -EINVAL && errors.n == 2 && starts_with(errors.items[0], prefix) &&
                          strstr(errors.items[0], "NUL") && starts_with(errors.items[1], prefix3);
                if (!CHECK(ok, "a NUL byte is an error at its line, and the next line is still line 3"))
                        print_errors(&errors);
                config_free(c);
        }

        missing = strdup_printf("%s/absent.conf", dir);
        {
                _cleanup_error_list_ ErrorList errors = ERROR_LIST_EMPTY;
                Config *c = NULL;

                r = config_load(missing, &c, &errors);
                bool ok = r < 0 && !c && errors.n == 1 && starts_with(errors.items[0], missing);
                if (!CHECK(ok, "a missing main file is an error naming it"))
                        print_errors(&errors);
                config_free(c);
        }

        subdir = strdup_printf("%s/lowlatd.conf.d", dir);
        {
                _cleanup_error_list_ ErrorList errors = ERROR_LIST_EMPTY;
                Config *c = NULL;

                r = config_load(subdir, &c, &errors);
                bool ok = r < 0 && !c && errors.n >= 1 && starts_with(errors.items[0], subdir);
                if (!CHECK(ok, "a directory as the main file is an error naming it"))
                        print_errors(&errors);
                config_free(c);
        }
        faketree_remove(dir);
}

/* StrictModes: files and their directories writable only by root. */
static void load_expect(const char *path, const char *needle, const char *what) {
        _cleanup_error_list_ ErrorList errors = ERROR_LIST_EMPTY;
        Config *c = NULL;
        int r = config_load(path, &c, &errors);

        if (!needle) {
                if (!CHECK(r == 0 && c, what))
                        print_errors(&errors);
        } else if (!CHECK(r < 0 && !c && errors.n >= 1 && strstr(errors.items[0], needle), what))
                print_errors(&errors);
        config_free(c);
}

static void test_strict_modes(void) {
        char dir[] = "/tmp/test-config-strict-XXXXXX";
        _cleanup_free_ char *path = NULL, *dropins = NULL, *dropin = NULL;

        if (!mkdtemp(dir))
                abort();
        path = strdup_printf("%s/lowlatd.conf", dir);
        dropins = strdup_printf("%s/lowlatd.conf.d", dir);
        dropin = strdup_printf("%s/lowlatd.conf.d/10-a.conf", dir);
        faketree_write(dir, "lowlatd.conf", "[daemon]\nmode = observe\n");
        chmod(path, 0644);
        load_expect(path, NULL, "a 0644 root-owned file in a private directory loads");

        chmod(path, 0664);
        load_expect(path, "writable by its group", "a group-writable config is refused");
        chmod(path, 0646);
        load_expect(path, "writable by everyone", "a world-writable config is refused");
        chmod(path, 0644);

        chmod(dir, 0777);
        load_expect(path, "writable by everyone", "a config in a world-writable directory is refused");
        chmod(dir, 01777);
        load_expect(path, NULL, "a sticky shared directory is fine (others cannot replace the file)");
        chmod(dir, 0700);

        if (geteuid() == 0) {
                CHECK(chown(path, 65534, 65534) == 0, "chown the config to nobody");
                load_expect(path, "owned by uid 65534", "a config owned by another user is refused");
                CHECK(chown(path, 0, 0) == 0, "chown it back");
        } else
                printf("ok %u # SKIP chown needs root\n", ++tap_count);

        faketree_mkdir(dir, "lowlatd.conf.d");
        faketree_write(dir, "lowlatd.conf.d/10-a.conf", "[daemon]\nmode = enforce\n");
        chmod(dropin, 0644);
        chmod(dropins, 0757);
        load_expect(path, "writable by everyone", "a drop-in in a world-writable directory is refused");
        chmod(dropins, 0755);
        chmod(dropin, 0666);
        load_expect(path, "writable by everyone", "a world-writable drop-in is refused");

        chmod(dropin, 0644);
        faketree_write(dir, "lowlatd.conf", "");
        load_expect(path, "the file is empty", "an empty main file is refused (a truncated write, not a posture)");
        faketree_write(dir, "lowlatd.conf", "# only a comment\n\n");
        load_expect(path, "the file is empty", "a main file of comments only is refused too");
        faketree_write(dir, "lowlatd.conf", "[daemon]\n");
        load_expect(path, NULL, "a single section header is an intentionally empty posture");

        _cleanup_free_ char *cmd = strdup_printf("rm -rf '%s'", dir);
        if (system(cmd) != 0)
                printf("# could not remove %s\n", dir);
}

/* StrictModes walks every directory up to /: a world-writable grandparent lets anyone
 * rename the config's directory and put their own in its place. */
static void test_strict_modes_ancestors(void) {
        char dir[] = "/tmp/test-config-ancestors-XXXXXX";
        _cleanup_free_ char *grandparent = NULL, *path = NULL, *link = NULL, *real_dir = NULL, *cmd = NULL,
                            *needle = NULL;

        if (!mkdtemp(dir))
                abort();
        grandparent = strdup_printf("%s/etc", dir);
        path = strdup_printf("%s/etc/lowlatd/lowlatd.conf", dir);
        faketree_mkdir(dir, "etc/lowlatd");
        faketree_write(dir, "etc/lowlatd/lowlatd.conf", "[daemon]\nmode = observe\n");
        chmod(path, 0644);
        load_expect(path, NULL, "ancestors: a config under 0755 directories loads");

        chmod(grandparent, 0777);
        needle = strdup_printf("%s: writable by everyone", grandparent);
        load_expect(path, needle, "ancestors: a world-writable grandparent without the sticky bit is refused, named");
        chmod(grandparent, 01777);
        load_expect(path, NULL, "ancestors: a sticky world-writable grandparent is fine, as /tmp is");
        chmod(grandparent, 0775);
        load_expect(path, "writable by its group", "ancestors: a group-writable grandparent is refused");
        chmod(grandparent, 0755);

        /* A link in a safe directory to a file below an unsafe one: the file's own
         * directories count too. */
        real_dir = strdup_printf("%s/shared", dir);
        link = strdup_printf("%s/etc/lowlatd/linked.conf", dir);
        faketree_mkdir(dir, "shared/lowlatd");
        faketree_write(dir, "shared/lowlatd/real.conf", "[daemon]\nmode = observe\n");
        chmod(real_dir, 0777);
        CHECK(symlink("../../shared/lowlatd/real.conf", link) == 0, "ancestors: a link to a file elsewhere");
        free(needle);
        needle = strdup_printf("%s: writable by everyone", real_dir);
        load_expect(link, needle, "ancestors: the directories above a link's target are walked too");
        chmod(real_dir, 0755);
        load_expect(link, NULL, "ancestors: and the link loads once they are safe");

        cmd = strdup_printf("rm -rf '%s'", dir);
        if (system(cmd) != 0)
                printf("# could not remove %s\n", dir);
}

/* A file without a name (a memfd, named through /proc/self/fd): its real path is no
 * directory anyone could write, so the trust check lets it be read (the config fuzzer
 * reads its files so; a check by name failed with ENOENT there). */
static void test_memfd(void) {
        _cleanup_error_list_ ErrorList errors = ERROR_LIST_EMPTY;
        _cleanup_config_ Config *c = config_new();
        const char text[] = "[daemon]\nmode = observe\n";
        char path[64];
        int fd = memfd_create("test-config", MFD_CLOEXEC);

        if (!CHECK(fd >= 0 && fchmod(fd, 0600) == 0 && write(fd, text, strlen(text)) == (ssize_t) strlen(text),
                   "a memfd holding a config"))
                return;
        snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
        CHECK(config_parse_file(c, path, &errors) == 0 && errors.n == 0 && c->mode == DAEMON_MODE_OBSERVE,
              "read through /proc/self/fd/N, trusted (its real path has only / above it)");
        print_errors(&errors);
        close(fd);
}

/* The digest tells a CPU-hotplug rebuild whether the files changed since they were read. */
static void test_digest(void) {
        const char *a = "[cpus]\nisolated = 2-3\n", *b = "[cpus]\nisolated = 1-3\n";
        Config *c1 = parse_ok(a, "digest: first parse"), *c2 = parse_ok(a, "digest: same text again");
        Config *c3 = parse_ok(b, "digest: other text"), *c4 = config_new(), *c5 = config_new();
        _cleanup_error_list_ ErrorList errors = ERROR_LIST_EMPTY;

        CHECK(c1->digest == c2->digest, "the same text has the same digest");
        CHECK(c1->digest != c3->digest, "one changed character changes it");
        (void) config_parse_string(c4, "other.conf", a, &errors);
        CHECK(c4->digest != c1->digest, "the same text under another file name differs");
        (void) config_parse_string(c5, NAME, "[cpus]\n", &errors);
        (void) config_parse_string(c5, "b.conf", "isolated = 2-3\n", &errors);
        CHECK(c5->digest != c1->digest, "a split across two files differs from one file");
        config_free(c1);
        config_free(c2);
        config_free(c3);
        config_free(c4);
        config_free(c5);
}

/* config_load_with(): a text read in place of the main file has the digest the files
 * have once it is that file, and the drop-ins are still read from disk. */
static void test_main_text(void) {
        char dir[] = "/tmp/test-config-text-XXXXXX";
        const char *a = "[cpus]\nisolated = 2-3\n", *b = "[cpus]\nisolated = 1-3\n";
        _cleanup_error_list_ ErrorList errors = ERROR_LIST_EMPTY;
        _cleanup_free_ char *main_path = NULL;
        Config *on_disk = NULL, *as_text = NULL, *other = NULL, *installed = NULL, *broken = NULL;
        ConfigMainText text_b = { b, "/elsewhere/new.conf" }, text_a = { a, "/elsewhere/old.conf" },
                       text_bad = { "[cpus]\nisolated = x\n", "/elsewhere/bad.conf" };

        if (!mkdtemp(dir))
                abort();
        main_path = strdup_printf("%s/lowlatd.conf", dir);
        faketree_write(dir, "lowlatd.conf", a);
        faketree_mkdir(dir, "lowlatd.conf.d");
        faketree_write(dir, "lowlatd.conf.d/10-a.conf", "[sysctl]\nvm.swappiness = 1\n");
        CHECK(config_load(main_path, &on_disk, &errors) == 0, "the files load");
        CHECK(config_load_with(main_path, &text_a, &as_text, &errors) == 0, "the same text given loads");
        CHECK(config_load_with(main_path, &text_b, &other, &errors) == 0, "another text given loads");
        if (on_disk && as_text && other) {
                CHECK(as_text->digest == on_disk->digest, "the file's own text given: the files' digest, whatever its name");
                CHECK(other->digest != on_disk->digest, "another text: another digest");
                CHECK(other->n_files == 2 && other->n_sysctls == 1, "the drop-in is still read");
                CHECK_STR(other->files[0], "/elsewhere/new.conf", "the text is named as given");
                CHECK(other->isolated.cpus.n_words > 0 && cpuset_contains(&other->isolated.cpus, 1),
                      "and read in place of the main file");
        }
        faketree_write(dir, "lowlatd.conf", b);
        CHECK(config_load(main_path, &installed, &errors) == 0, "the text put in place loads");
        CHECK(installed && other && installed->digest == other->digest,
              "once in place, the files have the digest the text had (diff FILE, then reload --if-unchanged)");
        CHECK(config_load_with(main_path, &text_bad, &broken, &errors) == -EINVAL && !broken && errors.n > 0 &&
                      strstr(errors.items[errors.n - 1], "/elsewhere/bad.conf:2:"),
              "an invalid text: its errors at its own name and line");
        config_free(on_disk);
        config_free(as_text);
        config_free(other);
        config_free(installed);
        faketree_remove(dir);
}

/* config_diff_keys(): key by key, with [nic "ARG"] sections and repeating keys. */
static void test_diff_keys(void) {
        Config *a = parse_ok("[cpus]\nisolated = 2-3\n[irq]\npin = eth0-* 0\npin = nvme* 1\n[nic \"eth*\"]\ngro = off\n"
                             "[sysctl]\nvm.swappiness = 1\n",
                             "diff keys: old");
        Config *b = parse_ok("[cpus]\nisolated = 1-3\n[irq]\npin = eth0-* 0\n[sysctl]\nvm.swappiness = 1\n"
                             "kernel.numa_balancing = 0\n",
                             "diff keys: new");
        ConfigKeyChange *k = NULL;
        size_t n = 0;

        CHECK(config_diff_keys(a, b, &k, &n) == 0 && n == 4, "four keys differ");
        if (n == 4) {
                CHECK(streq(k[0].key, "[cpus] isolated") && streq(k[0].was, "2-3") && streq(k[0].will, "1-3"),
                      "a changed value: was and will");
                CHECK(streq(k[1].key, "[irq] pin") && streq(k[1].was, "eth0-* 0; nvme* 1") && streq(k[1].will, "eth0-* 0"),
                      "a repeating key: its lines joined");
                CHECK(streq(k[2].key, "[sysctl] kernel.numa_balancing") && !k[2].was && streq(k[2].will, "0"),
                      "a new key: was NULL");
                CHECK(streq(k[3].key, "[nic \"eth*\"] gro") && streq(k[3].was, "off") && !k[3].will,
                      "a key that went, after the rest, its section's argument in its name");
        }
        config_key_changes_free(k, n);
        CHECK(config_diff_keys(a, a, &k, &n) == 0 && n == 0, "a configuration against itself: nothing");
        config_key_changes_free(k, n);
        config_free(a);
        config_free(b);
}

int main(void) {
        test_load_dropins();
        test_load_errors();
        test_load_unreadable();
        test_strict_modes();
        test_strict_modes_ancestors();
        test_memfd();
        test_digest();
        test_main_text();
        test_diff_keys();
        return tap_finish();
}
