/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fakeirqfs: a FUSE file system that plays /proc/irq for lowlatd's tests, with the
 * kernel's parsers, error codes and proc-entry lifetime rules (plain files cannot).
 * This file is its manual, command line and main(); fakeirq.h says where the rest is.
 *
 * Usage:
 *   fakeirqfs MOUNTPOINT [OPTIONS] [-d] [-o FUSE_OPTION[,...]]
 *
 *   --cpus=N              nr_cpu_ids: possible CPUs 0..N-1 (1..8192; default 4); the
 *                         width of every mask printed and the bound of every parse
 *   --online=LIST         online CPUs (default: all possible)
 *   --irqs=LIST           IRQ directories present at start (default 0-15)
 *   --default-affinity=LIST  initial default_smp_affinity (default: all possible),
 *                         like the irqaffinity= boot parameter
 *   --affinity=LIST       initial smp_affinity of every IRQ (default: the default
 *                         affinity)
 *   --managed=LIST        IRQs whose affinity the kernel manages (writes refused)
 *   --managed-abi=legacy|modern
 *                         legacy (kernels < 6.12, default): managed IRQs keep mode
 *                         0644 on smp_affinity{,_list} and writes fail with EIO;
 *                         modern (>= 6.12, commit eb29369fa543 and the umode change
 *                         beside it): the files are 0444 and writes fail with EPERM
 *   --vanish-after-read=LIST  these IRQs disappear right after the first read of any
 *                         of their files returns (a driver unbinding mid-scan)
 *   --node=N              NUMA node shown in every N/node (default 0)
 *   --ready-fd=FD         write "ready\n" to FD once mounted, then close it
 *   --verbose             log every write and control command on stderr
 *   -h, --help; -V, --version; -d (FUSE debug); -o OPT (FUSE mount options)
 *   -f and -s are accepted and implied: it always runs in the foreground and
 *   single-threaded, so the order of events is deterministic.
 * LIST is the kernel's cpulist syntax ("0-3,8", "0-7:2/4", "N", "all"). Mount
 * options added by default: default_permissions (mode bits checked by the kernel, as
 * procfs does: root may open a 0444 file for writing), fsname=fakeirqfs, and
 * allow_other when running as root; libfuse names the type fuse.<program name>.
 * Exit status: 0 after SIGTERM/SIGINT/SIGHUP or fusermount3 -u; 1 bad usage; 2 mount
 * or run-time failure.
 *
 * Tree (kernel modes; chmod/chown are kept per entry like procfs, truncate and utimens
 * are accepted and ignored, create gives EACCES, mkdir/unlink/rename/link give EPERM):
 *   default_smp_affinity        0644  hex mask
 *   N/node                      0444  "0"
 *   N/spurious                  0444  "count 0\nunhandled 0\nlast_unhandled 0 ms"
 *   N/smp_affinity              0644  hex mask, 32-bit words comma-separated ("%*pb")
 *   N/affinity_hint             0444  hex mask
 *   N/smp_affinity_list         0644  cpulist ("%*pbl")
 *   N/effective_affinity        0444  hex mask
 *   N/effective_affinity_list   0444  cpulist
 *   .control                    0600  write commands; read: a summary of the state
 *   .stats                      0444  counters (see below)
 * .control and .stats are not listed by readdir, so a scan of the directory sees what
 * the kernel shows; they are reached by name. Every open is direct_io with no
 * attribute or entry caching, so every read, lookup and stat reaches this process.
 *
 * Writes to smp_affinity / smp_affinity_list (write_irq_affinity() in
 * kernel/irq/proc.c), checked in this order:
 *   managed IRQ                            EIO (legacy) / EPERM (modern)
 *   list: bad syntax                       EINVAL   (bitmap_parselist())
 *   list: CPU >= --cpus                    ERANGE
 *   list: number beyond 32 bits            EOVERFLOW
 *   hex: bad character                     EINVAL   (bitmap_parse())
 *   hex: bit >= --cpus, or too many words  EOVERFLOW
 *   no online CPU in the mask (or empty)   EINVAL
 *   an injected failure ("fail")           that errno
 *   otherwise: smp_affinity = the mask as written (offline CPUs included),
 *   effective = its first online CPU; the write returns its full length.
 * default_smp_affinity: hex parse as above, no online CPU -> EINVAL. Writes to the
 * read-only files (root only gets that far) -> EIO, as proc does for an entry
 * without a write op. Reads honour the offset; a read at offset 0 always renders the
 * current value, a read continuing where the last one stopped sees the same
 * rendering (seq_file). Once an IRQ vanishes its entries are gone: lookups and opens
 * give ENOENT, and reads and writes on descriptors opened before give EIO
 * (proc_reg_read()/proc_reg_write() after remove_proc_entry()), even if an IRQ with
 * the same number appears again.
 *
 * Control commands, one per line (or separated by ';'), written to .control. IRQ is
 * an IRQ number or a list of them; CPULIST uses the kernel syntax:
 *   managed IRQ | unmanaged IRQ    mark/unmark managed (modern ABI also flips modes)
 *   vanish IRQ                     the IRQ directory disappears
 *   appear IRQ [CPULIST]           a new IRQ (affinity CPULIST or the default
 *                                  affinity, fresh counters); EEXIST if present
 *   vanish-after-read IRQ          vanish right after the next read of its files
 *   set IRQ CPULIST                another writer (irqbalance, a driver) moves it:
 *                                  ignores managed, needs an online CPU (EINVAL)
 *   effective IRQ CPULIST          force effective_affinity only (may be empty)
 *   hint IRQ CPULIST               set affinity_hint
 *   node IRQ N                     set node
 *   fail IRQ ERRNO [COUNT]         the next COUNT (default: every) valid affinity
 *                                  writes fail with ERRNO (name like EBUSY or a
 *                                  number), after the parse and online checks
 *   fail IRQ none                  stop injecting
 *   offline CPU | online CPU       CPU hotplug; offline migrates IRQs whose effective
 *                                  CPU it was (managed ones with no online CPU left
 *                                  shut down: empty effective; others get all online
 *                                  CPUs as affinity, as the kernel "breaks" it);
 *                                  offlining the last online CPU -> EBUSY
 *   reset-stats                    zero every counter
 * A bad command fails the write with EINVAL (ENOENT for an absent IRQ, EEXIST for
 * appear on a present one, ERANGE for a CPU >= --cpus) and is logged on stderr;
 * commands before it on the same write have been applied. None of these changes
 * raise inotify events (FUSE never does for changes made inside the file system).
 * /sys/devices/system/cpu/online and /proc/interrupts are not ours: tests keep
 * them in step with offline/online/appear/vanish themselves.
 *
 * Known differences from procfs: a write(fd, buf, 0) returns 0 without reaching us
 * (FUSE sends nothing), where procfs parses the empty string and gives EINVAL. With
 * vanish-after-read, cat(1) sees EIO on its second read (the one that would find
 * EOF), as it would if the kernel freed the IRQ between the two reads; use one
 * pread() when only the first read matters.
 *
 * .stats: "# irq writes failed opens reads state", then a line
 * "default_smp_affinity W F O R present" and one per IRQ ever present, ascending:
 * "42 W F O R present|vanished". writes counts write() calls on any file of the IRQ
 * (control commands are not counted), failed those that returned an error, opens
 * and reads the open() and read requests. appear resets the IRQ's counters.
 */

#include "fakeirq.h"

#include <errno.h>
#include <fuse.h>
#include <fuse_lowlevel.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define FAKEIRQ_VERSION "1"
#define FAKEIRQ_MAX_CPUS 8192u

/* ------------------------------------------------------------ command line -- */

/* Our own options are taken out of argv by exact name before libfuse sees the rest:
 * fuse_opt's "--name %s" templates would also match "--name-other" as a glued value. */
struct options {
        const char *cpus;
        const char *online;
        const char *irqs;
        const char *default_affinity;
        const char *affinity;
        const char *managed;
        const char *managed_abi;
        const char *vanish_after_read;
        const char *node;
        const char *ready_fd;
        bool verbose;
        bool show_help;
        bool show_version;
};

/* Takes "--name=VALUE", "--name VALUE" and our flags out of argv; everything else
 * (mount point, -f, -s, -d, -o ...) goes to libfuse in @ret_args. */
static int options_parse(int argc, char *argv[], struct options *o, struct fuse_args *ret_args) {
        const struct {
                const char *name;
                const char **field;
        } value_options[] = {
                { "--cpus", &o->cpus },
                { "--online", &o->online },
                { "--irqs", &o->irqs },
                { "--default-affinity", &o->default_affinity },
                { "--affinity", &o->affinity },
                { "--managed", &o->managed },
                { "--managed-abi", &o->managed_abi },
                { "--vanish-after-read", &o->vanish_after_read },
                { "--node", &o->node },
                { "--ready-fd", &o->ready_fd },
        };

        if (fuse_opt_add_arg(ret_args, argv[0]) < 0)
                return -ENOMEM;
        for (int i = 1; i < argc; i++) {
                const char *arg = argv[i];
                bool matched = false;

                if (strcmp(arg, "--verbose") == 0) {
                        o->verbose = true;
                        continue;
                }
                if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
                        o->show_help = true;
                        continue;
                }
                if (strcmp(arg, "-V") == 0 || strcmp(arg, "--version") == 0) {
                        o->show_version = true;
                        continue;
                }
                if (strcmp(arg, "-o") == 0 && i + 1 < argc) {
                        /* keep "-o VALUE" together, whatever VALUE looks like */
                        if (fuse_opt_add_arg(ret_args, arg) < 0 || fuse_opt_add_arg(ret_args, argv[++i]) < 0)
                                return -ENOMEM;
                        continue;
                }
                for (size_t k = 0; k < sizeof(value_options) / sizeof(value_options[0]); k++) {
                        size_t len = strlen(value_options[k].name);

                        if (strncmp(arg, value_options[k].name, len) != 0)
                                continue;
                        if (arg[len] == '=')
                                *value_options[k].field = arg + len + 1;
                        else if (arg[len] == '\0') {
                                if (i + 1 >= argc) {
                                        log_error("%s needs a value", arg);
                                        return -EINVAL;
                                }
                                *value_options[k].field = argv[++i];
                        } else
                                continue;
                        matched = true;
                        break;
                }
                if (!matched && fuse_opt_add_arg(ret_args, arg) < 0)
                        return -ENOMEM;
        }
        return 0;
}

static void print_usage(const char *program) {
        printf("Usage: %s MOUNTPOINT [OPTIONS]\n"
               "A FUSE file system that plays /proc/irq with the kernel's errors (for tests).\n\n"
               "  --cpus=N                  possible CPUs 0..N-1 (default 4)\n"
               "  --online=LIST             online CPUs (default: all)\n"
               "  --irqs=LIST               IRQs present at start (default 0-15)\n"
               "  --default-affinity=LIST   initial default_smp_affinity (default: all)\n"
               "  --affinity=LIST           initial affinity of every IRQ (default: the default)\n"
               "  --managed=LIST            kernel-managed IRQs\n"
               "  --managed-abi=legacy|modern  EIO and 0644 (< 6.12) or EPERM and 0444\n"
               "  --vanish-after-read=LIST  IRQs that vanish after their first read\n"
               "  --node=N                  node of every IRQ (default 0)\n"
               "  --ready-fd=FD             write \"ready\\n\" to FD once mounted\n"
               "  --verbose                 log writes and control commands on stderr\n"
               "  -h, --help                this help; -V, --version\n"
               "Runs in the foreground, single-threaded. Control: MOUNTPOINT/.control,\n"
               "counters: MOUNTPOINT/.stats (see the comment at the top of fakeirqfs.c).\n\n",
               program);
}

/* A CPU list that must parse with the kernel's rules and name at least one CPU. */
static int parse_option_mask(const char *name, const char *value, uint32_t *mask, unsigned nbits) {
        int e = kernel_parse_list(value, mask, nbits);

        if (e < 0) {
                log_error("%s=%s: %s", name, value, strerror(-e));
                return e;
        }
        if (bitmap_next(mask, nbits, 0) >= nbits) {
                log_error("%s=%s: empty", name, value);
                return -EINVAL;
        }
        return 0;
}

/* Marks the IRQs of @value (which must all be present) with @mark. */
static int apply_irq_option(struct fakeirq *st, const char *name, const char *value,
                            void (*mark)(struct fakeirq *st, struct fake_irq *irq)) {
        int e = parse_option_mask(name, value, st->irq_scratch, FAKEIRQ_IRQ_LIMIT);

        if (e < 0)
                return e;
        FOR_EACH_SCRATCH_IRQ(st, n) {
                struct fake_irq *irq = irq_find_present(st, n);

                if (!irq) {
                        log_error("%s: IRQ %u is not in --irqs", name, n);
                        return -EINVAL;
                }
                mark(st, irq);
        }
        return 0;
}

static void mark_managed(struct fakeirq *st, struct fake_irq *irq) {
        irq_set_managed(st, irq, true);
}

static void mark_vanish_after_read(struct fakeirq *st UNUSED, struct fake_irq *irq) {
        irq->vanish_after_read = true;
}

static int fakeirq_new(const struct options *o, struct fakeirq **ret) {
        struct fakeirq *st = calloc(1, sizeof(*st));
        unsigned long number;
        uint32_t *affinity = NULL;
        int e;

        if (!st)
                return -ENOMEM;

        st->nr_cpus = 4;
        if (o->cpus) {
                if (!parse_unsigned(o->cpus, FAKEIRQ_MAX_CPUS, &number) || number == 0) {
                        log_error("--cpus=%s: expected 1..%u", o->cpus, FAKEIRQ_MAX_CPUS);
                        e = -EINVAL;
                        goto fail;
                }
                st->nr_cpus = (unsigned) number;
        }
        st->mask_words = bitmap_words(st->nr_cpus);
        st->online = calloc(st->mask_words, sizeof(uint32_t));
        st->default_affinity = calloc(st->mask_words, sizeof(uint32_t));
        st->scratch = calloc(st->mask_words, sizeof(uint32_t));
        affinity = calloc(st->mask_words, sizeof(uint32_t));
        st->irq_scratch = calloc(bitmap_words(FAKEIRQ_IRQ_LIMIT), sizeof(uint32_t));
        if (!st->online || !st->default_affinity || !st->scratch || !affinity || !st->irq_scratch) {
                e = -ENOMEM;
                goto fail;
        }

        bitmap_set_range(st->online, 0, st->nr_cpus);
        if (o->online && (e = parse_option_mask("--online", o->online, st->online, st->nr_cpus)) < 0)
                goto fail;

        bitmap_set_range(st->default_affinity, 0, st->nr_cpus);
        if (o->default_affinity) {
                e = parse_option_mask("--default-affinity", o->default_affinity,
                                      st->default_affinity, st->nr_cpus);
                if (e < 0)
                        goto fail;
                if (!bitmap_intersects(st->default_affinity, st->online, st->nr_cpus)) {
                        log_error("--default-affinity=%s: no online CPU", o->default_affinity);
                        e = -EINVAL;
                        goto fail;
                }
        }
        bitmap_copy(affinity, st->default_affinity, st->nr_cpus);
        if (o->affinity && (e = parse_option_mask("--affinity", o->affinity, affinity, st->nr_cpus)) < 0)
                goto fail;

        st->abi = MANAGED_ABI_LEGACY;
        if (o->managed_abi) {
                if (strcmp(o->managed_abi, "modern") == 0)
                        st->abi = MANAGED_ABI_MODERN;
                else if (strcmp(o->managed_abi, "legacy") != 0) {
                        log_error("--managed-abi=%s: expected legacy or modern", o->managed_abi);
                        e = -EINVAL;
                        goto fail;
                }
        }
        if (o->node && !parse_int(o->node, &st->default_node)) {
                log_error("--node=%s: not a number", o->node);
                e = -EINVAL;
                goto fail;
        }
        st->verbose = o->verbose;
        clock_gettime(CLOCK_REALTIME, &st->start_time);
        st->root_attr = (struct node_attr) { .mode = 0555 };
        st->default_attr = (struct node_attr) { .mode = 0644 };
        st->control_attr = (struct node_attr) { .mode = 0600 };
        st->stats_attr = (struct node_attr) { .mode = 0444 };

        e = parse_option_mask("--irqs", o->irqs ? o->irqs : "0-15", st->irq_scratch, FAKEIRQ_IRQ_LIMIT);
        if (e < 0)
                goto fail;
        FOR_EACH_SCRATCH_IRQ(st, n) {
                e = irq_appear(st, n, affinity);
                if (e < 0)
                        goto fail;
        }
        if (o->managed && (e = apply_irq_option(st, "--managed", o->managed, mark_managed)) < 0)
                goto fail;
        if (o->vanish_after_read &&
            (e = apply_irq_option(st, "--vanish-after-read", o->vanish_after_read, mark_vanish_after_read)) < 0)
                goto fail;

        free(affinity);
        *ret = st;
        return 0;

fail:
        free(affinity);
        fakeirq_free(st);
        return e;
}

static void signal_ready(int fd) {
        static const char message[] = "ready\n";
        size_t done = 0;

        while (done < sizeof(message) - 1) {
                ssize_t n = write(fd, message + done, sizeof(message) - 1 - done);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0) {
                        log_error("--ready-fd=%d: %s", fd, strerror(errno));
                        break;
                }
                done += (size_t) n;
        }
        close(fd);
}

int main(int argc, char *argv[]) {
        struct fuse_args args = FUSE_ARGS_INIT(0, NULL);
        struct fuse_cmdline_opts cmdline = {};
        struct options o = {};
        struct fakeirq *st = NULL;
        struct fuse *fuse = NULL;
        unsigned long ready_fd = ULONG_MAX;
        int exit_status = 1;
        int r;

        if (options_parse(argc, argv, &o, &args) < 0)
                goto out;
        if (o.show_help) {
                print_usage(argv[0]);
                fuse_cmdline_help();
                fuse_lib_help(&args);
                exit_status = 0;
                goto out;
        }
        if (o.show_version) {
                printf("fakeirqfs %s (libfuse %s)\n", FAKEIRQ_VERSION, fuse_pkgversion());
                exit_status = 0;
                goto out;
        }
        if (fuse_parse_cmdline(&args, &cmdline) != 0)
                goto out;
        if (cmdline.show_help || cmdline.show_version) {
                print_usage(argv[0]);
                exit_status = 0;
                goto out;
        }
        if (!cmdline.mountpoint) {
                log_error("no mount point given (try --help)");
                goto out;
        }
        if (o.ready_fd && (!parse_unsigned(o.ready_fd, INT_MAX, &ready_fd))) {
                log_error("--ready-fd=%s: not a file descriptor", o.ready_fd);
                goto out;
        }
        if (fakeirq_new(&o, &st) < 0)
                goto out;

        /* Mode bits checked by the kernel as procfs does; readable by everyone like
         * /proc/irq when we may grant that. */
        if (fuse_opt_add_arg(&args, "-odefault_permissions,fsname=fakeirqfs") < 0 ||
            (geteuid() == 0 && fuse_opt_add_arg(&args, "-oallow_other") < 0)) {
                log_error("out of memory");
                goto out;
        }

        fuse = fuse_new(&args, &fakeirq_operations, sizeof(fakeirq_operations), st);
        if (!fuse)
                goto out;
        exit_status = 2;
        if (fuse_mount(fuse, cmdline.mountpoint) != 0) {
                log_error("cannot mount on %s", cmdline.mountpoint);
                fuse_destroy(fuse);
                fuse = NULL;
                goto out;
        }
        if (fuse_set_signal_handlers(fuse_get_session(fuse)) != 0) {
                fuse_unmount(fuse);
                goto out;
        }
        if (ready_fd != ULONG_MAX)
                signal_ready((int) ready_fd);

        r = fuse_loop(fuse);        /* single-threaded, always */

        fuse_remove_signal_handlers(fuse_get_session(fuse));
        fuse_unmount(fuse);
        if (r == 0 || r == SIGTERM || r == SIGINT || r == SIGHUP)
                exit_status = 0;
        else
                log_error("session ended: %s", r < 0 ? strerror(-r) : "error");

out:
        if (fuse)
                fuse_destroy(fuse);
        fakeirq_free(st);
        free(cmdline.mountpoint);
        fuse_opt_free_args(&args);
        return exit_status;
}
