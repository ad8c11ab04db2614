/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fuzzes the whole config path (lib/config/): parsing from memory and from a file (the same
 * bytes must give the same result), then config_validate(). Checked: every error reads
 * "NAME:LINE: " with LINE a line of that file; in a file without errors every line that is
 * "key = value" by a reading of its own (below) reaches the key table, in the section its
 * header named ([sysfs] paths too, ':' and '[' included); every stored value is within the
 * bounds lowlatd.conf(5) documents; a config without errors has no overlap left; pins from
 * hostile globs match in bounded time.
 * Input: the main file; bytes after the first form feed are a drop-in read after it. NUL
 * bytes are kept: only the file reader can see them, so such inputs skip the string path. */
#include <ctype.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/config.h"
#include "config/keys.h"
#include "config/posture.h"
#include "fuzz.h"
#include "host/sysfs.h"
#include "basic/util.h"

#define MAX_FILES 2

/* One key the reader looked up in the table: the section it was in, and the key. */
typedef struct SeenKey {
        char *section;
        char *key;
} SeenKey;

typedef struct Piece {
        const uint8_t *data;
        size_t size;
        unsigned lines;
        size_t errors_begin, errors_end;
        SeenKey *seen;
        size_t n_seen;
} Piece;

/* Every "key = value" the reader takes goes to config_key_find() (keys.c) from reader.c's
 * config_assign(); linking with --wrap=config_key_find lets the harness see each. */
const ConfigKey *__real_config_key_find(const ConfigSection *section, const char *name);
const ConfigKey *__wrap_config_key_find(const ConfigSection *section, const char *name);

static struct {
        SeenKey *seen;
        size_t n_seen, cap;
} spy;

const ConfigKey *__wrap_config_key_find(const ConfigSection *section, const char *name) {
        if (spy.n_seen == spy.cap) {
                spy.cap = spy.cap ? spy.cap * 2 : 64;
                spy.seen = realloc(spy.seen, spy.cap * sizeof(SeenKey));
                FUZZ_CHECK(spy.seen, "out of memory");
        }
        spy.seen[spy.n_seen++] = (SeenKey) { .section = fuzz_strndup((const uint8_t *) section->name, strlen(section->name)),
                                             .key = fuzz_strndup((const uint8_t *) name, strlen(name)) };
        return __real_config_key_find(section, name);
}

/* Moves what the spy recorded for one file into its piece. */
static void spy_collect(Piece *piece, const ErrorList *errors, size_t errors_begin) {
        piece->seen = spy.seen;
        piece->n_seen = spy.n_seen;
        piece->errors_begin = errors_begin;
        piece->errors_end = errors->n;
        spy.seen = NULL;
        spy.n_seen = spy.cap = 0;
}

static void piece_done(Piece *piece) {
        for (size_t i = 0; i < piece->n_seen; i++) {
                free(piece->seen[i].section);
                free(piece->seen[i].key);
        }
        free(piece->seen);
}

static unsigned count_lines(const uint8_t *data, size_t size) {
        unsigned n = 0;
        for (size_t i = 0; i < size; i++)
                n += data[i] == '\n';
        return n + (size > 0 && data[size - 1] != '\n');
}

static const Piece *piece_of(const Config *c, const Piece *pieces, size_t n_pieces, const char *file) {
        for (size_t i = 0; i < c->n_files && i < n_pieces; i++)
                if (c->files[i] == file)
                        return &pieces[i];
        return NULL;
}

/* "NAME:LINE: reason" with 1 <= LINE <= the file's lines; returns LINE. */
static unsigned check_error_prefix(const char *error, const char *name, const Piece *piece) {
        size_t len = strlen(name);
        unsigned long line;
        char *end;

        FUZZ_CHECK(strncmp(error, name, len) == 0 && error[len] == ':', "error '%s' does not start with '%s:'", error,
                   name);
        FUZZ_CHECK(isdigit((unsigned char) error[len + 1]), "error '%s' has no line number", error);
        line = strtoul(error + len + 1, &end, 10);
        FUZZ_CHECK(end[0] == ':' && end[1] == ' ', "error '%s' lacks ': ' after the line", error);
        FUZZ_CHECK(line >= 1 && line <= piece->lines, "error '%s' names line %lu of a %u-line file", error, line,
                   piece->lines);
        FUZZ_CHECK(utf8_is_valid(error), "error is not UTF-8");
        return (unsigned) line;
}

/* The reference reading of one line (lowlatd.conf(5), FILE FORMAT): white space around
 * it dropped, a comment or blank line is nothing, "[WORD..." a header, else the key is what
 * comes before the first '='. Writes the header's word or the key to out. */
static char line_kind(const uint8_t *line, size_t len, char *out, size_t size) {
        size_t b = 0, e = len, n;

        while (b < e && isspace(line[b]))
                b++;
        while (e > b && isspace(line[e - 1]))
                e--;
        if (b == e || line[b] == '#' || line[b] == ';')
                return 0;
        if (line[b] == '[') {
                for (n = 0, b++; b < e && (islower(line[b]) || isdigit(line[b]) || line[b] == '_' || line[b] == '-') &&
                                 n + 1 < size;
                     b++)
                        out[n++] = (char) line[b];
                out[n] = '\0';
                return '[';
        }
        for (n = 0; b < e && line[b] != '=' && n + 1 < size; b++)
                out[n++] = (char) line[b];
        while (n > 0 && isspace((unsigned char) out[n - 1]))
                n--;
        out[n] = '\0';
        return '=';
}

/* For one file: its errors are well formed and, when it has none, every line that is
 * "key = value" by the reference reading reached the key table once, in order, in the
 * section its last header named. */
static void check_piece(const ErrorList *errors, const char *name, const Piece *piece) {
        char header[CONFIG_LINE_MAX + 1] = "", text[CONFIG_LINE_MAX + 1];
        size_t next = 0, start = 0;
        unsigned line = 0;

        for (size_t i = piece->errors_begin; i < piece->errors_end; i++)
                (void) check_error_prefix(errors->items[i], name, piece);
        if (piece->errors_end > piece->errors_begin)
                return;

        while (start < piece->size) {
                const uint8_t *nl = memchr(piece->data + start, '\n', piece->size - start);
                size_t len = nl ? (size_t) (nl - (piece->data + start)) : piece->size - start;
                const uint8_t *data = piece->data + start;
                char kind;

                line++;
                /* A UTF-8 byte order mark on the first line is not part of it. */
                if (line == 1 && len >= 3 && memcmp(data, "\xef\xbb\xbf", 3) == 0) {
                        data += 3;
                        len -= 3;
                }
                kind = line_kind(data, len, text, sizeof(text));
                if (kind == '[')
                        memcpy(header, text, sizeof(header));
                else if (kind == '=') {
                        FUZZ_CHECK(next < piece->n_seen, "%s:%u: '%s' was accepted but never applied", name, line, text);
                        FUZZ_CHECK(streq(piece->seen[next].section, header) && streq(piece->seen[next].key, text),
                                   "%s:%u: key '%s' of [%s] reached the table as '%s' of [%s]", name, line, text, header,
                                   piece->seen[next].key, piece->seen[next].section);
                        next++;
                }
                start = nl ? (size_t) (nl - piece->data) + 1 : piece->size;
        }
        FUZZ_CHECK(next == piece->n_seen, "%s: %zu keys reached the table, %zu lines are keys", name, piece->n_seen, next);
}

static void check_source(const Config *c, const Piece *pieces, size_t n_pieces, const ConfigSource *at,
                         const char *what) {
        const Piece *piece;

        if (!at->file) {
                FUZZ_CHECK(at->line == 0, "%s: line %u of no file", what, at->line);
                return;
        }
        piece = piece_of(c, pieces, n_pieces, at->file);
        FUZZ_CHECK(piece, "%s: source file is not one of the files read", what);
        FUZZ_CHECK(at->line >= 1 && at->line <= piece->lines, "%s: line %u of a %u-line file", what, at->line,
                   piece->lines);
}

static void check_cpus(const CPUSet *s, const char *what) {
        FUZZ_CHECK(!cpuset_is_empty(s), "%s: empty CPU set stored", what);
        FUZZ_CHECK(cpuset_last(s) < (int) CPUSET_MAX_CPUS, "%s: CPU %d", what, cpuset_last(s));
}

static bool is_printable_ascii(const char *s, bool tab) {
        for (; *s; s++)
                if (!((*s >= 0x20 && *s <= 0x7e) || (tab && *s == '\t')))
                        return false;
        return true;
}

/* lowlatd.conf(5): at least two components of letters, digits, '_' and '-' joined by dots. */
static bool reference_sysctl_key_is_valid(const char *key) {
        size_t components = 0;

        for (const char *p = key;;) {
                size_t n = strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-");
                if (n == 0)
                        return false;
                components++;
                p += n;
                if (*p == '\0')
                        return components >= 2;
                if (*p != '.')
                        return false;
                p++;
        }
}

/* Whatever the input, a value the parser kept is one it accepted: bounds hold even when
 * other lines were wrong. */
static void check_bounds(const Config *c, const Piece *pieces, size_t n_pieces) {
        FUZZ_CHECK(c->mode == DAEMON_MODE_ENFORCE || c->mode == DAEMON_MODE_OBSERVE, "mode %d", (int) c->mode);
        FUZZ_CHECK(c->scan_interval_usec >= SCAN_INTERVAL_MIN_USEC && c->scan_interval_usec <= SCAN_INTERVAL_MAX_USEC,
                   "scan_interval %" PRIu64 "us out of 100ms..1h", c->scan_interval_usec);

        FUZZ_CHECK(c->isolated.kind == CPUS_AUTO || c->isolated.kind == CPUS_LIST, "isolated kind %d",
                   (int) c->isolated.kind);
        if (c->isolated.kind == CPUS_AUTO)
                FUZZ_CHECK(cpuset_is_empty(&c->isolated.cpus), "isolated = auto with CPUs stored");
        else
                check_cpus(&c->isolated.cpus, "isolated");
        FUZZ_CHECK(c->housekeeping.kind == CPUS_UNSET || c->housekeeping.kind == CPUS_LIST, "housekeeping kind %d",
                   (int) c->housekeeping.kind);
        if (c->housekeeping.kind == CPUS_LIST)
                check_cpus(&c->housekeeping.cpus, "housekeeping");
        FUZZ_CHECK(c->default_affinity.kind == CPUS_HOUSEKEEPING || c->default_affinity.kind == CPUS_LIST,
                   "default_affinity kind %d", (int) c->default_affinity.kind);
        if (c->default_affinity.kind == CPUS_LIST)
                check_cpus(&c->default_affinity.cpus, "default_affinity");
        check_source(c, pieces, n_pieces, &c->isolated.source, "isolated");
        check_source(c, pieces, n_pieces, &c->housekeeping.source, "housekeeping");
        check_source(c, pieces, n_pieces, &c->default_affinity.source, "default_affinity");

        for (size_t i = 0; i < c->n_pins; i++) {
                const IrqPin *pin = &c->pins[i];
                size_t len = strlen(pin->glob);
                const char *bracket = strchr(pin->glob, '[');

                FUZZ_CHECK(len >= 1 && len <= 128, "pin glob of %zu bytes", len);
                for (const char *p = pin->glob; *p; p++)
                        FUZZ_CHECK(*p > 0x20 && *p < 0x7f, "pin glob '%s' holds byte 0x%02x", pin->glob,
                                   (unsigned char) *p);
                FUZZ_CHECK(!bracket || strchr(bracket, ']'), "pin glob '%s' has an unclosed '['", pin->glob);
                check_cpus(&pin->cpus, "pin");
                check_source(c, pieces, n_pieces, &pin->source, "pin");
                FUZZ_CHECK(pin->source.file, "pin without a source");
        }

        if (c->cpu_dma_latency_enabled)
                FUZZ_CHECK(c->cpu_dma_latency_usec >= 0 && c->cpu_dma_latency_usec <= DMA_LATENCY_MAX_USEC,
                           "cpu_dma_latency %d", c->cpu_dma_latency_usec);
        if (c->governor) {
                size_t len = strlen(c->governor);
                FUZZ_CHECK(len >= 1 && len <= 15 && strspn(c->governor, "abcdefghijklmnopqrstuvwxyz0123456789_-") == len,
                           "governor '%s'", c->governor);
        }

        for (size_t i = 0; i < c->n_sysctls; i++) {
                const SysctlEntry *e = &c->sysctls[i];
                size_t len = strlen(e->value);

                FUZZ_CHECK(reference_sysctl_key_is_valid(e->key) && strlen(e->key) <= 255, "sysctl key '%s'", e->key);
                FUZZ_CHECK(!strstr(e->key, "..") && !strchr(e->key, '/'), "sysctl key '%s' escapes", e->key);
                FUZZ_CHECK(len >= 1 && len <= SYSCTL_VALUE_MAX && is_printable_ascii(e->value, true),
                           "sysctl %s: value '%s'", e->key, e->value);
                FUZZ_CHECK(!isspace((unsigned char) e->value[0]) && !isspace((unsigned char) e->value[len - 1]),
                           "sysctl %s: value '%s' not trimmed", e->key, e->value);
                for (size_t j = 0; j < i; j++)
                        FUZZ_CHECK(!streq(c->sysctls[j].key, e->key), "sysctl %s stored twice", e->key);
                check_source(c, pieces, n_pieces, &e->source, "sysctl");
        }

        /* [sysfs]: the path under /sys and nothing that climbs out of it; fuzz-sysfs holds
         * the rules themselves to their reference. */
        for (size_t i = 0; i < c->n_sysfs; i++) {
                const SysfsEntry *e = &c->sysfs[i];
                size_t len = strlen(e->value);

                FUZZ_CHECK(strncmp(e->path, "/sys/", 5) == 0 && !strstr(e->path, "/../") && !strstr(e->path, "/./") &&
                                   !strstr(e->path, "//") && e->path[strlen(e->path) - 1] != '/' &&
                                   strcmp(e->path + strlen(e->path) - 3, "/..") != 0 && is_printable_ascii(e->path, false) &&
                                   !strchr(e->path, ' '),
                           "sysfs path '%s'", e->path);
                FUZZ_CHECK(len >= 1 && len <= SYSFS_VALUE_MAX && is_printable_ascii(e->value, true) &&
                                   !strpbrk(e->value, "[]"),
                           "sysfs %s: value '%s'", e->path, e->value);
                FUZZ_CHECK(!isspace((unsigned char) e->value[0]) && !isspace((unsigned char) e->value[len - 1]),
                           "sysfs %s: value '%s' not trimmed", e->path, e->value);
                for (size_t j = 0; j < i; j++)
                        FUZZ_CHECK(!streq(c->sysfs[j].path, e->path), "sysfs %s stored twice", e->path);
                check_source(c, pieces, n_pieces, &e->source, "sysfs");
                FUZZ_CHECK(e->source.file, "sysfs entry without a source");
        }
}

/* Both spellings of the same bytes must leave the same config (names aside). */
static void check_same_config(const Config *a, const Config *b) {
        FUZZ_CHECK(a->mode == b->mode && a->scan_interval_usec == b->scan_interval_usec, "[daemon] differs");
        FUZZ_CHECK(a->isolated.kind == b->isolated.kind && cpuset_equal(&a->isolated.cpus, &b->isolated.cpus) &&
                           a->isolated.source.line == b->isolated.source.line,
                   "isolated differs");
        FUZZ_CHECK(a->housekeeping.kind == b->housekeeping.kind &&
                           cpuset_equal(&a->housekeeping.cpus, &b->housekeeping.cpus),
                   "housekeeping differs");
        FUZZ_CHECK(a->default_affinity.kind == b->default_affinity.kind &&
                           cpuset_equal(&a->default_affinity.cpus, &b->default_affinity.cpus),
                   "default_affinity differs");
        FUZZ_CHECK(a->n_pins == b->n_pins, "%zu pins from memory, %zu from the file", a->n_pins, b->n_pins);
        for (size_t i = 0; i < a->n_pins; i++)
                FUZZ_CHECK(streq(a->pins[i].glob, b->pins[i].glob) && cpuset_equal(&a->pins[i].cpus, &b->pins[i].cpus) &&
                                   a->pins[i].source.line == b->pins[i].source.line,
                           "pin %zu differs", i);
        FUZZ_CHECK(a->cpu_dma_latency_enabled == b->cpu_dma_latency_enabled &&
                           a->cpu_dma_latency_usec == b->cpu_dma_latency_usec,
                   "cpu_dma_latency differs");
        FUZZ_CHECK(streq_ptr(a->governor, b->governor), "governor differs");
        FUZZ_CHECK(a->n_sysctls == b->n_sysctls, "%zu sysctls from memory, %zu from the file", a->n_sysctls,
                   b->n_sysctls);
        for (size_t i = 0; i < a->n_sysctls; i++)
                FUZZ_CHECK(streq(a->sysctls[i].key, b->sysctls[i].key) && streq(a->sysctls[i].value, b->sysctls[i].value),
                           "sysctl %zu differs", i);
        FUZZ_CHECK(a->n_sysfs == b->n_sysfs, "%zu [sysfs] entries from memory, %zu from the file", a->n_sysfs,
                   b->n_sysfs);
        for (size_t i = 0; i < a->n_sysfs; i++)
                FUZZ_CHECK(streq(a->sysfs[i].path, b->sysfs[i].path) && streq(a->sysfs[i].value, b->sysfs[i].value) &&
                                   a->sysfs[i].source.line == b->sysfs[i].source.line,
                           "[sysfs] entry %zu differs", i);
}

static void check_same_errors(const ErrorList *a, const Config *ca, const ErrorList *b, const Config *cb) {
        FUZZ_CHECK(a->n == b->n, "%zu errors from memory, %zu from the file", a->n, b->n);
        for (size_t i = 0; i < a->n; i++) {
                /* Strip "NAME:" from both; the file name is the only difference allowed. */
                const char *x = NULL, *y = NULL;
                for (size_t k = 0; k < ca->n_files; k++) {
                        size_t la = strlen(ca->files[k]), lb = strlen(cb->files[k]);
                        if (!x && strncmp(a->items[i], ca->files[k], la) == 0 && a->items[i][la] == ':')
                                x = a->items[i] + la;
                        if (!y && strncmp(b->items[i], cb->files[k], lb) == 0 && b->items[i][lb] == ':')
                                y = b->items[i] + lb;
                }
                FUZZ_CHECK(x && y && streq(x, y), "error %zu: '%s' from memory, '%s' from the file", i, a->items[i],
                           b->items[i]);
        }
}

/* Pins from the input applied to names the kernel prints: fnmatch() on hostile globs must
 * not crash or take long (libFuzzer's -timeout catches that), and the winner is a pin. */
static void check_pin_matching(Config *c) {
        static const char *const names[] = {
                "eth0-TxRx-0", "i8042, rtc0", "nvme0q12", "mlx5_comp3@pci:0000:3b:00.0", "ACPI:Ged",
                "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab",
        };
        Posture p = { .config = c };

        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                const IrqPin *pin = posture_irq_pin(&p, names[i]);
                FUZZ_CHECK(!pin || (pin >= c->pins && pin < c->pins + c->n_pins), "posture_irq_pin() returned a stray pin");
        }
}

static const char *const piece_names[MAX_FILES] = { "lowlatd.conf", "lowlatd.conf.d/50-fuzz.conf" };

static Config *parse_from_memory(Piece *pieces, size_t n_pieces, ErrorList *errors) {
        Config *c = config_new();

        FUZZ_CHECK(c, "config_new() failed");
        for (size_t k = 0; k < n_pieces; k++) {
                char *text = fuzz_strndup(pieces[k].data, pieces[k].size);
                size_t before = errors->n;
                int r;

                r = config_parse_string(c, piece_names[k], text, errors);
                FUZZ_CHECK(r == 0, "config_parse_string() returned %d", r);
                spy_collect(&pieces[k], errors, before);
                free(text);
        }
        return c;
}

/* Through config_parse_file(), from memfds that stay open until every piece is read, so
 * that each file has its own name. */
static Config *parse_from_files(Piece *pieces, size_t n_pieces, ErrorList *errors) {
        Config *c = config_new();
        int fds[MAX_FILES];

        FUZZ_CHECK(c, "config_new() failed");
        for (size_t k = 0; k < n_pieces; k++) {
                size_t before = errors->n;
                char path[64];
                int r;

                fds[k] = memfd_create("fuzz-config", MFD_CLOEXEC);
                FUZZ_CHECK(fds[k] >= 0, "memfd_create() failed");
                /* A memfd is born 0777; lowlatd refuses configs others may write. */
                FUZZ_CHECK(fchmod(fds[k], 0600) == 0, "fchmod() of the memfd failed");
                for (size_t done = 0; done < pieces[k].size;) {
                        ssize_t n = write(fds[k], pieces[k].data + done, pieces[k].size - done);
                        FUZZ_CHECK(n > 0, "write() to the memfd failed");
                        done += (size_t) n;
                }
                snprintf(path, sizeof(path), "/proc/self/fd/%d", fds[k]);
                r = config_parse_file(c, path, errors);
                FUZZ_CHECK(r == 0, "config_parse_file() returned %d", r);
                spy_collect(&pieces[k], errors, before);
        }
        for (size_t k = 0; k < n_pieces; k++)
                close(fds[k]);
        return c;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        ErrorList from_memory_errors = ERROR_LIST_EMPTY, file_errors = ERROR_LIST_EMPTY;
        Piece pieces[MAX_FILES] = {}, file_pieces[MAX_FILES];
        const uint8_t *form_feed = memchr(data, '\f', size);
        bool has_nul = memchr(data, '\0', size) != NULL;
        size_t n_pieces = form_feed ? 2 : 1, parsed;
        Config *from_memory = NULL, *from_file;

        pieces[0] = (Piece) { .data = data, .size = form_feed ? (size_t) (form_feed - data) : size };
        if (form_feed)
                pieces[1] = (Piece) { .data = form_feed + 1, .size = size - pieces[0].size - 1 };
        for (size_t k = 0; k < n_pieces; k++)
                pieces[k].lines = count_lines(pieces[k].data, pieces[k].size);
        memcpy(file_pieces, pieces, sizeof(pieces));

        if (!has_nul) {
                from_memory = parse_from_memory(pieces, n_pieces, &from_memory_errors);
                for (size_t k = 0; k < n_pieces; k++)
                        check_piece(&from_memory_errors, from_memory->files[k], &pieces[k]);
        }
        from_file = parse_from_files(file_pieces, n_pieces, &file_errors);
        for (size_t k = 0; k < n_pieces; k++)
                check_piece(&file_errors, from_file->files[k], &file_pieces[k]);
        if (from_memory) {
                check_same_config(from_memory, from_file);
                check_same_errors(&from_memory_errors, from_memory, &file_errors, from_file);
        }

        /* Validation adds errors about lines already read; a config with none is sound. */
        parsed = file_errors.n;
        config_validate(from_file, &file_errors);
        for (size_t i = parsed; i < file_errors.n; i++) {
                const char *e = file_errors.items[i];
                bool named = false;
                for (size_t k = 0; k < n_pieces && !named; k++) {
                        size_t len = strlen(from_file->files[k]);
                        if (strncmp(e, from_file->files[k], len) == 0 && e[len] == ':') {
                                check_error_prefix(e, from_file->files[k], &file_pieces[k]);
                                named = true;
                        }
                }
                FUZZ_CHECK(named, "validation error '%s' names no file read", e);
        }
        check_bounds(from_file, file_pieces, n_pieces);
        if (file_errors.n == 0)
                FUZZ_CHECK(from_file->isolated.kind == CPUS_AUTO || from_file->housekeeping.kind != CPUS_LIST ||
                                   !cpuset_intersects(&from_file->isolated.cpus, &from_file->housekeeping.cpus),
                           "isolated and housekeeping overlap without an error");
        check_pin_matching(from_file);

        for (size_t k = 0; k < n_pieces; k++) {
                piece_done(&pieces[k]);
                piece_done(&file_pieces[k]);
        }
        config_free(from_file);
        config_free(from_memory);
        error_list_done(&file_errors);
        error_list_done(&from_memory_errors);
        return 0;
}
