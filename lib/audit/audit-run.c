/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The posture audit: what the seed guides check by hand with cat, dmesg, ps, lscpu and
 * vmstat, read through the root and turned into findings that say why and how to fix. */

/*
 * Finding ids. They are stable: scripts, `lowlatctl check --json` and the man page key on
 * them. A healthy check emits nothing. At most AUDIT_FINDINGS_PER_ID_MAX findings per id are
 * listed; one more with subject "N more" counts the rest.
 *
 * id                          severity            fires when
 * --------------------------  ------------------  --------------------------------------------
 * boot.isolcpus               critical            the config names isolated CPUs and the kernel
 *                                                 command line has neither isolcpus= nor
 *                                                 nohz_full=
 *                             warning             isolcpus= is missing, names other CPUs than
 *                                                 the isolated set, or lacks managed_irq/domain
 *                             info                no CPU is isolated at all (isolated = auto and
 *                                                 the kernel isolated none)
 * boot.nohz_full              warning             nohz_full= is missing or differs from the
 *                                                 isolated set
 * boot.rcu_nocbs              warning             an isolated CPU is in neither rcu_nocbs= nor
 *                                                 nohz_full= (which implies it)
 * boot.irqaffinity            warning             irqaffinity= includes an isolated CPU
 *                             info                irqaffinity= is missing
 * boot.mismatch               warning             what the kernel applied (/sys/devices/system/
 *                                                 cpu/{isolated,nohz_full}) differs from what
 *                                                 /proc/cmdline asked for
 * kernel.preempt              warning             the preemption model is none or voluntary
 *                             info                lazy; full set at run time only; or unknown
 * kernel.config-missing       info                /boot/config-$(uname -r) is unreadable (only
 *                                                 /proc/config.gz, which is not decompressed)
 * kernel.config.PREEMPT_RT    info                not a PREEMPT_RT kernel
 * kernel.config.HZ_1000       info                the tick is not 1000 Hz
 * kernel.config.NO_HZ_FULL    warning             nohz_full= is ignored by this kernel
 * kernel.config.RCU_NOCB_CPU  warning             rcu_nocbs= is ignored by this kernel
 * topology.smt-sibling        warning             an isolated CPU's SMT sibling is not isolated
 * topology.numa-spread        info                the isolated CPUs span NUMA nodes
 * sched.rt-throttling         warning             kernel.sched_rt_runtime_us is -1 (on the host
 *                                                 or in [sysctl])
 * sched.stray-task            warning             a user task that is not a configured
 *                                                 application may run on an isolated CPU
 * power.governor              warning             an isolated CPU's governor is not [pm]
 *                                                 governor (default: performance)
 * power.min-freq              warning             a scaling governor other than performance
 *                                                 lets an isolated CPU drop below its maximum
 * power.cpuidle               warning             an idle state slower to leave than [pm]
 *                                                 cpu_dma_latency is enabled on an isolated CPU
 *                                                 and nobody holds /dev/cpu_dma_latency
 *                             info                the same while a request is held
 * power.dma-latency-unheld    warning             [pm] cpu_dma_latency is set but no process
 *                                                 holds /dev/cpu_dma_latency open
 *                             info                nobody holds it and it is not configured
 * irq.irqbalance              warning             irqbalance runs without the isolated CPUs in
 *                                                 IRQBALANCE_BANNED_CPULIST, and the kernel did
 *                                                 not isolate them, a ban list that misses them
 *                                                 replaces irqbalance's own isolcpus= reading,
 *                                                 or lowlatd pins IRQs
 *                             info                the same, but irqbalance 1.8+ already skips
 *                                                 the kernel's isolated CPUs
 * irq.unmovable-isolated      warning             an IRQ the kernel refuses to move is served
 *                                                 on an isolated CPU
 * virt.steal                  warning             steal time since boot is at least 1%
 *                             info                some steal time (a VM)
 * app.not-running             warning             no process of a [service]/[process] is found
 * app.affinity                critical            no thread of the application is confined to
 *                                                 the isolated CPUs
 *                             warning             some threads may run on isolated and other
 *                                                 CPUs alike
 * app.policy                  warning             no thread runs SCHED_FIFO/RR (or the policy
 *                                                 configured)
 * app.priority                warning             the highest RT priority is below priority=
 * app.memlock                 warning             mlock = yes and mlockall() would fail (limit
 *                                                 and no CAP_IPC_LOCK)
 * app.tz                      info                TZ is not in the environment (glibc then
 *                                                 stat()s /etc/localtime on every localtime())
 * app.hugepages               warning             hugepages = yes and it maps no huge page
 * sysctl.no-effect            info                [sysctl] sets net.ipv4.tcp_low_latency
 *                                                 (nothing since Linux 4.14)
 * sysctl.gone                 warning             [sysctl] sets a key that was removed or moved
 *                                                 (tcp_tw_recycle, the scheduler knobs that
 *                                                 went to debugfs in 5.13) and the host lacks it
 * sysctl.conflict             warning             tcp_timestamps = 0 with tcp_tw_reuse on
 * sysctl.cc-unavailable       warning             [sysctl] asks for a congestion control that
 *                                                 is not loaded
 * audit.limit                 info                more processes than AUDIT_PROCESSES_MAX (lowest
 *                                                 pids are examined)
 *
 * Steal time is read once: the share since boot, not a rate. Threads of configured
 * applications are examined one by one; other tasks by their thread group leader. Kernel
 * threads (PF_KTHREAD in /proc/PID/stat, or an empty cmdline and parent 2) are never
 * strays. /proc/config.gz is not read: lowlatd links no decompressor.
 */
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>

#include "audit.h"
#include "task.h"
#include "util.h"

#define CAP_IPC_LOCK_BIT 14
#define CPUIDLE_STATES_MAX 64U
#define NUMA_NODES_MAX 4096U
#define CMDLINE_TOKENS_MAX 4096U
#define FDS_PER_PROCESS_MAX 65536U

static const char *const severity_names[_SEVERITY_MAX] = {
        [SEVERITY_OK] = "ok",
        [SEVERITY_INFO] = "info",
        [SEVERITY_WARNING] = "warning",
        [SEVERITY_CRITICAL] = "critical",
};

const char *severity_to_string(Severity s) {
        return (unsigned) s < _SEVERITY_MAX ? severity_names[s] : "?";
}

void finding_list_done(FindingList *l) {
        for (size_t i = 0; i < l->n; i++) {
                free(l->items[i].id);
                free(l->items[i].subject);
                free(l->items[i].message);
        }
        free(l->items);
        *l = FINDING_LIST_EMPTY;
}

Severity finding_list_worst(const FindingList *l) {
        Severity worst = SEVERITY_OK;
        for (size_t i = 0; i < l->n; i++)
                worst = MAX(worst, l->items[i].severity);
        return worst;
}

const Finding *finding_list_find(const FindingList *l, const char *id, const char *subject) {
        for (size_t i = 0; i < l->n; i++)
                if (streq(l->items[i].id, id) && (!subject || streq(l->items[i].subject, subject)))
                        return &l->items[i];
        return NULL;
}

/* --- the audit's state: facts read once, and the findings being built --- */

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

static const char *const kconfig_names[_KCONFIG_MAX] = {
        [KCONFIG_PREEMPT_RT] = "PREEMPT_RT",
        [KCONFIG_PREEMPT_DYNAMIC] = "PREEMPT_DYNAMIC",
        [KCONFIG_PREEMPT] = "PREEMPT",
        [KCONFIG_PREEMPT_VOLUNTARY] = "PREEMPT_VOLUNTARY",
        [KCONFIG_PREEMPT_NONE] = "PREEMPT_NONE",
        [KCONFIG_PREEMPT_LAZY] = "PREEMPT_LAZY",
        [KCONFIG_HZ_1000] = "HZ_1000",
        [KCONFIG_HZ] = "HZ",
        [KCONFIG_NO_HZ_FULL] = "NO_HZ_FULL",
        [KCONFIG_RCU_NOCB_CPU] = "RCU_NOCB_CPU",
};

typedef enum BootParam {
        BOOT_ISOLCPUS,
        BOOT_NOHZ_FULL,
        BOOT_RCU_NOCBS,
        BOOT_IRQAFFINITY,
        BOOT_PREEMPT,
        _BOOT_PARAM_MAX,
} BootParam;

static const char *const boot_param_names[_BOOT_PARAM_MAX] = {
        [BOOT_ISOLCPUS] = "isolcpus",
        [BOOT_NOHZ_FULL] = "nohz_full",
        [BOOT_RCU_NOCBS] = "rcu_nocbs",
        [BOOT_IRQAFFINITY] = "irqaffinity",
        [BOOT_PREEMPT] = "preempt",
};

typedef enum PreemptMode {
        PREEMPT_MODE_UNKNOWN,
        PREEMPT_MODE_NONE,
        PREEMPT_MODE_VOLUNTARY,
        PREEMPT_MODE_FULL,
        PREEMPT_MODE_LAZY,
        PREEMPT_MODE_RT,
} PreemptMode;

static const char *const preempt_mode_names[] = {
        [PREEMPT_MODE_UNKNOWN] = "unknown",
        [PREEMPT_MODE_NONE] = "none",
        [PREEMPT_MODE_VOLUNTARY] = "voluntary",
        [PREEMPT_MODE_FULL] = "full",
        [PREEMPT_MODE_LAZY] = "lazy",
        [PREEMPT_MODE_RT] = "rt",
};

#define ISOLCPUS_DOMAIN 1U
#define ISOLCPUS_MANAGED_IRQ 2U
#define ISOLCPUS_NOHZ 4U

typedef struct Stray {
        unsigned pid;
        char *comm;
        char *allowed;
} Stray;

typedef struct AppPids {
        unsigned *pids;
        size_t n;
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

        Finding *items;
        size_t n_items, allocated;
        Omitted *omitted;
        size_t n_omitted;

        char *release; /* uname -r, from /proc/sys/kernel/osrelease */
        unsigned kernel_major, kernel_minor;
        bool kernel_version_known;

        bool kconfig_loaded;
        char *kconfig_path; /* as shown to humans */
        char *kconfig[_KCONFIG_MAX];

        bool cmdline_loaded;
        char **tokens;
        size_t n_tokens;
        const char *boot[_BOOT_PARAM_MAX]; /* the value of the last occurrence, NULL when absent */

        PreemptMode preempt_mode;
        bool preempt_dynamic;
        const char *preempt_source;

        /* processes */
        bool proc_listed;
        size_t n_examined;
        size_t n_pids_total;
        Stray *strays;
        size_t n_strays;
        AppPids *apps; /* one per config app */
        bool *app_matched; /* one per config app: scratch for task_match_apps() */
        unsigned irqbalance_pid;
        bool dma_device_exists;
        unsigned max_processes;
        unsigned dma_holder_pid;
        char *dma_holder_comm;
        bool dma_unknown; /* some process's fds could not be read */
        size_t fd_budget;
} Audit;

static void audit_done(Audit *a) {
        for (size_t i = 0; i < a->n_items; i++) {
                free(a->items[i].id);
                free(a->items[i].subject);
                free(a->items[i].message);
        }
        free(a->items);
        for (size_t i = 0; i < a->n_omitted; i++)
                free(a->omitted[i].id);
        free(a->omitted);
        free(a->release);
        free(a->kconfig_path);
        for (size_t i = 0; i < _KCONFIG_MAX; i++)
                free(a->kconfig[i]);
        for (size_t i = 0; i < a->n_tokens; i++)
                free(a->tokens[i]);
        free(a->tokens);
        for (size_t i = 0; i < a->n_strays; i++) {
                free(a->strays[i].comm);
                free(a->strays[i].allowed);
        }
        free(a->strays);
        if (a->apps)
                for (size_t i = 0; i < a->config->n_apps; i++)
                        free(a->apps[i].pids);
        free(a->apps);
        free(a->app_matched);
        free(a->dma_holder_comm);
}

/* Records an allocation failure; returns p so calls can be wrapped. */
static void *audit_check_alloc(Audit *a, void *p) {
        if (!p && a->error == 0)
                a->error = -ENOMEM;
        return p;
}

/* Text from the kernel can be anything; the bus and JSON need UTF-8. */
static char *bus_safe(char *s) {
        char *e;

        if (!s || utf8_is_valid(s))
                return s;
        e = utf8_escape(s);
        free(s);
        return e;
}

static void omitted_add(Audit *a, const char *id, Severity severity) {
        Omitted *o;

        for (size_t i = 0; i < a->n_omitted; i++)
                if (streq(a->omitted[i].id, id)) {
                        a->omitted[i].n++;
                        a->omitted[i].worst = MAX(a->omitted[i].worst, severity);
                        return;
                }
        o = audit_check_alloc(a, realloc(a->omitted, (a->n_omitted + 1) * sizeof(Omitted)));
        if (!o)
                return;
        a->omitted = o;
        o[a->n_omitted] = (Omitted) { .id = audit_check_alloc(a, strdup(id)), .n = 1, .worst = severity };
        if (o[a->n_omitted].id)
                a->n_omitted++;
}

static void finding_append(Audit *a, Severity severity, const char *id, char *subject, char *message) {
        Finding f = { .severity = severity, .id = strdup(id), .subject = bus_safe(subject), .message = bus_safe(message) };

        if (!f.id || !f.subject || !f.message) {
                free(f.id);
                free(f.subject);
                free(f.message);
                a->error = -ENOMEM;
                return;
        }
        if (a->n_items == a->allocated) {
                size_t n = MAX(a->allocated * 2, 16U);
                Finding *items = realloc(a->items, n * sizeof(Finding));
                if (!items) {
                        free(f.id);
                        free(f.subject);
                        free(f.message);
                        a->error = -ENOMEM;
                        return;
                }
                a->items = items;
                a->allocated = n;
        }
        a->items[a->n_items++] = f;
}

_printf_(5, 6) static void finding_add(Audit *a, Severity severity, const char *id, const char *subject,
                                       const char *fmt, ...) {
        size_t same = 0;
        char *message = NULL, *subj;
        va_list ap;
        int r;

        if (a->error < 0)
                return;
        for (size_t i = 0; i < a->n_items; i++)
                if (streq(a->items[i].id, id))
                        same++;
        if (same >= AUDIT_FINDINGS_PER_ID_MAX) {
                omitted_add(a, id, severity);
                return;
        }
        va_start(ap, fmt);
        r = vasprintf(&message, fmt, ap);
        va_end(ap);
        if (r < 0) {
                a->error = -ENOMEM;
                return;
        }
        subj = strdup(subject);
        finding_append(a, severity, id, subj, message);
}

static void add_omitted_summaries(Audit *a) {
        for (size_t i = 0; i < a->n_omitted && a->error == 0; i++) {
                const Omitted *o = &a->omitted[i];
                finding_append(a, o->worst, o->id, strdup_printf("%zu more", o->n),
                               strdup_printf("%zu more %s findings are not listed (at most %u per id are).", o->n,
                                             o->id, AUDIT_FINDINGS_PER_ID_MAX));
        }
}

/* --- reading the host --- */

_printf_(3, 4) static int read_file(Audit *a, char **ret, const char *fmt, ...) {
        _cleanup_free_ char *path = NULL;
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = vasprintf(&path, fmt, ap);
        va_end(ap);
        if (r < 0)
                return a->error = -ENOMEM;
        r = host_read_file(a->host, path, ret);
        if (r == -ENOMEM)
                a->error = r;
        return r;
}

/* The whole file with white space trimmed at both ends. */
_printf_(3, 4) static int read_value(Audit *a, char **ret, const char *fmt, ...) {
        _cleanup_free_ char *path = NULL, *text = NULL;
        char *s;
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = vasprintf(&path, fmt, ap);
        va_end(ap);
        if (r < 0)
                return a->error = -ENOMEM;
        r = host_read_file(a->host, path, &text);
        if (r == -ENOMEM)
                a->error = r;
        if (r < 0)
                return r;
        s = strstrip(text);
        memmove(text, s, strlen(s) + 1);
        *ret = TAKE_PTR(text);
        return 0;
}

_printf_(3, 4) static int read_u64(Audit *a, uint64_t *ret, const char *fmt, ...) {
        _cleanup_free_ char *path = NULL, *text = NULL;
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = vasprintf(&path, fmt, ap);
        va_end(ap);
        if (r < 0)
                return a->error = -ENOMEM;
        r = host_read_file(a->host, path, &text);
        if (r < 0)
                return r;
        return parse_uint64(strstrip(text), ret);
}

/* A CPU list file; "(null)" (nohz_full without the parameter) is the empty set. */
_printf_(3, 4) static int read_cpus(Audit *a, CPUSet *ret, const char *fmt, ...) {
        _cleanup_free_ char *path = NULL, *text = NULL;
        va_list ap;
        char *s;
        int r;

        va_start(ap, fmt);
        r = vasprintf(&path, fmt, ap);
        va_end(ap);
        if (r < 0)
                return a->error = -ENOMEM;
        r = host_read_file(a->host, path, &text);
        if (r < 0)
                return r;
        s = strstrip(text);
        if (streq(s, "(null)")) {
                cpuset_clear(ret);
                return 0;
        }
        return cpuset_parse_list(s, ret);
}

/* Whether relpath exists, without opening it: opening /dev/cpu_dma_latency adds a PM QoS
 * request, and the audit changes nothing. The last component is not followed. */
static bool path_exists(Audit *a, const char *relpath) {
        _cleanup_free_ char *parent = audit_check_alloc(a, strdup(relpath));
        _cleanup_close_ int fd = -1;
        const char *name;
        struct stat st;
        char *slash;

        if (!parent)
                return false;
        slash = strrchr(parent, '/');
        if (slash) {
                *slash = '\0';
                name = slash + 1;
                fd = host_open_file(a->host, parent, O_RDONLY | O_DIRECTORY);
        } else {
                name = relpath;
                fd = host_open_file(a->host, ".", O_RDONLY | O_DIRECTORY);
        }
        if (fd < 0 || isempty(name) || streq(name, "..") || streq(name, "."))
                return false;
        return fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) >= 0;
}

/* task_status_field(), noting an allocation failure in the audit; NULL when absent. */
static char *field_value(Audit *a, const char *text, const char *key) {
        char *v;
        int r = task_status_field(text, key, &v);

        if (r == -ENOMEM && a->error == 0)
                a->error = r;
        return r < 0 ? NULL : v;
}

/* The same for task_status_cpus_allowed(): 0 with the CPUs and their list, or -errno. */
static int cpus_allowed(Audit *a, const char *status, CPUSet *ret, char **ret_list) {
        int r = task_status_cpus_allowed(status, ret, ret_list);

        if (r == -ENOMEM && a->error == 0)
                a->error = r;
        return r;
}

static int compare_unsigned(const void *a, const void *b) {
        unsigned x = *(const unsigned *) a, y = *(const unsigned *) b;
        return x < y ? -1 : x > y;
}

/* The lowest max numeric entries of a directory (pids, tids), sorted: host_list_numbers(),
 * noting an allocation failure in the audit. */
static int audit_list_numbers(Audit *a, const char *relpath, size_t max, unsigned **ret, size_t *ret_n,
                              size_t *ret_total) {
        int r = host_list_numbers(a->host, relpath, max, ret, ret_n, ret_total);
        if (r == -ENOMEM)
                a->error = r;
        return r;
}

/* --- formatting --- */

static char *cpus_list(Audit *a, const CPUSet *s) {
        return audit_check_alloc(a, cpuset_format_list(s));
}

/* "cpu3" for one CPU, "cpus 2-3" for several. */
static char *cpus_subject(Audit *a, const CPUSet *s) {
        _cleanup_free_ char *list = cpus_list(a, s);
        if (!list)
                return NULL;
        return audit_check_alloc(a, cpuset_count(s) == 1 ? strdup_printf("cpu%s", list) : strdup_printf("cpus %s", list));
}

/* "echo VALUE > /sys/devices/system/cpu/cpuN/FILE" for each CPU, as one shell line. */
static char *cpu_write_command(Audit *a, const CPUSet *s, const char *value, const char *file) {
        _cleanup_free_ char *words = NULL;
        size_t len = 0;

        if (cpuset_count(s) == 1)
                return audit_check_alloc(a, strdup_printf("echo %s > /sys/devices/system/cpu/cpu%d/%s", value,
                                                          cpuset_next(s, 0), file));
        CPUSET_FOREACH(cpu, s) {
                char *w = realloc(words, len + 16);
                if (!w)
                        return audit_check_alloc(a, NULL);
                words = w;
                len += (size_t) snprintf(words + len, 16, "%s%d", len ? " " : "", cpu);
        }
        return audit_check_alloc(a, strdup_printf("for c in %s; do echo %s > /sys/devices/system/cpu/cpu$c/%s; done",
                                                  words ?: "", value, file));
}

static const char *policy_name(unsigned policy) {
        switch (policy) {
        case SCHED_OTHER:
                return "SCHED_OTHER";
        case SCHED_FIFO:
                return "SCHED_FIFO";
        case SCHED_RR:
                return "SCHED_RR";
        case SCHED_BATCH:
                return "SCHED_BATCH";
        case SCHED_IDLE:
                return "SCHED_IDLE";
        case 6:
                return "SCHED_DEADLINE";
        default:
                return "an unknown policy";
        }
}

/* --- facts: kernel release, config, command line, preemption --- */

static void load_release(Audit *a) {
        const char *p;
        unsigned v[2] = {};

        if (read_value(a, &a->release, "proc/sys/kernel/osrelease") < 0)
                return;
        /* It goes into a path: one component, nothing that climbs. */
        if (isempty(a->release) || strchr(a->release, '/') || streq(a->release, ".") || streq(a->release, "..")) {
                a->release = mfree(a->release);
                return;
        }
        p = a->release;
        for (size_t i = 0; i < 2; i++) {
                size_t digits = 0;
                while (isdigit((unsigned char) *p) && digits < 6) {
                        v[i] = v[i] * 10 + (unsigned) (*p++ - '0');
                        digits++;
                }
                if (digits == 0 || isdigit((unsigned char) *p) || (i == 0 && *p++ != '.'))
                        return;
        }
        a->kernel_major = v[0];
        a->kernel_minor = v[1];
        a->kernel_version_known = true;
}

static bool kernel_older_than(const Audit *a, unsigned major, unsigned minor) {
        return a->kernel_version_known &&
               (a->kernel_major < major || (a->kernel_major == major && a->kernel_minor < minor));
}

static void load_kernel_config(Audit *a) {
        _cleanup_free_ char *text = NULL;

        if (!a->release || read_file(a, &text, "boot/config-%s", a->release) < 0)
                return;
        a->kconfig_path = audit_check_alloc(a, strdup_printf("/boot/config-%s", a->release));
        a->kconfig_loaded = true;
        for (char *line = text; line && *line;) {
                char *end = strchr(line, '\n'), *eq;
                if (end)
                        *end = '\0';
                if (strncmp(line, "CONFIG_", 7) == 0 && (eq = strchr(line, '='))) {
                        *eq = '\0';
                        for (size_t i = 0; i < _KCONFIG_MAX; i++)
                                if (streq(line + 7, kconfig_names[i])) {
                                        free(a->kconfig[i]);
                                        a->kconfig[i] = audit_check_alloc(a, strdup(strstrip(eq + 1)));
                                }
                }
                line = end ? end + 1 : NULL;
        }
}

static bool kconfig_yes(const Audit *a, KernelOption o) {
        return a->kconfig[o] && streq(a->kconfig[o], "y");
}

/* Splits /proc/cmdline the way the kernel does: white space, except inside quotes. */
static void load_cmdline(Audit *a) {
        _cleanup_free_ char *text = NULL;
        char *p;

        if (read_file(a, &text, "proc/cmdline") < 0)
                return;
        a->cmdline_loaded = true;
        p = text;
        for (;;) {
                bool quoted = false;
                char *start, *token, **tokens;

                while (isspace((unsigned char) *p))
                        p++;
                if (!*p || a->n_tokens >= CMDLINE_TOKENS_MAX)
                        break;
                start = p;
                while (*p && (quoted || !isspace((unsigned char) *p))) {
                        if (*p == '"')
                                quoted = !quoted;
                        p++;
                }
                token = audit_check_alloc(a, strndup(start, (size_t) (p - start)));
                tokens = audit_check_alloc(a, realloc(a->tokens, (a->n_tokens + 1) * sizeof(char *)));
                if (!token || !tokens) {
                        free(token);
                        return;
                }
                a->tokens = tokens;
                a->tokens[a->n_tokens++] = token;
        }
        for (size_t i = 0; i < a->n_tokens; i++) {
                char *t = a->tokens[i];
                for (size_t b = 0; b < _BOOT_PARAM_MAX; b++) {
                        size_t len = strlen(boot_param_names[b]);
                        if (strncmp(t, boot_param_names[b], len) != 0 || (t[len] != '=' && t[len] != '\0'))
                                continue;
                        if (t[len] == '=') {
                                /* param="value": the kernel drops the quotes. */
                                char *v = t + len + 1;
                                size_t n = strlen(v);
                                if (n >= 2 && v[0] == '"' && v[n - 1] == '"') {
                                        memmove(v, v + 1, n - 2);
                                        v[n - 2] = '\0';
                                }
                                a->boot[b] = v;
                        } else
                                a->boot[b] = "";
                }
        }
}

static PreemptMode preempt_mode_from_string(const char *s) {
        for (size_t i = PREEMPT_MODE_NONE; i <= PREEMPT_MODE_LAZY; i++)
                if (streq(s, preempt_mode_names[i]))
                        return (PreemptMode) i;
        return PREEMPT_MODE_UNKNOWN;
}

/* The model the kernel config picks as the default. */
static PreemptMode preempt_mode_from_config(const Audit *a) {
        if (kconfig_yes(a, KCONFIG_PREEMPT_RT))
                return PREEMPT_MODE_RT;
        if (kconfig_yes(a, KCONFIG_PREEMPT_LAZY))
                return PREEMPT_MODE_LAZY;
        if (kconfig_yes(a, KCONFIG_PREEMPT))
                return PREEMPT_MODE_FULL;
        if (kconfig_yes(a, KCONFIG_PREEMPT_VOLUNTARY))
                return PREEMPT_MODE_VOLUNTARY;
        if (kconfig_yes(a, KCONFIG_PREEMPT_NONE))
                return PREEMPT_MODE_NONE;
        return PREEMPT_MODE_UNKNOWN;
}

static void load_preempt(Audit *a) {
        _cleanup_free_ char *text = NULL;

        if (kconfig_yes(a, KCONFIG_PREEMPT_RT)) {
                a->preempt_mode = PREEMPT_MODE_RT;
                a->preempt_source = a->kconfig_path;
                return;
        }
        /* PREEMPT_DYNAMIC: "none (voluntary) full", the current mode in parentheses. */
        if (read_value(a, &text, "sys/kernel/debug/sched/preempt") >= 0) {
                char *open = strchr(text, '('), *close = open ? strchr(open, ')') : NULL;
                if (close) {
                        *close = '\0';
                        a->preempt_mode = preempt_mode_from_string(open + 1);
                        a->preempt_dynamic = true;
                        a->preempt_source = "/sys/kernel/debug/sched/preempt";
                        if (a->preempt_mode != PREEMPT_MODE_UNKNOWN)
                                return;
                }
        }
        if (kconfig_yes(a, KCONFIG_PREEMPT_DYNAMIC)) {
                a->preempt_dynamic = true;
                if (a->boot[BOOT_PREEMPT] && preempt_mode_from_string(a->boot[BOOT_PREEMPT]) != PREEMPT_MODE_UNKNOWN) {
                        a->preempt_mode = preempt_mode_from_string(a->boot[BOOT_PREEMPT]);
                        a->preempt_source = "/proc/cmdline";
                        return;
                }
        }
        a->preempt_mode = preempt_mode_from_config(a);
        if (a->preempt_mode != PREEMPT_MODE_UNKNOWN)
                a->preempt_source = a->kconfig_path;
}

/* Whether the GRUB line should carry preempt=full: a dynamic kernel not booted that way. */
static bool want_preempt_full(const Audit *a) {
        return a->preempt_dynamic && !streq_ptr(a->boot[BOOT_PREEMPT], "full");
}

/* The full GRUB_CMDLINE_LINUX_DEFAULT line: what the command line has now, less what the
 * boot loader adds and what lowlatd decides, plus the isolation for the posture. */
static char *grub_line(Audit *a) {
        static const char *const dropped[] = { "BOOT_IMAGE", "root", "initrd", "isolcpus", "nohz_full",
                                               "rcu_nocbs", "irqaffinity" };
        _cleanup_free_ char *isolated = cpus_list(a, &a->posture->isolated);
        _cleanup_free_ char *housekeeping = cpus_list(a, &a->posture->housekeeping);
        _cleanup_free_ char *kept = strdup(""), *init_args = strdup("");
        char *line;
        bool after_dashes = false;

        if (!isolated || !housekeeping || !audit_check_alloc(a, kept) || !audit_check_alloc(a, init_args))
                return NULL;
        for (size_t i = 0; i < a->n_tokens; i++) {
                const char *t = a->tokens[i];
                bool drop = streq(t, "ro") || streq(t, "rw");
                char **to, *k;

                /* Everything after "--" is for init: the kernel parameters go before it. */
                if (streq(t, "--"))
                        after_dashes = true;
                to = after_dashes ? &init_args : &kept;
                if (after_dashes) {
                        k = realloc(*to, strlen(*to) + 2 * strlen(t) + 2);
                        if (!audit_check_alloc(a, k))
                                return NULL;
                        *to = k;
                        k += strlen(k);
                        *k++ = ' ';
                        for (const char *c = t; *c; c++) {
                                if (strchr("\"\\$`", *c))
                                        *k++ = '\\';
                                *k++ = *c;
                        }
                        *k = '\0';
                        continue;
                }

                for (size_t d = 0; d < ELEMENTSOF(dropped) && !drop; d++) {
                        size_t len = strlen(dropped[d]);
                        drop = strncmp(t, dropped[d], len) == 0 && (t[len] == '=' || t[len] == '\0');
                }
                if (want_preempt_full(a) && strncmp(t, "preempt=", 8) == 0)
                        drop = true;
                if (drop)
                        continue;
                /* Inside double quotes in /etc/default/grub, a shell file. */
                k = realloc(kept, strlen(kept) + 2 * strlen(t) + 2);
                if (!audit_check_alloc(a, k))
                        return NULL;
                kept = k;
                k += strlen(k);
                for (const char *c = t; *c; c++) {
                        if (strchr("\"\\$`", *c))
                                *k++ = '\\';
                        *k++ = *c;
                }
                *k++ = ' ';
                *k = '\0';
        }
        line = strdup_printf("GRUB_CMDLINE_LINUX_DEFAULT=\"%sisolcpus=managed_irq,domain,%s nohz_full=%s rcu_nocbs=%s "
                             "irqaffinity=%s%s%s\"",
                             kept, isolated, isolated, isolated, housekeeping,
                             want_preempt_full(a) ? " preempt=full" : "", init_args);
        return audit_check_alloc(a, line);
}

static const char grub_howto[] = "in /etc/default/grub (it keeps the rest of the running command line; leave out "
                                 "what GRUB_CMDLINE_LINUX already adds), then run update-grub (grub2-mkconfig -o "
                                 "/boot/grub2/grub.cfg on Fedora and RHEL) and reboot";

/* isolcpus=[flag,...,]list; no flag means domain. Unknown flags are skipped, as the
 * kernel does. */
static int parse_isolcpus(const char *value, unsigned *ret_flags, CPUSet *ret_cpus) {
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
                return parse_isolcpus(v, &flags, ret);
        }
        return cpuset_parse_list(v, ret);
}

/* --- 1. boot isolation --- */

static void check_boot(Audit *a) {
        const Posture *p = a->posture;
        _cleanup_cpuset_ CPUSet cpus = CPUSET_EMPTY, nohz = CPUSET_EMPTY, applied = CPUSET_EMPTY;
        _cleanup_free_ char *isolated = NULL, *grub = NULL, *housekeeping = NULL;
        unsigned flags = 0;
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
        isolated = cpus_list(a, &p->isolated);
        housekeeping = cpus_list(a, &p->housekeeping);
        grub = grub_line(a);
        if (!isolated || !housekeeping || !grub)
                return;

        /* isolcpus= */
        if (!a->boot[BOOT_ISOLCPUS]) {
                bool none = !a->boot[BOOT_NOHZ_FULL];
                finding_add(a, none ? SEVERITY_CRITICAL : SEVERITY_WARNING, "boot.isolcpus", "isolcpus",
                            "The kernel command line has no isolcpus=%s: the scheduler still balances tasks "
                            "onto CPUs %s and managed IRQs may land there%s. Use %s %s.",
                            isolated, isolated,
                            none ? ", and without nohz_full= either, nothing keeps ticks and work off the "
                                   "CPUs lowlatd treats as isolated"
                                 : "",
                            grub, grub_howto);
        } else if (parse_isolcpus(a->boot[BOOT_ISOLCPUS], &flags, &cpus) < 0) {
                finding_add(a, SEVERITY_WARNING, "boot.isolcpus", "isolcpus",
                            "isolcpus=%s on the kernel command line cannot be read as [flags,]CPU-list, so "
                            "what it isolates cannot be checked. Use %s %s.",
                            a->boot[BOOT_ISOLCPUS], grub, grub_howto);
        } else if (!cpuset_equal(&cpus, &p->isolated)) {
                _cleanup_free_ char *asked = cpus_list(a, &cpus);
                finding_add(a, SEVERITY_WARNING, "boot.isolcpus", "isolcpus",
                            "isolcpus= names CPUs %s but lowlatd treats %s as isolated: CPUs isolated but not "
                            "in the posture idle or get IRQs, and posture CPUs not isolated still take "
                            "balanced tasks. Use %s %s.",
                            asked ?: "?", isolated, grub, grub_howto);
        } else if (!(flags & ISOLCPUS_MANAGED_IRQ) || !(flags & ISOLCPUS_DOMAIN)) {
                finding_add(a, SEVERITY_WARNING, "boot.isolcpus", "isolcpus",
                            "isolcpus=%s lacks the %s flag%s: %s. Use %s %s.", a->boot[BOOT_ISOLCPUS],
                            !(flags & ISOLCPUS_MANAGED_IRQ) && !(flags & ISOLCPUS_DOMAIN) ? "managed_irq and domain"
                            : !(flags & ISOLCPUS_MANAGED_IRQ)                            ? "managed_irq"
                                                                                          : "domain",
                            !(flags & ISOLCPUS_MANAGED_IRQ) && !(flags & ISOLCPUS_DOMAIN) ? "s" : "",
                            !(flags & ISOLCPUS_MANAGED_IRQ)
                                    ? "without managed_irq the kernel spreads managed IRQs (NVMe, multi-queue "
                                      "NICs) over the isolated CPUs, and nobody can move them afterwards"
                                    : "without domain the scheduler still balances tasks onto the isolated CPUs",
                            grub, grub_howto);
        }

        /* nohz_full= */
        r = boot_cpus(a, BOOT_NOHZ_FULL, &nohz);
        if (r == -ENOENT || (r >= 0 && !cpuset_equal(&nohz, &p->isolated))) {
                _cleanup_free_ char *asked = r >= 0 ? cpus_list(a, &nohz) : NULL;
                _cleanup_free_ char *what = r >= 0 ? strdup_printf("nohz_full= names CPUs %s, not %s", asked ?: "?", isolated)
                                                   : strdup_printf("The kernel command line has no nohz_full=%s", isolated);
                finding_add(a, SEVERITY_WARNING, "boot.nohz_full", "nohz_full",
                            "%s: the isolated CPUs keep their scheduler tick (every 1-4 ms), which "
                            "interrupts the application even when it runs alone. Use %s %s.",
                            what ?: "nohz_full= does not match the isolated CPUs", grub, grub_howto);
        } else if (r < 0 && r != -ENOMEM)
                finding_add(a, SEVERITY_WARNING, "boot.nohz_full", "nohz_full",
                            "nohz_full=%s on the kernel command line is not a CPU list, so the tick may still run "
                            "on the isolated CPUs. Use %s %s.",
                            a->boot[BOOT_NOHZ_FULL], grub, grub_howto);

        /* rcu_nocbs=: nohz_full= CPUs are offloaded too, so either covers a CPU. */
        {
                _cleanup_cpuset_ CPUSet covered = CPUSET_EMPTY, missing = CPUSET_EMPTY;
                if (boot_cpus(a, BOOT_RCU_NOCBS, &covered) < 0)
                        cpuset_clear(&covered);
                if (r >= 0 && cpuset_or(&covered, &nohz) < 0)
                        a->error = -ENOMEM;
                if (cpuset_copy(&missing, &p->isolated) < 0)
                        a->error = -ENOMEM;
                cpuset_subtract(&missing, &covered);
                if (!cpuset_is_empty(&missing)) {
                        _cleanup_free_ char *list = cpus_list(a, &missing);
                        finding_add(a, SEVERITY_WARNING, "boot.rcu_nocbs", "rcu_nocbs",
                                    "Isolated CPU%s %s %s in neither rcu_nocbs= nor nohz_full=: RCU callbacks run "
                                    "there in softirq context and preempt the application. Use %s %s.",
                                    cpuset_count(&missing) == 1 ? "" : "s", list ?: "?",
                                    cpuset_count(&missing) == 1 ? "is" : "are", grub, grub_howto);
                }
        }

        /* irqaffinity= */
        {
                _cleanup_cpuset_ CPUSet irq = CPUSET_EMPTY;
                int q = boot_cpus(a, BOOT_IRQAFFINITY, &irq);
                if (q == -ENOENT)
                        finding_add(a, SEVERITY_INFO, "boot.irqaffinity", "irqaffinity",
                                    "The kernel command line has no irqaffinity=%s: IRQs set up during boot may "
                                    "use any CPU until lowlatd starts and moves them (and managed ones never "
                                    "move). Use %s %s.",
                                    housekeeping, grub, grub_howto);
                else if (q >= 0 && cpuset_intersects(&irq, &p->isolated))
                        finding_add(a, SEVERITY_WARNING, "boot.irqaffinity", "irqaffinity",
                                    "irqaffinity=%s includes isolated CPUs: every IRQ starts out allowed on "
                                    "them. Use %s %s.",
                                    a->boot[BOOT_IRQAFFINITY], grub, grub_howto);
        }

        /* What the kernel applied against what the command line asked for. */
        if (a->boot[BOOT_ISOLCPUS] && parse_isolcpus(a->boot[BOOT_ISOLCPUS], &flags, &cpus) >= 0 &&
            (flags & ISOLCPUS_DOMAIN) && read_cpus(a, &applied, "sys/devices/system/cpu/isolated") >= 0 &&
            !cpuset_equal(&applied, &cpus)) {
                _cleanup_free_ char *asked = cpus_list(a, &cpus), *got = cpus_list(a, &applied);
                finding_add(a, SEVERITY_WARNING, "boot.mismatch", "/sys/devices/system/cpu/isolated",
                            "The command line asks for isolcpus=%s but the kernel isolated \"%s\" (CPUs past "
                            "nr_cpus= or offline at boot, or a second isolcpus= that the kernel rejected). "
                            "Check dmesg | grep -i -e isolcpus -e housekeeping, then use %s %s.",
                            asked ?: "?", got ?: "?", grub, grub_howto);
        }
        if (r >= 0 && read_cpus(a, &applied, "sys/devices/system/cpu/nohz_full") >= 0 && !cpuset_equal(&applied, &nohz)) {
                _cleanup_free_ char *asked = cpus_list(a, &nohz), *got = cpus_list(a, &applied);
                bool no_config = a->kconfig_loaded && !kconfig_yes(a, KCONFIG_NO_HZ_FULL);
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

/* --- 2. kernel --- */

static void check_kernel(Audit *a) {
        const Posture *p = a->posture;
        _cleanup_free_ char *grub = NULL;

        switch (a->preempt_mode) {
        case PREEMPT_MODE_RT:
        case PREEMPT_MODE_FULL:
                /* full at run time only: the next boot goes back to the built-in default. */
                if (a->preempt_mode == PREEMPT_MODE_FULL && a->preempt_dynamic && a->kconfig_loaded &&
                    preempt_mode_from_config(a) != PREEMPT_MODE_FULL && !streq_ptr(a->boot[BOOT_PREEMPT], "full"))
                        finding_add(a, SEVERITY_INFO, "kernel.preempt", "preempt",
                                    "Preemption is full now, but it was set at run time: this kernel boots in %s "
                                    "mode. Add preempt=full to GRUB_CMDLINE_LINUX_DEFAULT %s.",
                                    preempt_mode_names[preempt_mode_from_config(a)], grub_howto);
                break;
        case PREEMPT_MODE_LAZY:
                finding_add(a, SEVERITY_INFO, "kernel.preempt", "preempt",
                            "The kernel runs with lazy preemption (%s): a woken high-priority task may wait "
                            "until the next tick for a running SCHED_OTHER task to yield. For the lowest "
                            "latency boot with preempt=full%s.",
                            a->preempt_source ?: "?",
                            a->preempt_dynamic ? ", or now: echo full > /sys/kernel/debug/sched/preempt" : "");
                break;
        case PREEMPT_MODE_NONE:
        case PREEMPT_MODE_VOLUNTARY:
                if (a->preempt_dynamic) {
                        grub = cpuset_is_empty(&p->isolated) ? NULL : grub_line(a);
                        finding_add(a, SEVERITY_WARNING, "kernel.preempt", "preempt",
                                    "The kernel runs with %s preemption (%s): a high-priority task that wakes "
                                    "up waits until the kernel code running on its CPU reaches a preemption "
                                    "point, which can take milliseconds. This kernel has PREEMPT_DYNAMIC: "
                                    "switch now with echo full > /sys/kernel/debug/sched/preempt and keep it "
                                    "with preempt=full on the kernel command line%s%s%s.",
                                    preempt_mode_names[a->preempt_mode], a->preempt_source ?: "?",
                                    grub ? " (" : "", grub ?: "", grub ? ")" : "");
                } else
                        finding_add(a, SEVERITY_WARNING, "kernel.preempt", "preempt",
                                    "The kernel is built with %s preemption (%s) and cannot switch at run time: a "
                                    "woken high-priority task waits until the kernel code on its CPU reaches a "
                                    "preemption point, which can take milliseconds. Install a kernel with "
                                    "PREEMPT_DYNAMIC (then boot with preempt=full), a lowlatency kernel, or a "
                                    "PREEMPT_RT one (Ubuntu: pro enable realtime-kernel).",
                                    preempt_mode_names[a->preempt_mode], a->preempt_source ?: "?");
                break;
        case PREEMPT_MODE_UNKNOWN:
                finding_add(a, SEVERITY_INFO, "kernel.preempt", "preempt",
                            "The preemption model cannot be told: /sys/kernel/debug/sched/preempt is missing "
                            "(debugfs not mounted, or no PREEMPT_DYNAMIC) and /boot/config-%s %s. Check with "
                            "dmesg | grep -i preempt and uname -v (PREEMPT_RT, PREEMPT_DYNAMIC or PREEMPT), or "
                            "mount -t debugfs none /sys/kernel/debug.",
                            a->release ?: "$(uname -r)", a->kconfig_loaded ? "names no preemption model" : "is unreadable");
                break;
        }

        if (!a->kconfig_loaded)
                return; /* see check_kernel_config_missing() */
        if (!kconfig_yes(a, KCONFIG_PREEMPT_RT))
                finding_add(a, SEVERITY_INFO, "kernel.config.PREEMPT_RT", a->kconfig_path ?: "kernel config",
                            "CONFIG_PREEMPT_RT is not set: interrupt handlers and spinlocks cannot be preempted, "
                            "so worst-case wake-up latency stays in the tens to hundreds of microseconds under "
                            "load. If the application needs hard real-time bounds, use a PREEMPT_RT kernel "
                            "(Ubuntu: pro enable realtime-kernel; Debian: linux-image-rt-amd64; RHEL: "
                            "kernel-rt) and compare with cyclictest.");
        if (!kconfig_yes(a, KCONFIG_HZ_1000))
                finding_add(a, SEVERITY_INFO, "kernel.config.HZ_1000", a->kconfig_path ?: "kernel config",
                            "CONFIG_HZ is %s, not 1000: timers and the tick on the housekeeping CPUs have %s "
                            "granularity, which delays timer-driven work. A kernel built with CONFIG_HZ_1000=y "
                            "(Ubuntu lowlatency, most RT kernels) ticks every millisecond.",
                            a->kconfig[KCONFIG_HZ] ?: "unknown",
                            streq_ptr(a->kconfig[KCONFIG_HZ], "250")   ? "4 ms"
                            : streq_ptr(a->kconfig[KCONFIG_HZ], "100") ? "10 ms"
                            : streq_ptr(a->kconfig[KCONFIG_HZ], "300") ? "3.3 ms"
                                                                       : "coarser");
        if (!cpuset_is_empty(&p->isolated) && !kconfig_yes(a, KCONFIG_NO_HZ_FULL))
                finding_add(a, SEVERITY_WARNING, "kernel.config.NO_HZ_FULL", a->kconfig_path ?: "kernel config",
                            "CONFIG_NO_HZ_FULL is not set: this kernel ignores nohz_full=, so the isolated CPUs "
                            "keep their periodic tick even with one task running. Install a kernel with "
                            "CONFIG_NO_HZ_FULL=y (the Ubuntu, Debian, Fedora and RHEL kernels have it).");
        if (!cpuset_is_empty(&p->isolated) && !kconfig_yes(a, KCONFIG_RCU_NOCB_CPU))
                finding_add(a, SEVERITY_WARNING, "kernel.config.RCU_NOCB_CPU", a->kconfig_path ?: "kernel config",
                            "CONFIG_RCU_NOCB_CPU is not set: this kernel ignores rcu_nocbs=, so RCU callbacks run "
                            "on the isolated CPUs in softirq context. Install a kernel with "
                            "CONFIG_RCU_NOCB_CPU=y.");
}

static void check_kernel_config_missing(Audit *a) {
        /* Reported on its own so that the subject names the file looked for. */
        _cleanup_free_ char *subject = NULL;

        if (a->kconfig_loaded || !a->release || !path_exists(a, "proc/config.gz"))
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

/* --- 3. topology --- */

static void check_topology(Audit *a) {
        const Posture *p = a->posture;
        _cleanup_cpuset_ CPUSet whole = CPUSET_EMPTY, drop = CPUSET_EMPTY, add = CPUSET_EMPTY;
        _cleanup_free_ char *whole_list = NULL, *drop_list = NULL, *add_list = NULL;
        size_t n_split = 0;

        if (cpuset_is_empty(&p->isolated))
                return;

        /* First pass: which isolated CPUs share a core with a CPU that is not isolated. */
        CPUSET_FOREACH(cpu, &p->isolated) {
                _cleanup_cpuset_ CPUSet siblings = CPUSET_EMPTY;
                if (read_cpus(a, &siblings, "sys/devices/system/cpu/cpu%d/topology/thread_siblings_list", cpu) < 0 &&
                    read_cpus(a, &siblings, "sys/devices/system/cpu/cpu%d/topology/core_cpus_list", cpu) < 0)
                        continue;
                if (cpuset_or(&whole, &siblings) < 0)
                        a->error = -ENOMEM;
                cpuset_and(&siblings, &p->online);
                cpuset_subtract(&siblings, &p->isolated);
                if (!cpuset_is_empty(&siblings)) {
                        n_split++;
                        if (cpuset_add(&drop, (unsigned) cpu) < 0)
                                a->error = -ENOMEM;
                }
        }
        if (n_split == 0)
                return;
        cpuset_and(&whole, &p->online);
        if (cpuset_copy(&add, &whole) < 0)
                a->error = -ENOMEM;
        cpuset_subtract(&add, &p->isolated);
        if (cpuset_copy(&whole, &p->isolated) < 0 || cpuset_or(&whole, &add) < 0)
                a->error = -ENOMEM;
        whole_list = cpus_list(a, &whole);
        add_list = cpus_list(a, &add);
        {
                _cleanup_cpuset_ CPUSet kept = CPUSET_EMPTY;
                if (cpuset_copy(&kept, &p->isolated) < 0)
                        a->error = -ENOMEM;
                cpuset_subtract(&kept, &drop);
                drop_list = cpus_list(a, &kept);
        }
        if (!whole_list || !add_list || !drop_list)
                return;

        CPUSET_FOREACH(cpu, &drop) {
                _cleanup_cpuset_ CPUSet siblings = CPUSET_EMPTY;
                _cleanup_free_ char *others = NULL, *subject = NULL;

                if (read_cpus(a, &siblings, "sys/devices/system/cpu/cpu%d/topology/thread_siblings_list", cpu) < 0 &&
                    read_cpus(a, &siblings, "sys/devices/system/cpu/cpu%d/topology/core_cpus_list", cpu) < 0)
                        continue;
                cpuset_and(&siblings, &p->online);
                cpuset_subtract(&siblings, &p->isolated);
                others = cpus_list(a, &siblings);
                subject = audit_check_alloc(a, strdup_printf("cpu%d", cpu));
                if (!others || !subject)
                        return;
                finding_add(a, SEVERITY_WARNING, "topology.smt-sibling", subject,
                            "Isolated CPU %d shares its physical core with CPU %s, which is not isolated: "
                            "whatever runs there competes for the core's execution units and caches, so the "
                            "isolated thread still sees the housekeeping load (lscpu -e=CPU,CORE shows the "
                            "pairs). Reserve whole cores: isolate %s (adding CPU %s), or keep only %s; or turn "
                            "SMT off with echo off > /sys/devices/system/cpu/smt/control (nosmt on the kernel "
                            "command line to keep it).",
                            cpu, others, whole_list, add_list, isempty(drop_list) ? "no CPU" : drop_list);
        }
}

static void check_numa(Audit *a) {
        const Posture *p = a->posture;
        _cleanup_free_ unsigned *nodes = NULL;
        _cleanup_free_ char *detail = NULL, *subject = NULL, *isolated = NULL;
        size_t n_nodes = 0, n_spanned = 0;
        struct dirent *de;
        DIR *d;

        if (cpuset_is_empty(&p->isolated))
                return;
        if (host_opendir(a->host, "sys/devices/system/node", &d) < 0)
                return;
        while ((de = readdir(d)) && n_nodes < NUMA_NODES_MAX) {
                unsigned node;
                unsigned *n;
                if (strncmp(de->d_name, "node", 4) != 0 || parse_unsigned(de->d_name + 4, &node) < 0)
                        continue;
                n = realloc(nodes, (n_nodes + 1) * sizeof(unsigned));
                if (!audit_check_alloc(a, n))
                        break;
                nodes = n;
                nodes[n_nodes++] = node;
        }
        closedir(d);
        if (n_nodes > 1)
                qsort(nodes, n_nodes, sizeof(unsigned), compare_unsigned);

        detail = audit_check_alloc(a, strdup(""));
        for (size_t i = 0; i < n_nodes && detail; i++) {
                _cleanup_cpuset_ CPUSet cpus = CPUSET_EMPTY;
                _cleanup_free_ char *list = NULL;
                char *more;
                if (read_cpus(a, &cpus, "sys/devices/system/node/node%u/cpulist", nodes[i]) < 0)
                        continue;
                cpuset_and(&cpus, &p->isolated);
                if (cpuset_is_empty(&cpus))
                        continue;
                n_spanned++;
                list = cpus_list(a, &cpus);
                more = audit_check_alloc(a, strdup_printf("%s%snode %u: %s", detail, *detail ? ", " : "", nodes[i], list ?: "?"));
                free(detail);
                detail = more;
        }
        if (n_spanned < 2 || !detail)
                return;
        isolated = cpus_list(a, &p->isolated);
        subject = audit_check_alloc(a, strdup_printf("isolated cpus %s", isolated ?: "?"));
        if (!subject)
                return;
        finding_add(a, SEVERITY_INFO, "topology.numa-spread", subject,
                    "The isolated CPUs span %zu NUMA nodes (%s): a thread on one node that touches memory or a "
                    "NIC attached to the other pays the interconnect on every access. Keep each application "
                    "within one node (numactl --cpunodebind=N --membind=N, or CPUAffinity= and "
                    "NUMAPolicy=bind with NUMAMask= in its unit), preferably the node of its NIC "
                    "(/sys/class/net/DEV/device/numa_node).",
                    n_spanned, detail);
}

/* --- 4. scheduling --- */

/* What a sysctl will be: the [sysctl] value when configured, else the host's. */
static char *sysctl_effective(Audit *a, const char *key, bool *ret_configured) {
        _cleanup_free_ char *path = NULL, *text = NULL;
        const Config *c = a->config;

        for (size_t i = c->n_sysctls; i > 0; i--)
                if (streq(c->sysctls[i - 1].key, key)) {
                        if (ret_configured)
                                *ret_configured = true;
                        return audit_check_alloc(a, normalize_whitespace(c->sysctls[i - 1].value));
                }
        if (ret_configured)
                *ret_configured = false;
        path = audit_check_alloc(a, strdup_printf("proc/sys/%s", key));
        if (!path)
                return NULL;
        for (char *p = path + strlen("proc/sys/"); *p; p++)
                if (*p == '.')
                        *p = '/';
        if (host_read_file(a->host, path, &text) < 0)
                return NULL;
        return audit_check_alloc(a, normalize_whitespace(text));
}

static const SysctlEntry *sysctl_configured(const Audit *a, const char *key) {
        const Config *c = a->config;
        for (size_t i = c->n_sysctls; i > 0; i--)
                if (streq(c->sysctls[i - 1].key, key))
                        return &c->sysctls[i - 1];
        return NULL;
}

static void check_rt_throttling(Audit *a) {
        const SysctlEntry *e = sysctl_configured(a, "kernel.sched_rt_runtime_us");
        bool configured;
        _cleanup_free_ char *value = sysctl_effective(a, "kernel.sched_rt_runtime_us", &configured);

        if (!value || !streq(value, "-1"))
                return;
        finding_add(a, SEVERITY_WARNING, "sched.rt-throttling", "kernel.sched_rt_runtime_us",
                    "kernel.sched_rt_runtime_us is -1%s%s%s: real-time throttling is off, so a SCHED_FIFO thread "
                    "that spins or loops can starve every other task on its CPU, kworkers and ksoftirqd "
                    "included, and hang the machine. Keep the default: sysctl -w "
                    "kernel.sched_rt_runtime_us=950000, and remove the -1 from %s.",
                    configured ? " in [sysctl] (" : "", configured && e ? e->source.file ?: "?" : "",
                    configured ? ")" : "",
                    configured ? "lowlatd.conf" : "/etc/sysctl.conf and /etc/sysctl.d/");
}

static void check_strays(Audit *a) {
        const Posture *p = a->posture;
        _cleanup_free_ char *housekeeping = NULL, *isolated = NULL;

        if (a->n_strays == 0)
                return;
        housekeeping = cpus_list(a, &p->housekeeping);
        isolated = cpus_list(a, &p->isolated);
        if (!housekeeping || !isolated)
                return;
        for (size_t i = 0; i < a->n_strays; i++) {
                const Stray *s = &a->strays[i];
                _cleanup_free_ char *subject = audit_check_alloc(a, strdup_printf("pid %u (%s)", s->pid, s->comm));
                if (!subject)
                        return;
                finding_add(a, SEVERITY_WARNING, "sched.stray-task", subject,
                            "Task %u (%s) is allowed on CPUs %s, which include isolated CPUs %s, and it is not a "
                            "configured application: when it wakes up it can run there and preempt the "
                            "application. Move it with taskset -apc %s %u; keep services off the isolated CPUs "
                            "with CPUAffinity=%s in /etc/systemd/system.conf (or the unit), or boot with "
                            "isolcpus=domain so new tasks start on housekeeping CPUs.%s",
                            s->pid, s->comm, s->allowed, isolated, housekeeping, s->pid, housekeeping,
                            a->config->evict_strays || s->pid == 1
                                    ? ""
                                    : " Or set evict_strays = yes in [cpus] and lowlatd moves such tasks as they "
                                      "appear.");
        }
}

/* --- 5. power --- */

typedef struct CpuGroup {
        char *key;
        char *label;
        uint64_t v1, v2;
        CPUSet cpus;
} CpuGroup;

typedef struct CpuGroups {
        CpuGroup *items;
        size_t n;
} CpuGroups;

static void cpu_groups_done(CpuGroups *g) {
        for (size_t i = 0; i < g->n; i++) {
                free(g->items[i].key);
                free(g->items[i].label);
                cpuset_done(&g->items[i].cpus);
        }
        free(g->items);
        *g = (CpuGroups) {};
}

/* Adds cpu to the group with this key, creating it. */
static void cpu_groups_add(Audit *a, CpuGroups *g, const char *key, const char *label, uint64_t v1, uint64_t v2,
                           unsigned cpu) {
        CpuGroup *items;

        for (size_t i = 0; i < g->n; i++)
                if (streq(g->items[i].key, key)) {
                        if (cpuset_add(&g->items[i].cpus, cpu) < 0)
                                a->error = -ENOMEM;
                        return;
                }
        items = audit_check_alloc(a, realloc(g->items, (g->n + 1) * sizeof(CpuGroup)));
        if (!items)
                return;
        g->items = items;
        items[g->n] = (CpuGroup) { .key = strdup(key), .label = strdup(label ?: ""), .v1 = v1, .v2 = v2 };
        if (!items[g->n].key || !items[g->n].label || cpuset_add(&items[g->n].cpus, cpu) < 0) {
                free(items[g->n].key);
                free(items[g->n].label);
                cpuset_done(&items[g->n].cpus);
                a->error = -ENOMEM;
                return;
        }
        g->n++;
}

static void check_power(Audit *a) {
        const Posture *p = a->posture;
        const char *want = a->config->governor ?: "performance";
        CpuGroups governors = {}, floors = {}, idle = {};

        if (cpuset_is_empty(&p->isolated))
                return;
        CPUSET_FOREACH(cpu, &p->isolated) {
                _cleanup_free_ char *governor = NULL;
                uint64_t min, max;

                if (read_value(a, &governor, "sys/devices/system/cpu/cpu%d/cpufreq/scaling_governor", cpu) < 0)
                        continue; /* no cpufreq: a VM, or the firmware owns the frequency */
                if (!streq(governor, want))
                        cpu_groups_add(a, &governors, governor, governor, 0, 0, (unsigned) cpu);
                if (streq(governor, "performance"))
                        continue;
                if (read_u64(a, &min, "sys/devices/system/cpu/cpu%d/cpufreq/scaling_min_freq", cpu) >= 0 &&
                    read_u64(a, &max, "sys/devices/system/cpu/cpu%d/cpufreq/cpuinfo_max_freq", cpu) >= 0 && min < max) {
                        _cleanup_free_ char *key = strdup_printf("%" PRIu64 " %" PRIu64 " %s", min, max, governor);
                        if (audit_check_alloc(a, key))
                                cpu_groups_add(a, &floors, key, governor, min, max, (unsigned) cpu);
                }
        }
        for (size_t i = 0; i < governors.n; i++) {
                _cleanup_free_ char *subject = cpus_subject(a, &governors.items[i].cpus);
                _cleanup_free_ char *cmd = cpu_write_command(a, &governors.items[i].cpus, want, "cpufreq/scaling_governor");
                if (!subject || !cmd)
                        break;
                finding_add(a, SEVERITY_WARNING, "power.governor", subject,
                            "The cpufreq governor of isolated %s is %s, not %s: the CPU clocks down when idle "
                            "and takes time to ramp back up when work arrives, adding latency and jitter. "
                            "Set it now with %s (as root), and keep it with [pm] governor = %s in "
                            "lowlatd.conf.",
                            subject, governors.items[i].key, want, cmd, want);
        }
        for (size_t i = 0; i < floors.n; i++) {
                _cleanup_free_ char *subject = cpus_subject(a, &floors.items[i].cpus);
                _cleanup_free_ char *value = audit_check_alloc(a, strdup_printf("%" PRIu64, floors.items[i].v2));
                _cleanup_free_ char *cmd = value ? cpu_write_command(a, &floors.items[i].cpus, value,
                                                                     "cpufreq/scaling_min_freq")
                                                 : NULL;
                if (!subject || !cmd)
                        break;
                finding_add(a, SEVERITY_WARNING, "power.min-freq", subject,
                            "Isolated %s may run as slow as %" PRIu64 " kHz (scaling_min_freq) under the %s "
                            "governor, against %" PRIu64 " kHz at most: each burst of work after a quiet spell "
                            "starts slow. Raise the floor with %s, or use the performance governor ([pm] "
                            "governor = performance).",
                            subject, floors.items[i].v1, floors.items[i].label, floors.items[i].v2, cmd);
        }

        /* Idle states slower to leave than the configured wake-up latency. */
        if (a->config->cpu_dma_latency_enabled) {
                uint64_t target = (uint64_t) a->config->cpu_dma_latency_usec;
                bool held = a->dma_holder_pid > 0;
                _cleanup_free_ char *holder = held ? audit_check_alloc(a, strdup_printf(" (by pid %u, %s)", a->dma_holder_pid,
                                                                                        a->dma_holder_comm ?: "?"))
                                                   : NULL;

                CPUSET_FOREACH(cpu, &p->isolated)
                        for (unsigned s = 0; s < CPUIDLE_STATES_MAX; s++) {
                                _cleanup_free_ char *name = NULL, *disable = NULL, *key = NULL;
                                uint64_t latency;
                                int r = read_u64(a, &latency, "sys/devices/system/cpu/cpu%d/cpuidle/state%u/latency", cpu, s);
                                if (r == -ENOENT)
                                        break;
                                if (r < 0 || latency <= target)
                                        continue;
                                if (read_value(a, &disable, "sys/devices/system/cpu/cpu%d/cpuidle/state%u/disable", cpu, s) < 0 ||
                                    !streq(disable, "0"))
                                        continue;
                                if (read_value(a, &name, "sys/devices/system/cpu/cpu%d/cpuidle/state%u/name", cpu, s) < 0)
                                        name = strdup("?");
                                key = name ? strdup_printf("%u %s %" PRIu64, s, name, latency) : NULL;
                                if (audit_check_alloc(a, key))
                                        cpu_groups_add(a, &idle, key, name, s, latency, (unsigned) cpu);
                        }
                for (size_t i = 0; i < idle.n; i++) {
                        const CpuGroup *g = &idle.items[i];
                        _cleanup_free_ char *subject = cpus_subject(a, &g->cpus);
                        _cleanup_free_ char *file = audit_check_alloc(a, strdup_printf("cpuidle/state%" PRIu64 "/disable", g->v1));
                        _cleanup_free_ char *cmd = file ? cpu_write_command(a, &g->cpus, "1", file) : NULL;
                        _cleanup_free_ char *list = cpus_list(a, &g->cpus);
                        if (!subject || !cmd || !list || (held && !holder))
                                break;
                        finding_add(a, held ? SEVERITY_INFO : SEVERITY_WARNING, "power.cpuidle", subject,
                                    "Idle state %" PRIu64 " (%s) takes %" PRIu64 " us to leave, more than the %" PRIu64
                                    " us of [pm] cpu_dma_latency, and is enabled on isolated %s: %s%s%s. Disable it "
                                    "there with %s (or cpupower -c %s idle-set -d %" PRIu64 ").",
                                    g->v1, g->label, g->v2, target, subject,
                                    held ? "the /dev/cpu_dma_latency request held now" : "nobody holds /dev/cpu_dma_latency",
                                    held ? holder : "",
                                    held ? " keeps the CPU out of it, but only while that request is held; "
                                           "disabling it on the isolated CPUs alone also lets the rest of the "
                                           "host sleep deeply"
                                         : ", so the CPU enters it whenever it idles and the next wake-up pays "
                                           "the exit latency",
                                    cmd, list, g->v1);
                }
        }
        cpu_groups_done(&governors);
        cpu_groups_done(&floors);
        cpu_groups_done(&idle);
}

static void check_dma_latency(Audit *a) {
        if (!a->dma_device_exists || !a->proc_listed || a->dma_holder_pid > 0 || a->dma_unknown)
                return;
        if (a->config->cpu_dma_latency_enabled)
                finding_add(a, SEVERITY_WARNING, "power.dma-latency-unheld", "/dev/cpu_dma_latency",
                            "[pm] cpu_dma_latency = %" PRId32 " but no process holds /dev/cpu_dma_latency open: "
                            "the request lasts only as long as the open file, so the CPUs may enter deep idle "
                            "states and take tens to hundreds of microseconds to wake. Is lowlatd running "
                            "(systemctl status lowlatd)? In observe mode it does not hold the request.",
                            a->config->cpu_dma_latency_usec);
        else
                finding_add(a, SEVERITY_INFO, "power.dma-latency-unheld", "/dev/cpu_dma_latency",
                            "No process holds /dev/cpu_dma_latency open, so nothing limits how deep the CPUs "
                            "sleep when idle: waking from a deep C-state takes tens to hundreds of "
                            "microseconds. Set [pm] cpu_dma_latency = 0 (or the largest wake-up latency the "
                            "application tolerates, in microseconds) and lowlatd holds the request.");
}

/* --- 6. interrupts --- */

/* /proc/PID/environ: NUL-separated, so its length is returned too (the buffer is
 * NUL-terminated past it). */
static int read_environ(Audit *a, unsigned pid, char **ret, size_t *ret_len) {
        _cleanup_free_ char *path = audit_check_alloc(a, strdup_printf("proc/%u/environ", pid));
        int r;

        if (!path)
                return -ENOMEM;
        r = host_read_file_len(a->host, path, ret, ret_len);
        if (r == -ENOMEM && a->error == 0)
                a->error = r;
        return r;
}

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

static void check_irqbalance(Audit *a) {
        const Posture *p = a->posture;
        _cleanup_cpuset_ CPUSet banned = CPUSET_EMPTY, from_file = CPUSET_EMPTY;
        _cleanup_free_ char *env = NULL, *file = NULL, *isolated = NULL, *subject = NULL;
        _cleanup_cpuset_ CPUSet kernel = CPUSET_EMPTY, nohz = CPUSET_EMPTY;
        bool pins = a->config->n_pins > 0, kernel_covers;
        const char *file_name = "/etc/default/irqbalance (/etc/sysconfig/irqbalance on Fedora and RHEL)";
        size_t environ_len = 0;
        bool env_read, file_covers = false, explicit_ban = false, kernel_isolated;
        int r;

        if (a->irqbalance_pid == 0 || cpuset_is_empty(&p->isolated))
                return;
        env_read = read_environ(a, a->irqbalance_pid, &env, &environ_len) >= 0;
        for (size_t off = 0; env_read && off < environ_len; off += strlen(env + off) + 1) {
                r = irqbalance_banned(env + off, &banned);
                if (r == -ENOMEM)
                        a->error = r;
                else if (r > 0)
                        explicit_ban = true;
        }
        if (read_file(a, &file, "etc/default/irqbalance") >= 0)
                file_name = "/etc/default/irqbalance";
        else if (read_file(a, &file, "etc/sysconfig/irqbalance") >= 0)
                file_name = "/etc/sysconfig/irqbalance";
        if (file) {
                r = irqbalance_banned(file, &from_file);
                if (r == -ENOMEM)
                        a->error = r;
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
        if (read_cpus(a, &kernel, "sys/devices/system/cpu/isolated") < 0)
                cpuset_clear(&kernel);
        if (read_cpus(a, &nohz, "sys/devices/system/cpu/nohz_full") >= 0 && cpuset_or(&kernel, &nohz) < 0)
                a->error = -ENOMEM;
        /* ...but only when no ban is set at all: irqbalance (cputree.c) reads isolcpus= and
         * nohz_full= only in the absence of IRQBALANCE_BANNED_CPUS/CPULIST, so a ban that
         * misses the isolated CPUs puts IRQs on them even on an isolcpus= kernel. */
        kernel_isolated = cpuset_is_subset(&p->isolated, &kernel);
        kernel_covers = !explicit_ban && kernel_isolated;
        for (size_t i = 0; i < a->config->n_nics; i++)
                pins = pins || a->config->nics[i].irq_cpus_set;
        isolated = cpus_list(a, &p->isolated);
        subject = audit_check_alloc(a, strdup_printf("pid %u (irqbalance)", a->irqbalance_pid));
        if (!isolated || !subject)
                return;
        finding_add(a, kernel_covers && !pins ? SEVERITY_INFO : SEVERITY_WARNING, "irq.irqbalance", subject,
                    "irqbalance is running without isolated CPUs %s in IRQBALANCE_BANNED_CPULIST: %s. %s"
                    "Add IRQBALANCE_BANNED_CPULIST=%s to %s and systemctl restart irqbalance, or stop it "
                    "(systemctl disable --now irqbalance) and let lowlatd place the IRQs.",
                    isolated,
                    !kernel_isolated ? "the kernel did not isolate them, so irqbalance spreads IRQs onto them and "
                                       "rewrites the affinities lowlatd sets; the two fight"
                    : !kernel_covers ? "its ban list replaces its own reading of isolcpus= and nohz_full=, so "
                                       "irqbalance spreads IRQs onto them although the kernel isolated them, and "
                                       "rewrites the affinities lowlatd sets; the two fight"
                    : pins ? "it moves the IRQs lowlatd pins ([irq] pin, [nic] irq_cpus), so the two fight"
                           : "irqbalance 1.8 and later skip the kernel's isolcpus= and nohz_full= CPUs on their "
                             "own, older versions do not, and any version rebalances what lowlatd places",
                    file_covers && env_read ? "The file already bans them, but the running irqbalance started "
                                              "before that: restart it. "
                                            : "",
                    isolated, file_name);
}

/* "LIST" or "LIST (effective LIST)", as setting.c records an IRQ: the effective CPUs when
 * known, else the affinity. */
static int irq_observed_cpus(const char *observed, CPUSet *ret) {
        _cleanup_free_ char *copy = strdup(observed);
        char *eff;

        if (!copy)
                return -ENOMEM;
        eff = strstr(copy, " (effective ");
        if (eff) {
                char *list = eff + strlen(" (effective ");
                list[strcspn(list, ")")] = '\0';
                return cpuset_parse_list(list, ret);
        }
        return cpuset_parse_list(copy, ret);
}

static void check_unmovable_irqs(Audit *a) {
        const Posture *p = a->posture;
        const SettingTable *t = a->table;

        if (!t || cpuset_is_empty(&p->isolated))
                return;
        for (size_t i = 0; i < t->n; i++) {
                const Setting *s = t->settings[i];
                _cleanup_cpuset_ CPUSet cpus = CPUSET_EMPTY;
                _cleanup_free_ char *list = NULL, *subject = NULL;

                if (!s || s->kind != SETTING_IRQ_AFFINITY || s->state != SETTING_UNMOVABLE || !s->observed)
                        continue;
                if (irq_observed_cpus(s->observed, &cpus) < 0)
                        continue;
                cpuset_and(&cpus, &p->isolated);
                if (cpuset_is_empty(&cpus))
                        continue;
                list = cpus_list(a, &cpus);
                subject = audit_check_alloc(a, s->label ? strdup_printf("irq %s (%s)", s->object, s->label)
                                                        : strdup_printf("irq %s", s->object));
                if (!list || !subject)
                        return;
                finding_add(a, SEVERITY_WARNING, "irq.unmovable-isolated", subject,
                            "IRQ %s%s%s%s is served on isolated CPU %s and the kernel refuses to move it%s%s: "
                            "every interrupt preempts the application there. Managed IRQs (NVMe, multi-queue "
                            "NIC drivers) follow their queue's CPU: boot with isolcpus=managed_irq,domain,... "
                            "so the kernel keeps them off isolated CPUs, or give the device fewer queues "
                            "(ethtool -L DEV combined N) so that none maps to an isolated CPU.",
                            s->object, s->label ? " (" : "", s->label ?: "", s->label ? ")" : "", list,
                            s->reason ? ": " : "", s->reason ?: "");
        }
}

/* --- 7. virtualisation --- */

static void check_steal(Audit *a) {
        _cleanup_free_ char *text = NULL;
        uint64_t values[8], total = 0, bp;
        char *line, *tok, *save = NULL;
        size_t n = 0;

        if (read_file(a, &text, "proc/stat") < 0)
                return;
        line = text;
        if (strncmp(line, "cpu ", 4) != 0)
                return;
        line[strcspn(line, "\n")] = '\0';
        for (tok = strtok_r(line + 4, " \t", &save); tok && n < 8; tok = strtok_r(NULL, " \t", &save)) {
                if (parse_uint64(tok, &values[n]) < 0)
                        return;
                if (values[n] > UINT64_MAX / 16 || total > UINT64_MAX / 2)
                        return;
                total += values[n++];
        }
        if (n < 8 || total == 0 || values[7] == 0)
                return; /* before 2.6.11 there is no steal column */
        bp = values[7] > UINT64_MAX / 10000 ? values[7] / (total / 10000 ?: 1) : values[7] * 10000 / total;
        finding_add(a, bp >= AUDIT_STEAL_WARNING_BP ? SEVERITY_WARNING : SEVERITY_INFO, "virt.steal", "/proc/stat",
                    "The hypervisor has taken %" PRIu64 ".%02" PRIu64 "%% of this machine's CPU time since boot "
                    "(steal time): this is a virtual machine whose vCPUs are paused while the host runs other "
                    "guests, and those pauses reach the application however well the guest is tuned. "
                    "Watch the st column of vmstat 1 under load; for stable latency ask for dedicated "
                    "(pinned) vCPUs or move to bare metal.",
                    bp / 100, bp % 100);
}

/* --- processes: one pass over /proc --- */

static void app_add_pid(Audit *a, size_t app, unsigned pid) {
        AppPids *ap = &a->apps[app];
        unsigned *pids = audit_check_alloc(a, realloc(ap->pids, (ap->n + 1) * sizeof(unsigned)));
        if (!pids)
                return;
        ap->pids = pids;
        ap->pids[ap->n++] = pid;
}

/* 1 when a process has /dev/cpu_dma_latency open, 0 when not, -errno when its fds cannot
 * be read. The links are read where they are, never followed. */
static int process_holds_dma_latency(Audit *a, unsigned pid) {
        _cleanup_free_ char *path = audit_check_alloc(a, strdup_printf("proc/%u/fd", pid));
        struct dirent *de;
        size_t seen = 0;
        int r, found = 0;
        DIR *d;

        if (!path)
                return -ENOMEM;
        r = host_opendir(a->host, path, &d);
        if (r < 0)
                return r;
        while ((de = readdir(d)) && !found) {
                char target[64];
                ssize_t n;

                if (de->d_name[0] == '.')
                        continue;
                if (a->fd_budget == 0 || ++seen > FDS_PER_PROCESS_MAX)
                        break;
                a->fd_budget--;
                n = readlinkat(dirfd(d), de->d_name, target, sizeof(target) - 1);
                if (n < 0)
                        continue;
                target[n] = '\0';
                found = streq(target, "/dev/cpu_dma_latency");
        }
        closedir(d);
        return found;
}

static void scan_process(Audit *a, unsigned pid) {
        const Posture *p = a->posture;
        const Config *c = a->config;
        _cleanup_free_ char *stat = NULL, *status = NULL, *comm = NULL, *allowed = NULL;
        _cleanup_cpuset_ CPUSet cpus = CPUSET_EMPTY;
        TaskStat st = {};
        bool have_stat, is_app = false;
        int r;

        have_stat = read_file(a, &stat, "proc/%u/stat", pid) >= 0 && task_stat_parse(stat, &st) >= 0;
        (void) read_file(a, &status, "proc/%u/status", pid);
        if (!have_stat && !status)
                return; /* gone, or not a process */
        a->n_examined++;
        /* A stat line without PF_KTHREAD is a user task, however it looks: the audit only
         * reports, so it does not hide a stray behind kthreadd's look (evict_strays, which
         * moves tasks, is more careful; see process_look() in strays.c). */
        r = task_is_kernel_thread(a->host, pid, have_stat ? &st : NULL, status);
        if (r < 0)
                a->error = r;
        if (r != 0)
                return;

        if (read_value(a, &comm, "proc/%u/comm", pid) < 0 || isempty(comm)) {
                free(comm);
                comm = audit_check_alloc(a, strdup(have_stat ? st.comm : ""));
                if (comm && isempty(comm) && status) {
                        free(comm);
                        comm = field_value(a, status, "Name");
                }
        }
        if (!comm)
                return;

        r = task_match_apps(a->host, c, pid, comm, a->app_matched);
        if (r < 0) {
                a->error = r;
                return;
        }
        is_app = r > 0;
        for (size_t i = 0; is_app && i < c->n_apps; i++)
                if (a->app_matched[i])
                        app_add_pid(a, i, pid);

        if (streq(comm, "irqbalance") && a->irqbalance_pid == 0)
                a->irqbalance_pid = pid;

        if (!is_app && status && !cpuset_is_empty(&p->isolated) && cpus_allowed(a, status, &cpus, &allowed) >= 0 &&
            cpuset_intersects(&cpus, &p->isolated)) {
                Stray *s = audit_check_alloc(a, realloc(a->strays, (a->n_strays + 1) * sizeof(Stray)));
                if (s) {
                        a->strays = s;
                        s[a->n_strays] = (Stray) { .pid = pid, .comm = strdup(comm), .allowed = TAKE_PTR(allowed) };
                        if (!s[a->n_strays].comm) {
                                free(s[a->n_strays].allowed);
                                a->error = -ENOMEM;
                        } else
                                a->n_strays++;
                }
        }

        if (a->dma_device_exists && a->dma_holder_pid == 0) {
                r = process_holds_dma_latency(a, pid);
                if (r > 0) {
                        a->dma_holder_pid = pid;
                        a->dma_holder_comm = audit_check_alloc(a, strdup(comm));
                } else if (r < 0 && r != -ENOENT)
                        a->dma_unknown = true;
        }
}

static void scan_processes(Audit *a) {
        _cleanup_free_ unsigned *pids = NULL;
        size_t n = 0;

        a->apps = audit_check_alloc(a, calloc(MAX(a->config->n_apps, 1U), sizeof(AppPids)));
        a->app_matched = audit_check_alloc(a, calloc(MAX(a->config->n_apps, 1U), sizeof(bool)));
        if (!a->apps || !a->app_matched)
                return;
        a->dma_device_exists = path_exists(a, "dev/cpu_dma_latency");
        if (audit_list_numbers(a, "proc", a->max_processes, &pids, &n, &a->n_pids_total) < 0)
                return;
        for (size_t i = 0; i < n && a->error == 0; i++)
                scan_process(a, pids[i]);
        a->proc_listed = a->n_examined > 0;
        if (a->fd_budget == 0)
                a->dma_unknown = true;
}

/* --- 8. applications --- */

typedef struct ThreadSummary {
        size_t n, n_rt, n_inside, n_straddle, n_outside;
        unsigned max_rt_priority;
        unsigned main_policy;
        char *main_allowed;
} ThreadSummary;

static bool policy_matches(const AppSection *app, unsigned policy) {
        if (app->policy >= 0)
                return policy == (unsigned) app->policy;
        return policy == SCHED_FIFO || policy == SCHED_RR;
}

/* Reads one task (dir is "proc/PID" or "proc/PID/task/TID") into the summary. */
static void summarize_task(Audit *a, const AppSection *app, const char *dir, bool main_thread, ThreadSummary *s) {
        const Posture *p = a->posture;
        _cleanup_free_ char *stat = NULL, *status = NULL, *allowed = NULL;
        _cleanup_cpuset_ CPUSet cpus = CPUSET_EMPTY;
        TaskStat st = {};

        if (read_file(a, &stat, "%s/stat", dir) >= 0 && task_stat_parse(stat, &st) >= 0 && st.have_policy) {
                s->n++;
                if (policy_matches(app, st.policy)) {
                        s->n_rt++;
                        s->max_rt_priority = MAX(s->max_rt_priority, st.rt_priority);
                }
                if (main_thread)
                        s->main_policy = st.policy;
        }
        if (read_file(a, &status, "%s/status", dir) < 0 || cpus_allowed(a, status, &cpus, &allowed) < 0)
                return;
        if (cpuset_is_empty(&p->isolated) || cpuset_is_empty(&cpus))
                ;
        else if (cpuset_is_subset(&cpus, &p->isolated))
                s->n_inside++;
        else if (cpuset_intersects(&cpus, &p->isolated))
                s->n_straddle++;
        else
                s->n_outside++;
        if (main_thread && !s->main_allowed)
                s->main_allowed = TAKE_PTR(allowed);
}

static char *app_subject(Audit *a, unsigned pid, const char *comm) {
        return audit_check_alloc(a, strdup_printf("pid %u (%s)", pid, comm));
}

static char *app_what(Audit *a, const AppSection *app) {
        return audit_check_alloc(a, app->kind == APP_SERVICE ? strdup_printf("%s.service", app->name)
                                                             : strdup_printf("process %s", app->name));
}

/* "pid 1300 (engine) of engine.service", or "pid 1234 (matcher)" for a [process]. */
static char *app_who(Audit *a, const AppSection *app, const char *subject) {
        return audit_check_alloc(a, app->kind == APP_SERVICE ? strdup_printf("%s of %s.service", subject, app->name)
                                                             : strdup(subject));
}

static void check_app_process(Audit *a, const AppSection *app, unsigned pid) {
        const Posture *p = a->posture;
        _cleanup_free_ unsigned *tids = NULL;
        _cleanup_free_ char *comm = NULL, *subject = NULL, *what = NULL, *who = NULL, *isolated = NULL, *status = NULL;
        _cleanup_free_ char *env = NULL;
        ThreadSummary s = {};
        size_t n_tids = 0, environ_len = 0;
        bool is_service = app->kind == APP_SERVICE;
        unsigned want_priority = app->priority > 0 ? app->priority : 80;
        bool rr = app->policy == SCHED_RR;

        if (read_value(a, &comm, "proc/%u/comm", pid) < 0) {
                comm = audit_check_alloc(a, strdup(app->kind == APP_PROCESS ? app->name : "?"));
                if (!comm)
                        return;
        }
        subject = app_subject(a, pid, comm);
        what = app_what(a, app);
        who = subject ? app_who(a, app, subject) : NULL;
        isolated = cpus_list(a, &p->isolated);
        if (!subject || !what || !who || !isolated)
                return;

        /* Threads one by one: a program often makes only its hot thread real-time and
         * pins it, leaving helpers on housekeeping CPUs. */
        {
                _cleanup_free_ char *task = audit_check_alloc(a, strdup_printf("proc/%u/task", pid));
                if (task && audit_list_numbers(a, task, AUDIT_THREADS_MAX, &tids, &n_tids, NULL) < 0)
                        n_tids = 0;
        }
        for (size_t i = 0; i < n_tids; i++) {
                _cleanup_free_ char *dir = audit_check_alloc(a, strdup_printf("proc/%u/task/%u", pid, tids[i]));
                if (dir)
                        summarize_task(a, app, dir, tids[i] == pid, &s);
        }
        if (s.n == 0 && s.n_inside + s.n_straddle + s.n_outside == 0) {
                _cleanup_free_ char *dir = audit_check_alloc(a, strdup_printf("proc/%u", pid));
                if (dir)
                        summarize_task(a, app, dir, true, &s);
        }

        /* affinity */
        if (!cpuset_is_empty(&p->isolated) && s.n_inside + s.n_straddle + s.n_outside > 0 &&
            (s.n_inside == 0 || s.n_straddle > 0)) {
                _cleanup_free_ char *fix = audit_check_alloc(
                        a, is_service ? strdup_printf("systemctl edit %s and add CPUAffinity=%s under [Service], then "
                                                      "systemctl restart %s",
                                                      what, isolated, what)
                                      : strdup_printf("taskset -apc %s %u now, and start it under taskset -c %s", isolated,
                                                      pid, isolated));
                if (fix)
                        finding_add(a, s.n_inside == 0 ? SEVERITY_CRITICAL : SEVERITY_WARNING, "app.affinity", subject,
                                    "%s %s (the main thread may use CPUs %s, the isolated ones are %s): "
                                    "%s. Fix: %s; then pin each latency-critical thread to one CPU of its own "
                                    "with pthread_setaffinity_np().",
                                    who,
                                    s.n_inside == 0 ? "has no thread confined to the isolated CPUs" : "has threads that straddle isolated and other CPUs",
                                    s.main_allowed ?: "?", isolated,
                                    s.n_inside == 0 ? "it runs among the housekeeping load, so the isolation does not protect it"
                                                    : "the scheduler may move them between an isolated CPU and a busy one",
                                    fix);
        }

        /* policy and priority */
        if (s.n > 0 && s.n_rt == 0) {
                const char *want = app->policy == SCHED_FIFO ? "SCHED_FIFO" : app->policy == SCHED_RR ? "SCHED_RR" : "SCHED_FIFO or SCHED_RR";
                _cleanup_free_ char *fix = audit_check_alloc(
                        a, is_service ? strdup_printf("systemctl edit %s and add CPUSchedulingPolicy=%s and "
                                                      "CPUSchedulingPriority=%u under [Service]",
                                                      what, rr ? "rr" : "fifo", want_priority)
                                      : strdup_printf("chrt %s -a -p %u %u now, and start it under chrt %s %u",
                                                      rr ? "-r" : "-f", want_priority, pid, rr ? "-r" : "-f",
                                                      want_priority));
                if (fix)
                        finding_add(a, SEVERITY_WARNING, "app.policy", subject,
                                    "No thread of %s runs %s (the main thread is %s): a normal task can be made "
                                    "to wait behind other tasks and kernel threads on its CPU. Fix: %s.",
                                    who, want, policy_name(s.main_policy), fix);
        } else if (s.n_rt > 0 && app->priority > 0 && s.max_rt_priority < app->priority &&
                   (app->policy < 0 || app->policy == SCHED_FIFO || app->policy == SCHED_RR)) {
                _cleanup_free_ char *fix = audit_check_alloc(
                        a, is_service ? strdup_printf("CPUSchedulingPriority=%u (systemctl edit %s)", app->priority, what)
                                      : strdup_printf("chrt %s -a -p %u %u", rr ? "-r" : "-f", app->priority, pid));
                if (fix)
                        finding_add(a, SEVERITY_WARNING, "app.priority", subject,
                                    "The highest real-time priority among the threads of %s is %u, below the "
                                    "priority = %u configured: real-time threads of higher priority (IRQ threads "
                                    "run at 50) preempt it. Fix: %s.",
                                    who, s.max_rt_priority, app->priority, fix);
        }

        /* memlock: mlockall() needs the limit or CAP_IPC_LOCK. */
        if (app->mlock) {
                _cleanup_free_ char *limits = NULL, *cap = NULL;
                uint64_t caps = 0;
                bool has_cap = false;

                if (read_file(a, &status, "proc/%u/status", pid) >= 0 && (cap = field_value(a, status, "CapEff"))) {
                        char *end;
                        errno = 0;
                        caps = strtoull(cap, &end, 16);
                        has_cap = errno == 0 && end != cap && *end == '\0' && (caps >> CAP_IPC_LOCK_BIT) & 1;
                }
                if (!has_cap && read_file(a, &limits, "proc/%u/limits", pid) >= 0) {
                        const char *line = strstr(limits, "Max locked memory");
                        if (line) {
                                char soft[32] = "";
                                const char *v = line + strlen("Max locked memory");
                                size_t n;
                                while (*v == ' ')
                                        v++;
                                n = strcspn(v, " \n");
                                if (n > 0 && n < sizeof(soft)) {
                                        memcpy(soft, v, n);
                                        soft[n] = '\0';
                                }
                                if (*soft && !streq(soft, "unlimited")) {
                                        _cleanup_free_ char *fix = audit_check_alloc(
                                                a, is_service ? strdup_printf("systemctl edit %s and add "
                                                                              "LimitMEMLOCK=infinity under [Service]",
                                                                              what)
                                                              : strdup_printf("prlimit --pid %u --memlock=unlimited:unlimited "
                                                                              "now, and raise it where it starts "
                                                                              "(ulimit -l unlimited, or memlock in "
                                                                              "/etc/security/limits.conf)",
                                                                              pid));
                                        if (fix)
                                                finding_add(a, SEVERITY_WARNING, "app.memlock", subject,
                                                            "%s may lock only %s bytes of memory and lacks "
                                                            "CAP_IPC_LOCK: mlockall() fails, so its pages can be "
                                                            "reclaimed and fault back in at the worst moment. Fix: %s.",
                                                            who, soft, fix);
                                }
                        }
                }
        }

        /* TZ: without it glibc stat()s /etc/localtime on every localtime(). */
        if (read_environ(a, pid, &env, &environ_len) >= 0) {
                _cleanup_free_ char *tz_fix = audit_check_alloc(
                        a, is_service ? strdup_printf("systemctl edit %s and add Environment=TZ=:/etc/localtime under "
                                                      "[Service]",
                                                      what)
                                      : strdup("start it with TZ=:/etc/localtime in its environment"));
                bool has_tz = false;
                for (size_t off = 0; off < environ_len; off += strlen(env + off) + 1)
                        if (strncmp(env + off, "TZ=", 3) == 0)
                                has_tz = true;
                if (!has_tz)
                        finding_add(a, SEVERITY_INFO, "app.tz", subject,
                                    "%s has no TZ in its environment: glibc then checks /etc/localtime with a "
                                    "stat() system call on every localtime(), thousands of needless syscalls a "
                                    "minute for a program that logs. Fix: %s.",
                                    who,
                                    tz_fix ?: "Environment=TZ=:/etc/localtime");
        }

        /* Huge pages: transparent ones in smaps_rollup, hugetlbfs ones in status. */
        if (app->hugepages) {
                _cleanup_free_ char *rollup = NULL, *anon = NULL, *hugetlb = NULL;
                bool known = false, uses = false;
                uint64_t kb;

                if (read_file(a, &rollup, "proc/%u/smaps_rollup", pid) >= 0 && (anon = field_value(a, rollup, "AnonHugePages"))) {
                        known = true;
                        uses = sscanf(anon, "%" SCNu64, &kb) == 1 && kb > 0;
                }
                if (!uses && (status || read_file(a, &status, "proc/%u/status", pid) >= 0) &&
                    (hugetlb = field_value(a, status, "HugetlbPages"))) {
                        known = true;
                        uses = sscanf(hugetlb, "%" SCNu64, &kb) == 1 && kb > 0;
                }
                if (known && !uses) {
                        _cleanup_free_ char *thp = NULL;
                        (void) read_value(a, &thp, "sys/kernel/mm/transparent_hugepage/enabled");
                        finding_add(a, SEVERITY_WARNING, "app.hugepages", subject,
                                    "%s maps no huge page (AnonHugePages and HugetlbPages are 0), though "
                                    "hugepages = yes: its working set takes TLB misses on 4 KiB pages. %s%s%s"
                                    "Enable transparent huge pages (echo always > "
                                    "/sys/kernel/mm/transparent_hugepage/enabled, or madvise plus "
                                    "madvise(MADV_HUGEPAGE) in the program), or reserve huge pages with "
                                    "vm.nr_hugepages in [sysctl] and map them with MAP_HUGETLB.",
                                    who, thp ? "Transparent huge pages are set to \"" : "", thp ?: "",
                                    thp ? "\". " : "");
                }
        }
        free(s.main_allowed);
}

static void check_apps(Audit *a) {
        const Config *c = a->config;

        for (size_t i = 0; i < c->n_apps && a->error == 0; i++) {
                const AppSection *app = &c->apps[i];
                if (a->apps[i].n == 0) {
                        _cleanup_free_ char *subject = audit_check_alloc(
                                a, strdup_printf("%s %s", app->kind == APP_SERVICE ? "service" : "process", app->name));
                        if (!subject || !a->proc_listed)
                                continue;
                        finding_add(a, SEVERITY_WARNING, "app.not-running", subject,
                                    app->kind == APP_SERVICE
                                            ? "No process of %s.service was found (no /proc/PID/cgroup under "
                                              "%s.service), so its placement, policy and limits could not be "
                                              "checked. Start it (systemctl start %s), or remove the [service] "
                                              "section if it no longer runs here."
                                            : "No process named %s was found (/proc/PID/comm), so its placement, "
                                              "policy and limits could not be checked. Start it, or fix the "
                                              "name in the [process \"%s\"] section (at most 15 characters, as "
                                              "ps -o comm shows it)%s.",
                                    app->name, app->name, app->kind == APP_SERVICE ? app->name : "");
                        continue;
                }
                for (size_t j = 0; j < a->apps[i].n; j++)
                        check_app_process(a, app, a->apps[i].pids[j]);
        }
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
        _cleanup_free_ char *path = audit_check_alloc(a, strdup_printf("proc/sys/%s", key));
        if (!path)
                return true;
        for (char *p = path + strlen("proc/sys/"); *p; p++)
                if (*p == '.')
                        *p = '/';
        return path_exists(a, path);
}

static bool word_in_list(const char *list, const char *word) {
        size_t len = strlen(word);
        for (const char *p = list; *p;) {
                size_t n;
                while (isspace((unsigned char) *p))
                        p++;
                n = strcspn(p, " \t\n");
                if (n == len && strncmp(p, word, len) == 0)
                        return true;
                p += n;
        }
        return false;
}

static void check_sysctls(Audit *a) {
        const Config *c = a->config;
        const SysctlEntry *cc;

        for (size_t i = 0; i < c->n_sysctls; i++) {
                const SysctlEntry *e = &c->sysctls[i];

                if (streq(e->key, "net.ipv4.tcp_low_latency") && !kernel_older_than(a, 4, 14))
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
                if (read_file(a, &available, "proc/sys/net/ipv4/tcp_available_congestion_control") >= 0 &&
                    !word_in_list(available, cc->value)) {
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

/* --- the run --- */

int audit_run(const Host *h, const Posture *p, const SettingTable *t, FindingList *ret) {
        return audit_run_with_limits(h, p, t, NULL, ret);
}

int audit_run_with_limits(const Host *h, const Posture *p, const SettingTable *t, const AuditLimits *limits,
                          FindingList *ret) {
        Audit a = {
                .host = h,
                .posture = p,
                .config = p ? p->config : NULL,
                .table = t,
                .max_processes = limits && limits->max_processes ? limits->max_processes : AUDIT_PROCESSES_MAX,
                .fd_budget = limits && limits->max_fds ? limits->max_fds : AUDIT_FDS_MAX,
        };

        if (!h || !p || !p->config || !ret)
                return -EINVAL;

        load_release(&a);
        load_kernel_config(&a);
        load_cmdline(&a);
        load_preempt(&a);
        scan_processes(&a);

        check_boot(&a);
        check_kernel(&a);
        check_kernel_config_missing(&a);
        check_topology(&a);
        check_numa(&a);
        check_rt_throttling(&a);
        check_strays(&a);
        check_power(&a);
        check_dma_latency(&a);
        check_irqbalance(&a);
        check_unmovable_irqs(&a);
        check_steal(&a);
        check_apps(&a);
        check_sysctls(&a);
        if (a.n_pids_total > a.max_processes)
                finding_add(&a, SEVERITY_INFO, "audit.limit", "/proc",
                            "%zu processes exist; only the %u with the lowest pids were examined for strays, "
                            "applications and the /dev/cpu_dma_latency holder.",
                            a.n_pids_total, a.max_processes);
        add_omitted_summaries(&a);

        if (a.error < 0) {
                int r = a.error;
                audit_done(&a);
                return r;
        }
        *ret = (FindingList) { .items = TAKE_PTR(a.items), .n = a.n_items };
        a.n_items = 0;
        audit_done(&a);
        return 0;
}
