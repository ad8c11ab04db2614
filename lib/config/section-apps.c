/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* [service "NAME"] and [process "COMM"]: the latency-critical programs the audit checks
 * (lib/audit/audit-processes.c), by their unit or by their command name, and which of
 * them a running process is (apps.h). */
#include <string.h>

#include "basic/array.h"
#include "config/apps.h"
#include "config/keys.h"
#include "host/task.h"
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
        if (array_grow(&c->apps, &c->allocated_apps, c->n_apps + 1) < 0) {
                p->oom = -ENOMEM;
                return NULL;
        }
        a = c->apps;
        a[c->n_apps] = (AppSection) { .kind = kind, .name = TAKE_PTR(name), .source = config_here(p), .policy = -1 };
        return &a[c->n_apps++];
}

void *config_open_service(ConfigParse *p, const char *argument) {
        return open_app(p, APP_SERVICE, argument);
}

void *config_open_process(ConfigParse *p, const char *argument) {
        return open_app(p, APP_PROCESS, argument);
}

bool app_matches(const AppSection *app, const char *comm, const char *cgroup) {
        char unit[256];

        if (app->kind == APP_PROCESS)
                return comm && streq(comm, app->name);
        if (!cgroup || snprintf(unit, sizeof(unit), "%s.service", app->name) >= (int) sizeof(unit))
                return false;
        return cgroup_in_unit(cgroup, unit);
}

int task_match_apps(const Host *h, const Config *c, unsigned pid, const char *comm, bool *matched) {
        _cleanup_free_ char *cgroup = NULL;
        bool cgroup_read = false;
        int n = 0;

        for (size_t i = 0; i < c->n_apps; i++) {
                bool match;

                if (c->apps[i].kind == APP_SERVICE && !cgroup_read) {
                        int r = host_read_filef(h, &cgroup, "proc/%u/cgroup", pid);
                        if (r == -ENOMEM)
                                return r;
                        if (r < 0)
                                cgroup = NULL;
                        cgroup_read = true;
                }
                match = app_matches(&c->apps[i], comm, cgroup);
                if (matched)
                        matched[i] = match;
                else if (match)
                        return 1;
                n += match;
        }
        return n;
}
