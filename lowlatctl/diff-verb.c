/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lowlatctl diff [FILE] and lowlatctl reload --if-unchanged=DIGEST: what a reload would do,
 * asked of the running lowlatd (Diff(): it plans the posture as a reload would, against
 * the host it keeps, and applies nothing), and the reload of exactly the files that answer
 * was made of (ReloadIfUnchanged(): refused when their digest is another). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "bus-names.h"
#include "client.h"
#include "basic/array.h"
#include "basic/cells.h"
#include "basic/util.h"

typedef struct DiffKeyRow {
        const char *key, *was, *will;
} DiffKeyRow;

typedef struct DiffSettingRow {
        const char *change, *effect, *kind, *object, *was, *will, *now, *why;
} DiffSettingRow;

typedef struct DiffReply {
        sd_bus_message *reply; /* owns the strings below */
        uint64_t digest;
        bool writes;
        DiffKeyRow *keys;
        size_t n_keys, allocated_keys;
        DiffSettingRow *rows;
        size_t n_rows, allocated_rows;
        char **warnings;
} DiffReply;

static void diff_reply_done(DiffReply *d) {
        sd_bus_message_unref(d->reply);
        free(d->keys);
        free(d->rows);
        for (size_t i = 0; d->warnings && d->warnings[i]; i++)
                free(d->warnings[i]);
        free(d->warnings);
        *d = (DiffReply) {};
}

static int read_keys(DiffReply *d) {
        const char *key, *was, *will;
        int r = sd_bus_message_enter_container(d->reply, 'a', "(sss)");

        while (r >= 0 && (r = sd_bus_message_read(d->reply, "(sss)", &key, &was, &will)) > 0) {
                if (array_grow(&d->keys, &d->allocated_keys, d->n_keys + 1) < 0)
                        return -ENOMEM;
                d->keys[d->n_keys++] = (DiffKeyRow) { key, was, will };
        }
        return r < 0 ? r : sd_bus_message_exit_container(d->reply);
}

static int read_rows(DiffReply *d) {
        DiffSettingRow row;
        int r = sd_bus_message_enter_container(d->reply, 'a', "(ssssssss)");

        while (r >= 0 && (r = sd_bus_message_read(d->reply, "(ssssssss)", &row.change, &row.effect, &row.kind,
                                                  &row.object, &row.was, &row.will, &row.now, &row.why)) > 0) {
                if (array_grow(&d->rows, &d->allocated_rows, d->n_rows + 1) < 0)
                        return -ENOMEM;
                d->rows[d->n_rows++] = row;
        }
        return r < 0 ? r : sd_bus_message_exit_container(d->reply);
}

static int diff_reply_read(DiffReply *d) {
        int b = 0, r = sd_bus_message_read(d->reply, "tb", &d->digest, &b);

        d->writes = b;
        if (r >= 0)
                r = read_keys(d);
        if (r >= 0)
                r = read_rows(d);
        if (r >= 0)
                r = sd_bus_message_read_strv(d->reply, &d->warnings);
        return r;
}

/* "lowlatctl: what" on stderr; returns r. */
static int complain(int r, const char *format, ...) _printf_(2, 3);
static int complain(int r, const char *format, ...) {
        va_list ap;

        fputs("lowlatctl: ", stderr);
        va_start(ap, format);
        vfprintf(stderr, format, ap);
        va_end(ap);
        fputc('\n', stderr);
        return r;
}

/* The main file's text: refused here, in words, when Diff() would refuse it without
 * them (too long, a NUL byte, not UTF-8). */
static int read_config_text(const char *file, char **ret) {
        _cleanup_fclose_ FILE *f = fopen(file, "re");
        _cleanup_free_ char *text = NULL;
        size_t n;

        if (!f) {
                int e = errno;
                return complain(-e, "cannot open %s: %s", file, strerror(e));
        }
        text = malloc(BUS_DIFF_TEXT_MAX + 2);
        if (!text)
                return -ENOMEM;
        n = fread(text, 1, BUS_DIFF_TEXT_MAX + 1, f);
        if (ferror(f))
                return complain(-EIO, "cannot read %s", file);
        if (n > BUS_DIFF_TEXT_MAX)
                return complain(-EFBIG, "%s is longer than %u bytes: that is no configuration lowlatd reads", file,
                            (unsigned) BUS_DIFF_TEXT_MAX);
        text[n] = '\0';
        if (strlen(text) != n)
                return complain(-EINVAL, "%s holds a NUL byte: that is no configuration lowlatd reads", file);
        if (!utf8_is_valid(text))
                return complain(-EINVAL, "%s is not UTF-8 text: that is no configuration lowlatd reads", file);
        if (n == 0) {
                /* "" asks for the files on disk: an empty FILE is refused as lowlatd refuses one. */
                free(text);
                text = strdup("\n");
                if (!text)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(text);
        return 0;
}

static const char *or_unset(const char *s) {
        return s[0] ? s : "(unset)";
}

static const char *change_mark(const char *change) {
        return streq(change, "added") ? "+" : streq(change, "removed") ? "-" : "~";
}

/* The same for [cpus] partition's setting, whose write starts a slice and whose restore
 * stops it (lib/setting/partition.c); NULL for the general words. */
static char *partition_effect_text(const DiffSettingRow *row, bool writes) {
        if (!streq(row->kind, "cpuset_partition") || !writes)
                return NULL;
        if (streq(row->effect, "write"))
                return strdup_printf("the slice %s is started if it is not, with AllowedCPUs= the isolated CPUs, "
                                     "and made an isolated cpuset partition",
                                     row->object);
        if (streq(row->effect, "restore"))
                return streq(row->why, "absent")
                               ? strdup("made a member again and the slice lowlatd started stopped")
                               : strdup_printf("made %s again (the slice was there before lowlatd: left running)",
                                               row->why);
        return NULL;
}

/* What a reload would do to the host for one setting, in words. */
static char *effect_text(const DiffSettingRow *row, bool writes) {
        if (streq(row->kind, "cpuset_partition") && (streq(row->effect, "write") || streq(row->effect, "restore")))
                return partition_effect_text(row, writes) ?: strdup(streq(row->effect, "write")
                                                                            ? "differs (observe mode: not written)"
                                                                            : "original on file: not restored while observing");
        if (streq(row->effect, "write"))
                return strdup(writes ? "written" : "differs (observe mode: not written)");
        if (streq(row->effect, "none"))
                return strdup(streq(row->change, "removed") ? "already its original: left" : "already so");
        if (streq(row->effect, "restore"))
                return writes ? strdup_printf("restored to %s", row->why) : strdup("original on file: not restored while observing");
        if (streq(row->effect, "leave"))
                return strdup("left as it is (no original on file)");
        return strdup_printf("%s: %s", row->effect, row->why);
}

static void print_keys(FILE *f, const DiffReply *d) {
        size_t width = 0;

        fprintf(f, "Keys: %zu changed\n", d->n_keys);
        for (size_t i = 0; i < d->n_keys; i++)
                width = MAX(width, cell_width(d->keys[i].key));
        for (size_t i = 0; i < d->n_keys; i++) {
                const DiffKeyRow *k = &d->keys[i];
                fputs("  ", f);
                print_cell(f, k->key, width, false);
                print_escaped(f, or_unset(k->was));
                fputs(" -> ", f);
                print_escaped(f, or_unset(k->will));
                fputc('\n', f);
        }
}

static void print_rows(FILE *f, const DiffReply *d) {
        size_t counts[3] = {}, written = 0, width[5] = {};

        for (size_t i = 0; i < d->n_rows; i++) {
                const DiffSettingRow *row = &d->rows[i];
                const char *cells[5] = { change_mark(row->change), row->kind, row->object,
                                         row->was[0] || streq(row->change, "changed") ? row->was : "",
                                         row->will };
                counts[streq(row->change, "added") ? 0 : streq(row->change, "removed") ? 1 : 2]++;
                written += streq(row->effect, "write") || streq(row->effect, "restore");
                table_measure_row(width, cells, 5);
        }
        fprintf(f, "Settings: %zu added, %zu removed, %zu changed; %zu %s the host\n", counts[0], counts[1], counts[2],
                written, d->writes ? "would change" : "differ from");
        for (size_t i = 0; i < d->n_rows; i++) {
                const DiffSettingRow *row = &d->rows[i];
                _cleanup_free_ char *effect = effect_text(row, d->writes);
                fputs("  ", f);
                print_cell(f, change_mark(row->change), width[0], false);
                print_cell(f, row->kind, width[1], false);
                print_cell(f, row->object, width[2], false);
                print_escaped(f, row->was[0] ? row->was : "-");
                fputs(" -> ", f);
                print_escaped(f, row->will[0] ? row->will : "-");
                fputs("  (host: ", f);
                print_escaped(f, row->now[0] ? row->now : "?");
                fputs("; ", f);
                print_escaped(f, effect ?: row->effect);
                fputs(")\n", f);
        }
}

/* The units whose slice_cpus row goes the way of change ("added" or "removed"), ", "
 * between them, and the CPUs the last of them will hold. */
static char *slice_rows(const DiffReply *d, const char *change, const char **ret_will) {
        char *list = strdup("");

        *ret_will = "";
        for (size_t i = 0; list && i < d->n_rows; i++) {
                const DiffSettingRow *row = &d->rows[i];
                char *more;
                if (!streq(row->kind, "slice_cpus") || !streq(row->change, change))
                        continue;
                more = strdup_printf("%s%s%s", list, list[0] ? ", " : "", row->object);
                free(list);
                list = more;
                *ret_will = row->will;
        }
        return list;
}

/* [cpus] partition implies the confinement of the other units (the slice_cpus rows that
 * come and go with it): said in words under the rows. */
static void print_partition_notes(FILE *f, const DiffReply *d) {
        for (size_t i = 0; i < d->n_rows; i++) {
                const DiffSettingRow *row = &d->rows[i];
                _cleanup_free_ char *units = NULL;
                const char *will;
                bool added = streq(row->change, "added");

                if (!streq(row->kind, "cpuset_partition") || streq(row->change, "changed"))
                        continue;
                units = slice_rows(d, row->change, &will);
                if (!units || !units[0])
                        continue;
                fputs("Partition: [cpus] partition ", f);
                if (added) {
                        fputs("= ", f);
                        print_escaped(f, row->object);
                        fputs(" confines ", f);
                        print_escaped(f, units);
                        fputs(" to the housekeeping CPUs ", f);
                        print_escaped(f, will);
                        fputs(" (the slice_cpus rows): the partition's CPUs are its own\n", f);
                } else {
                        fputs("removed: ", f);
                        print_escaped(f, units);
                        fputs(" get their CPUs back (the slice_cpus rows)\n", f);
                }
        }
}

static void diff_print_text(FILE *f, const DiffReply *d, const char *file) {
        if (file) {
                fputs("The running lowlatd, with ", f);
                print_escaped(f, file);
                fputs(" in place of its configuration file (its drop-ins and profiles as they are):\n", f);
        } else
                fputs("The running lowlatd, if it reloaded its configuration files now:\n", f);
        if (!d->writes)
                fputs("(it would observe: a reload writes nothing)\n", f);
        print_keys(f, d);
        print_rows(f, d);
        print_partition_notes(f, d);
        for (size_t i = 0; d->warnings && d->warnings[i]; i++) {
                fputs("Warning: ", f);
                print_escaped(f, d->warnings[i]);
                fputc('\n', f);
        }
        fprintf(f, "Digest: %016" PRIx64 "\n", d->digest);
        if (file)
                fprintf(f, "To apply exactly this, put the file in place of lowlatd's and run: lowlatctl reload "
                           "--if-unchanged=%016" PRIx64 "\n",
                        d->digest);
        else
                fprintf(f, "To apply exactly this: lowlatctl reload --if-unchanged=%016" PRIx64 "\n", d->digest);
}

static void print_json_or_null(FILE *f, const char *key, const char *value) {
        fprintf(f, ",\"%s\":", key);
        if (value[0])
                json_print_string(f, value);
        else
                fputs("null", f);
}

static void diff_print_json(FILE *f, const DiffReply *d) {
        fprintf(f, "{\"digest\":\"%016" PRIx64 "\",\"writes\":%s,\"keys\":[", d->digest, d->writes ? "true" : "false");
        for (size_t i = 0; i < d->n_keys; i++) {
                fputs(i ? ",{" : "{", f);
                json_print_member(f, "key", d->keys[i].key, true);
                print_json_or_null(f, "was", d->keys[i].was);
                print_json_or_null(f, "will", d->keys[i].will);
                fputc('}', f);
        }
        fputs("],\"settings\":[", f);
        for (size_t i = 0; i < d->n_rows; i++) {
                const DiffSettingRow *row = &d->rows[i];
                fputs(i ? ",{" : "{", f);
                json_print_member(f, "change", row->change, true);
                json_print_member(f, "effect", row->effect, false);
                json_print_member(f, "kind", row->kind, false);
                json_print_member(f, "object", row->object, false);
                print_json_or_null(f, "was", streq(row->change, "added") ? "" : row->was);
                print_json_or_null(f, "will", streq(row->change, "removed") ? "" : row->will);
                print_json_or_null(f, "host", row->now);
                print_json_or_null(f, "why", row->why);
                fputc('}', f);
        }
        fputs("],\"warnings\":[", f);
        for (size_t i = 0; d->warnings && d->warnings[i]; i++) {
                if (i)
                        fputc(',', f);
                json_print_string(f, d->warnings[i]);
        }
        fputs("]}\n", f);
}

int verb_diff_run(sd_bus *bus, const char *file, bool json) {
        _cleanup_(diff_reply_done) DiffReply d = {};
        _cleanup_free_ char *text = NULL, *name = NULL;
        int r;

        if (file) {
                r = read_config_text(file, &text);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        return EXIT_REFUSED;
                name = realpath(file, NULL);
        }
        r = ctl_call_diff(bus, text ?: "", name ?: file ?: "", &d.reply);
        if (r != 0)
                return r < 0 ? r : EXIT_REFUSED;
        r = diff_reply_read(&d);
        if (r < 0)
                return complain(r, "cannot read lowlatd's answer to Diff(): %s", strerror(-r));
        if (json)
                diff_print_json(stdout, &d);
        else
                diff_print_text(stdout, &d, name ?: file);
        return finish_output(EXIT_OK);
}

int parse_digest(const char *value, uint64_t *ret) {
        char *end;
        unsigned long long v;

        if (strlen(value) != 16 || strspn(value, "0123456789abcdefABCDEF") != 16) {
                fprintf(stderr, "lowlatctl: --if-unchanged: '%s' is not a digest (16 hexadecimal digits, as lowlatctl "
                                "diff prints it)\n",
                        value);
                return -EINVAL;
        }
        errno = 0;
        v = strtoull(value, &end, 16);
        if (errno != 0 || *end)
                return -EINVAL;
        *ret = (uint64_t) v;
        return 0;
}

int verb_reload_if_unchanged(sd_bus *bus, uint64_t digest) {
        int r = ctl_call_reload_if_unchanged(bus, digest);

        if (r < 0)
                return r;
        return r > 0 ? EXIT_REFUSED : EXIT_OK;
}
