/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* workqueue_cpumask on a fake --root tree: what [cpus] workqueues plans, masks compared by
 * their CPUs, correction, observe mode, a refusal by the kernel, workqueues that appear and
 * vanish, a kernel without workqueues in sysfs, and restore. */
#include <stdlib.h>

#include "setting/originals.h"
#include "setting/file.h"
#include "setting/workqueue.h"
#include "setting/table.h"
#include "faketree.h"
#include "tap.h"
#include "basic/util.h"

#define T0 (1000 * USEC_PER_SEC) /* a "now" far from zero, as CLOCK_MONOTONIC is */
#define WQ "sys/devices/virtual/workqueue"

typedef FaketreeFixture Fixture;

/* Four CPUs, 2-3 isolated by the kernel; the workqueue directory as Linux 6.1 shows it:
 * the mask for all unbound workqueues, two unbound ones with their own cpumask, a per-CPU
 * one without, and the device's own files. Every mask starts at all CPUs. */
static void fixture_init(Fixture *f) {
        *f = (Fixture) {};
        faketree_mkdtemp(f->root, sizeof(f->root), "test-workqueue");
        faketree_cpus(f->root, "0-3", "2-3", "2-3");
        tree_write(f, WQ "/cpumask", "f\n");
        tree_write(f, WQ "/writeback/cpumask", "f\n");
        tree_write(f, WQ "/writeback/nice", "0\n");
        tree_write(f, WQ "/blkcg_punt_bio/cpumask", "f\n");
        tree_write(f, WQ "/mm_percpu_wq/per_cpu", "1\n");
        tree_write(f, WQ "/mm_percpu_wq/max_active", "256\n");
        tree_mkdir(f, WQ "/power");
        tree_write(f, WQ "/uevent", "");
        tree_write(f, WQ "/cpumask_requested", "f\n");
        table_init(&f->table, NULL);
}

/* The kind's part of a start of the daemon: its plan, then its listing (the table's other
 * kinds stay out of the way). */
static bool fixture_plan(Fixture *f) {
        const SettingVTable *vt = setting_vtables[SETTING_WORKQUEUE_CPUMASK];

        return vt->plan(&f->table, f->host, f->posture) == 0 && vt->rescan(&f->table, f->host, f->posture) == 0;
}

static Setting *find(Fixture *f, const char *object) {
        return table_find(&f->table, SETTING_WORKQUEUE_CPUMASK, object);
}

static const char *read_mask(Fixture *f, const char *name) {
        static char rel[128];

        snprintf(rel, sizeof(rel), WQ "/%s", name);
        return strstrip((char *) tree_read(f, rel));
}

static const char housekeeping_config[] = "[cpus]\nworkqueues = housekeeping\n";

static void test_plan(void) {
        Fixture f;

        fixture_init(&f);
        if (!CHECK(faketree_fixture_start(&f, "[cpus]\n") && fixture_plan(&f), "fixture without a workqueues key"))
                goto out;
        CHECK(f.table.kind_counts[SETTING_WORKQUEUE_CPUMASK] == 0, "by default no workqueue mask is kept");
        faketree_fixture_done(&f);

        fixture_init(&f);
        if (!CHECK(faketree_fixture_start(&f, housekeeping_config) && fixture_plan(&f),
                   "fixture with workqueues = housekeeping"))
                goto out;
        CHECK(f.table.kind_counts[SETTING_WORKQUEUE_CPUMASK] == 3,
              "three masks: all unbound workqueues, writeback, blkcg_punt_bio (not the per-CPU one, not power/)");
        {
                Setting *all = find(&f, WORKQUEUE_UNBOUND_OBJECT), *wb = find(&f, "writeback");
                char what[128];

                CHECK(all && wb && find(&f, "blkcg_punt_bio") && !find(&f, "mm_percpu_wq") && !find(&f, "power"),
                      "the objects are the workqueues' names");
                CHECK(all && streq(all->desired, "3") && wb && streq(wb->desired, "3"),
                      "desired: the housekeeping CPUs 0-1 as a mask");
                CHECK(all && setting_describe(all, what, sizeof(what)) == 0 &&
                              streq(what, "workqueue cpumask (every unbound workqueue)"),
                      "the mask for all of them says so");
                CHECK(wb && setting_describe(wb, what, sizeof(what)) == 0 && streq(what, "workqueue writeback"),
                      "a workqueue is named by its name");
                CHECK(wb && setting_watch_path(wb, 0, what, sizeof(what)) == 1 && streq(what, WQ "/writeback/cpumask"),
                      "inotify watches the cpumask file");
                CHECK(f.table.n == 3 && f.table.settings[0] == all && streq(f.table.settings[1]->object, "blkcg_punt_bio") &&
                              f.table.settings[2] == wb,
                      "ListSettings order: the mask for all first, then by name");
        }
out:
        faketree_fixture_done(&f);
}

/* The kernel prints a mask as wide as the possible CPUs: "3" on four, "00000003" or
 * "00000000,00000003" elsewhere. The CPUs decide. */
static void test_correct_and_compare(void) {
        Fixture f;
        Setting *wb;

        fixture_init(&f);
        if (!CHECK(faketree_fixture_start(&f, housekeeping_config) && fixture_plan(&f), "fixture"))
                goto out;
        table_reconcile_all(&f.table, &f.rc, T0, 0);
        CHECK_STR(events_take(&f), "drift corrected drift corrected drift corrected", "each mask: drift, corrected");
        CHECK_STR(read_mask(&f, "cpumask"), "3", "the mask for all unbound workqueues is written");
        CHECK_STR(read_mask(&f, "writeback/cpumask"), "3", "writeback's is written");
        CHECK_STR(read_mask(&f, "blkcg_punt_bio/cpumask"), "3", "blkcg_punt_bio's is written");
        CHECK_STR(read_mask(&f, "cpumask_requested"), "f", "a file beside them is not");
        wb = find(&f, "writeback");
        CHECK(wb && wb->state == SETTING_CORRECTED, "writeback is corrected");

        tree_write(&f, WQ "/writeback/cpumask", "00000000,00000003\n");
        table_reconcile_all(&f.table, &f.rc, T0 + USEC_PER_SEC, 0);
        CHECK_STR(events_take(&f), "", "a wider mask of the same CPUs is not drift");
        CHECK_STR(read_mask(&f, "writeback/cpumask"), "00000000,00000003", "and is not rewritten");

        tree_write(&f, WQ "/writeback/cpumask", "00000006\n");
        table_reconcile_all(&f.table, &f.rc, T0 + 2 * USEC_PER_SEC, RECONCILE_HINTED);
        CHECK_STR(events_take(&f), "drift corrected", "CPUs 1-2 are drift");
        CHECK_STR(read_mask(&f, "writeback/cpumask"), "3", "and corrected");
        CHECK(wb && wb->rewritten, "a rewrite of a held value");

        tree_write(&f, WQ "/cpumask", "garbage\n");
        table_reconcile_all(&f.table, &f.rc, T0 + 3 * USEC_PER_SEC, 0);
        CHECK_STR(events_take(&f), "drift corrected", "a value that is no mask is drift too");
        CHECK_STR(read_mask(&f, "cpumask"), "3", "and corrected");
out:
        faketree_fixture_done(&f);
}

static void test_observe(void) {
        Fixture f;

        fixture_init(&f);
        if (!CHECK(faketree_fixture_start(&f, housekeeping_config) && fixture_plan(&f), "fixture"))
                goto out;
        f.rc.observe = true;
        table_reconcile_all(&f.table, &f.rc, T0, 0);
        table_reconcile_all(&f.table, &f.rc, T0 + USEC_PER_SEC, RECONCILE_FORCE);
        CHECK_STR(events_take(&f), "drift drift drift", "observe: each mask drifted, reported once");
        CHECK_STR(read_mask(&f, "writeback/cpumask"), "f", "observe: nothing written");
        CHECK(f.rc.counters.corrections == 0, "observe: no corrections");
out:
        faketree_fixture_done(&f);
}

/* The kernel's refusals end in a state that says why: a read-only cpumask is unmovable,
 * reported once and never written; CPUs that are all offline are a failure that names
 * them (retried when the online CPUs change). */
static void test_refused(void) {
        Fixture f;
        Setting *wb;

        fixture_init(&f);
        tree_chmod(&f, WQ "/writeback/cpumask", 0444);
        if (!CHECK(faketree_fixture_start(&f, housekeeping_config) && fixture_plan(&f),
                   "fixture with a read-only cpumask"))
                goto out;
        wb = find(&f, "writeback");
        table_reconcile_all(&f.table, &f.rc, T0, 0);
        CHECK(wb && wb->state == SETTING_UNMOVABLE, "a read-only cpumask is unmovable");
        CHECK(wb && wb->reason && strstr(wb->reason, "read-only"), "and says it is read-only");
        CHECK_STR(read_mask(&f, "writeback/cpumask"), "f", "it is not written");
        CHECK_STR(read_mask(&f, "blkcg_punt_bio/cpumask"), "3", "the others are");
        events_take(&f);
        table_reconcile_all(&f.table, &f.rc, T0 + 100 * USEC_PER_SEC, RECONCILE_FORCE);
        CHECK_STR(events_take(&f), "", "reported once: a forced pass adds nothing");
        CHECK_STR(read_mask(&f, "writeback/cpumask"), "f", "and writes nothing");

        /* what setting_cpus_offline() tells the write path after EINVAL */
        tree_write(&f, "sys/devices/system/cpu/online", "0-1\n");
        {
                _cleanup_cpuset_ CPUSet cpus = CPUSET_EMPTY;
                cpuset_add_range(&cpus, 2, 3);
                CHECK(wb && setting_cpus_offline(wb, &f.rc, &cpus), "CPUs 2-3 with 0-1 online: offline");
                CHECK(wb && streq_ptr(wb->reason, "none of CPUs 2-3 is online"), "the reason names them");
                cpuset_add(&cpus, 1);
                CHECK(wb && !setting_cpus_offline(wb, &f.rc, &cpus), "CPUs 1-3: one is online, a refusal stays one");
        }
out:
        faketree_fixture_done(&f);
}

/* Workqueues come and go with their modules: the listing on each full pass adds the new
 * ones (corrected on the pass) and drops the gone ones; a read of a gone one drops it too. */
static void test_appear_and_vanish(void) {
        Fixture f;

        fixture_init(&f);
        if (!CHECK(faketree_fixture_start(&f, housekeeping_config) && fixture_plan(&f), "fixture"))
                goto out;
        table_reconcile_all(&f.table, &f.rc, T0, 0);
        events_take(&f);

        tree_write(&f, WQ "/nvme-wq/cpumask", "f\n");
        CHECK(workqueue_table_scan(&f.table, f.host, f.posture) == 3, "the listing finds three workqueues with a cpumask");
        CHECK(find(&f, "nvme-wq") && f.table.kind_counts[SETTING_WORKQUEUE_CPUMASK] == 4, "nvme-wq is added");
        table_reconcile_all(&f.table, &f.rc, T0 + USEC_PER_SEC, 0);
        CHECK_STR(events_take(&f), "drift corrected", "the new workqueue: drift, corrected");
        CHECK_STR(read_mask(&f, "nvme-wq/cpumask"), "3", "its cpumask is written");
        CHECK(f.table.settings[0] == find(&f, WORKQUEUE_UNBOUND_OBJECT) && streq(f.table.settings[2]->object, "nvme-wq"),
              "and it sorts by name");

        tree_remove(&f, WQ "/nvme-wq");
        CHECK(workqueue_table_scan(&f.table, f.host, f.posture) == 2, "the next listing finds two");
        CHECK(!find(&f, "nvme-wq") && f.table.kind_counts[SETTING_WORKQUEUE_CPUMASK] == 3, "nvme-wq is dropped");
        CHECK(find(&f, WORKQUEUE_UNBOUND_OBJECT), "the mask for all of them stays");

        /* sysfs answers ENODEV through the old fd; a plain file still reads after its
         * removal, so the look that opens afresh (a reload, Reapply) stands in for it */
        tree_remove(&f, WQ "/blkcg_punt_bio");
        table_reconcile_all(&f.table, &f.rc, T0 + 2 * USEC_PER_SEC, RECONCILE_FORCE);
        CHECK(!find(&f, "blkcg_punt_bio") && f.table.kind_counts[SETTING_WORKQUEUE_CPUMASK] == 2,
              "a workqueue gone between listings is dropped at its read");
        CHECK_STR(events_take(&f), "", "without a failure report");
out:
        faketree_fixture_done(&f);
}

/* A kernel (or a --root tree) without workqueues in sysfs: the mask for all of them is
 * unsupported, with why; the listing finds nothing and is no error. */
static void test_no_workqueues(void) {
        Fixture f;
        Setting *all;

        fixture_init(&f);
        tree_remove(&f, "sys/devices/virtual");
        if (!CHECK(faketree_fixture_start(&f, housekeeping_config) && fixture_plan(&f), "fixture without workqueues"))
                goto out;
        all = find(&f, WORKQUEUE_UNBOUND_OBJECT);
        CHECK(f.table.kind_counts[SETTING_WORKQUEUE_CPUMASK] == 1 && all, "only the mask for all of them is planned");
        table_reconcile_all(&f.table, &f.rc, T0, 0);
        CHECK_STR(events_take(&f), "unsupported", "it is unsupported, reported once");
        CHECK(all && all->reason && strstr(all->reason, WQ "/cpumask"), "the reason names the file");
out:
        faketree_fixture_done(&f);
}

/* Before the first write the original is kept; restore puts it back, and only where the
 * value still differs from it. */
static void test_restore(void) {
        Originals *o = NULL;
        Fixture f;

        fixture_init(&f);
        tree_write(&f, WQ "/blkcg_punt_bio/cpumask", "3\n");
        if (!CHECK(faketree_fixture_start(&f, housekeeping_config) && fixture_plan(&f), "fixture"))
                goto out;
        if (!CHECK(faketree_fixture_originals(&f, &o) == 0, "originals open"))
                goto out;
        table_reconcile_all(&f.table, &f.rc, T0, 0);
        CHECK(o->n == 3 && streq_ptr(originals_get(o, SETTING_WORKQUEUE_CPUMASK, "blkcg_punt_bio"), "3"),
              "three originals kept, blkcg_punt_bio (never changed) as found");
        CHECK_STR(originals_get(o, SETTING_WORKQUEUE_CPUMASK, "writeback"), "f", "writeback's original is f");

        for (size_t i = 0; i < f.table.n; i++)
                CHECK(setting_restore(&f.rc, f.table.settings[i]) == (streq(f.table.settings[i]->object, "blkcg_punt_bio") ? 0 : 1),
                      "restore: 1 for what was changed, 0 for the rest");
        CHECK_STR(read_mask(&f, "cpumask"), "f", "the mask for all of them is f again");
        CHECK_STR(read_mask(&f, "writeback/cpumask"), "f", "writeback's is f again");
        CHECK_STR(read_mask(&f, "blkcg_punt_bio/cpumask"), "3", "blkcg_punt_bio's is as it was");
        CHECK(o->n == 0, "every original is forgotten");
out:
        originals_free(o);
        faketree_fixture_done(&f);
}

int main(void) {
        test_plan();
        test_correct_and_compare();
        test_observe();
        test_refused();
        test_appear_and_vanish();
        test_no_workqueues();
        test_restore();
        return tap_finish();
}
