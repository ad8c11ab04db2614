/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* netlink_drain() hands over what the kernel sent and what the one trusted peer port
 * sent, and drops a datagram another process sent the monitor socket (a forged link
 * notification). Real NETLINK_ROUTE sockets: a unicast between two of this test's own
 * sockets, and the kernel's answer to an RTM_GETLINK of the loopback device (a read). */
#include <errno.h>
#include <linux/rtnetlink.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <unistd.h>

#include "basic/macro.h"
#include "host/netlink-drain.h"
#include "tap.h"

typedef struct Seen {
        unsigned n;
        uint16_t type;
} Seen;

static void on_message(const struct nlmsghdr *nlh, void *userdata) {
        Seen *s = userdata;

        s->n++;
        s->type = nlh->nlmsg_type;
}

/* A bound NETLINK_ROUTE socket and its port, or -errno. */
static int route_socket(uint32_t *ret_port) {
        struct sockaddr_nl a = { .nl_family = AF_NETLINK };
        socklen_t len = sizeof(a);
        int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_ROUTE);

        if (fd < 0)
                return negative_errno();
        if (bind(fd, (struct sockaddr *) &a, sizeof(a)) < 0 || getsockname(fd, (struct sockaddr *) &a, &len) < 0) {
                int r = negative_errno();
                close(fd);
                return r;
        }
        *ret_port = a.nl_pid;
        return fd;
}

/* An empty message of type to port (0: the kernel); -errno. */
static int send_to(int fd, uint32_t port, uint16_t type, uint16_t flags, const void *body, size_t body_size) {
        struct {
                struct nlmsghdr h;
                uint8_t body[64];
        } m = { .h = { .nlmsg_len = NLMSG_LENGTH(body_size), .nlmsg_type = type, .nlmsg_flags = flags, .nlmsg_seq = 1 } };
        struct sockaddr_nl to = { .nl_family = AF_NETLINK, .nl_pid = port };

        if (body_size > 0)
                memcpy(m.body, body, MIN(body_size, sizeof(m.body)));
        return sendto(fd, &m, m.h.nlmsg_len, 0, (struct sockaddr *) &to, sizeof(to)) < 0 ? negative_errno() : 0;
}

/* Drains fd (waiting up to a second for the first datagram) with peer trusted. */
static int drain(int fd, uint32_t peer, Seen *seen) {
        static union {
                struct nlmsghdr h;
                uint8_t bytes[16384];
        } buf;
        fd_set set;
        struct timeval tv = { .tv_sec = 1 };

        FD_ZERO(&set);
        FD_SET(fd, &set);
        (void) select(fd + 1, &set, NULL, NULL, &tv);
        *seen = (Seen) {};
        return netlink_drain(fd, &buf, sizeof(buf), peer, on_message, seen);
}

int main(void) {
        uint32_t monitor_port, peer_port, stranger_port;
        int monitor, peer, stranger, r;
        struct ifinfomsg lo = { .ifi_family = AF_UNSPEC, .ifi_index = 1 };
        Seen seen;

        monitor = route_socket(&monitor_port);
        peer = route_socket(&peer_port);
        stranger = route_socket(&stranger_port);
        if (monitor < 0 || peer < 0 || stranger < 0) {
                printf("1..0 # SKIP no NETLINK_ROUTE socket here: %s\n", strerror(-MIN(monitor, MIN(peer, stranger))));
                return 0;
        }
        /* A unicast to another user socket needs CAP_NET_ADMIN, as lowlatd's marker does. */
        r = send_to(stranger, monitor_port, RTM_NEWLINK, 0, &lo, sizeof(lo));
        if (r == -EPERM) {
                printf("1..0 # SKIP sending to another netlink socket needs CAP_NET_ADMIN\n");
                return 0;
        }
        CHECK(r == 0, "a forged RTM_NEWLINK sent to the monitor socket");
        r = drain(monitor, peer_port, &seen);
        CHECK(r == 0 && seen.n == 0, "another process's datagram is dropped unread, even with a peer trusted");

        CHECK(send_to(peer, monitor_port, NLMSG_NOOP, 0, NULL, 0) == 0, "a marker sent from the peer's socket");
        r = drain(monitor, 0, &seen);
        CHECK(r == 0 && seen.n == 0, "the peer's datagram is dropped when no peer is trusted");
        CHECK(send_to(peer, monitor_port, NLMSG_NOOP, 0, NULL, 0) == 0, "the marker sent again");
        r = drain(monitor, peer_port, &seen);
        CHECK(r == 0 && seen.n == 1 && seen.type == NLMSG_NOOP, "the trusted peer's marker is handed over");

        /* The kernel's own answer (sender port 0) always is. */
        CHECK(send_to(monitor, 0, RTM_GETLINK, NLM_F_REQUEST, &lo, sizeof(lo)) == 0, "RTM_GETLINK of lo asked");
        r = drain(monitor, 0, &seen);
        CHECK(r == 0 && seen.n == 1 && seen.type == RTM_NEWLINK, "the kernel's answer is handed over");

        close(monitor);
        close(peer);
        close(stranger);
        return tap_finish();
}
