/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "condition-names.h"

static const char *const condition_table[_CONDITION_MAX] = {
        [CONDITION_APPLIED] = "applied",
        [CONDITION_PROGRESSING] = "progressing",
        [CONDITION_DEGRADED] = "degraded",
        [CONDITION_REBOOT_REQUIRED] = "reboot-required",
        [CONDITION_OBSERVING] = "observing",
};
DEFINE_STRING_TABLE_LOOKUP(condition, Condition);
