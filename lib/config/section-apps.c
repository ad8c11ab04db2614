/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* [service "NAME"] and [process "COMM"]: the latency-critical programs the audit checks
 * (lib/audit/audit-processes.c), by their unit or by their command name. */
#include <string.h>

#include "config/keys.h"
#include "basic/util.h"

static void *open_app(ConfigParse *p, AppKind kind, const char *argument) {
        Config *c = p->config;
        _cleanup_free_ char *name = strdup(argument);
        AppSection *a;
        bool valid;

        if (!name) {
                p->oom = -ENOMEM;
                return NULL;
        }
        /* A unit name (without .service), or a comm: TASK_COMM_LEN is 16 with the NUL. */
        if (kind == APP_SERVICE) {
                size_t n = strlen(name);
                if (n > 8 && streq(name + n - 8, ".service"))
                        name[n - 8] = '\0';
                valid = config_unit_name_is_valid(name, 247);
        } else
                valid = strlen(name) > 0 && strlen(name) <= 15 && utf8_is_valid(name);
        if (!valid) {
                config_error(p, "'%s' is not a valid %s", name,
                             kind == APP_SERVICE ? "unit name" : "process name (at most 15 characters)");
                return NULL;
        }
        a = realloc(c->apps, (c->n_apps + 1) * sizeof(AppSection));
        if (!a) {
                p->oom = -ENOMEM;
                return NULL;
        }
        c->apps = a;
        a[c->n_apps] = (AppSection) { .kind = kind, .name = TAKE_PTR(name), .source = config_here(p), .policy = -1 };
        return &a[c->n_apps++];
}

void *config_open_service(ConfigParse *p, const char *argument) {
        return open_app(p, APP_SERVICE, argument);
}

void *config_open_process(ConfigParse *p, const char *argument) {
        return open_app(p, APP_PROCESS, argument);
}
