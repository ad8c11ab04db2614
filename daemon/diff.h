/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A dry run of a reload (lowlatctl diff, Diff() on the bus): the posture another
 * configuration would give, planned beside the one in force and compared with it and with
 * the host, with nothing applied, watched or recorded. */
#pragma once

#include "manager.h"

typedef enum DiffChange {
        DIFF_ADDED,   /* a setting the new configuration asks for and this one does not */
        DIFF_REMOVED, /* one it no longer asks for: reload restores it (or leaves it) */
        DIFF_CHANGED, /* one whose desired value changes */
        _DIFF_CHANGE_MAX,
        _DIFF_CHANGE_INVALID = -EINVAL,
} DiffChange;

DECLARE_STRING_TABLE_LOOKUP(diff_change, DiffChange);

/* What a reload would do to the host for one row. */
typedef enum DiffEffect {
        DIFF_WRITE,       /* the host differs from the new value: it would be written */
        DIFF_NONE,        /* the host already has it (or, removed: has its original) */
        DIFF_RESTORE,     /* removed: the value lowlatd found is written back */
        DIFF_LEAVE,       /* removed: no original on file, the host is left as it is */
        DIFF_REFUSED,     /* the host refuses it (unmovable, unsupported); details in why */
        DIFF_UNREADABLE,  /* cannot be read now; why says why */
        _DIFF_EFFECT_MAX,
        _DIFF_EFFECT_INVALID = -EINVAL,
} DiffEffect;

DECLARE_STRING_TABLE_LOOKUP(diff_effect, DiffEffect);

typedef struct DiffRow {
        DiffChange change;
        DiffEffect effect;
        SettingKind kind;
        char *object;
        char *was;  /* the desired value in force, NULL when added */
        char *will; /* the desired value after, NULL when removed */
        char *now;  /* the host's value (removed: as last seen), NULL when unknown */
        char *why;  /* refused, unreadable: the reason; restore: the original */
} DiffRow;

typedef struct Diff {
        uint64_t digest;  /* of the files the new configuration was read from (Config.digest) */
        bool writes;      /* whether that configuration enforces (else a reload only observes) */
        ConfigKeyChange *keys;
        size_t n_keys;
        DiffRow *rows;
        size_t n_rows, allocated_rows;
        ErrorList warnings; /* the new configuration's, as a reload would log them */
} Diff;

/* Plans the posture of the files on disk (main NULL), or of main's text as the main file,
 * and compares it with m's. Returns 0 with *d filled, or -EINVAL (an invalid
 * configuration: one "FILE:LINE: reason" a line in *ret_error), -ENODEV (the host's CPUs
 * cannot be read) or another -errno with *ret_error saying why. */
int manager_diff(Manager *m, const ConfigMainText *main, Diff *d, char **ret_error);
void diff_done(Diff *d);
