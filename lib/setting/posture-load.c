/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* posture_load(): config_load(), the host's CPUs, posture_build(), and the [sysfs] paths
 * against the host and the other kinds (posture-load.h). */
#include <string.h>

#include "setting/posture-load.h"
#include "setting/sysfs.h"
#include "basic/util.h"

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
        *ret = TAKE_PTR(p);
        return 0;
}
