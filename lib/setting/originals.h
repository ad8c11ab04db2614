/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The values settings had before lowlatd first changed them, kept in a file under the
 * runtime directory (/run/lowlatd: it survives a daemon restart, not a reboot), so the host
 * can be put back exactly as it was found. Each --root has a state directory of its own
 * (originals_state_dir()), so that a run on another tree never reads or rewrites the host's
 * file. A restarted daemon keeps the entries it finds (they are the true originals, not its
 * own values); entries from another boot are discarded. */
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

/* Where the originals of root are kept under base (the runtime directory): base itself for
 * "/", else base/root/ESCAPED, ESCAPED being root (absolute, canonical) as systemd-escape
 * --path writes it ("/srv/tree" -> "srv-tree"). -EINVAL for a relative root,
 * -ENAMETOOLONG when the escaped name exceeds NAME_MAX. */
int originals_state_dir(const char *base, const char *root, char **ret);

/* dir: where the file lives (created if missing, with missing parents, mode 0700). */
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
