/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The least any corrector of a link's txqueuelen does, as a floor for
 * tests/bench/bench_link.py: listen on RTNLGRP_LINK as lowlatd does and, at each
 * RTM_NEWLINK of one of the IFINDEXes whose IFLA_TXQLEN is not WANT, send a bare
 * RTM_SETLINK with IFLA_TXQLEN WANT and wait for its ACK. No table, no read-back, no
 * journal, no bus: the notification's hop, the message's own length, the write and its
 * ACK only. Prints "ready" once subscribed; runs until killed.
 *   bench-link-echo WANT IFINDEX... */
#include <errno.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_IFINDEX 4096

static int nl_socket(unsigned groups) {
        struct sockaddr_nl a = { .nl_family = AF_NETLINK, .nl_groups = groups };
        int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);

        if (fd < 0 || bind(fd, (struct sockaddr *) &a, sizeof(a)) < 0) {
                perror("netlink socket");
                exit(1);
        }
        return fd;
}

static void set_txqlen(int fd, int ifindex, uint32_t want, uint32_t seq) {
        struct {
                struct nlmsghdr nh;
                struct ifinfomsg ifi;
                struct rtattr rta;
                uint32_t txqlen;
        } req = {
                .nh = { .nlmsg_len = sizeof(req), .nlmsg_type = RTM_SETLINK,
                        .nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK, .nlmsg_seq = seq },
                .ifi = { .ifi_family = AF_UNSPEC, .ifi_index = ifindex },
                .rta = { .rta_len = RTA_LENGTH(sizeof(uint32_t)), .rta_type = IFLA_TXQLEN },
                .txqlen = want,
        };
        char ack[1024];

        if (send(fd, &req, sizeof(req), 0) < 0) {
                perror("RTM_SETLINK");
                return;
        }
        while (recv(fd, ack, sizeof(ack), 0) < 0 && errno == EINTR)
                ;
}

static uint32_t txqlen_of(const struct nlmsghdr *nh, bool *found) {
        int len = (int) nh->nlmsg_len - (int) NLMSG_LENGTH(sizeof(struct ifinfomsg));
        const struct rtattr *a = IFLA_RTA(NLMSG_DATA(nh));

        for (; RTA_OK(a, len); a = RTA_NEXT(a, len))
                if (a->rta_type == IFLA_TXQLEN && RTA_PAYLOAD(a) >= sizeof(uint32_t)) {
                        *found = true;
                        return *(const uint32_t *) RTA_DATA(a);
                }
        *found = false;
        return 0;
}

int main(int argc, char **argv) {
        static uint8_t buf[32 * 1024];
        static bool watched[MAX_IFINDEX];
        uint32_t want, seq = 0;
        int mon, req;

        if (argc < 3) {
                fprintf(stderr, "usage: %s WANT IFINDEX...\n", argv[0]);
                return 2;
        }
        want = (uint32_t) strtoul(argv[1], NULL, 10);
        for (int i = 2; i < argc; i++) {
                int ifindex = atoi(argv[i]);
                if (ifindex <= 0 || ifindex >= MAX_IFINDEX) {
                        fprintf(stderr, "ifindex out of range: %s\n", argv[i]);
                        return 2;
                }
                watched[ifindex] = true;
        }
        mon = nl_socket(RTMGRP_LINK);
        req = nl_socket(0);
        printf("ready\n");
        fflush(stdout);
        for (;;) {
                ssize_t n = recv(mon, buf, sizeof(buf), 0);
                int left = (int) n;

                if (n < 0) {
                        if (errno == EINTR || errno == ENOBUFS)
                                continue;
                        perror("recv");
                        return 1;
                }
                for (const struct nlmsghdr *nh = (const struct nlmsghdr *) buf; NLMSG_OK(nh, left);
                     nh = NLMSG_NEXT(nh, left)) {
                        const struct ifinfomsg *ifi = NLMSG_DATA(nh);
                        bool found;
                        uint32_t v;

                        if (nh->nlmsg_type != RTM_NEWLINK || nh->nlmsg_len < NLMSG_LENGTH(sizeof(*ifi)) ||
                            ifi->ifi_index <= 0 || ifi->ifi_index >= MAX_IFINDEX || !watched[ifi->ifi_index])
                                continue;
                        v = txqlen_of(nh, &found);
                        if (found && v != want)
                                set_txqlen(req, ifi->ifi_index, want, ++seq);
                }
        }
}
