/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The configuration in force as one file (config.h, config_print_merged()): each line that
 * took and was not replaced by a later one, under its section, with where it was read. */
#include <string.h>

#include "config/config.h"
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
