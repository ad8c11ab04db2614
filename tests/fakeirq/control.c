/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* .control: the commands a test writes to change the fake /proc/irq behind the
 * daemon's back (see the top of fakeirqfs.c for the list). */

#include "fakeirq.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>


static const struct {
        const char *name;
        int value;
} errno_names[] = {
        { "EPERM", EPERM }, { "ENOENT", ENOENT }, { "EIO", EIO }, { "ENXIO", ENXIO },
        { "EAGAIN", EAGAIN }, { "ENOMEM", ENOMEM }, { "EACCES", EACCES },
        { "EBUSY", EBUSY }, { "EEXIST", EEXIST }, { "ENODEV", ENODEV },
        { "EINVAL", EINVAL }, { "ENOSPC", ENOSPC }, { "ERANGE", ERANGE },
        { "EOVERFLOW", EOVERFLOW }, { "EOPNOTSUPP", EOPNOTSUPP },
        { "ENOTSUP", ENOTSUP }, { "ETIMEDOUT", ETIMEDOUT }, { "EDEADLK", EDEADLK },
        { "ENOSYS", ENOSYS }, { "EINTR", EINTR },
};

bool parse_unsigned(const char *s, unsigned long max, unsigned long *ret) {
        unsigned long v;
        char *end;

        if (!s || *s < '0' || *s > '9')
                return false;
        errno = 0;
        v = strtoul(s, &end, 10);
        if (errno != 0 || *end != '\0' || v > max)
                return false;
        *ret = v;
        return true;
}

bool parse_int(const char *s, int *ret) {
        long v;
        char *end;

        if (!s || *s == '\0')
                return false;
        errno = 0;
        v = strtol(s, &end, 10);
        if (errno != 0 || *end != '\0' || v < INT_MIN || v > INT_MAX)
                return false;
        *ret = (int) v;
        return true;
}

static bool parse_errno(const char *s, int *ret) {
        unsigned long n;

        for (size_t i = 0; i < sizeof(errno_names) / sizeof(errno_names[0]); i++)
                if (strcasecmp(s, errno_names[i].name) == 0) {
                        *ret = errno_names[i].value;
                        return true;
                }
        if (parse_unsigned(s, 4095, &n) && n > 0) {
                *ret = (int) n;
                return true;
        }
        return false;
}

/* Parses an IRQ list into irq_scratch; with @must_exist every IRQ must be present. */
static int control_parse_irqs(struct fakeirq *st, const char *arg, bool must_exist) {
        int e;

        if (!arg)
                return -EINVAL;
        e = kernel_parse_list(arg, st->irq_scratch, FAKEIRQ_IRQ_LIMIT);
        if (e < 0)
                return e;
        if (bitmap_next(st->irq_scratch, FAKEIRQ_IRQ_LIMIT, 0) >= FAKEIRQ_IRQ_LIMIT)
                return -EINVAL;
        if (must_exist)
                for (unsigned n = bitmap_next(st->irq_scratch, FAKEIRQ_IRQ_LIMIT, 0); n < FAKEIRQ_IRQ_LIMIT;
                     n = bitmap_next(st->irq_scratch, FAKEIRQ_IRQ_LIMIT, n + 1))
                        if (!irq_find_present(st, n))
                                return -ENOENT;
        return 0;
}

/* One command line split into words; a missing word is NULL, and a word is only
 * there if every word before it is. */
struct control_line {
        const char *command;
        const char *arg1;
        const char *arg2;
        const char *arg3;
};

static int control_mark_managed(struct fakeirq *st, const struct control_line *line, bool managed) {
        int e;

        if (line->arg2)
                return -EINVAL;
        e = control_parse_irqs(st, line->arg1, true);
        if (e < 0)
                return e;
        FOR_EACH_SCRATCH_IRQ(st, n)
                irq_set_managed(st, irq_find(st, n), managed);
        return 0;
}

static int control_managed(struct fakeirq *st, const struct control_line *line) {
        return control_mark_managed(st, line, true);
}

static int control_unmanaged(struct fakeirq *st, const struct control_line *line) {
        return control_mark_managed(st, line, false);
}

static int control_vanish(struct fakeirq *st, const struct control_line *line) {
        int e;

        if (line->arg2)
                return -EINVAL;
        e = control_parse_irqs(st, line->arg1, true);
        if (e < 0)
                return e;
        FOR_EACH_SCRATCH_IRQ(st, n)
                irq_vanish(st, irq_find(st, n));
        return 0;
}

static int control_vanish_after_read(struct fakeirq *st, const struct control_line *line) {
        int e;

        if (line->arg2)
                return -EINVAL;
        e = control_parse_irqs(st, line->arg1, true);
        if (e < 0)
                return e;
        FOR_EACH_SCRATCH_IRQ(st, n)
                irq_find(st, n)->vanish_after_read = true;
        return 0;
}

static int control_appear(struct fakeirq *st, const struct control_line *line) {
        uint32_t *affinity = NULL;
        int e;

        if (line->arg3)
                return -EINVAL;
        e = control_parse_irqs(st, line->arg1, false);
        if (e < 0)
                return e;
        /* all or nothing: refused before any of them appears */
        FOR_EACH_SCRATCH_IRQ(st, n)
                if (irq_find_present(st, n))
                        return -EEXIST;
        if (line->arg2) {
                e = kernel_parse_list(line->arg2, st->scratch, st->nr_cpus);
                if (e < 0)
                        return e;
                affinity = st->scratch;
        }
        FOR_EACH_SCRATCH_IRQ(st, n) {
                e = irq_appear(st, n, affinity);
                if (e < 0)
                        return e;
        }
        return 0;
}

/* "COMMAND IRQ CPULIST": the IRQs (all present) into irq_scratch, the CPUs into scratch. */
static int control_parse_irqs_and_cpus(struct fakeirq *st, const struct control_line *line) {
        int e;

        if (!line->arg2 || line->arg3)
                return -EINVAL;
        e = control_parse_irqs(st, line->arg1, true);
        if (e < 0)
                return e;
        return kernel_parse_list(line->arg2, st->scratch, st->nr_cpus);
}

static int control_set(struct fakeirq *st, const struct control_line *line) {
        int e = control_parse_irqs_and_cpus(st, line);

        if (e < 0)
                return e;
        if (!bitmap_intersects(st->scratch, st->online, st->nr_cpus))
                return -EINVAL;
        FOR_EACH_SCRATCH_IRQ(st, n) {
                struct fake_irq *irq = irq_find(st, n);

                bitmap_copy(irq_affinity(st, irq), st->scratch, st->nr_cpus);
                irq_update_effective(st, irq);
        }
        return 0;
}

static int control_effective(struct fakeirq *st, const struct control_line *line) {
        int e = control_parse_irqs_and_cpus(st, line);

        if (e < 0)
                return e;
        FOR_EACH_SCRATCH_IRQ(st, n)
                bitmap_copy(irq_effective(st, irq_find(st, n)), st->scratch, st->nr_cpus);
        return 0;
}

static int control_hint(struct fakeirq *st, const struct control_line *line) {
        int e = control_parse_irqs_and_cpus(st, line);

        if (e < 0)
                return e;
        FOR_EACH_SCRATCH_IRQ(st, n)
                bitmap_copy(irq_hint(st, irq_find(st, n)), st->scratch, st->nr_cpus);
        return 0;
}

static int control_node(struct fakeirq *st, const struct control_line *line) {
        int node;
        int e;

        if (!line->arg2 || line->arg3 || !parse_int(line->arg2, &node))
                return -EINVAL;
        e = control_parse_irqs(st, line->arg1, true);
        if (e < 0)
                return e;
        FOR_EACH_SCRATCH_IRQ(st, n)
                irq_find(st, n)->node = node;
        return 0;
}

/* "fail IRQ ERRNO [COUNT]" or "fail IRQ none"; count -1 is every write. */
static int control_parse_fault(const struct control_line *line, int *ret_errno, long *ret_count) {
        unsigned long number;
        int err = 0;
        long count = -1;

        if (!line->arg2)
                return -EINVAL;
        if (strcmp(line->arg2, "none") == 0) {
                if (line->arg3)
                        return -EINVAL;
        } else {
                if (!parse_errno(line->arg2, &err))
                        return -EINVAL;
                if (line->arg3) {
                        if (!parse_unsigned(line->arg3, LONG_MAX, &number) || number == 0)
                                return -EINVAL;
                        count = (long) number;
                }
        }
        *ret_errno = err;
        *ret_count = count;
        return 0;
}

static int control_fail(struct fakeirq *st, const struct control_line *line) {
        int err;
        long count;
        int e;

        e = control_parse_fault(line, &err, &count);
        if (e < 0)
                return e;
        e = control_parse_irqs(st, line->arg1, true);
        if (e < 0)
                return e;
        FOR_EACH_SCRATCH_IRQ(st, n) {
                struct fake_irq *irq = irq_find(st, n);

                irq->fail_errno = err;
                irq->fail_remaining = err ? count : 0;
        }
        return 0;
}

static int control_parse_cpu(const struct control_line *line, unsigned *ret_cpu) {
        unsigned long number;

        if (line->arg2 || !parse_unsigned(line->arg1, UINT_MAX, &number))
                return -EINVAL;
        *ret_cpu = (unsigned) number;
        return 0;
}

static int control_offline(struct fakeirq *st, const struct control_line *line) {
        unsigned cpu;
        int e = control_parse_cpu(line, &cpu);

        return e < 0 ? e : cpu_set_offline(st, cpu);
}

static int control_online(struct fakeirq *st, const struct control_line *line) {
        unsigned cpu;
        int e = control_parse_cpu(line, &cpu);

        return e < 0 ? e : cpu_set_online(st, cpu);
}

static int control_reset_stats(struct fakeirq *st, const struct control_line *line) {
        if (line->arg1)
                return -EINVAL;
        st->default_stats = (struct counters) {};
        for (unsigned i = 0; i < st->irq_capacity; i++)
                if (st->irqs[i])
                        st->irqs[i]->stats = (struct counters) {};
        return 0;
}

/* Adding a command is one function and one row; the top of fakeirqfs.c documents it. */
static const struct control_command {
        const char *name;
        int (*execute)(struct fakeirq *st, const struct control_line *line);
} control_commands[] = {
        { "managed", control_managed },
        { "unmanaged", control_unmanaged },
        { "vanish", control_vanish },
        { "vanish-after-read", control_vanish_after_read },
        { "appear", control_appear },
        { "set", control_set },
        { "effective", control_effective },
        { "hint", control_hint },
        { "node", control_node },
        { "fail", control_fail },
        { "offline", control_offline },
        { "online", control_online },
        { "reset-stats", control_reset_stats },
};

static int control_execute(struct fakeirq *st, char *text) {
        char *saveptr = NULL;
        struct control_line line = {};

        line.command = strtok_r(text, " \t\r", &saveptr);
        line.arg1 = line.command ? strtok_r(NULL, " \t\r", &saveptr) : NULL;
        line.arg2 = line.arg1 ? strtok_r(NULL, " \t\r", &saveptr) : NULL;
        line.arg3 = line.arg2 ? strtok_r(NULL, " \t\r", &saveptr) : NULL;

        if (!line.command)
                return 0;       /* blank line */
        if (line.arg3 && strtok_r(NULL, " \t\r", &saveptr))
                return -EINVAL;
        for (size_t i = 0; i < sizeof(control_commands) / sizeof(control_commands[0]); i++)
                if (strcmp(line.command, control_commands[i].name) == 0)
                        return control_commands[i].execute(st, &line);
        return -EINVAL;
}

int control_write(struct fakeirq *st, const char *buf, size_t size) {
        char *text = copy_user_buffer(buf, size);
        char *saveptr = NULL;
        int r = 0;

        if (!text)
                return -ENOMEM;
        for (char *line = strtok_r(text, "\n;", &saveptr); line; line = strtok_r(NULL, "\n;", &saveptr)) {
                char *copy = strdup(line);

                if (!copy) {
                        r = -ENOMEM;
                        break;
                }
                r = control_execute(st, copy);
                free(copy);
                if (r < 0) {
                        log_error(".control: \"%s\": %s", line, strerror(-r));
                        break;
                }
                log_verbose(st, ".control: %s", line);
        }
        free(text);
        return r;
}
