/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fuzzes the reader of the Check() child's stream (audit/finding-stream.c): what the daemon
 * parses from the pipe of its forked audit, which a child killed mid-write, or a bug on
 * either side, may leave cut short or malformed. The input is the stream.
 * Promises checked: no crash or leak; a stream is read only when it ends with a NUL; an
 * audit error is a positive errno; every finding has a valid severity and strings; the
 * list written back as a stream reads again into the same findings, and that stream is
 * no longer than the input (it is the canonical spelling of the same list). */
#include <errno.h>
#include <stdbool.h>

#include "fuzz.h"
#include "audit/finding-stream.h"
#include "basic/util.h"

static void check_same(const FindingList *a, const FindingList *b) {
        FUZZ_CHECK(a->n == b->n, "%zu findings read back as %zu", a->n, b->n);
        for (size_t i = 0; i < a->n; i++) {
                const Finding *x = &a->items[i], *y = &b->items[i];
                FUZZ_CHECK(x->severity == y->severity && streq(x->id, y->id) && streq(x->subject, y->subject) &&
                                   streq(x->message, y->message) && x->n_details == y->n_details,
                           "finding %zu differs when read back", i);
                for (size_t k = 0; k < x->n_details; k++)
                        FUZZ_CHECK(streq(x->details[k], y->details[k]), "finding %zu line %zu differs", i, k);
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_finding_list_ FindingList findings = FINDING_LIST_EMPTY, again = FINDING_LIST_EMPTY;
        _cleanup_free_ char *stream = NULL;
        int audit_error = -1, r;
        size_t n;

        r = finding_list_from_stream((const char *) data, size, &findings, &audit_error);
        FUZZ_CHECK(r == 0 || r == -EBADMSG || r == -ENOMEM, "unexpected error %d", r);
        if (r < 0) {
                FUZZ_CHECK(findings.n == 0 && !findings.items, "a failed read left findings");
                return 0;
        }
        FUZZ_CHECK(size > 0 && data[size - 1] == '\0', "a stream without its final NUL was read");
        FUZZ_CHECK(audit_error >= 0, "audit error %d", audit_error);
        if (audit_error > 0) {
                FUZZ_CHECK(data[0] == 'E' && findings.n == 0, "an audit error from a list");
                return 0;
        }
        for (size_t i = 0; i < findings.n; i++) {
                const Finding *f = &findings.items[i];
                FUZZ_CHECK(f->severity >= 0 && f->severity < _SEVERITY_MAX, "severity %d", f->severity);
                FUZZ_CHECK(f->id && f->subject && f->message, "finding %zu without its strings", i);
                FUZZ_CHECK(f->n_details == 0 || f->details, "finding %zu: lines without their array", i);
        }
        r = finding_list_to_stream(&findings, &stream, &n);
        FUZZ_CHECK(r == 0, "finding_list_to_stream() returned %d", r);
        FUZZ_CHECK(n <= size, "the list of a %zu-byte stream is written in %zu", size, n);
        r = finding_list_from_stream(stream, n, &again, &audit_error);
        FUZZ_CHECK(r == 0 && audit_error == 0, "its own stream read back as %d, audit error %d", r, audit_error);
        check_same(&findings, &again);
        return 0;
}
