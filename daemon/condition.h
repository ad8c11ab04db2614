/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One word for the host (the Condition property, the first line of lowlatctl status, the
 * lowlatd_condition metric), shaped like the Node Tuning Operator's node conditions so
 * that a fleet tool can gate on it:
 *   applied          every setting in place, and the boot line has what the posture needs;
 *   progressing      being put in place (starting, or settings pending or being corrected);
 *   degraded         settings failed, or another writer fights lowlatd over some, or the
 *                    kernel command line lacks parameters in a line lowlatctl boot refuses
 *                    to write (audit_boot_refusal(): a lone housekeeping CPU);
 *   reboot-required  all in place that can be at run time, but the kernel command line
 *                    lacks parameters the posture needs, in a line lowlatctl boot writes
 *                    (RebootRequired says so whatever the condition);
 *   observing        observe mode: nothing is put in place.
 * With the reasons, one line each, in words. */
#pragma once

#include "condition-names.h"
#include "manager.h"

/* m's condition; with ret_reasons, why, as a NULL-terminated list the caller frees
 * (empty when applied). -ENOMEM only through ret_reasons' allocation. */
int manager_condition(const Manager *m, char ***ret_reasons);
/* Whether the kernel command line lacks what the posture needs (m->boot_params, which
 * the manager reads again at start and at every reload) in a line lowlatctl boot writes:
 * false while it refuses the line (m->boot_refused), since no reboot mends that. */
bool manager_reboot_required(const Manager *m);
