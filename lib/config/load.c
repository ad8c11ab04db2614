/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The files a Config is read from: the main file, then its drop-ins in lexical order,
 * each checked for who may write it, and then the checks across keys that each section
 * asks for (keys.c). */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/keys.h"
#include "config/profiles.h"
#include "config/reader.h"
#include "basic/util.h"

int config_parse_string(Config *c, const char *name, const char *text, ErrorList *errors) {
        return config_read(c, name, NULL, NULL, text, errors);
}

/* Like sshd's StrictModes: a file lowlatd acts on as root must be changeable by root (or
 * lowlatd's own user) only, or anyone who can write it can retune the host. */
static int check_trusted(const char *path, const struct stat *st, ErrorList *errors) {
        if (st->st_uid != 0 && st->st_uid != geteuid()) {
                error_list_add(errors, "%s: owned by uid %u, not root: refusing to use it (chown root %s)", path,
                               (unsigned) st->st_uid, path);
                return -EPERM;
        }
        /* A shared directory is safe with the sticky bit: others cannot replace our files. */
        if ((st->st_mode & (S_IWGRP | S_IWOTH)) && !(S_ISDIR(st->st_mode) && (st->st_mode & S_ISVTX))) {
                error_list_add(errors, "%s: writable by %s (mode %04o): refusing to use it (chmod go-w %s)", path,
                               st->st_mode & S_IWOTH ? "everyone" : "its group", (unsigned) (st->st_mode & 07777), path);
                return -EPERM;
        }
        return 0;
}

static int check_trusted_directory(const char *dir, ErrorList *errors) {
        struct stat st;

        if (stat(dir, &st) < 0) {
                int r = negative_errno();
                error_list_add(errors, "%s: cannot stat: %s", dir, strerror(-r));
                return r;
        }
        return check_trusted(dir, &st, errors);
}

/* Every directory from the file's up to /, as sshd's StrictModes walks them: whoever can
 * write any of them can rename what is below it and put a directory of their own in its
 * place. absolute_path starts with '/'. */
static int check_trusted_ancestors(const char *absolute_path, ErrorList *errors) {
        _cleanup_free_ char *dir = strdup(absolute_path);

        if (!dir)
                return -ENOMEM;
        for (;;) {
                size_t n = strlen(dir);
                char *slash;
                int r;

                while (n > 1 && dir[n - 1] == '/')
                        dir[--n] = '\0';
                slash = strrchr(dir, '/');
                if (slash == dir) {
                        if (n == 1)
                                return 0; /* "/" was the last one */
                        dir[1] = '\0';
                } else
                        *slash = '\0';
                r = check_trusted_directory(dir, errors);
                if (r < 0)
                        return r;
        }
}

/* The directories above path as it is named (a symbolic link there can be replaced by
 * whoever writes them) and, where a link leads elsewhere, above the file it leads to: the
 * file fd has open, as /proc/self/fd names it (no race with a rename after the open; a
 * file without a name, a memfd, has "/" above it). */
static int check_trusted_parents(const char *path, int fd, ErrorList *errors) {
        _cleanup_free_ char *cwd = NULL, *absolute = NULL, *real = NULL;
        char link[64];
        int r;

        if (path[0] != '/') {
                cwd = getcwd(NULL, 0);
                if (!cwd) {
                        r = negative_errno();
                        error_list_add(errors, "%s: cannot tell the working directory: %s", path, strerror(-r));
                        return r;
                }
        }
        absolute = cwd ? strdup_printf("%s/%s", cwd, path) : strdup(path);
        if (!absolute)
                return -ENOMEM;
        r = check_trusted_ancestors(absolute, errors);
        if (r < 0)
                return r;
        snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
        real = realpath(link, NULL);
        if (!real && errno == ENOENT) {
                char target[PATH_MAX];
                ssize_t n = readlink(link, target, sizeof(target) - 1);
                if (n > 0 && target[0] == '/') {
                        target[n] = '\0';
                        real = strdup(target);
                        if (!real)
                                return -ENOMEM;
                }
        }
        if (!real)
                real = realpath(path, NULL); /* no /proc */
        if (!real) {
                r = negative_errno();
                error_list_add(errors, "%s: cannot resolve: %s", path, strerror(-r));
                return r;
        }
        return streq(real, absolute) ? 0 : check_trusted_ancestors(real, errors);
}

int config_parse_file(Config *c, const char *path, ErrorList *errors) {
        _cleanup_fclose_ FILE *f = NULL;
        struct stat st;
        int r;

        /* O_NONBLOCK: a FIFO (or a device) put in place of the config must not hang the
         * daemon in open(); anything but a regular file is refused below. */
        _cleanup_close_ int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
        if (fd < 0) {
                r = negative_errno();
                error_list_add(errors, "%s: cannot open: %s", path, strerror(-r));
                return r;
        }
        if (fstat(fd, &st) < 0) {
                r = negative_errno();
                error_list_add(errors, "%s: cannot stat: %s", path, strerror(-r));
                return r;
        }
        if (!S_ISREG(st.st_mode)) {
                error_list_add(errors, "%s: not a regular file", path);
                return -EINVAL;
        }
        f = fdopen(fd, "r");
        if (!f) {
                r = negative_errno();
                error_list_add(errors, "%s: cannot read: %s", path, strerror(-r));
                return r;
        }
        fd = -1; /* owned by f */
        r = check_trusted(path, &st, errors);
        if (r < 0)
                return r;
        r = check_trusted_parents(path, fileno(f), errors);
        if (r < 0)
                return r;
        return config_read(c, path, NULL, f, NULL, errors);
}

static int conf_filter(const struct dirent *d) {
        size_t n = strlen(d->d_name);
        return d->d_name[0] != '.' && n > 5 && streq(d->d_name + n - 5, ".conf");
}

void config_validate(const Config *c, ErrorList *errors) {
        for (size_t i = 0; i < config_n_sections; i++)
                if (config_sections[i].validate)
                        config_sections[i].validate(c, errors);
}

/* The main file and its drop-ins in lexical order, into c; main->text instead of the
 * main file's when set. -ENOMEM, or -ENOENT when the main file is missing (a caller tells
 * that from an invalid file); other problems are in errors. */
static int load_main_and_dropins(Config *c, const char *path, const ConfigMainText *main, ErrorList *errors) {
        _cleanup_free_ char *dropin_dir = NULL;
        struct dirent **entries = NULL;
        size_t lines_before = c->content_lines;
        int n, r;

        if (main && main->text)
                r = config_read(c, main->name ?: path, path, NULL, main->text, errors);
        else
                r = config_parse_file(c, path, errors);
        /* Without its main file there is no configuration (drop-ins alone are not one). */
        if (r == -ENOMEM || r == -ENOENT)
                return r;
        /* A main file with nothing in it is far more often a truncated write (an editor
         * crash, a full disk) than an intent to drop the whole posture. */
        if (r >= 0 && c->content_lines == lines_before)
                error_list_add(errors, "%s: the file is empty (no section or key); refusing it, as it would drop "
                               "the whole posture (an intentionally empty posture needs one section header, e.g. [daemon])",
                               main && main->text && main->name ? main->name : path);

        dropin_dir = strdup_printf("%s.d", path);
        if (!dropin_dir)
                return -ENOMEM;
        n = scandir(dropin_dir, &entries, conf_filter, alphasort);
        if (n < 0 && errno != ENOENT && errno != ENOTDIR)
                error_list_add(errors, "%s: cannot read drop-in directory: %s", dropin_dir, strerror(errno));
        for (int i = 0; i < n; i++) {
                _cleanup_free_ char *file = strdup_printf("%s/%s", dropin_dir, entries[i]->d_name);
                if (!file)
                        r = -ENOMEM;
                else
                        r = config_parse_file(c, file, errors);
                free(entries[i]);
                if (r == -ENOMEM) {
                        for (int j = i + 1; j < n; j++)
                                free(entries[j]);
                        free(entries);
                        return r;
                }
        }
        free(entries);
        return 0;
}

/* The profiles probe names, read into c in order; each problem is reported at the
 * profile key. A profile names no profiles of its own: one level, no cycles. */
static int load_profiles(Config *c, const Config *probe, const char *path, ErrorList *errors) {
        const ConfigSource *at = &probe->profiles_source;

        for (size_t i = 0; i < probe->n_profiles; i++) {
                _cleanup_free_ char *file = NULL, *user_dir = NULL;
                int r = config_profile_find(path, probe->profiles[i], &file);

                if (r == -ENOMEM)
                        return r;
                if (r < 0) {
                        user_dir = config_profile_user_dir(path);
                        error_list_add(errors, "%s:%u: profile: no profile '%s' (looked for %s.conf in %s and %s)",
                                       at->file ?: path, at->line, probe->profiles[i], probe->profiles[i],
                                       user_dir ?: "?", config_profiles_shipped_dir());
                        continue;
                }
                r = config_parse_file(c, file, errors);
                if (r == -ENOMEM)
                        return r;
                if (c->n_profiles > 0) {
                        error_list_add(errors, "%s:%u: profile: a profile cannot take in other profiles (%s is a "
                                       "profile, named at %s:%u)",
                                       c->profiles_source.file, c->profiles_source.line, file, at->file ?: path,
                                       at->line);
                        config_profiles_free(c->profiles, c->n_profiles);
                        c->profiles = NULL;
                        c->n_profiles = 0;
                }
        }
        c->n_profile_files = c->n_files;
        return 0;
}

int config_load(const char *path, Config **ret, ErrorList *errors) {
        return config_load_with(path, NULL, ret, errors);
}

int config_load_with(const char *path, const ConfigMainText *main, Config **ret, ErrorList *errors) {
        _cleanup_config_ Config *probe = config_new(), *c = NULL;
        size_t errors_before = errors->n;
        int r;

        if (!probe)
                return -ENOMEM;
        r = load_main_and_dropins(probe, path, main, errors);
        if (r < 0)
                return r;
        if (probe->n_profiles > 0 && errors->n == errors_before) {
                /* The profiles come first, so that the main file and its drop-ins override
                 * them: read again after them. Only the second reading is kept. */
                c = config_new();
                if (!c)
                        return -ENOMEM;
                r = load_profiles(c, probe, path, errors);
                if (r >= 0 && errors->n == errors_before)
                        r = load_main_and_dropins(c, path, main, errors);
                if (r < 0)
                        return r;
        } else
                c = TAKE_PTR(probe);

        config_validate(c, errors);
        if (errors->n > errors_before)
                return -EINVAL;
        config_check_warnings(c);
        *ret = TAKE_PTR(c);
        return 0;
}
