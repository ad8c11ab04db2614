/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* [kthread "GLOB"]: kernel threads whose name matches get these CPUs and this policy
 * (lib/setting/kthreads.c). Thread names hold '/' (and patterns a '*' after it), so the
 * quotes delimit the glob. Several sections may match one thread; for the CPUs, and for
 * the policy with its priority, the last section that sets them wins. */
#include <sched.h>
#include <string.h>

#include "basic/array.h"
#include "config/keys.h"
#include "config/posture.h"
#include "basic/util.h"
#include "host/task.h"

void *config_open_kthread(ConfigParse *p, const char *argument) {
        Config *c = p->config;
        KthreadSection *a;
        char *glob;

        /* A thread's name is at most 63 characters (a workqueue worker's, with its queue);
         * a pattern may be longer only by its wildcards, keep it sane. */
        if (!config_glob_is_valid(argument, 64)) {
                config_error(p, "'%s' is not a valid kernel thread name pattern", argument);
                return NULL;
        }
        glob = strdup(argument);
        if (!glob || array_grow(&c->kthread_sections, &c->allocated_kthread_sections, c->n_kthread_sections + 1) < 0) {
                free(glob);
                p->oom = -ENOMEM;
                return NULL;
        }
        a = c->kthread_sections;
        a[c->n_kthread_sections] = (KthreadSection) { .glob = glob, .source = config_here(p), .policy = -1 };
        return &a[c->n_kthread_sections++];
}

/* A section's policy and priority are one value: a real-time policy needs its priority
 * beside it, and no other policy takes one. A key written with a bad value was reported
 * already, and is not reported again as missing. */
static void validate_kthread_section(const KthreadSection *k, ErrorList *errors) {
        bool policy_given = k->policy_source.line > 0, priority_given = k->priority_source.line > 0;

        if (k->priority > 0 && k->policy < 0 && !policy_given)
                error_list_add(errors, "%s:%u: priority needs policy = fifo or rr in the same [kthread \"%s\"] section",
                               k->priority_source.file, k->priority_source.line, k->glob);
        else if (k->priority > 0 && k->policy == SCHED_OTHER)
                error_list_add(errors, "%s:%u: priority: policy = other takes no priority (it is for fifo and rr)",
                               k->priority_source.file, k->priority_source.line);
        else if ((k->policy == SCHED_FIFO || k->policy == SCHED_RR) && !priority_given)
                error_list_add(errors, "%s:%u: policy = %s needs priority = 1..99 in the same section",
                               k->policy_source.file, k->policy_source.line, sched_policy_to_string(k->policy));
}

void config_validate_kthread(const Config *c, ErrorList *errors) {
        for (size_t i = 0; i < c->n_kthread_sections; i++)
                validate_kthread_section(&c->kthread_sections[i], errors);
}

int config_resolve_kthread(Posture *p, const Config *c, const HostCpus *cpus, ErrorList *errors) {
        if (c->n_kthread_sections > 0) {
                p->kthread_cpus = calloc(c->n_kthread_sections, sizeof(CPUSet));
                if (!p->kthread_cpus)
                        return -ENOMEM;
                p->n_kthread_cpus = c->n_kthread_sections;
        }
        for (size_t i = 0; i < c->n_kthread_sections; i++)
                if (config_cpus_resolve(p, cpus, &c->kthread_sections[i].cpus, CPUS_CHECK_ONLINE, "cpus", NULL, errors,
                                        &p->kthread_cpus[i]) < 0)
                        return -ENOMEM;
        return 0;
}
