/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the files of lowlatctl boot share (boot-verb.c: the verb, detection and GRUB;
 * boot-args.c: the loaders that edit a list of arguments and their state file; boot-bls.c:
 * grubby; boot-kernel-cmdline.c: /etc/kernel/cmdline and kernel-install). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "client.h"
#include "host/host.h"

typedef enum BootLoader {
        BOOT_LOADER_NONE,
        BOOT_LOADER_GRUB,
        BOOT_LOADER_BLS,
        BOOT_LOADER_SYSTEMD_BOOT,
        _BOOT_LOADER_MAX,
        _BOOT_LOADER_INVALID = -EINVAL,
} BootLoader;

const char *boot_loader_to_string(BootLoader l);
BootLoader boot_loader_from_string(const char *s);

/* What was found and done, for the summary and --json. */
typedef struct BootReport {
        const BootArguments *args;
        bool system_root;   /* the root is this system's "/": the loader's commands may run */
        bool isolates;      /* the configuration isolates CPUs: there is a line to write */
        char *params;       /* what the running line lacks; NULL: nothing */
        char *line;         /* the whole line, quoted for GRUB_CMDLINE_LINUX_DEFAULT="..." */
        char *lowlatd_args; /* only the arguments lowlatd decides (audit_boot_args()), unquoted */
        BootLoader loader;
        const char *result;      /* --apply, --remove: "written", "unchanged", "removed", "absent", ... */
        const char *update_grub; /* "ran", "failed", "not run: ...", NULL: not called for */
        char *command;           /* the loader's command run, or to be run by hand; NULL: none */
        const char *command_result; /* "ran", "failed", "not run: ...", NULL: no command */
} BootReport;

/* One change lowlatctl made to a list of kernel arguments: new added (old NULL), or old
 * replaced by new (the same parameter with another value). */
typedef struct BootArgChange {
        char *old;
        char *new;
} BootArgChange;

/* The state file (/var/lib/lowlatd/boot-args under the root): which loader, what changed,
 * and (kernel/cmdline only) the text of a file lowlatctl created. */
typedef struct BootArgState {
        BootLoader loader;
        BootArgChange *changes;
        size_t n_changes;
        char *created; /* the file's text as created, less lowlatd's arguments; NULL: it was there */
} BootArgState;

#define BOOT_STATE_DIR "var/lib/lowlatd"
#define BOOT_STATE_NAME "boot-args"
#define BOOT_STATE BOOT_STATE_DIR "/" BOOT_STATE_NAME

void boot_arg_state_done(BootArgState *s);
int boot_arg_state_add(BootArgState *s, const char *old, const char *new);
/* 1 with *ret filled, 0 when there is no state file, -EBADMSG for one not understood. */
int boot_arg_state_read(const Host *h, BootArgState *ret);
int boot_arg_state_write(const Host *h, const BootArgState *s);
int boot_arg_state_remove(const Host *h);

/* The words of text: a word is found whole, its parameter by the name before '='. */
bool boot_words_contain(const char *text, const char *word);
/* How many words of text are the parameter name (bare or name=...); *ret_first the first. */
size_t boot_words_count_param(const char *text, const char *word, const char **ret_first, size_t *ret_len);
/* text with one word changed in place, the rest byte for byte: old replaced by new, new
 * appended (old NULL, after the last word), or old removed with the blank before it (new
 * NULL). NULL when out of memory; old must be a word of text. */
char *boot_words_edit(const char *text, const char *old, const char *new);

/* What text would be without the changes of state (each undone where its word is still
 * there; *ret_missing counts those that are not), and the changes that take text from
 * there to the arguments wanted. 0, -ENOMEM, or EXIT_REFUSED after saying why (a
 * parameter given twice). */
int boot_args_undo(const char *text, const BootArgState *state, char **ret_text, size_t *ret_missing);
int boot_args_plan(const char *admin_text, const char *wanted, BootArgState *ret);

/* A command of the loader's with its output on stderr (stdout is the summary's): 0, or 1
 * after saying why. */
int boot_run_command(char *const argv[]);
/* A command line to show: the words joined, each that needs it in single quotes. */
char *boot_command_string(char *const argv[]);
/* text as the file name in the directory dir (relative to the root), through a
 * temporary file and rename(): a reader never sees half of it. */
int boot_file_replace(const Host *h, const char *dir, const char *name, const char *text, size_t len, mode_t mode);

/* A file as it was, to put back byte for byte when the loader's command fails. */
typedef struct BootFileSnapshot {
        char *dir;
        char *name;
        char *text; /* NULL: there was no file */
        size_t len;
        mode_t mode;
} BootFileSnapshot;
int boot_file_snapshot(const Host *h, const char *dir, const char *name, BootFileSnapshot *ret);
/* Puts it back (or removes a file that was not there) when it differs now; 0 or -errno. */
int boot_file_restore(const Host *h, const BootFileSnapshot *s);
void boot_file_snapshot_done(BootFileSnapshot *s);

int boot_apply_bls(const Host *h, BootReport *report);
int boot_remove_bls(const Host *h, BootReport *report, const BootArgState *state);
int boot_apply_kernel_cmdline(const Host *h, BootReport *report);
int boot_remove_kernel_cmdline(const Host *h, BootReport *report, const BootArgState *state);
