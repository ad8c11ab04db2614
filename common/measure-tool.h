/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The latency tools by name: what lowlatctl measure runs and what lowlatd's
 * RecordMeasurement accepts, one vocabulary on both sides of the bus. */
#pragma once

#include "basic/string-table.h"

typedef enum MeasureTool {
        MEASURE_TOOL_TIMERLAT,   /* rtla timerlat hist: the kernel's own timerlat tracer */
        MEASURE_TOOL_CYCLICTEST, /* rt-tests: a SCHED_FIFO thread per CPU waking on a timer */
        MEASURE_TOOL_OSLAT,      /* rt-tests: a busy loop per CPU, timing what interrupts it */
        _MEASURE_TOOL_MAX,
        _MEASURE_TOOL_INVALID = -EINVAL,
} MeasureTool;

DECLARE_STRING_TABLE_LOOKUP(measure_tool, MeasureTool);
/* The program each tool is ("rtla", "cyclictest", "oslat"). */
const char *measure_tool_program(MeasureTool t) _pure_;
