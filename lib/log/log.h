/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Logging: the journal's native protocol when /run/systemd/journal/socket exists, plain
 * lines on stderr otherwise (sd_journal_send() returns 0 even with no journal, so its
 * return value cannot decide). Structured events carry lowlatd's fixed fields. */
#pragma once

#include <stdbool.h>
#include <syslog.h>

#include "basic/event.h"
#include "basic/macro.h"
#include "noise/noise.h"
#include "setting/setting.h"

typedef enum LogTarget {
        LOG_TARGET_AUTO,
        LOG_TARGET_JOURNAL,
        LOG_TARGET_STDERR,
} LogTarget;

/* Decides once where logs go (AUTO: the journal if its socket exists). */
void log_open(LogTarget target);
void log_set_max_level(int level);
bool log_to_journal(void);

/* Returns -abs(error), so that "return log_error_errno(r, ...)" passes r up. */
int log_internal(int level, int error, const char *fmt, ...) _printf_(3, 4);

#define log_debug(...) log_internal(LOG_DEBUG, 0, __VA_ARGS__)
#define log_info(...) log_internal(LOG_INFO, 0, __VA_ARGS__)
#define log_notice(...) log_internal(LOG_NOTICE, 0, __VA_ARGS__)
#define log_warning(...) log_internal(LOG_WARNING, 0, __VA_ARGS__)
#define log_error(...) log_internal(LOG_ERR, 0, __VA_ARGS__)
#define log_warning_errno(e, ...) log_internal(LOG_WARNING, (e), __VA_ARGS__)
#define log_error_errno(e, ...) log_internal(LOG_ERR, (e), __VA_ARGS__)

/* One event about a setting, with MESSAGE_ID, LOWLATD_KIND/OBJECT/EXPECTED/OBSERVED;
 * observed is the value as people read it (setting_describe_observed()), NULL when it
 * could not be read. */
void log_setting_event(EventId id, const Setting *s, const char *observed);
/* Another program moves many IRQs (an IRQ balancer): n distinct IRQs (irqs, space
 * separated) within window_sec seconds; writer is "irqbalance (pid 812)" or NULL. */
void log_irq_writer(const char *writer, const char *irqs, unsigned n, unsigned window_sec, const char *isolated);
/* A noise alert (lib/noise/noise.h): a device IRQ on a watched CPU (isolated: the CPU is one
 * of the posture's isolated CPUs) or a tick that did not stop; interval_usec is the scan
 * interval the counts cover, p the limits in force. */
void log_noise_alert(const NoiseAlert *a, const NoiseAlertPolicy *p, uint64_t interval_usec, bool isolated);
/* One event not tied to a setting (started, reloaded, ...). */
void log_event(EventId id, const char *fmt, ...) _printf_(2, 3);
