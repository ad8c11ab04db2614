/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* [sysctl] NAME = VALUE and [sysfs] PATH = VALUE: keys that are names of the kernel's,
 * checked by their syntax here and against the host by the settings (lib/host/sysfs.c). In
 * both, a later line for the same name wins. */
#include <ctype.h>
#include <stddef.h>
#include <string.h>

#include "basic/array.h"
#include "config/keys.h"
#include "host/sysfs.h"
#include "basic/util.h"

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

bool sysctl_value_is_valid(const char *value) {
        if (isempty(value) || strlen(value) > SYSCTL_VALUE_MAX)
                return false;
        for (const char *p = value; *p; p++)
                if (!isprint((unsigned char) *p) && *p != '\t')
                        return false;
        return true;
}

/* SysctlEntry and SysfsEntry are one shape: a name (the sysctl, the path), its value, and
 * where it was written. One function keeps both arrays. */
typedef struct NamedValue {
        char *name;
        char *value;
        ConfigSource source;
} NamedValue;
_Static_assert(sizeof(SysctlEntry) == sizeof(NamedValue) && offsetof(SysctlEntry, key) == offsetof(NamedValue, name) &&
                       offsetof(SysctlEntry, value) == offsetof(NamedValue, value) &&
                       offsetof(SysctlEntry, source) == offsetof(NamedValue, source),
               "SysctlEntry is a NamedValue");
_Static_assert(sizeof(SysfsEntry) == sizeof(NamedValue) && offsetof(SysfsEntry, path) == offsetof(NamedValue, name) &&
                       offsetof(SysfsEntry, value) == offsetof(NamedValue, value) &&
                       offsetof(SysfsEntry, source) == offsetof(NamedValue, source),
               "SysfsEntry is a NamedValue");

/* Gives name this value: the entry already there (a later line wins), or a new one. */
static int named_value_set(ConfigParse *p, NamedValue **entries, size_t *n, size_t *allocated, const char *name,
                           const char *value) {
        NamedValue *e = NULL;
        char *v;

        for (size_t i = 0; i < *n; i++)
                if (streq((*entries)[i].name, name))
                        e = &(*entries)[i];
        /* Within one file, as for every key (reader.c); a drop-in overrides in silence. */
        if (e && e->source.file == p->file)
                config_warning(p, "%s is set again; this line replaces line %u's value", name, e->source.line);
        if (!e) {
                if (array_grow(entries, allocated, *n + 1) < 0)
                        return p->oom = -ENOMEM;
                e = &(*entries)[*n];
                *e = (NamedValue) { .name = strdup(name) };
                if (!e->name)
                        return p->oom = -ENOMEM;
                (*n)++;
        }
        v = strdup(value);
        if (!v)
                return p->oom = -ENOMEM;
        free(e->value);
        e->value = v;
        e->source = config_here(p);
        return 0;
}

int config_assign_sysctl(ConfigParse *p, const char *key, const char *value, void *object) {
        Config *c = object;

        if (!sysctl_key_is_valid(key)) {
                config_error(p, "'%s' is not a sysctl name (dotted, e.g. net.core.busy_poll; no '/' or '..')", key);
                return 0;
        }
        if (!sysctl_value_is_valid(value)) {
                config_error(p, "%s: value must be 1 to %d printable characters", key, SYSCTL_VALUE_MAX);
                return 0;
        }
        return named_value_set(p, (NamedValue **) &c->sysctls, &c->n_sysctls, &c->allocated_sysctls, key, value);
}

int config_assign_sysfs(ConfigParse *p, const char *path, const char *value, void *object) {
        Config *c = object;
        const char *problem;

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
        return named_value_set(p, (NamedValue **) &c->sysfs, &c->n_sysfs, &c->allocated_sysfs, path, value);
}
