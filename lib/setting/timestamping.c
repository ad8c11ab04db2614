/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* timestamping_hold ([cpus] hold_timestamping = yes): a socket with SO_TIMESTAMP held open
 * for the daemon's lifetime, as tuned's rtentsk plugin holds a UDP one. Ours is an unbound
 * rtnetlink socket: the kernel counts any family but AF_UNIX (sock_needs_netstamp()), and
 * lowlatd.service allows AF_UNIX and AF_NETLINK only, which a UDP socket would widen. The kernel counts
 * the sockets that want receive timestamps in a static key (netstamp_needed_key): the
 * first one to ask and the last one to close switch it, and switching a static key
 * patches kernel text, which stops every CPU with an IPI, the isolated ones included. A
 * socket that always wants timestamps keeps the key on, so that a PTP daemon or an
 * application opening and closing its own never switches it again. The cost: every
 * received packet is timestamped.
 *
 * Like the cpu_dma_latency request, the hold is the setting: it reads "held" while the
 * socket is open with SO_TIMESTAMP on, and restoring it means closing the socket. The key
 * is the live kernel's, whatever the root: on a host given with --root (a fake tree) the
 * setting is unsupported, so that no test switches this machine's key. */
#include <linux/netlink.h>
#include <sys/socket.h>
#include <unistd.h>

#include "setting/table.h"
#include "setting/timestamping.h"
#include "basic/util.h"

#define HELD "held"
#define RELEASED "released"

typedef struct TimestampingSetting {
        Setting setting;
        int fd; /* the socket, -1 when not held */
} TimestampingSetting;

#define TS(s) ((TimestampingSetting *) (s))

int setting_new_timestamping_hold(Setting **ret) {
        _cleanup_(setting_freep) Setting *s = setting_alloc(SETTING_TIMESTAMPING_HOLD, "SO_TIMESTAMP");

        if (!s)
                return -ENOMEM;
        TS(s)->fd = -1;
        if (setting_set_desired(s, HELD) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(s);
        return 0;
}

static int timestamping_refuses(Setting *s, SettingContext *rc) {
        if (host_is_live(rc->host))
                return 0;
        setting_set_reason(s, "the timestamping static key is the running kernel's: held only with --root / (not under %s)",
                           rc->host->root_path);
        return -EOPNOTSUPP;
}

static int timestamping_read(Setting *s, SettingContext *rc, char *buf, size_t size, ReconcileFlags flags) {
        int on = 0;
        socklen_t len = sizeof(on);

        if (TS(s)->fd >= 0 && getsockopt(TS(s)->fd, SOL_SOCKET, SO_TIMESTAMP, &on, &len) < 0) {
                int r = negative_errno();
                setting_set_reason(s, "cannot read SO_TIMESTAMP of the held socket: %s", strerror(-r));
                return r;
        }
        snprintf(buf, size, "%s", TS(s)->fd >= 0 && on ? HELD : RELEASED);
        return 0;
}

static int timestamping_write(Setting *s, SettingContext *rc, const char *value) {
        TimestampingSetting *t = TS(s);
        int on = 1, r;

        if (!streq(value, HELD)) {
                t->fd = safe_close(t->fd);
                return 0;
        }
        r = timestamping_refuses(s, rc);
        if (r < 0)
                return r;
        if (t->fd < 0) {
                t->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
                if (t->fd < 0) {
                        r = negative_errno();
                        setting_set_reason(s, "cannot open a netlink socket: %s", strerror(-r));
                        return r == -EAFNOSUPPORT ? -EOPNOTSUPP : r;
                }
        }
        if (setsockopt(t->fd, SOL_SOCKET, SO_TIMESTAMP, &on, sizeof(on)) < 0) {
                r = negative_errno();
                setting_set_reason(s, "cannot set SO_TIMESTAMP: %s", strerror(-r));
                t->fd = safe_close(t->fd);
                return r;
        }
        return 0;
}

/* In enforce mode the socket is opened even when nothing drifted: there is nothing else
 * to compare with. */
static void timestamping_prepare(Setting *s, SettingContext *rc) {
        if (TS(s)->fd < 0 && host_is_live(rc->host))
                (void) timestamping_write(s, rc, HELD);
}

static int timestamping_original(const Setting *s, char **ret) {
        *ret = strdup(RELEASED);
        return *ret ? 0 : -ENOMEM;
}

static int timestamping_restore(Setting *s, SettingContext *rc, const char *original) {
        TS(s)->fd = safe_close(TS(s)->fd);
        return 0;
}

static void timestamping_inherit(Setting *s, Setting *old, bool same_value) {
        safe_close(TS(s)->fd);
        TS(s)->fd = TAKE_FD(TS(old)->fd);
}

static void timestamping_release(Setting *s) {
        TS(s)->fd = safe_close(TS(s)->fd);
}

static int timestamping_plan(SettingTable *t, const Host *h, const Posture *p) {
        Setting *s = NULL;
        int r;

        if (!p->config->hold_timestamping)
                return 0;
        r = setting_new_timestamping_hold(&s);
        return r < 0 ? r : table_add(t, s);
}

/* No inotify and nothing another writer can change: the socket is this process's own. */
const SettingVTable timestamping_hold_vtable = {
        .object_size = sizeof(TimestampingSetting),
        .group = SETTING_GROUP_HOST,
        .noun = "the timestamping hold",
        .read = timestamping_read,
        .write = timestamping_write,
        .refuses = timestamping_refuses,
        .prepare = timestamping_prepare,
        .original = timestamping_original,
        .restore = timestamping_restore,
        .inherit = timestamping_inherit,
        .release = timestamping_release,
        .plan = timestamping_plan,
};
