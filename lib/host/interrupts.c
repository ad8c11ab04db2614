/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* /proc/interrupts parsing. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "basic/array.h"
#include "host/interrupts.h"
#include "basic/macro.h"
#include "basic/util.h"

void irq_names_done(IrqNames *t) {
        for (size_t i = 0; i < t->n; i++)
                free(t->names[i]);
        free(t->names);
        free(t->irqs);
        *t = IRQ_NAMES_EMPTY;
}

static unsigned count_cpu_columns(const char *line, size_t len) {
        unsigned n = 0;
        for (size_t i = 0; i + 3 <= len; i++)
                if (strncmp(line + i, "CPU", 3) == 0 && (i == 0 || isspace((unsigned char) line[i - 1])))
                        n++;
        return n;
}

/* One capacity per array: when the second fails to grow, the first has grown alone. */
static int add_entry(IrqNames *t, size_t *allocated_irqs, size_t *allocated_names, unsigned irq, const char *name,
                     size_t len) {
        if (array_grow(&t->irqs, allocated_irqs, t->n + 1) < 0 || array_grow(&t->names, allocated_names, t->n + 1) < 0)
                return -ENOMEM;
        t->names[t->n] = strndup(name, len);
        if (!t->names[t->n])
                return -ENOMEM;
        t->irqs[t->n++] = irq;
        return 0;
}

static int compare_index(const void *a, const void *b, void *userdata) {
        const unsigned *irqs = userdata;
        unsigned x = irqs[*(const size_t *) a], y = irqs[*(const size_t *) b];
        return x < y ? -1 : x > y;
}

static int sort_by_irq(IrqNames *t) {
        bool sorted = true;
        for (size_t i = 1; i < t->n; i++)
                sorted = sorted && t->irqs[i - 1] < t->irqs[i];
        if (sorted)
                return 0;

        _cleanup_free_ size_t *order = malloc(t->n * sizeof(size_t));
        _cleanup_free_ unsigned *irqs = malloc(t->n * sizeof(unsigned));
        _cleanup_free_ char **names = malloc(t->n * sizeof(char *));
        if (!order || !irqs || !names)
                return -ENOMEM;
        for (size_t i = 0; i < t->n; i++)
                order[i] = i;
        qsort_r(order, t->n, sizeof(size_t), compare_index, t->irqs);
        for (size_t i = 0; i < t->n; i++) {
                irqs[i] = t->irqs[order[i]];
                names[i] = t->names[order[i]];
        }
        memcpy(t->irqs, irqs, t->n * sizeof(unsigned));
        memcpy(t->names, names, t->n * sizeof(char *));
        return 0;
}

/* An IRQ with no action ends its line with the flow handler ("5-edge", "fasteoi",
 * "Level"): that is not a name. */
static bool is_trigger_column(const char *s, size_t len) {
        static const char *const handlers[] = { "edge", "level", "fasteoi", "simple", "percpu", "percpu_devid",
                                                "bad", "Edge", "Level" };
        while (len > 0 && isdigit((unsigned char) *s))
                s++, len--;
        if (len > 0 && *s == '-')
                s++, len--;
        for (size_t i = 0; i < ELEMENTSOF(handlers); i++)
                if (len == strlen(handlers[i]) && strncmp(s, handlers[i], len) == 0)
                        return true;
        return false;
}

const char *irq_line_actions(const char *p, const char *eol, size_t *ret_len) {
        const char *desc, *end, *name;

        while (p < eol && isspace((unsigned char) *p))
                p++;
        desc = p;
        end = eol;
        while (end > desc && isspace((unsigned char) end[-1]))
                end--;
        name = desc;
        for (const char *q = desc; q + 1 < end; q++)
                if (q[0] == ' ' && q[1] == ' ')
                        name = q + 2;
        while (name < end && *name == ' ')
                name++;
        if (name >= end || is_trigger_column(name, (size_t) (end - name)))
                return NULL;
        *ret_len = (size_t) (end - name);
        return name;
}

int irq_names_parse(const char *text, IrqNames *ret) {
        IrqNames t = IRQ_NAMES_EMPTY;
        size_t allocated_irqs = 0, allocated_names = 0;
        unsigned ncpus = 0;
        bool header = true;
        int r = 0;

        for (const char *line = text; *line && r >= 0;) {
                const char *eol = strchrnul(line, '\n'), *p = line, *name;
                unsigned long irq = 0;
                size_t len;

                if (header) {
                        ncpus = count_cpu_columns(line, (size_t) (eol - line));
                        header = false;
                        goto next;
                }
                while (p < eol && *p == ' ')
                        p++;
                if (p >= eol || !isdigit((unsigned char) *p))
                        goto next;
                while (p < eol && isdigit((unsigned char) *p)) {
                        irq = irq * 10 + (unsigned long) (*p - '0');
                        if (irq > 1U << 24)
                                goto next;
                        p++;
                }
                if (p >= eol || *p != ':')
                        goto next;
                p++;
                /* Skip one count column per CPU. */
                for (unsigned c = 0; c < ncpus; c++) {
                        while (p < eol && isspace((unsigned char) *p))
                                p++;
                        while (p < eol && isdigit((unsigned char) *p))
                                p++;
                }
                name = irq_line_actions(p, eol, &len);
                if (name)
                        r = add_entry(&t, &allocated_irqs, &allocated_names, (unsigned) irq, name, len);
        next:
                line = *eol ? eol + 1 : eol;
        }
        if (r >= 0)
                r = sort_by_irq(&t);
        if (r < 0) {
                irq_names_done(&t);
                return r;
        }
        irq_names_done(ret);
        *ret = t;
        return 0;
}

const char *irq_names_lookup(const IrqNames *t, unsigned irq) {
        size_t lo = 0, hi = t->n;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (t->irqs[mid] == irq)
                        return t->names[mid];
                if (t->irqs[mid] < irq)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return NULL;
}
