/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* CPU sets of any size, and the kernel's two text forms for them: "0-3,8" lists and
 * comma-grouped hex masks ("ff,ffffffff"). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Higher than any NR_CPUS a distribution ships (8192); bounds hostile input. */
#define CPUSET_MAX_CPUS 65536U

typedef struct CPUSet {
        uint64_t *words;
        size_t n_words; /* allocated; bits beyond the highest set CPU are zero */
} CPUSet;

#define CPUSET_EMPTY ((CPUSet) { NULL, 0 })

void cpuset_done(CPUSet *s);
static inline void cpuset_donep(CPUSet *s) {
        cpuset_done(s);
}
#define _cleanup_cpuset_ __attribute__((cleanup(cpuset_donep)))

int cpuset_add(CPUSet *s, unsigned cpu);
int cpuset_add_range(CPUSet *s, unsigned first, unsigned last);
void cpuset_clear(CPUSet *s);
bool cpuset_contains(const CPUSet *s, unsigned cpu);
unsigned cpuset_count(const CPUSet *s);
bool cpuset_is_empty(const CPUSet *s);
/* Highest CPU in the set, or -1 when empty. */
int cpuset_last(const CPUSet *s);
/* Next CPU >= from, or -1. */
int cpuset_next(const CPUSet *s, unsigned from);
#define CPUSET_FOREACH(cpu, s) \
        for (int cpu = cpuset_next((s), 0); cpu >= 0; cpu = cpuset_next((s), (unsigned) cpu + 1))

bool cpuset_equal(const CPUSet *a, const CPUSet *b);
bool cpuset_intersects(const CPUSet *a, const CPUSet *b);
bool cpuset_is_subset(const CPUSet *sub, const CPUSet *super);

/* In-place set algebra on *dst. */
int cpuset_copy(CPUSet *dst, const CPUSet *src);
int cpuset_or(CPUSet *dst, const CPUSet *src);
void cpuset_and(CPUSet *dst, const CPUSet *src);
void cpuset_subtract(CPUSet *dst, const CPUSet *src);

/* "0-3,8,10-11" with optional surrounding white space (the kernel ends it with a newline).
 * An empty string is the empty set. Replaces the contents of *s only on success. */
int cpuset_parse_list(const char *text, CPUSet *s);
/* The kernel's bitmap format: 32-bit hex groups separated by commas, most significant
 * first; "0" and "00000000,00000003" both parse. */
int cpuset_parse_mask(const char *text, CPUSet *s);

/* The byte-array form systemd's D-Bus API uses for CPU sets (AllowedCPUs, "ay"): CPU n is
 * bit n % 8 of byte n / 8; zero bytes past the last CPU are allowed. Replaces the contents
 * of *s only on success; -ERANGE for a CPU at or above CPUSET_MAX_CPUS. */
int cpuset_parse_bytes(const uint8_t *bytes, size_t n, CPUSet *s);
/* Newly allocated, *ret_n bytes (0 for the empty set, *ret then NULL). */
int cpuset_format_bytes(const CPUSet *s, uint8_t **ret, size_t *ret_n);

/* Newly allocated; "" for the empty set. */
char *cpuset_format_list(const CPUSet *s);
/* Mask covering at least nbits bits (use the number of possible CPUs), in the kernel's
 * comma-grouped form. */
char *cpuset_format_mask(const CPUSet *s, unsigned nbits);

/* cpuset.c formats into a caller buffer without allocating, for the scan path. Returns the
 * length, or -ENOBUFS. */
int cpuset_format_list_buf(const CPUSet *s, char *buf, size_t size);
