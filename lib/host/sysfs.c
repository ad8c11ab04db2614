/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* [sysfs] paths: their syntax, their expansion under the root, and the kernel's bracketed
 * choice lists. Which files [sysfs] refuses is the kind's to say (lib/setting/sysfs.c). */
#include <ctype.h>
#include <dirent.h>
#include <fnmatch.h>
#include <limits.h>
#include <string.h>

#include "basic/array.h"
#include "host/sysfs.h"
#include "basic/util.h"

#define GLOB_CHARS "*?["
#define STRINGIFY_VALUE(x) #x
#define STRINGIFY(x) STRINGIFY_VALUE(x)
#define WHITESPACE " \t\n\r\f\v"

/* --- syntax --- */

bool sysfs_path_is_pattern(const char *path) {
        return path[strcspn(path, GLOB_CHARS)] != '\0';
}

/* One component of a key: a name, or a pattern whose brackets close inside it. */
static const char *component_problem(const char *c, size_t n) {
        if (n == 0)
                return "has an empty component ('//' or a '/' at the end)";
        if ((n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
                return "has a '.' or '..' component (write the path as it is, without them)";
        for (size_t i = 0; i < n; i++) {
                const void *close;

                if (c[i] != '[')
                        continue;
                /* fnmatch() reads "[]x]" as a set holding ']': the first ']' is literal. */
                close = i + 2 < n ? memchr(c + i + 2, ']', n - i - 2) : NULL;
                if (!close)
                        return "has a '[' without its ']' in the same component (a pattern cannot span a '/')";
                i = (size_t) ((const char *) close - c);
        }
        return NULL;
}

/* Files that do something when written instead of holding a value: keeping one "at its
 * value" would unbind, remove, reset or rescan a device on every correction. */
static const char *const action_files[] = {
        "bind",   "delete", "delete_device", "drivers_probe", "eject", "new_device", "new_id", "remove",
        "remove_id", "rescan", "reset", "scan", "trigger_now", "uevent", "unbind",
};

bool sysfs_path_acts(const char *path) {
        const char *slash = strrchr(path, '/'), *name = slash ? slash + 1 : path;

        for (size_t i = 0; i < ELEMENTSOF(action_files); i++)
                if (streq(name, action_files[i]))
                        return true;
        return false;
}

const char *sysfs_path_problem(const char *path) {
        const char *c;

        if (path[0] != '/')
                return "is not an absolute path (e.g. /sys/kernel/mm/ksm/run)";
        if (strlen(path) >= PATH_MAX)
                return "is longer than PATH_MAX";
        for (const char *p = path; *p; p++) {
                if (!isgraph((unsigned char) *p))
                        return "holds white space or a control character";
                if (*p == '\\')
                        return "holds a backslash (patterns take no escapes)";
        }
        /* ".." first: "/sys/../etc" is refused for what it is, not for where it points. */
        for (c = path + 1;; c += strcspn(c, "/") + 1) {
                size_t n = strcspn(c, "/");
                if ((n == 2 && c[0] == '.' && c[1] == '.') || (n == 1 && c[0] == '.'))
                        return component_problem(c, n);
                if (c[n] == '\0')
                        break;
        }
        if (strncmp(path, "/sys/", 5) != 0)
                return "is outside /sys ([sysfs] keeps files under /sys only)";
        for (c = path + 5;; c += strcspn(c, "/") + 1) {
                size_t n = strcspn(c, "/");
                const char *problem = component_problem(c, n);
                if (problem)
                        return problem;
                if (c[n] == '\0')
                        return sysfs_path_acts(path) ? SYSFS_ACTS_PROBLEM : NULL;
        }
}

const char *sysfs_value_problem(const char *value) {
        size_t n = strlen(value);

        if (n == 0)
                return "empty value";
        if (n > SYSFS_VALUE_MAX)
                return "value longer than " STRINGIFY(SYSFS_VALUE_MAX) " characters";
        for (const char *p = value; *p; p++) {
                if (!isprint((unsigned char) *p) && *p != '\t')
                        return "value holds a control character";
                if (*p == '[' || *p == ']')
                        return "value holds a bracket (a choice is written as the bare word: never, not [never])";
        }
        return NULL;
}

/* --- choice lists --- */

/* The next white-space separated word of *p (advanced past it), or NULL at the end. */
static const char *next_word(const char **p, size_t *ret_len) {
        const char *w = *p + strspn(*p, WHITESPACE);
        size_t n = strcspn(w, WHITESPACE);

        *p = w + n;
        *ret_len = n;
        return n > 0 ? w : NULL;
}

static bool has_bracket(const char *w, size_t n) {
        return memchr(w, '[', n) || memchr(w, ']', n);
}

/* Whether w is "[word]" with a bracket-free word inside. */
static bool is_selected(const char *w, size_t n) {
        return n >= 3 && w[0] == '[' && w[n - 1] == ']' && !has_bracket(w + 1, n - 2);
}

bool sysfs_choice_select(char *text) {
        const char *p = text, *w, *selected = NULL;
        size_t n, selected_len = 0;

        while ((w = next_word(&p, &n))) {
                if (is_selected(w, n)) {
                        if (selected)
                                return false;
                        selected = w + 1;
                        selected_len = n - 2;
                } else if (has_bracket(w, n))
                        return false;
        }
        if (!selected)
                return false;
        memmove(text, selected, selected_len);
        text[selected_len] = '\0';
        return true;
}

bool sysfs_choice_offers(const char *text, const char *word) {
        const char *p = text, *w;
        size_t n, len = strlen(word);

        while ((w = next_word(&p, &n))) {
                if (is_selected(w, n)) {
                        w++;
                        n -= 2;
                }
                if (n == len && strncmp(w, word, n) == 0)
                        return true;
        }
        return false;
}

char *sysfs_choice_words(const char *text) {
        char *out = malloc(strlen(text) + 1), *o = out;
        const char *p = text, *w;
        size_t n;

        if (!out)
                return NULL;
        while ((w = next_word(&p, &n))) {
                if (is_selected(w, n)) {
                        w++;
                        n -= 2;
                }
                if (o != out)
                        *o++ = ' ';
                memcpy(o, w, n);
                o += n;
        }
        *o = '\0';
        return out;
}

/* --- expansion under the root --- */

static char *path_join(const char *dir, const char *name, size_t name_len) {
        return dir ? strdup_printf("%s/%.*s", dir, (int) name_len, name) : strndup(name, name_len);
}

static int compare_names(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

static void names_free(char **names, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(names[i]);
        free(names);
}

/* The entries of dir that component matches, sorted. A directory that cannot be listed
 * (a device that went away, not a directory) has none. */
static int list_matching(const Host *h, const char *dir, const char *component, char ***ret, size_t *ret_n) {
        char **names = NULL;
        size_t n = 0, allocated = 0;
        struct dirent *de;
        DIR *d;

        *ret = NULL;
        *ret_n = 0;
        if (host_opendir(h, dir, &d) < 0)
                return 0;
        while ((de = readdir(d))) {
                /* FNM_PERIOD: "*" does not match "." and "..", as in the shell. */
                if (fnmatch(component, de->d_name, FNM_PERIOD) != 0 || streq(de->d_name, ".") ||
                    streq(de->d_name, ".."))
                        continue;
                if (array_grow(&names, &allocated, n + 1) < 0 || !(names[n] = strdup(de->d_name))) {
                        closedir(d);
                        names_free(names, n);
                        return -ENOMEM;
                }
                n++;
        }
        closedir(d);
        if (n > 1)
                qsort(names, n, sizeof(char *), compare_names);
        *ret = names;
        *ret_n = n;
        return 0;
}

/* rest: the pattern below dir (dir NULL: the root). One level per component, so a link
 * loop cannot make it run away. */
static int expand_below(const Host *h, const char *dir, const char *rest, SysfsMatchFn fn, void *userdata) {
        size_t len = strcspn(rest, "/");
        const char *below = rest[len] == '/' ? rest + len + 1 : NULL;
        _cleanup_free_ char *component = strndup(rest, len);
        char **names;
        size_t n;
        int r;

        if (!component)
                return -ENOMEM;
        if (!sysfs_path_is_pattern(component)) {
                _cleanup_free_ char *next = path_join(dir, rest, len);
                if (!next)
                        return -ENOMEM;
                return below ? expand_below(h, next, below, fn, userdata) : fn(userdata, next);
        }
        r = list_matching(h, dir ?: ".", component, &names, &n);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n && r >= 0; i++) {
                _cleanup_free_ char *next = path_join(dir, names[i], strlen(names[i]));
                if (!next)
                        r = -ENOMEM;
                else
                        r = below ? expand_below(h, next, below, fn, userdata) : fn(userdata, next);
        }
        names_free(names, n);
        return r < 0 ? r : 0;
}

int sysfs_expand(const Host *h, const char *path, SysfsMatchFn fn, void *userdata) {
        while (*path == '/')
                path++;
        return expand_below(h, NULL, path, fn, userdata);
}
