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

/* Words that are all decimal integers (tcp_rmem's three, somaxconn's one). */
static bool all_integers(const char *value) {
        bool any = false;

        for (const char *p = value; *p;) {
                p += strspn(p, " \t");
                if (!*p)
                        break;
                if (*p == '-')
                        p++;
                size_t n = strspn(p, "0123456789");
                if (n == 0 || (p[n] && !strchr(" \t", p[n])))
                        return false;
                p += n;
                any = true;
        }
        return any;
}

/* An original follows the rule of a [sysctl] value; and where the value asked for is
 * numbers, so is the one the kernel had (the same file reads the same shape). */
static const char *sysctl_original_problem(const Setting *s, SettingContext *rc, const char *value) {
        (void) rc;
        if (isempty(value))
                return NULL; /* a sysctl may read empty */
        if (!sysctl_value_is_valid(value))
                return "not a sysctl value";
        if (all_integers(s->desired) && !all_integers(value))
                return "not numbers, as this sysctl reads";
        return NULL;
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
        .original_problem = sysctl_original_problem,
        .done = file_setting_done,
        .plan = sysctl_plan,
};
