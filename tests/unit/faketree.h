/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the unit tests' fake host trees share: the file chores (write in place, read back,
 * make parents, remove), the CPU files every tree has, and the Host, Posture and
 * SettingContext a fixture builds on its tree. Each test keeps its own Fixture; the tree_*()
 * macros at the end work on any fixture that holds its tree's path in `root`. */
#pragma once

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/config.h"
#include "basic/errorlist.h"
#include "host/host.h"
#include "basic/macro.h"
#include "setting/originals.h"
#include "config/posture.h"
#include "setting/setting.h"
#include "setting/table.h"
#include "basic/util.h"

/* mkdir -p of the directory that will hold path; aborts on failure (a broken fixture). */
static inline void make_parents(const char *path) {
        char *copy = strdup(path);

        if (!copy)
                abort();
        for (char *p = copy + 1; *p; p++)
                if (*p == '/') {
                        *p = '\0';
                        if (mkdir(copy, 0755) < 0 && errno != EEXIST)
                                abort();
                        *p = '/';
                }
        free(copy);
}

static inline int faketree_remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        (void) st;
        (void) flag;
        (void) ftw;
        return remove(path);
}

/* rm -rf path; what cannot be removed stays (a test's temporary tree). */
static inline void faketree_remove(const char *path) {
        if (path)
                (void) nftw(path, faketree_remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* A new empty tree, /tmp/NAME-XXXXXX, its path in root (size bytes); aborts on failure. */
static inline void faketree_mkdtemp(char *root, size_t size, const char *name) {
        if ((size_t) snprintf(root, size, "/tmp/%s-XXXXXX", name) >= size || !mkdtemp(root))
                abort();
}

/* --- files under root, by their path relative to it; a fixture that cannot write aborts --- */

/* root/rel, allocated; aborts when out of memory. */
static inline char *faketree_path(const char *root, const char *rel) {
        char *path = strdup_printf("%s/%s", root, rel);

        if (!path)
                abort();
        return path;
}

/* Writes in place (O_TRUNC, like python open(path, 'w')): persistent fds see it. */
static inline void faketree_write_bytes(const char *root, const char *rel, const void *data, size_t len) {
        _cleanup_free_ char *path = faketree_path(root, rel);
        _cleanup_close_ int fd = -1;

        make_parents(path);
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0 || write(fd, data, len) != (ssize_t) len) {
                printf("# cannot write %s: %m\n", path);
                abort();
        }
}

static inline void faketree_write(const char *root, const char *rel, const char *text) {
        faketree_write_bytes(root, rel, text, strlen(text));
}

/* faketree_write() of text to the path rel_fmt formats. */
_printf_(3, 4) static inline void faketree_writef(const char *root, const char *text, const char *rel_fmt, ...) {
        _cleanup_free_ char *rel = NULL;
        va_list ap;

        va_start(ap, rel_fmt);
        if (vasprintf(&rel, rel_fmt, ap) < 0)
                abort();
        va_end(ap);
        faketree_write(root, rel, text);
}

static inline void faketree_write_int32(const char *root, const char *rel, int32_t v) {
        faketree_write_bytes(root, rel, &v, sizeof(v));
}

/* mkdir -p root/rel. */
static inline void faketree_mkdir(const char *root, const char *rel) {
        _cleanup_free_ char *path = strdup_printf("%s/%s/", root, rel);

        if (!path)
                abort();
        make_parents(path);
}

/* root/rel -> target, replacing what was there. */
static inline void faketree_symlink(const char *root, const char *rel, const char *target) {
        _cleanup_free_ char *path = faketree_path(root, rel);

        make_parents(path);
        (void) unlink(path);
        if (symlink(target, path) < 0)
                abort();
}

static inline void faketree_chmod(const char *root, const char *rel, mode_t mode) {
        _cleanup_free_ char *path = faketree_path(root, rel);

        if (chmod(path, mode) < 0)
                abort();
}

/* rm -rf root/rel. */
static inline void faketree_remove_at(const char *root, const char *rel) {
        _cleanup_free_ char *path = faketree_path(root, rel);

        faketree_remove(path);
}

/* The whole file at path, NUL-terminated (the caller frees it); NULL when it cannot be read. */
static inline char *faketree_read_file(const char *path) {
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        char *buf = NULL;
        size_t len = 0, size = 0;
        ssize_t n;

        if (fd < 0)
                return NULL;
        do {
                if (len + 1 >= size) {
                        char *bigger = realloc(buf, size = size ? 2 * size : 4096);
                        if (!bigger) {
                                free(buf);
                                return NULL;
                        }
                        buf = bigger;
                }
                n = read(fd, buf + len, size - len - 1);
                if (n < 0) {
                        free(buf);
                        return NULL;
                }
                len += (size_t) n;
        } while (n > 0);
        buf[len] = '\0';
        return buf;
}

/* root/rel's contents (up to 4 KiB, in a buffer the next call reuses); "<missing>" when it
 * cannot be read, which no check expects. */
static inline const char *faketree_read(const char *root, const char *rel) {
        static char buf[4096];
        _cleanup_free_ char *path = faketree_path(root, rel);
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t n;

        if (fd < 0 || (n = read(fd, buf, sizeof(buf) - 1)) < 0)
                return "<missing>";
        buf[n] = '\0';
        return buf;
}

/* The s32 at the start of root/rel (dev/cpu_dma_latency); -12345 when it cannot be read. */
static inline int32_t faketree_read_int32(const char *root, const char *rel) {
        _cleanup_free_ char *path = faketree_path(root, rel);
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        int32_t v = -12345;

        if (fd < 0 || read(fd, &v, sizeof(v)) != (ssize_t) sizeof(v))
                return -12345;
        return v;
}

/* root/rel's size; -1 when it is not there. */
static inline off_t faketree_size(const char *root, const char *rel) {
        _cleanup_free_ char *path = faketree_path(root, rel);
        struct stat st;

        return stat(path, &st) == 0 ? st.st_size : -1;
}

/* sys/devices/system/cpu/{online,possible,isolated,nohz_full}: the CPU facts host_read_cpus()
 * starts from. cpus is online and possible alike. */
static inline void faketree_cpus(const char *root, const char *cpus, const char *isolated, const char *nohz_full) {
        const char *const files[][2] = {
                { "online", cpus }, { "possible", cpus }, { "isolated", isolated }, { "nohz_full", nohz_full },
        };

        for (size_t i = 0; i < ELEMENTSOF(files); i++) {
                _cleanup_free_ char *text = strdup_printf("%s\n", files[i][1]);

                if (!text)
                        abort();
                faketree_writef(root, text, "sys/devices/system/cpu/%s", files[i][0]);
        }
}

/* --- a Host, Posture and SettingContext on the tree --- */

/* Opens the tree at root and builds the posture of config_text (parsed as name) on it,
 * printing any errors as TAP comments. Returns true with *ret_host and *ret_posture set
 * (the caller frees them), false when the fixture cannot start. */
static inline bool faketree_posture(const char *root, const char *name, const char *config_text, Host **ret_host,
                                    Posture **ret_posture) {
        _cleanup_error_list_ ErrorList errors = ERROR_LIST_EMPTY;
        _cleanup_config_ Config *c = config_new();
        HostCpus cpus = {};
        int r;

        *ret_posture = NULL;
        r = host_open(root, ret_host);
        if (r >= 0)
                r = host_read_cpus(*ret_host, &cpus);
        if (r >= 0 && c && config_parse_string(c, name, config_text, &errors) >= 0) {
                config_validate(c, &errors);
                if (errors.n == 0)
                        r = posture_build(&c, &cpus, ret_posture, &errors);
        }
        host_cpus_done(&cpus);
        for (size_t i = 0; i < errors.n; i++)
                printf("#   error: %s\n", errors.items[i]);
        if (r < 0 || !*ret_posture) {
                printf("# fixture does not start: %s\n", strerror(r < 0 ? -r : EINVAL));
                return false;
        }
        return true;
}

/* The size of a fixture's event log: "drift corrected ..." */
#define FAKETREE_EVENTS_SIZE 512

/* A SettingContext's handler: appends the event's name to the FAKETREE_EVENTS_SIZE buffer that
 * is its userdata, space-separated. */
static inline void faketree_record_event(void *userdata, EventId e, const Setting *s, ReconcileFlags flags) {
        char *events = userdata;
        size_t len = strlen(events);

        (void) s;
        snprintf(events + len, FAKETREE_EVENTS_SIZE - len, "%s%s", len ? " " : "", event_to_string(e) ?: "?");
}

/* What buf (size bytes) holds, which is then forgotten; in a buffer the next call reuses. */
static inline const char *faketree_take(char *buf, size_t size) {
        static char out[1024];

        snprintf(out, sizeof(out), "%s", buf);
        memset(buf, 0, size);
        return out;
}

/* faketree_posture() of config_text on root (as "s.conf"), and an enforcing SettingContext on
 * them that records its events in events (FAKETREE_EVENTS_SIZE bytes). */
static inline bool faketree_reconciler(const char *root, const char *config_text, Host **ret_host,
                                       Posture **ret_posture, SettingContext *ret_rc, char *events) {
        if (!faketree_posture(root, "s.conf", config_text, ret_host, ret_posture))
                return false;
        *ret_rc = (SettingContext) {
                .host = *ret_host,
                .posture = *ret_posture,
                .observe = false,
                .handler = faketree_record_event,
                .userdata = events,
        };
        return true;
}

/* Frees what faketree_reconciler() made, and the tree. */
static inline void faketree_reconciler_done(const char *root, SettingContext *rc, Posture *posture, Host *host) {
        cpuset_done(&rc->scratch);
        posture_free(posture);
        host_free(host);
        faketree_remove(root);
}

/* --- the fixture most setting kinds' tests share --- */

/* A tree, the Host, Posture and enforcing SettingContext on it, the table the kind plans into
 * (table_init()ed by the test, which plans its own way) and the SettingContext's event log. */
typedef struct FaketreeFixture {
        char root[40];
        Host *host;
        Posture *posture;
        SettingContext rc;
        SettingTable table;
        char events[FAKETREE_EVENTS_SIZE];
} FaketreeFixture;

/* faketree_reconciler() of config_text on the fixture's tree. */
static inline bool faketree_fixture_start(FaketreeFixture *f, const char *config_text) {
        return faketree_reconciler(f->root, config_text, &f->host, &f->posture, &f->rc, f->events);
}

/* Frees the table and what faketree_fixture_start() made, and removes the tree. */
static inline void faketree_fixture_done(FaketreeFixture *f) {
        table_done(&f->table);
        faketree_reconciler_done(f->root, &f->rc, f->posture, f->host);
}

/* Originals kept under the tree's run/, which the fixture's SettingContext then records to;
 * *ret (the caller frees it) is set on success only. */
static inline int faketree_fixture_originals(FaketreeFixture *f, Originals **ret) {
        _cleanup_free_ char *dir = faketree_path(f->root, "run");
        Originals *o = NULL;
        int r;

        r = originals_open(dir, f->root, &o);
        if (r < 0)
                return r;
        f->rc.originals = *ret = o;
        return r;
}

/* --- the same on a fixture f: any struct with its tree's path in f->root --- */

#define tree_write_bytes(f, rel, data, len) faketree_write_bytes((f)->root, (rel), (data), (len))
#define tree_write(f, rel, text) faketree_write((f)->root, (rel), (text))
#define tree_writef(f, text, ...) faketree_writef((f)->root, (text), __VA_ARGS__)
#define tree_write_int32(f, rel, v) faketree_write_int32((f)->root, (rel), (v))
#define tree_mkdir(f, rel) faketree_mkdir((f)->root, (rel))
#define tree_symlink(f, rel, target) faketree_symlink((f)->root, (rel), (target))
#define tree_chmod(f, rel, mode) faketree_chmod((f)->root, (rel), (mode))
#define tree_remove(f, rel) faketree_remove_at((f)->root, (rel))
#define tree_read(f, rel) faketree_read((f)->root, (rel))
#define tree_read_int32(f, rel) faketree_read_int32((f)->root, (rel))
#define tree_size(f, rel) faketree_size((f)->root, (rel))
/* ... and on a fixture with an events[FAKETREE_EVENTS_SIZE] log. */
#define events_take(f) faketree_take((f)->events, sizeof((f)->events))
