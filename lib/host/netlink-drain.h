/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Reading what a netlink monitor socket (rtnetlink's link group, ethtool's monitor
 * group) has queued, straight into one buffer: every change sends a message, and libnl's
 * receive path would allocate for each. And the kernel's extended-ACK text, which both
 * rtnetlink and ethtool requests read from their errors. */
#pragma once

#include <linux/netlink.h>
#include <stddef.h>
#include <stdint.h>

/* The largest errno the kernel uses (include/linux/err.h): a netlink error beyond it is
 * malformed. */
#define MAX_ERRNO 4095

typedef void (*NetlinkMessageHandler)(const struct nlmsghdr *nlh, void *userdata);

/* Reads every datagram queued on the non-blocking socket fd into buf (size bytes) and
 * calls handle for each message in them. Everything is drained even after an overrun:
 * the queue still holds what came later, and reading it now is cheaper than another
 * wakeup. Only the kernel's datagrams (sender port 0) are handed over, and those of
 * port peer when it is not 0 (rtnl's marker, sent by its own request socket): a process
 * with CAP_NET_ADMIN can send a monitor socket forged notifications, and the kernel's
 * sender address is what tells them apart (a datagram with no netlink sender, as from
 * the fuzzers' AF_UNIX pairs, is taken as it is). Returns -ENOBUFS when messages were
 * lost (the socket overran, or one did not fit in buf): the caller resynchronises. 0
 * when drained, or -errno. */
int netlink_drain(int fd, void *buf, size_t size, uint32_t peer, NetlinkMessageHandler handle, void *userdata);

/* The text of NLMSGERR_ATTR_MSG in an NLMSG_ERROR message (nlmsg_len bytes of it
 * readable), or NULL when there is none. Without NETLINK_CAP_ACK the request is echoed
 * after struct nlmsgerr and the TLVs follow it; with it (NLM_F_CAPPED) they follow the
 * struct directly. The text is cut at its first NUL; an empty one is NULL. */
char *netlink_extack_message(const struct nlmsghdr *nlh);
