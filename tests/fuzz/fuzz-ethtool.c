/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fuzzes the ethtool generic-netlink client (host/ethtool.c) on whatever the kernel may
 * answer: the replies to its requests (parameters, the feature string set, FEATURES_GET
 * and FEATURES_SET replies, errors with extended ACKs, ACKs, leftovers of other requests,
 * messages cut short or too large) and the monitor group's notifications.
 * ethtool.c is compiled into this harness (run-fuzzers.sh leaves its object out) with its
 * two socket calls on the request path replaced by the macros below: a request is "sent"
 * by numbering it (1, 2, ... per run) and recv() hands out the input's next request
 * datagram, with MSG_TRUNC's true length; none left is the socket's timeout. The monitor
 * socket is a real AF_UNIX datagram pair read by netlink_drain(). Everything else is the
 * client's own code, called through its public functions.
 * Input: byte 0 picks the call, byte 1 its parameter, byte 2 a value; then datagrams, each
 * a flag byte (bit 0: for the monitor, else for requests), a little-endian u16 length and
 * that many bytes. The genl family is FUZZ_FAMILY (0x20).
 * Promises checked: no crash, leak or undefined behaviour; results are 0 or a -errno the
 * header allows (a kernel error in errno's range); a reason only when a call fails, and
 * always for -EOPNOTSUPP; a boolean parameter is 0 or 1; the feature names number 1 to 4096;
 * every kept feature state has the bits of the names it was stored for. */
#include <errno.h>
#include <fcntl.h>
#include <linux/ethtool.h>
#include <linux/ethtool_netlink.h>
#include <linux/netlink.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>
#include <stdarg.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "fuzz.h"

#define FUZZ_FAMILY 0x20
#define MAX_DATAGRAMS 16

typedef struct Datagram {
        const uint8_t *data;
        size_t size;
} Datagram;

static struct {
        Datagram requests[MAX_DATAGRAMS];
        size_t n_requests, next_request;
        uint32_t seq;
        int monitor_fd;
} fake;

/* The request socket and the monitor socket, as the client sees them. */
static char request_socket, monitor_socket;
#define REQUEST_FD 1000

static int fuzz_socket_get_fd(const struct nl_sock *sk);
static int fuzz_send_auto(struct nl_sock *sk, struct nl_msg *m);
static ssize_t fuzz_recv(int fd, void *buf, size_t size, int flags);
static void fuzz_socket_free(struct nl_sock *sk);

#define nl_socket_get_fd fuzz_socket_get_fd
#define nl_send_auto fuzz_send_auto
#define recv fuzz_recv
#define nl_socket_free fuzz_socket_free
#include "host/ethtool.c"
#undef nl_socket_get_fd
#undef nl_send_auto
#undef recv
#undef nl_socket_free

static int fuzz_socket_get_fd(const struct nl_sock *sk) {
        FUZZ_CHECK(sk == (void *) &request_socket || sk == (void *) &monitor_socket, "an unknown socket");
        return sk == (void *) &request_socket ? REQUEST_FD : fake.monitor_fd;
}

static int fuzz_send_auto(struct nl_sock *sk, struct nl_msg *m) {
        struct nlmsghdr *nlh = nlmsg_hdr(m);

        FUZZ_CHECK(sk == (void *) &request_socket, "a request sent on the monitor socket");
        FUZZ_CHECK(nlh->nlmsg_type == FUZZ_FAMILY && genlmsg_valid_hdr(nlh, 0), "a malformed request");
        nlh->nlmsg_seq = ++fake.seq;
        return (int) nlh->nlmsg_len;
}

static ssize_t fuzz_recv(int fd, void *buf, size_t size, int flags) {
        const Datagram *d;

        FUZZ_CHECK(fd == REQUEST_FD, "recv() on fd %d", fd);
        if (fake.next_request >= fake.n_requests) {
                errno = EAGAIN; /* SO_RCVTIMEO ran out */
                return -1;
        }
        d = &fake.requests[fake.next_request++];
        memcpy(buf, d->data, MIN(d->size, size));
        return (ssize_t) ((flags & MSG_TRUNC) ? d->size : MIN(d->size, size));
}

static void fuzz_socket_free(struct nl_sock *sk) {
        FUZZ_CHECK(!sk || sk == (void *) &request_socket || sk == (void *) &monitor_socket, "an unknown socket");
}

static void check_result(int r, const char *error, const char *what) {
        FUZZ_CHECK(r <= 0 && r > -4096, "%s returned %d", what, r);
        FUZZ_CHECK(r < 0 || !error, "%s succeeded with reason '%s'", what, error);
        FUZZ_CHECK(r != -EOPNOTSUPP || (error && *error), "%s: -EOPNOTSUPP without a reason", what);
}

static void check_client(const EthtoolClient *c) {
        FUZZ_CHECK(c->n_features <= 4096 && (c->n_features > 0) == (c->feature_names != NULL),
                   "%u feature names", c->n_features);
        for (size_t i = 0; i < c->n_feature_states; i++)
                FUZZ_CHECK(c->feature_states[i].words && c->feature_states[i].n_bits == c->n_features,
                           "a feature state of %u bits for %u names", c->feature_states[i].n_bits, c->n_features);
}

static void on_notify(void *userdata, int ifindex, EthtoolGroup group) {
        FUZZ_CHECK(ifindex > 0 && group >= 0 && group < _ETHTOOL_GROUP_MAX, "notified of %d, group %d", ifindex,
                   group);
        (*(unsigned *) userdata)++;
}

/* A feature name the client knows, picked by index; "rx-gro" when it knows none. */
static const char *pick_feature(EthtoolClient *c, uint8_t pick) {
        char *const *names;
        size_t n;

        if (ethtool_feature_names(c, &names, &n) < 0 || n == 0 || !names[pick % n])
                return "rx-gro";
        return names[pick % n];
}

static void run(EthtoolClient *c, uint8_t call, uint8_t pick, uint8_t value) {
        _cleanup_free_ char *error = NULL;
        EthtoolParam p = (EthtoolParam) (pick % _ETHTOOL_PARAM_MAX);
        bool active = false, changeable = false;
        unsigned notified = 0;
        const char *name;
        uint32_t v = 0;
        int r;

        switch (call % 6) {
        case 0:
                r = ethtool_get_param(c, 1, p, &v, &error);
                check_result(r, error, "ethtool_get_param()");
                FUZZ_CHECK(r < 0 || !ethtool_param_is_boolean(p) || v <= 1, "boolean %s is %u",
                           ethtool_param_to_string(p), v);
                break;
        case 1:
                r = ethtool_set_param(c, 1, p, ethtool_param_is_boolean(p) ? value & 1 : value, &error);
                check_result(r, error, "ethtool_set_param()");
                break;
        case 2:
        case 3:
                /* The names first (a request), as the first look at a feature loads them:
                 * until then a FEATURES_NTF is not kept. */
                name = pick_feature(c, pick);
                r = ethtool_monitor_dispatch(c, on_notify, &notified);
                FUZZ_CHECK(r == 0 || r == -ENOBUFS, "ethtool_monitor_dispatch() returned %d", r);
                check_client(c);
                r = (call % 6 == 2 ? ethtool_get_feature : ethtool_get_feature_notified)(c, 1, name, &active,
                                                                                          &changeable, &error);
                check_result(r, error, "ethtool_get_feature()");
                break;
        case 4:
                r = ethtool_set_feature(c, 1 + (value & 1), pick_feature(c, pick), value & 2, &error);
                check_result(r, error, "ethtool_set_feature()");
                break;
        default:
                r = ethtool_monitor_dispatch(c, on_notify, &notified);
                FUZZ_CHECK(r == 0 || r == -ENOBUFS, "ethtool_monitor_dispatch() returned %d", r);
        }
        check_client(c);
        /* What the monitor kept is read without asking: no request datagram is taken. */
        (void) ethtool_monitor_dispatch(c, NULL, NULL);
        check_client(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        EthtoolClient *c;
        size_t offset = 3, monitor_sent = 0;
        int fds[2];

        if (size < 3)
                return 0;
        fake.n_requests = fake.next_request = 0;
        fake.seq = 0;
        FUZZ_CHECK(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds) == 0, "socketpair: %m");
        fake.monitor_fd = fds[0];
        while (offset + 3 <= size && fake.n_requests < MAX_DATAGRAMS) {
                bool monitor = data[offset] & 1;
                size_t n = data[offset + 1] | (size_t) data[offset + 2] << 8;

                offset += 3;
                n = MIN(n, size - offset);
                if (!monitor)
                        fake.requests[fake.n_requests++] = (Datagram) { data + offset, n };
                else if (monitor_sent < 8 && send(fds[1], data + offset, n, 0) == (ssize_t) n)
                        monitor_sent++;
                offset += n;
        }

        c = calloc(1, sizeof(EthtoolClient));
        FUZZ_CHECK(c, "out of memory");
        c->request = (struct nl_sock *) &request_socket;
        c->monitor = (struct nl_sock *) &monitor_socket;
        c->family = FUZZ_FAMILY;
        c->request_buffer = malloc(RECEIVE_BUFFER_SIZE);
        c->monitor_buffer = malloc(RECEIVE_BUFFER_SIZE);
        FUZZ_CHECK(c->request_buffer && c->monitor_buffer, "out of memory");

        run(c, data[0], data[1], data[2]);

        ethtool_client_free(c);
        close(fds[0]);
        close(fds[1]);
        return 0;
}
