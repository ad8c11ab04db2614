/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* /proc/interrupts: which action names each IRQ number carries (what pins match on). */
#pragma once

#include <stddef.h>

/* The most of /proc/interrupts (and /proc/softirqs) lowlatd reads, 256 MiB. A line is a
 * label, 11 bytes per online CPU and the action names: NR_CPUS's largest, 8,192, makes
 * about 90 kB a line, so this holds 2,900 IRQs at 8,192 CPUs, 11,000 at 2,048, or 50,000
 * at 512 (512 CPUs and 3,200 IRQs print 18 MB). Beyond it the file is not read, and lowlatd
 * says so (the noise counters are then unreadable, not zero). */
#define PROC_INTERRUPTS_MAX ((size_t) 256 * 1024 * 1024)

typedef struct IrqNames {
        unsigned *irqs; /* ascending */
        char **names;   /* action list as printed, e.g. "eth0-TxRx-0" or "i8042, rtc0" */
        size_t n;
} IrqNames;

#define IRQ_NAMES_EMPTY ((IrqNames) { NULL, NULL, 0 })

/* Numbered lines only; NMI:, LOC: and the like are skipped. The action list is the text
 * after the last run of two or more spaces, which the kernel prints before the first
 * action name (chip, hwirq and trigger columns are padded, action names are not). */
int irq_names_parse(const char *text, IrqNames *ret);
/* The action list of one numbered line, given the text after its count columns up to
 * the end of the line (eol): a pointer into it and its length, or NULL when the IRQ has
 * no action (the line ends with the flow handler). */
const char *irq_line_actions(const char *after_counts, const char *eol, size_t *ret_len);
const char *irq_names_lookup(const IrqNames *t, unsigned irq);
void irq_names_done(IrqNames *t);
