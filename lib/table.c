/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The table of settings in force. */
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <string.h>

#include "nic.h"
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
        for (size_t i = 0; i < t->n_nic_pins; i++) {
                free(t->nic_pins[i].irqs);
                cpuset_done(&t->nic_pins[i].cpus);
        }
        free(t->nic_pins);
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
        /* With no isolated CPU no task can stray onto one. */
        if (c->evict_strays && !cpuset_is_empty(&p->isolated)) {
                r = setting_new_stray_tasks(p, &s);
                if (r < 0 || (r = add_or_free(t, s)) < 0)
                        return r;
        }
        return 0;
}

int table_plan_cpuidle(SettingTable *t, const Host *h, const Posture *p) {
        const Config *c = p->config;
        int r;

        if (!c->cpu_dma_latency_enabled)
                return 0;
        CPUSET_FOREACH(cpu, &p->isolated) {
                for (unsigned state = 0; state < 64; state++) {
                        _cleanup_free_ char *dir = strdup_printf("sys/devices/system/cpu/cpu%d/cpuidle/state%u", cpu, state);
                        _cleanup_free_ char *lat_path = NULL, *latency = NULL, *name_path = NULL, *name = NULL;
                        uint64_t usec;
                        Setting *s;

                        if (!dir)
                                return -ENOMEM;
                        lat_path = strdup_printf("%s/latency", dir);
                        name_path = strdup_printf("%s/name", dir);
                        if (!lat_path || !name_path)
                                return -ENOMEM;
                        if (host_read_file(h, lat_path, &latency) < 0)
                                break; /* states are numbered from 0 without gaps */
                        if (parse_uint64(strstrip(latency), &usec) < 0 || usec <= (uint64_t) c->cpu_dma_latency_usec)
                                continue;
                        if (host_read_file(h, name_path, &name) >= 0)
                                strstrip(name);
                        r = setting_new_cpuidle((unsigned) cpu, state, name ? strstrip(name) : NULL, &s);
                        if (r < 0 || (r = add_or_free(t, s)) < 0)
                                return r;
                }
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

static unsigned setting_irq_number(const Setting *s) {
        return (unsigned) strtoul(s->object, NULL, 10);
}

/* ListSettings order: host-wide settings by kind, then each NIC's, then IRQs by number. */
static int compare_settings(const void *a, const void *b) {
        const Setting *x = *(Setting *const *) a, *y = *(Setting *const *) b;
        bool xi = x->kind == SETTING_IRQ_AFFINITY, yi = y->kind == SETTING_IRQ_AFFINITY;

        if (xi != yi)
                return xi ? 1 : -1;
        if (xi) {
                unsigned u = setting_irq_number(x), v = setting_irq_number(y);
                return u < v ? -1 : u > v;
        }
        if (setting_kind_is_nic(x->kind) != setting_kind_is_nic(y->kind))
                return setting_kind_is_nic(x->kind) ? 1 : -1;
        if (x->ifindex != y->ifindex)
                return x->ifindex < y->ifindex ? -1 : 1;
        if (x->kind != y->kind)
                return x->kind < y->kind ? -1 : 1;
        return strcmp(x->object, y->object);
}

static void table_sort(SettingTable *t) {
        qsort(t->settings, t->n, sizeof(Setting *), compare_settings);
}

/* A NIC's irq_cpus wins over [irq] pins, which win over "stay off the isolated CPUs". */
static const CPUSet *table_nic_pin(const SettingTable *t, unsigned irq) {
        for (size_t i = 0; i < t->n_nic_pins; i++)
                for (size_t j = 0; j < t->nic_pins[i].n_irqs; j++)
                        if (t->nic_pins[i].irqs[j] == irq)
                                return &t->nic_pins[i].cpus;
        return NULL;
}

static int table_irq_target(const SettingTable *t, const Posture *p, Setting *s, const char *name) {
        const CPUSet *nic = table_nic_pin(t, setting_irq_number(s));
        const IrqPin *pin;

        if (nic)
                return setting_irq_set_target(s, name, nic, true);
        pin = posture_irq_pin(p, name);
        return setting_irq_set_target(s, name, pin ? &pin->cpus : &p->housekeeping, pin != NULL);
}

static bool table_wants_names(const SettingTable *t, const Posture *p) {
        return p->config->n_pins > 0 || t->n_nic_pins > 0;
}

static void table_load_names(SettingTable *t, const Host *h) {
        _cleanup_free_ char *text = NULL;

        if (host_read_file(h, "proc/interrupts", &text) >= 0)
                (void) irq_names_parse(text, &t->names);
}

/* Every IRQ's target again (after names or NIC pins changed). */
static int table_retarget_irqs(SettingTable *t, const Posture *p) {
        for (size_t i = 0; i < t->n; i++) {
                Setting *s = t->settings[i];
                int r;
                if (s->kind != SETTING_IRQ_AFFINITY)
                        continue;
                r = table_irq_target(t, p, s, irq_names_lookup(&t->names, setting_irq_number(s)));
                if (r < 0)
                        return r;
        }
        return 0;
}

int table_scan_irqs(SettingTable *t, const Host *h, const Posture *p) {
        _cleanup_close_ int fd = -1;
        DIR *dir;
        struct dirent *de;
        int present = 0, added = 0, r = 0;

        /* With pins, names decide targets, and a driver can request an IRQ long after it
         * was allocated: read /proc/interrupts once per scan. Without pins, never. */
        if (table_wants_names(t, p)) {
                table_load_names(t, h);
                r = table_retarget_irqs(t, p);
                if (r < 0)
                        return r;
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
                r = setting_new_irq(p, irq, NULL, &s);
                if (r >= 0 && table_wants_names(t, p))
                        r = table_irq_target(t, p, s, irq_names_lookup(&t->names, irq));
                if (r < 0) {
                        setting_free(s);
                        break;
                }
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
        /* A stable order is what ListSettings shows; the sort is paid only when IRQs appear. */
        if (added > 0)
                table_sort(t);
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

/* Forgets an interface's irq_cpus; true when it had some (IRQs need a new target). */
static bool table_unpin_nic(SettingTable *t, int ifindex) {
        bool pinned = false;

        for (size_t i = t->n_nic_pins; i > 0; i--)
                if (t->nic_pins[i - 1].ifindex == ifindex) {
                        free(t->nic_pins[i - 1].irqs);
                        cpuset_done(&t->nic_pins[i - 1].cpus);
                        t->nic_pins[i - 1] = t->nic_pins[--t->n_nic_pins];
                        pinned = true;
                }
        return pinned;
}

/* The IRQs of one interface: its device's MSI vectors, and the /proc/interrupts action
 * names that are the interface's name or start with it and a dash (eth0-TxRx-3). */
static int nic_collect_irqs(const SettingTable *t, const Host *h, const char *ifname, unsigned **ret, size_t *ret_n) {
        _cleanup_free_ char *path = strdup_printf("sys/class/net/%s/device/msi_irqs", ifname);
        _cleanup_free_ unsigned *irqs = NULL;
        size_t n = 0, cap = 0, len = strlen(ifname);
        int fd;

        if (!path)
                return -ENOMEM;
#define ADD_IRQ(v)                                                                   \
        do {                                                                         \
                if (n == cap) {                                                      \
                        unsigned *a_ = realloc(irqs, (cap = cap ? cap * 2 : 16) * sizeof(unsigned)); \
                        if (!a_)                                                     \
                                return -ENOMEM;                                      \
                        irqs = a_;                                                   \
                }                                                                    \
                irqs[n++] = (v);                                                     \
        } while (0)

        fd = host_open_file(h, path, O_RDONLY | O_DIRECTORY);
        if (fd >= 0) {
                DIR *dir = fdopendir(fd);
                struct dirent *de;
                unsigned irq;

                if (!dir) {
                        safe_close(fd);
                        return -ENOMEM;
                }
                while ((de = readdir(dir)))
                        if (parse_irq_dirent(de->d_name, &irq))
                                ADD_IRQ(irq);
                closedir(dir);
        }
        for (size_t i = 0; i < t->names.n; i++) {
                const char *name = t->names.names[i];
                if (strncmp(name, ifname, len) == 0 && (name[len] == '\0' || name[len] == '-' || name[len] == ','))
                        ADD_IRQ(t->names.irqs[i]);
        }
#undef ADD_IRQ
        *ret = TAKE_PTR(irqs);
        *ret_n = n;
        return 0;
}

/* The same NIC setting under another name (a rename): same interface, kind and key. */
static bool nic_setting_same_key(const Setting *a, const Setting *b) {
        return a->kind == b->kind && a->ifindex == b->ifindex && a->param == b->param &&
               streq_ptr(a->feature, b->feature);
}

int table_plan_nic(SettingTable *t, const Host *h, const Posture *p, int ifindex, const char *ifname) {
        _cleanup_free_ Setting **old = NULL;
        size_t n_old = 0, first_new;
        bool unpinned;
        NicPosture np;
        Setting *s;
        int r;

        /* Replanning an interface (renamed, up again) keeps what was learnt about each of
         * its settings: an unsupported one is not reported again, a fight goes on. */
        for (size_t i = 0; i < t->n; i++)
                n_old += setting_kind_is_nic(t->settings[i]->kind) && t->settings[i]->ifindex == ifindex;
        if (n_old > 0) {
                old = malloc(n_old * sizeof(Setting *));
                if (!old)
                        return -ENOMEM;
                n_old = 0;
                for (size_t i = t->n; i > 0; i--)
                        if (setting_kind_is_nic(t->settings[i - 1]->kind) && t->settings[i - 1]->ifindex == ifindex) {
                                old[n_old++] = t->settings[i - 1];
                                memmove(t->settings + i - 1, t->settings + i, (t->n - i) * sizeof(Setting *));
                                t->n--;
                        }
        }
        first_new = t->n;
        unpinned = table_unpin_nic(t, ifindex);

        r = nic_posture_resolve(p->config, ifname, &np);
        if (r <= 0)
                goto done;

        for (int k = 0; k < _ETHTOOL_PARAM_MAX; k++)
                if (np.param_set[k]) {
                        r = setting_new_nic_param(ifindex, ifname, (EthtoolParam) k, np.param[k], &s);
                        if (r < 0 || (r = add_or_free(t, s)) < 0)
                                goto out;
                }
        for (size_t f = 0; f < np.n_features; f++) {
                r = setting_new_nic_feature(ifindex, ifname, np.features[f]->name, np.features[f]->on, &s);
                if (r < 0 || (r = add_or_free(t, s)) < 0)
                        goto out;
        }
        if (np.qdisc) {
                r = setting_new_nic_qdisc(ifindex, ifname, np.qdisc, &s);
                if (r < 0 || (r = add_or_free(t, s)) < 0)
                        goto out;
        }
        if (np.irq_cpus) {
                NicIrqPin pin = { .ifindex = ifindex };
                NicIrqPin *a;

                table_load_names(t, h);
                r = nic_collect_irqs(t, h, ifname, &pin.irqs, &pin.n_irqs);
                if (r >= 0)
                        r = cpuset_copy(&pin.cpus, np.irq_cpus);
                a = r < 0 ? NULL : realloc(t->nic_pins, (t->n_nic_pins + 1) * sizeof(NicIrqPin));
                if (!a) {
                        free(pin.irqs);
                        cpuset_done(&pin.cpus);
                        r = -ENOMEM;
                        goto out;
                }
                t->nic_pins = a;
                t->nic_pins[t->n_nic_pins++] = pin;
                r = table_retarget_irqs(t, p);
                if (r < 0)
                        goto out;
        }
        r = 1;
out:
        nic_posture_done(&np);
done:
        for (size_t i = first_new; i < t->n; i++)
                for (size_t j = 0; j < n_old; j++)
                        if (old[j] && nic_setting_same_key(t->settings[i], old[j])) {
                                Setting *n = t->settings[i];
                                if (streq(n->desired, old[j]->desired)) {
                                        n->state = old[j]->state;
                                        n->reason = TAKE_PTR(old[j]->reason);
                                        n->observed = TAKE_PTR(old[j]->observed);
                                        n->fighting = old[j]->fighting;
                                        memcpy(n->corrections_at, old[j]->corrections_at, sizeof(n->corrections_at));
                                        n->corrections_pos = old[j]->corrections_pos;
                                        n->last_correction_usec = old[j]->last_correction_usec;
                                        n->last_drift_usec = old[j]->last_drift_usec;
                                }
                                break;
                        }
        for (size_t j = 0; j < n_old; j++) {
                if (t->hooks.removed)
                        t->hooks.removed(t->hooks.userdata, old[j]);
                setting_free(old[j]);
        }
        if (r >= 0 && unpinned && table_retarget_irqs(t, p) < 0)
                r = -ENOMEM;
        if (r >= 0)
                table_sort(t);
        return r;
}

int table_drop_nic(SettingTable *t, const Posture *p, int ifindex) {
        for (size_t i = t->n; i > 0; i--)
                if (setting_kind_is_nic(t->settings[i - 1]->kind) && t->settings[i - 1]->ifindex == ifindex)
                        table_drop(t, i - 1);
        return table_unpin_nic(t, ifindex) ? table_retarget_irqs(t, p) : 0;
}

bool table_has_nic(const SettingTable *t, int ifindex) {
        for (size_t i = 0; i < t->n; i++)
                if (setting_kind_is_nic(t->settings[i]->kind) && t->settings[i]->ifindex == ifindex)
                        return true;
        for (size_t i = 0; i < t->n_nic_pins; i++)
                if (t->nic_pins[i].ifindex == ifindex)
                        return true;
        return false;
}
