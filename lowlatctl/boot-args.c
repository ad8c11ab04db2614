/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The loaders that keep the kernel's arguments as a list of words (grubby's BLS entries,
 * /etc/kernel/cmdline): which words lowlatctl added or replaced, kept in a state file so
 * that --remove takes back exactly those and never an argument the administrator had; the
 * words edited in place; the loader's commands run. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "boot.h"
#include "basic/array.h"
#include "basic/util.h"

#define BOOT_STATE_HEADER "# Written by lowlatctl boot --apply"
#define BLANKS " \t\n"

void boot_arg_state_done(BootArgState *s) {
        for (size_t i = 0; i < s->n_changes; i++) {
                free(s->changes[i].old);
                free(s->changes[i].new);
        }
        free(s->changes);
        free(s->created);
        *s = (BootArgState) {};
}

static int state_add_change(BootArgState *s, const char *old, size_t old_len, const char *new, size_t new_len) {
        size_t allocated = s->n_changes;
        BootArgChange c = {
                .old = old ? strndup(old, old_len) : NULL,
                .new = strndup(new, new_len),
        };

        if (!c.new || (old && !c.old) || array_grow(&s->changes, &allocated, s->n_changes + 1) < 0) {
                free(c.old);
                free(c.new);
                return -ENOMEM;
        }
        s->changes[s->n_changes++] = c;
        return 0;
}

/* One line of the state file: "loader NAME", "add WORD", "replace OLD NEW", "created TEXT". */
static int state_parse_line(BootArgState *s, const char *line) {
        const char *arg = strchr(line, ' ');
        size_t n;

        if (!arg)
                return -EBADMSG;
        arg++;
        if (strncmp(line, "loader ", 7) == 0) {
                s->loader = boot_loader_from_string(arg);
                return s->loader < 0 ? -EBADMSG : 0;
        }
        if (strncmp(line, "created ", 8) == 0) {
                free(s->created);
                s->created = strdup(arg);
                return s->created ? 0 : -ENOMEM;
        }
        n = strcspn(arg, " ");
        if (n == 0)
                return -EBADMSG;
        if (strncmp(line, "add ", 4) == 0 && !arg[n])
                return state_add_change(s, NULL, 0, arg, n);
        if (strncmp(line, "replace ", 8) == 0 && arg[n] && arg[n + 1] && !strchr(arg + n + 1, ' '))
                return state_add_change(s, arg, n, arg + n + 1, strlen(arg + n + 1));
        return -EBADMSG;
}

int boot_arg_state_add(BootArgState *s, const char *old, const char *new) {
        return state_add_change(s, old, old ? strlen(old) : 0, new, strlen(new));
}

int boot_arg_state_read(const Host *h, BootArgState *ret) {
        _cleanup_free_ char *text = NULL;
        BootArgState s = { .loader = _BOOT_LOADER_INVALID };
        int r = host_read_file(h, BOOT_STATE, &text);

        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        if (strncmp(text, BOOT_STATE_HEADER, strlen(BOOT_STATE_HEADER)) != 0)
                return -EBADMSG;
        for (char *line = text, *next; r >= 0 && line && *line; line = next) {
                next = strchr(line, '\n');
                if (next)
                        *next++ = '\0';
                if (*line != '#')
                        r = state_parse_line(&s, line);
        }
        if (r >= 0 && s.loader < 0)
                r = -EBADMSG;
        if (r < 0) {
                boot_arg_state_done(&s);
                return r;
        }
        *ret = s;
        return 1;
}

int boot_arg_state_write(const Host *h, const BootArgState *s) {
        _cleanup_close_ int parent = host_open_file(h, "var/lib", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        _cleanup_free_ char *text = strdup_printf(BOOT_STATE_HEADER ": what it changed in the boot loader's kernel "
                                                                    "arguments,\n# so that lowlatctl boot --remove "
                                                                    "takes back exactly that. Do not edit.\nloader %s\n",
                                                  boot_loader_to_string(s->loader));

        if (parent < 0)
                return parent;
        if (mkdirat(parent, "lowlatd", 0755) < 0 && errno != EEXIST)
                return -errno;
        for (size_t i = 0; text && i < s->n_changes; i++) {
                char *more = s->changes[i].old
                                     ? strdup_printf("%sreplace %s %s\n", text, s->changes[i].old, s->changes[i].new)
                                     : strdup_printf("%sadd %s\n", text, s->changes[i].new);
                free(text);
                text = more;
        }
        if (text && s->created) {
                char *more = strdup_printf("%screated %s\n", text, s->created);
                free(text);
                text = more;
        }
        if (!text)
                return -ENOMEM;
        return boot_file_replace(h, BOOT_STATE_DIR, BOOT_STATE_NAME, text, strlen(text), 0644);
}

int boot_arg_state_remove(const Host *h) {
        _cleanup_close_ int dir = host_open_file(h, BOOT_STATE_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        if (dir < 0)
                return dir == -ENOENT ? 0 : dir;
        return unlinkat(dir, BOOT_STATE_NAME, 0) < 0 && errno != ENOENT ? -errno : 0;
}

/* The next word of text at or after *p: its start and length; NULL at the end. */
static const char *next_word(const char **p, size_t *ret_len) {
        const char *w = *p + strspn(*p, BLANKS);

        if (!*w)
                return NULL;
        *ret_len = strcspn(w, BLANKS);
        *p = w + *ret_len;
        return w;
}

static size_t param_name_len(const char *word, size_t len) {
        const char *eq = memchr(word, '=', len);
        return eq ? (size_t) (eq - word) : len;
}

static const char *find_word(const char *text, const char *word) {
        size_t n, len = strlen(word);

        for (const char *p = text, *w; (w = next_word(&p, &n));)
                if (n == len && memcmp(w, word, n) == 0)
                        return w;
        return NULL;
}

bool boot_words_contain(const char *text, const char *word) {
        return find_word(text, word) != NULL;
}

size_t boot_words_count_param(const char *text, const char *word, const char **ret_first, size_t *ret_len) {
        size_t n, count = 0, name = param_name_len(word, strlen(word));

        for (const char *p = text, *w; (w = next_word(&p, &n));)
                if (param_name_len(w, n) == name && memcmp(w, word, name) == 0 && count++ == 0) {
                        *ret_first = w;
                        *ret_len = n;
                }
        return count;
}

char *boot_words_edit(const char *text, const char *old, const char *new) {
        const char *at, *end;
        size_t cut;

        if (!old) {
                /* After the last word, before the blanks (a newline) that end the text. */
                end = text + strlen(text);
                while (end > text && strchr(BLANKS, end[-1]))
                        end--;
                return strdup_printf("%.*s%s%s%s", (int) (end - text), text, end > text ? " " : "", new, end);
        }
        at = find_word(text, old);
        if (!at)
                return NULL;
        end = at + strlen(old);
        if (new)
                return strdup_printf("%.*s%s%s", (int) (at - text), text, new, end);
        /* Removed with the one blank before it (or after it, for the first word). */
        cut = at > text && strchr(BLANKS, at[-1]) ? 1 : 0;
        if (!cut && *end && strchr(" \t", *end))
                end++;
        return strdup_printf("%.*s%s", (int) (at - text - cut), text, end);
}

int boot_args_undo(const char *text, const BootArgState *state, char **ret_text, size_t *ret_missing) {
        _cleanup_free_ char *now = strdup(text);
        size_t missing = 0;

        /* Last change first, so that each is undone on the text it was made to. */
        for (size_t i = state->n_changes; now && i-- > 0;) {
                const BootArgChange *c = &state->changes[i];
                char *undone;

                if (!boot_words_contain(now, c->new)) {
                        missing++;
                        continue;
                }
                undone = boot_words_edit(now, c->new, c->old);
                free(now);
                now = undone;
        }
        if (!now)
                return -ENOMEM;
        *ret_text = TAKE_PTR(now);
        *ret_missing = missing;
        return 0;
}

int boot_args_plan(const char *admin_text, const char *wanted, BootArgState *ret) {
        BootArgState plan = {};
        size_t n;
        int r = 0;

        for (const char *p = wanted, *w; r >= 0 && (w = next_word(&p, &n));) {
                _cleanup_free_ char *word = strndup(w, n);
                const char *first = NULL;
                size_t first_len = 0, count;

                if (!word) {
                        r = -ENOMEM;
                        break;
                }
                if (boot_words_contain(admin_text, word))
                        continue; /* the administrator's already: not lowlatd's to add or take */
                count = boot_words_count_param(admin_text, word, &first, &first_len);
                if (count > 1) {
                        fprintf(stderr, "lowlatctl: the kernel arguments give %.*s %zu times: lowlatctl does not "
                                        "guess which one to replace with %s; leave one, then run --apply again\n",
                                (int) param_name_len(word, n), word, count, word);
                        r = EXIT_REFUSED;
                        break;
                }
                r = state_add_change(&plan, count ? first : NULL, first_len, word, n);
        }
        if (r != 0) {
                boot_arg_state_done(&plan);
                return r;
        }
        *ret = plan;
        return 0;
}

char *boot_command_string(char *const argv[]) {
        char *s = strdup("");

        for (size_t i = 0; s && argv[i]; i++) {
                bool quote = !*argv[i] || strcspn(argv[i], " \t\n\"'$`\\*?;&|<>()") < strlen(argv[i]);
                char *more = strdup_printf("%s%s%s%s%s", s, i ? " " : "", quote ? "'" : "", argv[i], quote ? "'" : "");
                free(s);
                s = more;
        }
        return s;
}

int boot_run_command(char *const argv[]) {
        pid_t pid;
        int status;

        fflush(stdout);
        pid = fork();
        if (pid < 0) {
                fprintf(stderr, "lowlatctl: cannot run %s: %m\n", argv[0]);
                return 1;
        }
        if (pid == 0) {
                (void) dup2(STDERR_FILENO, STDOUT_FILENO);
                execvp(argv[0], argv);
                fprintf(stderr, "lowlatctl: cannot run %s: %m\n", argv[0]);
                _exit(127);
        }
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return 1;
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
                return 0;
        fprintf(stderr, "lowlatctl: %s failed (%s %d)\n", argv[0], WIFEXITED(status) ? "exit status" : "signal",
                WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
        return 1;
}

int boot_file_replace(const Host *h, const char *dir_relpath, const char *name, const char *text, size_t len,
                      mode_t mode) {
        _cleanup_close_ int dir = host_open_file(h, dir_relpath, O_RDONLY | O_DIRECTORY | O_CLOEXEC), fd = -1;
        _cleanup_free_ char *tmp = strdup_printf(".#%s.%d", name, (int) getpid());

        if (!tmp)
                return -ENOMEM;
        if (dir < 0)
                return dir;
        fd = openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
        if (fd < 0)
                return -errno;
        /* The mode asked for whatever the umask: the loader's tools read it. */
        errno = 0;
        if (fchmod(fd, mode) < 0 || write(fd, text, len) != (ssize_t) len || fsync(fd) < 0 ||
            renameat(dir, tmp, dir, name) < 0) {
                int r = errno ? -errno : -EIO;
                (void) unlinkat(dir, tmp, 0);
                return r;
        }
        return 0;
}

int boot_file_snapshot(const Host *h, const char *dir, const char *name, BootFileSnapshot *ret) {
        _cleanup_free_ char *path = strdup_printf("%s/%s", dir, name);
        BootFileSnapshot s = { .dir = strdup(dir), .name = strdup(name), .mode = 0644 };
        _cleanup_close_ int fd = -1;
        struct stat st;
        int r;

        if (!path || !s.dir || !s.name) {
                boot_file_snapshot_done(&s);
                return -ENOMEM;
        }
        r = host_read_file_len(h, path, &s.text, &s.len);
        if (r >= 0) {
                fd = host_open_file(h, path, O_RDONLY | O_CLOEXEC);
                if (fd >= 0 && fstat(fd, &st) >= 0)
                        s.mode = st.st_mode & 07777;
        }
        if (r < 0 && r != -ENOENT) {
                boot_file_snapshot_done(&s);
                return r;
        }
        *ret = s;
        return 0;
}

int boot_file_restore(const Host *h, const BootFileSnapshot *s) {
        _cleanup_free_ char *path = strdup_printf("%s/%s", s->dir, s->name), *now = NULL;
        _cleanup_close_ int dir = -1;
        size_t len = 0;
        int r;

        if (!path)
                return -ENOMEM;
        r = host_read_file_len(h, path, &now, &len);
        if (r < 0 && r != -ENOENT)
                return r;
        if (s->text && r >= 0 && len == s->len && memcmp(now, s->text, len) == 0)
                return 0;
        if (s->text)
                return boot_file_replace(h, s->dir, s->name, s->text, s->len, s->mode);
        if (r == -ENOENT)
                return 0;
        dir = host_open_file(h, s->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dir < 0)
                return dir;
        return unlinkat(dir, s->name, 0) < 0 ? -errno : 0;
}

void boot_file_snapshot_done(BootFileSnapshot *s) {
        free(s->dir);
        free(s->name);
        free(s->text);
        *s = (BootFileSnapshot) {};
}
