/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fuzzes the /proc/interrupts parser (interrupts.c) and the pin matching that consumes its
 * names (posture_irq_pin()). Promises checked: entries ascending by IRQ, every entry found by
 * lookup, every name the end of a numbered line of the input with that number, the table
 * independent of line order, and a pin spelling out a name (or one of its comma-separated
 * actions) matching it. */
#include <ctype.h>
#include <stdbool.h>

#include "config/config.h"
#include "fuzz.h"
#include "host/interrupts.h"
#include "config/posture.h"
#include "basic/util.h"

#define MAX_IRQ (1U << 24) /* interrupts.c skips numbers above this */
#define MAX_PIN_CHECKS 64  /* bounds the fnmatch() work per input */

typedef struct NumberedLine {
        unsigned irq;
        const char *start, *end; /* trimmed of trailing white space */
} NumberedLine;

static int compare_numbered(const void *a, const void *b) {
        const NumberedLine *x = a, *y = b;
        return x->irq < y->irq ? -1 : x->irq > y->irq;
}

/* Every line after the first that starts " *N:", by N. */
static NumberedLine *numbered_lines(const char *text, size_t *ret_n) {
        size_t n = 0, cap = 16;
        NumberedLine *lines = malloc(cap * sizeof(NumberedLine));
        const char *line = strchr(text, '\n');

        FUZZ_CHECK(lines, "out of memory");
        while (line) {
                const char *p = ++line, *eol = strchrnul(line, '\n'), *end = eol;
                unsigned long irq = 0;

                line = *eol ? eol : NULL;
                while (*p == ' ')
                        p++;
                if (!isdigit((unsigned char) *p))
                        continue;
                for (; isdigit((unsigned char) *p) && irq <= MAX_IRQ; p++)
                        irq = irq * 10 + (unsigned long) (*p - '0');
                if (irq > MAX_IRQ || *p != ':')
                        continue;
                while (end > p && isspace((unsigned char) end[-1]))
                        end--;
                if (n == cap) {
                        lines = realloc(lines, (cap *= 2) * sizeof(NumberedLine));
                        FUZZ_CHECK(lines, "out of memory");
                }
                lines[n++] = (NumberedLine) { (unsigned) irq, p + 1, end };
        }
        qsort(lines, n, sizeof(NumberedLine), compare_numbered);
        *ret_n = n;
        return lines;
}

static bool some_line_ends_with(const NumberedLine *lines, size_t n, unsigned irq, const char *name) {
        size_t len = strlen(name);
        NumberedLine key = { .irq = irq };
        const NumberedLine *hit = bsearch(&key, lines, n, sizeof(NumberedLine), compare_numbered);

        if (!hit)
                return false;
        while (hit > lines && hit[-1].irq == irq)
                hit--;
        for (; hit < lines + n && hit->irq == irq; hit++)
                if ((size_t) (hit->end - hit->start) >= len && memcmp(hit->end - len, name, len) == 0)
                        return true;
        return false;
}

/* The lines after the first in reverse order: the kernel prints IRQs ascending, but the
 * table must not depend on it. */
static char *reverse_lines(const char *text) {
        size_t len = strlen(text);
        char *out = malloc(len + 2), *o = out;
        const char *header_end = strchrnul(text, '\n'), *end = text + len;

        FUZZ_CHECK(out, "out of memory");
        o = mempcpy(o, text, (size_t) (header_end - text));
        *o++ = '\n';
        while (end > header_end) {
                const char *start = end;
                while (start > header_end + 1 && start[-1] != '\n')
                        start--;
                if (start <= header_end)
                        break;
                o = mempcpy(o, start, (size_t) (end - start));
                *o++ = '\n';
                end = start - 1;
        }
        *o = '\0';
        return out;
}

static int compare_entries(const void *a, const void *b, void *userdata) {
        const IrqNames *t = userdata;
        size_t x = *(const size_t *) a, y = *(const size_t *) b;
        if (t->irqs[x] != t->irqs[y])
                return t->irqs[x] < t->irqs[y] ? -1 : 1;
        return strcmp(t->names[x], t->names[y]);
}

static size_t *sorted_entries(const IrqNames *t) {
        size_t *order = malloc((t->n + 1) * sizeof(size_t));
        FUZZ_CHECK(order, "out of memory");
        for (size_t i = 0; i < t->n; i++)
                order[i] = i;
        qsort_r(order, t->n, sizeof(size_t), compare_entries, (void *) t);
        return order;
}

static void check_same_table(const IrqNames *a, const IrqNames *b) {
        size_t *x, *y;

        FUZZ_CHECK(a->n == b->n, "%zu entries in order, %zu with the lines reversed", a->n, b->n);
        x = sorted_entries(a);
        y = sorted_entries(b);
        for (size_t i = 0; i < a->n; i++)
                FUZZ_CHECK(a->irqs[x[i]] == b->irqs[y[i]] && streq(a->names[x[i]], b->names[y[i]]),
                           "IRQ %u '%s' in order, IRQ %u '%s' reversed", a->irqs[x[i]], a->names[x[i]],
                           b->irqs[y[i]], b->names[y[i]]);
        free(y);
        free(x);
}

/* A glob that matches exactly s: fnmatch()'s specials escaped with a backslash. */
static char *glob_escape(const char *s, size_t len) {
        char *out = malloc(len * 2 + 1), *o = out;
        FUZZ_CHECK(out, "out of memory");
        for (size_t i = 0; i < len; i++) {
                if (strchr("*?[]\\", s[i]))
                        *o++ = '\\';
                *o++ = s[i];
        }
        *o = '\0';
        return out;
}

/* Which pin posture_irq_pin() picks among one or two: 1 or 2, 0 for none. */
static int match(const char *name, char *glob0, char *glob1) {
        static CPUSet none = CPUSET_EMPTY;
        IrqPin pins[2] = { { .glob = glob0, .cpus = none }, { .glob = glob1, .cpus = none } };
        Config config = { .pins = pins, .n_pins = glob1 ? 2 : 1 };
        Posture posture = { .config = &config };
        const IrqPin *pin = posture_irq_pin(&posture, name);

        return pin ? (int) (pin - pins) + 1 : 0;
}

static void check_pins(const char *name) {
        char *exact = glob_escape(name, strlen(name)), any[] = "*", absent[] = "*?*";
        const char *absent_byte;

        FUZZ_CHECK(match(name, exact, NULL) == 1, "'%s' does not match itself", name);
        FUZZ_CHECK(match(name, any, exact) == 2, "the last matching pin does not win");
        FUZZ_CHECK(match(name, exact, any) == 2, "the last matching pin does not win");

        /* Each action of "i8042, rtc0" matches on its own, when short enough to copy. */
        for (const char *s = name; *s;) {
                size_t n = strcspn(s, ",");
                const char *a = s, *b = s + n;
                while (a < b && isspace((unsigned char) *a))
                        a++;
                while (b > a && isspace((unsigned char) b[-1]))
                        b--;
                if (b > a && n < 256) {
                        char *one = glob_escape(a, (size_t) (b - a));
                        FUZZ_CHECK(match(name, one, NULL), "action '%s' of '%s' does not match", one, name);
                        free(one);
                }
                s += n;
                s += *s == ',';
        }

        /* A glob that needs a byte the name lacks never matches. */
        for (absent_byte = "~^%@=+!\x7f"; *absent_byte && strchr(name, *absent_byte); absent_byte++)
                ;
        if (*absent_byte) {
                absent[1] = *absent_byte;
                FUZZ_CHECK(!match(name, absent, NULL), "'%s' matches '%s'", name, absent);
        }
        FUZZ_CHECK(!match(NULL, any, NULL), "a NULL name matches");
        free(exact);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *text = fuzz_strndup(data, size), *reversed;
        IrqNames t = IRQ_NAMES_EMPTY, again = IRQ_NAMES_EMPTY;
        NumberedLine *lines;
        size_t n_lines;
        int r;

        /* A table already in *ret is replaced (and freed: the leak checker watches). */
        FUZZ_CHECK(irq_names_parse("CPU0\n 1: 0 IO-APIC 1-edge  i8042\n", &t) == 0 && t.n == 1, "sentinel");
        r = irq_names_parse(text, &t);
        FUZZ_CHECK(r == 0, "irq_names_parse() returned %d", r);

        lines = numbered_lines(text, &n_lines);
        FUZZ_CHECK(t.n <= n_lines, "%zu entries from %zu numbered lines", t.n, n_lines);
        for (size_t i = 0; i < t.n; i++) {
                const char *name = t.names[i], *found;
                size_t len = strlen(name), first, last;

                FUZZ_CHECK(i == 0 || t.irqs[i - 1] <= t.irqs[i], "IRQ %u after IRQ %u", t.irqs[i], t.irqs[i - 1]);
                FUZZ_CHECK(t.irqs[i] <= MAX_IRQ, "IRQ %u out of range", t.irqs[i]);
                /* Trimmed of spaces in front (the kernel pads with nothing else) and of any
                 * white space at the end. */
                FUZZ_CHECK(len > 0 && !strchr(name, '\n') && name[0] != ' ' && !isspace((unsigned char) name[len - 1]),
                           "IRQ %u: bad name '%s'", t.irqs[i], name);
                FUZZ_CHECK(!strstr(name, "  "), "IRQ %u: name '%s' has a run of spaces", t.irqs[i], name);
                FUZZ_CHECK(some_line_ends_with(lines, n_lines, t.irqs[i], name),
                           "IRQ %u: '%s' does not end any line numbered %u", t.irqs[i], name, t.irqs[i]);

                /* With the same IRQ on several lines, lookup may return any of them. */
                found = irq_names_lookup(&t, t.irqs[i]);
                FUZZ_CHECK(found, "irq_names_lookup(%u) finds nothing", t.irqs[i]);
                first = last = i;
                while (first > 0 && t.irqs[first - 1] == t.irqs[i])
                        first--;
                while (last + 1 < t.n && t.irqs[last + 1] == t.irqs[i])
                        last++;
                while (first <= last && t.names[first] != found)
                        first++;
                FUZZ_CHECK(first <= last, "irq_names_lookup(%u) = '%s' belongs to another IRQ", t.irqs[i], found);
                if (!irq_names_lookup(&t, t.irqs[i] + 1))
                        FUZZ_CHECK(i + 1 >= t.n || t.irqs[i + 1] != t.irqs[i] + 1, "IRQ %u missed", t.irqs[i] + 1);
                if (i < MAX_PIN_CHECKS)
                        check_pins(name);
        }
        FUZZ_CHECK(t.n == 0 || !irq_names_lookup(&t, t.irqs[t.n - 1] + 1), "lookup past the last IRQ finds one");

        reversed = reverse_lines(text);
        FUZZ_CHECK(irq_names_parse(reversed, &again) == 0, "reversed input does not parse");
        check_same_table(&t, &again);

        free(reversed);
        free(lines);
        irq_names_done(&again);
        irq_names_done(&t);
        free(text);
        return 0;
}
