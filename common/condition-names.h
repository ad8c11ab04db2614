/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The host's condition by name: what lowlatd's Condition property says (daemon/condition.c
 * decides which) and the values of lowlatctl's lowlatd_condition series, spelled once. */
#pragma once

#include "basic/string-table.h"

typedef enum Condition {
        CONDITION_APPLIED,
        CONDITION_PROGRESSING,
        CONDITION_DEGRADED,
        CONDITION_REBOOT_REQUIRED,
        CONDITION_OBSERVING,
        _CONDITION_MAX,
        _CONDITION_INVALID = -EINVAL,
} Condition;

DECLARE_STRING_TABLE_LOOKUP(condition, Condition);
