/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fair_server: the runtime of the scheduler's fair server on each isolated CPU, 0 when
 * [cpus] fair_server = off. Since 6.12 the fair server (a deadline server that lets normal
 * tasks run behind real-time ones) turns the tick back on on a nohz_full CPU whenever a
 * normal task is queued behind a real-time one; a runtime of 0 keeps it off, at the risk
 * lowlatd.conf(5) spells out (a real-time task that never sleeps starves the normal tasks of
 * its CPU). The file is debugfs's: without debugfs mounted, or before 6.12, there is none,
 * and the setting is unsupported, saying which. */
#include <string.h>

#include "setting/fair-server.h"
#include "setting/file.h"
#include "setting/table.h"
#include "basic/util.h"

int setting_new_fair_server(unsigned cpu, Setting **ret) {
        char object[32];
        char *path = strdup_printf("sys/kernel/debug/sched/fair_server/cpu%u/runtime", cpu);

        if (!path)
                return -ENOMEM;
        snprintf(object, sizeof(object), "cpu%u", cpu);
        return file_setting_new(SETTING_FAIR_SERVER, path, object, "0", ret);
}

static int fair_server_read(Setting *s, SettingContext *rc, char *buf, size_t size, ReconcileFlags flags) {
        return file_setting_read(s, rc, buf, size, flags,
                                 "no fair server on this kernel (6.12 and later have one), or debugfs is not mounted "
                                 "on /sys/kernel/debug");
}

/* 6.12 answers EBUSY for the CPUs of isolcpus=domain (seen in the VM suite: their fair
 * server has no deadline bandwidth to be re-accounted against); that is how the kernel
 * is, not a failure to retry every minute, so it is unsupported, saying so. */
static int fair_server_write(Setting *s, SettingContext *rc, const char *value) {
        int r = file_setting_write(s, rc, value);

        if (r < 0 && s->reason && strstr(s->reason, strerror(EBUSY))) {
                setting_set_reason(s, "the kernel refuses to change it (%s), as 6.12 does for a CPU isolated with "
                                      "isolcpus=domain",
                                   strerror(EBUSY));
                return -EOPNOTSUPP;
        }
        return r;
}

static int fair_server_plan(SettingTable *t, const Host *h, const Posture *p) {
        if (!p->config->fair_server_off)
                return 0;
        CPUSET_FOREACH(cpu, &p->isolated) {
                Setting *s = NULL;
                int r = setting_new_fair_server((unsigned) cpu, &s);
                if (r >= 0)
                        r = table_add(t, s);
                if (r < 0)
                        return r;
        }
        return 0;
}

static const char *const fair_server_files[] = {
        "sys/kernel/debug/sched/fair_server/cpu*/runtime",
        NULL,
};

/* A runtime in nanoseconds. */
static const char *fair_server_original_problem(const Setting *s, SettingContext *rc, const char *value) {
        (void) s;
        (void) rc;
        return setting_number_problem(value, UINT64_MAX);
}

const SettingVTable fair_server_vtable = {
        FILE_SETTING_OPS,
        .noun = "fair server runtime of",
        .owns = fair_server_files,
        .object_size = sizeof(FileSetting),
        .read = fair_server_read,
        .write = fair_server_write,
        .original_problem = fair_server_original_problem,
        .done = file_setting_done,
        .plan = fair_server_plan,
};
