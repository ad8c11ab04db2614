/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* [nic "PATTERN"]: what the interfaces whose name matches get: ethtool parameters and
 * features, a qdisc, their IRQs' CPUs, packet steering and the transmit queue length.
 * Several sections may match one interface; a later one overrides an earlier one key by
 * key (lib/config/nic-posture.c). */
#include <string.h>

#include "basic/array.h"
#include "config/keys.h"
#include "config/posture.h"
#include "host/ethtool.h"
#include "basic/util.h"

void *config_open_nic(ConfigParse *p, const char *argument) {
        Config *c = p->config;
        NicSection *a;
        char *glob;

        /* IFNAMSIZ is 16; a pattern may be longer only by its wildcards, keep it sane. */
        if (!config_glob_is_valid(argument, 64)) {
                config_error(p, "'%s' is not a valid interface name pattern", argument);
                return NULL;
        }
        glob = strdup(argument);
        if (!glob || array_grow(&c->nics, &c->allocated_nics, c->n_nics + 1) < 0) {
                free(glob);
                p->oom = -ENOMEM;
                return NULL;
        }
        a = c->nics;
        a[c->n_nics] = (NicSection) { .glob = glob, .source = config_here(p) };
        return &a[c->n_nics++];
}

/* TCKINDSIZ is 16 with the NUL. */
bool config_qdisc_name_is_valid(const char *name) {
        return config_kernel_name_is_valid(name, 15);
}

static int nic_add_feature(ConfigParse *p, NicSection *n, const char *name, bool on) {
        NicFeature *f;

        for (size_t i = 0; i < n->n_features; i++)
                if (streq(n->features[i].name, name)) {
                        n->features[i].on = on;
                        n->features[i].source = config_here(p);
                        return 0;
                }
        if (array_grow(&n->features, &n->allocated_features, n->n_features + 1) < 0)
                return p->oom = -ENOMEM;
        f = n->features;
        f[n->n_features] = (NicFeature) { .name = strdup(name), .on = on, .source = config_here(p) };
        if (!f[n->n_features].name)
                return p->oom = -ENOMEM;
        n->n_features++;
        return 0;
}

static const ConfigBool on_off = { .what = "on or off" };

/* gro, lro, gso, tso: the row's data is the pattern over the kernel's feature names. */
int config_parse_nic_feature(ConfigParse *p, const ConfigKey *key, const char *value, void *object) {
        ConfigKey row = { key->section, key->name, config_parse_bool, .data = &on_off };
        bool on;

        if (config_parse_bool(p, &row, value, &on) < 0)
                return -EINVAL;
        return nic_add_feature(p, object, key->data, on);
}

/* An ethtool parameter by its name in lib/host/ethtool.c's table (rx-usecs, rx, pause_rx, ...):
 * a flag, or a count; only coalescing and channel counts may be 0 (a ring cannot be). */
static int nic_assign_param(ConfigParse *p, NicSection *n, EthtoolParam param, const char *key, const char *value) {
        static const ConfigRange count = { 0, UINT32_MAX, .what = "a non-negative number" };
        ConfigKey row = { "nic", key, config_parse_bool, .data = &on_off };
        uint32_t v;
        bool on;

        if (ethtool_param_is_boolean(param)) {
                if (config_parse_bool(p, &row, value, &on) < 0)
                        return 0;
                v = on;
        } else {
                row.data = &count;
                if (config_parse_uint32(p, &row, value, &v) < 0)
                        return 0;
                if (v == 0 && ethtool_param_group(param) != ETHTOOL_GROUP_COALESCE && param != ETHTOOL_PARAM_RX_CHANNELS &&
                    param != ETHTOOL_PARAM_TX_CHANNELS && param != ETHTOOL_PARAM_COMBINED_CHANNELS) {
                        config_error(p, "%s: a ring cannot have 0 entries", key);
                        return 0;
                }
        }
        n->params[param] = (NicParamValue) { .set = true, .value = v, .source = config_here(p) };
        return 0;
}

int config_assign_nic(ConfigParse *p, const char *key, const char *value, void *object) {
        EthtoolParam param = ethtool_param_from_string(key);
        const char *name;
        bool on;

        if (param >= 0) {
                config_note_key_set(p, key);
                return nic_assign_param(p, object, param, key, value);
        }
        if (strncmp(key, "feature.", strlen("feature.")) != 0)
                return -ENOENT;
        name = key + strlen("feature.");
        /* ETH_GSTRING_LEN is 32 with the NUL. */
        if (!config_kernel_name_is_valid(name, 31)) {
                config_error(p, "'%s' is not a feature name (as ethtool -k prints it, e.g. rx-gro)", name);
                return 0;
        }
        config_note_key_set(p, key);
        ConfigKey row = { "nic", key, config_parse_bool, .data = &on_off };
        if (config_parse_bool(p, &row, value, &on) < 0)
                return 0;
        return nic_add_feature(p, object, name, on);
}

/* Each section's rps_cpus= and xps_cpus= as CPUs; its irq_cpus= must be online. */
int config_resolve_nic(Posture *p, const Config *c, const HostCpus *cpus, ErrorList *errors) {
        if (c->n_nics > 0) {
                p->nic_rps_cpus = calloc(c->n_nics, sizeof(CPUSet));
                p->nic_xps_cpus = calloc(c->n_nics, sizeof(CPUSet));
                if (!p->nic_rps_cpus || !p->nic_xps_cpus)
                        return -ENOMEM;
                p->n_nic_cpus = c->n_nics;
        }
        for (size_t i = 0; i < c->n_nics; i++) {
                const NicSection *n = &c->nics[i];
                _cleanup_cpuset_ CPUSet unused = CPUSET_EMPTY;

                if (config_cpus_resolve(p, cpus, &n->rps_cpus, CPUS_CHECK_ONLINE, "rps_cpus", NULL, errors,
                                        &p->nic_rps_cpus[i]) < 0 ||
                    config_cpus_resolve(p, cpus, &n->xps_cpus, CPUS_CHECK_ONLINE, "xps_cpus", NULL, errors,
                                        &p->nic_xps_cpus[i]) < 0 ||
                    config_cpus_resolve(p, cpus, &n->irq_cpus, CPUS_CHECK_ONLINE, "irq_cpus", NULL, errors, &unused) < 0)
                        return -ENOMEM;
        }
        return 0;
}
