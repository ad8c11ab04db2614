/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The last wake-up latency measurement (lowlatctl measure), kept by lowlatd so that status
 * and the bus show it: RecordMeasurement() (root only) and the LastMeasurement property,
 * a vtable of their own on org.lowlatd1.Manager. Kept in memory: a restart forgets it. */
#pragma once

#include <systemd/sd-bus.h>

#include "basic/macro.h"
#include "measurement-signature.h"

typedef struct MeasurementStore MeasurementStore;

MeasurementStore *measurement_store_free(MeasurementStore *s);
DEFINE_POINTER_CLEANUP(MeasurementStore, measurement_store_free);
int measurement_store_new(MeasurementStore **ret);
/* Publishes the store's vtable on bus (at each (re)connection). */
int measurement_store_add_to_bus(MeasurementStore *s, sd_bus *bus);
