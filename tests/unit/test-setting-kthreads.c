/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Kernel threads ([cpus] kthreads, [kthread "GLOB"]) against a fake /proc: which threads
 * get settings (kthreadd's children, never user tasks, never an unnamed new thread, never
 * a threaded IRQ handler by default), moving them off the isolated CPUs, per-CPU threads
 * unmovable once, a thread that exits between the look and the move, a new thread as the
 * proc connector reports it, a thread id taken by another task, policies, observe mode,
 * restore, and the refusal to act on a fake root. The moves go to a fake kernel that edits
 * the tree; no real thread is touched. */
#include <sched.h>
#include <stdlib.h>

#include "setting/originals.h"
#include "setting/kthreads.h"
#include "setting/table.h"
#include "faketree.h"
#include "tap.h"
#include "basic/util.h"

#define T0 (1000 * USEC_PER_SEC)
#define PF_KT 0x00208040U                       /* PF_KTHREAD and the usual bits */
#define PF_PERCPU (PF_KT | PF_NO_SETAFFINITY)   /* a bound per-CPU thread */
#define PF_USER 0x00400100U

typedef struct FakeThread {
        pid_t tid;
        unsigned ppid;
        char comm[32];
        unsigned flags;
        char allowed[32];
        unsigned policy, priority;
        unsigned long long start;
} FakeThread;

typedef struct Fixture {
        char root[32];
        Host *host;
        Posture *posture;
        SettingContext rc;
        SettingTable table;
        char events[FAKETREE_EVENTS_SIZE];
        char moves[1024]; /* "tid:cpus tid:fifo:2 ..." the fake kernel was asked for */
        FakeThread threads[32];
        size_t n_threads;
        pid_t refuse_tid; /* the fake kernel answers this tid with refuse_error */
        int refuse_error;
} Fixture;

#define moves_take(f) faketree_take((f)->moves, sizeof((f)->moves))

static FakeThread *find_thread(Fixture *f, pid_t tid) {
        for (size_t i = 0; i < f->n_threads; i++)
                if (f->threads[i].tid == tid)
                        return &f->threads[i];
        return NULL;
}

/* Writes proc/TID/{stat,status,cmdline} from the table, and kthreadd's children list. */
static void render(Fixture *f, const FakeThread *t) {
        _cleanup_free_ char *stat = strdup_printf(
                "%d (%s) S %u 0 0 0 -1 %u 0 0 0 0 0 0 0 0 20 0 1 0 %llu 0 0 18446744073709551615 0 0 0 0 0 0 0 "
                "2147483647 0 1 0 0 17 0 %u %u 0 0 0\n",
                (int) t->tid, t->comm, t->ppid, t->flags, t->start, t->priority, t->policy);
        _cleanup_free_ char *status = strdup_printf("Name:\t%s\nState:\tS (sleeping)\nPid:\t%d\nPPid:\t%u\n"
                                                    "Cpus_allowed_list:\t%s\n",
                                                    t->comm, (int) t->tid, t->ppid, t->allowed);
        if (!stat || !status)
                abort();
        tree_writef(f, stat, "proc/%d/stat", (int) t->tid);
        tree_writef(f, status, "proc/%d/status", (int) t->tid);
        tree_writef(f, (t->flags & PF_KTHREAD) ? "" : "user\0", "proc/%d/cmdline", (int) t->tid);
}

static void render_children(Fixture *f) {
        char list[512] = "";
        size_t len = 0;

        for (size_t i = 0; i < f->n_threads; i++)
                if (f->threads[i].ppid == 2)
                        len += (size_t) snprintf(list + len, sizeof(list) - len, "%d ", (int) f->threads[i].tid);
        tree_write(f, "proc/2/task/2/children", list);
}

static FakeThread *add_thread(Fixture *f, pid_t tid, unsigned ppid, const char *comm, unsigned flags,
                              const char *allowed) {
        FakeThread *t = find_thread(f, tid);

        if (!t) {
                if (f->n_threads == ELEMENTSOF(f->threads))
                        abort();
                t = &f->threads[f->n_threads++];
        }
        *t = (FakeThread) { .tid = tid, .ppid = ppid, .flags = flags, .start = 100 + (unsigned long long) tid };
        snprintf(t->comm, sizeof(t->comm), "%s", comm);
        snprintf(t->allowed, sizeof(t->allowed), "%s", allowed);
        render(f, t);
        render_children(f);
        return t;
}

static void remove_thread(Fixture *f, pid_t tid) {
        char rel[32];

        for (size_t i = 0; i < f->n_threads; i++)
                if (f->threads[i].tid == tid) {
                        f->threads[i] = f->threads[--f->n_threads];
                        break;
                }
        snprintf(rel, sizeof(rel), "proc/%d", (int) tid);
        tree_remove(f, rel);
        render_children(f);
}

static void set_allowed(Fixture *f, pid_t tid, const char *allowed) {
        FakeThread *t = find_thread(f, tid);

        snprintf(t->allowed, sizeof(t->allowed), "%s", allowed);
        render(f, t);
}

static const char *allowed_of(Fixture *f, pid_t tid) {
        FakeThread *t = find_thread(f, tid);
        return t ? t->allowed : "<gone>";
}

static void record(Fixture *f, pid_t tid, const char *what) {
        size_t len = strlen(f->moves);
        snprintf(f->moves + len, sizeof(f->moves) - len, "%s%d:%s", len ? " " : "", (int) tid, what);
}

/* Answers the way the kernel does: ESRCH for a thread that is not there, the refusal
 * asked for, else the change, visible in the tree. */
static int refuse_or_find(Fixture *f, pid_t tid, FakeThread **ret) {
        if (tid == f->refuse_tid) {
                if (f->refuse_error == -ESRCH)
                        remove_thread(f, tid); /* it exited */
                return f->refuse_error;
        }
        *ret = find_thread(f, tid);
        return *ret ? 0 : -ESRCH;
}

static int fake_set_affinity(void *userdata, pid_t tid, const CPUSet *cpus) {
        Fixture *f = userdata;
        _cleanup_free_ char *list = cpuset_format_list(cpus);
        FakeThread *t = NULL;
        int r;

        if (!list)
                return -ENOMEM;
        record(f, tid, list);
        r = refuse_or_find(f, tid, &t);
        if (r < 0)
                return r;
        if (t->flags & PF_NO_SETAFFINITY)
                return -EINVAL;
        set_allowed(f, tid, list);
        return 0;
}

static int fake_set_scheduler(void *userdata, pid_t tid, SchedPolicy policy, unsigned priority) {
        Fixture *f = userdata;
        char what[32];
        FakeThread *t = NULL;
        int r;

        if (sched_format(policy, priority, what, sizeof(what)) < 0)
                return -EINVAL;
        record(f, tid, what);
        r = refuse_or_find(f, tid, &t);
        if (r < 0)
                return r;
        t->policy = (unsigned) policy;
        t->priority = priority;
        render(f, t);
        return 0;
}

/* CPUs 0-3; a host's kernel threads, and a user process. */
static void fixture_init(Fixture *f) {
        *f = (Fixture) {};
        faketree_mkdtemp(f->root, sizeof(f->root), "test-kthreads");
        faketree_cpus(f->root, "0-3", "", "(null)");
        tree_mkdir(f, "proc/irq"); /* a host without IRQs: the table's rescan lists them too */
        add_thread(f, 1, 0, "systemd", PF_USER, "0-3");
        add_thread(f, 2, 0, "kthreadd", PF_KT, "0-3");
        add_thread(f, 10, 2, "ksoftirqd/2", PF_PERCPU, "2");
        add_thread(f, 11, 2, "rcuop/2", PF_KT, "0-3");
        add_thread(f, 12, 2, "kswapd0", PF_KT, "0-3");
        add_thread(f, 13, 2, "jbd2/sda1-8", PF_KT, "0-1");
        add_thread(f, 14, 2, "irq/30-eth0", PF_KT, "2");
        add_thread(f, 15, 2, "scsi_eh_1", PF_KT, "2-3");
        add_thread(f, 16, 2, "kthreadd", PF_KT, "0-3"); /* just forked, not yet named */
        add_thread(f, 17, 2, "migration/0", PF_PERCPU, "0");
        add_thread(f, 100, 1, "sleeper", PF_USER, "0-3");
}

static bool fixture_start(Fixture *f, const char *config_text) {
        if (!faketree_reconciler(f->root, config_text, &f->host, &f->posture, &f->rc, f->events))
                return false;
        f->rc.set_task_affinity = fake_set_affinity;
        f->rc.task_affinity_userdata = f;
        f->rc.set_task_scheduler = fake_set_scheduler;
        f->rc.task_scheduler_userdata = f;
        table_init(&f->table, NULL);
        return table_plan(&f->table, f->host, f->posture) >= 0 && table_rescan(&f->table, f->host, f->posture) >= 0;
}

static void fixture_done(Fixture *f) {
        table_done(&f->table);
        faketree_reconciler_done(f->root, &f->rc, f->posture, f->host);
}

static Setting *find(Fixture *f, SettingKind kind, pid_t tid) {
        char object[16];
        snprintf(object, sizeof(object), "%d", (int) tid);
        return table_find(&f->table, kind, object);
}

/* "kind:object ..." of the kernel-thread settings, in table order. */
static const char *listed(Fixture *f) {
        static char out[512];
        size_t len = 0;

        out[0] = '\0';
        for (size_t i = 0; i < f->table.n; i++) {
                Setting *s = f->table.settings[i];
                if (setting_is_kthread(s, NULL))
                        len += (size_t) snprintf(out + len, sizeof(out) - len, "%s%s:%s", len ? " " : "",
                                                 s->kind == SETTING_KTHREAD_AFFINITY ? "cpus" : "policy", s->object);
        }
        return out;
}

/* A full pass over the kernel-thread settings (the table also holds the posture's other
 * kinds, which this fake tree lacks the files of), last first as table_reconcile_all()
 * goes. */
static void reconcile_all(Fixture *f, uint64_t now, ReconcileFlags flags) {
        for (size_t i = f->table.n; i > 0; i--) {
                Setting *s = f->table.settings[i - 1];
                if (setting_is_kthread(s, NULL))
                        table_reconcile_one(&f->table, &f->rc, s, now, flags);
        }
}

/* Reconciles one thread's affinity setting; its events. */
static const char *look(Fixture *f, SettingKind kind, pid_t tid, uint64_t now, ReconcileFlags flags) {
        Setting *s = find(f, kind, tid);

        events_take(f);
        if (s)
                table_reconcile_one(&f->table, &f->rc, s, now, flags);
        return events_take(f);
}

static const char config_housekeeping[] = "[cpus]\nisolated = 2-3\nkthreads = housekeeping\n";

static void test_plan(void) {
        Fixture f;

        fixture_init(&f);
        if (!CHECK(fixture_start(&f, config_housekeeping), "fixture starts")) {
                fixture_done(&f);
                return;
        }
        CHECK_STR(listed(&f), "cpus:2 cpus:10 cpus:11 cpus:12 cpus:13 cpus:15 cpus:17",
                  "kthreads = housekeeping: every kernel thread but a threaded IRQ handler and one not yet named; "
                  "no user task");
        {
                Setting *s = find(&f, SETTING_KTHREAD_AFFINITY, 11);
                char what[128];
                CHECK(s && streq(s->desired, "0-1") && streq_ptr(s->label, "rcuop/2"),
                      "desired: the housekeeping CPUs; label: the thread's name");
                CHECK(s && setting_describe(s, what, sizeof(what)) == 0 && streq(what, "kernel thread 11 (rcuop/2)"),
                      "described as 'kernel thread 11 (rcuop/2)'");
        }
        CHECK(kthread_table_scan(&f.table, f.host, f.posture) == 0, "a second scan adds nothing");

        /* Without kthreadd's children file, every process is looked at. */
        table_done(&f.table);
        table_init(&f.table, NULL);
        tree_remove(&f, "proc/2/task");
        CHECK(kthread_table_scan(&f.table, f.host, f.posture) == 7, "without proc/2/task/2/children: /proc is listed");
        CHECK_STR(listed(&f), "cpus:2 cpus:10 cpus:11 cpus:12 cpus:13 cpus:15 cpus:17", "the same threads, no user task");
        fixture_done(&f);

        fixture_init(&f);
        CHECK(fixture_start(&f, "[cpus]\nisolated = 2-3\n") && streq(listed(&f), ""),
              "kthreads defaults to none: no kernel-thread setting");
        fixture_done(&f);
}

static void test_move(void) {
        Fixture f;

        fixture_init(&f);
        if (!CHECK(fixture_start(&f, config_housekeeping), "fixture starts")) {
                fixture_done(&f);
                return;
        }
        reconcile_all(&f, T0, 0);
        CHECK_STR(moves_take(&f), "15:0-1 12:0-1 11:0-1 2:0-1",
                  "movable threads on the isolated CPUs moved off: their other CPUs, or housekeeping; "
                  "the per-CPU ksoftirqd/2 is never written");
        CHECK_STR(allowed_of(&f, 12), "0-1", "kswapd0 on 0-1");
        CHECK_STR(allowed_of(&f, 15), "0-1", "scsi_eh_1, allowed only on isolated CPUs, on the housekeeping ones");
        CHECK_STR(allowed_of(&f, 10), "2", "ksoftirqd/2 stays on CPU 2");
        CHECK_STR(allowed_of(&f, 14), "2", "the threaded IRQ handler is left with its IRQ");
        CHECK_STR(allowed_of(&f, 100), "0-3", "the user process is not touched");
        CHECK_STR(allowed_of(&f, 16), "0-3", "nor the thread that is not set up yet");
        {
                Setting *s = find(&f, SETTING_KTHREAD_AFFINITY, 10);
                CHECK(s && s->state == SETTING_UNMOVABLE && s->reason && strstr(s->reason, "PF_NO_SETAFFINITY"),
                      "ksoftirqd/2: unmovable, PF_NO_SETAFFINITY the reason");
                s = find(&f, SETTING_KTHREAD_AFFINITY, 13);
                CHECK(s && s->state == SETTING_OK, "jbd2 on the housekeeping CPUs: ok");
                s = find(&f, SETTING_KTHREAD_AFFINITY, 11);
                CHECK(s && s->state == SETTING_CORRECTED && streq_ptr(s->observed, "0-1"), "rcuop/2: corrected, reads 0-1");
        }
        CHECK(f.rc.counters.drift_events == 4 && f.rc.counters.corrections == 4 && f.rc.counters.failures == 0,
              "four drifts (the movable threads; the per-CPU one is unmovable, no drift), four corrections, no failure");

        events_take(&f);
        reconcile_all(&f, T0 + USEC_PER_SEC, 0);
        CHECK_STR(events_take(&f), "", "the next scan: nothing new");
        reconcile_all(&f, T0 + 2 * USEC_PER_SEC, RECONCILE_FORCE);
        CHECK_STR(moves_take(&f), "", "not even a forced look writes the unmovable thread again");
        CHECK_STR(events_take(&f), "", "or reports it again");

        /* Someone puts a moved thread back on the isolated CPUs: drift, moved again. */
        set_allowed(&f, 12, "0-3");
        CHECK_STR(look(&f, SETTING_KTHREAD_AFFINITY, 12, T0 + 3 * USEC_PER_SEC, 0), "drift corrected",
                  "taskset of kswapd0 onto the isolated CPUs: drift, corrected");
        CHECK_STR(moves_take(&f), "12:0-1", "moved back");
        /* A thread that moves itself within the housekeeping CPUs is fine. */
        set_allowed(&f, 12, "1");
        CHECK_STR(look(&f, SETTING_KTHREAD_AFFINITY, 12, T0 + 4 * USEC_PER_SEC, 0), "",
                  "kswapd0 on CPU 1 only: still off the isolated CPUs, no drift");

        /* The kernel refuses a new thread without PF_NO_SETAFFINITY at the look (EINVAL: a
         * bound kworker gets the flag after its name, which is when lowlatd looks):
         * unmovable, once, never first as a drift. */
        add_thread(&f, 20, 2, "cpuset_bound", PF_KT, "3");
        CHECK(kthread_table_add(&f.table, f.host, f.posture, 20) == 1, "a new thread");
        f.refuse_tid = 20;
        f.refuse_error = -EINVAL;
        {
                uint64_t drifts = f.rc.counters.drift_events;

                CHECK_STR(look(&f, SETTING_KTHREAD_AFFINITY, 20, T0 + 5 * USEC_PER_SEC, 0), "unmovable",
                          "EINVAL at the first write: unmovable, reported once, no drift");
                CHECK(f.rc.counters.drift_events == drifts, "and not counted as a drift");
        }
        CHECK_STR(look(&f, SETTING_KTHREAD_AFFINITY, 20, T0 + 100 * USEC_PER_SEC, RECONCILE_FORCE), "",
                  "and never again");
        moves_take(&f);

        /* A thread that was as desired, put back on the isolated CPUs, then refused: that was
         * a drift (someone moved it), and then it is unmovable. */
        set_allowed(&f, 12, "0-3");
        f.refuse_tid = 12;
        CHECK_STR(look(&f, SETTING_KTHREAD_AFFINITY, 12, T0 + 5 * USEC_PER_SEC, 0), "drift unmovable",
                  "EINVAL after a real drift: the drift, then unmovable");
        f.refuse_tid = 0;
        moves_take(&f);

        /* No CAP_SYS_NICE: a failure with why, not an unmovable thread. */
        add_thread(&f, 21, 2, "khugepaged", PF_KT, "0-3");
        CHECK(kthread_table_add(&f.table, f.host, f.posture, 21) == 1, "another new thread");
        f.refuse_tid = 21;
        f.refuse_error = -EPERM;
        CHECK_STR(look(&f, SETTING_KTHREAD_AFFINITY, 21, T0 + 6 * USEC_PER_SEC, 0), "drift correction-failed",
                  "EPERM: a failed correction");
        {
                Setting *s = find(&f, SETTING_KTHREAD_AFFINITY, 21);
                CHECK(s && s->state == SETTING_FAILED && s->reason && strstr(s->reason, "CAP_SYS_NICE"),
                      "failed, and the reason names CAP_SYS_NICE");
        }
        f.refuse_tid = 0;
        CHECK_STR(look(&f, SETTING_KTHREAD_AFFINITY, 21, T0 + 70 * USEC_PER_SEC, 0), "corrected",
                  "retried a minute later, and corrected");
        fixture_done(&f);
}

/* Faults: a thread that exits between being listed and being moved; the rest goes on. */
static void test_exit_before_move(void) {
        Fixture f;
        size_t n;

        fixture_init(&f);
        if (!CHECK(fixture_start(&f, config_housekeeping), "fixture starts")) {
                fixture_done(&f);
                return;
        }
        n = f.table.n;
        f.refuse_tid = 15;
        f.refuse_error = -ESRCH;
        reconcile_all(&f, T0, 0);
        CHECK_STR(events_take(&f), "drift drift corrected drift corrected unmovable drift corrected",
                  "scsi_eh_1 exits as it is moved: its drift and nothing more; the other threads are moved; "
                  "the per-CPU one is unmovable, never a drift first");
        CHECK(!find(&f, SETTING_KTHREAD_AFFINITY, 15) && f.table.n == n - 1, "its setting is dropped");
        CHECK(f.rc.counters.failures == 0, "an exit is no failure");
        CHECK_STR(allowed_of(&f, 12), "0-1", "the others are moved all the same");

        /* Gone before the look: dropped quietly. */
        remove_thread(&f, 12);
        CHECK_STR(look(&f, SETTING_KTHREAD_AFFINITY, 12, T0 + USEC_PER_SEC, 0), "", "a thread gone before the look: no event");
        CHECK(!find(&f, SETTING_KTHREAD_AFFINITY, 12), "and its setting is dropped");
        fixture_done(&f);
}

/* The proc connector's news: a new thread, first as kthreadd's unnamed copy. */
static void test_new_thread(void) {
        Fixture f;

        fixture_init(&f);
        if (!CHECK(fixture_start(&f, config_housekeeping), "fixture starts")) {
                fixture_done(&f);
                return;
        }
        reconcile_all(&f, T0, RECONCILE_APPLYING);
        moves_take(&f);
        events_take(&f);

        add_thread(&f, 30, 2, "kthreadd", PF_KT, "0-3");
        CHECK(kthread_table_add(&f.table, f.host, f.posture, 30) == -EAGAIN,
              "still named kthreadd: -EAGAIN, look again a moment later");
        CHECK(!find(&f, SETTING_KTHREAD_AFFINITY, 30), "and nothing planned yet");
        add_thread(&f, 30, 2, "scsi_eh_2", PF_KT, "0-3");
        CHECK(kthread_table_add(&f.table, f.host, f.posture, 30) == 1, "named: planned");
        CHECK(kthread_table_add(&f.table, f.host, f.posture, 30) == 1, "a second report changes nothing");
        CHECK_STR(look(&f, SETTING_KTHREAD_AFFINITY, 30, T0 + USEC_PER_SEC, RECONCILE_HINTED), "drift corrected",
                  "looked at: drift, moved");
        CHECK_STR(moves_take(&f), "30:0-1", "to its CPUs minus the isolated ones");

        CHECK(kthread_table_add(&f.table, f.host, f.posture, 100) == 0, "a user process: nothing asked");
        CHECK(kthread_table_add(&f.table, f.host, f.posture, 99) == -ENOENT, "a thread already gone: -ENOENT");
        add_thread(&f, 31, 2, "irq/31-eth1", PF_KT, "3");
        CHECK(kthread_table_add(&f.table, f.host, f.posture, 31) == 0, "a threaded IRQ handler: nothing asked");

        /* The id of an exited thread, taken by a new one: another object. */
        remove_thread(&f, 30);
        add_thread(&f, 30, 2, "scsi_eh_3", PF_KT, "0-3");
        find_thread(&f, 30)->start = 9999;
        render(&f, find_thread(&f, 30));
        CHECK(kthread_table_add(&f.table, f.host, f.posture, 30) == 1, "the new thread with the old id is planned");
        {
                Setting *s = find(&f, SETTING_KTHREAD_AFFINITY, 30);
                CHECK(s && s->state == SETTING_PENDING && streq_ptr(s->label, "scsi_eh_3"),
                      "as a new setting, not the old one's history");
        }
        CHECK_STR(look(&f, SETTING_KTHREAD_AFFINITY, 30, T0 + 2 * USEC_PER_SEC, RECONCILE_HINTED), "drift corrected",
                  "and moved in its turn");

        /* The same, found by a look before any scan: gone, dropped, planned anew. */
        set_allowed(&f, 30, "0-1");
        find_thread(&f, 30)->start = 12345;
        render(&f, find_thread(&f, 30));
        CHECK_STR(look(&f, SETTING_KTHREAD_AFFINITY, 30, T0 + 3 * USEC_PER_SEC, 0), "",
                  "a look that finds another task under the id: no event");
        CHECK(!find(&f, SETTING_KTHREAD_AFFINITY, 30), "the old setting is dropped");
        CHECK(kthread_table_scan(&f.table, f.host, f.posture) == 1 && find(&f, SETTING_KTHREAD_AFFINITY, 30),
              "and the next scan plans the new task");
        fixture_done(&f);
}

static void test_observe(void) {
        Fixture f;

        fixture_init(&f);
        if (!CHECK(fixture_start(&f, config_housekeeping), "fixture starts")) {
                fixture_done(&f);
                return;
        }
        f.rc.observe = true;
        reconcile_all(&f, T0, 0);
        CHECK_STR(events_take(&f), "drift drift drift unmovable drift",
                  "observe mode reports the five threads on isolated CPUs, and the per-CPU one as enforce mode does");
        CHECK_STR(moves_take(&f), "", "and moves nothing");
        CHECK_STR(allowed_of(&f, 11), "0-3", "the tree is unchanged");
        {
                Setting *s = find(&f, SETTING_KTHREAD_AFFINITY, 10);
                char buf[64];
                CHECK(s && streq_ptr(setting_describe_observed(s, &f.rc, buf, sizeof(buf)), "2 (PF_NO_SETAFFINITY)"),
                      "a per-CPU thread's drift says why it cannot be moved");
                CHECK(s && s->state == SETTING_UNMOVABLE && s->reason && strstr(s->reason, "PF_NO_SETAFFINITY"),
                      "ksoftirqd/2: unmovable, the reason enforce mode gives, not a change it would make");
                s = find(&f, SETTING_KTHREAD_AFFINITY, 11);
                CHECK(s && streq_ptr(setting_describe_observed(s, &f.rc, buf, sizeof(buf)), "0-3"),
                      "a movable thread's is its CPUs");
                CHECK(s && s->state == SETTING_DRIFTED && !s->reason, "rcuop/2: drifted (a change enforce mode would make)");
        }
        reconcile_all(&f, T0 + USEC_PER_SEC, 0);
        CHECK_STR(events_take(&f), "", "reported once");
        reconcile_all(&f, T0 + 2 * USEC_PER_SEC, RECONCILE_FORCE);
        CHECK_STR(events_take(&f), "", "not again at a forced look");
        CHECK_STR(moves_take(&f), "", "which moves nothing either");
        fixture_done(&f);
}

static const char config_sections[] = "[cpus]\nisolated = 2-3\n"
                                      "[kthread \"ksoftirqd/*\"]\npolicy = fifo\npriority = 2\n"
                                      "[kthread \"rcuop/*\"]\ncpus = 1\n"
                                      "[kthread \"kswapd*\"]\npolicy = rr\npriority = 1\ncpus = housekeeping\n";

static void test_sections(void) {
        Fixture f;

        fixture_init(&f);
        if (!CHECK(fixture_start(&f, config_sections), "fixture with three [kthread] sections")) {
                fixture_done(&f);
                return;
        }
        CHECK_STR(listed(&f), "policy:10 cpus:11 cpus:12 policy:12",
                  "kthreads = none: only what the sections name, each key its own setting");
        {
                Setting *s = find(&f, SETTING_KTHREAD_POLICY, 10);
                CHECK(s && streq(s->desired, "fifo:2"), "ksoftirqd/2: desired fifo:2");
                s = find(&f, SETTING_KTHREAD_AFFINITY, 11);
                CHECK(s && streq(s->desired, "1"), "rcuop/2: desired exactly CPU 1");
        }
        reconcile_all(&f, T0, 0);
        CHECK_STR(moves_take(&f), "12:rr:1 12:0-1 11:1 10:fifo:2",
                  "the policy of a per-CPU thread is set though its CPUs cannot be; exact CPUs are written as named");
        CHECK(find_thread(&f, 10)->policy == SCHED_FIFO && find_thread(&f, 10)->priority == 2, "ksoftirqd/2 is SCHED_FIFO 2");
        CHECK_STR(allowed_of(&f, 11), "1", "rcuop/2 exactly on CPU 1");

        /* An exact target: a subset of it is drift too. */
        set_allowed(&f, 11, "0-1");
        CHECK_STR(look(&f, SETTING_KTHREAD_AFFINITY, 11, T0 + USEC_PER_SEC, 0), "drift corrected",
                  "cpus = 1 but on 0-1: drift, corrected");
        moves_take(&f);

        /* chrt -o -p 0: drift, put back. */
        find_thread(&f, 10)->policy = SCHED_OTHER;
        find_thread(&f, 10)->priority = 0;
        render(&f, find_thread(&f, 10));
        CHECK_STR(look(&f, SETTING_KTHREAD_POLICY, 10, T0 + 2 * USEC_PER_SEC, 0), "drift corrected",
                  "a policy changed behind lowlatd's back: drift, corrected");
        CHECK_STR(moves_take(&f), "10:fifo:2", "set again");

        /* RestrictRealtime=yes (or no CAP_SYS_NICE): EPERM, a failure that says what to do. */
        find_thread(&f, 10)->policy = SCHED_OTHER;
        render(&f, find_thread(&f, 10));
        f.refuse_tid = 10;
        f.refuse_error = -EPERM;
        CHECK_STR(look(&f, SETTING_KTHREAD_POLICY, 10, T0 + 3 * USEC_PER_SEC, 0), "drift correction-failed",
                  "EPERM: correction failed");
        {
                Setting *s = find(&f, SETTING_KTHREAD_POLICY, 10);
                CHECK(s && s->reason && strstr(s->reason, "RestrictRealtime=no") && strstr(s->reason, "CAP_SYS_NICE"),
                      "the reason names CAP_SYS_NICE and RestrictRealtime=no");
        }
        fixture_done(&f);
}

static void test_restore(void) {
        _cleanup_(originals_freep) Originals *o = NULL;
        _cleanup_free_ char *dir = NULL;
        Fixture f;
        Setting *s;

        fixture_init(&f);
        if (!CHECK(fixture_start(&f, "[cpus]\nisolated = 2-3\nkthreads = housekeeping\n"
                                     "[kthread \"ksoftirqd/*\"]\npolicy = fifo\npriority = 2\n"),
                   "fixture starts")) {
                fixture_done(&f);
                return;
        }
        dir = strdup_printf("%s/run", f.root);
        CHECK(dir && originals_open(dir, f.root, &o) == 0, "originals open");
        f.rc.originals = o;
        /* What a restarted lowlatd may find: an original left by an earlier thread 11. */
        CHECK(o && originals_record(o, SETTING_KTHREAD_AFFINITY, "11", "2-3 @1") == 0, "a stale original for id 11");

        reconcile_all(&f, T0, RECONCILE_APPLYING);
        CHECK_STR(allowed_of(&f, 11), "0-1", "rcuop/2 moved");
        CHECK_STR(originals_get(o, SETTING_KTHREAD_AFFINITY, "11"), "0-3 @111",
                  "the stale original is replaced by this thread's: its CPUs and start time");
        CHECK_STR(originals_get(o, SETTING_KTHREAD_POLICY, "10"), "other @110", "ksoftirqd/2's policy as found");
        CHECK(!originals_get(o, SETTING_KTHREAD_AFFINITY, "10"),
              "no original CPUs for a per-CPU thread: they were never changed and cannot be");

        s = find(&f, SETTING_KTHREAD_AFFINITY, 11);
        moves_take(&f);
        CHECK(s && setting_restore(&f.rc, s) == 1, "restore rcuop/2");
        CHECK_STR(moves_take(&f), "11:0-3", "put back on 0-3");
        CHECK(!originals_get(o, SETTING_KTHREAD_AFFINITY, "11"), "and its original forgotten");
        s = find(&f, SETTING_KTHREAD_POLICY, 10);
        CHECK(s && setting_restore(&f.rc, s) == 1, "restore ksoftirqd/2's policy");
        CHECK(find_thread(&f, 10)->policy == SCHED_OTHER, "back to other");
        s = find(&f, SETTING_KTHREAD_AFFINITY, 10);
        CHECK(s && setting_restore(&f.rc, s) == 0, "nothing to restore for the unmovable thread");

        /* kswapd0 exits and its id is taken by another thread before the restore. */
        find_thread(&f, 12)->start = 7777;
        render(&f, find_thread(&f, 12));
        s = find(&f, SETTING_KTHREAD_AFFINITY, 12);
        moves_take(&f);
        CHECK(s && setting_restore(&f.rc, s) >= 0, "restore of a thread whose id another task took");
        CHECK_STR(moves_take(&f), "", "the other task is not touched");
        CHECK_STR(allowed_of(&f, 12), "0-1", "and keeps its CPUs");

        /* A thread that exits while moved: its original goes with it. */
        s = find(&f, SETTING_KTHREAD_AFFINITY, 15);
        CHECK(originals_get(o, SETTING_KTHREAD_AFFINITY, "15") != NULL, "scsi_eh_1's original is kept");
        remove_thread(&f, 15);
        CHECK_STR(look(&f, SETTING_KTHREAD_AFFINITY, 15, T0 + USEC_PER_SEC, 0), "", "scsi_eh_1 exits");
        CHECK(!originals_get(o, SETTING_KTHREAD_AFFINITY, "15"), "its original is forgotten");
        fixture_done(&f);
}

static void test_fake_root_refused(void) {
        Fixture f;
        Setting *s;

        fixture_init(&f);
        if (!CHECK(fixture_start(&f, config_sections), "fixture starts")) {
                fixture_done(&f);
                return;
        }
        f.rc.set_task_affinity = NULL;
        f.rc.set_task_scheduler = NULL;
        CHECK_STR(look(&f, SETTING_KTHREAD_AFFINITY, 11, T0, 0), "unsupported", "no mover, a fake root: unsupported");
        s = find(&f, SETTING_KTHREAD_AFFINITY, 11);
        CHECK(s && s->reason && strstr(s->reason, "--root /"), "the reason says why");
        CHECK_STR(look(&f, SETTING_KTHREAD_POLICY, 10, T0, 0), "unsupported", "the policy too");
        CHECK_STR(allowed_of(&f, 11), "0-3", "nothing moved");
        CHECK_STR(moves_take(&f), "", "nothing asked of the kernel");
        fixture_done(&f);
}

/* A reload plans the same threads afresh: they keep their history and fds. */
static void test_reload_inherit(void) {
        SettingTable next;
        Fixture f;
        Setting *s;

        fixture_init(&f);
        if (!CHECK(fixture_start(&f, config_housekeeping), "fixture starts")) {
                fixture_done(&f);
                return;
        }
        reconcile_all(&f, T0, 0);
        events_take(&f);
        table_init(&next, NULL);
        CHECK(table_plan(&next, f.host, f.posture) >= 0 && table_rescan(&next, f.host, f.posture) >= 0,
              "the reload's table");
        table_inherit(&next, &f.table);
        table_move(&f.table, &next);
        s = find(&f, SETTING_KTHREAD_AFFINITY, 10);
        CHECK(s && s->state == SETTING_UNMOVABLE, "the unmovable thread stays unmovable");
        s = find(&f, SETTING_KTHREAD_AFFINITY, 11);
        CHECK(s && s->state == SETTING_CORRECTED, "a moved thread keeps its state: it is not put back by the reload");
        reconcile_all(&f, T0 + USEC_PER_SEC, RECONCILE_FORCE | RECONCILE_APPLYING);
        CHECK_STR(events_take(&f), "", "and the forced look after the reload reports nothing");
        CHECK_STR(moves_take(&f), "15:0-1 12:0-1 11:0-1 2:0-1", "(only the first pass moved them)");
        fixture_done(&f);
}

int main(void) {
        test_plan();
        test_move();
        test_exit_before_move();
        test_new_thread();
        test_observe();
        test_sections();
        test_restore();
        test_fake_root_refused();
        test_reload_inherit();
        return tap_finish();
}
