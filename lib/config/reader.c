/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The one place that splits lowlatd.conf into lines, sections, keys and values. It is
 * lowlatd's own, not libinih: Debian's inih gives a handler no line number, reads 200
 * bytes a line at most, takes an indented line as the continuation of a value and splits
 * "name: value" at the colon (a [sysfs] path holds PCI addresses, 0000:00:1f.0). Every
 * problem is collected as "FILE:LINE: reason", so one --check-config lists them all. */
#include <ctype.h>
#include <stdarg.h>
#include <string.h>

#include "basic/array.h"
#include "config/keys.h"
#include "config/reader.h"
#include "basic/util.h"

/* "FILE:LINE: " and kind ("" or "warning: ") before the message, into list. */
_printf_(4, 0) static void config_report(ConfigParse *p, ErrorList *list, const char *kind, const char *fmt,
                                         va_list ap) {
        _cleanup_free_ char *msg = strdup_vprintf(fmt, ap);

        if (!msg || error_list_add(list, "%s:%u: %s%s", p->file, p->line, kind, msg) < 0)
                p->oom = -ENOMEM;
}

void config_error(ConfigParse *p, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        config_report(p, p->errors, "", fmt, ap);
        va_end(ap);
}

void config_warning(ConfigParse *p, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        config_report(p, &p->config->warnings, "warning: ", fmt, ap);
        va_end(ap);
}

ConfigSource config_here(const ConfigParse *p) {
        return (ConfigSource) { p->file, p->line };
}

static char *skip_space(char *s) {
        while (isspace((unsigned char) *s))
                s++;
        return s;
}

/* What may follow a header's ']': nothing, or a comment. */
static bool header_rest_is_empty(ConfigParse *p, char *rest) {
        rest = skip_space(rest);
        if (*rest && *rest != '#' && *rest != ';') {
                config_error(p, "unexpected text after section header: '%s'", rest);
                return false;
        }
        return true;
}

/* [NAME] or [NAME "ARGUMENT"]: the quotes delimit the argument, which may itself hold ']'
 * (eth[01]) or a slash (kernel thread patterns). Each header starts a new section, even
 * one seen before: the order of sections decides overrides. A broken or unknown header still ends the
 * section before it, so that the keys under it are skipped rather than taken as keys of
 * the section before (or reported as outside any section). */
static void read_header(ConfigParse *p, char *line) {
        const ConfigSection *section;
        char *name = line + 1, *end, *close;
        size_t len = strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_-");
        char saved = name[len];

        p->section = NULL;
        p->argument = mfree(p->argument);
        p->object = NULL;
        p->skipping = true;

        name[len] = '\0';
        section = config_section_find(name);
        name[len] = saved;
        if (section && section->argument_example) {
                char *q = skip_space(name + len);
                if (*q != '"' || !(close = strchr(q + 1, '"'))) {
                        config_error(p, "expected %s", section->argument_example);
                        return;
                }
                end = skip_space(close + 1);
                if (*end != ']') {
                        config_error(p, "expected ']' after the quoted name");
                        return;
                }
                if (!header_rest_is_empty(p, end + 1))
                        return;
                *close = '\0';
                p->object = section->open(p, q + 1);
                if (!p->object)
                        return;
                p->argument = strdup(q + 1);
                if (!p->argument) {
                        p->oom = -ENOMEM;
                        return;
                }
        } else {
                end = strchr(name, ']');
                if (!end) {
                        config_error(p, "section header without ']'");
                        return;
                }
                if (!header_rest_is_empty(p, end + 1))
                        return;
                *end = '\0';
                if (!section || name[len] != '\0') {
                        config_error(p, "unknown section [%s]", name);
                        return;
                }
                p->object = p->config;
        }
        p->section = section;
        p->skipping = false;
}

/* Cuts a value's inline comment: '#' at its start or after white space, ';' after white
 * space (as lowlatd has always read them: "cpus = 2-3 # the matcher", "x = a ;b"). */
static void cut_comment(char *value) {
        for (char *c = value; *c; c++)
                if ((*c == '#' && (c == value || isspace((unsigned char) c[-1]))) ||
                    (*c == ';' && c > value && isspace((unsigned char) c[-1]))) {
                        *c = '\0';
                        return;
                }
}

static bool key_is_word(const char *key) {
        for (const char *k = key; *k; k++)
                if (isspace((unsigned char) *k) || strchr(";#:[]", *k))
                        return false;
        return true;
}

/* KEY = VALUE: the key is a word (a [sysfs] key a path), the value what follows the first
 * '=', white space and an inline comment trimmed. */
static void read_assignment(ConfigParse *p, char *line) {
        size_t eq = strcspn(line, "=");
        char *key, *value;

        if (line[eq] != '=') {
                config_error(p, "expected 'key = value' or '[section]'");
                return;
        }
        line[eq] = '\0';
        key = strstrip(line);
        value = line + eq + 1;
        cut_comment(value);
        value = strstrip(value);
        if (*key == '\0') {
                config_error(p, "missing key before '='");
                return;
        }
        if (!(p->section && p->section->keys_are_paths) && !key_is_word(key)) {
                config_error(p, "'%s' is not a key (keys are single words)", key);
                return;
        }
        if (p->skipping)
                return; /* the header said what is wrong */
        if (!p->section) {
                config_error(p, "key '%s' outside of any section", key);
                return;
        }
        if (*value == '\0' && !p->section->empty_values) {
                config_error(p, "%s: empty value", key);
                return;
        }
        config_assign(p, key, value);
}

/* A key set a second time in one file: the later line wins, as it does across files (a
 * drop-in overriding the main file is what drop-ins are for), but within one file it is
 * a leftover more often than an intent. By name, not by row: [nic]'s ethtool parameters
 * and feature.NAME have no row of keys.c (section-nic.c notes them). */
static bool seen_same_object(const ConfigParse *p, const struct ConfigSeen *s) {
        if (s->object == p->object)
                return true;
        return s->section == p->section && s->argument && p->argument && streq(s->argument, p->argument);
}

void config_note_key_set(ConfigParse *p, const char *key) {
        char *argument = NULL, *copy = NULL;

        for (size_t i = 0; i < p->n_seen; i++)
                if (streq(p->seen[i].key, key) && seen_same_object(p, &p->seen[i])) {
                        config_warning(p, "%s is set again; this line replaces line %u's value", key, p->seen[i].line);
                        p->seen[i].line = p->line;
                        return;
                }
        if ((p->argument && !(argument = strdup(p->argument))) || !(copy = strdup(key)) ||
            array_grow(&p->seen, &p->allocated_seen, p->n_seen + 1) < 0) {
                free(argument);
                free(copy);
                p->oom = -ENOMEM;
                return;
        }
        p->seen[p->n_seen++] = (struct ConfigSeen) { p->object, p->section, argument, copy, p->line };
}

/* The line as it took, for lowlatctl cat-config (merged.c). */
static void trace_line(ConfigParse *p, const char *key, const char *value, bool repeats) {
        Config *c = p->config;
        ConfigTraceEntry e = {
                .section = p->section->name,
                .argument = p->argument ? strdup(p->argument) : NULL,
                .key = strdup(key),
                .value = strdup(value),
                .repeats = repeats,
                .source = config_here(p),
        };

        if ((p->argument && !e.argument) || !e.key || !e.value ||
            array_grow(&c->trace, &c->allocated_trace, c->n_trace + 1) < 0) {
                free(e.argument);
                free(e.key);
                free(e.value);
                p->oom = -ENOMEM;
                return;
        }
        c->trace[c->n_trace++] = e;
}

void config_assign(ConfigParse *p, const char *key, const char *value) {
        const ConfigKey *row = config_key_find(p->section, key);
        int r;

        if (row) {
                if (!row->repeats)
                        config_note_key_set(p, row->name);
                if (row->source > 0)
                        *(ConfigSource *) ((char *) p->object + row->source - 1) = config_here(p);
                if (row->parse(p, row, value, p->object) >= 0)
                        trace_line(p, key, value, row->repeats);
                return;
        }
        r = p->section->assign ? p->section->assign(p, key, value, p->object) : -ENOENT;
        if (r >= 0)
                trace_line(p, key, value, false);
        if (r != -ENOENT)
                return;
        if (p->argument)
                config_error(p, "unknown key '%s' in section [%s \"%s\"]", key, p->section->name, p->argument);
        else
                config_error(p, "unknown key '%s' in section [%s]", key, p->section->name);
}

static void read_line(ConfigParse *p, char *line) {
        char *s = strstrip(line);

        if (*s == '\0' || *s == '#' || *s == ';')
                return;
        p->config->content_lines++;
        if (*s == '[')
                read_header(p, s);
        else
                read_assignment(p, s);
}

/* The digest that tells whether the files changed: FNV-1a, 64 bits. */
#define FNV1A_PRIME UINT64_C(0x100000001b3)

static void digest_byte(Config *c, unsigned char b) {
        c->digest = (c->digest ^ b) * FNV1A_PRIME;
}

typedef struct ConfigInput {
        FILE *f;            /* or */
        const char *cursor; /* the text, NUL-terminated */
} ConfigInput;

static int next_char(ConfigParse *p, ConfigInput *in) {
        int ch;

        if (in->f)
                ch = getc(in->f);
        else
                ch = *in->cursor == '\0' ? EOF : (unsigned char) *in->cursor++;
        if (ch != EOF)
                digest_byte(p->config, (unsigned char) ch);
        return ch;
}

/* Reads every line of in; a line too long or with a NUL byte in it is an error of its own. */
static void read_lines(ConfigParse *p, ConfigInput *in) {
        char buf[CONFIG_LINE_MAX + 1];

        for (;;) {
                size_t len = 0;
                bool got = false, nul = false;
                int ch;

                while ((ch = next_char(p, in)) != EOF) {
                        got = true;
                        if (ch == '\n')
                                break;
                        if (ch == '\0')
                                nul = true;
                        if (len < sizeof(buf))
                                buf[len] = (char) ch;
                        len++;
                }
                if (!got || p->oom)
                        return;
                p->line++;
                /* A UTF-8 byte order mark on the first line is not part of it. */
                if (p->line == 1 && len >= 3 && len <= CONFIG_LINE_MAX && memcmp(buf, "\xef\xbb\xbf", 3) == 0) {
                        memmove(buf, buf + 3, len - 3);
                        len -= 3;
                }
                if (len > CONFIG_LINE_MAX)
                        config_error(p, "line too long (at most %d characters)", CONFIG_LINE_MAX);
                else if (nul)
                        config_error(p, "NUL byte in line");
                else {
                        buf[len] = '\0';
                        read_line(p, buf);
                }
        }
}

static int config_add_file_name(Config *c, const char *name, const char *digest_name, const char **ret) {
        if (array_grow(&c->files, &c->allocated_files, c->n_files + 1) < 0)
                return -ENOMEM;
        /* The name and a NUL separate one file's bytes from the next one's in the digest. */
        for (const char *p = digest_name ?: name;; p++) {
                digest_byte(c, (unsigned char) *p);
                if (*p == '\0')
                        break;
        }
        c->files[c->n_files] = strdup(name);
        if (!c->files[c->n_files])
                return -ENOMEM;
        *ret = c->files[c->n_files++];
        return 0;
}

int config_read(Config *c, const char *name, const char *digest_name, FILE *f, const char *text, ErrorList *errors) {
        ConfigParse p = { .config = c, .errors = errors };
        ConfigInput in = { .f = f, .cursor = text ?: "" };
        int r;

        r = config_add_file_name(c, name, digest_name, &p.file);
        if (r < 0)
                return r;
        read_lines(&p, &in);
        free(p.argument);
        for (size_t i = 0; i < p.n_seen; i++) {
                free(p.seen[i].argument);
                free(p.seen[i].key);
        }
        free(p.seen);
        if (f && ferror(f)) {
                error_list_add(errors, "%s: read error", name);
                return -EIO;
        }
        return p.oom;
}
