/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Stray tasks ([cpus] evict_strays) against a fake /proc: what is a stray and what never
 * is (kernel threads, applications, PID 1, lowlatd), the stray_tasks setting's drift,
 * eviction, tasks left alone, observe mode, and the refusal to act on a fake root. The
 * moves go to a fake mover that edits the tree; no real task is touched. */
#include <dirent.h>
#include <fcntl.h>
#include <stdarg.h>
#include <ftw.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "setting/originals.h"
#include "setting/strays.h"
#include "setting/table.h"
#include "faketree.h"
#include "tap.h"
#include "basic/util.h"

#define T0 (1000 * USEC_PER_SEC)

typedef struct Fixture {
        char root[32];
        Host *host;
        Posture *posture;
        SettingContext rc;
        char events[FAKETREE_EVENTS_SIZE];
        char moves[1024];   /* "tid:cpus ..." the fake mover was asked for */
        pid_t refuse_tid;   /* the mover answers this tid with refuse_error */
        int refuse_error;
        bool mover_ignores; /* the mover says yes but changes nothing */
        pid_t spawn_pid;    /* a new stray process appears during the next move */
} Fixture;

/* events_take() and the tree_*() chores are faketree.h's. */
#define moves_take(f) faketree_take((f)->moves, sizeof((f)->moves))

static void tree_remove_process(Fixture *f, pid_t pid) {
        char rel[32];
        snprintf(rel, sizeof(rel), "proc/%d", (int) pid);
        tree_remove(f, rel);
}

static void tree_set_allowed(Fixture *f, pid_t pid, pid_t tid, const char *allowed) {
        _cleanup_free_ char *status = strdup_printf("Name:\tx\nState:\tS (sleeping)\nTgid:\t%d\nPid:\t%d\n"
                                                    "Cpus_allowed:\tf\nCpus_allowed_list:\t%s\nvoluntary_ctxt_switches:\t1\n",
                                                    (int) pid, (int) tid, allowed);
        if (!status)
                abort();
        tree_writef(f, status, "proc/%d/task/%d/status", (int) pid, (int) tid);
        if (pid == tid)
                tree_writef(f, status, "proc/%d/status", (int) pid);
}

/* One thread: stat (flags, start time), status (Cpus_allowed_list). */
static void tree_add_thread(Fixture *f, pid_t pid, pid_t tid, const char *comm, char state, unsigned ppid,
                            unsigned flags, const char *allowed) {
        _cleanup_free_ char *stat = strdup_printf("%d (%s) %c %u %d %d 0 -1 %u 0 0 0 0 1 1 0 0 20 0 1 0 %d 1000 10 "
                                                  "0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n",
                                                  (int) tid, comm, state, ppid, (int) pid, (int) pid, flags,
                                                  (int) (5000 + tid));
        if (!stat)
                abort();
        tree_writef(f, stat, "proc/%d/task/%d/stat", (int) pid, (int) tid);
        if (pid == tid)
                tree_writef(f, stat, "proc/%d/stat", (int) pid);
        tree_set_allowed(f, pid, tid, allowed);
}

static void tree_add_process(Fixture *f, pid_t pid, const char *comm, unsigned ppid, unsigned flags,
                             const char *cmdline, const char *allowed) {
        tree_add_thread(f, pid, pid, comm, 'S', ppid, flags, allowed);
        tree_writef(f, cmdline, "proc/%d/cmdline", (int) pid);
        tree_writef(f, "0::/user.slice\n", "proc/%d/cgroup", (int) pid);
}

static const char *tree_allowed(Fixture *f, pid_t pid, pid_t tid) {
        static char list[256];
        char rel[64];
        const char *status, *p;

        snprintf(rel, sizeof(rel), "proc/%d/task/%d/status", (int) pid, (int) tid);
        status = tree_read(f, rel);
        if (streq(status, "<missing>"))
                return status;
        p = strstr(status, "Cpus_allowed_list:\t");
        if (!p)
                return "<none>";
        p += strlen("Cpus_allowed_list:\t");
        snprintf(list, sizeof(list), "%.*s", (int) strcspn(p, "\n"), p);
        return list;
}

/* Sets the allowed list of thread tid, whichever process it is in; -ESRCH when none. */
static int tree_find_thread(Fixture *f, pid_t tid, const char *list) {
        _cleanup_free_ char *proc = strdup_printf("%s/proc", f->root);
        DIR *d = proc ? opendir(proc) : NULL;
        struct dirent *de;
        int r = -ESRCH;

        while (d && r < 0 && (de = readdir(d))) {
                _cleanup_free_ char *path = strdup_printf("%s/%s/task/%d", proc, de->d_name, (int) tid);
                struct stat st;
                unsigned pid;

                if (parse_unsigned(de->d_name, &pid) < 0 || !path || stat(path, &st) < 0)
                        continue;
                tree_set_allowed(f, (pid_t) pid, tid, list);
                r = 0;
        }
        if (d)
                closedir(d);
        return r;
}

/* The fake kernel: records the move and, like sched_setaffinity(), changes what
 * /proc/PID/task/TID/status shows. It finds the thread's process by looking. */
static int fake_mover(void *userdata, pid_t tid, const CPUSet *cpus) {
        Fixture *f = userdata;
        _cleanup_free_ char *list = cpuset_format_list(cpus);
        size_t len = strlen(f->moves);

        if (!list)
                return -ENOMEM;
        if (f->spawn_pid) {
                tree_add_process(f, f->spawn_pid, "forked", 1, 0x400000, "forked\0", "0-3");
                f->spawn_pid = 0;
        }
        snprintf(f->moves + len, sizeof(f->moves) - len, "%s%d:%s", len ? " " : "", (int) tid, list);
        if (tid == f->refuse_tid && f->refuse_error == -ESRCH)
                tree_remove_process(f, tid); /* it exited */
        if (tid == f->refuse_tid)
                return f->refuse_error;
        if (f->mover_ignores)
                return 0;
        return tree_find_thread(f, tid, list);
}

/* CPUs 0-3, 2-3 isolated; the usual population of a host. */
static void fixture_init(Fixture *f) {
        *f = (Fixture) {};
        faketree_mkdtemp(f->root, sizeof(f->root), "test-strays");
        faketree_cpus(f->root, "0-3", "", "(null)");

        tree_add_process(f, 1, "systemd", 0, 0x400100, "/sbin/init", "0-3");
        tree_add_process(f, 2, "kthreadd", 0, 0x208040, "", "0-3");
        tree_add_process(f, 3, "kworker/2:1", 2, 0x4208060, "", "2");
        /* No PF_KTHREAD in the flags (an old or odd kernel): kthreadd's child with an
         * empty command line is still a kernel thread ... */
        tree_add_process(f, 50, "ksoftirqd/3", 2, 0x40, "", "3");
        /* ... but in a PID namespace pid 2 is a user process, and so is its child. */
        tree_add_process(f, 60, "nschild", 2, 0x400000, "nschild\0", "0-3");
        tree_add_process(f, 100, "sleeper", 1, 0x400000, "sleep\0", "0-3");
        tree_add_thread(f, 100, 101, "sleeper", 'S', 1, 0x400040, "0-3");
        tree_add_process(f, 200, "engine", 1, 0x400000, "engine\0", "0-3");
        tree_add_thread(f, 200, 201, "engine-io", 'S', 1, 0x400040, "2-3");
        tree_add_process(f, 300, "svc", 1, 0x400000, "svc\0", "0-3");
        tree_write(f, "proc/300/cgroup", "0::/system.slice/trader.service\n");
        tree_add_process(f, 400, "quiet", 1, 0x400000, "quiet\0", "0-1");
        tree_add_process(f, 500, "io", 1, 0x400000, "io\0", "0-3");
        tree_add_thread(f, 500, 501, "iou-wrk-500", 'S', 1, 0x4000010, "0-3"); /* PF_NO_SETAFFINITY */
        tree_add_process(f, 600, "zombie", 1, 0x400000, "", "0-3");
        tree_add_thread(f, 600, 600, "zombie", 'Z', 1, 0x400000, "0-3");
        tree_add_process(f, 700, "pinned", 1, 0x400000, "pinned\0", "3");
        /* lowlatd itself, by its pid */
        tree_add_process(f, getpid(), "lowlatd", 1, 0x400000, "lowlatd\0", "0-3");
}

static bool fixture_start(Fixture *f, const char *config_text) {
        if (!faketree_reconciler(f->root, config_text, &f->host, &f->posture, &f->rc, f->events))
                return false;
        f->rc.set_task_affinity = fake_mover;
        f->rc.task_affinity_userdata = f;
        return true;
}

static void fixture_done(Fixture *f) {
        faketree_reconciler_done(f->root, &f->rc, f->posture, f->host);
}

static const char config_text[] = "[cpus]\nisolated = 2-3\nevict_strays = yes\n"
                                  "[process \"engine\"]\n[service \"trader\"]\n";

static void test_scan(void) {
        _cleanup_(strays_freep) Strays *st = strays_new();
        Fixture f;
        char buf[4096];

        fixture_init(&f);
        if (!CHECK(fixture_start(&f, config_text), "fixture starts")) {
                fixture_done(&f);
                return;
        }
        CHECK(st && strays_scan(st, f.host, f.posture, getpid(), buf, sizeof(buf)) == 0, "scan the fake /proc");
        CHECK_STR(buf,
                  "pid 60 (nschild) on 0-3, pid 100 (sleeper) on 0-3 (2 threads), pid 500 (io) on 0-3, pid 700 (pinned) on 3; "
                  "left alone: pid 1 (systemd): PID 1, pid 500 (io) thread 501: PF_NO_SETAFFINITY",
                  "strays: user tasks on isolated CPUs; kthreads, apps, zombies, lowlatd and housekeeping-only "
                  "tasks are not; PID 1 and PF_NO_SETAFFINITY are left alone");
        CHECK(st->n_threads == 5, "five threads to move");
        fixture_done(&f);
}

static Setting *plan_strays(Fixture *f) {
        SettingTable t;
        Setting *s = NULL;

        table_init(&t, NULL);
        if (table_plan(&t, f->host, f->posture) >= 0)
                for (size_t i = 0; i < t.n; i++)
                        if (t.settings[i]->kind == SETTING_STRAY_TASKS) {
                                s = table_detach(&t, t.settings[i]);
                                break;
                        }
        table_done(&t);
        return s;
}

/* The setting as planned, and the first pass: every stray moved but one the kernel refuses,
 * which is reported once and not retried. */
static void evict_first_pass(Fixture *f, Setting *s) {
        CHECK_STR(setting_kind_to_string(s->kind), "stray_tasks", "kind stray_tasks");
        CHECK_STR(s->object, "2-3", "its object is the isolated CPU list");
        CHECK_STR(s->desired, "none", "desired: none");
        {
                char path[64];
                CHECK(setting_watch_path(s, 0, path, sizeof(path)) == 0, "no path: nothing to watch with inotify");
        }

        f->refuse_tid = 700;
        f->refuse_error = -EINVAL;
        CHECK(setting_reconcile(&f->rc, s, T0, 0) == 0, "first reconcile");
        CHECK_STR(events_take(f), "drift correction-failed corrected",
                  "drift; the refused task reported as a failure; the rest corrected");
        CHECK_STR(moves_take(f), "60:0-1 100:0-1 101:0-1 500:0-1 700:0-1",
                  "every stray thread moved to its CPUs minus the isolated ones, or housekeeping when none is left");
        CHECK_STR(tree_allowed(f, 100, 101), "0-1", "the second thread of pid 100 too");
        CHECK_STR(tree_allowed(f, 200, 201), "2-3", "the application's threads are left where they are");
        CHECK_STR(tree_allowed(f, 300, 300), "0-3", "the service's processes are not moved");
        CHECK_STR(tree_allowed(f, 3, 3), "2", "kernel threads are not moved");
        CHECK_STR(tree_allowed(f, 1, 1), "0-3", "PID 1 is not moved");
        CHECK_STR(tree_allowed(f, getpid(), getpid()), "0-3", "lowlatd is not moved");
        CHECK(s->state == SETTING_CORRECTED, "state corrected");
        CHECK_STR(s->observed,
                  "none; left alone: pid 1 (systemd): PID 1, pid 500 (io) thread 501: PF_NO_SETAFFINITY, "
                  "pid 700 (pinned): sched_setaffinity: Invalid argument",
                  "observed: none, and the tasks left alone with why");
        CHECK(f->rc.counters.drift_events == 1 && f->rc.counters.corrections == 1, "one drift, one correction");

        CHECK(setting_reconcile(&f->rc, s, T0 + USEC_PER_SEC, 0) == 0, "next scan");
        CHECK_STR(events_take(f), "", "nothing new: no event");
        CHECK_STR(moves_take(f), "", "the refused task is not retried");
        CHECK(setting_reconcile(&f->rc, s, T0 + 2 * USEC_PER_SEC, RECONCILE_FORCE) == 0, "a forced look (Reapply)");
        CHECK_STR(events_take(f), "", "not even on a forced look: it is reported once");
}

/* Drift after a taskset, and a refused task's pid coming back as a new task. */
static void evict_drift_and_pid_reuse(Fixture *f, Setting *s) {
        /* Drift: someone widens a task again. */
        tree_set_allowed(f, 100, 100, "0-3");
        CHECK(setting_reconcile(&f->rc, s, T0 + 3 * USEC_PER_SEC, 0) == 0, "scan after taskset");
        CHECK_STR(events_take(f), "drift corrected", "a task put back on isolated CPUs is drift, corrected");
        CHECK_STR(moves_take(f), "100:0-1", "only that task is moved");

        /* The refused task exits; its pid comes back as another task. */
        tree_remove_process(f, 700);
        CHECK(setting_reconcile(&f->rc, s, T0 + 4 * USEC_PER_SEC, 0) == 0, "scan after pid 700 exited");
        CHECK_STR(events_take(f), "", "a task that exits is no event");
        CHECK(!strstr(s->observed, "pinned"), "and is no longer listed as left alone");
        tree_add_process(f, 700, "newcomer", 1, 0x400000, "newcomer\0", "2");
        f->refuse_tid = 0;
        CHECK(setting_reconcile(&f->rc, s, T0 + 5 * USEC_PER_SEC, 0) == 0, "scan with a new pid 700");
        CHECK_STR(events_take(f), "drift corrected", "the new task with the old pid is moved");
        CHECK_STR(moves_take(f), "700:0-1", "to housekeeping (its own CPUs are all isolated)");
}

/* Tasks that cannot be moved: one exits before the move, one the kernel leaves in
 * place. */
static void evict_gone_or_stuck(Fixture *f, Setting *s) {
        /* A task that exits between the scan and the move. */
        tree_add_process(f, 800, "shortlived", 1, 0x400000, "x\0", "0-3");
        f->refuse_tid = 800;
        f->refuse_error = -ESRCH;
        CHECK(setting_reconcile(&f->rc, s, T0 + 6 * USEC_PER_SEC, 0) == 0, "scan with a task exiting");
        CHECK_STR(events_take(f), "drift recovered", "the drift ends with the task; nothing was corrected");
        CHECK_STR(moves_take(f), "800:0-1", "the move found it gone (ESRCH)");
        CHECK(s->state == SETTING_OK, "an exiting task leaves the setting good");
        CHECK(!strstr(s->observed, "shortlived"), "and is not left alone: ESRCH is no refusal");

        /* The kernel says yes, but the task stays on isolated CPUs (a cpuset): left alone. */
        f->refuse_tid = 0;
        f->mover_ignores = true;
        tree_add_process(f, 900, "cpuset", 1, 0x400000, "x\0", "1-2");
        events_take(f);
        CHECK(setting_reconcile(&f->rc, s, T0 + 8 * USEC_PER_SEC, 0) == 0, "scan with a task that does not move");
        CHECK_STR(events_take(f), "drift correction-failed recovered",
                  "reported once as a failure; with nothing moved it is not a correction");
        CHECK(strstr(s->observed, "pid 900 (cpuset): still allowed on 1-2 after the move") != NULL,
              "left alone, with why");
        CHECK(setting_reconcile(&f->rc, s, T0 + 9 * USEC_PER_SEC, 0) == 0, "next scan");
        CHECK_STR(events_take(f), "", "no flapping");
        moves_take(f);
        CHECK(setting_reconcile(&f->rc, s, T0 + 70 * USEC_PER_SEC, 0) == 0, "a minute later");
        CHECK_STR(moves_take(f), "", "not retried");
}

/* A stray forked while the others are moved. */
static void evict_fork_during_move(Fixture *f, Setting *s) {
        /* A stray forked while others are moved: still drift, moved at the next scan. */
        f->mover_ignores = false;
        tree_set_allowed(f, 100, 100, "0-3");
        f->spawn_pid = 950;
        CHECK(setting_reconcile(&f->rc, s, T0 + 80 * USEC_PER_SEC, 0) == 0, "scan, and a fork during the move");
        CHECK_STR(events_take(f), "drift", "the read-back shows the new task: no correction yet, no failure");
        CHECK(s->state == SETTING_DRIFTED, "still drifted");
        CHECK_STR(moves_take(f), "100:0-1", "the task found by the scan was moved");
        CHECK(setting_reconcile(&f->rc, s, T0 + 81 * USEC_PER_SEC, 0) == 0, "next scan");
        CHECK_STR(events_take(f), "corrected", "the new task is moved at the next scan");
        CHECK_STR(moves_take(f), "950:0-1", "pid 950");
        CHECK(s->state == SETTING_CORRECTED, "corrected");
}

static void test_evict(void) {
        _cleanup_(setting_freep) Setting *s = NULL;
        Fixture f;

        fixture_init(&f);
        if (!CHECK(fixture_start(&f, config_text), "fixture starts")) {
                fixture_done(&f);
                return;
        }
        s = plan_strays(&f);
        if (!CHECK(s, "evict_strays = yes plans a stray_tasks setting")) {
                fixture_done(&f);
                return;
        }
        evict_first_pass(&f, s);
        evict_drift_and_pid_reuse(&f, s);
        evict_gone_or_stuck(&f, s);
        evict_fork_during_move(&f, s);
        fixture_done(&f);
}

static void test_observe(void) {
        _cleanup_(setting_freep) Setting *s = NULL;
        Fixture f;

        fixture_init(&f);
        if (!CHECK(fixture_start(&f, config_text), "fixture starts")) {
                fixture_done(&f);
                return;
        }
        f.rc.observe = true;
        s = plan_strays(&f);
        CHECK(s && setting_reconcile(&f.rc, s, T0, 0) == 0, "observe-mode reconcile");
        CHECK_STR(events_take(&f), "drift", "observe mode reports the strays");
        CHECK_STR(moves_take(&f), "", "and moves nothing");
        CHECK(s && s->state == SETTING_DRIFTED, "state drifted");
        CHECK(s && strstr(s->observed, "pid 100 (sleeper) on 0-3 (2 threads)") != NULL, "the observed text lists them");
        CHECK_STR(tree_allowed(&f, 100, 100), "0-3", "the tree is unchanged");
        CHECK(s && setting_reconcile(&f.rc, s, T0 + USEC_PER_SEC, 0) == 0, "next scan");
        CHECK_STR(events_take(&f), "", "reported once");
        fixture_done(&f);
}

static void test_fake_root_refused(void) {
        _cleanup_(setting_freep) Setting *s = NULL;
        _cleanup_(host_freep) Host *real = NULL;
        Fixture f;

        fixture_init(&f);
        if (!CHECK(fixture_start(&f, config_text), "fixture starts")) {
                fixture_done(&f);
                return;
        }
        CHECK(!host_is_live(f.host), "a fake tree is not a live host");
        CHECK(host_open("/", &real) == 0 && host_is_live(real), "/ is");

        /* No test mover: the real sched_setaffinity() would be used, on fake PIDs. */
        f.rc.set_task_affinity = NULL;
        s = plan_strays(&f);
        CHECK(s && setting_reconcile(&f.rc, s, T0, 0) == 0, "reconcile under a fake root");
        CHECK_STR(events_take(&f), "unsupported", "unsupported, reported once");
        CHECK(s && s->state == SETTING_UNSUPPORTED, "state unsupported");
        CHECK(s && s->reason && strstr(s->reason, "evict_strays needs --root /"), "the reason says why");
        CHECK_STR(tree_allowed(&f, 100, 100), "0-3", "nothing moved");
        CHECK(s && setting_reconcile(&f.rc, s, T0 + USEC_PER_SEC, RECONCILE_FORCE) == 0, "forced");
        CHECK_STR(events_take(&f), "", "still unsupported, no new report");
        fixture_done(&f);
}

static void test_plan_and_restore(void) {
        _cleanup_(setting_freep) Setting *s = NULL, *next = NULL;
        _cleanup_(originals_freep) Originals *o = NULL;
        _cleanup_free_ char *dir = NULL;
        SettingTable t;
        Fixture f;
        bool any;

        fixture_init(&f);
        if (!CHECK(fixture_start(&f, "[cpus]\nisolated = 2-3\n"), "fixture without evict_strays")) {
                fixture_done(&f);
                return;
        }
        table_init(&t, NULL);
        CHECK(table_plan(&t, f.host, f.posture) == 0, "plan");
        any = false;
        for (size_t i = 0; i < t.n; i++)
                any = any || t.settings[i]->kind == SETTING_STRAY_TASKS;
        CHECK(!any, "evict_strays defaults to no: no stray_tasks setting");
        table_done(&t);
        posture_free(f.posture);
        f.posture = NULL;
        host_free(f.host);
        f.host = NULL;

        CHECK(fixture_start(&f, config_text), "fixture with evict_strays");
        dir = strdup_printf("%s/run", f.root);
        CHECK(dir && originals_open(dir, f.root, &o) == 0, "originals open");
        f.rc.originals = o;
        s = plan_strays(&f);
        CHECK(s && setting_reconcile(&f.rc, s, T0, 0) == 0, "evict");
        CHECK(s && s->state == SETTING_CORRECTED, "corrected");
        CHECK(o && o->n == 0, "no original is recorded for evicted tasks");
        CHECK(s && setting_restore(&f.rc, s) == 0, "restore: nothing to put back");
        CHECK_STR(tree_allowed(&f, 100, 100), "0-1", "the evicted task stays on housekeeping CPUs");

        /* A reload keeps the tasks left alone (no second report). */
        CHECK(setting_new_stray_tasks(f.posture, &next) == 0, "the same setting from a reload");
        if (s && next) {
                setting_inherit(next, s);
                events_take(&f);
                CHECK(setting_reconcile(&f.rc, next, T0 + USEC_PER_SEC, RECONCILE_FORCE) == 0, "reconcile after the reload");
                CHECK_STR(events_take(&f), "", "the tasks left alone are not reported again");
                CHECK(strstr(next->observed, "left alone: pid 1 (systemd): PID 1") != NULL, "and still listed");
        }
        fixture_done(&f);
}

static void test_text_cap(void) {
        _cleanup_(strays_freep) Strays *st = strays_new();
        Fixture f;
        char buf[4096];

        fixture_init(&f);
        for (pid_t pid = 2000; pid < 2300; pid++)
                tree_add_process(&f, pid, "worker-with-long-name", 1, 0x400000, "w\0", "0-3");
        if (!CHECK(fixture_start(&f, config_text), "fixture with 300 more strays")) {
                fixture_done(&f);
                return;
        }
        CHECK(st && strays_scan(st, f.host, f.posture, getpid(), buf, sizeof(buf)) == 0, "scan");
        CHECK(strlen(buf) < STRAYS_TEXT_MAX, "the observed text is capped");
        CHECK(strstr(buf, " more") != NULL, "and counts the rest");
        CHECK(st->n_threads == 305, "every stray is still moved");
        fixture_done(&f);
}

static void test_config(void) {
        _cleanup_error_list_ ErrorList errors = ERROR_LIST_EMPTY;
        _cleanup_config_ Config *c = config_new();

        CHECK(c && config_parse_string(c, "a.conf", "[cpus]\nevict_strays = yes\n", &errors) == 0 && errors.n == 0 &&
                      c->evict_strays,
              "evict_strays = yes parses");
        CHECK(c && config_parse_string(c, "b.conf", "[cpus]\nevict_strays = sometimes\n", &errors) == 0 && errors.n == 1 &&
                      strstr(errors.items[0], "b.conf:2: evict_strays"),
              "a bad value is an error with file:line");
}

/* The fake /proc holds made-up pids below FAKE_PIDS_END and, as lowlatd, this test's own
 * pid (what the code under test calls getpid()). On a busy host pids wrap around to 300
 * and up, and a real pid among the made-up ones made a process vanish from the tree (the
 * count of 305 strays was one short, now and then). Run the tests in a child whose pid
 * is above them. */
#define FAKE_PIDS_END 2400

/* Returns in a process whose pid is at least FAKE_PIDS_END: short-lived children take the
 * pids below it (one at a time, so at most one extra process exists), and the first child
 * born above runs the tests while its parent waits and passes on its exit status. */
static void run_with_own_pid_clear_of_fake_ones(void) {
        enum { RETRY = 99 };

        if (getpid() >= FAKE_PIDS_END)
                return;
        for (;;) {
                int status;
                pid_t child = fork();

                if (child < 0)
                        abort();
                if (child == 0) {
                        if (getpid() >= FAKE_PIDS_END)
                                return; /* this one runs the tests */
                        _exit(RETRY);
                }
                if (waitpid(child, &status, 0) != child)
                        abort();
                if (!WIFEXITED(status) || WEXITSTATUS(status) != RETRY)
                        exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
        }
}

int main(void) {
        run_with_own_pid_clear_of_fake_ones();
        test_scan();
        test_evict();
        test_observe();
        test_fake_root_refused();
        test_plan_and_restore();
        test_text_cap();
        test_config();
        return tap_finish();
}
