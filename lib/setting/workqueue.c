/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* workqueue_cpumask: with [cpus] workqueues, the CPUs the kernel's unbound workqueues run
 * on: the mask every unbound workqueue is confined to, and the cpumask of each one that
 * exposes its own (WQ_SYSFS: writeback, and what drivers add). Workqueues come and go with
 * their modules, so the table follows the listing of their directory on every full pass. */
#include <dirent.h>
#include <string.h>

#include "setting/file.h"
#include "setting/workqueue.h"
#include "setting/table.h"
#include "basic/util.h"

/* The workqueue devices; /sys/bus/workqueue/devices/NAME links to WORKQUEUE_DIR/NAME. */
#define WORKQUEUE_DIR "sys/devices/virtual/workqueue"

typedef struct WorkqueueSetting {
        MaskFileSetting mask;
} WorkqueueSetting;

#define WORKQUEUE(s) ((WorkqueueSetting *) (s))
#define WORKQUEUE_FILE(s) (&WORKQUEUE(s)->mask.file_setting.file)

/* The mask for all of them is the file WORKQUEUE_DIR/cpumask, beside the workqueues'
 * directories: no workqueue can be called that. */
static bool is_unbound_mask(const Setting *s) {
        return streq(s->object, WORKQUEUE_UNBOUND_OBJECT);
}

int setting_new_workqueue(const Posture *p, const char *name, Setting **ret) {
        _cleanup_(setting_freep) Setting *s = NULL;
        char *path = name ? strdup_printf(WORKQUEUE_DIR "/%s/cpumask", name) : strdup(WORKQUEUE_DIR "/cpumask");
        int r;

        r = mask_file_setting_new(SETTING_WORKQUEUE_CPUMASK, path, name ?: WORKQUEUE_UNBOUND_OBJECT, &p->workqueues,
                                  p->mask_bits, &s);
        if (r < 0)
                return r;
        if (!name && !(s->label = strdup("every unbound workqueue")))
                return -ENOMEM;
        *ret = TAKE_PTR(s);
        return 0;
}

static int workqueue_read(Setting *s, SettingContext *rc, char *buf, size_t size, ReconcileFlags flags) {
        const char *path = WORKQUEUE_FILE(s)->path;
        int r = setting_file_read(WORKQUEUE_FILE(s), rc, buf, size, flags);

        /* A workqueue destroyed (its module unloaded) reads as ENOENT, or ENODEV through the
         * old fd: gone, and the next listing agrees. The mask of all of them never goes. */
        if ((r == -ENOENT || r == -ENODEV) && !is_unbound_mask(s))
                return -ENOENT;
        if (r == -ENOENT) {
                setting_set_reason(s, "this kernel has no /%s", path);
                return -EOPNOTSUPP;
        }
        if (r < 0)
                setting_set_reason(s, "reading /%s failed: %s", path, strerror(-r));
        return r;
}

static int workqueue_refuses(Setting *s, SettingContext *rc) {
        if (setting_file_is_read_only(WORKQUEUE_FILE(s))) {
                setting_set_reason(s, "/%s is read-only (the kernel does not let this workqueue move)",
                                   WORKQUEUE_FILE(s)->path);
                return -EPERM;
        }
        return 0;
}

static int workqueue_write(Setting *s, SettingContext *rc, const char *value) {
        const char *path = WORKQUEUE_FILE(s)->path;
        int r;

        r = workqueue_refuses(s, rc);
        if (r < 0)
                return r;
        r = host_write_file(rc->host, path, value);
        if (r >= 0)
                return 0;
        if (r == -ENOENT && !is_unbound_mask(s))
                return -ENOENT;
        if (r == -EINVAL && cpuset_parse_mask(value, &rc->scratch) >= 0 && setting_cpus_offline(s, rc, &rc->scratch))
                return -EAGAIN;
        if (r == -EACCES || r == -EPERM) {
                setting_set_reason(s, "the kernel refused to write /%s: %s", path, strerror(-r));
                return -EPERM;
        }
        /* EINVAL for CPUs that are online: a mask this kernel will not take (newer kernels keep
         * unbound work off isolcpus=domain CPUs and refuse a mask of those only); failed,
         * tried again later or after a reload. */
        setting_set_reason(s, "the kernel refused mask %s for /%s: %s", value, path, strerror(-r));
        return r == -ENOENT ? -EIO : r;
}

/* The mask for all of them first, then the workqueues by name. */
static uint64_t workqueue_sort_key(const Setting *s) {
        return is_unbound_mask(s) ? 0 : 1;
}

static int workqueue_plan(SettingTable *t, const Host *h, const Posture *p) {
        Setting *s = NULL;
        int r;

        if (cpuset_is_empty(&p->workqueues))
                return 0;
        r = setting_new_workqueue(p, NULL, &s);
        return r < 0 ? r : table_add(t, s);
}

/* A directory entry that may be a workqueue: a directory (or a file system that does not
 * say), with a name that can go on the bus. */
static bool is_workqueue_dirent(const struct dirent *de) {
        return (de->d_type == DT_DIR || de->d_type == DT_UNKNOWN) && de->d_name[0] != '.' &&
               utf8_is_valid(de->d_name);
}

/* Whether WORKQUEUE_DIR/name has a cpumask: unbound workqueues do, per-CPU ones and the
 * device's own power/ do not. */
static int workqueue_has_cpumask(const Host *h, const char *name) {
        _cleanup_free_ char *path = strdup_printf(WORKQUEUE_DIR "/%s/cpumask", name);

        if (!path)
                return -ENOMEM;
        return host_path_exists(h, path);
}

int workqueue_table_scan(SettingTable *t, const Host *h, const Posture *p) {
        struct dirent *de;
        Setting *all;
        int present = 0, added = 0, r;
        DIR *dir;

        if (cpuset_is_empty(&p->workqueues))
                return 0;
        r = host_opendir(h, WORKQUEUE_DIR, &dir);
        if (r == -ENOENT)
                return 0; /* no workqueue in sysfs: the mask for all of them says unsupported */
        if (r < 0)
                return r;
        table_scan_begin(t, SETTING_WORKQUEUE_CPUMASK);
        /* The mask for all of them is never in the listing, and stays. */
        all = table_find(t, SETTING_WORKQUEUE_CPUMASK, WORKQUEUE_UNBOUND_OBJECT);
        if (all)
                table_scan_mark(t, all);
        while ((de = readdir(dir))) {
                Setting *s;

                if (!is_workqueue_dirent(de))
                        continue;
                s = table_find(t, SETTING_WORKQUEUE_CPUMASK, de->d_name);
                if (s) {
                        table_scan_mark(t, s);
                        present++;
                        continue;
                }
                r = workqueue_has_cpumask(h, de->d_name);
                if (r < 0)
                        break;
                if (r == 0)
                        continue;
                r = setting_new_workqueue(p, de->d_name, &s);
                if (r < 0)
                        break;
                r = table_scan_add(t, s);
                if (r < 0)
                        break;
                present++;
                added++;
        }
        closedir(dir);
        if (r < 0)
                return r;
        /* The workqueues that are gone go. */
        table_scan_end(t, SETTING_WORKQUEUE_CPUMASK, added);
        return present;
}

static int workqueue_rescan(SettingTable *t, const Host *h, const Posture *p) {
        int r = workqueue_table_scan(t, h, p);
        return r < 0 ? r : 0;
}

/* An original is what a cpumask file read: a mask of some of this host's CPUs (the kernel
 * refuses one with none). */
static const char *workqueue_original_problem(const Setting *s, SettingContext *rc, const char *value) {
        (void) s;
        return setting_cpu_mask_problem(rc, value, false);
}

/* Watched through inotify on the cpumask file itself: a write through sysfs is seen at
 * once; the scan catches the rest. */
/* [sysfs] leaves these to this kind: one file, one keeper. */
static const char *const workqueue_files[] = {
        "sys/devices/virtual/workqueue/cpumask",
        "sys/devices/virtual/workqueue/*/cpumask",
        "sys/bus/workqueue/devices/*/cpumask",
        NULL,
};

const SettingVTable workqueue_cpumask_vtable = {
        .object_size = sizeof(WorkqueueSetting),
        .owns = workqueue_files,
        .group = SETTING_GROUP_HOST,
        .noun = "workqueue",
        .read = workqueue_read,
        .write = workqueue_write,
        .refuses = workqueue_refuses,
        .matches = mask_file_setting_matches,
        .original_problem = workqueue_original_problem,
        .watch_path = file_setting_watch_path,
        .sort_key = workqueue_sort_key,
        .inherit = file_setting_inherit,
        .release = file_setting_release,
        .done = mask_file_setting_done,
        .plan = workqueue_plan,
        .rescan = workqueue_rescan,
};
