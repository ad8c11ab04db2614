/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A Config's defaults, its vocabularies and its end. It is read by load.c (the files),
 * reader.c (their lines) and keys.c (every key). */
#include <string.h>

#include "config/config.h"
#include "basic/util.h"

static const char *const daemon_mode_table[_DAEMON_MODE_MAX] = {
        [DAEMON_MODE_ENFORCE] = "enforce",
        [DAEMON_MODE_OBSERVE] = "observe",
};
DEFINE_STRING_TABLE_LOOKUP(daemon_mode, DaemonMode);

static const char *const app_kind_table[_APP_KIND_MAX] = {
        [APP_SERVICE] = "service",
        [APP_PROCESS] = "process",
};
DEFINE_STRING_TABLE_LOOKUP(app_kind, AppKind);

static const char *const udev_source_table[_UDEV_SOURCE_MAX] = {
        [UDEV_SOURCE_UDEV] = "udev",
        [UDEV_SOURCE_KERNEL] = "kernel",
};
DEFINE_STRING_TABLE_LOOKUP(udev_source, UdevSource);

static const char *const irqbalance_mode_table[_IRQBALANCE_MODE_MAX] = {
        [IRQBALANCE_REPORT] = "report",
        [IRQBALANCE_BAN] = "ban",
};
DEFINE_STRING_TABLE_LOOKUP(irqbalance_mode, IrqbalanceMode);

/* The digest's start: FNV-1a, 64 bits (reader.c goes on over every byte read). */
#define FNV1A_OFFSET UINT64_C(0xcbf29ce484222325)

Config *config_new(void) {
        Config *c = calloc(1, sizeof(Config));
        if (!c)
                return NULL;
        c->mode = DAEMON_MODE_ENFORCE;
        c->scan_interval_usec = SCAN_INTERVAL_DEFAULT_USEC;
        c->isolated.kind = CPUS_AUTO;
        c->default_affinity.kind = CPUS_HOUSEKEEPING;
        c->workqueues.kind = CPUS_NONE;
        c->noise_cpus.kind = CPUS_ISOLATED;
        c->resume_latency_cpus.kind = CPUS_ISOLATED;
        c->min_freq_cpus.kind = CPUS_ISOLATED;
        c->energy_performance_preference_cpus.kind = CPUS_ISOLATED;
        c->noise_tick_rate_max = NOISE_TICK_RATE_MAX_DEFAULT;
        c->noise_alert_interval_usec = NOISE_ALERT_INTERVAL_DEFAULT_USEC;
        c->noise_gate = true;
        c->digest = FNV1A_OFFSET;
        return c;
}

Config *config_free(Config *c) {
        if (!c)
                return NULL;
        for (size_t i = 0; i < c->n_files; i++)
                free(c->files[i]);
        free(c->files);
        error_list_done(&c->warnings);
        for (size_t i = 0; i < c->n_trace; i++) {
                free(c->trace[i].argument);
                free(c->trace[i].key);
                free(c->trace[i].value);
        }
        free(c->trace);
        for (size_t i = 0; i < c->n_profiles; i++)
                free(c->profiles[i]);
        free(c->profiles);
        config_cpus_done(&c->isolated);
        config_cpus_done(&c->housekeeping);
        config_cpus_done(&c->default_affinity);
        for (size_t i = 0; i < c->n_slices; i++)
                free(c->slices[i]);
        free(c->slices);
        free(c->partition);
        config_cpus_done(&c->workqueues);
        config_cpus_done(&c->noise_cpus);
        config_cpus_done(&c->rps_default_mask);
        for (size_t i = 0; i < c->n_pins; i++) {
                free(c->pins[i].glob);
                cpuset_done(&c->pins[i].cpus);
        }
        free(c->pins);
        free(c->governor);
        free(c->resume_latency);
        config_cpus_done(&c->resume_latency_cpus);
        config_cpus_done(&c->min_freq_cpus);
        free(c->energy_performance_preference);
        config_cpus_done(&c->energy_performance_preference_cpus);
        for (size_t i = 0; i < c->n_sysctls; i++) {
                free(c->sysctls[i].key);
                free(c->sysctls[i].value);
        }
        free(c->sysctls);
        for (size_t i = 0; i < c->n_sysfs; i++) {
                free(c->sysfs[i].path);
                free(c->sysfs[i].value);
        }
        free(c->sysfs);
        for (size_t i = 0; i < c->n_nics; i++) {
                NicSection *n = &c->nics[i];
                free(n->glob);
                for (size_t j = 0; j < n->n_features; j++)
                        free(n->features[j].name);
                free(n->features);
                free(n->qdisc);
                config_cpus_done(&n->irq_cpus);
                config_cpus_done(&n->rps_cpus);
                config_cpus_done(&n->xps_cpus);
        }
        free(c->nics);
        for (size_t i = 0; i < c->n_apps; i++)
                free(c->apps[i].name);
        free(c->apps);
        for (size_t i = 0; i < c->n_kthread_sections; i++) {
                free(c->kthread_sections[i].glob);
                config_cpus_done(&c->kthread_sections[i].cpus);
        }
        free(c->kthread_sections);
        free(c);
        return NULL;
}

