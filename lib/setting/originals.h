/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The values settings had before lowlatd first changed them, kept in a file under the
 * runtime directory (/run/lowlatd: it survives a daemon restart, not a reboot), so the host
 * can be put back exactly as it was found. A restarted daemon keeps the entries it finds
 * (they are the true originals, not its own values); entries from another boot or another
 * --root are discarded. */
#pragma once

#include <stdbool.h>

#include "basic/keyindex.h"
#include "setting/kind.h"

typedef struct OriginalEntry {
        SettingKind kind;
        char *object;
        char *value;
} OriginalEntry;

typedef struct Originals {
        char *path;
        char *boot_id;
        char *root;
        OriginalEntry **entries;
        size_t n, allocated;
        KeyIndex index; /* the entries by kind and object */
        int fd;     /* the file, open for appending */
        bool dirty; /* entries were forgotten: commit rewrites the file */
} Originals;

/* dir: where the file lives (created if missing, mode 0700). */
int originals_open(const char *dir, const char *root, Originals **ret);
Originals *originals_free(Originals *o);
DEFINE_POINTER_CLEANUP(Originals, originals_free);

const char *originals_get(const Originals *o, SettingKind kind, const char *object);
/* Records a value unless one is already there: appended to the file before returning. */
int originals_record(Originals *o, SettingKind kind, const char *object, const char *value);
/* Forgets an entry (it was restored) in memory; originals_commit() rewrites the file once
 * after a batch of them. */
void originals_forget(Originals *o, SettingKind kind, const char *object);
/* The object was renamed (an interface): its entry moves to the new name, replacing any
 * left there by an earlier object of that name. Returns 1 when one moved, 0 when there was
 * none. originals_commit() rewrites the file. */
int originals_rename(Originals *o, SettingKind kind, const char *from, const char *to);
int originals_commit(Originals *o);
