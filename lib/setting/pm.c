/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The per-CPU power settings of [pm] beyond the governor: resume_latency (a CPU's own
 * wake-up latency limit, power/pm_qos_resume_latency_us), min_freq (cpufreq's
 * scaling_min_freq, clamped to what the driver offers), energy_performance_preference
 * (where the driver offers one) and boost (host-wide: cpufreq/boost, or intel_pstate's
 * no_turbo read the other way round). Each is one sysfs file per CPU, kept through
 * inotify and the scan like the governor. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "config/keys.h"
#include "setting/file.h"
#include "setting/pm.h"
#include "setting/table.h"
#include "basic/util.h"

#define CPU_DIR "sys/devices/system/cpu"

typedef struct PmSetting {
        FileSetting file_setting;
        /* Why this host cannot have the setting, found while planning (no cpufreq at all,
         * no boost control): reported as unsupported, never read or written. */
        char *refused;
        /* boost through intel_pstate/no_turbo, where 1 means off. */
        bool inverted;
} PmSetting;

#define PM(s) ((PmSetting *) (s))

static int pm_setting_refuse(Setting *s, const char *fmt, ...) _printf_(2, 3);
static int pm_setting_refuse(Setting *s, const char *fmt, ...) {
        va_list ap;
        char *text;

        va_start(ap, fmt);
        text = strdup_vprintf(fmt, ap);
        va_end(ap);
        if (!text)
                return -ENOMEM;
        free(PM(s)->refused);
        PM(s)->refused = text;
        return 0;
}

/* Whether CPU cpu is gone or offline now: its files went with it, which is not the host
 * lacking the feature. The posture is rebuilt when the online CPUs change. */
static bool cpu_is_offline(SettingContext *rc, unsigned cpu) {
        _cleanup_free_ char *dir = strdup_printf(CPU_DIR "/cpu%u", cpu), *online = NULL;

        if (!dir)
                return false;
        if (!host_path_exists(rc->host, dir))
                return true;
        return host_read_filef(rc->host, &online, CPU_DIR "/cpu%u/online", cpu) >= 0 && streq(strstrip(online), "0");
}

static unsigned pm_setting_cpu(const Setting *s) {
        unsigned cpu = 0;

        (void) sscanf(s->object, "cpu%u", &cpu);
        return cpu;
}

/* missing: why a file that is not there makes the setting unsupported. */
static int pm_read(Setting *s, SettingContext *rc, char *buf, size_t size, ReconcileFlags flags, const char *missing) {
        SettingFile *f = &PM(s)->file_setting.file;
        int r;

        if (PM(s)->refused) {
                setting_set_reason(s, "%s", PM(s)->refused);
                return -EOPNOTSUPP;
        }
        r = setting_file_read(f, rc, buf, size, flags);
        if (r == -ENOENT) {
                if (strncmp(s->object, "cpu", 3) == 0 && cpu_is_offline(rc, pm_setting_cpu(s))) {
                        setting_set_reason(s, "CPU %u went offline", pm_setting_cpu(s));
                        return -ENOENT;
                }
                setting_set_reason(s, "%s (/%s)", missing, f->path);
                return -EOPNOTSUPP;
        }
        if (r < 0)
                setting_set_reason(s, "reading /%s failed: %s", f->path, strerror(-r));
        return r;
}

static int pm_watch_path(const Setting *s, unsigned i, char *buf, size_t size) {
        if (PM(s)->refused)
                return 0;
        return file_setting_watch_path(s, i, buf, size);
}

static void pm_done(Setting *s) {
        file_setting_done(s);
        free(PM(s)->refused);
}

#define PM_SETTING_OPS                         \
        .object_size = sizeof(PmSetting),      \
        .group = SETTING_GROUP_HOST,           \
        .watch_path = pm_watch_path,           \
        .inherit = file_setting_inherit,       \
        .release = file_setting_release,       \
        .done = pm_done

typedef int (*PmCpuConstructor)(const Host *h, unsigned cpu, const Posture *p, Setting **ret);

/* One setting per online CPU of cpus. For a cpufreq file (cpufreq_value is then the value
 * asked), a host where none of them has a cpufreq directory gets one unsupported setting
 * with the reason instead of one per CPU: a VM without cpufreq says so once. */
static int pm_plan_cpus(SettingTable *t, const Host *h, const Posture *p, SettingKind kind, const CPUSet *cpus,
                        const char *cpufreq_value, PmCpuConstructor constructor) {
        _cleanup_cpuset_ CPUSet selected = CPUSET_EMPTY;
        bool any_cpufreq = false;
        int r;

        if (cpuset_copy(&selected, cpus) < 0)
                return -ENOMEM;
        cpuset_and(&selected, &p->online);
        if (cpuset_is_empty(&selected))
                return 0;
        if (cpufreq_value) {
                CPUSET_FOREACH(cpu, &selected) {
                        _cleanup_free_ char *dir = strdup_printf(CPU_DIR "/cpu%d/cpufreq", cpu);
                        if (!dir)
                                return -ENOMEM;
                        if (host_path_exists(h, dir)) {
                                any_cpufreq = true;
                                break;
                        }
                }
                if (!any_cpufreq) {
                        _cleanup_free_ char *list = cpuset_format_list(&selected);
                        Setting *s = NULL;

                        if (!list)
                                return -ENOMEM;
                        r = file_setting_new(kind, strdup(CPU_DIR "/cpufreq"), "cpufreq", cpufreq_value, &s);
                        if (r >= 0)
                                r = pm_setting_refuse(s,
                                                      "no cpufreq driver on this host (no /" CPU_DIR
                                                      "/cpuN/cpufreq for %s %s)",
                                                      cpuset_count(&selected) == 1 ? "CPU" : "CPUs", list);
                        if (r < 0) {
                                setting_free(s);
                                return r;
                        }
                        return table_add(t, s);
                }
        }
        CPUSET_FOREACH(cpu, &selected) {
                Setting *s = NULL;

                r = constructor(h, (unsigned) cpu, p, &s);
                if (r >= 0)
                        r = table_add(t, s);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* --- resume_latency --- */

int setting_new_resume_latency(unsigned cpu, const char *value, Setting **ret) {
        return file_setting_new_cpu(SETTING_RESUME_LATENCY, cpu, "power/pm_qos_resume_latency_us", value, ret);
}

static int resume_latency_read(Setting *s, SettingContext *rc, char *buf, size_t size, ReconcileFlags flags) {
        return pm_read(s, rc, buf, size, flags, "the kernel exposes no wake-up latency limit for this CPU");
}

static int resume_latency_construct(const Host *h, unsigned cpu, const Posture *p, Setting **ret) {
        return setting_new_resume_latency(cpu, p->config->resume_latency, ret);
}

static int resume_latency_plan(SettingTable *t, const Host *h, const Posture *p) {
        if (!p->config->resume_latency)
                return 0;
        return pm_plan_cpus(t, h, p, SETTING_RESUME_LATENCY, &p->resume_latency_cpus, NULL,
                            resume_latency_construct);
}

static const char *const resume_latency_files[] = {
        CPU_DIR "/cpu*/power/pm_qos_resume_latency_us",
        NULL,
};

/* What the file reads: n/a (no limit) or microseconds, 0 being the kernel's "any". */
static const char *resume_latency_original_problem(const Setting *s, SettingContext *rc, const char *value) {
        uint64_t v;

        (void) s;
        (void) rc;
        if (streq(value, "n/a"))
                return NULL;
        return parse_uint64(value, &v) < 0 || v > PM_RESUME_LATENCY_MAX_USEC ? "not microseconds or n/a" : NULL;
}

const SettingVTable resume_latency_vtable = {
        PM_SETTING_OPS,
        .owns = resume_latency_files,
        .read = resume_latency_read,
        .write = file_setting_write,
        .original_problem = resume_latency_original_problem,
        .plan = resume_latency_plan,
};

/* --- min_freq --- */

/* A frequency file of CPU cpu's cpufreq directory, in kHz; 0 when it is missing or not a
 * number. */
static uint64_t read_khz(const Host *h, unsigned cpu, const char *name) {
        _cleanup_free_ char *text = NULL;
        uint64_t v;

        if (host_read_filef(h, &text, CPU_DIR "/cpu%u/cpufreq/%s", cpu, name) < 0 || parse_uint64(strstrip(text), &v) < 0)
                return 0;
        return v;
}

int pm_min_freq_clamp(uint64_t asked_khz, bool max, uint64_t cpuinfo_min, uint64_t cpuinfo_max, uint64_t scaling_max,
                      uint64_t *ret_khz, const char **ret_bound) {
        /* The kernel keeps scaling_min_freq at or below scaling_max_freq, whatever is written
         * (a higher request reads back lower and would look like a failed write). */
        uint64_t top = cpuinfo_max, khz = asked_khz;
        const char *top_name = "cpuinfo_max_freq", *bound = NULL;

        if (scaling_max > 0 && (top == 0 || scaling_max < top)) {
                top = scaling_max;
                top_name = "scaling_max_freq";
        }
        if (max) {
                if (top == 0)
                        return -EOPNOTSUPP;
                *ret_khz = top;
                *ret_bound = NULL;
                return 0;
        }
        if (top > 0 && khz > top) {
                khz = top;
                bound = top_name;
        } else if (cpuinfo_min > 0 && khz < cpuinfo_min) {
                khz = cpuinfo_min;
                bound = "cpuinfo_min_freq";
        }
        *ret_khz = khz;
        *ret_bound = bound;
        return 0;
}

int setting_new_min_freq(const Host *h, unsigned cpu, const Config *c, Setting **ret) {
        _cleanup_(setting_freep) Setting *s = NULL;
        _cleanup_free_ char *desired = NULL;
        uint64_t khz = 0;
        const char *bound = NULL;
        int r;

        r = pm_min_freq_clamp(c->min_freq_khz, c->min_freq_max, read_khz(h, cpu, "cpuinfo_min_freq"),
                              read_khz(h, cpu, "cpuinfo_max_freq"), read_khz(h, cpu, "scaling_max_freq"), &khz, &bound);
        desired = r < 0 ? strdup("max") : strdup_printf("%" PRIu64, khz);
        if (!desired)
                return -ENOMEM;
        r = file_setting_new_cpu(SETTING_MIN_FREQ, cpu, "cpufreq/scaling_min_freq", desired, &s);
        if (r < 0)
                return r;
        if (streq(desired, "max") &&
            pm_setting_refuse(s, "the cpufreq driver of CPU %u gives no highest frequency (no cpuinfo_max_freq or "
                                 "scaling_max_freq)", cpu) < 0)
                return -ENOMEM;
        if (bound && !(s->clamped = strdup_printf("asked %" PRIu64 " kHz, %s is %" PRIu64 " kHz", c->min_freq_khz, bound,
                                                  khz)))
                return -ENOMEM;
        *ret = TAKE_PTR(s);
        return 0;
}

static int min_freq_read(Setting *s, SettingContext *rc, char *buf, size_t size, ReconcileFlags flags) {
        return pm_read(s, rc, buf, size, flags, "no cpufreq driver for this CPU");
}

static int min_freq_construct(const Host *h, unsigned cpu, const Posture *p, Setting **ret) {
        return setting_new_min_freq(h, cpu, p->config, ret);
}

static int min_freq_plan(SettingTable *t, const Host *h, const Posture *p) {
        const Config *c = p->config;
        char asked[32];

        if (!c->min_freq_enabled)
                return 0;
        if (c->min_freq_max)
                snprintf(asked, sizeof(asked), "max");
        else
                snprintf(asked, sizeof(asked), "%" PRIu64, c->min_freq_khz);
        return pm_plan_cpus(t, h, p, SETTING_MIN_FREQ, &p->min_freq_cpus, asked, min_freq_construct);
}

/* cpuN/cpufreq is a link to cpufreq/policyN on most drivers: both spellings. */
static const char *const min_freq_files[] = {
        CPU_DIR "/cpu*/cpufreq/scaling_min_freq",
        CPU_DIR "/cpufreq/policy*/scaling_min_freq",
        NULL,
};

/* A frequency in kHz. */
static const char *min_freq_original_problem(const Setting *s, SettingContext *rc, const char *value) {
        (void) s;
        (void) rc;
        return setting_number_problem(value, UINT32_MAX);
}

const SettingVTable min_freq_vtable = {
        PM_SETTING_OPS,
        .owns = min_freq_files,
        .read = min_freq_read,
        .write = file_setting_write,
        .original_problem = min_freq_original_problem,
        .plan = min_freq_plan,
};

/* --- energy_performance_preference --- */

int setting_new_energy_performance_preference(unsigned cpu, const char *name, Setting **ret) {
        return file_setting_new_cpu(SETTING_ENERGY_PERFORMANCE_PREFERENCE, cpu, "cpufreq/energy_performance_preference",
                                    name, ret);
}

static int epp_read(Setting *s, SettingContext *rc, char *buf, size_t size, ReconcileFlags flags) {
        _cleanup_free_ char *driver = NULL;
        int r = pm_read(s, rc, buf, size, flags, "the cpufreq driver offers no energy_performance_preference");

        /* Name the driver: it is what decides (intel_pstate and amd-pstate in active mode
         * offer one, acpi-cpufreq never does). */
        if (r == -EOPNOTSUPP && !PM(s)->refused &&
            host_read_filef(rc->host, &driver, CPU_DIR "/cpu%u/cpufreq/scaling_driver", pm_setting_cpu(s)) >= 0)
                setting_set_reason(s, "the cpufreq driver (%s) offers no energy_performance_preference (/%s)",
                                   strstrip(driver), setting_file_path(s));
        return r;
}

static int epp_write(Setting *s, SettingContext *rc, const char *value) {
        return file_setting_write_offered(s, rc, value, "energy_performance_available_preferences",
                                          "energy_performance_preference");
}

static int epp_refuses(Setting *s, SettingContext *rc) {
        return file_setting_check_offered(s, rc, s->desired, "energy_performance_available_preferences",
                                          "energy_performance_preference");
}

static int epp_construct(const Host *h, unsigned cpu, const Posture *p, Setting **ret) {
        return setting_new_energy_performance_preference(cpu, p->config->energy_performance_preference, ret);
}

static int epp_plan(SettingTable *t, const Host *h, const Posture *p) {
        if (!p->config->energy_performance_preference)
                return 0;
        return pm_plan_cpus(t, h, p, SETTING_ENERGY_PERFORMANCE_PREFERENCE, &p->energy_performance_preference_cpus,
                            p->config->energy_performance_preference, epp_construct);
}

static const char *const epp_files[] = {
        CPU_DIR "/cpu*/cpufreq/energy_performance_preference",
        CPU_DIR "/cpufreq/policy*/energy_performance_preference",
        NULL,
};

/* A preference by the rules of the key's names; the driver's list is asked at the write. */
static const char *epp_original_problem(const Setting *s, SettingContext *rc, const char *value) {
        (void) s;
        (void) rc;
        return config_epp_name_is_valid(value) ? NULL : "not a preference name";
}

const SettingVTable energy_performance_preference_vtable = {
        PM_SETTING_OPS,
        .owns = epp_files,
        .read = epp_read,
        .write = epp_write,
        .original_problem = epp_original_problem,
        .refuses = epp_refuses,
        .plan = epp_plan,
};

/* --- boost --- */

#define BOOST_FILE CPU_DIR "/cpufreq/boost"
#define NO_TURBO_FILE CPU_DIR "/intel_pstate/no_turbo"

int setting_new_boost(const Host *h, bool on, Setting **ret) {
        _cleanup_(setting_freep) Setting *s = NULL;
        bool no_turbo = !host_path_exists(h, BOOST_FILE) && host_path_exists(h, NO_TURBO_FILE);
        int r;

        r = file_setting_new(SETTING_BOOST, strdup(no_turbo ? NO_TURBO_FILE : BOOST_FILE), "boost", on ? "on" : "off", &s);
        if (r < 0)
                return r;
        PM(s)->inverted = no_turbo;
        if (!no_turbo && !host_path_exists(h, BOOST_FILE) &&
            pm_setting_refuse(s, "no boost control on this host (neither /" BOOST_FILE " nor /" NO_TURBO_FILE ")") < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(s);
        return 0;
}

/* "0" and "1" as "off" and "on", the other way round for no_turbo; anything else as it is. */
static int boost_read(Setting *s, SettingContext *rc, char *buf, size_t size, ReconcileFlags flags) {
        int r = pm_read(s, rc, buf, size, flags, "no boost control on this host");

        if (r < 0)
                return r;
        if (streq(buf, "0") || streq(buf, "1"))
                snprintf(buf, size, "%s", (buf[0] == '1') != PM(s)->inverted ? "on" : "off");
        return 0;
}

static int boost_write(Setting *s, SettingContext *rc, const char *value) {
        const char *raw = value;

        if (streq(value, "on"))
                raw = PM(s)->inverted ? "0" : "1";
        else if (streq(value, "off"))
                raw = PM(s)->inverted ? "1" : "0";
        return file_setting_write(s, rc, raw);
}

static int boost_plan(SettingTable *t, const Host *h, const Posture *p) {
        Setting *s = NULL;
        int r;

        if (p->config->boost == PM_BOOST_UNSET)
                return 0;
        r = setting_new_boost(h, p->config->boost == PM_BOOST_ON, &s);
        return r < 0 ? r : table_add(t, s);
}

static const char *const boost_files[] = {
        BOOST_FILE,
        NO_TURBO_FILE,
        NULL,
};

/* boost_read() made 0 and 1 words: an original is one of them. */
static const char *boost_original_problem(const Setting *s, SettingContext *rc, const char *value) {
        static const char *const words[] = { "on", "off", NULL };

        (void) s;
        (void) rc;
        return setting_word_problem(value, words);
}

const SettingVTable boost_vtable = {
        PM_SETTING_OPS,
        .noun = "cpufreq", /* "cpufreq boost" */
        .owns = boost_files,
        .read = boost_read,
        .write = boost_write,
        .original_problem = boost_original_problem,
        .plan = boost_plan,
};
