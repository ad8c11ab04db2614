/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Originals: what the host had before lowlatd changed it. The file is text, one entry a
 * line, "KIND<TAB>OBJECT<TAB>VALUE", after two header lines "boot_id ID" and "root PATH".
 * Values never contain tabs or newlines (they are tidied kernel text). */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "basic/array.h"
#include "setting/originals.h"
#include "basic/util.h"

static int read_boot_id(char **ret) {
        _cleanup_fclose_ FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");
        char buf[64];

        if (!f || !fgets(buf, sizeof(buf), f))
                return -EIO;
        *ret = strdup(strstrip(buf));
        return *ret ? 0 : -ENOMEM;
}

static int loop_write(int fd, const char *buf, size_t len);

static void entry_key(const void *item, int *ret_kind, const char **ret_name) {
        const OriginalEntry *e = item;

        *ret_kind = (int) e->kind;
        *ret_name = e->object;
}

static OriginalEntry *entry_free(OriginalEntry *e) {
        if (e) {
                free(e->object);
                free(e->value);
                free(e);
        }
        return NULL;
}

static int entry_add(Originals *o, SettingKind kind, const char *object, const char *value) {
        OriginalEntry *e;

        if (array_grow(&o->entries, &o->allocated, o->n + 1) < 0)
                return -ENOMEM;
        e = calloc(1, sizeof(OriginalEntry));
        if (!e)
                return -ENOMEM;
        *e = (OriginalEntry) { kind, strdup(object), strdup(value) };
        if (!e->object || !e->value || key_index_add(&o->index, e) < 0) {
                entry_free(e);
                return -ENOMEM;
        }
        o->entries[o->n++] = e;
        return 0;
}

static void entries_clear(Originals *o) {
        for (size_t i = 0; i < o->n; i++)
                entry_free(o->entries[i]);
        o->n = 0;
        key_index_done(&o->index);
}

static int originals_load(Originals *o) {
        _cleanup_fclose_ FILE *f = fopen(o->path, "re");
        _cleanup_free_ char *line = NULL;
        size_t size = 0;
        bool boot_ok = false, root_ok = false;
        ssize_t n;
        int r;

        if (!f)
                return errno == ENOENT ? 0 : negative_errno();
        while ((n = getline(&line, &size, f)) > 0) {
                char *object, *value;
                SettingKind kind;

                if (line[n - 1] == '\n')
                        line[n - 1] = '\0';
                if (strncmp(line, "boot_id ", 8) == 0) {
                        boot_ok = streq(line + 8, o->boot_id);
                        continue;
                }
                if (strncmp(line, "root ", 5) == 0) {
                        root_ok = streq(line + 5, o->root);
                        continue;
                }
                if (!boot_ok || !root_ok)
                        break; /* another boot, another root: these are not our originals */
                /* Exactly "KIND<TAB>OBJECT<TAB>VALUE", as originals_record() writes it: a
                 * line that is not (a field missing or empty, a tab in the value, a kind
                 * unknown) or that names an object again is skipped, never guessed at. */
                object = strchr(line, '\t');
                value = object ? strchr(object + 1, '\t') : NULL;
                if (!value)
                        continue;
                *object++ = '\0';
                *value++ = '\0';
                kind = setting_kind_from_string(line);
                if (kind < 0 || isempty(object) || strchr(value, '\t') || key_index_find(&o->index, kind, object))
                        continue;
                r = entry_add(o, kind, object, value);
                if (r < 0)
                        return r;
        }
        if (!boot_ok || !root_ok)
                entries_clear(o);
        return 0;
}

static int originals_save(Originals *o) {
        _cleanup_free_ char *tmp = strdup_printf("%s.new", o->path);
        FILE *f;
        int fd;

        if (!tmp)
                return -ENOMEM;
        fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0)
                return negative_errno();
        f = fdopen(fd, "w");
        if (!f) {
                safe_close(fd);
                return -ENOMEM;
        }
        fprintf(f, "boot_id %s\nroot %s\n", o->boot_id, o->root);
        for (size_t i = 0; i < o->n; i++)
                fprintf(f, "%s\t%s\t%s\n", setting_kind_to_string(o->entries[i]->kind), o->entries[i]->object,
                        o->entries[i]->value);
        /* /run is a tmpfs: what matters is surviving a daemon crash, not a power cut. */
        if (fflush(f) != 0) {
                int r = negative_errno();
                fclose(f);
                unlink(tmp);
                return r;
        }
        fclose(f);
        if (rename(tmp, o->path) < 0) {
                int r = negative_errno();
                unlink(tmp);
                return r;
        }
        /* New entries are appended to the file just written. */
        safe_close(o->fd);
        o->fd = open(o->path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW);
        return o->fd < 0 ? negative_errno() : 0;
}

/* systemd-escape --path: what is not [A-Za-z0-9:_.] (or a leading '.') becomes \xNN, and
 * '/' between components becomes '-'; so two roots never share a name. */
static int escape_path(const char *path, char **ret) {
        size_t len = 0, cap;
        char *out;

        while (*path == '/')
                path++;
        cap = strlen(path) * 4 + 1;
        out = malloc(cap);
        if (!out)
                return -ENOMEM;
        for (const char *p = path; *p; p++) {
                unsigned char c = (unsigned char) *p;

                if (c == '/') {
                        while (p[1] == '/')
                                p++;
                        if (p[1] != '\0')
                                out[len++] = '-';
                } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                           c == ':' || c == '_' || (c == '.' && len > 0))
                        out[len++] = (char) c;
                else
                        len += (size_t) snprintf(out + len, cap - len, "\\x%02x", c);
        }
        out[len] = '\0';
        *ret = out;
        return 0;
}

int originals_state_dir(const char *base, const char *root, char **ret) {
        _cleanup_free_ char *escaped = NULL;
        char *dir;
        int r;

        if (root[0] != '/')
                return -EINVAL;
        r = escape_path(root, &escaped);
        if (r < 0)
                return r;
        if (isempty(escaped))
                dir = strdup(base); /* the host itself */
        else if (strlen(escaped) > NAME_MAX)
                return -ENAMETOOLONG;
        else
                dir = strdup_printf("%s/root/%s", base, escaped);
        if (!dir)
                return -ENOMEM;
        *ret = dir;
        return 0;
}

/* mkdir -p, mode 0700 for what it creates. */
static int mkdir_parents(const char *dir) {
        _cleanup_free_ char *copy = strdup(dir);

        if (!copy)
                return -ENOMEM;
        for (char *p = copy + 1;; p++) {
                if (*p != '/' && *p != '\0')
                        continue;
                char c = *p;
                *p = '\0';
                if (mkdir(copy, 0700) < 0 && errno != EEXIST)
                        return negative_errno();
                *p = c;
                if (c == '\0')
                        return 0;
        }
}

int originals_open(const char *dir, const char *root, Originals **ret) {
        _cleanup_(originals_freep) Originals *o = calloc(1, sizeof(Originals));
        int r;

        if (!o)
                return -ENOMEM;
        o->fd = -1;
        key_index_init(&o->index, entry_key);
        r = mkdir_parents(dir);
        if (r < 0)
                return r;
        o->path = strdup_printf("%s/originals", dir);
        o->root = strdup(root);
        if (!o->path || !o->root)
                return -ENOMEM;
        r = read_boot_id(&o->boot_id);
        if (r < 0)
                return r;
        r = originals_load(o);
        if (r < 0)
                return r;
        /* Rewritten at once: drops entries of another boot or root, and opens for appending. */
        r = originals_save(o);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(o);
        return 0;
}

Originals *originals_free(Originals *o) {
        if (!o)
                return NULL;
        entries_clear(o);
        free(o->entries);
        safe_close(o->fd);
        free(o->path);
        free(o->boot_id);
        free(o->root);
        free(o);
        return NULL;
}

const char *originals_get(const Originals *o, SettingKind kind, const char *object) {
        const OriginalEntry *e = key_index_find(&o->index, (int) kind, object);

        return e ? e->value : NULL;
}

int originals_record(Originals *o, SettingKind kind, const char *object, const char *value) {
        int r;

        if (originals_get(o, kind, object))
                return 0;
        if (strpbrk(object, "\t\n") || strpbrk(value, "\t\n"))
                return -EINVAL;
        /* One append per entry, written before the setting is changed. */
        _cleanup_free_ char *line = strdup_printf("%s\t%s\t%s\n", setting_kind_to_string(kind), object, value);
        if (!line)
                return -ENOMEM;
        if (o->fd < 0)
                return -EBADF;
        r = loop_write(o->fd, line, strlen(line));
        if (r < 0)
                return r;
        return entry_add(o, kind, object, value);
}

void originals_forget(Originals *o, SettingKind kind, const char *object) {
        OriginalEntry *e = key_index_find(&o->index, (int) kind, object);

        if (!e)
                return;
        key_index_remove(&o->index, e);
        for (size_t i = 0; i < o->n; i++)
                if (o->entries[i] == e) {
                        o->entries[i] = o->entries[--o->n];
                        break;
                }
        entry_free(e);
        o->dirty = true;
}

int originals_rename(Originals *o, SettingKind kind, const char *from, const char *to) {
        const char *value = originals_get(o, kind, from);
        _cleanup_free_ char *copy = NULL;
        int r;

        if (!value || streq(from, to))
                return 0;
        copy = strdup(value);
        if (!copy)
                return -ENOMEM;
        originals_forget(o, kind, to);
        r = originals_record(o, kind, to, copy);
        if (r < 0)
                return r;
        originals_forget(o, kind, from);
        return 1;
}

int originals_commit(Originals *o) {
        if (!o->dirty)
                return 0;
        o->dirty = false;
        return originals_save(o);
}

static int loop_write(int fd, const char *buf, size_t len) {
        while (len > 0) {
                ssize_t n = write(fd, buf, len);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                buf += n;
                len -= (size_t) n;
        }
        return 0;
}
