/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* governor: each online CPU's cpufreq scaling_governor, written only with a governor the
 * driver offers. */
#include <string.h>

#include "setting/file.h"
#include "setting/governor.h"
#include "setting/table.h"
#include "basic/util.h"

int setting_new_governor(unsigned cpu, const char *governor, Setting **ret) {
        _cleanup_free_ char *object = strdup_printf("cpu%u", cpu);

        if (!object)
                return -ENOMEM;
        return file_setting_new(SETTING_GOVERNOR,
                                strdup_printf("sys/devices/system/cpu/cpu%u/cpufreq/scaling_governor", cpu), object,
                                governor, ret);
}

static int governor_read(Setting *s, SettingContext *rc, char *buf, size_t size, ReconcileFlags flags) {
        return file_setting_read(s, rc, buf, size, flags, "no cpufreq driver for this CPU");
}

/* A governor the driver does not offer is unsupported, not a failure to retry. */
static int governor_check_available(Setting *s, SettingContext *rc, const char *governor) {
        _cleanup_free_ char *file = NULL, *avail = NULL, *norm = NULL;
        const char *path = setting_file_path(s), *slash = strrchr(path, '/');

        file = strdup_printf("%.*s/scaling_available_governors", (int) (slash ? slash - path : 0), path);
        if (!file)
                return -ENOMEM;
        if (host_read_file(rc->host, file, &avail) < 0)
                return 0; /* cannot tell; let the write decide */
        if (word_list_contains(avail, governor))
                return 0;
        norm = normalize_whitespace(avail);
        if (!norm)
                return -ENOMEM;
        setting_set_reason(s, "governor '%s' is not available (available: %s)", governor, norm);
        return -EOPNOTSUPP;
}

static int governor_write(Setting *s, SettingContext *rc, const char *value) {
        int r = governor_check_available(s, rc, value);

        if (r < 0)
                return r;
        return file_setting_write(s, rc, value);
}

static int governor_plan(SettingTable *t, const Host *h, const Posture *p) {
        if (!p->config->governor)
                return 0;
        CPUSET_FOREACH(cpu, &p->online) {
                Setting *s = NULL;
                int r = setting_new_governor((unsigned) cpu, p->config->governor, &s);
                if (r >= 0)
                        r = table_add(t, s);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* cpuN/cpufreq is a link to cpufreq/policyN on most drivers: both spellings. */
static const char *const governor_files[] = {
        "sys/devices/system/cpu/cpu*/cpufreq/scaling_governor",
        "sys/devices/system/cpu/cpufreq/policy*/scaling_governor",
        NULL,
};

const SettingVTable governor_vtable = {
        FILE_SETTING_OPS,
        .owns = governor_files,
        .object_size = sizeof(FileSetting),
        .read = governor_read,
        .write = governor_write,
        .done = file_setting_done,
        .plan = governor_plan,
};
