/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Writing and reading the Check() child's stream of findings. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit/finding-stream.h"
#include "basic/array.h"
#include "basic/util.h"

typedef struct Buffer {
        char *data;
        size_t n, allocated;
} Buffer;

static int append(Buffer *b, const char *s) {
        size_t len = strlen(s) + 1;

        if (array_grow(&b->data, &b->allocated, b->n + len) < 0)
                return -ENOMEM;
        memcpy(b->data + b->n, s, len);
        b->n += len;
        return 0;
}

int finding_list_to_stream(const FindingList *l, char **ret, size_t *ret_n) {
        Buffer b = {};
        int r = append(&b, "0");

        for (size_t i = 0; r >= 0 && i < l->n; i++) {
                const Finding *f = &l->items[i];
                char severity[2] = { (char) ('0' + f->severity), '\0' }, count[32];

                snprintf(count, sizeof(count), "%zu", f->n_details);
                if (append(&b, severity) < 0 || append(&b, f->id) < 0 || append(&b, f->subject) < 0 ||
                    append(&b, f->message) < 0 || append(&b, count) < 0)
                        r = -ENOMEM;
                for (size_t k = 0; r >= 0 && k < f->n_details; k++)
                        r = append(&b, f->details[k]);
        }
        if (r < 0) {
                free(b.data);
                return r;
        }
        *ret = b.data;
        *ret_n = b.n;
        return 0;
}

size_t finding_stream_error(int error, char *buf) {
        return (size_t) snprintf(buf, FINDING_STREAM_ERROR_MAX, "E%d", error) + 1;
}

/* The next NUL-terminated field of the stream at *p, or NULL past its end (the stream
 * ends with a NUL, so every field does). */
static const char *next_field(const char **p, const char *end) {
        const char *field = *p;

        if (field >= end)
                return NULL;
        *p += strlen(field) + 1;
        return field;
}

/* One finding from the stream at *p into f, which is zeroed. */
static int finding_from_stream(const char **p, const char *end, Finding *f) {
        const char *field[5];
        uint64_t n_details;

        for (size_t k = 0; k < ELEMENTSOF(field); k++)
                if (!(field[k] = next_field(p, end)))
                        return -EBADMSG;
        if (strlen(field[0]) != 1 || field[0][0] < '0' || field[0][0] >= '0' + _SEVERITY_MAX)
                return -EBADMSG;
        /* Each line takes at least its NUL: a count the rest cannot hold is garbage. */
        if (parse_uint64(field[4], &n_details) < 0 || n_details > (uint64_t) (end - *p))
                return -EBADMSG;
        *f = (Finding) {
                .severity = (Severity) (field[0][0] - '0'),
                .id = strdup(field[1]),
                .subject = strdup(field[2]),
                .message = strdup(field[3]),
                .details = n_details > 0 ? calloc(n_details, sizeof(char *)) : NULL,
        };
        if (!f->id || !f->subject || !f->message || (n_details > 0 && !f->details))
                return -ENOMEM;
        for (; f->n_details < n_details; f->n_details++) {
                const char *line = next_field(p, end);
                if (!line)
                        return -EBADMSG;
                f->details[f->n_details] = strdup(line);
                if (!f->details[f->n_details])
                        return -ENOMEM;
        }
        return 0;
}

int finding_list_from_stream(const char *buf, size_t n, FindingList *ret, int *ret_audit_error) {
        _cleanup_finding_list_ FindingList l = FINDING_LIST_EMPTY;
        const char *p = buf, *end = buf + n;
        size_t allocated = 0;
        int r;

        *ret_audit_error = 0;
        if (n == 0 || buf[n - 1] != '\0')
                return -EBADMSG;
        if (*p == 'E') {
                int32_t e;
                *ret_audit_error = parse_int32(p + 1, &e) >= 0 && e > 0 ? e : EIO;
                return 0;
        }
        if (!streq(p, "0"))
                return -EBADMSG;
        p += 2;
        while (p < end) {
                if (array_grow(&l.items, &allocated, l.n + 1) < 0)
                        return -ENOMEM;
                /* Counted at once, so that what a failure left half-made is freed. */
                l.items[l.n] = (Finding) {};
                r = finding_from_stream(&p, end, &l.items[l.n++]);
                if (r < 0)
                        return r;
        }
        *ret = l;
        l = FINDING_LIST_EMPTY;
        return 0;
}
