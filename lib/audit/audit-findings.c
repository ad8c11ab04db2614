/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The findings: severity names, the public FindingList, and building the list of one run,
 * at most AUDIT_FINDINGS_PER_ID_MAX per id. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit-internal.h"
#include "util.h"

static const char *const severity_table[_SEVERITY_MAX] = {
        [SEVERITY_OK] = "ok",
        [SEVERITY_INFO] = "info",
        [SEVERITY_WARNING] = "warning",
        [SEVERITY_CRITICAL] = "critical",
};
DEFINE_STRING_TABLE_LOOKUP(severity, Severity);

static void finding_done(Finding *f) {
        free(f->id);
        free(f->subject);
        free(f->message);
}

void finding_list_done(FindingList *l) {
        for (size_t i = 0; i < l->n; i++)
                finding_done(&l->items[i]);
        free(l->items);
        *l = FINDING_LIST_EMPTY;
}

Severity finding_list_worst(const FindingList *l) {
        Severity worst = SEVERITY_OK;
        for (size_t i = 0; i < l->n; i++)
                worst = MAX(worst, l->items[i].severity);
        return worst;
}

const Finding *finding_list_find(const FindingList *l, const char *id, const char *subject) {
        for (size_t i = 0; i < l->n; i++)
                if (streq(l->items[i].id, id) && (!subject || streq(l->items[i].subject, subject)))
                        return &l->items[i];
        return NULL;
}

/* Records an allocation failure; returns p so calls can be wrapped. */
void *audit_check_alloc(Audit *a, void *p) {
        if (!p && a->error == 0)
                a->error = -ENOMEM;
        return p;
}

int audit_check_errno(Audit *a, int r) {
        if (r == -ENOMEM && a->error == 0)
                a->error = r;
        return r;
}

/* Text from the kernel can be anything; the bus and JSON need UTF-8. */
static char *bus_safe(char *s) {
        char *e;

        if (!s || utf8_is_valid(s))
                return s;
        e = utf8_escape(s);
        free(s);
        return e;
}

static void omitted_add(Audit *a, const char *id, Severity severity) {
        Omitted *o;

        for (size_t i = 0; i < a->n_omitted; i++)
                if (streq(a->omitted[i].id, id)) {
                        a->omitted[i].n++;
                        a->omitted[i].worst = MAX(a->omitted[i].worst, severity);
                        return;
                }
        o = audit_check_alloc(a, realloc(a->omitted, (a->n_omitted + 1) * sizeof(Omitted)));
        if (!o)
                return;
        a->omitted = o;
        o[a->n_omitted] = (Omitted) { .id = audit_check_alloc(a, strdup(id)), .n = 1, .worst = severity };
        if (o[a->n_omitted].id)
                a->n_omitted++;
}

/* Room for one more finding. */
static int findings_reserve(Audit *a) {
        Finding *items;
        size_t n;

        if (a->findings.n < a->allocated)
                return 0;
        n = MAX(a->allocated * 2, 16U);
        items = realloc(a->findings.items, n * sizeof(Finding));
        if (!items)
                return -ENOMEM;
        a->findings.items = items;
        a->allocated = n;
        return 0;
}

/* Takes subject and message (NULL: out of memory). */
static void finding_append(Audit *a, Severity severity, const char *id, char *subject, char *message) {
        Finding f = { .severity = severity, .id = strdup(id), .subject = bus_safe(subject), .message = bus_safe(message) };

        if (!f.id || !f.subject || !f.message || findings_reserve(a) < 0) {
                finding_done(&f);
                a->error = -ENOMEM;
                return;
        }
        a->findings.items[a->findings.n++] = f;
}

_printf_(5, 6) void finding_add(Audit *a, Severity severity, const char *id, const char *subject, const char *fmt,
                                ...) {
        size_t same = 0;
        char *message = NULL, *subj;
        va_list ap;
        int r;

        if (a->error < 0)
                return;
        for (size_t i = 0; i < a->findings.n; i++)
                if (streq(a->findings.items[i].id, id))
                        same++;
        if (same >= AUDIT_FINDINGS_PER_ID_MAX) {
                omitted_add(a, id, severity);
                return;
        }
        va_start(ap, fmt);
        r = vasprintf(&message, fmt, ap);
        va_end(ap);
        if (r < 0) {
                a->error = -ENOMEM;
                return;
        }
        subj = strdup(subject);
        finding_append(a, severity, id, subj, message);
}

void audit_add_omitted_summaries(Audit *a) {
        for (size_t i = 0; i < a->n_omitted && a->error == 0; i++) {
                const Omitted *o = &a->omitted[i];
                finding_append(a, o->worst, o->id, strdup_printf("%zu more", o->n),
                               strdup_printf("%zu more %s findings are not listed (at most %u per id are).", o->n,
                                             o->id, AUDIT_FINDINGS_PER_ID_MAX));
        }
}
