/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The desired posture: config resolved against the host's CPUs. */
#include <fnmatch.h>
#include <string.h>

#include "posture.h"
#include "sysfs.h"
#include "util.h"

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
        *ret = TAKE_PTR(p);
        return 0;
}

static void check_cpus_exist(const CPUSet *set, const CPUSet *online, const char *what,
                             const ConfigSource *at, ErrorList *errors) {
        _cleanup_cpuset_ CPUSet missing = CPUSET_EMPTY;
        _cleanup_free_ char *missing_list = NULL, *online_list = NULL;

        if (cpuset_copy(&missing, set) < 0)
                return (void) error_list_add(errors, "out of memory");
        cpuset_subtract(&missing, online);
        if (cpuset_is_empty(&missing))
                return;
        missing_list = cpuset_format_list(&missing);
        online_list = cpuset_format_list(online);
        error_list_add(errors, "%s:%u: %s: CPU %s does not exist or is offline (online CPUs: %s)",
                       at->file ?: "<default>", at->line, what, missing_list ?: "?", online_list ?: "?");
}

/* A CPU set value of the config as CPUs: empty for none (the thing is left alone). A name
 * that stands for no CPU, or a list with a CPU that is not online, is an error at the
 * value's line. */
static int resolve_cpu_spec(const Posture *p, const CpuSpec *spec, const char *what, ErrorList *errors, CPUSet *ret) {
        const CPUSet *cpus;

        switch (spec->kind) {
        case CPU_SPEC_HOUSEKEEPING:
                cpus = &p->housekeeping;
                break;
        case CPU_SPEC_ISOLATED:
                cpus = &p->isolated;
                if (cpuset_is_empty(cpus))
                        error_list_add(errors, "%s:%u: %s = isolated, but no CPU is isolated", spec->source.file ?: "<default>",
                                       spec->source.line, what);
                break;
        case CPU_SPEC_LIST:
                cpus = &spec->cpus;
                check_cpus_exist(cpus, &p->online, what, &spec->source, errors);
                break;
        default:
                cpuset_clear(ret);
                return 0;
        }
        return cpuset_copy(ret, cpus);
}

/* A [pm] *_cpus value as CPUs, for a setting that is on (set at key). A list may name CPUs
 * that are offline now (they get the setting when they come online), not CPUs the host
 * cannot have. An error about the default names the setting's own line. */
static int resolve_pm_cpus(const Posture *p, const HostCpus *cpus, const PmCpus *spec, const ConfigSource *key,
                           const char *what, ErrorList *errors, CPUSet *ret) {
        const ConfigSource *at = spec->source.file ? &spec->source : key;
        const char *file = at->file ?: "<default>";
        const CPUSet *set;

        switch (spec->kind) {
        case PM_CPUS_ISOLATED:
                set = &p->isolated;
                if (cpuset_is_empty(set))
                        error_list_add(errors, "%s:%u: %s = isolated%s, but no CPU is isolated", file, at->line, what,
                                       spec->source.file ? "" : " (the default)");
                break;
        case PM_CPUS_HOUSEKEEPING:
                set = &p->housekeeping;
                break;
        case PM_CPUS_ALL:
                set = &p->online;
                break;
        case PM_CPUS_LIST: {
                _cleanup_cpuset_ CPUSet missing = CPUSET_EMPTY;
                _cleanup_free_ char *list = NULL, *possible = NULL;

                set = &spec->cpus;
                if (cpuset_copy(&missing, set) < 0)
                        return -ENOMEM;
                cpuset_subtract(&missing, &cpus->possible);
                cpuset_subtract(&missing, &cpus->online);
                if (!cpuset_is_empty(&missing)) {
                        list = cpuset_format_list(&missing);
                        possible = cpuset_format_list(&cpus->possible);
                        error_list_add(errors, "%s:%u: %s: CPU %s does not exist (possible CPUs: %s)", file,
                                       spec->source.line, what, list ?: "?", possible ?: "?");
                }
                break;
        }
        default:
                cpuset_clear(ret);
                return 0;
        }
        return cpuset_copy(ret, set);
}

static int resolve_pm(Posture *p, const Config *c, const HostCpus *cpus, ErrorList *errors) {
        int r = 0;

        if (c->resume_latency)
                r = resolve_pm_cpus(p, cpus, &c->resume_latency_cpus, &c->resume_latency_source,
                                    "resume_latency_cpus", errors, &p->resume_latency_cpus);
        if (r >= 0 && c->min_freq_enabled)
                r = resolve_pm_cpus(p, cpus, &c->min_freq_cpus, &c->min_freq_source, "min_freq_cpus", errors,
                                    &p->min_freq_cpus);
        if (r >= 0 && c->energy_performance_preference)
                r = resolve_pm_cpus(p, cpus, &c->energy_performance_preference_cpus,
                                    &c->energy_performance_preference_source, "energy_performance_preference_cpus", errors,
                                    &p->energy_performance_preference_cpus);
        return r;
}

int posture_build(Config **config, const HostCpus *cpus, Posture **ret, ErrorList *errors) {
        _cleanup_(posture_freep) Posture *p = NULL;
        Config *c = *config;
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

        if (c->isolated_auto) {
                const CPUSet *src = cpuset_is_empty(&cpus->isolated) ? &cpus->nohz_full : &cpus->isolated;
                if (cpuset_copy(&p->isolated, src) < 0)
                        return -ENOMEM;
        } else {
                check_cpus_exist(&c->isolated, &cpus->online, "isolated", &c->isolated_source, errors);
                if (cpuset_copy(&p->isolated, &c->isolated) < 0)
                        return -ENOMEM;
        }

        if (c->housekeeping_explicit) {
                check_cpus_exist(&c->housekeeping, &cpus->online, "housekeeping", &c->housekeeping_source, errors);
                if (cpuset_copy(&p->housekeeping, &c->housekeeping) < 0)
                        return -ENOMEM;
                if (c->isolated_auto && cpuset_intersects(&p->housekeeping, &p->isolated))
                        error_list_add(errors, "%s:%u: housekeeping overlaps the CPUs the kernel isolated",
                                       c->housekeeping_source.file, c->housekeeping_source.line);
        } else {
                if (cpuset_copy(&p->housekeeping, &cpus->online) < 0)
                        return -ENOMEM;
                cpuset_subtract(&p->housekeeping, &p->isolated);
                if (cpuset_is_empty(&p->housekeeping))
                        error_list_add(errors, "%s:%u: isolated covers every online CPU: no housekeeping CPU is left",
                                       c->isolated_source.file ?: "<kernel>", c->isolated_source.line);
        }

        if (c->default_affinity_is_housekeeping) {
                if (cpuset_copy(&p->default_affinity, &p->housekeeping) < 0)
                        return -ENOMEM;
        } else {
                check_cpus_exist(&c->default_affinity, &cpus->online, "default_affinity",
                                 &c->default_affinity_source, errors);
                if (cpuset_intersects(&c->default_affinity, &p->isolated))
                        error_list_add(errors, "%s:%u: default_affinity includes isolated CPUs; new IRQs would land on them",
                                       c->default_affinity_source.file, c->default_affinity_source.line);
                if (cpuset_copy(&p->default_affinity, &c->default_affinity) < 0)
                        return -ENOMEM;
        }

        if (resolve_cpu_spec(p, &c->workqueues, "workqueues", errors, &p->workqueues) < 0)
                return -ENOMEM;
        if (resolve_pm(p, c, cpus, errors) < 0)
                return -ENOMEM;
        /* Noise is counted on whatever the name stands for, none included (no isolated CPU
         * is no error here); a listed CPU may be offline now and be counted once it is up. */
        if (c->noise_cpus.kind == CPU_SPEC_LIST) {
                if (cpuset_copy(&p->noise_cpus, &c->noise_cpus.cpus) < 0)
                        return -ENOMEM;
        } else if (c->noise_cpus.kind == CPU_SPEC_ISOLATED || c->noise_cpus.kind == CPU_SPEC_HOUSEKEEPING) {
                if (cpuset_copy(&p->noise_cpus,
                                c->noise_cpus.kind == CPU_SPEC_ISOLATED ? &p->isolated : &p->housekeeping) < 0)
                        return -ENOMEM;
        }
        if (c->rps_default_mask_set &&
            resolve_cpu_spec(p, &c->rps_default_mask, "rps_default_mask", errors, &p->rps_default_mask) < 0)
                return -ENOMEM;
        if (c->n_nics > 0) {
                p->nic_rps_cpus = calloc(c->n_nics, sizeof(CPUSet));
                p->nic_xps_cpus = calloc(c->n_nics, sizeof(CPUSet));
                if (!p->nic_rps_cpus || !p->nic_xps_cpus)
                        return -ENOMEM;
                p->n_nic_cpus = c->n_nics;
        }
        for (size_t i = 0; i < c->n_nics; i++) {
                const NicSection *n = &c->nics[i];
                if ((n->rps_cpus_set && resolve_cpu_spec(p, &n->rps_cpus, "rps_cpus", errors, &p->nic_rps_cpus[i]) < 0) ||
                    (n->xps_cpus_set && resolve_cpu_spec(p, &n->xps_cpus, "xps_cpus", errors, &p->nic_xps_cpus[i]) < 0))
                        return -ENOMEM;
        }

        for (size_t i = 0; i < c->n_pins; i++)
                check_cpus_exist(&c->pins[i].cpus, &cpus->online, "pin", &c->pins[i].source, errors);
        for (size_t i = 0; i < c->n_nics; i++)
                if (c->nics[i].irq_cpus_set)
                        check_cpus_exist(&c->nics[i].irq_cpus, &cpus->online, "irq_cpus", &c->nics[i].irq_cpus_source,
                                         errors);

        if (c->n_kthread_sections > 0) {
                p->kthread_cpus = calloc(c->n_kthread_sections, sizeof(CPUSet));
                if (!p->kthread_cpus)
                        return -ENOMEM;
                p->n_kthread_cpus = c->n_kthread_sections;
        }
        for (size_t i = 0; i < c->n_kthread_sections; i++) {
                const KthreadSection *k = &c->kthread_sections[i];
                const CPUSet *src = k->cpus_kind == KTHREAD_CPUS_HOUSEKEEPING ? &p->housekeeping
                                    : k->cpus_kind == KTHREAD_CPUS_ISOLATED   ? &p->isolated
                                                                               : &k->cpus;

                if (k->cpus_kind == KTHREAD_CPUS_UNSET)
                        continue;
                if (k->cpus_kind == KTHREAD_CPUS_LIST)
                        check_cpus_exist(&k->cpus, &cpus->online, "cpus", &k->cpus_source, errors);
                else if (k->cpus_kind == KTHREAD_CPUS_ISOLATED && cpuset_is_empty(&p->isolated))
                        error_list_add(errors, "%s:%u: cpus = isolated, but no CPU is isolated", k->cpus_source.file,
                                       k->cpus_source.line);
                if (cpuset_copy(&p->kthread_cpus[i], src) < 0)
                        return -ENOMEM;
        }

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
                if (k->cpus_kind != KTHREAD_CPUS_UNSET)
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
        const Config *c = p->config;

        if (!irq_name)
                return NULL;
        for (size_t i = c->n_pins; i > 0; i--) {
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
