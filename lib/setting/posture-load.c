/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* posture_load(): config_load(), the host's CPUs, posture_build(), and the [sysfs] paths
 * against the host and the other kinds (posture-load.h). */
#include <string.h>

#include "setting/posture-load.h"
#include "setting/sysfs.h"
#include "basic/util.h"

/* [pm] governor against what this host's CPUs offer: a warning, as the same value may be
 * right on the host the file is also for. Where no CPU has cpufreq, that is said. */
static void warn_governor(Config *c, const Host *h, const CPUSet *online) {
        _cleanup_free_ char *offered = NULL;
        unsigned with_cpufreq = 0;
        int missing = -1;

        if (!c->governor)
                return;
        CPUSET_FOREACH(cpu, online) {
                _cleanup_free_ char *list = NULL;

                if (host_read_filef(h, &list, "sys/devices/system/cpu/cpu%d/cpufreq/scaling_available_governors",
                                    cpu) < 0)
                        continue;
                with_cpufreq++;
                if (!word_list_contains(list, c->governor) && missing < 0) {
                        missing = cpu;
                        offered = normalize_whitespace(list);
                }
        }
        if (with_cpufreq == 0)
                config_warn(c, &c->governor_source,
                            "governor = %s cannot be checked here: no CPU of this host has cpufreq "
                            "(scaling_available_governors); here it will be unsupported",
                            c->governor);
        else if (missing >= 0)
                config_warn(c, &c->governor_source, "governor '%s' is not offered by CPU %d of this host (available: %s)",
                            c->governor, missing, offered ?: "?");
}

int posture_load(const char *config_path, const Host *h, Posture **ret, ErrorList *errors) {
        _cleanup_config_ Config *config = NULL;
        _cleanup_(posture_freep) Posture *p = NULL;
        HostCpus cpus = {};
        size_t errors_before;
        int r;

        r = config_load(config_path, &config, errors);
        if (r < 0)
                return r;
        r = host_read_cpus(h, &cpus);
        if (r < 0) {
                error_list_add(errors, "cannot read the CPUs under %s: %s", h->root_path, strerror(-r));
                return -ENODEV;
        }
        /* What the [sysfs] paths lead to on this host (a link out of /sys, a file another
         * setting keeps) is reported beside what posture_build() finds. */
        errors_before = errors->n;
        sysfs_config_check(config, h, errors);
        r = posture_build(&config, &cpus, &p, errors);
        host_cpus_done(&cpus);
        if (r < 0)
                return r;
        if (errors->n > errors_before)
                return -EINVAL;
        config_warn_pins_isolated(p->config, &p->isolated);
        warn_governor(p->config, h, &p->online);
        *ret = TAKE_PTR(p);
        return 0;
}
