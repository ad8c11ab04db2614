/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the unit tests' fake host trees share: making parent directories and removing a
 * subtree. Each test keeps its own fixture; these are only the file system chores. */
#pragma once

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
