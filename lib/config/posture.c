/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The desired posture: the config resolved against the host's CPUs, each section by its
 * own resolve (keys.c names them), and what the settings ask of it. */
#include <fnmatch.h>
#include <string.h>

#include "config/keys.h"
#include "config/posture.h"
#include "basic/util.h"

int posture_build(Config **config, const HostCpus *cpus, Posture **ret, ErrorList *errors) {
        _cleanup_(posture_freep) Posture *p = NULL;
        const Config *c = *config;
        size_t errors_before = errors->n;
        int last_possible;

        p = calloc(1, sizeof(Posture));
        if (!p)
                return -ENOMEM;
        p->mode = c->mode;
        if (cpuset_copy(&p->online, &cpus->online) < 0)
                return -ENOMEM;
        last_possible = MAX(cpuset_last(&cpus->possible), cpuset_last(&cpus->online));
        p->mask_bits = (unsigned) last_possible + 1;

        /* Each section resolves its own keys, in the table's order: [cpus] first, as the
         * others name its sets. */
        for (size_t i = 0; i < config_n_sections; i++)
                if (config_sections[i].resolve && config_sections[i].resolve(p, c, cpus, errors) < 0)
                        return -ENOMEM;

        if (errors->n > errors_before)
                return -EINVAL;
        p->config = TAKE_PTR(*config);
        *ret = TAKE_PTR(p);
        return 0;
}

Posture *posture_free(Posture *p) {
        if (!p)
                return NULL;
        config_free(p->config);
        cpuset_done(&p->online);
        cpuset_done(&p->isolated);
        cpuset_done(&p->housekeeping);
        cpuset_done(&p->default_affinity);
        for (size_t i = 0; i < p->n_kthread_cpus; i++)
                cpuset_done(&p->kthread_cpus[i]);
        free(p->kthread_cpus);
        cpuset_done(&p->workqueues);
        cpuset_done(&p->noise_cpus);
        cpuset_done(&p->resume_latency_cpus);
        cpuset_done(&p->min_freq_cpus);
        cpuset_done(&p->energy_performance_preference_cpus);
        cpuset_done(&p->rps_default_mask);
        for (size_t i = 0; i < p->n_nic_cpus; i++) {
                cpuset_done(&p->nic_rps_cpus[i]);
                cpuset_done(&p->nic_xps_cpus[i]);
        }
        free(p->nic_rps_cpus);
        free(p->nic_xps_cpus);
        free(p);
        return NULL;
}

int posture_cpus_off_isolated(const Posture *p, const CPUSet *allowed, CPUSet *ret) {
        if (cpuset_copy(ret, allowed) < 0)
                return -ENOMEM;
        cpuset_subtract(ret, &p->isolated);
        cpuset_and(ret, &p->online);
        if (cpuset_is_empty(ret) && cpuset_copy(ret, &p->housekeeping) < 0)
                return -ENOMEM;
        return 0;
}

bool posture_manages_kthreads(const Posture *p) {
        return (p->config->kthreads_housekeeping && !cpuset_is_empty(&p->isolated)) ||
               p->config->n_kthread_sections > 0;
}

bool posture_kthread_target(const Posture *p, const char *comm, KthreadTarget *ret) {
        const Config *c = p->config;
        KthreadTarget t = { .policy = -1 };

        for (size_t i = 0; i < c->n_kthread_sections; i++) {
                const KthreadSection *k = &c->kthread_sections[i];

                if (fnmatch(k->glob, comm, 0) != 0)
                        continue;
                if (k->cpus.kind != CPUS_UNSET)
                        t.cpus = &p->kthread_cpus[i];
                if (k->policy >= 0) {
                        t.policy = k->policy;
                        t.priority = k->priority;
                }
        }
        t.off_isolated = !t.cpus && c->kthreads_housekeeping && !cpuset_is_empty(&p->isolated) &&
                         strncmp(comm, "irq/", 4) != 0;
        *ret = t;
        return t.cpus || t.off_isolated || t.policy >= 0;
}

const IrqPin *posture_irq_pin(const Posture *p, const char *irq_name) {
        return posture_irq_pin_before(p, irq_name, p->config->n_pins);
}

const IrqPin *posture_irq_pin_before(const Posture *p, const char *irq_name, size_t before) {
        const Config *c = p->config;

        if (!irq_name)
                return NULL;
        for (size_t i = MIN(before, c->n_pins); i > 0; i--) {
                const IrqPin *pin = &c->pins[i - 1];
                /* irq_name is the action list "a, b"; match each and the whole. */
                if (fnmatch(pin->glob, irq_name, 0) == 0)
                        return pin;
                const char *s = irq_name;
                while (*s) {
                        size_t n = strcspn(s, ",");
                        char one[256];
                        if (n < sizeof(one)) {
                                memcpy(one, s, n);
                                one[n] = '\0';
                                if (fnmatch(pin->glob, strstrip(one), 0) == 0)
                                        return pin;
                        }
                        s += n;
                        while (*s == ',' || *s == ' ')
                                s++;
                }
        }
        return NULL;
}
