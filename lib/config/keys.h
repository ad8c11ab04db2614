/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The configuration as data, inside lib/config/: the state of one file's parse, the
 * sections, one row per key (keys.c), the value parsers every key shares (values.c), and
 * what each section adds: its own parsers, cross-key checks and resolution (section-*.c). */
#pragma once

#include <stddef.h>

#include "config/config.h"
#include "host/host.h"

/* The posture (posture.h), which sections resolve into: posture.c runs them. */
typedef struct Posture Posture;

typedef struct ConfigSection ConfigSection;
typedef struct ConfigKey ConfigKey;

/* One file's parse (reader.c): where the reader is, and what the rows write into. */
typedef struct ConfigParse {
        Config *config;
        ErrorList *errors;
        const char *file; /* owned by config->files */
        unsigned line;
        int oom;
        const ConfigSection *section; /* NULL: before any section, or under a broken header */
        char *argument;               /* the section's quoted name as written, or NULL */
        void *object;                 /* what the section's rows write into */
        bool skipping;                /* under an unknown or broken header: its keys are not reported */
        /* The keys this file has set, by object: a second line for one is a warning. */
        struct ConfigSeen {
                const void *object;
                const ConfigSection *section;
                char *argument; /* a named section's name: [nic "eth0"] twice is one object */
                char *key;
                unsigned line;
        } *seen;
        size_t n_seen, allocated_seen;
} ConfigParse;

/* A value parser: value is the key's value (trimmed, never empty unless the section takes
 * empty values), object the section's. Writes the row's destination only when the value
 * is good; reports a bad value itself ("KEY: 'VALUE' is not ...", config_key_error()).
 * Returns 0, or -EINVAL (reported), or -ENOMEM. */
typedef int (*ConfigParser)(ConfigParse *p, const ConfigKey *key, const char *value, void *object);

/* 1 + the offset of a field, so that 0 can mean "no such field" in a row. */
#define CONFIG_FIELD(type, member) (offsetof(type, member) + 1)

struct ConfigKey {
        const char *section;
        const char *name;
        ConfigParser parse;
        size_t offset;   /* of the value in the section's object */
        size_t set;      /* CONFIG_FIELD() of a bool made true by a good value (false by "off"); 0: none */
        size_t source;   /* CONFIG_FIELD() of a ConfigSource where the key was written, good or not; 0: none */
        const void *data; /* the parser's: ConfigRange, ConfigEnum, ConfigBool, ConfigName */
        unsigned cpu_names; /* config_parse_cpus(): the names the key takes besides a list (CPUS_NAME_*) */
        bool repeats;      /* each line adds one (pin): a second line is no warning */
        const char *kinds; /* the setting kinds (kind.h's names) its value becomes; NULL: none of its own */
};

struct ConfigSection {
        const char *name;
        /* The header with its quoted argument, for messages ("[nic \"PATTERN\"], e.g. ..."):
         * the section takes one. NULL: it takes none. */
        const char *argument_example;
        /* Starts a section from its header: returns the object its rows write into (an
         * element appended to an array of the Config), or NULL (reported, or out of
         * memory in p->oom). NULL here: the object is the Config itself. */
        void *(*open)(ConfigParse *p, const char *argument);
        /* Keys no row names: a [sysctl] name, a [sysfs] path, a [nic] ethtool parameter.
         * Returns 0 (handled, errors reported) or -ENOENT (unknown key). NULL: none. */
        int (*assign)(ConfigParse *p, const char *key, const char *value, void *object);
        bool keys_are_paths;   /* a key may hold ':', '[' and ']' ([sysfs]) */
        bool empty_values;     /* the section reports empty values in its own words */
        /* Checks across keys, once every file is read. */
        void (*validate)(const Config *c, ErrorList *errors);
        /* The section's part of the posture: its CPU sets resolved against the host. */
        int (*resolve)(Posture *p, const Config *c, const HostCpus *cpus, ErrorList *errors);
};

/* keys.c: the sections in the order they are resolved, and the rows. */
extern const ConfigSection config_sections[];
extern const size_t config_n_sections;
extern const ConfigKey config_keys[];
extern const size_t config_n_keys;
const ConfigSection *config_section_find(const char *name);
const ConfigKey *config_key_find(const ConfigSection *section, const char *name);

/* reader.c: "FILE:LINE: ..." for the line being read. */
_printf_(2, 3) void config_error(ConfigParse *p, const char *fmt, ...);
/* "FILE:LINE: warning: ..." for the line being read, into the Config's warnings. */
_printf_(2, 3) void config_warning(ConfigParse *p, const char *fmt, ...);
/* key set in the section now open: a warning when this file set it there before (a row's
 * name, or a key its section's assign reads without a row). */
void config_note_key_set(ConfigParse *p, const char *key);
ConfigSource config_here(const ConfigParse *p);
/* Takes one "KEY = VALUE" of the current section: the row, or the section's assign. */
void config_assign(ConfigParse *p, const char *key, const char *value);

/* values.c: the parsers every key shares, and what they take in ConfigKey.data. */
typedef struct ConfigRange {
        uint64_t min, max;  /* the bounds, in the value's unit (microseconds for durations) */
        const char *what;   /* "a number of microseconds": what a malformed value is not */
        const char *unit;   /* " kHz", after the bounds in the range message; NULL: none */
        const char *off;    /* a word that turns the key off ("off"): the set field false, or a 0 value */
        bool power_of_two;  /* the value must be 0 or a power of two */
} ConfigRange;

typedef struct ConfigEnum {
        int (*from_string)(const char *s);
        const char *const *names; /* the names the key takes, NULL-terminated, as messages list them */
} ConfigEnum;

/* var: the ConfigEnum of the names of a string table (name_from_string() maps them) that
 * a key takes: all of them, or a few (a [service]'s policy is fifo or rr). */
#define CONFIG_ENUM(var, name, ...)                                        \
        static int var##_lookup(const char *s) {                           \
                return (int) name##_from_string(s);                        \
        }                                                                  \
        static const char *const var##_names[] = { __VA_ARGS__, NULL };    \
        static const ConfigEnum var = { var##_lookup, var##_names }

typedef struct ConfigBool {
        const char *on, *off; /* the two words it takes; NULL: yes/no, on/off, true/false, 1/0 */
        const char *what;     /* what a bad value is not; NULL: "yes or no" */
} ConfigBool;

typedef struct ConfigName {
        bool (*valid)(const char *name);
        const char *what; /* "a governor name (e.g. performance)" */
        const char *off;  /* a word that turns the key off (the name NULL); NULL: none */
} ConfigName;

/* The names a CPU set key may take besides a list. */
enum {
        CPUS_NAME_HOUSEKEEPING = 1u << CPUS_HOUSEKEEPING,
        CPUS_NAME_ISOLATED = 1u << CPUS_ISOLATED,
        CPUS_NAME_NONE = 1u << CPUS_NONE,
        CPUS_NAME_ALL = 1u << CPUS_ALL,
        CPUS_NAME_AUTO = 1u << CPUS_AUTO,
};

int config_parse_bool(ConfigParse *p, const ConfigKey *key, const char *value, void *object);
int config_parse_enum(ConfigParse *p, const ConfigKey *key, const char *value, void *object);
int config_parse_uint32(ConfigParse *p, const ConfigKey *key, const char *value, void *object);
int config_parse_duration(ConfigParse *p, const ConfigKey *key, const char *value, void *object);
int config_parse_name(ConfigParse *p, const ConfigKey *key, const char *value, void *object);
int config_parse_cpus(ConfigParse *p, const ConfigKey *key, const char *value, void *object);
/* KEY = WORD... | none, for config_parse_words(): whether word may follow the n words before
 * it (saying why not), and whether the whole list may stand. */
typedef bool (*ConfigWordCheck)(ConfigParse *p, const ConfigKey *key, char *const *list, size_t n, const char *word);
typedef bool (*ConfigListCheck)(ConfigParse *p, char *const *list, size_t n);
/* Parses value into a new list that replaces *words only when every word and the whole list
 * are good; "none" empties it. list_is_good may be NULL. */
int config_parse_words(ConfigParse *p, const ConfigKey *key, const char *value, ConfigWordCheck word_is_good,
                       ConfigListCheck list_is_good, char ***words, size_t *n_words);
void config_words_free(char **words, size_t n);
/* A CPU list alone (pin = GLOB LIST): refuses an empty list. */
int config_parse_cpu_list(ConfigParse *p, const char *key, const char *value, CPUSet *ret);

/* "KEY: 'VALUE' is not WHAT[ or 'OFF']": the one message for a malformed value. */
void config_key_error(ConfigParse *p, const ConfigKey *key, const char *value, const char *what, const char *off);
/* A row's destination and fields in object. */
void *config_key_value(const ConfigKey *key, void *object);
void config_key_mark(const ConfigKey *key, void *object, bool set);

/* How a resolved CPU set value is checked against the host (config_cpus_resolve()). */
typedef enum CpusCheck {
        CPUS_CHECK_ONLINE = 1u << 0,   /* a listed CPU must be online now */
        CPUS_CHECK_POSSIBLE = 1u << 1, /* a listed CPU may be offline now, not beyond the possible ones */
        CPUS_ISOLATED_MAY_BE_EMPTY = 1u << 2, /* "isolated" with no isolated CPU is no error */
} CpusCheck;

/* A ConfigCpus as CPUs: empty for unset and none. what names the key in messages;
 * setting_at is where the setting the CPUs belong to was written, named when the value
 * is a default (NULL: the value's own line). */
int config_cpus_resolve(const Posture *p, const HostCpus *cpus, const ConfigCpus *value, CpusCheck check,
                        const char *what, const ConfigSource *setting_at, ErrorList *errors, CPUSet *ret);

/* Patterns in section names and values: printable, bounded, brackets closed. */
bool config_glob_is_valid(const char *glob, size_t max);
/* Lower-case kernel names (a qdisc kind, a feature): [a-z0-9_-], at most max. */
bool config_kernel_name_is_valid(const char *name, size_t max);
bool config_unit_name_is_valid(const char *name, size_t max);
/* Whether a was read after b: a later file, or a later line of the same file. */
bool config_source_is_later(const Config *c, const ConfigSource *a, const ConfigSource *b);

/* The sections' own parts (section-*.c, profiles.c), named in the tables of keys.c. */
int config_parse_profiles(ConfigParse *p, const ConfigKey *key, const char *value, void *object);
int config_parse_slices(ConfigParse *p, const ConfigKey *key, const char *value, void *object);
int config_parse_partition(ConfigParse *p, const ConfigKey *key, const char *value, void *object);
void config_validate_cpus(const Config *c, ErrorList *errors);
int config_resolve_cpus(Posture *p, const Config *c, const HostCpus *cpus, ErrorList *errors);

int config_parse_pin(ConfigParse *p, const ConfigKey *key, const char *value, void *object);
int config_resolve_irq(Posture *p, const Config *c, const HostCpus *cpus, ErrorList *errors);

bool config_governor_name_is_valid(const char *name);
bool config_epp_name_is_valid(const char *name);
int config_parse_resume_latency(ConfigParse *p, const ConfigKey *key, const char *value, void *object);
int config_parse_min_freq(ConfigParse *p, const ConfigKey *key, const char *value, void *object);
int config_resolve_pm(Posture *p, const Config *c, const HostCpus *cpus, ErrorList *errors);

int config_assign_sysctl(ConfigParse *p, const char *key, const char *value, void *object);
int config_assign_sysfs(ConfigParse *p, const char *key, const char *value, void *object);

void *config_open_nic(ConfigParse *p, const char *argument);
int config_assign_nic(ConfigParse *p, const char *key, const char *value, void *object);
int config_parse_nic_feature(ConfigParse *p, const ConfigKey *key, const char *value, void *object);
bool config_qdisc_name_is_valid(const char *name);
int config_resolve_nic(Posture *p, const Config *c, const HostCpus *cpus, ErrorList *errors);

void *config_open_service(ConfigParse *p, const char *argument);
void *config_open_process(ConfigParse *p, const char *argument);

void *config_open_kthread(ConfigParse *p, const char *argument);
void config_validate_kthread(const Config *c, ErrorList *errors);
int config_resolve_kthread(Posture *p, const Config *c, const HostCpus *cpus, ErrorList *errors);

int config_parse_noise_gate(ConfigParse *p, const ConfigKey *key, const char *value, void *object);
int config_resolve_noise(Posture *p, const Config *c, const HostCpus *cpus, ErrorList *errors);
