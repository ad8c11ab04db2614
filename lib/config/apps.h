/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Which [service "NAME"] / [process "COMM"] sections a running process is: the one rule
 * the audit and [cpus] evict_strays share (config/section-apps.c). */
#pragma once

#include <stdbool.h>

#include "config/config.h"
#include "host/host.h"

/* Whether a process is one of the configured applications: its comm for [process
 * "COMM"], its cgroup (NULL when unreadable) for [service "NAME"]. */
bool app_matches(const AppSection *app, const char *comm, const char *cgroup);

/* Which of c's [service]/[process] sections the process pid (named comm) is, reading its
 * /proc/PID/cgroup once, and only when a [service] section needs it (an unreadable one
 * matches no service). matched is NULL, or has c->n_apps entries, each set to whether
 * that section matches; when NULL the search stops at the first match. Returns how many
 * matched, or -ENOMEM. */
int task_match_apps(const Host *h, const Config *c, unsigned pid, const char *comm, bool *matched);
