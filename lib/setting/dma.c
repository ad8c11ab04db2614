/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cpu_dma_latency: a request on /dev/cpu_dma_latency held open for the daemon's lifetime.
 * The kernel keeps the strictest open request; ours ends when its fd closes, so the hold
 * is the setting, and restoring it means letting go. */
#include <fcntl.h>
#include <inttypes.h>
#include <string.h>

#include "setting/dma.h"
#include "setting/table.h"
#include "basic/util.h"

typedef struct DmaLatencySetting {
        Setting setting;
        char *path;
        int fd;      /* reads the system-wide value; a dup of hold_fd once we hold */
        int hold_fd; /* our request, open for writing */
        int32_t latency_usec;
        int32_t held_usec; /* the value our request holds now */
} DmaLatencySetting;

#define DMA(s) ((DmaLatencySetting *) (s))

/* The original of a request is "no request of ours". */
#define ORIGINAL_NO_REQUEST "released"

int setting_new_cpu_dma_latency(int32_t usec, Setting **ret) {
        _cleanup_(setting_freep) Setting *s = setting_alloc(SETTING_CPU_DMA_LATENCY, "/dev/cpu_dma_latency");
        _cleanup_free_ char *desired = strdup_printf("%" PRId32, usec);

        if (!s)
                return -ENOMEM;
        DMA(s)->fd = DMA(s)->hold_fd = -1;
        DMA(s)->latency_usec = usec;
        DMA(s)->path = strdup("dev/cpu_dma_latency");
        if (!DMA(s)->path || !desired || setting_set_desired(s, desired) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(s);
        return 0;
}

int setting_dma_hold_fd(const Setting *s) {
        return DMA(s)->hold_fd;
}

void table_dma_latency_status(const SettingTable *t, DmaLatencyStatus *ret) {
        const Setting *s = table_find(t, SETTING_CPU_DMA_LATENCY, "/dev/cpu_dma_latency");
        int32_t v;

        *ret = (DmaLatencyStatus) { .system_usec = -1 };
        if (!s)
                return;
        ret->held = DMA(s)->hold_fd >= 0;
        if (s->observed && parse_int32(s->observed, &v) >= 0)
                ret->system_usec = v;
}

static int dma_read(Setting *s, SettingContext *rc, char *buf, size_t size, ReconcileFlags flags) {
        DmaLatencySetting *d = DMA(s);
        int32_t v;
        ssize_t n;

        if (d->fd < 0) {
                /* Opening the device adds a request; once we hold one, read through it, so
                 * that no second request of ours exists. */
                d->fd = d->hold_fd >= 0 ? fcntl(d->hold_fd, F_DUPFD_CLOEXEC, 3) : host_open_file(rc->host, d->path, O_RDONLY);
                if (d->fd < 0) {
                        int r = d->hold_fd >= 0 ? negative_errno() : d->fd;
                        d->fd = -1;
                        if (r == -ENOENT) {
                                setting_set_reason(s, "not present on this host (/%s)", d->path);
                                return -EOPNOTSUPP;
                        }
                        setting_set_reason(s, "reading /%s failed: %s", d->path, strerror(-r));
                        return r;
                }
        }
        n = pread(d->fd, &v, sizeof(v), 0);
        if (n != (ssize_t) sizeof(v)) {
                int r = n < 0 ? negative_errno() : -EIO;
                setting_set_reason(s, "reading /%s failed: %s", d->path, strerror(-r));
                return r;
        }
        snprintf(buf, size, "%" PRId32, v);
        return 0;
}

/* The kernel reports the strictest request; stricter than ours is fine. */
static bool dma_matches(Setting *s, SettingContext *rc) {
        char *end;
        long v = strtol(s->observed, &end, 10);

        return *end == '\0' && v <= DMA(s)->latency_usec;
}

static int dma_write(Setting *s, SettingContext *rc, const char *value) {
        DmaLatencySetting *d = DMA(s);
        int32_t v;
        ssize_t n;
        int r;

        r = parse_int32(value, &v);
        if (r < 0)
                return r;
        if (d->hold_fd < 0) {
                d->hold_fd = host_open_file(rc->host, d->path, O_RDWR);
                if (d->hold_fd < 0) {
                        r = d->hold_fd;
                        d->hold_fd = -1;
                        setting_set_reason(s, "writing /%s failed: %s", d->path, strerror(-r));
                        return r == -ENOENT || r == -EPERM ? -EIO : r;
                }
                /* Read through the held request from now on. */
                d->fd = safe_close(d->fd);
        }
        n = pwrite(d->hold_fd, &v, sizeof(v), 0);
        if (n < 0 && errno == ESPIPE)
                n = write(d->hold_fd, &v, sizeof(v));
        if (n != (ssize_t) sizeof(v)) {
                r = n < 0 ? negative_errno() : -EIO;
                setting_set_reason(s, "writing /%s failed: %s", d->path, strerror(-r));
                return r == -ENOENT || r == -EPERM ? -EIO : r;
        }
        d->held_usec = v;
        return 0;
}

/* In enforce mode our own request must exist even when someone else's stricter one makes
 * the system-wide value look fine: theirs may go away at any time. After a reload changed
 * the value, the new one goes into the same request. */
static void dma_prepare(Setting *s, SettingContext *rc) {
        if (DMA(s)->hold_fd < 0 || DMA(s)->held_usec != DMA(s)->latency_usec)
                (void) dma_write(s, rc, s->desired);
}

static int dma_original(const Setting *s, char **ret) {
        *ret = strdup(ORIGINAL_NO_REQUEST);
        return *ret ? 0 : -ENOMEM;
}

/* Our request ends when its fd closes; the kernel's value is then what the other holders
 * ask for, as before lowlatd. */
static int dma_restore(Setting *s, SettingContext *rc, const char *original) {
        DMA(s)->hold_fd = safe_close(DMA(s)->hold_fd);
        DMA(s)->fd = safe_close(DMA(s)->fd);
        return 0;
}

/* A new value is written into the same request, without a gap. */
static void dma_inherit(Setting *s, Setting *old, bool same_value) {
        DmaLatencySetting *d = DMA(s), *o = DMA(old);

        safe_close(d->fd);
        d->fd = TAKE_FD(o->fd);
        safe_close(d->hold_fd);
        d->hold_fd = TAKE_FD(o->hold_fd);
        d->held_usec = o->held_usec;
}

static void dma_release(Setting *s) {
        DMA(s)->fd = safe_close(DMA(s)->fd);
        DMA(s)->hold_fd = safe_close(DMA(s)->hold_fd);
}

static void dma_done(Setting *s) {
        free(DMA(s)->path);
}

static int dma_plan(SettingTable *t, const Host *h, const Posture *p) {
        Setting *s = NULL;
        int r;

        if (!p->config->cpu_dma_latency_enabled)
                return 0;
        r = setting_new_cpu_dma_latency(p->config->cpu_dma_latency_usec, &s);
        return r < 0 ? r : table_add(t, s);
}

/* No inotify: the device sends no events; the scan reads the system-wide value. */
const SettingVTable cpu_dma_latency_vtable = {
        .object_size = sizeof(DmaLatencySetting),
        .group = SETTING_GROUP_HOST,
        .read = dma_read,
        .write = dma_write,
        .matches = dma_matches,
        .prepare = dma_prepare,
        .original = dma_original,
        .restore = dma_restore,
        .inherit = dma_inherit,
        .release = dma_release,
        .done = dma_done,
        .plan = dma_plan,
};
