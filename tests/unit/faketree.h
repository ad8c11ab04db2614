/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the unit tests' fake host trees share: making parent directories and removing a
 * subtree. Each test keeps its own fixture; these are only the file system chores. */
#pragma once

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdbool.h>
#include <sys/stat.h>

/* mkdir -p of the directory that will hold path; aborts on failure (a broken fixture). */
static inline void make_parents(const char *path) {
        char *copy = strdup(path);

        if (!copy)
                abort();
        for (char *p = copy + 1; *p; p++)
                if (*p == '/') {
                        *p = '\0';
                        if (mkdir(copy, 0755) < 0 && errno != EEXIST)
                                abort();
                        *p = '/';
                }
        free(copy);
}

static inline int faketree_remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        (void) st;
        (void) flag;
        (void) ftw;
        return remove(path);
}

/* rm -rf path; what cannot be removed stays (a test's temporary tree). */
static inline void faketree_remove(const char *path) {
        if (path)
                (void) nftw(path, faketree_remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

#include "config.h"
#include "errorlist.h"
#include "host.h"
#include "posture.h"

/* Opens the tree at root and builds the posture of config_text (parsed as name) on it,
 * printing any errors as TAP comments. Returns true with *ret_host and *ret_posture set
 * (the caller frees them), false when the fixture cannot start. */
static inline bool faketree_posture(const char *root, const char *name, const char *config_text, Host **ret_host,
                                    Posture **ret_posture) {
        _cleanup_error_list_ ErrorList errors = ERROR_LIST_EMPTY;
        _cleanup_config_ Config *c = config_new();
        HostCpus cpus = {};
        int r;

        *ret_posture = NULL;
        r = host_open(root, ret_host);
        if (r >= 0)
                r = host_read_cpus(*ret_host, &cpus);
        if (r >= 0 && c && config_parse_string(c, name, config_text, &errors) >= 0) {
                config_validate(c, &errors);
                if (errors.n == 0)
                        r = posture_build(&c, &cpus, ret_posture, &errors);
        }
        host_cpus_done(&cpus);
        for (size_t i = 0; i < errors.n; i++)
                printf("#   error: %s\n", errors.items[i]);
        if (r < 0 || !*ret_posture) {
                printf("# fixture does not start: %s\n", strerror(r < 0 ? -r : EINVAL));
                return false;
        }
        return true;
}
