/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Packet steering on a fake --root tree of 40 CPUs (masks of two 32-bit groups): the
 * [nic] rps_cpus, xps_cpus, rps_flow_cnt and [cpus] rps_default_mask keys and their
 * errors, what is planned per queue, masks compared by their CPUs, queues that appear and
 * vanish, a kernel without the files, observe mode, restore, and [sysfs] refusing the
 * files these kinds keep. */
#include <stdlib.h>

#include "config/nic-posture.h"
#include "setting/originals.h"
#include "setting/nic.h"
#include "setting/rps.h"
#include "setting/sysfs.h"
#include "host/sysfs.h"
#include "setting/table.h"
#include "faketree.h"
#include "tap.h"
#include "basic/util.h"

#define T0 (1000 * USEC_PER_SEC)
#define Q "sys/class/net/eth0/queues"
#define IFINDEX 2

typedef FaketreeFixture Fixture;

/* 40 CPUs, 2-3 isolated; eth0 (ifindex 2) with rx-0, rx-1, tx-0, tx-1 as a kernel without
 * steering shows them, and net.core.rps_default_mask. */
static void fixture_init(Fixture *f) {
        *f = (Fixture) {};
        faketree_mkdtemp(f->root, sizeof(f->root), "test-rps");
        faketree_cpus(f->root, "0-39", "2-3", "2-3");
        tree_write(f, "sys/class/net/eth0/ifindex", "2\n");
        for (unsigned i = 0; i < 2; i++) {
                tree_writef(f, "00,00000000\n", Q "/rx-%u/rps_cpus", i);
                tree_writef(f, "0\n", Q "/rx-%u/rps_flow_cnt", i);
                tree_writef(f, "00,00000000\n", Q "/tx-%u/xps_cpus", i);
                tree_writef(f, "1000\n", Q "/tx-%u/tx_maxrate", i);
        }
        tree_write(f, "proc/sys/net/core/rps_default_mask", "00,00000000\n");
        table_init(&f->table, NULL);
}

/* What the link monitor plans for eth0, and the default mask's plan (the table's other
 * kinds stay out of the way). */
static bool fixture_plan(Fixture *f) {
        return nic_table_plan(&f->table, NULL, f->host, f->posture, IFINDEX, "eth0") >= 0 &&
               setting_vtables[SETTING_RPS_DEFAULT_MASK]->plan(&f->table, f->host, f->posture) == 0;
}

static Setting *find(Fixture *f, SettingKind kind, const char *object) {
        return table_find(&f->table, kind, object);
}

static const char *read_file(Fixture *f, const char *rel) {
        return strstrip((char *) tree_read(f, rel));
}

#define events_take(f) faketree_take((f)->events, sizeof((f)->events))

/* --- the keys --- */

static Config *parse(const char *text, ErrorList *errors) {
        Config *c = config_new();

        if (!c)
                abort();
        (void) config_parse_string(c, "t.conf", text, errors);
        config_validate(c, errors);
        return c;
}

static void check_error(const char *text, const char *expected, const char *what) {
        _cleanup_error_list_ ErrorList errors = ERROR_LIST_EMPTY;
        _cleanup_config_ Config *c = parse(text, &errors);

        if (!CHECK(errors.n == 1 && strstr(errors.items[0], expected), what)) {
                printf("#   expected one error containing '%s'\n", expected);
                for (size_t i = 0; i < errors.n; i++)
                        printf("#   error: %s\n", errors.items[i]);
        }
}

static void test_config(void) {
        _cleanup_error_list_ ErrorList errors = ERROR_LIST_EMPTY;
        _cleanup_config_ Config *c = parse("[cpus]\nrps_default_mask = none\n"
                                           "[nic \"eth*\"]\nrps_cpus = 0-1,4\nxps_cpus = housekeeping\n"
                                           "rps_flow_cnt = 4096\n"
                                           "[nic \"eth1\"]\nrps_cpus = none\nrps_flow_cnt = 0\n",
                                           &errors);

        CHECK(errors.n == 0, "rps_cpus, xps_cpus, rps_flow_cnt and rps_default_mask parse");
        CHECK(c->rps_default_mask.kind == CPUS_NONE, "rps_default_mask = none is set");
        CHECK(c->n_nics == 2 && c->nics[0].rps_cpus.kind == CPUS_LIST &&
                      cpuset_count(&c->nics[0].rps_cpus.cpus) == 3,
              "rps_cpus = 0-1,4 is a list of three CPUs");
        CHECK(c->n_nics == 2 && c->nics[0].xps_cpus.kind == CPUS_HOUSEKEEPING,
              "xps_cpus = housekeeping");
        CHECK(c->n_nics == 2 && c->nics[0].rps_flow_cnt_set && c->nics[0].rps_flow_cnt == 4096, "rps_flow_cnt = 4096");
        CHECK(c->n_nics == 2 && c->nics[1].rps_cpus.kind == CPUS_NONE &&
                      c->nics[1].xps_cpus.kind == CPUS_UNSET && c->nics[1].rps_flow_cnt_set && c->nics[1].rps_flow_cnt == 0,
              "a second section: rps_cpus = none is set (steering off), xps_cpus is not");

        check_error("[nic \"eth*\"]\nrps_cpus = 1-\n", "t.conf:2: rps_cpus: '1-' is not a CPU list",
                    "a bad rps_cpus is FILE:LINE with the value");
        check_error("[nic \"eth*\"]\n\nxps_cpus = all\n",
                    "t.conf:3: xps_cpus: 'all' is not a CPU list (e.g. 2-3,6), housekeeping, isolated or none",
                    "xps_cpus = all is refused, naming what it takes");
        check_error("[nic \"eth*\"]\nrps_flow_cnt = 1000\n", "t.conf:2: rps_flow_cnt: '1000' is not 0 or a power of two",
                    "rps_flow_cnt = 1000 is refused: the kernel would read back 1024");
        check_error("[nic \"eth*\"]\nrps_flow_cnt = -1\n", "t.conf:2: rps_flow_cnt", "rps_flow_cnt = -1 is refused");
        check_error("[nic \"eth*\"]\nrps_flow_cnt = 4294967296\n", "t.conf:2: rps_flow_cnt",
                    "rps_flow_cnt above 2^32 is refused");
        check_error("[nic \"eth*\"]\nrps_flow_cnt = 4294967295\n", "t.conf:2: rps_flow_cnt",
                    "rps_flow_cnt 2^32-1 is refused");
        check_error("[cpus]\nrps_default_mask = 99999999\n", "t.conf:2: rps_default_mask: CPU number too large",
                    "a CPU past the limit in rps_default_mask");
        check_error("[sysctl]\nnet.core.rps_default_mask = 3\n[cpus]\nrps_default_mask = housekeeping\n",
                    "t.conf:2: net.core.rps_default_mask is kept by [cpus] rps_default_mask (t.conf:4)",
                    "[sysctl] and [cpus] cannot both keep rps_default_mask");
        {
                _cleanup_config_ Config *big = parse("[nic \"eth*\"]\nrps_flow_cnt = 2147483648\n", &errors);
                CHECK(errors.n == 0 && big->nics[0].rps_flow_cnt == UINT32_C(2147483648), "rps_flow_cnt = 2^31 is taken");
        }
}

/* Host facts: isolated with nothing isolated, or CPUs that are not online. */
static void test_posture_errors(void) {
        Fixture f;
        Host *h = NULL;
        Posture *p = NULL;

        fixture_init(&f);
        CHECK(!faketree_posture(f.root, "t.conf", "[cpus]\nisolated = 2-3\n[nic \"eth*\"]\nxps_cpus = 40-41\n", &h, &p),
              "xps_cpus naming CPUs that do not exist is an error (printed above)");
        posture_free(p);
        host_free(h);
        h = NULL;
        p = NULL;
        CHECK(faketree_posture(f.root, "t.conf", "[cpus]\nisolated = 2-3\n[nic \"eth*\"]\nrps_cpus = isolated\n", &h, &p),
              "rps_cpus = isolated with CPUs isolated is fine (the audit says what it costs)");
        posture_free(p);
        host_free(h);
        faketree_fixture_done(&f);
}

/* --- planning and keeping --- */

static const char config[] = "[cpus]\nrps_default_mask = housekeeping\n"
                             "[nic \"eth*\"]\nrps_cpus = housekeeping\nxps_cpus = 32,39\nrps_flow_cnt = 2048\n";

static void test_plan(void) {
        Fixture f;
        Setting *rx0, *tx1, *flow, *def;
        char buf[128];

        fixture_init(&f);
        if (!CHECK(faketree_fixture_start(&f, config) && fixture_plan(&f), "fixture"))
                goto out;
        rx0 = find(&f, SETTING_NIC_RPS_CPUS, "eth0/rx-0");
        tx1 = find(&f, SETTING_NIC_XPS_CPUS, "eth0/tx-1");
        flow = find(&f, SETTING_NIC_RPS_FLOW_CNT, "eth0/rx-1");
        def = find(&f, SETTING_RPS_DEFAULT_MASK, "net.core.rps_default_mask");
        CHECK(f.table.kind_counts[SETTING_NIC_RPS_CPUS] == 2 && f.table.kind_counts[SETTING_NIC_XPS_CPUS] == 2 &&
                      f.table.kind_counts[SETTING_NIC_RPS_FLOW_CNT] == 2 && f.table.kind_counts[SETTING_RPS_DEFAULT_MASK] == 1,
              "one setting per queue file (2 rx, 2 tx) and the default mask");
        CHECK(rx0 && streq(rx0->desired, "ff,fffffff3"), "rps_cpus desired: housekeeping 0-1,4-39 as a 40-bit mask");
        CHECK(tx1 && streq(tx1->desired, "81,00000000"), "xps_cpus desired: CPUs 32 and 39 in the upper group");
        CHECK(flow && streq(flow->desired, "2048"), "rps_flow_cnt desired: 2048");
        CHECK(def && streq(def->desired, "ff,fffffff3"), "rps_default_mask desired: the housekeeping mask");
        CHECK(rx0 && setting_nic_ifindex(rx0) == IFINDEX && setting_nic_ifindex(def) == -1,
              "queue settings belong to their interface; the default mask to none");
        CHECK(rx0 && setting_watch_path(rx0, 0, buf, sizeof(buf)) == 1 && streq(buf, Q "/rx-0/rps_cpus"),
              "inotify watches the queue's file");
        CHECK(rx0 && setting_describe(rx0, buf, sizeof(buf)) == 0 && streq(buf, "nic_rps_cpus eth0/rx-0"),
              "messages name the kind and the queue");

        table_reconcile_all(&f.table, &f.rc, T0, 0);
        CHECK_STR(events_take(&f),
                  "drift corrected drift corrected drift corrected drift corrected drift corrected drift corrected "
                  "drift corrected",
                  "every file: drift, corrected");
        CHECK_STR(read_file(&f, Q "/rx-1/rps_cpus"), "ff,fffffff3", "rx-1/rps_cpus is written");
        CHECK_STR(read_file(&f, Q "/tx-0/xps_cpus"), "81,00000000", "tx-0/xps_cpus is written");
        CHECK_STR(read_file(&f, Q "/rx-0/rps_flow_cnt"), "2048", "rx-0/rps_flow_cnt is written");
        CHECK_STR(read_file(&f, Q "/tx-0/tx_maxrate"), "1000", "a file beside them is not");
        CHECK_STR(read_file(&f, "proc/sys/net/core/rps_default_mask"), "ff,fffffff3", "rps_default_mask is written");

        /* The kernel prints as wide as its CPUs; a wider text of the same CPUs is no drift. */
        tree_write(&f, Q "/rx-0/rps_cpus", "000000ff,fffffff3\n");
        table_reconcile_all(&f.table, &f.rc, T0 + USEC_PER_SEC, RECONCILE_HINTED);
        CHECK_STR(events_take(&f), "", "000000ff,fffffff3 is the same mask: no drift");
        tree_write(&f, Q "/rx-0/rps_cpus", "ff,ffffffff\n");
        table_reconcile_all(&f.table, &f.rc, T0 + 2 * USEC_PER_SEC, RECONCILE_HINTED);
        CHECK_STR(events_take(&f), "drift corrected", "every CPU (the isolated ones too) is drift, corrected");
        CHECK_STR(read_file(&f, Q "/rx-0/rps_cpus"), "ff,fffffff3", "and written back");
        tree_write(&f, Q "/rx-1/rps_flow_cnt", "4096\n");
        table_reconcile_all(&f.table, &f.rc, T0 + 3 * USEC_PER_SEC, RECONCILE_HINTED);
        CHECK_STR(events_take(&f), "drift corrected", "another flow count is drift, corrected");
out:
        faketree_fixture_done(&f);
}

static void test_observe(void) {
        Fixture f;

        fixture_init(&f);
        if (!CHECK(faketree_fixture_start(&f, config) && fixture_plan(&f), "fixture"))
                goto out;
        f.rc.observe = true;
        table_reconcile_all(&f.table, &f.rc, T0, 0);
        CHECK_STR(events_take(&f), "drift drift drift drift drift drift drift", "observe: every file drifts");
        CHECK_STR(read_file(&f, Q "/rx-0/rps_cpus"), "00,00000000", "observe: nothing is written");
out:
        faketree_fixture_done(&f);
}

/* Queues come and go with a channel change; the kernel may lack a file. */
static void test_appear_and_vanish(void) {
        Fixture f;
        Setting *s;

        fixture_init(&f);
        if (!CHECK(faketree_fixture_start(&f, config) && fixture_plan(&f), "fixture"))
                goto out;
        table_reconcile_all(&f.table, &f.rc, T0, 0);
        events_take(&f);

        CHECK(nic_queue_table_in_step(&f.table, f.host, f.posture, IFINDEX, "eth0") == 1,
              "the table is in step with eth0's queues: a uevent about them needs no replan");
        tree_write(&f, Q "/rx-2/rps_cpus", "00,00000000\n");
        tree_write(&f, Q "/rx-2/rps_flow_cnt", "0\n");
        CHECK(nic_queue_table_in_step(&f.table, f.host, f.posture, IFINDEX, "eth0") == 0, "rx-2 appeared: not in step");
        CHECK(nic_queue_table_rescan(&f.table, f.host, f.posture) == 2, "the rescan finds rx-2's two files");
        CHECK(nic_queue_table_in_step(&f.table, f.host, f.posture, IFINDEX, "eth0") == 1, "in step again");
        CHECK(find(&f, SETTING_NIC_RPS_CPUS, "eth0/rx-2") && find(&f, SETTING_NIC_RPS_FLOW_CNT, "eth0/rx-2"),
              "rx-2 is kept from now on");
        CHECK(nic_queue_table_rescan(&f.table, f.host, f.posture) == 0, "a second rescan adds nothing");
        table_reconcile_all(&f.table, &f.rc, T0 + USEC_PER_SEC, 0);
        CHECK_STR(events_take(&f), "drift corrected drift corrected", "the new queue: drift, corrected");
        CHECK_STR(read_file(&f, Q "/rx-2/rps_cpus"), "ff,fffffff3", "its mask is written");

        /* Replanning the interface (the uevent's path) keeps what was learnt. */
        s = find(&f, SETTING_NIC_RPS_CPUS, "eth0/rx-2");
        if (s)
                s->corrections_pos = 3;
        CHECK(nic_table_plan(&f.table, NULL, f.host, f.posture, IFINDEX, "eth0") == 1, "replan eth0");
        s = find(&f, SETTING_NIC_RPS_CPUS, "eth0/rx-2");
        CHECK(s && s->state == SETTING_CORRECTED && s->corrections_pos == 3, "a replanned queue keeps its state and history");

        faketree_remove_at(f.root, Q "/rx-2");
        CHECK(nic_queue_table_in_step(&f.table, f.host, f.posture, IFINDEX, "eth0") == 0,
              "rx-2 gone (channels reduced): not in step");
        table_reconcile_all(&f.table, &f.rc, T0 + 2 * USEC_PER_SEC, RECONCILE_FORCE);
        CHECK(!find(&f, SETTING_NIC_RPS_CPUS, "eth0/rx-2") && !find(&f, SETTING_NIC_RPS_FLOW_CNT, "eth0/rx-2"),
              "a queue gone (channels reduced) is dropped at its read");
        CHECK_STR(events_take(&f), "", "without a failure report");

        /* Gone between the look and the write (channels reduced after the uevent): the
         * open fd still reads the old file, the write finds no queue. */
        tree_write(&f, Q "/rx-1/rps_cpus", "ff,ffffffff\n");
        faketree_remove_at(f.root, Q "/rx-1");
        table_reconcile_all(&f.table, &f.rc, T0 + 3 * USEC_PER_SEC, RECONCILE_HINTED);
        CHECK(!find(&f, SETTING_NIC_RPS_CPUS, "eth0/rx-1"), "a queue gone before the write is dropped");
        CHECK(!strstr(events_take(&f), "failed"), "without a failure report");

        /* A queue directory without its file while tx-0 has it: the kernel is still
         * creating it, and its uevent will replan the interface. */
        faketree_remove_at(f.root, Q "/tx-1/xps_cpus");
        table_reconcile_all(&f.table, &f.rc, T0 + 3 * USEC_PER_SEC, RECONCILE_FORCE);
        CHECK(!find(&f, SETTING_NIC_XPS_CPUS, "eth0/tx-1"),
              "a queue whose file is not there yet (tx-0 has it) is dropped, left to its uevent");
        CHECK_STR(events_take(&f), "", "without a report");
        /* No queue has it: a kernel without CONFIG_XPS. */
        faketree_remove_at(f.root, Q "/tx-0/xps_cpus");
        table_reconcile_all(&f.table, &f.rc, T0 + 3 * USEC_PER_SEC, RECONCILE_FORCE);
        s = find(&f, SETTING_NIC_XPS_CPUS, "eth0/tx-0");
        CHECK(s && s->state == SETTING_UNSUPPORTED && s->reason && strstr(s->reason, "this kernel has no xps_cpus"),
              "a queue without the file, as every queue (no CONFIG_XPS), is unsupported, with why");
        CHECK_STR(events_take(&f), "unsupported", "reported once");

        /* A renamed interface's directory no longer answers to the ifindex: not rescanned. */
        tree_write(&f, "sys/class/net/eth0/ifindex", "7\n");
        tree_write(&f, Q "/rx-3/rps_cpus", "00,00000000\n");
        CHECK(nic_queue_table_rescan(&f.table, f.host, f.posture) == 0,
              "an interface whose name now has another ifindex is left to the link monitor");

        CHECK(nic_table_drop(&f.table, f.posture, IFINDEX) == 0 && f.table.kind_counts[SETTING_NIC_RPS_CPUS] == 0 &&
                      f.table.kind_counts[SETTING_NIC_XPS_CPUS] == 0 && f.table.kind_counts[SETTING_NIC_RPS_FLOW_CNT] == 0,
              "the interface removed: every queue setting goes with it");
        CHECK(find(&f, SETTING_RPS_DEFAULT_MASK, "net.core.rps_default_mask"), "the default mask stays");
out:
        faketree_fixture_done(&f);
}

/* The daemon's table hooks watch a setting as it is added and unwatch it as it leaves.
 * These hand out watch numbers and count the ones given back. */
static int next_watch = 1, watches_given_back;

static void hook_added(void *userdata, Setting *s) {
        s->watches[0] = next_watch++;
}

static void hook_removed(void *userdata, Setting *s) {
        if (s->watches[0] >= 0)
                watches_given_back++;
        s->watches[0] = -1;
}

/* A replan (a queue uevent, a rename) swaps every setting of the interface for a new one:
 * the new one keeps the watch it got on its way in. */
static void test_replan_keeps_watches(void) {
        const SettingTableHooks hooks = { hook_added, hook_removed, NULL };
        Fixture f;
        bool all_watched = true;

        fixture_init(&f);
        table_init(&f.table, &hooks);
        if (!CHECK(faketree_fixture_start(&f, config) && fixture_plan(&f), "fixture"))
                goto out;
        CHECK(nic_table_plan(&f.table, NULL, f.host, f.posture, IFINDEX, "eth0") == 1, "replan eth0");
        for (size_t i = 0; i < f.table.n; i++)
                all_watched = all_watched && f.table.settings[i]->watches[0] >= 0;
        CHECK(all_watched, "every setting of the replanned interface is watched");
        CHECK(watches_given_back == 6, "the six replaced settings gave their watches back");
out:
        faketree_fixture_done(&f);
}

static void test_no_default_mask(void) {
        Fixture f;
        Setting *def;

        fixture_init(&f);
        faketree_remove_at(f.root, "proc/sys/net/core/rps_default_mask");
        if (!CHECK(faketree_fixture_start(&f, config) && fixture_plan(&f),
                   "fixture without rps_default_mask (Linux 6.1)"))
                goto out;
        table_reconcile_all(&f.table, &f.rc, T0, 0);
        events_take(&f);
        def = find(&f, SETTING_RPS_DEFAULT_MASK, "net.core.rps_default_mask");
        CHECK(def && def->state == SETTING_UNSUPPORTED && def->reason && strstr(def->reason, "Linux 6.3"),
              "rps_default_mask is unsupported, saying which kernels have it");
        table_reconcile_all(&f.table, &f.rc, T0 + USEC_PER_SEC, 0);
        CHECK_STR(events_take(&f), "", "reported once");
out:
        faketree_fixture_done(&f);
}

static void test_restore(void) {
        Originals *o = NULL;
        Fixture f;

        fixture_init(&f);
        tree_write(&f, Q "/tx-1/xps_cpus", "81,00000000\n");
        if (!CHECK(faketree_fixture_start(&f, config) && fixture_plan(&f), "fixture"))
                goto out;
        if (!CHECK(faketree_fixture_originals(&f, &o) == 0, "originals open"))
                goto out;
        table_reconcile_all(&f.table, &f.rc, T0, 0);
        CHECK(o->n == 7 && streq_ptr(originals_get(o, SETTING_NIC_XPS_CPUS, "eth0/tx-1"), "81,00000000"),
              "seven originals kept, tx-1/xps_cpus (right already) as found");
        CHECK_STR(originals_get(o, SETTING_NIC_RPS_CPUS, "eth0/rx-0"), "00,00000000", "rx-0's original mask");
        for (size_t i = 0; i < f.table.n; i++)
                (void) setting_restore(&f.rc, f.table.settings[i]);
        CHECK_STR(read_file(&f, Q "/rx-0/rps_cpus"), "00,00000000", "rx-0/rps_cpus is restored");
        CHECK_STR(read_file(&f, Q "/rx-1/rps_flow_cnt"), "0", "rx-1/rps_flow_cnt is restored");
        CHECK_STR(read_file(&f, Q "/tx-0/xps_cpus"), "00,00000000", "tx-0/xps_cpus is restored");
        CHECK_STR(read_file(&f, Q "/tx-1/xps_cpus"), "81,00000000", "tx-1/xps_cpus, never changed, is as it was");
        CHECK_STR(read_file(&f, "proc/sys/net/core/rps_default_mask"), "00,00000000", "rps_default_mask is restored");
        CHECK(o->n == 0, "every original is forgotten");
out:
        originals_free(o);
        faketree_fixture_done(&f);
}

/* A replan whose listing of the queues misses one that is there (sysfs listed mid-change:
 * played here by listing another tree, where rx-1 is not, while the reconciler's host has
 * it): the missed queue goes back to its original at once, its original forgotten, rather
 * than being dropped as "removed with its channel" with lowlatd's mask on it and its
 * original on file for no setting, which `lowlatctl restore` then skipped (test_nic_faults'
 * restore after the churn). A queue really removed (tx-1, in neither tree) is dropped
 * without a put-back. */
static void test_replan_missed_queue(void) {
        char listed[40];
        Host *listing = NULL;
        Originals *o = NULL;
        unsigned restored = 99, failed = 99;
        Fixture f;

        fixture_init(&f);
        faketree_mkdtemp(listed, sizeof(listed), "test-rps-listed");
        faketree_write(listed, "sys/class/net/eth0/ifindex", "2\n");
        faketree_write(listed, Q "/rx-0/rps_cpus", "00,00000000\n");
        faketree_write(listed, Q "/tx-0/xps_cpus", "00,00000000\n");
        if (!CHECK(faketree_fixture_start(&f, config) && fixture_plan(&f) && host_open(listed, &listing) >= 0,
                   "fixture"))
                goto out;
        if (!CHECK(faketree_fixture_originals(&f, &o) == 0, "originals open"))
                goto out;
        table_reconcile_all(&f.table, &f.rc, T0, 0);
        events_take(&f);
        CHECK_STR(read_file(&f, Q "/rx-1/rps_cpus"), "ff,fffffff3", "rx-1/rps_cpus holds lowlatd's mask");
        CHECK(originals_get(o, SETTING_NIC_RPS_CPUS, "eth0/rx-1") &&
                      originals_get(o, SETTING_NIC_XPS_CPUS, "eth0/tx-1"),
              "with its original on file, and tx-1's");

        faketree_remove_at(f.root, Q "/tx-1");
        CHECK(nic_table_replan(&f.table, &f.rc, NULL, listing, f.posture, IFINDEX, "eth0", &restored, &failed) == 1,
              "replan eth0 from a listing without rx-1 and tx-1");
        CHECK(!find(&f, SETTING_NIC_RPS_CPUS, "eth0/rx-1") && find(&f, SETTING_NIC_RPS_CPUS, "eth0/rx-0"),
              "the listing planned rx-0, not rx-1");
        CHECK_STR(read_file(&f, Q "/rx-1/rps_cpus"), "00,00000000", "the missed rx-1's rps_cpus is put back");
        CHECK_STR(read_file(&f, Q "/rx-1/rps_flow_cnt"), "0", "and its rps_flow_cnt");
        CHECK(!originals_get(o, SETTING_NIC_RPS_CPUS, "eth0/rx-1") &&
                      !originals_get(o, SETTING_NIC_RPS_FLOW_CNT, "eth0/rx-1"),
              "their originals are forgotten: the plan that lists rx-1 next records its true value");
        if (!CHECK(restored == 2 && failed == 0, "two put back (rx-1's two files), none failed"))
                printf("#   restored %u, failed %u\n", restored, failed);
        CHECK(originals_get(o, SETTING_NIC_RPS_CPUS, "eth0/rx-0") != NULL, "rx-0, planned again, keeps its original");

        /* The next listing shows rx-1 again: planned afresh, its original is its true value. */
        CHECK(nic_table_plan(&f.table, NULL, f.host, f.posture, IFINDEX, "eth0") == 1, "replan eth0 from the tree");
        table_reconcile_all(&f.table, &f.rc, T0 + USEC_PER_SEC, 0);
        CHECK_STR(originals_get(o, SETTING_NIC_RPS_CPUS, "eth0/rx-1"), "00,00000000",
                  "rx-1's original is its own mask");
        for (size_t i = 0; i < f.table.n; i++)
                (void) setting_restore(&f.rc, f.table.settings[i]);
        CHECK_STR(read_file(&f, Q "/rx-1/rps_cpus"), "00,00000000", "and restore puts it back");
out:
        originals_free(o);
        host_free(listing);
        faketree_remove(listed);
        faketree_fixture_done(&f);
}

/* One file, one keeper: [sysfs] refuses the queue files, through /sys/class/net or the
 * device's own path. */
static void test_sysfs_refuses(void) {
        Fixture f;
        Host *h = NULL;
        _cleanup_free_ char *reason = NULL, *reason2 = NULL;

        fixture_init(&f);
        tree_write(&f, "sys/devices/pci0000:00/0000:00:03.0/virtio0/net/eth9/queues/tx-0/xps_cpus", "0\n");
        if (!CHECK(host_open(f.root, &h) >= 0, "host"))
                goto out;
        CHECK(sysfs_file_check(h, Q "/rx-0/rps_cpus", &reason) == SYSFS_FILE_REFUSED && reason &&
                      strstr(reason, "nic_rps_cpus"),
              "[sysfs] refuses a queue's rps_cpus, naming the kind that keeps it");
        CHECK(sysfs_file_check(h, "sys/devices/pci0000:00/0000:00:03.0/virtio0/net/eth9/queues/tx-0/xps_cpus",
                               &reason2) == SYSFS_FILE_REFUSED &&
                      reason2 && strstr(reason2, "nic_xps_cpus"),
              "and a PCI NIC's xps_cpus by its device path");
out:
        host_free(h);
        faketree_fixture_done(&f);
}

int main(void) {
        test_config();
        test_posture_errors();
        test_plan();
        test_observe();
        test_appear_and_vanish();
        test_replan_keeps_watches();
        test_no_default_mask();
        test_restore();
        test_replan_missed_queue();
        test_sysfs_refuses();
        return tap_finish();
}
