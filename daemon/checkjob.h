/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Check() in a forked child, so the audit never blocks the event loop. */
#pragma once

#include <systemd/sd-bus.h>

#include "manager.h"

typedef struct CheckJob CheckJob;

/* Answers call with the findings, later: joins the running audit in *slot or starts one
 * there. Returns 1 (the reply will come), or -errno when call could not be queued. */
int check_job_submit(CheckJob **slot, Manager *m, sd_bus_message *call);
/* Kills a running audit and drops its callers unanswered (the daemon is exiting). */
void check_job_abandon(CheckJob **slot);
