/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lowlatd.conf as data: the Config a set of files says, strict validation of every key,
 * and the drop-in directory. Every key is one row of lib/config/keys.c. Pure with respect
 * to the host: what needs host facts (does CPU 7 exist?) is the resolution (posture.c). */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "basic/cpuset.h"
#include "basic/errorlist.h"
#include "basic/string-table.h"
#include "host/unit-sandbox.h"

typedef enum DaemonMode {
        DAEMON_MODE_ENFORCE,
        DAEMON_MODE_OBSERVE,
        _DAEMON_MODE_MAX,
        _DAEMON_MODE_INVALID = -EINVAL,
} DaemonMode;

/* "enforce", "observe": [daemon] mode's values and the bus's Mode. */
DECLARE_STRING_TABLE_LOOKUP(daemon_mode, DaemonMode);

/* Where a value came from, so that errors found later still name file:line. */
typedef struct ConfigSource {
        const char *file; /* points into Config.files */
        unsigned line;
} ConfigSource;

/* A set of CPUs as a key names it (lowlatd.conf(5), "CPU sets in values"): a list, or a
 * name that stands for one of the posture's sets. Which names a key takes, and how its
 * value is resolved to CPUs, is the key's row in lib/config/keys.c. */
typedef enum CpusKind {
        CPUS_UNSET,        /* not written, and no default: lowlatd leaves the thing alone */
        CPUS_LIST,
        CPUS_HOUSEKEEPING,
        CPUS_ISOLATED,
        CPUS_NONE,         /* no CPU (left alone, or the empty mask: the key's page says) */
        CPUS_ALL,          /* every online CPU */
        CPUS_AUTO,         /* [cpus] isolated: what the kernel isolated */
        _CPUS_KIND_MAX,
        _CPUS_KIND_INVALID = -EINVAL,
} CpusKind;

/* "housekeeping", "isolated", "none", "all", "auto": the names a CPU set value may take
 * instead of a list (CPUS_UNSET and CPUS_LIST have none). */
DECLARE_STRING_TABLE_LOOKUP(cpus_kind, CpusKind);

typedef struct ConfigCpus {
        CpusKind kind;
        CPUSet cpus;         /* CPUS_LIST only */
        ConfigSource source; /* where the key was written; file NULL for a default */
} ConfigCpus;

void config_cpus_done(ConfigCpus *c);

/* [pm] boost: left alone, or held on or off. */
typedef enum PmBoost {
        PM_BOOST_UNSET,
        PM_BOOST_OFF,
        PM_BOOST_ON,
        _PM_BOOST_MAX,
        _PM_BOOST_INVALID = -EINVAL,
} PmBoost;

/* "keep", "off", "on": [pm] boost's values. */
DECLARE_STRING_TABLE_LOOKUP(pm_boost, PmBoost);

typedef struct IrqPin {
        char *glob;
        CPUSet cpus;
        ConfigSource source;
} IrqPin;

typedef struct SysctlEntry {
        char *key;
        char *value;
        ConfigSource source;
} SysctlEntry;

/* [sysfs] PATH = VALUE: the path as written ("/sys/kernel/mm/ksm/run"; globs allowed in
 * its components, see sysfs.h) and the value, white space as written. */
typedef struct SysfsEntry {
        char *path;
        char *value;
        ConfigSource source;
} SysfsEntry;

/* The ethtool parameters a [nic] section can set, in lib/host/ethtool.h's EthtoolParam order. */
#define NIC_PARAM_MAX 19

typedef struct NicParamValue {
        bool set;
        uint32_t value;
        ConfigSource source;
} NicParamValue;

typedef struct NicFeature {
        char *name; /* the kernel's feature name, e.g. "rx-gro" */
        bool on;
        ConfigSource source;
} NicFeature;

/* One [nic "GLOB"] section as written; several may match one interface, and a later one
 * overrides an earlier one key by key (see nic.c). */
typedef struct NicSection {
        char *glob;
        ConfigSource source;
        NicParamValue params[NIC_PARAM_MAX];
        NicFeature *features;
        size_t n_features, allocated_features;
        char *qdisc;
        ConfigSource qdisc_source;
        ConfigCpus irq_cpus; /* CPUS_UNSET or CPUS_LIST */
        /* Packet steering per queue (lib/setting/rps.c); unset: left alone. "none" here is
         * the empty mask, steering off, not "leave alone". */
        ConfigCpus rps_cpus, xps_cpus;
        bool rps_flow_cnt_set;
        uint32_t rps_flow_cnt; /* 0 or a power of two, as the kernel keeps it */
        ConfigSource rps_flow_cnt_source;
        /* The device's transmit queue length (rtnetlink IFLA_TXQLEN); unset: left alone. */
        bool txqueuelen_set;
        uint32_t txqueuelen;
        ConfigSource txqueuelen_source;
} NicSection;

/* A latency-critical program the audit checks: [service "NAME"] (a systemd unit's
 * processes, found by their cgroup) or [process "COMM"] (by /proc/PID/comm). */
typedef enum AppKind {
        APP_SERVICE,
        APP_PROCESS,
        _APP_KIND_MAX,
        _APP_KIND_INVALID = -EINVAL,
} AppKind;

/* "service", "process": the section names. */
DECLARE_STRING_TABLE_LOOKUP(app_kind, AppKind);

typedef struct AppSection {
        AppKind kind;
        char *name;          /* unit name without ".service", or the comm (at most 15 chars) */
        ConfigSource source;
        int policy;          /* SCHED_FIFO or SCHED_RR expected; -1: not checked (default FIFO or RR) */
        uint32_t priority;   /* minimum RT priority expected, 0: not checked */
        bool hugepages;      /* it should be using huge pages */
        bool mlock;          /* it should be able to mlockall() (memlock limit) */
} AppSection;

/* One [kthread "GLOB"] section as written: kernel threads whose name matches the glob get
 * these CPUs and this policy. Several may match one thread; for the CPUs, and for the
 * policy with its priority, the last section that sets them wins (lib/config/posture.c). */
typedef struct KthreadSection {
        char *glob;
        ConfigSource source;
        ConfigCpus cpus; /* unset, a list, housekeeping or isolated */
        int policy;        /* SCHED_OTHER, SCHED_FIFO or SCHED_RR; -1: not set */
        uint32_t priority; /* 1..99 with SCHED_FIFO and SCHED_RR; 0: not set */
        /* Where each key was written, valid or not (line 0: not written): a bad value is
         * reported once, not also as missing. */
        ConfigSource policy_source, priority_source;
} KthreadSection;

typedef enum UdevSource {
        UDEV_SOURCE_UDEV,
        UDEV_SOURCE_KERNEL,
        _UDEV_SOURCE_MAX,
        _UDEV_SOURCE_INVALID = -EINVAL,
} UdevSource;

/* "udev", "kernel": [daemon] udev_source's values, which are libudev's monitor names. */
DECLARE_STRING_TABLE_LOOKUP(udev_source, UdevSource);

/* [irq] irqbalance: what lowlatd does about a running irqbalance. */
typedef enum IrqbalanceMode {
        IRQBALANCE_REPORT, /* the audit says what it does to the isolated CPUs (irq.irqbalance) */
        IRQBALANCE_BAN,    /* tell it over its socket to leave them alone (lib/setting/irqbalance.c) */
        _IRQBALANCE_MODE_MAX,
        _IRQBALANCE_MODE_INVALID = -EINVAL,
} IrqbalanceMode;

/* "report", "ban": [irq] irqbalance's values. */
DECLARE_STRING_TABLE_LOOKUP(irqbalance_mode, IrqbalanceMode);

#define SCAN_INTERVAL_DEFAULT_USEC (10 * USEC_PER_SEC)
#define SCAN_INTERVAL_MIN_USEC (100 * USEC_PER_MSEC)
#define SCAN_INTERVAL_MAX_USEC (3600 * USEC_PER_SEC)
#define DMA_LATENCY_MAX_USEC 2000000000
/* pm_qos_resume_latency_us takes 0 to S32_MAX - 1; S32_MAX is the kernel's "no constraint". */
#define PM_RESUME_LATENCY_MAX_USEC 2147483646
/* A frequency in kHz as cpufreq's files hold it (unsigned int in the kernel). */
#define PM_FREQ_MAX_KHZ UINT32_MAX
/* Longest energy_performance_preference name the kernel's preference list has room for. */
#define PM_EPP_NAME_MAX 31
#define SYSCTL_VALUE_MAX 255
#define RPS_FLOW_CNT_MAX (UINT32_C(1) << 31)
/* [noise]: ticks per second a nohz_full CPU running one task may take before an alert
 * (CONFIG_HZ is at least 100, so a tick that did not stop shows 100/s or more). */
#define NOISE_TICK_RATE_MAX_DEFAULT 10
#define NOISE_ALERT_INTERVAL_DEFAULT_USEC (10 * 60 * USEC_PER_SEC)
#define CONFIG_LINE_MAX 1024 /* characters a line may hold, its "\n" not counted */

/* One KEY = VALUE line that took (its value accepted), as written: what lowlatctl
 * cat-config prints (merged.c). A later line of the same key in the same section
 * replaces it, unless the key repeats (pin). */
typedef struct ConfigTraceEntry {
        const char *section;  /* the section's name (static) */
        char *argument;       /* [nic "ARG"]'s ARG as written, or NULL */
        char *key;
        char *value;
        bool repeats;
        ConfigSource source;
} ConfigTraceEntry;

typedef struct Config {
        char **files; /* every file read: the profiles', the main file, its drop-ins */
        size_t n_files, allocated_files;
        size_t content_lines; /* lines that were not blank or comments, in all files */
        uint64_t digest; /* FNV-1a over the file names and every byte read, in order */
        /* "FILE:LINE: warning: reason": what is valid but will hurt (warnings.c). A
         * configuration with warnings is applied; --check-config --strict refuses it. */
        ErrorList warnings;
        ConfigTraceEntry *trace; /* every line that took, in the order read */
        size_t n_trace, allocated_trace;

        /* [daemon] profile (profiles.h): read before the main file, a later one winning. */
        char **profiles;
        size_t n_profiles;
        ConfigSource profiles_source;
        size_t n_profile_files; /* the first files: the profiles' */

        DaemonMode mode;
        uint64_t scan_interval_usec;
        UdevSource udev_source;
        bool restore_on_exit;

        ConfigCpus isolated;     /* auto (the kernel's), or a list */
        ConfigCpus housekeeping; /* unset (the online CPUs that are not isolated), or a list */

        bool evict_strays; /* move stray user tasks off the isolated CPUs (lib/setting/stray-tasks.c) */
        bool kthreads_housekeeping; /* move kernel threads off the isolated CPUs */
        bool fair_server_off; /* runtime 0 for the isolated CPUs' fair servers (setting/fair-server.c) */
        bool hold_timestamping; /* a socket with SO_TIMESTAMP held open (setting/timestamping.c) */

        KthreadSection *kthread_sections;
        size_t n_kthread_sections, allocated_kthread_sections;

        /* Units confined to the housekeeping CPUs with systemd's AllowedCPUs= (lib/setting/slices.c);
         * none when n_slices is 0. */
        char **slices;
        size_t n_slices;
        ConfigSource slices_source;
        /* A top-level slice made an isolated cpuset partition of the isolated CPUs
         * (lib/setting/partition.c); NULL: none. Implies slices when they are not listed. */
        char *partition;
        ConfigSource partition_source;

        ConfigCpus workqueues; /* where unbound workqueues run (lib/setting/workqueue.c); none: left alone */

        /* net.core.rps_default_mask, the RPS mask of queues created from now on (kernel
         * 6.3+; lib/setting/rps.c); unset: left alone, "none": the empty mask. */
        ConfigCpus rps_default_mask;

        ConfigCpus default_affinity; /* housekeeping, or a list */

        IrqPin *pins;
        size_t n_pins, allocated_pins;

        IrqbalanceMode irqbalance;

        bool cpu_dma_latency_enabled;
        uint32_t cpu_dma_latency_usec;

        char *governor; /* NULL when off */
        ConfigSource governor_source;

        /* [pm] per-CPU wake-up latency limit, as the kernel's pm_qos_resume_latency_us takes
         * it ("n/a", or 1 to PM_RESUME_LATENCY_MAX_USEC); NULL when off. */
        char *resume_latency;
        ConfigSource resume_latency_source;
        ConfigCpus resume_latency_cpus; /* housekeeping, isolated (the default), all or a list */
        /* [pm] min_freq: a frequency floor in kHz, or the most the driver offers. */
        bool min_freq_enabled;
        bool min_freq_max;
        uint64_t min_freq_khz;
        ConfigSource min_freq_source;
        ConfigCpus min_freq_cpus;
        char *energy_performance_preference; /* NULL when off */
        ConfigSource energy_performance_preference_source;
        ConfigCpus energy_performance_preference_cpus;
        PmBoost boost;

        SysctlEntry *sysctls;
        size_t n_sysctls, allocated_sysctls;

        SysfsEntry *sysfs; /* in the order read: a later entry wins where two match one file */
        size_t n_sysfs, allocated_sysfs;

        NicSection *nics;
        size_t n_nics, allocated_nics;

        AppSection *apps;
        size_t n_apps, allocated_apps;

        /* [noise] (lib/noise/noise.c): the CPUs whose interrupts, softirqs and context switches
         * are counted (default: the isolated ones), and the journal alerts about them. */
        ConfigCpus noise_cpus;
        uint32_t noise_tick_rate_max;
        uint64_t noise_alert_interval_usec; /* 0: no alerts */
        bool noise_gate; /* perf rings spare the scan /proc/interrupts (lib/noise/gate.h) */
} Config;

Config *config_new(void);
Config *config_free(Config *c);
static inline void config_freep(Config **c) {
        config_free(*c);
}
#define _cleanup_config_ __attribute__((cleanup(config_freep)))

/* Parses one file into c (keys override earlier ones). Errors go to errors as
 * "name:line: reason". Returns 0 when the file was read (even with errors), -errno when
 * it could not be read (also recorded in errors). */
int config_parse_file(Config *c, const char *path, ErrorList *errors);
/* The same from memory; name is used in messages. For tests and fuzzing. */
int config_parse_string(Config *c, const char *name, const char *text, ErrorList *errors);

/* Checks across keys (overlapping sets, ...). Call after all files are parsed. */
void config_validate(const Config *c, ErrorList *errors);

/* merged.c: the configuration in force as one file, each value with the FILE:LINE it came
 * from (lowlatctl cat-config): the files read, then every section in the order first
 * read, with the lines that took and were not replaced later. */
void config_print_merged(FILE *f, const Config *c);
/* merged.c: how the values in force differ from one configuration to the next, key by key
 * ("[SECTION] KEY", or "[SECTION \"ARG\"] KEY"): was NULL for a key that is new, will NULL
 * for one that went. */
typedef struct ConfigKeyChange {
        char *key;
        char *was;
        char *will;
} ConfigKeyChange;
int config_diff_keys(const Config *old, const Config *new, ConfigKeyChange **ret, size_t *ret_n);
void config_key_changes_free(ConfigKeyChange *changes, size_t n);

/* Loads path and then path.d/\*.conf in lexical order, and validates. Returns 0 with
 * *ret set, or -EINVAL with every problem in errors (nothing in *ret). */
int config_load(const char *path, Config **ret, ErrorList *errors);
/* The main file's text given instead of read (lowlatctl diff FILE): the drop-ins and
 * profiles are still read from disk, messages name the text as name (NULL: path), and the
 * digest is the one the files would have with text as path's content. */
typedef struct ConfigMainText {
        const char *text;
        const char *name;
} ConfigMainText;
/* config_load() with main (NULL, or main->text NULL: the file on disk). */
int config_load_with(const char *path, const ConfigMainText *main, Config **ret, ErrorList *errors);
/* warnings.c: adds to c->warnings what the files ask for that is valid but will hurt (a
 * key set twice in one file, throttling off, a pattern that takes in lo or can match
 * nothing, every kernel thread real-time). */
void config_check_warnings(Config *c);
/* posture_load(), once lowlatd.service is read under the root (host/unit-sandbox.h): a
 * [sysfs] path the unit leaves read-only. */
void config_warn_sysfs_sandbox(Config *c, const UnitSandbox *s);
/* posture_load(), once the isolated CPUs are known: a pin of every IRQ onto them. */
void config_warn_pins_isolated(Config *c, const CPUSet *isolated);
_printf_(3, 4) void config_warn(Config *c, const ConfigSource *where, const char *fmt, ...);

/* The units [cpus] slices must name together: the first AllowedCPUs= turns the cpuset
 * controller on for the whole tree, and every unit left out then runs on every CPU. */
#define SLICES_REQUIRED "system.slice", "user.slice", "init.scope"

/* Sysctl key syntax: components of [A-Za-z0-9_-] joined by single dots, at least two. */
bool sysctl_key_is_valid(const char *key);
/* Sysctl value syntax: printable (tabs allowed), at most SYSCTL_VALUE_MAX characters. */
bool sysctl_value_is_valid(const char *value);
