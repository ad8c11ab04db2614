/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the [nic "GLOB"] sections ask of one interface: every matching section in order,
 * a later one overriding an earlier one key by key. Pure: names in, posture out. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "config/config.h"
#include "host/ethtool.h"
#include "config/posture.h"

typedef struct NicPosture {
        bool param_set[_ETHTOOL_PARAM_MAX];
        uint32_t param[_ETHTOOL_PARAM_MAX];
        const NicFeature **features; /* point into the config; one per feature name */
        size_t n_features;
        const char *qdisc;       /* NULL: leave the root qdisc alone */
        const CPUSet *irq_cpus;  /* NULL: the NIC's IRQs follow the [irq] rules */
        /* Each queue's steering (lib/setting/rps.c), resolved by the posture; NULL: left
         * alone. An empty set is steering off. */
        const CPUSet *rps_cpus;
        const CPUSet *xps_cpus;
        bool rps_flow_cnt_set;
        uint32_t rps_flow_cnt;
        bool txqueuelen_set; /* IFLA_TXQLEN (lib/setting/nic.c, nic_txqueuelen) */
        uint32_t txqueuelen;
} NicPosture;

/* Returns 1 when at least one section matched (ret filled), 0 when none did. The steering
 * masks are taken from p when given (they point into it); with NULL they stay unset. */
int nic_posture_resolve(const Config *c, const Posture *p, const char *ifname, NicPosture *ret);
void nic_posture_done(NicPosture *p);
