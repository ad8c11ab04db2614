/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lowlatctl, the client of org.lowlatd1 (lowlatctl(1)): the command line, and each verb as
 * ask lowlatd (bus.c), print (output.c, metrics.c), exit status (verdict.c). */
#include <getopt.h>
#include <string.h>
#include <systemd/sd-bus.h>

#include "build-config.h"
#include "config/profiles.h"
#include "noise-view.h"
#include "client.h"
#include "basic/array.h"
#include "basic/cells.h"
#include "basic/macro.h"
#include "basic/util.h"

typedef struct Arguments Arguments;

/* The options some verbs take and others refuse: a verb's row lists the ones it takes. */
typedef enum VerbOption {
        OPTION_JSON = 1 << 0,
        OPTION_STATE = 1 << 1,
        OPTION_NO_LEGEND = 1 << 2,
        OPTION_TOP = 1 << 3,     /* --interval, --iterations */
        OPTION_MEASURE = 1 << 4, /* --duration, --cpus, --tool */
        OPTION_OUTPUT = 1 << 5,
        OPTION_CONFIG = 1 << 6, /* --root goes with it */
        OPTION_SUGGEST = 1 << 7, /* --nic, --cores, --profile, --write */
        OPTION_IF_UNCHANGED = 1 << 8,
        OPTION_LIST = 1 << 9,
        OPTION_BOOT = 1 << 10, /* --apply, --remove */
} VerbOption;

typedef enum VerbFlags {
        VERB_DEFAULT = 1 << 0,   /* the verb when none is named */
        VERB_NEEDS_BUS = 1 << 1, /* exit 3 when the system bus cannot be reached */
        VERB_VERDICT = 1 << 2,   /* the verdict on stdout always, "LOWLATD UNKNOWN: why" too */
        VERB_NO_BUS = 1 << 3,    /* files only: the bus is not even tried */
        VERB_BUS_LATER = 1 << 4, /* goes on without the bus, and says why it failed only where it matters */
} VerbFlags;

/* One row per verb, as systemd's dispatch_verb() takes them (src/shared/verbs.h). */
typedef struct Verb {
        const char *name;
        unsigned max_args; /* words after the verb's name; none takes any yet */
        VerbFlags flags;
        VerbOption options;
        /* The exit status, or a negative errno after printing why (exit 3). */
        int (*dispatch)(sd_bus *bus, const Arguments *args);
} Verb;

struct Arguments {
        const Verb *verb;
        VerbOption options_given;
        bool json;
        bool legend;
        ListFilter list_filter;
        const char *config; /* check: audit here against this file, without lowlatd */
        const char *root;
        const char *output; /* metrics: write this file atomically instead of stdout */
        TopArguments top;
        MeasureArguments measure;
        char *const *words; /* after the verb's name, at most its max_args */
        size_t n_words;
        SuggestArguments suggest;
        uint64_t if_unchanged; /* reload --if-unchanged: the digest lowlatctl diff printed */
        bool list; /* explain --list */
        BootAction boot_action; /* boot --apply, --remove */
        const char *bus_failure; /* VERB_BUS_LATER: why the bus could not be reached, or NULL */
};

/* ---- Verbs -------------------------------------------------------------------- */

static int verb_status(sd_bus *bus, const Arguments *args) {
        _cleanup_(manager_info_done) ManagerInfo info = {};
        _cleanup_(setting_list_done) SettingList l = {};
        _cleanup_(last_measurement_done) LastMeasurement measurement = {};
        _cleanup_free_ char *why = NULL;
        int r, verdict;

        /* A monitoring check reads stdout: it says why there is no verdict. */
        r = ctl_read_posture(bus, &info, &l, &why);
        if (r >= 0 && ctl_read_last_measurement(bus, &measurement) < 0) {
                r = -EBADMSG;
                why = strdup("lowlatd's LastMeasurement cannot be read (why is on standard error)");
        }
        if (r < 0) {
                status_print_unknown(stdout, why, args->json);
                return finish_output(EXIT_UNKNOWN);
        }
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
        r = ctl_read_posture(bus, &info, &l, NULL);
        if (r < 0)
                return r;

        if (args->json)
                list_print_json(stdout, &l, &args->list_filter);
        else
                list_print_table(stdout, &l, &args->list_filter, args->legend);
        return finish_output(posture_verdict(&info, &l));
}

static int verb_metrics(sd_bus *bus, const Arguments *args) {
        _cleanup_(manager_info_done) ManagerInfo info = {};
        _cleanup_(setting_list_done) SettingList l = {};
        _cleanup_(metrics_noise_done) MetricsNoise noise = {};
        _cleanup_(last_measurement_done) LastMeasurement measurement = {};
        int r;

        r = bus ? ctl_read_posture(bus, &info, &l, NULL) : -ENOTCONN;
        /* A lowlatd without Noise() still gets its other families. */
        bool have_noise = r >= 0 && ctl_read_metrics_noise(bus, args->root, &noise) >= 0;
        /* Nor does a measurement that cannot be read take the rest with it, nor a
         * histogram that cannot be read the measurement's other families. */
        bool have_measurement = r >= 0 && ctl_read_last_measurement(bus, &measurement) >= 0;
        if (have_measurement)
                (void) ctl_read_last_measurement_histogram(bus, &measurement);
        const LastMeasurement *kept = have_measurement ? &measurement : NULL;
        if (args->output) {
                /* lowlatd down is written too (lowlatd_up 0): a file left as it was would
                 * go on saying that all is well. */
                if (metrics_write_file(args->output, r < 0 ? NULL : &info, &l, have_noise ? &noise : NULL, kept) < 0)
                        return EXIT_OUTPUT;
                return r < 0 ? EXIT_UNKNOWN : EXIT_OK;
        }
        if (r < 0) {
                metrics_print_down(stdout);
                return finish_output(EXIT_UNKNOWN);
        }

        r = metrics_print(stdout, &info, &l, have_noise ? &noise : NULL, kept);
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
                noise_print_table(stdout, &s, &g, args->legend);
                if (args->legend)
                        noise_reads_print(stdout, &g);
        }
        /* Counters lowlatd cannot count are no answer a check may take as quiet. */
        return finish_output(isempty(g.unreadable) ? EXIT_OK : EXIT_UNKNOWN);
}

/* reload, reapply, restore */
static int verb_call(sd_bus *bus, const char *method) {
        int r;

        r = ctl_call_action(bus, method);
        if (r < 0)
                return r;
        return r > 0 ? EXIT_REFUSED : EXIT_OK;
}

/* A reload that took says the warnings of the configuration it took (lowlatd.conf(5),
 * WARNINGS) on stderr, as --check-config would: applied as written, yet worth a look. */
static int verb_reload(sd_bus *bus, const Arguments *args) {
        char **warnings = NULL;
        size_t n = 0;
        int r;

        if (args->options_given & OPTION_IF_UNCHANGED)
                r = verb_reload_if_unchanged(bus, args->if_unchanged);
        else
                r = verb_call(bus, "Reload");
        if (r != EXIT_OK)
                return r;
        /* A lowlatd without ConfigWarnings has nothing to add. */
        if (ctl_read_config_warnings(bus, &warnings) < 0)
                return EXIT_OK;
        while (warnings && warnings[n])
                n++;
        if (n > 0)
                fprintf(stderr, "lowlatctl: reloaded, with %zu warning%s:\n", n, n == 1 ? "" : "s");
        for (size_t i = 0; i < n; i++) {
                fputs("  ", stderr);
                print_escaped(stderr, warnings[i]);
                fputc('\n', stderr);
                free(warnings[i]);
        }
        free(warnings);
        return EXIT_OK;
}

static int verb_diff(sd_bus *bus, const Arguments *args) {
        return verb_diff_run(bus, args->n_words > 0 ? args->words[0] : NULL, args->json);
}

static int verb_reapply(sd_bus *bus, const Arguments *args) {
        return verb_call(bus, "Reapply");
}

static int verb_restore(sd_bus *bus, const Arguments *args) {
        return verb_call(bus, "Restore");
}

static int verb_top_dispatch(sd_bus *bus, const Arguments *args) {
        return verb_top(bus, &args->top);
}

static int verb_profile(sd_bus *bus, const Arguments *args) {
        return verb_profile_run(args->config ?: LOWLATD_CONFIG_PATH, args->words, args->n_words, args->json,
                                args->legend);
}

static int verb_suggest(sd_bus *bus, const Arguments *args) {
        SuggestArguments suggest = args->suggest;

        suggest.root = args->root;
        suggest.config_path = args->config ?: LOWLATD_CONFIG_PATH;
        suggest.json = args->json;
        return verb_suggest_run(&suggest);
}

static int verb_boot(sd_bus *bus, const Arguments *args) {
        BootArguments boot = {
                .root = args->root,
                .config_path = args->config ?: LOWLATD_CONFIG_PATH,
                .json = args->json,
                .action = args->boot_action,
        };

        return verb_boot_run(&boot);
}

static int verb_cat_config(sd_bus *bus, const Arguments *args) {
        return verb_cat_config_run(args->config ?: LOWLATD_CONFIG_PATH);
}

static int verb_explain(sd_bus *bus, const Arguments *args) {
        return verb_explain_run(args->words, args->n_words, args->json, args->list);
}

static int verb_measure_dispatch(sd_bus *bus, const Arguments *args) {
        MeasureArguments measure = args->measure;

        measure.json = args->json;
        measure.bus_failure = args->bus_failure;
        return verb_measure(bus, &measure);
}

/* metrics and measure go on without the bus: metrics says "down", and measure --cpus
 * needs lowlatd only to count the noise and keep the result, so it says why the bus failed
 * only once that matters (a refusal of its own comes first, alone). */
static const Verb verbs[] = {
        { "status", 0, VERB_DEFAULT | VERB_NEEDS_BUS | VERB_VERDICT, OPTION_JSON, verb_status },
        { "list", 0, VERB_NEEDS_BUS, OPTION_JSON | OPTION_STATE | OPTION_NO_LEGEND, verb_list },
        { "metrics", 0, 0, OPTION_OUTPUT, verb_metrics },
        { "reload", 0, VERB_NEEDS_BUS, OPTION_IF_UNCHANGED, verb_reload },
        { "diff", 1, VERB_NEEDS_BUS, OPTION_JSON, verb_diff },
        { "reapply", 0, VERB_NEEDS_BUS, 0, verb_reapply },
        { "restore", 0, VERB_NEEDS_BUS, 0, verb_restore },
        { "check", 0, VERB_NEEDS_BUS, OPTION_JSON | OPTION_CONFIG, verb_check },
        { "noise", 0, VERB_NEEDS_BUS, OPTION_JSON | OPTION_NO_LEGEND, verb_noise },
        { "top", 0, VERB_NEEDS_BUS, OPTION_TOP, verb_top_dispatch },
        { "measure", 0, VERB_BUS_LATER, OPTION_JSON | OPTION_MEASURE, verb_measure_dispatch },
        { "profile", 2, VERB_NO_BUS, OPTION_JSON | OPTION_NO_LEGEND | OPTION_CONFIG, verb_profile },
        { "cat-config", 0, VERB_NO_BUS, OPTION_CONFIG, verb_cat_config },
        { "suggest", 0, VERB_NO_BUS, OPTION_JSON | OPTION_CONFIG | OPTION_SUGGEST, verb_suggest },
        { "explain", 1, VERB_NO_BUS, OPTION_JSON | OPTION_LIST, verb_explain },
        { "boot", 0, VERB_NO_BUS, OPTION_JSON | OPTION_CONFIG | OPTION_BOOT, verb_boot },
};

/* ---- Command line ------------------------------------------------------------- */

static void help(void) {
        printf("Usage: lowlatctl [OPTIONS] [COMMAND]\n\n"
               "Query and control lowlatd, the low-latency posture daemon.\n\n"
               "Commands:\n"
               "  status            Summary of the posture and the settings that are not ok (default)\n"
               "  list              Every setting: kind, object, desired, observed, state\n"
               "  metrics           Prometheus text format, for node_exporter's textfile collector\n"
               "  reload            Reload the configuration (root only)\n"
               "  diff [FILE]       What a reload would change, asked of lowlatd: keys, settings, the\n"
               "                    host's values; with FILE in place of the main file (root only)\n"
               "  check             Audit the host: boot isolation, kernel, topology, power, tasks, apps\n"
               "                    (--config FILE: here, against FILE, without lowlatd)\n"
               "  reapply           Check and correct every setting now (root only)\n"
               "  restore           Put back every original value and switch to observe mode (root only)\n"
               "  noise             What still reaches the watched CPUs: IRQs, ticks, IPIs, softirqs, by rate\n"
               "  top               The same live, full screen, refreshed every --interval (q quits)\n"
               "  measure           Wake-up latency of the isolated CPUs (rtla timerlat, cyclictest or oslat)\n"
               "                    (with the noise counted meanwhile; lowlatd keeps the result)\n"
               "  profile [list]    The profiles a configuration can name ([daemon] profile = NAME)\n"
               "  profile show NAME The file of one, as lowlatd would read it\n"
               "  cat-config        The configuration in force, merged, each value with its FILE:LINE\n"
               "  suggest           A configuration drawn from this host's topology: whole cores on the\n"
               "                    NICs' NUMA node, the boot line they need (--write: as a drop-in)\n"
               "  explain WORD      What the documentation says of a key (SECTION.KEY or KEY), a section\n"
               "                    ([SECTION]), a finding of check, or a journal event (name or MESSAGE_ID)\n"
               "  boot              The kernel command line the configuration needs and the boot loader\n"
               "                    found; --apply writes it for that loader, --remove undoes that\n\n"
               "Options:\n"
               "     --json         JSON output (status, list, check, noise, measure, explain, boot)\n"
               "     --state=STATE  list: only settings in STATE (comma-separated; help lists them)\n"
               "     --kind=KIND    list: only settings of KIND (comma-separated; help lists them)\n"
               "     --no-legend    list, noise: no header and footer\n"
               "     --config=FILE  check: audit against FILE in this process (lowlatd need not run);\n"
               "                    profile, cat-config, boot: FILE (default /etc/lowlatd/lowlatd.conf)\n"
               "     --root=DIR     check --config, suggest, boot: the host under DIR\n"
               "     --nic=IF       suggest: isolate on IF's NUMA node, its IRQs on that node's\n"
               "                    housekeeping CPUs (may be given more than once)\n"
               "     --cores=N      suggest: isolate N whole cores (default: half of what may be)\n"
               "     --profile=NAME suggest: start the configuration from profile NAME\n"
               "     --write        suggest: write it to CONFIG.d/50-lowlatctl-suggest.conf and check it\n"
               "     --output=FILE  metrics: write FILE atomically (temporary file, then rename)\n"
               "     --if-unchanged=DIGEST\n"
               "                    reload: only if the files are those lowlatctl diff showed as DIGEST\n"
               "     --list         explain: every name it explains, one a line\n"
               "     --apply        boot: write the line the way the boot loader takes it (GRUB:\n"
               "                    /etc/default/grub.d/lowlatd.cfg, then update-grub; BLS: grubby;\n"
               "                    systemd-boot, UKI: /etc/kernel/cmdline, then kernel-install)\n"
               "     --remove       boot: undo what --apply wrote\n"
               "  -d --interval=T   top: time between refreshes (default 2s; 500ms, 1.5, 1min)\n"
               "     --iterations=N top: stop after N refreshes (for scripts)\n"
               "     --duration=T   measure: how long to measure (default 10s; 90s, 1m, 1h 30min)\n"
               "     --cpus=LIST    measure: these CPUs instead of the isolated ones\n"
               "     --tool=TOOL    measure: timerlat, cyclictest or oslat instead of the best installed\n"
               "  -h --help         Show this help\n"
               "     --version      Show the version, and that of the lowlatd on the bus\n\n"
               "Exit status: 0 ok, 1 warning (drift) or refused, 2 critical (failed, degraded),\n"
               "3 unknown (lowlatd unreachable), 64 usage error; boot: 1 refused; measure: 69 no tool installed,\n"
               "77 not root (no real-time priority for the tool's threads) or its threads cannot run\n"
               "(or did not run) on the CPUs they measure, 78 no isolated CPUs and no --cpus.\n"
               "See lowlatctl(1).\n");
}

/* Refused with any verb whose row does not list them, in this order. */
static const struct {
        VerbOption option;
        const char *refusal;
} option_scopes[] = {
        { OPTION_JSON, "--json applies to status, list, check, noise, measure, profile, suggest, diff, explain and "
                       "boot only" },
        { OPTION_STATE, "--state and --kind apply to list only" },
        { OPTION_NO_LEGEND, "--no-legend applies to list, noise and profile only" },
        { OPTION_TOP, "--interval and --iterations apply to top only" },
        { OPTION_MEASURE, "--duration, --cpus and --tool apply to measure only" },
        { OPTION_OUTPUT, "--output applies to metrics only" },
        { OPTION_IF_UNCHANGED, "--if-unchanged applies to reload only" },
        { OPTION_SUGGEST, "--nic, --cores, --profile and --write apply to suggest only" },
        { OPTION_LIST, "--list applies to explain only" },
        { OPTION_BOOT, "--apply and --remove apply to boot only" },
        { OPTION_CONFIG, "--config applies to check, profile, cat-config, suggest and boot only, and --root to "
                         "check --config, suggest and boot" },
};

enum {
        ARG_VERSION = 0x100,
        ARG_JSON,
        ARG_STATE,
        ARG_KIND,
        ARG_NO_LEGEND,
        ARG_CONFIG,
        ARG_ROOT,
        ARG_OUTPUT,
        ARG_ITERATIONS,
        ARG_DURATION,
        ARG_CPUS,
        ARG_NIC,
        ARG_CORES,
        ARG_PROFILE,
        ARG_WRITE,
        ARG_TOOL,
        ARG_IF_UNCHANGED,
        ARG_LIST,
        ARG_APPLY,
        ARG_REMOVE,
};

/* suggest's options (parse_option()'s). */
static int parse_suggest_option(int c, const char *value, Arguments *args) {
        switch (c) {
        case ARG_NIC: {
                if (array_grow(&args->suggest.nics, &args->suggest.allocated_nics, args->suggest.n_nics + 1) < 0)
                        return -ENOMEM;
                args->suggest.nics[args->suggest.n_nics++] = value;
                args->options_given |= OPTION_SUGGEST;
                return 1;
        }
        case ARG_CORES: {
                char *end;
                unsigned long n = strtoul(value, &end, 10);
                if (!*value || *end || n == 0 || n > 4096 || value[0] == '-') {
                        fprintf(stderr, "lowlatctl: --cores: '%s' is not a number of cores (1 or more)\n", value);
                        return -EINVAL;
                }
                args->suggest.cores = n;
                args->options_given |= OPTION_SUGGEST;
                return 1;
        }
        case ARG_PROFILE:
                if (!config_profile_name_is_valid(value)) {
                        fprintf(stderr, "lowlatctl: --profile: '%s' is not a profile name\n", value);
                        return -EINVAL;
                }
                args->suggest.profile = value;
                args->options_given |= OPTION_SUGGEST;
                return 1;
        case ARG_WRITE:
                args->suggest.write = true;
                args->options_given |= OPTION_SUGGEST;
                return 1;
        default: /* getopt_long() said which option */
                fprintf(stderr, "lowlatctl: see --help\n");
                return -EINVAL;
        }
}

/* One option of getopt_long()'s: 1 to go on, 0 to exit successfully (--help, --version),
 * -EINVAL after printing why. */
static int parse_option(int c, const char *value, Arguments *args) {
        int r;

        switch (c) {
        case 'h':
                help();
                return 0;
        case ARG_VERSION:
                ctl_print_versions(stdout);
                return 0;
        case ARG_JSON:
                args->json = true;
                args->options_given |= OPTION_JSON;
                return 1;
        case ARG_STATE:
                if (streq(value, "help")) {
                        state_names_print(stdout);
                        return 0;
                }
                r = state_filter_parse(value, &args->list_filter.states);
                if (r < 0)
                        return r;
                args->options_given |= OPTION_STATE;
                return 1;
        case ARG_KIND:
                if (streq(value, "help")) {
                        kind_names_print(stdout);
                        return 0;
                }
                r = kind_filter_parse(value, &args->list_filter.kinds);
                if (r < 0)
                        return r;
                args->options_given |= OPTION_STATE;
                return 1;
        case ARG_NO_LEGEND:
                args->legend = false;
                args->options_given |= OPTION_NO_LEGEND;
                return 1;
        case ARG_CONFIG:
                args->config = value;
                args->options_given |= OPTION_CONFIG;
                return 1;
        case ARG_ROOT:
                args->root = value;
                return 1;
        case ARG_OUTPUT:
                if (isempty(value)) {
                        fprintf(stderr, "lowlatctl: --output needs a file name\n");
                        return -EINVAL;
                }
                args->output = value;
                args->options_given |= OPTION_OUTPUT;
                return 1;
        case 'd':
                args->options_given |= OPTION_TOP;
                return top_parse_interval(value, &args->top);
        case ARG_ITERATIONS:
                args->options_given |= OPTION_TOP;
                return top_parse_iterations(value, &args->top);
        case ARG_DURATION:
                args->options_given |= OPTION_MEASURE;
                return measure_parse_duration(value, &args->measure);
        case ARG_CPUS:
                args->measure.cpus = value;
                args->options_given |= OPTION_MEASURE;
                return 1;
        case ARG_TOOL:
                args->measure.tool = value;
                args->options_given |= OPTION_MEASURE;
                return 1;
        case ARG_IF_UNCHANGED:
                r = parse_digest(value, &args->if_unchanged);
                if (r < 0)
                        return r;
                args->options_given |= OPTION_IF_UNCHANGED;
                return 1;
        case ARG_LIST:
                args->list = true;
                args->options_given |= OPTION_LIST;
                return 1;
        case ARG_APPLY:
        case ARG_REMOVE: {
                BootAction action = c == ARG_APPLY ? BOOT_ACTION_APPLY : BOOT_ACTION_REMOVE;

                if (args->boot_action != BOOT_ACTION_PRINT && args->boot_action != action) {
                        fprintf(stderr, "lowlatctl: --apply and --remove exclude each other\n");
                        return -EINVAL;
                }
                args->boot_action = action;
                args->options_given |= OPTION_BOOT;
                return 1;
        }
        default:
                return parse_suggest_option(c, value, args);
        }
}

/* Returns 1 to go on, 0 to exit successfully (--help, --version), -EINVAL on bad usage. */
static int parse_arguments(int argc, char *argv[], Arguments *args) {
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, ARG_VERSION },
                { "json", no_argument, NULL, ARG_JSON },
                { "state", required_argument, NULL, ARG_STATE },
                { "kind", required_argument, NULL, ARG_KIND },
                { "no-legend", no_argument, NULL, ARG_NO_LEGEND },
                { "config", required_argument, NULL, ARG_CONFIG },
                { "root", required_argument, NULL, ARG_ROOT },
                { "output", required_argument, NULL, ARG_OUTPUT },
                { "interval", required_argument, NULL, 'd' },
                { "iterations", required_argument, NULL, ARG_ITERATIONS },
                { "duration", required_argument, NULL, ARG_DURATION },
                { "cpus", required_argument, NULL, ARG_CPUS },
                { "nic", required_argument, NULL, ARG_NIC },
                { "cores", required_argument, NULL, ARG_CORES },
                { "profile", required_argument, NULL, ARG_PROFILE },
                { "write", no_argument, NULL, ARG_WRITE },
                { "tool", required_argument, NULL, ARG_TOOL },
                { "if-unchanged", required_argument, NULL, ARG_IF_UNCHANGED },
                { "list", no_argument, NULL, ARG_LIST },
                { "apply", no_argument, NULL, ARG_APPLY },
                { "remove", no_argument, NULL, ARG_REMOVE },
                {},
        };
        int c, r;

        *args = (Arguments) {
                .legend = true,
                .top.interval_usec = 2 * USEC_PER_SEC,
                .measure.duration_sec = 10,
        };
        while ((c = getopt_long(argc, argv, "hd:", options, NULL)) >= 0) {
                r = parse_option(c, optarg, args);
                if (r <= 0)
                        return r;
        }

        for (size_t i = 0; i < ELEMENTSOF(verbs); i++)
                if (optind < argc ? streq(argv[optind], verbs[i].name) : (verbs[i].flags & VERB_DEFAULT))
                        args->verb = &verbs[i];
        if (!args->verb) {
                fprintf(stderr, "lowlatctl: unknown command '%s'; see --help\n", argv[optind]);
                return -EINVAL;
        }
        if (optind < argc)
                optind++;
        if ((unsigned) (argc - optind) > args->verb->max_args) {
                fprintf(stderr, "lowlatctl: unexpected argument '%s'; see --help\n",
                        argv[optind + (int) args->verb->max_args]);
                return -EINVAL;
        }
        args->words = argv + optind;
        args->n_words = (size_t) (argc - optind);

        for (size_t i = 0; i < ELEMENTSOF(option_scopes); i++)
                if ((args->options_given & option_scopes[i].option) && !(args->verb->options & option_scopes[i].option)) {
                        fprintf(stderr, "lowlatctl: %s\n", option_scopes[i].refusal);
                        return -EINVAL;
                }
        if (args->root && args->verb->dispatch != verb_suggest && args->verb->dispatch != verb_boot &&
            (!args->config || args->verb->dispatch != verb_check)) {
                fprintf(stderr, "lowlatctl: %s\n", option_scopes[ELEMENTSOF(option_scopes) - 1].refusal);
                return -EINVAL;
        }
        return 1;
}

static void arguments_done(Arguments *args) {
        free((void *) args->suggest.nics);
}

int main(int argc, char *argv[]) {
        _cleanup_(sd_bus_unrefp) sd_bus *bus = NULL;
        _cleanup_free_ char *why = NULL;
        _cleanup_(arguments_done) Arguments args = {};
        int r;

        r = parse_arguments(argc, argv, &args);
        if (r <= 0)
                return r < 0 ? EXIT_USAGE : EXIT_SUCCESS;

        /* check --config audits here: no bus needed. */
        if (!args.config && !(args.verb->flags & VERB_NO_BUS)) {
                r = ctl_bus_connect(&bus, (args.verb->flags & (VERB_VERDICT | VERB_BUS_LATER)) ? &why : NULL);
                if (r < 0 && (args.verb->flags & VERB_VERDICT)) {
                        status_print_unknown(stdout, why, args.json);
                        return finish_output(EXIT_UNKNOWN);
                }
                if (r < 0 && (args.verb->flags & VERB_NEEDS_BUS))
                        return EXIT_UNKNOWN;
                args.bus_failure = why;
        }

        r = args.verb->dispatch(bus, &args);
        return r < 0 ? EXIT_UNKNOWN : r;
}
