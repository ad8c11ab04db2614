/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lowlatd: parse the command line, load and validate the config, apply the posture,
 * then keep it from the event loop. */
#include <getopt.h>
#include <string.h>
#include <sys/resource.h>

#include "config/config.h"
#include "build-config.h"
#include "version.h"
#include "log/log.h"
#include "bus.h"
#include "manager.h"
#include "report.h"
#include "basic/util.h"
#include "setting/posture-load.h"

#define EXIT_INVALID 1
#define EXIT_RUNTIME 2
#define EXIT_DRIFT 3

typedef struct Arguments {
        const char *config_path;
        const char *root;
        bool observe;
        bool check_config;
        bool strict; /* --check-config: warnings fail too */
        bool once;
        ReportFlags report; /* --once: --changed, --json */
} Arguments;

static void help(void) {
        printf("Usage: lowlatd [OPTIONS]\n\n"
               "Apply the low-latency posture in lowlatd.conf and keep it.\n\n"
               "  -c --config=FILE   Configuration file (default %s; drop-ins in FILE.d/*.conf)\n"
               "  -r --root=DIR      Prefix for every /proc, /sys and /dev path (default /)\n"
               "     --observe       Report drift, change nothing\n"
               "     --check-config  Validate the configuration and exit\n"
               "     --strict        --check-config: fail on warnings too\n"
               "     --once          One pass: print the state of every setting and exit\n"
               "     --changed       --once: only the settings that are not ok\n"
               "     --json          --once: the report as JSON\n"
               "  -h --help          Show this help\n"
               "     --version       Show the version\n\n"
               "See lowlatd(8) and lowlatd.conf(5).\n",
               LOWLATD_CONFIG_PATH);
}

/* Returns 1 to go on, 0 to exit successfully (--help), -EINVAL on bad usage. */
static int parse_arguments(int argc, char *argv[], Arguments *args) {
        enum { ARG_OBSERVE = 0x100, ARG_CHECK_CONFIG, ARG_ONCE, ARG_VERSION, ARG_CHANGED, ARG_JSON, ARG_STRICT };
        static const struct option options[] = {
                { "config", required_argument, NULL, 'c' },
                { "root", required_argument, NULL, 'r' },
                { "observe", no_argument, NULL, ARG_OBSERVE },
                { "check-config", no_argument, NULL, ARG_CHECK_CONFIG },
                { "strict", no_argument, NULL, ARG_STRICT },
                { "once", no_argument, NULL, ARG_ONCE },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, ARG_VERSION },
                { "changed", no_argument, NULL, ARG_CHANGED },
                { "json", no_argument, NULL, ARG_JSON },
                {},
        };
        int c;

        *args = (Arguments) { .config_path = LOWLATD_CONFIG_PATH, .root = "/" };
        while ((c = getopt_long(argc, argv, "c:r:h", options, NULL)) >= 0)
                switch (c) {
                case 'c':
                        args->config_path = optarg;
                        break;
                case 'r':
                        args->root = optarg;
                        break;
                case ARG_OBSERVE:
                        args->observe = true;
                        break;
                case ARG_CHECK_CONFIG:
                        args->check_config = true;
                        break;
                case ARG_STRICT:
                        args->strict = true;
                        break;
                case ARG_ONCE:
                        args->once = true;
                        break;
                case ARG_CHANGED:
                        args->report |= REPORT_CHANGED;
                        break;
                case ARG_JSON:
                        args->report |= REPORT_JSON;
                        break;
                case 'h':
                        help();
                        return 0;
                case ARG_VERSION:
                        printf("lowlatd %s\n", LOWLATD_VERSION);
                        return 0;
                default: /* getopt_long() said which option */
                        fprintf(stderr, "lowlatd: see --help\n");
                        return -EINVAL;
                }
        if (optind < argc) {
                fprintf(stderr, "lowlatd: unexpected argument '%s'; see --help\n", argv[optind]);
                return -EINVAL;
        }
        if (args->strict && !args->check_config) {
                fprintf(stderr, "lowlatd: --strict applies to --check-config only; see --help\n");
                return -EINVAL;
        }
        if (args->report && !args->once) {
                fprintf(stderr, "lowlatd: --changed and --json apply to --once only; see --help\n");
                return -EINVAL;
        }
        return 1;
}

static void raise_fd_limit(void) {
        struct rlimit rl;

        /* Two persistent fds per IRQ: 10,000 IRQs need more than the usual 1024. Root may
         * raise the hard limit too; where it may not, reads fall back to open/read/close. */
        if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
                return;
        if (rl.rlim_max < 524288) {
                struct rlimit want = { 524288, 524288 };
                if (setrlimit(RLIMIT_NOFILE, &want) >= 0)
                        return;
        }
        rl.rlim_cur = rl.rlim_max;
        (void) setrlimit(RLIMIT_NOFILE, &rl);
}

static int load_posture(const Arguments *args, Host *host, Posture **ret) {
        _cleanup_error_list_ ErrorList errors = ERROR_LIST_EMPTY;
        int r = posture_load(args->config_path, host, ret, &errors);

        if (r == -ENODEV) {
                fprintf(stderr, "lowlatd: %s\n", errors.n > 0 ? errors.items[errors.n - 1] : strerror(ENODEV));
                return r;
        }
        if (r == -ENOENT) { /* "FILE: cannot open: No such file or directory", the one error */
                fprintf(stderr, "lowlatd: %s (write it, see lowlatd.conf(5), or name another file with --config)\n",
                        errors.n > 0 ? errors.items[errors.n - 1] : args->config_path);
                return r;
        }
        for (size_t i = 0; i < errors.n; i++)
                fprintf(stderr, "%s\n", errors.items[i]);
        if (r < 0 && r != -ENOMEM && errors.n > 0)
                fprintf(stderr, "lowlatd: %s: configuration is invalid (%zu error%s)\n", args->config_path,
                        errors.n, errors.n == 1 ? "" : "s");
        if (r >= 0) {
                const ErrorList *w = &(*ret)->config->warnings;
                /* --check-config and --once speak to a person on stderr; the daemon to its log. */
                for (size_t i = 0; i < w->n; i++)
                        if (args->check_config || args->once)
                                fprintf(stderr, "%s\n", w->items[i]);
                        else
                                log_warning("%s", w->items[i]);
        }
        return r;
}

int main(int argc, char *argv[]) {
        _cleanup_(manager_freep) Manager *m = NULL;
        _cleanup_(bus_freep) Bus *bus = NULL; /* freed first: it reads the manager */
        _cleanup_(host_freep) Host *host = NULL;
        _cleanup_(posture_freep) Posture *posture = NULL;
        Arguments args;
        int r;

        r = parse_arguments(argc, argv, &args);
        if (r <= 0)
                return r < 0 ? EXIT_INVALID : EXIT_SUCCESS;

        log_open(args.once || args.check_config ? LOG_TARGET_STDERR : LOG_TARGET_AUTO);
        if (args.once)
                log_set_max_level(LOG_ERR); /* the report says it all; keep real errors */

        r = host_open(args.root, &host);
        if (r < 0) {
                fprintf(stderr, "lowlatd: cannot open root directory %s: %s\n", args.root, strerror(-r));
                return EXIT_RUNTIME;
        }

        r = load_posture(&args, host, &posture);
        if (r == -ENODEV)
                return EXIT_RUNTIME;
        if (r < 0)
                return EXIT_INVALID;
        if (args.check_config) {
                size_t n = posture->config->warnings.n;

                if (n > 0 && args.strict) {
                        fprintf(stderr, "lowlatd: %s: configuration is refused by --strict (%zu warning%s)\n",
                                args.config_path, n, n == 1 ? "" : "s");
                        return EXIT_INVALID;
                }
                if (n > 0)
                        printf("%s: configuration is valid, with %zu warning%s\n", args.config_path, n,
                               n == 1 ? "" : "s");
                else
                        printf("%s: configuration is valid\n", args.config_path);
                /* Which file each profile was read from: the administrator's copy or the
                 * shipped one. */
                for (size_t i = 0; i < posture->config->n_profiles && i < posture->config->n_profile_files; i++)
                        printf("  profile %s: %s\n", posture->config->profiles[i], posture->config->files[i]);
                return EXIT_SUCCESS;
        }

        raise_fd_limit();
        r = manager_new(args.config_path, TAKE_PTR(host), TAKE_PTR(posture), args.observe, &m);
        if (r < 0) {
                log_error_errno(r, "Cannot set up");
                return EXIT_RUNTIME;
        }
        r = manager_apply(m);
        if (r < 0)
                return EXIT_RUNTIME;
        if (args.once)
                return manager_print_report(m, stdout, args.report) > 0 ? EXIT_DRIFT : EXIT_SUCCESS;

        r = manager_start(m);
        if (r < 0)
                return EXIT_RUNTIME;
        r = bus_new(m, &bus);
        if (r < 0) {
                log_error_errno(r, "Cannot set up the bus object");
                return EXIT_RUNTIME;
        }
        manager_ready(m);
        r = manager_run(m);
        if (r < 0) {
                log_error_errno(r, "Event loop failed");
                return EXIT_RUNTIME;
        }
        return EXIT_SUCCESS;
}
