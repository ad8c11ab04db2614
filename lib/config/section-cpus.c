/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* [cpus]: the isolated and housekeeping sets every other section names, what is confined
 * to the housekeeping CPUs (slices, kernel threads, workqueues), and the default RPS mask. */
#include <string.h>

#include "config/keys.h"
#include "config/posture.h"
#include "basic/util.h"

static bool slice_is_listed(char *const *list, size_t n, const char *unit) {
        for (size_t i = 0; i < n; i++)
                if (streq(list[i], unit))
                        return true;
        return false;
}

/* One word of a slices list: a unit AllowedCPUs= applies to, not listed yet. */
static bool slice_word_is_good(ConfigParse *p, const ConfigKey *key, char *const *list, size_t n, const char *word) {
        (void) key;
        static const char *const suffixes[] = { ".slice", ".scope", ".service" };
        size_t wlen = strlen(word);
        bool typed = false;

        for (size_t i = 0; i < ELEMENTSOF(suffixes); i++)
                typed = typed || (wlen > strlen(suffixes[i]) && streq(word + wlen - strlen(suffixes[i]), suffixes[i]));
        if (!config_unit_name_is_valid(word, 255))
                config_error(p, "slices: '%s' is not a unit name (e.g. system.slice)", word);
        else if (streq(word, "-.slice"))
                config_error(p, "slices: -.slice is the root of the tree and cannot be confined; list the units under it");
        else if (!typed)
                config_error(p, "slices: '%s' is not a slice, scope or service (the units AllowedCPUs= applies to)", word);
        else if (slice_is_listed(list, n, word))
                config_error(p, "slices: '%s' is listed twice", word);
        else
                return true;
        return false;
}

/* A slices list that leaves out one of SLICES_REQUIRED is refused: confining some units
 * while the rest of the tree jumps to every CPU makes isolation worse than no list. */
static bool slices_are_whole(ConfigParse *p, char *const *list, size_t n) {
        static const char *const required[] = { SLICES_REQUIRED };
        char missing[64] = "";
        size_t len = 0;

        for (size_t i = 0; i < ELEMENTSOF(required); i++)
                if (!slice_is_listed(list, n, required[i]))
                        len += (size_t) snprintf(missing + len, sizeof(missing) - MIN(len, sizeof(missing)), "%s%s",
                                                 len ? ", " : "", required[i]);
        if (len > 0)
                config_error(p,
                             "slices: a partial list makes isolation worse: the first AllowedCPUs= turns the cpuset "
                             "controller on for the whole tree, and units left out (%s) then run on every CPU; list "
                             "system.slice, user.slice and init.scope together (and machine.slice where it exists)",
                             missing);
        return len == 0;
}

/* slices = UNIT... | none. The list replaces an earlier one only when every word is good
 * and the list is whole (slices_are_whole()). */
int config_parse_slices(ConfigParse *p, const ConfigKey *key, const char *value, void *object) {
        Config *c = object;

        return config_parse_words(p, key, value, slice_word_is_good, slices_are_whole, &c->slices, &c->n_slices);
}

/* partition = SLICE | none: a top-level slice of its own. A dash in a slice's name nests it
 * (a-b.slice is inside a.slice), and the partition must be a child of the root, where its
 * CPUs are taken from the root's; the units the partition confines cannot be it. */
int config_parse_partition(ConfigParse *p, const ConfigKey *key, const char *value, void *object) {
        static const char *const confined[] = { SLICES_REQUIRED, "machine.slice" };
        const char *const suffix = ".slice";
        Config *c = object;
        size_t n = strlen(value);
        char *copy;

        (void) key;
        if (streq(value, "none")) {
                c->partition = mfree(c->partition);
                return 0;
        }
        if (!config_unit_name_is_valid(value, 255) || n <= strlen(suffix) || !streq(value + n - strlen(suffix), suffix)) {
                config_error(p, "partition: '%s' is not a slice name (e.g. isolated.slice)", value);
                return -EINVAL;
        }
        if (memchr(value, '-', n - strlen(suffix))) {
                config_error(p, "partition: '%s' has a dash, which nests a slice inside another (a-b.slice is in "
                                "a.slice); the partition must be a top-level slice, e.g. isolated.slice",
                             value);
                return -EINVAL;
        }
        for (size_t i = 0; i < ELEMENTSOF(confined); i++)
                if (streq(value, confined[i])) {
                        config_error(p, "partition: %s is kept on the housekeeping CPUs; name a slice of its own, "
                                        "e.g. isolated.slice",
                                     value);
                        return -EINVAL;
                }
        copy = strdup(value);
        if (!copy)
                return p->oom = -ENOMEM;
        free(c->partition);
        c->partition = copy;
        return 0;
}

/* A partition's CPUs are its own: every other unit under the root must be confined to the
 * housekeeping CPUs, which slices does (and partition implies when slices is not set). */
static void validate_partition(const Config *c, ErrorList *errors) {
        if (!c->partition)
                return;
        if (c->n_slices == 0 && c->slices_source.line > 0)
                error_list_add(errors,
                               "%s:%u: slices = none contradicts partition = %s (%s:%u): the partition is valid only "
                               "while system.slice, user.slice and init.scope keep off its CPUs; remove the line",
                               c->slices_source.file, c->slices_source.line, c->partition, c->partition_source.file,
                               c->partition_source.line);
        for (size_t i = 0; i < c->n_slices; i++)
                if (streq(c->slices[i], c->partition))
                        error_list_add(errors,
                                       "%s:%u: slices lists %s, the partition (%s:%u): it cannot be kept on the "
                                       "housekeeping CPUs and hold the isolated ones",
                                       c->slices_source.file, c->slices_source.line, c->partition,
                                       c->partition_source.file, c->partition_source.line);
}

void config_validate_cpus(const Config *c, ErrorList *errors) {
        validate_partition(c, errors);
        if (c->isolated.kind == CPUS_LIST && c->housekeeping.kind == CPUS_LIST &&
            cpuset_intersects(&c->isolated.cpus, &c->housekeeping.cpus)) {
                /* Name the later of the two lines: that is the one the admin just wrote. */
                const ConfigSource *at = config_source_is_later(c, &c->isolated.source, &c->housekeeping.source)
                                                 ? &c->isolated.source
                                                 : &c->housekeeping.source;
                _cleanup_cpuset_ CPUSet both = CPUSET_EMPTY;
                _cleanup_free_ char *list = NULL;
                if (cpuset_copy(&both, &c->isolated.cpus) >= 0) {
                        cpuset_and(&both, &c->housekeeping.cpus);
                        list = cpuset_format_list(&both);
                }
                error_list_add(errors, "%s:%u: isolated and housekeeping CPU sets overlap (CPUs %s)", at->file, at->line,
                               list ?: "?");
        }
        /* One file, one keeper: [sysctl] would compare the mask as text and fight. */
        for (size_t i = 0; c->rps_default_mask.kind != CPUS_UNSET && i < c->n_sysctls; i++)
                if (streq(c->sysctls[i].key, "net.core.rps_default_mask"))
                        error_list_add(errors,
                                       "%s:%u: net.core.rps_default_mask is kept by [cpus] rps_default_mask "
                                       "(%s:%u); set it in one place",
                                       c->sysctls[i].source.file, c->sysctls[i].source.line,
                                       c->rps_default_mask.source.file, c->rps_default_mask.source.line);
}

/* isolated: what the kernel isolated (isolcpus=, else nohz_full=), or the list;
 * housekeeping: the list, or every online CPU that is not isolated. */
static int resolve_isolated_housekeeping(Posture *p, const Config *c, const HostCpus *cpus, ErrorList *errors) {
        if (c->isolated.kind == CPUS_AUTO) {
                const CPUSet *src = cpuset_is_empty(&cpus->isolated) ? &cpus->nohz_full : &cpus->isolated;
                if (cpuset_copy(&p->isolated, src) < 0)
                        return -ENOMEM;
        } else if (config_cpus_resolve(p, cpus, &c->isolated, CPUS_CHECK_ONLINE, "isolated", NULL, errors,
                                       &p->isolated) < 0)
                return -ENOMEM;

        if (c->housekeeping.kind == CPUS_LIST) {
                if (config_cpus_resolve(p, cpus, &c->housekeeping, CPUS_CHECK_ONLINE, "housekeeping", NULL, errors,
                                        &p->housekeeping) < 0)
                        return -ENOMEM;
                if (c->isolated.kind == CPUS_AUTO && cpuset_intersects(&p->housekeeping, &p->isolated))
                        error_list_add(errors, "%s:%u: housekeeping overlaps the CPUs the kernel isolated",
                                       c->housekeeping.source.file, c->housekeeping.source.line);
                return 0;
        }
        if (cpuset_copy(&p->housekeeping, &cpus->online) < 0)
                return -ENOMEM;
        cpuset_subtract(&p->housekeeping, &p->isolated);
        if (cpuset_is_empty(&p->housekeeping))
                error_list_add(errors, "%s:%u: isolated covers every online CPU: no housekeeping CPU is left",
                               c->isolated.source.file ?: "<kernel>", c->isolated.source.line);
        return 0;
}

int config_resolve_cpus(Posture *p, const Config *c, const HostCpus *cpus, ErrorList *errors) {
        if (resolve_isolated_housekeeping(p, c, cpus, errors) < 0 ||
            config_cpus_resolve(p, cpus, &c->workqueues, CPUS_CHECK_ONLINE, "workqueues", NULL, errors,
                                &p->workqueues) < 0 ||
            config_cpus_resolve(p, cpus, &c->rps_default_mask, CPUS_CHECK_ONLINE, "rps_default_mask", NULL, errors,
                                &p->rps_default_mask) < 0)
                return -ENOMEM;
        if (c->partition && cpuset_is_empty(&p->isolated))
                error_list_add(errors,
                               "%s:%u: partition = %s needs CPUs to isolate, and the kernel isolated none at boot "
                               "(no isolcpus= or nohz_full=): name them with isolated = LIST",
                               c->partition_source.file, c->partition_source.line, c->partition);
        return 0;
}
