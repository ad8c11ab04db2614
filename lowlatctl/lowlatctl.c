/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lowlatctl, the client of org.lowlatd1 (lowlatctl(1)): the command line, and each verb as
 * ask lowlatd (bus.c), print (output.c, metrics.c), exit status (verdict.c). */
#include <getopt.h>
#include <string.h>
#include <systemd/sd-bus.h>

#include "build-config.h"
#include "noise-view.h"
#include "lowlatctl.h"
#include "macro.h"
#include "util.h"

typedef enum Verb {
        VERB_STATUS,
        VERB_LIST,
        VERB_METRICS,
        VERB_RELOAD,
        VERB_REAPPLY,
        VERB_RESTORE,
        VERB_CHECK,
        VERB_NOISE,
        VERB_TOP,
        VERB_MEASURE,
} Verb;

typedef struct Arguments {
        Verb verb;
        bool json;
        bool legend;
        StateFilter state_filter;
        const char *config; /* check: audit here against this file, without lowlatd */
        const char *root;
        const char *output; /* metrics: write this file atomically instead of stdout */
        TopArguments top;
        MeasureArguments measure;
} Arguments;

/* ---- Verbs -------------------------------------------------------------------- */
/* Each returns the exit status, or a negative errno after printing why (exit 3). */

static int verb_status(sd_bus *bus, const Arguments *args) {
        _cleanup_(manager_info_done) ManagerInfo info = {};
        _cleanup_(setting_list_done) SettingList l = {};
        _cleanup_(last_measurement_done) LastMeasurement measurement = {};
        int r, verdict;

        r = ctl_read_posture(bus, &info, &l);
        if (r < 0)
                return r;
        r = ctl_read_last_measurement(bus, &measurement);
        if (r < 0)
                return r;
        info.measurement = &measurement;

        verdict = posture_verdict(&info, &l);
        if (args->json)
                status_print_json(stdout, &info, &l, verdict);
        else
                status_print_text(stdout, &info, &l, verdict);
        return finish_output(verdict);
}

static int verb_list(sd_bus *bus, const Arguments *args) {
        _cleanup_(manager_info_done) ManagerInfo info = {};
        _cleanup_(setting_list_done) SettingList l = {};
        int r;

        /* The State property takes part in the verdict (degraded). */
        r = ctl_read_posture(bus, &info, &l);
        if (r < 0)
                return r;

        if (args->json)
                list_print_json(stdout, &l, args->state_filter);
        else
                list_print_table(stdout, &l, args->state_filter, args->legend);
        return finish_output(posture_verdict(&info, &l));
}

static int verb_metrics(sd_bus *bus, const Arguments *args) {
        _cleanup_(manager_info_done) ManagerInfo info = {};
        _cleanup_(setting_list_done) SettingList l = {};
        _cleanup_(metrics_noise_done) MetricsNoise noise = {};
        int r;

        r = bus ? ctl_read_posture(bus, &info, &l) : -ENOTCONN;
        /* A lowlatd without Noise() still gets its other families. */
        bool have_noise = r >= 0 && ctl_read_metrics_noise(bus, args->root, &noise) >= 0;
        if (args->output) {
                /* lowlatd down is written too (lowlatd_up 0): a file left as it was would
                 * go on saying that all is well. */
                if (metrics_write_file(args->output, r < 0 ? NULL : &info, &l, have_noise ? &noise : NULL) < 0)
                        return EXIT_OUTPUT;
                return r < 0 ? EXIT_UNKNOWN : EXIT_OK;
        }
        if (r < 0) {
                metrics_print_down(stdout);
                return finish_output(EXIT_UNKNOWN);
        }

        r = metrics_print(stdout, &info, &l, have_noise ? &noise : NULL);
        if (r < 0) {
                fprintf(stderr, "lowlatctl: out of memory\n");
                return r;
        }
        /* The posture is in the numbers; the exit status only says whether they are real,
         * so "metrics > file && mv" publishes drift too. */
        return finish_output(EXIT_OK);
}

static int verb_check(sd_bus *bus, const Arguments *args) {
        _cleanup_finding_list_ FindingList local = FINDING_LIST_EMPTY;
        _cleanup_(check_report_done) CheckReport report = {};
        int r;

        if (args->config)
                r = check_report_local(args->config, args->root, &report, &local);
        else
                r = ctl_read_check_report(bus, &report);
        if (r < 0)
                return r;
        if (r > 0) /* lowlatd is there but answered with an error: no audit to judge */
                return EXIT_UNKNOWN;

        check_print(stdout, &report, args->json);
        return finish_output(check_verdict(&report));
}

static int verb_noise(sd_bus *bus, const Arguments *args) {
        _cleanup_(noise_sample_done) NoiseSample s = {};
        _cleanup_(noise_reads_done) NoiseReads g = {};
        int r;

        r = ctl_read_noise(bus, &s);
        if (r < 0)
                return r;
        ctl_read_noise_reads(bus, &g);
        if (args->json)
                noise_print_json(stdout, &s, &g);
        else {
                noise_print_table(stdout, &s, args->legend);
                if (args->legend)
                        noise_reads_print(stdout, &g);
        }
        return finish_output(EXIT_OK);
}

/* reload, reapply, restore */
static int verb_call(sd_bus *bus, const char *method) {
        int r;

        r = ctl_call_action(bus, method);
        if (r < 0)
                return r;
        return r > 0 ? EXIT_REFUSED : EXIT_OK;
}

/* ---- Command line ------------------------------------------------------------- */

static void help(void) {
        printf("Usage: lowlatctl [OPTIONS] [COMMAND]\n\n"
               "Query and control lowlatd, the low-latency posture daemon.\n\n"
               "Commands:\n"
               "  status            Summary of the posture and the settings that are not ok (default)\n"
               "  list              Every setting: kind, object, desired, observed, state\n"
               "  metrics           Prometheus text format, for node_exporter's textfile collector\n"
               "  reload            Reload the configuration (root only)\n"
               "  check             Audit the host: boot isolation, kernel, topology, power, tasks, apps\n"
               "                    (--config FILE: here, against FILE, without lowlatd)\n"
               "  reapply           Check and correct every setting now (root only)\n"
               "  restore           Put back every original value and switch to observe mode (root only)\n"
               "  noise             What still reaches the watched CPUs: IRQs, ticks, IPIs, softirqs, by rate\n"
               "  top               The same live, full screen, refreshed every --interval (q quits)\n"
               "  measure           Wake-up latency of the isolated CPUs (rtla timerlat, cyclictest or oslat)\n"
               "                    (with the noise counted meanwhile; lowlatd keeps the result)\n\n"
               "Options:\n"
               "     --json         JSON output (status, list, check, noise)\n"
               "     --state=STATE  list: only settings in STATE (comma-separated)\n"
               "     --no-legend    list, noise: no header and footer\n"
               "     --config=FILE  check: audit against FILE in this process (lowlatd need not run)\n"
               "     --root=DIR     check --config: the host's /proc and /sys under DIR\n"
               "     --output=FILE  metrics: write FILE atomically (temporary file, then rename)\n"
               "  -d --interval=S   top: seconds between refreshes (default 2)\n"
               "     --iterations=N top: stop after N refreshes (for scripts)\n"
               "     --duration=S   measure: seconds to measure (default 10)\n"
               "     --cpus=LIST    measure: these CPUs instead of the isolated ones\n"
               "     --tool=TOOL    measure: timerlat, cyclictest or oslat instead of the best installed\n"
               "  -h --help         Show this help\n"
               "     --version      Show the version\n\n"
               "Exit status: 0 ok, 1 warning (drift) or refused, 2 critical (failed, degraded),\n"
               "3 unknown (lowlatd unreachable), 64 usage error; measure: 69 no tool installed,\n"
               "78 no isolated CPUs and no --cpus. See lowlatctl(1).\n");
}

/* Returns 1 to go on, 0 to exit successfully (--help, --version), -EINVAL on bad usage. */
static int parse_arguments(int argc, char *argv[], Arguments *args) {
        enum {
                ARG_VERSION = 0x100,
                ARG_JSON,
                ARG_STATE,
                ARG_NO_LEGEND,
                ARG_CONFIG,
                ARG_ROOT,
                ARG_OUTPUT,
                ARG_ITERATIONS,
                ARG_DURATION,
                ARG_CPUS,
                ARG_TOOL,
        };
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, ARG_VERSION },
                { "json", no_argument, NULL, ARG_JSON },
                { "state", required_argument, NULL, ARG_STATE },
                { "no-legend", no_argument, NULL, ARG_NO_LEGEND },
                { "config", required_argument, NULL, ARG_CONFIG },
                { "root", required_argument, NULL, ARG_ROOT },
                { "output", required_argument, NULL, ARG_OUTPUT },
                { "interval", required_argument, NULL, 'd' },
                { "iterations", required_argument, NULL, ARG_ITERATIONS },
                { "duration", required_argument, NULL, ARG_DURATION },
                { "cpus", required_argument, NULL, ARG_CPUS },
                { "tool", required_argument, NULL, ARG_TOOL },
                {},
        };
        static const struct {
                const char *name;
                Verb verb;
        } verbs[] = {
                { "status", VERB_STATUS },   { "list", VERB_LIST },       { "metrics", VERB_METRICS },
                { "reload", VERB_RELOAD },   { "reapply", VERB_REAPPLY }, { "restore", VERB_RESTORE },
                { "check", VERB_CHECK },     { "noise", VERB_NOISE },     { "top", VERB_TOP },
                { "measure", VERB_MEASURE },
        };
        bool have_state = false, have_top = false, have_measure = false;
        int c, r;

        *args = (Arguments) {
                .verb = VERB_STATUS,
                .legend = true,
                .top.interval_usec = 2 * USEC_PER_SEC,
                .measure.duration_sec = 10,
        };
        while ((c = getopt_long(argc, argv, "hd:", options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        help();
                        return 0;
                case ARG_VERSION:
                        printf("lowlatctl %s\n", LOWLATD_VERSION);
                        return 0;
                case ARG_JSON:
                        args->json = true;
                        break;
                case ARG_STATE:
                        r = state_filter_parse(optarg, &args->state_filter);
                        if (r < 0)
                                return r;
                        have_state = true;
                        break;
                case ARG_NO_LEGEND:
                        args->legend = false;
                        break;
                case ARG_CONFIG:
                        args->config = optarg;
                        break;
                case ARG_ROOT:
                        args->root = optarg;
                        break;
                case ARG_OUTPUT:
                        if (isempty(optarg)) {
                                fprintf(stderr, "lowlatctl: --output needs a file name\n");
                                return -EINVAL;
                        }
                        args->output = optarg;
                        break;
                case 'd': {
                        /* Seconds, as top(1) takes them ("1.5"), or a duration with its unit. */
                        if (parse_duration_usec(optarg, &args->top.interval_usec) < 0 ||
                            args->top.interval_usec < USEC_PER_SEC / 10 || args->top.interval_usec > 3600 * USEC_PER_SEC) {
                                fprintf(stderr, "lowlatctl: --interval: '%s' is not 0.1 to 3600 seconds\n", optarg);
                                return -EINVAL;
                        }
                        have_top = true;
                        break;
                }
                case ARG_ITERATIONS:
                        if (parse_unsigned(optarg, &args->top.iterations) < 0 || args->top.iterations == 0) {
                                fprintf(stderr, "lowlatctl: --iterations: '%s' is not a positive number\n", optarg);
                                return -EINVAL;
                        }
                        have_top = true;
                        break;
                case ARG_DURATION:
                        if (parse_unsigned(optarg, &args->measure.duration_sec) < 0 || args->measure.duration_sec == 0 ||
                            args->measure.duration_sec > 86400) {
                                fprintf(stderr, "lowlatctl: --duration: '%s' is not 1 to 86400 seconds\n", optarg);
                                return -EINVAL;
                        }
                        have_measure = true;
                        break;
                case ARG_CPUS:
                        args->measure.cpus = optarg;
                        have_measure = true;
                        break;
                case ARG_TOOL:
                        args->measure.tool = optarg;
                        have_measure = true;
                        break;
                default:
                        return -EINVAL;
                }

        if (optind < argc) {
                bool found = false;

                for (size_t i = 0; i < ELEMENTSOF(verbs); i++)
                        if (streq(argv[optind], verbs[i].name)) {
                                args->verb = verbs[i].verb;
                                found = true;
                        }
                if (!found) {
                        fprintf(stderr, "lowlatctl: unknown command '%s'; see --help\n", argv[optind]);
                        return -EINVAL;
                }
                optind++;
        }
        if (optind < argc) {
                fprintf(stderr, "lowlatctl: unexpected argument '%s'\n", argv[optind]);
                return -EINVAL;
        }
        if (args->json && args->verb != VERB_STATUS && args->verb != VERB_LIST && args->verb != VERB_CHECK &&
            args->verb != VERB_NOISE) {
                fprintf(stderr, "lowlatctl: --json applies to status, list, check and noise only\n");
                return -EINVAL;
        }
        if (have_state && args->verb != VERB_LIST) {
                fprintf(stderr, "lowlatctl: --state applies to list only\n");
                return -EINVAL;
        }
        if (!args->legend && args->verb != VERB_LIST && args->verb != VERB_NOISE) {
                fprintf(stderr, "lowlatctl: --no-legend applies to list and noise only\n");
                return -EINVAL;
        }
        if (have_top && args->verb != VERB_TOP) {
                fprintf(stderr, "lowlatctl: --interval and --iterations apply to top only\n");
                return -EINVAL;
        }
        if (have_measure && args->verb != VERB_MEASURE) {
                fprintf(stderr, "lowlatctl: --duration, --cpus and --tool apply to measure only\n");
                return -EINVAL;
        }
        if (args->output && args->verb != VERB_METRICS) {
                fprintf(stderr, "lowlatctl: --output applies to metrics only\n");
                return -EINVAL;
        }
        if ((args->config && args->verb != VERB_CHECK) || (args->root && !args->config)) {
                fprintf(stderr, "lowlatctl: --config applies to check only, and --root to check --config\n");
                return -EINVAL;
        }
        return 1;
}

int main(int argc, char *argv[]) {
        _cleanup_(sd_bus_unrefp) sd_bus *bus = NULL;
        Arguments args;
        int r;

        r = parse_arguments(argc, argv, &args);
        if (r <= 0)
                return r < 0 ? EXIT_USAGE : EXIT_SUCCESS;

        /* check --config audits here: no bus needed. */
        if (!args.config) {
                r = ctl_bus_connect(&bus);
                /* measure --cpus needs lowlatd only to count the noise and keep the result. */
                if (r < 0 && args.verb != VERB_METRICS && args.verb != VERB_MEASURE)
                        return EXIT_UNKNOWN;
        }

        switch (args.verb) {
        case VERB_STATUS:
                r = verb_status(bus, &args);
                break;
        case VERB_LIST:
                r = verb_list(bus, &args);
                break;
        case VERB_METRICS:
                r = verb_metrics(bus, &args);
                break;
        case VERB_RELOAD:
                r = verb_call(bus, "Reload");
                break;
        case VERB_REAPPLY:
                r = verb_call(bus, "Reapply");
                break;
        case VERB_RESTORE:
                r = verb_call(bus, "Restore");
                break;
        case VERB_CHECK:
                r = verb_check(bus, &args);
                break;
        case VERB_NOISE:
                r = verb_noise(bus, &args);
                break;
        case VERB_TOP:
                r = verb_top(bus, &args.top);
                break;
        case VERB_MEASURE:
                r = verb_measure(bus, &args.measure);
                break;
        }
        return r < 0 ? EXIT_UNKNOWN : r;
}
