/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Paths and open files to nodes: which entry a name or a descriptor means, its
 * attributes, and whether a descriptor outlived its IRQ. */

#include "fakeirq.h"

#include <errno.h>
#include <string.h>


/* Canonical decimal as the kernel names the directory: no sign, no leading zero. */
static bool parse_irq_name(const char *s, size_t len, unsigned *ret_number) {
        unsigned long n = 0;

        if (len == 0 || len > 7 || (len > 1 && s[0] == '0'))
                return false;
        for (size_t i = 0; i < len; i++) {
                if (s[i] < '0' || s[i] > '9')
                        return false;
                n = n * 10u + (unsigned) (s[i] - '0');
        }
        if (n >= FAKEIRQ_IRQ_LIMIT)
                return false;
        *ret_number = (unsigned) n;
        return true;
}

static bool name_is(const char *s, size_t len, const char *name) {
        return strlen(name) == len && memcmp(s, name, len) == 0;
}

int resolve_path(struct fakeirq *st, const char *path, struct node_ref *ret) {
        const char *first, *slash, *second;
        size_t first_len;
        unsigned number;
        struct fake_irq *irq;

        if (path[0] != '/')
                return -ENOENT;
        first = path + 1;
        if (*first == '\0') {
                *ret = (struct node_ref) { .kind = NODE_ROOT };
                return 0;
        }

        slash = strchr(first, '/');
        first_len = slash ? (size_t) (slash - first) : strlen(first);
        second = slash ? slash + 1 : NULL;

        if (!second) {
                if (name_is(first, first_len, "default_smp_affinity")) {
                        *ret = (struct node_ref) { .kind = NODE_DEFAULT_AFFINITY };
                        return 0;
                }
                if (name_is(first, first_len, ".control")) {
                        *ret = (struct node_ref) { .kind = NODE_CONTROL };
                        return 0;
                }
                if (name_is(first, first_len, ".stats")) {
                        *ret = (struct node_ref) { .kind = NODE_STATS };
                        return 0;
                }
        }

        if (!parse_irq_name(first, first_len, &number))
                return -ENOENT;
        irq = irq_find_present(st, number);
        if (!irq)
                return -ENOENT;
        if (!second || *second == '\0') {
                *ret = (struct node_ref) { .kind = NODE_IRQ_DIR, .irq = irq };
                return 0;
        }
        for (unsigned f = 0; f < IRQ_FILE_COUNT; f++)
                if (strcmp(second, irq_file_names[f]) == 0) {
                        *ret = (struct node_ref) { .kind = NODE_IRQ_FILE, .irq = irq, .file = f };
                        return 0;
                }
        return -ENOENT;     /* names below a file never get here: the VFS says ENOTDIR */
}

struct node_attr *node_attr_of(struct fakeirq *st, const struct node_ref *ref) {
        switch (ref->kind) {
        case NODE_ROOT:
                return &st->root_attr;
        case NODE_DEFAULT_AFFINITY:
                return &st->default_attr;
        case NODE_CONTROL:
                return &st->control_attr;
        case NODE_STATS:
                return &st->stats_attr;
        case NODE_IRQ_DIR:
                return &ref->irq->attr[IRQ_ATTR_DIR];
        case NODE_IRQ_FILE:
                return &ref->irq->attr[ref->file];
        }
        return &st->root_attr;
}

bool node_is_dir(const struct node_ref *ref) {
        return ref->kind == NODE_ROOT || ref->kind == NODE_IRQ_DIR;
}

/* The node an open file names, even if its IRQ has vanished since (fstat works). */
int resolve_open_file(struct fakeirq *st, const struct open_file *f, struct node_ref *ret) {
        struct fake_irq *irq = NULL;

        if (f->kind == NODE_IRQ_FILE || f->kind == NODE_IRQ_DIR) {
                irq = irq_find(st, f->irq_number);
                if (!irq)
                        return -ENOENT;
        }
        *ret = (struct node_ref) { .kind = f->kind, .irq = irq, .file = f->file };
        return 0;
}

bool open_file_is_stale(const struct fakeirq *st, const struct open_file *f) {
        struct fake_irq *irq;

        if (f->kind != NODE_IRQ_FILE)
                return false;
        irq = irq_find(st, f->irq_number);
        return !irq || !irq->present || irq->generation != f->generation;
}

struct counters *open_file_counters(struct fakeirq *st, const struct open_file *f) {
        struct fake_irq *irq;

        if (f->kind == NODE_DEFAULT_AFFINITY)
                return &st->default_stats;
        if (f->kind != NODE_IRQ_FILE)
                return NULL;
        irq = irq_find(st, f->irq_number);
        return irq && irq->generation == f->generation ? &irq->stats : NULL;
}
