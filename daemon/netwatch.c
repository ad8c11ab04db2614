/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* NICs coming, going and changing. */
#include <libudev.h>
#include <net/if.h>
#include <string.h>
#include <time.h>

#include "basic/array.h"
#include "host/ethtool.h"
#include "log/log.h"
#include "netwatch.h"
#include "host/rtnl.h"
#include "setting/irq.h"
#include "setting/nic.h"
#include "setting/rps.h"
#include "basic/util.h"

/* An interface as last seen, to tell a rename or a link coming up from other updates. */
typedef struct KnownLink {
        int ifindex;
        char name[16];
        unsigned flags;
} KnownLink;

typedef struct NetWatch {
        Source source;
        Rtnl *rtnl;
        EthtoolClient *ethtool;
        struct udev *udev;
        struct udev_monitor *udev_monitor;
        sd_event_source *rtnl_source;
        sd_event_source *ethtool_source;
        sd_event_source *udev_source;
        KnownLink *links;
        size_t n_links, allocated_links;
} NetWatch;

static KnownLink *known_link(NetWatch *w, int ifindex) {
        for (size_t i = 0; i < w->n_links; i++)
                if (w->links[i].ifindex == ifindex)
                        return &w->links[i];
        return NULL;
}

static void forget_link(NetWatch *w, int ifindex) {
        if (w->ethtool)
                ethtool_forget(w->ethtool, ifindex);
        for (size_t i = 0; i < w->n_links; i++)
                if (w->links[i].ifindex == ifindex) {
                        w->links[i] = w->links[--w->n_links];
                        return;
                }
}

static KnownLink *remember_link(NetWatch *w, const LinkInfo *l) {
        KnownLink *k = known_link(w, l->ifindex);

        if (!k) {
                if (array_grow(&w->links, &w->allocated_links, w->n_links + 1) < 0)
                        return NULL;
                k = &w->links[w->n_links++];
                *k = (KnownLink) { .ifindex = l->ifindex };
        }
        return k;
}

/* Looks at every setting of one interface again, at once, not through the queue: an
 * RTM_NEWLINK may be the only notice of a change to put back (txqueuelen, a link's own
 * reset), and the time from it to the correction is what tests/bench/bench_link.py
 * measures; the queue would add a turn of the loop. */
static void reconcile_nic_now(NetWatch *w, int ifindex, ReconcileFlags flags) {
        const SettingTable *t = source_table(&w->source);
        uint64_t now = now_usec(CLOCK_MONOTONIC);

        for (size_t i = t->n; i > 0; i--) {
                Setting *s = t->settings[i - 1];
                if (setting_nic_ifindex(s) == ifindex)
                        source_request_now(&w->source, s, now, flags);
        }
}

static int step_irq_scan(SettingTable *t, SettingContext *rc, void *userdata) {
        Source *s = userdata;
        return irq_table_scan(t, source_host(s), source_posture(s));
}

/* Looks at every IRQ again, at once: a driver may have requested or re-pinned some. */
static void irqs_again(NetWatch *w) {
        const SettingTable *t = source_table(&w->source);
        uint64_t now = now_usec(CLOCK_MONOTONIC);

        if (source_request_plan(&w->source, step_irq_scan, &w->source) < 0)
                return;
        for (size_t i = t->n; i > 0; i--) {
                Setting *s = t->settings[i - 1];
                if (setting_is_irq(s, NULL))
                        source_request_now(&w->source, s, now, 0);
        }
}

typedef struct LinkStep {
        NetWatch *w;
        const LinkInfo *link; /* replan */
        int ifindex;          /* drop */
        unsigned restored, failed;
} LinkStep;

static int step_replan(SettingTable *t, SettingContext *rc, void *userdata) {
        LinkStep *a = userdata;
        return nic_table_replan(t, rc, a->w->ethtool, source_host(&a->w->source), source_posture(&a->w->source),
                                a->link->ifindex, a->link->name, &a->restored, &a->failed);
}

static int step_drop(SettingTable *t, SettingContext *rc, void *userdata) {
        LinkStep *a = userdata;
        return nic_table_drop(t, source_posture(&a->w->source), a->ifindex);
}

/* The interface is gone: its settings and IRQ pins go with it. */
static void drop_link(NetWatch *w, int ifindex) {
        LinkStep a = { .w = w, .ifindex = ifindex };

        (void) source_request_plan(&w->source, step_drop, &a);
        forget_link(w, ifindex);
}

/* A link appeared, came up, was renamed or re-registered: plan it afresh under its
 * current name (a rename keeps the match by the new name), apply, and look at the IRQs
 * again, since a driver (re)opening a device requests them anew. */
static void nic_replan(NetWatch *w, const LinkInfo *event, const char *why) {
        const LinkInfo *l = event;
        LinkInfo current;
        LinkStep a = { .w = w };
        int r;

        /* Planned under the name it has now, not the one an event queued behind later
         * renames carried: under a stale name its queues are not found, and what lowlatd
         * set on them would be lost to restore. Gone: its removal is on its way. */
        r = rtnl_get_link(w->rtnl, event->ifindex, &current);
        if (r == -ENODEV)
                return;
        if (r >= 0)
                l = &current;

        a.link = l;
        r = source_request_plan(&w->source, step_replan, &a);
        if (r < 0) {
                log_warning_errno(r, "Cannot plan interface %s", l->name);
                return;
        }
        if (a.restored > 0)
                log_info("Interface %s: restored %u settings its new name no longer asks for", l->name, a.restored);
        /* Their originals stay on file under the name they were planned under. */
        if (a.failed > 0)
                log_warning("Interface %s: %u settings its new name no longer asks for could not be put back", l->name,
                            a.failed);
        if (r > 0 && why)
                log_info("Interface %s %s: applying its [nic] posture", l->name, why);
        /* At start the first pass, which follows, looks at all of it. */
        if (source_starting(&w->source))
                return;
        reconcile_nic_now(w, l->ifindex, RECONCILE_FORCE | RECONCILE_APPLYING);
        {
                _cleanup_free_ char *what = strdup_printf("Interface %s", l->name);
                source_log_applied(&w->source, what ?: "Interface");
        }
        irqs_again(w);
}

static void on_link(void *userdata, const LinkInfo *l, bool removed) {
        NetWatch *w = userdata;
        KnownLink *k;
        bool renamed, came_up, k_existed;

        if (removed) {
                drop_link(w, l->ifindex);
                return;
        }
        k = known_link(w, l->ifindex);
        k_existed = k != NULL;
        renamed = !k || !streq(k->name, l->name);
        came_up = !k || ((l->flags & IFF_UP) && !(k->flags & IFF_UP));
        k = remember_link(w, l);
        if (!k)
                return;
        snprintf(k->name, sizeof(k->name), "%s", l->name);
        k->flags = l->flags;
        if (renamed || came_up)
                nic_replan(w, l, !k_existed ? (source_event(&w->source) ? "appeared" : NULL) : renamed ? "was renamed" : "came up");
        else
                /* Any other change (carrier, MTU, a driver's own reset, a feature flip):
                 * cheap to look; what the kernel notified need not be asked again. */
                reconcile_nic_now(w, l->ifindex, RECONCILE_HINTED);
}

static void plan_link(void *userdata, const LinkInfo *l) {
        on_link(userdata, l, false);
}

typedef struct Dumped {
        LinkInfo *links;
        size_t n, allocated;
} Dumped;

static void collect_link(void *userdata, const LinkInfo *l) {
        Dumped *d = userdata;

        if (array_grow(&d->links, &d->allocated, d->n + 1) < 0)
                return;
        d->links[d->n++] = *l;
}

static void resync(NetWatch *w) {
        /* Lost events: dump every link and replan each in place (its settings and IRQ pins
         * are kept while that happens, so nothing moves needlessly); links that are gone
         * are dropped. */
        Dumped d = {};

        if (rtnl_dump_links(w->rtnl, collect_link, &d) < 0) {
                log_warning("Cannot list network interfaces after lost events");
                free(d.links);
                return;
        }
        for (size_t i = w->n_links; i > 0; i--) {
                bool present = false;
                for (size_t j = 0; j < d.n && !present; j++)
                        present = d.links[j].ifindex == w->links[i - 1].ifindex;
                if (!present)
                        drop_link(w, w->links[i - 1].ifindex);
        }
        for (size_t j = 0; j < d.n; j++) {
                KnownLink *k;
                nic_replan(w, &d.links[j], NULL);
                k = remember_link(w, &d.links[j]);
                if (k) {
                        snprintf(k->name, sizeof(k->name), "%s", d.links[j].name);
                        k->flags = d.links[j].flags;
                }
        }
        free(d.links);
}

static int on_rtnl_event(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        NetWatch *w = userdata;
        int r = rtnl_monitor_dispatch(w->rtnl, on_link, w);

        if (r == -ENOBUFS) {
                log_notice("rtnetlink link events were lost; resynchronising every interface");
                resync(w);
        } else if (r < 0)
                log_warning_errno(r, "Reading rtnetlink link events failed");
        source_status_changed(&w->source);
        return 0;
}

static void on_ethtool_notification(void *userdata, int ifindex, EthtoolGroup group) {
        NetWatch *w = userdata;
        const SettingTable *t = source_table(&w->source);

        for (size_t i = 0; i < t->n; i++)
                if (setting_nic_notified_by(t->settings[i], ifindex, group))
                        source_request_setting(&w->source, t->settings[i]);
}

static int on_ethtool_event(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        NetWatch *w = userdata;
        const SettingTable *t = source_table(&w->source);
        int r = ethtool_monitor_dispatch(w->ethtool, on_ethtool_notification, w);

        if (r == -ENOBUFS) {
                log_notice("ethtool notifications were lost; looking at every NIC setting again");
                for (size_t i = 0; i < t->n; i++)
                        if (setting_nic_ifindex(t->settings[i]) >= 0)
                                source_request_setting(&w->source, t->settings[i]);
        } else if (r < 0)
                log_warning_errno(r, "Reading ethtool notifications failed");
        source_flush_requests(&w->source);
        return 0;
}

/* A queue's devpath ("/devices/virtual/net/veth0/queues/rx-3"): its interface's index, or
 * 0 when it has none now (deleted or renamed since: rtnetlink tells of that). */
static unsigned queue_ifindex(const char *devpath) {
        const char *q = devpath ? strstr(devpath, "/queues/") : NULL, *name = q;
        char ifname[IF_NAMESIZE];

        while (name && name > devpath && name[-1] != '/')
                name--;
        if (!q || name == q || (size_t) (q - name) >= sizeof(ifname))
                return 0;
        memcpy(ifname, name, (size_t) (q - name));
        ifname[q - name] = '\0';
        return if_nametoindex(ifname);
}

/* Queues came or went (a channel change, a driver reset): each interface once per burst,
 * replanned, so that new queues get their steering at once and gone ones are dropped. The
 * IRQs are looked at again either way, [nic] section or not: a driver re-pins its queue
 * IRQs when its channels change (virtio-net one per CPU, onto the isolated ones too), and
 * no event tells of that. */
static void queues_changed(NetWatch *w, const unsigned *ifindexes, size_t n) {
        bool replanned = false;

        for (size_t i = 0; i < n; i++) {
                LinkInfo l;
                bool again = false;

                for (size_t j = 0; j < i && !again; j++)
                        again = ifindexes[j] == ifindexes[i];
                if (again || rtnl_get_link(w->rtnl, (int) ifindexes[i], &l) < 0)
                        continue;
                /* A new link's queues announce themselves too, after the link was planned
                 * with them. */
                if (nic_queue_table_in_step(source_table(&w->source), source_host(&w->source),
                                            source_posture(&w->source), l.ifindex, l.name) > 0)
                        continue;
                nic_replan(w, &l, "changed its queues");
                replanned = true;
        }
        if (n > 0 && !replanned && !source_starting(&w->source))
                irqs_again(w);
}

#define QUEUE_BURST_MAX 64

static int on_udev_event(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        NetWatch *w = userdata;
        struct udev_device *d;
        unsigned queue_ifindexes[QUEUE_BURST_MAX];
        size_t n_queues = 0;

        while ((d = udev_monitor_receive_device(w->udev_monitor))) {
                if (streq_ptr(udev_device_get_subsystem(d), "queues")) {
                        const char *action = udev_device_get_action(d);
                        unsigned ifindex = 0;

                        if (streq_ptr(action, "add") || streq_ptr(action, "remove"))
                                ifindex = queue_ifindex(udev_device_get_devpath(d));
                        if (ifindex > 0 && n_queues < QUEUE_BURST_MAX)
                                queue_ifindexes[n_queues++] = ifindex;
                        else if (ifindex > 0) {
                                queues_changed(w, queue_ifindexes, n_queues);
                                queue_ifindexes[0] = ifindex;
                                n_queues = 1;
                        }
                        udev_device_unref(d);
                        continue;
                }
                const char *action = udev_device_get_action(d), *index = udev_device_get_sysattr_value(d, "ifindex");
                const char *sysname = udev_device_get_sysname(d);
                unsigned ifindex = 0;
                LinkInfo l;

                if (!index && sysname)
                        ifindex = if_nametoindex(sysname);
                else if (index)
                        (void) parse_unsigned(index, &ifindex);
                if (ifindex > 0 && action && streq(action, "remove"))
                        drop_link(w, (int) ifindex);
                else if (ifindex > 0 && rtnl_get_link(w->rtnl, (int) ifindex, &l) >= 0) {
                        /* udev may have renamed it or a driver may have rebound it: replan. */
                        nic_replan(w, &l, streq_ptr(action, "add") || streq_ptr(action, "move") ? "was added or renamed by udev" : NULL);
                        KnownLink *k = remember_link(w, &l);
                        if (k) {
                                snprintf(k->name, sizeof(k->name), "%s", l.name);
                                k->flags = l.flags;
                        }
                }
                udev_device_unref(d);
        }
        queues_changed(w, queue_ifindexes, n_queues);
        source_status_changed(&w->source);
        return 0;
}

static int netwatch_open(Source *s) {
        NetWatch *w = (NetWatch *) s;
        int r;

        r = rtnl_open(&w->rtnl);
        if (r < 0)
                return log_warning_errno(r, "rtnetlink unavailable; NIC settings are not managed");
        source_provide_netlink(s, w->rtnl, NULL);

        r = ethtool_client_new(&w->ethtool);
        if (r < 0)
                log_warning_errno(r, "ethtool netlink unavailable; coalescing, rings, channels and features are unsupported");
        source_provide_netlink(s, w->rtnl, w->ethtool);

        r = rtnl_dump_links(w->rtnl, plan_link, w);
        if (r < 0)
                return log_warning_errno(r, "Cannot list network interfaces");
        return 0;
}

/* Plans every known link into a reload's new table. */
static int netwatch_plan(Source *s, SettingTable *t, const Posture *p) {
        NetWatch *w = (NetWatch *) s;

        for (size_t i = 0; i < w->n_links; i++) {
                int r = nic_table_plan(t, w->ethtool, source_host(s), p, w->links[i].ifindex, w->links[i].name);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int netwatch_start(Source *s) {
        NetWatch *w = (NetWatch *) s;
        const Config *c = source_posture(s)->config;
        sd_event *event = source_event(s);
        int r;

        if (!w->rtnl)
                return 0;
        r = sd_event_add_io(event, &w->rtnl_source, rtnl_monitor_fd(w->rtnl), EPOLLIN, on_rtnl_event, w);
        if (r < 0)
                return log_error_errno(r, "Cannot watch rtnetlink");
        if (w->ethtool) {
                r = sd_event_add_io(event, &w->ethtool_source, ethtool_monitor_fd(w->ethtool), EPOLLIN,
                                    on_ethtool_event, w);
                if (r < 0)
                        return log_error_errno(r, "Cannot watch ethtool notifications");
        }

        /* udev tells about devices after its rules ran (names, driver binds); "kernel" reads
         * the kernel's uevents directly, for hosts and containers without udevd. */
        w->udev = udev_new();
        if (w->udev)
                w->udev_monitor = udev_monitor_new_from_netlink(w->udev, udev_source_to_string(c->udev_source));
        /* "queues": a NIC's rx-N and tx-N, whose steering (lib/setting/rps.c) a new queue
         * does not have. */
        if (!w->udev_monitor || udev_monitor_filter_add_match_subsystem_devtype(w->udev_monitor, "net", NULL) < 0 ||
            udev_monitor_filter_add_match_subsystem_devtype(w->udev_monitor, "queues", NULL) < 0 ||
            udev_monitor_enable_receiving(w->udev_monitor) < 0) {
                log_warning("Cannot listen to %s events for network devices; rtnetlink still reports them",
                            udev_source_to_string(c->udev_source));
                return 0;
        }
        r = sd_event_add_io(event, &w->udev_source, udev_monitor_get_fd(w->udev_monitor), EPOLLIN, on_udev_event, w);
        if (r < 0)
                log_warning_errno(r, "Cannot watch udev events");
        return 0;
}

static void netwatch_stop(Source *s) {
        NetWatch *w = (NetWatch *) s;

        w->rtnl_source = sd_event_source_disable_unref(w->rtnl_source);
        w->ethtool_source = sd_event_source_disable_unref(w->ethtool_source);
        w->udev_source = sd_event_source_disable_unref(w->udev_source);
        if (w->udev_monitor)
                w->udev_monitor = udev_monitor_unref(w->udev_monitor);
        if (w->udev)
                w->udev = udev_unref(w->udev);
        source_provide_netlink(s, NULL, NULL);
        w->ethtool = ethtool_client_free(w->ethtool);
        w->rtnl = rtnl_close(w->rtnl);
        w->links = mfree(w->links);
        w->n_links = w->allocated_links = 0;
}

const SourceVTable netwatch_vtable = {
        .name = "netlink",
        .size = sizeof(NetWatch),
        .open = netwatch_open,
        .start = netwatch_start,
        .plan = netwatch_plan,
        .stop = netwatch_stop,
};
