/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sysfs: one setting per file a [sysfs] entry names or matches, kept at its value through
 * inotify and the scan. Patterns are expanded again on every full pass and when devices
 * come and go (daemon/sysfswatch.c), so a new match is kept from then on and a file that
 * went away takes its setting with it. A choice file ("always madvise [never]") compares
 * on its selected word and takes only the words it offers. Which files [sysfs] refuses (a
 * link out of /sys, a file another kind keeps) is decided here too, at load and on every
 * expansion. */
#include <fnmatch.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>

#include "setting/file.h"
#include "setting/sysfs.h"
#include "host/sysfs.h"
#include "setting/table.h"
#include "basic/util.h"

typedef struct SysfsSetting {
        FileSetting file_setting;
        bool from_pattern; /* matched by a pattern: a file that goes away drops the setting */
        bool missing;      /* named as it is and not there: rescans look for it */
        char *refused;     /* why lowlatd does not keep this file (FILE:LINE first), or NULL */
} SysfsSetting;

#define SYSFS(s) ((SysfsSetting *) (s))

/* object: "/sys/..."; refused: NULL, or why the file is not kept (then it is unsupported,
 * never read or written). */
int setting_new_sysfs(const char *object, const char *value, bool from_pattern, const char *refused,
                      Setting **ret) {
        _cleanup_(setting_freep) Setting *s = NULL;
        _cleanup_free_ char *desired = normalize_whitespace(value);
        int r;

        if (!desired || object[0] != '/')
                return desired ? -EINVAL : -ENOMEM;
        r = file_setting_new(SETTING_SYSFS, strdup(object + 1), object, desired, &s);
        if (r < 0)
                return r;
        SYSFS(s)->from_pattern = from_pattern;
        if (refused && !(SYSFS(s)->refused = strdup(refused)))
                return -ENOMEM;
        *ret = TAKE_PTR(s);
        return 0;
}

static int sysfs_read(Setting *s, SettingContext *rc, char *buf, size_t size, ReconcileFlags flags) {
        SysfsSetting *f = SYSFS(s);
        const char *path = setting_file_path(s);
        int r;

        if (f->refused) {
                setting_set_reason(s, "%s", f->refused);
                return -EOPNOTSUPP;
        }
        r = setting_file_read(&f->file_setting.file, rc, buf, size, flags);
        if (r == -ENOENT && f->from_pattern)
                return -ENOENT; /* the device went away; the next expansion finds it again */
        f->missing = r == -ENOENT;
        if (r == -ENOENT) {
                setting_set_reason(s, "not present on this host (/%s)", path);
                return -EOPNOTSUPP;
        }
        if (r < 0) {
                setting_set_reason(s, "reading /%s failed: %s", path, strerror(-r));
                return r;
        }
        /* Runs of white space collapse, as in the desired value; a choice list is the word
         * in force. */
        normalize_whitespace_in_place(buf);
        (void) sysfs_choice_select(buf);
        return 0;
}

/* A choice file takes only a word it offers: another is unsupported, with the list, not a
 * failure to retry every minute. The list is read when a write is due, which is rare. */
static int sysfs_check_offered(Setting *s, SettingContext *rc, const char *value) {
        _cleanup_free_ char *text = NULL, *selected = NULL, *words = NULL;

        if (host_read_file(rc->host, setting_file_path(s), &text) < 0 || !(selected = strdup(text)))
                return 0; /* cannot tell; let the write decide */
        if (!sysfs_choice_select(selected) || sysfs_choice_offers(text, value))
                return 0;
        words = sysfs_choice_words(text);
        if (!words)
                return -ENOMEM;
        setting_set_reason(s, "'%s' is not one of the values offered (%s)", value, words);
        return -EOPNOTSUPP;
}

static int sysfs_write(Setting *s, SettingContext *rc, const char *value) {
        int r = sysfs_check_offered(s, rc, value);

        if (r < 0)
                return r;
        r = file_setting_write(s, rc, value);
        /* lowlatd.service leaves only some of /sys writable: retrying every minute would
         * not change that, a drop-in and a restart do. */
        if (r == -EROFS) {
                setting_set_reason(s,
                                   "writing /%s failed: read-only file system (lowlatd.service opens only parts of "
                                   "/sys with ReadWritePaths=; add this path there with systemctl edit lowlatd)",
                                   setting_file_path(s));
                return -EOPNOTSUPP;
        }
        return r;
}

static void sysfs_done(Setting *s) {
        file_setting_done(s);
        free(SYSFS(s)->refused);
}

/* --- what [sysfs] does not keep --- */

static bool owned_by(const char *const *patterns, const char *relpath, bool both_ways) {
        for (; patterns && *patterns; patterns++)
                if (fnmatch(*patterns, relpath, FNM_PATHNAME) == 0 ||
                    (both_ways && fnmatch(relpath, *patterns, FNM_PATHNAME) == 0))
                        return true;
        return false;
}

/* Why another setting keeps relpath, or NULL. A pattern (both_ways) is also caught when it
 * matches the keeper's pattern as text: "cpu*" over "cpu[0-3]" and the other way round. */
static char *owner_reason(const char *relpath, bool both_ways) {
        for (SettingKind k = 0; k < _SETTING_KIND_MAX; k++)
                if (owned_by(setting_vtables[k]->owns, relpath, both_ways))
                        return strdup_printf("is kept by lowlatd's %s settings, not by [sysfs]",
                                             setting_kind_to_string(k));
        return NULL;
}

int sysfs_file_check(const Host *h, const char *relpath, char **ret_reason) {
        _cleanup_free_ char *resolved = NULL, *reason = NULL;
        mode_t mode;
        int r;

        r = host_resolve(h, relpath, &resolved, &mode);
        if (r == -EXDEV)
                reason = strdup("leads out of the root");
        else if (r < 0)
                return r;
        else if (strncmp(resolved, "sys/", 4) != 0)
                reason = strdup_printf("leads out of /sys (to /%s)", resolved);
        else if (sysfs_path_acts(relpath) || sysfs_path_acts(resolved))
                reason = strdup(SYSFS_ACTS_PROBLEM);
        else if (!(reason = owner_reason(relpath, false)) && !(reason = owner_reason(resolved, false))) {
                if (S_ISREG(mode))
                        return SYSFS_FILE_OK;
                reason = strdup(S_ISDIR(mode) ? "is a directory, not a file" : "is not a regular file");
                if (!reason)
                        return -ENOMEM;
                *ret_reason = TAKE_PTR(reason);
                return SYSFS_FILE_NOT_REGULAR;
        }
        if (!reason)
                return -ENOMEM;
        *ret_reason = TAKE_PTR(reason);
        return SYSFS_FILE_REFUSED;
}

typedef struct MatchCheck {
        const Host *host;
        char *first; /* the first refused match and why, "/sys/... leads out of /sys" */
        size_t refused;
        size_t matched, read_only; /* files it may keep, and those no one may write (a counter) */
        char *first_read_only;
} MatchCheck;

static int check_match(void *userdata, const char *relpath) {
        MatchCheck *m = userdata;
        _cleanup_free_ char *reason = NULL;
        int r = sysfs_file_check(m->host, relpath, &reason);

        if (r == -ENOMEM)
                return r;
        if (r == SYSFS_FILE_OK) {
                _cleanup_free_ char *resolved = NULL;
                mode_t mode = 0;

                m->matched++;
                if (host_resolve(m->host, relpath, &resolved, &mode) >= 0 && !(mode & 0222) && m->read_only++ == 0 &&
                    !(m->first_read_only = strdup_printf("/%s", relpath)))
                        return -ENOMEM;
                return 0;
        }
        if (r != SYSFS_FILE_REFUSED)
                return 0; /* not there, or a directory the pattern also matches */
        if (m->refused++ == 0 && !(m->first = strdup_printf("/%s, which %s", relpath, reason)))
                return -ENOMEM;
        return 0;
}

static void check_entry(Config *c, const SysfsEntry *e, const Host *h, ErrorList *errors) {
        const char *relpath = e->path + 1;
        _cleanup_free_ char *reason = owner_reason(relpath, true);
        MatchCheck m = { .host = h };
        int r;

        if (reason) {
                error_list_add(errors, "%s:%u: %s %s", e->source.file, e->source.line, e->path, reason);
                return;
        }
        if (!sysfs_path_is_pattern(e->path)) {
                r = sysfs_file_check(h, relpath, &reason);
                if (r == SYSFS_FILE_REFUSED || r == SYSFS_FILE_NOT_REGULAR)
                        error_list_add(errors, "%s:%u: %s %s", e->source.file, e->source.line, e->path, reason);
                return;
        }
        r = sysfs_expand(h, e->path, check_match, &m);
        if (r < 0)
                error_list_add(errors, "%s:%u: %s: cannot check what it matches: %s", e->source.file, e->source.line,
                               e->path, strerror(-r));
        else if (m.refused > 0)
                error_list_add(errors, "%s:%u: %s matches %s%s", e->source.file, e->source.line, e->path, m.first,
                               m.refused > 1 ? " (and more of its matches are refused)" : "");
        else if (m.read_only > 0)
                config_warn(c, &e->source,
                            "%s matches %zu file%s on this host, %zu of them read-only (%s%s): a pattern that wide "
                            "takes in counters and files it was not meant for; name the files",
                            e->path, m.matched, m.matched == 1 ? "" : "s", m.read_only, m.first_read_only,
                            m.read_only > 1 ? ", ..." : "");
        free(m.first);
        free(m.first_read_only);
}

void sysfs_config_check(Config *c, const Host *h, ErrorList *errors) {
        for (size_t i = 0; i < c->n_sysfs; i++)
                check_entry(c, &c->sysfs[i], h, errors);
}

bool sysfs_config_has_patterns(const Config *c) {
        for (size_t i = 0; i < c->n_sysfs; i++)
                if (sysfs_path_is_pattern(c->sysfs[i].path))
                        return true;
        return false;
}

/* --- the table's files --- */

typedef struct Expansion {
        SettingTable *table;
        const Host *host;
        const SysfsEntry *entry;
        bool from_pattern;
        size_t added;
} Expansion;

/* One file an entry names or matches: a new setting unless one keeps it already. */
static int expansion_add(void *userdata, const char *relpath) {
        Expansion *x = userdata;
        const SysfsEntry *e = x->entry;
        _cleanup_free_ char *object = strdup_printf("/%s", relpath), *reason = NULL, *refused = NULL;
        Setting *s;
        int r;

        if (!object)
                return -ENOMEM;
        s = table_find(x->table, SETTING_SYSFS, object);
        /* Kept already: by this entry, or by a later one, which was expanded first and wins. */
        if (s && table_scan_marked(x->table, s))
                return 0;
        if (s && !SYSFS(s)->missing) {
                table_scan_mark(x->table, s);
                return 0;
        }
        r = sysfs_file_check(x->host, relpath, &reason);
        if (r == -ENOMEM)
                return r;
        /* Gone since the listing, or a directory the pattern matches too: nothing to keep. */
        if (x->from_pattern && (r < 0 || r == SYSFS_FILE_NOT_REGULAR))
                return 0;
        if (s) {
                /* A file named as it is, missing until now: kept afresh from here on. */
                if (r == -ENOENT) {
                        table_scan_mark(x->table, s);
                        return 0;
                }
                table_remove(x->table, s);
        }
        /* What posture_load() refuses in the files there are at start can still appear
         * later (a device with a link out of /sys): such a file is shown, never written. */
        if (r == SYSFS_FILE_REFUSED || r == SYSFS_FILE_NOT_REGULAR) {
                refused = strdup_printf("%s:%u: %s %s; not kept", e->source.file, e->source.line, object, reason);
                if (!refused)
                        return -ENOMEM;
        }
        r = setting_new_sysfs(object, e->value, x->from_pattern, refused, &s);
        if (r < 0)
                return r;
        r = table_scan_add(x->table, s);
        if (r < 0)
                return r;
        x->added++;
        return 0;
}

int sysfs_table_rescan(SettingTable *t, const Host *h, const Posture *p) {
        const Config *c = p->config;
        size_t added = 0;

        if (c->n_sysfs == 0 && t->kind_counts[SETTING_SYSFS] == 0)
                return 0;
        table_scan_begin(t, SETTING_SYSFS);

        /* Where two entries match one file the later one wins: entries are expanded last
         * first, and a file kept already is skipped. */
        for (size_t i = c->n_sysfs; i > 0; i--) {
                const SysfsEntry *e = &c->sysfs[i - 1];
                Expansion x = {
                        .table = t,
                        .host = h,
                        .entry = e,
                        .from_pattern = sysfs_path_is_pattern(e->path),
                };
                int r = x.from_pattern ? sysfs_expand(h, e->path, expansion_add, &x) : expansion_add(&x, e->path + 1);

                added += x.added;
                if (r < 0)
                        return r;
        }
        /* What no pattern matches any more went with its device (on a real host its next
         * read would fail too, but only then). */
        table_scan_end(t, SETTING_SYSFS, added);
        return (int) MIN(added, (size_t) INT_MAX);
}

static int sysfs_rescan(SettingTable *t, const Host *h, const Posture *p) {
        int r = sysfs_table_rescan(t, h, p);
        return r < 0 ? r : 0;
}

/* An original follows the rules of a [sysfs] value (length, printable, no brackets: a
 * choice list is recorded as its selected word); a file may read empty. */
static const char *sysfs_original_problem(const Setting *s, SettingContext *rc, const char *value) {
        (void) s;
        (void) rc;
        return isempty(value) ? NULL : sysfs_value_problem(value);
}

const SettingVTable sysfs_vtable = {
        .object_size = sizeof(SysfsSetting),
        .group = SETTING_GROUP_HOST,
        .read = sysfs_read,
        .write = sysfs_write,
        .original_problem = sysfs_original_problem,
        .watch_path = file_setting_watch_path,
        .inherit = file_setting_inherit,
        .release = file_setting_release,
        .done = sysfs_done,
        .rescan = sysfs_rescan,
};
