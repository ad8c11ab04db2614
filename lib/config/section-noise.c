/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* [noise]: the CPUs whose interrupts, softirqs and context switches are counted
 * (lib/noise/noise.c), the alerts about them, and the perf gate (lib/noise/gate.h). */
#include "config/keys.h"
#include "config/posture.h"
#include "basic/util.h"

/* gate = perf | off (a false boolean reads as off, as the key once was one). */
int config_parse_noise_gate(ConfigParse *p, const ConfigKey *key, const char *value, void *object) {
        bool *gate = config_key_value(key, object), b;

        if (streq(value, "perf"))
                *gate = true;
        else if (streq(value, "off") || (parse_boolean(value, &b) >= 0 && !b))
                *gate = false;
        else {
                config_error(p, "gate: '%s' is neither 'perf' nor 'off'", value);
                return -EINVAL;
        }
        return 0;
}

/* Noise is counted on whatever the name stands for, none included (no isolated CPU is no
 * error here); a listed CPU may be offline now and be counted once it is up. */
int config_resolve_noise(Posture *p, const Config *c, const HostCpus *cpus, ErrorList *errors) {
        return config_cpus_resolve(p, cpus, &c->noise_cpus, CPUS_ISOLATED_MAY_BE_EMPTY, "cpus", NULL, errors,
                                   &p->noise_cpus);
}
