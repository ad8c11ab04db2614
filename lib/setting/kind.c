/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The kinds' names (kind.h), which the journal, the bus, the metrics and the originals
 * file use. */
#include "setting/kind.h"

static const char *const setting_kind_table[_SETTING_KIND_MAX] = {
#define SETTING_KIND_NAME(e, n) [SETTING_##e] = #n,
        SETTING_KINDS(SETTING_KIND_NAME)
#undef SETTING_KIND_NAME
};
DEFINE_STRING_TABLE_LOOKUP(setting_kind, SettingKind);
