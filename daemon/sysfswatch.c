/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Uevents for the [sysfs] patterns. A monitor of its own rather than a wider netwatch one:
 * that one is filtered to "net" in the kernel and exists whatever the config says, while
 * this one takes every subsystem (a pattern may name any device) and so exists only when a
 * [sysfs] key is a pattern. What it costs per wakeup: reading the queued uevents, then, if
 * one of them added or removed a device, one expansion of the patterns (a directory listing
 * per wildcard component, a hash lookup per match) and a look at the new settings. */
#include <libudev.h>
#include <time.h>

#include "log/log.h"
#include "setting/sysfs.h"
#include "host/sysfs.h"
#include "sysfswatch.h"
#include "basic/util.h"

struct SysfsWatch {
        Manager *manager;
        UdevSource source;
        struct udev *udev;
        struct udev_monitor *monitor;
        sd_event_source *event_source;
};

SysfsWatch *sysfswatch_free(SysfsWatch *w) {
        if (!w)
                return NULL;
        sd_event_source_disable_unref(w->event_source);
        if (w->monitor)
                udev_monitor_unref(w->monitor);
        if (w->udev)
                udev_unref(w->udev);
        free(w);
        return NULL;
}

/* Files appear and vanish with a device's arrival, removal or rename, and with a driver's
 * bind or unbind (its attributes come with it); "change" and the others move values only. */
static bool action_changes_files(const char *action) {
        static const char *const actions[] = { "add", "remove", "move", "bind", "unbind" };

        for (size_t i = 0; action && i < ELEMENTSOF(actions); i++)
                if (streq(action, actions[i]))
                        return true;
        return false;
}

static int on_uevent(sd_event_source *source, int fd, uint32_t revents, void *userdata) {
        SysfsWatch *w = userdata;
        Manager *m = w->manager;
        struct udev_device *d;
        bool rescan = false;
        uint64_t now;
        int r;

        /* Everything queued first: a burst (a driver probing many devices) costs one
         * expansion. A vanished file needs nothing here: its setting goes at its next read. */
        while ((d = udev_monitor_receive_device(w->monitor))) {
                rescan = rescan || action_changes_files(udev_device_get_action(d));
                udev_device_unref(d);
        }
        if (!rescan)
                return 0;
        r = sysfs_table_rescan(&m->table, m->host, m->posture);
        if (r < 0)
                log_warning_errno(r, "Cannot expand the [sysfs] patterns again");
        if (r <= 0)
                return 0;
        now = now_usec(CLOCK_MONOTONIC);
        /* The new settings are the pending ones; whatever else is pending gets its first
         * look a little early. */
        for (size_t i = m->table.n; i > 0; i--) {
                Setting *s = m->table.settings[i - 1];
                if (s->state == SETTING_PENDING)
                        table_reconcile_one(&m->table, &m->rc, s, now, RECONCILE_APPLYING);
        }
        manager_log_applied(m, "Devices changed");
        manager_update_status(m);
        return 0;
}

static int sysfswatch_new(Manager *m, SysfsWatch **ret) {
        SysfsWatch *w = calloc(1, sizeof(SysfsWatch));
        const char *source;
        int r;

        if (!w)
                return -ENOMEM;
        w->manager = m;
        w->source = m->posture->config->udev_source;
        source = udev_source_to_string(w->source);
        w->udev = udev_new();
        if (w->udev)
                w->monitor = udev_monitor_new_from_netlink(w->udev, source);
        if (!w->monitor || udev_monitor_enable_receiving(w->monitor) < 0) {
                sysfswatch_free(w);
                log_warning("Cannot listen to %s events; new matches of the [sysfs] patterns are found by the "
                            "periodic scan",
                            source);
                return -EIO;
        }
        r = sd_event_add_io(m->event, &w->event_source, udev_monitor_get_fd(w->monitor), EPOLLIN, on_uevent, w);
        if (r < 0) {
                sysfswatch_free(w);
                return log_warning_errno(r, "Cannot watch %s events for the [sysfs] patterns", source);
        }
        *ret = w;
        return 0;
}

void sysfswatch_update(Manager *m) {
        const Config *c = m->posture->config;
        bool want = m->event && sysfs_config_has_patterns(c);

        if (m->sysfswatch && (!want || m->sysfswatch->source != c->udev_source))
                m->sysfswatch = sysfswatch_free(m->sysfswatch);
        if (want && !m->sysfswatch)
                (void) sysfswatch_new(m, &m->sysfswatch);
}
