/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fuzzes the netlink drain path (host/netlink-drain.c) with the rtnetlink parsers behind it
 * (host/rtnl.c): datagrams as a monitor socket would queue them, read by netlink_drain()
 * from a real socket (an AF_UNIX datagram pair, which reports a cut datagram's true length
 * under MSG_TRUNC as netlink does) into a buffer of a size the input picks; every message
 * handed over goes to the link monitor's parser, the extended-ACK reader, and libnl's own
 * link parser (rtnl_dump_links() and rtnl_get_link() take their links from it).
 * Input: byte 0 picks the buffer size (16 + 64 * byte); then up to 8 datagrams, each a
 * little-endian u16 length and that many bytes.
 * Promises checked against a reference walk of the netlink framing: the handler sees
 * exactly the whole messages of each datagram that fits, in order, none reaching past its
 * datagram; a datagram larger than the buffer is -ENOBUFS and nothing of it is seen; a
 * link has a NUL-terminated name under IFNAMSIZ, is "removed" only for RTM_DELLINK; an
 * extack text lies within its message. */
#include <errno.h>
#include <linux/rtnetlink.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/route/link.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fuzz.h"
#include "basic/macro.h"
#include "host/netlink-drain.h"
#include "host/rtnl.h"

#define MAX_DATAGRAMS 8

typedef struct Expect {
        const uint8_t *buf;
        size_t size;         /* of the receive buffer */
        uint32_t lengths[1024 * MAX_DATAGRAMS]; /* the messages' nlmsg_len, in order */
        size_t n, seen;
} Expect;

/* The messages NLMSG_OK/NLMSG_NEXT find in one datagram, written from <linux/netlink.h>. */
static void reference(Expect *x, const uint8_t *d, size_t n) {
        size_t offset = 0;

        while (n - offset >= sizeof(struct nlmsghdr)) {
                uint32_t len;

                memcpy(&len, d + offset, sizeof(len));
                if (len < sizeof(struct nlmsghdr) || len > n - offset)
                        break;
                FUZZ_CHECK(x->n < ELEMENTSOF(x->lengths), "more messages than room");
                x->lengths[x->n++] = len;
                if (((size_t) len + 3) / 4 * 4 >= n - offset)
                        break;
                offset += ((size_t) len + 3) / 4 * 4;
        }
}

static void on_parsed_link(struct nl_object *o, void *arg) {
        const char *name = rtnl_link_get_name((struct rtnl_link *) o);

        FUZZ_CHECK(!name || strlen(name) < 4096, "libnl's link name is not a string");
}

static void on_message(const struct nlmsghdr *nlh, void *userdata) {
        Expect *x = userdata;
        const uint8_t *p = (const uint8_t *) nlh;
        LinkInfo link;
        bool removed;

        FUZZ_CHECK(p >= x->buf && p + sizeof(*nlh) <= x->buf + x->size, "a message header outside the buffer");
        FUZZ_CHECK(nlh->nlmsg_len >= sizeof(*nlh) && p + nlh->nlmsg_len <= x->buf + x->size,
                   "a message of %u bytes reaches past the buffer", nlh->nlmsg_len);
        FUZZ_CHECK(x->seen < x->n && x->lengths[x->seen] == nlh->nlmsg_len,
                   "message %zu (%u bytes) is not the reference's", x->seen, nlh->nlmsg_len);
        x->seen++;

        if (rtnl_link_from_message(nlh, &link, &removed)) {
                FUZZ_CHECK(memchr(link.name, '\0', sizeof(link.name)), "a link name without its NUL");
                FUZZ_CHECK(removed == (nlh->nlmsg_type == RTM_DELLINK), "removed for message type %u",
                           nlh->nlmsg_type);
        } else
                FUZZ_CHECK(nlh->nlmsg_type != RTM_NEWLINK || nlh->nlmsg_len < NLMSG_LENGTH(sizeof(struct ifinfomsg)),
                           "a whole RTM_NEWLINK was not taken");

        if (nlh->nlmsg_type == NLMSG_ERROR) {
                char *text = netlink_extack_message(nlh);
                FUZZ_CHECK(!text || (strlen(text) > 0 && strlen(text) < nlh->nlmsg_len),
                           "an extack text of %zu bytes from a message of %u", text ? strlen(text) : 0,
                           nlh->nlmsg_len);
                free(text);
        }

        if (nlh->nlmsg_type == RTM_NEWLINK || nlh->nlmsg_type == RTM_DELLINK) {
                struct nl_msg *m = nlmsg_convert((struct nlmsghdr *) nlh);
                FUZZ_CHECK(m, "nlmsg_convert");
                nlmsg_set_proto(m, NETLINK_ROUTE);
                (void) nl_msg_parse(m, on_parsed_link, NULL);
                nlmsg_free(m);
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        Expect x = {};
        size_t offset = 1, sent = 0;
        bool lost = false;
        uint8_t *buf;
        int fds[2], r;

        if (size < 1)
                return 0;
        x.size = 16 + 64 * (size_t) data[0];
        /* malloc'd like the monitors' buffers: aligned for nlmsghdr, and ASan sees its end. */
        buf = malloc(x.size);
        FUZZ_CHECK(buf, "out of memory");
        x.buf = buf;
        FUZZ_CHECK(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds) == 0, "socketpair: %m");

        while (offset + 2 <= size && sent < MAX_DATAGRAMS) {
                size_t n = data[offset] | (size_t) data[offset + 1] << 8;

                offset += 2;
                n = MIN(n, size - offset);
                if (send(fds[1], data + offset, n, 0) != (ssize_t) n) {
                        FUZZ_CHECK(errno == EAGAIN || errno == ENOBUFS, "send: %m");
                        break; /* the queue is full: what was sent is the test */
                }
                if (n > x.size)
                        lost = true;
                else
                        reference(&x, data + offset, n);
                offset += n;
                sent++;
        }

        r = netlink_drain(fds[0], buf, x.size, 0, on_message, &x);
        FUZZ_CHECK(r == (lost ? -ENOBUFS : 0), "netlink_drain() returned %d, lost %d", r, lost);
        FUZZ_CHECK(x.seen == x.n, "%zu messages seen, the reference has %zu", x.seen, x.n);
        close(fds[0]);
        close(fds[1]);
        free(buf);
        return 0;
}
