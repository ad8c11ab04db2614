/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* [sysctl] NAME = VALUE and [sysfs] PATH = VALUE: keys that are names of the kernel's,
 * checked by their syntax here and against the host by the settings (lib/sysfs.c). In
 * both, a later line for the same name wins. */
#include <ctype.h>
#include <string.h>

#include "config/keys.h"
#include "sysfs.h"
#include "util.h"

bool sysctl_key_is_valid(const char *key) {
        size_t component = 0, components = 0;

        if (isempty(key) || strlen(key) > 255)
                return false;
        for (const char *p = key;; p++) {
                if (*p == '.' || *p == '\0') {
                        if (component == 0)
                                return false; /* leading, trailing or doubled dot */
                        components++;
                        component = 0;
                        if (*p == '\0')
                                break;
                        continue;
                }
                if (!isalnum((unsigned char) *p) && *p != '_' && *p != '-')
                        return false;
                component++;
        }
        return components >= 2;
}

static bool sysctl_value_is_valid(const char *value) {
        if (isempty(value) || strlen(value) > SYSCTL_VALUE_MAX)
                return false;
        for (const char *p = value; *p; p++)
                if (!isprint((unsigned char) *p) && *p != '\t')
                        return false;
        return true;
}

int config_assign_sysctl(ConfigParse *p, const char *key, const char *value, void *object) {
        Config *c = object;
        SysctlEntry *e = NULL;
        char *v;

        if (!sysctl_key_is_valid(key)) {
                config_error(p, "'%s' is not a sysctl name (dotted, e.g. net.core.busy_poll; no '/' or '..')", key);
                return 0;
        }
        if (!sysctl_value_is_valid(value)) {
                config_error(p, "%s: value must be 1 to %d printable characters", key, SYSCTL_VALUE_MAX);
                return 0;
        }
        for (size_t i = 0; i < c->n_sysctls; i++)
                if (streq(c->sysctls[i].key, key))
                        e = &c->sysctls[i];
        if (!e) {
                SysctlEntry *a = realloc(c->sysctls, (c->n_sysctls + 1) * sizeof(SysctlEntry));
                if (!a)
                        return p->oom = -ENOMEM;
                c->sysctls = a;
                e = &c->sysctls[c->n_sysctls];
                *e = (SysctlEntry) { .key = strdup(key) };
                if (!e->key)
                        return p->oom = -ENOMEM;
                c->n_sysctls++;
        }
        v = strdup(value);
        if (!v)
                return p->oom = -ENOMEM;
        free(e->value);
        e->value = v;
        e->source = config_here(p);
        return 0;
}

int config_assign_sysfs(ConfigParse *p, const char *path, const char *value, void *object) {
        Config *c = object;
        SysfsEntry *e = NULL;
        const char *problem;
        char *v;

        problem = sysfs_path_problem(path);
        if (problem) {
                config_error(p, "%s %s", path, problem);
                return 0;
        }
        problem = sysfs_value_problem(value);
        if (problem) {
                config_error(p, "%s: %s", path, problem);
                return 0;
        }
        for (size_t i = 0; i < c->n_sysfs; i++)
                if (streq(c->sysfs[i].path, path))
                        e = &c->sysfs[i];
        if (!e) {
                SysfsEntry *a = realloc(c->sysfs, (c->n_sysfs + 1) * sizeof(SysfsEntry));
                if (!a)
                        return p->oom = -ENOMEM;
                c->sysfs = a;
                e = &c->sysfs[c->n_sysfs];
                *e = (SysfsEntry) { .path = strdup(path) };
                if (!e->path)
                        return p->oom = -ENOMEM;
                c->n_sysfs++;
        }
        v = strdup(value);
        if (!v)
                return p->oom = -ENOMEM;
        free(e->value);
        e->value = v;
        e->source = config_here(p);
        return 0;
}
