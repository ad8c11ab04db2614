/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What a configuration may ask for that is valid and will hurt: each is applied as
 * written, and said as "FILE:LINE: warning: reason" by --check-config, at start and at
 * every reload (--check-config --strict refuses it). lowlatd.conf(5), WARNINGS, has the
 * rule: an error is what cannot be applied or contradicts itself; a warning is what can
 * be, where a careful operator would want to be asked first. A key set twice in one file
 * is found as it is read (reader.c); what needs the host (its CPUs, IRQs, governors and
 * lowlatd.service under its root) is posture_load()'s. */
#include <fnmatch.h>
#include <sched.h>
#include <stdarg.h>
#include <string.h>

#include "config/config.h"
#include "basic/util.h"
#include "host/task.h"
#include "host/unit-sandbox.h"

void config_warn(Config *c, const ConfigSource *where, const char *fmt, ...) {
        _cleanup_free_ char *msg = NULL;
        va_list ap;

        va_start(ap, fmt);
        msg = strdup_vprintf(fmt, ap);
        va_end(ap);
        if (!msg)
                return;
        if (where && where->file)
                (void) error_list_add(&c->warnings, "%s:%u: warning: %s", where->file, where->line, msg);
        else
                (void) error_list_add(&c->warnings, "warning: %s", msg);
}

/* The fewest characters a name matching glob has ('*' none, '?' and "[...]" one each). */
static size_t glob_min_length(const char *glob) {
        size_t n = 0;

        for (const char *s = glob; *s; s++) {
                if (*s == '*')
                        continue;
                if (*s == '\\' && s[1])
                        s++;
                else if (*s == '[') {
                        const char *end = strchr(s + 1 + (s[1] == ']'), ']');
                        if (end)
                                s = end;
                }
                n++;
        }
        return n;
}

/* A glob of stars alone: it takes in every name. */
static bool glob_is_everything(const char *glob) {
        return *glob && strspn(glob, "*") == strlen(glob);
}

/* An interface name is at most IFNAMSIZ - 1 characters. */
#define IFNAME_MAX 15

static void warn_nic_sections(Config *c) {
        for (size_t i = 0; i < c->n_nics; i++) {
                const NicSection *n = &c->nics[i];

                if (glob_min_length(n->glob) > IFNAME_MAX)
                        config_warn(c, &n->source,
                                    "[nic \"%s\"] can match no interface: its names have at most %d characters",
                                    n->glob, IFNAME_MAX);
                else if (fnmatch(n->glob, "lo", 0) == 0)
                        config_warn(c, &n->source,
                                    "[nic \"%s\"] takes in the loopback interface lo, and its settings will be "
                                    "applied to lo too; name the NICs (e.g. [nic \"eth*\"], [nic \"en*\"])",
                                    n->glob);
        }
}

static void warn_kthread_sections(Config *c) {
        for (size_t i = 0; i < c->n_kthread_sections; i++) {
                const KthreadSection *k = &c->kthread_sections[i];

                if (glob_is_everything(k->glob) && (k->policy == SCHED_FIFO || k->policy == SCHED_RR))
                        config_warn(c, &k->policy_source,
                                    "[kthread \"%s\"] makes every kernel thread real-time (%s, priority %u): the "
                                    "kworkers, ksoftirqd and RCU threads then preempt each other and the "
                                    "application by priority alone; name the threads (e.g. [kthread \"ksoftirqd/*\"])",
                                    k->glob, sched_policy_to_string(k->policy), k->priority);
        }
}

static void warn_pins(Config *c) {
        for (size_t i = 0; i < c->n_pins; i++)
                for (size_t j = i + 1; j < c->n_pins; j++)
                        if (streq(c->pins[i].glob, c->pins[j].glob) && c->pins[i].source.file == c->pins[j].source.file) {
                                config_warn(c, &c->pins[j].source,
                                            "pin: '%s' is pinned again; the last pin that matches an IRQ wins, so "
                                            "line %u's pin has no effect",
                                            c->pins[j].glob, c->pins[i].source.line);
                                break;
                        }
}

static void warn_sysctls(Config *c) {
        for (size_t i = 0; i < c->n_sysctls; i++) {
                const SysctlEntry *e = &c->sysctls[i];

                if (streq(e->key, "kernel.sched_rt_runtime_us") && streq(e->value, "-1"))
                        config_warn(c, &e->source,
                                    "kernel.sched_rt_runtime_us = -1 turns real-time throttling off: a SCHED_FIFO "
                                    "task that never sleeps then keeps its CPU from everything else (kworkers, RCU, "
                                    "lowlatd) for good; the kernel's default is 950000");
        }
}

/* The literal directories of path up to its first wildcard: what ReadWritePaths= can name
 * (it takes no patterns). */
static char *literal_directory(const char *path) {
        size_t wild = strcspn(path, "*?[");
        const char *slash;

        if (path[wild] == '\0')
                return strdup(path);
        for (slash = path + wild; slash > path && *slash != '/'; slash--)
                ;
        return strndup(path, (size_t) (slash - path));
}

void config_warn_sysfs_sandbox(Config *c, const UnitSandbox *s) {
        for (size_t i = 0; i < c->n_sysfs; i++) {
                const SysfsEntry *e = &c->sysfs[i];
                const UnitSandboxPath *by;
                _cleanup_free_ char *advice = NULL;

                if (unit_sandbox_writable(s, e->path, &by))
                        continue;
                advice = literal_directory(e->path);
                config_warn(c, &e->source,
                            "%s is outside what lowlatd.service may write (ReadOnlyPaths=%s in %s%s; no "
                            "ReadWritePaths= opens it): under the unit the write fails; add it with "
                            "systemctl edit lowlatd (ReadWritePaths=-%s)",
                            e->path, by->path, by->file, s->installed ? "" : ", none installed", advice ?: e->path);
        }
}

void config_warn_pins_isolated(Config *c, const CPUSet *isolated) {
        for (size_t i = 0; i < c->n_pins; i++) {
                _cleanup_free_ char *list = NULL;
                CPUSet on = c->pins[i].cpus;

                if (!glob_is_everything(c->pins[i].glob) || !cpuset_intersects(&on, isolated))
                        continue;
                cpuset_and(&on, isolated);
                list = cpuset_format_list(&on);
                config_warn(c, &c->pins[i].source,
                            "pin = %s puts every IRQ it takes in on isolated CPU%s %s, where the application "
                            "should run undisturbed; pin the IRQs by name (e.g. pin = eth0-rx-* 2)",
                            c->pins[i].glob, cpuset_count(&on) == 1 ? "" : "s", list ?: "?");
        }
}

void config_check_warnings(Config *c) {
        warn_pins(c);
        warn_sysctls(c);
        warn_nic_sections(c);
        warn_kthread_sections(c);
}
