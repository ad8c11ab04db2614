/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* governor: each online CPU's cpufreq scaling_governor, written only with a governor the
 * driver offers. */
#include <string.h>

#include "config/keys.h"
#include "setting/file.h"
#include "setting/governor.h"
#include "setting/table.h"
#include "basic/util.h"

int setting_new_governor(unsigned cpu, const char *governor, Setting **ret) {
        return file_setting_new_cpu(SETTING_GOVERNOR, cpu, "cpufreq/scaling_governor", governor, ret);
}

static int governor_read(Setting *s, SettingContext *rc, char *buf, size_t size, ReconcileFlags flags) {
        return file_setting_read(s, rc, buf, size, flags, "no cpufreq driver for this CPU");
}

static int governor_write(Setting *s, SettingContext *rc, const char *value) {
        return file_setting_write_offered(s, rc, value, "scaling_available_governors", "governor");
}

static int governor_refuses(Setting *s, SettingContext *rc) {
        return file_setting_check_offered(s, rc, s->desired, "scaling_available_governors", "governor");
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

/* A governor by the rules of the key's names; the driver's list is asked at the write. */
static const char *governor_original_problem(const Setting *s, SettingContext *rc, const char *value) {
        (void) s;
        (void) rc;
        return config_governor_name_is_valid(value) ? NULL : "not a governor name";
}

const SettingVTable governor_vtable = {
        FILE_SETTING_OPS,
        .owns = governor_files,
        .object_size = sizeof(FileSetting),
        .read = governor_read,
        .write = governor_write,
        .original_problem = governor_original_problem,
        .refuses = governor_refuses,
        .done = file_setting_done,
        .plan = governor_plan,
};
