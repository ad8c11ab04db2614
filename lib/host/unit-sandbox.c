/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lowlatd.service's file system sandbox as its unit file and drop-ins under the root say
 * (unit-sandbox.h): what [sysfs] may write once the unit runs the daemon. Only the two
 * settings that decide it for /sys are read; the rest of the unit is systemd's business. */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "basic/array.h"
#include "host/unit-sandbox.h"
#include "basic/util.h"

#define UNIT_NAME "lowlatd.service"

/* What units/lowlatd.service.in says (test-posture-load compares the two): the unit read in
 * place of one that is not installed. */
static const char shipped_unit[] = "[Service]\n"
                                   "ReadOnlyPaths=/sys\n"
                                   "ReadWritePaths=/sys/devices -/sys/kernel/mm -/sys/module "
                                   "-/sys/kernel/debug/sched/fair_server -/sys/fs/cgroup\n";

/* systemd's unit directories for the system manager, first the one that wins. */
static const char *const unit_directories[] = {
        "etc/systemd/system", "run/systemd/system", "usr/local/lib/systemd/system", "usr/lib/systemd/system",
        "lib/systemd/system",
};

static void paths_clear(UnitSandboxPath *paths, size_t *n) {
        for (size_t i = 0; i < *n; i++)
                free(paths[i].path);
        *n = 0;
}

void unit_sandbox_done(UnitSandbox *s) {
        paths_clear(s->read_write, &s->n_read_write);
        paths_clear(s->read_only, &s->n_read_only);
        free(s->read_write);
        free(s->read_only);
        for (size_t i = 0; i < s->n_files; i++)
                free(s->files[i]);
        free(s->files);
        *s = UNIT_SANDBOX_EMPTY;
}

static int paths_add(UnitSandboxPath **paths, size_t *n, size_t *allocated, const char *file, const char *word,
                     size_t len) {
        char *path;

        /* "-" (a missing path is no error) and "+" (outside RootDirectory=) change nothing here. */
        while (len > 0 && (*word == '-' || *word == '+')) {
                word++;
                len--;
        }
        while (len > 1 && word[len - 1] == '/')
                len--;
        if (len == 0 || *word != '/')
                return 0; /* systemd ignores a relative path, with a message of its own */
        path = strndup(word, len);
        if (!path || array_grow(paths, allocated, *n + 1) < 0) {
                free(path);
                return -ENOMEM;
        }
        (*paths)[(*n)++] = (UnitSandboxPath) { path, file };
        return 0;
}

/* One assignment's value: its words (a word in quotes may hold spaces) added, or the list
 * emptied by an empty value. */
static int assign_paths(UnitSandboxPath **paths, size_t *n, size_t *allocated, const char *file, const char *value) {
        const char *s = value;

        if (*value == '\0') {
                paths_clear(*paths, n);
                return 0;
        }
        for (;;) {
                const char *start, *end;

                s += strspn(s, " \t");
                if (*s == '\0')
                        return 0;
                if (*s == '"' || *s == '\'') {
                        start = s + 1;
                        end = strchr(start, *s);
                        if (!end)
                                end = start + strlen(start);
                        s = *end ? end + 1 : end;
                } else {
                        start = s;
                        end = s + strcspn(s, " \t");
                        s = end;
                }
                if (paths_add(paths, n, allocated, file, start, (size_t) (end - start)) < 0)
                        return -ENOMEM;
        }
}

static int parse_assignment(UnitSandbox *s, const char *file, char *line) {
        char *eq = strchr(line, '='), *key, *value;

        if (!eq)
                return 0;
        *eq = '\0';
        key = strstrip(line);
        value = strstrip(eq + 1);
        if (streq(key, "ReadWritePaths"))
                return assign_paths(&s->read_write, &s->n_read_write, &s->allocated_read_write, file, value);
        if (streq(key, "ReadOnlyPaths"))
                return assign_paths(&s->read_only, &s->n_read_only, &s->allocated_read_only, file, value);
        return 0;
}

int unit_sandbox_parse(UnitSandbox *s, const char *file, const char *text) {
        _cleanup_free_ char *copy = strdup(text), *logical = NULL;
        bool in_service = false;
        char *save = NULL;

        if (!copy)
                return -ENOMEM;
        for (char *raw = strtok_r(copy, "\n", &save); raw; raw = strtok_r(NULL, "\n", &save)) {
                char *line = strstrip(raw);
                size_t len = strlen(line);
                bool continues = len > 0 && line[len - 1] == '\\';
                char *joined;

                /* A comment inside a continued line is skipped, as systemd does. */
                if (*line == '#' || *line == ';')
                        continue;
                if (continues)
                        line[len - 1] = ' ';
                joined = logical ? strdup_printf("%s%s", logical, line) : strdup(line);
                if (!joined)
                        return -ENOMEM;
                free(logical);
                logical = joined;
                if (continues)
                        continue;
                line = strstrip(logical);
                if (*line == '[')
                        in_service = streq(line, "[Service]");
                else if (in_service && parse_assignment(s, file, line) < 0)
                        return -ENOMEM;
                logical = mfree(logical);
        }
        if (logical && in_service)
                return parse_assignment(s, file, strstrip(logical));
        return 0;
}

static int files_add(UnitSandbox *s, char *file) {
        if (!file || array_grow(&s->files, &s->allocated_files, s->n_files + 1) < 0) {
                free(file);
                return -ENOMEM;
        }
        s->files[s->n_files++] = file;
        return 0;
}

/* Reads the file at rel under the root into s, its name (as the host has it) kept for
 * messages; where it cannot be read (but for -ENOENT), its name in *unreadable. */
static int read_one(const Host *h, UnitSandbox *s, const char *rel, char **unreadable) {
        _cleanup_free_ char *text = NULL;
        int r;

        r = host_read_file(h, rel, &text);
        if (r < 0) {
                if (r != -ENOENT && !*unreadable)
                        *unreadable = host_path(h, rel);
                return r;
        }
        r = files_add(s, host_path(h, rel));
        return r < 0 ? r : unit_sandbox_parse(s, s->files[s->n_files - 1], text);
}

static int compare_names(const void *a, const void *b) {
        return strcmp(strrchr(*(char *const *) a, '/') + 1, strrchr(*(char *const *) b, '/') + 1);
}

static bool name_taken(char **paths, size_t n, const char *name) {
        for (size_t i = 0; i < n; i++)
                if (streq(strrchr(paths[i], '/') + 1, name))
                        return true;
        return false;
}

/* The drop-ins' paths under the root, in the order systemd applies them. */
static int list_dropins(const Host *h, char ***ret, size_t *ret_n) {
        char **paths = NULL;
        size_t n = 0, allocated = 0;
        int r = 0;

        for (size_t i = 0; i < ELEMENTSOF(unit_directories) && r >= 0; i++) {
                _cleanup_free_ char *dir = strdup_printf("%s/" UNIT_NAME ".d", unit_directories[i]);
                struct dirent *de;
                DIR *d;

                if (!dir) {
                        r = -ENOMEM;
                        break;
                }
                if (host_opendir(h, dir, &d) < 0)
                        continue;
                while (r >= 0 && (de = readdir(d))) {
                        size_t len = strlen(de->d_name);
                        char *path;

                        if (de->d_name[0] == '.' || len < 6 || !streq(de->d_name + len - 5, ".conf") ||
                            name_taken(paths, n, de->d_name))
                                continue;
                        path = strdup_printf("%s/%s", dir, de->d_name);
                        if (!path || array_grow(&paths, &allocated, n + 1) < 0) {
                                free(path);
                                r = -ENOMEM;
                        } else
                                paths[n++] = path;
                }
                closedir(d);
        }
        if (r < 0) {
                for (size_t i = 0; i < n; i++)
                        free(paths[i]);
                free(paths);
                return r;
        }
        if (n > 1)
                qsort(paths, n, sizeof(char *), compare_names);
        *ret = paths;
        *ret_n = n;
        return 0;
}

int unit_sandbox_read(const Host *h, UnitSandbox *ret, char **ret_unreadable) {
        UnitSandbox s = UNIT_SANDBOX_EMPTY;
        char *unreadable = NULL;
        char **dropins = NULL;
        size_t n_dropins = 0;
        int r = -ENOENT;

        for (size_t i = 0; i < ELEMENTSOF(unit_directories) && r == -ENOENT; i++) {
                _cleanup_free_ char *rel = strdup_printf("%s/" UNIT_NAME, unit_directories[i]);

                r = rel ? read_one(h, &s, rel, &unreadable) : -ENOMEM;
        }
        s.installed = r >= 0;
        if (r == -ENOENT) {
                r = files_add(&s, strdup(UNIT_NAME " as lowlatd ships it"));
                if (r >= 0)
                        r = unit_sandbox_parse(&s, s.files[0], shipped_unit);
        }
        if (r >= 0)
                r = list_dropins(h, &dropins, &n_dropins);
        for (size_t i = 0; i < n_dropins; i++) {
                /* A link to nothing (to /dev/null in a tree that has none) masks its namesakes. */
                if (r >= 0 && (r = read_one(h, &s, dropins[i], &unreadable)) == -ENOENT)
                        r = 0;
                free(dropins[i]);
        }
        free(dropins);
        if (r < 0) {
                unit_sandbox_done(&s);
                if (ret_unreadable)
                        *ret_unreadable = unreadable;
                else
                        free(unreadable);
                return r;
        }
        free(unreadable);
        *ret = s;
        return 0;
}

/* How many characters of path prefix names, if it is path or a directory above it; else 0. */
static size_t covers(const char *prefix, const char *path) {
        size_t len = strlen(prefix);

        if (streq(prefix, "/"))
                return 1;
        if (strncmp(path, prefix, len) != 0 || (path[len] != '\0' && path[len] != '/'))
                return 0;
        return len;
}

static const UnitSandboxPath *deepest(const UnitSandboxPath *paths, size_t n, const char *path, size_t *ret_len) {
        const UnitSandboxPath *best = NULL;

        *ret_len = 0;
        for (size_t i = 0; i < n; i++) {
                size_t len = covers(paths[i].path, path);
                if (len > *ret_len) {
                        *ret_len = len;
                        best = &paths[i];
                }
        }
        return best;
}

/* The directories whose entries are links into /sys/devices. */
static bool is_link_into_devices(const char *path) {
        static const char *const link_dirs[] = { "/sys/class/", "/sys/block/", "/sys/dev/" };
        const char *rest, *slash;

        for (size_t i = 0; i < ELEMENTSOF(link_dirs); i++)
                if (strncmp(path, link_dirs[i], strlen(link_dirs[i])) == 0)
                        return true;
        /* /sys/bus/NAME/devices/: one component in between */
        if (strncmp(path, "/sys/bus/", strlen("/sys/bus/")) != 0)
                return false;
        rest = path + strlen("/sys/bus/");
        slash = strchr(rest, '/');
        return slash && slash > rest && strncmp(slash, "/devices/", strlen("/devices/")) == 0;
}

bool unit_sandbox_writable(const UnitSandbox *s, const char *path, const UnitSandboxPath **ret_by) {
        const UnitSandboxPath *by_read_only;
        size_t rw_len, ro_len;

        if (is_link_into_devices(path))
                path = "/sys/devices";
        (void) deepest(s->read_write, s->n_read_write, path, &rw_len);
        by_read_only = deepest(s->read_only, s->n_read_only, path, &ro_len);
        /* The same path in both: systemd keeps the more restrictive mount (namespace.c). */
        if (ro_len == 0 || rw_len > ro_len) {
                if (ret_by)
                        *ret_by = NULL;
                return true;
        }
        if (ret_by)
                *ret_by = by_read_only;
        return false;
}
