/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fuzzes [sysfs]'s parsers (sysfs.c): the path and value rules against references written
 * from lowlatd.conf(5), and the kernel's bracketed choice lists ("always madvise [never]")
 * against a reference tokenizer, with what must hold of a selected word: offered by the
 * text, one of its words, insensitive to white space, and found again in a list rebuilt
 * around it. Input: one text, tried as a path, as a value and as a choice list. */
#include <ctype.h>
#include <limits.h>
#include <stdbool.h>

#include "config/config.h"
#include "fuzz.h"
#include "host/sysfs.h"
#include "basic/util.h"

#define WORDS_MAX 64

/* lowlatd.conf(5): absolute, under /sys, printable without blanks or backslash, components
 * non-empty and neither "." nor "..", each '[' closed by a ']' (not the very next
 * character: "[]" opens a set holding ']') in the same component. */
/* lowlatd.conf(5)'s list of files that act when written: refused by name, the last
 * component as written (a pattern that matches one is refused at expansion instead). */
static bool reference_name_acts(const char *name, size_t n) {
        static const char *const acts[] = {
                "bind",   "delete", "delete_device", "drivers_probe", "eject", "new_device", "new_id", "remove",
                "remove_id", "rescan", "reset", "scan", "trigger_now", "uevent", "unbind",
        };

        for (size_t i = 0; i < sizeof(acts) / sizeof(acts[0]); i++)
                if (strlen(acts[i]) == n && strncmp(acts[i], name, n) == 0)
                        return true;
        return false;
}

static bool reference_path_ok(const char *path) {
        size_t len = strlen(path);

        if (len >= PATH_MAX || strncmp(path, "/sys/", 5) != 0)
                return false;
        for (const char *p = path; *p; p++)
                if (!isgraph((unsigned char) *p) || *p == '\\')
                        return false;
        for (const char *c = path + 5;;) {
                size_t n = strcspn(c, "/");

                if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
                        return false;
                for (size_t i = 0; i < n; i++) {
                        size_t j;

                        if (c[i] != '[')
                                continue;
                        for (j = i + 2; j < n && c[j] != ']'; j++)
                                ;
                        if (j >= n)
                                return false;
                        i = j;
                }
                if (c[n] == '\0')
                        return !reference_name_acts(c, n);
                c += n + 1;
        }
}

/* 1 to SYSFS_VALUE_MAX characters, printable or tab, no bracket. */
static bool reference_value_ok(const char *value) {
        size_t len = strlen(value);

        if (len == 0 || len > SYSFS_VALUE_MAX)
                return false;
        for (const char *p = value; *p; p++)
                if ((!isprint((unsigned char) *p) && *p != '\t') || *p == '[' || *p == ']')
                        return false;
        return true;
}

typedef struct Words {
        char *word[WORDS_MAX];
        size_t n;
} Words;

static void words_done(Words *w) {
        for (size_t i = 0; i < w->n; i++)
                free(w->word[i]);
        w->n = 0;
}

/* The white-space separated words of text (isspace() as the C locale has it); false when
 * there are more than WORDS_MAX. */
static bool split_words(const char *text, Words *ret) {
        *ret = (Words) {};
        for (const char *p = text;;) {
                size_t n;

                while (*p && isspace((unsigned char) *p))
                        p++;
                if (!*p)
                        return true;
                for (n = 0; p[n] && !isspace((unsigned char) p[n]); n++)
                        ;
                if (ret->n == WORDS_MAX) {
                        words_done(ret);
                        return false;
                }
                ret->word[ret->n++] = fuzz_strndup((const uint8_t *) p, n);
                p += n;
        }
}

static bool bracket_free(const char *s, size_t n) {
        return !memchr(s, '[', n) && !memchr(s, ']', n);
}

/* A choice list: words of which exactly one is "[w]" with w bracket-free and non-empty,
 * and the others bracket-free. Returns that word's index, -1 when text is none. */
static ssize_t reference_selected(const Words *w) {
        ssize_t selected = -1;

        for (size_t i = 0; i < w->n; i++) {
                const char *s = w->word[i];
                size_t n = strlen(s);

                if (n >= 3 && s[0] == '[' && s[n - 1] == ']' && bracket_free(s + 1, n - 2)) {
                        if (selected >= 0)
                                return -1;
                        selected = (ssize_t) i;
                } else if (!bracket_free(s, n))
                        return -1;
        }
        return w->n > 0 ? selected : -1;
}

static void check_choices(const char *text) {
        char *copy = fuzz_strndup((const uint8_t *) text, strlen(text)), *again, *rebuilt, *words;
        Words w;
        ssize_t want;
        bool selected;

        if (!split_words(text, &w)) {
                free(copy);
                return; /* too many words for the reference; the parser has no limit */
        }
        want = reference_selected(&w);
        selected = sysfs_choice_select(copy);
        FUZZ_CHECK(selected == (want >= 0), "sysfs_choice_select() says %d, the reference %zd", selected, want);
        if (!selected) {
                FUZZ_CHECK(streq(copy, text), "a text that is no choice list was changed to '%s'", copy);
                words_done(&w);
                free(copy);
                return;
        }
        FUZZ_CHECK(strlen(copy) + 2 == strlen(w.word[want]) && strncmp(copy, w.word[want] + 1, strlen(copy)) == 0,
                   "selected '%s', the reference '%s'", copy, w.word[want]);
        FUZZ_CHECK(sysfs_choice_offers(text, copy), "the text does not offer its own selected word '%s'", copy);
        for (size_t i = 0; i < w.n; i++)
                FUZZ_CHECK(sysfs_choice_offers(text, w.word[i]) == bracket_free(w.word[i], strlen(w.word[i])),
                           "offers('%s') is wrong", w.word[i]);

        words = sysfs_choice_words(text);
        FUZZ_CHECK(words && word_list_contains(words, copy) && bracket_free(words, strlen(words)),
                   "the words '%s' lack '%s' or keep a bracket", words ?: "(null)", copy);

        /* White space does not matter, and a list rebuilt around the word selects it. */
        again = normalize_whitespace(text);
        FUZZ_CHECK(again && sysfs_choice_select(again) && streq(again, copy), "normalised, it selects '%s'",
                   again ?: "(null)");
        rebuilt = strdup_printf("%s [%s]", words, copy);
        FUZZ_CHECK(rebuilt, "out of memory");
        /* The rebuilt list names the word twice, bare and bracketed: still one selection. */
        FUZZ_CHECK(sysfs_choice_select(rebuilt) && streq(rebuilt, copy), "'%s [%s]' selects '%s'", words, copy, rebuilt);

        free(rebuilt);
        free(again);
        free(words);
        words_done(&w);
        free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *text = fuzz_strndup(data, size);
        const char *problem;

        problem = sysfs_path_problem(text);
        FUZZ_CHECK(!problem == reference_path_ok(text), "path '%s': %s, the reference %s", text, problem ?: "accepted",
                   reference_path_ok(text) ? "accepts it" : "does not");
        FUZZ_CHECK(!problem || utf8_is_valid(problem), "the reason is not text");
        if (!problem)
                FUZZ_CHECK(!strstr(text, "/../") && !strstr(text, "//"), "accepted '%s'", text);
        (void) sysfs_path_is_pattern(text);

        problem = sysfs_value_problem(text);
        FUZZ_CHECK(!problem == reference_value_ok(text), "value '%s': %s", text, problem ?: "accepted");

        check_choices(text);
        free(text);
        return 0;
}
