/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ethtool generic netlink: a request socket where every request waits for its own reply
 * and ACK (matched by sequence number), and a monitor socket on the "monitor" group. */
#include <fcntl.h>
#include <linux/ethtool.h>
#include <linux/ethtool_netlink.h>
#include <linux/netlink.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>
#include <stdarg.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>

#include "basic/array.h"
#include "host/ethtool.h"
#include "host/netlink-drain.h"
#include "basic/util.h"

/* Every ethtool message keeps its request header in attribute 1; notifications are
 * parsed without knowing which message family they belong to. */
#define ETHTOOL_A_ANY_HEADER 1
/* The largest attribute number of the four GET replies, to size one parse table. */
#define GROUP_ATTRIBUTE_MAX ETHTOOL_A_COALESCE_MAX
_Static_assert((int) ETHTOOL_A_RINGS_MAX <= (int) GROUP_ATTRIBUTE_MAX, "attribute table size");
_Static_assert((int) ETHTOOL_A_CHANNELS_MAX <= (int) GROUP_ATTRIBUTE_MAX, "attribute table size");
_Static_assert((int) ETHTOOL_A_FEATURES_MAX <= (int) GROUP_ATTRIBUTE_MAX, "attribute table size");
_Static_assert((int) ETHTOOL_A_PAUSE_MAX <= (int) GROUP_ATTRIBUTE_MAX, "attribute table size");
_Static_assert((int) ETHTOOL_A_EEE_MAX <= (int) GROUP_ATTRIBUTE_MAX, "attribute table size");
_Static_assert(ETHTOOL_A_COALESCE_HEADER == ETHTOOL_A_ANY_HEADER, "header attribute");
_Static_assert(ETHTOOL_A_RINGS_HEADER == ETHTOOL_A_ANY_HEADER, "header attribute");
_Static_assert(ETHTOOL_A_CHANNELS_HEADER == ETHTOOL_A_ANY_HEADER, "header attribute");
_Static_assert(ETHTOOL_A_FEATURES_HEADER == ETHTOOL_A_ANY_HEADER, "header attribute");
_Static_assert(ETHTOOL_A_PAUSE_HEADER == ETHTOOL_A_ANY_HEADER, "header attribute");
_Static_assert(ETHTOOL_A_EEE_HEADER == ETHTOOL_A_ANY_HEADER, "header attribute");

/* Replies here are a few hundred bytes, the feature string set a few KiB and a verbose
 * FEATURES_NTF under 8 KiB; a message that still does not fit is detected (MSG_TRUNC). */
#define RECEIVE_BUFFER_SIZE (32U * 1024U)
/* Room for a burst of notifications (a driver reset can change everything at once)
 * while the event loop is busy elsewhere. */
#define MONITOR_SOCKET_BUFFER (1024 * 1024)
/* The kernel always answers; this only keeps a wedged kernel from wedging the daemon. */
#define REQUEST_TIMEOUT_USEC (5 * USEC_PER_SEC)


/* What the kernel last said of one device's features: its last FEATURES_NTF, a GET
 * reply, or the reply to our own SET. Three compact bitsets of n_bits bits each. */
typedef struct FeatureState {
        int ifindex;
        unsigned n_bits;
        uint32_t *words; /* active, then hw, then nochange: n_words each */
} FeatureState;

struct EthtoolClient {
        struct nl_sock *request;
        struct nl_sock *monitor;
        int family;
        FeatureState *feature_states;
        size_t n_feature_states, allocated_feature_states;
        /* ETH_SS_FEATURES by bit index; fetched once, on first use: the names are compiled
         * into the kernel, so a running kernel never changes them. */
        char **feature_names;
        unsigned n_features;
        /* Separate, so a notification handler may make requests in the middle of a batch.
         * RECEIVE_BUFFER_SIZE each, from malloc() (aligned for nlmsghdr) and not zeroed:
         * only the pages messages fill count as memory in use. */
        uint8_t *request_buffer;
        uint8_t *monitor_buffer;
};

static const struct {
        const char *name;
        EthtoolGroup group;
        uint16_t attribute;
        bool boolean; /* a u8 0/1; everything else is a u32 */
} param_table[_ETHTOOL_PARAM_MAX] = {
        [ETHTOOL_PARAM_ADAPTIVE_RX] = { "adaptive_rx", ETHTOOL_GROUP_COALESCE,
                                        ETHTOOL_A_COALESCE_USE_ADAPTIVE_RX, true },
        [ETHTOOL_PARAM_ADAPTIVE_TX] = { "adaptive_tx", ETHTOOL_GROUP_COALESCE,
                                        ETHTOOL_A_COALESCE_USE_ADAPTIVE_TX, true },
        [ETHTOOL_PARAM_RX_USECS] = { "rx_usecs", ETHTOOL_GROUP_COALESCE, ETHTOOL_A_COALESCE_RX_USECS, false },
        [ETHTOOL_PARAM_TX_USECS] = { "tx_usecs", ETHTOOL_GROUP_COALESCE, ETHTOOL_A_COALESCE_TX_USECS, false },
        [ETHTOOL_PARAM_RX_FRAMES] = { "rx_frames", ETHTOOL_GROUP_COALESCE, ETHTOOL_A_COALESCE_RX_MAX_FRAMES, false },
        [ETHTOOL_PARAM_TX_FRAMES] = { "tx_frames", ETHTOOL_GROUP_COALESCE, ETHTOOL_A_COALESCE_TX_MAX_FRAMES, false },
        [ETHTOOL_PARAM_RX_USECS_IRQ] = { "rx_usecs_irq", ETHTOOL_GROUP_COALESCE,
                                         ETHTOOL_A_COALESCE_RX_USECS_IRQ, false },
        [ETHTOOL_PARAM_TX_USECS_IRQ] = { "tx_usecs_irq", ETHTOOL_GROUP_COALESCE,
                                         ETHTOOL_A_COALESCE_TX_USECS_IRQ, false },
        [ETHTOOL_PARAM_RX_FRAMES_IRQ] = { "rx_frames_irq", ETHTOOL_GROUP_COALESCE,
                                          ETHTOOL_A_COALESCE_RX_MAX_FRAMES_IRQ, false },
        [ETHTOOL_PARAM_TX_FRAMES_IRQ] = { "tx_frames_irq", ETHTOOL_GROUP_COALESCE,
                                          ETHTOOL_A_COALESCE_TX_MAX_FRAMES_IRQ, false },
        [ETHTOOL_PARAM_RX_RING] = { "rx_ring", ETHTOOL_GROUP_RINGS, ETHTOOL_A_RINGS_RX, false },
        [ETHTOOL_PARAM_TX_RING] = { "tx_ring", ETHTOOL_GROUP_RINGS, ETHTOOL_A_RINGS_TX, false },
        [ETHTOOL_PARAM_COMBINED_CHANNELS] = { "combined_channels", ETHTOOL_GROUP_CHANNELS,
                                              ETHTOOL_A_CHANNELS_COMBINED_COUNT, false },
        [ETHTOOL_PARAM_RX_CHANNELS] = { "rx_channels", ETHTOOL_GROUP_CHANNELS, ETHTOOL_A_CHANNELS_RX_COUNT, false },
        [ETHTOOL_PARAM_TX_CHANNELS] = { "tx_channels", ETHTOOL_GROUP_CHANNELS, ETHTOOL_A_CHANNELS_TX_COUNT, false },
        /* Pause frames and EEE are in every kernel with ethtool netlink (5.6, 5.7 for
         * their notifications); nothing newer than 6.1's uapi is used. */
        [ETHTOOL_PARAM_PAUSE_AUTONEG] = { "pause_autoneg", ETHTOOL_GROUP_PAUSE, ETHTOOL_A_PAUSE_AUTONEG, true },
        [ETHTOOL_PARAM_PAUSE_RX] = { "pause_rx", ETHTOOL_GROUP_PAUSE, ETHTOOL_A_PAUSE_RX, true },
        [ETHTOOL_PARAM_PAUSE_TX] = { "pause_tx", ETHTOOL_GROUP_PAUSE, ETHTOOL_A_PAUSE_TX, true },
        [ETHTOOL_PARAM_EEE] = { "eee", ETHTOOL_GROUP_EEE, ETHTOOL_A_EEE_ENABLED, true },
};

static const struct {
        const char *name; /* for messages: "COALESCE" + "_GET" */
        uint8_t get, get_reply, set, notify;
        int max_attribute;
} group_table[_ETHTOOL_GROUP_MAX] = {
        [ETHTOOL_GROUP_COALESCE] = { "COALESCE", ETHTOOL_MSG_COALESCE_GET, ETHTOOL_MSG_COALESCE_GET_REPLY,
                                     ETHTOOL_MSG_COALESCE_SET, ETHTOOL_MSG_COALESCE_NTF, ETHTOOL_A_COALESCE_MAX },
        [ETHTOOL_GROUP_RINGS] = { "RINGS", ETHTOOL_MSG_RINGS_GET, ETHTOOL_MSG_RINGS_GET_REPLY, ETHTOOL_MSG_RINGS_SET,
                                  ETHTOOL_MSG_RINGS_NTF, ETHTOOL_A_RINGS_MAX },
        [ETHTOOL_GROUP_CHANNELS] = { "CHANNELS", ETHTOOL_MSG_CHANNELS_GET, ETHTOOL_MSG_CHANNELS_GET_REPLY,
                                     ETHTOOL_MSG_CHANNELS_SET, ETHTOOL_MSG_CHANNELS_NTF, ETHTOOL_A_CHANNELS_MAX },
        [ETHTOOL_GROUP_FEATURES] = { "FEATURES", ETHTOOL_MSG_FEATURES_GET, ETHTOOL_MSG_FEATURES_GET_REPLY,
                                     ETHTOOL_MSG_FEATURES_SET, ETHTOOL_MSG_FEATURES_NTF, ETHTOOL_A_FEATURES_MAX },
        [ETHTOOL_GROUP_PAUSE] = { "PAUSE", ETHTOOL_MSG_PAUSE_GET, ETHTOOL_MSG_PAUSE_GET_REPLY, ETHTOOL_MSG_PAUSE_SET,
                                  ETHTOOL_MSG_PAUSE_NTF, ETHTOOL_A_PAUSE_MAX },
        [ETHTOOL_GROUP_EEE] = { "EEE", ETHTOOL_MSG_EEE_GET, ETHTOOL_MSG_EEE_GET_REPLY, ETHTOOL_MSG_EEE_SET,
                                ETHTOOL_MSG_EEE_NTF, ETHTOOL_A_EEE_MAX },
};

DEFINE_STRING_TABLE_LOOKUP_IN(ethtool_param, EthtoolParam, param_table, .name);

EthtoolGroup ethtool_param_group(EthtoolParam p) {
        return p >= 0 && p < _ETHTOOL_PARAM_MAX ? param_table[p].group : _ETHTOOL_GROUP_MAX;
}

bool ethtool_param_is_boolean(EthtoolParam p) {
        return p >= 0 && p < _ETHTOOL_PARAM_MAX && param_table[p].boolean;
}

DEFINE_POINTER_CLEANUP(struct nl_msg, nlmsg_free);
DEFINE_POINTER_CLEANUP(struct nl_sock, nl_socket_free);

/* libnl speaks its own NLE_* codes; the rest of lowlatd speaks errno. */
static int errno_from_libnl(int error) {
        switch (error < 0 ? -error : error) {
        case NLE_NOMEM:
                return -ENOMEM;
        case NLE_OBJ_NOTFOUND:
                return -ENOENT;
        case NLE_PERM:
                return -EPERM;
        case NLE_NOACCESS:
                return -EACCES;
        case NLE_AF_NOSUPPORT:
        case NLE_PROTO_MISMATCH:
                return -EPROTONOSUPPORT;
        case NLE_OPNOTSUPP:
                return -EOPNOTSUPP;
        case NLE_AGAIN:
                return -EAGAIN;
        case NLE_INTR:
                return -EINTR;
        case NLE_BAD_SOCK:
                return -EBADF;
        case NLE_MSGSIZE:
                return -EMSGSIZE;
        case NLE_NODEV:
                return -ENODEV;
        case NLE_INVAL:
                return -EINVAL;
        case NLE_BUSY:
                return -EBUSY;
        case NLE_RANGE:
                return -ERANGE;
        default:
                return -EIO;
        }
}

static int setsockopt_int(int fd, int level, int name, int value) {
        return setsockopt(fd, level, name, &value, sizeof(value)) < 0 ? negative_errno() : 0;
}

/* libnl opens its sockets with SOCK_CLOEXEC since 3.2.something; older ones did not. */
static int fd_ensure_cloexec(int fd) {
        int flags = fcntl(fd, F_GETFD);

        if (flags < 0)
                return negative_errno();
        if (flags & FD_CLOEXEC)
                return 0;
        return fcntl(fd, F_SETFD, flags | FD_CLOEXEC) < 0 ? negative_errno() : 0;
}

static int socket_open(struct nl_sock **ret) {
        _cleanup_(nl_socket_freep) struct nl_sock *sk = nl_socket_alloc();
        int r;

        if (!sk)
                return -ENOMEM;
        r = genl_connect(sk);
        if (r < 0)
                return errno_from_libnl(r);
        r = fd_ensure_cloexec(nl_socket_get_fd(sk));
        if (r < 0)
                return r;
        *ret = TAKE_PTR(sk);
        return 0;
}

static int request_socket_open(EthtoolClient *c, int *ret_monitor_group) {
        struct timeval timeout = {
                .tv_sec = REQUEST_TIMEOUT_USEC / USEC_PER_SEC,
                .tv_usec = REQUEST_TIMEOUT_USEC % USEC_PER_SEC,
        };
        int fd, group, r;

        r = socket_open(&c->request);
        if (r < 0)
                return r;
        /* Both resolutions consume their own reply and ACK (libnl waits for the ACK). */
        c->family = genl_ctrl_resolve(c->request, ETHTOOL_GENL_NAME);
        if (c->family < 0)
                return errno_from_libnl(c->family);
        group = genl_ctrl_resolve_grp(c->request, ETHTOOL_GENL_NAME, ETHTOOL_MCGRP_MONITOR_NAME);
        if (group < 0)
                return errno_from_libnl(group);

        fd = nl_socket_get_fd(c->request);
        /* The kernel's reason for a refusal ("cannot modify an unsupported parameter")
         * comes as an extended ACK; without the echoed request the error stays small. */
        r = setsockopt_int(fd, SOL_NETLINK, NETLINK_EXT_ACK, 1);
        if (r < 0)
                return r;
        r = setsockopt_int(fd, SOL_NETLINK, NETLINK_CAP_ACK, 1);
        if (r < 0)
                return r;
        if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout)) < 0)
                return negative_errno();
        *ret_monitor_group = group;
        return 0;
}

static int monitor_socket_open(EthtoolClient *c, int group) {
        int fd, r;

        r = socket_open(&c->monitor);
        if (r < 0)
                return r;
        /* Notifications carry the kernel's sequence numbers, not ours. */
        nl_socket_disable_seq_check(c->monitor);
        r = nl_socket_add_membership(c->monitor, group);
        if (r < 0)
                return errno_from_libnl(r);
        r = nl_socket_set_nonblocking(c->monitor);
        if (r < 0)
                return errno_from_libnl(r);

        fd = nl_socket_get_fd(c->monitor);
        /* SO_RCVBUF is capped by net.core.rmem_max (208 KiB by default); as root the
         * FORCE variant gets the size asked for. */
        if (setsockopt_int(fd, SOL_SOCKET, SO_RCVBUFFORCE, MONITOR_SOCKET_BUFFER) < 0) {
                r = nl_socket_set_buffer_size(c->monitor, MONITOR_SOCKET_BUFFER, 0);
                if (r < 0)
                        return errno_from_libnl(r);
        }
        return 0;
}

int ethtool_client_new(EthtoolClient **ret) {
        _cleanup_(ethtool_client_freep) EthtoolClient *c = calloc(1, sizeof(EthtoolClient));
        int group = -1, r;

        if (!c)
                return -ENOMEM;
        c->request_buffer = malloc(RECEIVE_BUFFER_SIZE);
        c->monitor_buffer = malloc(RECEIVE_BUFFER_SIZE);
        if (!c->request_buffer || !c->monitor_buffer)
                return -ENOMEM;
        r = request_socket_open(c, &group);
        if (r < 0)
                return r;
        r = monitor_socket_open(c, group);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(c);
        return 0;
}

static void feature_names_free(EthtoolClient *c) {
        for (unsigned i = 0; i < c->n_features; i++)
                free(c->feature_names[i]);
        c->feature_names = mfree(c->feature_names);
        c->n_features = 0;
}

static void feature_states_clear(EthtoolClient *c) {
        for (size_t i = 0; i < c->n_feature_states; i++)
                free(c->feature_states[i].words);
        c->feature_states = mfree(c->feature_states);
        c->n_feature_states = c->allocated_feature_states = 0;
}

EthtoolClient *ethtool_client_free(EthtoolClient *c) {
        if (!c)
                return NULL;
        nl_socket_free(c->request);
        nl_socket_free(c->monitor);
        feature_names_free(c);
        feature_states_clear(c);
        free(c->request_buffer);
        free(c->monitor_buffer);
        free(c);
        return NULL;
}

int ethtool_monitor_fd(EthtoolClient *c) {
        return nl_socket_get_fd(c->monitor);
}

/* Reasons. Internally a failure's reason goes to a local "error" (never NULL); the public
 * functions hand it on, so ret_error is set on every failure and only then. */

static int fail_with_reason(int r, char **error, char **ret_error) {
        if (ret_error)
                *ret_error = TAKE_PTR(*error);
        return r;
}

/* For -EOPNOTSUPP the kernel often says nothing (ethtool_ops without the hook), yet the
 * caller records a reason: compose one when the kernel gave none. */
static void explain_unsupported(char **error, const char *format, ...) _printf_(2, 3);
static void explain_unsupported(char **error, const char *format, ...) {
        va_list ap;

        if (*error)
                return;
        va_start(ap, format);
        *error = strdup_vprintf(format, ap);
        va_end(ap);
}

/* Requests. */

/* ack: a request that changes something waits for the kernel's ACK (after its reply, if
 * it has one); a GET is answered by its reply alone, or by an error. */
static int request_new(EthtoolClient *c, uint8_t cmd, int ifindex, uint32_t header_flags, bool ack,
                       struct nl_msg **ret) {
        _cleanup_(nlmsg_freep) struct nl_msg *m = nlmsg_alloc();
        struct nlattr *header;

        if (!m)
                return -ENOMEM;
        if (!genlmsg_put(m, NL_AUTO_PORT, NL_AUTO_SEQ, c->family, 0, NLM_F_REQUEST | (ack ? NLM_F_ACK : 0), cmd,
                         ETHTOOL_GENL_VERSION))
                return -ENOMEM;
        /* The kernel validates ethtool nests strictly: NLA_F_NESTED is required. The
         * header is required even where no device is named (6.x kernels answer
         * NLMSGERR_ATTR_MISS_TYPE), and nla_nest_end() would trim an empty nest away. */
        if (ifindex <= 0) {
                if (nla_put(m, ETHTOOL_A_ANY_HEADER | NLA_F_NESTED, 0, NULL) < 0)
                        return -ENOMEM;
        } else {
                header = nla_nest_start(m, ETHTOOL_A_ANY_HEADER | NLA_F_NESTED);
                if (!header || nla_put_u32(m, ETHTOOL_A_HEADER_DEV_INDEX, (uint32_t) ifindex) < 0 ||
                    (header_flags && nla_put_u32(m, ETHTOOL_A_HEADER_FLAGS, header_flags) < 0))
                        return -ENOMEM;
                nla_nest_end(m, header);
        }
        *ret = TAKE_PTR(m);
        return 0;
}

/* Called for each reply message (its genl attributes) that answers the request. */
typedef int (*ReplyHandler)(struct nlattr *attributes, int length, void *userdata);

/* Sends one request and reads until its ACK or error, or, for a request sent without
 * NLM_F_ACK, its reply: a reply and the ACK are separate datagrams, and stopping at the
 * reply of a request that asked for an ACK would leave the ACK queued for the next one.
 * Anything with another sequence number is a leftover of an earlier request that gave
 * up (timeout) and is skipped. The kernel's error wins over a handler's. */
static int request_run(EthtoolClient *c, struct nl_msg *m, uint8_t reply_cmd, ReplyHandler handler, void *userdata,
                       char **error) {
        int fd = nl_socket_get_fd(c->request), handler_error = 0, r;
        bool ack = nlmsg_hdr(m)->nlmsg_flags & NLM_F_ACK;
        uint32_t seq;

        r = nl_send_auto(c->request, m);
        if (r < 0)
                return errno_from_libnl(r);
        seq = nlmsg_hdr(m)->nlmsg_seq;

        for (;;) {
                struct nlmsghdr *nlh = (struct nlmsghdr *) c->request_buffer;
                ssize_t n = recv(fd, c->request_buffer, RECEIVE_BUFFER_SIZE, MSG_TRUNC);
                int left;

                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return errno == EAGAIN || errno == EWOULDBLOCK ? -ETIMEDOUT : negative_errno();
                }
                if ((size_t) n > RECEIVE_BUFFER_SIZE) {
                        /* The message is gone, but its ACK still follows: keep reading. */
                        handler_error = handler_error ?: -EMSGSIZE;
                        continue;
                }
                for (left = (int) n; nlmsg_ok(nlh, left); nlh = nlmsg_next(nlh, &left)) {
                        if (nlh->nlmsg_seq != seq)
                                continue;
                        if (nlh->nlmsg_type == NLMSG_ERROR) {
                                const struct nlmsgerr *e = nlmsg_data(nlh);

                                if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(struct nlmsgerr)))
                                        return -EBADMSG;
                                /* Passed on as an errno: one outside errno's range is no answer. */
                                if (e->error < -MAX_ERRNO)
                                        return -EBADMSG;
                                if (e->error < 0) {
                                        *error = netlink_extack_message(nlh);
                                        return e->error;
                                }
                                return handler_error;
                        }
                        if (nlh->nlmsg_type == NLMSG_DONE)
                                return handler_error;
                        if (nlh->nlmsg_type != c->family || !genlmsg_valid_hdr(nlh, 0) || !handler)
                                continue;
                        if (((struct genlmsghdr *) nlmsg_data(nlh))->cmd != reply_cmd)
                                continue;
                        r = handler(genlmsg_attrdata(nlmsg_data(nlh), 0), genlmsg_attrlen(nlmsg_data(nlh), 0),
                                    userdata);
                        if (r < 0 && handler_error == 0)
                                handler_error = r;
                        if (!ack)
                                return handler_error;
                }
        }
}

static int attribute_u32(struct nlattr *a, uint32_t *ret) {
        if (nla_len(a) < (int) sizeof(uint32_t))
                return -EBADMSG;
        *ret = nla_get_u32(a);
        return 0;
}

/* Parameters. */

typedef struct ParamReply {
        uint16_t attribute;
        bool boolean;
        int max_attribute;
        bool found;
        uint32_t value;
} ParamReply;

static int param_reply_handler(struct nlattr *attributes, int length, void *userdata) {
        ParamReply *p = userdata;
        struct nlattr *tb[GROUP_ATTRIBUTE_MAX + 1];
        int r;

        if (nla_parse(tb, p->max_attribute, attributes, length, NULL) < 0)
                return -EBADMSG;
        if (!tb[p->attribute])
                return 0;
        if (p->boolean) {
                if (nla_len(tb[p->attribute]) < 1)
                        return -EBADMSG;
                p->value = !!nla_get_u8(tb[p->attribute]);
        } else {
                r = attribute_u32(tb[p->attribute], &p->value);
                if (r < 0)
                        return r;
        }
        p->found = true;
        return 0;
}

static int param_get(EthtoolClient *c, int ifindex, EthtoolParam p, uint32_t *ret, char **error) {
        _cleanup_(nlmsg_freep) struct nl_msg *m = NULL;
        EthtoolGroup g = ethtool_param_group(p);
        ParamReply reply;
        int r;

        if (g == _ETHTOOL_GROUP_MAX || ifindex <= 0)
                return -EINVAL;
        reply = (ParamReply) {
                .attribute = param_table[p].attribute,
                .boolean = param_table[p].boolean,
                .max_attribute = group_table[g].max_attribute,
        };
        r = request_new(c, group_table[g].get, ifindex, 0, false, &m);
        if (r < 0)
                return r;
        r = request_run(c, m, group_table[g].get_reply, param_reply_handler, &reply, error);
        if (r == -EOPNOTSUPP)
                explain_unsupported(error, "the driver does not support %s_GET", group_table[g].name);
        if (r < 0)
                return r;
        /* The kernel leaves out what the driver does not report (see coalesce_put_u32()). */
        if (!reply.found) {
                explain_unsupported(error, "the driver does not report %s", param_table[p].name);
                return -EOPNOTSUPP;
        }
        *ret = reply.value;
        return 0;
}

int ethtool_get_param(EthtoolClient *c, int ifindex, EthtoolParam p, uint32_t *ret, char **ret_error) {
        _cleanup_free_ char *error = NULL;
        int r = param_get(c, ifindex, p, ret, &error);

        return r < 0 ? fail_with_reason(r, &error, ret_error) : 0;
}

static int param_set(EthtoolClient *c, int ifindex, EthtoolParam p, uint32_t value, char **error) {
        _cleanup_(nlmsg_freep) struct nl_msg *m = NULL;
        EthtoolGroup g = ethtool_param_group(p);
        int r;

        if (g == _ETHTOOL_GROUP_MAX || ifindex <= 0 || (param_table[p].boolean && value > 1))
                return -EINVAL;
        r = request_new(c, group_table[g].set, ifindex, 0, true, &m);
        if (r < 0)
                return r;
        r = param_table[p].boolean ? nla_put_u8(m, param_table[p].attribute, (uint8_t) value)
                                   : nla_put_u32(m, param_table[p].attribute, value);
        if (r < 0)
                return -ENOMEM;
        r = request_run(c, m, 0, NULL, NULL, error);
        if (r == -EOPNOTSUPP)
                explain_unsupported(error, "the driver does not support %s_SET", group_table[g].name);
        return r < 0 ? r : 0;
}

int ethtool_set_param(EthtoolClient *c, int ifindex, EthtoolParam p, uint32_t value, char **ret_error) {
        _cleanup_free_ char *error = NULL;
        int r = param_set(c, ifindex, p, value, &error);

        return r < 0 ? fail_with_reason(r, &error, ret_error) : 0;
}

/* Features. */

static int strset_reply_handler(struct nlattr *attributes, int length, void *userdata) {
        EthtoolClient *c = userdata;
        struct nlattr *tb[ETHTOOL_A_STRSET_MAX + 1], *set, *string;
        int left;

        if (nla_parse(tb, ETHTOOL_A_STRSET_MAX, attributes, length, NULL) < 0 || !tb[ETHTOOL_A_STRSET_STRINGSETS])
                return -EBADMSG;
        nla_for_each_nested(set, tb[ETHTOOL_A_STRSET_STRINGSETS], left) {
                struct nlattr *ts[ETHTOOL_A_STRINGSET_MAX + 1];
                uint32_t id, count;
                int left_strings;

                if (nla_type(set) != ETHTOOL_A_STRINGSETS_STRINGSET)
                        continue;
                if (nla_parse_nested(ts, ETHTOOL_A_STRINGSET_MAX, set, NULL) < 0 || !ts[ETHTOOL_A_STRINGSET_ID] ||
                    !ts[ETHTOOL_A_STRINGSET_COUNT] || attribute_u32(ts[ETHTOOL_A_STRINGSET_ID], &id) < 0 ||
                    attribute_u32(ts[ETHTOOL_A_STRINGSET_COUNT], &count) < 0)
                        return -EBADMSG;
                if (id != ETH_SS_FEATURES || c->feature_names)
                        continue;
                /* netdev_features_t is 64 bits today; anything huge is a corrupt reply. */
                if (count == 0 || count > 4096 || !ts[ETHTOOL_A_STRINGSET_STRINGS])
                        return -EBADMSG;
                c->feature_names = calloc(count, sizeof(char *));
                if (!c->feature_names)
                        return -ENOMEM;
                c->n_features = count;
                nla_for_each_nested(string, ts[ETHTOOL_A_STRINGSET_STRINGS], left_strings) {
                        struct nlattr *t[ETHTOOL_A_STRING_MAX + 1];
                        uint32_t index;

                        if (nla_type(string) != ETHTOOL_A_STRINGS_STRING)
                                continue;
                        if (nla_parse_nested(t, ETHTOOL_A_STRING_MAX, string, NULL) < 0 ||
                            !t[ETHTOOL_A_STRING_INDEX] || !t[ETHTOOL_A_STRING_VALUE] ||
                            attribute_u32(t[ETHTOOL_A_STRING_INDEX], &index) < 0 || index >= count)
                                return -EBADMSG;
                        free(c->feature_names[index]);
                        c->feature_names[index] = strndup(nla_data(t[ETHTOOL_A_STRING_VALUE]),
                                                          (size_t) nla_len(t[ETHTOOL_A_STRING_VALUE]));
                        if (!c->feature_names[index])
                                return -ENOMEM;
                }
        }
        return 0;
}

/* Names are resolved here, once per client, and bits then travel as compact bitsets: a
 * name the kernel does not know is -ENOENT before anything is sent, and no reply has to
 * carry every feature's name. */
static int feature_names_load(EthtoolClient *c, char **error) {
        _cleanup_(nlmsg_freep) struct nl_msg *m = NULL;
        struct nlattr *sets, *set;
        int r;

        if (c->feature_names)
                return 0;
        /* No device: ETH_SS_FEATURES is one global set. */
        r = request_new(c, ETHTOOL_MSG_STRSET_GET, 0, 0, false, &m);
        if (r < 0)
                return r;
        sets = nla_nest_start(m, ETHTOOL_A_STRSET_STRINGSETS | NLA_F_NESTED);
        if (!sets)
                return -ENOMEM;
        set = nla_nest_start(m, ETHTOOL_A_STRINGSETS_STRINGSET | NLA_F_NESTED);
        if (!set || nla_put_u32(m, ETHTOOL_A_STRINGSET_ID, ETH_SS_FEATURES) < 0)
                return -ENOMEM;
        nla_nest_end(m, set);
        nla_nest_end(m, sets);

        r = request_run(c, m, ETHTOOL_MSG_STRSET_GET_REPLY, strset_reply_handler, c, error);
        if (r >= 0 && !c->feature_names)
                r = -EBADMSG;
        if (r < 0) {
                feature_names_free(c);
                return r;
        }
        return 0;
}

static int feature_index(EthtoolClient *c, const char *name, unsigned *ret, char **error) {
        int r;

        if (isempty(name))
                return -EINVAL;
        r = feature_names_load(c, error);
        if (r < 0)
                return r;
        for (unsigned i = 0; i < c->n_features; i++)
                if (streq_ptr(c->feature_names[i], name)) {
                        *ret = i;
                        return 0;
                }
        return -ENOENT;
}

static bool word_bit(const struct nlattr *a, unsigned index) {
        uint32_t word;

        memcpy(&word, (const uint8_t *) nla_data(a) + (index / 32) * sizeof(uint32_t), sizeof(word));
        return word & (UINT32_C(1) << (index % 32));
}

/* One bit of a compact bitset (ETHTOOL_FLAG_COMPACT_BITSETS: u32 words in host order),
 * and whether it is in the bitset's mask (always, for a bitset sent without one). */
static int bitset_test(struct nlattr *bitset, unsigned index, bool *ret_value, bool *ret_in_mask) {
        struct nlattr *tb[ETHTOOL_A_BITSET_MAX + 1];
        size_t need = (index / 32 + 1) * sizeof(uint32_t);
        bool has_mask;
        uint32_t size;

        if (nla_parse_nested(tb, ETHTOOL_A_BITSET_MAX, bitset, NULL) < 0 || !tb[ETHTOOL_A_BITSET_SIZE] ||
            attribute_u32(tb[ETHTOOL_A_BITSET_SIZE], &size) < 0)
                return -EBADMSG;
        /* A verbose bitset (names, no VALUE) would mean the kernel ignored our flag. */
        if (!tb[ETHTOOL_A_BITSET_VALUE])
                return -EBADMSG;
        has_mask = !tb[ETHTOOL_A_BITSET_NOMASK] && tb[ETHTOOL_A_BITSET_MASK];
        if (index >= size) {
                *ret_value = false;
                if (ret_in_mask)
                        *ret_in_mask = false;
                return 0;
        }
        if ((size_t) nla_len(tb[ETHTOOL_A_BITSET_VALUE]) < need ||
            (has_mask && (size_t) nla_len(tb[ETHTOOL_A_BITSET_MASK]) < need))
                return -EBADMSG;
        *ret_value = word_bit(tb[ETHTOOL_A_BITSET_VALUE], index);
        if (ret_in_mask)
                *ret_in_mask = has_mask ? word_bit(tb[ETHTOOL_A_BITSET_MASK], index) : true;
        return 0;
}

static FeatureState *feature_state_find(EthtoolClient *c, int ifindex) {
        for (size_t i = 0; i < c->n_feature_states; i++)
                if (c->feature_states[i].ifindex == ifindex)
                        return &c->feature_states[i];
        return NULL;
}

static void feature_state_drop(EthtoolClient *c, int ifindex) {
        FeatureState *f = feature_state_find(c, ifindex);

        if (!f)
                return;
        free(f->words);
        *f = c->feature_states[--c->n_feature_states];
}

/* The words of a compact bitset (ETHTOOL_FLAG_COMPACT_BITSETS: u32 words in host order)
 * into words[0..n_words), zero beyond its size. -EBADMSG for a verbose bitset (names, no
 * VALUE: the kernel ignored our flag) or a short one. */
static int bitset_words(struct nlattr *bitset, unsigned n_bits, uint32_t *words) {
        struct nlattr *tb[ETHTOOL_A_BITSET_MAX + 1];
        size_t n_words = (n_bits + 31) / 32, have;
        uint32_t size;

        if (nla_parse_nested(tb, ETHTOOL_A_BITSET_MAX, bitset, NULL) < 0 || !tb[ETHTOOL_A_BITSET_SIZE] ||
            attribute_u32(tb[ETHTOOL_A_BITSET_SIZE], &size) < 0 || !tb[ETHTOOL_A_BITSET_VALUE])
                return -EBADMSG;
        have = MIN((size_t) (size + 31) / 32, n_words);
        if ((size_t) nla_len(tb[ETHTOOL_A_BITSET_VALUE]) < have * sizeof(uint32_t))
                return -EBADMSG;
        memset(words, 0, n_words * sizeof(uint32_t));
        memcpy(words, nla_data(tb[ETHTOOL_A_BITSET_VALUE]), have * sizeof(uint32_t));
        return 0;
}

static bool words_bit(const uint32_t *words, unsigned index) {
        return words[index / 32] & (UINT32_C(1) << (index % 32));
}

/* A FEATURES_GET reply or FEATURES_NTF (their attributes are the same): the device's
 * whole feature state, kept. */
static int feature_state_store(EthtoolClient *c, int ifindex, struct nlattr *attributes, int length) {
        struct nlattr *tb[ETHTOOL_A_FEATURES_MAX + 1];
        size_t n_words = (c->n_features + 31) / 32;
        _cleanup_free_ uint32_t *words = NULL;
        FeatureState *f;

        if (c->n_features == 0)
                return -ENODATA; /* names not loaded: nobody asked about a feature yet */
        if (nla_parse(tb, ETHTOOL_A_FEATURES_MAX, attributes, length, NULL) < 0 || !tb[ETHTOOL_A_FEATURES_HW] ||
            !tb[ETHTOOL_A_FEATURES_ACTIVE] || !tb[ETHTOOL_A_FEATURES_NOCHANGE])
                return -EBADMSG;
        words = calloc(3 * n_words, sizeof(uint32_t));
        if (!words)
                return -ENOMEM;
        if (bitset_words(tb[ETHTOOL_A_FEATURES_ACTIVE], c->n_features, words) < 0 ||
            bitset_words(tb[ETHTOOL_A_FEATURES_HW], c->n_features, words + n_words) < 0 ||
            bitset_words(tb[ETHTOOL_A_FEATURES_NOCHANGE], c->n_features, words + 2 * n_words) < 0)
                return -EBADMSG;
        f = feature_state_find(c, ifindex);
        if (!f) {
                if (array_grow(&c->feature_states, &c->allocated_feature_states, c->n_feature_states + 1) < 0)
                        return -ENOMEM;
                f = &c->feature_states[c->n_feature_states++];
                *f = (FeatureState) { .ifindex = ifindex };
        }
        free(f->words);
        f->words = TAKE_PTR(words);
        f->n_bits = c->n_features;
        return 0;
}

typedef struct FeaturesGet {
        EthtoolClient *client;
        int ifindex;
        bool found;
} FeaturesGet;

static int features_get_reply_handler(struct nlattr *attributes, int length, void *userdata) {
        FeaturesGet *g = userdata;
        int r = feature_state_store(g->client, g->ifindex, attributes, length);

        if (r < 0)
                return r;
        g->found = true;
        return 0;
}

/* Asks the kernel; the answer is kept as the device's state. */
static int features_get(EthtoolClient *c, int ifindex, char **error) {
        _cleanup_(nlmsg_freep) struct nl_msg *m = NULL;
        FeaturesGet g = { c, ifindex, false };
        int r;

        /* Compact bitsets: four short u32 arrays instead of every feature's name, which
         * keeps the round trip (the floor of a correction) short. */
        r = request_new(c, ETHTOOL_MSG_FEATURES_GET, ifindex, ETHTOOL_FLAG_COMPACT_BITSETS, false, &m);
        if (r < 0)
                return r;
        r = request_run(c, m, ETHTOOL_MSG_FEATURES_GET_REPLY, features_get_reply_handler, &g, error);
        if (r >= 0 && !g.found)
                r = -EBADMSG;
        if (r == -EOPNOTSUPP)
                explain_unsupported(error, "the device has no FEATURES_GET");
        return r < 0 ? r : 0;
}

/* notified: what the kernel last said (a notification, our own SET's reply) will do; a
 * device it said nothing about yet is asked. */
static int feature_get(EthtoolClient *c, int ifindex, const char *name, bool notified, bool *ret_active,
                       bool *ret_changeable, char **error) {
        const FeatureState *f;
        size_t n_words;
        unsigned index;
        int r;

        if (ifindex <= 0)
                return -EINVAL;
        r = feature_index(c, name, &index, error);
        if (r < 0)
                return r;
        f = notified ? feature_state_find(c, ifindex) : NULL;
        if (!f) {
                r = features_get(c, ifindex, error);
                if (r < 0)
                        return r;
                f = feature_state_find(c, ifindex);
                if (!f)
                        return -EBADMSG;
        }
        n_words = (f->n_bits + 31) / 32;
        if (ret_active)
                *ret_active = words_bit(f->words, index);
        /* What ethtool -k prints without "[fixed]". */
        if (ret_changeable)
                *ret_changeable = words_bit(f->words + n_words, index) && !words_bit(f->words + 2 * n_words, index);
        return 0;
}

int ethtool_get_feature(EthtoolClient *c, int ifindex, const char *name, bool *ret_active, bool *ret_changeable,
                        char **ret_error) {
        _cleanup_free_ char *error = NULL;
        int r = feature_get(c, ifindex, name, false, ret_active, ret_changeable, &error);

        return r < 0 ? fail_with_reason(r, &error, ret_error) : 0;
}

int ethtool_get_feature_notified(EthtoolClient *c, int ifindex, const char *name, bool *ret_active,
                                 bool *ret_changeable, char **ret_error) {
        _cleanup_free_ char *error = NULL;
        int r = feature_get(c, ifindex, name, true, ret_active, ret_changeable, &error);

        return r < 0 ? fail_with_reason(r, &error, ret_error) : 0;
}

int ethtool_feature_names(EthtoolClient *c, char *const **ret_names, size_t *ret_n) {
        _cleanup_free_ char *error = NULL;
        int r = feature_names_load(c, &error);

        if (r < 0)
                return r;
        *ret_names = c->feature_names;
        *ret_n = c->n_features;
        return 0;
}

void ethtool_forget(EthtoolClient *c, int ifindex) {
        feature_state_drop(c, ifindex);
}

typedef struct FeaturesSet {
        EthtoolClient *client;
        int ifindex;
        unsigned index;
        /* The bit is in the "wanted" difference: the kernel did not end up where we
         * asked. */
        bool not_applied;
} FeaturesSet;

/* The kernel's account of a SET: "wanted" holds the bits that differ from the request,
 * "active" the bits that changed, with their new values. The latter brings the kept
 * state up to date, so the read-back after a correction needs no GET. */
static int features_set_reply_handler(struct nlattr *attributes, int length, void *userdata) {
        FeaturesSet *set = userdata;
        struct nlattr *tb[ETHTOOL_A_FEATURES_MAX + 1], *bits[ETHTOOL_A_BITSET_MAX + 1];
        FeatureState *f = feature_state_find(set->client, set->ifindex);
        bool value;
        int r;

        if (nla_parse(tb, ETHTOOL_A_FEATURES_MAX, attributes, length, NULL) < 0)
                return -EBADMSG;
        if (tb[ETHTOOL_A_FEATURES_WANTED]) {
                r = bitset_test(tb[ETHTOOL_A_FEATURES_WANTED], set->index, &value, &set->not_applied);
                if (r < 0)
                        return r;
        }
        if (!f)
                return 0;
        /* What we keep is only as good as this reply: without a readable "active"
         * difference it is dropped, and the next look asks the kernel. */
        if (!tb[ETHTOOL_A_FEATURES_ACTIVE] ||
            nla_parse_nested(bits, ETHTOOL_A_BITSET_MAX, tb[ETHTOOL_A_FEATURES_ACTIVE], NULL) < 0 ||
            !bits[ETHTOOL_A_BITSET_VALUE] || !bits[ETHTOOL_A_BITSET_MASK] ||
            (size_t) nla_len(bits[ETHTOOL_A_BITSET_VALUE]) < ((f->n_bits + 31) / 32) * sizeof(uint32_t) ||
            (size_t) nla_len(bits[ETHTOOL_A_BITSET_MASK]) < ((f->n_bits + 31) / 32) * sizeof(uint32_t)) {
                feature_state_drop(set->client, set->ifindex);
                return 0;
        }
        for (size_t i = 0; i < (f->n_bits + 31) / 32; i++) {
                uint32_t v, m;
                memcpy(&v, (const uint8_t *) nla_data(bits[ETHTOOL_A_BITSET_VALUE]) + i * sizeof(uint32_t), sizeof(v));
                memcpy(&m, (const uint8_t *) nla_data(bits[ETHTOOL_A_BITSET_MASK]) + i * sizeof(uint32_t), sizeof(m));
                f->words[i] = (f->words[i] & ~m) | (v & m);
        }
        return 0;
}

static int feature_set(EthtoolClient *c, int ifindex, const char *name, bool on, char **error) {
        _cleanup_(nlmsg_freep) struct nl_msg *m = NULL;
        FeaturesSet set = { c, ifindex, 0, false };
        struct nlattr *wanted, *value, *mask;
        bool active, changeable;
        size_t words;
        uint32_t bit;
        int r;

        if (ifindex <= 0)
                return -EINVAL;
        r = feature_index(c, name, &set.index, error);
        if (r < 0)
                return r;

        /* A compact bitset with a mask: only our bit is touched. No OMIT_REPLY: the reply
         * is how the kernel says it did not apply a wanted bit (one outside the device's
         * hw_features is dropped silently, with success). */
        r = request_new(c, ETHTOOL_MSG_FEATURES_SET, ifindex, ETHTOOL_FLAG_COMPACT_BITSETS, true, &m);
        if (r < 0)
                return r;
        words = (c->n_features + 31) / 32;
        bit = UINT32_C(1) << (set.index % 32);
        wanted = nla_nest_start(m, ETHTOOL_A_FEATURES_WANTED | NLA_F_NESTED);
        if (!wanted || nla_put_u32(m, ETHTOOL_A_BITSET_SIZE, c->n_features) < 0)
                return -ENOMEM;
        value = nla_reserve(m, ETHTOOL_A_BITSET_VALUE, (int) (words * sizeof(uint32_t)));
        if (!value)
                return -ENOMEM;
        memset(nla_data(value), 0, words * sizeof(uint32_t));
        if (on)
                memcpy((uint8_t *) nla_data(value) + (set.index / 32) * sizeof(uint32_t), &bit, sizeof(bit));
        mask = nla_reserve(m, ETHTOOL_A_BITSET_MASK, (int) (words * sizeof(uint32_t)));
        if (!mask)
                return -ENOMEM;
        memset(nla_data(mask), 0, words * sizeof(uint32_t));
        memcpy((uint8_t *) nla_data(mask) + (set.index / 32) * sizeof(uint32_t), &bit, sizeof(bit));
        nla_nest_end(m, wanted);

        r = request_run(c, m, ETHTOOL_MSG_FEATURES_SET_REPLY, features_set_reply_handler, &set, error);
        if (r == -EOPNOTSUPP)
                explain_unsupported(error, "the device has no FEATURES_SET");
        if (r < 0) {
                /* What the device has now is unknown: ask next time. */
                feature_state_drop(c, ifindex);
                return r;
        }
        if (!set.not_applied)
                return 0;

        /* Say why, which takes one more look: fixed, or refused by the driver. */
        r = feature_get(c, ifindex, name, false, &active, &changeable, error);
        if (r < 0)
                return r;
        if (!changeable)
                explain_unsupported(error, "%s is fixed %s on this device", name, active ? "on" : "off");
        else
                explain_unsupported(error, "the driver kept %s %s (it may depend on another feature)", name,
                                    active ? "on" : "off");
        return -EOPNOTSUPP;
}

int ethtool_set_feature(EthtoolClient *c, int ifindex, const char *name, bool on, char **ret_error) {
        _cleanup_free_ char *error = NULL;
        int r = feature_set(c, ifindex, name, on, &error);

        return r < 0 ? fail_with_reason(r, &error, ret_error) : 0;
}

/* Notifications. */

static int notification_ifindex(const struct nlmsghdr *nlh, int *ret) {
        struct nlattr *attributes = genlmsg_attrdata(nlmsg_data(nlh), 0);
        struct nlattr *header, *tb[ETHTOOL_A_HEADER_MAX + 1];
        uint32_t ifindex;

        header = nla_find(attributes, genlmsg_attrlen(nlmsg_data(nlh), 0), ETHTOOL_A_ANY_HEADER);
        if (!header || nla_parse_nested(tb, ETHTOOL_A_HEADER_MAX, header, NULL) < 0 ||
            !tb[ETHTOOL_A_HEADER_DEV_INDEX] || attribute_u32(tb[ETHTOOL_A_HEADER_DEV_INDEX], &ifindex) < 0 ||
            ifindex == 0 || ifindex > INT32_MAX)
                return -EBADMSG;
        *ret = (int) ifindex;
        return 0;
}

static bool group_of_notification(uint8_t cmd, EthtoolGroup *ret) {
        for (EthtoolGroup g = 0; g < _ETHTOOL_GROUP_MAX; g++)
                if (group_table[g].notify == cmd) {
                        *ret = g;
                        return true;
                }
        return false;
}

typedef struct Dispatch {
        EthtoolClient *client;
        EthtoolNotifyHandler cb;
        void *userdata;
} Dispatch;

static void on_monitor_message(const struct nlmsghdr *nlh, void *userdata) {
        Dispatch *d = userdata;
        EthtoolClient *c = d->client;
        EthtoolGroup g;
        int ifindex;

        if (nlh->nlmsg_type != c->family || !genlmsg_valid_hdr((struct nlmsghdr *) nlh, 0))
                return;
        if (!group_of_notification(((struct genlmsghdr *) nlmsg_data(nlh))->cmd, &g) ||
            notification_ifindex(nlh, &ifindex) < 0)
                return;
        /* A FEATURES_NTF is the device's whole feature state, sent for every change
         * (ethtool's and the kernel's own, NETDEV_FEAT_CHANGE): kept, so that the look it
         * triggers needs no GET. */
        if (g == ETHTOOL_GROUP_FEATURES &&
            feature_state_store(c, ifindex, genlmsg_attrdata(nlmsg_data(nlh), 0), genlmsg_attrlen(nlmsg_data(nlh), 0)) <
                    0)
                feature_state_drop(c, ifindex);
        if (d->cb)
                d->cb(d->userdata, ifindex, g);
}

int ethtool_monitor_dispatch(EthtoolClient *c, EthtoolNotifyHandler cb, void *userdata) {
        Dispatch d = { c, cb, userdata };
        int r = netlink_drain(nl_socket_get_fd(c->monitor), c->monitor_buffer, RECEIVE_BUFFER_SIZE, 0,
                              on_monitor_message, &d);

        /* Lost notifications: nothing kept can be trusted any more. */
        if (r == -ENOBUFS)
                feature_states_clear(c);
        return r;
}
