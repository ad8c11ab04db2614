/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* irqbalance_ban: the CPUs a running irqbalance bans, which must include the isolated ones.
 * The value is irqbalance's own answer to "setup"; the correction tells it "settings cpus
 * LIST" over its socket: what it banned on its own plus the isolated CPUs. irqbalance forgets
 * a command when it restarts, so a new irqbalance is drift and is told again; restore tells
 * it "settings cpus NULL", which puts back the ban of its own configuration. */
#include <string.h>
#include <time.h>

#include "host/irqbalance.h"
#include "setting/irqbalance.h"
#include "setting/table.h"
#include "host/task.h"
#include "basic/util.h"

/* irqbalance applies a command at its next rescan, at most one interval (SLEEP) later, and
 * then sleeps one more interval inside that rescan, answering nobody. Until both have passed
 * (and a second for the rescan itself) "setup" still shows the old ban or blocks: what it was
 * told stands for what it bans, and nobody asks. */
#define SETTLE_USEC(sleep_sec) ((2 * (uint64_t) (sleep_sec) + 1) * USEC_PER_SEC)
/* Its interval before it has said (irqbalance's default, -t). */
#define SLEEP_DEFAULT_SEC 10
/* Looks in a row without an answer to "setup" (it sleeps through a rescan someone else
 * caused: SIGHUP, CPU hotplug) before that is a failure. The question stays open meanwhile:
 * irqbalance writes its answer without MSG_NOSIGNAL, and a closed socket would cost an
 * irqbalance that does not ignore SIGPIPE its life. */
#define UNANSWERED_LOOKS_MAX 3

typedef struct IrqbalanceBanSetting {
        Setting setting;
        CPUSet isolated;       /* desired: all of these among its banned CPUs */
        unsigned pid;          /* the irqbalance looked at last, 0 when none runs */
        unsigned sleep_sec;    /* its interval, from "setup" */
        bool sleep_known;
        bool own_known;
        CPUSet own;            /* what it banned before lowlatd told it anything */
        bool told;             /* lowlatd told this irqbalance a ban */
        bool verify;           /* ... and has not yet seen it take */
        bool retell;           /* a reload changed the isolated CPUs since it was told */
        CPUSet expected;       /* what it bans once it applies the last command */
        uint64_t settle_until; /* CLOCK_MONOTONIC; see SETTLE_USEC */
        int asking_fd;         /* a "setup" it has not answered yet */
        bool refused;          /* the last connection was refused or found no socket */
        unsigned unanswered;   /* looks since it was asked */
        CPUSet scratch;
} IrqbalanceBanSetting;

#define BAN(s) ((IrqbalanceBanSetting *) (s))

int setting_new_irqbalance_ban(const Posture *p, Setting **ret) {
        _cleanup_free_ char *desired = cpuset_format_list(&p->isolated);
        _cleanup_(setting_freep) Setting *s = setting_alloc(SETTING_IRQBALANCE_BAN, IRQBALANCE_BAN_OBJECT);

        if (!s)
                return -ENOMEM;
        BAN(s)->asking_fd = -1;
        if (!desired || setting_set_desired(s, desired) < 0 || cpuset_copy(&BAN(s)->isolated, &p->isolated) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(s);
        return 0;
}

Setting *setting_irqbalance_ban_find(const SettingTable *t) {
        return table_find(t, SETTING_IRQBALANCE_BAN, IRQBALANCE_BAN_OBJECT);
}

unsigned setting_irqbalance_ban_pid(const Setting *s) {
        return BAN(s)->pid;
}

bool setting_irqbalance_ban_refused(const Setting *s) {
        return BAN(s)->pid > 0 && BAN(s)->refused;
}

/* The value's text: a CPU list, "none" for the empty set (an empty value means a writer
 * caught mid-write to the state machine). */
static int format_ban(const CPUSet *cpus, char *buf, size_t size) {
        if (cpuset_is_empty(cpus))
                return snprintf(buf, size, "none") < (int) size ? 0 : -ENOBUFS;
        return cpuset_format_list_buf(cpus, buf, size) < 0 ? -ENOBUFS : 0;
}

static int parse_ban(const char *text, CPUSet *ret) {
        if (streq(text, "none")) {
                cpuset_clear(ret);
                return 0;
        }
        return cpuset_parse_list(text, ret);
}

/* A new irqbalance (or none) knows nothing of what lowlatd told the last one. */
static void forget_irqbalance(IrqbalanceBanSetting *b, unsigned pid) {
        b->asking_fd = safe_close(b->asking_fd);
        b->unanswered = 0;
        b->refused = false;
        b->pid = pid;
        b->sleep_known = false;
        b->own_known = b->told = b->verify = b->retell = false;
        cpuset_clear(&b->own);
        cpuset_clear(&b->expected);
        b->settle_until = 0;
}

/* The running irqbalance with a socket, into b->pid. -EOPNOTSUPP, with the reason, when
 * there is none to tell. */
static int find_irqbalance(Setting *s, SettingContext *rc) {
        static const char *const name[] = { "irqbalance" };
        IrqbalanceBanSetting *b = BAN(s);
        _cleanup_free_ char *dir = host_path(rc->host, IRQBALANCE_SOCKET_DIR);
        unsigned pid;
        int r;

        r = irqbalance_find(rc->host, &pid);
        if (r < 0) {
                setting_set_reason(s, "listing %s failed: %s", dir ?: "/" IRQBALANCE_SOCKET_DIR, strerror(-r));
                return r == -EPERM ? -EIO : r;
        }
        if (pid != b->pid)
                forget_irqbalance(b, pid);
        if (pid > 0)
                return 0;
        /* Between its start and its socket an irqbalance builds its view of the host; a
         * look then (the old one's socket just went) must not call it an old version. */
        if (task_find_by_comm(rc->host, name, 1, &pid, NULL) >= 0)
                setting_set_reason(s,
                                   "irqbalance (pid %u) has no control socket in %s: it is still starting, or it "
                                   "never makes one (irqbalance before 1.7, built without it, or unable to create "
                                   "it) and cannot be told which CPUs to leave alone",
                                   pid, dir ?: IRQBALANCE_SOCKET_DIR);
        else
                setting_set_reason(s, "irqbalance is not running");
        return -EOPNOTSUPP;
}

/* Connects to b->pid's socket and sends command: the connected fd, -EAGAIN when its
 * backlog is full and busy_ok, or -errno for the state machine with the reason set
 * ("doing" says what failed). A socket served by someone else than the irqbalance its
 * name claims is a failure: told nothing, retried later. */
static int send_command(Setting *s, SettingContext *rc, const char *command, const char *doing, bool busy_ok) {
        IrqbalanceBanSetting *b = BAN(s);
        struct ucred peer = { .pid = 0, .uid = (uid_t) -1, .gid = (gid_t) -1 };
        int r;

        r = irqbalance_send(rc->host, b->pid, command, &peer);
        b->refused = r == -ECONNREFUSED || r == -ENOENT;
        if (r >= 0 || (r == -EAGAIN && busy_ok))
                return r;
        if (r == -EPERM && peer.pid > 0) {
                setting_set_reason(s,
                                   "%s (pid %u) not done: its socket /%s/irqbalance%u.sock is served by uid %u "
                                   "pid %u, not by root (or a process of irqbalance.service) and pid %u; nothing was "
                                   "sent",
                                   doing, b->pid, IRQBALANCE_SOCKET_DIR, b->pid, (unsigned) peer.uid,
                                   (unsigned) peer.pid, b->pid);
                return -EACCES;
        }
        setting_set_reason(s, "%s (pid %u) over its socket failed: %s", doing, b->pid, strerror(-r));
        return r == -ENOENT || r == -EPERM ? -EIO : r;
}

/* irqbalance's answer to "setup": 0 with it in *ret, 1 when it has not answered yet (the
 * question stays open for the next look), or -errno with the reason set. */
static int ask_setup(Setting *s, SettingContext *rc, IrqbalanceSetup *ret) {
        IrqbalanceBanSetting *b = BAN(s);
        _cleanup_free_ char *answer = NULL, *shown = NULL;
        uint64_t timeout = 0;
        size_t len = 0;
        int r;

        if (b->asking_fd < 0) {
                r = send_command(s, rc, "setup", "asking irqbalance", true);
                if (r < 0 && r != -EAGAIN)
                        return r;
                b->asking_fd = r; /* -1 when its backlog is full: not answering either */
                timeout = IRQBALANCE_ANSWER_TIMEOUT_USEC;
        }
        r = b->asking_fd >= 0 ? irqbalance_receive(b->asking_fd, timeout, &answer, &len) : -ETIMEDOUT;
        if (r == -ETIMEDOUT) {
                if (++b->unanswered < UNANSWERED_LOOKS_MAX)
                        return 1;
                b->asking_fd = safe_close(b->asking_fd);
                b->unanswered = 0;
                setting_set_reason(s, "irqbalance (pid %u) has not answered over its socket for %u looks",
                                   b->pid, UNANSWERED_LOOKS_MAX);
                return -ETIMEDOUT;
        }
        b->asking_fd = safe_close(b->asking_fd);
        b->unanswered = 0;
        if (r < 0) {
                setting_set_reason(s, "reading irqbalance's answer (pid %u) failed: %s", b->pid, strerror(-r));
                return r == -ENOENT || r == -EPERM ? -EIO : r;
        }
        if (len == 0) {
                /* What irqbalance does to a sender it refuses: a close, nothing said. */
                setting_set_reason(s,
                                   "irqbalance (pid %u) closed the connection without an answer: it obeys root "
                                   "only (SCM_CREDENTIALS uid 0), and lowlatd runs as uid %u",
                                   b->pid, (unsigned) geteuid());
                return -EOPNOTSUPP;
        }
        r = irqbalance_parse_setup(answer, len, ret);
        if (r != -EBADMSG)
                return r;
        answer[MIN(len, (size_t) 80)] = '\0';
        shown = utf8_escape(answer);
        setting_set_reason(s,
                           "irqbalance (pid %u) answered \"setup\" with \"%s\", not \"SLEEP n ... BANNED mask\": a "
                           "version lowlatd does not know",
                           b->pid, shown ?: "?");
        return -EOPNOTSUPP;
}

static int irqbalance_ban_read(Setting *s, SettingContext *rc, char *buf, size_t size, ReconcileFlags flags) {
        IrqbalanceBanSetting *b = BAN(s);
        _cleanup_(irqbalance_setup_done) IrqbalanceSetup setup = {};
        _cleanup_free_ char *expected = NULL, *banned = NULL;
        int r;

        r = find_irqbalance(s, rc);
        if (r < 0)
                return r;
        if (now_usec(CLOCK_MONOTONIC) < b->settle_until)
                return format_ban(&b->expected, buf, size);
        r = ask_setup(s, rc, &setup);
        if (r < 0)
                return r;
        if (r > 0) {
                if (b->own_known && s->observed) {
                        snprintf(buf, size, "%s", s->observed); /* nothing new from this one yet */
                        return 0;
                }
                setting_set_reason(s, "irqbalance (pid %u) has not answered within %u ms", b->pid,
                                   (unsigned) (IRQBALANCE_ANSWER_TIMEOUT_USEC / USEC_PER_MSEC));
                return -ETIMEDOUT;
        }
        b->sleep_sec = setup.sleep_sec;
        b->sleep_known = true;
        if (b->verify) {
                b->verify = false;
                if (!cpuset_is_subset(&b->expected, &setup.banned)) {
                        expected = cpuset_format_list(&b->expected);
                        banned = cpuset_format_list(&setup.banned);
                        setting_set_reason(s,
                                           "irqbalance (pid %u) was told to ban CPUs %s and still bans %s after "
                                           "its rescan: it did not take the command (lowlatd not running as root, "
                                           "or an irqbalance before 1.7)",
                                           b->pid, expected ?: "?", isempty(banned) ? "none" : banned);
                        return -EOPNOTSUPP;
                }
        }
        if (!b->own_known) {
                if (cpuset_copy(&b->own, &setup.banned) < 0)
                        return -ENOMEM;
                b->own_known = true;
        }
        return format_ban(&setup.banned, buf, size);
}

static bool irqbalance_ban_matches(Setting *s, SettingContext *rc) {
        IrqbalanceBanSetting *b = BAN(s);

        return !b->retell && parse_ban(s->observed, &b->scratch) >= 0 && cpuset_is_subset(&b->isolated, &b->scratch);
}

/* Sends a ban (NULL: "its own again") and expects *expected from its next rescan on. */
static int tell_irqbalance(Setting *s, SettingContext *rc, const CPUSet *ban, const CPUSet *expected) {
        IrqbalanceBanSetting *b = BAN(s);
        _cleanup_free_ char *command = irqbalance_ban_command(ban), *doing = NULL;
        int fd;

        if (!command || !(doing = strdup_printf("telling irqbalance \"%s\"", command)))
                return -ENOMEM;
        fd = send_command(s, rc, command, doing, false);
        if (fd < 0)
                return fd;
        /* Nothing comes back; irqbalance reads the command after we closed all the same. */
        safe_close(fd);
        if (cpuset_copy(&b->expected, expected) < 0)
                return -ENOMEM;
        b->settle_until = now_usec(CLOCK_MONOTONIC) + SETTLE_USEC(b->sleep_known ? b->sleep_sec : SLEEP_DEFAULT_SEC);
        return 0;
}

/* What it banned on its own stays banned; the isolated CPUs are added. */
static int irqbalance_ban_write(Setting *s, SettingContext *rc, const char *value) {
        IrqbalanceBanSetting *b = BAN(s);
        _cleanup_cpuset_ CPUSet ban = CPUSET_EMPTY;
        int r;

        if (b->pid == 0)
                return -EOPNOTSUPP; /* the read said so */
        if (cpuset_copy(&ban, &b->own) < 0 || cpuset_or(&ban, &b->isolated) < 0)
                return -ENOMEM;
        r = tell_irqbalance(s, rc, &ban, &ban);
        if (r < 0)
                return r;
        b->told = b->verify = true;
        b->retell = false;
        return 0;
}

/* "settings cpus NULL" rather than the original list: irqbalance then bans what its own
 * configuration says (IRQBALANCE_BANNED_CPULIST, or isolcpus= and nohz_full=), which is the
 * original unless an administrator changed it since, and an empty list would crash
 * irqbalance 1.9. Only an irqbalance that holds lowlatd's ban is told: one that bans the
 * original, or not the isolated CPUs, never heard from lowlatd (it restarted since). */
static int irqbalance_ban_restore(Setting *s, SettingContext *rc, const char *original) {
        IrqbalanceBanSetting *b = BAN(s);
        _cleanup_(irqbalance_setup_done) IrqbalanceSetup setup = {};
        _cleanup_cpuset_ CPUSet was = CPUSET_EMPTY;
        const CPUSet *banned = &b->expected;
        int r;

        if (parse_ban(original, &was) < 0)
                return -EINVAL;
        r = find_irqbalance(s, rc);
        if (r == -EOPNOTSUPP)
                return 0; /* none runs: none holds the ban */
        if (r < 0)
                return r;
        if (now_usec(CLOCK_MONOTONIC) >= b->settle_until) {
                r = ask_setup(s, rc, &setup);
                if (r > 0) {
                        setting_set_reason(s, "irqbalance (pid %u) is not answering", b->pid);
                        return -ETIMEDOUT;
                }
                if (r < 0)
                        return r;
                banned = &setup.banned;
        }
        if (cpuset_equal(banned, &was) || !cpuset_is_subset(&b->isolated, banned))
                return 0;
        r = tell_irqbalance(s, rc, NULL, &was);
        if (r < 0)
                return r;
        b->told = b->verify = false;
        return 0;
}

static int irqbalance_ban_describe_observed(Setting *s, SettingContext *rc, char *buf, size_t size) {
        IrqbalanceBanSetting *b = BAN(s);
        bool settling = now_usec(CLOCK_MONOTONIC) < b->settle_until;
        int n;

        if (b->pid == 0)
                return -ENOENT;
        n = snprintf(buf, size, "%s (irqbalance pid %u%s)", s->observed, b->pid,
                     settling ? ", told: from its next rescan on" : "");
        return n < 0 || (size_t) n >= size ? -ENOBUFS : 0;
}

/* What lowlatd told which irqbalance, and when, survives a reload: asking or telling again
 * would only make it rescan. A new isolated list is told once more. */
static void irqbalance_ban_inherit(Setting *s, Setting *old, bool same_value) {
        IrqbalanceBanSetting *b = BAN(s), *o = BAN(old);
        CPUSet t;

        safe_close(b->asking_fd);
        b->asking_fd = TAKE_FD(o->asking_fd);
        b->unanswered = o->unanswered;
        b->refused = o->refused;
        b->pid = o->pid;
        b->sleep_sec = o->sleep_sec;
        b->sleep_known = o->sleep_known;
        b->own_known = o->own_known;
        b->told = o->told;
        b->verify = o->verify;
        b->retell = o->retell || (!same_value && o->told);
        b->settle_until = o->settle_until;
        t = b->own, b->own = o->own, o->own = t;
        t = b->expected, b->expected = o->expected, o->expected = t;
}

static void irqbalance_ban_release(Setting *s) {
        BAN(s)->asking_fd = safe_close(BAN(s)->asking_fd);
}

static void irqbalance_ban_done(Setting *s) {
        IrqbalanceBanSetting *b = BAN(s);

        cpuset_done(&b->isolated);
        cpuset_done(&b->own);
        cpuset_done(&b->expected);
        cpuset_done(&b->scratch);
}

static int irqbalance_ban_plan(SettingTable *t, const Host *h, const Posture *p) {
        Setting *s = NULL;
        int r;

        if (p->config->irqbalance != IRQBALANCE_BAN || cpuset_is_empty(&p->isolated))
                return 0;
        r = setting_new_irqbalance_ban(p, &s);
        return r < 0 ? r : table_add(t, s);
}

/* No file to watch: the daemon watches /run/irqbalance itself (daemon/irqbalancewatch.c)
 * and looks again, forced, when irqbalance's socket comes or goes; the scan sees a restart
 * too, as a ban that is gone. */
/* The CPUs irqbalance was told to leave alone: none, or a CPU list of this host. */
static const char *irqbalance_ban_original_problem(const Setting *s, SettingContext *rc, const char *value) {
        (void) s;
        return streq(value, "none") ? NULL : setting_cpu_list_problem(rc, value, false);
}

const SettingVTable irqbalance_ban_vtable = {
        .object_size = sizeof(IrqbalanceBanSetting),
        .group = SETTING_GROUP_HOST,
        .noun = "CPUs banned by",
        .read = irqbalance_ban_read,
        .write = irqbalance_ban_write,
        .matches = irqbalance_ban_matches,
        .original_problem = irqbalance_ban_original_problem,
        .restore = irqbalance_ban_restore,
        .describe_observed = irqbalance_ban_describe_observed,
        .inherit = irqbalance_ban_inherit,
        .release = irqbalance_ban_release,
        .done = irqbalance_ban_done,
        .plan = irqbalance_ban_plan,
};
