/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lowlatctl explain's tables (generated from lowlatd.conf(5), lowlatctl(1) and the journal
 * catalog) against the code: every key the parser takes (lib/config/keys.c's rows, the
 * ethtool parameters of [nic], feature.NAME), every section, and every event of lib/log's
 * table has its text, and the pages document no key the parser refuses; then the lookup's
 * rules (qualified and bare keys, ambiguity, sections that take any key, events by name
 * and MESSAGE_ID, suggestions). The finding ids raised in lib/audit are checked from the
 * sources by tests/packaging/test_explain.py. */
#include "client.h"
#include "config/keys.h"
#include "explain.h"
#include "host/ethtool.h"
#include "tap.h"
#include "basic/event.h"
#include "basic/util.h"

/* word explained (by one match of each kind at most: irq.irqbalance is a key and a
 * finding), by one of kind whose text holds needle. */
static bool explains(const char *word, ExplainKind kind, const char *needle) {
        _cleanup_(explain_result_done) ExplainResult r = {};

        if (explain_lookup(word, &r) < 0 || r.ambiguous)
                return false;
        for (size_t i = 0; i < r.n; i++) {
                if (r.matches[i].kind != kind || (i > 0 && r.matches[i - 1].kind == kind))
                        continue;
                if (strstr(r.matches[i].text, needle))
                        return true;
                printf("# '%s': the text does not mention '%s'\n", word, needle);
        }
        return false;
}

static void test_every_parser_key(void) {
        size_t missing = 0;

        for (size_t i = 0; i < config_n_keys; i++) {
                const ConfigKey *k = &config_keys[i];
                _cleanup_free_ char *word = strdup_printf("%s.%s", k->section, k->name);
                _cleanup_free_ char *tag = strdup_printf("%s=", k->name);

                if (!word || !tag || !explains(word, EXPLAIN_KEY, tag)) {
                        printf("# no explanation of %s\n", word ?: k->name);
                        missing++;
                }
        }
        CHECK(config_n_keys > 40 && missing == 0, "every row of config_keys[] is explained as SECTION.KEY");

        missing = 0;
        for (EthtoolParam p = 0; p < _ETHTOOL_PARAM_MAX; p++) {
                _cleanup_free_ char *word = strdup_printf("nic.%s", ethtool_param_to_string(p));
                _cleanup_free_ char *tag = strdup_printf("%s=", ethtool_param_to_string(p));

                if (!word || !tag || !explains(word, EXPLAIN_KEY, tag)) {
                        printf("# no explanation of %s\n", word ?: "?");
                        missing++;
                }
        }
        CHECK(missing == 0, "every ethtool parameter [nic] takes (lib/host/ethtool.c) is explained");
        CHECK(explains("nic.feature.rx-gro", EXPLAIN_KEY, "feature.NAME=") &&
                      explains("feature.tx-nocache-copy", EXPLAIN_KEY, "feature.NAME="),
              "nic.feature.NAME: any feature name, qualified or not");
}

/* The other way round: a key the pages document is one the parser takes. */
static void test_no_key_the_parser_refuses(void) {
        size_t extra = 0;

        for (size_t i = 0; i < explain_n_keys; i++) {
                const ExplainKey *k = &explain_keys[i];
                const ConfigSection *s = config_section_find(k->section);
                bool known = s && (k->pattern ? s->assign != NULL : config_key_find(s, k->name) != NULL);

                if (!known && streq(k->section, "nic") && !k->pattern)
                        known = ethtool_param_from_string(k->name) >= 0;
                if (!known) {
                        printf("# lowlatd.conf(5) documents [%s] %s, which the parser refuses\n", k->section,
                               k->name);
                        extra++;
                }
        }
        CHECK(explain_n_keys > 0 && extra == 0, "every key lowlatd.conf(5) documents is one the parser takes");
}

static bool section_has_rows(const char *name) {
        for (size_t i = 0; i < config_n_keys; i++)
                if (streq(config_keys[i].section, name))
                        return true;
        return false;
}

static void test_sections(void) {
        size_t missing = 0, wrong = 0;

        for (size_t i = 0; i < config_n_sections; i++) {
                const ConfigSection *s = &config_sections[i];
                _cleanup_free_ char *word = strdup_printf("[%s]", s->name);
                _cleanup_(explain_result_done) ExplainResult r = {};

                if (!word || !explains(word, EXPLAIN_SECTION, "SECTION")) {
                        printf("# no explanation of [%s]\n", s->name);
                        missing++;
                        continue;
                }
                /* A section whose every key is its assign's ([sysctl], [sysfs]) is explained
                 * whole for any key; one with rows only for the keys it has. */
                bool any_key = s->assign && !section_has_rows(s->name);
                _cleanup_free_ char *other = strdup_printf("%s.no_such_key_here", s->name);
                if (!other || explain_lookup(other, &r) < 0 || (r.n == 1 && r.matches[0].kind == EXPLAIN_SECTION) != any_key) {
                        printf("# [%s]: %s is %sexplained by its section\n", s->name, other ?: "?", any_key ? "not " : "");
                        wrong++;
                }
        }
        CHECK(missing == 0 && explain_n_sections == config_n_sections,
              "every section of config_sections[] is explained as [SECTION], and no other");
        CHECK(wrong == 0, "SECTION.ANY is the section's text exactly where the section takes any key");
        CHECK(explains("sysctl.net.core.busy_poll", EXPLAIN_SECTION, "sysctl.d(5)") &&
                      explains("pm", EXPLAIN_SECTION, "[PM] SECTION") && explains("[sysfs]", EXPLAIN_SECTION, "/sys"),
              "sysctl.net.core.busy_poll, pm and [sysfs]: their sections");
}

static void test_every_event(void) {
        size_t missing = 0, orphans = 0;

        for (EventId id = 0; id < _EVENT_ID_MAX; id++) {
                const EventInfo *e = event_info(id);
                _cleanup_(explain_result_done) ExplainResult by_id = {};

                if (!explains(e->name, EXPLAIN_EVENT, "Subject: ") || explain_lookup(e->message_id, &by_id) < 0 ||
                    by_id.n != 1 || !streq(by_id.matches[0].name, e->name) ||
                    !streq(by_id.matches[0].message_id, e->message_id)) {
                        printf("# event %s (%s) has no catalog entry to explain\n", e->name, e->message_id);
                        missing++;
                }
        }
        CHECK(missing == 0, "every event of lib/log's table is explained by name and by MESSAGE_ID");

        for (size_t i = 0; i < explain_n_events; i++) {
                bool used = false;
                for (EventId id = 0; id < _EVENT_ID_MAX; id++)
                        used = used || streq(event_info(id)->message_id, explain_events[i].message_id);
                if (!used) {
                        printf("# the catalog's %s is no event of lib/log's table\n", explain_events[i].message_id);
                        orphans++;
                }
        }
        CHECK(explain_n_events == _EVENT_ID_MAX && orphans == 0, "the catalog has an entry for those events only");
        CHECK(explains("F04069D9094949389D6CD603580A168F", EXPLAIN_EVENT, "@LOWLATD_OBJECT@"),
              "a MESSAGE_ID in capitals; the catalog's @FIELDS@ left as written");
}

/* Every finding says why it matters and how to fix it: as --json's fields and as lines
 * of the text, each after its label. */
static void test_finding_why_and_fix(void) {
        size_t bad = 0;

        for (size_t i = 0; i < explain_n_findings; i++) {
                const ExplainFinding *f = &explain_findings[i];

                if (isempty(f->why) || isempty(f->fix) || !strstr(f->text, "\n    Why: ") ||
                    !strstr(f->text, "\n    Fix: ") || strstr(f->text, "\n    Why: ") > strstr(f->text, "\n    Fix: ")) {
                        printf("# %s: no Why: or no Fix: part\n", f->id);
                        bad++;
                }
        }
        CHECK(explain_n_findings > 40 && bad == 0, "every finding has a Why: and then a Fix: part, and why and fix");
        CHECK(explains("boot.nohz_full", EXPLAIN_FINDING, "Fix: nohz_full=LIST"),
              "boot.nohz_full: the fix is the parameter the audit asks for");
}

static void test_findings(void) {
        CHECK(explain_n_findings > 40 && explains("sched.pid1-affinity", EXPLAIN_FINDING, "CPUAffinity="),
              "findings: lowlatctl(1)'s table, with its severities");
        CHECK(explains("kernel.config.PREEMPT_RT", EXPLAIN_FINDING, "PREEMPT_RT"),
              "kernel.config.PREEMPT_RT: the table's kernel.config.* row");
}

static void test_ambiguity(void) {
        _cleanup_(explain_result_done) ExplainResult policy = {}, cpus = {}, both = {};

        CHECK(explain_lookup("policy", &policy) == 0 && policy.ambiguous && policy.n == 3,
              "policy: ambiguous between [service], [process] and [kthread]");
        CHECK(explain_lookup("cpus", &cpus) == 0 && cpus.ambiguous && cpus.n == 3 && streq(cpus.matches[0].name, "[cpus]"),
              "cpus: ambiguous between the section [cpus], kthread.cpus and noise.cpus");
        CHECK(explains("hugepages", EXPLAIN_KEY, "huge pages") && explains("kthread.policy", EXPLAIN_KEY, "other"),
              "hugepages: [service] and [process] share one text, so one answer; kthread.policy qualified");
        CHECK(explain_lookup("irq.irqbalance", &both) == 0 && !both.ambiguous && both.n == 2 &&
                      both.matches[0].kind == EXPLAIN_KEY && both.matches[1].kind == EXPLAIN_FINDING,
              "irq.irqbalance: the key and the finding, both explained");
}

static void test_unknown(void) {
        _cleanup_(explain_result_done) ExplainResult r = {}, empty = {}, close = {}, none = {};

        CHECK(explain_lookup("pm.governer", &r) == 0 && r.n == 0, "pm.governer: nothing");
        CHECK(explain_lookup("", &empty) == 0 && empty.n == 0, "the empty word: nothing");
        CHECK(explain_suggest("pm.governer", 5, &close) == 0 && close.n >= 1 && streq(close.matches[0].name, "pm.governor"),
              "pm.governer: pm.governor suggested first");
        CHECK(explain_suggest("qqqqqqqqqqqq", 5, &none) == 0 && none.n == 0, "nothing like qqqqqqqqqqqq: no suggestion");
        CHECK(explain_kind_from_string("finding") == EXPLAIN_FINDING && streq(explain_kind_to_string(EXPLAIN_KEY), "key") &&
                      !explain_kind_to_string(_EXPLAIN_KIND_MAX),
              "the kinds' string table");
}

int main(void) {
        test_every_parser_key();
        test_no_key_the_parser_refuses();
        test_sections();
        test_every_event();
        test_findings();
        test_finding_why_and_fix();
        test_ambiguity();
        test_unknown();
        return tap_finish();
}
