/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fuzzes the reader of the originals file (setting/originals.c): what a restarted lowlatd
 * reads back to know the values restore puts back, from a file in /run that a crash may
 * have cut short or anyone with root may have edited. The input is the file; when its
 * first byte is odd, the two header lines of this boot and root come first, so that the
 * entries are read at all. Promises checked against a reference reader written from the
 * format (one entry a line, exactly KIND<TAB>OBJECT<TAB>VALUE, after "boot_id ID" and
 * "root PATH"): the entries are exactly the well-formed lines of this boot and root, the
 * first of each object winning; no entry holds a tab or a newline or an empty object; the
 * file is rewritten in the same format, and reading that again gives the same entries. */
#include <fcntl.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"
#include "setting/originals.h"
#include "basic/util.h"

#define ROOT "/fuzz/root"

typedef struct RefEntry {
        SettingKind kind;
        char *object;
        char *value;
} RefEntry;

static char dir[128];
static char file[160];
static char *boot_id;

static void cleanup(void) {
        char tmp[192];

        snprintf(tmp, sizeof(tmp), "%s.new", file);
        unlink(tmp);
        unlink(file);
        rmdir(dir);
}

static void setup(void) {
        char buf[64] = "";
        FILE *f;

        if (boot_id)
                return;
        snprintf(dir, sizeof(dir), "%s/fuzz-originals.XXXXXX", getenv("TMPDIR") ?: "/tmp");
        FUZZ_CHECK(mkdtemp(dir), "mkdtemp %s: %m", dir);
        snprintf(file, sizeof(file), "%s/originals", dir);
        f = fopen("/proc/sys/kernel/random/boot_id", "re");
        FUZZ_CHECK(f && fgets(buf, sizeof(buf), f), "cannot read the boot id");
        fclose(f);
        buf[strcspn(buf, "\n")] = '\0';
        boot_id = strdup(buf);
        FUZZ_CHECK(boot_id, "out of memory");
        atexit(cleanup);
}

static void write_file(const char *data, size_t size) {
        int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

        FUZZ_CHECK(fd >= 0, "cannot write %s: %m", file);
        FUZZ_CHECK(size == 0 || write(fd, data, size) == (ssize_t) size, "short write to %s", file);
        close(fd);
}

static bool starts_with(const char *s, const char *prefix) {
        return strncmp(s, prefix, strlen(prefix)) == 0;
}

static const RefEntry *ref_find(const RefEntry *e, size_t n, SettingKind kind, const char *object) {
        for (size_t i = 0; i < n; i++)
                if (e[i].kind == kind && streq(e[i].object, object))
                        return &e[i];
        return NULL;
}

/* The format, read a line at a time by index; a line is text up to its first NUL, as C
 * strings carry it. Returns the entries in file order. */
static size_t reference(const char *text, size_t size, RefEntry **ret) {
        RefEntry *e = calloc(size / 4 + 1, sizeof(RefEntry)); /* "k\to\t\n" is the shortest entry */
        size_t n = 0, start = 0;
        bool boot_ok = false, root_ok = false;

        FUZZ_CHECK(e, "out of memory");
        while (start < size) {
                size_t end = start;
                while (end < size && text[end] != '\n')
                        end++;
                char *line = strndup(text + start, end - start); /* stops at a NUL too */
                FUZZ_CHECK(line, "out of memory");
                start = end + 1;

                if (starts_with(line, "boot_id ")) {
                        boot_ok = streq(line + 8, boot_id);
                        free(line);
                        continue;
                }
                if (starts_with(line, "root ")) {
                        root_ok = streq(line + 5, ROOT);
                        free(line);
                        continue;
                }
                if (!boot_ok || !root_ok) {
                        free(line);
                        break;
                }
                size_t len = strlen(line), t1 = 0, t2;
                while (t1 < len && line[t1] != '\t')
                        t1++;
                for (t2 = t1 + 1; t2 < len && line[t2] != '\t'; t2++)
                        ;
                if (t1 >= len || t2 >= len) {
                        free(line);
                        continue;
                }
                line[t1] = line[t2] = '\0';
                SettingKind kind = setting_kind_from_string(line);
                const char *object = line + t1 + 1, *value = line + t2 + 1;
                if (kind >= 0 && *object && !strchr(value, '\t') && !ref_find(e, n, kind, object)) {
                        e[n] = (RefEntry) { kind, strdup(object), strdup(value) };
                        FUZZ_CHECK(e[n].object && e[n].value, "out of memory");
                        n++;
                }
                free(line);
        }
        if (!boot_ok || !root_ok) {
                for (size_t i = 0; i < n; i++) {
                        free(e[i].object);
                        free(e[i].value);
                }
                n = 0;
        }
        *ret = e;
        return n;
}

static void check_same(const Originals *o, const RefEntry *e, size_t n, const char *when) {
        FUZZ_CHECK(o->n == n, "%s: %zu entries, the reference has %zu", when, o->n, n);
        for (size_t i = 0; i < n; i++) {
                const char *v = originals_get(o, e[i].kind, e[i].object);
                FUZZ_CHECK(v && streq(v, e[i].value), "%s: %s '%s' is '%s', the reference says '%s'", when,
                           setting_kind_to_string(e[i].kind), e[i].object, v ?: "(none)", e[i].value);
        }
        for (size_t i = 0; i < o->n; i++) {
                const OriginalEntry *x = o->entries[i];
                FUZZ_CHECK(*x->object && !strpbrk(x->object, "\t\n") && !strpbrk(x->value, "\t\n"),
                           "%s: an entry with an empty object, a tab or a newline", when);
        }
}

/* The rewritten file: the two headers, then one well-formed line per entry. */
static void check_rewritten(size_t n) {
        _cleanup_free_ char *text = NULL, *head = strdup_printf("boot_id %s\nroot " ROOT "\n", boot_id);
        size_t size = 0, lines = 0;
        FILE *f = fopen(file, "re");

        FUZZ_CHECK(f && head, "cannot read %s back", file);
        FUZZ_CHECK(getdelim(&text, &size, '\0', f) >= 0 || feof(f), "cannot read %s back", file);
        fclose(f);
        FUZZ_CHECK(text && starts_with(text, head), "the rewritten file does not start with its headers");
        for (const char *p = text + strlen(head); *p; p++)
                lines += *p == '\n';
        FUZZ_CHECK(lines == n, "the rewritten file has %zu entry lines for %zu entries", lines, n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_free_ char *input = NULL;
        RefEntry *ref = NULL;
        Originals *o = NULL;
        size_t n_ref, len;
        int r;

        setup();
        if (size == 0)
                return 0;
        if (data[0] & 1)
                input = strdup_printf("boot_id %s\nroot " ROOT "\n", boot_id);
        else
                input = strdup("");
        FUZZ_CHECK(input, "out of memory");
        len = strlen(input);
        input = realloc(input, len + size);
        FUZZ_CHECK(input, "out of memory");
        memcpy(input + len, data + 1, size - 1);
        len += size - 1;

        write_file(input, len);
        n_ref = reference(input, len, &ref);

        r = originals_open(dir, ROOT, &o);
        FUZZ_CHECK(r == 0, "originals_open() returned %d", r);
        check_same(o, ref, n_ref, "read");
        originals_free(o);

        check_rewritten(n_ref);
        r = originals_open(dir, ROOT, &o);
        FUZZ_CHECK(r == 0, "originals_open() of its own file returned %d", r);
        check_same(o, ref, n_ref, "read again");
        originals_free(o);

        for (size_t i = 0; i < n_ref; i++) {
                free(ref[i].object);
                free(ref[i].value);
        }
        free(ref);
        return 0;
}
