/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* check --config: the audit run here, in lowlatctl, against a configuration file, for a
 * host where lowlatd is not on the bus (the quick start, a host being prepared). Same
 * checks, same report as Check(); only without the daemon's settings (its unmovable IRQs). */
#include <stdio.h>
#include <string.h>

#include "audit/audit.h"
#include "basic/errorlist.h"
#include "host/host.h"
#include "client.h"
#include "config/posture.h"
#include "setting/posture-load.h"

int check_report_local(const char *config_path, const char *root, CheckReport *ret, FindingList *ret_findings) {
        _cleanup_error_list_ ErrorList errors = ERROR_LIST_EMPTY;
        _cleanup_(host_freep) Host *host = NULL;
        _cleanup_(posture_freep) Posture *posture = NULL;
        _cleanup_finding_list_ FindingList findings = FINDING_LIST_EMPTY;
        _cleanup_(check_report_done) CheckReport report = {};
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
        report = (CheckReport) { .findings = items, .n = findings.n, .allocated = findings.n };
        for (size_t i = 0; i < findings.n; i++) {
                const Finding *f = &findings.items[i];
                const char **details = NULL;

                /* The report owns its arrays of lines (check_report_done() frees them). */
                if (f->n_details > 0) {
                        details = calloc(f->n_details, sizeof(char *));
                        if (!details)
                                return -ENOMEM;
                        for (size_t k = 0; k < f->n_details; k++)
                                details[k] = f->details[k];
                }
                items[i] = (CheckFinding) {
                        .severity = severity_to_string(f->severity),
                        .id = f->id,
                        .subject = f->subject,
                        .message = f->message,
                        .details = details,
                        .n_details = f->n_details,
                };
        }
        *ret = report;
        report = (CheckReport) {};
        *ret_findings = findings;
        findings = FINDING_LIST_EMPTY;
        return 0;
}
