/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Settings: read, compare, correct, report. */
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>

#include "originals.h"
#include "setting.h"
#include "util.h"

static const char *const kind_names[_SETTING_KIND_MAX] = {
        [SETTING_IRQ_AFFINITY] = "irq_affinity",
        [SETTING_IRQ_DEFAULT_AFFINITY] = "irq_default_affinity",
        [SETTING_SYSCTL] = "sysctl",
        [SETTING_CPU_DMA_LATENCY] = "cpu_dma_latency",
        [SETTING_GOVERNOR] = "governor",
        [SETTING_CPUIDLE] = "cpuidle",
        [SETTING_STRAY_TASKS] = "stray_tasks",
        [SETTING_NIC_COALESCE] = "nic_coalesce",
        [SETTING_NIC_RING] = "nic_ring",
        [SETTING_NIC_CHANNELS] = "nic_channels",
        [SETTING_NIC_FEATURE] = "nic_feature",
        [SETTING_NIC_QDISC] = "nic_qdisc",
};

static const char *const event_names[_SETTING_EVENT_MAX] = {
        [SETTING_EVENT_DRIFT] = "drift",
        [SETTING_EVENT_CORRECTED] = "corrected",
        [SETTING_EVENT_CORRECTION_FAILED] = "correction-failed",
        [SETTING_EVENT_UNSUPPORTED] = "unsupported",
        [SETTING_EVENT_UNMOVABLE] = "unmovable",
        [SETTING_EVENT_FIGHT] = "fight",
        [SETTING_EVENT_FIGHT_ENDED] = "fight-ended",
        [SETTING_EVENT_RECOVERED] = "recovered",
};

const char *setting_event_to_string(SettingEvent e) {
        return e < _SETTING_EVENT_MAX ? event_names[e] : NULL;
}

static const char *const state_names[_SETTING_STATE_MAX] = {
        [SETTING_PENDING] = "pending",
        [SETTING_OK] = "ok",
        [SETTING_DRIFTED] = "drifted",
        [SETTING_CORRECTED] = "corrected",
        [SETTING_FAILED] = "failed",
        [SETTING_UNSUPPORTED] = "unsupported",
        [SETTING_UNMOVABLE] = "unmovable",
};

const char *setting_kind_to_string(SettingKind k) {
        return k < _SETTING_KIND_MAX ? kind_names[k] : "unknown";
}

const char *setting_state_to_string(SettingState s) {
        return s < _SETTING_STATE_MAX ? state_names[s] : "unknown";
}

static Setting *setting_alloc(SettingKind kind) {
        Setting *s = calloc(1, sizeof(Setting));
        if (!s)
                return NULL;
        s->kind = kind;
        s->state = SETTING_PENDING;
        s->fd = s->effective_fd = s->hold_fd = -1;
        s->watches[0] = s->watches[1] = -1;
        return s;
}

Setting *setting_free(Setting *s) {
        if (!s)
                return NULL;
        setting_release(s);
        free(s->object);
        free(s->path);
        free(s->label);
        free(s->desired);
        free(s->observed);
        free(s->reason);
        free(s->feature);
        cpuset_done(&s->cpus);
        strays_free(s->strays);
        free(s);
        return NULL;
}

void setting_release(Setting *s) {
        s->fd = safe_close(s->fd);
        s->effective_fd = safe_close(s->effective_fd);
        s->hold_fd = safe_close(s->hold_fd);
}

int setting_new_irq(const Posture *p, unsigned irq, const char *irq_name, Setting **ret) {
        _cleanup_(setting_freep) Setting *s = setting_alloc(SETTING_IRQ_AFFINITY);
        const IrqPin *pin;

        if (!s)
                return -ENOMEM;
        pin = posture_irq_pin(p, irq_name);
        s->exact = pin != NULL;
        if (cpuset_copy(&s->cpus, pin ? &pin->cpus : &p->housekeeping) < 0)
                return -ENOMEM;
        s->object = strdup_printf("%u", irq);
        s->path = strdup_printf("proc/irq/%u/smp_affinity_list", irq);
        s->desired = cpuset_format_list(&s->cpus);
        if (irq_name)
                s->label = strdup(irq_name);
        if (!s->object || !s->path || !s->desired || (irq_name && !s->label))
                return -ENOMEM;
        *ret = TAKE_PTR(s);
        return 0;
}

int setting_irq_set_target(Setting *s, const char *irq_name, const CPUSet *cpus, bool exact) {
        char *label = NULL, *desired;
        int r;

        if (s->exact == exact && streq_ptr(s->label, irq_name) && cpuset_equal(&s->cpus, cpus))
                return 0;
        if (irq_name && !(label = strdup(irq_name)))
                return -ENOMEM;
        r = cpuset_copy(&s->cpus, cpus);
        desired = r < 0 ? NULL : cpuset_format_list(&s->cpus);
        if (!desired) {
                free(label);
                return -ENOMEM;
        }
        free(s->label);
        s->label = label;
        free(s->desired);
        s->desired = desired;
        s->exact = exact;
        /* A new target: look at it afresh, as if just found. */
        s->observed = mfree(s->observed);
        if (s->state != SETTING_UNMOVABLE)
                s->state = SETTING_PENDING;
        return 1;
}

int setting_irq_retarget(const Posture *p, Setting *s, const char *irq_name) {
        const IrqPin *pin = posture_irq_pin(p, irq_name);
        return setting_irq_set_target(s, irq_name, pin ? &pin->cpus : &p->housekeeping, pin != NULL);
}

int setting_new_default_affinity(const Posture *p, Setting **ret) {
        _cleanup_(setting_freep) Setting *s = setting_alloc(SETTING_IRQ_DEFAULT_AFFINITY);

        if (!s)
                return -ENOMEM;
        if (cpuset_copy(&s->cpus, &p->default_affinity) < 0)
                return -ENOMEM;
        s->object = strdup("default_smp_affinity");
        s->path = strdup("proc/irq/default_smp_affinity");
        s->desired = cpuset_format_mask(&s->cpus, p->mask_bits);
        if (!s->object || !s->path || !s->desired)
                return -ENOMEM;
        *ret = TAKE_PTR(s);
        return 0;
}

int setting_new_sysctl(const char *key, const char *value, Setting **ret) {
        _cleanup_(setting_freep) Setting *s = setting_alloc(SETTING_SYSCTL);

        if (!s)
                return -ENOMEM;
        if (!sysctl_key_is_valid(key))
                return -EINVAL;
        s->object = strdup(key);
        s->path = strdup_printf("proc/sys/%s", key);
        s->desired = normalize_whitespace(value);
        if (!s->object || !s->path || !s->desired)
                return -ENOMEM;
        for (char *c = s->path + strlen("proc/sys/"); *c; c++)
                if (*c == '.')
                        *c = '/';
        *ret = TAKE_PTR(s);
        return 0;
}

int setting_new_cpu_dma_latency(int32_t usec, Setting **ret) {
        _cleanup_(setting_freep) Setting *s = setting_alloc(SETTING_CPU_DMA_LATENCY);

        if (!s)
                return -ENOMEM;
        s->latency_usec = usec;
        s->object = strdup("/dev/cpu_dma_latency");
        s->path = strdup("dev/cpu_dma_latency");
        s->desired = strdup_printf("%" PRId32, usec);
        if (!s->object || !s->path || !s->desired)
                return -ENOMEM;
        *ret = TAKE_PTR(s);
        return 0;
}

int setting_new_governor(unsigned cpu, const char *governor, Setting **ret) {
        _cleanup_(setting_freep) Setting *s = setting_alloc(SETTING_GOVERNOR);

        if (!s)
                return -ENOMEM;
        s->object = strdup_printf("cpu%u", cpu);
        s->path = strdup_printf("sys/devices/system/cpu/cpu%u/cpufreq/scaling_governor", cpu);
        s->desired = strdup(governor);
        if (!s->object || !s->path || !s->desired)
                return -ENOMEM;
        *ret = TAKE_PTR(s);
        return 0;
}

static void set_reason(Setting *s, const char *fmt, ...) _printf_(2, 3);

static const SettingKind kind_of_group[_ETHTOOL_GROUP_MAX] = {
        [ETHTOOL_GROUP_COALESCE] = SETTING_NIC_COALESCE,
        [ETHTOOL_GROUP_RINGS] = SETTING_NIC_RING,
        [ETHTOOL_GROUP_CHANNELS] = SETTING_NIC_CHANNELS,
        [ETHTOOL_GROUP_FEATURES] = SETTING_NIC_FEATURE,
};

static const char *nic_param_text(EthtoolParam p, uint32_t v, char buf[static 16]) {
        if (ethtool_param_is_boolean(p))
                return v ? "on" : "off";
        snprintf(buf, 16, "%" PRIu32, v);
        return buf;
}

int setting_new_nic_param(int ifindex, const char *ifname, EthtoolParam p, uint32_t value, Setting **ret) {
        _cleanup_(setting_freep) Setting *s = setting_alloc(kind_of_group[ethtool_param_group(p)]);
        char buf[16];

        if (!s)
                return -ENOMEM;
        s->ifindex = ifindex;
        s->param = p;
        s->value = value;
        s->object = strdup_printf("%s/%s", ifname, ethtool_param_to_string(p));
        s->desired = strdup(nic_param_text(p, value, buf));
        if (!s->object || !s->desired)
                return -ENOMEM;
        *ret = TAKE_PTR(s);
        return 0;
}

int setting_new_nic_feature(int ifindex, const char *ifname, const char *feature, bool on, Setting **ret) {
        _cleanup_(setting_freep) Setting *s = setting_alloc(SETTING_NIC_FEATURE);

        if (!s)
                return -ENOMEM;
        s->ifindex = ifindex;
        s->value = on;
        s->feature = strdup(feature);
        s->object = strdup_printf("%s/%s", ifname, feature);
        s->desired = strdup(on ? "on" : "off");
        if (!s->feature || !s->object || !s->desired)
                return -ENOMEM;
        *ret = TAKE_PTR(s);
        return 0;
}

int setting_new_nic_qdisc(int ifindex, const char *ifname, const char *kind, Setting **ret) {
        _cleanup_(setting_freep) Setting *s = setting_alloc(SETTING_NIC_QDISC);

        if (!s)
                return -ENOMEM;
        s->ifindex = ifindex;
        s->object = strdup(ifname);
        s->desired = strdup(kind);
        if (!s->object || !s->desired)
                return -ENOMEM;
        *ret = TAKE_PTR(s);
        return 0;
}

/* NIC settings speak netlink, not files. -EOPNOTSUPP (reason set): the driver or kernel
 * cannot do it; -ENODEV: the interface is gone. */
static int nic_read(Reconciler *rc, Setting *s, char *buf, size_t size) {
        _cleanup_free_ char *error = NULL, *kind = NULL;
        char text[16];
        int r;

        if (s->kind != SETTING_NIC_QDISC && !rc->ethtool) {
                set_reason(s, "the kernel has no ethtool netlink interface");
                return -EOPNOTSUPP;
        }
        switch (s->kind) {
        case SETTING_NIC_FEATURE: {
                bool active, changeable;
                r = ethtool_get_feature(rc->ethtool, s->ifindex, s->feature, &active, &changeable, &error);
                if (r == -ENOENT) {
                        set_reason(s, "this kernel has no feature called %s", s->feature);
                        return -EOPNOTSUPP;
                }
                if (r >= 0 && !changeable && active != (bool) s->value) {
                        set_reason(s, "the driver has %s fixed %s", s->feature, active ? "on" : "off");
                        return -EOPNOTSUPP;
                }
                if (r >= 0)
                        snprintf(buf, size, "%s", active ? "on" : "off");
                break;
        }
        case SETTING_NIC_QDISC:
                r = rtnl_get_root_qdisc(rc->rtnl, s->ifindex, &kind);
                if (r >= 0)
                        snprintf(buf, size, "%s", kind);
                break;
        default: {
                uint32_t v;
                r = ethtool_get_param(rc->ethtool, s->ifindex, s->param, &v, &error);
                if (r >= 0)
                        snprintf(buf, size, "%s", nic_param_text(s->param, v, text));
                break;
        }
        }
        if (r == -EOPNOTSUPP)
                set_reason(s, "not supported by the driver%s%s", error ? ": " : "", error ?: "");
        return r;
}

static int nic_write(Reconciler *rc, Setting *s) {
        _cleanup_free_ char *error = NULL;
        int r;

        switch (s->kind) {
        case SETTING_NIC_FEATURE:
                r = ethtool_set_feature(rc->ethtool, s->ifindex, s->feature, s->value, &error);
                break;
        case SETTING_NIC_QDISC:
                r = rtnl_replace_root_qdisc(rc->rtnl, s->ifindex, s->desired, &error);
                /* A kind this kernel lacks (no sch_fq module): the kernel says so. */
                if (r == -ENOENT || (r == -EINVAL && error))
                        r = -EOPNOTSUPP;
                break;
        default:
                r = ethtool_set_param(rc->ethtool, s->ifindex, s->param, s->value, &error);
                break;
        }
        /* EINVAL with an explanation is the driver saying "not this", not a passing fault. */
        if (r == -EINVAL && error)
                r = -EOPNOTSUPP;
        if (r == -ENODEV)
                return -ENOENT;
        if (r < 0)
                set_reason(s, "%s%s%s", r == -EOPNOTSUPP ? "not supported" : strerror(-r), error ? ": " : "",
                           error ?: "");
        return r;
}

int setting_new_cpuidle(unsigned cpu, unsigned state, const char *name, Setting **ret) {
        _cleanup_(setting_freep) Setting *s = setting_alloc(SETTING_CPUIDLE);

        if (!s)
                return -ENOMEM;
        s->object = strdup_printf("cpu%u/state%u", cpu, state);
        s->path = strdup_printf("sys/devices/system/cpu/cpu%u/cpuidle/state%u/disable", cpu, state);
        s->desired = strdup("1");
        if (name)
                s->label = strdup(name);
        if (!s->object || !s->path || !s->desired || (name && !s->label))
                return -ENOMEM;
        *ret = TAKE_PTR(s);
        return 0;
}

int setting_new_stray_tasks(const Posture *p, Setting **ret) {
        _cleanup_(setting_freep) Setting *s = setting_alloc(SETTING_STRAY_TASKS);

        if (!s)
                return -ENOMEM;
        /* No path: nothing to watch with inotify (procfs sends no events for affinity
         * changes or new tasks); the periodic scan looks. */
        s->object = cpuset_format_list(&p->isolated);
        s->desired = strdup("none");
        s->strays = strays_new();
        if (!s->object || !s->desired || !s->strays)
                return -ENOMEM;
        *ret = TAKE_PTR(s);
        return 0;
}

bool setting_same(const Setting *a, const Setting *b) {
        return a->kind == b->kind && streq(a->object, b->object) && streq(a->desired, b->desired) &&
               a->exact == b->exact;
}

void setting_inherit(Setting *n, Setting *old) {
        if (n->kind != old->kind || !streq(n->object, old->object))
                return;
        /* Keep the fds: reopening /dev/cpu_dma_latency would drop the constraint for a
         * moment, and the persistent read fds are what makes a scan cheap. */
        n->fd = TAKE_FD(old->fd);
        n->effective_fd = TAKE_FD(old->effective_fd);
        if (n->kind == SETTING_STRAY_TASKS && old->strays) {
                /* The tasks left alone stay left alone (and reported) across a reload. */
                strays_free(n->strays);
                n->strays = TAKE_PTR(old->strays);
        }
        for (size_t i = 0; i < ELEMENTSOF(n->watches); i++) {
                n->watches[i] = old->watches[i];
                old->watches[i] = -1;
        }
        if (streq(n->desired, old->desired)) {
                n->hold_fd = TAKE_FD(old->hold_fd);
                n->held_usec = old->held_usec;
                n->state = old->state;
                free(n->observed);
                n->observed = TAKE_PTR(old->observed);
                free(n->reason);
                n->reason = TAKE_PTR(old->reason);
                memcpy(n->corrections_at, old->corrections_at, sizeof(n->corrections_at));
                n->corrections_pos = old->corrections_pos;
                n->fighting = old->fighting;
                n->last_correction_usec = old->last_correction_usec;
                n->last_drift_usec = old->last_drift_usec;
                n->retry_after_usec = old->retry_after_usec;
        } else if (n->kind == SETTING_CPU_DMA_LATENCY) {
                /* A new value is written into the same request, without a gap. */
                n->hold_fd = TAKE_FD(old->hold_fd);
                n->held_usec = old->held_usec;
        }
}

static void emit(Reconciler *rc, SettingEvent e, const Setting *s) {
        if (rc->handler)
                rc->handler(rc->userdata, e, s);
}

static void set_reason(Setting *s, const char *fmt, ...) _printf_(2, 3);
static void set_reason(Setting *s, const char *fmt, ...) {
        va_list ap;
        char *r = NULL;

        va_start(ap, fmt);
        if (vasprintf(&r, fmt, ap) < 0)
                r = NULL;
        va_end(ap);
        free(s->reason);
        s->reason = r;
}

static int setting_read_persistent(Reconciler *rc, Setting *s, char *buf, size_t size);

/* Kernel text as compared: trimmed, and for sysctls with white space runs collapsed
 * (tcp_rmem reads back with tabs). In place. */
static int setting_tidy_text(const Setting *s, char *buf, size_t size) {
        char *start = strstrip(buf);

        if (start != buf)
                memmove(buf, start, strlen(start) + 1);
        /* Observed text goes on the bus, which takes only UTF-8. Desired values are
         * printable ASCII, so escaping cannot turn a mismatch into a match. */
        if (!utf8_is_valid(buf)) {
                _cleanup_free_ char *escaped = utf8_escape(buf);
                if (!escaped)
                        return -ENOMEM;
                snprintf(buf, size, "%s", escaped);
        }
        if (s->kind == SETTING_SYSCTL) {
                _cleanup_free_ char *norm = normalize_whitespace(buf);
                if (!norm)
                        return -ENOMEM;
                snprintf(buf, size, "%s", norm);
        }
        return 0;
}

/* The PIDs under a fake root are not this host's tasks: moving "pid 1234" there would
 * move whatever real task has that number. So without a live host (and no test's own
 * mover) the setting is unsupported, and nothing is looked at or moved. */
static int stray_tasks_read(Reconciler *rc, Setting *s, char *buf, size_t size) {
        s->strays->live = host_is_live(rc->host);
        if (!rc->set_task_affinity && !s->strays->live) {
                set_reason(s, "evict_strays needs --root / (the PIDs under %s are not this host's tasks, so none is "
                              "moved; lowlatctl check lists stray tasks)",
                           rc->host->root_path);
                return -EOPNOTSUPP;
        }
        return strays_scan(s->strays, rc->host, rc->posture, getpid(), buf, size);
}

/* Reads the current value into buf as text. -ENOENT: the object does not exist. Out of
 * fds (EMFILE), the read falls back to open/read/close: slower, never wrong. */
static int setting_read(Reconciler *rc, Setting *s, char *buf, size_t size) {
        int r;

        if (setting_kind_is_nic(s->kind))
                return nic_read(rc, s, buf, size);
        if (s->kind == SETTING_STRAY_TASKS)
                return stray_tasks_read(rc, s, buf, size);

        r = setting_read_persistent(rc, s, buf, size);

        if ((r == -EMFILE || r == -ENFILE) && s->fd < 0 && s->kind != SETTING_CPU_DMA_LATENCY) {
                _cleanup_close_ int fd = host_open_file(rc->host, s->path, O_RDONLY);
                ssize_t n;

                if (fd < 0)
                        return fd;
                n = pread_string(fd, buf, size);
                if (n < 0)
                        return (int) n;
                return setting_tidy_text(s, buf, size);
        }
        return r;
}

static int setting_read_persistent(Reconciler *rc, Setting *s, char *buf, size_t size) {
        ssize_t n;
        int r;

        if (s->fd < 0) {
                int flags = O_RDONLY;
                /* Opening /dev/cpu_dma_latency adds a request; in enforce mode the held fd is
                 * the one we read from, so no second request exists. */
                if (s->kind == SETTING_CPU_DMA_LATENCY && s->hold_fd >= 0) {
                        s->fd = fcntl(s->hold_fd, F_DUPFD_CLOEXEC, 3);
                        if (s->fd < 0)
                                return negative_errno();
                } else {
                        s->fd = host_open_file(rc->host, s->path, flags);
                        if (s->fd < 0) {
                                r = s->fd;
                                s->fd = -1;
                                return r;
                        }
                        /* fds are handed out lowest first, so the number says how many are
                         * open: keep a reserve for writes, sockets and the event loop. */
                        if (rc->fd_limit > 0 && (unsigned) s->fd + SETTING_FD_RESERVE >= rc->fd_limit) {
                                s->fd = safe_close(s->fd);
                                return -EMFILE;
                        }
                }
                if (s->kind == SETTING_IRQ_AFFINITY) {
                        _cleanup_free_ char *eff = strdup_printf("proc/irq/%s/effective_affinity_list", s->object);
                        if (!eff)
                                return -ENOMEM;
                        s->effective_fd = host_open_file(rc->host, eff, O_RDONLY);
                        if (s->effective_fd < 0)
                                s->effective_fd = -1;
                }
        }

        if (s->kind == SETTING_CPU_DMA_LATENCY) {
                int32_t v;
                n = pread(s->fd, &v, sizeof(v), 0);
                if (n < 0)
                        return negative_errno();
                if (n != (ssize_t) sizeof(v))
                        return -EIO;
                snprintf(buf, size, "%" PRId32, v);
                return 0;
        }

        n = pread_string(s->fd, buf, size);
        if (n < 0)
                return (int) n;
        r = setting_tidy_text(s, buf, size);
        if (r < 0)
                return r;
        /* Nothing to add to an empty read: it is judged (or skipped) as empty. */
        if (s->kind == SETTING_IRQ_AFFINITY && s->effective_fd >= 0 && buf[0] != '\0') {
                /* The scan's hot path: append " (effective LIST)" without printf. */
                static const char tag[] = " (effective ";
                char eff[256], *e;
                size_t len = strlen(buf), elen;

                if (pread_string(s->effective_fd, eff, sizeof(eff)) < 0)
                        return 0;
                e = strstrip(eff);
                elen = strlen(e);
                if (elen == 0 || len + sizeof(tag) + elen + 1 >= size)
                        return 0;
                memcpy(buf + len, tag, sizeof(tag) - 1);
                memcpy(buf + len + sizeof(tag) - 1, e, elen);
                buf[len + sizeof(tag) - 1 + elen] = ')';
                buf[len + sizeof(tag) + elen] = '\0';
        }
        return 0;
}

/* Parses the effective part of an IRQ's observed text, if any. */
static int irq_parse_observed(const char *observed, CPUSet *affinity, CPUSet *effective, bool *has_effective) {
        char copy[4096];
        char *eff;
        int r;

        snprintf(copy, sizeof(copy), "%s", observed);
        eff = strstr(copy, " (effective ");
        *has_effective = eff != NULL;
        if (eff) {
                *eff = '\0';
                eff += strlen(" (effective ");
                eff[strcspn(eff, ")")] = '\0';
                r = cpuset_parse_list(eff, effective);
                if (r < 0)
                        return r;
        }
        return cpuset_parse_list(copy, affinity);
}

static bool setting_matches(Reconciler *rc, Setting *s, const char *observed) {
        switch (s->kind) {
        case SETTING_IRQ_AFFINITY: {
                _cleanup_cpuset_ CPUSet effective = CPUSET_EMPTY;
                bool has_effective;

                /* An IRQ always has at least one CPU; an empty list is no affinity at all. */
                if (irq_parse_observed(observed, &rc->scratch, &effective, &has_effective) < 0 ||
                    cpuset_is_empty(&rc->scratch))
                        return false;
                /* An IRQ is judged by the affinity asked for, never by the effective CPU:
                 * that is the one the chip picked from it, and without interrupt remapping
                 * x86 moves it only at the IRQ's next interrupt, which for a quiet device
                 * may be never. Writing the same list again cannot hurry it, so a lagging
                 * effective CPU is not drift; it stays visible in the observed text
                 * (ListSettings, lowlatctl list). */
                (void) has_effective;
                if (s->exact)
                        return cpuset_equal(&rc->scratch, &s->cpus);
                return !cpuset_intersects(&rc->scratch, &rc->posture->isolated);
        }
        case SETTING_IRQ_DEFAULT_AFFINITY:
                return cpuset_parse_mask(observed, &rc->scratch) >= 0 && cpuset_equal(&rc->scratch, &s->cpus);
        case SETTING_STRAY_TASKS:
                /* Tasks left alone follow "; left alone:" and are not drift. */
                return strncmp(observed, "none", 4) == 0 && (observed[4] == '\0' || observed[4] == ';');
        case SETTING_CPU_DMA_LATENCY: {
                /* The kernel reports the strictest request; stricter than ours is fine. */
                char *end;
                long v = strtol(observed, &end, 10);
                return *end == '\0' && v <= s->latency_usec;
        }
        default:
                /* Sysctls, governors and NIC settings compare as (normalised) text. */
                return streq(observed, s->desired);
        }
}

static bool irq_target_has_online_cpu(Reconciler *rc, const Setting *s) {
        _cleanup_free_ char *text = NULL;
        _cleanup_cpuset_ CPUSet online = CPUSET_EMPTY;

        if (host_read_file(rc->host, "sys/devices/system/cpu/online", &text) < 0 ||
            cpuset_parse_list(text, &online) < 0)
                return true; /* cannot tell: keep the kernel's refusal as it is */
        return cpuset_intersects(&s->cpus, &online);
}

static bool irq_write_is_refusal(int r) {
        return r == -EIO || r == -EINVAL || r == -EPERM || r == -EACCES;
}

static int governor_check_available(Reconciler *rc, Setting *s) {
        _cleanup_free_ char *path = NULL, *avail = NULL;
        char *slash;
        int r;

        path = strdup(s->path);
        if (!path)
                return -ENOMEM;
        slash = strrchr(path, '/');
        *slash = '\0';
        _cleanup_free_ char *file = strdup_printf("%s/scaling_available_governors", path);
        if (!file)
                return -ENOMEM;
        r = host_read_file(rc->host, file, &avail);
        if (r < 0)
                return 0; /* cannot tell; let the write decide */
        _cleanup_free_ char *norm = normalize_whitespace(avail);
        if (!norm)
                return -ENOMEM;
        for (char *w = norm; *w;) {
                size_t n = strcspn(w, " ");
                if (n == strlen(s->desired) && strncmp(w, s->desired, n) == 0)
                        return 0;
                w += n;
                while (*w == ' ')
                        w++;
        }
        set_reason(s, "governor '%s' is not available (available: %s)", s->desired, norm);
        return -EOPNOTSUPP;
}

/* Writes the desired value. Returns 0, or -errno with s->reason set. A refusal that will
 * not change by retrying is returned as -EOPNOTSUPP (unsupported) or -EPERM (unmovable). */
static int setting_write(Reconciler *rc, Setting *s) {
        int r;

        if (setting_kind_is_nic(s->kind))
                return nic_write(rc, s);

        switch (s->kind) {
        case SETTING_STRAY_TASKS:
                /* Belt and braces: stray_tasks_read() already refused a fake tree. */
                if (!rc->set_task_affinity && !host_is_live(rc->host))
                        return -EOPNOTSUPP;
                r = strays_evict(s->strays, rc->posture, rc->set_task_affinity ?: task_set_affinity,
                                 rc->task_affinity_userdata);
                if (r < 0)
                        set_reason(s, "moving stray tasks failed: %s", strerror(-r));
                return r; /* the number moved */
        case SETTING_IRQ_AFFINITY: {
                struct stat st;
                /* Root ignores file modes, so check the bits the kernel uses to say "no". */
                if (s->fd >= 0 && fstat(s->fd, &st) >= 0 && (st.st_mode & 0222) == 0) {
                        set_reason(s, "smp_affinity_list is read-only (the kernel does not allow moving this IRQ)");
                        return -EPERM;
                }
                r = host_write_file(rc->host, s->path, s->desired);
                if (r == -ENOENT)
                        return r;
                /* EINVAL is also the kernel's answer to a mask with no online CPU: while the
                 * target CPUs are offline that is a passing state, not an unmovable IRQ. */
                if (r == -EINVAL && !irq_target_has_online_cpu(rc, s)) {
                        set_reason(s, "none of CPUs %s is online", s->desired);
                        return -EAGAIN;
                }
                if (r < 0 && irq_write_is_refusal(r)) {
                        set_reason(s, "the kernel refused the new affinity: %s%s", strerror(-r),
                                   r == -EIO ? " (managed or per-CPU IRQ)" : "");
                        return -EPERM;
                }
                break;
        }
        case SETTING_CPU_DMA_LATENCY: {
                int32_t v = s->latency_usec;
                ssize_t n;

                if (s->hold_fd < 0) {
                        s->hold_fd = host_open_file(rc->host, s->path, O_RDWR);
                        if (s->hold_fd < 0) {
                                r = s->hold_fd;
                                s->hold_fd = -1;
                                break;
                        }
                        /* Read through the held request from now on. */
                        s->fd = safe_close(s->fd);
                }
                n = pwrite(s->hold_fd, &v, sizeof(v), 0);
                if (n < 0 && errno == ESPIPE)
                        n = write(s->hold_fd, &v, sizeof(v));
                r = n < 0 ? negative_errno() : n != (ssize_t) sizeof(v) ? -EIO : 0;
                if (r >= 0)
                        s->held_usec = v;
                break;
        }
        case SETTING_GOVERNOR:
                r = governor_check_available(rc, s);
                if (r < 0)
                        return r;
                _fallthrough_;
        default:
                r = host_write_file(rc->host, s->path, s->desired);
                break;
        }
        if (r < 0)
                set_reason(s, "writing %s failed: %s", s->path, strerror(-r));
        return r;
}

/* The observed text as a value that can be written back: an IRQ's without the effective
 * part; for /dev/cpu_dma_latency the original is "no request of ours". */
#define ORIGINAL_NO_REQUEST "released"

static int setting_record_original(Reconciler *rc, Setting *s) {
        _cleanup_free_ char *value = NULL;
        int r;

        /* Evicted tasks have nothing recorded: see setting_restore(). */
        if (!rc->originals || !s->observed || s->kind == SETTING_STRAY_TASKS)
                return 0;
        if (s->kind == SETTING_CPU_DMA_LATENCY)
                value = strdup(ORIGINAL_NO_REQUEST);
        else {
                value = strdup(s->observed);
                if (value && s->kind == SETTING_IRQ_AFFINITY) {
                        char *eff = strstr(value, " (effective ");
                        if (eff)
                                *eff = '\0';
                }
        }
        if (!value)
                return -ENOMEM;
        r = originals_record(rc->originals, s->kind, s->object, value);
        if (r < 0)
                set_reason(s, "cannot record its original value, so not changing it: %s", strerror(-r));
        return r;
}

int setting_restore(Reconciler *rc, Setting *s) {
        const char *original;
        _cleanup_free_ char *saved_desired = NULL;
        uint32_t saved_value = s->value;
        int r;

        /* Evicted tasks are not put back on the isolated CPUs. A PID recorded at the move
         * may belong to another task by the time of a restore, and what was taken away is
         * only the isolated CPUs, which no task but the applications should use; a task
         * that needs them back gets them with taskset(1). Nothing was recorded, so nothing
         * is restored. */
        if (s->kind == SETTING_STRAY_TASKS)
                return 0;
        if (!rc->originals || !(original = originals_get(rc->originals, s->kind, s->object)))
                return 0;

        /* The original is written down before the first write, so an IRQ the kernel then
         * refused (the VM e2e run: the timer, the cascade, managed virtio queues) has one
         * although lowlatd never changed it, and writing it back fails the same way. Put
         * back only what differs from the original now. */
        if (s->kind != SETTING_CPU_DMA_LATENCY) {
                char buf[4096];
                bool same = false;

                if (s->state == SETTING_UNMOVABLE && s->last_correction_usec == 0)
                        same = true; /* the kernel refused the very first write */
                else if (setting_read(rc, s, buf, sizeof(buf)) >= 0) {
                        char *eff = s->kind == SETTING_IRQ_AFFINITY ? strstr(buf, " (effective ") : NULL;
                        if (eff)
                                *eff = '\0';
                        same = streq(buf, original);
                }
                if (same) {
                        originals_forget(rc->originals, s->kind, s->object);
                        return 0;
                }
        }

        if (s->kind == SETTING_CPU_DMA_LATENCY) {
                /* Our request ends when its fd closes; the kernel's value is then what the
                 * other holders ask for, as before lowlatd. */
                s->hold_fd = safe_close(s->hold_fd);
                s->fd = safe_close(s->fd);
                r = 0;
        } else {
                /* Write the original through the same path as a correction. */
                if (s->kind == SETTING_NIC_FEATURE || (setting_kind_is_nic(s->kind) && s->kind != SETTING_NIC_QDISC &&
                                                       ethtool_param_is_boolean(s->param))) {
                        bool on;
                        if (parse_boolean(original, &on) < 0)
                                return -EINVAL;
                        s->value = on;
                } else if (setting_kind_is_nic(s->kind) && s->kind != SETTING_NIC_QDISC) {
                        if (parse_uint32(original, &s->value) < 0)
                                return -EINVAL;
                }
                saved_desired = s->desired;
                s->desired = strdup(original);
                if (!s->desired) {
                        s->desired = TAKE_PTR(saved_desired);
                        return -ENOMEM;
                }
                r = setting_write(rc, s);
                free(s->desired);
                s->desired = TAKE_PTR(saved_desired);
                s->value = saved_value;
        }
        if (r < 0)
                return r;
        s->observed = mfree(s->observed);
        s->state = SETTING_PENDING;
        originals_forget(rc->originals, s->kind, s->object);
        return 1;
}

/* Tasks newly left alone because the kernel refused to move them: one report (a failed
 * correction naming them), then never again while they live. */
static void stray_tasks_report(Reconciler *rc, Setting *s) {
        _cleanup_free_ char *text = NULL;

        if (strays_take_unreported(s->strays, &text) <= 0)
                return;
        set_reason(s, "left alone, cannot be moved: %s", text);
        rc->counters.failures++;
        emit(rc, SETTING_EVENT_CORRECTION_FAILED, s);
}

static void record_correction(Reconciler *rc, Setting *s, uint64_t now) {
        uint64_t oldest;

        s->last_correction_usec = now;
        if (rc->applying)
                return;

        s->corrections_at[s->corrections_pos] = now;
        s->corrections_pos = (s->corrections_pos + 1) % FIGHT_CORRECTIONS;
        oldest = s->corrections_at[s->corrections_pos];
        if (!s->fighting && oldest != 0 && now - oldest < FIGHT_WINDOW_USEC) {
                s->fighting = true;
                emit(rc, SETTING_EVENT_FIGHT, s);
        }
}

static int set_observed(Setting *s, const char *text) {
        if (s->observed && streq(s->observed, text))
                return 0;
        char *copy = strdup(text);
        if (!copy)
                return -ENOMEM;
        free(s->observed);
        s->observed = copy;
        return 1;
}

int setting_reconcile(Reconciler *rc, Setting *s, uint64_t now, bool force) {
        char buf[4096];
        bool changed, matches;
        SettingState before = s->state;
        int r;

        /* What the host cannot do is looked at again only when asked (reload, Reapply). */
        if (!force && s->state == SETTING_UNSUPPORTED)
                return 0;

        /* A forced look (reload, Reapply) opens the file afresh: the one we hold may have
         * been replaced or unlinked (a module unloaded and reloaded its sysctls). */
        if (force && s->kind != SETTING_CPU_DMA_LATENCY && !setting_kind_is_nic(s->kind)) {
                s->fd = safe_close(s->fd);
                s->effective_fd = safe_close(s->effective_fd);
        }

        r = setting_read(rc, s, buf, sizeof(buf));
        /* A persistent fd that fails may point at a file that is gone: one fresh open. */
        if (r < 0 && r != -ENOENT && s->fd >= 0 && s->kind != SETTING_CPU_DMA_LATENCY &&
            !setting_kind_is_nic(s->kind)) {
                s->fd = safe_close(s->fd);
                s->effective_fd = safe_close(s->effective_fd);
                r = setting_read(rc, s, buf, sizeof(buf));
        }
        if (r == -ENOENT && s->kind == SETTING_IRQ_AFFINITY)
                return -ENOENT;
        /* An interface that went away mid-apply: its settings go, quietly; the link monitor
         * brings them back if it returns. */
        if (r == -ENODEV && setting_kind_is_nic(s->kind))
                return -ENOENT;
        if (r == -EOPNOTSUPP) {
                if (s->state != SETTING_UNSUPPORTED) {
                        s->state = SETTING_UNSUPPORTED;
                        emit(rc, SETTING_EVENT_UNSUPPORTED, s);
                }
                return 0;
        }
        if (r < 0) {
                if (r == -ENOENT) {
                        if (s->state != SETTING_UNSUPPORTED) {
                                s->state = SETTING_UNSUPPORTED;
                                set_reason(s, "%s (%s)",
                                           s->kind == SETTING_SYSCTL     ? "no such sysctl on this kernel"
                                           : s->kind == SETTING_GOVERNOR ? "no cpufreq driver for this CPU"
                                                                         : "not present on this host",
                                           s->path ?: "proc");
                                emit(rc, SETTING_EVENT_UNSUPPORTED, s);
                        }
                        return 0;
                }
                /* A vanished IRQ can read as EIO/ENODEV through an old fd; the directory scan
                 * removes it. Other read errors are failures, reported once. */
                if (s->kind == SETTING_IRQ_AFFINITY && (r == -ENODEV || r == -EIO))
                        return -ENOENT;
                if (s->state != SETTING_FAILED) {
                        s->state = SETTING_FAILED;
                        set_reason(s, "reading %s failed: %s",
                                   s->path ?: (s->kind == SETTING_STRAY_TASKS ? "proc" : s->object), strerror(-r));
                        rc->counters.failures++;
                        emit(rc, SETTING_EVENT_CORRECTION_FAILED, s);
                }
                return 0;
        }

        /* A writer's open(O_TRUNC) and its write() are two steps: a look in between reads
         * "". After an inotify hint that is always a file caught mid-write (its write and
         * close send more hints); from the scan, an empty value is believed only when two
         * scans in a row see it. A first read ever is always judged. */
        if (buf[0] == '\0' && !isempty(s->observed)) {
                if (rc->hinted)
                        return 0;
                if (!s->empty_seen) {
                        s->empty_seen = true;
                        return 0;
                }
        }
        if (!rc->hinted)
                s->empty_seen = buf[0] == '\0';

        r = set_observed(s, buf);
        if (r < 0)
                return r;
        changed = r > 0;

        if (!changed && !force) {
                /* Same text as last time: nothing new, unless a deferred correction is due. */
                if (setting_state_is_good(s->state) || rc->observe)
                        return 0;
                if (s->state == SETTING_FAILED && now < s->retry_after_usec)
                        return 0;
                if (s->state == SETTING_DRIFTED && s->fighting && now - s->last_correction_usec < FIGHT_BACKOFF_USEC)
                        return 0;
        }

        /* In enforce mode our own request must exist even when someone else's stricter
         * one makes the system-wide value look fine: theirs may go away at any time. */
        if (s->kind == SETTING_CPU_DMA_LATENCY && !rc->observe &&
            (s->hold_fd < 0 || s->held_usec != s->latency_usec))
                (void) setting_write(rc, s); /* also after a reload changed the value */

        matches = setting_matches(rc, s, s->observed);
        if (matches) {
                if (s->kind == SETTING_STRAY_TASKS && !rc->observe)
                        stray_tasks_report(rc, s); /* a PF_NO_SETAFFINITY task, found alone */
                if (s->state == SETTING_DRIFTED || s->state == SETTING_FAILED || s->state == SETTING_UNSUPPORTED ||
                    s->state == SETTING_UNMOVABLE)
                        emit(rc, SETTING_EVENT_RECOVERED, s);
                if (!setting_state_is_good(s->state))
                        s->state = SETTING_OK;
                s->reason = mfree(s->reason);
                return 0;
        }

        if (s->state == SETTING_UNMOVABLE)
                return 0; /* still off target; watched, never written again */

        s->last_drift_usec = now;
        if (before != SETTING_DRIFTED)
                s->rewritten = setting_state_is_good(before);
        if (before != SETTING_DRIFTED && before != SETTING_FAILED) {
                s->state = SETTING_DRIFTED;
                rc->counters.drift_events++;
                emit(rc, SETTING_EVENT_DRIFT, s);
        }
        s->state = SETTING_DRIFTED;
        if (rc->observe)
                return 0;
        if (s->fighting && now - s->last_correction_usec < FIGHT_BACKOFF_USEC)
                return 0;

        /* Before the first change, what the host had: restore needs it, and a setting
         * whose original cannot be kept is not changed. */
        r = setting_record_original(rc, s);
        if (r >= 0)
                r = setting_write(rc, s);
        if (r == -ENOENT && (s->kind == SETTING_IRQ_AFFINITY || setting_kind_is_nic(s->kind)))
                return -ENOENT;
        if (r == -EPERM && s->kind == SETTING_IRQ_AFFINITY) {
                s->state = SETTING_UNMOVABLE;
                emit(rc, SETTING_EVENT_UNMOVABLE, s);
                return 0;
        }
        if (r == -EOPNOTSUPP) {
                s->state = SETTING_UNSUPPORTED;
                emit(rc, SETTING_EVENT_UNSUPPORTED, s);
                return 0;
        }
        if (r >= 0) {
                /* Trust the host, not the write: read it back. */
                r = setting_read(rc, s, buf, sizeof(buf));
                if (s->kind == SETTING_STRAY_TASKS)
                        stray_tasks_report(rc, s);
                if (r >= 0 && set_observed(s, buf) < 0)
                        r = -ENOMEM;
                matches = r >= 0 && setting_matches(rc, s, s->observed);
                if (matches && s->kind == SETTING_STRAY_TASKS && s->strays->n_confirmed == 0) {
                        /* Nothing was moved: the strays exited, or are left alone now (and
                         * were reported so). Not a correction. */
                        s->state = SETTING_OK;
                        s->reason = mfree(s->reason);
                        emit(rc, SETTING_EVENT_RECOVERED, s);
                        return 0;
                }
                if (matches) {
                        s->readback_retry = false;
                        s->state = SETTING_CORRECTED;
                        s->reason = mfree(s->reason);
                        rc->counters.corrections++;
                        emit(rc, SETTING_EVENT_CORRECTED, s);
                        record_correction(rc, s, now);
                        return 0;
                }
                /* The tasks just moved are off the isolated CPUs or left alone now, so a
                 * stray in the read-back is one that appeared since the scan (a busy host
                 * forks all the time): still drift, moved at the next scan, no failure. */
                if (s->kind == SETTING_STRAY_TASKS && r >= 0)
                        return 0;
                set_reason(s, "wrote %s but read back %s", s->desired, s->observed ?: "nothing");
                /* An interface being torn down answers a write, then reads back empty before
                 * its removal is announced: give NIC settings one more look before calling
                 * it a failure (the link monitor drops them if the interface is gone). */
                if (setting_kind_is_nic(s->kind) && !s->readback_retry) {
                        s->readback_retry = true;
                        return 0;
                }
        }
        s->retry_after_usec = now + FAILED_RETRY_USEC;
        if (before != SETTING_FAILED || force) {
                rc->counters.failures++;
                emit(rc, SETTING_EVENT_CORRECTION_FAILED, s);
        }
        s->state = SETTING_FAILED;
        return 0;
}

void setting_tick(Reconciler *rc, Setting *s, uint64_t now) {
        if (s->fighting && now - s->last_drift_usec >= FIGHT_QUIET_USEC) {
                s->fighting = false;
                memset(s->corrections_at, 0, sizeof(s->corrections_at));
                emit(rc, SETTING_EVENT_FIGHT_ENDED, s);
        }
}
