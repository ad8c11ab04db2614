/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lowlatctl measure: wake-up latency on the isolated CPUs with the best tool installed
 * (rtla timerlat where the kernel has the tracer, else cyclictest, else oslat), run here
 * in the caller's session rather than in lowlatd's sandbox; the noise counted on those
 * CPUs meanwhile (Noise() before and after); the result handed to lowlatd
 * (RecordMeasurement) so that status and the bus show it (last-measurement.c reads it
 * back). */
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bus-names.h"
#include "basic/cpuset.h"
#include "noise-view.h"
#include "client.h"
#include "basic/macro.h"
#include "measure.h"
#include "measure-placement.h"
#include "measurement-signature.h"
#include "basic/util.h"

/* ---- Which tool ----------------------------------------------------------------------- */

/* The full path of program in $PATH, or NULL. */
static char *find_program(const char *program) {
        const char *path = getenv("PATH");

        if (isempty(path))
                path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
        for (const char *p = path; *p;) {
                size_t len = strcspn(p, ":");
                _cleanup_free_ char *candidate = strdup_printf("%.*s/%s", (int) len, p, program);
                struct stat st;

                if (candidate && len > 0 && stat(candidate, &st) == 0 && S_ISREG(st.st_mode) &&
                    access(candidate, X_OK) == 0)
                        return TAKE_PTR(candidate);
                p += len;
                if (*p == ':')
                        p++;
        }
        return NULL;
}

/* rtla fails outright on a kernel without the timerlat tracer (Debian 12's 6.1): ask the
 * kernel first. tracefs where it is mounted now, or under debugfs on older setups. */
static bool kernel_has_timerlat(void) {
        static const char *const files[] = {
                "/sys/kernel/tracing/available_tracers",
                "/sys/kernel/debug/tracing/available_tracers",
        };

        for (size_t i = 0; i < ELEMENTSOF(files); i++) {
                _cleanup_close_ int fd = open(files[i], O_RDONLY | O_CLOEXEC);
                char buf[4096];
                ssize_t n;

                if (fd < 0)
                        continue;
                n = pread_string(fd, buf, sizeof(buf));
                if (n > 0 && word_list_contains(buf, "timerlat"))
                        return true;
        }
        return false;
}

/* Returns the tool and its path, or prints why none and returns -ENOENT. */
static int choose_tool(const char *wanted, MeasureTool *ret, char **ret_path) {
        MeasureTool first = 0, last = _MEASURE_TOOL_MAX - 1;

        if (wanted) {
                MeasureTool t = measure_tool_from_string(wanted);
                if (t < 0) {
                        fprintf(stderr, "lowlatctl: unknown tool '%s' (timerlat, cyclictest or oslat)\n", wanted);
                        return -EINVAL;
                }
                first = last = t;
        }
        for (MeasureTool t = first; t <= last; t++) {
                _cleanup_free_ char *path = find_program(measure_tool_program(t));

                if (!path) {
                        if (wanted)
                                fprintf(stderr, "lowlatctl: %s is not installed (Debian package %s)\n",
                                        measure_tool_program(t), t == MEASURE_TOOL_TIMERLAT ? "rtla" : "rt-tests");
                        continue;
                }
                if (t == MEASURE_TOOL_TIMERLAT && !kernel_has_timerlat()) {
                        if (wanted)
                                fprintf(stderr, "lowlatctl: this kernel has no timerlat tracer (not in "
                                                "/sys/kernel/tracing/available_tracers): rtla cannot measure here\n");
                        continue;
                }
                *ret = t;
                *ret_path = TAKE_PTR(path);
                return 0;
        }
        if (!wanted)
                fprintf(stderr, "lowlatctl: no latency tool: install rtla (on a kernel with the timerlat tracer) "
                                "or rt-tests (cyclictest, oslat)\n");
        return -ENOENT;
}

/* ---- Running it -------------------------------------------------------------------------- */

static char *read_fd_all(int fd) {
        _cleanup_free_ char *buf = NULL;
        size_t size = 0, allocated = 0;

        if (lseek(fd, 0, SEEK_SET) < 0)
                return NULL;
        for (;;) {
                ssize_t n;

                if (allocated - size < 4096) {
                        char *more;
                        if (allocated > 64U * 1024 * 1024) /* no report is that big */
                                return NULL;
                        more = realloc(buf, allocated + 65536);
                        if (!more)
                                return NULL;
                        buf = more;
                        allocated += 65536;
                }
                n = read(fd, buf + size, allocated - size - 1);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return NULL;
                if (n == 0)
                        break;
                size += (size_t) n;
        }
        buf[size] = '\0';
        return TAKE_PTR(buf);
}

static int tmpfile_fd(char **ret_path) {
        const char *dir = getenv("TMPDIR");
        _cleanup_free_ char *path = strdup_printf("%s/lowlatctl-measure-XXXXXX", isempty(dir) ? "/tmp" : dir);
        int fd;

        if (!path)
                return -ENOMEM;
        fd = mkostemp(path, O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        if (ret_path)
                *ret_path = TAKE_PTR(path);
        else
                (void) unlink(path);
        return fd;
}

/* The tools pin each thread as they start it; a thread seen in its first moments may not
 * be pinned yet: the first 200 ms of the run, and a thread's first 5 looks, do not count. */
#define PLACEMENT_GRACE_USEC (200 * USEC_PER_MSEC)
#define PLACEMENT_PERIOD_USEC (10 * USEC_PER_MSEC)
#define PLACEMENT_SKIP_LOOKS 5U

/* Waits for pid, meanwhile noting where its threads run (placement NULL: just waits).
 * Returns its wait status, or -1 after printing why. */
static int wait_sampling(pid_t pid, MeasurePlacement *placement) {
        uint64_t start = now_usec(CLOCK_MONOTONIC);
        int status;

        for (;;) {
                pid_t r = waitpid(pid, &status, placement ? WNOHANG : 0);
                struct timespec period = { 0, (long) (PLACEMENT_PERIOD_USEC * 1000) };

                if (r == pid)
                        return status;
                if (r < 0 && errno != EINTR) {
                        fprintf(stderr, "lowlatctl: waitpid: %m\n");
                        return -1;
                }
                if (r == 0 && now_usec(CLOCK_MONOTONIC) - start >= PLACEMENT_GRACE_USEC)
                        (void) measure_placement_sample(placement, NULL, pid);
                if (r == 0)
                        (void) nanosleep(&period, NULL);
        }
}

/* Runs argv (argv[0] found at path) with stdout and stderr into files; the report is
 * stdout, or cyclictest's histogram file. Returns the report, or NULL after printing why. */
static char *run_tool(MeasureTool tool, const char *path, char **argv, int histfd, MeasurePlacement *placement) {
        static const int stop_signals[] = { SIGINT, SIGTERM, SIGHUP };
        struct sigaction ignore = { .sa_handler = SIG_IGN }, old[ELEMENTSOF(stop_signals)];
        _cleanup_close_ int out = -EBADF, err = -EBADF;
        _cleanup_free_ char *errors = NULL;
        int status;
        pid_t pid;

        out = tmpfile_fd(NULL);
        err = tmpfile_fd(NULL);
        if (out < 0 || err < 0) {
                fprintf(stderr, "lowlatctl: cannot create a temporary file: %s\n", strerror(-MIN(out, err)));
                return NULL;
        }
        /* Ctrl-C stops the tool (it is in the terminal's process group too); lowlatctl
         * itself ignores it meanwhile so that it can remove its temporary files and say
         * what happened. The child gets the default back before exec. */
        for (size_t i = 0; i < ELEMENTSOF(stop_signals); i++)
                (void) sigaction(stop_signals[i], &ignore, &old[i]);
        pid = fork();
        if (pid < 0) {
                fprintf(stderr, "lowlatctl: fork: %m\n");
                for (size_t i = 0; i < ELEMENTSOF(stop_signals); i++)
                        (void) sigaction(stop_signals[i], &old[i], NULL);
                return NULL;
        }
        if (pid == 0) {
                for (size_t i = 0; i < ELEMENTSOF(stop_signals); i++)
                        (void) signal(stop_signals[i], SIG_DFL);
                if (dup2(out, STDOUT_FILENO) < 0 || dup2(err, STDERR_FILENO) < 0)
                        _exit(127);
                execv(path, argv);
                dprintf(STDERR_FILENO, "cannot run %s: %m\n", path);
                _exit(127);
        }
        status = wait_sampling(pid, placement);
        if (placement && measure_placement_finish(placement) < 0)
                status = -1;
        for (size_t i = 0; i < ELEMENTSOF(stop_signals); i++)
                (void) sigaction(stop_signals[i], &old[i], NULL);
        if (status == -1)
                return NULL;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                errors = read_fd_all(err);
                if (WIFEXITED(status))
                        fprintf(stderr, "lowlatctl: %s failed with exit status %d", measure_tool_program(tool),
                                WEXITSTATUS(status));
                else
                        fprintf(stderr, "lowlatctl: %s was killed by signal %d", measure_tool_program(tool),
                                WTERMSIG(status));
                fprintf(stderr, "%s%s", isempty(errors) ? "\n" : ":\n", errors ?: "");
                return NULL;
        }
        return read_fd_all(tool == MEASURE_TOOL_CYCLICTEST ? histfd : out);
}

/* ---- The report ------------------------------------------------------------------------- */

/* "LOC 2000, RES 3": the noise of cpu in the view, most first; nothing when none. */
static void print_noise_of(FILE *f, const NoiseView *v, uint32_t cpu, size_t max) {
        size_t shown = 0;

        for (size_t i = 0; v && i < v->n && shown < max; i++) {
                const NoiseViewRow *r = &v->rows[i];

                if (r->cpu != cpu || r->delta == 0)
                        continue;
                fputs(shown++ ? ", " : "", f);
                print_escaped(f, streq(r->kind, "irq") ? "IRQ " : "");
                print_escaped(f, r->source);
                fprintf(f, " %" PRIu64, r->delta);
        }
}

/* What ran: the tool's own duration (Ctrl-C stops cyclictest early, and it still reports;
 * oslat spends a second warming up before it measures), and the wall clock beside it when
 * they differ by more than a tenth of a second. */
static void measure_print_header(FILE *f, const MeasureResult *res, const char *cpus, uint64_t wall_usec) {
        uint64_t measured = res->measured_usec ?: wall_usec;

        fprintf(f, "Wake-up latency on CPU%s %s over %.1f s, measured by %s (us)",
                strchr(cpus, ',') || strchr(cpus, '-') ? "s" : "", cpus, (double) measured / (double) USEC_PER_SEC,
                measure_tool_to_string(res->tool));
        if (res->measured_usec && (wall_usec > measured ? wall_usec - measured : measured - wall_usec) >
                                          USEC_PER_SEC / 10)
                fprintf(f, ";\nthe run took %.1f s%s", (double) wall_usec / (double) USEC_PER_SEC,
                        res->tool == MEASURE_TOOL_OSLAT ? " (oslat warms the CPUs up for 1 s before it measures)"
                                                        : " (the tool's start and end)");
        fputs(":\n\n", f);
}

/* Where each measuring thread was seen; NULL: not watched (timerlat's threads are the
 * kernel's own, bound to their CPUs). */
static void measure_print_placement(FILE *f, const MeasurePlacement *placement) {
        bool ok;

        if (!placement) {
                fputs("\nThreads: the kernel's timerlat threads, one bound to each CPU.\n", f);
                return;
        }
        ok = measure_placement_ok(placement);
        fprintf(f, "\nThreads (where each was seen in %u looks at /proc during the run): %s\n", placement->samples,
                ok ? "each on its own CPU" : "NOT all on the CPUs they measure");
        for (size_t i = 0; i < placement->n; i++) {
                const ThreadPlacement *t = &placement->threads[i];
                _cleanup_free_ char *ran = cpuset_format_list(&t->ran_on);

                fprintf(f, "  CPU %" PRIu32 ": thread ran on %s%s\n", t->cpu,
                        cpuset_is_empty(&t->ran_on) ? "(never seen)" : ran ?: "?",
                        cpuset_count(&t->ran_on) == 1 && cpuset_contains(&t->ran_on, t->cpu) ? "" : "  <- not its CPU");
        }
        if (!ok)
                fputs("The figures above are not those of the CPUs they name.\n", f);
}

/* noise NULL: not counted, because there was no bus (bus_reached false) or Noise() did not
 * answer. */
static void measure_print(FILE *f, const MeasureResult *res, const NoiseView *noise, bool bus_reached,
                          const char *cpus, uint64_t wall_usec, const MeasurePlacement *placement) {
        measure_print_header(f, res, cpus, wall_usec);
        fprintf(f, "%5s %10s %7s %7s %7s %7s  %s\n", "CPU", "SAMPLES", "MIN", "AVG", "P99", "MAX",
                noise ? "NOISE DURING THE RUN" : "");
        for (size_t i = 0; i < res->n; i++) {
                const LatencyStats *s = &res->cpus[i];
                bool high = latency_max_is_high(s);

                fprintf(f, "%5" PRIu32 " %10" PRIu64 " ", s->cpu, s->samples);
                print_usec(f, s->min_ns, 7);
                fputc(' ', f);
                print_usec(f, s->avg_ns, 7);
                fputc(' ', f);
                {
                        char p99[48];
                        /* Beyond the histogram: the p99 is at least its end. */
                        fprintf(f, "%7s ", format_usec(p99, sizeof(p99), s->p99_over ? ">" : "", s->p99_ns));
                }
                print_usec(f, s->max_ns, 7);
                fputs(high ? " !" : "  ", f);
                /* The noise is what explains a high max; shown for every CPU that had any. */
                if (noise) {
                        fputc(' ', f);
                        print_noise_of(f, noise, s->cpu, 5);
                }
                fputc('\n', f);
        }
        for (size_t i = 0; i < res->n; i++) {
                fprintf(f, "\nCPU %" PRIu32 ":\n", res->cpus[i].cpu);
                latency_print_histogram(f, &res->cpus[i], 12);
        }
        measure_print_placement(f, placement);
        if (!noise)
                fputs(bus_reached ? "\n(noise not counted: lowlatd's Noise() did not answer)\n"
                                  : "\n(noise not counted: lowlatd is not reachable on the system bus)\n",
                      f);
        fputs("\n! a max above twice the p99: a spike; the noise beside it is what reached the CPU meanwhile.\n",
              f);
}

static int record_measurement(sd_bus *bus, const MeasureResult *res, const NoiseView *noise, uint64_t realtime_usec,
                              uint64_t duration_usec) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        int r;

        r = sd_bus_message_new_method_call(bus, &m, BUS_NAME, BUS_PATH, BUS_INTERFACE, "RecordMeasurement");
        if (r >= 0)
                r = sd_bus_message_append(m, "stt", measure_tool_to_string(res->tool), realtime_usec, duration_usec);
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'a', MEASUREMENT_CPU_SIGNATURE);
        for (size_t i = 0; r >= 0 && i < res->n; i++) {
                const LatencyStats *s = &res->cpus[i];
                r = sd_bus_message_append(m, MEASUREMENT_CPU_SIGNATURE, s->cpu, s->samples, s->min_ns, s->avg_ns,
                                          s->p99_ns, s->max_ns, s->overflows, (int) s->p99_over);
        }
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'a', MEASUREMENT_NOISE_SIGNATURE);
        for (size_t i = 0; r >= 0 && noise && i < noise->n; i++) {
                const NoiseViewRow *row = &noise->rows[i];
                bool measured = false;

                for (size_t k = 0; k < res->n; k++)
                        measured = measured || res->cpus[k].cpu == row->cpu;
                if (row->delta > 0 && measured)
                        r = sd_bus_message_append(m, MEASUREMENT_NOISE_SIGNATURE, row->cpu, row->kind, row->source,
                                                  row->description, row->delta);
        }
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        if (r < 0) {
                fprintf(stderr, "lowlatctl: cannot build RecordMeasurement: %s\n", strerror(-r));
                return r;
        }
        r = sd_bus_call(bus, m, 0, &error, &reply);
        if (r < 0) {
                ctl_log_call_failed(bus, "RecordMeasurement", &error, r);
                return r;
        }
        return 0;
}

/* The histograms, after the summary they belong to (realtime_usec ties them to it), for
 * monitoring. A lowlatd without RecordMeasurementHistogram() keeps the summary only,
 * which is all it can show: nothing to say. */
static int record_measurement_histogram(sd_bus *bus, const MeasureResult *res, uint64_t realtime_usec) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        int r;

        if (ctl_daemon_offers(bus, BUS_FEATURE_MEASUREMENT_HISTOGRAM) <= 0)
                return 0;
        r = sd_bus_message_new_method_call(bus, &m, BUS_NAME, BUS_PATH, BUS_INTERFACE, "RecordMeasurementHistogram");
        if (r >= 0)
                r = sd_bus_message_append(m, "t", realtime_usec);
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'a', MEASUREMENT_HISTOGRAM_CPU_SIGNATURE);
        for (size_t i = 0; r >= 0 && i < res->n; i++) {
                MeasureBuckets b;

                latency_stats_buckets(&res->cpus[i], &b);
                if (b.n == 0)
                        continue;
                r = sd_bus_message_open_container(m, 'r', "uatat");
                if (r >= 0)
                        r = sd_bus_message_append(m, "u", res->cpus[i].cpu);
                if (r >= 0)
                        r = sd_bus_message_append_array(m, 't', b.bounds_ns, b.n * sizeof(uint64_t));
                if (r >= 0)
                        r = sd_bus_message_append_array(m, 't', b.counts, b.n * sizeof(uint64_t));
                if (r >= 0)
                        r = sd_bus_message_close_container(m);
        }
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        if (r < 0) {
                fprintf(stderr, "lowlatctl: cannot build RecordMeasurementHistogram: %s\n", strerror(-r));
                return r;
        }
        r = sd_bus_call(bus, m, 0, &error, &reply);
        if (r < 0)
                ctl_log_call_failed(bus, "RecordMeasurementHistogram", &error, r);
        return r;
}

static int isolated_cpus_get(sd_bus *bus, char **ret) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        int r;

        r = sd_bus_get_property_string(bus, BUS_NAME, BUS_PATH, BUS_INTERFACE, "IsolatedCPUs", &error, ret);
        if (r < 0)
                ctl_log_read_failed(bus, "IsolatedCPUs", &error, r);
        return r;
}

int measure_parse_duration(const char *value, MeasureArguments *args) {
        uint64_t usec;
        int r;

        r = parse_duration_option("--duration", value, USEC_PER_SEC, 24 * 3600 * USEC_PER_SEC, &usec);
        if (r < 0)
                return r;
        /* Every tool takes whole seconds. */
        if (usec % USEC_PER_SEC != 0) {
                fprintf(stderr, "lowlatctl: --duration: '%s' is not a whole number of seconds (the tools measure "
                        "whole seconds)\n", value);
                return -EINVAL;
        }
        args->duration_sec = (unsigned) (usec / USEC_PER_SEC);
        return 1;
}

/* ---- Where the threads may run ----------------------------------------------------------- */

/* Why the bus could not be reached, said only where the bus was needed: a refusal of
 * measure's own (an offline CPU, no tool, not root) comes alone. */
static void measure_say_bus_failure(const MeasureArguments *args) {
        _cleanup_free_ char *shown = args->bus_failure ? text_escape_lines(args->bus_failure) : NULL;

        if (shown)
                fprintf(stderr, "lowlatctl: %s\n", shown);
}

/* What to measure: --cpus, or the isolated CPUs lowlatd names; every one of them online.
 * 0, or the exit status after printing why. */
static int measure_resolve_cpus(sd_bus *bus, const MeasureArguments *args, CPUSet *cpus) {
        _cleanup_free_ char *isolated = NULL, *online_list = NULL, *offline_list = NULL;
        _cleanup_cpuset_ CPUSet online = {}, offline = {};
        int r;

        if (args->cpus) {
                r = cpuset_parse_list(args->cpus, cpus);
                if (r < 0 || cpuset_is_empty(cpus)) {
                        fprintf(stderr, "lowlatctl: --cpus: '%s' is not a CPU list (e.g. 2-3,6)\n", args->cpus);
                        return EXIT_USAGE;
                }
        } else {
                if (!bus) {
                        measure_say_bus_failure(args);
                        fprintf(stderr, "lowlatctl: lowlatd is not reachable to say which CPUs are isolated; "
                                        "give --cpus\n");
                        return EXIT_UNKNOWN;
                }
                r = isolated_cpus_get(bus, &isolated);
                if (r < 0)
                        return EXIT_UNKNOWN;
                if (isempty(isolated) || cpuset_parse_list(isolated, cpus) < 0 || cpuset_is_empty(cpus)) {
                        fprintf(stderr, "lowlatctl: this host has no isolated CPUs, so nothing to measure; "
                                        "give --cpus to measure others\n");
                        return EXIT_NO_CPUS;
                }
        }
        /* The tools take an offline CPU in different ways (oslat through libnuma's warning,
         * cyclictest by measuring elsewhere): none of them measures it. */
        r = measure_cpus_online(NULL, &online);
        if (r < 0) {
                fprintf(stderr, "lowlatctl: cannot read the online CPUs (/sys/devices/system/cpu/online): %s\n",
                        strerror(-r));
                return EXIT_UNKNOWN;
        }
        if (cpuset_is_subset(cpus, &online))
                return 0;
        if (cpuset_copy(&offline, cpus) < 0)
                return -ENOMEM;
        cpuset_subtract(&offline, &online);
        online_list = cpuset_format_list(&online);
        offline_list = cpuset_format_list(&offline);
        if (!online_list || !offline_list)
                return -ENOMEM;
        fprintf(stderr, "lowlatctl: %s: CPU%s %s %s not online (online: %s)\n",
                args->cpus ? "--cpus" : "the isolated CPUs", cpuset_count(&offline) > 1 ? "s" : "", offline_list,
                cpuset_count(&offline) > 1 ? "are" : "is", online_list);
        return args->cpus ? EXIT_USAGE : EXIT_NO_CPUS;
}

/* The command line that would measure list: the caller's options again. */
static char *measure_command(const MeasureArguments *args, const char *list) {
        return strdup_printf("lowlatctl measure --cpus %s --duration %us%s%s%s", list, args->duration_sec,
                             args->tool ? " --tool " : "", args->tool ?: "", args->json ? " --json" : "");
}

/* A slice of its own for a measurement that cannot run where it was started: under the
 * root slice, so neither system.slice nor user.slice confines it, whichever [cpus] slices
 * lowlatd keeps on the housekeeping CPUs ("lowlatd-measure" is lowlatd.slice's child). */
#define MEASURE_SLICE "lowlatd-measure.slice"

/* Whether the threads a tool starts from here can run on every CPU of cpus: the kernel
 * refuses an affinity outside the caller's own and outside its cgroup's cpuset, and the
 * tool then measures wherever it may run. 0, or the exit status after printing why and
 * what to run instead. */
static int measure_check_confinement(const MeasureArguments *args, const CPUSet *cpus, const char *list) {
        _cleanup_cpuset_ CPUSet allowed = {}, cgroup_cpus = {};
        _cleanup_free_ char *cgroup = NULL, *allowed_list = NULL, *command = NULL;
        cpu_set_t mask;
        int r;

        command = measure_command(args, list);
        if (!command)
                return -ENOMEM;
        r = measure_cgroup_cpus(NULL, &cgroup_cpus, &cgroup);
        if (r < 0 && r != -ENOENT) {
                fprintf(stderr, "lowlatctl: cannot read this process's cgroup CPUs: %s\n", strerror(-r));
                return EXIT_UNKNOWN;
        }
        if (r >= 0 && !cpuset_is_subset(cpus, &cgroup_cpus)) {
                _cleanup_free_ char *partition = NULL;

                allowed_list = cpuset_format_list(&cgroup_cpus);
                /* lowlatd's run-time partition holds those CPUs: every slice but it is
                 * kept off them, so the scope goes inside it. */
                if (measure_partition_slice(NULL, cpus, &partition) > 0) {
                        fprintf(stderr,
                                "lowlatctl: cannot measure CPU%s %s from here: this process's cgroup %s allows CPUs %s "
                                "only (its cpuset.cpus.effective), so the tool's threads would run and be measured "
                                "there. Run it in a scope of %s, the cpuset partition that holds them, as root:\n"
                                "  systemd-run --scope --slice=%s %s\n",
                                cpuset_count(cpus) > 1 ? "s" : "", list, cgroup, allowed_list ?: "?", partition,
                                partition, command);
                        return EXIT_NOT_ON_CPUS;
                }
                fprintf(stderr, "lowlatctl: cannot measure CPU%s %s from here: this process's cgroup %s allows "
                                "CPUs %s only (its cpuset.cpus.effective), so the tool's threads would run and be "
                                "measured there. Run it in a scope of a slice that lowlatd does not confine, as "
                                "root:\n"
                                "  systemd-run --scope --slice=" MEASURE_SLICE " -p AllowedCPUs=%s %s\n",
                        cpuset_count(cpus) > 1 ? "s" : "", list, cgroup, allowed_list ?: "?", list, command);
                return EXIT_NOT_ON_CPUS;
        }
        CPU_ZERO(&mask);
        if (sched_getaffinity(0, sizeof(mask), &mask) < 0) {
                fprintf(stderr, "lowlatctl: sched_getaffinity: %m\n");
                return EXIT_UNKNOWN;
        }
        for (unsigned cpu = 0; cpu < CPU_SETSIZE; cpu++)
                if (CPU_ISSET(cpu, &mask) && cpuset_add(&allowed, cpu) < 0)
                        return -ENOMEM;
        if (cpuset_is_subset(cpus, &allowed))
                return 0;
        allowed_list = cpuset_format_list(&allowed);
        fprintf(stderr, "lowlatctl: cannot measure CPU%s %s from here: this process may run on CPUs %s only (its "
                        "affinity), so the tool's threads would run and be measured there. Run it with an "
                        "affinity that allows them:\n  taskset -c %s %s\n",
                cpuset_count(cpus) > 1 ? "s" : "", list, allowed_list ?: "?", list, command);
        return EXIT_NOT_ON_CPUS;
}

/* ---- JSON ------------------------------------------------------------------------------ */

/* "buckets": what lowlatctl metrics shows of this run (the samples below each bound). */
static void measure_print_json_buckets(FILE *f, const LatencyStats *s) {
        MeasureBuckets b;

        latency_stats_buckets(s, &b);
        fputs(",\"buckets\":[", f);
        for (size_t k = 0; k < b.n; k++)
                fprintf(f, "%s{\"le_ns\":%" PRIu64 ",\"count\":%" PRIu64 "}", k ? "," : "", b.bounds_ns[k],
                        b.counts[k]);
        fputs("]", f);
}

static void measure_print_json(FILE *f, const MeasureResult *res, const char *cpus, uint64_t wall_usec,
                               const MeasurePlacement *placement) {
        fputs("{", f);
        json_print_member(f, "tool", measure_tool_to_string(res->tool), true);
        json_print_member(f, "cpus", cpus, false);
        fprintf(f, ",\"duration_usec\":%" PRIu64 ",\"wall_clock_usec\":%" PRIu64,
                res->measured_usec ?: wall_usec, wall_usec);
        fprintf(f, ",\"threads_watched\":%s,\"threads_on_their_cpus\":%s", placement ? "true" : "false",
                !placement || measure_placement_ok(placement) ? "true" : "false");
        fputs(",\"per_cpu\":[", f);
        for (size_t i = 0; i < res->n; i++) {
                const LatencyStats *s = &res->cpus[i];

                fprintf(f, "%s{\"cpu\":%" PRIu32 ",\"samples\":%" PRIu64 ",\"min_ns\":%" PRIu64 ",\"avg_ns\":%" PRIu64
                           ",\"p99_ns\":%" PRIu64 ",\"p99_beyond_histogram\":%s,\"max_ns\":%" PRIu64
                           ",\"overflows\":%" PRIu64,
                        i ? "," : "", s->cpu, s->samples, s->min_ns, s->avg_ns, s->p99_ns,
                        s->p99_over ? "true" : "false", s->max_ns, s->overflows);
                measure_print_json_buckets(f, s);
                fputs(",\"ran_on\":", f);
                if (!placement) {
                        /* timerlat: the kernel's per-CPU thread, bound to it. */
                        fprintf(f, "[%" PRIu32 "]}", s->cpu);
                        continue;
                }
                fputs("[", f);
                for (size_t k = 0; k < placement->n; k++) {
                        bool first = true;

                        if (placement->threads[k].cpu != s->cpu)
                                continue;
                        CPUSET_FOREACH(cpu, &placement->threads[k].ran_on) {
                                fprintf(f, "%s%u", first ? "" : ",", (unsigned) cpu);
                                first = false;
                        }
                }
                fputs("]}", f);
        }
        fputs("]}\n", f);
}

/* ---- The verb ---------------------------------------------------------------------------- */

static int measure_parse_report(MeasureTool tool, const char *report, const CPUSet *cpus, MeasureResult *res) {
        int r;

        switch (tool) {
        case MEASURE_TOOL_CYCLICTEST:
                r = cyclictest_parse(report, cpus, res);
                break;
        case MEASURE_TOOL_OSLAT:
                r = oslat_parse(report, res);
                break;
        default:
                r = timerlat_parse(report, res);
        }
        if (r < 0)
                fprintf(stderr, "lowlatctl: cannot read %s's report (%s):\n%s\n", measure_tool_program(tool),
                        strerror(-r), report);
        return r;
}

/* The tools run their threads at real-time priority (MEASURE_PRIORITY) and lock their
 * memory: as root, or under an RLIMIT_RTPRIO that allows it. Checked before the run, so
 * that a user hears why in lowlatctl's words rather than the tool's after a start. */
static int measure_check_privileges(const char *tool_path) {
        struct rlimit rt;

        if (geteuid() == 0)
                return 0;
        if (getrlimit(RLIMIT_RTPRIO, &rt) == 0 && (rt.rlim_cur == RLIM_INFINITY || rt.rlim_cur >= MEASURE_PRIORITY))
                return 0;
        fprintf(stderr,
                "lowlatctl: measure needs root: %s runs its threads at real-time priority %u, which this user may "
                "not set (RLIMIT_RTPRIO %llu); run it as root (sudo lowlatctl measure ...)\n",
                tool_path, MEASURE_PRIORITY, getrlimit(RLIMIT_RTPRIO, &rt) == 0 ? (unsigned long long) rt.rlim_cur : 0ULL);
        return EXIT_NOT_ON_CPUS;
}

int verb_measure(sd_bus *bus, const MeasureArguments *args) {
        _cleanup_(noise_sample_done) NoiseSample before = {}, after = {};
        _cleanup_(noise_view_done) NoiseView noise = {};
        _cleanup_(measure_result_done) MeasureResult res = {};
        _cleanup_(measure_placement_done) MeasurePlacement placement = {};
        _cleanup_cpuset_ CPUSet cpus = {};
        _cleanup_free_ char *tool_path = NULL, *histfile = NULL, *report = NULL, *list = NULL;
        _cleanup_close_ int histfd = -EBADF;
        MeasureTool tool;
        char **argv;
        uint64_t start_realtime, start, end;
        bool have_noise = false, watched;
        int r;

        /* What to measure first, then with what: "nothing to measure" is the answer a
         * host without isolated CPUs needs, whatever is installed. */
        r = measure_resolve_cpus(bus, args, &cpus);
        if (r != 0)
                return r;
        r = choose_tool(args->tool, &tool, &tool_path);
        if (r == -EINVAL)
                return EXIT_USAGE;
        if (r < 0)
                return EXIT_NO_TOOL;

        r = measure_check_privileges(tool_path);
        if (r != 0)
                return r;
        list = cpuset_format_list(&cpus);
        if (!list || measure_placement_init(&placement, &cpus) < 0)
                return -ENOMEM;
        placement.skip_looks = PLACEMENT_SKIP_LOOKS;
        /* timerlat measures with the kernel's own per-CPU threads, which no affinity or
         * cgroup of ours confines; cyclictest's and oslat's are ours. */
        watched = tool != MEASURE_TOOL_TIMERLAT;
        if (watched) {
                r = measure_check_confinement(args, &cpus, list);
                if (r != 0)
                        return r;
        }
        if (tool == MEASURE_TOOL_CYCLICTEST) {
                histfd = tmpfile_fd(&histfile);
                if (histfd < 0) {
                        fprintf(stderr, "lowlatctl: cannot create a temporary file: %s\n", strerror(-histfd));
                        return EXIT_UNKNOWN;
                }
        }
        argv = measure_tool_argv(tool, &cpus, args->duration_sec, histfile);
        if (!argv)
                return -ENOMEM;

        if (bus)
                have_noise = ctl_read_noise(bus, &before) >= 0;
        fprintf(stderr, "Measuring wake-up latency on CPU%s %s for %u s with %s...\n",
                cpuset_count(&cpus) > 1 ? "s" : "", list, args->duration_sec, tool_path);
        start_realtime = now_usec(CLOCK_REALTIME);
        start = now_usec(CLOCK_MONOTONIC);
        report = run_tool(tool, tool_path, argv, histfd, watched ? &placement : NULL);
        end = now_usec(CLOCK_MONOTONIC);
        strv_free_all(argv);
        if (histfile)
                (void) unlink(histfile);
        if (!report)
                return EXIT_UNKNOWN;
        if (have_noise)
                have_noise = ctl_read_noise(bus, &after) >= 0 && noise_view_compute(&before, NULL, &after, &noise) >= 0;
        if (measure_parse_report(tool, report, &cpus, &res) < 0)
                return EXIT_UNKNOWN;

        if (args->json)
                measure_print_json(stdout, &res, list, end - start, watched ? &placement : NULL);
        else
                measure_print(stdout, &res, have_noise ? &noise : NULL, bus != NULL, list, end - start,
                              watched ? &placement : NULL);
        if (watched && !measure_placement_ok(&placement)) {
                fprintf(stderr, "lowlatctl: a measuring thread ran on a CPU other than the one it measures; "
                                "the result is not recorded\n");
                return finish_output(EXIT_NOT_ON_CPUS);
        }
        if (!bus)
                measure_say_bus_failure(args);
        if (!bus || record_measurement(bus, &res, have_noise ? &noise : NULL, start_realtime,
                                       res.measured_usec ?: end - start) < 0)
                fprintf(stderr, "lowlatctl: the result was not recorded by lowlatd (status will not show it)\n");
        else if (record_measurement_histogram(bus, &res, start_realtime) < 0)
                fprintf(stderr, "lowlatctl: the histogram was not recorded by lowlatd (metrics will not show it)\n");
        return finish_output(EXIT_OK);
}
