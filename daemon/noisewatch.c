/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The noise counters and their gate. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log/log.h"
#include "noise/gate.h"
#include "noisewatch.h"
#include "basic/util.h"

typedef struct NoiseWatch {
        Source source;
        Noise *noise; /* the posture's noise CPUs' counters; NULL until the first pass */
        bool unreadable;  /* said once (EVENT_NOISE_UNREADABLE), until a read works again */
        char *gate_state; /* "perf: ..." or "off: why"; NULL with no watched CPU */
        bool gate_config; /* [noise] gate as the counters were set up with */
        bool set_up;      /* after the first pass */
} NoiseWatch;

/* The gate spares the scan /proc/interrupts while the watched CPUs take nothing but their
 * timer; it needs the live host's perf and tracepoints (a fake tree's CPUs are not this
 * machine's). Without it every scan reads the file, as it must. */
static void gate_open(NoiseWatch *w) {
        const Host *host = source_host(&w->source);
        const Posture *p = source_posture(&w->source);
        _cleanup_free_ char *cpus = NULL;
        NoiseGate *g = NULL;
        const char *event = NULL;
        size_t rings = 0;
        int r;

        /* Rings opened before (CPUs that went on- or offline since) go first, also when no
         * new ones can be had. */
        noise_set_gate(w->noise, NULL);
        w->gate_state = mfree(w->gate_state);
        if (w->noise->n_cpus == 0)
                return;
        if (!p->config->noise_gate) {
                w->gate_state = strdup("off: [noise] gate = off");
                return;
        }
        if (!host_is_live(host)) {
                w->gate_state = strdup("off: not the live host (--root)");
                return;
        }
        r = noise_gate_open(host, w->noise->cpus, w->noise->n_cpus, &g, &event);
        if (r < 0) {
                w->gate_state = strdup_printf("off: %s%s%s", event ?: "", event ? ": " : "", strerror(-r));
                log_info("Noise counters: no perf ring on the watched CPUs (%s%s%s); /proc/interrupts is read at "
                         "every scan",
                         event ?: "", event ? ": " : "", strerror(-r));
                return;
        }
        for (size_t i = 0; i < g->n_rings; i++)
                rings += g->rings[i].map != NULL;
        cpus = cpuset_format_list(&p->noise_cpus);
        w->gate_state = strdup_printf("perf: %u tracepoints, rings on %zu of %zu CPUs (%s)%s", g->n_events, rings,
                                      g->n_rings, cpus ?: "?", g->has_timer ? ", timer counted apart" : "");
        noise_set_gate(w->noise, g);
}

static void read_nohz_full(NoiseWatch *w) {
        HostCpus cpus_now = {};

        if (host_read_cpus(source_host(&w->source), &cpus_now) >= 0)
                noise_set_nohz_full(w->noise, &cpus_now.nohz_full);
        host_cpus_done(&cpus_now);
}

/* The counters follow the posture's noise CPUs: a reload that names other CPUs starts
 * them afresh (the rates then wait for a second scan); one that keeps them keeps them. */
static void noise_sync(NoiseWatch *w) {
        const Posture *p = source_posture(&w->source);
        _cleanup_free_ unsigned *cpus = NULL;
        size_t n = 0, count = cpuset_count(&p->noise_cpus);
        bool same;
        Noise *noise;
        int r;

        if (count > 0 && !(cpus = malloc(count * sizeof(unsigned))))
                return;
        CPUSET_FOREACH(cpu, &p->noise_cpus)
                if (n < count)
                        cpus[n++] = (unsigned) cpu;
        same = w->noise && w->noise->n_cpus == n && (n == 0 || memcmp(w->noise->cpus, cpus, n * sizeof(unsigned)) == 0) &&
               w->gate_config == p->config->noise_gate;
        if (same) {
                read_nohz_full(w);
                return;
        }
        r = noise_new(cpus, n, &noise);
        if (r < 0) {
                log_warning_errno(r, "Cannot set up the noise counters");
                return;
        }
        noise_free(w->noise);
        w->noise = noise;
        read_nohz_full(w);
        w->gate_config = p->config->noise_gate;
        gate_open(w);
}

static NoiseAlertPolicy noise_policy(const NoiseWatch *w) {
        const Config *c = source_posture(&w->source)->config;
        return (NoiseAlertPolicy) { c->noise_tick_rate_max, c->noise_alert_interval_usec, NOISE_BUSY_SHARE_MIN };
}

static void on_noise_alert(const NoiseAlert *a, void *userdata) {
        NoiseWatch *w = userdata;
        NoiseAlertPolicy policy = noise_policy(w);

        log_noise_alert(a, &policy, w->noise->interval_usec,
                        cpuset_contains(&source_posture(&w->source)->isolated, a->cpu));
}

/* The counters that cannot be counted are said once, and once more when they can again:
 * until then what they show is the last read that worked, and no alert is raised. */
static void noise_report_readable(NoiseWatch *w) {
        const char *why = w->noise->unreadable;

        if (why && !w->unreadable)
                log_event(EVENT_NOISE_UNREADABLE, "The noise counters cannot be counted: %s", why);
        else if (!why && w->unreadable)
                log_info("The noise counters are counted again");
        w->unreadable = why;
}

/* Every scan: the counters, the rates since the last scan, the alerts. */
static void noise_scan_now(NoiseWatch *w) {
        const Host *host = source_host(&w->source);
        NoiseAlertPolicy policy = noise_policy(w);
        uint64_t now = now_usec(CLOCK_MONOTONIC);

        if (!w->noise || w->noise->n_cpus == 0)
                return;
        (void) noise_read_scan(w->noise, host, now);
        noise_report_readable(w);
        if (w->noise->unreadable)
                return;
        noise_scan(w->noise, now);
        /* /proc/stat costs as much as /proc/interrupts on a big host: only while a
         * nohz_full CPU ticks too often, to tell whether it runs a task. */
        if (noise_wants_stat(w->noise, &policy))
                (void) noise_read_stat(w->noise, host);
        noise_check_alerts(w->noise, &policy, now, on_noise_alert, w);
}

/* The counters are set up once the first pass has put the posture in place. Rates are
 * per scan interval: a forced pass (Reapply(), a reload) comes between scans and reads
 * nothing, or it would cut an interval short. */
static void noisewatch_pass_end(Source *s, ReconcileFlags flags) {
        NoiseWatch *w = (NoiseWatch *) s;

        if (!w->set_up) {
                w->set_up = true;
                noise_sync(w);
        }
        if (!(flags & RECONCILE_FORCE))
                noise_scan_now(w);
}

static void noisewatch_posture_changed(Source *s) {
        noise_sync((NoiseWatch *) s);
}

/* A CPU that went offline lost its perf events' place on it: new rings, with one for each
 * watched CPU online now. */
static void noisewatch_online_cpus_changed(Source *s) {
        NoiseWatch *w = (NoiseWatch *) s;

        if (w->noise)
                gate_open(w);
}

static void noisewatch_stop(Source *s) {
        NoiseWatch *w = (NoiseWatch *) s;

        w->noise = noise_free(w->noise);
        w->gate_state = mfree(w->gate_state);
}

const Noise *noisewatch_noise(const Source *s) {
        return ((const NoiseWatch *) s)->noise;
}

const Noise *noisewatch_refresh(Source *s) {
        NoiseWatch *w = (NoiseWatch *) s;
        uint64_t now = now_usec(CLOCK_MONOTONIC);

        if (!w->noise)
                return NULL;
        if (w->noise->n_cpus > 0 && (!w->noise->read_once || now - w->noise->sampled_usec >= NOISE_REFRESH_USEC))
                (void) noise_read(w->noise, source_host(s), now);
        return w->noise;
}

const char *noisewatch_gate_state(const Source *s) {
        return ((const NoiseWatch *) s)->gate_state;
}

const SourceVTable noisewatch_vtable = {
        .name = "noise",
        .size = sizeof(NoiseWatch),
        .posture_changed = noisewatch_posture_changed,
        .pass_end = noisewatch_pass_end,
        .online_cpus_changed = noisewatch_online_cpus_changed,
        .stop = noisewatch_stop,
};
