/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lowlatctl explain KEY|FINDING|EVENT: finds a word in the tables generated from
 * lowlatd.conf(5), lowlatctl(1) and the journal catalog (explain.h), and prints what they
 * say; no daemon needed. Event names come from lib/log's own table, the one the journal
 * uses, so a renamed event cannot keep an old name here. */
#include <ctype.h>
#include <fnmatch.h>
#include <string.h>

#include "client.h"
#include "explain.h"
#include "basic/array.h"
#include "basic/cells.h"
#include "basic/event.h"
#include "basic/util.h"

static const char *const explain_kind_table[_EXPLAIN_KIND_MAX] = {
        [EXPLAIN_SECTION] = "section",
        [EXPLAIN_KEY] = "key",
        [EXPLAIN_FINDING] = "finding",
        [EXPLAIN_EVENT] = "event",
};

DEFINE_STRING_TABLE_LOOKUP(explain_kind, ExplainKind);

void explain_result_done(ExplainResult *r) {
        for (size_t i = 0; i < r->n; i++)
                free(r->matches[i].name);
        free(r->matches);
        *r = (ExplainResult) {};
}

/* Takes name, whatever happens. */
static int result_add(ExplainResult *r, ExplainMatch m) {
        if (!m.name || array_grow(&r->matches, &r->allocated, r->n + 1) < 0) {
                free(m.name);
                return -ENOMEM;
        }
        r->matches[r->n++] = m;
        return 0;
}

static const ExplainSection *section_find(const char *name, size_t length) {
        for (size_t i = 0; i < explain_n_sections; i++)
                if (strlen(explain_sections[i].name) == length && strncmp(explain_sections[i].name, name, length) == 0)
                        return &explain_sections[i];
        return NULL;
}

static bool key_matches(const ExplainKey *k, const char *name) {
        return k->pattern ? fnmatch(k->pattern, name, 0) == 0 : streq(k->name, name);
}

static const ExplainKey *key_find(const char *section, const char *name) {
        for (size_t i = 0; i < explain_n_keys; i++)
                if (streq(explain_keys[i].section, section) && key_matches(&explain_keys[i], name))
                        return &explain_keys[i];
        return NULL;
}

static int add_section(ExplainResult *r, const ExplainSection *s, const char *name) {
        return result_add(r, (ExplainMatch) { EXPLAIN_SECTION, strdup(name), s->source, .text = s->text });
}

static int add_key(ExplainResult *r, const ExplainKey *k, const char *name) {
        return result_add(r, (ExplainMatch) { EXPLAIN_KEY, strdup(name), k->source, .text = k->text });
}

/* [SECTION], or SECTION.KEY: a key of that section, or the section itself where it takes
 * any key (sysctl.net.core.busy_poll). */
static int lookup_qualified(const char *word, ExplainResult *r) {
        const ExplainSection *s;
        const char *dot;

        if (word[0] == '[') {
                size_t length = strlen(word);
                s = length > 2 && word[length - 1] == ']' ? section_find(word + 1, length - 2) : NULL;
                return s ? add_section(r, s, word) : 0;
        }
        dot = strchr(word, '.');
        s = dot ? section_find(word, (size_t) (dot - word)) : NULL;
        if (!s)
                return 0;
        const ExplainKey *k = key_find(s->name, dot + 1);
        if (k)
                return add_key(r, k, word);
        return s->takes_any_key ? add_section(r, s, word) : 0;
}

static int lookup_finding(const char *word, ExplainResult *r) {
        for (size_t i = 0; i < explain_n_findings; i++) {
                const ExplainFinding *f = &explain_findings[i];
                if (fnmatch(f->id, word, 0) == 0)
                        return result_add(r, (ExplainMatch) { EXPLAIN_FINDING, strdup(word), "lowlatctl(1), check",
                                                              .severity = f->severity, .why = f->why,
                                                              .fix = f->fix, .text = f->text });
        }
        return 0;
}

static const ExplainEvent *event_entry(const char *message_id) {
        for (size_t i = 0; i < explain_n_events; i++)
                if (strcasecmp(explain_events[i].message_id, message_id) == 0)
                        return &explain_events[i];
        return NULL;
}

/* An event's name ("drift"), or its MESSAGE_ID as journalctl prints it. */
static int lookup_event(const char *word, ExplainResult *r) {
        EventId id = event_from_string(word);
        const ExplainEvent *e = NULL;
        const char *name = word;

        if (id >= 0)
                e = event_entry(event_info(id)->message_id);
        else if (strlen(word) == 32 && strspn(word, "0123456789abcdefABCDEF") == 32) {
                e = event_entry(word);
                for (EventId i = 0; e && i < _EVENT_ID_MAX; i++)
                        if (streq(event_info(i)->message_id, e->message_id))
                                name = event_info(i)->name;
        }
        if (!e)
                return 0;
        return result_add(r, (ExplainMatch) { EXPLAIN_EVENT, strdup(name), "the journal catalog (lowlatd.catalog)",
                                              .message_id = e->message_id, .text = e->text });
}

/* KEY alone, or SECTION alone: every section that has it. One text (the [service] and
 * [process] keys share theirs) is an answer; more are candidates to name. */
static int lookup_bare(const char *word, ExplainResult *r) {
        const ExplainSection *s = section_find(word, strlen(word));

        if (s && result_add(r, (ExplainMatch) { EXPLAIN_SECTION, strdup_printf("[%s]", s->name), s->source,
                                                .text = s->text }) < 0)
                return -ENOMEM;
        for (size_t i = 0; i < explain_n_keys; i++) {
                const ExplainKey *k = &explain_keys[i];

                if (key_matches(k, word) &&
                    result_add(r, (ExplainMatch) { EXPLAIN_KEY, strdup_printf("%s.%s", k->section, word), k->source,
                                                   .text = k->text }) < 0)
                        return -ENOMEM;
        }
        for (size_t i = 1; i < r->n; i++)
                if (r->matches[i].text != r->matches[0].text)
                        r->ambiguous = true;
        while (!r->ambiguous && r->n > 1)
                free(r->matches[--r->n].name);
        return 0;
}

int explain_lookup(const char *word, ExplainResult *ret) {
        _cleanup_(explain_result_done) ExplainResult r = {};

        if (!isempty(word)) {
                if (lookup_qualified(word, &r) < 0 || lookup_finding(word, &r) < 0 || lookup_event(word, &r) < 0)
                        return -ENOMEM;
                if (r.n == 0 && word[0] != '[' && lookup_bare(word, &r) < 0)
                        return -ENOMEM;
        }
        *ret = r;
        r = (ExplainResult) {};
        return 0;
}

/* Every name, as explain takes it: [SECTION], SECTION.KEY (as the page writes a pattern:
 * nic.feature.NAME), finding ids, event names. */
int explain_list(ExplainResult *ret) {
        _cleanup_(explain_result_done) ExplainResult r = {};
        int q = 0;

        for (size_t i = 0; q >= 0 && i < explain_n_sections; i++)
                q = result_add(&r, (ExplainMatch) { EXPLAIN_SECTION, strdup_printf("[%s]", explain_sections[i].name) });
        for (size_t i = 0; q >= 0 && i < explain_n_keys; i++)
                q = result_add(&r, (ExplainMatch) { EXPLAIN_KEY, strdup_printf("%s.%s", explain_keys[i].section,
                                                                               explain_keys[i].name) });
        for (size_t i = 0; q >= 0 && i < explain_n_findings; i++)
                q = result_add(&r, (ExplainMatch) { EXPLAIN_FINDING, strdup(explain_findings[i].id) });
        for (EventId i = 0; q >= 0 && i < _EVENT_ID_MAX; i++)
                q = result_add(&r, (ExplainMatch) { EXPLAIN_EVENT, strdup(event_to_string(i)) });
        if (q < 0)
                return q;
        *ret = r;
        r = (ExplainResult) {};
        return 0;
}

/* Levenshtein's distance, for names of at most 63 characters; SIZE_MAX beyond. */
static size_t edit_distance(const char *a, const char *b) {
        size_t la = strlen(a), lb = strlen(b), row[64];

        if (la >= ELEMENTSOF(row) || lb >= ELEMENTSOF(row))
                return SIZE_MAX;
        for (size_t j = 0; j <= lb; j++)
                row[j] = j;
        for (size_t i = 1; i <= la; i++) {
                size_t diagonal = row[0];
                row[0] = i;
                for (size_t j = 1; j <= lb; j++) {
                        size_t above = row[j];
                        size_t best = diagonal + (tolower(a[i - 1]) != tolower(b[j - 1]));
                        best = MIN(best, above + 1);
                        row[j] = MIN(best, row[j - 1] + 1);
                        diagonal = above;
                }
        }
        return row[lb];
}

/* How close name is to word: a typo (an edit for every four letters) or a part of it
 * (isolcpus for boot.isolcpus, governer for pm.governor); SIZE_MAX: not close. */
static size_t closeness(const char *word, const char *name) {
        size_t limit = MAX(strlen(word) / 4, (size_t) 1), length = strlen(name);
        size_t d = edit_distance(word, name);
        const char *dot = strchr(name, '.');
        char inner[64];

        if (name[0] == '[' && length - 2 < sizeof(inner)) { /* [pm] against pm */
                memcpy(inner, name + 1, length - 2);
                inner[length - 2] = 0;
                d = MIN(d, edit_distance(word, inner));
        } else if (dot) /* SECTION.KEY against KEY, boot.isolcpus against isolcpus */
                d = MIN(d, edit_distance(word, dot + 1));
        if (d <= limit)
                return d;
        if (strlen(word) >= 3 && strstr(name, word))
                return limit + 1;
        return SIZE_MAX;
}

int explain_suggest(const char *word, size_t max, ExplainResult *ret) {
        _cleanup_(explain_result_done) ExplainResult all = {}, r = {};
        int q;

        q = explain_list(&all);
        if (q < 0)
                return q;
        /* The closest first: a few passes over a short list. */
        for (size_t score = 0; score <= MAX(strlen(word) / 4, (size_t) 1) + 1 && r.n < max; score++)
                for (size_t i = 0; i < all.n && r.n < max; i++)
                        if (!isempty(word) && closeness(word, all.matches[i].name) == score &&
                            result_add(&r, (ExplainMatch) { all.matches[i].kind, strdup(all.matches[i].name) }) < 0)
                                return -ENOMEM;
        *ret = r;
        r = (ExplainResult) {};
        return 0;
}

/* ---- The verb ------------------------------------------------------------------------ */

static void print_match_text(const ExplainMatch *m) {
        fputs(m->text, stdout);
        switch (m->kind) {
        case EXPLAIN_FINDING:
                /* The table gives the fix in general terms (LIST, UNIT, PID); the audit
                 * fills them in for the host it looked at. */
                printf("\nFrom %s. lowlatctl check says what it found on this host;\n"
                       "its message gives the fix with this host's CPUs, units and values filled in.\n",
                       m->source);
                break;
        case EXPLAIN_EVENT:
                /* As the catalog writes it: journalctl -x fills in the fields. */
                printf("\nFrom %s, MESSAGE_ID=%s;\n"
                       "journalctl -x shows it with each message's @FIELDS@ filled in.\n",
                       m->source, m->message_id);
                break;
        default:
                printf("\nFrom %s.\n", m->source);
        }
}

static void print_match_json(const ExplainMatch *m, bool first) {
        fputs(first ? "{" : ",{", stdout);
        json_print_member(stdout, "kind", explain_kind_to_string(m->kind), true);
        json_print_member(stdout, "name", m->name, false);
        if (m->severity)
                json_print_member(stdout, "severity", m->severity, false);
        if (m->message_id)
                json_print_member(stdout, "message_id", m->message_id, false);
        if (m->why)
                json_print_member(stdout, "why", m->why, false);
        if (m->fix)
                json_print_member(stdout, "fix", m->fix, false);
        if (m->source)
                json_print_member(stdout, "source", m->source, false);
        if (m->text)
                json_print_member(stdout, "text", m->text, false);
        fputc('}', stdout);
}

static int print_list(bool json) {
        _cleanup_(explain_result_done) ExplainResult r = {};

        if (explain_list(&r) < 0)
                return -ENOMEM;
        if (json)
                fputc('[', stdout);
        for (size_t i = 0; i < r.n; i++)
                if (json)
                        print_match_json(&r.matches[i], i == 0);
                else
                        puts(r.matches[i].name);
        if (json)
                fputs("]\n", stdout);
        return finish_output(EXIT_OK);
}

/* "no key, section, finding or event is named 'X'", with the names close to it. */
static int print_unknown(const char *word) {
        _cleanup_(explain_result_done) ExplainResult close = {};

        if (explain_suggest(word, 5, &close) < 0)
                return -ENOMEM;
        fputs("lowlatctl: explain: no key, section, finding or event is named '", stderr);
        print_escaped(stderr, word);
        fputs("'\n", stderr);
        for (size_t i = 0; i < close.n; i++)
                fprintf(stderr, "%s%s", i == 0 ? "lowlatctl: did you mean " : i + 1 == close.n ? " or " : ", ",
                        close.matches[i].name);
        fputs(close.n > 0 ? "? (lowlatctl explain --list names them all)\n"
                          : "lowlatctl: lowlatctl explain --list names every one there is\n",
              stderr);
        return EXIT_REFUSED;
}

int verb_explain_run(char *const *words, size_t n_words, bool json, bool list) {
        _cleanup_(explain_result_done) ExplainResult r = {};

        if (list && n_words == 0)
                return print_list(json);
        if (list || n_words != 1) {
                fprintf(stderr, "lowlatctl: explain takes one KEY, [SECTION], FINDING or EVENT, or --list; see --help\n");
                return EXIT_USAGE;
        }
        if (isempty(words[0])) {
                fprintf(stderr, "lowlatctl: explain: an empty word names nothing; see lowlatctl explain --list\n");
                return EXIT_USAGE;
        }
        if (explain_lookup(words[0], &r) < 0)
                return -ENOMEM;
        if (r.n == 0)
                return print_unknown(words[0]);
        if (r.ambiguous) {
                fputs("lowlatctl: explain: '", stderr);
                print_escaped(stderr, words[0]);
                fputs("' is ambiguous: ", stderr);
                for (size_t i = 0; i < r.n; i++)
                        fprintf(stderr, "%s%s", i == 0 ? "" : i + 1 == r.n ? " or " : ", ", r.matches[i].name);
                fputs("; name one\n", stderr);
                return EXIT_REFUSED;
        }
        if (json)
                fputc('[', stdout);
        for (size_t i = 0; i < r.n; i++) {
                if (json)
                        print_match_json(&r.matches[i], i == 0);
                else {
                        if (i > 0)
                                fputc('\n', stdout);
                        print_match_text(&r.matches[i]);
                }
        }
        if (json)
                fputs("]\n", stdout);
        return finish_output(EXIT_OK);
}
