/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* NICs coming, going and changing. */
#include <libudev.h>
#include <net/if.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "netwatch.h"
#include "util.h"

static KnownLink *known_link(Manager *m, int ifindex) {
        for (size_t i = 0; i < m->n_links; i++)
                if (m->links[i].ifindex == ifindex)
                        return &m->links[i];
        return NULL;
}

static void forget_link(Manager *m, int ifindex) {
        for (size_t i = 0; i < m->n_links; i++)
                if (m->links[i].ifindex == ifindex) {
                        m->links[i] = m->links[--m->n_links];
                        return;
                }
}

static KnownLink *remember_link(Manager *m, const LinkInfo *l) {
        KnownLink *k = known_link(m, l->ifindex), *a;

        if (!k) {
                a = realloc(m->links, (m->n_links + 1) * sizeof(KnownLink));
                if (!a)
                        return NULL;
                m->links = a;
                k = &m->links[m->n_links++];
                *k = (KnownLink) { .ifindex = l->ifindex };
        }
        return k;
}

/* Looks at every setting of one interface again, at once. */
static void reconcile_nic_now(Manager *m, int ifindex, bool force) {
        uint64_t now = now_usec(CLOCK_MONOTONIC);

        for (size_t i = m->table.n; i > 0; i--) {
                Setting *s = m->table.settings[i - 1];
                if (setting_kind_is_nic(s->kind) && s->ifindex == ifindex)
                        table_reconcile_one(&m->table, &m->rc, s, now, force);
        }
}

/* A link appeared, came up, was renamed or re-registered: plan it afresh under its
 * current name (a rename keeps the match by the new name), apply, and look at the IRQs
 * again, since a driver (re)opening a device requests them anew. */
static void nic_replan(Manager *m, const LinkInfo *l, const char *why) {
        uint64_t now = now_usec(CLOCK_MONOTONIC);
        int r;

        r = table_plan_nic(&m->table, m->host, m->posture, l->ifindex, l->name);
        if (r < 0) {
                log_warning_errno(r, "Cannot plan interface %s", l->name);
                return;
        }
        if (r > 0 && why)
                log_info("Interface %s %s: applying its [nic] posture", l->name, why);
        bool applying = m->rc.applying;
        m->rc.applying = true;
        reconcile_nic_now(m, l->ifindex, true);
        m->rc.applying = applying; /* this may run inside the first pass */
        if (!applying) {
                _cleanup_free_ char *what = strdup_printf("Interface %s", l->name);
                manager_log_applied(m, what ?: "Interface");
        }
        r = table_scan_irqs(&m->table, m->host, m->posture);
        if (r >= 0)
                for (size_t i = m->table.n; i > 0; i--) {
                        Setting *s = m->table.settings[i - 1];
                        if (s->kind == SETTING_IRQ_AFFINITY)
                                table_reconcile_one(&m->table, &m->rc, s, now, false);
                }
}

static void on_link(void *userdata, const LinkInfo *l, bool removed) {
        Manager *m = userdata;
        KnownLink *k;
        bool renamed, came_up, k_existed;

        if (removed) {
                (void) table_drop_nic(&m->table, m->posture, l->ifindex);
                forget_link(m, l->ifindex);
                return;
        }
        k = known_link(m, l->ifindex);
        k_existed = k != NULL;
        renamed = !k || !streq(k->name, l->name);
        came_up = !k || ((l->flags & IFF_UP) && !(k->flags & IFF_UP));
        k = remember_link(m, l);
        if (!k)
                return;
        snprintf(k->name, sizeof(k->name), "%s", l->name);
        k->flags = l->flags;
        if (renamed || came_up)
                nic_replan(m, l, !k_existed ? (m->event ? "appeared" : NULL) : renamed ? "was renamed" : "came up");
        else
                /* Any other change (carrier, MTU, a driver's own reset): cheap to look. */
                reconcile_nic_now(m, l->ifindex, false);
}

static void plan_link(void *userdata, const LinkInfo *l) {
        on_link(userdata, l, false);
}

typedef struct Dumped {
        LinkInfo *links;
        size_t n;
} Dumped;

static void collect_link(void *userdata, const LinkInfo *l) {
        Dumped *d = userdata;
        LinkInfo *a = realloc(d->links, (d->n + 1) * sizeof(LinkInfo));

        if (!a)
                return;
        d->links = a;
        d->links[d->n++] = *l;
}

static void resync(Manager *m) {
        /* Lost events: dump every link and replan each in place (its settings and IRQ pins
         * are kept while that happens, so nothing moves needlessly); links that are gone
         * are dropped. */
        Dumped d = {};

        if (rtnl_dump_links(m->rtnl, collect_link, &d) < 0) {
                log_warning("Cannot list network interfaces after lost events");
                free(d.links);
                return;
        }
        for (size_t i = m->n_links; i > 0; i--) {
                bool present = false;
                for (size_t j = 0; j < d.n && !present; j++)
                        present = d.links[j].ifindex == m->links[i - 1].ifindex;
                if (!present) {
                        (void) table_drop_nic(&m->table, m->posture, m->links[i - 1].ifindex);
                        forget_link(m, m->links[i - 1].ifindex);
                }
        }
        for (size_t j = 0; j < d.n; j++) {
                KnownLink *k;
                nic_replan(m, &d.links[j], NULL);
                k = remember_link(m, &d.links[j]);
                if (k) {
                        snprintf(k->name, sizeof(k->name), "%s", d.links[j].name);
                        k->flags = d.links[j].flags;
                }
        }
        free(d.links);
}

static int on_rtnl_event(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Manager *m = userdata;
        int r = rtnl_monitor_dispatch(m->rtnl, on_link, m);

        if (r == -ENOBUFS) {
                log_notice("rtnetlink link events were lost; resynchronising every interface");
                resync(m);
        } else if (r < 0)
                log_warning_errno(r, "Reading rtnetlink link events failed");
        manager_update_status(m);
        return 0;
}

static void on_ethtool_notification(void *userdata, int ifindex, EthtoolGroup group) {
        Manager *m = userdata;
        static const SettingKind kinds[_ETHTOOL_GROUP_MAX] = {
                [ETHTOOL_GROUP_COALESCE] = SETTING_NIC_COALESCE,
                [ETHTOOL_GROUP_RINGS] = SETTING_NIC_RING,
                [ETHTOOL_GROUP_CHANNELS] = SETTING_NIC_CHANNELS,
                [ETHTOOL_GROUP_FEATURES] = SETTING_NIC_FEATURE,
        };

        for (size_t i = 0; i < m->table.n; i++) {
                Setting *s = m->table.settings[i];
                if (s->ifindex == ifindex && s->kind == kinds[group])
                        manager_queue_dirty(m, s);
        }
}

static int on_ethtool_event(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Manager *m = userdata;
        int r = ethtool_monitor_dispatch(m->ethtool, on_ethtool_notification, m);

        if (r == -ENOBUFS) {
                log_notice("ethtool notifications were lost; looking at every NIC setting again");
                for (size_t i = 0; i < m->table.n; i++)
                        if (setting_kind_is_nic(m->table.settings[i]->kind))
                                manager_queue_dirty(m, m->table.settings[i]);
        } else if (r < 0)
                log_warning_errno(r, "Reading ethtool notifications failed");
        return 0;
}

static int on_udev_event(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Manager *m = userdata;
        struct udev_device *d;

        while ((d = udev_monitor_receive_device(m->udev_monitor))) {
                const char *action = udev_device_get_action(d), *index = udev_device_get_sysattr_value(d, "ifindex");
                const char *sysname = udev_device_get_sysname(d);
                unsigned ifindex = 0;
                LinkInfo l;

                if (!index && sysname)
                        ifindex = if_nametoindex(sysname);
                else if (index)
                        (void) parse_unsigned(index, &ifindex);
                if (ifindex > 0 && action && streq(action, "remove")) {
                        (void) table_drop_nic(&m->table, m->posture, (int) ifindex);
                        forget_link(m, (int) ifindex);
                } else if (ifindex > 0 && rtnl_get_link(m->rtnl, (int) ifindex, &l) >= 0) {
                        /* udev may have renamed it or a driver may have rebound it: replan. */
                        nic_replan(m, &l, streq_ptr(action, "add") || streq_ptr(action, "move") ? "was added or renamed by udev" : NULL);
                        KnownLink *k = remember_link(m, &l);
                        if (k) {
                                snprintf(k->name, sizeof(k->name), "%s", l.name);
                                k->flags = l.flags;
                        }
                }
                udev_device_unref(d);
        }
        manager_update_status(m);
        return 0;
}

int netwatch_open(Manager *m) {
        int r;

        r = rtnl_open(&m->rtnl);
        if (r < 0)
                return log_warning_errno(r, "rtnetlink unavailable; NIC settings are not managed");
        m->rc.rtnl = m->rtnl;

        r = ethtool_client_new(&m->ethtool);
        if (r < 0)
                log_warning_errno(r, "ethtool netlink unavailable; coalescing, rings, channels and features are unsupported");
        m->rc.ethtool = m->ethtool;

        r = rtnl_dump_links(m->rtnl, plan_link, m);
        if (r < 0)
                return log_warning_errno(r, "Cannot list network interfaces");
        return 0;
}

int netwatch_plan_links(Manager *m, SettingTable *t, const Posture *p) {
        for (size_t i = 0; i < m->n_links; i++) {
                int r = table_plan_nic(t, m->host, p, m->links[i].ifindex, m->links[i].name);
                if (r < 0)
                        return r;
        }
        return 0;
}

int netwatch_start(Manager *m) {
        const Config *c = m->posture->config;
        int r;

        if (!m->rtnl)
                return 0;
        r = sd_event_add_io(m->event, &m->rtnl_source, rtnl_monitor_fd(m->rtnl), EPOLLIN, on_rtnl_event, m);
        if (r < 0)
                return log_error_errno(r, "Cannot watch rtnetlink");
        if (m->ethtool) {
                r = sd_event_add_io(m->event, &m->ethtool_source, ethtool_monitor_fd(m->ethtool), EPOLLIN,
                                    on_ethtool_event, m);
                if (r < 0)
                        return log_error_errno(r, "Cannot watch ethtool notifications");
        }

        /* udev tells about devices after its rules ran (names, driver binds); "kernel" reads
         * the kernel's uevents directly, for hosts and containers without udevd. */
        m->udev = udev_new();
        if (m->udev)
                m->udev_monitor = udev_monitor_new_from_netlink(
                        m->udev, c->udev_source == UDEV_SOURCE_KERNEL ? "kernel" : "udev");
        if (!m->udev_monitor || udev_monitor_filter_add_match_subsystem_devtype(m->udev_monitor, "net", NULL) < 0 ||
            udev_monitor_enable_receiving(m->udev_monitor) < 0) {
                log_warning("Cannot listen to %s events for network devices; rtnetlink still reports them",
                            c->udev_source == UDEV_SOURCE_KERNEL ? "kernel" : "udev");
                return 0;
        }
        r = sd_event_add_io(m->event, &m->udev_source, udev_monitor_get_fd(m->udev_monitor), EPOLLIN, on_udev_event, m);
        if (r < 0)
                log_warning_errno(r, "Cannot watch udev events");
        return 0;
}

void netwatch_close(Manager *m) {
        m->rtnl_source = sd_event_source_disable_unref(m->rtnl_source);
        m->ethtool_source = sd_event_source_disable_unref(m->ethtool_source);
        m->udev_source = sd_event_source_disable_unref(m->udev_source);
        if (m->udev_monitor)
                m->udev_monitor = udev_monitor_unref(m->udev_monitor);
        if (m->udev)
                m->udev = udev_unref(m->udev);
        m->ethtool = ethtool_client_free(m->ethtool);
        m->rtnl = rtnl_close(m->rtnl);
        m->rc.ethtool = NULL;
        m->rc.rtnl = NULL;
        free(m->links);
        m->links = NULL;
        m->n_links = 0;
}
