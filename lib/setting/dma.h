/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cpu_dma_latency: the request on /dev/cpu_dma_latency that lowlatd holds open. */
#pragma once

#include "setting/setting.h"

int setting_new_cpu_dma_latency(int32_t usec, Setting **ret);
/* The fd that holds our request, -1 when none (for tests). */
int setting_dma_hold_fd(const Setting *s);

/* Where the request of the table's cpu_dma_latency setting stands, as the bus tells it:
 * whether lowlatd holds it now (observe mode only reads the device, and a failed open
 * holds nothing), and the system-wide value /dev/cpu_dma_latency read last. */
typedef struct DmaLatencyStatus {
        bool held;
        int32_t system_usec; /* -1: not read (no such setting, or not read yet) */
} DmaLatencyStatus;
void table_dma_latency_status(const SettingTable *t, DmaLatencyStatus *ret);
