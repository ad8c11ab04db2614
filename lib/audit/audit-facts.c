/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The facts one audit run reads once: its state, the host read through the root, and the
 * kernel's release, config, command line and preemption model. */
#include <ctype.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>

#include "basic/array.h"
#include "audit/audit-internal.h"
#include "basic/util.h"

#define CMDLINE_TOKENS_MAX 4096U

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

static const char *const boot_param_names[_BOOT_PARAM_MAX] = {
        [BOOT_ISOLCPUS] = "isolcpus",
        [BOOT_NOHZ_FULL] = "nohz_full",
        [BOOT_RCU_NOCBS] = "rcu_nocbs",
        [BOOT_IRQAFFINITY] = "irqaffinity",
        [BOOT_PREEMPT] = "preempt",
        [BOOT_SKEW_TICK] = "skew_tick",
        [BOOT_NOSOFTLOCKUP] = "nosoftlockup",
        [BOOT_TSC] = "tsc",
        [BOOT_RCU_KTHREAD_PRIO] = "rcutree.kthread_prio",
        [BOOT_RCU_USE_SOFTIRQ] = "rcutree.use_softirq",
};

static const char *const preempt_mode_table[_PREEMPT_MODE_MAX] = {
        [PREEMPT_MODE_UNKNOWN] = "unknown",
        [PREEMPT_MODE_NONE] = "none",
        [PREEMPT_MODE_VOLUNTARY] = "voluntary",
        [PREEMPT_MODE_FULL] = "full",
        [PREEMPT_MODE_LAZY] = "lazy",
        [PREEMPT_MODE_RT] = "rt",
};
DEFINE_STRING_TABLE_LOOKUP(preempt_mode, PreemptMode);

static void strays_free(Stray *list, size_t n) {
        for (size_t i = 0; i < n; i++) {
                free(list[i].comm);
                free(list[i].allowed);
        }
        free(list);
}

void audit_done(Audit *a) {
        finding_list_done(&a->findings);
        for (size_t i = 0; i < a->n_omitted; i++)
                free(a->omitted[i].id);
        free(a->omitted);
        free(a->release);
        free(a->cmdline_params);
        free(a->kconfig_path);
        for (size_t i = 0; i < _KCONFIG_MAX; i++)
                free(a->kconfig[i]);
        for (size_t i = 0; i < a->n_tokens; i++)
                free(a->tokens[i]);
        free(a->tokens);
        strays_free(a->strays, a->n_strays);
        strays_free(a->movable_kthreads, a->n_movable_kthreads);
        free(a->rcu_kthreads);
        for (size_t i = 0; i < a->n_app_realtime; i++) {
                free(a->app_realtime[i].who);
                cpuset_done(&a->app_realtime[i].isolated);
        }
        free(a->app_realtime);
        if (a->apps)
                for (size_t i = 0; i < a->config->n_apps; i++)
                        free(a->apps[i].pids);
        free(a->apps);
        free(a->app_matched);
        free(a->dma_holder_comm);
}

/* --- reading the host --- */

_printf_(3, 0) static int read_filev(Audit *a, char **ret, const char *fmt, va_list ap) {
        return audit_check_errno(a, host_read_filev(a->host, ret, fmt, ap));
}

_printf_(3, 4) int audit_read_file(Audit *a, char **ret, const char *fmt, ...) {
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = read_filev(a, ret, fmt, ap);
        va_end(ap);
        return r;
}

/* A value file: the kernel ends it with a newline. */
_printf_(3, 0) static int read_trimmedv(Audit *a, char **ret, const char *fmt, va_list ap) {
        _cleanup_free_ char *text = NULL;
        char *s;
        int r;

        r = read_filev(a, &text, fmt, ap);
        if (r < 0)
                return r;
        s = strstrip(text);
        memmove(text, s, strlen(s) + 1);
        *ret = TAKE_PTR(text);
        return 0;
}

_printf_(3, 4) int audit_read_value(Audit *a, char **ret, const char *fmt, ...) {
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = read_trimmedv(a, ret, fmt, ap);
        va_end(ap);
        return r;
}

_printf_(3, 4) int audit_read_u64(Audit *a, uint64_t *ret, const char *fmt, ...) {
        _cleanup_free_ char *text = NULL;
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = read_trimmedv(a, &text, fmt, ap);
        va_end(ap);
        return r < 0 ? r : parse_uint64(text, ret);
}

/* "(null)" is what nohz_full shows without the parameter. */
_printf_(3, 4) int audit_read_cpus(Audit *a, CPUSet *ret, const char *fmt, ...) {
        _cleanup_free_ char *text = NULL;
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = read_trimmedv(a, &text, fmt, ap);
        va_end(ap);
        if (r < 0)
                return r;
        if (streq(text, "(null)")) {
                cpuset_clear(ret);
                return 0;
        }
        return cpuset_parse_list(text, ret);
}

/* Whether relpath exists, without opening it (a device opened has effects of its own). The
 * last component is not followed. */
bool audit_path_exists(Audit *a, const char *relpath) {
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

/* /proc/PID/environ: NUL-separated, so its length is returned too (the buffer is
 * NUL-terminated past it). */
int audit_read_environ(Audit *a, unsigned pid, char **ret, size_t *ret_len) {
        _cleanup_free_ char *path = audit_check_alloc(a, strdup_printf("proc/%u/environ", pid));

        if (!path)
                return -ENOMEM;
        return audit_check_errno(a, host_read_file_len(a->host, path, ret, ret_len));
}

bool word_in_list(const char *list, const char *word) {
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

char *audit_cpus_list(Audit *a, const CPUSet *s) {
        return audit_check_alloc(a, cpuset_format_list(s));
}

char *audit_cpus_phrase(Audit *a, const CPUSet *s) {
        _cleanup_free_ char *list = NULL;

        if (cpuset_is_empty(s))
                return audit_check_alloc(a, strdup("no CPU"));
        list = audit_cpus_list(a, s);
        if (!list)
                return NULL;
        return audit_check_alloc(a, strdup_printf("%s %s", cpuset_count(s) == 1 ? "CPU" : "CPUs", list));
}

char *audit_cpus_phrase_of_list(Audit *a, const char *list) {
        _cleanup_cpuset_ CPUSet s = CPUSET_EMPTY;

        /* Worded from the parsed set ("0-0" is one CPU), shown as the kernel wrote it. */
        if (cpuset_parse_list(list, &s) < 0 || cpuset_is_empty(&s))
                return audit_check_alloc(a, strdup_printf("CPUs %s", list));
        return audit_check_alloc(a, strdup_printf("%s %s", cpuset_count(&s) == 1 ? "CPU" : "CPUs", list));
}

/* --- facts: kernel release, config, command line, preemption --- */

static void load_release(Audit *a) {
        if (audit_read_value(a, &a->release, "proc/sys/kernel/osrelease") < 0)
                return;
        /* It goes into a path: one component, nothing that climbs. */
        if (isempty(a->release) || strchr(a->release, '/') || streq(a->release, ".") || streq(a->release, "..")) {
                a->release = mfree(a->release);
                return;
        }
        a->kernel_version_known = parse_kernel_release(a->release, &a->kernel_major, &a->kernel_minor) >= 0;
}

bool audit_kernel_older_than(const Audit *a, unsigned major, unsigned minor) {
        return a->kernel_version_known &&
               (a->kernel_major < major || (a->kernel_major == major && a->kernel_minor < minor));
}

static void load_kernel_config(Audit *a) {
        _cleanup_free_ char *text = NULL;

        if (!a->release || audit_read_file(a, &text, "boot/config-%s", a->release) < 0)
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

bool audit_kconfig_yes(const Audit *a, KernelOption o) {
        return a->kconfig[o] && streq(a->kconfig[o], "y");
}

/* Splits /proc/cmdline the way the kernel does: white space, except inside quotes; the
 * parameters are read from the words before "--". */
static void load_cmdline(Audit *a) {
        _cleanup_free_ char *text = NULL;
        char *p;

        if (audit_read_file(a, &text, "proc/cmdline") < 0)
                return;
        a->cmdline_loaded = true;
        p = text;
        for (;;) {
                bool quoted = false;
                char *start, *token;

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
                if (!token || audit_check_errno(a, array_grow(&a->tokens, &a->allocated_tokens, a->n_tokens + 1)) < 0) {
                        free(token);
                        return;
                }
                a->tokens[a->n_tokens++] = token;
        }
        /* The kernel hands what follows "--" to init without reading it. */
        for (size_t i = 0; i < a->n_tokens && !streq(a->tokens[i], "--"); i++) {
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

/* A model PREEMPT_DYNAMIC switches to, as /sys/kernel/debug/sched/preempt and preempt=
 * name it; any other word, "rt" and "unknown" among them, tells nothing. */
static PreemptMode dynamic_preempt_mode_from_string(const char *s) {
        PreemptMode m = preempt_mode_from_string(s);

        switch (m) {
        case PREEMPT_MODE_NONE:
        case PREEMPT_MODE_VOLUNTARY:
        case PREEMPT_MODE_FULL:
        case PREEMPT_MODE_LAZY:
                return m;
        default:
                return PREEMPT_MODE_UNKNOWN;
        }
}

/* The model the kernel config picks as the default. */
PreemptMode audit_preempt_mode_from_config(const Audit *a) {
        if (audit_kconfig_yes(a, KCONFIG_PREEMPT_RT))
                return PREEMPT_MODE_RT;
        if (audit_kconfig_yes(a, KCONFIG_PREEMPT_LAZY))
                return PREEMPT_MODE_LAZY;
        if (audit_kconfig_yes(a, KCONFIG_PREEMPT))
                return PREEMPT_MODE_FULL;
        if (audit_kconfig_yes(a, KCONFIG_PREEMPT_VOLUNTARY))
                return PREEMPT_MODE_VOLUNTARY;
        if (audit_kconfig_yes(a, KCONFIG_PREEMPT_NONE))
                return PREEMPT_MODE_NONE;
        return PREEMPT_MODE_UNKNOWN;
}

static void load_preempt(Audit *a) {
        _cleanup_free_ char *text = NULL;

        if (audit_kconfig_yes(a, KCONFIG_PREEMPT_RT)) {
                a->preempt_mode = PREEMPT_MODE_RT;
                a->preempt_source = a->kconfig_path;
                return;
        }
        /* PREEMPT_DYNAMIC: "none (voluntary) full", the current mode in parentheses. */
        if (audit_read_value(a, &text, "sys/kernel/debug/sched/preempt") >= 0) {
                char *open = strchr(text, '('), *close = open ? strchr(open, ')') : NULL;
                if (close) {
                        *close = '\0';
                        a->preempt_mode = dynamic_preempt_mode_from_string(open + 1);
                        a->preempt_dynamic = true;
                        a->preempt_source = "/sys/kernel/debug/sched/preempt";
                        if (a->preempt_mode != PREEMPT_MODE_UNKNOWN)
                                return;
                }
        }
        if (audit_kconfig_yes(a, KCONFIG_PREEMPT_DYNAMIC)) {
                a->preempt_dynamic = true;
                if (a->boot[BOOT_PREEMPT] && dynamic_preempt_mode_from_string(a->boot[BOOT_PREEMPT]) != PREEMPT_MODE_UNKNOWN) {
                        a->preempt_mode = dynamic_preempt_mode_from_string(a->boot[BOOT_PREEMPT]);
                        a->preempt_source = "/proc/cmdline";
                        return;
                }
        }
        a->preempt_mode = audit_preempt_mode_from_config(a);
        if (a->preempt_mode != PREEMPT_MODE_UNKNOWN)
                a->preempt_source = a->kconfig_path;
}

void audit_load_kernel_facts(Audit *a) {
        load_release(a);
        load_kernel_config(a);
        load_cmdline(a);
        load_preempt(a); /* after the config and the command line, which it reads */
}
