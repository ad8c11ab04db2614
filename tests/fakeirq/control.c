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

static int control_execute(struct fakeirq *st, char *line) {
        char *saveptr = NULL;
        char *cmd = strtok_r(line, " \t\r", &saveptr);
        char *arg1 = cmd ? strtok_r(NULL, " \t\r", &saveptr) : NULL;
        char *arg2 = arg1 ? strtok_r(NULL, " \t\r", &saveptr) : NULL;
        char *arg3 = arg2 ? strtok_r(NULL, " \t\r", &saveptr) : NULL;
        char *extra = arg3 ? strtok_r(NULL, " \t\r", &saveptr) : NULL;
        unsigned long number;
        int e;

        if (!cmd)
                return 0;       /* blank line */
        if (extra)
                return -EINVAL;

        if (strcmp(cmd, "managed") == 0 || strcmp(cmd, "unmanaged") == 0) {
                if (arg2)
                        return -EINVAL;
                e = control_parse_irqs(st, arg1, true);
                if (e < 0)
                        return e;
                FOR_EACH_SCRATCH_IRQ(st, n)
                        irq_set_managed(st, irq_find(st, n), cmd[0] == 'm');
                return 0;
        }

        if (strcmp(cmd, "vanish") == 0 || strcmp(cmd, "vanish-after-read") == 0) {
                if (arg2)
                        return -EINVAL;
                e = control_parse_irqs(st, arg1, true);
                if (e < 0)
                        return e;
                FOR_EACH_SCRATCH_IRQ(st, n) {
                        if (strcmp(cmd, "vanish") == 0)
                                irq_vanish(st, irq_find(st, n));
                        else
                                irq_find(st, n)->vanish_after_read = true;
                }
                return 0;
        }

        if (strcmp(cmd, "appear") == 0) {
                uint32_t *affinity = NULL;

                if (arg3)
                        return -EINVAL;
                e = control_parse_irqs(st, arg1, false);
                if (e < 0)
                        return e;
                FOR_EACH_SCRATCH_IRQ(st, n)
                        if (irq_find_present(st, n))
                                return -EEXIST;
                if (arg2) {
                        e = kernel_parse_list(arg2, st->scratch, st->nr_cpus);
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

        if (strcmp(cmd, "set") == 0 || strcmp(cmd, "effective") == 0 || strcmp(cmd, "hint") == 0) {
                if (!arg2 || arg3)
                        return -EINVAL;
                e = control_parse_irqs(st, arg1, true);
                if (e < 0)
                        return e;
                e = kernel_parse_list(arg2, st->scratch, st->nr_cpus);
                if (e < 0)
                        return e;
                if (strcmp(cmd, "set") == 0 && !bitmap_intersects(st->scratch, st->online, st->nr_cpus))
                        return -EINVAL;
                FOR_EACH_SCRATCH_IRQ(st, n) {
                        struct fake_irq *irq = irq_find(st, n);

                        if (strcmp(cmd, "set") == 0) {
                                bitmap_copy(irq_affinity(st, irq), st->scratch, st->nr_cpus);
                                irq_update_effective(st, irq);
                        } else if (strcmp(cmd, "effective") == 0)
                                bitmap_copy(irq_effective(st, irq), st->scratch, st->nr_cpus);
                        else
                                bitmap_copy(irq_hint(st, irq), st->scratch, st->nr_cpus);
                }
                return 0;
        }

        if (strcmp(cmd, "node") == 0) {
                int node;

                if (!arg2 || arg3 || !parse_int(arg2, &node))
                        return -EINVAL;
                e = control_parse_irqs(st, arg1, true);
                if (e < 0)
                        return e;
                FOR_EACH_SCRATCH_IRQ(st, n)
                        irq_find(st, n)->node = node;
                return 0;
        }

        if (strcmp(cmd, "fail") == 0) {
                int err = 0;
                long count = -1;

                if (!arg2)
                        return -EINVAL;
                if (strcmp(arg2, "none") == 0) {
                        if (arg3)
                                return -EINVAL;
                } else {
                        if (!parse_errno(arg2, &err))
                                return -EINVAL;
                        if (arg3) {
                                if (!parse_unsigned(arg3, LONG_MAX, &number) || number == 0)
                                        return -EINVAL;
                                count = (long) number;
                        }
                }
                e = control_parse_irqs(st, arg1, true);
                if (e < 0)
                        return e;
                FOR_EACH_SCRATCH_IRQ(st, n) {
                        struct fake_irq *irq = irq_find(st, n);

                        irq->fail_errno = err;
                        irq->fail_remaining = err ? count : 0;
                }
                return 0;
        }

        if (strcmp(cmd, "offline") == 0 || strcmp(cmd, "online") == 0) {
                if (arg2 || !parse_unsigned(arg1, UINT_MAX, &number))
                        return -EINVAL;
                return cmd[1] == 'f' ? cpu_set_offline(st, (unsigned) number)
                                     : cpu_set_online(st, (unsigned) number);
        }

        if (strcmp(cmd, "reset-stats") == 0) {
                if (arg1)
                        return -EINVAL;
                st->default_stats = (struct counters) {};
                for (unsigned i = 0; i < st->irq_capacity; i++)
                        if (st->irqs[i])
                                st->irqs[i]->stats = (struct counters) {};
                return 0;
        }

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
