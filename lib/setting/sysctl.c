/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sysctl: one /proc/sys file per [sysctl] key, compared with runs of white space collapsed
 * (tcp_rmem reads back with tabs). */
#include <string.h>

#include "setting/file.h"
#include "setting/sysctl.h"
#include "setting/table.h"
#include "basic/util.h"

int setting_new_sysctl(const char *key, const char *value, Setting **ret) {
        _cleanup_free_ char *desired = NULL;
        char *path;

        if (!sysctl_key_is_valid(key))
                return -EINVAL;
        desired = normalize_whitespace(value);
        path = strdup_printf("proc/sys/%s", key);
        if (!desired || !path) {
                free(path);
                return -ENOMEM;
        }
        for (char *c = path + strlen("proc/sys/"); *c; c++)
                if (*c == '.')
                        *c = '/';
        return file_setting_new(SETTING_SYSCTL, path, key, desired, ret);
}

/* Runs of white space collapse (tcp_rmem reads back with tabs). */
static int sysctl_read(Setting *s, SettingContext *rc, char *buf, size_t size, ReconcileFlags flags) {
        int r = file_setting_read(s, rc, buf, size, flags, "no such sysctl on this kernel");

        if (r < 0)
                return r;
        normalize_whitespace_in_place(buf);
        return 0;
}

static int sysctl_plan(SettingTable *t, const Host *h, const Posture *p) {
        const Config *c = p->config;

        for (size_t i = 0; i < c->n_sysctls; i++) {
                Setting *s = NULL;
                int r = setting_new_sysctl(c->sysctls[i].key, c->sysctls[i].value, &s);
                if (r >= 0)
                        r = table_add(t, s);
                if (r < 0)
                        return r;
        }
        return 0;
}

const SettingVTable sysctl_vtable = {
        FILE_SETTING_OPS,
        .object_size = sizeof(FileSetting),
        .read = sysctl_read,
        .write = file_setting_write,
        .done = file_setting_done,
        .plan = sysctl_plan,
};
