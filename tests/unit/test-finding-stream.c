/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* audit/finding-stream.c: the Check() child's stream, written and read back, and what the
 * reader refuses. tests/fuzz/fuzz-checkstream.c tries every other byte. */
#include <errno.h>
#include <stdlib.h>

#include "audit/finding-stream.h"
#include "basic/util.h"
#include "tap.h"

static void test_round_trip(void) {
        char *details[] = { (char *) "pid 1276 (bash) allowed on 0-3", (char *) "pid 1300 (sshd) allowed on 0-3" };
        Finding items[] = {
                { SEVERITY_WARNING, (char *) "boot.isolcpus", (char *) "cpu2", (char *) "CPU 2 is not isolated", NULL, 0 },
                { SEVERITY_CRITICAL, (char *) "processes.stray", (char *) "", (char *) "two tasks", details, 2 },
        };
        const FindingList l = { items, ELEMENTSOF(items) };
        _cleanup_finding_list_ FindingList back = FINDING_LIST_EMPTY;
        _cleanup_free_ char *stream = NULL;
        int audit_error = -1;
        size_t n = 0;

        CHECK(finding_list_to_stream(&l, &stream, &n) == 0 && n > 0 && stream[n - 1] == '\0', "a list is written");
        CHECK(finding_list_from_stream(stream, n, &back, &audit_error) == 0 && audit_error == 0 && back.n == 2,
              "and read back");
        if (back.n != 2)
                return;
        CHECK(back.items[0].severity == SEVERITY_WARNING && back.items[0].n_details == 0, "the first finding");
        CHECK_STR(back.items[0].message, "CPU 2 is not isolated", "its message");
        CHECK(back.items[1].severity == SEVERITY_CRITICAL && back.items[1].n_details == 2, "the second");
        CHECK_STR(back.items[1].subject, "", "an empty subject survives");
        CHECK_STR(back.items[1].details[1], "pid 1300 (sshd) allowed on 0-3", "its detail lines");
}

static void test_audit_error(void) {
        _cleanup_finding_list_ FindingList l = FINDING_LIST_EMPTY;
        char buf[FINDING_STREAM_ERROR_MAX];
        size_t n = finding_stream_error(ENOMEM, buf);
        int audit_error = 0;

        CHECK(finding_list_from_stream(buf, n, &l, &audit_error) == 0 && audit_error == ENOMEM && l.n == 0,
              "an audit's error is read as its errno");
        CHECK(finding_list_from_stream("E99999999999", 13, &l, &audit_error) == 0 && audit_error == EIO,
              "an error that is no errno is EIO");
        CHECK(finding_list_from_stream("E-5", 4, &l, &audit_error) == 0 && audit_error == EIO, "so is a negative one");
}

static void test_refused(void) {
        static const struct {
                const char *stream;
                size_t n;
                const char *what;
        } bad[] = {
                { "", 0, "an empty stream" },
                { "0", 1, "no final NUL" },
                { "1\0", 2, "another start" },
                { "0\0" "2\0id\0subject\0message", 23, "a finding cut short" },
                { "0\0" "9\0id\0s\0m\0" "0\0", 13, "a severity past critical" },
                { "0\0" "2\0id\0s\0m\0" "5\0x\0", 15, "more lines counted than sent" },
                { "0\0" "2\0id\0s\0m\0" "1x\0", 14, "a count that is no number" },
        };

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                _cleanup_finding_list_ FindingList l = FINDING_LIST_EMPTY;
                int audit_error = -1;

                CHECK(finding_list_from_stream(bad[i].stream, bad[i].n, &l, &audit_error) == -EBADMSG && l.n == 0 &&
                              !l.items,
                      bad[i].what);
        }
}

int main(void) {
        test_round_trip();
        test_audit_error();
        test_refused();
        return tap_finish();
}
