/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* kthread_affinity and kthread_policy: one setting per kernel thread that the posture asks
 * something of ([cpus] kthreads = housekeeping, [kthread "GLOB"] sections), kept while the
 * thread lives. The table's kernel threads follow kthreadd's children: the scan lists them,
 * and the proc connector (daemon/procwatch.c) names each new one as it is created. */
#pragma once

#include "setting/setting.h"
#include "setting/table.h"

/* The proc connector reports a new kernel thread while it is still kthreadd's copy, before
 * its creator has named it, bound it to its CPUs and set PF_NO_SETAFFINITY (the guest of
 * the VM suite reports it 0.3-2.5 ms after the fork). It is looked at this much later...
 * The kernel sends no event when the creator names the thread (see host/proc-connector.h),
 * so this wait is the only way to it, not a fallback. 5 ms: the development VM names new
 * threads within 0.5 ms at p50 and 4-8 ms at p99 (docs/performance.md), so most need one
 * look; and a creator binds a thread (kthread_bind(), PF_NO_SETAFFINITY) only after naming
 * it, so the look must not come right at the naming, or a thread about to be pinned is taken
 * for a movable one. */
#define KTHREAD_RELOOK_USEC (5 * USEC_PER_MSEC)
/* ... and again every KTHREAD_RELOOK_USEC while it still carries kthreadd's name, up to
 * this age; after that the scan finds it. */
#define KTHREAD_SETTLE_MAX_USEC (USEC_PER_SEC)
/* Kernel threads looked at in one scan (lowest ids first); bounds a corrupt fake tree. */
#define KTHREADS_MAX 65536U

/* Whether s is a kernel thread's setting; its thread id in *ret_tid (may be NULL). */
bool setting_is_kthread(const Setting *s, pid_t *ret_tid);

/* The settings the posture asks of one kernel thread, added to t if missing (the proc
 * connector's news; a setting left by an earlier task with the same id is replaced).
 * Returns 1 when the thread has settings in t now, 0 when the posture asks nothing of it
 * or it is no kernel thread, -EAGAIN while it still has kthreadd's name (not set up yet:
 * look again a moment later), -ENOENT when it is gone, or -errno. */
int kthread_table_add(SettingTable *t, const Host *h, const Posture *p, pid_t tid);
/* Lists every kernel thread (kthreadd and its children, from proc/2/task/2/children, else
 * every process in /proc) and adds the settings that are missing. Threads that are gone
 * are dropped by their next look. Returns the number of settings added, or -errno. */
int kthread_table_scan(SettingTable *t, const Host *h, const Posture *p);
