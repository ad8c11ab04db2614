/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rtnetlink through libnl-route-3: the link dump (how NICs are found, in whatever network
 * namespace lowlatd runs), the link monitor (new, changed, renamed, removed links), the
 * transmit queue length and the root qdisc. Kernel refusals come back with the kernel's own extack message. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

typedef struct Rtnl Rtnl;
struct nlmsghdr;

typedef struct LinkInfo {
        int ifindex;
        char name[16]; /* IFNAMSIZ */
        unsigned flags; /* IFF_* */
        uint32_t txqlen; /* IFLA_TXQLEN, when has_txqlen */
        bool has_txqlen;
} LinkInfo;

int rtnl_open(Rtnl **ret);
Rtnl *rtnl_close(Rtnl *r);

/* Calls cb for every link. */
typedef void (*LinkHandler)(void *userdata, const LinkInfo *link);
int rtnl_dump_links(Rtnl *r, LinkHandler cb, void *userdata);
/* The name and flags of one link; -ENODEV when it is gone. */
int rtnl_get_link(Rtnl *r, int ifindex, LinkInfo *ret);

/* The device's transmit queue length. just_set: right after our own accepted
 * rtnl_set_txqlen(), the length it set (the kernel takes it as given) will do; otherwise,
 * or when there was none, the kernel is asked. -ENODEV when the link is gone. */
int rtnl_get_txqlen(Rtnl *r, int ifindex, bool just_set, uint32_t *ret);
/* While a link message is dispatched (rtnl_monitor_dispatch()'s callback): the queue
 * length it carries, when it is about ifindex and either not older than any SETLINK of
 * ours (the marker rtnl_set_txqlen() sends the monitor after the write's ACK has come
 * back) or the length our last accepted SETLINK set; false otherwise, and then the kernel
 * is to be asked. */
bool rtnl_notified_txqlen(Rtnl *r, int ifindex, uint32_t *ret);
/* Sets the device's transmit queue length (RTM_SETLINK with IFLA_TXQLEN) and waits for
 * the kernel's ACK; -ENODEV when the link is gone, the kernel's -errno and extack message
 * (*ret_error, may be NULL) when it refuses. */
int rtnl_set_txqlen(Rtnl *r, int ifindex, uint32_t txqlen, char **ret_error);

/* The kind of the root qdisc ("fq_codel", "noqueue", ...). */
int rtnl_get_root_qdisc(Rtnl *r, int ifindex, char **ret_kind);
/* Replaces the root qdisc with a default one of this kind. On failure *ret_error gets the
 * kernel's message (e.g. "Specified qdisc kind is unknown."). */
int rtnl_replace_root_qdisc(Rtnl *r, int ifindex, const char *kind, char **ret_error);

/* The link monitor: a socket in RTNLGRP_LINK. dispatch reads every pending message and
 * calls cb(link, removed). Returns -ENOBUFS when messages were lost (resync). */
typedef void (*LinkEventHandler)(void *userdata, const LinkInfo *link, bool removed);
int rtnl_monitor_fd(Rtnl *r);
int rtnl_monitor_dispatch(Rtnl *r, LinkEventHandler cb, void *userdata);
/* What lowlatd wants of one monitor message (nlmsg_len bytes of it readable): the link's
 * index, flags, name (cut to IFNAMSIZ - 1) and queue length. false for anything but an
 * RTM_NEWLINK or RTM_DELLINK with its struct ifinfomsg; *ret_removed for the latter. */
bool rtnl_link_from_message(const struct nlmsghdr *nlh, LinkInfo *ret, bool *ret_removed);
