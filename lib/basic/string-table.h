/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One string table per enum and one macro for its lookups, so that every output (the
 * journal, the bus, JSON, metrics, the originals file) names a value the same way. */
#pragma once

#include <errno.h>
#include <string.h>

#include "basic/macro.h"

/* Declares what DEFINE_STRING_TABLE_LOOKUP defines. The enum needs an invalid member
 * equal to -EINVAL (e.g. _SETTING_KIND_INVALID = -EINVAL), which keeps it signed. */
#define DECLARE_STRING_TABLE_LOOKUP(name, type)    \
        const char *name##_to_string(type v) _pure_; \
        type name##_from_string(const char *s) _pure_

/* Given `static const char *const name##_table[]` indexed by the enum, defines
 *   name_to_string(v):   the name, or NULL for a value outside the table (bounds-checked);
 *   name_from_string(s): the value, or -EINVAL when s names none. */
#define DEFINE_STRING_TABLE_LOOKUP(name, type) DEFINE_STRING_TABLE_LOOKUP_IN(name, type, name##_table, )

/* The same over a table of structs whose names are in a member: member is ".name". */
#define DEFINE_STRING_TABLE_LOOKUP_IN(name, type, table, member)                        \
        const char *name##_to_string(type v) {                                          \
                if ((size_t) v >= ELEMENTSOF(table))                                    \
                        return NULL;                                                    \
                return table[v] member;                                                 \
        }                                                                               \
        type name##_from_string(const char *s) {                                        \
                if (s)                                                                  \
                        for (size_t i = 0; i < ELEMENTSOF(table); i++)                  \
                                if (table[i] member && strcmp(table[i] member, s) == 0) \
                                        return (type) i;                                \
                return (type) -EINVAL;                                                  \
        }
