/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lowlatd.conf parsing and validation. libinih splits lines into sections and key/value
 * pairs; a line reader in front of it counts lines (inih is built without line numbers
 * for handlers), rejects what inih would silently accept (over-long lines it would split,
 * indented lines it would treat as continuations, lines without '='), and strips '#'
 * inline comments. Every problem is collected, so one run of --check-config lists all. */
#include <ctype.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <dirent.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <ini.h>
#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>

#include "config.h"
#include "ethtool.h"
#include "sysfs.h"
#include "util.h"

static const char *const daemon_mode_table[_DAEMON_MODE_MAX] = {
        [DAEMON_MODE_ENFORCE] = "enforce",
        [DAEMON_MODE_OBSERVE] = "observe",
};
DEFINE_STRING_TABLE_LOOKUP(daemon_mode, DaemonMode);

static const char *const app_kind_table[_APP_KIND_MAX] = {
        [APP_SERVICE] = "service",
        [APP_PROCESS] = "process",
};
DEFINE_STRING_TABLE_LOOKUP(app_kind, AppKind);

static const char *const udev_source_table[_UDEV_SOURCE_MAX] = {
        [UDEV_SOURCE_UDEV] = "udev",
        [UDEV_SOURCE_KERNEL] = "kernel",
};
DEFINE_STRING_TABLE_LOOKUP(udev_source, UdevSource);

static const char *const irqbalance_mode_table[_IRQBALANCE_MODE_MAX] = {
        [IRQBALANCE_REPORT] = "report",
        [IRQBALANCE_BAN] = "ban",
};
DEFINE_STRING_TABLE_LOOKUP(irqbalance_mode, IrqbalanceMode);

static const char *const cpu_spec_kind_table[_CPU_SPEC_KIND_MAX] = {
        [CPU_SPEC_NONE] = "none",
        [CPU_SPEC_HOUSEKEEPING] = "housekeeping",
        [CPU_SPEC_ISOLATED] = "isolated",
};
DEFINE_STRING_TABLE_LOOKUP(cpu_spec_kind, CpuSpecKind);

static const char *const pm_cpus_kind_table[_PM_CPUS_KIND_MAX] = {
        [PM_CPUS_ISOLATED] = "isolated",
        [PM_CPUS_HOUSEKEEPING] = "housekeeping",
        [PM_CPUS_ALL] = "all",
};
DEFINE_STRING_TABLE_LOOKUP(pm_cpus_kind, PmCpusKind);

/* The names above, as an error message lists them after "a CPU list". */
#define CPU_SPEC_NAMES "housekeeping, isolated or none"

/* The digest that tells whether the files changed: FNV-1a, 64 bits. */
#define FNV1A_OFFSET UINT64_C(0xcbf29ce484222325)
#define FNV1A_PRIME UINT64_C(0x100000001b3)

Config *config_new(void) {
        Config *c = calloc(1, sizeof(Config));
        if (!c)
                return NULL;
        c->mode = DAEMON_MODE_ENFORCE;
        c->scan_interval_usec = SCAN_INTERVAL_DEFAULT_USEC;
        c->isolated_auto = true;
        c->default_affinity_is_housekeeping = true;
        c->noise_cpus.kind = CPU_SPEC_ISOLATED;
        c->noise_tick_rate_max = NOISE_TICK_RATE_MAX_DEFAULT;
        c->noise_alert_interval_usec = NOISE_ALERT_INTERVAL_DEFAULT_USEC;
        c->noise_gate = true;
        c->digest = FNV1A_OFFSET;
        return c;
}

static void config_free_slices(Config *c) {
        for (size_t i = 0; i < c->n_slices; i++)
                free(c->slices[i]);
        c->slices = mfree(c->slices);
        c->n_slices = 0;
}

Config *config_free(Config *c) {
        if (!c)
                return NULL;
        for (size_t i = 0; i < c->n_files; i++)
                free(c->files[i]);
        free(c->files);
        cpuset_done(&c->isolated);
        cpuset_done(&c->housekeeping);
        cpuset_done(&c->default_affinity);
        config_free_slices(c);
        cpuset_done(&c->workqueues.cpus);
        cpuset_done(&c->noise_cpus.cpus);
        cpuset_done(&c->rps_default_mask.cpus);
        for (size_t i = 0; i < c->n_pins; i++) {
                free(c->pins[i].glob);
                cpuset_done(&c->pins[i].cpus);
        }
        free(c->pins);
        free(c->governor);
        free(c->resume_latency);
        cpuset_done(&c->resume_latency_cpus.cpus);
        cpuset_done(&c->min_freq_cpus.cpus);
        free(c->energy_performance_preference);
        cpuset_done(&c->energy_performance_preference_cpus.cpus);
        for (size_t i = 0; i < c->n_sysctls; i++) {
                free(c->sysctls[i].key);
                free(c->sysctls[i].value);
        }
        free(c->sysctls);
        for (size_t i = 0; i < c->n_sysfs; i++) {
                free(c->sysfs[i].path);
                free(c->sysfs[i].value);
        }
        free(c->sysfs);
        for (size_t i = 0; i < c->n_nics; i++) {
                NicSection *n = &c->nics[i];
                free(n->glob);
                for (size_t j = 0; j < n->n_features; j++)
                        free(n->features[j].name);
                free(n->features);
                free(n->qdisc);
                cpuset_done(&n->irq_cpus);
                cpuset_done(&n->rps_cpus.cpus);
                cpuset_done(&n->xps_cpus.cpus);
        }
        free(c->nics);
        for (size_t i = 0; i < c->n_apps; i++)
                free(c->apps[i].name);
        free(c->apps);
        for (size_t i = 0; i < c->n_kthread_sections; i++) {
                free(c->kthread_sections[i].glob);
                cpuset_done(&c->kthread_sections[i].cpus);
        }
        free(c->kthread_sections);
        free(c);
        return NULL;
}

typedef struct ParseState {
        Config *config;
        ErrorList *errors;
        const char *file; /* owned by config->files */
        unsigned line;
        /* the source of the text: either a FILE or a string cursor */
        FILE *f;
        const char *cursor;
        int oom;
        ssize_t current_nic; /* index into config->nics of the [nic] section being read */
        ssize_t current_app; /* index into config->apps of the [service]/[process] section */
        ssize_t current_kthread; /* index into config->kthread_sections of the [kthread] section */
        bool in_sysfs;       /* the lines are [sysfs] PATH = VALUE */
        char *sysfs_path;    /* the PATH of the [sysfs] line inih is handling (see vet_line) */
} ParseState;

_printf_(2, 3) static void parse_error(ParseState *s, const char *fmt, ...) {
        _cleanup_free_ char *msg = NULL;
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = vasprintf(&msg, fmt, ap);
        va_end(ap);
        if (r < 0 || error_list_add(s->errors, "%s:%u: %s", s->file, s->line, msg) < 0)
                s->oom = -ENOMEM;
}

static ConfigSource here(const ParseState *s) {
        return (ConfigSource) { s->file, s->line };
}

/* names: the words the key also takes instead of a list, for the error message; NULL when
 * it takes only a list. */
static int parse_cpu_list_value(ParseState *s, const char *key, const char *value, const char *names, CPUSet *ret) {
        _cleanup_cpuset_ CPUSet set = CPUSET_EMPTY;
        int r;

        r = cpuset_parse_list(value, &set);
        if (r == -ERANGE) {
                parse_error(s, "%s: CPU number too large in '%s' (max %u)", key, value, CPUSET_MAX_CPUS - 1);
                return r;
        }
        if (r < 0 && names) {
                parse_error(s, "%s: '%s' is not a CPU list (e.g. 2-3,6), %s", key, value, names);
                return r;
        }
        if (r < 0) {
                parse_error(s, "%s: '%s' is not a CPU list (expected e.g. 2-3,6)", key, value);
                return r;
        }
        if (cpuset_is_empty(&set)) {
                parse_error(s, "%s: empty CPU list", key);
                return -EINVAL;
        }
        cpuset_done(ret);
        *ret = set;
        set = CPUSET_EMPTY;
        return 0;
}

/* A CPU set value: a name (none, housekeeping, isolated) or a list. */
static int parse_cpu_spec_value(ParseState *s, const char *key, const char *value, CpuSpec *ret) {
        CpuSpecKind kind = cpu_spec_kind_from_string(value);
        int r = 0;

        if (kind >= 0) {
                ret->kind = kind;
                cpuset_done(&ret->cpus);
        } else if ((r = parse_cpu_list_value(s, key, value, CPU_SPEC_NAMES, &ret->cpus)) >= 0)
                ret->kind = CPU_SPEC_LIST;
        ret->source = here(s);
        return r;
}

static void handle_daemon(ParseState *s, const char *key, const char *value) {
        Config *c = s->config;

        if (streq(key, "mode")) {
                DaemonMode m = daemon_mode_from_string(value);
                if (m < 0)
                        parse_error(s, "mode: '%s' is not 'enforce' or 'observe'", value);
                else
                        c->mode = m;
        } else if (streq(key, "scan_interval")) {
                uint64_t usec;
                int r = parse_duration_usec(value, &usec);
                if (r < 0)
                        parse_error(s, "scan_interval: '%s' is not a duration (e.g. 500ms, 10s, 2m)", value);
                else if (usec < SCAN_INTERVAL_MIN_USEC || usec > SCAN_INTERVAL_MAX_USEC)
                        parse_error(s, "scan_interval: '%s' is out of range (100ms to 1h)", value);
                else
                        c->scan_interval_usec = usec;
        } else if (streq(key, "restore_on_exit")) {
                bool b;
                if (parse_boolean(value, &b) < 0)
                        parse_error(s, "restore_on_exit: '%s' is not yes or no", value);
                else
                        c->restore_on_exit = b;
        } else if (streq(key, "udev_source")) {
                UdevSource u = udev_source_from_string(value);
                if (u < 0)
                        parse_error(s, "udev_source: '%s' is not 'udev' or 'kernel'", value);
                else
                        c->udev_source = u;
        } else
                parse_error(s, "unknown key '%s' in section [daemon]", key);
}

static bool unit_name_is_valid(const char *name, size_t max) {
        size_t n = strlen(name);
        if (n == 0 || n > max)
                return false;
        for (const char *p = name; *p; p++)
                if (!isalnum((unsigned char) *p) && !strchr("-_.@:\\", *p))
                        return false;
        return true;
}

static bool slice_is_listed(char *const *list, size_t n, const char *unit) {
        for (size_t i = 0; i < n; i++)
                if (streq(list[i], unit))
                        return true;
        return false;
}

/* [cpus] slices = UNIT... | none. The list replaces an earlier one only when every word is
 * good, and a list that leaves out one of SLICES_REQUIRED is refused: confining some units
 * while the rest of the tree jumps to every CPU makes isolation worse than no list. */
static void handle_slices(ParseState *s, const char *value) {
        static const char *const required[] = { SLICES_REQUIRED };
        static const char *const suffixes[] = { ".slice", ".scope", ".service" };
        _cleanup_free_ char *copy = strdup(value);
        char **list = NULL, *word, *save = NULL, missing[64] = "";
        size_t n = 0, len = 0;
        bool bad = false;

        if (!copy) {
                s->oom = -ENOMEM;
                return;
        }
        if (streq(value, "none")) {
                config_free_slices(s->config);
                return;
        }
        for (word = strtok_r(copy, " \t", &save); word && !s->oom; word = strtok_r(NULL, " \t", &save)) {
                size_t wlen = strlen(word);
                bool typed = false;

                for (size_t i = 0; i < ELEMENTSOF(suffixes); i++)
                        typed = typed || (wlen > strlen(suffixes[i]) && streq(word + wlen - strlen(suffixes[i]), suffixes[i]));
                if (!unit_name_is_valid(word, 255))
                        parse_error(s, "slices: '%s' is not a unit name (e.g. system.slice)", word);
                else if (streq(word, "-.slice"))
                        parse_error(s, "slices: -.slice is the root of the tree and cannot be confined; list the units under it");
                else if (!typed)
                        parse_error(s, "slices: '%s' is not a slice, scope or service (the units AllowedCPUs= applies to)", word);
                else if (slice_is_listed(list, n, word))
                        parse_error(s, "slices: '%s' is listed twice", word);
                else {
                        char **a = realloc(list, (n + 1) * sizeof(char *));
                        if (!a || !(a[n] = strdup(word)))
                                s->oom = -ENOMEM;
                        if (a)
                                list = a;
                        if (!s->oom)
                                n++;
                        continue;
                }
                bad = true;
        }
        for (size_t i = 0; !bad && i < ELEMENTSOF(required); i++)
                if (!slice_is_listed(list, n, required[i]))
                        len += (size_t) snprintf(missing + len, sizeof(missing) - MIN(len, sizeof(missing)), "%s%s",
                                                 len ? ", " : "", required[i]);
        if (!bad && len > 0)
                parse_error(s,
                            "slices: a partial list makes isolation worse: the first AllowedCPUs= turns the cpuset "
                            "controller on for the whole tree, and units left out (%s) then run on every CPU; list "
                            "system.slice, user.slice and init.scope together (and machine.slice where it exists)",
                            missing);
        if (bad || len > 0 || s->oom) {
                for (size_t i = 0; i < n; i++)
                        free(list[i]);
                free(list);
                return;
        }
        config_free_slices(s->config);
        s->config->slices = list;
        s->config->n_slices = n;
}

static void handle_cpus(ParseState *s, const char *key, const char *value) {
        Config *c = s->config;

        if (streq(key, "isolated")) {
                if (streq(value, "auto")) {
                        c->isolated_auto = true;
                        cpuset_done(&c->isolated);
                } else if (parse_cpu_list_value(s, key, value, NULL, &c->isolated) >= 0)
                        c->isolated_auto = false;
                c->isolated_source = here(s);
        } else if (streq(key, "housekeeping")) {
                if (parse_cpu_list_value(s, key, value, NULL, &c->housekeeping) >= 0)
                        c->housekeeping_explicit = true;
                c->housekeeping_source = here(s);
        } else if (streq(key, "evict_strays")) {
                bool b;
                if (parse_boolean(value, &b) < 0)
                        parse_error(s, "evict_strays: '%s' is not yes or no", value);
                else
                        c->evict_strays = b;
        } else if (streq(key, "slices")) {
                handle_slices(s, value);
                c->slices_source = here(s);
        } else if (streq(key, "kthreads")) {
                if (streq(value, "housekeeping"))
                        c->kthreads_housekeeping = true;
                else if (streq(value, "none"))
                        c->kthreads_housekeeping = false;
                else
                        parse_error(s, "kthreads: '%s' is not 'housekeeping' or 'none'", value);
        } else if (streq(key, "workqueues")) {
                (void) parse_cpu_spec_value(s, key, value, &c->workqueues);
        } else if (streq(key, "rps_default_mask")) {
                if (parse_cpu_spec_value(s, key, value, &c->rps_default_mask) >= 0)
                        c->rps_default_mask_set = true;
        } else
                parse_error(s, "unknown key '%s' in section [cpus]", key);
}

static bool glob_is_valid(const char *glob) {
        const char *bracket;

        if (isempty(glob) || strlen(glob) > 128)
                return false;
        for (const char *p = glob; *p; p++)
                if (!isgraph((unsigned char) *p))
                        return false;
        /* fnmatch() treats a malformed pattern as "no match" rather than an error. */
        bracket = strchr(glob, '[');
        return !bracket || strchr(bracket, ']');
}

static void handle_irq(ParseState *s, const char *key, const char *value) {
        Config *c = s->config;

        if (streq(key, "default_affinity")) {
                if (streq(value, "housekeeping")) {
                        c->default_affinity_is_housekeeping = true;
                        cpuset_done(&c->default_affinity);
                } else if (parse_cpu_list_value(s, key, value, NULL, &c->default_affinity) >= 0)
                        c->default_affinity_is_housekeeping = false;
                c->default_affinity_source = here(s);
        } else if (streq(key, "pin")) {
                _cleanup_free_ char *copy = strdup(value);
                _cleanup_cpuset_ CPUSet cpus = CPUSET_EMPTY;
                char *glob, *list;
                IrqPin *pins;

                if (!copy) {
                        s->oom = -ENOMEM;
                        return;
                }
                glob = copy;
                list = glob + strcspn(glob, " \t");
                if (*list == '\0') {
                        parse_error(s, "pin: expected 'GLOB CPULIST' (e.g. 'pin = eth0-TxRx-* 2-3'), got '%s'", value);
                        return;
                }
                *list++ = '\0';
                list = strstrip(list);
                if (!glob_is_valid(glob)) {
                        parse_error(s, "pin: '%s' is not a valid IRQ name pattern", glob);
                        return;
                }
                if (parse_cpu_list_value(s, "pin", list, NULL, &cpus) < 0)
                        return;
                pins = realloc(c->pins, (c->n_pins + 1) * sizeof(IrqPin));
                if (!pins) {
                        s->oom = -ENOMEM;
                        return;
                }
                c->pins = pins;
                c->pins[c->n_pins].glob = strdup(glob);
                if (!c->pins[c->n_pins].glob) {
                        s->oom = -ENOMEM;
                        return;
                }
                c->pins[c->n_pins].cpus = cpus;
                cpus = CPUSET_EMPTY;
                c->pins[c->n_pins].source = here(s);
                c->n_pins++;
        } else if (streq(key, "irqbalance")) {
                IrqbalanceMode m = irqbalance_mode_from_string(value);
                if (m < 0)
                        parse_error(s, "irqbalance: '%s' is not 'report' or 'ban'", value);
                else
                        c->irqbalance = m;
        } else
                parse_error(s, "unknown key '%s' in section [irq]", key);
}

static bool governor_name_is_valid(const char *name) {
        size_t n = strlen(name);
        if (n == 0 || n > 15) /* CPUFREQ_NAME_LEN is 16 with the NUL */
                return false;
        for (const char *p = name; *p; p++)
                if (!islower((unsigned char) *p) && !isdigit((unsigned char) *p) && *p != '_' && *p != '-')
                        return false;
        return true;
}

/* A [pm] *_cpus value: isolated, housekeeping, all, or a list. */
static void parse_pm_cpus_value(ParseState *s, const char *key, const char *value, PmCpus *ret) {
        PmCpusKind kind = pm_cpus_kind_from_string(value);

        if (kind >= 0) {
                ret->kind = kind;
                cpuset_done(&ret->cpus);
        } else if (parse_cpu_list_value(s, key, value, "isolated, housekeeping or all", &ret->cpus) >= 0)
                ret->kind = PM_CPUS_LIST;
        ret->source = here(s);
}

/* Names the kernel's EPP lists use: "balance_performance", "power", "default". */
static bool epp_name_is_valid(const char *name) {
        size_t n = strlen(name);
        if (n == 0 || n > PM_EPP_NAME_MAX)
                return false;
        for (const char *p = name; *p; p++)
                if (!islower((unsigned char) *p) && !isdigit((unsigned char) *p) && *p != '_')
                        return false;
        return true;
}

static void handle_pm_resume_latency(ParseState *s, const char *value) {
        Config *c = s->config;
        uint64_t v;
        int r;

        if (streq(value, "off")) {
                c->resume_latency = mfree(c->resume_latency);
                return;
        }
        if (!streq(value, "n/a")) {
                r = parse_uint64(value, &v);
                if (r < 0 && r != -ERANGE) {
                        parse_error(s, "resume_latency: '%s' is not a number of microseconds, 'n/a' or 'off'", value);
                        return;
                }
                /* The kernel reads a written 0 as "no restriction", the opposite of what a
                 * latency of 0 suggests: refuse it rather than let it mean that. */
                if (r == 0 && v == 0) {
                        parse_error(s, "resume_latency: 0 means 'no restriction' to the kernel; write 'n/a' to keep "
                                       "the CPUs out of every idle state with an exit latency, or 'off' to leave the "
                                       "limit alone");
                        return;
                }
                if (r == -ERANGE || v > PM_RESUME_LATENCY_MAX_USEC) {
                        parse_error(s, "resume_latency: '%s' is out of range (1 to %d)", value,
                                    PM_RESUME_LATENCY_MAX_USEC);
                        return;
                }
        }
        free(c->resume_latency);
        c->resume_latency = strdup(value);
        if (!c->resume_latency)
                s->oom = -ENOMEM;
        c->resume_latency_source = here(s);
}

static void handle_pm_min_freq(ParseState *s, const char *value) {
        Config *c = s->config;
        uint64_t v;
        int r;

        if (streq(value, "off")) {
                c->min_freq_enabled = false;
                return;
        }
        if (streq(value, "max")) {
                c->min_freq_enabled = c->min_freq_max = true;
                c->min_freq_source = here(s);
                return;
        }
        r = parse_uint64(value, &v);
        if (r < 0 && r != -ERANGE)
                parse_error(s, "min_freq: '%s' is not a frequency in kHz, 'max' or 'off'", value);
        else if (r == -ERANGE || v == 0 || v > PM_FREQ_MAX_KHZ)
                parse_error(s, "min_freq: '%s' is out of range (1 to %" PRIu32 " kHz)", value, PM_FREQ_MAX_KHZ);
        else {
                c->min_freq_enabled = true;
                c->min_freq_max = false;
                c->min_freq_khz = v;
                c->min_freq_source = here(s);
        }
}

static void handle_pm(ParseState *s, const char *key, const char *value) {
        Config *c = s->config;

        if (streq(key, "cpu_dma_latency")) {
                uint64_t v;
                int r;

                if (streq(value, "off")) {
                        c->cpu_dma_latency_enabled = false;
                        return;
                }
                r = parse_uint64(value, &v);
                if (r < 0 && r != -ERANGE)
                        parse_error(s, "cpu_dma_latency: '%s' is not a number of microseconds or 'off'", value);
                else if (r == -ERANGE || v > DMA_LATENCY_MAX_USEC)
                        parse_error(s, "cpu_dma_latency: '%s' is out of range (0 to %d)", value, DMA_LATENCY_MAX_USEC);
                else {
                        c->cpu_dma_latency_enabled = true;
                        c->cpu_dma_latency_usec = (int32_t) v;
                }
        } else if (streq(key, "governor")) {
                if (streq(value, "off")) {
                        c->governor = mfree(c->governor);
                        return;
                }
                if (!governor_name_is_valid(value)) {
                        parse_error(s, "governor: '%s' is not a governor name (e.g. performance) or 'off'", value);
                        return;
                }
                free(c->governor);
                c->governor = strdup(value);
                if (!c->governor)
                        s->oom = -ENOMEM;
        } else if (streq(key, "resume_latency"))
                handle_pm_resume_latency(s, value);
        else if (streq(key, "resume_latency_cpus"))
                parse_pm_cpus_value(s, key, value, &c->resume_latency_cpus);
        else if (streq(key, "min_freq"))
                handle_pm_min_freq(s, value);
        else if (streq(key, "min_freq_cpus"))
                parse_pm_cpus_value(s, key, value, &c->min_freq_cpus);
        else if (streq(key, "energy_performance_preference")) {
                if (streq(value, "off")) {
                        c->energy_performance_preference = mfree(c->energy_performance_preference);
                        return;
                }
                if (!epp_name_is_valid(value)) {
                        parse_error(s,
                                    "energy_performance_preference: '%s' is not a preference name (e.g. performance, "
                                    "balance_performance) or 'off'",
                                    value);
                        return;
                }
                free(c->energy_performance_preference);
                c->energy_performance_preference = strdup(value);
                if (!c->energy_performance_preference)
                        s->oom = -ENOMEM;
                c->energy_performance_preference_source = here(s);
        } else if (streq(key, "energy_performance_preference_cpus"))
                parse_pm_cpus_value(s, key, value, &c->energy_performance_preference_cpus);
        else if (streq(key, "boost")) {
                if (streq(value, "on"))
                        c->boost = PM_BOOST_ON;
                else if (streq(value, "off"))
                        c->boost = PM_BOOST_OFF;
                else if (streq(value, "keep"))
                        c->boost = PM_BOOST_UNSET;
                else
                        parse_error(s, "boost: '%s' is not 'on', 'off' or 'keep'", value);
        } else
                parse_error(s, "unknown key '%s' in section [pm]", key);
}

bool sysctl_key_is_valid(const char *key) {
        size_t component = 0, components = 0;

        if (isempty(key) || strlen(key) > 255)
                return false;
        for (const char *p = key;; p++) {
                if (*p == '.' || *p == '\0') {
                        if (component == 0)
                                return false; /* leading, trailing or doubled dot */
                        components++;
                        component = 0;
                        if (*p == '\0')
                                break;
                        continue;
                }
                if (!isalnum((unsigned char) *p) && *p != '_' && *p != '-')
                        return false;
                component++;
        }
        return components >= 2;
}

static bool sysctl_value_is_valid(const char *value) {
        if (isempty(value) || strlen(value) > SYSCTL_VALUE_MAX)
                return false;
        for (const char *p = value; *p; p++)
                if (!isprint((unsigned char) *p) && *p != '\t')
                        return false;
        return true;
}

static void handle_sysctl(ParseState *s, const char *key, const char *value) {
        Config *c = s->config;
        SysctlEntry *e = NULL;

        if (!sysctl_key_is_valid(key)) {
                parse_error(s, "'%s' is not a sysctl name (dotted, e.g. net.core.busy_poll; no '/' or '..')", key);
                return;
        }
        if (!sysctl_value_is_valid(value)) {
                parse_error(s, "%s: value must be 1 to %d printable characters", key, SYSCTL_VALUE_MAX);
                return;
        }
        for (size_t i = 0; i < c->n_sysctls; i++)
                if (streq(c->sysctls[i].key, key))
                        e = &c->sysctls[i];
        if (!e) {
                SysctlEntry *a = realloc(c->sysctls, (c->n_sysctls + 1) * sizeof(SysctlEntry));
                if (!a) {
                        s->oom = -ENOMEM;
                        return;
                }
                c->sysctls = a;
                e = &c->sysctls[c->n_sysctls];
                *e = (SysctlEntry) { .key = strdup(key) };
                if (!e->key) {
                        s->oom = -ENOMEM;
                        return;
                }
                c->n_sysctls++;
        }
        free(e->value);
        e->value = strdup(value);
        if (!e->value)
                s->oom = -ENOMEM;
        e->source = here(s);
}

/* path: the key as written (vet_line keeps it from inih). Later wins, as in [sysctl]. */
static void handle_sysfs(ParseState *s, const char *key, const char *value) {
        _cleanup_free_ char *path = TAKE_PTR(s->sysfs_path);
        Config *c = s->config;
        SysfsEntry *e = NULL;
        const char *problem;

        if (!path)
                return; /* vet_line refused the line and said why */
        problem = sysfs_path_problem(path);
        if (problem) {
                parse_error(s, "%s %s", path, problem);
                return;
        }
        problem = sysfs_value_problem(value);
        if (problem) {
                parse_error(s, "%s: %s", path, problem);
                return;
        }
        for (size_t i = 0; i < c->n_sysfs; i++)
                if (streq(c->sysfs[i].path, path))
                        e = &c->sysfs[i];
        if (!e) {
                SysfsEntry *a = realloc(c->sysfs, (c->n_sysfs + 1) * sizeof(SysfsEntry));
                if (!a) {
                        s->oom = -ENOMEM;
                        return;
                }
                c->sysfs = a;
                e = &c->sysfs[c->n_sysfs++];
                *e = (SysfsEntry) { .path = TAKE_PTR(path) };
        }
        free(e->value);
        e->value = strdup(value);
        if (!e->value)
                s->oom = -ENOMEM;
        e->source = here(s);
}

static bool kernel_name_is_valid(const char *name, size_t max) {
        size_t n = strlen(name);
        if (n == 0 || n > max)
                return false;
        for (const char *p = name; *p; p++)
                if (!islower((unsigned char) *p) && !isdigit((unsigned char) *p) && *p != '-' && *p != '_')
                        return false;
        return true;
}

static int nic_add_feature(ParseState *s, NicSection *n, const char *name, bool on) {
        NicFeature *f;

        for (size_t i = 0; i < n->n_features; i++)
                if (streq(n->features[i].name, name)) {
                        n->features[i].on = on;
                        n->features[i].source = here(s);
                        return 0;
                }
        f = realloc(n->features, (n->n_features + 1) * sizeof(NicFeature));
        if (!f)
                return s->oom = -ENOMEM;
        n->features = f;
        f[n->n_features] = (NicFeature) { .name = strdup(name), .on = on, .source = here(s) };
        if (!f[n->n_features].name)
                return s->oom = -ENOMEM;
        n->n_features++;
        return 0;
}

/* ethtool's own shorthands, as the patterns over the kernel's feature names that
 * ethtool(8) defines them by: "tso" is every bit the running kernel names
 * tx-tcp*-segmentation (6.18 added tx-tcp-accecn-segmentation; a fixed list missed it and
 * left TCP segmentation on). The patterns are matched when a NIC is planned. */
static const struct {
        const char *key;
        const char *pattern;
} nic_feature_keys[] = {
        { "gro", "rx-gro" },
        { "lro", "rx-lro" },
        { "gso", "tx-generic-segmentation" },
        { "tso", "tx-tcp*-segmentation" },
};

static void handle_nic(ParseState *s, const char *key, const char *value) {
        NicSection *n;
        EthtoolParam p;
        bool on;

        if (s->current_nic < 0)
                return; /* the header was wrong and is reported */
        n = &s->config->nics[s->current_nic];

        p = ethtool_param_from_string(key);
        if (p >= 0) {
                uint32_t v;

                if (ethtool_param_is_boolean(p)) {
                        if (parse_boolean(value, &on) < 0)
                                {
                        parse_error(s, "%s: '%s' is not on or off", key, value);
                        return;
                }
                        v = on;
                } else {
                        int r = parse_uint32(value, &v);
                        if (r < 0)
                                {
                        parse_error(s, "%s: '%s' is not %s", key, value,
                                                   r == -ERANGE ? "a number below 2^32" : "a non-negative number");
                        return;
                }
                        if (v == 0 && ethtool_param_group(p) != ETHTOOL_GROUP_COALESCE &&
                            p != ETHTOOL_PARAM_RX_CHANNELS && p != ETHTOOL_PARAM_TX_CHANNELS &&
                            p != ETHTOOL_PARAM_COMBINED_CHANNELS)
                                {
                        parse_error(s, "%s: a ring cannot have 0 entries", key);
                        return;
                }
                }
                n->params[p] = (NicParamValue) { .set = true, .value = v, .source = here(s) };
                return;
        }

        for (size_t i = 0; i < ELEMENTSOF(nic_feature_keys); i++)
                if (streq(key, nic_feature_keys[i].key)) {
                        if (parse_boolean(value, &on) < 0)
                                {
                        parse_error(s, "%s: '%s' is not on or off", key, value);
                        return;
                }
                        (void) nic_add_feature(s, n, nic_feature_keys[i].pattern, on);
                        return;
                }

        if (strncmp(key, "feature.", strlen("feature.")) == 0) {
                const char *name = key + strlen("feature.");
                /* ETH_GSTRING_LEN is 32 with the NUL. */
                if (!kernel_name_is_valid(name, 31))
                        {
                        parse_error(s, "'%s' is not a feature name (as ethtool -k prints it, e.g. rx-gro)", name);
                        return;
                }
                if (parse_boolean(value, &on) < 0)
                        {
                        parse_error(s, "%s: '%s' is not on or off", key, value);
                        return;
                }
                (void) nic_add_feature(s, n, name, on);
                return;
        }

        if (streq(key, "qdisc")) {
                /* TCKINDSIZ is 16 with the NUL. */
                if (!kernel_name_is_valid(value, 15))
                        {
                        parse_error(s, "qdisc: '%s' is not a qdisc kind (e.g. fq, pfifo_fast, mq)", value);
                        return;
                }
                free(n->qdisc);
                n->qdisc = strdup(value);
                if (!n->qdisc)
                        s->oom = -ENOMEM;
                n->qdisc_source = here(s);
                return;
        }

        if (streq(key, "irq_cpus")) {
                if (parse_cpu_list_value(s, key, value, NULL, &n->irq_cpus) >= 0)
                        n->irq_cpus_set = true;
                n->irq_cpus_source = here(s);
                return;
        }

        if (streq(key, "rps_cpus") || streq(key, "xps_cpus")) {
                bool rps = key[0] == 'r';
                if (parse_cpu_spec_value(s, key, value, rps ? &n->rps_cpus : &n->xps_cpus) >= 0)
                        *(rps ? &n->rps_cpus_set : &n->xps_cpus_set) = true;
                return;
        }

        if (streq(key, "rps_flow_cnt")) {
                uint32_t v;
                int r = parse_uint32(value, &v);
                /* The kernel rounds a count up to a power of two and reads back the rounded
                 * one: a value that would never read back as written is refused here. */
                if (r < 0 || v > RPS_FLOW_CNT_MAX || (v & (v - 1)) != 0) {
                        parse_error(s, "rps_flow_cnt: '%s' is not 0 or a power of two up to %" PRIu32
                                    " (flow table entries per receive queue, e.g. 4096)", value, RPS_FLOW_CNT_MAX);
                        return;
                }
                n->rps_flow_cnt = v;
                n->rps_flow_cnt_set = true;
                n->rps_flow_cnt_source = here(s);
                return;
        }

        if (streq(key, "txqueuelen")) {
                uint32_t v;
                int r = parse_uint32(value, &v);
                /* IFLA_TXQLEN is a u32; 0 is legal (a device whose qdisc queues nothing). */
                if (r < 0) {
                        parse_error(s, "txqueuelen: '%s' is not %s (packets in the device's transmit queue, e.g. 1000)",
                                    value, r == -ERANGE ? "a number below 2^32" : "a non-negative number");
                        return;
                }
                n->txqueuelen = v;
                n->txqueuelen_set = true;
                n->txqueuelen_source = here(s);
                return;
        }

        parse_error(s, "unknown key '%s' in section [nic \"%s\"]", key, n->glob);
}

static void handle_app(ParseState *s, const char *key, const char *value) {
        AppSection *a;
        bool b;

        if (s->current_app < 0)
                return; /* the header was wrong and is reported */
        a = &s->config->apps[s->current_app];
        if (streq(key, "policy")) {
                if (streq(value, "fifo"))
                        a->policy = SCHED_FIFO;
                else if (streq(value, "rr"))
                        a->policy = SCHED_RR;
                else
                        parse_error(s, "policy: '%s' is not fifo or rr", value);
        } else if (streq(key, "priority")) {
                unsigned v;
                if (parse_unsigned(value, &v) < 0 || v < 1 || v > 99)
                        parse_error(s, "priority: '%s' is not a real-time priority (1 to 99)", value);
                else
                        a->priority = v;
        } else if (streq(key, "hugepages") || streq(key, "mlock")) {
                if (parse_boolean(value, &b) < 0)
                        parse_error(s, "%s: '%s' is not yes or no", key, value);
                else if (streq(key, "hugepages"))
                        a->hugepages = b;
                else
                        a->mlock = b;
        } else
                parse_error(s, "unknown key '%s' in section [%s \"%s\"]", key,
                            app_kind_to_string(a->kind), a->name);
}

static void handle_kthread(ParseState *s, const char *key, const char *value) {
        KthreadSection *k;

        if (s->current_kthread < 0)
                return; /* the header was wrong and is reported */
        k = &s->config->kthread_sections[s->current_kthread];
        if (streq(key, "cpus")) {
                if (streq(value, "housekeeping"))
                        k->cpus_kind = KTHREAD_CPUS_HOUSEKEEPING;
                else if (streq(value, "isolated"))
                        k->cpus_kind = KTHREAD_CPUS_ISOLATED;
                else if (strspn(value, "0123456789") == 0) {
                        parse_error(s, "cpus: '%s' is not a CPU list, 'housekeeping' or 'isolated'", value);
                        return;
                } else if (parse_cpu_list_value(s, key, value, NULL, &k->cpus) >= 0)
                        k->cpus_kind = KTHREAD_CPUS_LIST;
                else
                        return;
                if (k->cpus_kind != KTHREAD_CPUS_LIST)
                        cpuset_done(&k->cpus);
                k->cpus_source = here(s);
        } else if (streq(key, "policy")) {
                k->policy_given = true;
                if (streq(value, "fifo"))
                        k->policy = SCHED_FIFO;
                else if (streq(value, "rr"))
                        k->policy = SCHED_RR;
                else if (streq(value, "other"))
                        k->policy = SCHED_OTHER;
                else {
                        parse_error(s, "policy: '%s' is not fifo, rr or other", value);
                        return;
                }
                k->policy_source = here(s);
        } else if (streq(key, "priority")) {
                unsigned v;
                k->priority_given = true;
                if (parse_unsigned(value, &v) < 0 || v < 1 || v > 99) {
                        parse_error(s, "priority: '%s' is not a real-time priority (1 to 99)", value);
                        return;
                }
                k->priority = v;
                k->priority_source = here(s);
        } else
                parse_error(s, "unknown key '%s' in section [kthread \"%s\"]", key, k->glob);
}

static void handle_noise(ParseState *s, const char *key, const char *value) {
        Config *c = s->config;

        if (streq(key, "cpus"))
                (void) parse_cpu_spec_value(s, key, value, &c->noise_cpus);
        else if (streq(key, "tick_rate_max")) {
                uint32_t v;
                if (parse_uint32(value, &v) < 0 || v > 100000)
                        parse_error(s, "tick_rate_max: '%s' is not a number of ticks per second (0 to 100000)", value);
                else
                        c->noise_tick_rate_max = v;
        } else if (streq(key, "alert_interval")) {
                uint64_t usec;
                if (streq(value, "off"))
                        c->noise_alert_interval_usec = 0;
                else if (parse_duration_usec(value, &usec) < 0)
                        parse_error(s, "alert_interval: '%s' is not a duration (e.g. 10min, 1h) or 'off'", value);
                else if (usec < USEC_PER_SEC || usec > 24 * 3600 * USEC_PER_SEC)
                        parse_error(s, "alert_interval: '%s' is out of range (1s to 24h)", value);
                else
                        c->noise_alert_interval_usec = usec;
        } else if (streq(key, "gate")) {
                bool v;
                if (streq(value, "perf"))
                        c->noise_gate = true;
                else if (streq(value, "off") || (parse_boolean(value, &v) >= 0 && !v))
                        c->noise_gate = false;
                else
                        parse_error(s, "gate: '%s' is neither 'perf' nor 'off'", value);
        } else
                parse_error(s, "unknown key '%s' in section [noise]", key);
}

static int config_ini_handler(void *user, const char *section, const char *name, const char *raw_value) {
        static const struct {
                const char *name;
                void (*handle)(ParseState *s, const char *key, const char *value);
        } sections[] = {
                { "daemon", handle_daemon },
                { "cpus", handle_cpus },
                { "irq", handle_irq },
                { "pm", handle_pm },
                { "sysctl", handle_sysctl },
                { "sysfs", handle_sysfs },
                { "nic", handle_nic },
                { "app", handle_app },
                { "kthread", handle_kthread },
                { "noise", handle_noise },
        };
        ParseState *s = user;
        _cleanup_free_ char *value = strdup(raw_value);
        char *v;

        if (!value) {
                s->oom = -ENOMEM;
                return 1;
        }
        /* inih strips ';' inline comments; '#' ones are ours. */
        for (char *p = value; *p; p++)
                if (*p == '#' && (p == value || isspace((unsigned char) p[-1]))) {
                        *p = '\0';
                        break;
                }
        v = strstrip(value);

        if (isempty(section)) {
                parse_error(s, "key '%s' outside of any section", name);
                return 1;
        }
        for (size_t i = 0; i < ELEMENTSOF(sections); i++)
                if (streq(section, sections[i].name)) {
                        /* [sysctl] and [sysfs] name their keys in their own messages. */
                        if (isempty(v) && !streq(section, "sysctl") && !streq(section, "sysfs")) {
                                parse_error(s, "%s: empty value", name);
                                return 1;
                        }
                        sections[i].handle(s, name, v);
                        return 1;
                }
        /* Reported once per section header by the reader; keys inside are skipped. */
        return 1;
}

static const char *const known_sections[] = { "daemon", "cpus", "irq", "pm", "sysctl", "sysfs", "noise" };

/* [nic "GLOB"]: the glob may itself hold ']' (eth[01]), so the quotes delimit it. Each
 * header starts a new section, even with a glob seen before: order decides overrides. */
static void vet_nic_header(ParseState *s, const char *p, char *out) {
        const char *q = p + 4, *close, *rest;
        _cleanup_free_ char *glob = NULL;
        NicSection *a;

        strcpy(out, "[nic]\n");
        s->current_nic = -1;
        while (isspace((unsigned char) *q))
                q++;
        if (*q != '"' || !(close = strchr(q + 1, '"'))) {
                parse_error(s, "expected [nic \"PATTERN\"], e.g. [nic \"eth*\"]");
                return;
        }
        rest = close + 1;
        while (isspace((unsigned char) *rest))
                rest++;
        if (*rest != ']') {
                parse_error(s, "expected ']' after the interface pattern");
                return;
        }
        rest++;
        while (isspace((unsigned char) *rest))
                rest++;
        if (*rest && *rest != '#' && *rest != ';') {
                parse_error(s, "unexpected text after section header: '%s'", rest);
                return;
        }
        glob = strndup(q + 1, (size_t) (close - q - 1));
        if (!glob) {
                s->oom = -ENOMEM;
                return;
        }
        /* IFNAMSIZ is 16; a pattern may be longer only by its wildcards, keep it sane. */
        if (!glob_is_valid(glob) || strlen(glob) > 64) {
                parse_error(s, "'%s' is not a valid interface name pattern", glob);
                return;
        }
        a = realloc(s->config->nics, (s->config->n_nics + 1) * sizeof(NicSection));
        if (!a) {
                s->oom = -ENOMEM;
                return;
        }
        s->config->nics = a;
        a[s->config->n_nics] = (NicSection) { .glob = TAKE_PTR(glob), .source = here(s) };
        s->current_nic = (ssize_t) s->config->n_nics++;
}

/* The quoted argument of a section header: [WORD "ARG"]. NULL (reported) if malformed. */
static char *section_argument(ParseState *s, const char *p, size_t word_len, const char *example) {
        const char *q = p + word_len, *close, *rest;

        while (isspace((unsigned char) *q))
                q++;
        if (*q != '"' || !(close = strchr(q + 1, '"'))) {
                parse_error(s, "expected %s", example);
                return NULL;
        }
        rest = close + 1;
        while (isspace((unsigned char) *rest))
                rest++;
        if (*rest != ']') {
                parse_error(s, "expected ']' after the quoted name");
                return NULL;
        }
        rest++;
        while (isspace((unsigned char) *rest))
                rest++;
        if (*rest && *rest != '#' && *rest != ';') {
                parse_error(s, "unexpected text after section header: '%s'", rest);
                return NULL;
        }
        return strndup(q + 1, (size_t) (close - q - 1));
}

static void vet_app_header(ParseState *s, const char *p, AppKind kind, char *out) {
        _cleanup_free_ char *name = NULL;
        AppSection *a;

        strcpy(out, "[app]\n");
        s->current_app = -1;
        name = section_argument(s, p, 8,
                                kind == APP_SERVICE ? "[service \"NAME\"], e.g. [service \"trading-engine\"]"
                                                    : "[process \"COMM\"], e.g. [process \"matcher\"]");
        if (!name) {
                strcpy(out, "[?]\n");
                return;
        }
        /* A unit name (without .service), or a comm: TASK_COMM_LEN is 16 with the NUL. */
        if (kind == APP_SERVICE) {
                size_t n = strlen(name);
                if (n > 8 && streq(name + n - 8, ".service"))
                        name[n - 8] = '\0';
        }
        if (kind == APP_SERVICE ? !unit_name_is_valid(name, 247) : (strlen(name) == 0 || strlen(name) > 15 || !utf8_is_valid(name))) {
                parse_error(s, "'%s' is not a valid %s", name, kind == APP_SERVICE ? "unit name" : "process name (at most 15 characters)");
                strcpy(out, "[?]\n");
                return;
        }
        a = realloc(s->config->apps, (s->config->n_apps + 1) * sizeof(AppSection));
        if (!a) {
                s->oom = -ENOMEM;
                return;
        }
        s->config->apps = a;
        a[s->config->n_apps] = (AppSection) { .kind = kind, .name = TAKE_PTR(name), .source = here(s), .policy = -1 };
        s->current_app = (ssize_t) s->config->n_apps++;
}

/* [kthread "GLOB"]: kernel thread names hold '/' (and patterns a '*' after it), so the
 * quotes delimit the glob, as for [nic]. Each header starts a new section. */
static void vet_kthread_header(ParseState *s, const char *p, char *out) {
        _cleanup_free_ char *glob = NULL;
        KthreadSection *a;

        strcpy(out, "[kthread]\n");
        s->current_kthread = -1;
        glob = section_argument(s, p, strlen("[kthread"), "[kthread \"GLOB\"], e.g. [kthread \"ksoftirqd/*\"]");
        if (!glob) {
                strcpy(out, "[?]\n");
                return;
        }
        /* A thread's name is at most 63 characters (a workqueue worker's, with its queue);
         * a pattern may be longer only by its wildcards, keep it sane. */
        if (!glob_is_valid(glob) || strlen(glob) > 64) {
                parse_error(s, "'%s' is not a valid kernel thread name pattern", glob);
                strcpy(out, "[?]\n");
                return;
        }
        a = realloc(s->config->kthread_sections, (s->config->n_kthread_sections + 1) * sizeof(KthreadSection));
        if (!a) {
                s->oom = -ENOMEM;
                return;
        }
        s->config->kthread_sections = a;
        a[s->config->n_kthread_sections] = (KthreadSection) { .glob = TAKE_PTR(glob), .source = here(s), .policy = -1 };
        s->current_kthread = (ssize_t) s->config->n_kthread_sections++;
}

/* Vets one physical line, handing inih either the line (trimmed, so it never sees an
 * indented continuation) or an empty line in place of one that is wrong. */
static void vet_line(ParseState *s, char *line, char *out, int num) {
        char *p = strstrip(line);
        size_t n;

        out[0] = '\0';
        if (*p == '\0' || *p == '#' || *p == ';')
                return;
        s->config->content_lines++;

        if (*p == '[')
                s->in_sysfs = false; /* until the header turns out to be [sysfs] */
        if (strncmp(p, "[nic", 4) == 0 && (p[4] == ']' || isspace((unsigned char) p[4]) || p[4] == '"')) {
                vet_nic_header(s, p, out);
                return;
        }
        if (strncmp(p, "[kthread", 8) == 0 && (p[8] == ']' || isspace((unsigned char) p[8]) || p[8] == '"')) {
                vet_kthread_header(s, p, out);
                return;
        }
        for (AppKind k = APP_SERVICE; k <= APP_PROCESS; k++) {
                const char *word = k == APP_SERVICE ? "[service" : "[process";
                size_t len = strlen(word);
                if (strncmp(p, word, len) == 0 &&
                    (p[len] == ']' || isspace((unsigned char) p[len]) || p[len] == '"')) {
                        vet_app_header(s, p, k, out);
                        return;
                }
        }

        if (*p == '[') {
                char *end = strchr(p, ']'), *rest;
                bool known = false;

                /* A broken or unknown header still starts a section, "[?]", so that the keys
                 * under it are skipped rather than reported as outside any section (or,
                 * worse, taken as keys of the section before). inih is handed only the
                 * canonical "[name]", never text it might read differently. */
                strcpy(out, "[?]\n");
                if (!end) {
                        parse_error(s, "section header without ']'");
                        return;
                }
                rest = strstrip(end + 1);
                if (*rest && *rest != '#' && *rest != ';') {
                        parse_error(s, "unexpected text after section header: '%s'", rest);
                        return;
                }
                *end = '\0';
                for (size_t i = 0; i < ELEMENTSOF(known_sections); i++)
                        known = known || streq(p + 1, known_sections[i]);
                if (!known) {
                        parse_error(s, "unknown section [%s]", p + 1);
                        return;
                }
                snprintf(out, (size_t) num, "[%s]\n", p + 1);
                s->in_sysfs = streq(p + 1, "sysfs");
                return;
        }

        /* key = value: the key is a plain word. inih would also split at ':' and take
         * " ;" before the '=' as a comment (dropping the line silently), so neither is
         * left for it to find: the line it gets is rebuilt as "key=value". */
        size_t eq = strcspn(p, "=");
        char *key, *value;

        if (p[eq] != '=') {
                parse_error(s, "expected 'key = value' or '[section]'");
                return;
        }
        p[eq] = '\0';
        key = strstrip(p);
        value = strstrip(p + eq + 1);
        if (*key == '\0') {
                parse_error(s, "missing key before '='");
                return;
        }
        if (s->in_sysfs) {
                /* A [sysfs] key is a path, and a path may hold ':' (a PCI address), at which
                 * inih would split it, and '[' (a glob set). So the path stays here, and
                 * inih gets the value under a fixed key; handle_sysfs() takes the path back
                 * (inih handles each line before it reads the next). */
                if (strlen(value) + strlen("path=") + 2 > (size_t) num) {
                        parse_error(s, "line too long (at most %d characters)", num - 2);
                        return;
                }
                free(s->sysfs_path);
                s->sysfs_path = strdup(key);
                if (!s->sysfs_path) {
                        s->oom = -ENOMEM;
                        return;
                }
                snprintf(out, (size_t) num, "path=%s\n", value);
                return;
        }
        for (const char *k = key; *k; k++)
                if (isspace((unsigned char) *k) || *k == ';' || *k == '#' || *k == ':' || *k == '[' || *k == ']') {
                        parse_error(s, "'%s' is not a key (keys are single words)", key);
                        return;
                }
        n = strlen(key) + 1 + strlen(value);
        if ((int) n + 2 > num) {
                parse_error(s, "line too long (at most %d characters)", num - 2);
                return;
        }
        snprintf(out, (size_t) num, "%s=%s\n", key, value);
}

static void digest_byte(Config *c, unsigned char b) {
        c->digest = (c->digest ^ b) * FNV1A_PRIME;
}

static int next_char(ParseState *s) {
        int ch;

        if (s->f)
                ch = getc(s->f);
        else
                ch = *s->cursor == '\0' ? EOF : (unsigned char) *s->cursor++;
        if (ch != EOF)
                digest_byte(s->config, (unsigned char) ch);
        return ch;
}

static char *config_ini_reader(char *str, int num, void *stream) {
        ParseState *s = stream;
        char buf[CONFIG_LINE_MAX + 1];
        size_t len = 0;
        bool got = false, nul = false;
        int ch;

        while ((ch = next_char(s)) != EOF) {
                got = true;
                if (ch == '\n')
                        break;
                if (ch == '\0')
                        nul = true;
                if (len < sizeof(buf))
                        buf[len] = (char) ch;
                len++;
        }
        if (!got)
                return NULL;
        s->line++;
        str[0] = '\0';

        /* A UTF-8 byte order mark on the first line is not part of it (inih agrees). */
        if (s->line == 1 && len >= 3 && len <= CONFIG_LINE_MAX && memcmp(buf, "\xef\xbb\xbf", 3) == 0) {
                memmove(buf, buf + 3, len - 3);
                len -= 3;
        }
        if (len > CONFIG_LINE_MAX)
                parse_error(s, "line too long (at most %d characters)", CONFIG_LINE_MAX);
        else if (nul)
                parse_error(s, "NUL byte in line");
        else {
                buf[len] = '\0';
                vet_line(s, buf, str, num);
        }
        return str;
}

static int config_add_file_name(Config *c, const char *name, const char **ret) {
        char **files = realloc(c->files, (c->n_files + 1) * sizeof(char *));
        if (!files)
                return -ENOMEM;
        c->files = files;
        /* The name and a NUL separate one file's bytes from the next one's in the digest. */
        for (const char *p = name;; p++) {
                digest_byte(c, (unsigned char) *p);
                if (*p == '\0')
                        break;
        }
        c->files[c->n_files] = strdup(name);
        if (!c->files[c->n_files])
                return -ENOMEM;
        *ret = c->files[c->n_files++];
        return 0;
}

static int config_parse(Config *c, const char *name, FILE *f, const char *text, ErrorList *errors) {
        ParseState s = { .config = c, .errors = errors, .f = f, .cursor = text ?: "", .current_nic = -1, .current_app = -1,
                       .current_kthread = -1 };
        int r;

        r = config_add_file_name(c, name, &s.file);
        if (r < 0)
                return r;
        /* Every handler returns 1 and every line is vetted and rebuilt, so inih should
         * report nothing; if it ever does, that line was not understood: say so. */
        r = ini_parse_stream(config_ini_reader, &s, config_ini_handler, &s);
        s.sysfs_path = mfree(s.sysfs_path);
        if (r > 0)
                error_list_add(errors, "%s:%d: line not understood", name, r);
        if (f && ferror(f)) {
                error_list_add(errors, "%s: read error", name);
                return -EIO;
        }
        return s.oom;
}

int config_parse_string(Config *c, const char *name, const char *text, ErrorList *errors) {
        return config_parse(c, name, NULL, text, errors);
}

/* Like sshd's StrictModes: a file lowlatd acts on as root must be changeable by root (or
 * lowlatd's own user) only, or anyone who can write it can retune the host. */
static int check_trusted(const char *path, const struct stat *st, ErrorList *errors) {
        if (st->st_uid != 0 && st->st_uid != geteuid()) {
                error_list_add(errors, "%s: owned by uid %u, not root: refusing to use it (chown root %s)", path,
                               (unsigned) st->st_uid, path);
                return -EPERM;
        }
        /* A shared directory is safe with the sticky bit: others cannot replace our files. */
        if ((st->st_mode & (S_IWGRP | S_IWOTH)) && !(S_ISDIR(st->st_mode) && (st->st_mode & S_ISVTX))) {
                error_list_add(errors, "%s: writable by %s (mode %04o): refusing to use it (chmod go-w %s)", path,
                               st->st_mode & S_IWOTH ? "everyone" : "its group", (unsigned) (st->st_mode & 07777), path);
                return -EPERM;
        }
        return 0;
}

static int check_trusted_parent(const char *path, ErrorList *errors) {
        _cleanup_free_ char *dir = strdup(path);
        struct stat st;
        char *slash;

        if (!dir)
                return -ENOMEM;
        slash = strrchr(dir, '/');
        if (!slash)
                strcpy(dir, ".");
        else if (slash == dir)
                dir[1] = '\0';
        else
                *slash = '\0';
        if (stat(dir, &st) < 0) {
                int r = negative_errno();
                error_list_add(errors, "%s: cannot stat: %s", dir, strerror(-r));
                return r;
        }
        return check_trusted(dir, &st, errors);
}

int config_parse_file(Config *c, const char *path, ErrorList *errors) {
        _cleanup_fclose_ FILE *f = NULL;
        struct stat st;
        int r;

        /* O_NONBLOCK: a FIFO (or a device) put in place of the config must not hang the
         * daemon in open(); anything but a regular file is refused below. */
        _cleanup_close_ int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
        if (fd < 0) {
                r = negative_errno();
                error_list_add(errors, "%s: cannot open: %s", path, strerror(-r));
                return r;
        }
        if (fstat(fd, &st) < 0) {
                r = negative_errno();
                error_list_add(errors, "%s: cannot stat: %s", path, strerror(-r));
                return r;
        }
        if (!S_ISREG(st.st_mode)) {
                error_list_add(errors, "%s: not a regular file", path);
                return -EINVAL;
        }
        f = fdopen(fd, "r");
        if (!f) {
                r = negative_errno();
                error_list_add(errors, "%s: cannot read: %s", path, strerror(-r));
                return r;
        }
        fd = -1; /* owned by f */
        r = check_trusted(path, &st, errors);
        if (r < 0)
                return r;
        r = check_trusted_parent(path, errors);
        if (r < 0)
                return r;
        return config_parse(c, path, f, NULL, errors);
}

static int conf_filter(const struct dirent *d) {
        size_t n = strlen(d->d_name);
        return d->d_name[0] != '.' && n > 5 && streq(d->d_name + n - 5, ".conf");
}

static size_t config_file_index(const Config *c, const char *file) {
        for (size_t i = 0; i < c->n_files; i++)
                if (c->files[i] == file)
                        return i;
        return SIZE_MAX;
}

/* Whether a was read after b: a later file, or a later line of the same file. */
static bool config_source_is_later(const Config *c, const ConfigSource *a, const ConfigSource *b) {
        size_t ia = config_file_index(c, a->file), ib = config_file_index(c, b->file);
        return ia != ib ? ia > ib && ia != SIZE_MAX : a->line > b->line;
}

/* A section's policy and priority are one value: a real-time policy needs its priority
 * beside it, and no other policy takes one. */
static void validate_kthread_section(const KthreadSection *k, ErrorList *errors) {
        if (k->priority > 0 && k->policy < 0 && !k->policy_given)
                error_list_add(errors, "%s:%u: priority needs policy = fifo or rr in the same [kthread \"%s\"] section",
                               k->priority_source.file, k->priority_source.line, k->glob);
        else if (k->priority > 0 && k->policy == SCHED_OTHER)
                error_list_add(errors, "%s:%u: priority: policy = other takes no priority (it is for fifo and rr)",
                               k->priority_source.file, k->priority_source.line);
        else if ((k->policy == SCHED_FIFO || k->policy == SCHED_RR) && !k->priority_given)
                error_list_add(errors, "%s:%u: policy = %s needs priority = 1..99 in the same section",
                               k->policy_source.file, k->policy_source.line, k->policy == SCHED_FIFO ? "fifo" : "rr");
}

void config_validate(const Config *c, ErrorList *errors) {
        if (!c->isolated_auto && c->housekeeping_explicit &&
            cpuset_intersects(&c->isolated, &c->housekeeping)) {
                /* Name the later of the two lines: that is the one the admin just wrote. */
                const ConfigSource *at = config_source_is_later(c, &c->isolated_source, &c->housekeeping_source)
                                                 ? &c->isolated_source
                                                 : &c->housekeeping_source;
                _cleanup_cpuset_ CPUSet both = CPUSET_EMPTY;
                _cleanup_free_ char *list = NULL;
                if (cpuset_copy(&both, &c->isolated) >= 0) {
                        cpuset_and(&both, &c->housekeeping);
                        list = cpuset_format_list(&both);
                }
                error_list_add(errors, "%s:%u: isolated and housekeeping CPU sets overlap (CPUs %s)",
                               at->file, at->line, list ?: "?");
        }
        for (size_t i = 0; i < c->n_kthread_sections; i++)
                validate_kthread_section(&c->kthread_sections[i], errors);
        /* One file, one keeper: [sysctl] would compare the mask as text and fight. */
        for (size_t i = 0; c->rps_default_mask_set && i < c->n_sysctls; i++)
                if (streq(c->sysctls[i].key, "net.core.rps_default_mask"))
                        error_list_add(errors, "%s:%u: net.core.rps_default_mask is kept by [cpus] rps_default_mask "
                                       "(%s:%u); set it in one place",
                                       c->sysctls[i].source.file, c->sysctls[i].source.line,
                                       c->rps_default_mask.source.file, c->rps_default_mask.source.line);
}

int config_load(const char *path, Config **ret, ErrorList *errors) {
        _cleanup_config_ Config *c = config_new();
        _cleanup_free_ char *dropin_dir = NULL;
        struct dirent **entries = NULL;
        size_t errors_before = errors->n;
        int n, r;

        if (!c)
                return -ENOMEM;
        r = config_parse_file(c, path, errors);
        if (r == -ENOMEM)
                return r;
        /* A main file with nothing in it is far more often a truncated write (an editor
         * crash, a full disk) than an intent to drop the whole posture. */
        if (r >= 0 && c->content_lines == 0)
                error_list_add(errors, "%s: the file is empty (no section or key); refusing it, as it would drop "
                               "the whole posture (an intentionally empty posture needs one section header, e.g. [daemon])",
                               path);

        dropin_dir = strdup_printf("%s.d", path);
        if (!dropin_dir)
                return -ENOMEM;
        n = scandir(dropin_dir, &entries, conf_filter, alphasort);
        if (n < 0 && errno != ENOENT && errno != ENOTDIR)
                error_list_add(errors, "%s: cannot read drop-in directory: %s", dropin_dir, strerror(errno));
        for (int i = 0; i < n; i++) {
                _cleanup_free_ char *file = strdup_printf("%s/%s", dropin_dir, entries[i]->d_name);
                if (!file)
                        r = -ENOMEM;
                else
                        r = config_parse_file(c, file, errors);
                free(entries[i]);
                if (r == -ENOMEM) {
                        for (int j = i + 1; j < n; j++)
                                free(entries[j]);
                        free(entries);
                        return r;
                }
        }
        free(entries);

        config_validate(c, errors);
        if (errors->n > errors_before)
                return -EINVAL;
        *ret = TAKE_PTR(c);
        return 0;
}
