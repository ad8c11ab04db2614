/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Draining a netlink monitor socket into one buffer; the extended ACK's text. */
#include <errno.h>
#include <netlink/attr.h>
#include <netlink/msg.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>

#include "basic/macro.h"
#include "host/netlink-drain.h"

/* Whether a datagram from this sender may be handed over: the kernel's, peer's, or one
 * with no netlink sender at all (not a netlink socket). */
static bool sender_trusted(const struct sockaddr_nl *from, socklen_t from_len, uint32_t peer) {
        if (from_len < sizeof(*from) || from->nl_family != AF_NETLINK)
                return true;
        return from->nl_pid == 0 || (peer != 0 && from->nl_pid == peer);
}

int netlink_drain(int fd, void *buf, size_t size, uint32_t peer, NetlinkMessageHandler handle, void *userdata) {
        bool lost = false;

        for (;;) {
                struct sockaddr_nl from = {};
                socklen_t from_len = sizeof(from);
                ssize_t n = recvfrom(fd, buf, size, MSG_DONTWAIT | MSG_TRUNC, (struct sockaddr *) &from, &from_len);
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
                if (!sender_trusted(&from, from_len, peer))
                        continue; /* forged: dropped unread */
                for (left = (int) n; NLMSG_OK(nlh, left); nlh = NLMSG_NEXT(nlh, left))
                        handle(nlh, userdata);
        }
        return lost ? -ENOBUFS : 0;
}

char *netlink_extack_message(const struct nlmsghdr *nlh) {
        const struct nlmsgerr *e = NLMSG_DATA(nlh);
        struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];
        size_t offset = sizeof(struct nlmsgerr), length;

        if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(struct nlmsgerr)) || !(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
                return NULL;
        length = nlh->nlmsg_len - NLMSG_HDRLEN;
        /* The echoed request's own length is the kernel's word, checked like the rest. */
        if (!(nlh->nlmsg_flags & NLM_F_CAPPED)) {
                if (e->msg.nlmsg_len < NLMSG_HDRLEN)
                        return NULL;
                offset += e->msg.nlmsg_len - NLMSG_HDRLEN;
        }
        offset = NLMSG_ALIGN(offset);
        if (offset >= length)
                return NULL;
        if (nla_parse(tb, NLMSGERR_ATTR_MAX, (struct nlattr *) ((uint8_t *) NLMSG_DATA(nlh) + offset),
                      (int) (length - offset), NULL) < 0)
                return NULL;
        /* An empty text ("\0...") is no message: the caller's own reason is better. */
        if (!tb[NLMSGERR_ATTR_MSG] || nla_len(tb[NLMSGERR_ATTR_MSG]) <= 0 ||
            *(const char *) nla_data(tb[NLMSGERR_ATTR_MSG]) == '\0')
                return NULL;
        return strndup(nla_data(tb[NLMSGERR_ATTR_MSG]), (size_t) nla_len(tb[NLMSGERR_ATTR_MSG]));
}
