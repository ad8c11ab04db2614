/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What fakeirqfs's files share: the state of the fake /proc/irq, and the functions
 * one file offers the others. Internal to tests/fakeirq/. */
#pragma once

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

/* IRQ numbers are 0 .. FAKEIRQ_IRQ_LIMIT-1; real systems stay far below. */
#define FAKEIRQ_IRQ_LIMIT (1u << 20)

#define UNUSED __attribute__((unused))
#define PRINTF_LIKE(a, b) __attribute__((format(printf, a, b)))

#define FOR_EACH_SCRATCH_IRQ(st, n)                                                  \
        for (unsigned n = bitmap_next((st)->irq_scratch, FAKEIRQ_IRQ_LIMIT, 0);      \
             n < FAKEIRQ_IRQ_LIMIT;                                                  \
             n = bitmap_next((st)->irq_scratch, FAKEIRQ_IRQ_LIMIT, n + 1))

struct strbuf {
        char *data;
        size_t len;
        size_t cap;
        bool failed;
};

/* In the order procfs lists them: by name length, then name (proc_match()). */
enum irq_file {
        IRQ_FILE_NODE,
        IRQ_FILE_SPURIOUS,
        IRQ_FILE_SMP_AFFINITY,
        IRQ_FILE_AFFINITY_HINT,
        IRQ_FILE_SMP_AFFINITY_LIST,
        IRQ_FILE_EFFECTIVE_AFFINITY,
        IRQ_FILE_EFFECTIVE_AFFINITY_LIST,
        IRQ_FILE_COUNT,
        IRQ_ATTR_DIR = IRQ_FILE_COUNT,       /* index of the directory's own attributes */
        IRQ_ATTR_COUNT,
};

extern const char *const irq_file_names[IRQ_FILE_COUNT];

enum node_kind {
        NODE_ROOT,
        NODE_DEFAULT_AFFINITY,
        NODE_CONTROL,
        NODE_STATS,
        NODE_IRQ_DIR,
        NODE_IRQ_FILE,
};

enum managed_abi {
        MANAGED_ABI_LEGACY,     /* < 6.12: 0644, EIO */
        MANAGED_ABI_MODERN,     /* >= 6.12: 0444, EPERM */
};

struct node_attr {
        mode_t mode;            /* permission bits only */
        uid_t uid;
        gid_t gid;
};

struct counters {
        uint64_t writes;
        uint64_t failed;
        uint64_t opens;
        uint64_t reads;
};

struct fake_irq {
        unsigned number;
        bool present;
        bool managed;
        bool vanish_after_read;
        uint64_t generation;    /* new per appearance; descriptors of older ones are stale */
        int node;
        int fail_errno;         /* 0: no injected failure */
        long fail_remaining;    /* < 0: every write */
        struct node_attr attr[IRQ_ATTR_COUNT];
        struct counters stats;
        uint32_t masks[];       /* affinity, effective, hint: mask_words each */
};

struct fakeirq {
        unsigned nr_cpus;
        size_t mask_words;
        uint32_t *online;
        uint32_t *default_affinity;
        uint32_t *scratch;              /* one CPU mask */
        uint32_t *irq_scratch;          /* FAKEIRQ_IRQ_LIMIT bits */

        struct fake_irq **irqs;         /* by number; NULL if never present */
        unsigned irq_capacity;
        unsigned irqs_present;          /* kept, not counted: the root's nlink asks on every walk */
        uint64_t next_generation;
        /* Open files, so that those whose RELEASE the kernel drops at unmount are freed. */
        struct open_file *open_files;

        enum managed_abi abi;
        int default_node;
        bool verbose;
        struct timespec start_time;

        struct node_attr root_attr;
        struct node_attr default_attr;
        struct node_attr control_attr;
        struct node_attr stats_attr;
        struct counters default_stats;
};

struct node_ref {
        enum node_kind kind;
        struct fake_irq *irq;           /* NODE_IRQ_DIR, NODE_IRQ_FILE */
        enum irq_file file;             /* NODE_IRQ_FILE */
};

/* An open file: what it names, and the seq_file-like rendering reads continue from. */
struct open_file {
        struct open_file *prev, *next;
        enum node_kind kind;
        enum irq_file file;
        unsigned irq_number;
        uint64_t generation;
        bool has_snapshot;
        off_t read_pos;
        struct strbuf snapshot;
};


/* bitmap.c */
size_t bitmap_words(unsigned nbits);
bool bit_test(const uint32_t *mask, unsigned bit);
void bit_set(uint32_t *mask, unsigned bit);
void bit_clear(uint32_t *mask, unsigned bit);
void bitmap_zero(uint32_t *mask, unsigned nbits);
void bitmap_copy(uint32_t *dst, const uint32_t *src, unsigned nbits);
void bitmap_set_range(uint32_t *mask, unsigned start, unsigned len);
unsigned bitmap_next(const uint32_t *mask, unsigned nbits, unsigned from);
unsigned bitmap_next_and(const uint32_t *a, const uint32_t *b, unsigned nbits, unsigned from);
bool bitmap_intersects(const uint32_t *a, const uint32_t *b, unsigned nbits);
unsigned bitmap_weight(const uint32_t *mask, unsigned nbits);

/* cpulist.c: bitmap_parselist() and bitmap_parse(); @buf ends at NUL or newline */
int kernel_parse_list(const char *buf, uint32_t *mask, unsigned nbits);
int kernel_parse_hex(const char *start, uint32_t *mask, unsigned nbits);

/* strbuf.c */
void strbuf_free(struct strbuf *b);
PRINTF_LIKE(2, 3) void strbuf_printf(struct strbuf *b, const char *fmt, ...);
void strbuf_put_mask_hex(struct strbuf *b, const uint32_t *mask, unsigned nbits);
void strbuf_put_mask_list(struct strbuf *b, const uint32_t *mask, unsigned nbits);

/* state.c */
uint32_t *irq_affinity(const struct fakeirq *st, struct fake_irq *irq);
uint32_t *irq_effective(const struct fakeirq *st, struct fake_irq *irq);
uint32_t *irq_hint(const struct fakeirq *st, struct fake_irq *irq);
PRINTF_LIKE(2, 3) void log_verbose(const struct fakeirq *st, const char *fmt, ...);
PRINTF_LIKE(1, 2) void log_error(const char *fmt, ...);
struct fake_irq *irq_find(const struct fakeirq *st, unsigned number);
struct fake_irq *irq_find_present(const struct fakeirq *st, unsigned number);
void irq_set_managed(struct fakeirq *st, struct fake_irq *irq, bool managed);
void irq_update_effective(struct fakeirq *st, struct fake_irq *irq);
int irq_appear(struct fakeirq *st, unsigned number, const uint32_t *affinity);
void irq_vanish(struct fakeirq *st, struct fake_irq *irq);
void open_file_free(struct open_file *f);
void fakeirq_free(struct fakeirq *st);

/* hotplug.c */
int cpu_set_offline(struct fakeirq *st, unsigned cpu);
int cpu_set_online(struct fakeirq *st, unsigned cpu);

/* render.c */
void render_stats(struct fakeirq *st, struct strbuf *b);
void render_control(struct fakeirq *st, struct strbuf *b);
void render_irq_file(struct fakeirq *st, struct fake_irq *irq, enum irq_file file, struct strbuf *b);

/* lookup.c */
int resolve_path(struct fakeirq *st, const char *path, struct node_ref *ret);
struct node_attr *node_attr_of(struct fakeirq *st, const struct node_ref *ref);
bool node_is_dir(const struct node_ref *ref);
int resolve_open_file(struct fakeirq *st, const struct open_file *f, struct node_ref *ret);
bool open_file_is_stale(const struct fakeirq *st, const struct open_file *f);
struct counters *open_file_counters(struct fakeirq *st, const struct open_file *f);

/* affinity.c */
char *copy_user_buffer(const char *buf, size_t size);
int irq_write_affinity(struct fakeirq *st, struct fake_irq *irq, bool list, const char *text);
int default_affinity_write(struct fakeirq *st, const char *text);

/* control.c */
bool parse_unsigned(const char *s, unsigned long max, unsigned long *ret);
bool parse_int(const char *s, int *ret);
int control_write(struct fakeirq *st, const char *buf, size_t size);

/* ops.c */
extern const struct fuse_operations fakeirq_operations;
