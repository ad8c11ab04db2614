/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Sections 1 and 2 of the audit: the boot parameters that isolate CPUs (isolcpus=,
 * nohz_full=, rcu_nocbs=, irqaffinity=), and the kernel's preemption model and config. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "audit/audit-internal.h"
#include "basic/util.h"

/* Whether the GRUB line should carry preempt=full: a dynamic kernel not booted that way. */
static bool want_preempt_full(const Audit *a) {
        return a->preempt_dynamic && !streq_ptr(a->boot[BOOT_PREEMPT], "full");
}

/* The flags of the isolcpus= lowlatd asks for. managed_irq always: only a boot keeps
 * managed IRQs off the isolated CPUs. domain only without [cpus] partition, whose isolated
 * cpuset partition takes the CPUs out of load balancing at run time (isolation.mechanisms
 * asks the same). */
static const char *isolcpus_flags(const Audit *a) {
        return a->config->partition ? "managed_irq," : "managed_irq,domain,";
}

/* Appends before, token and after to *buf, the token as it goes inside double quotes in
 * /etc/default/grub, a shell file: ", \, $ and ` get a backslash. */
static int append_quoted(char **buf, const char *before, const char *token, const char *after) {
        size_t len = strlen(*buf);
        char *k = realloc(*buf, len + strlen(before) + 2 * strlen(token) + strlen(after) + 1);

        if (!k)
                return -ENOMEM;
        *buf = k;
        k = stpcpy(k + len, before);
        for (const char *c = token; *c; c++) {
                if (strchr("\"\\$`", *c))
                        *k++ = '\\';
                *k++ = *c;
        }
        strcpy(k, after);
        return 0;
}

/* Whether tsc=reliable can be advised: the TSC is the clocksource, and the CPU's flags say
 * it neither changes rate nor stops in idle (constant_tsc, nonstop_tsc). Elsewhere the
 * clocksource watchdog is what catches a TSC going wrong. Read once per audit. */
static bool tsc_trusted(Audit *a) {
        _cleanup_free_ char *clocksource = NULL, *cpuinfo = NULL, *flags = NULL;
        const char *line;

        if (a->tsc_looked)
                return a->tsc_trusted;
        a->tsc_looked = true;
        if (audit_read_value(a, &clocksource, "sys/devices/system/clocksource/clocksource0/current_clocksource") < 0 ||
            !streq(clocksource, "tsc") || audit_read_file(a, &cpuinfo, "proc/cpuinfo") < 0)
                return false;
        /* "flags\t\t: fpu vme ... constant_tsc ... nonstop_tsc ..."; the first CPU's will do. */
        line = cpuinfo;
        while (line && strncmp(line, "flags", 5) != 0) {
                line = strchr(line, '\n');
                if (line)
                        line++;
        }
        if (!line || !strchr(line, ':'))
                return false;
        flags = audit_check_alloc(a, strndup(line, strcspn(line, "\n")));
        a->tsc_trusted = flags && word_in_list(strchr(flags, ':') + 1, "constant_tsc") &&
                         word_in_list(strchr(flags, ':') + 1, "nonstop_tsc");
        return a->tsc_trusted;
}

/* Whether the command line already keeps the clocksource watchdog off the TSC. */
static bool tsc_watchdog_off(const Audit *a) {
        return streq_ptr(a->boot[BOOT_TSC], "reliable") || streq_ptr(a->boot[BOOT_TSC], "nowatchdog");
}

/* Whether a command line word is the parameter name, bare or with a value. */
static bool word_is_param(const char *word, const char *name) {
        size_t len = strlen(name);
        return strncmp(word, name, len) == 0 && (word[len] == '=' || word[len] == '\0');
}

/* Whether skew_tick= asks for skewed ticks (any number but 0, as the kernel reads it). */
static bool skew_tick_on(const Audit *a) {
        unsigned v;
        return a->boot[BOOT_SKEW_TICK] && parse_unsigned(a->boot[BOOT_SKEW_TICK], &v) >= 0 && v != 0;
}

/* The parameters lowlatd's posture decides, in the order the line gives them: the
 * isolation for the posture (none when no CPU is isolated) and what the boot.* timer
 * findings ask for. CPU lists and fixed words only: nothing in them needs quoting. NULL
 * (a->error set) when out of memory. */
static char *lowlatd_params(Audit *a) {
        bool isolate = !cpuset_is_empty(&a->posture->isolated);
        _cleanup_free_ char *isolated = audit_cpus_list(a, &a->posture->isolated);
        _cleanup_free_ char *housekeeping = audit_cpus_list(a, &a->posture->housekeeping);
        _cleanup_free_ char *isolation_params = NULL;
        char *params;

        if (!isolated || !housekeeping)
                return NULL;
        isolation_params = isolate ? strdup_printf("isolcpus=%s%s nohz_full=%s rcu_nocbs=%s irqaffinity=%s ",
                                                   isolcpus_flags(a), isolated, isolated, isolated, housekeeping)
                                   : strdup("");
        if (!audit_check_alloc(a, isolation_params))
                return NULL;
        params = strdup_printf("%s%s%s%s%s", isolation_params, skew_tick_on(a) ? "" : "skew_tick=1 ",
                               a->boot[BOOT_NOSOFTLOCKUP] ? "" : "nosoftlockup ",
                               !tsc_watchdog_off(a) && tsc_trusted(a) ? "tsc=reliable " : "",
                               want_preempt_full(a) ? "preempt=full " : "");
        if (!audit_check_alloc(a, params))
                return NULL;
        /* One space after each word: the last one goes. */
        if (*params)
                params[strlen(params) - 1] = '\0';
        return params;
}

/* The full GRUB_CMDLINE_LINUX_DEFAULT line: the kernel parameters the command line has now,
 * less what the boot loader adds and what lowlatd decides, plus lowlatd_params(), so that
 * one line fixes every finding that refers to it. What follows "--" is for init, not the
 * kernel, and is left out (*ret_init_args says whether there was any). With no CPU
 * isolated, the isolation parameters are left as they are: an empty list would isolate
 * nothing, and dropping them would undo what someone chose. */
static char *grub_line(Audit *a, bool *ret_init_args) {
        static const char *const isolation[] = { "isolcpus", "nohz_full", "rcu_nocbs", "irqaffinity" };
        static const char *const dropped[] = { "BOOT_IMAGE", "root", "initrd" };
        bool isolate = !cpuset_is_empty(&a->posture->isolated);
        _cleanup_free_ char *kept = strdup(""), *params = NULL;
        char *line;

        *ret_init_args = false;
        if (!audit_check_alloc(a, kept))
                return NULL;
        for (size_t i = 0; i < a->n_tokens; i++) {
                const char *t = a->tokens[i];
                bool drop = streq(t, "ro") || streq(t, "rw");

                if (streq(t, "--")) {
                        *ret_init_args = i + 1 < a->n_tokens;
                        break;
                }
                for (size_t d = 0; d < ELEMENTSOF(dropped) && !drop; d++)
                        drop = word_is_param(t, dropped[d]);
                for (size_t d = 0; d < ELEMENTSOF(isolation) && isolate && !drop; d++)
                        drop = word_is_param(t, isolation[d]);
                if (want_preempt_full(a) && strncmp(t, "preempt=", 8) == 0)
                        drop = true;
                if (!skew_tick_on(a) && strncmp(t, "skew_tick=", 10) == 0)
                        drop = true;
                if (drop)
                        continue;
                if (append_quoted(&kept, "", t, " ") < 0)
                        return audit_check_alloc(a, NULL);
        }
        params = lowlatd_params(a);
        if (!params)
                return NULL;
        line = strdup_printf("%s%s", kept, params);
        if (!audit_check_alloc(a, line))
                return NULL;
        /* No parameter of lowlatd's: the space after the last kept word goes. */
        if (!*params && *line)
                line[strlen(line) - 1] = '\0';
        return line;
}

static const char grub_howto[] = "in /etc/default/grub (it keeps the kernel parameters of the running command line; "
                                 "leave out what GRUB_CMDLINE_LINUX already adds), then run update-grub "
                                 "(grub2-mkconfig -o /boot/grub2/grub.cfg on Fedora and RHEL) and reboot";

/* A finding fixed on the kernel command line. Its message ends in the parameters it needs;
 * boot.cmdline, after the boot and kernel checks, gives the whole line once for all of them
 * (audit_check_boot_cmdline()), with the worst severity among them. */
_printf_(6, 7) static void cmdline_finding_add(Audit *a, Severity severity, const char *id, const char *subject,
                                               const char *params, const char *fmt, ...) {
        _cleanup_free_ char *message = NULL;
        va_list ap;
        bool known = false;

        va_start(ap, fmt);
        message = audit_check_alloc(a, strdup_vprintf(fmt, ap));
        va_end(ap);
        if (!message)
                return;
        finding_add(a, severity, id, subject, "%s Fix: %s on the kernel command line (the whole line is under "
                                              "boot.cmdline).",
                    message, params);
        for (size_t i = 0; i < a->n_cmdline_referrers; i++)
                known = known || streq(a->cmdline_referrers[i], id);
        if (severity >= SEVERITY_WARNING) {
                char *more = strdup_printf("%s%s%s", a->cmdline_params ?: "", a->cmdline_params ? " " : "", params);
                if (!audit_check_alloc(a, more))
                        return;
                free(a->cmdline_params);
                a->cmdline_params = more;
        }
        if (!known && a->n_cmdline_referrers < ELEMENTSOF(a->cmdline_referrers))
                a->cmdline_referrers[a->n_cmdline_referrers++] = id;
        a->cmdline_severity = MAX(a->cmdline_severity, severity);
}

int audit_parse_isolcpus(const char *value, unsigned *ret_flags, CPUSet *ret_cpus) {
        unsigned flags = 0;
        const char *p = value;

        while (isalpha((unsigned char) *p)) {
                size_t n = strcspn(p, ",");
                if (p[n] != ',')
                        return -EINVAL;
                if (n == 6 && strncmp(p, "domain", 6) == 0)
                        flags |= ISOLCPUS_DOMAIN;
                else if (n == 11 && strncmp(p, "managed_irq", 11) == 0)
                        flags |= ISOLCPUS_MANAGED_IRQ;
                else if (n == 4 && strncmp(p, "nohz", 4) == 0)
                        flags |= ISOLCPUS_NOHZ;
                p += n + 1;
        }
        if (flags == 0)
                flags = ISOLCPUS_DOMAIN;
        *ret_flags = flags;
        return cpuset_parse_list(p, ret_cpus);
}

/* A parameter's CPU list, when present and parsable. */
static int boot_cpus(Audit *a, BootParam b, CPUSet *ret) {
        const char *v = a->boot[b];

        if (!v)
                return -ENOENT;
        if (b == BOOT_ISOLCPUS) {
                unsigned flags;
                return audit_parse_isolcpus(v, &flags, ret);
        }
        return cpuset_parse_list(v, ret);
}

/* --- 1. boot isolation --- */

/* What the boot checks compare the command line with: the posture's CPUs, and the
 * parameters that would isolate them. */
typedef struct BootWant {
        char *isolated;       /* the isolated CPUs, as a list */
        char *isolated_words; /* the same in words: "CPUs 2-3" */
        char *housekeeping;   /* the housekeeping CPUs, as a list */
        char *isolcpus;       /* "isolcpus=managed_irq,domain,LIST" */
        char *nohz_full;      /* "nohz_full=LIST" */
} BootWant;

static void boot_want_done(BootWant *w) {
        free(w->isolated);
        free(w->isolated_words);
        free(w->housekeeping);
        free(w->isolcpus);
        free(w->nohz_full);
}

/* No isolcpus= at all. Without a partition, critical when nohz_full= is missing too (nothing
 * isolates the CPUs); with [cpus] partition the partition takes them out of load balancing
 * at run time, and what only a boot adds through isolcpus= is managed IRQs kept off them: a
 * warning, naming the partition (sched.partition says whether it holds now). */
static void check_boot_isolcpus_missing(Audit *a, const BootWant *w) {
        bool none = !a->boot[BOOT_NOHZ_FULL];

        if (a->config->partition)
                cmdline_finding_add(a, SEVERITY_WARNING, "boot.isolcpus", "isolcpus", w->isolcpus,
                                    "The kernel command line has no isolcpus=: [cpus] partition = %s takes %s out of "
                                    "load balancing at run time (sched.partition says whether it does now), but "
                                    "managed IRQs (NVMe, multi-queue NICs) may still land there and nobody can move "
                                    "them afterwards: only a boot with isolcpus=managed_irq keeps them off (the tick "
                                    "and RCU callbacks are boot.nohz_full's and boot.rcu_nocbs').",
                                    a->config->partition, w->isolated_words);
        else
                cmdline_finding_add(a, none ? SEVERITY_CRITICAL : SEVERITY_WARNING, "boot.isolcpus", "isolcpus",
                                    w->isolcpus,
                                    "The kernel command line has no isolcpus=: the scheduler still balances tasks "
                                    "onto %s and managed IRQs may land there%s.",
                                    w->isolated_words,
                                    none ? ", and without nohz_full= either, nothing keeps ticks and work off the "
                                           "CPUs lowlatd treats as isolated"
                                         : "");
}

static void check_boot_isolcpus(Audit *a, const BootWant *w) {
        const Posture *p = a->posture;
        _cleanup_cpuset_ CPUSet cpus = CPUSET_EMPTY;
        unsigned flags = 0;
        bool no_managed, no_domain;

        if (!a->boot[BOOT_ISOLCPUS]) {
                check_boot_isolcpus_missing(a, w);
                return;
        }
        if (audit_parse_isolcpus(a->boot[BOOT_ISOLCPUS], &flags, &cpus) < 0) {
                cmdline_finding_add(a, SEVERITY_WARNING, "boot.isolcpus", "isolcpus", w->isolcpus,
                                    "isolcpus=%s on the kernel command line cannot be read as [flags,]CPU-list, so "
                                    "what it isolates cannot be checked.",
                                    a->boot[BOOT_ISOLCPUS]);
                return;
        }
        if (!cpuset_equal(&cpus, &p->isolated)) {
                _cleanup_free_ char *asked = audit_cpus_phrase(a, &cpus);
                cmdline_finding_add(a, SEVERITY_WARNING, "boot.isolcpus", "isolcpus", w->isolcpus,
                                    "isolcpus= names %s but lowlatd treats %s as isolated: CPUs isolated but not "
                                    "in the posture idle or get IRQs, and posture CPUs not isolated still take "
                                    "balanced tasks.",
                                    asked ?: "?", w->isolated_words);
                return;
        }
        no_managed = !(flags & ISOLCPUS_MANAGED_IRQ);
        /* With a partition, load balancing is the partition's: domain is not asked for. */
        no_domain = !(flags & ISOLCPUS_DOMAIN) && !a->config->partition;
        if (no_managed || no_domain)
                cmdline_finding_add(a, SEVERITY_WARNING, "boot.isolcpus", "isolcpus", w->isolcpus,
                                    "isolcpus=%s lacks the %s flag%s: %s.", a->boot[BOOT_ISOLCPUS],
                                    no_managed && no_domain ? "managed_irq and domain"
                                    : no_managed            ? "managed_irq"
                                                            : "domain",
                                    no_managed && no_domain ? "s" : "",
                                    no_managed
                                            ? "without managed_irq the kernel spreads managed IRQs (NVMe, "
                                              "multi-queue NICs) over the isolated CPUs, and nobody can move them "
                                              "afterwards"
                                            : "without domain the scheduler still balances tasks onto the isolated "
                                              "CPUs");
}

/* Returns boot_cpus() of nohz_full=, with the list in *nohz when it parses: rcu_nocbs= and
 * the applied lists are judged against it. */
static int check_boot_nohz_full(Audit *a, const BootWant *w, CPUSet *nohz) {
        const Posture *p = a->posture;
        int r = boot_cpus(a, BOOT_NOHZ_FULL, nohz);

        if (r == -ENOENT || (r >= 0 && !cpuset_equal(nohz, &p->isolated))) {
                _cleanup_free_ char *asked = r >= 0 ? audit_cpus_phrase(a, nohz) : NULL;
                _cleanup_free_ char *what = r >= 0 ? strdup_printf("nohz_full= names %s, not the isolated %s",
                                                                   asked ?: "?", w->isolated_words)
                                                   : strdup("The kernel command line has no nohz_full=");
                cmdline_finding_add(a, SEVERITY_WARNING, "boot.nohz_full", "nohz_full", w->nohz_full,
                                    "%s: the isolated CPUs keep their scheduler tick (every 1-4 ms), which "
                                    "interrupts the application even when it runs alone.",
                                    what ?: "nohz_full= does not match the isolated CPUs");
        } else if (r < 0 && r != -ENOMEM)
                cmdline_finding_add(a, SEVERITY_WARNING, "boot.nohz_full", "nohz_full", w->nohz_full,
                                    "nohz_full=%s on the kernel command line is not a CPU list, so the tick may "
                                    "still run on the isolated CPUs.",
                                    a->boot[BOOT_NOHZ_FULL]);
        return r;
}

/* rcu_nocbs=: nohz_full= CPUs are offloaded too, so either covers a CPU. r and nohz are
 * check_boot_nohz_full()'s. */
static void check_boot_rcu_nocbs(Audit *a, const BootWant *w, int r, const CPUSet *nohz) {
        const Posture *p = a->posture;
        _cleanup_cpuset_ CPUSet covered = CPUSET_EMPTY, missing = CPUSET_EMPTY;

        if (boot_cpus(a, BOOT_RCU_NOCBS, &covered) < 0)
                cpuset_clear(&covered);
        if (r >= 0 && cpuset_or(&covered, nohz) < 0)
                a->error = -ENOMEM;
        if (cpuset_copy(&missing, &p->isolated) < 0)
                a->error = -ENOMEM;
        cpuset_subtract(&missing, &covered);
        if (!cpuset_is_empty(&missing)) {
                _cleanup_free_ char *words = audit_cpus_phrase(a, &missing);
                _cleanup_free_ char *want = audit_check_alloc(a, strdup_printf("rcu_nocbs=%s", w->isolated));
                if (want)
                        cmdline_finding_add(a, SEVERITY_WARNING, "boot.rcu_nocbs", "rcu_nocbs", want,
                                            "Isolated %s %s in neither rcu_nocbs= nor nohz_full=: RCU "
                                            "callbacks run there in softirq context and preempt the "
                                            "application.",
                                            words ?: "?", cpuset_count(&missing) == 1 ? "is" : "are");
        }
}

/* -ENOMEM when it could not even name the parameter: the boot checks stop there. */
static int check_boot_irqaffinity(Audit *a, const BootWant *w) {
        const Posture *p = a->posture;
        _cleanup_cpuset_ CPUSet irq = CPUSET_EMPTY;
        _cleanup_free_ char *want = audit_check_alloc(a, strdup_printf("irqaffinity=%s", w->housekeeping));
        int q = boot_cpus(a, BOOT_IRQAFFINITY, &irq);

        if (!want)
                return -ENOMEM;
        if (q == -ENOENT)
                cmdline_finding_add(a, SEVERITY_INFO, "boot.irqaffinity", "irqaffinity", want,
                                    "The kernel command line has no irqaffinity=: IRQs set up during boot "
                                    "may use any CPU until lowlatd starts and moves them (and managed ones "
                                    "never move).");
        else if (q >= 0 && cpuset_intersects(&irq, &p->isolated))
                cmdline_finding_add(a, SEVERITY_WARNING, "boot.irqaffinity", "irqaffinity", want,
                                    "irqaffinity=%s includes isolated CPUs: every IRQ starts out allowed on "
                                    "them.",
                                    a->boot[BOOT_IRQAFFINITY]);
        return 0;
}

/* What the kernel applied against what the command line asked for; r and nohz are
 * check_boot_nohz_full()'s. */
static void check_boot_applied(Audit *a, const BootWant *w, int r, const CPUSet *nohz) {
        _cleanup_cpuset_ CPUSet cpus = CPUSET_EMPTY, applied = CPUSET_EMPTY;
        unsigned flags = 0;

        if (a->boot[BOOT_ISOLCPUS] && audit_parse_isolcpus(a->boot[BOOT_ISOLCPUS], &flags, &cpus) >= 0 &&
            (flags & ISOLCPUS_DOMAIN) && audit_read_cpus(a, &applied, "sys/devices/system/cpu/isolated") >= 0 &&
            !cpuset_equal(&applied, &cpus)) {
                _cleanup_free_ char *asked = audit_cpus_list(a, &cpus), *got = audit_cpus_list(a, &applied);
                cmdline_finding_add(a, SEVERITY_WARNING, "boot.mismatch", "/sys/devices/system/cpu/isolated",
                                    w->isolcpus,
                                    "The command line asks for isolcpus=%s but the kernel isolated \"%s\" (CPUs "
                                    "past nr_cpus= or offline at boot, or a second isolcpus= that the kernel "
                                    "rejected). Check dmesg | grep -i -e isolcpus -e housekeeping.",
                                    asked ?: "?", got ?: "?");
        }
        if (r >= 0 && audit_read_cpus(a, &applied, "sys/devices/system/cpu/nohz_full") >= 0 && !cpuset_equal(&applied, nohz)) {
                _cleanup_free_ char *asked = audit_cpus_list(a, nohz), *got = audit_cpus_list(a, &applied);
                bool no_config = a->kconfig_loaded && !audit_kconfig_yes(a, KCONFIG_NO_HZ_FULL);
                finding_add(a, SEVERITY_WARNING, "boot.mismatch", "/sys/devices/system/cpu/nohz_full",
                            "The command line asks for nohz_full=%s but the kernel runs tickless on \"%s\"%s: "
                            "the tick still interrupts the other CPUs. %s",
                            asked ?: "?", got ?: "?",
                            no_config ? " because it was built without CONFIG_NO_HZ_FULL" : "",
                            no_config ? "Install a kernel with CONFIG_NO_HZ_FULL=y (most distribution kernels have it)."
                                      : "The boot CPU can never be tickless, and CPUs past nr_cpus= are dropped; "
                                        "check dmesg | grep -i housekeeping.");
        }
}

void audit_check_boot(Audit *a) {
        const Posture *p = a->posture;
        _cleanup_cpuset_ CPUSet nohz = CPUSET_EMPTY;
        _cleanup_(boot_want_done) BootWant w = {};
        int r;

        if (cpuset_is_empty(&p->isolated)) {
                finding_add(a, SEVERITY_INFO, "boot.isolcpus", "isolcpus",
                            "No CPU is isolated: [cpus] isolated = auto and the kernel isolated none, so the "
                            "latency-critical application shares every CPU with the rest of the system (timer "
                            "ticks, RCU callbacks, IRQs, other tasks). Reserve whole cores other than CPU 0 "
                            "for it: set [cpus] isolated = LIST and boot with isolcpus=managed_irq,domain,LIST "
                            "nohz_full=LIST rcu_nocbs=LIST irqaffinity=OTHER-CPUS.");
                return;
        }
        if (!a->cmdline_loaded)
                return;
        w.isolated = audit_cpus_list(a, &p->isolated);
        w.isolated_words = audit_cpus_phrase(a, &p->isolated);
        w.housekeeping = audit_cpus_list(a, &p->housekeeping);
        if (!w.isolated || !w.isolated_words || !w.housekeeping)
                return;
        w.isolcpus = audit_check_alloc(a, strdup_printf("isolcpus=%s%s", isolcpus_flags(a), w.isolated));
        w.nohz_full = audit_check_alloc(a, strdup_printf("nohz_full=%s", w.isolated));
        if (!w.isolcpus || !w.nohz_full)
                return;

        check_boot_isolcpus(a, &w);
        r = check_boot_nohz_full(a, &w, &nohz);
        check_boot_rcu_nocbs(a, &w, r, &nohz);
        if (check_boot_irqaffinity(a, &w) < 0)
                return;
        check_boot_applied(a, &w, r, &nohz);
}

/* --- 1. boot: timers --- */

/* Kernel parameters against the timer noise every CPU gets: skewed ticks, the soft-lockup
 * detector, and the clocksource watchdog. Whatever the isolation, so not in
 * audit_check_boot(); a fix names the one parameter (grub_line() carries them all). */
void audit_check_boot_timers(Audit *a) {
        if (!a->cmdline_loaded)
                return;
        if (!skew_tick_on(a))
                cmdline_finding_add(a, SEVERITY_WARNING, "boot.skew_tick", "skew_tick", "skew_tick=1",
                                    "The kernel command line has no skew_tick=1: the periodic tick fires on every "
                                    "CPU at the same instant, and the CPUs then contend for the timekeeping and RCU "
                                    "locks on each tick, a jitter of microseconds on every CPU whose tick runs.");
        if (!a->boot[BOOT_NOSOFTLOCKUP])
                cmdline_finding_add(a, SEVERITY_INFO, "boot.nosoftlockup", "nosoftlockup", "nosoftlockup",
                                    "The soft-lockup detector is on: its timer interrupts every CPU of "
                                    "kernel.watchdog_cpumask every 4 seconds to check that the CPU still "
                                    "schedules. A latency-critical host does without it (the NMI watchdog is "
                                    "separate, see sysctl.nmi-watchdog).");
        if (!tsc_watchdog_off(a) && tsc_trusted(a))
                cmdline_finding_add(a, SEVERITY_INFO, "boot.tsc", "tsc", "tsc=reliable",
                                    "The TSC is the clocksource and the CPU says it is constant and non-stop "
                                    "(constant_tsc, nonstop_tsc in /proc/cpuinfo), yet the clocksource watchdog "
                                    "still checks it against the HPET or ACPI PM timer twice a second, from a timer "
                                    "that visits every online CPU in turn, isolated ones included, with interrupts "
                                    "off while the slow timer is read. Leave tsc=reliable out if the kernel ever "
                                    "marked the TSC unstable here (dmesg | grep -i tsc).");
}

/* "boot.isolcpus", "boot.isolcpus and boot.tsc", "boot.isolcpus, boot.nohz_full and boot.tsc". */
static char *ids_phrase(Audit *a) {
        _cleanup_free_ char *text = strdup("");

        for (size_t i = 0; text && i < a->n_cmdline_referrers; i++) {
                char *more = strdup_printf("%s%s%s", text,
                                           i == 0                              ? ""
                                           : i + 1 == a->n_cmdline_referrers ? " and "
                                                                               : ", ",
                                           a->cmdline_referrers[i]);
                free(text);
                text = more;
        }
        return audit_check_alloc(a, TAKE_PTR(text));
}

/* The facts and the checks that end in a parameter of the command line only: no process is
 * looked at. What audit_boot_needs() and audit_boot_line() share; a->error on failure. */
static int audit_boot_checks(Audit *a) {
        audit_load_kernel_facts(a);
        audit_check_boot(a);
        audit_check_boot_timers(a);
        audit_check_kernel(a);
        return a->error;
}

int audit_boot_needs(const Host *h, const Posture *p, char **ret_params) {
        Audit a = { .host = h, .posture = p, .config = p ? p->config : NULL };
        int r;

        if (!h || !p || !p->config)
                return -EINVAL;
        r = audit_boot_checks(&a);
        if (r >= 0) {
                *ret_params = TAKE_PTR(a.cmdline_params);
                r = *ret_params ? 1 : 0;
        }
        audit_done(&a);
        return r;
}

int audit_boot_line(const Host *h, const Posture *p, char **ret_line, char **ret_params) {
        Audit a = { .host = h, .posture = p, .config = p ? p->config : NULL };
        _cleanup_free_ char *line = NULL;
        bool init_args;
        int r;

        if (!h || !p || !p->config)
                return -EINVAL;
        r = audit_boot_checks(&a);
        /* Without the running line every argument it carries (the root's, the console's)
         * would be lost from the one written. */
        if (r >= 0 && !a.cmdline_loaded)
                r = -ENODATA;
        if (r >= 0) {
                line = grub_line(&a, &init_args);
                r = line ? a.error : -ENOMEM;
        }
        if (r >= 0) {
                *ret_line = TAKE_PTR(line);
                *ret_params = TAKE_PTR(a.cmdline_params);
                r = *ret_params ? 1 : 0;
        }
        audit_done(&a);
        return r;
}

int audit_boot_args(const Host *h, const Posture *p, char **ret_args) {
        Audit a = { .host = h, .posture = p, .config = p ? p->config : NULL };
        _cleanup_free_ char *args = NULL;
        int r;

        if (!h || !p || !p->config)
                return -EINVAL;
        r = audit_boot_checks(&a);
        if (r >= 0) {
                args = lowlatd_params(&a);
                r = args ? a.error : -ENOMEM;
        }
        if (r >= 0)
                *ret_args = TAKE_PTR(args);
        audit_done(&a);
        return r;
}

int audit_boot_refusal(const Posture *p, char **ret_reason) {
        unsigned online = cpuset_count(&p->online), housekeeping = cpuset_count(&p->housekeeping);
        _cleanup_free_ char *list = NULL;
        char *reason;

        if (cpuset_is_empty(&p->isolated))
                return 0;
        if (housekeeping == 0)
                reason = strdup("the configuration isolates every CPU: no housekeeping CPU is left");
        else if (housekeeping == 1 && online > 2) {
                list = cpuset_format_list(&p->housekeeping);
                if (!list)
                        return -ENOMEM;
                reason = strdup_printf("the configuration leaves CPU %s alone as housekeeping on a host of %u online "
                                       "CPUs: one CPU would take every IRQ, kernel thread, timer and RCU callback of "
                                       "the others. Isolate fewer CPUs so that at least two are left for housekeeping",
                                       list, online);
        } else
                return 0;
        if (!reason)
                return -ENOMEM;
        *ret_reason = reason;
        return 1;
}

void audit_check_boot_cmdline(Audit *a) {
        _cleanup_free_ char *grub = NULL, *ids = NULL;
        bool init_args;

        if (a->n_cmdline_referrers == 0 || a->error < 0)
                return;
        grub = grub_line(a, &init_args);
        ids = ids_phrase(a);
        if (!grub || !ids)
                return;
        finding_add(a, a->cmdline_severity, "boot.cmdline", "GRUB_CMDLINE_LINUX_DEFAULT",
                    "One kernel command line fixes %s: set GRUB_CMDLINE_LINUX_DEFAULT=\"%s\" %s.%s", ids, grub,
                    grub_howto,
                    init_args ? " The arguments after \"--\" on the running command line are for init, not the "
                                "kernel, and are left out."
                              : "");
}

/* --- 2. kernel --- */

/* kernel.preempt when the fix is preempt=full at boot: through boot.cmdline when the
 * command line was read (grub_line() then carries preempt=full), else in its own words. */
_printf_(3, 4) static void preempt_full_finding_add(Audit *a, Severity severity, const char *fmt, ...) {
        _cleanup_free_ char *message = NULL;
        va_list ap;

        va_start(ap, fmt);
        message = audit_check_alloc(a, strdup_vprintf(fmt, ap));
        va_end(ap);
        if (!message)
                return;
        if (a->cmdline_loaded)
                cmdline_finding_add(a, severity, "kernel.preempt", "preempt", "preempt=full", "%s", message);
        else
                finding_add(a, severity, "kernel.preempt", "preempt",
                            "%s Fix: add preempt=full to GRUB_CMDLINE_LINUX_DEFAULT %s.", message, grub_howto);
}

void audit_check_kernel(Audit *a) {
        const Posture *p = a->posture;

        switch (a->preempt_mode) {
        case PREEMPT_MODE_RT:
        case PREEMPT_MODE_FULL:
                /* full at run time only: the next boot goes back to the built-in default. */
                if (a->preempt_mode == PREEMPT_MODE_FULL && a->preempt_dynamic && a->kconfig_loaded &&
                    audit_preempt_mode_from_config(a) != PREEMPT_MODE_FULL && !streq_ptr(a->boot[BOOT_PREEMPT], "full"))
                        preempt_full_finding_add(a, SEVERITY_INFO,
                                                 "Preemption is full now, but it was set at run time: this kernel "
                                                 "boots in %s mode.",
                                                 preempt_mode_to_string(audit_preempt_mode_from_config(a)));
                break;
        case PREEMPT_MODE_LAZY:
                if (a->preempt_dynamic)
                        preempt_full_finding_add(a, SEVERITY_INFO,
                                                 "The kernel runs with lazy preemption (%s): a woken high-priority "
                                                 "task may wait until the next tick for a running SCHED_OTHER task "
                                                 "to yield. For the lowest latency switch now with echo full > "
                                                 "/sys/kernel/debug/sched/preempt, and keep it at boot.",
                                                 a->preempt_source ?: "?");
                else
                        finding_add(a, SEVERITY_INFO, "kernel.preempt", "preempt",
                                    "The kernel runs with lazy preemption (%s): a woken high-priority task may wait "
                                    "until the next tick for a running SCHED_OTHER task to yield. For the lowest "
                                    "latency use a kernel built with PREEMPT_DYNAMIC and boot it with preempt=full.",
                                    a->preempt_source ?: "?");
                break;
        case PREEMPT_MODE_NONE:
        case PREEMPT_MODE_VOLUNTARY:
                if (a->preempt_dynamic)
                        preempt_full_finding_add(a, SEVERITY_WARNING,
                                                 "The kernel runs with %s preemption (%s): a high-priority task "
                                                 "that wakes up waits until the kernel code running on its CPU "
                                                 "reaches a preemption point, which can take milliseconds. This "
                                                 "kernel has PREEMPT_DYNAMIC: switch now with echo full > "
                                                 "/sys/kernel/debug/sched/preempt, and keep it at boot.",
                                                 preempt_mode_to_string(a->preempt_mode), a->preempt_source ?: "?");
                else
                        finding_add(a, SEVERITY_WARNING, "kernel.preempt", "preempt",
                                    "The kernel is built with %s preemption (%s) and cannot switch at run time: a "
                                    "woken high-priority task waits until the kernel code on its CPU reaches a "
                                    "preemption point, which can take milliseconds. Install a kernel with "
                                    "PREEMPT_DYNAMIC (then boot with preempt=full), a lowlatency kernel, or a "
                                    "PREEMPT_RT one (Ubuntu: pro enable realtime-kernel).",
                                    preempt_mode_to_string(a->preempt_mode), a->preempt_source ?: "?");
                break;
        case PREEMPT_MODE_UNKNOWN:
                finding_add(a, SEVERITY_INFO, "kernel.preempt", "preempt",
                            "The preemption model cannot be told: /sys/kernel/debug/sched/preempt is missing "
                            "(debugfs not mounted, or no PREEMPT_DYNAMIC) and /boot/config-%s %s. Check with "
                            "dmesg | grep -i preempt and uname -v (PREEMPT_RT, PREEMPT_DYNAMIC or PREEMPT), or "
                            "mount -t debugfs none /sys/kernel/debug.",
                            a->release ?: "$(uname -r)", a->kconfig_loaded ? "names no preemption model" : "is unreadable");
                break;
        case _PREEMPT_MODE_MAX:
        case _PREEMPT_MODE_INVALID:
                break;
        }

        if (!a->kconfig_loaded)
                return; /* see audit_check_kernel_config_missing() */
        if (!audit_kconfig_yes(a, KCONFIG_PREEMPT_RT))
                finding_add(a, SEVERITY_INFO, "kernel.config.PREEMPT_RT", a->kconfig_path ?: "kernel config",
                            "CONFIG_PREEMPT_RT is not set: interrupt handlers and spinlocks cannot be preempted, "
                            "so worst-case wake-up latency stays in the tens to hundreds of microseconds under "
                            "load. If the application needs hard real-time bounds, use a PREEMPT_RT kernel "
                            "(Ubuntu: pro enable realtime-kernel; Debian: linux-image-rt-amd64; RHEL: "
                            "kernel-rt) and compare with cyclictest.");
        if (!audit_kconfig_yes(a, KCONFIG_HZ_1000))
                finding_add(a, SEVERITY_INFO, "kernel.config.HZ_1000", a->kconfig_path ?: "kernel config",
                            "CONFIG_HZ is %s, not 1000: timers and the tick on the housekeeping CPUs have %s "
                            "granularity, which delays timer-driven work. A kernel built with CONFIG_HZ_1000=y "
                            "(Ubuntu lowlatency, most RT kernels) ticks every millisecond.",
                            a->kconfig[KCONFIG_HZ] ?: "unknown",
                            streq_ptr(a->kconfig[KCONFIG_HZ], "250")   ? "4 ms"
                            : streq_ptr(a->kconfig[KCONFIG_HZ], "100") ? "10 ms"
                            : streq_ptr(a->kconfig[KCONFIG_HZ], "300") ? "3.3 ms"
                                                                       : "coarser");
        if (!cpuset_is_empty(&p->isolated) && !audit_kconfig_yes(a, KCONFIG_NO_HZ_FULL))
                finding_add(a, SEVERITY_WARNING, "kernel.config.NO_HZ_FULL", a->kconfig_path ?: "kernel config",
                            "CONFIG_NO_HZ_FULL is not set: this kernel ignores nohz_full=, so the isolated CPUs "
                            "keep their periodic tick even with one task running. Install a kernel with "
                            "CONFIG_NO_HZ_FULL=y (the Ubuntu, Debian, Fedora and RHEL kernels have it).");
        if (!cpuset_is_empty(&p->isolated) && !audit_kconfig_yes(a, KCONFIG_RCU_NOCB_CPU))
                finding_add(a, SEVERITY_WARNING, "kernel.config.RCU_NOCB_CPU", a->kconfig_path ?: "kernel config",
                            "CONFIG_RCU_NOCB_CPU is not set: this kernel ignores rcu_nocbs=, so RCU callbacks run "
                            "on the isolated CPUs in softirq context. Install a kernel with "
                            "CONFIG_RCU_NOCB_CPU=y.");
}

void audit_check_kernel_config_missing(Audit *a) {
        /* Reported on its own so that the subject names the file looked for. */
        _cleanup_free_ char *subject = NULL;

        if (a->kconfig_loaded || !a->release || !audit_path_exists(a, "proc/config.gz"))
                return;
        subject = audit_check_alloc(a, strdup_printf("/boot/config-%s", a->release));
        if (!subject)
                return;
        finding_add(a, SEVERITY_INFO, "kernel.config-missing", subject,
                    "%s is missing and lowlatd does not decompress /proc/config.gz, so PREEMPT_RT, HZ_1000, "
                    "NO_HZ_FULL and RCU_NOCB_CPU were not checked. Check them with zcat /proc/config.gz | "
                    "grep -E 'CONFIG_(PREEMPT_RT|PREEMPT_DYNAMIC|HZ_1000|NO_HZ_FULL|RCU_NOCB_CPU)='.",
                    subject);
}
