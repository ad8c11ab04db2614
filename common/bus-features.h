/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What lowlatd offers on org.lowlatd1 beyond what every lowlatd has had (the properties
 * Version to SettingsNotOk, ListSettings, Reload, Reapply, the Drift signal): one name per
 * feature, which the daemon lists in its Features property and lowlatctl looks up before
 * it tells a person that a lowlatd is too old for what they asked. A name, once published,
 * keeps its meaning and is never removed (lowlatd(8), COMPATIBILITY). */
#pragma once

#include "basic/string-table.h"

typedef enum BusFeature {
        BUS_FEATURE_RESTORE,       /* Restore() */
        BUS_FEATURE_CHECK,         /* Check() */
        BUS_FEATURE_CHECK_DETAILS, /* Check()'s findings end with their detail lines */
        BUS_FEATURE_NOISE,         /* Noise(), NoiseGate, NoiseReads */
        BUS_FEATURE_MEASUREMENT,   /* RecordMeasurement(), LastMeasurement */
        BUS_FEATURE_NOISE_CPUS,    /* NoiseCPUs: the CPUs Noise() watches */
        BUS_FEATURE_NOISE_UNREADABLE, /* NoiseUnreadable: why the counters cannot be counted */
        BUS_FEATURE_DMA_LATENCY_HELD, /* CpuDmaLatencyHeld, CpuDmaLatencySystemUSec */
        BUS_FEATURE_CONFIG_WARNINGS,  /* ConfigWarnings: the warnings of the posture in effect */
        BUS_FEATURE_PROFILES,         /* Profiles: the [daemon] profile names in effect */
        BUS_FEATURE_DIFF,             /* Diff(), ReloadIfUnchanged(): a reload's dry run */
        BUS_FEATURE_CONDITION,        /* Condition, ConditionReasons, RebootRequired */
        BUS_FEATURE_MEASUREMENT_HISTOGRAM, /* RecordMeasurementHistogram(), LastMeasurementHistogram */
        BUS_FEATURE_RESTORE_SKIPPED,  /* RestoreSkipped: originals the last restore did not write */
        _BUS_FEATURE_MAX,
        _BUS_FEATURE_INVALID = -EINVAL,
} BusFeature;

DECLARE_STRING_TABLE_LOOKUP(bus_feature, BusFeature);
/* The method or property whose presence is the feature ("Noise"); NULL for one that no
 * member of its own shows (a struct that grew a field). */
const char *bus_feature_member(BusFeature f) _pure_;
/* The feature a method or property of org.lowlatd1.Manager belongs to; -EINVAL for one
 * that every lowlatd has. */
BusFeature bus_feature_from_member(const char *member) _pure_;
/* What a lowlatd without it lacks, for "lowlatd 0.1.0-230-g8bbec47 has no noise counters". */
const char *bus_feature_lacking(BusFeature f) _pure_;
