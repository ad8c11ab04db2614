/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* [pm] per-CPU power settings beyond the governor: resume_latency, min_freq,
 * energy_performance_preference and boost. */
#pragma once

#include "setting/setting.h"

/* value: "n/a" or a number of microseconds, as the kernel's file takes it. */
int setting_new_resume_latency(unsigned cpu, const char *value, Setting **ret);
/* The floor asked for CPU cpu, clamped to what its driver offers (s->clamped then says so). */
int setting_new_min_freq(const Host *h, unsigned cpu, const Config *c, Setting **ret);
int setting_new_energy_performance_preference(unsigned cpu, const char *name, Setting **ret);
/* cpufreq/boost, or intel_pstate/no_turbo where there is no such file; unsupported when
 * neither exists. */
int setting_new_boost(const Host *h, bool on, Setting **ret);

/* Pure: the scaling_min_freq to write for asked_khz (or the highest offered, with max),
 * given the driver's cpuinfo_min_freq, cpuinfo_max_freq and scaling_max_freq (0: not
 * known). *ret_bound names the file that clamped it, NULL when nothing did. -EOPNOTSUPP
 * when max is asked and no highest frequency is known. */
int pm_min_freq_clamp(uint64_t asked_khz, bool max, uint64_t cpuinfo_min, uint64_t cpuinfo_max, uint64_t scaling_max,
                      uint64_t *ret_khz, const char **ret_bound);
