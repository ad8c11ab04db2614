/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* IRQs and sysctls (sections 6, 4 and 9): irqbalance against the isolated CPUs, IRQs the
 * kernel will not move off them, real-time throttling, and [sysctl] keys that do nothing. */
#include <limits.h>
#include <string.h>

#include "audit/audit-internal.h"
#include "setting/irq.h"
#include "setting/irqbalance.h"
#include "basic/util.h"

/* --- 6. interrupts --- */

/* The CPUs irqbalance is told to leave alone, from an environment or an EnvironmentFile;
 * 1 when a non-empty ban is set. */
static int irqbalance_banned(const char *text, CPUSet *ret) {
        int found = 0;

        for (const char *line = text; line && *line;) {
                const char *end = strchr(line, '\n');
                size_t len = end ? (size_t) (end - line) : strlen(line);
                _cleanup_free_ char *copy = strndup(line, len);
                char *s, *v;
                bool mask;

                if (!copy)
                        return -ENOMEM;
                s = strstrip(copy);
                if (strncmp(s, "export ", 7) == 0)
                        s = strstrip(s + 7);
                mask = strncmp(s, "IRQBALANCE_BANNED_CPUS=", 23) == 0;
                if (mask || strncmp(s, "IRQBALANCE_BANNED_CPULIST=", 26) == 0) {
                        _cleanup_cpuset_ CPUSet cpus = CPUSET_EMPTY;
                        size_t n;
                        v = strchr(s, '=') + 1;
                        n = strlen(v);
                        if (n >= 2 && (v[0] == '"' || v[0] == '\'') && v[n - 1] == v[0]) {
                                v[n - 1] = '\0';
                                v++;
                        }
                        if ((mask ? cpuset_parse_mask(v, &cpus) : cpuset_parse_list(v, &cpus)) >= 0 &&
                            cpuset_or(ret, &cpus) < 0)
                                return -ENOMEM;
                        /* irqbalance ignores an empty value, as if it were not set. */
                        if (*v != '\0')
                                found = 1;
                }
                line = end ? end + 1 : NULL;
        }
        return found;
}

void audit_check_irqbalance(Audit *a) {
        const Posture *p = a->posture;
        _cleanup_cpuset_ CPUSet banned = CPUSET_EMPTY, from_file = CPUSET_EMPTY;
        _cleanup_free_ char *env = NULL, *file = NULL, *isolated = NULL, *isolated_words = NULL, *subject = NULL,
                            *told = NULL;
        const Setting *ban;
        _cleanup_cpuset_ CPUSet kernel = CPUSET_EMPTY, nohz = CPUSET_EMPTY;
        bool pins = a->config->n_pins > 0, kernel_covers;
        const char *file_name = "/etc/default/irqbalance (/etc/sysconfig/irqbalance on Fedora and RHEL)";
        size_t environ_len = 0;
        bool env_read, file_covers = false, explicit_ban = false, kernel_isolated;
        int r;

        if (a->irqbalance_pid == 0 || cpuset_is_empty(&p->isolated))
                return;
        env_read = audit_read_environ(a, a->irqbalance_pid, &env, &environ_len) >= 0;
        for (size_t off = 0; env_read && off < environ_len; off += strlen(env + off) + 1) {
                if (audit_check_errno(a, irqbalance_banned(env + off, &banned)) > 0)
                        explicit_ban = true;
        }
        if (audit_read_file(a, &file, "etc/default/irqbalance") >= 0)
                file_name = "/etc/default/irqbalance";
        else if (audit_read_file(a, &file, "etc/sysconfig/irqbalance") >= 0)
                file_name = "/etc/sysconfig/irqbalance";
        if (file) {
                r = audit_check_errno(a, irqbalance_banned(file, &from_file));
                file_covers = r > 0 && cpuset_is_subset(&p->isolated, &from_file);
                /* Without the environment (not root), the file is the best evidence. */
                if (!env_read && cpuset_or(&banned, &from_file) < 0)
                        a->error = -ENOMEM;
                if (!env_read && r > 0)
                        explicit_ban = true;
        }
        if (cpuset_is_subset(&p->isolated, &banned))
                return;
        /* irqbalance 1.8 and later leave the kernel's isolcpus= and nohz_full= CPUs alone
         * when nothing is banned explicitly; lowlatd's pins it moves all the same. */
        if (audit_read_cpus(a, &kernel, "sys/devices/system/cpu/isolated") < 0)
                cpuset_clear(&kernel);
        if (audit_read_cpus(a, &nohz, "sys/devices/system/cpu/nohz_full") >= 0 && cpuset_or(&kernel, &nohz) < 0)
                a->error = -ENOMEM;
        /* ...but only when no ban is set at all: irqbalance (cputree.c) reads isolcpus= and
         * nohz_full= only in the absence of IRQBALANCE_BANNED_CPUS/CPULIST, so a ban that
         * misses the isolated CPUs puts IRQs on them even on an isolcpus= kernel. */
        kernel_isolated = cpuset_is_subset(&p->isolated, &kernel);
        kernel_covers = !explicit_ban && kernel_isolated;
        for (size_t i = 0; i < a->config->n_nics; i++)
                pins = pins || a->config->nics[i].irq_cpus.kind == CPUS_LIST;
        isolated = audit_cpus_list(a, &p->isolated);
        isolated_words = audit_cpus_phrase(a, &p->isolated);
        subject = audit_check_alloc(a, strdup_printf("pid %u (irqbalance)", a->irqbalance_pid));
        if (!isolated || !isolated_words || !subject)
                return;
        /* Which ban is in force: irqbalance's own (above), or the one lowlatd told it. */
        ban = a->table ? setting_irqbalance_ban_find(a->table) : NULL;
        if (ban && setting_state_is_good(ban->state)) {
                finding_add(a, pins ? SEVERITY_WARNING : SEVERITY_INFO, "irq.irqbalance", subject,
                            "irqbalance leaves isolated %s alone because lowlatd told it so over its socket "
                            "([irq] irqbalance = ban; it bans %s). It forgets that when it restarts, until lowlatd "
                            "tells it again. %sTo make the ban irqbalance's own, add IRQBALANCE_BANNED_CPULIST=%s "
                            "to %s and systemctl restart irqbalance.",
                            isolated_words, ban->observed ?: "?",
                            pins ? "It still moves the IRQs lowlatd pins ([irq] pin, [nic] irq_cpus), so the two "
                                   "fight over those. "
                                 : "",
                            isolated, file_name);
                return;
        }
        if (ban)
                told = audit_check_alloc(a, strdup_printf(" [irq] irqbalance = ban could not tell it to: %s.",
                                                          ban->reason ?: setting_state_to_string(ban->state)));
        finding_add(a, kernel_covers && !pins ? SEVERITY_INFO : SEVERITY_WARNING, "irq.irqbalance", subject,
                    "irqbalance is running without isolated %s in IRQBALANCE_BANNED_CPULIST: %s. %s"
                    "Add IRQBALANCE_BANNED_CPULIST=%s to %s and systemctl restart irqbalance, or stop it "
                    "(systemctl disable --now irqbalance) and let lowlatd place the IRQs.%s",
                    isolated_words,
                    !kernel_isolated ? "the kernel did not isolate them, so irqbalance spreads IRQs onto them and "
                                       "rewrites the affinities lowlatd sets; the two fight"
                    : !kernel_covers ? "its ban list replaces its own reading of isolcpus= and nohz_full=, so "
                                       "irqbalance spreads IRQs onto them although the kernel isolated them, and "
                                       "rewrites the affinities lowlatd sets; the two fight"
                    : pins ? "it moves the IRQs lowlatd pins ([irq] pin, [nic] irq_cpus), so the two fight"
                           : "irqbalance (since 1.1) skips the kernel's isolcpus= and nohz_full= CPUs on its own, "
                             "but it rebalances what lowlatd places",
                    file_covers && env_read ? "The file already bans them, but the running irqbalance started "
                                              "before that: restart it. "
                                            : "",
                    isolated, file_name,
                    ban ? told ?: ""
                        : " Or set [irq] irqbalance = ban in lowlatd.conf: lowlatd then tells it over its socket.");
}

void audit_check_unmovable_irqs(Audit *a) {
        const Posture *p = a->posture;
        const SettingTable *t = a->table;

        if (!t || cpuset_is_empty(&p->isolated))
                return;
        for (size_t i = 0; i < t->n; i++) {
                const Setting *s = t->settings[i];
                _cleanup_cpuset_ CPUSet cpus = CPUSET_EMPTY;
                _cleanup_free_ char *list = NULL, *subject = NULL;

                if (!s || !setting_is_irq(s, NULL) || s->state != SETTING_UNMOVABLE)
                        continue;
                if (setting_irq_served_cpus(s, a->host, &cpus) < 0)
                        continue;
                cpuset_and(&cpus, &p->isolated);
                if (cpuset_is_empty(&cpus))
                        continue;
                list = audit_cpus_phrase(a, &cpus);
                subject = audit_check_alloc(a, s->label ? strdup_printf("irq %s (%s)", s->object, s->label)
                                                        : strdup_printf("irq %s", s->object));
                if (!list || !subject)
                        return;
                finding_add(a, SEVERITY_WARNING, "irq.unmovable-isolated", subject,
                            "IRQ %s%s%s%s is served on isolated %s and the kernel refuses to move it%s%s: "
                            "every interrupt preempts the application there. Managed IRQs (NVMe, multi-queue "
                            "NIC drivers) follow their queue's CPU: boot with isolcpus=managed_irq,domain,... "
                            "so the kernel keeps them off isolated CPUs, or give the device fewer queues "
                            "(ethtool -L DEV combined N) so that none maps to an isolated CPU.",
                            s->object, s->label ? " (" : "", s->label ?: "", s->label ? ")" : "", list,
                            s->reason ? ": " : "", s->reason ?: "");
        }
}

/* --- 4. scheduling --- */

/* "proc/sys/net/ipv4/tcp_timestamps" for net.ipv4.tcp_timestamps. */
static char *sysctl_path(Audit *a, const char *key) {
        char *path = audit_check_alloc(a, strdup_printf("proc/sys/%s", key));

        if (path)
                for (char *p = path + strlen("proc/sys/"); *p; p++)
                        if (*p == '.')
                                *p = '/';
        return path;
}

/* The last [sysctl] entry for key: a later one overrides. */
static const SysctlEntry *sysctl_configured(const Audit *a, const char *key) {
        const Config *c = a->config;
        for (size_t i = c->n_sysctls; i > 0; i--)
                if (streq(c->sysctls[i - 1].key, key))
                        return &c->sysctls[i - 1];
        return NULL;
}

/* What a sysctl will be: the [sysctl] value when configured, else the host's. */
static char *sysctl_effective(Audit *a, const char *key, bool *ret_configured) {
        const SysctlEntry *e = sysctl_configured(a, key);
        _cleanup_free_ char *path = NULL, *text = NULL;

        if (ret_configured)
                *ret_configured = e != NULL;
        if (e)
                return audit_check_alloc(a, normalize_whitespace(e->value));
        path = sysctl_path(a, key);
        if (!path || audit_read_file(a, &text, "%s", path) < 0)
                return NULL;
        return audit_check_alloc(a, normalize_whitespace(text));
}

void audit_check_rt_throttling(Audit *a) {
        const SysctlEntry *e = sysctl_configured(a, "kernel.sched_rt_runtime_us");
        bool configured;
        _cleanup_free_ char *value = sysctl_effective(a, "kernel.sched_rt_runtime_us", &configured);
        _cleanup_free_ char *where = NULL;

        if (!value || !streq(value, "-1"))
                return;
        where = audit_check_alloc(a, configured ? strdup_printf(" in [sysctl] (%s)", e && e->source.file ? e->source.file : "?")
                                                : strdup(""));
        if (!where)
                return;
        /* stalld is the other half of running without throttling, as real-time kernels do
         * (tuned's realtime profile sets -1 and starts it): it finds threads starved on a
         * CPU and gives them a short SCHED_DEADLINE slice. */
        if (a->stalld_pid > 0)
                finding_add(a, SEVERITY_INFO, "sched.rt-throttling", "kernel.sched_rt_runtime_us",
                            "kernel.sched_rt_runtime_us is -1%s: real-time throttling is off, and stalld (pid %u) "
                            "runs, which gives threads starved by a spinning SCHED_FIFO thread (kworkers and "
                            "ksoftirqd included) a short slice so that the machine does not hang. Keep it so: "
                            "systemctl enable stalld, so that it also runs after a reboot.",
                            where, a->stalld_pid);
        else
                finding_add(a, SEVERITY_WARNING, "sched.rt-throttling", "kernel.sched_rt_runtime_us",
                            "kernel.sched_rt_runtime_us is -1%s: real-time throttling is off, so a SCHED_FIFO thread "
                            "that spins or loops can starve every other task on its CPU, kworkers and ksoftirqd "
                            "included, and hang the machine, and no stalld runs to rescue them. Keep the default: "
                            "sysctl -w kernel.sched_rt_runtime_us=950000, and remove the -1 from %s; or, for a "
                            "real-time kernel that needs -1, install and start stalld (systemctl enable --now "
                            "stalld).",
                            where, configured ? "lowlatd.conf" : "/etc/sysctl.conf and /etc/sysctl.d/");
}

/* --- 4. scheduling: timer, statistics and watchdog noise --- */

/* What a boolean-ish sysctl will be, as a number; -1 when unknown. */
static long sysctl_effective_number(Audit *a, const char *key, bool *ret_configured) {
        _cleanup_free_ char *value = sysctl_effective(a, key, ret_configured);
        uint64_t v;

        if (!value || parse_uint64(value, &v) < 0 || v > LONG_MAX)
                return -1;
        return (long) v;
}

/* "add KEY = VALUE to [sysctl] in lowlatd.conf (lowlatd keeps it from then on), or now:
 * sysctl -w KEY=VALUE" */
#define SYSCTL_FIX "add %s = %s to [sysctl] in lowlatd.conf (lowlatd then keeps it), or now: sysctl -w %s=%s"

void audit_check_noise_sysctls(Audit *a) {
        const Posture *p = a->posture;
        _cleanup_free_ char *housekeeping = NULL;
        long timer_migration, stat_interval, nmi_watchdog;

        if (cpuset_is_empty(&p->isolated))
                return;
        housekeeping = audit_cpus_list(a, &p->housekeeping);
        if (!housekeeping)
                return;

        timer_migration = sysctl_effective_number(a, "kernel.timer_migration", NULL);
        if (timer_migration > 0)
                finding_add(a, SEVERITY_WARNING, "sysctl.timer-migration", "kernel.timer_migration",
                            "kernel.timer_migration is 1: the timers of idle CPUs may be handed to a busy CPU to "
                            "expire, so that the idle ones sleep on, and depending on the kernel a CPU busy with "
                            "the application is a candidate. Keep timers on the CPUs that armed them: " SYSCTL_FIX ".",
                            "kernel.timer_migration", "0", "kernel.timer_migration", "0");

        stat_interval = sysctl_effective_number(a, "vm.stat_interval", NULL);
        if (stat_interval >= 0 && stat_interval < 10)
                finding_add(a, SEVERITY_WARNING, "sysctl.stat-interval", "vm.stat_interval",
                            "vm.stat_interval is %ld: every %ld s a kworker folds the memory statistics of each CPU "
                            "that allocated or freed memory, on that CPU, isolated ones included. Fold them less "
                            "often: " SYSCTL_FIX ".",
                            stat_interval, stat_interval ?: 1, "vm.stat_interval", "10", "vm.stat_interval", "10");

        /* The lockup detectors run an hrtimer (and with nmi_watchdog a perf NMI) on every CPU
         * of watchdog_cpumask; nohz_full= takes the isolated CPUs out of it by default. */
        nmi_watchdog = sysctl_effective_number(a, "kernel.nmi_watchdog", NULL);
        if (sysctl_effective_number(a, "kernel.watchdog", NULL) != 0 &&
            ((!a->boot[BOOT_NOSOFTLOCKUP] && sysctl_effective_number(a, "kernel.soft_watchdog", NULL) != 0) ||
             nmi_watchdog > 0)) {
                _cleanup_free_ char *mask = sysctl_effective(a, "kernel.watchdog_cpumask", NULL);
                _cleanup_cpuset_ CPUSet cpus = CPUSET_EMPTY;

                if (mask && cpuset_parse_list(mask, &cpus) >= 0 && cpuset_intersects(&cpus, &p->isolated)) {
                        _cleanup_free_ char *watched = NULL;
                        cpuset_and(&cpus, &p->isolated);
                        watched = audit_cpus_phrase(a, &cpus);
                        if (watched)
                                finding_add(a, SEVERITY_WARNING, "sysctl.watchdog-cpumask", "kernel.watchdog_cpumask",
                                            "kernel.watchdog_cpumask is %s, which includes isolated %s: the lockup "
                                            "detector's timer interrupts %s every 4 seconds%s. Keep it on the "
                                            "housekeeping CPUs: " SYSCTL_FIX ".",
                                            mask, watched, cpuset_count(&cpus) == 1 ? "it" : "them",
                                            nmi_watchdog > 0 ? ", and the NMI watchdog's counter overflows into an "
                                                               "NMI there every few seconds"
                                                             : "",
                                            "kernel.watchdog_cpumask", housekeeping, "kernel.watchdog_cpumask",
                                            housekeeping);
                }
        }
        if (nmi_watchdog > 0)
                finding_add(a, SEVERITY_INFO, "sysctl.nmi-watchdog", "kernel.nmi_watchdog",
                            "kernel.nmi_watchdog is 1: the hard-lockup detector keeps a performance counter busy on "
                            "every CPU of kernel.watchdog_cpumask and takes an NMI from it every few seconds, and the "
                            "counter is then missing for perf. Turn it off: " SYSCTL_FIX
                            " (or nmi_watchdog=0 on the kernel command line).",
                            "kernel.nmi_watchdog", "0", "kernel.nmi_watchdog", "0");
}

/* --- 9. sysctl advice --- */

static const struct {
        const char *key;
        const char *why;
} gone_sysctls[] = {
        { "net.ipv4.tcp_tw_recycle", "was removed in Linux 4.12 because it broke connections from clients behind NAT. "
                                     "Remove it; net.ipv4.tcp_tw_reuse = 1 is the safe way to reuse TIME_WAIT sockets "
                                     "for outgoing connections" },
        { "kernel.sched_min_granularity_ns", "moved to /sys/kernel/debug/sched/min_granularity_ns in Linux 5.13 and "
                                             "went away with the EEVDF scheduler in 6.6. Remove it" },
        { "kernel.sched_wakeup_granularity_ns", "moved to /sys/kernel/debug/sched/wakeup_granularity_ns in Linux 5.13 "
                                                "and went away with the EEVDF scheduler in 6.6. Remove it" },
        { "kernel.sched_latency_ns", "moved to /sys/kernel/debug/sched/latency_ns in Linux 5.13 and went away with "
                                     "the EEVDF scheduler in 6.6. Remove it" },
        { "kernel.sched_migration_cost_ns", "moved to /sys/kernel/debug/sched/migration_cost_ns in Linux 5.13. Remove "
                                            "it, and set the debugfs file at boot if it matters" },
        { "kernel.sched_nr_migrate", "moved to /sys/kernel/debug/sched/nr_migrate in Linux 5.13. Remove it" },
        { "kernel.sched_tunable_scaling", "moved to /sys/kernel/debug/sched/tunable_scaling in Linux 5.13. Remove it" },
};

static bool sysctl_exists(Audit *a, const char *key) {
        _cleanup_free_ char *path = sysctl_path(a, key);
        return !path || audit_path_exists(a, path);
}

void audit_check_sysctls(Audit *a) {
        const Config *c = a->config;
        const SysctlEntry *cc;

        for (size_t i = 0; i < c->n_sysctls; i++) {
                const SysctlEntry *e = &c->sysctls[i];

                if (streq(e->key, "net.ipv4.tcp_low_latency") && !audit_kernel_older_than(a, 4, 14))
                        finding_add(a, SEVERITY_INFO, "sysctl.no-effect", e->key,
                                    "[sysctl] sets net.ipv4.tcp_low_latency (%s:%u), which does nothing since "
                                    "Linux 4.14: the prequeue it turned off is gone. Remove it; for lower receive "
                                    "latency use net.core.busy_read and net.core.busy_poll instead.",
                                    e->source.file ?: "?", e->source.line);
                for (size_t g = 0; g < ELEMENTSOF(gone_sysctls); g++)
                        if (streq(e->key, gone_sysctls[g].key) && !sysctl_exists(a, e->key))
                                finding_add(a, SEVERITY_WARNING, "sysctl.gone", e->key,
                                            "[sysctl] sets %s (%s:%u), which this kernel does not have: it %s "
                                            "(lowlatd reports it as unsupported until then).",
                                            e->key, e->source.file ?: "?", e->source.line, gone_sysctls[g].why);
        }

        /* tcp_tw_reuse relies on TCP timestamps to tell old segments from new ones. */
        {
                bool ts_configured, reuse_configured;
                _cleanup_free_ char *ts = sysctl_effective(a, "net.ipv4.tcp_timestamps", &ts_configured);
                _cleanup_free_ char *reuse = sysctl_effective(a, "net.ipv4.tcp_tw_reuse", &reuse_configured);
                if (ts && reuse && streq(ts, "0") && !streq(reuse, "0"))
                        finding_add(a, SEVERITY_WARNING, "sysctl.conflict", "net.ipv4.tcp_timestamps",
                                    "net.ipv4.tcp_timestamps = 0%s with net.ipv4.tcp_tw_reuse = %s%s: reusing a "
                                    "TIME_WAIT socket needs TCP timestamps to tell old segments from new ones, so "
                                    "tcp_tw_reuse silently does nothing, and connection-heavy clients run out of "
                                    "ports. Keep net.ipv4.tcp_timestamps = 1 (the default).",
                                    ts_configured ? " (in [sysctl])" : " (on the host)", reuse,
                                    reuse_configured ? " (in [sysctl])" : " (on the host)");
        }

        cc = sysctl_configured(a, "net.ipv4.tcp_congestion_control");
        if (cc) {
                _cleanup_free_ char *available = NULL;
                if (audit_read_file(a, &available, "proc/sys/net/ipv4/tcp_available_congestion_control") >= 0 &&
                    !word_list_contains(available, cc->value)) {
                        char *s = strstrip(available);
                        finding_add(a, SEVERITY_WARNING, "sysctl.cc-unavailable", cc->key,
                                    "[sysctl] sets net.ipv4.tcp_congestion_control = %s (%s:%u) but this kernel "
                                    "offers only \"%s\" (tcp_available_congestion_control): the module is not "
                                    "loaded, so the setting fails or depends on loading it on demand, and the "
                                    "host falls back to the default after a reboot. Load it now with modprobe "
                                    "tcp_%s and at every boot with echo tcp_%s > /etc/modules-load.d/%s.conf.",
                                    cc->value, cc->source.file ?: "?", cc->source.line, s, cc->value, cc->value,
                                    cc->value);
                }
        }
}
