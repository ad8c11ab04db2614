/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The findings as a byte stream: how the forked Check() child hands its audit's result
 * to the daemon through a pipe. "0\0", then per finding severity\0id\0subject\0message\0N\0
 * and its N detail lines, each NUL-terminated; or "E<errno>\0" when the audit failed. */
#pragma once

#include <stddef.h>

#include "audit/audit.h"

/* The stream of a successful audit, newly allocated. */
int finding_list_to_stream(const FindingList *l, char **ret, size_t *ret_n);
/* The stream of an audit that failed with -error (error > 0): "E<error>\0", written to
 * buf (at least FINDING_STREAM_ERROR_MAX bytes); returns its length. */
#define FINDING_STREAM_ERROR_MAX 16
size_t finding_stream_error(int error, char *buf);
/* Reads a whole stream. 0 and the findings in *ret (which the caller hands over empty),
 * or 0 and *ret_audit_error > 0 when the child says its audit failed (an errno that is
 * not one is EIO); -EBADMSG for a stream that is neither, -ENOMEM. *ret is left empty on
 * failure. */
int finding_list_from_stream(const char *buf, size_t n, FindingList *ret, int *ret_audit_error);
