/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lowlatctl explain: what lowlatd.conf(5) says of a key or a section, lowlatctl(1) of a
 * finding of check, the journal catalog of an event. The tables are written at build time
 * from those very files (tools/explain-table.py makes explain-table.c), so that explain
 * cannot say what the pages do not; the lookup is explain.c. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "basic/string-table.h"

typedef struct ExplainSection {
        const char *name;   /* "pm"; [service] and [process] are two rows of one page section */
        const char *source; /* "lowlatd.conf(5), [PM] SECTION" */
        bool takes_any_key; /* [sysctl], [sysfs]: any key is explained by the section */
        const char *text;
} ExplainSection;

typedef struct ExplainKey {
        const char *section;
        const char *name;    /* as the page writes it: "governor", "feature.NAME" */
        const char *pattern; /* fnmatch(3) pattern of the names it stands for ("feature.*"), or NULL */
        const char *source;
        const char *text;    /* the page's item: rows of one item share it */
} ExplainKey;

typedef struct ExplainFinding {
        const char *id; /* may be a pattern: "kernel.config.*" */
        const char *severity;
        const char *text; /* the when, then "Why: ..." and "Fix: ..." lines */
        const char *why;  /* why it matters for latency, one line, no label */
        const char *fix;  /* the fix as the audit gives it, host-specific parts named (LIST, UNIT) */
} ExplainFinding;

typedef struct ExplainEvent {
        const char *message_id; /* the catalog's entry; lib/log's table names it */
        const char *subject;
        const char *text;
} ExplainEvent;

extern const ExplainSection explain_sections[];
extern const size_t explain_n_sections;
extern const ExplainKey explain_keys[];
extern const size_t explain_n_keys;
extern const ExplainFinding explain_findings[];
extern const size_t explain_n_findings;
extern const ExplainEvent explain_events[];
extern const size_t explain_n_events;

typedef enum ExplainKind {
        EXPLAIN_SECTION,
        EXPLAIN_KEY,
        EXPLAIN_FINDING,
        EXPLAIN_EVENT,
        _EXPLAIN_KIND_MAX,
        _EXPLAIN_KIND_INVALID = -EINVAL,
} ExplainKind;

/* "section", "key", "finding", "event": --json's kind. */
DECLARE_STRING_TABLE_LOOKUP(explain_kind, ExplainKind);

typedef struct ExplainMatch {
        ExplainKind kind;
        char *name;             /* "pm.governor", "[sysctl]", "boot.isolcpus", "drift" */
        const char *source;     /* where the text comes from, for people */
        const char *severity;   /* a finding's; NULL for the others */
        const char *message_id; /* an event's; NULL for the others */
        const char *why;        /* a finding's; NULL for the others */
        const char *fix;        /* a finding's; NULL for the others */
        const char *text;
} ExplainMatch;

typedef struct ExplainResult {
        ExplainMatch *matches;
        size_t n, allocated;
        /* A bare name that several sections' keys (or a section) have: matches are the
         * candidates, to be named, not explained. */
        bool ambiguous;
} ExplainResult;

void explain_result_done(ExplainResult *r);

/* What word names: a key (SECTION.KEY, or KEY alone where one section has it), a section
 * ([SECTION], SECTION, or SECTION.ANYTHING of one that takes any key), a finding id, an
 * event's name or MESSAGE_ID. Several matches of different kinds are all explained
 * (irq.irqbalance is a key and a finding). 0 (ret->n 0: none), or -ENOMEM. */
int explain_lookup(const char *word, ExplainResult *ret);

/* Names close to word, for one that matched nothing: at most max matches, the closest
 * first, with kind and name only. 0, or -ENOMEM. */
int explain_suggest(const char *word, size_t max, ExplainResult *ret);
/* Every name explain knows, kind and name only: [SECTION], SECTION.KEY, finding ids, event
 * names. 0, or -ENOMEM. */
int explain_list(ExplainResult *ret);
