/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lowlatctl metrics: lowlatd's state in the Prometheus text exposition format (0.0.4),
 * for node_exporter's textfile collector. */
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bus-names.h"
#include "condition-names.h"
#include "client.h"
#include "basic/array.h"
#include "basic/macro.h"
#include "setting/setting.h"
#include "basic/util.h"

/* Label values: backslash, double quote and line feed are escaped (text format 0.0.4). */
static void prom_print_label_value(FILE *f, const char *s) {
        fputc('"', f);
        for (const char *p = s; *p; p++)
                if (*p == '\\')
                        fputs("\\\\", f);
                else if (*p == '"')
                        fputs("\\\"", f);
                else if (*p == '\n')
                        fputs("\\n", f);
                else
                        fputc(*p, f);
        fputc('"', f);
}

static void prom_print_header(FILE *f, const char *name, const char *type, const char *help) {
        fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* Prometheus wants seconds; a negative count of microseconds is "none", NaN. */
static void prom_print_usec_as_seconds(FILE *f, const char *name, int32_t usec) {
        if (usec < 0)
                fprintf(f, "%s NaN\n", name);
        else
                fprintf(f, "%s %" PRIi32 ".%06" PRIi32 "\n", name, usec / (int32_t) USEC_PER_SEC,
                        usec % (int32_t) USEC_PER_SEC);
}

/* lowlatd_settings: every kind and state liblowlat knows, zeros included, so that a series
 * does not vanish (and go stale) when its last setting changes state; plus any kind or
 * state a newer lowlatd reports. The names come from the library's own tables, so a kind
 * added there has its series here with no second list to keep in step. */
int metrics_print_settings(FILE *f, const SettingList *l) {
        _cleanup_(string_set_done) StringSet kinds = {}, states = {};
        _cleanup_free_ size_t *counts = NULL;
        ssize_t k, s;

        for (SettingKind kind = 0; kind < _SETTING_KIND_MAX; kind++)
                if (string_set_put(&kinds, setting_kind_to_string(kind)) < 0)
                        return -ENOMEM;
        for (SettingState state = 0; state < _SETTING_STATE_MAX; state++)
                if (string_set_put(&states, setting_state_to_string(state)) < 0)
                        return -ENOMEM;
        for (size_t i = 0; i < l->n; i++)
                if (string_set_put(&kinds, l->rows[i].kind) < 0 || string_set_put(&states, l->rows[i].state) < 0)
                        return -ENOMEM;

        counts = calloc(kinds.n * states.n, sizeof(size_t));
        if (!counts)
                return -ENOMEM;
        for (size_t i = 0; i < l->n; i++) {
                k = string_set_put(&kinds, l->rows[i].kind);
                s = string_set_put(&states, l->rows[i].state);
                counts[(size_t) k * states.n + (size_t) s]++;
        }

        prom_print_header(f, "lowlatd_settings", "gauge", "Settings lowlatd keeps, by kind and state.");
        for (size_t i = 0; i < kinds.n; i++)
                for (size_t j = 0; j < states.n; j++) {
                        fputs("lowlatd_settings{kind=", f);
                        prom_print_label_value(f, kinds.items[i]);
                        fputs(",state=", f);
                        prom_print_label_value(f, states.items[j]);
                        fprintf(f, "} %zu\n", counts[i * states.n + j]);
                }
        return 0;
}

static void metrics_print_up(FILE *f, int up) {
        prom_print_header(f, "lowlatd_up", "gauge", "Whether lowlatd answered on the system bus.");
        fprintf(f, "lowlatd_up %d\n", up);
}

void metrics_print_down(FILE *f) {
        metrics_print_up(f, 0);
}

void metrics_noise_done(MetricsNoise *n) {
        for (size_t i = 0; i < n->n; i++) {
                free(n->sources[i].kind);
                free(n->sources[i].source);
                free(n->sources[i].description);
        }
        free(n->sources);
        cpuset_done(&n->nohz_full);
        *n = (MetricsNoise) {};
}

int ctl_read_metrics_noise(sd_bus *bus, const char *root, MetricsNoise *ret) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(metrics_noise_done) MetricsNoise n = {};
        _cleanup_free_ char *path = NULL, *text = NULL;
        size_t allocated = 0;
        uint64_t sampled, interval;
        FILE *f;
        int r;

        r = ctl_call_method(bus, "Noise", &error, &reply);
        if (r < 0)
                return r;
        r = sd_bus_message_read(reply, "tt", &sampled, &interval);
        if (r >= 0)
                r = ctl_enter_struct_array(reply, "ussstd");
        while (r >= 0) {
                const char *kind, *source, *description;
                uint32_t cpu;
                uint64_t count;
                double rate;

                r = ctl_enter_struct(reply, "ussstd");
                if (r > 0)
                        r = sd_bus_message_read(reply, "ussstd", &cpu, &kind, &source, &description, &count, &rate);
                if (r > 0)
                        r = ctl_exit_struct(reply);
                if (r <= 0)
                        break;
                if (array_grow(&n.sources, &allocated, n.n + 1) < 0)
                        return -ENOMEM;
                n.sources[n.n] = (MetricsNoiseSource) { cpu, strdup(kind), strdup(source), strdup(description), count };
                if (!n.sources[n.n].kind || !n.sources[n.n].source || !n.sources[n.n].description) {
                        n.n++;
                        return -ENOMEM;
                }
                n.n++;
        }
        if (r < 0)
                return r;
        n.readable = -1;
        sd_bus_error_free(&error);
        if (sd_bus_get_property_string(bus, BUS_NAME, BUS_PATH, BUS_INTERFACE, "NoiseUnreadable", &error, &text) >= 0)
                n.readable = isempty(text);
        text = mfree(text);
        /* Which watched CPUs are nohz_full= is the host's, not lowlatd's: read it here
         * (lowlatctl metrics runs on the host it reports on). */
        path = strdup_printf("%s/sys/devices/system/cpu/nohz_full", isempty(root) ? "" : root);
        if (!path)
                return -ENOMEM;
        f = fopen(path, "re");
        if (f) {
                size_t size = 0;
                if (getline(&text, &size, f) > 0 && strncmp(text, "(null)", 6) != 0)
                        (void) cpuset_parse_list(text, &n.nohz_full);
                fclose(f);
        }
        *ret = n;
        n = (MetricsNoise) {};
        return 0;
}

static bool kind_is_interrupt(const char *kind) {
        return streq(kind, "irq") || streq(kind, "timer") || streq(kind, "ipi");
}

/* The noise counters as counters, in the kernel's unit (events since boot; a CPU that
 * went offline and back may restart them, which rate() and increase() take as a reset). */
int metrics_print_noise(FILE *f, const MetricsNoise *n) {
        _cleanup_cpuset_ CPUSet cpus = CPUSET_EMPTY;

        if (n->readable >= 0) {
                prom_print_header(f, "lowlatd_noise_readable", "gauge",
                                  "0 when lowlatd cannot count the noise counters (lowlatctl noise says why): the "
                                  "series below are then its last read that worked.");
                fprintf(f, "lowlatd_noise_readable %d\n", n->readable);
        }

        prom_print_header(f, "lowlatd_isolated_cpu_interrupts_total", "counter",
                          "Interrupts on a CPU lowlatd watches for noise (by default the isolated ones), by source: "
                          "device IRQs (kind irq), the local timer (timer) and the other arch lines (ipi).");
        for (size_t i = 0; i < n->n; i++) {
                const MetricsNoiseSource *s = &n->sources[i];
                if (cpuset_add(&cpus, s->cpu) < 0)
                        return -ENOMEM;
                if (!kind_is_interrupt(s->kind))
                        continue;
                fprintf(f, "lowlatd_isolated_cpu_interrupts_total{cpu=\"%" PRIu32 "\",kind=", s->cpu);
                prom_print_label_value(f, s->kind);
                fputs(",source=", f);
                prom_print_label_value(f, s->source);
                fputs(",name=", f);
                prom_print_label_value(f, s->description);
                fprintf(f, "} %" PRIu64 "\n", s->count);
        }
        prom_print_header(f, "lowlatd_isolated_cpu_softirqs_total", "counter",
                          "Softirqs run on a CPU lowlatd watches for noise, by type (/proc/softirqs).");
        for (size_t i = 0; i < n->n; i++) {
                const MetricsNoiseSource *s = &n->sources[i];
                if (!streq(s->kind, "softirq"))
                        continue;
                fprintf(f, "lowlatd_isolated_cpu_softirqs_total{cpu=\"%" PRIu32 "\",type=", s->cpu);
                prom_print_label_value(f, s->source);
                fprintf(f, "} %" PRIu64 "\n", s->count);
        }
        prom_print_header(f, "lowlatd_isolated_cpu_context_switches_total", "counter",
                          "Tasks switched in on a CPU lowlatd watches for noise (/proc/schedstat), where the kernel "
                          "counts them.");
        for (size_t i = 0; i < n->n; i++)
                if (streq(n->sources[i].kind, "ctxsw"))
                        fprintf(f, "lowlatd_isolated_cpu_context_switches_total{cpu=\"%" PRIu32 "\"} %" PRIu64 "\n",
                                n->sources[i].cpu, n->sources[i].count);
        prom_print_header(f, "lowlatd_isolated_cpu_nohz_full", "gauge",
                          "1 when a watched CPU is in nohz_full= (its tick should stop while it runs one task).");
        CPUSET_FOREACH(cpu, &cpus)
                fprintf(f, "lowlatd_isolated_cpu_nohz_full{cpu=\"%d\"} %d\n", cpu,
                        cpuset_contains(&n->nohz_full, (unsigned) cpu));
        return 0;
}

/* Unix time or a span from microseconds, exactly (no double on the way). */
static void prom_print_usec(FILE *f, uint64_t usec) {
        fprintf(f, "%" PRIu64 ".%06" PRIu64 "\n", usec / USEC_PER_SEC, usec % USEC_PER_SEC);
}

static void prom_print_measurement_labels(FILE *f, const char *name, const LastMeasurement *m, uint32_t cpu) {
        fprintf(f, "%s{cpu=\"%" PRIu32 "\",tool=", name, cpu);
        prom_print_label_value(f, m->tool);
}

static const MeasuredCPURow *measurement_cpu(const LastMeasurement *m, uint32_t cpu) {
        for (size_t i = 0; i < m->n_cpus; i++)
                if (m->cpus[i].cpu == cpu)
                        return &m->cpus[i];
        return NULL;
}

/* The histogram: every _bucket line first, then the _sum and _count lines, each suffix one
 * group (the format allows it, and tests/integration parses metrics that strictly). The
 * +Inf bucket and _count are the CPU's samples; _sum is avg × samples, as near as the
 * tool's rounded average lets it be. */
static void metrics_print_measurement_histogram(FILE *f, const LastMeasurement *m) {
        const char *name = "lowlatd_measurement_latency_seconds";

        prom_print_header(f, name, "histogram",
                          "Wake-up latency of each CPU in the last measurement lowlatctl measure recorded: the "
                          "samples below each bound, coarsened from the tool's 1 us buckets.");
        for (size_t i = 0; i < m->n_histograms; i++) {
                const MeasuredHistogramRow *h = &m->histograms[i];
                const MeasuredCPURow *c = measurement_cpu(m, h->cpu);

                if (!c)
                        continue;
                for (size_t k = 0; k <= h->n; k++) {
                        prom_print_measurement_labels(f, "lowlatd_measurement_latency_seconds_bucket", m, h->cpu);
                        if (k < h->n)
                                fprintf(f, ",le=\"%.9g\"} %" PRIu64 "\n", (double) h->bounds_ns[k] / 1e9,
                                        MIN(h->counts[k], c->samples));
                        else
                                fprintf(f, ",le=\"+Inf\"} %" PRIu64 "\n", c->samples);
                }
        }
        for (size_t i = 0; i < m->n_histograms; i++) {
                const MeasuredCPURow *c = measurement_cpu(m, m->histograms[i].cpu);

                if (!c)
                        continue;
                prom_print_measurement_labels(f, "lowlatd_measurement_latency_seconds_sum", m, c->cpu);
                fprintf(f, "} %.9g\n", (double) c->avg_ns * (double) c->samples / 1e9);
        }
        for (size_t i = 0; i < m->n_histograms; i++) {
                const MeasuredCPURow *c = measurement_cpu(m, m->histograms[i].cpu);

                if (!c)
                        continue;
                prom_print_measurement_labels(f, "lowlatd_measurement_latency_seconds_count", m, c->cpu);
                fprintf(f, "} %" PRIu64 "\n", c->samples);
        }
}

/* A gauge of the run, labelled with its tool, in seconds. */
static void print_run_gauge(FILE *f, const char *name, const char *help, const char *tool, uint64_t usec) {
        prom_print_header(f, name, "gauge", help);
        fputs(name, f);
        fputs("{tool=", f);
        prom_print_label_value(f, tool);
        fputs("} ", f);
        prom_print_usec(f, usec);
}

/* Gauges, not counters: a measurement is a snapshot of its run, replaced by the next one.
 * The timestamp tells a stale one apart (an alert can ignore a month-old run). */
void metrics_print_measurement(FILE *f, const LastMeasurement *m) {
        if (!m || isempty(m->tool))
                return;
        print_run_gauge(f, "lowlatd_measurement_timestamp_seconds",
                        "When the last latency measurement lowlatctl measure recorded started, by tool.", m->tool,
                        m->realtime_usec);
        print_run_gauge(f, "lowlatd_measurement_duration_seconds",
                        "How long the last latency measurement measured, by tool.", m->tool, m->duration_usec);
        prom_print_header(f, "lowlatd_measurement_latency_max_seconds", "gauge",
                          "The highest wake-up latency of each CPU in the last latency measurement.");
        for (size_t i = 0; i < m->n_cpus; i++) {
                prom_print_measurement_labels(f, "lowlatd_measurement_latency_max_seconds", m, m->cpus[i].cpu);
                fprintf(f, "} %" PRIu64 ".%09" PRIu64 "\n", m->cpus[i].max_ns / NSEC_PER_SEC,
                        m->cpus[i].max_ns % NSEC_PER_SEC);
        }
        if (m->n_histograms > 0)
                metrics_print_measurement_histogram(f, m);
}

/* One series per condition, 1 for the host's: an alert on {condition="degraded"} == 1 then
 * has a series to compare while the host is fine. A condition this lowlatctl does not know
 * (a newer lowlatd's) gets its series too. Nothing from a lowlatd without Condition. */
static void metrics_print_condition(FILE *f, const ManagerInfo *info) {
        if (!info->condition)
                return;
        prom_print_header(f, "lowlatd_condition", "gauge",
                          "1 for the host's condition (applied, progressing, degraded, reboot-required, observing), 0 "
                          "for the others.");
        for (Condition c = 0; c < _CONDITION_MAX; c++)
                fprintf(f, "lowlatd_condition{condition=\"%s\"} %d\n", condition_to_string(c),
                        streq(info->condition, condition_to_string(c)));
        if (condition_from_string(info->condition) < 0) {
                fputs("lowlatd_condition{condition=", f);
                prom_print_label_value(f, info->condition);
                fputs("} 1\n", f);
        }
        if (info->reboot_required >= 0) {
                prom_print_header(f, "lowlatd_reboot_required", "gauge",
                                  "1 when the kernel command line lacks parameters the posture needs.");
                fprintf(f, "lowlatd_reboot_required %d\n", info->reboot_required ? 1 : 0);
        }
}

int metrics_print(FILE *f, const ManagerInfo *info, const SettingList *l, const MetricsNoise *noise,
                  const LastMeasurement *measurement) {
        int r;

        metrics_print_up(f, 1);
        prom_print_header(f, "lowlatd_info", "gauge", "Version, mode and state of lowlatd (always 1).");
        fputs("lowlatd_info{version=", f);
        prom_print_label_value(f, info->version);
        fputs(",mode=", f);
        prom_print_label_value(f, info->mode);
        fputs(",state=", f);
        prom_print_label_value(f, info->state);
        fputs("} 1\n", f);

        metrics_print_condition(f, info);
        r = metrics_print_settings(f, l);
        if (r >= 0 && noise)
                r = metrics_print_noise(f, noise);
        if (r < 0)
                return r;

        /* Prometheus wants base units (promtool check metrics refuses microseconds), and a
         * sentinel -1 in seconds would read as a value: whether a request is held is a
         * series of its own, and the request is NaN while none is. */
        prom_print_header(f, "lowlatd_cpu_dma_latency_held", "gauge",
                          "1 when lowlatd holds a /dev/cpu_dma_latency request, 0 when it holds none (off, or "
                          "observe mode).");
        fprintf(f, "lowlatd_cpu_dma_latency_held %d\n", manager_info_dma_latency_held(info));
        prom_print_header(f, "lowlatd_cpu_dma_latency_seconds", "gauge",
                          "The /dev/cpu_dma_latency request lowlatd holds, NaN when it holds none.");
        prom_print_usec_as_seconds(f, "lowlatd_cpu_dma_latency_seconds",
                                   manager_info_dma_latency_held(info) ? info->cpu_dma_latency_usec : -1);
        prom_print_header(f, "lowlatd_cpu_dma_latency_system_seconds", "gauge",
                          "What /dev/cpu_dma_latency reads (the strictest request of any process), NaN when "
                          "lowlatd does not read it.");
        prom_print_usec_as_seconds(f, "lowlatd_cpu_dma_latency_system_seconds", info->cpu_dma_latency_system_usec);
        prom_print_header(f, "lowlatd_last_reload_timestamp_seconds", "gauge",
                          "Time of the last reload attempt, 0 when there was none.");
        if (info->last_reload_usec == 0)
                fputs("lowlatd_last_reload_timestamp_seconds 0\n", f);
        else
                fprintf(f, "lowlatd_last_reload_timestamp_seconds %" PRIu64 ".%06" PRIu64 "\n",
                        info->last_reload_usec / USEC_PER_SEC, info->last_reload_usec % USEC_PER_SEC);
        prom_print_header(f, "lowlatd_last_reload_success", "gauge",
                          "1 when the last reload succeeded or there was none, 0 when it failed.");
        fprintf(f, "lowlatd_last_reload_success %d\n", isempty(info->last_reload_error) ? 1 : 0);
        prom_print_header(f, "lowlatd_config_warnings", "gauge",
                          "Warnings of the configuration in effect (lowlatctl status lists them; lowlatd.conf(5), "
                          "WARNINGS).");
        size_t n_warnings = 0;
        while (info->config_warnings && info->config_warnings[n_warnings])
                n_warnings++;
        fprintf(f, "lowlatd_config_warnings %zu\n", n_warnings);
        prom_print_header(f, "lowlatd_drift_events_total", "counter",
                          "Settings found drifted after the posture was in place, since lowlatd started.");
        fprintf(f, "lowlatd_drift_events_total %" PRIu64 "\n", info->drift_events);
        prom_print_header(f, "lowlatd_corrections_total", "counter",
                          "Drifted settings put back, since lowlatd started.");
        fprintf(f, "lowlatd_corrections_total %" PRIu64 "\n", info->corrections);
        prom_print_header(f, "lowlatd_failures_total", "counter",
                          "Failed corrections and read failures since lowlatd started.");
        fprintf(f, "lowlatd_failures_total %" PRIu64 "\n", info->failures);
        prom_print_header(f, "lowlatd_fights_total", "counter",
                          "Fights begun (another writer flipping a setting back again and again), since lowlatd started.");
        fprintf(f, "lowlatd_fights_total %" PRIu64 "\n", info->fights);
        prom_print_header(f, "lowlatd_posture_applied_settings_total", "counter",
                          "Settings set while putting the posture in place (start, reload, a new NIC or device), "
                          "since lowlatd started.");
        fprintf(f, "lowlatd_posture_applied_settings_total %" PRIu64 "\n", info->applied_settings);
        metrics_print_measurement(f, measurement);
        return 0;
}

/* node_exporter's textfile collector reads *.prom files only, at any moment: the metrics
 * go to ".NAME.XXXXXX" beside path (same directory, so rename() is atomic; a name it
 * ignores), then replace path in one step, so that a scrape never sees half a file. No
 * fsync(): this runs every 30 s on hosts where disk writes are noise, and after a crash
 * the next run rewrites the file anyway. */
int metrics_write_file(const char *path, const ManagerInfo *info, const SettingList *l, const MetricsNoise *noise,
                       const LastMeasurement *measurement) {
        _cleanup_free_ char *tmp = NULL;
        _cleanup_fclose_ FILE *f = NULL;
        const char *base = strrchr(path, '/');
        int fd, r;

        base = base ? base + 1 : path;
        if (isempty(base)) {
                fprintf(stderr, "lowlatctl: --output needs a file name, not a directory: %s\n", path);
                return -EISDIR;
        }
        tmp = strdup_printf("%.*s.%s.XXXXXX", (int) (base - path), path, base);
        if (!tmp)
                return -ENOMEM;
        fd = mkostemp(tmp, O_CLOEXEC);
        if (fd < 0) {
                r = -errno;
                fprintf(stderr, "lowlatctl: cannot create a temporary file beside %s: %s\n", path, strerror(-r));
                return r;
        }
        f = fdopen(fd, "w");
        if (!f) {
                r = -errno;
                (void) close(fd);
                goto fail;
        }
        /* mkostemp() makes it 0600; node_exporter runs as its own user. */
        if (fchmod(fd, 0644) < 0) {
                r = -errno;
                goto fail;
        }
        if (info)
                r = metrics_print(f, info, l, noise, measurement);
        else {
                metrics_print_down(f);
                r = 0;
        }
        if (r < 0)
                goto fail;
        if (fflush(f) != 0 || ferror(f)) {
                r = -(errno ?: EIO);
                goto fail;
        }
        r = fclose(TAKE_PTR(f));
        if (r != 0) {
                r = -errno;
                goto fail;
        }
        if (rename(tmp, path) < 0) {
                r = -errno;
                goto fail;
        }
        return 0;
fail:
        fprintf(stderr, "lowlatctl: cannot write %s: %s\n", path, strerror(-r));
        (void) unlink(tmp);
        return r;
}
