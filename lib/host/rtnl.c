/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rtnetlink: links and the root qdisc. */
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/route/link.h>
#include <netlink/route/qdisc.h>
#include <netlink/route/qdisc/prio.h>
#include <netlink/route/tc.h>
#include <string.h>
#include <sys/socket.h>

#include "basic/array.h"
#include "basic/macro.h"
#include "host/netlink-drain.h"
#include "host/rtnl.h"
#include "basic/util.h"

/* A RTM_NEWLINK with every statistic is a few KiB; a message that still does not fit
 * is detected (MSG_TRUNC) and treated as lost. */
#define MONITOR_BUFFER_SIZE (32U * 1024U)

/* A link we set the queue length of, until the marker sent after that SETLINK's ACK
 * comes back: what our last accepted SETLINK gave it. */
typedef struct KnownTxqlen {
        int ifindex;
        uint32_t txqlen;
        bool set;      /* the SETLINK was accepted: txqlen is the link's length after it */
        bool just_set; /* for the read-back right after the SETLINK */
        uint32_t marker;
} KnownTxqlen;

struct Rtnl {
        struct nl_sock *sock;    /* requests */
        struct nl_sock *monitor; /* RTNLGRP_LINK */
        uint8_t *monitor_buffer; /* from malloc(), not zeroed: only what messages fill is used */
        /* The queue length of our own last accepted SETLINK per link, so that the read-back
         * right after it needs no RTM_GETLINK, and whether a notification of the link may
         * be older than that write. The kernel queues a SETLINK's RTM_NEWLINK (and every
         * older one) on the monitor before it sends the ACK, so after the ACK we send the
         * monitor a marker of our own (NLMSG_NOOP, nlmsg_seq counting up): until it comes
         * back, a notification of the link may be older than our write, and taking its
         * length would report a drift that never was (and a fight with ourselves); after
         * it, notifications are the kernel's word. */
        KnownTxqlen *txqlens;
        size_t n_txqlens, allocated_txqlens;
        uint32_t markers_sent, marker_seen;
        uint32_t marker_all; /* a write could not be remembered: no link is trusted until
                              * this marker has come back; 0: none */
        /* The link message being dispatched now, when its length may be taken for the
         * kernel's (rtnl_notified_txqlen()). 0: none. */
        int notified_ifindex;
        uint32_t notified_txqlen;
};

static KnownTxqlen *txqlen_find(Rtnl *r, int ifindex) {
        for (size_t i = 0; i < r->n_txqlens; i++)
                if (r->txqlens[i].ifindex == ifindex)
                        return &r->txqlens[i];
        return NULL;
}

static void txqlen_drop(Rtnl *r, KnownTxqlen *k) {
        *k = r->txqlens[--r->n_txqlens];
}

/* The read-back is done: a read asks the kernel again (the link is forgotten once its
 * marker has come back). */
static void txqlen_forget(Rtnl *r, int ifindex) {
        KnownTxqlen *k = txqlen_find(r, ifindex);

        if (k)
                k->just_set = false;
}

static bool marker_seen(const Rtnl *r, uint32_t marker) {
        return (int32_t) (r->marker_seen - marker) >= 0;
}

/* Sends the monitor a marker after every notification queued so far and returns its
 * number. Not sent (its queue full, no CAP_NET_ADMIN): a later marker, which comes after
 * it, will do, and until then the kernel is asked as before. */
static uint32_t marker_send(Rtnl *r) {
        uint32_t m = ++r->markers_sent ?: ++r->markers_sent;
        struct nlmsghdr nh = { .nlmsg_len = NLMSG_LENGTH(0), .nlmsg_type = NLMSG_NOOP, .nlmsg_seq = m,
                               .nlmsg_pid = nl_socket_get_local_port(r->sock) };
        struct sockaddr_nl to = { .nl_family = AF_NETLINK, .nl_pid = nl_socket_get_local_port(r->monitor) };

        (void) sendto(nl_socket_get_fd(r->sock), &nh, nh.nlmsg_len, MSG_DONTWAIT | MSG_NOSIGNAL,
                      (const struct sockaddr *) &to, sizeof(to));
        return m;
}

/* Our marker came back: every notification older than the writes before it has been
 * read, so their links are forgotten (the array holds only writes in flight). A read-back
 * comes right after its write, long before the marker; one that did not would ask the
 * kernel. */
static void on_marker(Rtnl *r, const struct nlmsghdr *nlh) {
        if (nlh->nlmsg_pid != nl_socket_get_local_port(r->sock) || nlh->nlmsg_seq == 0)
                return;
        r->marker_seen = nlh->nlmsg_seq;
        if (r->marker_all != 0 && marker_seen(r, r->marker_all))
                r->marker_all = 0;
        for (size_t i = r->n_txqlens; i > 0; i--)
                if (marker_seen(r, r->txqlens[i - 1].marker))
                        txqlen_drop(r, &r->txqlens[i - 1]);
}

/* Whether the queue length notified now may be taken for the kernel's: the notification
 * is not older than any write of ours to the link, or it says what our last write set.
 * (Older or not, that is the link's state just after that write, and a later change has
 * a notification of its own still to come: what our own write's notification looks like,
 * and then no RTM_GETLINK is needed.) */
static bool txqlen_trusted(Rtnl *r, int ifindex, uint32_t txqlen) {
        const KnownTxqlen *k = txqlen_find(r, ifindex);

        if (r->marker_all != 0)
                return false;
        return !k || (k->set && k->txqlen == txqlen);
}

/* A SETLINK of ours was answered (accepted: just_set, with the length it set; refused:
 * the link's length after it is not known). Out of memory: the link is forgotten
 * instead, the next look asks the kernel, and no link's notification is trusted until
 * the marker comes back. */
static void txqlen_written(Rtnl *r, int ifindex, bool just_set, uint32_t txqlen) {
        KnownTxqlen *k = txqlen_find(r, ifindex);
        uint32_t m = marker_send(r);

        if (!k) {
                if (array_grow(&r->txqlens, &r->allocated_txqlens, r->n_txqlens + 1) < 0) {
                        r->marker_all = m;
                        return;
                }
                k = &r->txqlens[r->n_txqlens++];
        }
        *k = (KnownTxqlen) { ifindex, txqlen, just_set, just_set, m };
}

static void nl_socket_freep(struct nl_sock **s) {
        if (*s)
                nl_socket_free(*s);
}
static void nl_cache_freep(struct nl_cache **c) {
        if (*c)
                nl_cache_free(*c);
}
static void nlmsg_freep(struct nl_msg **m) {
        if (*m)
                nlmsg_free(*m);
}
static void rtnl_qdisc_putp(struct rtnl_qdisc **q) {
        if (*q)
                rtnl_qdisc_put(*q);
}

/* libnl's NLE_* codes, back to errno where the meaning is clear. */
static int nl_error_to_errno(int nlerr) {
        switch (-nlerr) {
        case NLE_NOMEM:
                return -ENOBUFS; /* libnl maps ENOBUFS (lost messages) to NLE_NOMEM */
        case NLE_AGAIN:
                return -EAGAIN;
        case NLE_OBJ_NOTFOUND:
        case NLE_NODEV:
                return -ENODEV;
        case NLE_OPNOTSUPP:
                return -EOPNOTSUPP;
        case NLE_PERM:
                return -EPERM;
        case NLE_INVAL:
                return -EINVAL;
        case NLE_EXIST:
                return -EEXIST;
        default:
                return -EIO;
        }
}

static int socket_cloexec(struct nl_sock *s) {
        int fd = nl_socket_get_fd(s);
        int one = 1;

        if (fd < 0 || fcntl(fd, F_SETFD, FD_CLOEXEC) < 0)
                return -EIO;
        /* The kernel explains its refusals in an extended ACK. */
        (void) setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
        return 0;
}

int rtnl_open(Rtnl **ret) {
        _cleanup_(nl_socket_freep) struct nl_sock *sock = NULL, *monitor = NULL;
        Rtnl *r;
        int e;

        sock = nl_socket_alloc();
        monitor = nl_socket_alloc();
        if (!sock || !monitor)
                return -ENOMEM;
        e = nl_connect(sock, NETLINK_ROUTE);
        if (e < 0)
                return nl_error_to_errno(e);
        nl_socket_disable_seq_check(monitor);
        e = nl_connect(monitor, NETLINK_ROUTE);
        if (e >= 0)
                e = nl_socket_add_membership(monitor, RTNLGRP_LINK);
        if (e >= 0)
                e = nl_socket_set_nonblocking(monitor);
        if (e < 0)
                return nl_error_to_errno(e);
        /* A burst of link events must not overrun the socket; if it does, we resync. */
        (void) nl_socket_set_buffer_size(monitor, 1024 * 1024, 0);
        if (socket_cloexec(sock) < 0 || socket_cloexec(monitor) < 0)
                return -EIO;

        r = calloc(1, sizeof(Rtnl));
        if (!r)
                return -ENOMEM;
        r->monitor_buffer = malloc(MONITOR_BUFFER_SIZE);
        if (!r->monitor_buffer) {
                free(r);
                return -ENOMEM;
        }
        r->sock = TAKE_PTR(sock);
        r->monitor = TAKE_PTR(monitor);
        *ret = r;
        return 0;
}

Rtnl *rtnl_close(Rtnl *r) {
        if (!r)
                return NULL;
        nl_socket_free(r->sock);
        nl_socket_free(r->monitor);
        free(r->monitor_buffer);
        free(r->txqlens);
        free(r);
        return NULL;
}

static void link_info_from(struct rtnl_link *l, LinkInfo *ret) {
        *ret = (LinkInfo) { .ifindex = rtnl_link_get_ifindex(l), .flags = rtnl_link_get_flags(l) };
        /* libnl keeps IFLA_TXQLEN whenever the kernel sent it, which it always does. */
        ret->txqlen = rtnl_link_get_txqlen(l);
        ret->has_txqlen = true;
        snprintf(ret->name, sizeof(ret->name), "%s", rtnl_link_get_name(l) ?: "");
}

int rtnl_dump_links(Rtnl *r, LinkHandler cb, void *userdata) {
        _cleanup_(nl_cache_freep) struct nl_cache *cache = NULL;
        int e;

        e = rtnl_link_alloc_cache(r->sock, AF_UNSPEC, &cache);
        if (e < 0)
                return nl_error_to_errno(e);
        for (struct nl_object *o = nl_cache_get_first(cache); o; o = nl_cache_get_next(o)) {
                LinkInfo info;
                link_info_from((struct rtnl_link *) o, &info);
                cb(userdata, &info);
        }
        return 0;
}

int rtnl_get_link(Rtnl *r, int ifindex, LinkInfo *ret) {
        struct rtnl_link *l = NULL;
        int e;

        e = rtnl_link_get_kernel(r->sock, ifindex, NULL, &l);
        if (e < 0)
                return e == -NLE_OBJ_NOTFOUND || e == -NLE_NODEV ? -ENODEV : nl_error_to_errno(e);
        link_info_from(l, ret);
        rtnl_link_put(l);
        return 0;
}

int rtnl_get_txqlen(Rtnl *r, int ifindex, bool just_set, uint32_t *ret) {
        const KnownTxqlen *k = just_set ? txqlen_find(r, ifindex) : NULL;
        LinkInfo l;
        int e;

        if (k && k->just_set) {
                *ret = k->txqlen;
                return 0;
        }
        e = rtnl_get_link(r, ifindex, &l);
        if (e < 0)
                return e;
        if (!l.has_txqlen)
                return -EOPNOTSUPP;
        txqlen_forget(r, ifindex);
        *ret = l.txqlen;
        return 0;
}

int rtnl_get_root_qdisc(Rtnl *r, int ifindex, char **ret_kind) {
        _cleanup_(nl_cache_freep) struct nl_cache *cache = NULL;
        struct rtnl_qdisc *q;
        char *kind;
        int e;

        e = rtnl_qdisc_alloc_cache(r->sock, &cache);
        if (e < 0)
                return nl_error_to_errno(e);
        q = rtnl_qdisc_get_by_parent(cache, ifindex, TC_H_ROOT);
        if (!q) {
                /* No root qdisc: either the device queues nothing (virtual devices), or it
                 * is gone, which must not read as a drift to "noqueue". */
                LinkInfo l;
                e = rtnl_get_link(r, ifindex, &l);
                if (e < 0)
                        return e;
        }
        kind = strdup(q ? rtnl_tc_get_kind(TC_CAST(q)) ?: "" : "noqueue");
        if (q)
                rtnl_qdisc_put(q);
        if (!kind)
                return -ENOMEM;
        *ret_kind = kind;
        return 0;
}

/* nl_socket_get_cb() takes a reference: drop it once cloned. */
static struct nl_cb *clone_socket_cb(struct nl_sock *sock) {
        struct nl_cb *own = nl_socket_get_cb(sock), *copy;

        if (!own)
                return NULL;
        copy = nl_cb_clone(own);
        nl_cb_put(own);
        return copy;
}

typedef struct AckState {
        int error;
        char *message;
        bool done;
} AckState;

static int on_ack_error(struct sockaddr_nl *nla, struct nlmsgerr *err, void *arg) {
        AckState *st = arg;
        const struct nlmsghdr *nlh = (const struct nlmsghdr *) ((const char *) err - NLMSG_HDRLEN);

        /* Passed on as an errno: one outside errno's range is no answer. */
        st->error = err->error < -MAX_ERRNO ? -EBADMSG : err->error;
        st->message = netlink_extack_message(nlh);
        st->done = true;
        return NL_STOP;
}

static int on_ack(struct nl_msg *msg, void *arg) {
        AckState *st = arg;
        st->done = true;
        return NL_STOP;
}

/* Sends msg and waits for this request's own ACK, so none is left queued for the next
 * one. The kernel's -errno, with its extack message in *ret_error (may be NULL). */
static int request_wait_ack(Rtnl *r, struct nl_msg *msg, char **ret_error) {
        struct nl_cb *cb;
        AckState st = {};
        int e;

        e = nl_send_auto(r->sock, msg);
        if (e < 0)
                return nl_error_to_errno(e);
        cb = clone_socket_cb(r->sock);
        if (!cb)
                return -ENOMEM;
        nl_cb_err(cb, NL_CB_CUSTOM, on_ack_error, &st);
        nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, on_ack, &st);
        while (!st.done) {
                e = nl_recvmsgs(r->sock, cb);
                if (e < 0 && !st.done) {
                        nl_cb_put(cb);
                        return nl_error_to_errno(e);
                }
        }
        nl_cb_put(cb);
        if (st.error < 0) {
                if (ret_error)
                        *ret_error = st.message;
                else
                        free(st.message);
                return st.error;
        }
        free(st.message);
        return 0;
}

int rtnl_replace_root_qdisc(Rtnl *r, int ifindex, const char *kind, char **ret_error) {
        _cleanup_(rtnl_qdisc_putp) struct rtnl_qdisc *q = NULL;
        _cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
        int e;

        q = rtnl_qdisc_alloc();
        if (!q)
                return -ENOMEM;
        rtnl_tc_set_ifindex(TC_CAST(q), ifindex);
        rtnl_tc_set_parent(TC_CAST(q), TC_H_ROOT);
        e = rtnl_tc_set_kind(TC_CAST(q), kind);
        if (e < 0)
                return nl_error_to_errno(e);
        if (streq(kind, "pfifo_fast") || streq(kind, "prio")) {
                /* libnl's prio/pfifo_fast encoder aborts without bands and a priomap; these
                 * are the kernel's defaults (sch_prio.c's prio2band). */
                static uint8_t priomap[] = { 1, 2, 2, 2, 1, 2, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1 };
                rtnl_qdisc_prio_set_bands(q, 3);
                e = rtnl_qdisc_prio_set_priomap(q, priomap, sizeof(priomap));
                if (e < 0)
                        return nl_error_to_errno(e);
        }
        e = rtnl_qdisc_build_add_request(q, NLM_F_CREATE | NLM_F_REPLACE, &msg);
        if (e < 0)
                return nl_error_to_errno(e);
        return request_wait_ack(r, msg, ret_error);
}

int rtnl_set_txqlen(Rtnl *r, int ifindex, uint32_t txqlen, char **ret_error) {
        _cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
        struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC, .ifi_index = ifindex };
        int e;

        if (ifindex <= 0)
                return -EINVAL;
        /* A bare RTM_SETLINK with one attribute: nothing else of the link is restated. */
        msg = nlmsg_alloc_simple(RTM_SETLINK, NLM_F_REQUEST | NLM_F_ACK);
        if (!msg)
                return -ENOMEM;
        e = nlmsg_append(msg, &ifi, sizeof(ifi), NLMSG_ALIGNTO);
        if (e >= 0)
                e = nla_put_u32(msg, IFLA_TXQLEN, txqlen);
        if (e < 0)
                return -ENOMEM;
        e = request_wait_ack(r, msg, ret_error);
        /* The kernel takes the length as given (dev_change_tx_queue_len()). A refusal may
         * still have been announced (a notifier's veto puts the old length back). */
        txqlen_written(r, ifindex, e >= 0, txqlen);
        if (e < 0)
                return e == -ENOENT ? -ENODEV : e;
        return 0;
}

int rtnl_monitor_fd(Rtnl *r) {
        return nl_socket_get_fd(r->monitor);
}

typedef struct Dispatch {
        Rtnl *rtnl;
        LinkEventHandler cb;
        void *userdata;
} Dispatch;

bool rtnl_link_from_message(const struct nlmsghdr *nlh, LinkInfo *ret, bool *ret_removed) {
        const struct ifinfomsg *ifi;
        struct nlattr *name, *txqlen;
        LinkInfo info = {};

        if ((nlh->nlmsg_type != RTM_NEWLINK && nlh->nlmsg_type != RTM_DELLINK) ||
            nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*ifi)))
                return false;
        ifi = nlmsg_data(nlh);
        info.ifindex = ifi->ifi_index;
        info.flags = ifi->ifi_flags;
        name = nlmsg_find_attr((struct nlmsghdr *) nlh, sizeof(*ifi), IFLA_IFNAME);
        if (name && nla_len(name) > 0)
                snprintf(info.name, sizeof(info.name), "%.*s", nla_len(name), (const char *) nla_data(name));
        txqlen = nlmsg_find_attr((struct nlmsghdr *) nlh, sizeof(*ifi), IFLA_TXQLEN);
        if (txqlen && nla_len(txqlen) >= (int) sizeof(uint32_t)) {
                info.txqlen = nla_get_u32(txqlen);
                info.has_txqlen = true;
        }
        *ret = info;
        *ret_removed = nlh->nlmsg_type == RTM_DELLINK;
        return true;
}

static void on_link_message(const struct nlmsghdr *nlh, void *userdata) {
        Dispatch *d = userdata;
        LinkInfo info;
        bool removed;

        if (nlh->nlmsg_type == NLMSG_NOOP) {
                on_marker(d->rtnl, nlh);
                return;
        }
        if (!rtnl_link_from_message(nlh, &info, &removed))
                return;
        if (removed) {
                KnownTxqlen *k = txqlen_find(d->rtnl, info.ifindex);
                if (k)
                        txqlen_drop(d->rtnl, k);
        } else if (info.has_txqlen) {
                d->rtnl->notified_ifindex = info.ifindex;
                d->rtnl->notified_txqlen = info.txqlen;
        }
        d->cb(d->userdata, &info, removed);
        d->rtnl->notified_ifindex = 0;
}

bool rtnl_notified_txqlen(Rtnl *r, int ifindex, uint32_t *ret) {
        if (!r || ifindex <= 0 || r->notified_ifindex != ifindex ||
            !txqlen_trusted(r, ifindex, r->notified_txqlen))
                return false;
        *ret = r->notified_txqlen;
        return true;
}

/* Every link change (a feature flip too) sends one of these. */
int rtnl_monitor_dispatch(Rtnl *r, LinkEventHandler cb, void *userdata) {
        Dispatch d = { r, cb, userdata };

        return netlink_drain(nl_socket_get_fd(r->monitor), r->monitor_buffer, MONITOR_BUFFER_SIZE,
                             nl_socket_get_local_port(r->sock), on_link_message, &d);
}
