/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fuzzes the audit's readers of the kernel's text (lib/audit/): the whole audit runs on a
 * fake tree (tests/unit/faketree.h) whose files come from the input: /proc/cmdline (split
 * as the kernel does, with isolcpus= and the other boot parameters read from it), the
 * kernel release (a version, and a path component for boot/config-RELEASE, whose content
 * is a field too), and one process of a configured application (comm "matcher"): its
 * /proc/PID/status (Cpus_allowed_list, capabilities, HugetlbPages, ...) and environ.
 * Input: those five fields in that order, separated by 0xff bytes.
 * Promises checked: no crash, leak or undefined behaviour; audit_run() succeeds on any
 * text; every finding has a severity, an id, and a subject, message and details in valid
 * UTF-8 (the bus takes nothing else); the boot line (lowlatctl boot) is made or refused
 * cleanly, and its parameters are among its words. */
#include <errno.h>
#include <stdbool.h>

#include "fuzz.h"
#include "audit/audit.h"
#include "faketree.h"

#define PID "100"

static char root[64];
static Host *host;
static Posture *posture;

static void cleanup(void) {
        posture_free(posture);
        host_free(host);
        faketree_remove(root);
}

static void setup(void) {
        if (host)
                return;
        faketree_mkdtemp(root, sizeof(root), "fuzz-audit");
        faketree_cpus(root, "0-3", "2-3", "2-3");
        faketree_write(root, "proc/" PID "/stat",
                       PID " (matcher) S 1 100 100 0 -1 4194560 100 0 0 0 5 3 0 0 -51 0 1 0 100 1000000 200 "
                       "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 2 50 1 0 0 0 0 0 0 0 0 0 0 0\n");
        faketree_write(root, "proc/" PID "/comm", "matcher\n");
        faketree_write_bytes(root, "proc/" PID "/cmdline", "matcher", 8);
        faketree_write(root, "proc/" PID "/cgroup", "0::/system.slice/matcher.service\n");
        FUZZ_CHECK(faketree_posture(root, "fuzz.conf",
                                    "[cpus]\nisolated = 2-3\n"
                                    "[process \"matcher\"]\npolicy = fifo\npriority = 50\nmlock = yes\n",
                                    &host, &posture),
                   "the fake tree does not start");
        atexit(cleanup);
}

static bool release_is_file_name(const char *s) {
        return *s && strlen(s) < 200 && !strchr(s, '/') && !streq(s, ".") && !streq(s, "..");
}

static void check_text(const char *s, const char *what, size_t i) {
        FUZZ_CHECK(s, "finding %zu without its %s", i, what);
        FUZZ_CHECK(utf8_is_valid(s), "finding %zu: its %s is not UTF-8: '%s'", i, what, s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_finding_list_ FindingList findings = FINDING_LIST_EMPTY;
        _cleanup_free_ char *line = NULL, *params = NULL, *config_path = NULL;
        const uint8_t *field[5] = {};
        size_t len[5] = {}, n = 0, start = 0;
        char *release;
        int r;

        setup();
        for (size_t i = 0; i <= size && n < ELEMENTSOF(field); i++)
                if (i == size || data[i] == 0xff) {
                        field[n] = data + start;
                        len[n++] = i - start;
                        start = i + 1;
                }
        faketree_write_bytes(root, "proc/cmdline", field[0] ?: data, len[0]);
        faketree_write_bytes(root, "proc/sys/kernel/osrelease", field[1] ?: data, len[1]);
        faketree_write_bytes(root, "proc/" PID "/status", field[3] ?: data, len[3]);
        faketree_write_bytes(root, "proc/" PID "/environ", field[4] ?: data, len[4]);
        /* The release as the audit reads it: up to a NUL or newline. */
        release = fuzz_strndup(field[1] ?: data, len[1]);
        release[strcspn(release, "\n")] = '\0';
        if (release_is_file_name(release)) {
                config_path = strdup_printf("boot/config-%s", release);
                FUZZ_CHECK(config_path, "out of memory");
                faketree_write_bytes(root, config_path, field[2] ?: data, len[2]);
        }
        free(release);

        r = audit_run_with_limits(host, posture, NULL, &(AuditLimits) { .max_processes = 16, .max_fds = 64 },
                                  &findings);
        FUZZ_CHECK(r == 0 || r == -ENOMEM, "audit_run() returned %d", r);
        for (size_t i = 0; i < findings.n; i++) {
                const Finding *f = &findings.items[i];
                FUZZ_CHECK(f->severity >= 0 && f->severity < _SEVERITY_MAX, "finding %zu: severity %d", i, f->severity);
                FUZZ_CHECK(f->id && *f->id, "finding %zu without an id", i);
                check_text(f->subject, "subject", i);
                check_text(f->message, "message", i);
                for (size_t k = 0; k < f->n_details; k++)
                        check_text(f->details[k], "detail line", i);
        }

        r = audit_boot_line(host, posture, &line, &params);
        FUZZ_CHECK(r >= 0 || r == -ENODATA || r == -ENOMEM, "audit_boot_line() returned %d", r);
        if (r >= 0) {
                FUZZ_CHECK(line, "a boot line without its text");
                if (r > 0) {
                        FUZZ_CHECK(params, "parameters needed but not named");
                        /* Each parameter asked for is in the line, whole. */
                        _cleanup_free_ char *copy = strdup(params);
                        FUZZ_CHECK(copy, "out of memory");
                        for (char *save = NULL, *w = strtok_r(copy, " ", &save); w; w = strtok_r(NULL, " ", &save))
                                FUZZ_CHECK(strstr(line, w), "parameter '%s' is not in the line '%s'", w, line);
                }
        }

        if (config_path)
                faketree_remove_at(root, config_path);
        return 0;
}
