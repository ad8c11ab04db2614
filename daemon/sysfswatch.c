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

typedef struct SysfsWatch {
        Source source;
        UdevSource udev_source; /* where the monitor listens */
        struct udev *udev;
        struct udev_monitor *monitor;
        sd_event_source *event_source; /* NULL: no monitor */
} SysfsWatch;

static void monitor_close(SysfsWatch *w) {
        w->event_source = sd_event_source_disable_unref(w->event_source);
        if (w->monitor)
                w->monitor = udev_monitor_unref(w->monitor);
        if (w->udev)
                w->udev = udev_unref(w->udev);
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

static int step_rescan(SettingTable *t, SettingContext *rc, void *userdata) {
        Source *s = userdata;
        return sysfs_table_rescan(t, source_host(s), source_posture(s));
}

static int on_uevent(sd_event_source *source, int fd, uint32_t revents, void *userdata) {
        SysfsWatch *w = userdata;
        const SettingTable *t = source_table(&w->source);
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
        r = source_request_plan(&w->source, step_rescan, &w->source);
        if (r < 0)
                log_warning_errno(r, "Cannot expand the [sysfs] patterns again");
        if (r <= 0)
                return 0;
        now = now_usec(CLOCK_MONOTONIC);
        /* The new settings are the pending ones; whatever else is pending gets its first
         * look a little early. */
        for (size_t i = t->n; i > 0; i--) {
                Setting *s = t->settings[i - 1];
                if (s->state == SETTING_PENDING)
                        source_request_now(&w->source, s, now, RECONCILE_APPLYING);
        }
        source_log_applied(&w->source, "Devices changed");
        source_status_changed(&w->source);
        return 0;
}

static int monitor_open(SysfsWatch *w) {
        const char *source;
        int r;

        w->udev_source = source_posture(&w->source)->config->udev_source;
        source = udev_source_to_string(w->udev_source);
        w->udev = udev_new();
        if (w->udev)
                w->monitor = udev_monitor_new_from_netlink(w->udev, source);
        if (!w->monitor || udev_monitor_enable_receiving(w->monitor) < 0) {
                monitor_close(w);
                log_warning("Cannot listen to %s events; new matches of the [sysfs] patterns are found by the "
                            "periodic scan",
                            source);
                return -EIO;
        }
        r = sd_event_add_io(source_event(&w->source), &w->event_source, udev_monitor_get_fd(w->monitor), EPOLLIN,
                            on_uevent, w);
        if (r < 0) {
                monitor_close(w);
                return log_warning_errno(r, "Cannot watch %s events for the [sysfs] patterns", source);
        }
        return 0;
}

/* The monitor exists only while some [sysfs] key is a pattern, and listens where [daemon]
 * udev_source says. Never fatal: without it the periodic scan finds new matches. */
static void monitor_update(SysfsWatch *w) {
        const Config *c = source_posture(&w->source)->config;
        bool want = source_event(&w->source) && sysfs_config_has_patterns(c);

        if (w->event_source && (!want || w->udev_source != c->udev_source))
                monitor_close(w);
        if (want && !w->event_source)
                (void) monitor_open(w);
}

static int sysfswatch_start(Source *s) {
        monitor_update((SysfsWatch *) s);
        return 0;
}

static void sysfswatch_posture_changed(Source *s) {
        monitor_update((SysfsWatch *) s);
}

static void sysfswatch_stop(Source *s) {
        monitor_close((SysfsWatch *) s);
}

const SourceVTable sysfswatch_vtable = {
        .name = "sysfs-uevents",
        .size = sizeof(SysfsWatch),
        .start = sysfswatch_start,
        .posture_changed = sysfswatch_posture_changed,
        .stop = sysfswatch_stop,
};
