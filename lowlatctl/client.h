/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What lowlatctl's files share: lowlatd's answers as read off the bus, the exit statuses,
 * and the entry points of each file. Internal to lowlatctl. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <systemd/sd-bus.h>

#include "audit/audit.h"
#include "basic/cells.h"
#include "bus-features.h"

/* Monitoring-plugin exit statuses (status, list), and the others lowlatctl uses. */
#define EXIT_OK 0
#define EXIT_WARNING 1
#define EXIT_CRITICAL 2
#define EXIT_UNKNOWN 3
#define EXIT_REFUSED 1 /* reload, reapply: lowlatd answered no */
#define EXIT_USAGE 64  /* EX_USAGE */
#define EXIT_OUTPUT 74 /* EX_IOERR: standard output could not be written */

/* ---- What lowlatd reports (bus.c, check-local.c) ------------------------------------- */

typedef struct LastMeasurement LastMeasurement;

/* Strings point into reply, which this struct holds a reference on. */
typedef struct ManagerInfo {
        sd_bus_message *reply;
        const char *version;
        const char *mode;
        const char *state;
        const char *isolated_cpus;
        const char *housekeeping_cpus;
        char **config_files;
        uint64_t last_reload_usec;
        const char *last_reload_error;
        uint64_t drift_events;
        uint64_t corrections;
        uint64_t failures;
        uint64_t applied_settings;
        uint64_t fights;
        int32_t cpu_dma_latency_usec; /* the request asked for, -1: off */
        int cpu_dma_latency_held;     /* CpuDmaLatencyHeld; -1: a lowlatd without it */
        int32_t cpu_dma_latency_system_usec; /* what /dev/cpu_dma_latency reads; -1: unknown */
        uint32_t settings;
        uint32_t settings_not_ok;
        char **config_warnings; /* ConfigWarnings; NULL: none, or a lowlatd without it */
        char **profiles;        /* Profiles; NULL: none, or a lowlatd without it */
        const char *condition;     /* Condition; NULL: a lowlatd without it */
        char **condition_reasons;  /* ConditionReasons; NULL: none, or a lowlatd without it */
        int reboot_required;       /* RebootRequired; -1: a lowlatd without it */
        const LastMeasurement *measurement; /* status: lowlatctl measure's last result; NULL: none */
} ManagerInfo;

/* Whether lowlatd holds its /dev/cpu_dma_latency request now: CpuDmaLatencyHeld, or for a
 * lowlatd without it, whether one is asked for (such a lowlatd says no more). */
static inline bool manager_info_dma_latency_held(const ManagerInfo *info) {
        return info->cpu_dma_latency_usec >= 0 && info->cpu_dma_latency_held != 0;
}

typedef struct SettingRow {
        const char *kind;
        const char *object;
        const char *desired;
        const char *observed;
        const char *state;
        const char *label; /* an IRQ's name from /proc/interrupts, "" when none */
} SettingRow;

typedef struct SettingList {
        sd_bus_message *reply;
        SettingRow *rows;
        size_t n, allocated;
} SettingList;

/* One finding of the audit (Check), as lowlatd words it. */
typedef struct CheckFinding {
        const char *severity;
        const char *id;
        const char *subject;
        const char *message;
        const char **details; /* the array is the report's, the lines are not; NULL when none */
        size_t n_details;
} CheckFinding;

typedef struct CheckReport {
        sd_bus_message *reply;
        CheckFinding *findings; /* in the order lowlatd gives them */
        size_t n, allocated;
} CheckReport;

/* Those that take `char **why` say why they failed before returning -errno: into *why (a
 * person's words, without "lowlatctl: ") when it is not NULL, else on stderr. The others
 * print it on stderr. */
/* lowlatd's method that takes no arguments, asked again while lowlatd answers
 * org.lowlatd1.Error.Busy (its loop's share for such calls is spent this second; lowlatd(8),
 * Limits): after 50 ms, doubling to 500 ms, for 2 s at most. */
int ctl_call_method(sd_bus *bus, const char *method, sd_bus_error *error, sd_bus_message **reply);
int ctl_bus_connect(sd_bus **ret, char **why);
/* Why the system bus could not be reached (sd_bus_open_system's r): the socket, and what
 * to run. NULL when out of memory. */
char *ctl_connect_failure(int r);
/* Why a call failed, in the words most useful to whoever reads them: lowlatd is not
 * running, is too old for member (the method called or the property read; NULL: none in
 * particular), the verb needs root, or what lowlatd said. what names the call for the
 * last ("Reading LastMeasurement", "Reload"). NULL when out of memory. */
char *ctl_call_failure(sd_bus *bus, const char *what, const char *member, const sd_bus_error *error, int r);
/* The same, printed: calling method, reading property. */
void ctl_log_call_failed(sd_bus *bus, const char *method, const sd_bus_error *error, int r);
void ctl_log_read_failed(sd_bus *bus, const char *property, const sd_bus_error *error, int r);
/* Every property of the spec must be there: a half-known daemon would make every verdict
 * a guess. */
int ctl_read_manager_info(sd_bus *bus, ManagerInfo *ret, char **why);
void manager_info_done(ManagerInfo *info);
int ctl_read_settings(sd_bus *bus, SettingList *ret, char **why);
void setting_list_done(SettingList *l);
/* Both of the above: what status, list and metrics show. */
int ctl_read_posture(sd_bus *bus, ManagerInfo *ret_info, SettingList *ret_list, char **why);
/* Returns 0, or 1 when lowlatd answered with an error (it is there but would not audit),
 * or -errno when it could not be asked. */
int ctl_read_check_report(sd_bus *bus, CheckReport *ret);
void check_report_done(CheckReport *report);
/* The same audit run here, against config_path on the host under root (NULL: /), for
 * when lowlatd is not on the bus. The report's strings point into *ret_findings. Prints
 * why before returning -errno (a configuration error: each FILE:LINE: reason). */
int check_report_local(const char *config_path, const char *root, CheckReport *ret, FindingList *ret_findings);
/* Reload, Reapply, Restore: returns 0, 1 when lowlatd refused, or -errno when it could not
 * be asked. */
int ctl_call_action(sd_bus *bus, const char *method);
/* ConfigWarnings: *ret is NULL when there are none; -errno for a lowlatd without it. */
int ctl_read_config_warnings(sd_bus *bus, char ***ret);
/* Diff(text, name) and ReloadIfUnchanged(digest): 0 (with the reply), 1 after saying why
 * lowlatd refused, -errno after saying why it could not be asked. */
int ctl_call_diff(sd_bus *bus, const char *text, const char *name, sd_bus_message **reply);
int ctl_call_reload_if_unchanged(sd_bus *bus, uint64_t digest);

/* ---- A lowlatd of another version (compat.c) ---------------------------------------- */

/* The Version property; -errno. */
int ctl_daemon_version(sd_bus *bus, char **ret);
/* Whether lowlatd offers feature: its Features property, or for a lowlatd older than that
 * property its introspection. 1, 0, or -errno when it cannot be asked. */
int ctl_daemon_offers(sd_bus *bus, BusFeature feature);
/* "lowlatd 0.1.0-230-g8bbec47 has no noise counters; upgrade it", for a lowlatd without
 * member (a method or property); bus NULL: no version. NULL when out of memory. */
char *ctl_lacking_text(sd_bus *bus, const char *member);
/* --version: lowlatctl's version, then lowlatd's and its features (or why it is unknown). */
void ctl_print_versions(FILE *f);
/* Reading a struct, or an array of structs, whose signature starts with fields: a newer
 * lowlatd may have added fields at its end, which ctl_exit_struct() skips. Enter: 1 (0 for
 * a struct at the end of its array), or -errno (-EBADMSG: not such a struct). */
int ctl_enter_struct_array(sd_bus_message *m, const char *fields);
int ctl_enter_struct(sd_bus_message *m, const char *fields);
int ctl_exit_struct(sd_bus_message *m);

/* ---- What it means for the exit status (verdict.c) ----------------------------------- */

/* The states liblowlat's setting_state_is_good() calls good ("ok", "corrected") need no
 * attention; everything else, an unknown state included, is shown by status. */
bool setting_state_name_is_good(const char *name);
/* list --state=STATE[,STATE...]: one bit per state; STATE_FILTER_ALL for no filter. */
typedef uint64_t StateFilter;
#define STATE_FILTER_ALL 0U
/* Only the states liblowlat knows: an unknown name (a typo) is printed and -EINVAL. */
int state_filter_parse(const char *list, StateFilter *ret);
bool state_filter_matches(StateFilter filter, const char *name);
/* --state=help: every state, one a line. */
void state_names_print(FILE *f);
/* list --kind=KIND[,KIND...], the same over the kinds of settings. */
typedef uint64_t KindFilter;
#define KIND_FILTER_ALL 0U
int kind_filter_parse(const char *list, KindFilter *ret);
bool kind_filter_matches(KindFilter filter, const char *name);
void kind_names_print(FILE *f);
/* What list shows: the settings in one of the states and of one of the kinds. */
typedef struct ListFilter {
        StateFilter states;
        KindFilter kinds;
} ListFilter;
int posture_verdict(const ManagerInfo *info, const SettingList *l);
const char *verdict_to_string(int v);
/* The audit's severities, worst first: critical 0, warning 1, info 2, ok 3; anything else
 * SEVERITY_RANKS. */
#define SEVERITY_RANKS _SEVERITY_MAX
int severity_rank(const char *severity);
int check_verdict(const CheckReport *report);

/* ---- Counting by name (string-set.c) ------------------------------------------------- */

/* A small set of strings that keeps first-seen order (kinds, states). The strings are
 * not copied. */
typedef struct StringSet {
        const char **items;
        size_t n, allocated;
} StringSet;

void string_set_done(StringSet *s);
/* Index of s, adding it if new; -ENOMEM. */
ssize_t string_set_put(StringSet *set, const char *s);

/* ---- The printers' pieces (format.c) ------------------------------------------------- */

/* Table cells and JSON strings: basic/cells.h. */
/* A duration given as an option's value, as lowlatd.conf takes them (systemd.time(7): a
 * bare number is seconds), from min_usec to max_usec: 1, or -EINVAL after printing why,
 * with the bounds as the reader takes them. */
int parse_duration_option(const char *option, const char *value, uint64_t min_usec, uint64_t max_usec,
                          uint64_t *ret);
/* Local time as "Tue 2024-05-07 10:00:00 CEST"; NULL on failure. */
char *format_timestamp(uint64_t usec);
/* Nanoseconds as µs after prefix, in buf: whole when they are (cyclictest's), else with
 * one decimal. print_usec() right-aligns them in width columns. */
const char *format_usec(char *buf, size_t size, const char *prefix, uint64_t ns);
void print_usec(FILE *f, uint64_t ns, int width);
/* Exit status for a verb that printed something: the verdict, unless stdout failed. */
int finish_output(int verdict);

/* ---- For people and programs (output.c) ---------------------------------------------- */

void status_print_text(FILE *f, const ManagerInfo *info, const SettingList *l, int verdict);
void status_print_json(FILE *f, const ManagerInfo *info, const SettingList *l, int verdict);
/* lowlatd could not be asked: "LOWLATD UNKNOWN: reason", or {"verdict":"unknown","reason":...}. */
void status_print_unknown(FILE *f, const char *reason, bool json);
void list_print_table(FILE *f, const SettingList *l, const ListFilter *filter, bool legend);
void list_print_json(FILE *f, const SettingList *l, const ListFilter *filter);
void check_print(FILE *f, const CheckReport *report, bool json);

/* ---- For Prometheus (metrics.c) ------------------------------------------------------ */

/* lowlatd did not answer: still a valid scrape, so the textfile collector says "down"
 * rather than going stale. */
void metrics_print_down(FILE *f);
int metrics_print_settings(FILE *f, const SettingList *l);
/* What Noise() said, for the lowlatd_isolated_cpu_* families. */
typedef struct MetricsNoiseSource {
        uint32_t cpu;
        char *kind, *source, *description;
        uint64_t count;
} MetricsNoiseSource;

typedef struct MetricsNoise {
        MetricsNoiseSource *sources;
        size_t n;
        CPUSet nohz_full; /* this host's, read by lowlatctl itself; empty when none */
        int readable;     /* NoiseUnreadable was "": 1, it was not: 0, an older lowlatd: -1 */
} MetricsNoise;

void metrics_noise_done(MetricsNoise *n);
/* Calls Noise() and reads this host's nohz_full CPUs (under root, "/" when NULL). -errno
 * (an older lowlatd has no Noise(): the noise families are then left out). */
int ctl_read_metrics_noise(sd_bus *bus, const char *root, MetricsNoise *ret);
int metrics_print_noise(FILE *f, const MetricsNoise *n);
/* The lowlatd_measurement_ families; nothing when m has no measurement. */
void metrics_print_measurement(FILE *f, const LastMeasurement *m);
/* Every family (noise NULL: no noise families; measurement NULL: no measurement
 * families); -ENOMEM. */
int metrics_print(FILE *f, const ManagerInfo *info, const SettingList *l, const MetricsNoise *noise,
                  const LastMeasurement *measurement);
/* Writes the metrics (info NULL: lowlatd is down) to path atomically: a hidden temporary
 * file in the same directory, renamed over path. 0, or -errno after printing why. */
int metrics_write_file(const char *path, const ManagerInfo *info, const SettingList *l, const MetricsNoise *noise,
                       const LastMeasurement *measurement);

/* ---- Wake-up latency (measure-verb.c, last-measurement.c) ---------------------------- */

/* Exit statuses of measure's refusals, distinct from every other outcome. */
#define EXIT_NO_TOOL 69 /* EX_UNAVAILABLE: none of rtla (with timerlat), cyclictest, oslat */
#define EXIT_NO_CPUS 78 /* EX_CONFIG: no isolated CPUs, and no --cpus */
/* EX_NOPERM: not root (the tools need real-time priority), or this process's affinity or
 * cgroup keeps threads off a CPU to measure (refused before the run), or a measuring
 * thread was seen on a CPU other than its own (after). */
#define EXIT_NOT_ON_CPUS 77

typedef struct MeasureArguments {
        unsigned duration_sec;
        const char *cpus; /* NULL: the isolated CPUs */
        const char *tool; /* NULL: the best one installed */
        bool json;
        const char *bus_failure; /* why the bus could not be reached (bus NULL), or NULL */
} MeasureArguments;

/* --duration: 1, or -EINVAL after printing why. */
int measure_parse_duration(const char *value, MeasureArguments *args);
int verb_measure(sd_bus *bus, const MeasureArguments *args);
/* lowlatctl profile [list | show NAME] (profile-verb.c): the profiles beside config_path
 * and the shipped ones. The exit status. */
int verb_profile_run(const char *config_path, char *const *words, size_t n_words, bool json, bool legend);
/* lowlatctl suggest (suggest.c): a configuration drawn from the topology of the host under
 * root, printed (or as JSON), and with write, put in config_path's drop-in directory and
 * checked. The exit status. */
typedef struct SuggestArguments {
        const char *root;        /* NULL: "/" */
        const char *config_path; /* --write: beside this file */
        const char **nics;
        size_t n_nics, allocated_nics;
        size_t cores; /* 0: half of what the chosen nodes can give, or what the boot isolated */
        const char *profile;
        bool json;
        bool write;
} SuggestArguments;
int verb_suggest_run(const SuggestArguments *args);

/* lowlatctl boot (boot-verb.c): the kernel command line the configuration needs, printed;
 * written for the boot loader found (--apply), or what --apply wrote taken away (--remove).
 * 0 printed, applied or removed; 1 refused (said why); 3 the host or its command line
 * cannot be read. */
typedef enum BootAction {
        BOOT_ACTION_PRINT,
        BOOT_ACTION_APPLY,
        BOOT_ACTION_REMOVE,
} BootAction;
typedef struct BootArguments {
        const char *root;        /* NULL: / */
        const char *config_path;
        bool json;
        BootAction action;
} BootArguments;
int verb_boot_run(const BootArguments *args);

/* lowlatctl cat-config: the configuration at config_path as lowlatd would read it, merged,
 * each value with its FILE:LINE (config_print_merged()). The exit status. */
int verb_cat_config_run(const char *config_path);

/* diff-verb.c: lowlatctl diff [FILE] (FILE NULL: the files on disk), and reload
 * --if-unchanged=DIGEST; parse_digest() reads DIGEST as diff prints it (-EINVAL after
 * saying why). */
int verb_diff_run(sd_bus *bus, const char *file, bool json);
int parse_digest(const char *value, uint64_t *ret);
int verb_reload_if_unchanged(sd_bus *bus, uint64_t digest);

/* lowlatctl explain WORD | --list (explain.c): what lowlatd.conf(5), lowlatctl(1) or the
 * journal catalog says of a key, a section, a finding or an event. The exit status. */
int verb_explain_run(char *const *words, size_t n_words, bool json, bool list);

/* The LastMeasurement property. Strings point into reply. */
typedef struct MeasuredCPURow {
        uint32_t cpu;
        uint64_t samples, min_ns, avg_ns, p99_ns, max_ns, overflows;
        int p99_over;
} MeasuredCPURow;

typedef struct MeasuredNoiseRow {
        uint32_t cpu;
        const char *kind, *source, *description;
        uint64_t count;
} MeasuredNoiseRow;

/* The LastMeasurementHistogram property: one CPU's cumulative buckets. Arrays point into
 * histogram_reply. */
typedef struct MeasuredHistogramRow {
        uint32_t cpu;
        const uint64_t *bounds_ns, *counts;
        size_t n;
} MeasuredHistogramRow;

struct LastMeasurement {
        sd_bus_message *reply;
        const char *tool; /* "" when lowlatd has none */
        uint64_t realtime_usec, duration_usec;
        MeasuredCPURow *cpus;
        size_t n_cpus;
        MeasuredNoiseRow *noise;
        size_t n_noise;
        sd_bus_message *histogram_reply;
        MeasuredHistogramRow *histograms; /* none from a lowlatd without them */
        size_t n_histograms;
};

void last_measurement_done(LastMeasurement *m);
/* 0 (tool "" for a lowlatd without the property or with nothing measured), or -errno
 * after printing why. */
int ctl_read_last_measurement(sd_bus *bus, LastMeasurement *ret);
/* m's histograms from LastMeasurementHistogram, when lowlatd has them for that very run
 * (none from a lowlatd without the property, or when a new measurement came in between
 * the two reads). 0, or -errno after printing why. */
int ctl_read_last_measurement_histogram(sd_bus *bus, LastMeasurement *m);
/* For status: lines under "Last measurement", and a JSON value (an object or null). */
void last_measurement_print_text(FILE *f, const LastMeasurement *m);
void last_measurement_print_json(FILE *f, const LastMeasurement *m);

/* ---- Noise, live (top.c) ------------------------------------------------------------- */

typedef struct TopArguments {
        uint64_t interval_usec;
        unsigned iterations; /* 0: until q */
} TopArguments;

/* --interval, --iterations: 1, or -EINVAL after printing why. */
int top_parse_interval(const char *value, TopArguments *args);
int top_parse_iterations(const char *value, TopArguments *args);
int verb_top(sd_bus *bus, const TopArguments *args);
