/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The names of the latency tools, one vocabulary for lowlatctl measure, the bus
 * (RecordMeasurement checks the name) and status. */
#include "measure-tool.h"

static const char *const measure_tool_table[_MEASURE_TOOL_MAX] = {
        [MEASURE_TOOL_TIMERLAT] = "timerlat",
        [MEASURE_TOOL_CYCLICTEST] = "cyclictest",
        [MEASURE_TOOL_OSLAT] = "oslat",
};
DEFINE_STRING_TABLE_LOOKUP(measure_tool, MeasureTool);

const char *measure_tool_program(MeasureTool t) {
        return t == MEASURE_TOOL_TIMERLAT ? "rtla" : measure_tool_to_string(t);
}
