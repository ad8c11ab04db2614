/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What lowlatd reports: one enum for every event, about a setting or about the daemon.
 * Each has one name and one MESSAGE_ID (the table in log.c, documented in
 * conf/lowlatd.catalog); the state machine, the journal, the bus and the tests all use it. */
#pragma once

#include <errno.h>

#include "basic/string-table.h"

typedef enum EventId {
        /* About one setting: these carry LOWLATD_KIND, _OBJECT, _EXPECTED and _OBSERVED. */
        EVENT_DRIFT,
        EVENT_CORRECTED,
        EVENT_CORRECTION_FAILED,
        EVENT_UNSUPPORTED,
        EVENT_UNMOVABLE,
        EVENT_FIGHT,
        EVENT_FIGHT_ENDED,
        EVENT_RECOVERED,
        EVENT_CLAMPED,
        _EVENT_SETTING_MAX,
        /* About the daemon. */
        EVENT_STARTED = _EVENT_SETTING_MAX,
        EVENT_RELOADED,
        EVENT_RELOAD_FAILED,
        EVENT_STOPPING,
        EVENT_RESTORED,
        EVENT_IRQ_WRITER,
        EVENT_NOISE_IRQ,
        EVENT_NOISE_TICK,
        EVENT_NOISE_UNREADABLE,
        _EVENT_ID_MAX,
        _EVENT_ID_INVALID = -EINVAL,
} EventId;

/* "drift", "corrected", "correction-failed", ...: the names the catalog and the tests use. */
DECLARE_STRING_TABLE_LOOKUP(event, EventId);

typedef struct EventInfo {
        const char *message_id; /* 32 hex digits, documented in conf/lowlatd.catalog */
        const char *name;
        int priority;
} EventInfo;

const EventInfo *event_info(EventId id);
