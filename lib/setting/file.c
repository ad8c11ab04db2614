/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What every kind of setting that is one text file shares: the persistent-fd reading (IRQ
 * affinities too), the FileSetting operations, CPU masks, and the kernel's ways of saying
 * "no" to a write of CPUs. The kinds are in files of their own (setting/sysctl.c, ...). */
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#include "setting/file.h"
#include "basic/util.h"

/* --- one file, read through a persistent fd --- */

void setting_file_init(SettingFile *f, char *path) {
        f->path = path;
        f->fd = -1;
}

void setting_file_close(SettingFile *f) {
        f->fd = safe_close(f->fd);
}

void setting_file_done(SettingFile *f) {
        setting_file_close(f);
        f->path = mfree(f->path);
}

void setting_file_inherit(SettingFile *f, SettingFile *old) {
        safe_close(f->fd);
        f->fd = TAKE_FD(old->fd);
}

/* Kernel text as compared: trimmed, and valid UTF-8 (observed text goes on the bus, which
 * takes only UTF-8; desired values are printable ASCII, so escaping cannot turn a
 * mismatch into a match). In place. */
static int tidy_text(char *buf, size_t size) {
        char *start = strstrip(buf);

        if (start != buf)
                memmove(buf, start, strlen(start) + 1);
        if (!utf8_is_valid(buf)) {
                _cleanup_free_ char *escaped = utf8_escape(buf);
                if (!escaped)
                        return -ENOMEM;
                snprintf(buf, size, "%s", escaped);
        }
        return 0;
}

static int file_open_persistent(SettingFile *f, SettingContext *rc) {
        int fd = host_open_file(rc->host, f->path, O_RDONLY);

        if (fd < 0)
                return fd;
        /* fds are handed out lowest first, so the number says how many are open: keep a
         * reserve for writes, sockets and the event loop. */
        if (rc->fd_limit > 0 && (unsigned) fd + SETTING_FD_RESERVE >= rc->fd_limit) {
                safe_close(fd);
                return -EMFILE;
        }
        f->fd = fd;
        return 0;
}

static int file_read_once(SettingFile *f, SettingContext *rc, char *buf, size_t size) {
        ssize_t n;
        int r;

        if (f->fd < 0) {
                r = file_open_persistent(f, rc);
                if (r == -EMFILE || r == -ENFILE) {
                        _cleanup_close_ int fd = host_open_file(rc->host, f->path, O_RDONLY);
                        if (fd < 0)
                                return fd;
                        n = pread_string(fd, buf, size);
                        return n < 0 ? (int) n : 0;
                }
                if (r < 0)
                        return r;
        }
        n = pread_string(f->fd, buf, size);
        return n < 0 ? (int) n : 0;
}

int setting_file_read(SettingFile *f, SettingContext *rc, char *buf, size_t size, ReconcileFlags flags) {
        int r;

        if (flags & RECONCILE_FORCE)
                setting_file_close(f);
        r = file_read_once(f, rc, buf, size);
        /* A persistent fd that fails may point at a file that is gone: one fresh open. */
        if (r < 0 && r != -ENOENT && f->fd >= 0) {
                setting_file_close(f);
                r = file_read_once(f, rc, buf, size);
        }
        if (r < 0)
                return r;
        return tidy_text(buf, size);
}

/* --- what the kinds that are one file share --- */

#define FILE_SETTING(s) ((FileSetting *) (s))

const char *setting_file_path(const Setting *s) {
        return FILE_SETTING(s)->file.path;
}

/* missing: why a file that does not exist makes the setting unsupported. */
int file_setting_read(Setting *s, SettingContext *rc, char *buf, size_t size, ReconcileFlags flags,
                      const char *missing) {
        SettingFile *f = &FILE_SETTING(s)->file;
        int r = setting_file_read(f, rc, buf, size, flags);

        if (r == -ENOENT) {
                setting_set_reason(s, "%s (/%s)", missing, f->path);
                return -EOPNOTSUPP;
        }
        if (r < 0)
                setting_set_reason(s, "reading /%s failed: %s", f->path, strerror(-r));
        return r;
}

int file_setting_read_present(Setting *s, SettingContext *rc, char *buf, size_t size, ReconcileFlags flags) {
        return file_setting_read(s, rc, buf, size, flags, "not present on this host");
}

int file_setting_write(Setting *s, SettingContext *rc, const char *value) {
        const char *path = FILE_SETTING(s)->file.path;
        int r = host_write_file(rc->host, path, value);

        if (r >= 0)
                return 0;
        setting_set_reason(s, "writing /%s failed: %s", path, strerror(-r));
        /* A file that was just read is not "gone", and a refused write is a failure to
         * retry, not an unmovable object: those answers belong to IRQs and NICs. */
        return r == -ENOENT || r == -EPERM ? -EIO : r;
}

int file_setting_watch_path(const Setting *s, unsigned i, char *buf, size_t size) {
        if (i > 0)
                return 0;
        snprintf(buf, size, "%s", FILE_SETTING(s)->file.path);
        return 1;
}

void file_setting_inherit(Setting *s, Setting *old, bool same_value) {
        setting_file_inherit(&FILE_SETTING(s)->file, &FILE_SETTING(old)->file);
}

void file_setting_release(Setting *s) {
        setting_file_close(&FILE_SETTING(s)->file);
}

void file_setting_done(Setting *s) {
        setting_file_done(&FILE_SETTING(s)->file);
}

int file_setting_new(SettingKind kind, char *path, const char *object, const char *desired, Setting **ret) {
        _cleanup_(setting_freep) Setting *s = setting_alloc(kind, object);

        if (!s) {
                free(path);
                return -ENOMEM;
        }
        setting_file_init(&FILE_SETTING(s)->file, path);
        if (!path || setting_set_desired(s, desired) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(s);
        return 0;
}

/* --- a CPU mask in the kernel's hex format, compared by its CPUs --- */

int file_setting_new_cpu(SettingKind kind, unsigned cpu, const char *file, const char *desired, Setting **ret) {
        _cleanup_free_ char *object = strdup_printf("cpu%u", cpu);

        if (!object)
                return -ENOMEM;
        return file_setting_new(kind, strdup_printf("sys/devices/system/cpu/cpu%u/%s", cpu, file), object, desired,
                                ret);
}

int file_setting_check_offered(Setting *s, SettingContext *rc, const char *value, const char *list, const char *noun) {
        _cleanup_free_ char *file = NULL, *offered = NULL, *words = NULL;
        const char *path = setting_file_path(s), *slash = strrchr(path, '/');

        file = strdup_printf("%.*s/%s", (int) (slash ? slash - path : 0), path, list);
        if (!file)
                return -ENOMEM;
        if (host_read_file(rc->host, file, &offered) >= 0 && !word_list_contains(offered, value)) {
                words = normalize_whitespace(offered);
                if (!words)
                        return -ENOMEM;
                setting_set_reason(s, "%s '%s' is not offered (available: %s)", noun, value, words);
                return -EOPNOTSUPP;
        }
        return 0;
}

int file_setting_write_offered(Setting *s, SettingContext *rc, const char *value, const char *list, const char *noun) {
        int r = file_setting_check_offered(s, rc, value, list, noun);

        return r < 0 ? r : file_setting_write(s, rc, value);
}

int mask_file_setting_new(SettingKind kind, char *path, const char *object, const CPUSet *cpus, unsigned mask_bits,
                          Setting **ret) {
        _cleanup_(setting_freep) Setting *s = NULL;
        _cleanup_free_ char *mask = cpuset_format_mask(cpus, mask_bits);
        int r;

        if (!mask) {
                free(path);
                return -ENOMEM;
        }
        r = file_setting_new(kind, path, object, mask, &s);
        if (r < 0)
                return r;
        if (cpuset_copy(&((MaskFileSetting *) s)->cpus, cpus) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(s);
        return 0;
}

/* "3" and "00000003" are the same mask. */
bool mask_file_setting_matches(Setting *s, SettingContext *rc) {
        return cpuset_parse_mask(s->observed, &rc->scratch) >= 0 &&
               cpuset_equal(&rc->scratch, &((MaskFileSetting *) s)->cpus);
}

void mask_file_setting_done(Setting *s) {
        file_setting_done(s);
        cpuset_done(&((MaskFileSetting *) s)->cpus);
}

/* --- what kinds that write CPUs share --- */

/* Root ignores file modes, so look at the bits the kernel uses to say "no". */
bool setting_file_is_read_only(const SettingFile *f) {
        struct stat st;

        return f->fd >= 0 && fstat(f->fd, &st) >= 0 && (st.st_mode & 0222) == 0;
}

bool setting_cpus_offline(Setting *s, SettingContext *rc, const CPUSet *cpus) {
        _cleanup_free_ char *text = NULL, *list = NULL;
        _cleanup_cpuset_ CPUSet online = CPUSET_EMPTY;

        if (host_read_file(rc->host, "sys/devices/system/cpu/online", &text) < 0 || cpuset_parse_list(text, &online) < 0 ||
            cpuset_intersects(cpus, &online))
                return false; /* cannot tell, or some are online: keep the kernel's refusal as it is */
        list = cpuset_format_list(cpus);
        setting_set_reason(s, cpuset_count(cpus) == 1 ? "CPU %s is not online" : "none of CPUs %s is online", list ?: "?");
        return true;
}
