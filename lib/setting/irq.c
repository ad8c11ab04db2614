/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* irq_affinity: one setting per IRQ in /proc/irq. Unpinned IRQs must stay off the
 * isolated CPUs; pinned ones ([irq] pin, a NIC's irq_cpus) must be exactly on their pin.
 * The kernel's refusal to move one (EIO for managed IRQs, EPERM since 6.12, a read-only
 * file) makes it unmovable. Also the table's IRQ listing, the names pins match on, and
 * the detection of another program rewriting IRQ affinities. */
#include <dirent.h>
#include <fcntl.h>
#include <string.h>

#include "basic/array.h"
#include "host/interrupts.h"
#include "setting/file.h"
#include "setting/irq.h"
#include "basic/util.h"

typedef struct IrqSetting {
        FileSetting file_setting; /* smp_affinity_list */
        unsigned irq;
        CPUSet cpus; /* the target */
        bool exact;  /* pinned: the affinity must equal cpus */
} IrqSetting;

#define IRQ(s) ((IrqSetting *) (s))
#define IRQ_FILE(s) (&IRQ(s)->file_setting.file)

bool setting_is_irq(const Setting *s, unsigned *ret_irq) {
        if (s->kind != SETTING_IRQ_AFFINITY)
                return false;
        if (ret_irq)
                *ret_irq = IRQ(s)->irq;
        return true;
}

bool setting_irq_is_exact(const Setting *s) {
        return IRQ(s)->exact;
}

int setting_irq_fd(const Setting *s) {
        return IRQ_FILE(s)->fd;
}

int setting_new_irq(const Posture *p, unsigned irq, const char *irq_name, Setting **ret) {
        char object[16];
        _cleanup_(setting_freep) Setting *s = NULL;
        const IrqPin *pin = posture_irq_pin(p, irq_name);
        _cleanup_free_ char *desired = NULL;

        snprintf(object, sizeof(object), "%u", irq);
        s = setting_alloc(SETTING_IRQ_AFFINITY, object);
        if (!s)
                return -ENOMEM;
        IRQ(s)->irq = irq;
        setting_file_init(IRQ_FILE(s), strdup_printf("proc/irq/%u/smp_affinity_list", irq));
        IRQ(s)->exact = pin != NULL;
        if (!IRQ_FILE(s)->path || cpuset_copy(&IRQ(s)->cpus, pin ? &pin->cpus : &p->housekeeping) < 0)
                return -ENOMEM;
        desired = cpuset_format_list(&IRQ(s)->cpus);
        if (!desired || setting_set_desired(s, desired) < 0)
                return -ENOMEM;
        if (irq_name && !(s->label = strdup(irq_name)))
                return -ENOMEM;
        *ret = TAKE_PTR(s);
        return 0;
}

int setting_irq_set_target(Setting *s, const char *irq_name, const CPUSet *cpus, bool exact) {
        IrqSetting *q = IRQ(s);
        _cleanup_free_ char *label = NULL, *desired = NULL;

        if (q->exact == exact && streq_ptr(s->label, irq_name) && cpuset_equal(&q->cpus, cpus))
                return 0;
        if (irq_name && !(label = strdup(irq_name)))
                return -ENOMEM;
        if (cpuset_copy(&q->cpus, cpus) < 0 || !(desired = cpuset_format_list(&q->cpus)))
                return -ENOMEM;
        free(s->label);
        s->label = TAKE_PTR(label);
        free(s->desired);
        s->desired = TAKE_PTR(desired);
        q->exact = exact;
        /* A new target: look at it afresh, as if just found. */
        s->observed = mfree(s->observed);
        if (s->state != SETTING_UNMOVABLE)
                setting_set_state(s, SETTING_PENDING);
        return 1;
}

int setting_irq_retarget(const Posture *p, Setting *s, const char *irq_name) {
        const IrqPin *pin = posture_irq_pin(p, irq_name);
        return setting_irq_set_target(s, irq_name, pin ? &pin->cpus : &p->housekeeping, pin != NULL);
}

/* --- the operations --- */

static int irq_read(Setting *s, SettingContext *rc, char *buf, size_t size, ReconcileFlags flags) {
        int r;

        r = setting_file_read(IRQ_FILE(s), rc, buf, size, flags);
        /* A freed IRQ reads as ENOENT, or as EIO/ENODEV through an old fd: gone, and the
         * directory scan agrees. */
        if (r == -ENOENT || r == -ENODEV || r == -EIO)
                return -ENOENT;
        if (r < 0)
                setting_set_reason(s, "reading /%s failed: %s", IRQ_FILE(s)->path, strerror(-r));
        return r;
}

static bool irq_matches(Setting *s, SettingContext *rc) {
        IrqSetting *q = IRQ(s);

        /* An IRQ is judged by the affinity asked for, never by the effective CPU: that is
         * the one the chip picked from it, and without interrupt remapping x86 moves it
         * only at the IRQ's next interrupt, which for a quiet device may be never. Writing
         * the same list again cannot hurry it, so a lagging effective CPU is not drift; it
         * stays visible where people look (describe_observed). */
        return setting_affinity_matches(rc, s->observed, q->exact ? &q->cpus : NULL);
}

/* An original is what smp_affinity_list read: a CPU list, not empty, of this host's
 * possible CPUs (an affinity may keep one that is offline now). Read at restore only. */
static const char *irq_original_problem(const Setting *s, SettingContext *rc, const char *value) {
        (void) s;
        return setting_cpu_list_problem(rc, value, false);
}

/* A read-only smp_affinity_list is the kernel's no before any write; a managed IRQ's
 * (EIO) comes only with one. */
static int irq_refuses(Setting *s, SettingContext *rc) {
        if (setting_file_is_read_only(IRQ_FILE(s))) {
                setting_set_reason(s, "smp_affinity_list is read-only (the kernel does not allow moving this IRQ)");
                return -EPERM;
        }
        return 0;
}

static int irq_write(Setting *s, SettingContext *rc, const char *value) {
        int r;

        r = irq_refuses(s, rc);
        if (r < 0)
                return r;
        r = host_write_file(rc->host, IRQ_FILE(s)->path, value);
        if (r >= 0 || r == -ENOENT)
                return r;
        /* EINVAL is also the kernel's answer to a mask with no online CPU: while the target
         * CPUs are offline that is a passing state, not an unmovable IRQ. */
        if (r == -EINVAL && cpuset_parse_list(value, &rc->scratch) >= 0 && setting_cpus_offline(s, rc, &rc->scratch))
                return -EAGAIN;
        if (r == -EIO || r == -EINVAL || r == -EPERM || r == -EACCES) {
                setting_set_reason(s, "the kernel refused the new affinity: %s%s", strerror(-r),
                                   r == -EIO ? " (managed or per-CPU IRQ)" : "");
                return -EPERM;
        }
        setting_set_reason(s, "writing /%s failed: %s", IRQ_FILE(s)->path, strerror(-r));
        return r;
}

/* Opened for each look, not kept: people ask rarely (ListSettings, a report), and a
 * persistent fd per IRQ would double what the scan holds for nothing. */
int setting_irq_effective(const Setting *s, const Host *h, CPUSet *ret) {
        _cleanup_close_ int fd = -1;
        char buf[256], path[64];
        ssize_t n;

        snprintf(path, sizeof(path), "proc/irq/%u/effective_affinity_list", IRQ(s)->irq);
        fd = host_open_file(h, path, O_RDONLY);
        if (fd < 0)
                return -ENODATA;
        n = pread_string(fd, buf, sizeof(buf));
        if (n < 0)
                return (int) n;
        if (isempty(strstrip(buf)))
                return -ENODATA;
        return cpuset_parse_list(buf, ret);
}

int setting_irq_served_cpus(const Setting *s, const Host *h, CPUSet *ret) {
        if (setting_irq_effective(s, h, ret) >= 0)
                return 0;
        if (!s->observed)
                return -ENODATA;
        return cpuset_parse_list(s->observed, ret);
}

/* "0-1 (effective 0)": the affinity asked for, and where the chip delivers it now. */
static int irq_describe_observed(Setting *s, SettingContext *rc, char *buf, size_t size) {
        _cleanup_cpuset_ CPUSet effective = CPUSET_EMPTY;
        _cleanup_free_ char *list = NULL;
        int r;

        r = setting_irq_effective(s, rc->host, &effective);
        if (r < 0)
                return r;
        list = cpuset_format_list(&effective);
        if (!list)
                return -ENOMEM;
        snprintf(buf, size, "%s (effective %s)", s->observed, list);
        return 0;
}

/* A writer may use either smp_affinity or smp_affinity_list; both change the same
 * affinity. One watch on the IRQ's directory sees both (inotify reports the files in a
 * watched directory), at half the cost of a watch per file: 10,000 IRQs take 10,000
 * watches to set up at start, not 20,000. */
static int irq_watch_path(const Setting *s, unsigned i, char *buf, size_t size) {
        if (i > 0)
                return 0;
        snprintf(buf, size, "proc/irq/%u", IRQ(s)->irq);
        return 1;
}

static uint64_t irq_sort_key(const Setting *s) {
        return IRQ(s)->irq;
}

static bool irq_same(const Setting *a, const Setting *b) {
        return IRQ(a)->exact == IRQ(b)->exact;
}

static void irq_done(Setting *s) {
        file_setting_done(s);
        cpuset_done(&IRQ(s)->cpus);
}

/* --- the table's IRQs --- */

/* A NIC's irq_cpus: its IRQs go exactly there. */
typedef struct NicIrqPin {
        int ifindex;
        unsigned *irqs;
        size_t n_irqs;
        CPUSet cpus;
} NicIrqPin;

/* What the IRQ kind keeps in the table beside its settings. */
typedef struct IrqTableState {
        IrqNames names; /* /proc/interrupts as last read */
        int names_error; /* why the last read of the names failed (-EFBIG: too large); 0 */
        NicIrqPin *nic_pins;
        size_t n_nic_pins, allocated_nic_pins;
        size_t cursor; /* the table index of the IRQ the scan found last: a hint, checked */
} IrqTableState;

static void irq_free_table_state(void *state) {
        IrqTableState *st = state;

        irq_names_done(&st->names);
        for (size_t i = 0; i < st->n_nic_pins; i++) {
                free(st->nic_pins[i].irqs);
                cpuset_done(&st->nic_pins[i].cpus);
        }
        free(st->nic_pins);
        free(st);
}

static IrqTableState *irq_table_state(SettingTable *t) {
        if (!t->kind_state[SETTING_IRQ_AFFINITY])
                t->kind_state[SETTING_IRQ_AFFINITY] = calloc(1, sizeof(IrqTableState));
        return t->kind_state[SETTING_IRQ_AFFINITY];
}

static const IrqTableState *irq_table_state_const(const SettingTable *t) {
        static const IrqTableState empty = {};
        return t->kind_state[SETTING_IRQ_AFFINITY] ?: &empty;
}

/* A directory entry of /proc/irq that is an IRQ: digits only, as the kernel writes them
 * (no leading zero, so the name is the setting's object), below IRQ_NUMBER_MAX. */
static bool parse_irq_dirent(const char *name, unsigned *ret) {
        unsigned v = 0;

        if (*name < '0' || *name > '9' || (name[0] == '0' && name[1]))
                return false;
        for (; *name; name++) {
                if (*name < '0' || *name > '9')
                        return false;
                v = v * 10 + (unsigned) (*name - '0');
                if (v >= IRQ_NUMBER_MAX)
                        return false;
        }
        *ret = v;
        return true;
}

/* Where IRQ irq's setting sorts against s, as setting_compare() orders the table: < 0
 * when s comes before it. */
static int compare_to_irq(const Setting *s, unsigned irq) {
        SettingGroup g = SETTING_VTABLE(s)->group;
        uint64_t k = SETTING_VTABLE(s)->sort_key ? SETTING_VTABLE(s)->sort_key(s) : 0;

        if (g != SETTING_GROUP_IRQ)
                return g < SETTING_GROUP_IRQ ? -1 : 1;
        if (k != irq)
                return k < irq ? -1 : 1;
        if (s->kind != SETTING_IRQ_AFFINITY)
                return s->kind < SETTING_IRQ_AFFINITY ? -1 : 1;
        return 0;
}

static bool irq_at(const SettingTable *t, size_t i, unsigned irq) {
        return i < t->n && t->settings[i]->kind == SETTING_IRQ_AFFINITY && IRQ(t->settings[i])->irq == irq;
}

/* The scan's look-up, for every IRQ at every scan: /proc/irq lists IRQs in ascending
 * order, as the table keeps them (a tmpfs tree lists them newest first), so the one next
 * to the last found is nearly always the answer, for a compare instead of a hash. Else a
 * binary search of the sorted table, else (IRQs appended since the last sort) the index. */
static Setting *find_irq(SettingTable *t, IrqTableState *st, unsigned irq, const char *name) {
        static const size_t steps[] = { 1, (size_t) -1, 0 };
        size_t lo = 0, hi = t->n;

        for (size_t i = 0; i < ELEMENTSOF(steps); i++)
                if (irq_at(t, st->cursor + steps[i], irq)) {
                        st->cursor += steps[i];
                        return t->settings[st->cursor];
                }
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                int c = compare_to_irq(t->settings[mid], irq);
                if (c == 0) {
                        st->cursor = mid;
                        return t->settings[mid];
                }
                if (c < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return table_find(t, SETTING_IRQ_AFFINITY, name);
}

/* A NIC's irq_cpus wins over [irq] pins, which win over "stay off the isolated CPUs". */
static const CPUSet *nic_pin_of(const IrqTableState *st, unsigned irq) {
        for (size_t i = 0; i < st->n_nic_pins; i++)
                for (size_t j = 0; j < st->nic_pins[i].n_irqs; j++)
                        if (st->nic_pins[i].irqs[j] == irq)
                                return &st->nic_pins[i].cpus;
        return NULL;
}

static int irq_target(const IrqTableState *st, const Posture *p, Setting *s, const char *name) {
        const CPUSet *nic = nic_pin_of(st, IRQ(s)->irq);

        if (nic)
                return setting_irq_set_target(s, name, nic, true);
        return setting_irq_retarget(p, s, name);
}

static bool wants_names(const IrqTableState *st, const Posture *p) {
        return p->config->n_pins > 0 || st->n_nic_pins > 0;
}

/* A read that fails keeps the names of the last one that worked, and says why for the
 * daemon to log (irq_table_names_error()): past PROC_INTERRUPTS_MAX no name is new. */
static void load_names(IrqTableState *st, const Host *h) {
        _cleanup_free_ char *text = NULL;

        st->names_error = host_read_file_max(h, "proc/interrupts", PROC_INTERRUPTS_MAX, &text, NULL);
        if (st->names_error >= 0) {
                st->names_error = 0;
                (void) irq_names_parse(text, &st->names);
        }
}

int irq_table_names_error(SettingTable *t) {
        IrqTableState *st = irq_table_state(t);
        return st ? st->names_error : -ENOMEM;
}

/* Every IRQ's target again (after names or NIC pins changed). */
static int retarget_all(SettingTable *t, const IrqTableState *st, const Posture *p) {
        for (size_t i = 0; i < t->n; i++) {
                Setting *s = t->settings[i];
                int r;

                if (!setting_is_irq(s, NULL))
                        continue;
                r = irq_target(st, p, s, irq_names_lookup(&st->names, IRQ(s)->irq));
                if (r < 0)
                        return r;
        }
        return 0;
}

int irq_table_scan(SettingTable *t, const Host *h, const Posture *p) {
        IrqTableState *st = irq_table_state(t);
        bool names;
        struct dirent *de;
        int present = 0, added = 0, r;
        DIR *dir;

        if (!st)
                return -ENOMEM;
        /* With pins, names decide targets, and a driver can request an IRQ long after it
         * was allocated: read /proc/interrupts once per scan. Without pins, never. */
        names = wants_names(st, p);
        if (names) {
                load_names(st, h);
                r = retarget_all(t, st, p);
                if (r < 0)
                        return r;
        }

        r = host_opendir(h, "proc/irq", &dir);
        if (r < 0)
                return r;
        table_scan_begin(t, SETTING_IRQ_AFFINITY);

        while ((de = readdir(dir))) {
                Setting *s;
                unsigned irq;

                if (!parse_irq_dirent(de->d_name, &irq))
                        continue;
                present++;
                s = find_irq(t, st, irq, de->d_name);
                if (s) {
                        table_scan_mark(t, s);
                        continue;
                }
                r = setting_new_irq(p, irq, NULL, &s);
                if (r >= 0 && names && (r = irq_target(st, p, s, irq_names_lookup(&st->names, irq))) < 0)
                        setting_free(s);
                if (r < 0)
                        break;
                r = table_scan_add(t, s);
                if (r < 0)
                        break;
                added++;
        }
        closedir(dir);
        if (r < 0)
                return r;

        /* The IRQs that are gone go; the names of new IRQs are read when no pin needed them
         * (paid only when IRQs appear, as the sort is). */
        table_scan_end(t, SETTING_IRQ_AFFINITY, added);
        if (added > 0 && !names)
                (void) irq_table_refresh_names(t, h);
        return present;
}

int irq_table_refresh_names(SettingTable *t, const Host *h) {
        IrqTableState *st = irq_table_state(t);

        if (!st)
                return -ENOMEM;
        load_names(st, h);
        for (size_t i = 0; i < t->n; i++) {
                Setting *s = t->settings[i];
                const char *name;
                char *copy;

                if (!setting_is_irq(s, NULL))
                        continue;
                name = irq_names_lookup(&st->names, IRQ(s)->irq);
                if (streq_ptr(s->label, name))
                        continue;
                copy = name ? strdup(name) : NULL;
                if (name && !copy)
                        return -ENOMEM;
                free(s->label);
                s->label = copy;
        }
        return 0;
}

static int irq_rescan(SettingTable *t, const Host *h, const Posture *p) {
        int r = irq_table_scan(t, h, p);
        return r < 0 ? r : 0;
}

static int irqs_append(unsigned **irqs, size_t *n, size_t *allocated, unsigned irq) {
        int r = array_grow(irqs, allocated, *n + 1);

        if (r < 0)
                return r;
        (*irqs)[(*n)++] = irq;
        return 0;
}

int irq_nic_irqs(const Host *h, const IrqNames *names, const char *ifname, unsigned **ret, size_t *ret_n) {
        _cleanup_free_ char *path = strdup_printf("sys/class/net/%s/device/msi_irqs", ifname);
        _cleanup_free_ unsigned *irqs = NULL;
        size_t n = 0, allocated = 0, len = strlen(ifname);
        struct dirent *de;
        unsigned irq;
        DIR *dir;
        int r = 0;

        if (!path)
                return -ENOMEM;
        if (host_opendir(h, path, &dir) >= 0) {
                while (r >= 0 && (de = readdir(dir)))
                        if (parse_irq_dirent(de->d_name, &irq))
                                r = irqs_append(&irqs, &n, &allocated, irq);
                closedir(dir);
        }
        for (size_t i = 0; r >= 0 && i < names->n; i++) {
                const char *name = names->names[i];
                if (strncmp(name, ifname, len) == 0 && (name[len] == '\0' || name[len] == '-' || name[len] == ','))
                        r = irqs_append(&irqs, &n, &allocated, names->irqs[i]);
        }
        if (r < 0)
                return r;
        *ret = TAKE_PTR(irqs);
        *ret_n = n;
        return 0;
}

int irq_table_pin_nic(SettingTable *t, const Host *h, const Posture *p, int ifindex, const char *ifname,
                      const CPUSet *cpus) {
        IrqTableState *st = irq_table_state(t);
        NicIrqPin pin = { .ifindex = ifindex };
        int r;

        if (!st)
                return -ENOMEM;
        load_names(st, h);
        r = irq_nic_irqs(h, &st->names, ifname, &pin.irqs, &pin.n_irqs);
        if (r >= 0)
                r = cpuset_copy(&pin.cpus, cpus);
        if (r < 0 || array_grow(&st->nic_pins, &st->allocated_nic_pins, st->n_nic_pins + 1) < 0) {
                free(pin.irqs);
                cpuset_done(&pin.cpus);
                return -ENOMEM;
        }
        st->nic_pins[st->n_nic_pins++] = pin;
        return retarget_all(t, st, p);
}

int irq_table_retarget(SettingTable *t, const Posture *p) {
        return retarget_all(t, irq_table_state_const(t), p);
}

int irq_table_unpin_nic(SettingTable *t, int ifindex) {
        IrqTableState *st = t->kind_state[SETTING_IRQ_AFFINITY];
        bool pinned = false;

        if (!st)
                return 0;
        for (size_t i = st->n_nic_pins; i > 0; i--)
                if (st->nic_pins[i - 1].ifindex == ifindex) {
                        free(st->nic_pins[i - 1].irqs);
                        cpuset_done(&st->nic_pins[i - 1].cpus);
                        st->nic_pins[i - 1] = st->nic_pins[--st->n_nic_pins];
                        pinned = true;
                }
        return pinned;
}

bool irq_table_has_nic_pin(const SettingTable *t, int ifindex) {
        const IrqTableState *st = irq_table_state_const(t);

        for (size_t i = 0; i < st->n_nic_pins; i++)
                if (st->nic_pins[i].ifindex == ifindex)
                        return true;
        return false;
}

const SettingVTable irq_affinity_vtable = {
        .object_size = sizeof(IrqSetting),
        .group = SETTING_GROUP_IRQ,
        .noun = "IRQ",
        .label_field = "LOWLATD_IRQ_NAME",
        .read = irq_read,
        .write = irq_write,
        .refuses = irq_refuses,
        .original_problem = irq_original_problem,
        .matches = irq_matches,
        .describe_observed = irq_describe_observed,
        .watch_path = irq_watch_path,
        .sort_key = irq_sort_key,
        .same = irq_same,
        .inherit = file_setting_inherit,
        .release = file_setting_release,
        .done = irq_done,
        .rescan = irq_rescan,
        .free_table_state = irq_free_table_state,
};

/* --- another program rewriting IRQ affinities --- */

int irq_writer_note(IrqWriterWatch *w, const Setting *s, uint64_t now, char *irqs, size_t size) {
        size_t slot = 0, n_recent = 0, len = 0;
        unsigned irq;

        if (!setting_is_irq(s, &irq))
                return 0;
        w->last_usec = now;
        for (size_t i = 0; i < IRQ_WRITER_IRQS; i++) {
                if (w->at[i] != 0 && w->irq[i] == irq) {
                        slot = i;
                        break;
                }
                if (w->at[i] < w->at[slot])
                        slot = i;
        }
        w->irq[slot] = irq;
        w->at[slot] = now;
        for (size_t i = 0; i < IRQ_WRITER_IRQS; i++)
                if (w->at[i] != 0 && now - w->at[i] < FIGHT_WINDOW_USEC)
                        n_recent++;
        if (n_recent < IRQ_WRITER_IRQS || w->reported)
                return 0;
        w->reported = true;
        if (size > 0)
                irqs[0] = '\0';
        for (size_t i = 0; i < IRQ_WRITER_IRQS && len < size; i++)
                len += (size_t) snprintf(irqs + len, size - len, "%s%u", i ? " " : "", w->irq[i]);
        return 1;
}

bool irq_writer_tick(IrqWriterWatch *w, uint64_t now) {
        if (!w->reported || now - w->last_usec < FIGHT_QUIET_USEC)
                return false;
        *w = (IrqWriterWatch) {};
        return true;
}
