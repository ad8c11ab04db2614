/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Noise counters: /proc/interrupts, /proc/softirqs and /proc/schedstat, parsed
 * incrementally, and the rates between scans. */
#include <ctype.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "basic/array.h"
#include "host/interrupts.h"
#include "noise/noise.h"
#include "basic/util.h"

static const char *const noise_kind_table[_NOISE_KIND_MAX] = {
        [NOISE_IRQ] = "irq", [NOISE_TIMER] = "timer", [NOISE_IPI] = "ipi",
        [NOISE_SOFTIRQ] = "softirq", [NOISE_CTXSW] = "ctxsw",
};
DEFINE_STRING_TABLE_LOOKUP(noise_kind, NoiseKind);

static const char *const noise_paths[_NOISE_FORMAT_MAX] = {
        [NOISE_FORMAT_INTERRUPTS] = "proc/interrupts",
        [NOISE_FORMAT_SOFTIRQS] = "proc/softirqs",
        [NOISE_FORMAT_SCHEDSTAT] = "proc/schedstat",
};

/* More columns than any kernel has CPUs (NR_CPUS is at most 8192). */
#define NOISE_COLUMNS_MAX 8192
/* Every count column the kernel prints is " %10u": a space and ten characters, right
 * aligned (kernel/irq/proc.c show_interrupts, arch/x86/kernel/irq.c arch_show_interrupts,
 * fs/proc/softirqs.c). A count wider than ten digits shifts the columns after it. */
#define NOISE_COLUMN_WIDTH 11
#define NOISE_LABEL_MAX 32

static NoiseCounterRow *row_free(NoiseCounterRow *r) {
        if (r) {
                free(r->source);
                free(r->description);
                free(r->alerts);
                free(r);
        }
        return NULL;
}

static void noise_file_done(NoiseFile *f) {
        for (size_t i = 0; i < f->n_rows; i++)
                row_free(f->rows[i]);
        free(f->rows);
        free(f->lines);
        free(f->columns);
        free(f->scratch);
        free(f->text);
        safe_close(f->fd);
}

Noise *noise_free(Noise *n) {
        if (!n)
                return NULL;
        for (size_t i = 0; i < _NOISE_FORMAT_MAX; i++)
                noise_file_done(&n->files[i]);
        free(n->cpus);
        free(n->unreadable);
        free(n->cpu_state);
        free(n->stat_text);
        safe_close(n->stat_fd);
        noise_gate_free(n->gate);
        free(n->gate_timer);
        free(n);
        return NULL;
}

int noise_new(const unsigned *cpus, size_t n_cpus, Noise **ret) {
        _cleanup_(noise_freep) Noise *n = calloc(1, sizeof(Noise));

        if (!n)
                return -ENOMEM;
        n->stat_fd = -1;
        n->file_max = PROC_INTERRUPTS_MAX;
        for (size_t i = 0; i < _NOISE_FORMAT_MAX; i++) {
                n->files[i].format = (NoiseFormat) i;
                n->files[i].fd = -1;
        }
        if (n_cpus > 0) {
                n->cpus = malloc(n_cpus * sizeof(unsigned));
                if (!n->cpus)
                        return -ENOMEM;
                memcpy(n->cpus, cpus, n_cpus * sizeof(unsigned));
                n->cpu_state = calloc(n_cpus, sizeof(NoiseCpu));
                n->gate_timer = calloc(n_cpus, sizeof(uint64_t));
                if (!n->cpu_state || !n->gate_timer)
                        return -ENOMEM;
                for (size_t i = 1; i < n_cpus; i++)
                        if (n->cpus[i] <= n->cpus[i - 1])
                                return -EINVAL;
        }
        n->n_cpus = n_cpus;
        *ret = TAKE_PTR(n);
        return 0;
}

int noise_cpu_index(const Noise *n, unsigned cpu) {
        size_t lo = 0, hi = n->n_cpus;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (n->cpus[mid] == cpu)
                        return (int) mid;
                if (n->cpus[mid] < cpu)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return -1;
}

NoiseCounterRow *noise_next_row(const Noise *n, size_t *iterator) {
        size_t k = *iterator;

        for (size_t i = 0; i < _NOISE_FORMAT_MAX; i++) {
                if (k < n->files[i].n_rows) {
                        (*iterator)++;
                        return n->files[i].rows[k];
                }
                k -= n->files[i].n_rows;
        }
        return NULL;
}

static NoiseCounterRow *row_new(const Noise *n, NoiseKind kind, const char *source, size_t source_len) {
        NoiseCounterRow *r = calloc(1, sizeof(NoiseCounterRow) + n->n_cpus * sizeof(NoiseCell));

        if (!r)
                return NULL;
        r->kind = kind;
        r->source = strndup(source, source_len);
        r->description = strdup("");
        if (!r->source || !r->description)
                return row_free(r);
        r->source_len = strlen(r->source);
        return r;
}

static int row_set_description(NoiseCounterRow *r, const char *text, size_t len) {
        char *d;

        if (r->description_len == len && memcmp(r->description, text, len) == 0)
                return 0;
        d = strndup(text, len);
        if (!d)
                return -ENOMEM;
        free(r->description);
        r->description = d;
        r->description_len = strlen(d); /* shorter than len when the text holds a NUL */
        return 0;
}

/* The header: which column each watched CPU is in ("CPU3" may be column 1 when CPUs 1
 * and 2 are offline: /proc/interrupts prints online CPUs only, /proc/softirqs possible
 * ones). Returns the number of columns, or -EBADMSG when there is none. */
static int parse_header(Noise *n, NoiseFile *f, const char *line, size_t len) {
        size_t ncols = 0;
        int *columns;

        columns = malloc(MAX(n->n_cpus, (size_t) 1) * sizeof(int));
        if (!columns)
                return -ENOMEM;
        for (size_t i = 0; i < n->n_cpus; i++)
                columns[i] = -1;
        for (size_t i = 0; i < len;) {
                unsigned long cpu = 0;
                size_t j;

                while (i < len && line[i] == ' ')
                        i++;
                if (i >= len)
                        break;
                if (len - i < 4 || memcmp(line + i, "CPU", 3) != 0 || !isdigit((unsigned char) line[i + 3])) {
                        free(columns);
                        return -EBADMSG;
                }
                for (j = i + 3; j < len && isdigit((unsigned char) line[j]) && cpu <= 1UL << 20; j++)
                        cpu = cpu * 10 + (unsigned long) (line[j] - '0');
                if (j < len && line[j] != ' ') {
                        free(columns);
                        return -EBADMSG;
                }
                if (ncols >= NOISE_COLUMNS_MAX) {
                        free(columns);
                        return -EBADMSG;
                }
                if (cpu <= UINT32_MAX) {
                        int k = noise_cpu_index(n, (unsigned) cpu);
                        if (k >= 0 && columns[k] < 0)
                                columns[k] = (int) ncols;
                }
                ncols++;
                i = j;
        }
        if (ncols == 0) {
                free(columns);
                return -EBADMSG;
        }
        uint64_t *scratch = realloc(f->scratch, ncols * sizeof(uint64_t));
        if (!scratch) {
                free(columns);
                return -ENOMEM;
        }
        f->scratch = scratch;
        free(f->columns);
        f->columns = columns;
        f->n_columns = ncols;
        return 0;
}

/* One count of at most 20 digits that fits 64 bits; *p moves past it. */
static int parse_count(const char **p, const char *end, uint64_t *ret) {
        uint64_t v = 0;
        const char *s = *p;
        size_t digits = 0;

        if (s >= end || !isdigit((unsigned char) *s))
                return -EBADMSG;
        for (; s < end && isdigit((unsigned char) *s); s++, digits++) {
                unsigned d = (unsigned) (*s - '0');
                /* 19 digits always fit; only the 20th can overflow (a division per digit
                 * would be most of the parse). */
                if (digits >= 19 && (digits >= 20 || v > (UINT64_MAX - d) / 10))
                        return -ERANGE;
                v = v * 10 + d;
        }
        *p = s;
        *ret = v;
        return 0;
}

/* The fast path: the watched columns where the kernel's fixed layout puts them, checked
 * to be whole counts (a space before, digits up to the column's end, a space or the end
 * of the line after). Also checks that the last column ends where the layout says, so
 * that a wide count anywhere in the line sends it to the slow path. Returns the end of
 * the counts, or NULL when the line does not have that layout. */
static const char *read_fixed_columns(NoiseFile *f, const Noise *n, const char *counts, const char *eol) {
        const char *end = counts + f->n_columns * NOISE_COLUMN_WIDTH;

        if (end > eol || !isdigit((unsigned char) end[-1]) || (end < eol && end[0] != ' '))
                return NULL;
        for (size_t i = 0; i < n->n_cpus; i++) {
                const char *w, *p;
                int col = f->columns[i];

                if (col < 0)
                        continue;
                w = counts + (size_t) col * NOISE_COLUMN_WIDTH;
                p = w + 1;
                if (w[0] != ' ')
                        return NULL;
                while (p < w + NOISE_COLUMN_WIDTH && *p == ' ')
                        p++;
                if (parse_count(&p, w + NOISE_COLUMN_WIDTH, &f->scratch[col]) < 0 || p != w + NOISE_COLUMN_WIDTH)
                        return NULL;
        }
        return end;
}

/* The slow path: every count in turn, separated by white space. A line with fewer counts
 * than the header has columns (x86's ERR: and MIS: print one total) sets *ret_n lower. */
static int read_all_columns(NoiseFile *f, const char *p, const char *eol, size_t *ret_n, const char **ret_end) {
        size_t k = 0;

        for (; k < f->n_columns; k++) {
                const char *q = p;
                int r;

                while (q < eol && *q == ' ')
                        q++;
                if (q >= eol || !isdigit((unsigned char) *q))
                        break;
                r = parse_count(&q, eol, &f->scratch[k]);
                if (r < 0)
                        return r;
                if (q < eol && *q != ' ')
                        return -EBADMSG; /* "12ab" */
                p = q;
        }
        *ret_n = k;
        *ret_end = p;
        return 0;
}

/* An IRQ number of at most 32 bits, digits only. */
static bool label_is_number(const char *s, size_t len) {
        uint64_t v = 0;

        if (len == 0 || len > 10)
                return false;
        for (size_t i = 0; i < len; i++) {
                if (!isdigit((unsigned char) s[i]))
                        return false;
                v = v * 10 + (uint64_t) (s[i] - '0');
        }
        return v <= UINT32_MAX;
}

static NoiseCounterRow *find_row(NoiseFile *f, const char *label, size_t len, size_t *hint) {
        size_t i = *hint < f->n_rows ? *hint : 0;

        /* From where the last line's row was: in a file read in order, the next one. */
        for (size_t k = 0; k < f->n_rows; k++, i = i + 1 < f->n_rows ? i + 1 : 0) {
                NoiseCounterRow *r = f->rows[i];
                if (r->source_len == len && memcmp(r->source, label, len) == 0) {
                        *hint = i + 1;
                        return r;
                }
        }
        return NULL;
}

/* A changed line of /proc/interrupts or /proc/softirqs. Returns the row it updated in
 * *ret (NULL for a line that is no per-CPU source), or -EBADMSG/-ERANGE. */
static int parse_count_line(Noise *n, NoiseFile *f, const char *line, const char *eol, size_t *hint,
                            NoiseCounterRow **new_rows, size_t *n_new, NoiseCounterRow **ret) {
        const char *colon = memchr(line, ':', (size_t) (eol - line)), *label = line, *label_end, *end;
        size_t ncounts = f->n_columns, len;
        NoiseKind kind;
        NoiseCounterRow *row;
        *ret = NULL;
        if (!colon)
                return -EBADMSG;
        while (label < colon && *label == ' ')
                label++;
        label_end = colon;
        while (label_end > label && label_end[-1] == ' ')
                label_end--;
        len = (size_t) (label_end - label);
        if (len == 0 || len > NOISE_LABEL_MAX)
                return -EBADMSG;
        for (const char *p = label; p < label_end; p++)
                if (!isgraph((unsigned char) *p))
                        return -EBADMSG;

        if (f->format == NOISE_FORMAT_SOFTIRQS)
                kind = NOISE_SOFTIRQ;
        else if (isdigit((unsigned char) label[0])) {
                if (!label_is_number(label, len))
                        return -EBADMSG;
                /* "042" and "42" are one IRQ: name it as the bus does, in plain decimal. */
                while (len > 1 && label[0] == '0')
                        label++, len--;
                kind = NOISE_IRQ;
        } else if (len == 3 && memcmp(label, "LOC", 3) == 0)
                kind = NOISE_TIMER;
        else if (len == 3 && (memcmp(label, "ERR", 3) == 0 || memcmp(label, "MIS", 3) == 0 ||
                              memcmp(label, "Err", 3) == 0))
                return 0; /* totals for the whole machine, not per CPU (x86; arm's "Err:") */
        else
                kind = NOISE_IPI;

        end = read_fixed_columns(f, n, colon + 1, eol);
        if (!end) {
                int r = read_all_columns(f, colon + 1, eol, &ncounts, &end);
                if (r < 0)
                        return r;
        }

        row = find_row(f, label, len, hint);
        if (!row) {
                for (size_t i = 0; i < *n_new && !row; i++)
                        if (new_rows[i]->source_len == len && memcmp(new_rows[i]->source, label, len) == 0)
                                row = new_rows[i];
        }
        if (!row) {
                row = row_new(n, kind, label, len);
                if (!row)
                        return -ENOMEM;
                /* A line that appears after the first read did not exist at the last one
                 * (the kernel hides IRQ lines with no action and no counts): its counts
                 * all happened since. A row of the first read has counts since boot. */
                for (size_t i = 0; i < n->n_cpus && f->parsed; i++)
                        row->cells[i].has_baseline = true;
                new_rows[(*n_new)++] = row;
        }
        row->kind = kind;

        if (kind == NOISE_IRQ) {
                const char *name = irq_line_actions(end, eol, &len);
                if (row_set_description(row, name ?: "", name ? len : 0) < 0)
                        return -ENOMEM;
        } else if (kind != NOISE_SOFTIRQ) {
                const char *d = end, *e = eol;
                while (d < e && isspace((unsigned char) *d))
                        d++;
                while (e > d && isspace((unsigned char) e[-1]))
                        e--;
                if (row_set_description(row, d, (size_t) (e - d)) < 0)
                        return -ENOMEM;
        }

        for (size_t i = 0; i < n->n_cpus; i++) {
                NoiseCell *c = &row->cells[i];
                int col = f->columns[i];
                if (col < 0 || (size_t) col >= ncounts) {
                        /* Offline (or a short line): whatever it counts when it is back
                         * is since boot, not since our last look. */
                        c->present = c->has_baseline = false;
                        continue;
                }
                c->count = f->scratch[col];
                c->present = true;
        }
        row->touched = true;
        *ret = row;
        return 0;
}

/* "cpu3 0 0 123 45 678 90 1234 5678 9012": the ninth number is pcount, the number of
 * times a task (not the idle task) was switched in on that CPU. */
static int parse_schedstat_line(Noise *n, NoiseFile *f, const char *line, const char *eol, NoiseCounterRow **new_rows,
                                size_t *n_new) {
        const char *p = line + 3;
        uint64_t cpu, v = 0;
        NoiseCounterRow *row;
        int k, r;

        if (eol - line < 4 || memcmp(line, "cpu", 3) != 0)
                return 0; /* version, timestamp, domain lines */
        r = parse_count(&p, eol, &cpu);
        if (r < 0 || cpu > UINT32_MAX)
                return -EBADMSG;
        k = noise_cpu_index(n, (unsigned) cpu);
        if (k < 0)
                return 0; /* not watched: its numbers are not read */
        for (unsigned field = 1; field <= 9; field++) {
                if (p >= eol || *p != ' ')
                        return -EBADMSG;
                p++;
                r = parse_count(&p, eol, &v);
                if (r < 0)
                        return r;
        }
        row = f->n_rows > 0 ? f->rows[0] : *n_new > 0 ? new_rows[0] : NULL;
        if (!row) {
                row = row_new(n, NOISE_CTXSW, "ctxsw", 5);
                if (!row)
                        return -ENOMEM;
                new_rows[(*n_new)++] = row;
        }
        row->cells[k].count = v;
        row->cells[k].present = true;
        row->touched = true;
        row->generation = n->generation;
        return 0;
}

/* The 128-bit product of a and b, its halves xored: one multiply mixes 16 bytes into the
 * state (as wyhash and rapidhash do). */
static inline uint64_t fold_multiply(uint64_t a, uint64_t b) {
#ifdef __SIZEOF_INT128__
        __uint128_t p = (__uint128_t) a * b;
        return (uint64_t) p ^ (uint64_t) (p >> 64);
#else
        uint64_t lo_lo = (a & 0xffffffffu) * (b & 0xffffffffu), hi_lo = (a >> 32) * (b & 0xffffffffu),
                 lo_hi = (a & 0xffffffffu) * (b >> 32), hi_hi = (a >> 32) * (b >> 32);
        uint64_t cross = (lo_lo >> 32) + (hi_lo & 0xffffffffu) + lo_hi;
        return ((cross << 32) | (lo_lo & 0xffffffffu)) ^ (hi_hi + (hi_lo >> 32) + (cross >> 32));
#endif
}

/* wyhash's secrets with every byte's high bit set: no word of ASCII text xors one of them
 * to 0, which would zero a product and lose what the state held before. */
#define HASH_KEY0 UINT64_C(0xA0F69DE4F8BDE4AF)
#define HASH_KEY1 UINT64_C(0xE783FED1A0B4A8DB)
#define HASH_KEY2 UINT64_C(0x8EBCEAF09C88C6E3)
#define HASH_KEY3 UINT64_C(0x9AEBF1D5C0FE8DB1)

static inline uint64_t load_word(const char *s) {
        uint64_t w;
        memcpy(&w, s, sizeof(w));
        return w;
}

/* A line's bytes (length of them) and whether a newline ends it, as the next read compares
 * it: four lanes of 16 bytes each take one multiply per 64 bytes and run side by side, so
 * hashing a line costs about what comparing it with a kept copy did. Two different lines
 * of one length give one hash with a chance of about 2^-64; the line then counts as
 * unchanged and its row keeps the counts before until the line changes again (they are
 * totals: the next delta has what this one missed). */
static uint64_t line_hash(const char *s, size_t length, bool newline) {
        uint64_t a = HASH_KEY0, b = HASH_KEY1, c = HASH_KEY2, d = HASH_KEY3, h = HASH_KEY3;
        size_t i = 0;

        for (; i + 64 <= length; i += 64) {
                a = fold_multiply(load_word(s + i) ^ HASH_KEY0, load_word(s + i + 8) ^ a);
                b = fold_multiply(load_word(s + i + 16) ^ HASH_KEY1, load_word(s + i + 24) ^ b);
                c = fold_multiply(load_word(s + i + 32) ^ HASH_KEY2, load_word(s + i + 40) ^ c);
                d = fold_multiply(load_word(s + i + 48) ^ HASH_KEY3, load_word(s + i + 56) ^ d);
        }
        if (i > 0) {
                h = fold_multiply(a ^ HASH_KEY0, b ^ h);
                h = fold_multiply(c ^ HASH_KEY1, d ^ h);
        }
        for (; i + 16 <= length; i += 16)
                h = fold_multiply(load_word(s + i) ^ HASH_KEY0, load_word(s + i + 8) ^ h);
        if (i < length) {
                uint64_t w[2] = {};
                memcpy(w, s + i, length - i);
                h = fold_multiply(w[0] ^ HASH_KEY0, w[1] ^ h);
        }
        return fold_multiply(h ^ HASH_KEY1, ((uint64_t) length << 1 | newline) ^ HASH_KEY2);
}

/* Whether the text from line on starts with what line i of the previous read was: as
 * long, ended the same way (a newline, or the end of the text), and of the same hash. An
 * unchanged line is then read once, as its hash, and not parsed. Sets *ret_hash to the
 * hash of the text at that length, which a line changed in place (its counts) has too. */
static bool line_unchanged(const NoiseFile *f, size_t i, const char *line, const char *end, uint64_t *ret_hash) {
        const NoiseLine *p = &f->lines[i];
        bool newline;

        if ((size_t) (end - line) < p->length)
                return false;
        newline = line + p->length < end;
        if (newline && line[p->length] != '\n')
                return false;
        *ret_hash = line_hash(line, p->length, newline);
        return *ret_hash == p->hash;
}

/* One read of a file as it is parsed: its lines so far are f->lines[0 .. n_lines), written
 * over the previous read's as it goes (line i is compared with the previous line i only,
 * just before it is written), and the rows it created (freed again when the read fails). */
typedef struct NoiseParse {
        size_t n_lines;
        size_t previous_lines; /* the previous read's, in f->lines */
        NoiseCounterRow **new_rows;
        size_t n_new, new_size;
        size_t hint;  /* where find_row() looks first */
        bool reparse; /* the header changed: no line counts as unchanged */
} NoiseParse;

static void noise_parse_done(NoiseParse *p) {
        free(p->new_rows);
}

/* The header ("CPU0 CPU1 ..."; /proc/schedstat has none) is the read's line 0. Returns in
 * *ret_next where the next line starts. */
static int parse_file_header(Noise *n, NoiseFile *f, NoiseParse *p, const char *text, size_t length,
                             const char **ret_next) {
        const char *end = text + length, *eol;
        uint64_t hash;
        size_t hlen;
        int r;

        if (f->format == NOISE_FORMAT_SCHEDSTAT) {
                *ret_next = text;
                return 0;
        }
        eol = memchr(text, '\n', length) ?: end;
        hlen = (size_t) (eol - text);
        hash = line_hash(text, hlen, eol < end);
        /* The header changed (a CPU came online or went away): every column may have
         * moved, so every line is parsed again. */
        if (p->previous_lines == 0 || f->duplicates || f->lines[0].length != hlen || f->lines[0].hash != hash) {
                r = parse_header(n, f, text, hlen);
                if (r < 0)
                        return r;
                p->reparse = true;
        }
        r = array_grow(&f->lines, &f->lines_size, 1);
        if (r < 0)
                return r;
        f->lines[p->n_lines++] = (NoiseLine) { hash, hlen, NULL };
        *ret_next = eol < end ? eol + 1 : end;
        return 0;
}

/* The read's next line, from line: given the row it had last time when it is the same as
 * the previous read's line at its index (then its counts have not moved and its row is
 * not touched), parsed otherwise. A line that does not parse has no row and counts in
 * f->bad_lines. Returns in *ret_eol where the line ends; fails only for -ENOMEM. */
static int parse_file_line(Noise *n, NoiseFile *f, NoiseParse *p, const char *line, const char *end,
                           const char **ret_eol) {
        bool counts = f->format != NOISE_FORMAT_SCHEDSTAT;
        size_t i = p->n_lines;
        NoiseCounterRow *row = NULL;
        const char *eol;
        uint64_t hash = 0;
        int r;

        r = array_grow(&f->lines, &f->lines_size, p->n_lines + 1);
        if (r < 0)
                return r;
        r = array_grow(&p->new_rows, &p->new_size, p->n_new + 2);
        if (r < 0)
                return r;
        if (counts && !p->reparse && i < p->previous_lines && line_unchanged(f, i, line, end, &hash)) {
                eol = line + f->lines[i].length;
                row = f->lines[i].row;
                r = 0;
        } else {
                bool same_length = counts && !p->reparse && i < p->previous_lines;
                eol = memchr(line, '\n', (size_t) (end - line)) ?: end;
                /* Of the same length, the hash line_unchanged() took is this line's. */
                if (counts && (!same_length || (size_t) (eol - line) != f->lines[i].length))
                        hash = line_hash(line, (size_t) (eol - line), eol < end);
                if (counts)
                        r = parse_count_line(n, f, line, eol, &p->hint, p->new_rows, &p->n_new, &row);
                else
                        r = parse_schedstat_line(n, f, line, eol, p->new_rows, &p->n_new);
        }
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                f->bad_lines++;
                row = NULL;
        }
        f->lines[p->n_lines++] = (NoiseLine) { hash, (size_t) (eol - line), row };
        if (row)
                row->generation = n->generation;
        *ret_eol = eol;
        return 0;
}

/* The file's rows become those this read's lines name, in file order; rows no line
 * mentions any more are gone, old or just made. Sets *ret_duplicates when a label was
 * printed twice. Fails (-ENOMEM) only before anything changed. */
static int replace_rows(Noise *n, NoiseFile *f, NoiseParse *p, bool *ret_duplicates) {
        _cleanup_free_ NoiseCounterRow **rows = NULL;
        bool duplicates = false;
        size_t n_rows = 0;

        rows = malloc((f->n_rows + p->n_new + 1) * sizeof(NoiseCounterRow *));
        if (!rows)
                return -ENOMEM;
        if (f->format == NOISE_FORMAT_SCHEDSTAT) {
                NoiseCounterRow *row = f->n_rows > 0 ? f->rows[0] : p->n_new > 0 ? p->new_rows[0] : NULL;
                if (row && row->generation == n->generation)
                        rows[n_rows++] = row;
        } else
                for (size_t i = 0; i < p->n_lines; i++) {
                        NoiseCounterRow *row = f->lines[i].row;
                        /* A label printed twice (only in a corrupt file) is one row, which
                         * holds the counts of whichever line was parsed last: next time an
                         * unchanged line does not say its row is unchanged. */
                        if (row && row->generation == n->generation + 1)
                                duplicates = true;
                        if (!row || row->generation != n->generation)
                                continue;
                        row->generation = n->generation + 1;
                        rows[n_rows++] = row;
                }
        for (size_t i = 0; i < n_rows; i++)
                rows[i]->generation = n->generation;
        for (size_t i = 0; i < f->n_rows; i++)
                if (f->rows[i]->generation != n->generation)
                        row_free(f->rows[i]);
        for (size_t i = 0; i < p->n_new; i++)
                if (p->new_rows[i]->generation != n->generation)
                        row_free(p->new_rows[i]);
        p->n_new = 0; /* each is the file's now, or freed */
        free(f->rows);
        f->rows = TAKE_PTR(rows);
        f->n_rows = n_rows;
        *ret_duplicates = duplicates;
        return 0;
}

/* Rows this read created and still holds are not referenced yet: they go, and the old
 * ones stay as they were. f->lines may point at rows just freed, so the next read parses
 * everything. */
static int parse_failed(NoiseFile *f, NoiseParse *p, int r) {
        for (size_t i = 0; i < p->n_new; i++)
                row_free(p->new_rows[i]);
        p->n_new = 0;
        f->n_lines = 0;
        f->parsed = true;
        return r;
}

/* Parses text in one pass, line by line, against the previous read: a line that has not
 * changed is not parsed again. */
static int noise_parse_file(Noise *n, NoiseFile *f, const char *text, size_t length) {
        _cleanup_(noise_parse_done) NoiseParse p = { .previous_lines = f->n_lines };
        const char *end = text + length, *line;
        bool duplicates;
        int r;

        n->generation++;
        f->bad_lines = 0;

        r = parse_file_header(n, f, &p, text, length, &line);
        if (r < 0)
                return parse_failed(f, &p, r);
        while (line < end) {
                const char *eol;

                r = parse_file_line(n, f, &p, line, end, &eol);
                if (r < 0)
                        return parse_failed(f, &p, r);
                line = eol < end ? eol + 1 : end;
        }
        r = replace_rows(n, f, &p, &duplicates);
        if (r < 0)
                return parse_failed(f, &p, r);
        f->n_lines = p.n_lines;
        f->duplicates = duplicates;
        f->parsed = true;
        return 0;
}

int noise_parse(Noise *n, NoiseFormat format, const char *text, size_t length) {
        if (format >= _NOISE_FORMAT_MAX)
                return -EINVAL;
        return noise_parse_file(n, &n->files[format], text, length);
}

/* The whole file through a kept fd into a buffer that grows as needed (a file of more
 * than max bytes: -EFBIG): pread() from offset 0 until it returns 0 (seq_file hands out as
 * many whole records as fit each time). The buffer doubles, but never past max + 1. */
static int pread_whole(int fd, size_t max, char **text, size_t *size, size_t *ret_len) {
        size_t len = 0;

        for (;;) {
                ssize_t k;
                if (*size - len < 4096 && *size <= max) {
                        size_t s = MIN(MAX(*size * 2, (size_t) 65536), max + 1);
                        char *t = realloc(*text, s);
                        if (!t)
                                return -ENOMEM;
                        *text = t;
                        *size = s;
                }
                if (len > max)
                        return -EFBIG;
                k = pread(fd, *text + len, MIN(*size - len, max + 1 - len), (off_t) len);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                if (k == 0)
                        break;
                len += (size_t) k;
        }
        /* The buffer is kept for the next read, and the file keeps about its size: doubling
         * left up to twice that (32 MiB for an 18 MB /proc/interrupts). Give back all but
         * an eighth to grow into. */
        if (*size > len + len / 8 + 65536) {
                size_t s = len + len / 8 + 4096;
                char *t = realloc(*text, s);
                if (t) {
                        *text = t;
                        *size = s;
                }
        }
        *ret_len = len;
        return 0;
}

/* The whole file through its persistent fd, opened at the first read. */
static int read_file(NoiseFile *f, const Host *h, size_t max, size_t *ret_len) {
        if (f->missing)
                return -ENOENT;
        if (f->fd < 0) {
                f->fd = host_open_file(h, noise_paths[f->format], O_RDONLY);
                if (f->fd < 0) {
                        int r = f->fd;
                        f->fd = -1;
                        /* A kernel without CONFIG_SCHEDSTATS does not grow one later: no
                         * openat() per scan for it. */
                        f->missing = r == -ENOENT;
                        return r;
                }
        }
        return pread_whole(f->fd, max, &f->text, &f->text_size, ret_len);
}

/* Why a file cannot be counted, in words: "/proc/interrupts is larger than the 256 MiB
 * lowlatd reads", or the read's or the parse's error. */
static char *unreadable_text(const Noise *n, NoiseFormat format, int r) {
        if (r == -EFBIG && n->file_max % (1024 * 1024) == 0)
                return strdup_printf("/%s is larger than the %zu MiB lowlatd reads", noise_paths[format],
                                     n->file_max / (1024 * 1024));
        if (r == -EFBIG)
                return strdup_printf("/%s is larger than the %zu bytes lowlatd reads", noise_paths[format],
                                     n->file_max);
        if (r == -EBADMSG)
                return strdup_printf("/%s has no header naming CPUs", noise_paths[format]);
        return strdup_printf("/%s: %s", noise_paths[format], strerror(-r));
}

/* Reads and parses the files from first (a NoiseFormat) on; n->unreadable says why the
 * first that failed could not be counted, NULL when every one could. */
static int read_files(Noise *n, const Host *h, size_t first) {
        int ret = 0;

        for (size_t i = first; i < _NOISE_FORMAT_MAX; i++) {
                NoiseFile *f = &n->files[i];
                size_t len;
                int r = read_file(f, h, n->file_max, &len);
                if (r >= 0)
                        r = noise_parse_file(n, f, f->text, len);
                else if (r == -ENOENT && f->missing)
                        continue; /* no /proc/schedstat without CONFIG_SCHEDSTATS */
                if (r < 0 && ret == 0) {
                        ret = r;
                        free(n->unreadable);
                        n->unreadable = unreadable_text(n, (NoiseFormat) i, r);
                }
        }
        if (ret == 0 && first == 0)
                n->unreadable = mfree(n->unreadable);
        return ret;
}

int noise_read(Noise *n, const Host *h, uint64_t now) {
        int ret;

        if (n->n_cpus == 0)
                return 0;
        ret = read_files(n, h, 0);
        /* After the read: what the rings hold now is in the counts just read (the timer's
         * records are dropped: LOC has them), except what came in since /proc/interrupts
         * was read, which nothing tells apart; the next scan then reads in full. */
        if (n->gate)
                n->gate_dirty = noise_gate_drain(n->gate, n->gate_timer);
        n->full_usec = now;
        n->full_reads++;
        n->sampled_usec = now;
        n->read_once = true;
        return ret;
}

void noise_set_gate(Noise *n, NoiseGate *g) {
        noise_gate_free(n->gate);
        n->gate = g;
        n->gate_dirty = true;
}

/* LOC, x86's local timer line. */
static NoiseCounterRow *find_timer_row(const Noise *n) {
        const NoiseFile *f = &n->files[NOISE_FORMAT_INTERRUPTS];

        for (size_t i = 0; i < f->n_rows; i++)
                if (f->rows[i]->kind == NOISE_TIMER)
                        return f->rows[i];
        return NULL;
}

int noise_read_scan(Noise *n, const Host *h, uint64_t now) {
        NoiseCounterRow *loc;
        int r;

        if (n->n_cpus == 0)
                return 0;
        if (!n->gate || !n->read_once || n->gate_dirty || now < n->full_usec ||
            now - n->full_usec >= NOISE_RESYNC_USEC)
                return noise_read(n, h, now);
        if (noise_gate_drain(n->gate, n->gate_timer))
                return noise_read(n, h, now);
        /* Only timer interrupts: LOC by their count, the small files read as always. */
        loc = find_timer_row(n);
        for (size_t i = 0; loc && i < n->n_cpus; i++)
                if (loc->cells[i].present && n->gate_timer[i] > 0) {
                        loc->cells[i].count += n->gate_timer[i];
                        loc->touched = true;
                }
        r = read_files(n, h, NOISE_FORMAT_SOFTIRQS);
        n->gated_reads++;
        n->sampled_usec = now;
        return r;
}

void noise_scan(Noise *n, uint64_t now) {
        size_t it = 0;
        NoiseCounterRow *row;

        n->interval_usec = n->scan_usec > 0 && now > n->scan_usec ? now - n->scan_usec : 0;
        n->scan_usec = now;
        n->scans++;
        for (size_t i = 0; i < n->n_cpus; i++)
                n->cpu_state[i].busy_known = false;
        while ((row = noise_next_row(n, &it))) {
                bool moving = false;
                /* No count set and none moved last time: its deltas and rates are 0 already. */
                if (!row->touched && !row->moving)
                        continue;
                for (size_t i = 0; i < n->n_cpus; i++) {
                        NoiseCell *c = &row->cells[i];
                        c->delta = 0;
                        if (!c->present)
                                continue;
                        if (c->has_baseline && c->count >= c->baseline)
                                c->delta = c->count - c->baseline;
                        c->baseline = c->count;
                        c->has_baseline = true;
                        moving |= c->delta > 0;
                }
                row->touched = false;
                row->moving = moving;
        }
}

double noise_cell_rate(const Noise *n, const NoiseCell *c) {
        return n->interval_usec > 0 ? (double) c->delta * 1e6 / (double) n->interval_usec : 0;
}

void noise_set_nohz_full(Noise *n, const CPUSet *nohz_full) {
        for (size_t i = 0; i < n->n_cpus; i++)
                n->cpu_state[i].nohz_full = nohz_full && cpuset_contains(nohz_full, n->cpus[i]);
}

int noise_parse_stat(Noise *n, const char *text, size_t length, unsigned long user_hz) {
        const char *end = text + length;
        int ret = 0;

        if (user_hz == 0)
                return -EINVAL;
        for (const char *line = text; line < end;) {
                const char *eol = memchr(line, '\n', (size_t) (end - line)) ?: end, *p = line + 3;
                uint64_t cpu, v[5];
                int k;

                /* "cpu3 user nice system idle iowait irq softirq steal guest guest_nice";
                 * the first line, "cpu ", sums them all. */
                if (eol - line < 4 || memcmp(line, "cpu", 3) != 0 || !isdigit((unsigned char) line[3]))
                        goto next;
                if (parse_count(&p, eol, &cpu) < 0 || cpu > UINT32_MAX)
                        goto bad;
                k = noise_cpu_index(n, (unsigned) cpu);
                if (k < 0)
                        goto next;
                for (size_t f = 0; f < ELEMENTSOF(v); f++) {
                        if (p >= eol || *p != ' ')
                                goto bad;
                        p++;
                        if (parse_count(&p, eol, &v[f]) < 0)
                                goto bad;
                }
                {
                        NoiseCpu *c = &n->cpu_state[k];
                        uint64_t idle = v[3] + v[4];
                        c->busy_known = false;
                        if (v[3] > UINT64_MAX / 2 || v[4] > UINT64_MAX / 2)
                                goto bad;
                        if (c->idle_scan > 0 && c->idle_scan + 1 == n->scans && idle >= c->idle_ticks &&
                            n->interval_usec > 0) {
                                double idle_sec = (double) (idle - c->idle_ticks) / (double) user_hz;
                                double share = idle_sec * 1e6 / (double) n->interval_usec;
                                c->busy_share = share >= 1 ? 0 : 1 - share;
                                c->busy_known = true;
                        }
                        c->idle_ticks = idle;
                        c->idle_scan = n->scans;
                }
                goto next;
        bad:
                ret = -EBADMSG;
        next:
                line = eol < end ? eol + 1 : end;
        }
        return ret;
}


static bool ticks_above(const Noise *n, const NoiseCounterRow *loc, size_t i, const NoiseAlertPolicy *policy) {
        return n->cpu_state[i].nohz_full && loc->cells[i].present &&
               noise_cell_rate(n, &loc->cells[i]) > policy->tick_rate_max;
}

bool noise_wants_stat(const Noise *n, const NoiseAlertPolicy *policy) {
        const NoiseCounterRow *loc = find_timer_row(n);

        if (!loc || policy->interval_usec == 0)
                return false;
        for (size_t i = 0; i < n->n_cpus; i++)
                if (ticks_above(n, loc, i, policy) ||
                    (n->cpu_state[i].idle_scan > 0 && n->cpu_state[i].idle_scan + 1 == n->scans))
                        return true;
        return false;
}

int noise_read_stat(Noise *n, const Host *h) {
        size_t len = 0;
        long hz = sysconf(_SC_CLK_TCK);
        int r;

        if (n->stat_fd < 0) {
                n->stat_fd = host_open_file(h, "proc/stat", O_RDONLY);
                if (n->stat_fd < 0) {
                        r = n->stat_fd;
                        n->stat_fd = -1;
                        return r;
                }
        }
        r = pread_whole(n->stat_fd, n->file_max, &n->stat_text, &n->stat_size, &len);
        if (r < 0)
                return r;
        return noise_parse_stat(n, n->stat_text, len, hz > 0 ? (unsigned long) hz : 100);
}

static const NoiseCounterRow *find_ctxsw_row(const Noise *n) {
        const NoiseFile *f = &n->files[NOISE_FORMAT_SCHEDSTAT];
        return f->n_rows > 0 ? f->rows[0] : NULL;
}

/* The alert about row on its i-th watched CPU, unless one was sent less than the policy's
 * interval ago. Without memory for the row's alert states, it is sent as if it were the
 * first (the journal rather loses its rate limit than the alert). */
static void alert_due(const Noise *n, NoiseCounterRow *row, size_t i, NoiseAlertKind kind, uint64_t count,
                      double rate, const NoiseAlertPolicy *policy, uint64_t now, NoiseAlertHandler handler,
                      void *userdata) {
        NoiseAlertState none = {}, *c;
        NoiseAlert a;

        if (!row->alerts)
                row->alerts = calloc(n->n_cpus, sizeof(NoiseAlertState));
        c = row->alerts ? &row->alerts[i] : &none;
        if (c->alert_usec > 0 && now - c->alert_usec < policy->interval_usec) {
                c->suppressed++;
                c->suppressed_count += count;
                return;
        }
        a = (NoiseAlert) { kind, n->cpus[i], row, count, rate, c->suppressed, c->suppressed_count };
        c->alert_usec = MAX(now, (uint64_t) 1);
        c->suppressed = c->suppressed_count = 0;
        handler(&a, userdata);
}

void noise_check_alerts(Noise *n, const NoiseAlertPolicy *policy, uint64_t now, NoiseAlertHandler handler,
                        void *userdata) {
        const NoiseFile *f = &n->files[NOISE_FORMAT_INTERRUPTS];
        const NoiseCounterRow *loc = find_timer_row(n), *ctxsw = find_ctxsw_row(n);

        if (policy->interval_usec == 0 || n->interval_usec == 0)
                return;
        for (size_t i = 0; i < n->n_cpus; i++) {
                for (size_t k = 0; k < f->n_rows; k++) {
                        NoiseCounterRow *row = f->rows[k];
                        NoiseCell *c = &row->cells[i];
                        if (row->moving && row->kind == NOISE_IRQ && c->present && c->delta > 0)
                                alert_due(n, row, i, NOISE_ALERT_DEVICE_IRQ, c->delta, noise_cell_rate(n, c), policy,
                                          now, handler, userdata);
                }
                if (loc && ticks_above(n, loc, i, policy) && n->cpu_state[i].busy_known &&
                    n->cpu_state[i].busy_share >= policy->busy_share_min &&
                    (!ctxsw || !ctxsw->cells[i].present || noise_cell_rate(n, &ctxsw->cells[i]) <= policy->tick_rate_max))
                        alert_due(n, (NoiseCounterRow *) loc, i, NOISE_ALERT_TICK, loc->cells[i].delta,
                                  noise_cell_rate(n, &loc->cells[i]), policy, now, handler, userdata);
        }
}
