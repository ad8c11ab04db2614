/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Reading what a netlink monitor socket (rtnetlink's link group, ethtool's monitor
 * group) has queued, straight into one buffer: every change sends a message, and libnl's
 * receive path would allocate for each. */
#pragma once

#include <linux/netlink.h>
#include <stddef.h>

typedef void (*NetlinkMessageHandler)(const struct nlmsghdr *nlh, void *userdata);

/* Reads every datagram queued on the non-blocking socket fd into buf (size bytes) and
 * calls handle for each message in them. Everything is drained even after an overrun:
 * the queue still holds what came later, and reading it now is cheaper than another
 * wakeup. Returns -ENOBUFS when messages were lost (the socket overran, or one did not
 * fit in buf): the caller resynchronises. 0 when drained, or -errno. */
int netlink_drain(int fd, void *buf, size_t size, NetlinkMessageHandler handle, void *userdata);
