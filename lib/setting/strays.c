/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* stray_tasks: one setting for every user task allowed on the isolated CPUs. Its value is
 * the list of strays ("none" when there is none), its correction moves them off, and the
 * tasks the kernel refuses to move are left alone and reported once. */
#include <string.h>
#include <unistd.h>

#include "setting/strays.h"
#include "setting/table.h"
#include "basic/util.h"

typedef struct StraysSetting {
        Setting setting;
        Strays *strays;
} StraysSetting;

#define STRAYS(s) (((StraysSetting *) (s))->strays)

int setting_new_stray_tasks(const Posture *p, Setting **ret) {
        _cleanup_free_ char *object = cpuset_format_list(&p->isolated);
        _cleanup_(setting_freep) Setting *s = NULL;

        if (!object)
                return -ENOMEM;
        s = setting_alloc(SETTING_STRAY_TASKS, object);
        if (!s || setting_set_desired(s, "none") < 0 || !(STRAYS(s) = strays_new()))
                return -ENOMEM;
        *ret = TAKE_PTR(s);
        return 0;
}

Strays *setting_strays(const Setting *s) {
        return STRAYS(s);
}

/* The PIDs under a fake root are not this host's tasks: moving "pid 1234" there would
 * move whatever real task has that number. So without a live host (and no test's own
 * mover) the setting is unsupported, and nothing is looked at or moved. */
static int strays_read(Setting *s, SettingContext *rc, char *buf, size_t size, ReconcileFlags flags) {
        int r;

        STRAYS(s)->live = host_is_live(rc->host);
        if (!rc->set_task_affinity && !STRAYS(s)->live) {
                setting_set_reason(s,
                                   "evict_strays needs --root / (the PIDs under %s are not this host's tasks, so none "
                                   "is moved; lowlatctl check lists stray tasks)",
                                   rc->host->root_path);
                return -EOPNOTSUPP;
        }
        r = strays_scan(STRAYS(s), rc->host, rc->posture, getpid(), buf, size);
        if (r < 0)
                setting_set_reason(s, "reading /proc failed: %s", strerror(-r));
        return r == -ENOENT ? -EIO : r;
}

/* Tasks left alone follow "; left alone:" and are not drift. */
static bool strays_matches(Setting *s, SettingContext *rc) {
        return strncmp(s->observed, "none", 4) == 0 && (s->observed[4] == '\0' || s->observed[4] == ';');
}

static int strays_write(Setting *s, SettingContext *rc, const char *value) {
        int r;

        /* Belt and braces: strays_read() already refused a fake tree. */
        if (!rc->set_task_affinity && !host_is_live(rc->host))
                return -EOPNOTSUPP;
        r = strays_evict(STRAYS(s), rc->posture, rc->set_task_affinity ?: task_set_affinity, rc->task_affinity_userdata);
        if (r < 0) {
                setting_set_reason(s, "moving stray tasks failed: %s", strerror(-r));
                return r == -ENOENT || r == -EPERM ? -EIO : r;
        }
        return r; /* the number moved */
}

/* Evicted tasks are not put back on the isolated CPUs. A PID recorded at the move may
 * belong to another task by the time of a restore, and what was taken away is only the
 * isolated CPUs, which no task but the applications should use; a task that needs them
 * back gets them with taskset(1). Nothing is recorded, so nothing is restored. */
static int strays_original(const Setting *s, char **ret) {
        *ret = NULL;
        return 0;
}

/* Tasks newly left alone because the kernel refused to move them. */
static int strays_take_left_alone(Setting *s, char **ret_reason) {
        _cleanup_free_ char *text = NULL;
        int r = strays_take_unreported(STRAYS(s), &text);

        if (r <= 0)
                return r;
        *ret_reason = strdup_printf("left alone, cannot be moved: %s", text);
        return *ret_reason ? 1 : -ENOMEM;
}

static bool strays_changed_anything(const Setting *s) {
        return STRAYS(s)->n_confirmed > 0;
}

/* The tasks left alone stay left alone (and reported) across a reload. */
static void strays_inherit(Setting *s, Setting *old, bool same_value) {
        if (!STRAYS(old))
                return;
        strays_free(STRAYS(s));
        STRAYS(s) = TAKE_PTR(STRAYS(old));
}

static void strays_done(Setting *s) {
        STRAYS(s) = strays_free(STRAYS(s));
}

/* With no isolated CPU no task can stray onto one. */
static int strays_plan(SettingTable *t, const Host *h, const Posture *p) {
        Setting *s = NULL;
        int r;

        if (!p->config->evict_strays || cpuset_is_empty(&p->isolated))
                return 0;
        r = setting_new_stray_tasks(p, &s);
        return r < 0 ? r : table_add(t, s);
}

/* No path: nothing to watch with inotify (procfs sends no events for affinity changes or
 * new tasks); the periodic scan looks. */
const SettingVTable stray_tasks_vtable = {
        .object_size = sizeof(StraysSetting),
        .group = SETTING_GROUP_HOST,
        .readback = READBACK_IS_DRIFT,
        .read = strays_read,
        .write = strays_write,
        .matches = strays_matches,
        .original = strays_original,
        .take_left_alone = strays_take_left_alone,
        .changed_anything = strays_changed_anything,
        .inherit = strays_inherit,
        .done = strays_done,
        .plan = strays_plan,
};
