/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The proc connector, filtered down to kthreadd's forks. */
#include <arpa/inet.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/filter.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "basic/macro.h"
#include "host/netlink-drain.h"
#include "host/proc-connector.h"

/* Every message is one proc_event; 4 KiB holds many of them per datagram read. */
#define RECEIVE_BUFFER_SIZE 4096

struct ProcConnector {
        int fd;
        void *buffer;
};

/* Where the fields the filter looks at are, from the start of the netlink message. */
#define EVENT_OFFSET (NLMSG_HDRLEN + offsetof(struct cn_msg, data))
#define WHAT_OFFSET (EVENT_OFFSET + offsetof(struct proc_event, what))
#define PARENT_TGID_OFFSET (EVENT_OFFSET + offsetof(struct proc_event, event_data.fork.parent_tgid))
#define FORK_EVENT_END (offsetof(struct proc_event, event_data.fork) + sizeof(struct fork_proc_event))

/* Classic BPF loads words in network byte order; the connector writes host order. */
static int attach_filter(int fd) {
        struct sock_filter code[] = {
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, WHAT_OFFSET),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, htonl(PROC_EVENT_FORK), 0, 3),
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, PARENT_TGID_OFFSET),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, htonl(KTHREADD_PID), 0, 1),
                BPF_STMT(BPF_RET | BPF_K, 0xffffffffU),
                BPF_STMT(BPF_RET | BPF_K, 0),
        };
        struct sock_fprog prog = { .len = ELEMENTSOF(code), .filter = code };

        return setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog)) < 0 ? negative_errno() : 0;
}

static int send_op(int fd, enum proc_cn_mcast_op op) {
        struct {
                struct nlmsghdr nlh;
                struct cn_msg cn;
                enum proc_cn_mcast_op op;
        } __attribute__((packed)) msg = {
                .nlh = { .nlmsg_len = sizeof(msg), .nlmsg_type = NLMSG_DONE },
                .cn = { .id = { .idx = CN_IDX_PROC, .val = CN_VAL_PROC }, .len = sizeof(enum proc_cn_mcast_op) },
                .op = op,
        };
        struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };

        return sendto(fd, &msg, sizeof(msg), MSG_NOSIGNAL, (struct sockaddr *) &kernel, sizeof(kernel)) < 0
                       ? negative_errno()
                       : 0;
}

int proc_connector_open(ProcConnector **ret) {
        struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = CN_IDX_PROC };
        ProcConnector *c;
        int r;

        c = calloc(1, sizeof(ProcConnector));
        if (!c)
                return -ENOMEM;
        c->buffer = malloc(RECEIVE_BUFFER_SIZE);
        c->fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_CONNECTOR);
        if (!c->buffer)
                r = -ENOMEM;
        else if (c->fd < 0)
                r = negative_errno();
        /* The filter first: nothing unfiltered is queued in between. */
        else if ((r = attach_filter(c->fd)) >= 0 && bind(c->fd, (struct sockaddr *) &sa, sizeof(sa)) < 0)
                r = negative_errno();
        else if (r >= 0)
                r = send_op(c->fd, PROC_CN_MCAST_LISTEN);
        if (r < 0) {
                safe_close(c->fd);
                free(c->buffer);
                free(c);
                return r;
        }
        *ret = c;
        return 0;
}

ProcConnector *proc_connector_free(ProcConnector *c) {
        if (!c)
                return NULL;
        if (c->fd >= 0)
                (void) send_op(c->fd, PROC_CN_MCAST_IGNORE);
        safe_close(c->fd);
        free(c->buffer);
        free(c);
        return NULL;
}

int proc_connector_fd(const ProcConnector *c) {
        return c->fd;
}

int proc_connector_parse(const struct nlmsghdr *nlh, KthreadForkHandler cb, void *userdata) {
        const uint8_t *data = (const uint8_t *) nlh;
        struct cn_msg cn;
        struct proc_event ev;

        if (nlh->nlmsg_len < EVENT_OFFSET)
                return -EINVAL;
        memcpy(&cn, data + NLMSG_HDRLEN, sizeof(cn));
        if (cn.id.idx != CN_IDX_PROC || cn.id.val != CN_VAL_PROC)
                return 0;
        /* The event is as long as cn_msg says, and must fit in the message. */
        if (cn.len > nlh->nlmsg_len - EVENT_OFFSET || cn.len < offsetof(struct proc_event, event_data))
                return -EINVAL;
        memset(&ev, 0, sizeof(ev));
        memcpy(&ev, data + EVENT_OFFSET, MIN((size_t) cn.len, sizeof(ev)));
        if (ev.what != PROC_EVENT_FORK)
                return 0;
        if (cn.len < FORK_EVENT_END)
                return -EINVAL;
        /* kthreadd is one thread: its forks are new tasks (tid = tgid), each a kernel thread. */
        if (ev.event_data.fork.parent_tgid != KTHREADD_PID || ev.event_data.fork.child_pid <= 0 ||
            ev.event_data.fork.child_pid != ev.event_data.fork.child_tgid)
                return 0;
        cb(userdata, ev.event_data.fork.child_pid, ev.timestamp_ns);
        return 1;
}

typedef struct Dispatch {
        KthreadForkHandler cb;
        void *userdata;
} Dispatch;

static void on_message(const struct nlmsghdr *nlh, void *userdata) {
        Dispatch *d = userdata;
        (void) proc_connector_parse(nlh, d->cb, d->userdata);
}

int proc_connector_dispatch(ProcConnector *c, KthreadForkHandler cb, void *userdata) {
        Dispatch d = { cb, userdata };

        return netlink_drain(c->fd, c->buffer, RECEIVE_BUFFER_SIZE, 0, on_message, &d);
}
