/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* How the isolated CPUs are isolated (section 4, scheduling): the state of the run-time
 * partition of [cpus] partition, and, per CPU, each isolation mechanism with where it comes
 * from (the boot's isolcpus=, nohz_full=, rcu_nocbs=, or the partition) and what is missing,
 * with what only a boot can give (the tick, RCU callback offload, managed IRQs). */
#include <string.h>

#include "audit/audit-internal.h"
#include "basic/util.h"

#define PARTITION_FILE "sys/fs/cgroup/%s/cpuset.cpus.partition"
#define DETAIL_MAX 256U

typedef enum Mechanism {
        MECH_LOAD_BALANCING,
        MECH_WORKQUEUES,
        MECH_TIMER_MIGRATION,
        MECH_TICK,
        MECH_RCU,
        MECH_MANAGED_IRQ,
        _MECH_MAX,
} Mechanism;

/* What each mechanism takes off a CPU, and whether a partition can give it at run time. */
static const struct {
        const char *name;
        bool boot_only;
} mechanisms[_MECH_MAX] = {
        [MECH_LOAD_BALANCING] = { "load balancing", false },
        [MECH_WORKQUEUES] = { "unbound workqueues", false },
        [MECH_TIMER_MIGRATION] = { "timer migration", false },
        [MECH_TICK] = { "tick", true },
        [MECH_RCU] = { "RCU callbacks", true },
        [MECH_MANAGED_IRQ] = { "managed IRQs", true },
};

/* The isolation the host has, as CPU sets. */
typedef struct Isolation {
        const char *slice;   /* [cpus] partition, or NULL */
        CPUSet partition;    /* the CPUs the valid partition isolates */
        CPUSet domain;       /* isolcpus= with domain (the default flag) */
        CPUSet managed;      /* isolcpus= with managed_irq */
        CPUSet nohz;         /* /sys/devices/system/cpu/nohz_full: what the kernel applied */
        CPUSet nocbs;        /* rcu_nocbs=, and nohz_full (which implies it) */
        CPUSet wq_mask;      /* /sys/devices/virtual/workqueue/cpumask */
        bool have_wq_mask;
        /* The root cgroup's cpuset.cpus.isolated: the kernels that have it (6.8 and later)
         * take an isolated partition's CPUs out of the unbound workqueues; 6.1 has neither. */
        bool partitions_take_wq;
        int timer_migration; /* kernel.timer_migration: 0, 1, -1 when unread */
} Isolation;

static void isolation_done(Isolation *i) {
        cpuset_done(&i->partition);
        cpuset_done(&i->domain);
        cpuset_done(&i->managed);
        cpuset_done(&i->nohz);
        cpuset_done(&i->nocbs);
        cpuset_done(&i->wq_mask);
}

/* --- the partition's state --- */

/* The slice's CPUs that the partition isolates now: its effective CPUs, less those the
 * root's cpuset.cpus.isolated (6.12 and later) leaves out after a hotplug. */
static void partition_cpus(Audit *a, const char *slice, CPUSet *ret) {
        _cleanup_cpuset_ CPUSet root_isolated = CPUSET_EMPTY;

        if (audit_read_cpus(a, ret, "sys/fs/cgroup/%s/cpuset.cpus.effective", slice) < 0 &&
            audit_read_cpus(a, ret, "sys/fs/cgroup/%s/cpuset.cpus", slice) < 0)
                return;
        if (audit_read_cpus(a, &root_isolated, "sys/fs/cgroup/cpuset.cpus.isolated") >= 0)
                cpuset_and(ret, &root_isolated);
}

/* sched.partition: "isolated" (info, with its CPUs), "isolated invalid (REASON)", another
 * state, no partition file, or no cgroup at all (warnings). Fills i->partition when valid. */
static void check_partition_state(Audit *a, Isolation *i) {
        const char *slice = i->slice;
        _cleanup_free_ char *dir = audit_check_alloc(a, strdup_printf("sys/fs/cgroup/%s", slice)), *state = NULL,
                            *list = NULL, *missing = NULL;
        _cleanup_cpuset_ CPUSet short_of = CPUSET_EMPTY;

        if (!dir)
                return;
        if (!audit_path_exists(a, dir)) {
                finding_add(a, SEVERITY_WARNING, "sched.partition", slice,
                            "[cpus] partition = %s, but the slice has no cgroup (state: absent): nothing isolates "
                            "the CPUs at run time. lowlatd starts the slice and makes it an isolated cpuset "
                            "partition when it applies the posture: is it running, and not in observe mode "
                            "(systemctl status lowlatd, lowlatctl status)?",
                            slice);
                return;
        }
        if (audit_read_value(a, &state, PARTITION_FILE, slice) < 0) {
                finding_add(a, SEVERITY_WARNING, "sched.partition", slice,
                            "[cpus] partition = %s, but its cgroup has no cpuset.cpus.partition: this kernel has no "
                            "cpuset partitions (the isolated type came in 6.1), or the cpuset controller is not "
                            "enabled for the slice (cgroup.subtree_control of the root).",
                            slice);
                return;
        }
        if (strncmp(state, "isolated invalid", strlen("isolated invalid")) == 0) {
                finding_add(a, SEVERITY_WARNING, "sched.partition", slice,
                            "The partition %s reads \"%s\": the kernel does not isolate its CPUs. Most often a "
                            "sibling was given some of its CPUs (systemctl show -p AllowedCPUs system.slice "
                            "user.slice init.scope machine.slice); once that is fixed the kernel does not repair "
                            "it: lowlatd writes it again when it sees the change (lowlatctl status says so), or "
                            "write \"member\" then \"isolated\" to /sys/fs/cgroup/%s/cpuset.cpus.partition.",
                            slice, state, slice);
                return;
        }
        if (!streq(state, "isolated")) {
                finding_add(a, SEVERITY_WARNING, "sched.partition", slice,
                            "The partition %s reads \"%s\", not \"isolated\": its CPUs are balanced with the "
                            "rest. lowlatd puts \"isolated\" back when it runs and is not observing.",
                            slice, state);
                return;
        }
        partition_cpus(a, slice, &i->partition);
        if (audit_check_errno(a, cpuset_copy(&short_of, &a->posture->isolated)) < 0)
                return;
        cpuset_and(&short_of, &a->posture->online);
        cpuset_subtract(&short_of, &i->partition);
        list = audit_cpus_phrase(a, &i->partition);
        missing = audit_cpus_phrase(a, &short_of);
        if (!list || !missing)
                return;
        if (cpuset_is_empty(&short_of))
                finding_add(a, SEVERITY_INFO, "sched.partition", slice,
                            "The partition %s reads \"isolated\" and holds %s: the scheduler does not balance "
                            "load onto them and the rest of the host stays off them. It does not stop the tick "
                            "or offload RCU callbacks (isolation.mechanisms says what only a boot adds).",
                            slice, list);
        else
                finding_add(a, SEVERITY_WARNING, "sched.partition", slice,
                            "The partition %s reads \"isolated\" but isolates %s only: %s of the isolated CPUs "
                            "%s not in it (a CPU taken offline and back on 6.12 comes back so). lowlatd writes "
                            "\"member\" then \"isolated\" when it sees it; by hand, do the same to "
                            "/sys/fs/cgroup/%s/cpuset.cpus.partition.",
                            slice, list, missing, cpuset_count(&short_of) == 1 ? "is" : "are", slice);
}

/* --- the mechanisms --- */

static void load_isolation(Audit *a, Isolation *i) {
        unsigned flags = 0;
        _cleanup_cpuset_ CPUSet isolcpus = CPUSET_EMPTY;

        if (a->boot[BOOT_ISOLCPUS] && audit_parse_isolcpus(a->boot[BOOT_ISOLCPUS], &flags, &isolcpus) >= 0) {
                if ((flags & ISOLCPUS_DOMAIN) && cpuset_or(&i->domain, &isolcpus) < 0)
                        a->error = -ENOMEM;
                if ((flags & ISOLCPUS_MANAGED_IRQ) && cpuset_or(&i->managed, &isolcpus) < 0)
                        a->error = -ENOMEM;
        }
        (void) audit_read_cpus(a, &i->nohz, "sys/devices/system/cpu/nohz_full");
        if (a->boot[BOOT_RCU_NOCBS])
                (void) cpuset_parse_list(a->boot[BOOT_RCU_NOCBS], &i->nocbs);
        if (cpuset_or(&i->nocbs, &i->nohz) < 0)
                a->error = -ENOMEM;
        {
                uint64_t v;
                i->timer_migration = audit_read_u64(a, &v, "proc/sys/kernel/timer_migration") < 0 ? -1 : v != 0;
        }
        {
                _cleanup_free_ char *text = NULL;
                i->have_wq_mask = audit_read_value(a, &text, "sys/devices/virtual/workqueue/cpumask") >= 0 &&
                                  cpuset_parse_mask(text, &i->wq_mask) >= 0;
        }
        i->partitions_take_wq = audit_path_exists(a, "sys/fs/cgroup/cpuset.cpus.isolated");
}

/* A CPU of the partition that the workqueues keep because this kernel's partitions leave
 * them alone (6.1): unsupported here, not a partition gone wrong. */
static bool wq_unsupported(const Isolation *i, unsigned cpu) {
        return i->have_wq_mask && cpuset_contains(&i->partition, cpu) && cpuset_contains(&i->wq_mask, cpu) &&
               !i->partitions_take_wq;
}

#define WQ_UNSUPPORTED_WHY                                                                                    \
        "not on this kernel: its partitions leave the unbound workqueues alone (the root cgroup has no "    \
        "cpuset.cpus.isolated; 6.8 and later take them)"


/* Where mechanism m is in force on cpu ("boot: isolcpus=domain"), NULL where it is not,
 * "" where the host does not say. Static strings but for the partition's, in buf. */
static const char *mechanism_source(const Isolation *i, Mechanism m, unsigned cpu, char *buf, size_t size) {
        bool in_partition = cpuset_contains(&i->partition, cpu);

        snprintf(buf, size, "partition %s", i->slice ?: "");
        switch (m) {
        case MECH_LOAD_BALANCING:
                return cpuset_contains(&i->domain, cpu) ? "boot: isolcpus=domain" : in_partition ? buf : NULL;
        case MECH_WORKQUEUES:
                if (!i->have_wq_mask)
                        return "";
                return cpuset_contains(&i->wq_mask, cpu) ? NULL : in_partition ? buf : "workqueue cpumask";
        case MECH_TIMER_MIGRATION:
                /* One switch for the whole host: with it on, timers move to busy CPUs. */
                return i->timer_migration < 0 ? "" : i->timer_migration == 0 ? "sysctl kernel.timer_migration=0" : NULL;
        case MECH_TICK:
                return cpuset_contains(&i->nohz, cpu) ? "boot: nohz_full" : NULL;
        case MECH_RCU:
                return cpuset_contains(&i->nohz, cpu) ? "boot: nohz_full" : cpuset_contains(&i->nocbs, cpu) ? "boot: rcu_nocbs" : NULL;
        case MECH_MANAGED_IRQ:
                return cpuset_contains(&i->managed, cpu) ? "boot: isolcpus=managed_irq" : NULL;
        default:
                return "";
        }
}

/* One line per mechanism for cpu, '\n' between them: the signature CPUs are grouped by. */
static char *cpu_report(const Isolation *i, unsigned cpu, unsigned *ret_missing) {
        char *text = NULL;
        unsigned missing = 0;

        for (Mechanism m = 0; m < _MECH_MAX; m++) {
                char buf[DETAIL_MAX], *more;
                const char *source = mechanism_source(i, m, cpu, buf, sizeof(buf));
                if (source && !source[0])
                        continue;
                if (!source)
                        missing |= 1U << m;
                more = strdup_printf("%s%s%s: %s%s%s", text ?: "", text ? "\n" : "", mechanisms[m].name,
                                     source ? "in force (" : "missing", source ?: "",
                                     source                                           ? ")"
                                     : mechanisms[m].boot_only                        ? ", only a boot gives it"
                                     : m == MECH_WORKQUEUES && wq_unsupported(i, cpu) ? ", " WQ_UNSUPPORTED_WHY
                                                                                      : "");
                free(text);
                if (!more)
                        return NULL;
                text = more;
        }
        *ret_missing = missing;
        return text ?: strdup("");
}

/* The boot parameters that would add what is missing on the CPUs of list, each with a
 * leading space. */
static char *boot_fix(const Isolation *i, unsigned missing, const char *list) {
        bool tick = missing & (1U << MECH_TICK), rcu = missing & (1U << MECH_RCU),
             managed = missing & (1U << MECH_MANAGED_IRQ),
             domain = (missing & (1U << MECH_LOAD_BALANCING)) && !i->slice;

        return strdup_printf("%s%s%s%s%s%s%s%s", tick ? " nohz_full=" : "", tick ? list : "", rcu ? " rcu_nocbs=" : "",
                             rcu ? list : "", managed || domain ? " isolcpus=" : "", managed ? "managed_irq," : "",
                             domain ? "domain," : "", managed || domain ? list : "");
}

/* The mechanisms in force on cpu with where from, "load balancing (boot: isolcpus=domain)",
 * ", " between them; "" when none is. */
static char *in_force_text(const Isolation *i, unsigned cpu) {
        char *text = strdup("");

        for (Mechanism m = 0; text && m < _MECH_MAX; m++) {
                char buf[DETAIL_MAX], *more;
                const char *source = mechanism_source(i, m, cpu, buf, sizeof(buf));
                if (!source || !source[0])
                        continue;
                more = strdup_printf("%s%s%s (%s)", text, text[0] ? ", " : "", mechanisms[m].name, source);
                free(text);
                text = more;
        }
        return text;
}

/* The names of the missing mechanisms, ", " between them. */
static char *missing_names(unsigned missing) {
        char *text = strdup("");

        for (Mechanism m = 0; text && m < _MECH_MAX; m++)
                if (missing & (1U << m)) {
                        char *more = strdup_printf("%s%s%s", text, text[0] ? ", " : "", mechanisms[m].name);
                        free(text);
                        text = more;
                }
        return text;
}

/* One isolation.mechanisms finding for the CPUs of report. */
static void report_group(Audit *a, const Isolation *i, const char *report, const CPUSet *cpus, unsigned missing) {
        _cleanup_free_ char *list = audit_cpus_list(a, cpus), *words = audit_cpus_phrase(a, cpus), *copy = NULL,
                            *fix = NULL, *subject = NULL;
        _cleanup_free_ char *names = audit_check_alloc(a, missing_names(missing)),
                            *in_force = audit_check_alloc(a, in_force_text(i, (unsigned) cpuset_next(cpus, 0)));
        char **details = NULL;
        size_t n = 0, allocated = 0;
        bool boot_missing = missing & ((1U << MECH_TICK) | (1U << MECH_RCU) | (1U << MECH_MANAGED_IRQ));
        bool wq_unsupported_here = (missing & (1U << MECH_WORKQUEUES)) && wq_unsupported(i, (unsigned) cpuset_next(cpus, 0));

        if (!list || !words)
                return;
        subject = audit_check_alloc(a, cpuset_count(cpus) == 1 ? strdup_printf("cpu%s", list) : strdup_printf("cpus %s", list));
        copy = audit_check_alloc(a, strdup(report));
        fix = audit_check_alloc(a, boot_fix(i, missing, list));
        if (!subject || !copy || !fix || !names || !in_force)
                return;
        for (char *save = NULL, *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                if (audit_check_errno(a, array_grow(&details, &allocated, n + 2)) < 0)
                        break;
                details[n] = audit_check_alloc(a, strdup(line));
                if (!details[n])
                        break;
                details[++n] = NULL;
        }
        finding_add_details(a, SEVERITY_INFO, "isolation.mechanisms", subject, &details, &n,
                            "Isolated %s: %s%s%s%s%s. %s%s%s%s%s%s%s", words,
                            missing ? "missing " : "every isolation mechanism is in force", names,
                            missing && in_force[0] ? "; in force: " : in_force[0] ? ": " : "", in_force,
                            " (the details say it per mechanism)",
                            boot_missing ? "Only a boot can add the rest on this kernel: add" : "",
                            boot_missing ? fix : "",
                            boot_missing ? " to the kernel command line (lowlatctl boot prints the whole line, "
                                           "lowlatctl boot --apply writes it) and reboot." : "",
                            (missing & ((1U << MECH_LOAD_BALANCING) | (1U << MECH_WORKQUEUES))) && !i->slice
                                    ? " At run time, [cpus] partition = SLICE takes the CPUs out of load balancing "
                                      "(and, from 6.8, out of the unbound workqueues) without a reboot."
                                    : "",
                            wq_unsupported_here ? " The partition takes them out of the unbound workqueues " WQ_UNSUPPORTED_WHY "." : "",
                            missing & (1U << MECH_WORKQUEUES)
                                    ? " [cpus] workqueues = housekeeping keeps the unbound workqueues off them on "
                                      "any kernel."
                                    : "",
                            missing & (1U << MECH_TIMER_MIGRATION)
                                    ? " At run time, kernel.timer_migration = 0 in [sysctl] keeps timers where they "
                                      "were armed."
                                    : "");
}

void audit_check_isolation(Audit *a) {
        _cleanup_(isolation_done) Isolation i = { .slice = a->config->partition };
        CPUSet done = CPUSET_EMPTY;

        if (cpuset_is_empty(&a->posture->isolated))
                return;
        if (i.slice)
                check_partition_state(a, &i);
        load_isolation(a, &i);
        /* CPUs with the same report are one finding; nothing is said of a host whose boot
         * gives every mechanism, unless a partition is configured (then where each comes
         * from is worth saying). */
        CPUSET_FOREACH(cpu, &a->posture->isolated) {
                _cleanup_free_ char *report = NULL;
                _cleanup_cpuset_ CPUSet group = CPUSET_EMPTY;
                unsigned missing = 0;

                if (a->error < 0 || cpuset_contains(&done, (unsigned) cpu))
                        continue;
                report = audit_check_alloc(a, cpu_report(&i, (unsigned) cpu, &missing));
                if (!report)
                        break;
                CPUSET_FOREACH(other, &a->posture->isolated) {
                        _cleanup_free_ char *theirs = NULL;
                        unsigned m;
                        if (other < cpu || cpuset_contains(&done, (unsigned) other))
                                continue;
                        theirs = audit_check_alloc(a, cpu_report(&i, (unsigned) other, &m));
                        if (!theirs)
                                break;
                        if (streq(theirs, report) && (cpuset_add(&group, (unsigned) other) < 0 ||
                                                      cpuset_add(&done, (unsigned) other) < 0))
                                a->error = -ENOMEM;
                }
                if (a->error >= 0 && (missing || i.slice))
                        report_group(a, &i, report, &group, missing);
        }
        cpuset_done(&done);
}
