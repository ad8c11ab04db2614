/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Draining a netlink monitor socket into one buffer. */
#include <errno.h>
#include <stdbool.h>
#include <sys/socket.h>

#include "basic/macro.h"
#include "host/netlink-drain.h"

int netlink_drain(int fd, void *buf, size_t size, NetlinkMessageHandler handle, void *userdata) {
        bool lost = false;

        for (;;) {
                ssize_t n = recv(fd, buf, size, MSG_DONTWAIT | MSG_TRUNC);
                const struct nlmsghdr *nlh = buf;
                int left;

                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno == EAGAIN || errno == EWOULDBLOCK)
                                break;
                        if (errno == ENOBUFS) {
                                lost = true;
                                continue;
                        }
                        return negative_errno();
                }
                if ((size_t) n > size) {
                        lost = true; /* cut off, so unreadable: as good as lost */
                        continue;
                }
                for (left = (int) n; NLMSG_OK(nlh, left); nlh = NLMSG_NEXT(nlh, left))
                        handle(nlh, userdata);
        }
        return lost ? -ENOBUFS : 0;
}
