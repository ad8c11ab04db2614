/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* slice_cpus: a unit's AllowedCPUs=, held to the housekeeping CPUs. This stops strays at
 * their source: everything systemd starts in the unit's subtree inherits the cpuset.
 * evict_strays still deals with tasks outside those units. */
#include <string.h>

#include "setting/slices.h"
#include "host/systemd-client.h"
#include "basic/util.h"

typedef struct SliceSetting {
        Setting setting;
        /* The unit's cgroup as PID 1 reported it ("/user.slice"), to watch its cpuset.cpus:
         * NULL until a read learnt it. */
        char *control_group;
} SliceSetting;

#define SLICE(s) ((SliceSetting *) (s))

int setting_new_slice_cpus(const char *unit, const CPUSet *cpus, Setting **ret) {
        _cleanup_(setting_freep) Setting *s = setting_alloc(SETTING_SLICE_CPUS, unit);
        _cleanup_free_ char *desired = cpuset_format_list(cpus);

        if (!s || !desired || setting_set_desired(s, desired) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(s);
        return 0;
}

bool setting_is_slice(const Setting *s) {
        return s->kind == SETTING_SLICE_CPUS;
}

Setting *slice_table_find(const SettingTable *t, const char *unit) {
        return table_find(t, SETTING_SLICE_CPUS, unit);
}

/* PID 1's account of a failure goes into the reason. Its refusals (access denied, no such
 * unit) are failures reported once and retried, never "unmovable" or "gone": the unit
 * stays configured, and PID 1 may say yes later. */
static int slice_result(Setting *s, int r, char *error, const char *what) {
        if (r == -EOPNOTSUPP)
                setting_set_reason(s, "%s", error ?: "AllowedCPUs= is not supported here");
        else
                setting_set_reason(s, "%s AllowedCPUs= of %s failed: %s", what, s->object, error ?: strerror(-r));
        return r == -ENOENT || r == -EPERM ? -EIO : r;
}

static bool slice_have_client(Setting *s, SettingContext *rc) {
        if (rc->systemd)
                return true;
        setting_set_reason(s, "lowlatd has no connection to PID 1 set up here");
        return false;
}

/* A periodic scan's look, without a round trip to PID 1: the cgroup's cpuset.cpus, which
 * PID 1 writes whenever the value it applies changes, still agrees with what PID 1 said
 * last. Each GetProperty is a wakeup of its own while lowlatd waits for the answer (three
 * units, three more per scan: what made the guest's full posture idle at 0.37 wakeups/s
 * instead of 0.10). A change PID 1 makes is also a PropertiesChanged and an inotify hint,
 * and those ask PID 1 (RECONCILE_HINTED); a file that differs, is gone or cannot be read
 * (a unit without a cgroup) asks it here too. */
static bool slice_cgroup_agrees(Setting *s, SettingContext *rc, char *buf, size_t size) {
        _cleanup_cpuset_ CPUSet cpus = CPUSET_EMPTY;
        _cleanup_free_ char *text = NULL;

        if (!SLICE(s)->control_group || !s->observed ||
            host_read_filef(rc->host, &text, "sys/fs/cgroup%s/cpuset.cpus", SLICE(s)->control_group) < 0 ||
            cpuset_parse_list(text, &cpus) < 0)
                return false;
        /* buf is the caller's to overwrite when the answer is no. */
        if (cpuset_is_empty(&cpus))
                snprintf(buf, size, "%s", SLICE_CPUS_UNSET);
        else if (cpuset_format_list_buf(&cpus, buf, size) < 0)
                return false;
        return streq(buf, s->observed);
}

static int slice_read(Setting *s, SettingContext *rc, char *buf, size_t size, ReconcileFlags flags) {
        _cleanup_cpuset_ CPUSet cpus = CPUSET_EMPTY;
        _cleanup_free_ char *error = NULL;
        int r;

        if (!slice_have_client(s, rc))
                return -EOPNOTSUPP;
        if (flags == 0 && slice_cgroup_agrees(s, rc, buf, size))
                return 0;
        r = systemd_client_get_allowed_cpus(rc->systemd, s->object, &cpus, &error);
        if (r < 0)
                return slice_result(s, r, error, "reading");
        /* Once: the cgroup does not move while the unit exists. */
        if (!SLICE(s)->control_group) {
                _cleanup_free_ char *cg = NULL;
                if (systemd_client_get_control_group(rc->systemd, s->object, &cg, NULL) >= 0 && !isempty(cg))
                        SLICE(s)->control_group = TAKE_PTR(cg);
        }
        if (cpuset_is_empty(&cpus)) {
                snprintf(buf, size, "%s", SLICE_CPUS_UNSET);
                return 0;
        }
        r = cpuset_format_list_buf(&cpus, buf, size);
        return r < 0 ? slice_result(s, r, NULL, "reading") : 0;
}

static int slice_write(Setting *s, SettingContext *rc, const char *value) {
        _cleanup_cpuset_ CPUSet cpus = CPUSET_EMPTY;
        _cleanup_free_ char *error = NULL;
        int r;

        if (!slice_have_client(s, rc))
                return -EOPNOTSUPP;
        /* "unset" (a restore) is the empty set, which PID 1 takes as "no AllowedCPUs=". */
        if (!streq(value, SLICE_CPUS_UNSET)) {
                r = cpuset_parse_list(value, &cpus);
                if (r < 0)
                        return slice_result(s, r, NULL, "writing");
        }
        r = systemd_client_set_allowed_cpus(rc->systemd, s->object, &cpus, &error);
        return r < 0 ? slice_result(s, r, error, "setting") : 0;
}

/* Two hints, both relative to the root: PID 1 writes a runtime drop-in for every
 * `systemctl set-property --runtime` (and for ours), and writes the cgroup's cpuset.cpus
 * whenever the value it applies changes, whoever asked. These are what see a set-property
 * on systemd 252: in the VM e2e run PID 1 sent no PropertiesChanged for it (a busctl
 * monitor saw none in 3.5 s, lowlatd subscribed), and lowlatd put it back in 0.5 s. */
static int slice_watch_path(const Setting *s, unsigned i, char *buf, size_t size) {
        int n;

        if (i == 0)
                n = snprintf(buf, size, "run/systemd/system.control/%s.d", s->object);
        else if (i == 1 && SLICE(s)->control_group)
                n = snprintf(buf, size, "sys/fs/cgroup%s/cpuset.cpus", SLICE(s)->control_group);
        else
                return 0;
        return n < 0 || (size_t) n >= size ? -ENOBUFS : 1;
}

static void slice_inherit(Setting *s, Setting *old, bool same_value) {
        free(SLICE(s)->control_group);
        SLICE(s)->control_group = TAKE_PTR(SLICE(old)->control_group);
}

static void slice_done(Setting *s) {
        free(SLICE(s)->control_group);
}

static int slice_plan_unit(SettingTable *t, const char *unit, const CPUSet *housekeeping) {
        Setting *s = NULL;
        int r = setting_new_slice_cpus(unit, housekeeping, &s);

        return r < 0 ? r : table_add(t, s);
}

/* With no isolated CPU there is nothing to keep the units off; confining them to every
 * online CPU would only turn the cpuset controller on. A partition takes its CPUs from the
 * root only while no sibling has them: without slices listed it implies the units every
 * host has, and machine.slice where it exists. */
static int slice_plan(SettingTable *t, const Host *h, const Posture *p) {
        static const char *const implied[] = { SLICES_REQUIRED };
        const Config *c = p->config;
        int r = 0;

        if (cpuset_is_empty(&p->isolated))
                return 0;
        for (size_t i = 0; r >= 0 && i < c->n_slices; i++)
                r = slice_plan_unit(t, c->slices[i], &p->housekeeping);
        if (c->n_slices > 0 || !c->partition)
                return r;
        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(implied); i++)
                r = slice_plan_unit(t, implied[i], &p->housekeeping);
        if (r >= 0 && host_path_exists(h, "sys/fs/cgroup/machine.slice"))
                r = slice_plan_unit(t, "machine.slice", &p->housekeeping);
        return r;
}

static const char *slice_original_problem(const Setting *s, SettingContext *rc, const char *value) {
        (void) s;
        return streq(value, SLICE_CPUS_UNSET) ? NULL : setting_cpu_list_problem(rc, value, false);
}

/* The original is what read() saw first: a CPU list, or "unset"; the default restore
 * writes it back through write(). */
const SettingVTable slice_cpus_vtable = {
        .object_size = sizeof(SliceSetting),
        .group = SETTING_GROUP_HOST,
        .noun = "AllowedCPUs= of",
        .read = slice_read,
        .write = slice_write,
        .original_problem = slice_original_problem,
        .watch_path = slice_watch_path,
        .inherit = slice_inherit,
        .done = slice_done,
        .plan = slice_plan,
};
