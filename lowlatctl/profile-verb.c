/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lowlatctl profile [list] and lowlatctl profile show NAME: the profiles a configuration
 * can name with [daemon] profile (lib/config/profiles.h), read from the same directories
 * lowlatd reads them from; no daemon needed. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "config/config.h"
#include "config/profiles.h"
#include "basic/array.h"
#include "basic/cells.h"
#include "basic/util.h"

typedef struct ProfileRow {
        char *name;
        char *file;
        bool local;     /* /etc/lowlatd/profiles (beside the configuration) */
        bool replaces;  /* a local one that hides a shipped one of the same name */
} ProfileRow;

typedef struct ProfileRows {
        ProfileRow *rows;
        size_t n, allocated;
} ProfileRows;

static void profile_rows_done(ProfileRows *l) {
        for (size_t i = 0; i < l->n; i++) {
                free(l->rows[i].name);
                free(l->rows[i].file);
        }
        free(l->rows);
        *l = (ProfileRows) {};
}

static ProfileRow *profile_rows_find(ProfileRows *l, const char *name) {
        for (size_t i = 0; i < l->n; i++)
                if (streq(l->rows[i].name, name))
                        return &l->rows[i];
        return NULL;
}

/* Every NAME.conf of dir whose NAME is a profile name; a missing directory has none. */
static int profile_rows_add_dir(ProfileRows *l, const char *dir, bool local) {
        struct dirent **entries = NULL;
        int n = scandir(dir, &entries, NULL, alphasort), r = 0;

        if (n < 0)
                return errno == ENOENT || errno == ENOTDIR ? 0 : -errno;
        for (int i = 0; i < n; i++) {
                const char *d = entries[i]->d_name;
                size_t len = strlen(d);
                _cleanup_free_ char *name = len > 5 && streq(d + len - 5, ".conf") ? strndup(d, len - 5) : NULL;
                ProfileRow *existing;

                if (r >= 0 && name && config_profile_name_is_valid(name)) {
                        existing = profile_rows_find(l, name);
                        if (existing) /* the local one was listed first: it replaces this one */
                                existing->replaces = true;
                        else if (array_grow(&l->rows, &l->allocated, l->n + 1) < 0)
                                r = -ENOMEM;
                        else {
                                l->rows[l->n] = (ProfileRow) { .name = TAKE_PTR(name),
                                                               .file = strdup_printf("%s/%s", dir, d),
                                                               .local = local };
                                if (!l->rows[l->n].file) {
                                        free(l->rows[l->n].name);
                                        r = -ENOMEM;
                                } else
                                        l->n++;
                        }
                }
                free(entries[i]);
        }
        free(entries);
        return r;
}

static int compare_rows(const void *a, const void *b) {
        return strcmp(((const ProfileRow *) a)->name, ((const ProfileRow *) b)->name);
}

static const char *row_source(const ProfileRow *r) {
        return !r->local ? "shipped" : r->replaces ? "local, replaces the shipped one" : "local";
}

static int profile_list(const char *config_path, bool json, bool legend) {
        _cleanup_free_ char *user_dir = config_profile_user_dir(config_path);
        _cleanup_(profile_rows_done) ProfileRows l = {};
        const char *header[] = { "NAME", "SOURCE", "FILE" };
        size_t width[3] = {};
        int r;

        if (!user_dir)
                return -ENOMEM;
        r = profile_rows_add_dir(&l, user_dir, true);
        if (r >= 0)
                r = profile_rows_add_dir(&l, config_profiles_shipped_dir(), false);
        if (r < 0) {
                fprintf(stderr, "lowlatctl: cannot list the profiles: %s\n", strerror(-r));
                return EXIT_UNKNOWN;
        }
        qsort(l.rows, l.n, sizeof(ProfileRow), compare_rows);

        if (json) {
                fputc('[', stdout);
                for (size_t i = 0; i < l.n; i++) {
                        fputs(i ? ",{" : "{", stdout);
                        json_print_member(stdout, "name", l.rows[i].name, true);
                        json_print_member(stdout, "source", l.rows[i].local ? "local" : "shipped", false);
                        json_print_member(stdout, "file", l.rows[i].file, false);
                        printf(",\"replaces_shipped\":%s}", l.rows[i].replaces ? "true" : "false");
                }
                fputs("]\n", stdout);
                return finish_output(EXIT_OK);
        }
        if (legend)
                table_measure_row(width, header, 3);
        for (size_t i = 0; i < l.n; i++)
                table_measure_row(width, (const char *[]) { l.rows[i].name, row_source(&l.rows[i]), l.rows[i].file },
                                  3);
        if (legend)
                table_print_row(stdout, width, header, 3, 0);
        for (size_t i = 0; i < l.n; i++)
                table_print_row(stdout, width,
                                (const char *[]) { l.rows[i].name, row_source(&l.rows[i]), l.rows[i].file }, 3, 0);
        if (legend)
                printf("\n%zu profile%s (in %s and %s). Name one with [daemon] profile = NAME.\n", l.n,
                       l.n == 1 ? "" : "s", user_dir, config_profiles_shipped_dir());
        return finish_output(EXIT_OK);
}

/* The whole file; a profile is a configuration file, small by nature. */
static int read_text(const char *path, char **ret) {
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        char *text = NULL;
        size_t size = 0;

        if (!f)
                return -errno;
        if (getdelim(&text, &size, '\0', f) < 0 && !feof(f)) {
                free(text);
                return -EIO;
        }
        *ret = text ?: strdup("");
        return *ret ? 0 : -ENOMEM;
}

static int profile_show(const char *config_path, const char *name) {
        _cleanup_free_ char *file = NULL, *text = NULL, *user_dir = NULL;
        int r;

        r = config_profile_find(config_path, name, &file);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                user_dir = config_profile_user_dir(config_path);
                if (r == -EINVAL)
                        fprintf(stderr, "lowlatctl: '%s' is not a profile name (letters, digits, '-', '_' and '.')\n",
                                name);
                else
                        fprintf(stderr, "lowlatctl: no profile '%s' (looked for %s.conf in %s and %s); see "
                                        "lowlatctl profile list\n",
                                name, name, user_dir ?: "?", config_profiles_shipped_dir());
                return EXIT_REFUSED;
        }
        r = read_text(file, &text);
        if (r < 0) {
                fprintf(stderr, "lowlatctl: cannot read %s: %s\n", file, strerror(-r));
                return EXIT_UNKNOWN;
        }
        printf("# %s\n", file);
        fputs(text, stdout);
        if (*text && text[strlen(text) - 1] != '\n')
                fputc('\n', stdout);
        return finish_output(EXIT_OK);
}

int verb_cat_config_run(const char *config_path) {
        _cleanup_error_list_ ErrorList errors = ERROR_LIST_EMPTY;
        _cleanup_config_ Config *c = NULL;
        int r;

        r = config_load(config_path, &c, &errors);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                for (size_t i = 0; i < errors.n; i++) {
                        fputs("lowlatctl: ", stderr);
                        print_escaped(stderr, errors.items[i]);
                        fputc('\n', stderr);
                }
                if (errors.n == 0)
                        fprintf(stderr, "lowlatctl: %s: %s\n", config_path, strerror(-r));
                fprintf(stderr, "lowlatctl: %s: the configuration is not valid, so nothing is in force from it\n",
                        config_path);
                return EXIT_REFUSED;
        }
        config_print_merged(stdout, c);
        return finish_output(EXIT_OK);
}

int verb_profile_run(const char *config_path, char *const *words, size_t n_words, bool json, bool legend) {
        const char *sub = n_words > 0 ? words[0] : "list";

        if (streq(sub, "list") && n_words <= 1)
                return profile_list(config_path, json, legend);
        if (streq(sub, "show") && n_words == 2 && !json)
                return profile_show(config_path, words[1]);
        if (streq(sub, "show") && json)
                fprintf(stderr, "lowlatctl: profile show prints the file itself; --json applies to profile list\n");
        else if (streq(sub, "show"))
                fprintf(stderr, "lowlatctl: profile show takes one profile name; see --help\n");
        else if (streq(sub, "list"))
                fprintf(stderr, "lowlatctl: profile list takes no argument; see --help\n");
        else
                fprintf(stderr, "lowlatctl: profile takes 'list' or 'show NAME', not '%s'; see --help\n", sub);
        return EXIT_USAGE;
}
