/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The daemon's state, the reconcile loop, and the wiring of the event sources. */
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <limits.h>
#include <sys/resource.h>
#include <systemd/sd-daemon.h>
#include <time.h>

#include "basic/array.h"
#include "version.h"
#include "audit/audit.h"
#include "filewatch.h"
#include "irqbalancewatch.h"
#include "netwatch.h"
#include "noisewatch.h"
#include "unitwatch.h"
#include "procwatch.h"
#include "sysfswatch.h"
#include "host/interrupts.h"
#include "setting/irq.h"
#include "setting/originals.h"
#include "log/log.h"
#include "host/task.h"
#include "manager.h"
#include "basic/util.h"
#include "setting/posture-load.h"

static const char *const manager_state_table[_MANAGER_STATE_MAX] = {
        [MANAGER_STARTING] = "starting",
        [MANAGER_ENFORCING] = "enforcing",
        [MANAGER_OBSERVING] = "observing",
        [MANAGER_DEGRADED] = "degraded",
};
DEFINE_STRING_TABLE_LOOKUP(manager_state, ManagerState);

bool manager_observing(const Manager *m) {
        return m->observe_override || m->restored || m->posture->mode == DAEMON_MODE_OBSERVE;
}

ManagerState manager_state(const Manager *m) {
        size_t counts[_SETTING_STATE_MAX];

        if (m->starting)
                return MANAGER_STARTING;
        table_count(&m->table, counts);
        if (!manager_observing(m) && counts[SETTING_FAILED] > 0)
                return MANAGER_DEGRADED;
        return manager_observing(m) ? MANAGER_OBSERVING : MANAGER_ENFORCING;
}

/* The event sources, in the order they are told of things: inotify first, as the daemon
 * always did; the noise counters last, after the first pass. Adding a source is one file
 * and one line here. */
static const SourceVTable *const source_vtables[] = {
        &filewatch_vtable,
        &netwatch_vtable,
        &irqbalancewatch_vtable,
        &unitwatch_vtable,
        &procwatch_vtable,
        &sysfswatch_vtable,
        &noisewatch_vtable,
};

static void on_setting_added(void *userdata, Setting *s) {
        Manager *m = userdata;

        source_registry_setting_added(&m->sources, s);
        /* Said once, when planning puts it in: the scan never sees it as drift. */
        if (s->clamped)
                log_setting_event(EVENT_CLAMPED, s, s->observed);
}

static void on_setting_removed(void *userdata, Setting *s) {
        Manager *m = userdata;

        source_registry_setting_removed(&m->sources, s);
        if (s->dirty)
                for (size_t i = 0; i < m->n_dirty; i++)
                        if (m->dirty[i] == s) {
                                m->dirty[i] = m->dirty[--m->n_dirty];
                                break;
                        }
}

/* The first process whose comm is one of the IRQ balancers we know, as "irqbalance (pid
 * 812)"; NULL when none runs (or /proc cannot be listed). Runs once per report. */
static char *find_irq_balancer(Manager *m) {
        static const char *const known[] = { "irqbalance", "tuned" };
        unsigned pid;
        size_t i;

        if (task_find_by_comm(m->host, known, ELEMENTSOF(known), &pid, &i) < 0)
                return NULL;
        return strdup_printf("%s (pid %u)", known[i], pid);
}

/* Called for each correction of a setting whose held value someone rewrote. A fight is
 * one setting flipped again and again; an IRQ balancer instead moves many IRQs once each
 * (irqbalance writes an affinity only when it places an IRQ): reported once, until it
 * goes quiet. */
static void manager_note_rewrite(Manager *m, const Setting *s, uint64_t now) {
        char irqs[IRQ_WRITER_IRQS * 11 + 1];

        if (irq_writer_note(&m->irq_writer, s, now, irqs, sizeof(irqs)) <= 0)
                return;
        _cleanup_free_ char *writer = find_irq_balancer(m), *isolated = cpuset_format_list(&m->posture->isolated);
        log_irq_writer(writer, irqs, IRQ_WRITER_IRQS, (unsigned) (FIGHT_WINDOW_USEC / USEC_PER_SEC), isolated ?: "?");
}

static void on_setting_event(void *userdata, EventId event, const Setting *s, ReconcileFlags flags) {
        Manager *m = userdata;
        const char *observed;
        char buf[4096];

        /* A correction may have created what the setting watches (a unit's runtime drop-in
         * directory). */
        if (event == EVENT_CORRECTED)
                source_registry_setting_corrected(&m->sources, (Setting *) s);
        /* Putting the posture in place at start or after a reload is not drift: it is
         * summarised in one line. Problems are reported one by one. */
        if ((flags & RECONCILE_QUIET) && event == EVENT_DRIFT)
                return;
        if ((flags & RECONCILE_APPLYING) && !manager_observing(m) &&
            (event == EVENT_DRIFT || event == EVENT_CORRECTED)) {
                if (event == EVENT_CORRECTED)
                        m->applied[s->kind]++;
                return;
        }
        observed = event == EVENT_DRIFT && m->rc.drift_described ? m->rc.drift_described
                                                                  : setting_describe_observed((Setting *) s, &m->rc, buf, sizeof(buf));
        log_setting_event(event, s, observed);
        if ((event == EVENT_DRIFT || event == EVENT_CORRECTED) && m->listener.drift)
                m->listener.drift(m->listener.userdata, s, observed ?: "", event == EVENT_CORRECTED);
        /* Observe mode corrects nothing, so count the drift there. */
        if (s->rewritten && !(flags & RECONCILE_APPLYING) &&
            event == (manager_observing(m) ? EVENT_DRIFT : EVENT_CORRECTED))
                manager_note_rewrite(m, s, now_usec(CLOCK_MONOTONIC));
}

/* Once when the IRQ names cannot be read any more, once when they can again. */
static void manager_say_irq_names(Manager *m) {
        int e = irq_table_names_error(&m->table);

        if (e == m->irq_names_error || e == -ENOMEM)
                return;
        if (e == -EFBIG)
                log_warning("/proc/interrupts is larger than the %zu MiB lowlatd reads: IRQ names are no longer read "
                            "(the last names read stay; [irq] and NIC pins by name, and labels, miss new ones)",
                            PROC_INTERRUPTS_MAX / (1024 * 1024));
        else if (e < 0)
                log_warning_errno(e, "Cannot read IRQ names from /proc/interrupts");
        else
                log_info("IRQ names are read from /proc/interrupts again");
        m->irq_names_error = e;
}

void manager_update_status(Manager *m) {
        size_t counts[_SETTING_STATE_MAX];
        _cleanup_free_ char *status = NULL;
        ManagerState state = manager_state(m);

        manager_say_irq_names(m);
        if (m->listener.changed)
                m->listener.changed(m->listener.userdata);
        /* Called after every event: say something only when the line would change. */
        table_count(&m->table, counts);
        if (m->last_status && state == m->last_status_state && m->last_status_n == m->table.n &&
            memcmp(counts, m->last_status_counts, sizeof(counts)) == 0)
                return;
        m->last_status_state = state;
        m->last_status_n = m->table.n;
        memcpy(m->last_status_counts, counts, sizeof(counts));
        status = strdup_printf("%s: %zu settings, %zu drifted, %zu failed, %zu unmovable, %zu unsupported",
                               manager_state_to_string(state), m->table.n, counts[SETTING_DRIFTED],
                               counts[SETTING_FAILED], counts[SETTING_UNMOVABLE], counts[SETTING_UNSUPPORTED]);
        if (!status || streq_ptr(status, m->last_status))
                return;
        _cleanup_free_ char *msg = strdup_printf("STATUS=%s", status);
        if (msg)
                (void) sd_notify(false, msg);
        free(m->last_status);
        m->last_status = TAKE_PTR(status);
}

/* What the posture needs of the kernel command line (condition.h): read at start and at
 * every reload, since the posture changes then and the command line never does. */
static void manager_check_boot(Manager *m) {
        _cleanup_free_ char *params = NULL, *refused = NULL;
        int r = audit_boot_needs(m->host, m->posture, &params);

        if (r >= 0)
                r = audit_boot_refusal(m->posture, &refused);
        /* Only -ENOMEM: the condition then says what it said before. */
        if (r < 0)
                return;
        free(m->boot_params);
        m->boot_params = TAKE_PTR(params);
        free(m->boot_refused);
        m->boot_refused = TAKE_PTR(refused);
}

static void manager_pin_self(Manager *m) {
        int last = cpuset_last(&m->posture->housekeeping);
        cpu_set_t *allowed, *target;
        size_t size;
        unsigned n = 0;

        if (last < 0)
                return;
        size = CPU_ALLOC_SIZE((size_t) last + 1 > 1024 ? (size_t) last + 1 : 1024);
        allowed = CPU_ALLOC(size * 8);
        target = CPU_ALLOC(size * 8);
        if (!allowed || !target)
                goto out;
        CPU_ZERO_S(size, target);
        if (sched_getaffinity(0, size, allowed) < 0) {
                log_warning_errno(errno, "Cannot read own CPU affinity, not pinning");
                goto out;
        }
        CPUSET_FOREACH(cpu, &m->posture->housekeeping)
                if ((size_t) cpu < size * 8 && CPU_ISSET_S((size_t) cpu, size, allowed)) {
                        CPU_SET_S((size_t) cpu, size, target);
                        n++;
                }
        /* Never fatal: with no overlap (a container, a fake tree) we stay where we are. */
        if (n == 0)
                log_info("None of the housekeeping CPUs is available to lowlatd; not pinning itself");
        else if (sched_setaffinity(0, size, target) < 0)
                log_warning_errno(errno, "Cannot pin lowlatd to the housekeeping CPUs");
out:
        CPU_FREE(allowed);
        CPU_FREE(target);
}

static void manager_init_reconciler(Manager *m) {
        struct rlimit rl;

        if (getrlimit(RLIMIT_NOFILE, &rl) >= 0 && rl.rlim_cur < UINT_MAX)
                m->rc.fd_limit = (unsigned) rl.rlim_cur;
        m->rc.host = m->host;
        m->rc.posture = m->posture;
        m->rc.observe = manager_observing(m);
        m->rc.handler = on_setting_event;
        m->rc.userdata = m;
}

int manager_new(const char *config_path, Host *host, Posture *posture, bool observe_override, Manager **ret) {
        _cleanup_(manager_freep) Manager *m = NULL;
        SettingTableHooks hooks;

        m = calloc(1, sizeof(Manager));
        if (!m)
                return -ENOMEM;
        m->config_path = strdup(config_path);
        if (!m->config_path)
                return -ENOMEM;
        m->host = host;
        m->posture = posture;
        m->observe_override = observe_override;
        hooks = (SettingTableHooks) { on_setting_added, on_setting_removed, m };
        table_init(&m->table, &hooks);
        manager_init_reconciler(m);
        if (source_registry_new(&m->sources, source_vtables, ELEMENTSOF(source_vtables), (SourceHost *) m) < 0)
                return -ENOMEM;
        m->noise_source = source_registry_find(&m->sources, &noisewatch_vtable);
        manager_check_boot(m);
        *ret = TAKE_PTR(m);
        return 0;
}

Manager *manager_free(Manager *m) {
        if (!m)
                return NULL;
        table_done(&m->table); /* first: its hooks tell the sources of every setting leaving */
        source_registry_done(&m->sources);
        originals_free(m->originals);
        cpuset_done(&m->rc.scratch);
        sd_event_source_disable_unref(m->scan_timer);
        sd_event_source_disable_unref(m->dirty_source);
        sd_event_unref(m->event);
        free(m->dirty);
        free(m->config_path);
        free(m->last_status);
        free(m->last_online);
        free(m->last_reload_error);
        free(m->last_refused_reload);
        free(m->boot_params);
        free(m->boot_refused);
        posture_free(m->posture);
        host_free(m->host);
        free(m);
        return NULL;
}

static void manager_log_applied(Manager *m, const char *what) {
        char buf[512] = "";
        size_t len = 0, total = 0;

        for (size_t k = 0; k < _SETTING_KIND_MAX; k++) {
                if (m->applied[k] == 0)
                        continue;
                total += m->applied[k];
                len += (size_t) snprintf(buf + len, sizeof(buf) - len, "%s%s %zu", len ? ", " : "",
                                         setting_kind_to_string((SettingKind) k), m->applied[k]);
                if (len >= sizeof(buf))
                        break;
        }
        if (total > 0)
                log_notice("%s: set %zu settings (%s)", what, total, buf);
        memset(m->applied, 0, sizeof(m->applied));
}

/* CPU hotplug: a write refused because its CPUs were offline may work now. sysfs sends
 * no inotify event for it, so the scan compares the online list (one small read). */
static int manager_reload_because(Manager *m, const char *why, const uint64_t *expected_digest, bool automatic);

/* A CPU came online or went offline. The posture depends on the online CPUs (the default
 * housekeeping set is "online minus isolated"; governors and idle states are per online
 * CPU), so it is built again, from the configuration in force. That configuration is
 * known only as it was read from disk: if the files changed since, rebuilding would
 * apply an edit nobody reloaded, so then only failed settings get another try and the
 * rebuild waits for the reload. The rebuild is lowlatd's own, not an operator's reload:
 * after a restore it keeps observing, and a posture that cannot be built for these CPUs
 * (an isolated CPU offline) keeps the one in force without a failed reload on record. */
static void manager_online_cpus_changed(Manager *m, const char *online) {
        _cleanup_error_list_ ErrorList errors = ERROR_LIST_EMPTY;
        _cleanup_config_ Config *c = NULL;
        _cleanup_free_ char *why = NULL;
        int r;

        for (size_t i = 0; i < m->table.n; i++)
                if (m->table.settings[i]->state == SETTING_FAILED)
                        m->table.settings[i]->retry_after_usec = 0;
        r = config_load(m->config_path, &c, &errors);
        if (r < 0 || c->digest != m->posture->config->digest) {
                log_notice("Online CPUs changed to %s; the configuration on disk %s since the last reload, so the "
                           "posture is rebuilt for these CPUs only at the next reload (systemctl reload lowlatd)",
                           online, r < 0 ? "is no longer valid" : "changed");
                return;
        }
        why = strdup_printf("online CPUs changed to %s", online);
        (void) manager_reload_because(m, why ?: "online CPUs changed", NULL, true);
}

static void manager_check_online_cpus(Manager *m) {
        _cleanup_free_ char *text = NULL, *online = NULL;
        bool changed;

        if (host_read_file(m->host, "sys/devices/system/cpu/online", &text) < 0 ||
            !(online = normalize_whitespace(text)))
                return;
        changed = m->last_online && !streq(m->last_online, online);
        free(m->last_online);
        m->last_online = TAKE_PTR(online);
        if (changed) {
                manager_online_cpus_changed(m, m->last_online);
                source_registry_online_cpus_changed(&m->sources);
        }
}

static void manager_full_pass(Manager *m, ReconcileFlags flags) {
        uint64_t now;
        int r;

        manager_check_online_cpus(m);
        source_registry_pass_begin(&m->sources, flags);
        r = table_rescan(&m->table, m->host, m->posture);
        if (r < 0)
                log_warning_errno(r, "Cannot list what comes and goes under %s (IRQs, workqueues, [sysfs] patterns)",
                                  m->host->root_path);
        now = now_usec(CLOCK_MONOTONIC);
        table_reconcile_all(&m->table, &m->rc, now, flags);
        if (irq_writer_tick(&m->irq_writer, now))
                log_info("IRQ affinities have not been rewritten for %us: the other IRQ writer stopped",
                         (unsigned) (FIGHT_QUIET_USEC / USEC_PER_SEC));
        source_registry_pass_end(&m->sources, flags);
}

const Noise *manager_noise(Manager *m) {
        return noisewatch_refresh(m->noise_source);
}

const Noise *manager_noise_counters(const Manager *m) {
        return noisewatch_noise(m->noise_source);
}

const char *manager_noise_gate(const Manager *m) {
        return noisewatch_gate_state(m->noise_source);
}

/* Where originals are kept: systemd's RuntimeDirectory= (the first, if several), else
 * /run/lowlatd; a run with --root on another tree in a directory of its own under it
 * (originals_state_dir()), so that it never reads, rewrites or drops the host's file.
 * Without it lowlatd still enforces, but restore is not possible. */
static void manager_open_originals(Manager *m) {
        const char *env = getenv("RUNTIME_DIRECTORY");
        _cleanup_free_ char *base = strndup(env ?: "/run/lowlatd", env ? strcspn(env, ":") : strlen("/run/lowlatd"));
        _cleanup_free_ char *root = realpath(m->host->root_path, NULL), *dir = NULL;
        int r;

        if (!base)
                return;
        /* The tree as the kernel resolves it: "/srv/../srv/t/" and "/srv/t" are one root,
         * and a --root that is "/" after all is the host. */
        r = originals_state_dir(base, root ?: m->host->root_path, &dir);
        if (r < 0) {
                log_warning_errno(r, "Cannot name a directory for the original values of %s; restore will not be possible",
                                  m->host->root_path);
                return;
        }
        r = originals_open(dir, root ?: m->host->root_path, &m->originals);
        if (r < 0)
                log_warning_errno(r, "Cannot keep original values in %s; restore will not be possible", dir);
        else
                log_info("Keeping original values in %s/originals", dir);
        m->rc.originals = m->originals;
}

/* setting_restore(), and the one message for an original on file that the setting could
 * not have had (nothing is written, and the entry is gone: said once). */
static int manager_restore_setting(Manager *m, Setting *s) {
        int r = setting_restore(&m->rc, s);

        if (r == -EBADMSG)
                log_warning("Not restoring %s %s: %s (in %s)", setting_kind_to_string(s->kind), s->object, s->reason,
                            m->originals ? m->originals->path : "the originals file");
        return r;
}

int manager_restore(Manager *m, const char *why) {
        size_t restored = 0, failed = 0, skipped = 0;
        int first_error = 0;

        for (size_t i = 0; i < m->table.n; i++) {
                int r = manager_restore_setting(m, m->table.settings[i]);
                if (r > 0)
                        restored++;
                else if (r == -EBADMSG)
                        skipped++;
                else if (r < 0) {
                        failed++;
                        if (first_error == 0)
                                first_error = r;
                        log_warning_errno(r, "Cannot restore %s %s", setting_kind_to_string(m->table.settings[i]->kind),
                                          m->table.settings[i]->object);
                }
        }
        if (m->originals && originals_commit(m->originals) < 0)
                log_warning("Cannot rewrite the file of original values");
        /* From now on report, do not correct: otherwise the next scan would undo it all. */
        m->restored = true;
        m->restore_skipped = (uint32_t) MIN(skipped, (size_t) UINT32_MAX);
        m->rc.observe = true;
        m->posture_generation++; /* Mode changed: announce it */
        log_event(EVENT_RESTORED, "Restored %zu settings to their original values (%s)%s; %zu originals on file skipped as values they could not have had; now observing",
                  restored, why, failed ? ", some could not be restored" : "", skipped);
        /* Look once, quietly: every restored setting now differs from the posture, which
         * the message above says; one drift report per setting would only repeat it. */
        table_reconcile_all(&m->table, &m->rc, now_usec(CLOCK_MONOTONIC), RECONCILE_FORCE | RECONCILE_QUIET);
        manager_update_status(m);
        return first_error < 0 ? first_error : (int) restored;
}

int manager_apply(Manager *m) {
        int r;

        /* Observe mode changes nothing, so it records nothing (and creates no files). */
        if (!manager_observing(m))
                manager_open_originals(m);
        m->starting = true;
        r = table_plan(&m->table, m->host, m->posture);
        if (r < 0)
                return log_error_errno(r, "Cannot plan the posture");
        source_registry_open(&m->sources);
        manager_full_pass(m, RECONCILE_APPLYING);
        m->starting = false;
        manager_log_applied(m, "Posture applied");
        return 0;
}

/* What the event sources asked to look at. */

static void manager_queue_dirty(Manager *m, Setting *s) {
        if (s->dirty)
                return;
        if (array_grow(&m->dirty, &m->allocated_dirty, m->n_dirty + 1) < 0)
                return; /* the periodic scan will look instead */
        s->dirty = true;
        m->dirty[m->n_dirty++] = s;
        (void) sd_event_source_set_enabled(m->dirty_source, SD_EVENT_ONESHOT);
}

static void manager_flush_dirty(Manager *m) {
        uint64_t now;

        if (m->n_dirty == 0)
                return;
        now = now_usec(CLOCK_MONOTONIC);
        (void) sd_event_source_set_enabled(m->dirty_source, SD_EVENT_OFF);
        while (m->n_dirty > 0) {
                Setting *s = m->dirty[--m->n_dirty];
                s->dirty = false;
                table_reconcile_one(&m->table, &m->rc, s, now, RECONCILE_HINTED);
        }
        manager_update_status(m);
}

static int on_dirty(sd_event_source *source, void *userdata) {
        manager_flush_dirty(userdata);
        return 0;
}

/* The sources' side of daemon/source.h. SourceHost is the manager as the sources see it:
 * only this file knows it is one. */

static Manager *source_manager(const Source *s) {
        return (Manager *) s->host;
}

const SettingTable *source_table(const Source *s) {
        return &source_manager(s)->table;
}

const Host *source_host(const Source *s) {
        return source_manager(s)->host;
}

const Posture *source_posture(const Source *s) {
        return source_manager(s)->posture;
}

sd_event *source_event(const Source *s) {
        return source_manager(s)->event;
}

bool source_starting(const Source *s) {
        return source_manager(s)->starting;
}

void source_request_setting(Source *s, Setting *setting) {
        manager_queue_dirty(source_manager(s), setting);
}

void source_request_all(Source *s) {
        Manager *m = source_manager(s);

        for (size_t i = 0; i < m->table.n; i++)
                manager_queue_dirty(m, m->table.settings[i]);
}

void source_flush_requests(Source *s) {
        manager_flush_dirty(source_manager(s));
}

void source_request_now(Source *s, Setting *setting, uint64_t now, ReconcileFlags flags) {
        Manager *m = source_manager(s);

        table_reconcile_one(&m->table, &m->rc, setting, now, flags);
}

int source_request_plan(Source *s, SourcePlanStep step, void *userdata) {
        Manager *m = source_manager(s);

        return step(&m->table, &m->rc, userdata);
}

void source_status_changed(Source *s) {
        manager_update_status(source_manager(s));
}

void source_log_applied(Source *s, const char *what) {
        manager_log_applied(source_manager(s), what);
}

void source_provide_netlink(Source *s, Rtnl *rtnl, EthtoolClient *ethtool) {
        Manager *m = source_manager(s);

        m->rc.rtnl = rtnl;
        m->rc.ethtool = ethtool;
}

void source_provide_systemd(Source *s, SystemdClient *client) {
        source_manager(s)->rc.systemd = client;
}

/* The scan doubles as the watchdog ping: a loop that scans is alive, and one timer
 * means one wakeup. With a watchdog shorter than twice the scan interval, the scan runs
 * at half the watchdog period instead. */
static uint64_t manager_tick_interval(const Manager *m) {
        uint64_t interval = m->posture->config->scan_interval_usec;

        if (m->watchdog_usec > 0)
                interval = MIN(interval, m->watchdog_usec / 2);
        return MAX(interval, SCAN_INTERVAL_MIN_USEC);
}

static uint64_t scan_accuracy(uint64_t interval) {
        /* Let the kernel batch our wakeup with others; a scan a little late is fine. */
        return MIN(interval / 4, USEC_PER_SEC);
}

static void manager_arm_scan(Manager *m) {
        uint64_t interval = manager_tick_interval(m);

        (void) sd_event_source_set_time_accuracy(m->scan_timer, scan_accuracy(interval));
        (void) sd_event_source_set_time_relative(m->scan_timer, interval);
        (void) sd_event_source_set_enabled(m->scan_timer, SD_EVENT_ON);
}

static int on_scan_timer(sd_event_source *source, uint64_t usec, void *userdata) {
        Manager *m = userdata;

        manager_full_pass(m, 0);
        manager_update_status(m);
        if (m->watchdog_usec > 0)
                (void) sd_notify(false, "WATCHDOG=1");
        manager_arm_scan(m);
        return 0;
}

static int on_sighup(sd_event_source *source, const struct signalfd_siginfo *si, void *userdata) {
        manager_reload(userdata);
        return 0;
}

static int on_terminate(sd_event_source *source, const struct signalfd_siginfo *si, void *userdata) {
        Manager *m = userdata;

        (void) sd_notify(false, "STOPPING=1");
        if (m->posture->config->restore_on_exit)
                (void) manager_restore(m, "restore_on_exit");
        log_event(EVENT_STOPPING, "Stopping on %s", strsignal((int) si->ssi_signo));
        return sd_event_exit(m->event, 0);
}

int manager_start(Manager *m) {
        sigset_t mask;
        uint64_t interval;
        int r;

        r = sd_event_default(&m->event);
        if (r < 0)
                return log_error_errno(r, "Cannot create the event loop");

        sigemptyset(&mask);
        sigaddset(&mask, SIGHUP);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
                return log_error_errno(errno, "Cannot block signals");
        r = sd_event_add_signal(m->event, NULL, SIGHUP, on_sighup, m);
        if (r >= 0)
                r = sd_event_add_signal(m->event, NULL, SIGTERM, on_terminate, m);
        if (r >= 0)
                r = sd_event_add_signal(m->event, NULL, SIGINT, on_terminate, m);
        if (r < 0)
                return log_error_errno(r, "Cannot watch signals");

        if (sd_watchdog_enabled(false, &m->watchdog_usec) <= 0)
                m->watchdog_usec = 0;
        interval = manager_tick_interval(m);
        r = sd_event_add_time_relative(m->event, &m->scan_timer, CLOCK_MONOTONIC, interval, scan_accuracy(interval),
                                       on_scan_timer, m);
        if (r < 0)
                return log_error_errno(r, "Cannot arm the scan timer");

        r = sd_event_add_defer(m->event, &m->dirty_source, on_dirty, m);
        if (r < 0)
                return log_error_errno(r, "Cannot create the rescan source");
        (void) sd_event_source_set_enabled(m->dirty_source, SD_EVENT_OFF);

        if (m->watchdog_usec > 0)
                (void) sd_notify(false, "WATCHDOG=1");

        r = source_registry_start(&m->sources);
        if (r < 0)
                return r;
        manager_pin_self(m);
        return 0;
}

void manager_ready(Manager *m) {
        _cleanup_free_ char *isolated = cpuset_format_list(&m->posture->isolated);

        manager_update_status(m);
        (void) sd_notify(false, "READY=1");
        log_event(EVENT_STARTED, "lowlatd %s: %s %zu settings (isolated CPUs: %s)", LOWLATD_VERSION,
                  manager_observing(m) ? "observing" : "enforcing", m->table.n, isempty(isolated) ? "none" : isolated);
}

int manager_run(Manager *m) {
        return sd_event_loop(m->event);
}

static int manager_build_posture(Manager *m, Posture **ret, char **ret_error) {
        _cleanup_error_list_ ErrorList errors = ERROR_LIST_EMPTY;
        int r = posture_load(m->config_path, m->host, ret, &errors);

        if (r < 0) {
                /* One "FILE:LINE: reason" a line: as --check-config prints them. */
                *ret_error = errors.n > 0 ? error_list_join(&errors, "\n") : strdup(strerror(-r));
                return r;
        }
        return 0;
}

/* The end of a reload. It also pings the watchdog: a reload re-arms the scan timer, which
 * carries the pings, so reloads coming faster than the tick would otherwise starve
 * WatchdogSec= and get a healthy daemon killed. A loop that finished a reload is alive. */
static void manager_notify_ready(Manager *m) {
        (void) sd_notify(false, m->watchdog_usec > 0 ? "READY=1\nWATCHDOG=1" : "READY=1");
}

/* Keeps the old posture; takes ownership of error. Returns r. */
static int manager_reload_failed(Manager *m, int r, char *error) {
        log_event(EVENT_RELOAD_FAILED, "Reload failed, keeping the previous posture: %s", error ?: strerror(-r));
        free(m->last_reload_error);
        m->last_reload_error = error ?: strdup(strerror(-r));
        manager_notify_ready(m);
        manager_update_status(m);
        return r;
}

int manager_reload(Manager *m) {
        return manager_reload_because(m, NULL, NULL, false);
}

int manager_reload_if_unchanged(Manager *m, uint64_t digest) {
        return manager_reload_because(m, NULL, &digest, false);
}

/* The files read are not those a diff was made of: nothing is applied, and the posture
 * in force is not a failed reload's (LastReloadError stays). */
static int manager_reload_refused(Manager *m, Posture *posture, uint64_t expected) {
        free(m->last_refused_reload);
        m->last_refused_reload = strdup_printf(
                "the configuration files changed since the diff (digest %016" PRIx64 ", now %016" PRIx64
                "): nothing was applied; run lowlatctl diff again and review what it shows",
                expected, posture->config->digest);
        log_notice("Reload refused: %s", m->last_refused_reload ?: "the configuration files changed since the diff");
        posture_free(posture);
        manager_notify_ready(m);
        return -ESTALE;
}

/* why: NULL for a reload asked for (SIGHUP, Reload()), else what made lowlatd rebuild.
 * expected_digest: refuse unless the files read have this digest (ReloadIfUnchanged()). */
static int manager_reload_because(Manager *m, const char *why, const uint64_t *expected_digest, bool automatic) {
        _cleanup_free_ char *error = NULL;
        Posture *posture = NULL;
        SettingTable table;
        int r;

        (void) sd_notifyf(false, "RELOADING=1\nMONOTONIC_USEC=%" PRIu64, now_usec(CLOCK_MONOTONIC));
        m->last_reload_usec = now_usec(CLOCK_REALTIME);

        r = manager_build_posture(m, &posture, &error);
        if (r < 0 && automatic) {
                log_notice("Keeping the posture in force (%s): it cannot be built for these CPUs: %s",
                           why ?: "online CPUs changed", error ?: strerror(-r));
                manager_notify_ready(m);
                return r;
        }
        if (r < 0)
                return manager_reload_failed(m, r, TAKE_PTR(error));
        if (expected_digest && posture->config->digest != *expected_digest)
                return manager_reload_refused(m, posture, *expected_digest);
        for (size_t i = 0; i < posture->config->warnings.n; i++)
                log_warning("%s", posture->config->warnings.items[i]);

        /* Build the new table beside the old one, move fds, watches and history across for
         * what is unchanged, then drop the old table, which releases what is no longer
         * configured (closing the /dev/cpu_dma_latency request releases the constraint). */
        table_init(&table, NULL);
        r = table_plan(&table, m->host, posture);
        if (r >= 0)
                r = source_registry_plan(&m->sources, &table, posture);
        if (r >= 0)
                r = table_rescan(&table, m->host, posture);
        if (r < 0) {
                table_done(&table);
                posture_free(posture);
                return manager_reload_failed(m, r, strdup_printf("cannot plan the new posture: %s", strerror(-r)));
        }
        m->n_dirty = 0;
        for (size_t i = 0; i < m->table.n; i++)
                m->table.settings[i]->dirty = false;
        /* What the new config no longer asks for goes back to how lowlatd found it. */
        for (size_t i = 0; i < m->table.n; i++) {
                Setting *o = m->table.settings[i];
                if (!table_find(&table, o->kind, o->object) && manager_restore_setting(m, o) > 0)
                        log_info("Restored %s %s, no longer configured", setting_kind_to_string(o->kind), o->object);
        }
        if (m->originals)
                (void) originals_commit(m->originals);
        table_inherit(&table, &m->table); /* old table freed; its hooks unwatch the leftovers */
        table.hooks = (SettingTableHooks) { on_setting_added, on_setting_removed, m };
        table_move(&m->table, &table);

        posture_free(m->posture);
        m->posture = posture;
        manager_check_boot(m);
        if (!automatic)
                m->restored = false; /* an operator's good reload enforces again after a restore */
        manager_init_reconciler(m);
        if (!m->originals && !manager_observing(m))
                manager_open_originals(m);
        m->last_reload_error = mfree(m->last_reload_error);
        m->posture_generation++;
        /* Before the pass: the watches it inherited indexed, patterns that came or went,
         * the noise counters following the new CPUs. */
        source_registry_posture_changed(&m->sources);

        source_registry_pass_begin(&m->sources, RECONCILE_FORCE | RECONCILE_APPLYING);
        table_reconcile_all(&m->table, &m->rc, now_usec(CLOCK_MONOTONIC), RECONCILE_FORCE | RECONCILE_APPLYING);
        source_registry_pass_end(&m->sources, RECONCILE_FORCE | RECONCILE_APPLYING);
        manager_log_applied(m, "Reload applied");

        if (m->scan_timer)
                manager_arm_scan(m);
        manager_pin_self(m);
        log_event(EVENT_RELOADED, "Reloaded %s%s%s%s: %zu settings", m->config_path, why ? " (" : "", why ?: "",
                  why ? ")" : "", m->table.n);
        manager_notify_ready(m);
        manager_update_status(m);
        return 0;
}

void manager_reapply(Manager *m) {
        manager_full_pass(m, RECONCILE_FORCE);
        manager_update_status(m);
}
