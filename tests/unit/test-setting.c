/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* setting.c's state machine, whatever the kind: the registry's names, restore, fights and
 * their back-off, the counters, and what a reload inherits. */
#include <stdlib.h>

#include "setting/originals.h"
#include "setting/dma.h"
#include "setting-fixture.h"
#include "setting/irq.h"
#include "setting/sysctl.h"

/* The registry: every kind has a name that reads back, and the operations the state
 * machine cannot do without. One vocabulary for events too. */
static void test_registry(void) {
        for (SettingKind k = 0; k < _SETTING_KIND_MAX; k++) {
                const SettingVTable *vt = setting_vtables[k];
                const char *name = setting_kind_to_string(k);
                char what[96];

                snprintf(what, sizeof(what), "kind %d (%s): a name that reads back, read, write, a size", (int) k,
                         name ?: "?");
                CHECK(name && setting_kind_from_string(name) == k && vt && vt->read && vt->write &&
                              vt->object_size >= sizeof(Setting),
                      what);
                for (SettingKind j = 0; j < k; j++)
                        if (streq_ptr(setting_kind_to_string(j), name))
                                CHECK(false, "kind names are unique");
        }
        CHECK(setting_kind_to_string(_SETTING_KIND_MAX) == NULL && setting_kind_to_string(_SETTING_KIND_INVALID) == NULL,
              "no name outside the table");
        CHECK(setting_kind_from_string("irq") == _SETTING_KIND_INVALID && setting_kind_from_string(NULL) == _SETTING_KIND_INVALID,
              "an unknown name is -EINVAL");
        for (SettingState st = 0; st < _SETTING_STATE_MAX; st++)
                CHECK(setting_state_to_string(st) && setting_state_from_string(setting_state_to_string(st)) == st,
                      "every state's name reads back");
        for (EventId e = 0; e < _EVENT_ID_MAX; e++)
                CHECK(event_to_string(e) && event_from_string(event_to_string(e)) == e && event_info(e) &&
                              event_info(e)->message_id,
                      "every event has a name that reads back and a MESSAGE_ID");
        CHECK_STR(event_to_string(EVENT_UNMOVABLE), setting_state_to_string(SETTING_UNMOVABLE),
                  "the unmovable event and state have one name");
}

/* What restore writes back is what the kind could have read (#24 item 8): a value of the
 * kind's own shape passes, a crafted one does not, kind by kind, on a host of CPUs 0-3.
 * The kinds whose restore writes no text of the file (it drops a hold, or keeps none) are
 * the only ones without a check. */
typedef struct OriginalCase {
        SettingKind kind;
        const char *good, *good2, *crafted, *crafted2;
} OriginalCase;

static const OriginalCase original_cases[] = {
        { SETTING_IRQ_AFFINITY, "0-1", "3", "99999999-0", "zz" },
        { SETTING_IRQ_DEFAULT_AFFINITY, "f", "00000000,00000003", "zz zz", "0" },
        { SETTING_IRQBALANCE_BAN, "none", "2-3", "2-3 $(x)", "9" },
        { SETTING_SYSCTL, "4096", "", "1 2 3 $(x)", "1 2 3x" },
        { SETTING_GOVERNOR, "performance", "schedutil", "perf ormance", "Powersave" },
        { SETTING_CPUIDLE, "0", "1", "2", "1; reboot" },
        { SETTING_RESUME_LATENCY, "n/a", "0", "-1", "2147483647" },
        { SETTING_MIN_FREQ, "800000", "0", "800 MHz", "-1" },
        { SETTING_ENERGY_PERFORMANCE_PREFERENCE, "balance_performance", "default", "power save", "x/y" },
        { SETTING_BOOST, "on", "off", "1", "yes" },
        { SETTING_CPUSET_PARTITION, "member", "root", "isolated-ish", "" },
        { SETTING_SLICE_CPUS, "unset", "0-1", "0-7", "" },
        { SETTING_KTHREAD_AFFINITY, "0-3 @12345", "2 @0", "0-3", "0-9 @1" },
        { SETTING_KTHREAD_POLICY, "fifo:50 @7", "other @7", "fifo:50", "rr:x @7" },
        { SETTING_SYSFS, "0", "madvise", "always [madvise] never", NULL },
        { SETTING_WORKQUEUE_CPUMASK, "3", "0000000f", "1 2 3 $(x)", "00000000" },
        { SETTING_FAIR_SERVER, "50000000", "0", "50ms", "-5" },
        { SETTING_NIC_COALESCE, "on", "off", "1x", "maybe" }, /* param 0: adaptive-rx, on or off */
        { SETTING_NIC_RING, "on", "off", "4096 ", "" },
        { SETTING_NIC_CHANNELS, "on", "off", "all", "" },
        { SETTING_NIC_FEATURE, "on", "off", "1", "enabled" },
        { SETTING_NIC_QDISC, "fq", "pfifo_fast", "fq; tc qdisc del", "FQ" },
        { SETTING_NIC_PAUSE, "on", "off", "2", "" },
        { SETTING_NIC_EEE, "on", "off", "-", "" },
        { SETTING_NIC_TXQUEUELEN, "1000", "0", "4294967296", "on" },
        { SETTING_NIC_RPS_CPUS, "00000000", "f", "16", "f,g" },
        { SETTING_NIC_RPS_FLOW_CNT, "0", "4096", "4096 flows", "4294967296" },
        { SETTING_NIC_XPS_CPUS, "0", "3", "ff", "0x3" },
        { SETTING_RPS_DEFAULT_MASK, "0", "c", "1 2 3 $(x)", "10" },
};

/* A bare setting of kind k: what the checks look at, nothing opened. */
static void bare_setting_free(Setting *s) {
        if (!s)
                return;
        free(s->desired);
        free(s->reason);
        free(s);
}

static void test_originals_by_kind(void) {
        bool seen[_SETTING_KIND_MAX] = {};
        Fixture f;

        fixture_init(&f);
        if (!CHECK(fixture_start(&f, "[cpus]\nisolated = 2-3\n"), "originals fixture"))
                { fixture_done(&f); return; }
        for (size_t i = 0; i < ELEMENTSOF(original_cases); i++) {
                const OriginalCase *c = &original_cases[i];
                const char *name = setting_kind_to_string(c->kind), *good[] = { c->good, c->good2 },
                           *crafted[] = { c->crafted, c->crafted2 };
                const SettingVTable *vt = setting_vtables[c->kind];
                Setting *s = setting_alloc(c->kind, "object");
                char what[160];

                seen[c->kind] = true;
                if (!CHECK(s && setting_set_desired(s, "1") >= 0 && vt->original_problem, name))
                        { bare_setting_free(s); continue; }
                for (size_t k = 0; k < 2; k++) {
                        const char *problem = vt->original_problem(s, &f.rc, good[k]);
                        snprintf(what, sizeof(what), "%s: the original '%s' passes (%s)", name, good[k],
                                 problem ?: "no problem");
                        CHECK(!problem, what);
                        if (!crafted[k])
                                continue;
                        snprintf(what, sizeof(what), "%s: the crafted original '%s' is refused", name, crafted[k]);
                        CHECK(vt->original_problem(s, &f.rc, crafted[k]) != NULL, what);
                }
                bare_setting_free(s);
        }
        for (SettingKind k = 0; k < _SETTING_KIND_MAX; k++) {
                bool writes_nothing = k == SETTING_CPU_DMA_LATENCY || k == SETTING_TIMESTAMPING_HOLD ||
                                      k == SETTING_STRAY_TASKS;
                char what[160];

                snprintf(what, sizeof(what), "%s: %s", setting_kind_to_string(k),
                         writes_nothing ? "its restore writes no original text: no check, no case"
                                        : "checks its originals, and has a case here");
                CHECK(writes_nothing ? !setting_vtables[k]->original_problem && !seen[k]
                                     : setting_vtables[k]->original_problem && seen[k],
                      what);
        }
        fixture_done(&f);
}

/* Restore puts back only what lowlatd changed and what still differs: an IRQ the kernel
 * refused at the first write has an original on file but was never changed (the VM e2e
 * run: restore failed with EPERM on the timer, the cascade and managed queues). */
static void test_restore_only_what_changed(void) {
        _cleanup_free_ char *dir = NULL;
        Setting *ro = NULL, *rw = NULL, *sys = NULL;
        Originals *o = NULL;
        Fixture f;

        fixture_init(&f);
        tree_add_irq(&f, 24, "0-3\n");
        tree_chmod(&f, "proc/irq/24/smp_affinity_list", 0444);
        tree_add_irq(&f, 25, "0-3\n");
        if (!CHECK(fixture_start(&f, "[cpus]\nisolated = 2-3\n"), "restore fixture"))
                { fixture_done(&f); return; }
        dir = strdup_printf("%s/run", f.root);
        CHECK(dir && originals_open(dir, f.root, &o) == 0, "originals open");
        f.rc.originals = o;
        CHECK(setting_new_irq(f.posture, 24, "timer", &ro) == 0 && setting_new_irq(f.posture, 25, "eth0", &rw) == 0 &&
              setting_new_sysctl("net.core.somaxconn", "4096", &sys) == 0, "settings");
        if (!o || !ro || !rw || !sys)
                goto out;
        setting_reconcile(&f.rc, ro, T0, 0);
        setting_reconcile(&f.rc, rw, T0, 0);
        setting_reconcile(&f.rc, sys, T0, 0);
        CHECK(ro->state == SETTING_UNMOVABLE && rw->state == SETTING_CORRECTED && sys->state == SETTING_CORRECTED,
              "IRQ 24 unmovable, IRQ 25 and the sysctl corrected");
        CHECK(o->n == 2, "two originals on file (not the unmovable IRQ's: it is known refused before any write)");
        /* someone puts the sysctl back to what it was before lowlatd */
        tree_write(&f, "proc/sys/net/core/somaxconn", "128\n");

        CHECK(setting_restore(&f.rc, ro) == 0, "the unmovable IRQ: nothing to restore, and no error");
        CHECK_STR(tree_read(&f, "proc/irq/24/smp_affinity_list"), "0-3\n", "and it is not written");
        CHECK(setting_restore(&f.rc, rw) == 1, "IRQ 25 is restored");
        CHECK_STR(tree_read(&f, "proc/irq/25/smp_affinity_list"), "0-3", "to 0-3");
        CHECK(setting_restore(&f.rc, sys) == 0, "the sysctl already holds its original: nothing to write");
        CHECK(o->n == 0, "and every original is forgotten");
out:
        setting_free(ro);
        setting_free(rw);
        setting_free(sys);
        originals_free(o);
        fixture_done(&f);
}

static void test_fight(void) {
        Fixture f;
        Setting *s = NULL;
        const char *path = "proc/sys/net/core/somaxconn";
        uint64_t t = T0;

        fixture_init(&f);
        if (!CHECK(fixture_start(&f, ""), "fight fixture"))
                { fixture_done(&f); return; }
        CHECK(setting_new_sysctl("net.core.somaxconn", "4096", &s) == 0, "somaxconn setting");
        if (!s)
                goto out;
        CHECK(!s->corrections_at, "no ring of correction times before the first correction");

        for (unsigned i = 0; i < FIGHT_CORRECTIONS; i++) {
                char what[80];
                tree_write(&f, path, "128\n");
                t = T0 + i * USEC_PER_SEC;
                setting_reconcile(&f.rc, s, t, 0);
                snprintf(what, sizeof(what), "correction %u of %u within the window", i + 1, FIGHT_CORRECTIONS);
                if (i + 1 < FIGHT_CORRECTIONS)
                        CHECK_STR(events_take(&f), "drift corrected", what);
                else {
                        /* the order of "fight" and "corrected" in one pass is not specified */
                        const char *ev = events_take(&f);
                        if (!CHECK(streq(ev, "drift corrected fight") || streq(ev, "drift fight corrected"),
                                   "the fifth correction within the window starts one fight"))
                                printf("#   events: '%s'\n", ev);
                }
        }
        CHECK(s->fighting, "the setting is in a fight");
        uint64_t last_correction = t;

        /* drift during the back-off: reported, not corrected */
        tree_write(&f, path, "128\n");
        setting_reconcile(&f.rc, s, last_correction + USEC_PER_SEC, 0);
        CHECK_STR(events_take(&f), "drift", "in a fight, drift is reported but the correction deferred");
        CHECK_STR(tree_read(&f, path), "128\n", "not written during the back-off");
        setting_reconcile(&f.rc, s, last_correction + FIGHT_BACKOFF_USEC - 1, 0);
        CHECK_STR(events_take(&f), "", "still deferred just before the back-off ends");
        CHECK_STR(tree_read(&f, path), "128\n", "still not written");
        CHECK(s->state == SETTING_DRIFTED, "drifted while deferred");

        t = last_correction + FIGHT_BACKOFF_USEC;
        setting_reconcile(&f.rc, s, t, 0);
        CHECK_STR(events_take(&f), "corrected", "corrected once the back-off is over, no second fight event");
        CHECK_STR(strstrip((char *) tree_read(&f, path)), "4096", "written after the back-off");
        last_correction = t;

        /* the back-off applies to each correction while the fight lasts */
        tree_write(&f, path, "256\n");
        setting_reconcile(&f.rc, s, last_correction + USEC_PER_SEC, 0);
        CHECK_STR(events_take(&f), "drift", "next drift in the fight is deferred again");
        setting_reconcile(&f.rc, s, last_correction + FIGHT_BACKOFF_USEC, 0);
        CHECK_STR(events_take(&f), "corrected", "and corrected after another back-off");
        last_correction += FIGHT_BACKOFF_USEC;

        /* quiet: the last drift was seen at last_correction (the deferred one was still drifted) */
        setting_tick(&f.rc, s, last_correction + FIGHT_QUIET_USEC - USEC_PER_SEC, 0);
        CHECK_STR(events_take(&f), "", "fight not over before 60 s without drift");
        setting_tick(&f.rc, s, last_correction + FIGHT_QUIET_USEC, 0);
        CHECK_STR(events_take(&f), "fight-ended", "fight over after 60 s without drift");
        CHECK(!s->fighting, "no longer fighting");
        CHECK(!s->corrections_at, "the ring of correction times is given back when the fight ends");
        setting_tick(&f.rc, s, last_correction + 2 * FIGHT_QUIET_USEC, 0);
        CHECK_STR(events_take(&f), "", "fight-ended reported once");

        /* after the fight, corrections are immediate again */
        tree_write(&f, path, "128\n");
        t = last_correction + 2 * FIGHT_QUIET_USEC;
        setting_reconcile(&f.rc, s, t, 0);
        CHECK_STR(events_take(&f), "drift corrected", "after the fight a drift is corrected at once");
        CHECK(s->corrections_at && s->corrections_at[(s->corrections_pos + FIGHT_CORRECTIONS - 1) % FIGHT_CORRECTIONS] == t &&
              s->corrections_at[s->corrections_pos] == 0,
              "a correction after the fight starts a new ring, the old times forgotten");
out:
        setting_free(s);
        fixture_done(&f);
}

/* The first application of the posture is not drift: an alert on drift would fire at every
 * start. What a pass under RECONCILE_APPLYING sets is counted as applied; drift and
 * corrections count what happens to the posture once it is in place; the pass after a
 * restore counts no drift; failures count at any time; a fight counts once. */
static void test_counters(void) {
        Fixture f;
        Setting *s = NULL, *irq = NULL;
        const char *path = "proc/sys/net/core/somaxconn";
        uint64_t t = T0;

        fixture_init(&f);
        tree_add_irq(&f, 24, "0-3\n");
        if (!CHECK(fixture_start(&f, "[cpus]\nisolated = 2-3\n"), "counters fixture"))
                { fixture_done(&f); return; }
        CHECK(setting_new_sysctl("net.core.somaxconn", "4096", &s) == 0 && setting_new_irq(f.posture, 24, NULL, &irq) == 0,
              "a sysctl and an IRQ");
        if (!s || !irq)
                goto out;

        setting_reconcile(&f.rc, s, t, RECONCILE_FORCE | RECONCILE_APPLYING);
        setting_reconcile(&f.rc, irq, t, RECONCILE_FORCE | RECONCILE_APPLYING);
        CHECK_STR(events_take(&f), "drift corrected drift corrected", "the first pass sets both");
        CHECK(f.rc.counters.applied == 2 && f.rc.counters.drift_events == 0 && f.rc.counters.corrections == 0,
              "first pass: 2 applied, no drift, no correction");

        tree_write(&f, path, "128\n");
        setting_reconcile(&f.rc, s, t += USEC_PER_SEC, RECONCILE_HINTED);
        CHECK(f.rc.counters.drift_events == 1 && f.rc.counters.corrections == 1 && f.rc.counters.applied == 2,
              "a rewrite once the posture is in place: one drift, one correction");

        /* a reload finds it rewritten again: put in place by the reload's pass, not drift */
        tree_write(&f, path, "256\n");
        setting_reconcile(&f.rc, s, t += USEC_PER_SEC, RECONCILE_FORCE | RECONCILE_APPLYING);
        CHECK(f.rc.counters.drift_events == 1 && f.rc.counters.corrections == 1 && f.rc.counters.applied == 3,
              "a reload's pass counts as applied");

        /* observe mode after a restore: the quiet pass finds every setting off target */
        f.rc.observe = true;
        tree_write(&f, path, "128\n");
        setting_reconcile(&f.rc, s, t += USEC_PER_SEC, RECONCILE_FORCE | RECONCILE_QUIET);
        CHECK(s->state == SETTING_DRIFTED && f.rc.counters.drift_events == 1, "the pass after a restore counts no drift");
        f.rc.observe = false;
        setting_reconcile(&f.rc, s, t += USEC_PER_SEC, RECONCILE_FORCE | RECONCILE_APPLYING);
        CHECK(s->state == SETTING_CORRECTED && f.rc.counters.applied == 4 && f.rc.counters.corrections == 1,
              "enforcing again (a good reload) applies it");

        /* The rewrite above is the first of FIGHT_CORRECTIONS corrections in the window:
         * the fourth one here starts the fight, the fifth rewrite waits for the back-off. */
        uint64_t d0 = f.rc.counters.drift_events, c0 = f.rc.counters.corrections;
        for (unsigned i = 0; i < FIGHT_CORRECTIONS; i++) {
                tree_write(&f, path, i % 2 ? "256\n" : "128\n");
                setting_reconcile(&f.rc, s, t += USEC_PER_SEC, 0);
        }
        (void) events_take(&f);
        CHECK(s->fighting && f.rc.counters.fights == 1, "five corrections within the window: one fight counted");
        CHECK(f.rc.counters.drift_events == d0 + FIGHT_CORRECTIONS && f.rc.counters.corrections == c0 + FIGHT_CORRECTIONS - 1,
              "every rewrite in the fight is drift; the one in the back-off waits for its correction");
out:
        setting_free(s);
        setting_free(irq);
        fixture_done(&f);
}

static void test_no_fight_when_slow(void) {
        Fixture f;
        Setting *s = NULL;

        fixture_init(&f);
        if (!CHECK(fixture_start(&f, ""), "slow fixture"))
                { fixture_done(&f); return; }
        CHECK(setting_new_sysctl("net.core.somaxconn", "4096", &s) == 0, "somaxconn setting");
        for (unsigned i = 0; i < 2 * FIGHT_CORRECTIONS; i++) {
                tree_write(&f, "proc/sys/net/core/somaxconn", "128\n");
                setting_reconcile(&f.rc, s, T0 + i * 20 * USEC_PER_SEC, 0);
        }
        CHECK(!strstr(events_take(&f), "fight") && !s->fighting, "one correction every 20 s is not a fight");
        setting_free(s);
        fixture_done(&f);
}

static void test_inherit(void) {
        Fixture f;
        Setting *old = NULL, *same = NULL, *changed = NULL, *sys_old = NULL, *sys_new = NULL;
        int hold;

        fixture_init(&f);
        if (!CHECK(fixture_start(&f, ""), "inherit fixture"))
                { fixture_done(&f); return; }

        CHECK(setting_new_cpu_dma_latency(10, &old) == 0, "latency setting");
        setting_reconcile(&f.rc, old, T0, 0);
        events_take(&f);
        hold = setting_dma_hold_fd(old);
        CHECK(fd_is_open(hold), "the old setting holds the latency request");

        CHECK(setting_new_cpu_dma_latency(10, &same) == 0, "same latency after a reload");
        CHECK(setting_same(same, old), "same kind, object and value");
        setting_inherit(same, old);
        CHECK(setting_dma_hold_fd(same) == hold && setting_dma_hold_fd(old) == -1, "unchanged value: the hold_fd moves to the new setting");
        CHECK(fd_is_open(setting_dma_hold_fd(same)), "and stays open");
        CHECK(same->state == SETTING_CORRECTED && streq_ptr(same->observed, "10"), "state and observed are inherited");
        setting_free(old);
        old = NULL;
        CHECK(fd_is_open(hold), "freeing the old setting does not close the inherited hold");
        setting_reconcile(&f.rc, same, T0 + USEC_PER_SEC, 0);
        CHECK_STR(events_take(&f), "", "the inherited setting reports nothing new");

        CHECK(setting_new_cpu_dma_latency(50, &changed) == 0, "new latency value after a reload");
        CHECK(!setting_same(changed, same), "a new value is not the same setting");
        setting_inherit(changed, same);
        CHECK(setting_dma_hold_fd(changed) == hold, "a new latency is written into the same request, without a gap");
        CHECK(changed->state == SETTING_PENDING, "but its state starts afresh");
        tree_write_int32(&f, "dev/cpu_dma_latency", 10);
        setting_reconcile(&f.rc, changed, T0 + 2 * USEC_PER_SEC, 0);
        CHECK_STR(events_take(&f), "", "10 is stricter than 50, so ok without a write");

        CHECK(setting_new_sysctl("net.core.somaxconn", "4096", &sys_old) == 0, "sysctl setting");
        setting_reconcile(&f.rc, sys_old, T0, 0);
        events_take(&f);
        CHECK(setting_new_sysctl("net.core.somaxconn", "1024", &sys_new) == 0, "sysctl with a new value");
        setting_inherit(sys_new, sys_old);
        CHECK(sys_new->state == SETTING_PENDING && !sys_new->observed, "a changed sysctl does not inherit its state");
        setting_reconcile(&f.rc, sys_new, T0 + USEC_PER_SEC, 0);
        CHECK_STR(events_take(&f), "drift corrected", "the new value is applied");
        CHECK_STR(strstrip((char *) tree_read(&f, "proc/sys/net/core/somaxconn")), "1024", "somaxconn is 1024");

        setting_free(same);
        setting_free(changed);
        setting_free(sys_old);
        setting_free(sys_new);
        fixture_done(&f);
}

int main(void) {
        test_registry();
        test_originals_by_kind();
        test_restore_only_what_changed();
        test_fight();
        test_counters();
        test_no_fight_when_slow();
        test_inherit();
        return tap_finish();
}
