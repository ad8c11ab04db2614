/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* irqbalance's control socket and the irqbalance_ban setting. The parsers are checked on
 * text irqbalance writes; the setting against tests/fake_irqbalance.py under a fake root
 * (a small server that speaks the protocol, checks SCM_CREDENTIALS and logs what it was
 * told): the ban told and verified, told again after a restart, left alone when its own ban
 * already covers the isolated CPUs, garbage, silence, a refused command, a vanished
 * irqbalance, a reload, observe mode and restore. No real irqbalance is involved. */
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>

#include "faketree.h"
#include "host/irqbalance.h"
#include "setting/originals.h"
#include "setting/irqbalance.h"
#include "tap.h"

extern char **environ;

/* The fake answers "SLEEP 0": a ban settles one second after it was told. */
#define SETTLE_WAIT_USEC (1200 * USEC_PER_MSEC)

static void test_parse_setup(void) {
        IrqbalanceSetup s = {};
        static const char *const bad[] = {
                "",
                "SLEEP 10",
                "SLEEP 10 BANNED",
                "SLEEP 10 BANNED ",
                "SLEEP  10 BANNED 0000000c",
                "SLEEP x BANNED 0000000c",
                "SLEEP 10 BANNED 0000000c extra",
                "SLEEP 10 IRQ 5 LOAD 1 DIFF 2 BANNED 0000000c",
                "SLEEP 10 IRQ 5 LOAD 1 DIFF 2 CLASS x BANNED 0000000c",
                "SLEEP 10 BANNED 2-3",
                "BANNED 0000000c",
                "NODE 0 CPU 1 what is this",
        };
        char what[160];

        CHECK(irqbalance_parse_setup("SLEEP 10 BANNED 0000000c", 24, &s) == 0, "SLEEP 10 BANNED 0000000c parses");
        CHECK(s.sleep_sec == 10 && cpuset_count(&s.banned) == 2 && cpuset_contains(&s.banned, 2) &&
                      cpuset_contains(&s.banned, 3),
              "interval 10, CPUs 2-3 banned");
        CHECK(irqbalance_parse_setup("SLEEP 7 BANNED 00000000", 23, &s) == 0 && cpuset_is_empty(&s.banned) &&
                      s.sleep_sec == 7,
              "an empty ban");
        static const char irqs[] = "SLEEP 10 IRQ 24 LOAD 0 DIFF 3 CLASS 5 IRQ 25 LOAD 100 DIFF 0 CLASS -1 "
                                   "BANNED 00000001,00000004";
        CHECK(irqbalance_parse_setup(irqs, strlen(irqs), &s) == 0 && s.n_banned_irqs == 2 &&
                      cpuset_count(&s.banned) == 2 && cpuset_contains(&s.banned, 32) && cpuset_contains(&s.banned, 2),
              "IRQs banned on its command line come before BANNED; a mask over 32 CPUs");
        CHECK(irqbalance_parse_setup("SLEEP 10 BANNED 0000000c\n", 25, &s) == 0, "a line end after the mask is fine");
        CHECK(irqbalance_parse_setup("SLEEP 10 BANNED 0000000c\0ff", 27, &s) == -EBADMSG,
              "a NUL inside is garbage, not a shorter answer");
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                snprintf(what, sizeof(what), "'%s' is not an answer to setup", bad[i]);
                CHECK(irqbalance_parse_setup(bad[i], strlen(bad[i]), &s) == -EBADMSG, what);
        }
        CHECK(s.sleep_sec == 10 && s.n_banned_irqs == 0 && cpuset_count(&s.banned) == 2,
              "a failed parse leaves the last good answer");
        irqbalance_setup_done(&s);
}

static void test_names_and_commands(void) {
        _cleanup_cpuset_ CPUSet cpus = CPUSET_EMPTY;
        _cleanup_free_ char *empty = irqbalance_ban_command(&cpus), *none = irqbalance_ban_command(NULL), *some = NULL,
                            *path = irqbalance_socket_path(812);
        unsigned pid = 0;

        CHECK(irqbalance_socket_pid("irqbalance812.sock", &pid) == 0 && pid == 812, "irqbalance812.sock is pid 812");
        CHECK(irqbalance_socket_pid("irqbalance.sock", &pid) < 0, "no pid");
        CHECK(irqbalance_socket_pid("irqbalance0812.sock", &pid) < 0, "a leading zero is no pid irqbalance writes");
        CHECK(irqbalance_socket_pid("irqbalance812.sock~", &pid) < 0, "another suffix");
        CHECK(irqbalance_socket_pid("irqbalance-812.sock", &pid) < 0, "a sign");
        CHECK(irqbalance_socket_pid("irqbalance99999999999.sock", &pid) < 0 && pid == 812, "past 32 bits");
        CHECK_STR(path, "run/irqbalance/irqbalance812.sock", "the socket's path under the root");
        CHECK_STR(empty, "settings cpus NULL", "no CPUs: NULL (an empty list crashes irqbalance 1.9)");
        CHECK_STR(none, "settings cpus NULL", "NULL: its own ban again");
        if (cpuset_parse_list("0,2-3", &cpus) >= 0)
                some = irqbalance_ban_command(&cpus);
        CHECK_STR(some, "settings cpus 0,2-3", "a list");
}

static void test_peer_trusted(void) {
        struct ucred root = { .pid = 812, .uid = 0, .gid = 0 }, nobody = { .pid = 812, .uid = 65534, .gid = 65534 },
                     other = { .pid = 813, .uid = 0, .gid = 0 }, unknown = { .pid = 0, .uid = 0, .gid = 0 };

        CHECK(irqbalance_peer_trusted(&root, 812, false), "root, the PID the name says: trusted");
        CHECK(!irqbalance_peer_trusted(&nobody, 812, false), "uid 65534: not trusted");
        CHECK(irqbalance_peer_trusted(&nobody, 812, true), "uid 65534 in irqbalance.service: trusted");
        CHECK(!irqbalance_peer_trusted(&other, 812, false) && !irqbalance_peer_trusted(&other, 812, true),
              "another PID than the name's: not trusted, in the unit or not");
        CHECK(!irqbalance_peer_trusted(&unknown, 0, true), "no PID (a peer in another PID namespace): not trusted");
}

static void test_in_unit(void) {
        static const struct {
                const char *cgroup;
                bool in_unit;
                const char *what;
        } cases[] = {
                { "0::/system.slice/irqbalance.service\n", true, "the unified line: its unit" },
                { "0::/system.slice/irqbalance.service/sub\n", true, "a cgroup below its unit" },
                { "12:cpu:/\n1:name=systemd:/system.slice/irqbalance.service\n0::/\n", true, "the v1 name=systemd line" },
                { "0::/system.slice/irqbalance.service2\n", false, "another unit with the name as prefix" },
                { "0::/user.slice/user-1000.slice/user@1000.service/app.slice/irqbalance.service\n", false,
                  "a user's own irqbalance.service" },
                { "3:cpu:/system.slice/irqbalance.service\n0::/user.slice\n", false, "a controller's line only" },
                { "", false, "an empty file" },
        };
        char root[32];
        Host *h = NULL;

        faketree_mkdtemp(root, sizeof(root), "test-irqb-unit");
        CHECK(host_open(root, &h) >= 0, "open the fake tree");
        CHECK(h && !irqbalance_in_unit(h, 812), "no proc/812/cgroup: not in the unit");
        for (size_t i = 0; h && i < ELEMENTSOF(cases); i++) {
                faketree_write(root, "proc/812/cgroup", cases[i].cgroup);
                CHECK(irqbalance_in_unit(h, 812) == cases[i].in_unit, cases[i].what);
        }
        host_free(h);
        faketree_remove(root);
}

/* --- the setting against the fake ---------------------------------------------------- */

typedef struct Fixture {
        char root[32];
        Host *host;
        Posture *posture;
        SettingContext rc;
        Originals *originals;
        char events[FAKETREE_EVENTS_SIZE];
        Setting *s;
        pid_t fake;
        size_t log_seen;
} Fixture;

static const char CONFIG[] = "[cpus]\nisolated = 2-3\n[irq]\nirqbalance = ban\n";

/* Starts the fake with extra arguments (NULL-terminated); 0 when it listens. */
static int fake_start(Fixture *f, const char *const *extra) {
        const char *python = getenv("PYTHON3") ?: "python3", *script = getenv("FAKE_IRQBALANCE");
        _cleanup_free_ char *log = faketree_path(f->root, "fake.log"), *pidfile = faketree_path(f->root, "fake.pid");
        const char *argv[32] = { python, script, f->root, "--sleep", "0", "--log", log, "--pid-file", pidfile };
        size_t n = 9;

        if (!script) {
                printf("# FAKE_IRQBALANCE is not set (meson sets it)\n");
                return -EINVAL;
        }
        for (; extra && *extra && n < ELEMENTSOF(argv) - 1; extra++)
                argv[n++] = *extra;
        argv[n] = NULL;
        (void) unlink(pidfile);
        if (posix_spawn(&f->fake, python, NULL, NULL, (char *const *) argv, environ) != 0 &&
            posix_spawnp(&f->fake, python, NULL, NULL, (char *const *) argv, environ) != 0)
                return -errno;
        for (int i = 0; i < 500; i++) {
                if (access(pidfile, F_OK) == 0)
                        return 0;
                usleep(10000);
        }
        printf("# the fake irqbalance did not start\n");
        return -ETIMEDOUT;
}

static void fake_stop(Fixture *f, int sig) {
        if (f->fake <= 0)
                return;
        (void) kill(f->fake, sig);
        (void) waitpid(f->fake, NULL, 0);
        f->fake = 0;
}

/* The commands the fake got since the last call, "|"-separated; a refused one is marked
 * "(refused uid N)". */
static const char *fake_commands(Fixture *f) {
        static char out[1024];
        _cleanup_free_ char *answer = NULL;
        int fd = f->fake > 0 ? irqbalance_send(f->host, (unsigned) f->fake, "sync", NULL) : -1;

        /* It handles connections in order: once it answers this, it has logged the rest. */
        if (fd >= 0 && irqbalance_receive(fd, 5 * USEC_PER_SEC, &answer, NULL) < 0)
                printf("# the fake irqbalance does not answer \"sync\"\n");
        safe_close(fd);
        _cleanup_free_ char *path = faketree_path(f->root, "fake.log"), *text = faketree_read_file(path);
        size_t len = 0;

        out[0] = '\0';
        if (!text || strlen(text) < f->log_seen)
                return "<no log>";
        for (char *line = text + f->log_seen; *line;) {
                char *end = strchrnul(line, '\n'), *c = strstr(line, "\"command\": \""), *u = strstr(line, "\"uid\": ");
                int n = c ? (int) strcspn(c + 12, "\"") : 0;

                len += (size_t) snprintf(out + len, sizeof(out) - len, "%s%.*s", len ? "|" : "", n, c ? c + 12 : "?");
                if (strstr(line, "\"obeyed\": false") && u && len < sizeof(out))
                        len += (size_t) snprintf(out + len, sizeof(out) - len, " (refused uid %d)", atoi(u + 7));
                if (len >= sizeof(out))
                        break;
                line = *end ? end + 1 : end;
        }
        f->log_seen = strlen(text);
        return out;
}

static const char *look(Fixture *f, ReconcileFlags flags) {
        (void) setting_reconcile(&f->rc, f->s, now_usec(CLOCK_MONOTONIC), flags);
        if (f->s->reason)
                printf("#   %s %s: %s\n", setting_state_to_string(f->s->state), f->s->object, f->s->reason);
        return events_take(f);
}

static bool fixture_init(Fixture *f, bool observe) {
        _cleanup_free_ char *dir = NULL;

        *f = (Fixture) {};
        faketree_mkdtemp(f->root, sizeof(f->root), "test-irqb");
        faketree_cpus(f->root, "0-3", "", "(null)");
        tree_mkdir(f, "proc");
        tree_mkdir(f, "run");
        if (!faketree_reconciler(f->root, CONFIG, &f->host, &f->posture, &f->rc, f->events))
                return false;
        dir = faketree_path(f->root, "run-lowlatd");
        if (originals_open(dir, f->root, &f->originals) < 0)
                return false;
        f->rc.originals = f->originals;
        f->rc.observe = observe;
        return setting_new_irqbalance_ban(f->posture, &f->s) >= 0;
}

static void fixture_done(Fixture *f) {
        fake_stop(f, SIGTERM);
        setting_free(f->s);
        originals_free(f->originals);
        faketree_reconciler_done(f->root, &f->rc, f->posture, f->host);
}

static void test_not_running(Fixture *f) {
        CHECK_STR(f->s->object, "irqbalance", "the object");
        CHECK_STR(f->s->desired, "2-3", "desired: the isolated CPUs");
        CHECK_STR(look(f, RECONCILE_FORCE), "unsupported", "no irqbalance: unsupported");
        CHECK_STR(f->s->reason, "irqbalance is not running", "and why");
        CHECK_STR(look(f, 0), "", "reported once");
        tree_write(f, "proc/4000/comm", "irqbalance\n");
        CHECK_STR(look(f, RECONCILE_FORCE), "unsupported", "an irqbalance without a socket: unsupported for another reason, reported");
        CHECK(f->s->reason && strstr(f->s->reason, "irqbalance (pid 4000) has no control socket in "),
              "and the reason says it runs without a socket");
        CHECK_STR(look(f, RECONCILE_FORCE), "", "the same reason again: not reported again");
        tree_remove(f, "proc/4000");
}

static void test_own_ban_covers(Fixture *f) {
        static const char *const banned[] = { "--banned", "1-3", NULL };

        if (!CHECK(fake_start(f, banned) == 0, "a fake irqbalance that bans 1-3 on its own"))
                return;
        CHECK_STR(look(f, RECONCILE_FORCE), "recovered", "its own ban covers 2-3: ok");
        CHECK_STR(f->s->observed, "1-3", "observed: what it bans");
        CHECK_STR(fake_commands(f), "setup", "it was only asked, never told");
        CHECK(setting_irqbalance_ban_pid(f->s) == (unsigned) f->fake, "the pid it talks to");
        fake_stop(f, SIGTERM);
        CHECK_STR(look(f, 0), "unsupported", "it stopped: unsupported again");
}

static void test_ban_and_restart(Fixture *f) {
        static const char *const banned[] = { "--banned", "0", NULL };
        char buf[256];

        if (!CHECK(fake_start(f, banned) == 0, "a fake irqbalance that bans CPU 0 on its own"))
                return;
        CHECK_STR(look(f, RECONCILE_FORCE), "drift corrected", "it bans 0 only: drift, corrected");
        CHECK_STR(fake_commands(f), "setup|settings cpus 0,2-3", "asked, then told its own ban plus 2-3");
        CHECK_STR(f->s->observed, "0,2-3", "what it was told stands until its rescan");
        CHECK(strstr(setting_describe_observed(f->s, &f->rc, buf, sizeof(buf)) ?: "", "told: from its next rescan on"),
              "and says so");
        CHECK_STR(originals_get(f->originals, SETTING_IRQBALANCE_BAN, "irqbalance"), "0", "the original ban is recorded");
        CHECK_STR(look(f, 0), "", "a look while it settles asks nothing");
        CHECK_STR(fake_commands(f), "", "nothing sent");
        usleep(SETTLE_WAIT_USEC);
        CHECK_STR(look(f, 0), "", "settled: it bans 0,2-3, nothing to say");
        CHECK_STR(fake_commands(f), "setup", "asked once to check");
        CHECK_STR(f->s->observed, "0,2-3", "observed from its answer");

        fake_stop(f, SIGTERM);
        if (!CHECK(fake_start(f, banned) == 0, "irqbalance restarts (a new pid)"))
                return;
        CHECK_STR(look(f, 0), "drift corrected", "the scan sees the ban gone, and tells it again");
        CHECK_STR(fake_commands(f), "setup|settings cpus 0,2-3", "the new one is told");
        CHECK(setting_irqbalance_ban_pid(f->s) == (unsigned) f->fake, "the new pid");
}

static void test_garbage_and_silence(Fixture *f) {
        usleep(SETTLE_WAIT_USEC);
        tree_write(f, "run/fake-irqbalance.answer", "garbage\n");
        CHECK_STR(look(f, 0), "unsupported", "an answer in another shape: unsupported");
        CHECK(f->s->reason && strstr(f->s->reason, "\"NODE 0 CPU 1 what is this\"") &&
                      strstr(f->s->reason, "a version lowlatd does not know"),
              "the reason quotes it");
        CHECK_STR(look(f, 0), "", "reported once");
        tree_write(f, "run/fake-irqbalance.answer", "normal\n");
        CHECK_STR(look(f, RECONCILE_FORCE), "recovered", "a sane answer again (forced): recovered");
        (void) fake_commands(f);

        tree_write(f, "run/fake-irqbalance.answer", "silent\n");
        CHECK_STR(look(f, 0), "", "no answer within 250 ms: nothing new, the question stays open");
        CHECK_STR(look(f, 0), "", "a second look waits for the same answer");
        CHECK_STR(fake_commands(f), "setup", "asked once, not again");
        CHECK_STR(look(f, 0), "correction-failed", "a third look without an answer is a failure");
        CHECK(f->s->reason && strstr(f->s->reason, "has not answered over its socket for 3 looks"), "and says why");
        tree_write(f, "run/fake-irqbalance.answer", "normal\n");
        CHECK_STR(look(f, 0), "recovered", "it answers again: recovered");
}

static void test_refused(Fixture *f) {
        static const char *const other_uid[] = { "--banned", "0", "--uid", "4242", NULL };

        fake_stop(f, SIGTERM);
        if (!CHECK(fake_start(f, other_uid) == 0, "an irqbalance that obeys another uid only"))
                return;
        (void) fake_commands(f);
        CHECK_STR(look(f, 0), "unsupported", "it does not answer a sender it refuses: unsupported");
        CHECK(f->s->reason && strstr(f->s->reason, "closed the connection without an answer: it obeys root only"),
              "and the reason says it obeys root only");
        CHECK_STR(fake_commands(f), "setup (refused uid 0)", "lowlatd sent its credentials, uid 0");
        fake_stop(f, SIGTERM);
}

static void test_vanished(Fixture *f) {
        static const char *const banned[] = { "--banned", "0", NULL };
        _cleanup_free_ char *proc = NULL;

        if (!CHECK(fake_start(f, banned) == 0, "irqbalance again"))
                return;
        CHECK_STR(look(f, RECONCILE_FORCE), "drift corrected", "told");
        fake_stop(f, SIGKILL);
        proc = strdup_printf("proc/%d", (int) setting_irqbalance_ban_pid(f->s));
        tree_remove(f, proc);
        CHECK_STR(look(f, 0), "unsupported", "killed (its socket left behind, the process gone): unsupported");
        CHECK_STR(f->s->reason, "irqbalance is not running", "not running");
        tree_remove(f, "run/irqbalance");
}

static void test_reload_and_restore(Fixture *f) {
        static const char *const banned[] = { "--banned", "0", NULL };
        _cleanup_(setting_freep) Setting *old = NULL;
        _cleanup_(posture_freep) Posture *p3 = NULL;
        _cleanup_(host_freep) Host *h = NULL;
        Setting *n = NULL;

        originals_forget(f->originals, SETTING_IRQBALANCE_BAN, "irqbalance");
        if (!CHECK(fake_start(f, banned) == 0, "irqbalance once more"))
                return;
        (void) fake_commands(f);
        CHECK_STR(look(f, RECONCILE_FORCE), "drift corrected", "told 0,2-3");
        CHECK_STR(fake_commands(f), "setup|settings cpus 0,2-3", "as before");

        if (!CHECK(faketree_posture(f->root, "r.conf", "[cpus]\nisolated = 3\n[irq]\nirqbalance = ban\n", &h, &p3) &&
                           setting_new_irqbalance_ban(p3, &n) == 0,
                   "a reload isolates CPU 3 only"))
                return;
        setting_inherit(n, f->s);
        old = f->s;
        f->s = n;
        CHECK_STR(look(f, RECONCILE_FORCE | RECONCILE_APPLYING), "drift corrected",
                  "the new list is told at once, though 3 is banned already");
        CHECK_STR(fake_commands(f), "settings cpus 0,3", "its own CPU 0 plus 3, nothing asked while it settles");
        CHECK_STR(look(f, 0), "", "and that is all");

        CHECK(setting_restore(&f->rc, f->s) == 1, "restore");
        CHECK_STR(fake_commands(f), "settings cpus NULL", "restore tells it to go back to its own ban");
        CHECK(!originals_get(f->originals, SETTING_IRQBALANCE_BAN, "irqbalance"), "the original is forgotten");
        usleep(SETTLE_WAIT_USEC);
        CHECK(setting_restore(&f->rc, f->s) == 0, "a second restore finds nothing recorded");
        f->rc.observe = true;
        CHECK_STR(look(f, RECONCILE_FORCE), "drift", "observing after the restore: it bans 0 again, drift");
        CHECK_STR(f->s->observed, "0", "its own ban is back");
        CHECK_STR(fake_commands(f), "setup", "asked, not told");
        f->rc.observe = false;
}

static void test_observe(Fixture *f) {
        static const char *const banned[] = { "--banned", "0", NULL };

        if (!CHECK(fake_start(f, banned) == 0, "a fake irqbalance for observe mode"))
                return;
        CHECK_STR(look(f, RECONCILE_FORCE), "drift", "observe mode: drift, reported");
        CHECK_STR(fake_commands(f), "setup", "and nothing told");
        CHECK(!originals_get(f->originals, SETTING_IRQBALANCE_BAN, "irqbalance"), "nothing recorded");
}

int main(void) {
        Fixture f;

        test_parse_setup();
        test_names_and_commands();
        test_peer_trusted();
        test_in_unit();

        if (CHECK(fixture_init(&f, false), "fixture: a fake root with isolated = 2-3 and irqbalance = ban")) {
                test_not_running(&f);
                test_own_ban_covers(&f);
                test_ban_and_restart(&f);
                test_garbage_and_silence(&f);
                test_refused(&f);
                test_vanished(&f);
                test_reload_and_restore(&f);
        }
        fixture_done(&f);
        if (CHECK(fixture_init(&f, true), "fixture: the same, observing"))
                test_observe(&f);
        fixture_done(&f);
        return tap_finish();
}
