/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The desired posture: a validated config resolved against the host's CPUs. Pure and
 * immutable once built; a reload builds a new one. */
#pragma once

#include "config.h"
#include "host.h"

typedef struct Posture {
        Config *config; /* owned */
        DaemonMode mode;
        CPUSet online;
        unsigned mask_bits; /* width of hex masks: number of possible CPUs */
        CPUSet isolated;
        CPUSet housekeeping;
        CPUSet default_affinity;
        CPUSet workqueues; /* [cpus] workqueues; empty: none, left alone */
} Posture;

/* Takes ownership of *config on success (and sets it to NULL). Errors name file:line. */
int posture_build(Config **config, const HostCpus *cpus, Posture **ret, ErrorList *errors);
/* The posture from the files: config_load() of config_path (and its drop-ins), the host's
 * CPUs, then posture_build(). Every problem goes to errors; -ENODEV when the host's CPUs
 * cannot be read (the host, not the configuration, is at fault). */
int posture_load(const char *config_path, const Host *h, Posture **ret, ErrorList *errors);
Posture *posture_free(Posture *p);
DEFINE_POINTER_CLEANUP(Posture, posture_free);

/* The pin for an IRQ whose /proc/interrupts action names are given (the last matching
 * pin wins), or NULL when the IRQ only has to stay off isolated CPUs. */
const IrqPin *posture_irq_pin(const Posture *p, const char *irq_name);
