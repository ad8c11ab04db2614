/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the audit files share and nothing else includes: the state of one run (facts read
 * once, the findings being built) and the functions one file offers the others. */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "basic/array.h"
#include "audit/audit.h"
#include "config/config.h"
#include "basic/cpuset.h"
#include "host/host.h"
#include "basic/macro.h"
#include "basic/string-table.h"

typedef enum KernelOption {
        KCONFIG_PREEMPT_RT,
        KCONFIG_PREEMPT_DYNAMIC,
        KCONFIG_PREEMPT,
        KCONFIG_PREEMPT_VOLUNTARY,
        KCONFIG_PREEMPT_NONE,
        KCONFIG_PREEMPT_LAZY,
        KCONFIG_HZ_1000,
        KCONFIG_HZ,
        KCONFIG_NO_HZ_FULL,
        KCONFIG_RCU_NOCB_CPU,
        _KCONFIG_MAX,
} KernelOption;

typedef enum BootParam {
        BOOT_ISOLCPUS,
        BOOT_NOHZ_FULL,
        BOOT_RCU_NOCBS,
        BOOT_IRQAFFINITY,
        BOOT_PREEMPT,
        BOOT_SKEW_TICK,
        BOOT_NOSOFTLOCKUP,
        BOOT_TSC,
        BOOT_RCU_KTHREAD_PRIO,
        BOOT_RCU_USE_SOFTIRQ,
        _BOOT_PARAM_MAX,
} BootParam;

typedef enum PreemptMode {
        PREEMPT_MODE_UNKNOWN,
        PREEMPT_MODE_NONE,
        PREEMPT_MODE_VOLUNTARY,
        PREEMPT_MODE_FULL,
        PREEMPT_MODE_LAZY,
        PREEMPT_MODE_RT,
        _PREEMPT_MODE_MAX,
        _PREEMPT_MODE_INVALID = -EINVAL,
} PreemptMode;

/* A task allowed on isolated CPUs: a stray user task or a movable kernel thread. */
typedef struct Stray {
        unsigned pid;
        char *comm;
        char *allowed;
        uint64_t cpu_time; /* utime + stime, clock ticks; 0 without a stat line */
        unsigned last_cpu; /* /proc/PID/stat's processor, when have_last_cpu */
        bool have_last_cpu;
} Stray;

/* A kernel thread that does per-CPU work on an isolated CPU, with its scheduling. */
typedef struct PercpuKthread {
        unsigned pid;
        unsigned cpu;
        char comm[64];
        unsigned policy;
        unsigned rt_priority;
} PercpuKthread;

/* Where the real-time threads of one configured application may run. */
typedef struct AppRealtime {
        char *who;          /* "pid 1234 (matcher)" */
        unsigned priority;  /* the highest SCHED_FIFO/RR priority among its threads */
        CPUSet isolated;    /* the isolated CPUs those threads are allowed on */
} AppRealtime;

typedef struct AppPids {
        unsigned *pids;
        size_t n, allocated;
} AppPids;

typedef struct Omitted {
        char *id;
        size_t n;
        Severity worst;
} Omitted;

typedef struct Audit {
        const Host *host;
        const Posture *posture;
        const Config *config;
        const SettingTable *table;
        int error; /* the first allocation failure; findings stop there */

        FindingList findings; /* handed to the caller at the end */
        size_t allocated;     /* of findings.items */
        Omitted *omitted;
        size_t n_omitted, allocated_omitted;

        char *release; /* uname -r, from /proc/sys/kernel/osrelease */
        unsigned kernel_major, kernel_minor;
        bool kernel_version_known;

        bool kconfig_loaded;
        char *kconfig_path; /* as shown to humans */
        char *kconfig[_KCONFIG_MAX];

        bool cmdline_loaded;
        char **tokens;
        size_t n_tokens, allocated_tokens;
        const char *boot[_BOOT_PARAM_MAX]; /* the value of the last occurrence, NULL when absent */

        /* Whether tsc=reliable is safe to advise: the TSC is the clocksource and the CPU
         * says it is constant and non-stop (audit-boot-kernel.c, read once). */
        bool tsc_looked;
        bool tsc_trusted;

        /* The findings fixed on the kernel command line (ids, static strings), and the worst
         * severity among them: boot.cmdline gives the one line for all. */
        const char *cmdline_referrers[16];
        size_t n_cmdline_referrers;
        Severity cmdline_severity;
        /* The parameters those findings ask for, space-separated, in the order found; and
         * the worst severity among the findings they fix (audit_boot_needs()). */
        char *cmdline_params;

        PreemptMode preempt_mode;
        bool preempt_dynamic;
        const char *preempt_source;

        /* processes */
        bool proc_listed;
        size_t n_examined;
        size_t n_pids_total;
        Stray *strays;
        size_t n_strays, allocated_strays;
        AppPids *apps; /* one per config app */
        bool *app_matched; /* one per config app: scratch for task_match_apps() */
        unsigned irqbalance_pid;
        unsigned stalld_pid;
        Stray *movable_kthreads; /* kernel threads allowed on isolated CPUs that could move */
        size_t n_movable_kthreads, allocated_movable_kthreads;
        PercpuKthread *rcu_kthreads; /* rcuc/N and ksoftirqd/N of the isolated CPUs */
        size_t n_rcu_kthreads, allocated_rcu_kthreads;
        AppRealtime *app_realtime; /* filled by audit_check_apps() */
        size_t n_app_realtime, allocated_app_realtime;
        bool dma_device_exists;
        bool dma_default_in_force; /* the device reads the default: no request is in force */
        unsigned max_processes;
        unsigned dma_holder_pid;
        char *dma_holder_comm;
        bool dma_unknown; /* some process's fds could not be read */
        size_t fd_budget;
} Audit;

/* audit-findings.c: building the findings */

/* Records an allocation failure; returns p so calls can be wrapped. */
void *audit_check_alloc(Audit *a, void *p);
/* The same for a function's result: records r when it is -ENOMEM, returns r. A missing or
 * unreadable input only skips the check that needs it; running out of memory ends the
 * run. */
int audit_check_errno(Audit *a, int r);
/* Adds a finding, or counts it when AUDIT_FINDINGS_PER_ID_MAX of its id are listed. */
_printf_(5, 6) void finding_add(Audit *a, Severity severity, const char *id, const char *subject, const char *fmt, ...);
/* finding_add() with the lines of the items it sums up: takes *details (*n_details lines)
 * whatever happens, and leaves NULL and 0 there. */
_printf_(7, 8) void finding_add_details(Audit *a, Severity severity, const char *id, const char *subject,
                                        char ***details, size_t *n_details, const char *fmt, ...);
/* One "N more" finding for each id that went over the cap. */
void audit_add_omitted_summaries(Audit *a);

/* audit-facts.c: the state, the host read through the root, and the kernel's facts */

void audit_done(Audit *a);
/* host_read_file() of a path built from a format, noting an allocation failure. */
_printf_(3, 4) int audit_read_file(Audit *a, char **ret, const char *fmt, ...);
/* The whole file with white space trimmed at both ends. */
_printf_(3, 4) int audit_read_value(Audit *a, char **ret, const char *fmt, ...);
_printf_(3, 4) int audit_read_u64(Audit *a, uint64_t *ret, const char *fmt, ...);
/* A CPU list file; "(null)" (nohz_full without the parameter) is the empty set. */
_printf_(3, 4) int audit_read_cpus(Audit *a, CPUSet *ret, const char *fmt, ...);
/* Whether relpath exists, without opening it (see audit-facts.c). */
bool audit_path_exists(Audit *a, const char *relpath);
/* /proc/PID/environ, NUL-separated, with its length. */
int audit_read_environ(Audit *a, unsigned pid, char **ret, size_t *ret_len);
/* Whether word is one of the white-space separated words of list. */
bool word_in_list(const char *list, const char *word);
/* cpuset_format_list(), noting an allocation failure. */
char *audit_cpus_list(Audit *a, const CPUSet *s);
/* The words a message puts before a CPU list: "CPU 1" for one CPU, "CPUs 2-3" or
 * "CPUs 0,2" for more, "no CPU" for none; noting an allocation failure. */
char *audit_cpus_phrase(Audit *a, const CPUSet *s);
/* The same for a list as the kernel wrote it (Cpus_allowed_list, a sysctl's value), kept as
 * written; "CPUs LIST" when it does not parse. */
char *audit_cpus_phrase_of_list(Audit *a, const char *list);

/* The kernel's release, config (/boot/config-RELEASE), command line and preemption model,
 * into the state, before any check looks at them. */
void audit_load_kernel_facts(Audit *a);
bool audit_kernel_older_than(const Audit *a, unsigned major, unsigned minor);
bool audit_kconfig_yes(const Audit *a, KernelOption o);
/* The model the kernel config picks as the default. */
PreemptMode audit_preempt_mode_from_config(const Audit *a);
/* "unknown", "none", "voluntary", "full", "lazy", "rt": the words the findings use, and
 * (but for "unknown" and "rt") those of /sys/kernel/debug/sched/preempt and preempt=. */
DECLARE_STRING_TABLE_LOOKUP(preempt_mode, PreemptMode);

/* The checks, in the files named after them; audit-run.c calls them in order. */

/* audit-boot-kernel.c */
/* The flags of isolcpus=. */
#define ISOLCPUS_DOMAIN 1U
#define ISOLCPUS_MANAGED_IRQ 2U
#define ISOLCPUS_NOHZ 4U
/* isolcpus=[flag,...,]list; no flag means domain. Unknown flags are skipped, as the
 * kernel does. */
int audit_parse_isolcpus(const char *value, unsigned *ret_flags, CPUSet *ret_cpus);
void audit_check_boot(Audit *a);
void audit_check_boot_timers(Audit *a);
void audit_check_kernel(Audit *a);
void audit_check_kernel_config_missing(Audit *a);
/* boot.cmdline: the one GRUB line for every finding above that asked for it; after them. */
void audit_check_boot_cmdline(Audit *a);

/* audit-cpu.c */
void audit_check_topology(Audit *a);
void audit_check_numa(Audit *a);
void audit_check_power(Audit *a);
void audit_check_dma_latency(Audit *a);
void audit_check_fair_server(Audit *a);
void audit_check_steal(Audit *a);

/* audit-net.c */
void audit_check_rps(Audit *a);
void audit_check_timestamping(Audit *a);

/* audit-processes.c */
void audit_scan_processes(Audit *a);
void audit_check_strays(Audit *a);
void audit_check_apps(Audit *a);
void audit_check_kthreads(Audit *a);
void audit_check_rcu_priority(Audit *a);

/* audit-memory.c */
void audit_check_swap(Audit *a);

/* audit-systemd.c */
void audit_check_pid1_affinity(Audit *a);
void audit_check_unconfined_slices(Audit *a);

/* audit-isolation.c */
void audit_check_isolation(Audit *a);

/* audit-irq-sysctl.c */
void audit_check_irqbalance(Audit *a);
void audit_check_unmovable_irqs(Audit *a);
void audit_check_rt_throttling(Audit *a);
void audit_check_sysctls(Audit *a);
void audit_check_noise_sysctls(Audit *a);
