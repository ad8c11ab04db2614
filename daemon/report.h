/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lowlatd --once's report (report.c). */
#pragma once

#include <stdio.h>

typedef struct Manager Manager;

typedef enum ReportFlags {
        REPORT_CHANGED = 1 << 0, /* only the settings that are not ok (--changed) */
        REPORT_JSON = 1 << 1,
} ReportFlags;

/* Prints the state of every setting (flags: which, and how). Returns the number of
 * settings drifted or failed: what makes --once exit 3. */
size_t manager_print_report(Manager *m, FILE *f, ReportFlags flags);
