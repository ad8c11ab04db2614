/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Settings that are one text file: irq_default_affinity (/proc/irq/default_smp_affinity),
 * sysctl (/proc/sys), governor (cpufreq/scaling_governor) and cpuidle (an idle state's
 * disable file); and the persistent-fd reading they share with IRQ affinities. */
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#include "setting/file.h"
#include "setting/table.h"
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

/* --- what the four kinds share --- */

#define FILE_SETTING(s) ((FileSetting *) (s))

const char *setting_file_path(const Setting *s) {
        return FILE_SETTING(s)->file.path;
}

/* missing: why a file that does not exist makes the setting unsupported. */
static int file_setting_read(Setting *s, SettingContext *rc, char *buf, size_t size, ReconcileFlags flags,
                             const char *missing) {
        SettingFile *f = &FILE_SETTING(s)->file;
        int r = setting_file_read(f, rc, buf, size, flags);

        if (r == -ENOENT) {
                setting_set_reason(s, "%s (%s)", missing, f->path);
                return -EOPNOTSUPP;
        }
        if (r < 0)
                setting_set_reason(s, "reading %s failed: %s", f->path, strerror(-r));
        return r;
}

static int file_setting_read_present(Setting *s, SettingContext *rc, char *buf, size_t size, ReconcileFlags flags) {
        return file_setting_read(s, rc, buf, size, flags, "not present on this host");
}

int file_setting_write(Setting *s, SettingContext *rc, const char *value) {
        const char *path = FILE_SETTING(s)->file.path;
        int r = host_write_file(rc->host, path, value);

        if (r >= 0)
                return 0;
        setting_set_reason(s, "writing %s failed: %s", path, strerror(-r));
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

#define FILE_SETTING_OPS                              \
        .group = SETTING_GROUP_HOST,                  \
        .watch_path = file_setting_watch_path,        \
        .inherit = file_setting_inherit,              \
        .release = file_setting_release

/* --- a CPU mask in the kernel's hex format, compared by its CPUs --- */

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

/* --- irq_default_affinity: the mask new IRQs get --- */

int setting_new_default_affinity(const Posture *p, Setting **ret) {
        return mask_file_setting_new(SETTING_IRQ_DEFAULT_AFFINITY, strdup("proc/irq/default_smp_affinity"),
                                     "default_smp_affinity", &p->default_affinity, p->mask_bits, ret);
}

static int default_affinity_plan(SettingTable *t, const Host *h, const Posture *p) {
        Setting *s = NULL;
        int r;

        /* With nothing isolated and no explicit default there is nothing to keep new IRQs
         * away from; leave the boot-time irqaffinity= choice alone. */
        if (cpuset_is_empty(&p->isolated) && p->config->default_affinity.kind == CPUS_HOUSEKEEPING)
                return 0;
        r = setting_new_default_affinity(p, &s);
        return r < 0 ? r : table_add(t, s);
}

const SettingVTable irq_default_affinity_vtable = {
        FILE_SETTING_OPS,
        .object_size = sizeof(MaskFileSetting),
        .read = file_setting_read_present,
        .write = file_setting_write,
        .matches = mask_file_setting_matches,
        .done = mask_file_setting_done,
        .plan = default_affinity_plan,
};

/* --- sysctl --- */

int setting_new_sysctl(const char *key, const char *value, Setting **ret) {
        _cleanup_free_ char *desired = NULL;
        char *path;

        if (!sysctl_key_is_valid(key))
                return -EINVAL;
        desired = normalize_whitespace(value);
        path = strdup_printf("proc/sys/%s", key);
        if (!desired || !path) {
                free(path);
                return -ENOMEM;
        }
        for (char *c = path + strlen("proc/sys/"); *c; c++)
                if (*c == '.')
                        *c = '/';
        return file_setting_new(SETTING_SYSCTL, path, key, desired, ret);
}

/* Runs of white space collapse (tcp_rmem reads back with tabs). */
static int sysctl_read(Setting *s, SettingContext *rc, char *buf, size_t size, ReconcileFlags flags) {
        int r = file_setting_read(s, rc, buf, size, flags, "no such sysctl on this kernel");

        if (r < 0)
                return r;
        normalize_whitespace_in_place(buf);
        return 0;
}

static int sysctl_plan(SettingTable *t, const Host *h, const Posture *p) {
        const Config *c = p->config;

        for (size_t i = 0; i < c->n_sysctls; i++) {
                Setting *s = NULL;
                int r = setting_new_sysctl(c->sysctls[i].key, c->sysctls[i].value, &s);
                if (r >= 0)
                        r = table_add(t, s);
                if (r < 0)
                        return r;
        }
        return 0;
}

const SettingVTable sysctl_vtable = {
        FILE_SETTING_OPS,
        .object_size = sizeof(FileSetting),
        .read = sysctl_read,
        .write = file_setting_write,
        .done = file_setting_done,
        .plan = sysctl_plan,
};

/* --- governor --- */

int setting_new_governor(unsigned cpu, const char *governor, Setting **ret) {
        _cleanup_free_ char *object = strdup_printf("cpu%u", cpu);

        if (!object)
                return -ENOMEM;
        return file_setting_new(SETTING_GOVERNOR,
                                strdup_printf("sys/devices/system/cpu/cpu%u/cpufreq/scaling_governor", cpu), object,
                                governor, ret);
}

static int governor_read(Setting *s, SettingContext *rc, char *buf, size_t size, ReconcileFlags flags) {
        return file_setting_read(s, rc, buf, size, flags, "no cpufreq driver for this CPU");
}

/* A governor the driver does not offer is unsupported, not a failure to retry. */
static int governor_check_available(Setting *s, SettingContext *rc, const char *governor) {
        _cleanup_free_ char *file = NULL, *avail = NULL, *norm = NULL;
        const char *path = FILE_SETTING(s)->file.path, *slash = strrchr(path, '/');

        file = strdup_printf("%.*s/scaling_available_governors", (int) (slash ? slash - path : 0), path);
        if (!file)
                return -ENOMEM;
        if (host_read_file(rc->host, file, &avail) < 0)
                return 0; /* cannot tell; let the write decide */
        if (word_list_contains(avail, governor))
                return 0;
        norm = normalize_whitespace(avail);
        if (!norm)
                return -ENOMEM;
        setting_set_reason(s, "governor '%s' is not available (available: %s)", governor, norm);
        return -EOPNOTSUPP;
}

static int governor_write(Setting *s, SettingContext *rc, const char *value) {
        int r = governor_check_available(s, rc, value);

        if (r < 0)
                return r;
        return file_setting_write(s, rc, value);
}

static int governor_plan(SettingTable *t, const Host *h, const Posture *p) {
        if (!p->config->governor)
                return 0;
        CPUSET_FOREACH(cpu, &p->online) {
                Setting *s = NULL;
                int r = setting_new_governor((unsigned) cpu, p->config->governor, &s);
                if (r >= 0)
                        r = table_add(t, s);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* cpuN/cpufreq is a link to cpufreq/policyN on most drivers: both spellings. */
static const char *const governor_files[] = {
        "sys/devices/system/cpu/cpu*/cpufreq/scaling_governor",
        "sys/devices/system/cpu/cpufreq/policy*/scaling_governor",
        NULL,
};

const SettingVTable governor_vtable = {
        FILE_SETTING_OPS,
        .owns = governor_files,
        .object_size = sizeof(FileSetting),
        .read = governor_read,
        .write = governor_write,
        .done = file_setting_done,
        .plan = governor_plan,
};

/* --- cpuidle: idle states too deep for cpu_dma_latency, disabled on isolated CPUs --- */

int setting_new_cpuidle(unsigned cpu, unsigned state, const char *name, Setting **ret) {
        _cleanup_(setting_freep) Setting *s = NULL;
        _cleanup_free_ char *object = strdup_printf("cpu%u/state%u", cpu, state);
        int r;

        if (!object)
                return -ENOMEM;
        r = file_setting_new(SETTING_CPUIDLE,
                             strdup_printf("sys/devices/system/cpu/cpu%u/cpuidle/state%u/disable", cpu, state), object,
                             "1", &s);
        if (r < 0)
                return r;
        if (name && !(s->label = strdup(name)))
                return -ENOMEM;
        *ret = TAKE_PTR(s);
        return 0;
}

/* With a cpu_dma_latency target: every idle state of an isolated CPU whose exit latency
 * is above it, disabled (a state that deep would break the target on that CPU whatever
 * the latency request says, where the driver ignores PM QoS). */
static int cpuidle_plan(SettingTable *t, const Host *h, const Posture *p) {
        const Config *c = p->config;

        if (!c->cpu_dma_latency_enabled)
                return 0;
        CPUSET_FOREACH(cpu, &p->isolated) {
                for (unsigned state = 0; state < 64; state++) {
                        _cleanup_free_ char *latency = NULL, *name = NULL;
                        uint64_t usec;
                        Setting *s = NULL;
                        int r;

                        if (host_read_filef(h, &latency, "sys/devices/system/cpu/cpu%d/cpuidle/state%u/latency", cpu,
                                            state) < 0)
                                break; /* states are numbered from 0 without gaps */
                        if (parse_uint64(strstrip(latency), &usec) < 0 || usec <= (uint64_t) c->cpu_dma_latency_usec)
                                continue;
                        (void) host_read_filef(h, &name, "sys/devices/system/cpu/cpu%d/cpuidle/state%u/name", cpu,
                                               state);
                        r = setting_new_cpuidle((unsigned) cpu, state, name ? strstrip(name) : NULL, &s);
                        if (r >= 0)
                                r = table_add(t, s);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

static const char *const cpuidle_files[] = {
        "sys/devices/system/cpu/cpu*/cpuidle/state*/disable",
        NULL,
};

const SettingVTable cpuidle_vtable = {
        FILE_SETTING_OPS,
        .owns = cpuidle_files,
        .object_size = sizeof(FileSetting),
        .read = file_setting_read_present,
        .write = file_setting_write,
        .done = file_setting_done,
        .plan = cpuidle_plan,
};
