/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lowlatctl boot with systemd-boot or a UKI: the arguments go into /etc/kernel/cmdline,
 * which kernel-install reads when it writes an entry or builds a UKI, each word of the
 * administrator's kept byte for byte; kernel-install is then run for the running kernel.
 * What was added is in the state file (boot-args.c); if kernel-install fails, the file
 * and the state go back as they were. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "boot.h"
#include "basic/util.h"

#define KERNEL_DIR "etc/kernel"
#define KERNEL_CMDLINE_NAME "cmdline"
#define KERNEL_CMDLINE KERNEL_DIR "/" KERNEL_CMDLINE_NAME

/* What kernel-install uses when /etc/kernel/cmdline is not there: the running line, less
 * what the boot loader itself adds (BOOT_IMAGE=, initrd=). */
static char *cmdline_from_running(const Host *h) {
        _cleanup_free_ char *running = NULL;
        char *out, *save = NULL;

        if (host_read_file(h, "proc/cmdline", &running) < 0)
                return NULL;
        out = strdup("");
        for (char *w = strtok_r(running, " \t\n", &save); out && w; w = strtok_r(NULL, " \t\n", &save)) {
                char *more;

                if (strncmp(w, "BOOT_IMAGE=", 11) == 0 || strncmp(w, "initrd=", 7) == 0)
                        continue;
                more = strdup_printf("%s%s%s", out, *out ? " " : "", w);
                free(out);
                out = more;
        }
        return out;
}

/* kernel-install add for the running kernel, with its image (and initrd, where the
 * distribution keeps one beside it); what to run by hand when it cannot be run here.
 * 0 ran or not to be run here, 1 failed. */
static int kernel_install(const Host *h, BootReport *report) {
        struct utsname u;
        const char *image = NULL, *initrd = NULL;
        _cleanup_free_ char *modules = NULL, *boot = NULL, *initrd_debian = NULL, *initrd_fedora = NULL;
        char *argv[6] = { (char *) "kernel-install", (char *) "add" };
        int r;

        if (!report->system_root) {
                report->command = strdup("kernel-install add KERNEL-VERSION KERNEL-IMAGE");
                report->command_result = "not run: --root is not /";
                fprintf(stderr, "lowlatctl: kernel-install not run: the root is %s, not this system's /; run inside "
                                "it, for each installed kernel: kernel-install add KERNEL-VERSION KERNEL-IMAGE\n",
                        report->args->root);
                return 0;
        }
        if (uname(&u) < 0)
                return 1;
        modules = strdup_printf("usr/lib/modules/%s/vmlinuz", u.release);
        boot = strdup_printf("boot/vmlinuz-%s", u.release);
        initrd_debian = strdup_printf("boot/initrd.img-%s", u.release);
        initrd_fedora = strdup_printf("boot/initramfs-%s.img", u.release);
        if (!modules || !boot || !initrd_debian || !initrd_fedora)
                return -ENOMEM;
        image = host_path_exists(h, modules) ? modules : host_path_exists(h, boot) ? boot : NULL;
        initrd = host_path_exists(h, initrd_debian) ? initrd_debian
               : host_path_exists(h, initrd_fedora) ? initrd_fedora
                                                     : NULL;
        if (!image) {
                report->command = strdup_printf("kernel-install add %s KERNEL-IMAGE", u.release);
                report->command_result = "not run: no image of the running kernel found";
                fprintf(stderr, "lowlatctl: kernel-install not run: neither /%s nor /%s is there; run by hand, with "
                                "the running kernel's image: kernel-install add %s KERNEL-IMAGE\n",
                        modules, boot, u.release);
                return 0;
        }
        /* Paths from the root, which is "/" here. */
        argv[2] = u.release;
        argv[3] = strdup_printf("/%s", image);
        argv[4] = initrd ? strdup_printf("/%s", initrd) : NULL;
        argv[5] = NULL;
        report->command = argv[3] && (!initrd || argv[4]) ? boot_command_string(argv) : NULL;
        r = argv[3] && (!initrd || argv[4]) ? boot_run_command(argv) : -ENOMEM;
        free(argv[3]);
        free(argv[4]);
        if (r < 0)
                return r;
        report->command_result = r == 0 ? "ran" : "failed";
        if (r == 0)
                fprintf(stderr, "lowlatctl: kernel-install ran for %s; the new line takes effect at its next boot\n",
                        u.release);
        return r;
}

/* After kernel-install failed: the file and the state as they were. */
static int cmdline_restore(const Host *h, BootReport *report, const BootFileSnapshot *file,
                           const BootFileSnapshot *state) {
        int r = boot_file_restore(h, file), q = boot_file_restore(h, state);

        report->result = r < 0 || q < 0 ? "left" : "restored";
        if (r < 0 || q < 0)
                fprintf(stderr, "lowlatctl: cannot put /" KERNEL_CMDLINE " and /" BOOT_STATE " back as they were: "
                                "%s\n",
                        strerror(-(r < 0 ? r : q)));
        else
                fprintf(stderr, "lowlatctl: /" KERNEL_CMDLINE " put back as it was before (%s); kernel-install may "
                                "have left part of its work: run it again once it works\n",
                        file->text ? "the previous text" : "none");
        return EXIT_REFUSED;
}

/* The new text for --apply: the administrator's (less lowlatd's earlier changes, or the
 * running line for a file that is not there) with the plan's changes made in place. */
static int cmdline_new_text(const Host *h, const BootReport *report, const BootFileSnapshot *file,
                            const BootArgState *state, char **ret_text, BootArgState *ret_plan) {
        _cleanup_free_ char *text = NULL, *created = NULL;
        _cleanup_(boot_arg_state_done) BootArgState plan = {};
        size_t missing = 0;
        int r;

        if (file->text) {
                _cleanup_free_ char *current = strndup(file->text, file->len);
                if (!current)
                        return -ENOMEM;
                r = boot_args_undo(current, state, &text, &missing);
                if (r < 0)
                        return r;
                if (missing > 0)
                        fprintf(stderr, "lowlatctl: %zu argument%s lowlatctl wrote before no longer in /" KERNEL_CMDLINE
                                        " as written: left as they are\n",
                                missing, missing == 1 ? "" : "s");
                if (state->created && !(created = strdup(state->created)))
                        return -ENOMEM;
        } else {
                created = cmdline_from_running(h);
                text = created ? strdup_printf("%s\n", created) : NULL;
                if (!created) {
                        fprintf(stderr, "lowlatctl: /" KERNEL_CMDLINE " is not there and the running line cannot be "
                                        "read to start it from\n");
                        return EXIT_REFUSED;
                }
                if (!text)
                        return -ENOMEM;
        }
        r = boot_args_plan(text, report->lowlatd_args, &plan);
        for (size_t i = 0; r == 0 && i < plan.n_changes; i++) {
                char *edited = boot_words_edit(text, plan.changes[i].old, plan.changes[i].new);
                if (!edited)
                        return -ENOMEM;
                free(text);
                text = edited;
        }
        if (r != 0)
                return r;
        plan.loader = BOOT_LOADER_SYSTEMD_BOOT;
        plan.created = TAKE_PTR(created);
        *ret_text = TAKE_PTR(text);
        *ret_plan = plan;
        plan = (BootArgState) {};
        return 0;
}

/* The file (text; NULL: removed) and the state (plan; NULL: removed) in place, then
 * kernel-install; both put back if it fails. */
static int cmdline_commit(const Host *h, BootReport *report, const BootFileSnapshot *file,
                          const BootFileSnapshot *state_file, const char *text, const BootArgState *plan) {
        _cleanup_close_ int etc = -1;
        int r = 0;

        if (text) {
                etc = host_open_file(h, "etc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (etc < 0 || (mkdirat(etc, "kernel", 0755) < 0 && errno != EEXIST))
                        r = etc < 0 ? etc : -errno;
                if (r >= 0)
                        r = boot_file_replace(h, KERNEL_DIR, KERNEL_CMDLINE_NAME, text, strlen(text),
                                              file->text ? file->mode : 0644);
        } else {
                _cleanup_close_ int dir = host_open_file(h, KERNEL_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                r = dir < 0 ? dir : unlinkat(dir, KERNEL_CMDLINE_NAME, 0) < 0 ? -errno : 0;
        }
        if (r >= 0)
                r = plan ? boot_arg_state_write(h, plan) : boot_arg_state_remove(h);
        if (r < 0) {
                fprintf(stderr, "lowlatctl: cannot write /" KERNEL_CMDLINE " or /" BOOT_STATE " under %s: %s\n",
                        report->args->root ?: "/", strerror(-r));
                (void) cmdline_restore(h, report, file, state_file);
                return r == -ENOMEM ? r : EXIT_REFUSED;
        }
        r = kernel_install(h, report);
        if (r < 0)
                return r;
        return r > 0 ? cmdline_restore(h, report, file, state_file) : EXIT_OK;
}

/* The state of this loader: 0 with *ret (empty when none), or the exit status. */
static int cmdline_state(const Host *h, BootArgState *ret) {
        int r = boot_arg_state_read(h, ret);

        if (r < 0) {
                fprintf(stderr, "lowlatctl: /" BOOT_STATE ": %s: refusing to change what it may describe\n",
                        strerror(-r));
                return r == -ENOMEM ? r : EXIT_REFUSED;
        }
        if (r > 0 && ret->loader != BOOT_LOADER_SYSTEMD_BOOT) {
                fprintf(stderr, "lowlatctl: /" BOOT_STATE " says the arguments were written for %s: run "
                                "lowlatctl boot --remove first\n",
                        boot_loader_to_string(ret->loader));
                boot_arg_state_done(ret);
                return EXIT_REFUSED;
        }
        return 0;
}

/* /etc/kernel/cmdline and the state file as they are now, for a byte-for-byte undo: 0, or
 * the exit code after saying which could not be read. */
static int cmdline_snapshots(const Host *h, BootFileSnapshot *file, BootFileSnapshot *state_file) {
        const char *what = "/" KERNEL_CMDLINE;
        int r;

        r = boot_file_snapshot(h, KERNEL_DIR, KERNEL_CMDLINE_NAME, file);
        if (r >= 0) {
                what = "/" BOOT_STATE;
                r = boot_file_snapshot(h, BOOT_STATE_DIR, BOOT_STATE_NAME, state_file);
        }
        if (r >= 0)
                return 0;
        fprintf(stderr, "lowlatctl: cannot read %s: %s\n", what, strerror(-r));
        return r == -ENOMEM ? r : EXIT_REFUSED;
}

int boot_apply_kernel_cmdline(const Host *h, BootReport *report) {
        _cleanup_(boot_file_snapshot_done) BootFileSnapshot file = {}, state_file = {};
        _cleanup_(boot_arg_state_done) BootArgState state = {}, plan = {};
        _cleanup_free_ char *text = NULL;
        bool same;
        int r;

        r = cmdline_state(h, &state);
        if (r != 0)
                return r;
        r = cmdline_snapshots(h, &file, &state_file);
        if (r != 0)
                return r;
        r = cmdline_new_text(h, report, &file, &state, &text, &plan);
        if (r != 0)
                return r;
        same = file.text && strlen(text) == file.len && memcmp(text, file.text, file.len) == 0;
        if (same || (!file.text && plan.n_changes == 0)) {
                report->result = "unchanged";
                fprintf(stderr, "lowlatctl: /" KERNEL_CMDLINE " %s\n",
                        same ? "already holds these arguments" : "is not there and the running line has every "
                                                                 "argument: nothing to write");
                if (!same)
                        return EXIT_OK;
                /* Run even so, as update-grub is: an earlier run under --root wrote the file only. */
                r = kernel_install(h, report);
                return r < 0 ? r : r > 0 ? EXIT_REFUSED : EXIT_OK;
        }
        report->result = "written";
        fprintf(stderr, "lowlatctl: %s /" KERNEL_CMDLINE " (%zu argument%s of lowlatd's, recorded in /" BOOT_STATE
                        ")\n",
                file.text ? "wrote" : "created", plan.n_changes, plan.n_changes == 1 ? "" : "s");
        return cmdline_commit(h, report, &file, &state_file, text, plan.n_changes || plan.created ? &plan : NULL);
}

int boot_remove_kernel_cmdline(const Host *h, BootReport *report, const BootArgState *state) {
        _cleanup_(boot_file_snapshot_done) BootFileSnapshot file = {}, state_file = {};
        _cleanup_free_ char *current = NULL, *text = NULL;
        size_t missing = 0;
        int r;

        r = cmdline_snapshots(h, &file, &state_file);
        if (r != 0)
                return r;
        if (!file.text) {
                report->result = "absent";
                fprintf(stderr, "lowlatctl: /" KERNEL_CMDLINE " is not there: nothing to remove; /" BOOT_STATE
                                " removed\n");
                r = boot_arg_state_remove(h);
                return r < 0 ? EXIT_REFUSED : EXIT_OK;
        }
        current = strndup(file.text, file.len);
        r = current ? boot_args_undo(current, state, &text, &missing) : -ENOMEM;
        if (r < 0)
                return r;
        if (missing > 0)
                fprintf(stderr, "lowlatctl: %zu argument%s lowlatctl wrote %s no longer in /" KERNEL_CMDLINE
                                " as written: left as they are\n",
                        missing, missing == 1 ? "" : "s", missing == 1 ? "is" : "are");
        /* A file lowlatctl created goes when nothing but what it started from is left. */
        if (state->created && strlen(text) == strlen(state->created) + 1 &&
            strncmp(text, state->created, strlen(state->created)) == 0 && text[strlen(text) - 1] == '\n')
                text = mfree(text);
        report->result = "removed";
        fprintf(stderr, "lowlatctl: %s /" KERNEL_CMDLINE "; /" BOOT_STATE " removed\n",
                text ? "took lowlatd's arguments out of" : "removed (lowlatctl had created it)");
        return cmdline_commit(h, report, &file, &state_file, text, NULL);
}
