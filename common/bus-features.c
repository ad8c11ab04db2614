/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The features of org.lowlatd1 by name: the one table of bus-features.h. */
#include "bus-features.h"

typedef struct BusFeatureInfo {
        const char *name;
        const char *members[3]; /* the ones it added, the first of which tells it apart */
        const char *lacking;
} BusFeatureInfo;

static const BusFeatureInfo bus_feature_table[_BUS_FEATURE_MAX] = {
        [BUS_FEATURE_RESTORE] = { "restore", { "Restore" }, "no restore of the original values" },
        [BUS_FEATURE_CHECK] = { "check", { "Check" }, "no host audit (check)" },
        [BUS_FEATURE_CHECK_DETAILS] = { "check-details", {}, "no detail lines in its audit" },
        [BUS_FEATURE_NOISE] = { "noise", { "Noise", "NoiseGate", "NoiseReads" }, "no noise counters" },
        [BUS_FEATURE_MEASUREMENT] = { "measurement", { "RecordMeasurement", "LastMeasurement" },
                                      "no place to keep measurements" },
        [BUS_FEATURE_NOISE_CPUS] = { "noise-cpus", { "NoiseCPUs" }, "no word on which CPUs it watches for noise" },
        [BUS_FEATURE_NOISE_UNREADABLE] = { "noise-unreadable", { "NoiseUnreadable" },
                                           "no word on noise counters it cannot count" },
        [BUS_FEATURE_DMA_LATENCY_HELD] = { "cpu-dma-latency-held", { "CpuDmaLatencyHeld", "CpuDmaLatencySystemUSec" },
                                           "no word on whether its cpu_dma_latency request is held" },
        [BUS_FEATURE_CONFIG_WARNINGS] = { "config-warnings", { "ConfigWarnings" },
                                          "no word on the warnings of its configuration" },
        [BUS_FEATURE_PROFILES] = { "profiles", { "Profiles" }, "no profiles" },
        [BUS_FEATURE_DIFF] = { "diff", { "Diff", "ReloadIfUnchanged" }, "no dry run of a reload (diff)" },
        [BUS_FEATURE_CONDITION] = { "condition", { "Condition", "ConditionReasons", "RebootRequired" },
                                    "no word for the host's condition" },
        [BUS_FEATURE_MEASUREMENT_HISTOGRAM] = { "measurement-histogram",
                                                { "RecordMeasurementHistogram", "LastMeasurementHistogram" },
                                                "no place to keep a measurement's histogram" },
        [BUS_FEATURE_RESTORE_SKIPPED] = { "restore-skipped", { "RestoreSkipped" },
                                          "no count of the originals a restore skipped" },
};

DEFINE_STRING_TABLE_LOOKUP_IN(bus_feature, BusFeature, bus_feature_table, .name);

const char *bus_feature_member(BusFeature f) {
        if ((size_t) f >= ELEMENTSOF(bus_feature_table))
                return NULL;
        return bus_feature_table[f].members[0];
}

BusFeature bus_feature_from_member(const char *member) {
        for (size_t i = 0; member && i < ELEMENTSOF(bus_feature_table); i++)
                for (size_t k = 0; k < ELEMENTSOF(bus_feature_table[i].members); k++)
                        if (bus_feature_table[i].members[k] && strcmp(bus_feature_table[i].members[k], member) == 0)
                                return (BusFeature) i;
        return _BUS_FEATURE_INVALID;
}

const char *bus_feature_lacking(BusFeature f) {
        if ((size_t) f >= ELEMENTSOF(bus_feature_table))
                return NULL;
        return bus_feature_table[f].lacking;
}
