/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fakeirqfs: a FUSE file system that plays /proc/irq for lowlatd's tests, with the
 * kernel's parsers, error codes and proc-entry lifetime rules (plain files cannot).
 *
 * Usage:
 *   fakeirqfs MOUNTPOINT [OPTIONS] [-d] [-o FUSE_OPTION[,...]]
 *
 *   --cpus=N              nr_cpu_ids: possible CPUs 0..N-1 (1..8192; default 4); the
 *                         width of every mask printed and the bound of every parse
 *   --online=LIST         online CPUs (default: all possible)
 *   --irqs=LIST           IRQ directories present at start (default 0-15)
 *   --default-affinity=LIST  initial default_smp_affinity (default: all possible),
 *                         like the irqaffinity= boot parameter
 *   --affinity=LIST       initial smp_affinity of every IRQ (default: the default
 *                         affinity)
 *   --managed=LIST        IRQs whose affinity the kernel manages (writes refused)
 *   --managed-abi=legacy|modern
 *                         legacy (kernels < 6.12, default): managed IRQs keep mode
 *                         0644 on smp_affinity{,_list} and writes fail with EIO;
 *                         modern (>= 6.12, commit eb29369fa543 and the umode change
 *                         beside it): the files are 0444 and writes fail with EPERM
 *   --vanish-after-read=LIST  these IRQs disappear right after the first read of any
 *                         of their files returns (a driver unbinding mid-scan)
 *   --node=N              NUMA node shown in every N/node (default 0)
 *   --ready-fd=FD         write "ready\n" to FD once mounted, then close it
 *   --verbose             log every write and control command on stderr
 *   -h, --help; -V, --version; -d (FUSE debug); -o OPT (FUSE mount options)
 *   -f and -s are accepted and implied: it always runs in the foreground and
 *   single-threaded, so the order of events is deterministic.
 * LIST is the kernel's cpulist syntax ("0-3,8", "0-7:2/4", "N", "all"). Mount
 * options added by default: default_permissions (mode bits checked by the kernel, as
 * procfs does: root may open a 0444 file for writing), fsname=fakeirqfs, and
 * allow_other when running as root; libfuse names the type fuse.<program name>.
 * Exit status: 0 after SIGTERM/SIGINT/SIGHUP or fusermount3 -u; 1 bad usage; 2 mount
 * or run-time failure.
 *
 * Tree (kernel modes; chmod/chown are kept per entry like procfs, truncate and utimens
 * are accepted and ignored, create gives EACCES, mkdir/unlink/rename/link give EPERM):
 *   default_smp_affinity        0644  hex mask
 *   N/node                      0444  "0"
 *   N/spurious                  0444  "count 0\nunhandled 0\nlast_unhandled 0 ms"
 *   N/smp_affinity              0644  hex mask, 32-bit words comma-separated ("%*pb")
 *   N/affinity_hint             0444  hex mask
 *   N/smp_affinity_list         0644  cpulist ("%*pbl")
 *   N/effective_affinity        0444  hex mask
 *   N/effective_affinity_list   0444  cpulist
 *   .control                    0600  write commands; read: a summary of the state
 *   .stats                      0444  counters (see below)
 * .control and .stats are not listed by readdir, so a scan of the directory sees what
 * the kernel shows; they are reached by name. Every open is direct_io with no
 * attribute or entry caching, so every read, lookup and stat reaches this process.
 *
 * Writes to smp_affinity / smp_affinity_list (write_irq_affinity() in
 * kernel/irq/proc.c), checked in this order:
 *   managed IRQ                            EIO (legacy) / EPERM (modern)
 *   list: bad syntax                       EINVAL   (bitmap_parselist())
 *   list: CPU >= --cpus                    ERANGE
 *   list: number beyond 32 bits            EOVERFLOW
 *   hex: bad character                     EINVAL   (bitmap_parse())
 *   hex: bit >= --cpus, or too many words  EOVERFLOW
 *   no online CPU in the mask (or empty)   EINVAL
 *   an injected failure ("fail")           that errno
 *   otherwise: smp_affinity = the mask as written (offline CPUs included),
 *   effective = its first online CPU; the write returns its full length.
 * default_smp_affinity: hex parse as above, no online CPU -> EINVAL. Writes to the
 * read-only files (root only gets that far) -> EIO, as proc does for an entry
 * without a write op. Reads honour the offset; a read at offset 0 always renders the
 * current value, a read continuing where the last one stopped sees the same
 * rendering (seq_file). Once an IRQ vanishes its entries are gone: lookups and opens
 * give ENOENT, and reads and writes on descriptors opened before give EIO
 * (proc_reg_read()/proc_reg_write() after remove_proc_entry()), even if an IRQ with
 * the same number appears again.
 *
 * Control commands, one per line (or separated by ';'), written to .control. IRQ is
 * an IRQ number or a list of them; CPULIST uses the kernel syntax:
 *   managed IRQ | unmanaged IRQ    mark/unmark managed (modern ABI also flips modes)
 *   vanish IRQ                     the IRQ directory disappears
 *   appear IRQ [CPULIST]           a new IRQ (affinity CPULIST or the default
 *                                  affinity, fresh counters); EEXIST if present
 *   vanish-after-read IRQ          vanish right after the next read of its files
 *   set IRQ CPULIST                another writer (irqbalance, a driver) moves it:
 *                                  ignores managed, needs an online CPU (EINVAL)
 *   effective IRQ CPULIST          force effective_affinity only (may be empty)
 *   hint IRQ CPULIST               set affinity_hint
 *   node IRQ N                     set node
 *   fail IRQ ERRNO [COUNT]         the next COUNT (default: every) valid affinity
 *                                  writes fail with ERRNO (name like EBUSY or a
 *                                  number), after the parse and online checks
 *   fail IRQ none                  stop injecting
 *   offline CPU | online CPU       CPU hotplug; offline migrates IRQs whose effective
 *                                  CPU it was (managed ones with no online CPU left
 *                                  shut down: empty effective; others get all online
 *                                  CPUs as affinity, as the kernel "breaks" it);
 *                                  offlining the last online CPU -> EBUSY
 *   reset-stats                    zero every counter
 * A bad command fails the write with EINVAL (ENOENT for an absent IRQ, EEXIST for
 * appear on a present one, ERANGE for a CPU >= --cpus) and is logged on stderr;
 * commands before it on the same write have been applied. None of these changes
 * raise inotify events (FUSE never does for changes made inside the file system).
 * /sys/devices/system/cpu/online and /proc/interrupts are not ours: tests keep
 * them in step with offline/online/appear/vanish themselves.
 *
 * Known differences from procfs: a write(fd, buf, 0) returns 0 without reaching us
 * (FUSE sends nothing), where procfs parses the empty string and gives EINVAL. With
 * vanish-after-read, cat(1) sees EIO on its second read (the one that would find
 * EOF), as it would if the kernel freed the IRQ between the two reads; use one
 * pread() when only the first read matters.
 *
 * .stats: "# irq writes failed opens reads state", then a line
 * "default_smp_affinity W F O R present" and one per IRQ ever present, ascending:
 * "42 W F O R present|vanished". writes counts write() calls on any file of the IRQ
 * (control commands are not counted), failed those that returned an error, opens
 * and reads the open() and read requests. appear resets the IRQ's counters.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#define FUSE_USE_VERSION 31

#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <fuse_lowlevel.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define FAKEIRQ_VERSION "1"
#define FAKEIRQ_MAX_CPUS 8192u
/* IRQ numbers are 0 .. FAKEIRQ_IRQ_LIMIT-1; real systems stay far below. */
#define FAKEIRQ_IRQ_LIMIT (1u << 20)

#define UNUSED __attribute__((unused))
#define PRINTF_LIKE(a, b) __attribute__((format(printf, a, b)))

/* ---------------------------------------------------------------- bitmaps -- */
/* Masks are arrays of 32-bit words, bit N of the mask is bit N%32 of word N/32:
 * the layout the kernel's hex parser and printer work in. */

static size_t bitmap_words(unsigned nbits) {
        return (nbits + 31u) / 32u;
}

static bool bit_test(const uint32_t *mask, unsigned bit) {
        return (mask[bit / 32u] >> (bit % 32u)) & 1u;
}

static void bit_set(uint32_t *mask, unsigned bit) {
        mask[bit / 32u] |= UINT32_C(1) << (bit % 32u);
}

static void bit_clear(uint32_t *mask, unsigned bit) {
        mask[bit / 32u] &= ~(UINT32_C(1) << (bit % 32u));
}

static void bitmap_zero(uint32_t *mask, unsigned nbits) {
        memset(mask, 0, bitmap_words(nbits) * sizeof(uint32_t));
}

static void bitmap_copy(uint32_t *dst, const uint32_t *src, unsigned nbits) {
        memcpy(dst, src, bitmap_words(nbits) * sizeof(uint32_t));
}

static void bitmap_set_range(uint32_t *mask, unsigned start, unsigned len) {
        for (unsigned bit = start; bit < start + len; bit++)
                bit_set(mask, bit);
}

/* First set bit at or after @from in [0, nbits), or nbits. */
static unsigned bitmap_next(const uint32_t *mask, unsigned nbits, unsigned from) {
        for (unsigned bit = from; bit < nbits; bit++) {
                if (bit % 32u == 0 && mask[bit / 32u] == 0) {
                        bit += 31u;
                        continue;
                }
                if (bit_test(mask, bit))
                        return bit;
        }
        return nbits;
}

static unsigned bitmap_next_and(const uint32_t *a, const uint32_t *b, unsigned nbits, unsigned from) {
        for (unsigned bit = from; bit < nbits; bit++)
                if (bit_test(a, bit) && bit_test(b, bit))
                        return bit;
        return nbits;
}

static bool bitmap_intersects(const uint32_t *a, const uint32_t *b, unsigned nbits) {
        return bitmap_next_and(a, b, nbits, 0) < nbits;
}

static unsigned bitmap_weight(const uint32_t *mask, unsigned nbits) {
        unsigned n = 0;

        for (unsigned bit = 0; bit < nbits; bit++)
                n += bit_test(mask, bit);
        return n;
}

/* ------------------------------------------- kernel cpulist / mask parsing -- */
/* Ports of lib/bitmap-str.c (bitmap_parselist(), bitmap_parse()) so every string the
 * daemon can write is accepted or refused with the kernel's errno. */

static bool kernel_isspace(char c) {
        unsigned char u = (unsigned char) c;

        /* lib/ctype.c: \t..\r, space, and Latin-1 NBSP are _S */
        return u == ' ' || (u >= '\t' && u <= '\r') || u == 0xa0;
}

static bool end_of_str(char c) {
        return c == '\0' || c == '\n';
}

static bool region_separator(char c) {      /* __end_of_region() */
        return kernel_isspace(c) || c == ',';
}

static bool end_of_region(char c) {
        return region_separator(c) || end_of_str(c);
}

struct region {
        unsigned start;
        unsigned off;
        unsigned group_len;
        unsigned end;
        unsigned nbits;
};

static int region_getnum(const char **str, unsigned *ret_num, unsigned lastbit) {
        const char *p = *str;
        unsigned long long n = 0;
        bool overflow = false;
        size_t len = 0;

        if (p[0] == 'N') {
                *ret_num = lastbit;
                *str = p + 1;
                return 0;
        }

        for (; p[len] >= '0' && p[len] <= '9'; len++) {
                unsigned digit = (unsigned) (p[len] - '0');

                if (n > (ULLONG_MAX - digit) / 10u)
                        overflow = true;
                n = n * 10u + digit;
        }
        if (len == 0)
                return -EINVAL;
        if (overflow || n > UINT_MAX)
                return -EOVERFLOW;

        *ret_num = (unsigned) n;
        *str = p + len;
        return 0;
}

static const char *region_find(const char *str) {
        while (region_separator(*str))
                str++;
        return end_of_str(*str) ? NULL : str;
}

/* On success *str is where the next region search starts, or NULL at the end. */
static int region_parse(const char **str, struct region *r) {
        unsigned lastbit = r->nbits - 1;
        const char *p = *str;
        int e;

        if (strncasecmp(p, "all", 3) == 0) {
                r->start = 0;
                r->end = lastbit;
                p += 3;
                goto check_pattern;
        }

        e = region_getnum(&p, &r->start, lastbit);
        if (e < 0)
                return e;
        if (end_of_region(*p))
                goto no_end;
        if (*p != '-')
                return -EINVAL;
        p++;
        e = region_getnum(&p, &r->end, lastbit);
        if (e < 0)
                return e;

check_pattern:
        if (end_of_region(*p))
                goto no_pattern;
        if (*p != ':')
                return -EINVAL;
        p++;
        e = region_getnum(&p, &r->off, lastbit);
        if (e < 0)
                return e;
        if (*p != '/')
                return -EINVAL;
        p++;
        e = region_getnum(&p, &r->group_len, lastbit);
        if (e < 0)
                return e;
        *str = p;
        return 0;

no_end:
        r->end = r->start;
no_pattern:
        r->off = r->end + 1;
        r->group_len = r->end + 1;
        *str = end_of_str(*p) ? NULL : p;
        return 0;
}

static int region_check(const struct region *r) {
        if (r->start > r->end || r->group_len == 0 || r->off > r->group_len)
                return -EINVAL;
        if (r->end >= r->nbits)
                return -ERANGE;
        return 0;
}

static void region_apply(const struct region *r, uint32_t *mask) {
        for (unsigned start = r->start; start <= r->end; start += r->group_len) {
                unsigned len = r->end - start + 1;

                bitmap_set_range(mask, start, len < r->off ? len : r->off);
        }
}

/* bitmap_parselist(): @buf ends at NUL or newline. */
static int kernel_parse_list(const char *buf, uint32_t *mask, unsigned nbits) {
        struct region r = { .nbits = nbits };

        bitmap_zero(mask, nbits);
        while (buf) {
                int e;

                buf = region_find(buf);
                if (!buf)
                        return 0;
                e = region_parse(&buf, &r);
                if (e < 0)
                        return e;
                e = region_check(&r);
                if (e < 0)
                        return e;
                region_apply(&r, mask);
        }
        return 0;
}

static int hex_digit(char c) {
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}

/* bitmap_get_x32_reverse(), with an index instead of a pointer so that stepping
 * before the start of the string stays defined. */
static int parse_x32_reverse(const char *start, ptrdiff_t *end_io, uint32_t *ret_word) {
        ptrdiff_t end = *end_io;
        uint32_t word = 0;

        for (unsigned shift = 0; shift < 32; shift += 4) {
                int digit = hex_digit(start[end--]);

                if (digit < 0)
                        return -EINVAL;
                word |= (uint32_t) digit << shift;
                if (end < 0 || region_separator(start[end]))
                        goto out;
        }
        if (hex_digit(start[end--]) >= 0)
                return -EOVERFLOW;
out:
        *ret_word = word;
        *end_io = end;
        return 0;
}

/* bitmap_parse(): hex words from the right, 32 bits per comma-separated group. */
static int kernel_parse_hex(const char *start, uint32_t *mask, unsigned nbits) {
        ptrdiff_t end = (ptrdiff_t) strcspn(start, "\n") - 1;
        size_t chunks = bitmap_words(nbits);
        unsigned parsed_bits;

        bitmap_zero(mask, nbits);
        for (size_t chunk = 0;; chunk++) {
                int e;

                while (end >= 0 && region_separator(start[end]))
                        end--;
                if (end < 0)
                        break;
                if (chunks == 0)
                        return -EOVERFLOW;
                chunks--;
                e = parse_x32_reverse(start, &end, &mask[chunk]);
                if (e < 0)
                        return e;
        }

        parsed_bits = (unsigned) (bitmap_words(nbits) - chunks) * 32u;
        if (parsed_bits < nbits)
                return 0;
        if (bitmap_next(mask, parsed_bits, nbits) != parsed_bits)
                return -EOVERFLOW;
        return 0;
}

/* -------------------------------------------------------------- text out -- */

struct strbuf {
        char *data;
        size_t len;
        size_t cap;
        bool failed;
};

static void strbuf_free(struct strbuf *b) {
        free(b->data);
        *b = (struct strbuf) {};
}

static bool strbuf_reserve(struct strbuf *b, size_t extra) {
        size_t want;
        char *p;

        if (b->failed)
                return false;
        if (b->len + extra + 1 <= b->cap)
                return true;
        want = b->cap ? b->cap : 64;
        while (want < b->len + extra + 1)
                want *= 2;
        p = realloc(b->data, want);
        if (!p) {
                b->failed = true;
                return false;
        }
        b->data = p;
        b->cap = want;
        return true;
}

PRINTF_LIKE(2, 3)
static void strbuf_printf(struct strbuf *b, const char *fmt, ...) {
        va_list ap;
        int n;

        va_start(ap, fmt);
        n = vsnprintf(NULL, 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
                b->failed = true;
                return;
        }
        if (!strbuf_reserve(b, (size_t) n))
                return;
        va_start(ap, fmt);
        vsnprintf(b->data + b->len, b->cap - b->len, fmt, ap);
        va_end(ap);
        b->len += (size_t) n;
}

/* "%*pb": 32-bit words, high first, comma-separated, zero-padded to the width of
 * the word; the leading word only as wide as the bits above the last full word. */
static void strbuf_put_mask_hex(struct strbuf *b, const uint32_t *mask, unsigned nbits) {
        unsigned chunk_bits = nbits % 32u ? nbits % 32u : 32u;
        bool first = true;

        for (long i = (long) bitmap_words(nbits) - 1; i >= 0; i--) {
                uint32_t chunk_mask = (uint32_t) ((UINT64_C(1) << chunk_bits) - 1);

                strbuf_printf(b, "%s%0*" PRIx32, first ? "" : ",",
                              (int) ((chunk_bits + 3u) / 4u), mask[i] & chunk_mask);
                first = false;
                chunk_bits = 32;
        }
}

/* "%*pbl": ranges "a-b", single CPUs "a", comma-separated, empty for no CPU. */
static void strbuf_put_mask_list(struct strbuf *b, const uint32_t *mask, unsigned nbits) {
        bool first = true;

        for (unsigned bit = bitmap_next(mask, nbits, 0); bit < nbits;) {
                unsigned last = bit;

                while (last + 1 < nbits && bit_test(mask, last + 1))
                        last++;
                if (last == bit)
                        strbuf_printf(b, "%s%u", first ? "" : ",", bit);
                else
                        strbuf_printf(b, "%s%u-%u", first ? "" : ",", bit, last);
                first = false;
                bit = bitmap_next(mask, nbits, last + 1);
        }
}

/* ------------------------------------------------------------------ state -- */

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

static const char *const irq_file_names[IRQ_FILE_COUNT] = {
        [IRQ_FILE_NODE] = "node",
        [IRQ_FILE_SPURIOUS] = "spurious",
        [IRQ_FILE_SMP_AFFINITY] = "smp_affinity",
        [IRQ_FILE_AFFINITY_HINT] = "affinity_hint",
        [IRQ_FILE_SMP_AFFINITY_LIST] = "smp_affinity_list",
        [IRQ_FILE_EFFECTIVE_AFFINITY] = "effective_affinity",
        [IRQ_FILE_EFFECTIVE_AFFINITY_LIST] = "effective_affinity_list",
};

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

static uint32_t *irq_affinity(const struct fakeirq *st UNUSED, struct fake_irq *irq) {
        return irq->masks;
}

static uint32_t *irq_effective(const struct fakeirq *st, struct fake_irq *irq) {
        return irq->masks + st->mask_words;
}

static uint32_t *irq_hint(const struct fakeirq *st, struct fake_irq *irq) {
        return irq->masks + 2 * st->mask_words;
}

PRINTF_LIKE(2, 3)
static void log_verbose(const struct fakeirq *st, const char *fmt, ...) {
        va_list ap;

        if (!st->verbose)
                return;
        va_start(ap, fmt);
        fputs("fakeirqfs: ", stderr);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        va_end(ap);
}

PRINTF_LIKE(1, 2)
static void log_error(const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        fputs("fakeirqfs: ", stderr);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        va_end(ap);
}

static struct fakeirq *fakeirq_from_context(void) {
        return fuse_get_context()->private_data;
}

static struct fake_irq *irq_find(const struct fakeirq *st, unsigned number) {
        return number < st->irq_capacity ? st->irqs[number] : NULL;
}

static struct fake_irq *irq_find_present(const struct fakeirq *st, unsigned number) {
        struct fake_irq *irq = irq_find(st, number);

        return irq && irq->present ? irq : NULL;
}

static mode_t irq_affinity_file_mode(const struct fakeirq *st, bool managed) {
        return managed && st->abi == MANAGED_ABI_MODERN ? 0444 : 0644;
}

static void irq_set_managed(struct fakeirq *st, struct fake_irq *irq, bool managed) {
        mode_t mode = irq_affinity_file_mode(st, managed);

        irq->managed = managed;
        irq->attr[IRQ_FILE_SMP_AFFINITY].mode = mode;
        irq->attr[IRQ_FILE_SMP_AFFINITY_LIST].mode = mode;
}

/* Effective affinity as x86 vector allocation picks it for a single-target chip:
 * the first online CPU of the mask; with none, the first online CPU. */
static void irq_update_effective(struct fakeirq *st, struct fake_irq *irq) {
        uint32_t *effective = irq_effective(st, irq);
        unsigned cpu = bitmap_next_and(irq_affinity(st, irq), st->online, st->nr_cpus, 0);

        if (cpu >= st->nr_cpus)
                cpu = bitmap_next(st->online, st->nr_cpus, 0);
        bitmap_zero(effective, st->nr_cpus);
        if (cpu < st->nr_cpus)
                bit_set(effective, cpu);
}

/* A new IRQ appears (request_irq()): affinity @affinity or the default. */
static int irq_appear(struct fakeirq *st, unsigned number, const uint32_t *affinity) {
        struct fake_irq *irq;

        if (number >= FAKEIRQ_IRQ_LIMIT)
                return -ERANGE;
        if (number >= st->irq_capacity) {
                unsigned capacity = st->irq_capacity ? st->irq_capacity : 64;
                struct fake_irq **irqs;

                while (capacity <= number)
                        capacity *= 2;
                irqs = realloc(st->irqs, capacity * sizeof(*irqs));
                if (!irqs)
                        return -ENOMEM;
                memset(irqs + st->irq_capacity, 0, (capacity - st->irq_capacity) * sizeof(*irqs));
                st->irqs = irqs;
                st->irq_capacity = capacity;
        }

        irq = st->irqs[number];
        if (irq && irq->present)
                return -EEXIST;
        if (!irq) {
                irq = calloc(1, sizeof(*irq) + 3 * st->mask_words * sizeof(uint32_t));
                if (!irq)
                        return -ENOMEM;
                st->irqs[number] = irq;
        }

        irq->number = number;
        irq->present = true;
        st->irqs_present++;
        irq->vanish_after_read = false;
        irq->generation = ++st->next_generation;
        irq->node = st->default_node;
        irq->fail_errno = 0;
        irq->fail_remaining = 0;
        irq->stats = (struct counters) {};
        for (unsigned i = 0; i < IRQ_ATTR_COUNT; i++)
                irq->attr[i] = (struct node_attr) { .mode = 0444 };
        irq->attr[IRQ_ATTR_DIR].mode = 0555;
        irq_set_managed(st, irq, false);
        bitmap_copy(irq_affinity(st, irq), affinity ? affinity : st->default_affinity, st->nr_cpus);
        bitmap_zero(irq_hint(st, irq), st->nr_cpus);
        irq_update_effective(st, irq);
        return 0;
}

static void irq_vanish(struct fakeirq *st, struct fake_irq *irq) {
        irq->present = false;
        irq->vanish_after_read = false;
        st->irqs_present--;
        log_verbose(st, "irq %u vanished", irq->number);
}

static void open_file_free(struct open_file *f) {
        strbuf_free(&f->snapshot);
        free(f);
}

static void fakeirq_free(struct fakeirq *st) {
        if (!st)
                return;
        while (st->open_files) {
                struct open_file *f = st->open_files;

                st->open_files = f->next;
                open_file_free(f);
        }
        for (unsigned i = 0; i < st->irq_capacity; i++)
                free(st->irqs[i]);
        free(st->irqs);
        free(st->online);
        free(st->default_affinity);
        free(st->scratch);
        free(st->irq_scratch);
        free(st);
}

/* --------------------------------------------------------------- hotplug -- */

static int cpu_set_offline(struct fakeirq *st, unsigned cpu) {
        if (cpu >= st->nr_cpus)
                return -ERANGE;
        if (!bit_test(st->online, cpu))
                return 0;
        if (bitmap_weight(st->online, st->nr_cpus) == 1)
                return -EBUSY;
        bit_clear(st->online, cpu);

        /* irq_migrate_all_off_this_cpu() */
        for (unsigned i = 0; i < st->irq_capacity; i++) {
                struct fake_irq *irq = st->irqs[i];
                uint32_t *effective;

                if (!irq || !irq->present)
                        continue;
                effective = irq_effective(st, irq);
                if (!bit_test(effective, cpu))
                        continue;
                if (bitmap_intersects(irq_affinity(st, irq), st->online, st->nr_cpus))
                        irq_update_effective(st, irq);
                else if (irq->managed)
                        bitmap_zero(effective, st->nr_cpus);        /* shut down */
                else {
                        bitmap_copy(irq_affinity(st, irq), st->online, st->nr_cpus);
                        irq_update_effective(st, irq);
                }
        }
        return 0;
}

static int cpu_set_online(struct fakeirq *st, unsigned cpu) {
        if (cpu >= st->nr_cpus)
                return -ERANGE;
        if (bit_test(st->online, cpu))
                return 0;
        bit_set(st->online, cpu);

        /* managed IRQs shut down for lack of an online CPU start up again */
        for (unsigned i = 0; i < st->irq_capacity; i++) {
                struct fake_irq *irq = st->irqs[i];

                if (irq && irq->present && irq->managed &&
                    bitmap_next(irq_effective(st, irq), st->nr_cpus, 0) >= st->nr_cpus &&
                    bit_test(irq_affinity(st, irq), cpu))
                        irq_update_effective(st, irq);
        }
        return 0;
}

/* ------------------------------------------------------------ rendering -- */

static void render_stats_line(struct strbuf *b, const char *name, const struct counters *c, bool present) {
        strbuf_printf(b, "%s %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %s\n",
                      name, c->writes, c->failed, c->opens, c->reads,
                      present ? "present" : "vanished");
}

static void render_stats(struct fakeirq *st, struct strbuf *b) {
        strbuf_printf(b, "# irq writes failed opens reads state\n");
        render_stats_line(b, "default_smp_affinity", &st->default_stats, true);
        for (unsigned i = 0; i < st->irq_capacity; i++) {
                char name[16];

                if (!st->irqs[i])
                        continue;
                snprintf(name, sizeof(name), "%u", i);
                render_stats_line(b, name, &st->irqs[i]->stats, st->irqs[i]->present);
        }
}

/* "LABEL LIST": the IRQs for which @pick holds (built in irq_scratch). */
static void render_irq_set(struct fakeirq *st, struct strbuf *b, const char *label,
                           bool (*pick)(const struct fake_irq *irq)) {
        bitmap_zero(st->irq_scratch, FAKEIRQ_IRQ_LIMIT);
        for (unsigned i = 0; i < st->irq_capacity; i++)
                if (st->irqs[i] && pick(st->irqs[i]))
                        bit_set(st->irq_scratch, i);
        strbuf_printf(b, "%s", label);
        if (bitmap_next(st->irq_scratch, FAKEIRQ_IRQ_LIMIT, 0) < FAKEIRQ_IRQ_LIMIT) {
                strbuf_printf(b, " ");
                strbuf_put_mask_list(b, st->irq_scratch, FAKEIRQ_IRQ_LIMIT);
        }
        strbuf_printf(b, "\n");
}

static bool irq_is_present(const struct fake_irq *irq) {
        return irq->present;
}

static bool irq_is_managed(const struct fake_irq *irq) {
        return irq->present && irq->managed;
}

static bool irq_is_vanished(const struct fake_irq *irq) {
        return !irq->present;
}

static bool irq_vanishes_after_read(const struct fake_irq *irq) {
        return irq->present && irq->vanish_after_read;
}

static bool irq_has_fault(const struct fake_irq *irq) {
        return irq->present && irq->fail_errno != 0;
}

static void render_control(struct fakeirq *st, struct strbuf *b) {
        strbuf_printf(b, "cpus %u\nonline ", st->nr_cpus);
        strbuf_put_mask_list(b, st->online, st->nr_cpus);
        strbuf_printf(b, "\ndefault-affinity ");
        strbuf_put_mask_list(b, st->default_affinity, st->nr_cpus);
        strbuf_printf(b, "\nmanaged-abi %s\n", st->abi == MANAGED_ABI_MODERN ? "modern" : "legacy");
        render_irq_set(st, b, "irqs", irq_is_present);
        render_irq_set(st, b, "managed", irq_is_managed);
        render_irq_set(st, b, "vanish-after-read", irq_vanishes_after_read);
        render_irq_set(st, b, "failing", irq_has_fault);
        render_irq_set(st, b, "vanished", irq_is_vanished);
}

static void render_irq_file(struct fakeirq *st, struct fake_irq *irq, enum irq_file file, struct strbuf *b) {
        switch (file) {
        case IRQ_FILE_NODE:
                strbuf_printf(b, "%d\n", irq->node);
                break;
        case IRQ_FILE_SPURIOUS:
                strbuf_printf(b, "count 0\nunhandled 0\nlast_unhandled 0 ms\n");
                break;
        case IRQ_FILE_SMP_AFFINITY:
                strbuf_put_mask_hex(b, irq_affinity(st, irq), st->nr_cpus);
                strbuf_printf(b, "\n");
                break;
        case IRQ_FILE_AFFINITY_HINT:
                strbuf_put_mask_hex(b, irq_hint(st, irq), st->nr_cpus);
                strbuf_printf(b, "\n");
                break;
        case IRQ_FILE_SMP_AFFINITY_LIST:
                strbuf_put_mask_list(b, irq_affinity(st, irq), st->nr_cpus);
                strbuf_printf(b, "\n");
                break;
        case IRQ_FILE_EFFECTIVE_AFFINITY:
                strbuf_put_mask_hex(b, irq_effective(st, irq), st->nr_cpus);
                strbuf_printf(b, "\n");
                break;
        case IRQ_FILE_EFFECTIVE_AFFINITY_LIST:
                strbuf_put_mask_list(b, irq_effective(st, irq), st->nr_cpus);
                strbuf_printf(b, "\n");
                break;
        case IRQ_FILE_COUNT:
        case IRQ_ATTR_COUNT:
                break;
        }
}

/* ------------------------------------------------------------- path lookup -- */

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

static int resolve_path(struct fakeirq *st, const char *path, struct node_ref *ret) {
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

static struct node_attr *node_attr_of(struct fakeirq *st, const struct node_ref *ref) {
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

static bool node_is_dir(const struct node_ref *ref) {
        return ref->kind == NODE_ROOT || ref->kind == NODE_IRQ_DIR;
}

/* The node an open file names, even if its IRQ has vanished since (fstat works). */
static int resolve_open_file(struct fakeirq *st, const struct open_file *f, struct node_ref *ret) {
        struct fake_irq *irq = NULL;

        if (f->kind == NODE_IRQ_FILE || f->kind == NODE_IRQ_DIR) {
                irq = irq_find(st, f->irq_number);
                if (!irq)
                        return -ENOENT;
        }
        *ret = (struct node_ref) { .kind = f->kind, .irq = irq, .file = f->file };
        return 0;
}

static bool open_file_is_stale(const struct fakeirq *st, const struct open_file *f) {
        struct fake_irq *irq;

        if (f->kind != NODE_IRQ_FILE)
                return false;
        irq = irq_find(st, f->irq_number);
        return !irq || !irq->present || irq->generation != f->generation;
}

static struct counters *open_file_counters(struct fakeirq *st, const struct open_file *f) {
        struct fake_irq *irq;

        if (f->kind == NODE_DEFAULT_AFFINITY)
                return &st->default_stats;
        if (f->kind != NODE_IRQ_FILE)
                return NULL;
        irq = irq_find(st, f->irq_number);
        return irq && irq->generation == f->generation ? &irq->stats : NULL;
}

/* ------------------------------------------------------- affinity writes -- */

/* Copies the written bytes NUL-terminated, as memdup_user_nul() does. */
static char *copy_user_buffer(const char *buf, size_t size) {
        char *s = malloc(size + 1);

        if (!s)
                return NULL;
        memcpy(s, buf, size);
        s[size] = '\0';
        return s;
}

/* write_irq_affinity() */
static int irq_write_affinity(struct fakeirq *st, struct fake_irq *irq, bool list, const char *text) {
        int e;

        if (irq->managed)
                return st->abi == MANAGED_ABI_MODERN ? -EPERM : -EIO;

        e = list ? kernel_parse_list(text, st->scratch, st->nr_cpus)
                 : kernel_parse_hex(text, st->scratch, st->nr_cpus);
        if (e < 0)
                return e;

        /* Empty or all-offline: irq_select_affinity_usr() refuses on x86. */
        if (!bitmap_intersects(st->scratch, st->online, st->nr_cpus))
                return -EINVAL;

        if (irq->fail_errno != 0 && irq->fail_remaining != 0) {
                if (irq->fail_remaining > 0)
                        irq->fail_remaining--;
                return -irq->fail_errno;
        }

        bitmap_copy(irq_affinity(st, irq), st->scratch, st->nr_cpus);
        irq_update_effective(st, irq);
        return 0;
}

/* default_affinity_write() */
static int default_affinity_write(struct fakeirq *st, const char *text) {
        int e = kernel_parse_hex(text, st->scratch, st->nr_cpus);

        if (e < 0)
                return e;
        if (!bitmap_intersects(st->scratch, st->online, st->nr_cpus))
                return -EINVAL;
        bitmap_copy(st->default_affinity, st->scratch, st->nr_cpus);
        return 0;
}

/* ---------------------------------------------------------------- control -- */

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

static bool parse_unsigned(const char *s, unsigned long max, unsigned long *ret) {
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

static bool parse_int(const char *s, int *ret) {
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

#define FOR_EACH_SCRATCH_IRQ(st, n)                                                  \
        for (unsigned n = bitmap_next((st)->irq_scratch, FAKEIRQ_IRQ_LIMIT, 0);      \
             n < FAKEIRQ_IRQ_LIMIT;                                                  \
             n = bitmap_next((st)->irq_scratch, FAKEIRQ_IRQ_LIMIT, n + 1))

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

static int control_write(struct fakeirq *st, const char *buf, size_t size) {
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

/* ------------------------------------------------------------- FUSE ops -- */

static void fill_stat(struct fakeirq *st, const struct node_ref *ref, struct stat *s) {
        const struct node_attr *attr = node_attr_of(st, ref);

        memset(s, 0, sizeof(*s));
        s->st_mode = (node_is_dir(ref) ? S_IFDIR : S_IFREG) | attr->mode;
        s->st_nlink = ref->kind == NODE_ROOT ? 2 + st->irqs_present : node_is_dir(ref) ? 2 : 1;
        s->st_uid = attr->uid;
        s->st_gid = attr->gid;
        s->st_size = 0;         /* procfs reports 0; reads go to us regardless (direct_io) */
        s->st_blksize = 1024;
        s->st_atim = s->st_mtim = s->st_ctim = st->start_time;
}

static int op_getattr(const char *path, struct stat *s, struct fuse_file_info *fi) {
        struct fakeirq *st = fakeirq_from_context();
        struct node_ref ref;
        int e;

        if (fi && fi->fh)
                e = resolve_open_file(st, (struct open_file *) (uintptr_t) fi->fh, &ref);
        else
                e = resolve_path(st, path, &ref);
        if (e < 0)
                return e;
        fill_stat(st, &ref, s);
        return 0;
}

static void *op_init(struct fuse_conn_info *conn UNUSED, struct fuse_config *cfg) {
        /* Every lookup, stat and read must reach us: values and entries change
         * behind the kernel's back. */
        cfg->entry_timeout = 0;
        cfg->attr_timeout = 0;
        cfg->negative_timeout = 0;
        cfg->direct_io = 1;
        cfg->kernel_cache = 0;
        cfg->auto_cache = 0;
        cfg->use_ino = 0;
        return fakeirq_from_context();
}

static int op_readdir(const char *path, void *buf, fuse_fill_dir_t filler, off_t offset UNUSED,
                      struct fuse_file_info *fi UNUSED, enum fuse_readdir_flags flags UNUSED) {
        struct fakeirq *st = fakeirq_from_context();
        struct node_ref ref;
        int e = resolve_path(st, path, &ref);

        if (e < 0)
                return e;
        if (!node_is_dir(&ref))
                return -ENOTDIR;

        filler(buf, ".", NULL, 0, 0);
        filler(buf, "..", NULL, 0, 0);
        if (ref.kind == NODE_ROOT) {
                /* numbers are shorter than default_smp_affinity, so they come first */
                for (unsigned i = 0; i < st->irq_capacity; i++) {
                        char name[16];

                        if (!st->irqs[i] || !st->irqs[i]->present)
                                continue;
                        snprintf(name, sizeof(name), "%u", i);
                        if (filler(buf, name, NULL, 0, 0))
                                return -ENOMEM;
                }
                filler(buf, "default_smp_affinity", NULL, 0, 0);
        } else
                for (unsigned f = 0; f < IRQ_FILE_COUNT; f++)
                        filler(buf, irq_file_names[f], NULL, 0, 0);
        return 0;
}

static int op_open(const char *path, struct fuse_file_info *fi) {
        struct fakeirq *st = fakeirq_from_context();
        struct open_file *f;
        struct node_ref ref;
        struct counters *counters;
        int e = resolve_path(st, path, &ref);

        if (e < 0)
                return e;
        if (node_is_dir(&ref))
                return -EISDIR;

        f = calloc(1, sizeof(*f));
        if (!f)
                return -ENOMEM;
        f->kind = ref.kind;
        f->file = ref.file;
        if (ref.irq) {
                f->irq_number = ref.irq->number;
                f->generation = ref.irq->generation;
        }
        counters = open_file_counters(st, f);
        if (counters)
                counters->opens++;

        f->next = st->open_files;
        if (f->next)
                f->next->prev = f;
        st->open_files = f;

        fi->fh = (uint64_t) (uintptr_t) f;
        fi->direct_io = 1;
        fi->keep_cache = 0;
        /* O_TRUNC needs nothing: procfs ignores it, so do we (see op_truncate). */
        return 0;
}

static int op_release(const char *path UNUSED, struct fuse_file_info *fi) {
        struct fakeirq *st = fakeirq_from_context();
        struct open_file *f = (struct open_file *) (uintptr_t) fi->fh;

        if (!f)
                return 0;
        if (f->prev)
                f->prev->next = f->next;
        else
                st->open_files = f->next;
        if (f->next)
                f->next->prev = f->prev;
        open_file_free(f);
        return 0;
}

static int render_open_file(struct fakeirq *st, const struct open_file *f, struct strbuf *b) {
        switch (f->kind) {
        case NODE_DEFAULT_AFFINITY:
                strbuf_put_mask_hex(b, st->default_affinity, st->nr_cpus);
                strbuf_printf(b, "\n");
                break;
        case NODE_CONTROL:
                render_control(st, b);
                break;
        case NODE_STATS:
                render_stats(st, b);
                break;
        case NODE_IRQ_FILE:
                render_irq_file(st, irq_find(st, f->irq_number), f->file, b);
                break;
        case NODE_ROOT:
        case NODE_IRQ_DIR:
                return -EISDIR;
        }
        return b->failed ? -ENOMEM : 0;
}

static int op_read(const char *path UNUSED, char *buf, size_t size, off_t offset, struct fuse_file_info *fi) {
        struct fakeirq *st = fakeirq_from_context();
        struct open_file *f = (struct open_file *) (uintptr_t) fi->fh;
        struct counters *counters;
        size_t n = 0;

        if (open_file_is_stale(st, f))
                return -EIO;    /* proc_reg_read() once the entry is removed */

        counters = open_file_counters(st, f);
        if (counters)
                counters->reads++;

        /* seq_file: offset 0 renders afresh, a read carrying on from the last one
         * serves the same rendering, any other offset renders afresh. */
        if (offset == 0 || !f->has_snapshot || offset != f->read_pos) {
                int e;

                f->snapshot.len = 0;
                f->snapshot.failed = false;
                e = render_open_file(st, f, &f->snapshot);
                if (e < 0)
                        return e;
                f->has_snapshot = true;
        }
        if ((size_t) offset < f->snapshot.len) {
                n = f->snapshot.len - (size_t) offset;
                if (n > size)
                        n = size;
                memcpy(buf, f->snapshot.data + offset, n);
        }
        f->read_pos = offset + (off_t) n;

        if (f->kind == NODE_IRQ_FILE) {
                struct fake_irq *irq = irq_find(st, f->irq_number);

                if (irq->vanish_after_read)
                        irq_vanish(st, irq);
        }
        return (int) n;
}

static const char *write_target_name(const struct open_file *f) {
        switch (f->kind) {
        case NODE_DEFAULT_AFFINITY:
                return "default_smp_affinity";
        case NODE_CONTROL:
                return ".control";
        case NODE_STATS:
                return ".stats";
        case NODE_IRQ_FILE:
                return irq_file_names[f->file];
        case NODE_ROOT:
        case NODE_IRQ_DIR:
                break;
        }
        return "?";
}

static int op_write(const char *path UNUSED, const char *buf, size_t size, off_t offset UNUSED,
                    struct fuse_file_info *fi) {
        struct fakeirq *st = fakeirq_from_context();
        struct open_file *f = (struct open_file *) (uintptr_t) fi->fh;
        struct counters *counters;
        char *text;
        int r;

        if (size > INT_MAX)
                return -EINVAL;
        if (f->kind == NODE_CONTROL) {
                r = control_write(st, buf, size);
                return r < 0 ? r : (int) size;
        }
        if (open_file_is_stale(st, f))
                return -EIO;    /* proc_reg_write() once the entry is removed */

        text = copy_user_buffer(buf, size);
        if (!text)
                return -ENOMEM;

        /* Offsets are ignored, as every proc write handler here does. */
        if (f->kind == NODE_DEFAULT_AFFINITY)
                r = default_affinity_write(st, text);
        else if (f->kind == NODE_IRQ_FILE &&
                 (f->file == IRQ_FILE_SMP_AFFINITY || f->file == IRQ_FILE_SMP_AFFINITY_LIST))
                r = irq_write_affinity(st, irq_find(st, f->irq_number),
                                       f->file == IRQ_FILE_SMP_AFFINITY_LIST, text);
        else
                r = -EIO;       /* pde_write() without a write op */

        counters = open_file_counters(st, f);
        if (counters) {
                counters->writes++;
                if (r < 0)
                        counters->failed++;
        }
        if (f->kind == NODE_IRQ_FILE)
                log_verbose(st, "write %u/%s \"%.*s\": %s", f->irq_number, write_target_name(f),
                            (int) strcspn(text, "\n"), text, r < 0 ? strerror(-r) : "ok");
        else
                log_verbose(st, "write %s \"%.*s\": %s", write_target_name(f),
                            (int) strcspn(text, "\n"), text, r < 0 ? strerror(-r) : "ok");
        free(text);
        return r < 0 ? r : (int) size;
}

static int resolve_for_setattr(struct fakeirq *st, const char *path, struct fuse_file_info *fi,
                               struct node_ref *ret) {
        if (fi && fi->fh)
                return resolve_open_file(st, (struct open_file *) (uintptr_t) fi->fh, ret);
        return resolve_path(st, path, ret);
}

/* O_TRUNC opens and ftruncate() succeed and change nothing, as on procfs. */
static int op_truncate(const char *path, off_t size UNUSED, struct fuse_file_info *fi) {
        struct fakeirq *st = fakeirq_from_context();
        struct node_ref ref;
        int e = resolve_for_setattr(st, path, fi, &ref);

        if (e < 0)
                return e;
        return node_is_dir(&ref) ? -EISDIR : 0;
}

/* proc_notify_change() keeps mode and owner per entry. */
static int op_chmod(const char *path, mode_t mode, struct fuse_file_info *fi) {
        struct fakeirq *st = fakeirq_from_context();
        struct node_ref ref;
        int e = resolve_for_setattr(st, path, fi, &ref);

        if (e < 0)
                return e;
        node_attr_of(st, &ref)->mode = mode & 07777;
        return 0;
}

static int op_chown(const char *path, uid_t uid, gid_t gid, struct fuse_file_info *fi) {
        struct fakeirq *st = fakeirq_from_context();
        struct node_attr *attr;
        struct node_ref ref;
        int e = resolve_for_setattr(st, path, fi, &ref);

        if (e < 0)
                return e;
        attr = node_attr_of(st, &ref);
        if (uid != (uid_t) -1)
                attr->uid = uid;
        if (gid != (gid_t) -1)
                attr->gid = gid;
        return 0;
}

static int op_utimens(const char *path, const struct timespec tv[2] UNUSED, struct fuse_file_info *fi) {
        struct fakeirq *st = fakeirq_from_context();
        struct node_ref ref;

        return resolve_for_setattr(st, path, fi, &ref);
}

/* procfs directories have no create/mkdir/unlink/...: the VFS answers EACCES for
 * O_CREAT of a new name and EPERM for the rest. */
static int op_create(const char *path UNUSED, mode_t mode UNUSED, struct fuse_file_info *fi UNUSED) {
        return -EACCES;
}

static int op_mknod(const char *path UNUSED, mode_t mode UNUSED, dev_t dev UNUSED) {
        return -EPERM;
}

static int op_mkdir(const char *path UNUSED, mode_t mode UNUSED) {
        return -EPERM;
}

static int op_unlink(const char *path UNUSED) {
        return -EPERM;
}

static int op_rmdir(const char *path UNUSED) {
        return -EPERM;
}

static int op_symlink(const char *target UNUSED, const char *path UNUSED) {
        return -EPERM;
}

static int op_link(const char *from UNUSED, const char *to UNUSED) {
        return -EPERM;
}

static int op_rename(const char *from UNUSED, const char *to UNUSED, unsigned int flags UNUSED) {
        return -EPERM;
}

static const struct fuse_operations fakeirq_operations = {
        .init = op_init,
        .getattr = op_getattr,
        .readdir = op_readdir,
        .open = op_open,
        .read = op_read,
        .write = op_write,
        .release = op_release,
        .truncate = op_truncate,
        .chmod = op_chmod,
        .chown = op_chown,
        .utimens = op_utimens,
        .create = op_create,
        .mknod = op_mknod,
        .mkdir = op_mkdir,
        .unlink = op_unlink,
        .rmdir = op_rmdir,
        .symlink = op_symlink,
        .link = op_link,
        .rename = op_rename,
};

/* ------------------------------------------------------------ command line -- */

/* Our own options are taken out of argv by exact name before libfuse sees the rest:
 * fuse_opt's "--name %s" templates would also match "--name-other" as a glued value. */
struct options {
        const char *cpus;
        const char *online;
        const char *irqs;
        const char *default_affinity;
        const char *affinity;
        const char *managed;
        const char *managed_abi;
        const char *vanish_after_read;
        const char *node;
        const char *ready_fd;
        bool verbose;
        bool show_help;
        bool show_version;
};

/* Takes "--name=VALUE", "--name VALUE" and our flags out of argv; everything else
 * (mount point, -f, -s, -d, -o ...) goes to libfuse in @ret_args. */
static int options_parse(int argc, char *argv[], struct options *o, struct fuse_args *ret_args) {
        const struct {
                const char *name;
                const char **field;
        } value_options[] = {
                { "--cpus", &o->cpus },
                { "--online", &o->online },
                { "--irqs", &o->irqs },
                { "--default-affinity", &o->default_affinity },
                { "--affinity", &o->affinity },
                { "--managed", &o->managed },
                { "--managed-abi", &o->managed_abi },
                { "--vanish-after-read", &o->vanish_after_read },
                { "--node", &o->node },
                { "--ready-fd", &o->ready_fd },
        };

        if (fuse_opt_add_arg(ret_args, argv[0]) < 0)
                return -ENOMEM;
        for (int i = 1; i < argc; i++) {
                const char *arg = argv[i];
                bool matched = false;

                if (strcmp(arg, "--verbose") == 0) {
                        o->verbose = true;
                        continue;
                }
                if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
                        o->show_help = true;
                        continue;
                }
                if (strcmp(arg, "-V") == 0 || strcmp(arg, "--version") == 0) {
                        o->show_version = true;
                        continue;
                }
                if (strcmp(arg, "-o") == 0 && i + 1 < argc) {
                        /* keep "-o VALUE" together, whatever VALUE looks like */
                        if (fuse_opt_add_arg(ret_args, arg) < 0 || fuse_opt_add_arg(ret_args, argv[++i]) < 0)
                                return -ENOMEM;
                        continue;
                }
                for (size_t k = 0; k < sizeof(value_options) / sizeof(value_options[0]); k++) {
                        size_t len = strlen(value_options[k].name);

                        if (strncmp(arg, value_options[k].name, len) != 0)
                                continue;
                        if (arg[len] == '=')
                                *value_options[k].field = arg + len + 1;
                        else if (arg[len] == '\0') {
                                if (i + 1 >= argc) {
                                        log_error("%s needs a value", arg);
                                        return -EINVAL;
                                }
                                *value_options[k].field = argv[++i];
                        } else
                                continue;
                        matched = true;
                        break;
                }
                if (!matched && fuse_opt_add_arg(ret_args, arg) < 0)
                        return -ENOMEM;
        }
        return 0;
}

static void print_usage(const char *program) {
        printf("Usage: %s MOUNTPOINT [OPTIONS]\n"
               "A FUSE file system that plays /proc/irq with the kernel's errors (for tests).\n\n"
               "  --cpus=N                  possible CPUs 0..N-1 (default 4)\n"
               "  --online=LIST             online CPUs (default: all)\n"
               "  --irqs=LIST               IRQs present at start (default 0-15)\n"
               "  --default-affinity=LIST   initial default_smp_affinity (default: all)\n"
               "  --affinity=LIST           initial affinity of every IRQ (default: the default)\n"
               "  --managed=LIST            kernel-managed IRQs\n"
               "  --managed-abi=legacy|modern  EIO and 0644 (< 6.12) or EPERM and 0444\n"
               "  --vanish-after-read=LIST  IRQs that vanish after their first read\n"
               "  --node=N                  node of every IRQ (default 0)\n"
               "  --ready-fd=FD             write \"ready\\n\" to FD once mounted\n"
               "  --verbose                 log writes and control commands on stderr\n"
               "  -h, --help                this help; -V, --version\n"
               "Runs in the foreground, single-threaded. Control: MOUNTPOINT/.control,\n"
               "counters: MOUNTPOINT/.stats (see the comment at the top of fakeirqfs.c).\n\n",
               program);
}

/* A CPU list that must parse with the kernel's rules and name at least one CPU. */
static int parse_option_mask(const char *name, const char *value, uint32_t *mask, unsigned nbits) {
        int e = kernel_parse_list(value, mask, nbits);

        if (e < 0) {
                log_error("%s=%s: %s", name, value, strerror(-e));
                return e;
        }
        if (bitmap_next(mask, nbits, 0) >= nbits) {
                log_error("%s=%s: empty", name, value);
                return -EINVAL;
        }
        return 0;
}

/* Marks the IRQs of @value (which must all be present) with @mark. */
static int apply_irq_option(struct fakeirq *st, const char *name, const char *value,
                            void (*mark)(struct fakeirq *st, struct fake_irq *irq)) {
        int e = parse_option_mask(name, value, st->irq_scratch, FAKEIRQ_IRQ_LIMIT);

        if (e < 0)
                return e;
        FOR_EACH_SCRATCH_IRQ(st, n) {
                struct fake_irq *irq = irq_find_present(st, n);

                if (!irq) {
                        log_error("%s: IRQ %u is not in --irqs", name, n);
                        return -EINVAL;
                }
                mark(st, irq);
        }
        return 0;
}

static void mark_managed(struct fakeirq *st, struct fake_irq *irq) {
        irq_set_managed(st, irq, true);
}

static void mark_vanish_after_read(struct fakeirq *st UNUSED, struct fake_irq *irq) {
        irq->vanish_after_read = true;
}

static int fakeirq_new(const struct options *o, struct fakeirq **ret) {
        struct fakeirq *st = calloc(1, sizeof(*st));
        unsigned long number;
        uint32_t *affinity = NULL;
        int e;

        if (!st)
                return -ENOMEM;

        st->nr_cpus = 4;
        if (o->cpus) {
                if (!parse_unsigned(o->cpus, FAKEIRQ_MAX_CPUS, &number) || number == 0) {
                        log_error("--cpus=%s: expected 1..%u", o->cpus, FAKEIRQ_MAX_CPUS);
                        e = -EINVAL;
                        goto fail;
                }
                st->nr_cpus = (unsigned) number;
        }
        st->mask_words = bitmap_words(st->nr_cpus);
        st->online = calloc(st->mask_words, sizeof(uint32_t));
        st->default_affinity = calloc(st->mask_words, sizeof(uint32_t));
        st->scratch = calloc(st->mask_words, sizeof(uint32_t));
        affinity = calloc(st->mask_words, sizeof(uint32_t));
        st->irq_scratch = calloc(bitmap_words(FAKEIRQ_IRQ_LIMIT), sizeof(uint32_t));
        if (!st->online || !st->default_affinity || !st->scratch || !affinity || !st->irq_scratch) {
                e = -ENOMEM;
                goto fail;
        }

        bitmap_set_range(st->online, 0, st->nr_cpus);
        if (o->online && (e = parse_option_mask("--online", o->online, st->online, st->nr_cpus)) < 0)
                goto fail;

        bitmap_set_range(st->default_affinity, 0, st->nr_cpus);
        if (o->default_affinity) {
                e = parse_option_mask("--default-affinity", o->default_affinity,
                                      st->default_affinity, st->nr_cpus);
                if (e < 0)
                        goto fail;
                if (!bitmap_intersects(st->default_affinity, st->online, st->nr_cpus)) {
                        log_error("--default-affinity=%s: no online CPU", o->default_affinity);
                        e = -EINVAL;
                        goto fail;
                }
        }
        bitmap_copy(affinity, st->default_affinity, st->nr_cpus);
        if (o->affinity && (e = parse_option_mask("--affinity", o->affinity, affinity, st->nr_cpus)) < 0)
                goto fail;

        st->abi = MANAGED_ABI_LEGACY;
        if (o->managed_abi) {
                if (strcmp(o->managed_abi, "modern") == 0)
                        st->abi = MANAGED_ABI_MODERN;
                else if (strcmp(o->managed_abi, "legacy") != 0) {
                        log_error("--managed-abi=%s: expected legacy or modern", o->managed_abi);
                        e = -EINVAL;
                        goto fail;
                }
        }
        if (o->node && !parse_int(o->node, &st->default_node)) {
                log_error("--node=%s: not a number", o->node);
                e = -EINVAL;
                goto fail;
        }
        st->verbose = o->verbose;
        clock_gettime(CLOCK_REALTIME, &st->start_time);
        st->root_attr = (struct node_attr) { .mode = 0555 };
        st->default_attr = (struct node_attr) { .mode = 0644 };
        st->control_attr = (struct node_attr) { .mode = 0600 };
        st->stats_attr = (struct node_attr) { .mode = 0444 };

        e = parse_option_mask("--irqs", o->irqs ? o->irqs : "0-15", st->irq_scratch, FAKEIRQ_IRQ_LIMIT);
        if (e < 0)
                goto fail;
        FOR_EACH_SCRATCH_IRQ(st, n) {
                e = irq_appear(st, n, affinity);
                if (e < 0)
                        goto fail;
        }
        if (o->managed && (e = apply_irq_option(st, "--managed", o->managed, mark_managed)) < 0)
                goto fail;
        if (o->vanish_after_read &&
            (e = apply_irq_option(st, "--vanish-after-read", o->vanish_after_read, mark_vanish_after_read)) < 0)
                goto fail;

        free(affinity);
        *ret = st;
        return 0;

fail:
        free(affinity);
        fakeirq_free(st);
        return e;
}

static void signal_ready(int fd) {
        static const char message[] = "ready\n";
        size_t done = 0;

        while (done < sizeof(message) - 1) {
                ssize_t n = write(fd, message + done, sizeof(message) - 1 - done);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0) {
                        log_error("--ready-fd=%d: %s", fd, strerror(errno));
                        break;
                }
                done += (size_t) n;
        }
        close(fd);
}

int main(int argc, char *argv[]) {
        struct fuse_args args = FUSE_ARGS_INIT(0, NULL);
        struct fuse_cmdline_opts cmdline = {};
        struct options o = {};
        struct fakeirq *st = NULL;
        struct fuse *fuse = NULL;
        unsigned long ready_fd = ULONG_MAX;
        int exit_status = 1;
        int r;

        if (options_parse(argc, argv, &o, &args) < 0)
                goto out;
        if (o.show_help) {
                print_usage(argv[0]);
                fuse_cmdline_help();
                fuse_lib_help(&args);
                exit_status = 0;
                goto out;
        }
        if (o.show_version) {
                printf("fakeirqfs %s (libfuse %s)\n", FAKEIRQ_VERSION, fuse_pkgversion());
                exit_status = 0;
                goto out;
        }
        if (fuse_parse_cmdline(&args, &cmdline) != 0)
                goto out;
        if (cmdline.show_help || cmdline.show_version) {
                print_usage(argv[0]);
                exit_status = 0;
                goto out;
        }
        if (!cmdline.mountpoint) {
                log_error("no mount point given (try --help)");
                goto out;
        }
        if (o.ready_fd && (!parse_unsigned(o.ready_fd, INT_MAX, &ready_fd))) {
                log_error("--ready-fd=%s: not a file descriptor", o.ready_fd);
                goto out;
        }
        if (fakeirq_new(&o, &st) < 0)
                goto out;

        /* Mode bits checked by the kernel as procfs does; readable by everyone like
         * /proc/irq when we may grant that. */
        if (fuse_opt_add_arg(&args, "-odefault_permissions,fsname=fakeirqfs") < 0 ||
            (geteuid() == 0 && fuse_opt_add_arg(&args, "-oallow_other") < 0)) {
                log_error("out of memory");
                goto out;
        }

        fuse = fuse_new(&args, &fakeirq_operations, sizeof(fakeirq_operations), st);
        if (!fuse)
                goto out;
        exit_status = 2;
        if (fuse_mount(fuse, cmdline.mountpoint) != 0) {
                log_error("cannot mount on %s", cmdline.mountpoint);
                fuse_destroy(fuse);
                fuse = NULL;
                goto out;
        }
        if (fuse_set_signal_handlers(fuse_get_session(fuse)) != 0) {
                fuse_unmount(fuse);
                goto out;
        }
        if (ready_fd != ULONG_MAX)
                signal_ready((int) ready_fd);

        r = fuse_loop(fuse);        /* single-threaded, always */

        fuse_remove_signal_handlers(fuse_get_session(fuse));
        fuse_unmount(fuse);
        if (r == 0 || r == SIGTERM || r == SIGINT || r == SIGHUP)
                exit_status = 0;
        else
                log_error("session ended: %s", r < 0 ? strerror(-r) : "error");

out:
        if (fuse)
                fuse_destroy(fuse);
        fakeirq_free(st);
        free(cmdline.mountpoint);
        fuse_opt_free_args(&args);
        return exit_status;
}
