/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The desired posture: a validated config resolved against the host's CPUs. Pure and
 * immutable once built; a reload builds a new one. */
#pragma once

#include "config/config.h"
#include "host/host.h"

typedef struct Posture {
        Config *config; /* owned */
        DaemonMode mode;
        CPUSet online;
        unsigned mask_bits; /* width of hex masks: number of possible CPUs */
        CPUSet isolated;
        CPUSet housekeeping;
        CPUSet default_affinity;
        CPUSet *kthread_cpus; /* each [kthread] section's cpus=, resolved; empty when unset */
        size_t n_kthread_cpus;
        CPUSet workqueues; /* [cpus] workqueues; empty: none, left alone */
        /* [pm] *_cpus, resolved (empty when the setting is off); the settings are planned
         * for the online ones among them, so a CPU that goes offline drops out. */
        CPUSet resume_latency_cpus;
        CPUSet min_freq_cpus;
        CPUSet energy_performance_preference_cpus;
        CPUSet rps_default_mask; /* [cpus] rps_default_mask (unset: config->rps_default_mask.kind == CPUS_UNSET) */
        /* Each [nic] section's rps_cpus= and xps_cpus=, resolved (empty for none, or when
         * unset); n_nics of each, NULL when there are none. */
        CPUSet *nic_rps_cpus;
        CPUSet *nic_xps_cpus;
        size_t n_nic_cpus;
        CPUSet noise_cpus; /* [noise] cpus: the CPUs whose noise is counted; may be empty */
} Posture;

/* Takes ownership of *config on success (and sets it to NULL). Errors name file:line. */
int posture_build(Config **config, const HostCpus *cpus, Posture **ret, ErrorList *errors);
Posture *posture_free(Posture *p);
DEFINE_POINTER_CLEANUP(Posture, posture_free);

/* Where a task allowed on `allowed` goes when it is moved off the isolated CPUs: those
 * CPUs minus the isolated ones (the online ones among them), or the housekeeping CPUs
 * when that leaves none. A node-bound thread keeps its node that way. */
int posture_cpus_off_isolated(const Posture *p, const CPUSet *allowed, CPUSet *ret);

/* What the posture asks of one kernel thread (lib/setting/kthreads.c). */
typedef struct KthreadTarget {
        const CPUSet *cpus; /* exactly these CPUs ([kthread] cpus=), or NULL */
        bool off_isolated;  /* no CPUs named, and [cpus] kthreads = housekeeping: off the isolated CPUs */
        int policy;         /* SCHED_OTHER, SCHED_FIFO or SCHED_RR; -1: the policy is left alone */
        unsigned priority;
} KthreadTarget;

/* Whether the posture asks anything of kernel threads: [cpus] kthreads = housekeeping
 * with some CPU isolated, or a [kthread] section. */
bool posture_manages_kthreads(const Posture *p);
/* What the posture asks of the kernel thread named comm: the last [kthread] section that
 * matches and sets cpus= gives its CPUs, the last that sets a policy gives the policy and
 * priority; a thread no section places is kept off the isolated CPUs when kthreads =
 * housekeeping, except a threaded IRQ handler ("irq/..."), whose CPUs the kernel keeps
 * equal to its IRQ's. Returns whether anything is asked. */
bool posture_kthread_target(const Posture *p, const char *comm, KthreadTarget *ret);

/* The pin for an IRQ whose /proc/interrupts action names are given (the last matching
 * pin wins), or NULL when the IRQ only has to stay off isolated CPUs. */
const IrqPin *posture_irq_pin(const Posture *p, const char *irq_name);
/* The same among the pins before the before-th (the one a later pin overrides). */
const IrqPin *posture_irq_pin_before(const Posture *p, const char *irq_name, size_t before);
