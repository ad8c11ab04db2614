/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The value parsers every key shares, and the one message each gives for a bad value: a
 * key's row (keys.c) names its parser and what the parser takes. */
#include <ctype.h>
#include <inttypes.h>
#include <string.h>

#include "basic/array.h"
#include "config/keys.h"
#include "config/posture.h"
#include "basic/util.h"

static const char *const cpus_kind_table[_CPUS_KIND_MAX] = {
        [CPUS_HOUSEKEEPING] = "housekeeping",
        [CPUS_ISOLATED] = "isolated",
        [CPUS_NONE] = "none",
        [CPUS_ALL] = "all",
        [CPUS_AUTO] = "auto",
};
DEFINE_STRING_TABLE_LOOKUP(cpus_kind, CpusKind);

void *config_key_value(const ConfigKey *key, void *object) {
        return (char *) object + key->offset;
}

void config_key_mark(const ConfigKey *key, void *object, bool set) {
        if (key->set > 0)
                *(bool *) ((char *) object + key->set - 1) = set;
}

void config_key_error(ConfigParse *p, const ConfigKey *key, const char *value, const char *what, const char *off) {
        if (off)
                config_error(p, "%s: '%s' is not %s or '%s'", key->name, value, what, off);
        else
                config_error(p, "%s: '%s' is not %s", key->name, value, what);
}

/* "a, b or c" of a NULL-terminated list, into buf. */
static const char *format_alternatives(const char *const *names, char *buf, size_t size) {
        size_t n = 0, len = 0;

        while (names[n])
                n++;
        buf[0] = '\0';
        for (size_t i = 0; i < n && len < size; i++)
                len += (size_t) snprintf(buf + len, size - len, "%s%s", i == 0 ? "" : i + 1 == n ? " or " : ", ",
                                         names[i]);
        return buf;
}

int config_parse_bool(ConfigParse *p, const ConfigKey *key, const char *value, void *object) {
        const ConfigBool *words = key->data;
        bool b;

        if (words && words->on) {
                if (!streq(value, words->on) && !streq(value, words->off)) {
                        config_error(p, "%s: '%s' is not %s or %s", key->name, value, words->on, words->off);
                        return -EINVAL;
                }
                b = streq(value, words->on);
        } else if (parse_boolean(value, &b) < 0) {
                config_key_error(p, key, value, words && words->what ? words->what : "yes or no", NULL);
                return -EINVAL;
        }
        *(bool *) config_key_value(key, object) = b;
        return 0;
}

int config_parse_enum(ConfigParse *p, const ConfigKey *key, const char *value, void *object) {
        const ConfigEnum *e = key->data;
        char names[256];

        for (const char *const *n = e->names; *n; n++)
                if (streq(*n, value)) {
                        int v = e->from_string(value);
                        if (v < 0)
                                return -EINVAL; /* a row naming what its table lacks: the unit tests catch it */
                        *(int *) config_key_value(key, object) = v;
                        return 0;
                }
        config_key_error(p, key, value, format_alternatives(e->names, names, sizeof(names)), NULL);
        return -EINVAL;
}

/* The range message: "KEY: 'VALUE' is out of range (MIN to MAX[UNIT])". */
static void range_error(ConfigParse *p, const ConfigKey *key, const char *value, const char *min, const char *max) {
        const ConfigRange *range = key->data;
        config_error(p, "%s: '%s' is out of range (%s to %s%s)", key->name, value, min, max, range->unit ?: "");
}

int config_parse_uint32(ConfigParse *p, const ConfigKey *key, const char *value, void *object) {
        const ConfigRange *range = key->data;
        char min[32], max[32];
        uint64_t v;
        int r;

        if (range->off && streq(value, range->off)) {
                if (key->set > 0)
                        config_key_mark(key, object, false);
                else
                        *(uint32_t *) config_key_value(key, object) = 0;
                return 0;
        }
        r = parse_uint64(value, &v);
        if (r < 0 && r != -ERANGE) {
                config_key_error(p, key, value, range->what, range->off);
                return -EINVAL;
        }
        if (range->power_of_two && (r == -ERANGE || v > range->max || (v & (v - 1)) != 0)) {
                config_key_error(p, key, value, range->what, NULL);
                return -EINVAL;
        }
        if (r == -ERANGE || v < range->min || v > range->max || v > UINT32_MAX) {
                snprintf(min, sizeof(min), "%" PRIu64, range->min);
                snprintf(max, sizeof(max), "%" PRIu64, range->max);
                range_error(p, key, value, min, max);
                return -EINVAL;
        }
        *(uint32_t *) config_key_value(key, object) = (uint32_t) v;
        config_key_mark(key, object, true);
        return 0;
}

int config_parse_duration(ConfigParse *p, const ConfigKey *key, const char *value, void *object) {
        const ConfigRange *range = key->data;
        uint64_t usec;

        if (range->off && streq(value, range->off)) {
                *(uint64_t *) config_key_value(key, object) = 0;
                return 0;
        }
        if (parse_duration_usec(value, &usec) < 0) {
                config_key_error(p, key, value, range->what, range->off);
                return -EINVAL;
        }
        if (usec < range->min || usec > range->max) {
                /* The bounds as the parser reads them back ("100ms to 1h"). */
                _cleanup_free_ char *min = format_duration_usec(range->min), *max = format_duration_usec(range->max);
                if (!min || !max)
                        return p->oom = -ENOMEM;
                range_error(p, key, value, min, max);
                return -EINVAL;
        }
        *(uint64_t *) config_key_value(key, object) = usec;
        return 0;
}

int config_parse_name(ConfigParse *p, const ConfigKey *key, const char *value, void *object) {
        const ConfigName *name = key->data;
        char **dest = config_key_value(key, object);
        char *copy;

        if (name->off && streq(value, name->off)) {
                *dest = mfree(*dest);
                return 0;
        }
        if (!name->valid(value)) {
                config_key_error(p, key, value, name->what, name->off);
                return -EINVAL;
        }
        copy = strdup(value);
        if (!copy)
                return p->oom = -ENOMEM;
        free(*dest);
        *dest = copy;
        return 0;
}

/* A CPU list; names: the words the key also takes, for the message ("housekeeping,
 * isolated or none"), NULL when it takes only a list. */
static int parse_cpu_list(ConfigParse *p, const char *key, const char *value, const char *names, CPUSet *ret) {
        _cleanup_cpuset_ CPUSet set = CPUSET_EMPTY;
        int r;

        r = cpuset_parse_list(value, &set);
        if (r == -ENOMEM)
                return p->oom = r;
        if (r == -ERANGE) {
                config_error(p, "%s: CPU number too large in '%s' (max %u)", key, value, CPUSET_MAX_CPUS - 1);
                return -EINVAL;
        }
        if (r < 0 && names) {
                config_error(p, "%s: '%s' is not a CPU list (e.g. 2-3,6), %s", key, value, names);
                return -EINVAL;
        }
        if (r < 0) {
                config_error(p, "%s: '%s' is not a CPU list (expected e.g. 2-3,6)", key, value);
                return -EINVAL;
        }
        if (cpuset_is_empty(&set)) {
                config_error(p, "%s: empty CPU list", key);
                return -EINVAL;
        }
        cpuset_done(ret);
        *ret = set;
        set = CPUSET_EMPTY;
        return 0;
}

int config_parse_cpu_list(ConfigParse *p, const char *key, const char *value, CPUSet *ret) {
        return parse_cpu_list(p, key, value, NULL, ret);
}

/* A CPU set: one of the names the row allows, or a list. */
int config_parse_cpus(ConfigParse *p, const ConfigKey *key, const char *value, void *object) {
        ConfigCpus *dest = config_key_value(key, object);
        CpusKind kind = cpus_kind_from_string(value);
        const char *names[_CPUS_KIND_MAX + 1];
        char alternatives[128];
        size_t n = 0;
        int r;

        dest->source = config_here(p);
        if (kind >= 0 && (key->cpu_names & (1u << kind))) {
                dest->kind = kind;
                cpuset_done(&dest->cpus);
                return 0;
        }
        for (CpusKind k = 0; k < _CPUS_KIND_MAX; k++)
                if (key->cpu_names & (1u << k))
                        names[n++] = cpus_kind_to_string(k);
        names[n] = NULL;
        r = parse_cpu_list(p, key->name, value, n > 0 ? format_alternatives(names, alternatives, sizeof(alternatives)) : NULL,
                           &dest->cpus);
        if (r < 0)
                return r;
        dest->kind = CPUS_LIST;
        return 0;
}

void config_cpus_done(ConfigCpus *c) {
        cpuset_done(&c->cpus);
}

static void check_cpus_listed(const CPUSet *set, const CPUSet *have, const char *what, const ConfigSource *at,
                              const char *problem, const char *have_name, ErrorList *errors) {
        _cleanup_cpuset_ CPUSet missing = CPUSET_EMPTY;
        _cleanup_free_ char *missing_list = NULL, *have_list = NULL;

        if (cpuset_copy(&missing, set) < 0)
                return (void) error_list_add(errors, "out of memory");
        cpuset_subtract(&missing, have);
        if (cpuset_is_empty(&missing))
                return;
        missing_list = cpuset_format_list(&missing);
        have_list = cpuset_format_list(have);
        error_list_add(errors, "%s:%u: %s: CPU %s %s (%s CPUs: %s)", at->file ?: "<default>", at->line, what,
                       missing_list ?: "?", problem, have_name, have_list ?: "?");
}

int config_cpus_resolve(const Posture *p, const HostCpus *cpus, const ConfigCpus *value, CpusCheck check,
                        const char *what, const ConfigSource *setting_at, ErrorList *errors, CPUSet *ret) {
        const ConfigSource *at = value->source.file || !setting_at ? &value->source : setting_at;
        const CPUSet *set;

        switch (value->kind) {
        case CPUS_HOUSEKEEPING:
                set = &p->housekeeping;
                break;
        case CPUS_ISOLATED:
                set = &p->isolated;
                if (cpuset_is_empty(set) && !(check & CPUS_ISOLATED_MAY_BE_EMPTY))
                        error_list_add(errors, "%s:%u: %s = isolated%s, but no CPU is isolated", at->file ?: "<default>",
                                       at->line, what, value->source.file ? "" : " (the default)");
                break;
        case CPUS_ALL:
                set = &p->online;
                break;
        case CPUS_LIST:
                set = &value->cpus;
                if (check & CPUS_CHECK_ONLINE)
                        check_cpus_listed(set, &cpus->online, what, at, "does not exist or is offline", "online", errors);
                else if (check & CPUS_CHECK_POSSIBLE) {
                        _cleanup_cpuset_ CPUSet have = CPUSET_EMPTY;
                        if (cpuset_copy(&have, &cpus->possible) < 0 || cpuset_or(&have, &cpus->online) < 0)
                                return -ENOMEM;
                        check_cpus_listed(set, &have, what, at, "does not exist", "possible", errors);
                }
                break;
        default:
                cpuset_clear(ret);
                return 0;
        }
        return cpuset_copy(ret, set);
}

bool config_glob_is_valid(const char *glob, size_t max) {
        const char *bracket;

        if (isempty(glob) || strlen(glob) > max)
                return false;
        for (const char *p = glob; *p; p++)
                if (!isgraph((unsigned char) *p))
                        return false;
        /* fnmatch() treats a malformed pattern as "no match" rather than an error. */
        bracket = strchr(glob, '[');
        return !bracket || strchr(bracket, ']');
}

bool config_kernel_name_is_valid(const char *name, size_t max) {
        size_t n = strlen(name);
        if (n == 0 || n > max)
                return false;
        for (const char *p = name; *p; p++)
                if (!islower((unsigned char) *p) && !isdigit((unsigned char) *p) && *p != '-' && *p != '_')
                        return false;
        return true;
}

bool config_unit_name_is_valid(const char *name, size_t max) {
        size_t n = strlen(name);
        if (n == 0 || n > max)
                return false;
        for (const char *p = name; *p; p++)
                if (!isalnum((unsigned char) *p) && !strchr("-_.@:\\", *p))
                        return false;
        return true;
}

static size_t config_file_index(const Config *c, const char *file) {
        for (size_t i = 0; i < c->n_files; i++)
                if (c->files[i] == file)
                        return i;
        return SIZE_MAX;
}

bool config_source_is_later(const Config *c, const ConfigSource *a, const ConfigSource *b) {
        size_t ia = config_file_index(c, a->file), ib = config_file_index(c, b->file);
        return ia != ib ? ia > ib && ia != SIZE_MAX : a->line > b->line;
}

void config_words_free(char **words, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(words[i]);
        free(words);
}

int config_parse_words(ConfigParse *p, const ConfigKey *key, const char *value, ConfigWordCheck word_is_good,
                       ConfigListCheck list_is_good, char ***words, size_t *n_words) {
        _cleanup_free_ char *copy = strdup(value);
        char **list = NULL, *word, *save = NULL;
        size_t n = 0, allocated = 0;
        bool bad = false;

        if (!copy)
                return p->oom = -ENOMEM;
        if (streq(value, "none")) {
                config_words_free(*words, *n_words);
                *words = NULL;
                *n_words = 0;
                return 0;
        }
        for (word = strtok_r(copy, " \t", &save); word && !p->oom; word = strtok_r(NULL, " \t", &save)) {
                if (!word_is_good(p, key, list, n, word)) {
                        bad = true;
                        continue;
                }
                if (array_grow(&list, &allocated, n + 1) < 0 || !(list[n] = strdup(word)))
                        p->oom = -ENOMEM;
                else
                        n++;
        }
        if (!bad && !p->oom && list_is_good && !list_is_good(p, list, n))
                bad = true;
        if (bad || p->oom) {
                config_words_free(list, n);
                return p->oom ?: -EINVAL;
        }
        config_words_free(*words, *n_words);
        *words = list;
        *n_words = n;
        return 0;
}
