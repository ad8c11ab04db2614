/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* [pm]: /dev/cpu_dma_latency, and the per-CPU power settings with the CPUs each applies to. */
#include <ctype.h>
#include <inttypes.h>
#include <string.h>

#include "config/keys.h"
#include "config/posture.h"
#include "basic/util.h"

static const char *const pm_boost_table[_PM_BOOST_MAX] = {
        [PM_BOOST_UNSET] = "keep",
        [PM_BOOST_OFF] = "off",
        [PM_BOOST_ON] = "on",
};
DEFINE_STRING_TABLE_LOOKUP(pm_boost, PmBoost);

bool config_governor_name_is_valid(const char *name) {
        size_t n = strlen(name);
        if (n == 0 || n > 15) /* CPUFREQ_NAME_LEN is 16 with the NUL */
                return false;
        for (const char *p = name; *p; p++)
                if (!islower((unsigned char) *p) && !isdigit((unsigned char) *p) && *p != '_' && *p != '-')
                        return false;
        return true;
}

/* Names the kernel's EPP lists use: "balance_performance", "power", "default". */
bool config_epp_name_is_valid(const char *name) {
        size_t n = strlen(name);
        if (n == 0 || n > PM_EPP_NAME_MAX)
                return false;
        for (const char *p = name; *p; p++)
                if (!islower((unsigned char) *p) && !isdigit((unsigned char) *p) && *p != '_')
                        return false;
        return true;
}

/* resume_latency = MICROSECONDS | n/a | off, kept as the kernel's file takes it. */
int config_parse_resume_latency(ConfigParse *p, const ConfigKey *key, const char *value, void *object) {
        Config *c = object;
        char *copy;
        uint64_t v;
        int r;

        (void) key;
        if (streq(value, "off")) {
                c->resume_latency = mfree(c->resume_latency);
                return 0;
        }
        if (!streq(value, "n/a")) {
                r = parse_uint64(value, &v);
                if (r < 0 && r != -ERANGE) {
                        config_error(p, "resume_latency: '%s' is not a number of microseconds, 'n/a' or 'off'", value);
                        return -EINVAL;
                }
                /* The kernel reads a written 0 as "no restriction", the opposite of what a
                 * latency of 0 suggests: refuse it rather than let it mean that. */
                if (r == 0 && v == 0) {
                        config_error(p, "resume_latency: 0 means 'no restriction' to the kernel; write 'n/a' to keep "
                                        "the CPUs out of every idle state with an exit latency, or 'off' to leave the "
                                        "limit alone");
                        return -EINVAL;
                }
                if (r == -ERANGE || v > PM_RESUME_LATENCY_MAX_USEC) {
                        config_error(p, "resume_latency: '%s' is out of range (1 to %d)", value,
                                     PM_RESUME_LATENCY_MAX_USEC);
                        return -EINVAL;
                }
        }
        copy = strdup(value);
        if (!copy)
                return p->oom = -ENOMEM;
        free(c->resume_latency);
        c->resume_latency = copy;
        return 0;
}

/* min_freq = KHZ | max | off. */
int config_parse_min_freq(ConfigParse *p, const ConfigKey *key, const char *value, void *object) {
        Config *c = object;
        uint64_t v;
        int r;

        if (streq(value, "off")) {
                config_key_mark(key, object, false);
                return 0;
        }
        if (streq(value, "max")) {
                c->min_freq_max = true;
                config_key_mark(key, object, true);
                return 0;
        }
        r = parse_uint64(value, &v);
        if (r < 0 && r != -ERANGE) {
                config_error(p, "min_freq: '%s' is not a frequency in kHz, 'max' or 'off'", value);
                return -EINVAL;
        }
        if (r == -ERANGE || v == 0 || v > PM_FREQ_MAX_KHZ) {
                config_error(p, "min_freq: '%s' is out of range (1 to %" PRIu32 " kHz)", value, PM_FREQ_MAX_KHZ);
                return -EINVAL;
        }
        c->min_freq_max = false;
        c->min_freq_khz = v;
        config_key_mark(key, object, true);
        return 0;
}

/* The CPUs of each setting that is on. A list may name CPUs that are offline now (they
 * get the setting when they come online), not CPUs the host cannot have; an error about
 * the default names the setting's own line. */
int config_resolve_pm(Posture *p, const Config *c, const HostCpus *cpus, ErrorList *errors) {
        if (c->resume_latency &&
            config_cpus_resolve(p, cpus, &c->resume_latency_cpus, CPUS_CHECK_POSSIBLE, "resume_latency_cpus",
                                &c->resume_latency_source, errors, &p->resume_latency_cpus) < 0)
                return -ENOMEM;
        if (c->min_freq_enabled &&
            config_cpus_resolve(p, cpus, &c->min_freq_cpus, CPUS_CHECK_POSSIBLE, "min_freq_cpus", &c->min_freq_source,
                                errors, &p->min_freq_cpus) < 0)
                return -ENOMEM;
        if (c->energy_performance_preference &&
            config_cpus_resolve(p, cpus, &c->energy_performance_preference_cpus, CPUS_CHECK_POSSIBLE,
                                "energy_performance_preference_cpus", &c->energy_performance_preference_source, errors,
                                &p->energy_performance_preference_cpus) < 0)
                return -ENOMEM;
        return 0;
}
