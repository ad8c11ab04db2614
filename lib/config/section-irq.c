/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* [irq]: where IRQs go by default, the pins by name, and irqbalance. */
#include <string.h>

#include "basic/array.h"
#include "config/keys.h"
#include "config/posture.h"
#include "basic/util.h"

/* pin = GLOB CPULIST: each line is one more pin; the last that matches an IRQ wins. */
int config_parse_pin(ConfigParse *p, const ConfigKey *key, const char *value, void *object) {
        _cleanup_cpuset_ CPUSet cpus = CPUSET_EMPTY;
        _cleanup_free_ char *copy = strdup(value);
        Config *c = object;
        char *glob, *list, *name;

        (void) key;
        if (!copy)
                return p->oom = -ENOMEM;
        glob = copy;
        list = glob + strcspn(glob, " \t");
        if (*list == '\0') {
                config_error(p, "pin: expected 'GLOB CPULIST' (e.g. 'pin = eth0-TxRx-* 2-3'), got '%s'", value);
                return -EINVAL;
        }
        *list++ = '\0';
        list = strstrip(list);
        if (!config_glob_is_valid(glob, 128)) {
                config_error(p, "pin: '%s' is not a valid IRQ name pattern", glob);
                return -EINVAL;
        }
        if (config_parse_cpu_list(p, "pin", list, &cpus) < 0)
                return -EINVAL;
        name = strdup(glob);
        if (!name || array_grow(&c->pins, &c->allocated_pins, c->n_pins + 1) < 0) {
                free(name);
                return p->oom = -ENOMEM;
        }
        c->pins[c->n_pins++] = (IrqPin) { .glob = name, .cpus = cpus, .source = config_here(p) };
        cpus = CPUSET_EMPTY;
        return 0;
}

int config_resolve_irq(Posture *p, const Config *c, const HostCpus *cpus, ErrorList *errors) {
        const ConfigSource *at = &c->default_affinity.source;

        if (config_cpus_resolve(p, cpus, &c->default_affinity, CPUS_CHECK_ONLINE, "default_affinity", NULL, errors,
                                &p->default_affinity) < 0)
                return -ENOMEM;
        if (c->default_affinity.kind == CPUS_LIST && cpuset_intersects(&c->default_affinity.cpus, &p->isolated))
                error_list_add(errors, "%s:%u: default_affinity includes isolated CPUs; new IRQs would land on them",
                               at->file, at->line);
        for (size_t i = 0; i < c->n_pins; i++) {
                ConfigCpus pin = { CPUS_LIST, c->pins[i].cpus, c->pins[i].source };
                _cleanup_cpuset_ CPUSet unused = CPUSET_EMPTY;
                if (config_cpus_resolve(p, cpus, &pin, CPUS_CHECK_ONLINE, "pin", NULL, errors, &unused) < 0)
                        return -ENOMEM;
        }
        return 0;
}
