/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* check --config: the audit run here, in lowlatctl, against a configuration file, for a
 * host where lowlatd is not on the bus (the quick start, a host being prepared). Same
 * checks, same report as Check(); only without the daemon's settings (its unmovable IRQs). */
#include <stdio.h>
#include <string.h>

#include "audit.h"
#include "errorlist.h"
#include "host.h"
#include "lowlatctl.h"
#include "posture.h"

int check_report_local(const char *config_path, const char *root, CheckReport *ret, FindingList *ret_findings) {
        _cleanup_error_list_ ErrorList errors = ERROR_LIST_EMPTY;
        _cleanup_(host_freep) Host *host = NULL;
        _cleanup_(posture_freep) Posture *posture = NULL;
        _cleanup_finding_list_ FindingList findings = FINDING_LIST_EMPTY;
        CheckFinding *items;
        int r;

        r = host_open(root ?: "/", &host);
        if (r < 0) {
                fprintf(stderr, "lowlatctl: cannot open root directory %s: %s\n", root ?: "/", strerror(-r));
                return r;
        }
        r = posture_load(config_path, host, &posture, &errors);
        for (size_t i = 0; i < errors.n; i++)
                fprintf(stderr, "%s\n", errors.items[i]);
        if (r < 0) {
                fprintf(stderr, "lowlatctl: %s: cannot audit against this configuration\n", config_path);
                return r;
        }
        r = audit_run(host, posture, NULL, &findings);
        if (r < 0) {
                fprintf(stderr, "lowlatctl: the audit failed: %s\n", strerror(-r));
                return r;
        }
        items = calloc(findings.n ?: 1, sizeof(CheckFinding));
        if (!items)
                return -ENOMEM;
        for (size_t i = 0; i < findings.n; i++)
                items[i] = (CheckFinding) {
                        .severity = severity_to_string(findings.items[i].severity),
                        .id = findings.items[i].id,
                        .subject = findings.items[i].subject,
                        .message = findings.items[i].message,
                };
        *ret = (CheckReport) { .findings = items, .n = findings.n, .allocated = findings.n };
        *ret_findings = findings;
        findings = FINDING_LIST_EMPTY;
        return 0;
}
