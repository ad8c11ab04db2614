/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The findings: severity names, the public FindingList, and building the list of one run,
 * at most AUDIT_FINDINGS_PER_ID_MAX per id. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "basic/array.h"
#include "audit/audit-internal.h"
#include "basic/util.h"

static const char *const severity_table[_SEVERITY_MAX] = {
        [SEVERITY_OK] = "ok",
        [SEVERITY_INFO] = "info",
        [SEVERITY_WARNING] = "warning",
        [SEVERITY_CRITICAL] = "critical",
};
DEFINE_STRING_TABLE_LOOKUP(severity, Severity);

static void details_free(char **details, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(details[i]);
        free(details);
}

static void finding_done(Finding *f) {
        free(f->id);
        free(f->subject);
        free(f->message);
        details_free(f->details, f->n_details);
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
        if (audit_check_errno(a, array_grow(&a->omitted, &a->allocated_omitted, a->n_omitted + 1)) < 0)
                return;
        o = a->omitted;
        o[a->n_omitted] = (Omitted) { .id = audit_check_alloc(a, strdup(id)), .n = 1, .worst = severity };
        if (o[a->n_omitted].id)
                a->n_omitted++;
}

/* Room for one more finding. */
static int findings_reserve(Audit *a) {
        return array_grow(&a->findings.items, &a->allocated, a->findings.n + 1);
}

/* Takes subject, message (NULL: out of memory) and details. */
static void finding_append(Audit *a, Severity severity, const char *id, char *subject, char *message,
                           char **details, size_t n_details) {
        Finding f = {
                .severity = severity,
                .id = strdup(id),
                .subject = bus_safe(subject),
                .message = bus_safe(message),
                .details = details,
                .n_details = n_details,
        };
        bool ok = f.id && f.subject && f.message;

        for (size_t i = 0; i < n_details; i++)
                ok = (f.details[i] = bus_safe(f.details[i])) && ok;
        if (!ok || findings_reserve(a) < 0) {
                finding_done(&f);
                a->error = -ENOMEM;
                return;
        }
        a->findings.items[a->findings.n++] = f;
}

_printf_(7, 0) static void finding_addv(Audit *a, Severity severity, const char *id, const char *subject,
                                        char **details, size_t n_details, const char *fmt, va_list ap) {
        size_t same = 0;
        char *message = NULL;

        if (a->error < 0) {
                details_free(details, n_details);
                return;
        }
        /* A finding that sums up many items is one per id (the items are its details), so
         * the cap never takes items away from it. */
        for (size_t i = 0; i < a->findings.n; i++)
                if (streq(a->findings.items[i].id, id))
                        same++;
        if (same >= AUDIT_FINDINGS_PER_ID_MAX) {
                details_free(details, n_details);
                omitted_add(a, id, severity);
                return;
        }
        message = strdup_vprintf(fmt, ap);
        finding_append(a, severity, id, strdup(subject), message, details, n_details);
}

_printf_(5, 6) void finding_add(Audit *a, Severity severity, const char *id, const char *subject, const char *fmt,
                                ...) {
        va_list ap;

        va_start(ap, fmt);
        finding_addv(a, severity, id, subject, NULL, 0, fmt, ap);
        va_end(ap);
}

_printf_(7, 8) void finding_add_details(Audit *a, Severity severity, const char *id, const char *subject,
                                        char ***details, size_t *n_details, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        finding_addv(a, severity, id, subject, TAKE_PTR(*details), *n_details, fmt, ap);
        va_end(ap);
        *n_details = 0;
}

void audit_add_omitted_summaries(Audit *a) {
        for (size_t i = 0; i < a->n_omitted && a->error == 0; i++) {
                const Omitted *o = &a->omitted[i];
                finding_append(a, o->worst, o->id, strdup_printf("%zu more", o->n),
                               strdup_printf("%zu more %s findings are not listed (at most %u per id are).", o->n,
                                             o->id, AUDIT_FINDINGS_PER_ID_MAX),
                               NULL, 0);
        }
}
