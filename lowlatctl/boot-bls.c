/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lowlatctl boot on BLS hosts (Fedora, RHEL, Rocky: /boot/loader/entries/NAME.conf edited by
 * grubby): the arguments go in with grubby --update-kernel=ALL, what was added or replaced
 * is kept in the state file (boot-args.c), and if grubby fails every entry is put back as
 * it was, byte for byte. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "boot.h"
#include "basic/array.h"
#include "basic/util.h"

#define BLS_ENTRIES "boot/loader/entries"

typedef struct BlsEntries {
        BootFileSnapshot *files; /* each entry as it was */
        char **options;          /* its "options" lines' values, joined */
        size_t n;
} BlsEntries;

static void bls_entries_done(BlsEntries *e) {
        for (size_t i = 0; i < e->n; i++) {
                boot_file_snapshot_done(&e->files[i]);
                free(e->options[i]);
        }
        free(e->files);
        free(e->options);
        *e = (BlsEntries) {};
}

static void closedirp(DIR **d) {
        if (*d)
                (void) closedir(*d);
}

/* The values of every "options" line of an entry, joined by a space, as the loader does. */
static char *entry_options(const char *text, size_t len) {
        _cleanup_free_ char *copy = strndup(text, len);
        char *out = strdup("");

        for (char *line = copy, *next; out && line && *line; line = next) {
                char *more;

                next = strchr(line, '\n');
                if (next)
                        *next++ = '\0';
                line += strspn(line, " \t");
                if (strncmp(line, "options", 7) != 0 || !strchr(" \t", line[7]) || !line[7])
                        continue;
                line += 7 + strspn(line + 7, " \t");
                more = strdup_printf("%s%s%s", out, *out ? " " : "", line);
                free(out);
                out = more;
        }
        return copy ? out : mfree(out);
}

/* Every *.conf entry: 0 with at least one read, or EXIT_REFUSED after saying why. */
static int bls_entries_read(const Host *h, BlsEntries *ret) {
        _cleanup_(closedirp) DIR *d = NULL;
        BlsEntries e = {};
        size_t allocated_files = 0, allocated_options = 0;
        struct dirent *de;
        int r = host_opendir(h, BLS_ENTRIES, &d);

        while (r >= 0 && (de = readdir(d))) {
                size_t len = strlen(de->d_name);

                if (len <= 5 || !streq(de->d_name + len - 5, ".conf") || de->d_name[0] == '.')
                        continue;
                r = array_grow(&e.files, &allocated_files, e.n + 1);
                if (r >= 0)
                        r = array_grow(&e.options, &allocated_options, e.n + 1);
                if (r >= 0)
                        r = boot_file_snapshot(h, BLS_ENTRIES, de->d_name, &e.files[e.n]);
                if (r < 0)
                        break;
                e.options[e.n] = e.files[e.n].text ? entry_options(e.files[e.n].text, e.files[e.n].len) : strdup("");
                e.n++;
                if (!e.options[e.n - 1])
                        r = -ENOMEM;
                else if (strchr(e.options[e.n - 1], '$'))
                        r = -EMEDIUMTYPE;
        }
        if (r >= 0 && e.n == 0)
                r = -ENOENT;
        if (r < 0) {
                if (r == -EMEDIUMTYPE)
                        fprintf(stderr, "lowlatctl: /" BLS_ENTRIES "/%s takes its options from a variable "
                                        "($kernelopts in grubenv): lowlatctl edits only entries that list their "
                                        "arguments; add them by hand with grubby\n",
                                e.files[e.n - 1].name);
                else
                        fprintf(stderr, "lowlatctl: cannot read the entries in /" BLS_ENTRIES ": %s\n",
                                strerror(-r));
                bls_entries_done(&e);
                return r == -ENOMEM ? r : EXIT_REFUSED;
        }
        *ret = e;
        return 0;
}

/* The changes --apply makes, the same for every entry (each less lowlatd's earlier ones):
 * entries that disagree on a parameter lowlatd sets are refused, since one grubby call
 * changes them all and --remove could not give each its own back. */
static int bls_plan(const BlsEntries *e, const char *wanted, const BootArgState *state, BootArgState *ret,
                    size_t *ret_missing) {
        BootArgState plan = {};
        size_t missing = 0;
        int r = 0;

        for (size_t i = 0; r == 0 && i < e->n; i++) {
                _cleanup_(boot_arg_state_done) BootArgState one = {};
                _cleanup_free_ char *admin = NULL;
                size_t m = 0;
                bool same;

                r = state ? boot_args_undo(e->options[i], state, &admin, &m) : 0;
                if (r == 0)
                        r = boot_args_plan(admin ?: e->options[i], wanted, &one);
                if (r != 0)
                        break;
                missing += m;
                if (i == 0) {
                        plan = one;
                        one = (BootArgState) {};
                        continue;
                }
                same = one.n_changes == plan.n_changes;
                for (size_t c = 0; same && c < one.n_changes; c++)
                        same = streq_ptr(one.changes[c].old, plan.changes[c].old) &&
                               streq(one.changes[c].new, plan.changes[c].new);
                if (!same) {
                        fprintf(stderr, "lowlatctl: /" BLS_ENTRIES "/%s and %s differ in the arguments lowlatd "
                                        "sets: make them agree, or add the arguments by hand with grubby\n",
                                e->files[0].name, e->files[i].name);
                        r = EXIT_REFUSED;
                }
        }
        if (r != 0) {
                boot_arg_state_done(&plan);
                return r;
        }
        plan.loader = BOOT_LOADER_BLS;
        *ret = plan;
        *ret_missing = missing;
        return 0;
}

/* grubby --update-kernel=ALL --remove-args="..." --args="...": the words taken out (each
 * change's old when applying, new when undoing) and put in. */
static int grubby_argv(const BootArgState *s, bool undo, char *argv[static 5]) {
        _cleanup_free_ char *out = strdup(""), *in = strdup("");
        size_t n = 0;

        for (size_t i = 0; out && in && i < s->n_changes; i++) {
                const char *take = undo ? s->changes[i].new : s->changes[i].old;
                const char *put = undo ? s->changes[i].old : s->changes[i].new;
                char *more;

                if (take) {
                        more = strdup_printf("%s%s%s", out, *out ? " " : "", take);
                        free(out);
                        out = more;
                }
                if (put && out) {
                        more = strdup_printf("%s%s%s", in, *in ? " " : "", put);
                        free(in);
                        in = more;
                }
        }
        if (!out || !in)
                return -ENOMEM;
        argv[n++] = strdup("grubby");
        argv[n++] = strdup("--update-kernel=ALL");
        if (*out)
                argv[n++] = strdup_printf("--remove-args=%s", out);
        if (*in)
                argv[n++] = strdup_printf("--args=%s", in);
        argv[n] = NULL;
        for (size_t i = 0; i < n; i++)
                if (!argv[i])
                        return -ENOMEM;
        return 0;
}

static void grubby_argv_free(char *argv[static 5]) {
        for (size_t i = 0; i < 5; i++)
                free(argv[i]);
}

/* One grubby call for the changes (undone or made); under another root it is only said.
 * 0 ran, 1 failed or not run (said why). */
static int bls_grubby(BootReport *report, const BootArgState *s, bool undo) {
        char *argv[5] = {};
        int r = grubby_argv(s, undo, argv);

        if (r < 0) {
                grubby_argv_free(argv);
                return r;
        }
        free(report->command);
        report->command = boot_command_string(argv);
        if (!report->system_root) {
                report->command_result = "not run: --root is not /";
                fprintf(stderr, "lowlatctl: grubby not run: the root is %s, not this system's /; run inside it:\n  %s\n",
                        report->args->root, report->command ?: "grubby");
                r = 1;
        } else {
                r = boot_run_command(argv);
                report->command_result = r == 0 ? "ran" : "failed";
        }
        grubby_argv_free(argv);
        return r;
}

/* After grubby failed: every entry as it was. */
static void bls_restore(const Host *h, BootReport *report, const BlsEntries *e) {
        int failed = 0;

        for (size_t i = 0; i < e->n; i++)
                if (boot_file_restore(h, &e->files[i]) < 0) {
                        fprintf(stderr, "lowlatctl: cannot put /" BLS_ENTRIES "/%s back as it was: %m\n",
                                e->files[i].name);
                        failed++;
                }
        report->result = failed ? "left" : "restored";
        if (!failed)
                fprintf(stderr, "lowlatctl: the entries in /" BLS_ENTRIES " put back as they were\n");
}

static bool plan_equals_state(const BootArgState *plan, const BootArgState *state) {
        bool same = state && state->loader == BOOT_LOADER_BLS && plan->n_changes == state->n_changes;

        for (size_t c = 0; same && c < plan->n_changes; c++)
                same = streq_ptr(plan->changes[c].old, state->changes[c].old) &&
                       streq(plan->changes[c].new, state->changes[c].new);
        return same;
}

static int bls_apply_changes(const Host *h, BootReport *report, const BlsEntries *e, const BootArgState *state,
                             const BootArgState *plan) {
        int r = 0;

        if (state && state->n_changes > 0)
                r = bls_grubby(report, state, true);
        if (r == 0 && plan->n_changes > 0)
                r = bls_grubby(report, plan, false);
        if (r < 0)
                return r;
        if (r > 0) {
                if (report->system_root)
                        bls_restore(h, report, e);
                return EXIT_REFUSED;
        }
        r = plan->n_changes > 0 ? boot_arg_state_write(h, plan) : boot_arg_state_remove(h);
        if (r < 0) {
                fprintf(stderr, "lowlatctl: grubby ran, but /" BOOT_STATE " cannot be written (%s): --remove will "
                                "not know what was added; the arguments added: %s\n",
                        strerror(-r), report->lowlatd_args);
                return EXIT_REFUSED;
        }
        report->result = "written";
        fprintf(stderr, "lowlatctl: grubby ran on every entry; /" BOOT_STATE " records the %zu argument%s it "
                        "changed; the new line takes effect at the next boot\n",
                plan->n_changes, plan->n_changes == 1 ? "" : "s");
        return EXIT_OK;
}

int boot_apply_bls(const Host *h, BootReport *report) {
        _cleanup_(bls_entries_done) BlsEntries e = {};
        _cleanup_(boot_arg_state_done) BootArgState state = {}, plan = {};
        size_t missing = 0;
        int r;

        r = boot_arg_state_read(h, &state);
        if (r < 0) {
                fprintf(stderr, "lowlatctl: /" BOOT_STATE ": %s: refusing to change what it may describe\n",
                        strerror(-r));
                return r == -ENOMEM ? r : EXIT_REFUSED;
        }
        if (r > 0 && state.loader != BOOT_LOADER_BLS) {
                fprintf(stderr, "lowlatctl: /" BOOT_STATE " says the arguments were written for %s: run "
                                "lowlatctl boot --remove first\n",
                        boot_loader_to_string(state.loader));
                return EXIT_REFUSED;
        }
        r = bls_entries_read(h, &e);
        if (r == 0)
                r = bls_plan(&e, report->lowlatd_args, state.loader == BOOT_LOADER_BLS ? &state : NULL, &plan,
                             &missing);
        if (r != 0)
                return r;
        if (missing > 0)
                fprintf(stderr, "lowlatctl: %zu argument%s lowlatctl wrote before %s no longer in the entries as "
                                "written: left as they are\n",
                        missing, missing == 1 ? "" : "s", missing == 1 ? "is" : "are");
        if (plan_equals_state(&plan, &state) && missing == 0) {
                report->result = "unchanged";
                fprintf(stderr, "lowlatctl: the entries in /" BLS_ENTRIES " already hold these arguments\n");
                return EXIT_OK;
        }
        if (plan.n_changes == 0 && state.n_changes == 0) {
                report->result = "unchanged";
                fprintf(stderr, "lowlatctl: the entries in /" BLS_ENTRIES " already have every argument (their "
                                "own): nothing for lowlatctl to add\n");
                return EXIT_OK;
        }
        return bls_apply_changes(h, report, &e, state.n_changes > 0 ? &state : NULL, &plan);
}

int boot_remove_bls(const Host *h, BootReport *report, const BootArgState *state) {
        _cleanup_(bls_entries_done) BlsEntries e = {};
        _cleanup_(boot_arg_state_done) BootArgState undo = { .loader = BOOT_LOADER_BLS };
        int r = bls_entries_read(h, &e);

        if (r != 0)
                return r;
        /* A change is undone only where every entry still has its word: one the
         * administrator changed since is theirs now. */
        for (size_t c = 0; r >= 0 && c < state->n_changes; c++) {
                const BootArgChange *ch = &state->changes[c];
                bool everywhere = true;

                for (size_t i = 0; everywhere && i < e.n; i++)
                        everywhere = boot_words_contain(e.options[i], ch->new);
                if (everywhere)
                        r = boot_arg_state_add(&undo, ch->old, ch->new);
                else
                        fprintf(stderr, "lowlatctl: %s is not in every entry any more: left as it is\n", ch->new);
        }
        if (r < 0)
                return r;
        r = undo.n_changes > 0 ? bls_grubby(report, &undo, true) : 0;
        if (r < 0)
                return r;
        if (r > 0) {
                if (report->system_root)
                        bls_restore(h, report, &e);
                return EXIT_REFUSED;
        }
        r = boot_arg_state_remove(h);
        if (r < 0) {
                fprintf(stderr, "lowlatctl: cannot remove /" BOOT_STATE ": %s\n", strerror(-r));
                return EXIT_REFUSED;
        }
        report->result = "removed";
        fprintf(stderr, "lowlatctl: grubby took back the %zu argument%s lowlatctl had changed; /" BOOT_STATE
                        " removed\n",
                undo.n_changes, undo.n_changes == 1 ? "" : "s");
        return EXIT_OK;
}
