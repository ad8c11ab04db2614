/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ethtool generic netlink (ETHTOOL_GENL_NAME "ethtool") through libnl-genl-3: reading and
 * writing coalescing, rings, channels, features, pause frames and EEE of one interface, and the "monitor"
 * multicast group that tells us when anyone (ethtool(8), a driver, another daemon)
 * changed them. No ioctl fallback. */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "basic/macro.h"
#include "basic/string-table.h"

typedef struct EthtoolClient EthtoolClient;

typedef enum EthtoolParam {
        /* ETHTOOL_MSG_COALESCE_* */
        ETHTOOL_PARAM_ADAPTIVE_RX,   /* ETHTOOL_A_COALESCE_USE_ADAPTIVE_RX (u8 0/1) */
        ETHTOOL_PARAM_ADAPTIVE_TX,   /* ETHTOOL_A_COALESCE_USE_ADAPTIVE_TX */
        ETHTOOL_PARAM_RX_USECS,      /* ETHTOOL_A_COALESCE_RX_USECS (u32) */
        ETHTOOL_PARAM_TX_USECS,
        ETHTOOL_PARAM_RX_FRAMES,     /* ETHTOOL_A_COALESCE_RX_MAX_FRAMES */
        ETHTOOL_PARAM_TX_FRAMES,
        ETHTOOL_PARAM_RX_USECS_IRQ,
        ETHTOOL_PARAM_TX_USECS_IRQ,
        ETHTOOL_PARAM_RX_FRAMES_IRQ, /* ETHTOOL_A_COALESCE_RX_MAX_FRAMES_IRQ */
        ETHTOOL_PARAM_TX_FRAMES_IRQ,
        /* ETHTOOL_MSG_RINGS_* */
        ETHTOOL_PARAM_RX_RING,       /* ETHTOOL_A_RINGS_RX */
        ETHTOOL_PARAM_TX_RING,
        /* ETHTOOL_MSG_CHANNELS_* */
        ETHTOOL_PARAM_COMBINED_CHANNELS,
        ETHTOOL_PARAM_RX_CHANNELS,
        ETHTOOL_PARAM_TX_CHANNELS,
        /* ETHTOOL_MSG_PAUSE_* (u8 0/1 each) */
        ETHTOOL_PARAM_PAUSE_AUTONEG, /* ETHTOOL_A_PAUSE_AUTONEG */
        ETHTOOL_PARAM_PAUSE_RX,      /* ETHTOOL_A_PAUSE_RX */
        ETHTOOL_PARAM_PAUSE_TX,      /* ETHTOOL_A_PAUSE_TX */
        /* ETHTOOL_MSG_EEE_* */
        ETHTOOL_PARAM_EEE,           /* ETHTOOL_A_EEE_ENABLED (u8 0/1) */
        _ETHTOOL_PARAM_MAX,
        _ETHTOOL_PARAM_INVALID = -EINVAL,
} EthtoolParam;

/* Which message family a parameter (or a notification) belongs to. */
typedef enum EthtoolGroup {
        ETHTOOL_GROUP_COALESCE,
        ETHTOOL_GROUP_RINGS,
        ETHTOOL_GROUP_CHANNELS,
        ETHTOOL_GROUP_FEATURES,
        ETHTOOL_GROUP_PAUSE,
        ETHTOOL_GROUP_EEE,
        _ETHTOOL_GROUP_MAX,
} EthtoolGroup;

/* The config key: "adaptive_rx", "rx_usecs", "rx_frames_irq", "rx_ring", "combined_channels",
 * "pause_rx", "eee"... */
DECLARE_STRING_TABLE_LOOKUP(ethtool_param, EthtoolParam);
EthtoolGroup ethtool_param_group(EthtoolParam p);
bool ethtool_param_is_boolean(EthtoolParam p);

/* Opens the request socket and, separately, the monitor socket (sequence checks off,
 * joined to the "monitor" group). -EPROTONOSUPPORT / -ENOENT when the kernel has no
 * ethtool netlink family. */
int ethtool_client_new(EthtoolClient **ret);
EthtoolClient *ethtool_client_free(EthtoolClient *c);
DEFINE_POINTER_CLEANUP(EthtoolClient, ethtool_client_free);

/* ret_error below (may be NULL) is set when a call fails and left alone when it succeeds:
 * to the kernel's extended-ACK message when it sent one. A -EOPNOTSUPP always comes with
 * a reason: when the kernel gave none (a driver without the ethtool_ops hook fails
 * silently), a short note of what was not supported is written instead. Any other error
 * without a kernel message sets it to NULL, so "-EINVAL and a message" still means the
 * kernel explained. */

/* Reads one parameter. -EOPNOTSUPP when the driver does not report it (the GET fails
 * with EOPNOTSUPP, or the attribute is absent from the reply); -ENODEV when the
 * interface is gone. ret_error (may be NULL): the kernel's extack message, if any. */
int ethtool_get_param(EthtoolClient *c, int ifindex, EthtoolParam p, uint32_t *ret, char **ret_error);
/* Writes one parameter (a SET with that one attribute; the ACK is consumed before
 * returning, so no ACK is ever left queued for the next request). -EOPNOTSUPP, or the
 * kernel's -errno (e.g. -EINVAL) with its extack message in *ret_error. */
int ethtool_set_param(EthtoolClient *c, int ifindex, EthtoolParam p, uint32_t value, char **ret_error);

/* Features by their kernel names (the ETH_SS_FEATURES string set: "rx-gro",
 * "tx-tcp-segmentation", ...). -ENOENT for a name this kernel does not know. Changeable:
 * in the device's hw_features and not one the kernel never lets change. Setting a
 * feature the kernel then does not apply (fixed on this device, or refused by the
 * driver) is -EOPNOTSUPP with a reason. */
int ethtool_get_feature(EthtoolClient *c, int ifindex, const char *name, bool *ret_active, bool *ret_changeable,
                        char **ret_error);
/* The same from what the kernel last said of the device without being asked: its last
 * FEATURES_NTF (sent for every change of its features), or the reply to our own SET.
 * Asks (FEATURES_GET) when it has said nothing yet, or notifications were lost. */
int ethtool_get_feature_notified(EthtoolClient *c, int ifindex, const char *name, bool *ret_active,
                                 bool *ret_changeable, char **ret_error);
/* The running kernel's feature names (ETH_SS_FEATURES), loaded once; *ret_names stays
 * the client's. */
int ethtool_feature_names(EthtoolClient *c, char *const **ret_names, size_t *ret_n);
/* The interface is gone: what was kept about it goes too (its ifindex may come back). */
void ethtool_forget(EthtoolClient *c, int ifindex);
int ethtool_set_feature(EthtoolClient *c, int ifindex, const char *name, bool on, char **ret_error);

/* The monitor socket, for the event loop (non-blocking). */
int ethtool_monitor_fd(EthtoolClient *c);
/* Reads every pending notification and calls cb for each (COALESCE_NTF, RINGS_NTF,
 * CHANNELS_NTF, FEATURES_NTF, PAUSE_NTF, EEE_NTF, with the ifindex from the header attribute). Returns
 * -ENOBUFS when the socket overran (notifications were lost: resync everything),
 * 0 otherwise. cb may be NULL (only drain); it may make requests on the same client (the
 * request socket has its own buffer) but must not free it. Our own SETs notify too. */
typedef void (*EthtoolNotifyHandler)(void *userdata, int ifindex, EthtoolGroup group);
int ethtool_monitor_dispatch(EthtoolClient *c, EthtoolNotifyHandler cb, void *userdata);
