/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The posture audit: every check an administrator would make by hand (boot parameters,
 * kernel, topology, scheduling, power, IRQs, virtualisation, applications, sysctls), run
 * against the host under the root, reported as findings with the fix. Read-only. */
#pragma once

#include <stddef.h>

#include "host/host.h"
#include "config/posture.h"
#include "basic/string-table.h"
#include "setting/table.h"

typedef enum Severity {
        SEVERITY_OK,
        SEVERITY_INFO,
        SEVERITY_WARNING,
        SEVERITY_CRITICAL,
        _SEVERITY_MAX,
        _SEVERITY_INVALID = -EINVAL,
} Severity;

/* "ok", "info", "warning", "critical". */
DECLARE_STRING_TABLE_LOOKUP(severity, Severity);

typedef struct Finding {
        Severity severity;
        char *id;      /* stable dotted id, see the table at the top of audit/audit-run.c */
        char *subject; /* what it is about: "cpu3", "pid 1234 (matcher)", "net.ipv4.tcp_low_latency" */
        char *message; /* what is wrong, why it matters for latency, and the exact fix */
        /* One line per item a finding sums up (each stray task: "pid 1276 (bash) allowed on
         * 0-1, last on CPU 1, 0.52 s CPU"), all of them where the message names a few;
         * NULL and 0 for most findings. For programs (Check(), check --json). */
        char **details;
        size_t n_details;
} Finding;

typedef struct FindingList {
        Finding *items;
        size_t n;
} FindingList;

#define FINDING_LIST_EMPTY ((FindingList) { NULL, 0 })

void finding_list_done(FindingList *l);
static inline void finding_list_donep(FindingList *l) {
        finding_list_done(l);
}
#define _cleanup_finding_list_ _cleanup_(finding_list_donep)

/* SEVERITY_OK for an empty list. */
Severity finding_list_worst(const FindingList *l);

/* The first finding with this id (and this subject, unless subject is NULL), or NULL. */
const Finding *finding_list_find(const FindingList *l, const char *id, const char *subject);

/* At most this many findings per id are listed; one more finding with the same id and the
 * subject "N more" counts the rest (with the worst severity among them). */
#define AUDIT_FINDINGS_PER_ID_MAX 20U
/* Processes examined (lowest pids first); more are reported as audit.limit. */
#define AUDIT_PROCESSES_MAX 65536U
/* Threads of one configured application examined. */
#define AUDIT_THREADS_MAX 4096U
/* Open files looked at in the search for a /dev/cpu_dma_latency holder, in all. */
#define AUDIT_FDS_MAX (1U << 20)
/* Steal time (share of CPU time since boot, in basis points) that makes virt.steal a
 * warning; any steal at all is reported as info. */
#define AUDIT_STEAL_WARNING_BP 100U

/* Runs every check against the host under h and the posture (its config included). t may
 * be NULL; when given, IRQ settings in state SETTING_UNMOVABLE are read from it. Never
 * writes. A missing or malformed input skips the checks that need it; the only error is
 * -ENOMEM (or -EINVAL for a posture without a config). *ret is written only on success. */
int audit_run(const Host *h, const Posture *p, const SettingTable *t, FindingList *ret);

/* Whether the posture needs a kernel command line other than the running one: the
 * parameters that the boot.* and kernel.* findings of warning or worse ask for (the ones
 * only a boot gives: isolcpus=, nohz_full=, rcu_nocbs=, irqaffinity=, preempt=, ...),
 * space-separated in *ret_params. 1 with *ret_params set, 0 when the running line has all
 * (info-level hints such as tsc=reliable do not count), or -ENOMEM. Reads the command
 * line, the kernel's config and a few sysfs files; looks at no process. */
int audit_boot_needs(const Host *h, const Posture *p, char **ret_params);
/* The same, with the whole line those parameters go in: the running command line's kernel
 * arguments (less BOOT_IMAGE=, root=, initrd=, ro, rw, what follows "--", and the
 * isolation parameters it replaces) plus every parameter lowlatd's posture asks for, as
 * boot.cmdline gives it: quoted for the double quotes of GRUB_CMDLINE_LINUX_DEFAULT (",
 * \, $ and ` with a backslash). *ret_line is set on success, *ret_params as
 * audit_boot_needs() sets it. -ENODATA when the running command line cannot be read. */
int audit_boot_line(const Host *h, const Posture *p, char **ret_line, char **ret_params);

/* Why no boot line is written for this posture: it isolates every CPU, or it leaves one
 * housekeeping CPU for every IRQ, kernel thread, timer and RCU callback of a host with more
 * than two online CPUs (where the configuration can leave two; on two CPUs one is the only
 * way to isolate anything). 1 with the reason, one sentence, in *ret_reason; 0 when a line
 * is written; -ENOMEM. lowlatctl boot refuses with this reason, and lowlatd's Condition asks
 * the same function, so that it never calls for a reboot into a line lowlatctl boot will
 * not write. Pure: the posture's CPU sets only. */
int audit_boot_refusal(const Posture *p, char **ret_reason);

/* Only the parameters lowlatd's posture decides, the end of audit_boot_line()'s line:
 * isolcpus=, nohz_full=, rcu_nocbs=, irqaffinity= (when CPUs are isolated), skew_tick=,
 * nosoftlockup, tsc=, preempt= as the checks ask, space-separated and unquoted (none needs
 * quoting), "" when there are none. What a loader that edits a list of arguments (grubby,
 * /etc/kernel/cmdline) adds. 0, or -ENOMEM. */
int audit_boot_args(const Host *h, const Posture *p, char **ret_args);

/* The bounds of one run; 0 in a field means its default above. */
typedef struct AuditLimits {
        unsigned max_processes; /* AUDIT_PROCESSES_MAX */
        unsigned max_fds;       /* AUDIT_FDS_MAX */
} AuditLimits;

/* audit_run() with other bounds (limits may be NULL), for a caller that must stay cheaper
 * than the defaults on a huge host, and for tests. */
int audit_run_with_limits(const Host *h, const Posture *p, const SettingTable *t, const AuditLimits *limits,
                          FindingList *ret);
