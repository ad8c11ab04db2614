/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Resolving [nic "GLOB"] sections for one interface. */
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "basic/array.h"
#include "config/nic-posture.h"
#include "basic/util.h"

_Static_assert(NIC_PARAM_MAX == _ETHTOOL_PARAM_MAX, "config.h's NIC_PARAM_MAX follows lib/host/ethtool.h");

void nic_posture_done(NicPosture *p) {
        free(p->features);
        *p = (NicPosture) {};
}

int nic_posture_resolve(const Config *c, const Posture *posture, const char *ifname, NicPosture *ret) {
        NicPosture p = {};
        size_t allocated_features = 0;
        bool matched = false;

        for (size_t i = 0; i < c->n_nics; i++) {
                const NicSection *n = &c->nics[i];

                if (fnmatch(n->glob, ifname, 0) != 0)
                        continue;
                matched = true;
                for (size_t k = 0; k < _ETHTOOL_PARAM_MAX; k++)
                        if (n->params[k].set) {
                                p.param_set[k] = true;
                                p.param[k] = n->params[k].value;
                        }
                for (size_t f = 0; f < n->n_features; f++) {
                        size_t j;
                        for (j = 0; j < p.n_features; j++)
                                if (streq(p.features[j]->name, n->features[f].name))
                                        break;
                        if (j == p.n_features) {
                                if (array_grow(&p.features, &allocated_features, p.n_features + 1) < 0) {
                                        nic_posture_done(&p);
                                        return -ENOMEM;
                                }
                                p.n_features++;
                        }
                        p.features[j] = &n->features[f];
                }
                if (n->qdisc)
                        p.qdisc = n->qdisc;
                if (n->irq_cpus.kind == CPUS_LIST)
                        p.irq_cpus = &n->irq_cpus.cpus;
                if (posture && n->rps_cpus.kind != CPUS_UNSET && i < posture->n_nic_cpus)
                        p.rps_cpus = &posture->nic_rps_cpus[i];
                if (posture && n->xps_cpus.kind != CPUS_UNSET && i < posture->n_nic_cpus)
                        p.xps_cpus = &posture->nic_xps_cpus[i];
                if (n->rps_flow_cnt_set) {
                        p.rps_flow_cnt_set = true;
                        p.rps_flow_cnt = n->rps_flow_cnt;
                }
                if (n->txqueuelen_set) {
                        p.txqueuelen_set = true;
                        p.txqueuelen = n->txqueuelen;
                }
        }
        if (!matched)
                return 0;
        *ret = p;
        return 1;
}
