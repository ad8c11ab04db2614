/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cpuidle: idle states too deep for cpu_dma_latency, disabled on isolated CPUs through each
 * state's disable file. */
#include <string.h>

#include "setting/cpuidle.h"
#include "setting/file.h"
#include "setting/table.h"
#include "basic/util.h"

int setting_new_cpuidle(unsigned cpu, unsigned state, const char *name, Setting **ret) {
        _cleanup_(setting_freep) Setting *s = NULL;
        _cleanup_free_ char *object = strdup_printf("cpu%u/state%u", cpu, state);
        int r;

        if (!object)
                return -ENOMEM;
        r = file_setting_new(SETTING_CPUIDLE,
                             strdup_printf("sys/devices/system/cpu/cpu%u/cpuidle/state%u/disable", cpu, state), object,
                             "1", &s);
        if (r < 0)
                return r;
        if (name && !(s->label = strdup(name)))
                return -ENOMEM;
        *ret = TAKE_PTR(s);
        return 0;
}

/* With a cpu_dma_latency target: every idle state of an isolated CPU whose exit latency
 * is above it, disabled (a state that deep would break the target on that CPU whatever
 * the latency request says, where the driver ignores PM QoS). */
static int cpuidle_plan(SettingTable *t, const Host *h, const Posture *p) {
        const Config *c = p->config;

        if (!c->cpu_dma_latency_enabled)
                return 0;
        CPUSET_FOREACH(cpu, &p->isolated) {
                for (unsigned state = 0; state < 64; state++) {
                        _cleanup_free_ char *latency = NULL, *name = NULL;
                        uint64_t usec;
                        Setting *s = NULL;
                        int r;

                        if (host_read_filef(h, &latency, "sys/devices/system/cpu/cpu%d/cpuidle/state%u/latency", cpu,
                                            state) < 0)
                                break; /* states are numbered from 0 without gaps */
                        if (parse_uint64(strstrip(latency), &usec) < 0 || usec <= (uint64_t) c->cpu_dma_latency_usec)
                                continue;
                        (void) host_read_filef(h, &name, "sys/devices/system/cpu/cpu%d/cpuidle/state%u/name", cpu,
                                               state);
                        r = setting_new_cpuidle((unsigned) cpu, state, name ? strstrip(name) : NULL, &s);
                        if (r >= 0)
                                r = table_add(t, s);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

static const char *const cpuidle_files[] = {
        "sys/devices/system/cpu/cpu*/cpuidle/state*/disable",
        NULL,
};

/* A state's disable file reads 0 or 1. */
static const char *cpuidle_original_problem(const Setting *s, SettingContext *rc, const char *value) {
        static const char *const words[] = { "0", "1", NULL };

        (void) s;
        (void) rc;
        return setting_word_problem(value, words);
}

const SettingVTable cpuidle_vtable = {
        FILE_SETTING_OPS,
        .owns = cpuidle_files,
        .object_size = sizeof(FileSetting),
        .read = file_setting_read_present,
        .write = file_setting_write,
        .original_problem = cpuidle_original_problem,
        .done = file_setting_done,
        .plan = cpuidle_plan,
};
