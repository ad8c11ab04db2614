/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The configuration in force as one file (config.h, config_print_merged()): each line that
 * took and was not replaced by a later one, under its section, with where it was read. */
#include <string.h>

#include "config/config.h"
#include "basic/array.h"
#include "basic/cells.h"
#include "basic/util.h"

static bool same_section(const ConfigTraceEntry *a, const ConfigTraceEntry *b) {
        return streq(a->section, b->section) && streq_ptr(a->argument, b->argument);
}

/* Whether a later line of the same key in the same section replaced entry i. */
static bool replaced(const Config *c, size_t i) {
        const ConfigTraceEntry *e = &c->trace[i];

        if (e->repeats)
                return false;
        for (size_t j = i + 1; j < c->n_trace; j++)
                if (same_section(e, &c->trace[j]) && streq(e->key, c->trace[j].key))
                        return true;
        return false;
}

static void print_header(FILE *f, const ConfigTraceEntry *e) {
        fputc('[', f);
        fputs(e->section, f);
        if (e->argument) {
                fputs(" \"", f);
                print_escaped(f, e->argument);
                fputc('"', f);
        }
        fputs("]\n", f);
}

void config_print_merged(FILE *f, const Config *c) {
        _cleanup_free_ bool *done = calloc(c->n_trace + 1, sizeof(bool));

        if (!done)
                return;
        fputs("# The configuration in force, each value with the file and line it came from.\n"
              "# Files read, in order:\n",
              f);
        for (size_t i = 0; i < c->n_files; i++) {
                fputs("#   ", f);
                print_escaped(f, c->files[i]);
                if (i < c->n_profile_files && i < c->n_profiles)
                        fprintf(f, " (profile %s)", c->profiles[i]);
                fputc('\n', f);
        }
        /* Sections in the order first read; in each, its lines in the order read. */
        for (size_t i = 0; i < c->n_trace; i++) {
                if (done[i])
                        continue;
                fputc('\n', f);
                print_header(f, &c->trace[i]);
                for (size_t j = i; j < c->n_trace; j++) {
                        const ConfigTraceEntry *e = &c->trace[j];

                        if (done[j] || !same_section(&c->trace[i], e))
                                continue;
                        done[j] = true;
                        if (replaced(c, j))
                                continue;
                        print_escaped(f, e->key);
                        fputs(" = ", f);
                        print_escaped(f, e->value);
                        fputs("  # ", f);
                        print_escaped(f, e->source.file ?: "?");
                        fprintf(f, ":%u\n", e->source.line);
                }
        }
}

/* The values in force: "[SECTION \"ARG\"] KEY" and its value, in the order read; a key
 * that repeats (pin) has its lines joined with "; ". */
typedef struct KeyValue {
        char *name;
        char *value;
} KeyValue;

static void key_values_free(KeyValue *v, size_t n) {
        for (size_t i = 0; i < n; i++) {
                free(v[i].name);
                free(v[i].value);
        }
        free(v);
}

static char *key_name(const ConfigTraceEntry *e) {
        if (e->argument)
                return strdup_printf("[%s \"%s\"] %s", e->section, e->argument, e->key);
        return strdup_printf("[%s] %s", e->section, e->key);
}

static int key_values(const Config *c, KeyValue **ret, size_t *ret_n) {
        KeyValue *v = calloc(c->n_trace + 1, sizeof(KeyValue));
        size_t n = 0;

        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < c->n_trace; i++) {
                const ConfigTraceEntry *e = &c->trace[i];
                _cleanup_free_ char *name = NULL;
                size_t j;

                if (replaced(c, i))
                        continue;
                name = key_name(e);
                if (!name)
                        goto oom;
                for (j = 0; j < n && !streq(v[j].name, name); j++)
                        ;
                if (j < n) { /* a repeating key's next line */
                        char *joined = strdup_printf("%s; %s", v[j].value, e->value);
                        if (!joined)
                                goto oom;
                        free(v[j].value);
                        v[j].value = joined;
                        continue;
                }
                v[n].value = strdup(e->value);
                if (!v[n].value)
                        goto oom;
                v[n++].name = TAKE_PTR(name);
        }
        *ret = v;
        *ret_n = n;
        return 0;
oom:
        key_values_free(v, n + 1);
        return -ENOMEM;
}

static int add_key_change(ConfigKeyChange **changes, size_t *n, size_t *allocated, const char *name,
                          const char *was, const char *will) {
        if (array_grow(changes, allocated, *n + 1) < 0)
                return -ENOMEM;
        ConfigKeyChange *more = *changes;
        more[*n] = (ConfigKeyChange) { strdup(name), was ? strdup(was) : NULL, will ? strdup(will) : NULL };
        if (!more[*n].key || (was && !more[*n].was) || (will && !more[*n].will)) {
                config_key_changes_free(more, *n + 1);
                *changes = NULL;
                return -ENOMEM;
        }
        (*n)++;
        return 0;
}

static const KeyValue *find_key(const KeyValue *v, size_t n, const char *name) {
        for (size_t i = 0; i < n; i++)
                if (streq(v[i].name, name))
                        return &v[i];
        return NULL;
}

int config_diff_keys(const Config *old, const Config *new, ConfigKeyChange **ret, size_t *ret_n) {
        KeyValue *a = NULL, *b = NULL;
        size_t na = 0, nb = 0, n = 0, allocated = 0;
        ConfigKeyChange *changes = NULL;
        int r;

        r = key_values(old, &a, &na);
        if (r >= 0)
                r = key_values(new, &b, &nb);
        /* What is new or changed, in the new files' order; then what went, in the old's. */
        for (size_t i = 0; r >= 0 && i < nb; i++) {
                const KeyValue *o = find_key(a, na, b[i].name);
                if (!o || !streq(o->value, b[i].value))
                        r = add_key_change(&changes, &n, &allocated, b[i].name, o ? o->value : NULL, b[i].value);
        }
        for (size_t i = 0; r >= 0 && i < na; i++)
                if (!find_key(b, nb, a[i].name))
                        r = add_key_change(&changes, &n, &allocated, a[i].name, a[i].value, NULL);
        key_values_free(a, na);
        key_values_free(b, nb);
        if (r < 0) {
                config_key_changes_free(changes, n);
                return r;
        }
        *ret = changes;
        *ret_n = n;
        return 0;
}

void config_key_changes_free(ConfigKeyChange *changes, size_t n) {
        for (size_t i = 0; i < n; i++) {
                free(changes[i].key);
                free(changes[i].was);
                free(changes[i].will);
        }
        free(changes);
}
