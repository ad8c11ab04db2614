/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lowlatctl boot: the kernel command line the configuration needs, the boot loader found
 * under the root, and with --apply or --remove that line written or taken away the way the
 * loader expects (client.h). lowlatd never writes boot configuration: only this verb does,
 * and only when asked to. */
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "boot.h"
#include "basic/array.h"
#include "basic/cells.h"
#include "basic/errorlist.h"
#include "basic/util.h"
#include "host/host.h"
#include "setting/posture-load.h"

#define GRUB_DEFAULT "etc/default/grub"
#define GRUB_DROPIN_DIR "etc/default/grub.d"
#define GRUB_DROPIN_NAME "lowlatd.cfg"
#define GRUB_DROPIN GRUB_DROPIN_DIR "/" GRUB_DROPIN_NAME
/* The first line of every drop-in lowlatctl writes: --remove deletes no other file. */
#define GRUB_DROPIN_HEADER "# Written by lowlatctl boot --apply"

static const char *const boot_loader_table[_BOOT_LOADER_MAX] = {
        [BOOT_LOADER_NONE] = "none",
        [BOOT_LOADER_GRUB] = "grub",
        [BOOT_LOADER_BLS] = "bls",
        [BOOT_LOADER_SYSTEMD_BOOT] = "systemd-boot",
};

/* What --apply does there, in the words of the summary. */
static const char *const boot_loader_apply_table[_BOOT_LOADER_MAX] = {
        [BOOT_LOADER_NONE] = "refuse: no boot loader lowlatctl knows; add the line by hand",
        [BOOT_LOADER_GRUB] = "write /" GRUB_DROPIN ", then run update-grub",
        [BOOT_LOADER_BLS] = "run grubby --update-kernel=ALL with the arguments lowlatd adds, recorded in /" BOOT_STATE,
        [BOOT_LOADER_SYSTEMD_BOOT] = "add the arguments to /etc/kernel/cmdline (recorded in /" BOOT_STATE
                                     "), then run kernel-install for the running kernel",
};

const char *boot_loader_to_string(BootLoader l) {
        return (size_t) l < ELEMENTSOF(boot_loader_table) ? boot_loader_table[l] : NULL;
}

BootLoader boot_loader_from_string(const char *s) {
        for (size_t i = 0; s && i < ELEMENTSOF(boot_loader_table); i++)
                if (streq(boot_loader_table[i], s))
                        return (BootLoader) i;
        return _BOOT_LOADER_INVALID;
}

static void boot_report_done(BootReport *r) {
        free(r->params);
        free(r->line);
        free(r->lowlatd_args);
        free(r->command);
}

static void closedirp(DIR **d) {
        if (*d)
                (void) closedir(*d);
}

static bool on_path(const char *name) {
        const char *path = getenv("PATH");

        for (const char *p = path ?: "/usr/sbin:/usr/bin:/sbin:/bin"; *p;) {
                size_t n = strcspn(p, ":");
                _cleanup_free_ char *file = strdup_printf("%.*s/%s", (int) n, p, name);

                if (n > 0 && file && access(file, X_OK) == 0)
                        return true;
                p += n + (p[n] == ':');
        }
        return false;
}

/* A command of the loader's: under the root, or on PATH where the root is this system's. */
static bool tool_found(const Host *h, bool system_root, const char *relpath, const char *name) {
        return host_path_exists(h, relpath) || (system_root && on_path(name));
}

static bool bls_entries_exist(const Host *h) {
        _cleanup_(closedirp) DIR *d = NULL;
        struct dirent *de;

        if (host_opendir(h, "boot/loader/entries", &d) < 0)
                return false;
        while ((de = readdir(d)))
                if (strlen(de->d_name) > 5 && streq(de->d_name + strlen(de->d_name) - 5, ".conf"))
                        return true;
        return false;
}

/* systemd-boot's files in an ESP or XBOOTLDR partition mounted where
 * systemd's tools look (/efi, /boot/efi, /boot), or a UKI's directory there. */
static bool systemd_boot_layout(const Host *h) {
        static const char *const esps[] = { "efi", "boot/efi", "boot" };
        static const char *const marks[] = { "loader/loader.conf", "EFI/systemd", "EFI/Linux" };

        for (size_t e = 0; e < ELEMENTSOF(esps); e++)
                for (size_t m = 0; m < ELEMENTSOF(marks); m++) {
                        _cleanup_free_ char *path = strdup_printf("%s/%s", esps[e], marks[m]);
                        if (path && host_path_exists(h, path))
                                return true;
                }
        return false;
}

/* bootctl is-installed, quiet: systemd-boot in the ESP as bootctl itself finds it. */
static bool bootctl_is_installed(void) {
        int status;
        pid_t pid;

        fflush(stdout);
        pid = fork();
        if (pid < 0)
                return false;
        if (pid == 0) {
                int null = open("/dev/null", O_RDWR | O_CLOEXEC);
                if (null >= 0)
                        (void) (dup2(null, STDOUT_FILENO) + dup2(null, STDERR_FILENO));
                execlp("bootctl", "bootctl", "is-installed", (char *) NULL);
                _exit(127);
        }
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return false;
        return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* In this order, the first that fits:
 * 1. GRUB as Debian and Ubuntu have it: /etc/default/grub and update-grub (a BLS host has
 *    /etc/default/grub too, but no update-grub);
 * 2. systemd-boot: bootctl is-installed says so (on this system's root), or its files or
 *    a UKI directory are in an ESP; before BLS, since systemd-boot's own entries are BLS
 *    entries too, and kernel-install would write over what grubby edited;
 * 3. BLS entries (/boot/loader/entries/NAME.conf) with grubby;
 * 4. /etc/kernel/cmdline with kernel-install and no loader found: a UKI or entries
 *    kernel-install makes, the same way as systemd-boot. */
static BootLoader boot_loader_detect(const Host *h, bool system_root) {
        if (host_path_exists(h, GRUB_DEFAULT) && tool_found(h, system_root, "usr/sbin/update-grub", "update-grub"))
                return BOOT_LOADER_GRUB;
        if ((system_root && on_path("bootctl") && bootctl_is_installed()) || systemd_boot_layout(h))
                return BOOT_LOADER_SYSTEMD_BOOT;
        if (bls_entries_exist(h) && tool_found(h, system_root, "usr/sbin/grubby", "grubby"))
                return BOOT_LOADER_BLS;
        if (host_path_exists(h, "etc/kernel/cmdline") &&
            tool_found(h, system_root, "usr/bin/kernel-install", "kernel-install"))
                return BOOT_LOADER_SYSTEMD_BOOT;
        return BOOT_LOADER_NONE;
}

/* The value of a simple GRUB_CMDLINE_LINUX= assignment in one line of a shell file:
 * "words", 'words' or a bare word, nothing a shell would expand. 1 with *ret set, 0 when
 * the line does not assign it, -EINVAL when it does in a way not understood here. */
static int parse_cmdline_linux(const char *line, char **ret) {
        static const char var[] = "GRUB_CMDLINE_LINUX=";
        const char *p = line + strspn(line, " \t"), *end;
        size_t n;

        if (!strstr(line, var))
                return 0;
        if (strncmp(p, "export ", 7) == 0)
                p += 7 + strspn(p + 7, " \t");
        if (strncmp(p, var, strlen(var)) != 0)
                return -EINVAL;
        p += strlen(var);
        if (*p == '"' || *p == '\'') {
                end = strchr(p + 1, *p);
                if (!end)
                        return -EINVAL;
                n = (size_t) (end - p - 1);
                p++;
                end++;
        } else {
                n = strcspn(p, " \t#");
                end = p + n;
        }
        /* Only a comment may follow; inside, nothing that expands or escapes. */
        end += strspn(end, " \t");
        if ((*end && *end != '#') || strcspn(p, "$`\\\"") < n)
                return -EINVAL;
        *ret = strndup(p, n);
        return *ret ? 1 : -ENOMEM;
}

/* Scans one file for GRUB_CMDLINE_LINUX, the last assignment winning as in the shell;
 * what cannot be parsed is said on stderr. */
static int scan_grub_file(const Host *h, const char *relpath, char **value) {
        _cleanup_free_ char *text = NULL;
        unsigned lineno = 0;

        if (host_read_file(h, relpath, &text) < 0)
                return 0;
        for (char *line = text, *next; line && *line; line = next) {
                char *v = NULL;
                int r;

                next = strchr(line, '\n');
                if (next)
                        *next++ = '\0';
                lineno++;
                r = parse_cmdline_linux(line, &v);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        fprintf(stderr, "lowlatctl: /%s:%u: GRUB_CMDLINE_LINUX is set in a way lowlatctl does not "
                                        "parse; what it adds is not left out of the line\n",
                                relpath, lineno);
                if (r > 0) {
                        free(*value);
                        *value = v;
                }
        }
        return 0;
}

static int compare_names(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

/* GRUB_CMDLINE_LINUX as update-grub would see it: /etc/default/grub, then the .cfg files of grub.d in
 * the order the shell's glob gives them (ours left out: it never sets it). */
static int grub_cmdline_linux(const Host *h, char **ret) {
        _cleanup_(closedirp) DIR *d = NULL;
        _cleanup_free_ char *value = NULL;
        char **names = NULL;
        size_t n = 0, allocated = 0;
        struct dirent *de;
        int r;

        r = scan_grub_file(h, GRUB_DEFAULT, &value);
        if (r >= 0 && host_opendir(h, GRUB_DROPIN_DIR, &d) >= 0)
                while (r >= 0 && (de = readdir(d))) {
                        size_t len = strlen(de->d_name);

                        if (len <= 4 || !streq(de->d_name + len - 4, ".cfg") || streq(de->d_name, GRUB_DROPIN_NAME))
                                continue;
                        r = array_grow(&names, &allocated, n + 1);
                        if (r >= 0)
                                names[n] = strdup_printf(GRUB_DROPIN_DIR "/%s", de->d_name);
                        r = r >= 0 && names[n] ? 0 : -ENOMEM;
                        n += r >= 0;
                }
        if (n > 0)
                qsort(names, n, sizeof(char *), compare_names);
        for (size_t i = 0; i < n; i++) {
                if (r >= 0)
                        r = scan_grub_file(h, names[i], &value);
                free(names[i]);
        }
        free(names);
        if (r >= 0)
                *ret = TAKE_PTR(value);
        return r;
}

/* The line less the words GRUB_CMDLINE_LINUX already adds (update-grub puts both on the
 * kernel's line: twice would be harmless for most, wrong for a few). */
static char *line_without(const char *line, const char *linux_words) {
        _cleanup_free_ char *copy = strdup(line);
        char *out = strdup(""), *save = NULL;

        if (!copy || !out)
                return mfree(out);
        for (char *w = strtok_r(copy, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
                char *more;

                if (linux_words && word_list_contains(linux_words, w))
                        continue;
                more = strdup_printf("%s%s%s", out, *out ? " " : "", w);
                free(out);
                if (!more)
                        return NULL;
                out = more;
        }
        return out;
}

/* update-grub after the drop-in changed, only on this system's own root: under another
 * tree it would rebuild this host's grub.cfg, not that tree's. It runs even when the file
 * was unchanged, since an earlier run may have failed after writing it. */
static int update_grub(BootReport *report) {
        if (!report->system_root) {
                report->update_grub = "not run: --root is not /";
                fprintf(stderr, "lowlatctl: update-grub not run: the root is %s, not this system's / (run it "
                                "inside that system)\n",
                        report->args->root);
                return EXIT_OK;
        }
        free(report->command);
        report->command = strdup("update-grub");
        /* Its output on stderr: stdout is the summary's (--json). */
        if (boot_run_command((char *[]) { (char *) "update-grub", NULL }) != 0) {
                report->update_grub = report->command_result = "failed";
                return EXIT_REFUSED;
        }
        report->update_grub = report->command_result = "ran";
        fprintf(stderr, "lowlatctl: update-grub ran; %s\n",
                report->args->action == BOOT_ACTION_REMOVE ? "the next boot is without lowlatctl's arguments"
                                                           : "the new line takes effect at the next boot");
        return EXIT_OK;
}

/* Whether the drop-in there is ours: 1, 0 (someone else's), -ENOENT (none), -errno. */
static int dropin_is_ours(const Host *h, char **ret_text) {
        _cleanup_free_ char *text = NULL;
        int r = host_read_file(h, GRUB_DROPIN, &text);

        if (r < 0)
                return r;
        r = strncmp(text, GRUB_DROPIN_HEADER, strlen(GRUB_DROPIN_HEADER)) == 0;
        if (ret_text)
                *ret_text = TAKE_PTR(text);
        return r;
}

/* text into the drop-in: a temporary file beside it, then rename(), so that update-grub
 * never sources half of one. */
static int dropin_write(const Host *h, const char *text) {
        _cleanup_close_ int parent = -1, dir = -1, fd = -1;
        _cleanup_free_ char *tmp = strdup_printf(".#" GRUB_DROPIN_NAME ".%d", (int) getpid());
        size_t len = strlen(text);

        if (!tmp)
                return -ENOMEM;
        parent = host_open_file(h, "etc/default", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (parent < 0)
                return parent;
        if (mkdirat(parent, "grub.d", 0755) < 0 && errno != EEXIST)
                return -errno;
        dir = host_open_file(h, GRUB_DROPIN_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dir < 0)
                return dir;
        fd = openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (fd < 0)
                return -errno;
        /* 0644 whatever the umask: update-grub reads it, so may anyone. */
        if (fchmod(fd, 0644) < 0 || write(fd, text, len) != (ssize_t) len || fsync(fd) < 0 ||
            renameat(dir, tmp, dir, GRUB_DROPIN_NAME) < 0) {
                int r = errno ? -errno : -EIO;
                (void) unlinkat(dir, tmp, 0);
                return r;
        }
        return 0;
}

static char *dropin_text(const char *line) {
        return strdup_printf(GRUB_DROPIN_HEADER ": the kernel command line lowlatd's configuration needs.\n"
                             "# lowlatctl boot --remove deletes it (then runs update-grub); lowlatctl boot --apply\n"
                             "# writes it anew, so change the configuration rather than this file.\n"
                             "GRUB_CMDLINE_LINUX_DEFAULT=\"%s\"\n",
                             line);
}

/* After update-grub failed: the drop-in as it was before (old: its text, NULL: there was
 * none), so that the file and grub.cfg do not disagree. */
static void dropin_restore(const Host *h, BootReport *report, const char *old) {
        _cleanup_close_ int dir = host_open_file(h, GRUB_DROPIN_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        int r;

        if (old)
                r = dropin_write(h, old);
        else
                r = dir < 0 ? dir : unlinkat(dir, GRUB_DROPIN_NAME, 0) < 0 ? -errno : 0;
        report->result = r < 0 ? "left" : "restored";
        if (r < 0)
                fprintf(stderr, "lowlatctl: cannot put /" GRUB_DROPIN " back as it was: %s\n", strerror(-r));
        else
                fprintf(stderr, "lowlatctl: /" GRUB_DROPIN " put back as it was before (%s)\n",
                        old ? "the previous text" : "none");
}

static int boot_apply_grub(const Host *h, BootReport *report) {
        _cleanup_free_ char *linux_words = NULL, *line = NULL, *text = NULL, *old = NULL;
        int r;

        r = grub_cmdline_linux(h, &linux_words);
        if (r < 0)
                return r;
        line = line_without(report->line, linux_words);
        text = line ? dropin_text(line) : NULL;
        if (!text)
                return -ENOMEM;
        r = dropin_is_ours(h, &old);
        if (r == 0) {
                fprintf(stderr, "lowlatctl: /" GRUB_DROPIN " was not written by lowlatctl: refusing to replace it\n");
                return EXIT_REFUSED;
        }
        if (r > 0 && streq(old, text)) {
                report->result = "unchanged";
                fprintf(stderr, "lowlatctl: /" GRUB_DROPIN " unchanged: it already holds this line\n");
                r = update_grub(report);
                if (r == EXIT_REFUSED)
                        fprintf(stderr, "lowlatctl: grub.cfg may not carry that line yet: run update-grub by hand "
                                        "once it works\n");
                return r;
        }
        r = dropin_write(h, text);
        if (r < 0) {
                fprintf(stderr, "lowlatctl: cannot write /" GRUB_DROPIN " under %s: %s\n",
                        report->args->root ?: "/", strerror(-r));
                return r == -ENOMEM ? r : EXIT_REFUSED;
        }
        report->result = "written";
        fprintf(stderr, "lowlatctl: wrote /" GRUB_DROPIN "\n");
        r = update_grub(report);
        if (r == EXIT_REFUSED)
                dropin_restore(h, report, old);
        return r;
}

static int boot_apply(const Host *h, BootReport *report) {
        if (!report->isolates) {
                fprintf(stderr, "lowlatctl: the configuration isolates no CPU: there is no boot line to write\n");
                return EXIT_REFUSED;
        }
        switch (report->loader) {
        case BOOT_LOADER_GRUB:
                return boot_apply_grub(h, report);
        case BOOT_LOADER_BLS:
                return boot_apply_bls(h, report);
        case BOOT_LOADER_SYSTEMD_BOOT:
                return boot_apply_kernel_cmdline(h, report);
        default:
                fprintf(stderr, "lowlatctl: --apply on this host: no boot loader found (none of: GRUB with "
                                "/etc/default/grub and update-grub; systemd-boot or a UKI; BLS entries in "
                                "/boot/loader/entries with grubby; /etc/kernel/cmdline with kernel-install). Add "
                                "these arguments to the kernel command line by hand:\n  %s\n",
                        report->lowlatd_args);
                return EXIT_REFUSED;
        }
}

/* What --apply recorded in the state file, taken back with the loader it was written for
 * (whatever is detected now). 0 with nothing recorded, or the exit status. */
static int boot_remove_recorded(const Host *h, BootReport *report) {
        _cleanup_(boot_arg_state_done) BootArgState state = {};
        int r = boot_arg_state_read(h, &state);

        if (r == 0)
                return 0;
        if (r < 0) {
                fprintf(stderr, "lowlatctl: /" BOOT_STATE ": %s: refusing to guess what --apply added\n",
                        strerror(-r));
                return r == -ENOMEM ? r : EXIT_REFUSED;
        }
        report->loader = state.loader;
        if (state.loader == BOOT_LOADER_BLS)
                return boot_remove_bls(h, report, &state);
        if (state.loader == BOOT_LOADER_SYSTEMD_BOOT)
                return boot_remove_kernel_cmdline(h, report, &state);
        fprintf(stderr, "lowlatctl: /" BOOT_STATE " names %s, which keeps no state\n",
                boot_loader_to_string(state.loader));
        return EXIT_REFUSED;
}

/* Deletes exactly what --apply wrote: what the state file records (grubby,
 * /etc/kernel/cmdline), else the drop-in, and only one with lowlatctl's header. */
static int boot_remove(const Host *h, BootReport *report) {
        _cleanup_close_ int dir = -1;
        _cleanup_free_ char *text = NULL;
        int r = boot_remove_recorded(h, report);

        if (r != 0 || report->result)
                return r;
        r = dropin_is_ours(h, &text);
        if (r == -ENOENT) {
                report->result = "absent";
                fprintf(stderr, "lowlatctl: /" GRUB_DROPIN " is not there: nothing to remove\n");
                return EXIT_OK;
        }
        if (r == 0) {
                fprintf(stderr, "lowlatctl: /" GRUB_DROPIN " was not written by lowlatctl (it lacks the line \""
                                GRUB_DROPIN_HEADER "\"): someone else wrote it; refusing to remove it\n");
                return EXIT_REFUSED;
        }
        dir = r > 0 ? host_open_file(h, GRUB_DROPIN_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : r;
        if (dir < 0 || unlinkat(dir, GRUB_DROPIN_NAME, 0) < 0) {
                fprintf(stderr, "lowlatctl: cannot remove /" GRUB_DROPIN ": %s\n", strerror(dir < 0 ? -dir : errno));
                return EXIT_REFUSED;
        }
        report->result = "removed";
        fprintf(stderr, "lowlatctl: removed /" GRUB_DROPIN "\n");
        if (report->loader != BOOT_LOADER_GRUB) {
                report->update_grub = "not run: no update-grub";
                return EXIT_OK;
        }
        r = update_grub(report);
        if (r == EXIT_REFUSED)
                dropin_restore(h, report, text);
        return r;
}

static void boot_print_text(const BootReport *r) {
        if (!r->isolates)
                printf("The configuration isolates no CPU: there is no boot line to write.\n");
        printf("Needed:      %s\n", r->params ?: "nothing: the running command line has what the configuration "
                                                 "needs");
        printf("Line:        GRUB_CMDLINE_LINUX_DEFAULT=\"%s\"\n", r->line);
        printf("Arguments:   %s\n", r->lowlatd_args);
        printf("Boot loader: %s\n", boot_loader_to_string(r->loader));
        printf("--apply:     %s\n", r->isolates ? boot_loader_apply_table[r->loader] : "refuse: nothing to write");
        if (r->result)
                printf("Result:      %s\n", r->result);
        if (r->command)
                printf("Command:     %s (%s)\n", r->command, r->command_result ?: "?");
}

static void boot_print_json(const BootReport *r) {
        fputs("{", stdout);
        json_print_member(stdout, "loader", boot_loader_to_string(r->loader), true);
        fputs(",\"needed\":", stdout);
        if (r->params)
                json_print_string(stdout, r->params);
        else
                fputs("null", stdout);
        json_print_member(stdout, "line", r->line, false);
        printf(",\"isolates\":%s", r->isolates ? "true" : "false");
        json_print_member(stdout, "apply", r->isolates ? boot_loader_apply_table[r->loader] : "refuse: nothing to write",
                          false);
        if (r->result)
                json_print_member(stdout, "result", r->result, false);
        if (r->update_grub)
                json_print_member(stdout, "update_grub", r->update_grub, false);
        json_print_member(stdout, "arguments", r->lowlatd_args, false);
        if (r->command) {
                json_print_member(stdout, "command", r->command, false);
                json_print_member(stdout, "command_result", r->command_result ?: "", false);
        }
        fputs("}\n", stdout);
}

/* The deliberate rule on a lone housekeeping CPU (lowlatctl(1), boot), and a posture that
 * isolates every CPU: audit_boot_refusal(), which lowlatd's Condition asks too. --remove
 * is never refused for it: taking back what was written does not depend on the line. */
static int boot_check_refusal(const Posture *p) {
        _cleanup_free_ char *reason = NULL;
        int r = audit_boot_refusal(p, &reason);

        if (r <= 0)
                return r;
        fprintf(stderr, "lowlatctl: %s; refusing\n", reason);
        return EXIT_REFUSED;
}

/* The posture to build the line for; 0, or the exit status after saying why. */
static int boot_load(const BootArguments *args, const Host *h, Posture **ret) {
        _cleanup_error_list_ ErrorList errors = ERROR_LIST_EMPTY;
        int r = posture_load(args->config_path, h, ret, &errors);

        for (size_t i = 0; i < errors.n; i++)
                fprintf(stderr, "lowlatctl: %s\n", errors.items[i]);
        if (r < 0) {
                fprintf(stderr, "lowlatctl: %s: refusing to build a boot line from this configuration\n",
                        args->config_path);
                return r == -ENOMEM ? r : EXIT_REFUSED;
        }
        return 0;
}

int verb_boot_run(const BootArguments *args) {
        _cleanup_(host_freep) Host *h = NULL;
        _cleanup_(posture_freep) Posture *posture = NULL;
        _cleanup_(boot_report_done) BootReport report = { .args = args };
        _cleanup_free_ char *real = NULL;
        int r;

        r = host_open(args->root ?: "/", &h);
        if (r < 0) {
                fprintf(stderr, "lowlatctl: cannot open %s: %s\n", args->root ?: "/", strerror(-r));
                return EXIT_UNKNOWN;
        }
        real = realpath(args->root ?: "/", NULL);
        report.system_root = real && streq(real, "/");
        r = boot_load(args, h, &posture);
        /* posture_load() refuses a posture that isolates every CPU too; checked once more
         * with the lone-housekeeping rule, as one function. */
        if (r == 0 && args->action != BOOT_ACTION_REMOVE)
                r = boot_check_refusal(posture);
        if (r != 0)
                return r;
        r = audit_boot_line(h, posture, &report.line, &report.params);
        if (r >= 0)
                r = audit_boot_args(h, posture, &report.lowlatd_args);
        if (r == -ENODATA) {
                fprintf(stderr, "lowlatctl: cannot read proc/cmdline under %s: the line keeps the running one's "
                                "arguments, so it cannot be built without it\n",
                        args->root ?: "/");
                return EXIT_UNKNOWN;
        }
        if (r < 0)
                return r;
        report.isolates = !cpuset_is_empty(&posture->isolated);
        report.loader = boot_loader_detect(h, report.system_root);
        if (args->action == BOOT_ACTION_APPLY)
                r = boot_apply(h, &report);
        else if (args->action == BOOT_ACTION_REMOVE)
                r = boot_remove(h, &report);
        else
                r = EXIT_OK;
        if (r < 0)
                return r;
        if (args->json)
                boot_print_json(&report);
        else
                boot_print_text(&report);
        return finish_output(r);
}
