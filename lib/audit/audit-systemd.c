/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What PID 1 itself should be told (section 4, scheduling): its own CPU affinity, which
 * every service it starts inherits, and the units left out of [cpus] slices once the
 * cpuset controller is on for the whole tree. */
#include <string.h>

#include "audit/audit-internal.h"
#include "host/task.h"
#include "basic/util.h"

/* The drop-in lowlatd recommends, by name, so a later audit can tell it apart. */
#define PID1_AFFINITY_DROPIN "/etc/systemd/system.conf.d/50-lowlatd-cpu-affinity.conf"

void audit_check_pid1_affinity(Audit *a) {
        const Posture *p = a->posture;
        _cleanup_free_ char *status = NULL, *comm = NULL, *allowed = NULL, *allowed_words = NULL, *housekeeping = NULL,
                            *isolated = NULL, *isolated_words = NULL;
        _cleanup_cpuset_ CPUSet cpus = CPUSET_EMPTY;

        if (cpuset_is_empty(&p->isolated) || audit_read_file(a, &status, "proc/1/status") < 0 ||
            audit_check_errno(a, task_status_cpus_allowed(status, &cpus, &allowed)) < 0 ||
            !cpuset_intersects(&cpus, &p->isolated))
                return;
        if (audit_read_value(a, &comm, "proc/1/comm") < 0 || isempty(comm)) {
                free(comm);
                comm = audit_check_alloc(a, strdup("init"));
        }
        housekeeping = audit_cpus_list(a, &p->housekeeping);
        isolated = audit_cpus_list(a, &p->isolated);
        isolated_words = audit_cpus_phrase(a, &p->isolated);
        allowed_words = audit_cpus_phrase_of_list(a, allowed);
        if (!comm || !housekeeping || !isolated || !isolated_words || !allowed_words)
                return;
        if (host_systemd_is_init(a->host))
                finding_add(a, SEVERITY_WARNING, "sched.pid1-affinity", "pid 1 (systemd)",
                            "PID 1 is allowed on %s, which include%s isolated %s, and every service it "
                            "starts without a CPUAffinity= of its own inherits that. Fix: create %s with the two "
                            "lines \"[Manager]\" and \"CPUAffinity=%s\", then run systemctl daemon-reload (PID 1 "
                            "applies it then and at every boot); the latency-critical services then need "
                            "CPUAffinity=%s in their own units.%s",
                            allowed_words, cpuset_count(&cpus) == 1 ? "s" : "", isolated_words, PID1_AFFINITY_DROPIN,
                            housekeeping, isolated,
                            a->config->n_slices > 0
                                    ? ""
                                    : " [cpus] slices = system.slice user.slice init.scope confines the running "
                                      "units at once.");
        else
                finding_add(a, SEVERITY_WARNING, "sched.pid1-affinity", "pid 1",
                            "PID 1 (%s) is allowed on %s, which include%s isolated %s, and the tasks it "
                            "starts inherit that. Boot with isolcpus=domain,%s (init then starts on the "
                            "housekeeping CPUs) or start it under taskset -c %s.",
                            comm, allowed_words, cpuset_count(&cpus) == 1 ? "s" : "", isolated_words, isolated,
                            housekeeping);
}

/* The first AllowedCPUs= turns the cpuset controller on for the whole tree; a top-level
 * slice that exists and is not confined then runs on every CPU. The config insists on
 * system.slice, user.slice and init.scope; machine.slice exists only on hosts with VMs or
 * containers, and may be the latency-critical work itself, so it is only reported. */
void audit_check_unconfined_slices(Audit *a) {
        const Config *c = a->config;
        _cleanup_free_ char *isolated = NULL;

        if (c->n_slices == 0 || !audit_path_exists(a, "sys/fs/cgroup/machine.slice"))
                return;
        for (size_t i = 0; i < c->n_slices; i++)
                if (streq(c->slices[i], "machine.slice"))
                        return;
        isolated = audit_cpus_phrase(a, &a->posture->isolated);
        if (!isolated)
                return;
        finding_add(a, SEVERITY_WARNING, "sched.slice-unconfined", "machine.slice",
                    "[cpus] slices confines other units, which turns the cpuset controller on for the whole "
                    "tree, and machine.slice is not among them: its virtual machines and containers may run on "
                    "every CPU, isolated %s included. Add machine.slice to [cpus] slices (%s:%u), unless "
                    "its guests are the latency-critical work.",
                    isolated, c->slices_source.file ?: "?", c->slices_source.line);
}
