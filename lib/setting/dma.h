/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cpu_dma_latency: the request on /dev/cpu_dma_latency that lowlatd holds open. */
#pragma once

#include "setting/setting.h"

int setting_new_cpu_dma_latency(int32_t usec, Setting **ret);
/* The fd that holds our request, -1 when none (for tests). */
int setting_dma_hold_fd(const Setting *s);
