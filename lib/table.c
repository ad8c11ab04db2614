/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The table of settings in force. */
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <string.h>

#include "table.h"
#include "util.h"

void table_init(SettingTable *t, const SettingTableHooks *hooks) {
        *t = (SettingTable) {};
        if (hooks)
                t->hooks = *hooks;
}

static void table_drop(SettingTable *t, size_t i) {
        Setting *s = t->settings[i];

        if (t->hooks.removed)
                t->hooks.removed(t->hooks.userdata, s);
        if (s->kind == SETTING_IRQ_AFFINITY) {
                unsigned irq = (unsigned) strtoul(s->object, NULL, 10);
                if (irq < t->n_by_irq && t->by_irq[irq] == s)
                        t->by_irq[irq] = NULL;
        }
        setting_free(s);
        /* Keep the order (ListSettings shows it); IRQs vanish rarely. */
        memmove(t->settings + i, t->settings + i + 1, (t->n - i - 1) * sizeof(Setting *));
        t->n--;
}

void table_done(SettingTable *t) {
        while (t->n > 0)
                table_drop(t, t->n - 1);
        free(t->settings);
        free(t->by_irq);
        irq_names_done(&t->names);
        *t = (SettingTable) {};
}

int table_add(SettingTable *t, Setting *s) {
        if (t->n == t->allocated) {
                size_t n = t->allocated ? t->allocated * 2 : 64;
                Setting **a = realloc(t->settings, n * sizeof(Setting *));
                if (!a)
                        return -ENOMEM;
                t->settings = a;
                t->allocated = n;
        }
        if (s->kind == SETTING_IRQ_AFFINITY) {
                unsigned irq = (unsigned) strtoul(s->object, NULL, 10);
                if (irq >= t->n_by_irq) {
                        size_t n = MAX((size_t) irq + 1, t->n_by_irq * 2);
                        Setting **a = realloc(t->by_irq, n * sizeof(Setting *));
                        if (!a)
                                return -ENOMEM;
                        memset(a + t->n_by_irq, 0, (n - t->n_by_irq) * sizeof(Setting *));
                        t->by_irq = a;
                        t->n_by_irq = n;
                }
                t->by_irq[irq] = s;
        }
        t->settings[t->n++] = s;
        if (t->hooks.added)
                t->hooks.added(t->hooks.userdata, s);
        return 0;
}

static int add_or_free(SettingTable *t, Setting *s) {
        int r = table_add(t, s);
        if (r < 0)
                setting_free(s);
        return r;
}

int table_plan_static(SettingTable *t, const Posture *p) {
        const Config *c = p->config;
        Setting *s;
        int r;

        /* With nothing isolated and no explicit default there is nothing to keep new IRQs
         * away from; leave the boot-time irqaffinity= choice alone. */
        if (!cpuset_is_empty(&p->isolated) || !c->default_affinity_is_housekeeping) {
                r = setting_new_default_affinity(p, &s);
                if (r < 0 || (r = add_or_free(t, s)) < 0)
                        return r;
        }
        if (c->cpu_dma_latency_enabled) {
                r = setting_new_cpu_dma_latency(c->cpu_dma_latency_usec, &s);
                if (r < 0 || (r = add_or_free(t, s)) < 0)
                        return r;
        }
        if (c->governor)
                CPUSET_FOREACH(cpu, &p->online) {
                        r = setting_new_governor((unsigned) cpu, c->governor, &s);
                        if (r < 0 || (r = add_or_free(t, s)) < 0)
                                return r;
                }
        for (size_t i = 0; i < c->n_sysctls; i++) {
                r = setting_new_sysctl(c->sysctls[i].key, c->sysctls[i].value, &s);
                if (r < 0 || (r = add_or_free(t, s)) < 0)
                        return r;
        }
        return 0;
}

static bool parse_irq_dirent(const char *name, unsigned *ret) {
        unsigned v = 0;

        if (!isdigit((unsigned char) *name))
                return false;
        for (; *name; name++) {
                if (!isdigit((unsigned char) *name))
                        return false;
                v = v * 10 + (unsigned) (*name - '0');
                if (v >= IRQ_NUMBER_MAX)
                        return false;
        }
        *ret = v;
        return true;
}

static int compare_irq_settings(const void *a, const void *b) {
        unsigned x = (unsigned) strtoul((*(Setting *const *) a)->object, NULL, 10);
        unsigned y = (unsigned) strtoul((*(Setting *const *) b)->object, NULL, 10);
        return x < y ? -1 : x > y;
}

int table_scan_irqs(SettingTable *t, const Host *h, const Posture *p) {
        _cleanup_close_ int fd = -1;
        DIR *dir;
        struct dirent *de;
        bool names_loaded = false;
        int present = 0, added = 0, r = 0;

        /* With pins, names decide targets, and a driver can request an IRQ long after it
         * was allocated: read /proc/interrupts once per scan. Without pins, never. */
        if (p->config->n_pins > 0) {
                _cleanup_free_ char *text = NULL;
                if (host_read_file(h, "proc/interrupts", &text) >= 0)
                        (void) irq_names_parse(text, &t->names);
                names_loaded = true;
                for (size_t i = 0; i < t->n; i++) {
                        Setting *s = t->settings[i];
                        const char *name;
                        if (s->kind != SETTING_IRQ_AFFINITY)
                                continue;
                        name = irq_names_lookup(&t->names, (unsigned) strtoul(s->object, NULL, 10));
                        if (!streq_ptr(name, s->label) && setting_irq_retarget(p, s, name) < 0)
                                return -ENOMEM;
                }
        }

        fd = host_open_file(h, "proc/irq", O_RDONLY | O_DIRECTORY);
        if (fd < 0)
                return fd;
        dir = fdopendir(fd);
        if (!dir)
                return negative_errno();
        fd = -1; /* owned by dir */

        for (size_t i = 0; i < t->n; i++)
                t->settings[i]->seen = t->settings[i]->kind != SETTING_IRQ_AFFINITY;

        while ((de = readdir(dir))) {
                unsigned irq;
                Setting *s;

                if (!parse_irq_dirent(de->d_name, &irq))
                        continue;
                present++;
                if (irq < t->n_by_irq && t->by_irq[irq]) {
                        t->by_irq[irq]->seen = true;
                        continue;
                }
                /* A new IRQ: its name decides whether a pin applies. Read /proc/interrupts
                 * once per scan that finds new IRQs, not once per IRQ. */
                if (!names_loaded && p->config->n_pins > 0) {
                        _cleanup_free_ char *text = NULL;
                        if (host_read_file(h, "proc/interrupts", &text) >= 0)
                                (void) irq_names_parse(text, &t->names);
                        names_loaded = true;
                }
                r = setting_new_irq(p, irq, irq_names_lookup(&t->names, irq), &s);
                if (r < 0)
                        break;
                s->seen = true;
                r = add_or_free(t, s);
                if (r < 0)
                        break;
                added++;
        }
        closedir(dir);
        if (r < 0)
                return r;

        for (size_t i = t->n; i > 0; i--)
                if (!t->settings[i - 1]->seen)
                        table_drop(t, i - 1);
        /* Static settings first, then IRQs in numeric order: what ListSettings shows. A
         * stable order matters more than the sort's cost, paid only when IRQs appear. */
        if (added > 0) {
                size_t first = 0;
                while (first < t->n && t->settings[first]->kind != SETTING_IRQ_AFFINITY)
                        first++;
                qsort(t->settings + first, t->n - first, sizeof(Setting *), compare_irq_settings);
        }
        return present;
}

void table_reconcile_one(SettingTable *t, Reconciler *rc, Setting *s, uint64_t now, bool force) {
        if (setting_reconcile(rc, s, now, force) != -ENOENT)
                return;
        for (size_t i = 0; i < t->n; i++)
                if (t->settings[i] == s) {
                        table_drop(t, i);
                        return;
                }
}

void table_reconcile_all(SettingTable *t, Reconciler *rc, uint64_t now, bool force) {
        for (size_t i = t->n; i > 0; i--) {
                Setting *s = t->settings[i - 1];
                if (setting_reconcile(rc, s, now, force) == -ENOENT)
                        table_drop(t, i - 1);
                else
                        setting_tick(rc, s, now);
        }
}

void table_inherit(SettingTable *t, SettingTable *old) {
        for (size_t i = 0; i < t->n; i++) {
                Setting *n = t->settings[i];
                for (size_t j = 0; j < old->n; j++) {
                        Setting *o = old->settings[j];
                        if (o->kind == n->kind && streq(o->object, n->object)) {
                                setting_inherit(n, o);
                                break;
                        }
                }
        }
        table_done(old);
}

void table_count(const SettingTable *t, size_t counts[_SETTING_STATE_MAX]) {
        memset(counts, 0, sizeof(size_t) * _SETTING_STATE_MAX);
        for (size_t i = 0; i < t->n; i++)
                counts[t->settings[i]->state]++;
}
