/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lowlatctl metrics: lowlatd's state in the Prometheus text exposition format (0.0.4),
 * for node_exporter's textfile collector. */
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lowlatctl.h"
#include "macro.h"
#include "setting.h"
#include "util.h"

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

int metrics_print(FILE *f, const ManagerInfo *info, const SettingList *l) {
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

        r = metrics_print_settings(f, l);
        if (r < 0)
                return r;

        /* Prometheus wants base units (promtool check metrics refuses microseconds), and a
         * sentinel -1 in seconds would read as a value: whether a request is held is a
         * series of its own, and the request is NaN while none is. */
        prom_print_header(f, "lowlatd_cpu_dma_latency_held", "gauge",
                          "1 when lowlatd holds a /dev/cpu_dma_latency request, 0 when [pm] cpu_dma_latency is off.");
        fprintf(f, "lowlatd_cpu_dma_latency_held %d\n", info->cpu_dma_latency_usec >= 0);
        prom_print_header(f, "lowlatd_cpu_dma_latency_seconds", "gauge",
                          "The /dev/cpu_dma_latency request lowlatd holds, NaN when it holds none.");
        if (info->cpu_dma_latency_usec < 0)
                fputs("lowlatd_cpu_dma_latency_seconds NaN\n", f);
        else
                fprintf(f, "lowlatd_cpu_dma_latency_seconds %" PRIi32 ".%06" PRIi32 "\n",
                        info->cpu_dma_latency_usec / (int32_t) USEC_PER_SEC,
                        info->cpu_dma_latency_usec % (int32_t) USEC_PER_SEC);
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
        return 0;
}

/* node_exporter's textfile collector reads *.prom files only, at any moment: the metrics
 * go to ".NAME.XXXXXX" beside path (same directory, so rename() is atomic; a name it
 * ignores), then replace path in one step, so that a scrape never sees half a file. No
 * fsync(): this runs every 30 s on hosts where disk writes are noise, and after a crash
 * the next run rewrites the file anyway. */
int metrics_write_file(const char *path, const ManagerInfo *info, const SettingList *l) {
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
                r = metrics_print(f, info, l);
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
