/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Logging: the journal's native protocol when /run/systemd/journal/socket exists, plain
 * lines on stderr otherwise (sd_journal_send() returns 0 even with no journal, so its
 * return value cannot decide). Structured events carry lowlatd's fixed fields. */
#pragma once

#include <stdbool.h>
#include <syslog.h>

#include "macro.h"
#include "setting.h"

typedef enum LogTarget {
        LOG_TARGET_AUTO,
        LOG_TARGET_JOURNAL,
        LOG_TARGET_STDERR,
} LogTarget;

typedef enum EventId {
        EVENT_DRIFT,
        EVENT_CORRECTED,
        EVENT_CORRECTION_FAILED,
        EVENT_UNSUPPORTED,
        EVENT_UNMOVABLE,
        EVENT_FIGHT,
        EVENT_FIGHT_ENDED,
        EVENT_RECOVERED,
        EVENT_STARTED,
        EVENT_RELOADED,
        EVENT_RELOAD_FAILED,
        EVENT_STOPPING,
        EVENT_RESTORED,
        EVENT_IRQ_WRITER,
        _EVENT_ID_MAX,
} EventId;

typedef struct EventInfo {
        const char *message_id; /* 32 hex digits, documented in conf/lowlatd.catalog */
        const char *name;
        int priority;
} EventInfo;

const EventInfo *event_info(EventId id);
EventId event_id_from_setting_event(SettingEvent e);

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

/* One event about a setting, with MESSAGE_ID, LOWLATD_KIND/OBJECT/EXPECTED/OBSERVED. */
void log_setting_event(EventId id, const Setting *s);
/* Another program moves many IRQs (an IRQ balancer): n distinct IRQs (irqs, space
 * separated) within window_sec seconds; writer is "irqbalance (pid 812)" or NULL. */
void log_irq_writer(const char *writer, const char *irqs, unsigned n, unsigned window_sec, const char *isolated);
/* One event not tied to a setting (started, reloaded, ...). */
void log_event(EventId id, const char *fmt, ...) _printf_(2, 3);
