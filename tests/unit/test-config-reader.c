/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lowlatd.conf: the one reader (lib/config/reader.c): sections and keys, comments, long lines, every
 * error of a file in one pass, what the fuzzer found. */
#include <fcntl.h>
#include <ftw.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "config/config.h"
#include "host/ethtool.h"
#include "faketree.h"
#include "basic/macro.h"
#include "tap.h"
#include "basic/util.h"

#include "config-fixture.h"

static void test_sections_and_keys(void) {
        check_error("[daemon]\nmode = enforce\n[bogus]\nkey = 1\n", 3, "unknown section [bogus]",
                    "unknown section named on its line, its keys not reported again");
        check_error("[daemon]\nfoo = 1\n", 2, "unknown key 'foo' in section [daemon]", "unknown key in [daemon]");
        check_error("[cpus]\n\nfoo = 1\n", 3, "unknown key 'foo' in section [cpus]", "unknown key in [cpus]");
        check_error("# c\n[irq]\nfoo = 1\n", 3, "unknown key 'foo' in section [irq]", "unknown key in [irq]");
        check_error("[pm]\nfoo = 1\n", 2, "unknown key 'foo' in section [pm]", "unknown key in [pm]");
        check_error("[sysctl]\nfoo = 1\n", 2, "'foo' is not a sysctl name", "one-component key in [sysctl]");
        check_error("mode = observe\n[daemon]\n", 1, "outside of any section", "key before any section");
        check_error("[daemon]\nMode = observe\n", 2, "unknown key 'Mode'", "keys are case-sensitive");
}

static void test_comments_and_lines(void) {
        {
                _cleanup_config_ Config *c = parse_ok("# top\n; also\n[daemon]\n  # indented comment\n"
                                                      "mode = observe # inline\nscan_interval = 5s ; inline\n",
                                                      "comments of every kind");
                CHECK(c->mode == DAEMON_MODE_OBSERVE, "'#' inline comment stripped");
                CHECK(c->scan_interval_usec == 5 * USEC_PER_SEC, "';' inline comment stripped");
        }
        {
                _cleanup_config_ Config *c = parse_ok("[daemon] # the daemon\nmode = observe\n", "comment after a section");
                CHECK(c->mode == DAEMON_MODE_OBSERVE, "section with a trailing comment still opens it");
        }
        {
                _cleanup_config_ Config *c = parse_ok("[daemon]\nmode = observe\n    scan_interval = 5s\n",
                                                      "indented key");
                CHECK(c->mode == DAEMON_MODE_OBSERVE, "indented line is not appended to the previous value");
                CHECK(c->scan_interval_usec == 5 * USEC_PER_SEC, "indented line is its own key");
        }
        check_error("[daemon]\nmode = observe\n    more words\n", 3, NULL, "indented line without '=' is an error, not a continuation");
        check_error("[daemon]\nmode observe\n", 2, "key = value", "line without '=' rejected");
        check_error("[daemon]\nmode: observe\n", 2, NULL, "'key: value' rejected");
        check_error("[daemon]\n= observe\n", 2, "key", "line without a key rejected");
        {
                /* the keys under a broken header are skipped, not reported as outside a section */
                _cleanup_error_list_ ErrorList errors = ERROR_LIST_EMPTY;
                _cleanup_config_ Config *c = parse("[daemon\nmode = observe\n", &errors);
                if (!CHECK(errors.n == 1 && starts_with(errors.items[0], NAME ":1: ") && strstr(errors.items[0], "]"),
                           "section without ']' is one error, at line 1"))
                        print_errors(&errors);
                CHECK(c->mode == DAEMON_MODE_ENFORCE, "keys under a broken header are not applied");
        }
        {
                /* nor do they fall into the section before the broken header */
                _cleanup_error_list_ ErrorList errors = ERROR_LIST_EMPTY;
                _cleanup_config_ Config *c = parse("[daemon]\n[pm] junk\nmode = observe\n", &errors);
                if (!CHECK(errors.n == 1 && starts_with(errors.items[0], NAME ":2: "),
                           "text after a header is one error, at its line"))
                        print_errors(&errors);
                CHECK(c->mode == DAEMON_MODE_ENFORCE, "keys under it do not land in the previous section");
        }
        check_error("[daemon] junk\n", 1, "junk", "text after a section header rejected");
        {
                _cleanup_config_ Config *c = parse_ok("[daemon]\r\nmode = observe\r\n", "CRLF line ends");
                CHECK(c->mode == DAEMON_MODE_OBSERVE, "CRLF line ends are white space");
        }
        {
                _cleanup_config_ Config *c = parse_ok("[daemon]\nmode = observe", "no final newline");
                CHECK(c->mode == DAEMON_MODE_OBSERVE, "last line without a newline is read");
        }
}

static void test_long_lines(void) {
        char text[2200], what[128], path[CONFIG_LINE_MAX + 1];
        const char *head = "[sysfs]\n/sys/";
        size_t around = strlen("/sys/") + strlen(" = 1");

        memset(path, 'a', sizeof(path) - 1);
        path[sizeof(path) - 1] = '\0';
        /* exactly CONFIG_LINE_MAX characters: accepted */
        snprintf(text, sizeof(text), "%s%.*s = 1\n", head, (int) (CONFIG_LINE_MAX - around), path);
        {
                _cleanup_config_ Config *c = parse_ok(text, "a line of CONFIG_LINE_MAX characters is accepted");
                CHECK(c->n_sysfs == 1 && strlen(c->sysfs[0].path) + strlen(" = 1") == CONFIG_LINE_MAX,
                      "the longest line's key is whole");
        }
        /* one more: rejected at line 2, and the next line still counts as line 3 */
        snprintf(text, sizeof(text), "%s%.*s = 1\nfoo = 1\n", head, (int) (CONFIG_LINE_MAX + 1 - around), path);
        {
                _cleanup_error_list_ ErrorList errors = ERROR_LIST_EMPTY;
                _cleanup_config_ Config *c = parse(text, &errors);
                bool ok = errors.n == 2 && starts_with(errors.items[0], NAME ":2: ") &&
                          strstr(errors.items[0], "too long") && starts_with(errors.items[1], NAME ":3: ");
                if (!CHECK(ok, "a line one character over is rejected at line 2, the next line is line 3"))
                        print_errors(&errors);
                CHECK(c->n_sysfs == 0, "nothing of the long line is kept");
        }
        /* far longer than the reader's buffer: not split into several lines */
        {
                char *p = text;
                p += sprintf(p, "[daemon]\nmode = observe ");
                memset(p, 'x', 2000);
                p[2000] = '\0';
                strcat(text, "\n[bogus]\n");
                _cleanup_error_list_ ErrorList errors = ERROR_LIST_EMPTY;
                _cleanup_config_ Config *c = parse(text, &errors);
                bool ok = errors.n == 2 && starts_with(errors.items[0], NAME ":2: ") &&
                          starts_with(errors.items[1], NAME ":3: ");
                snprintf(what, sizeof(what), "a 2000-character line is one error at line 2; the next is line 3");
                if (!CHECK(ok, what))
                        print_errors(&errors);
                CHECK(c->mode == DAEMON_MODE_ENFORCE, "the long line is not applied");
        }
}

static void test_many_errors(void) {
        _cleanup_error_list_ ErrorList errors = ERROR_LIST_EMPTY;
        _cleanup_config_ Config *c = parse("[daemon]\n"               /* 1 */
                                           "mode = loud\n"            /* 2 */
                                           "scan_interval = 1ms\n"    /* 3 */
                                           "[cpus]\n"                 /* 4 */
                                           "isolated = x\n"           /* 5 */
                                           "[pm]\n"                   /* 6 */
                                           "governor = Bad!\n"        /* 7 */
                                           "[nope]\n"                 /* 8 */
                                           "[sysctl]\n"               /* 9 */
                                           "net..x = 1\n"             /* 10 */
                                           "no equals sign\n"         /* 11 */
                                           "vm.swappiness = 10\n",    /* 12 */
                                           &errors);
        static const char *const want[] = { NAME ":2: ", NAME ":3: ", NAME ":5: ", NAME ":7: ",
                                            NAME ":8: ", NAME ":10: ", NAME ":11: " };
        bool ok = errors.n == ELEMENTSOF(want);

        for (size_t i = 0; ok && i < ELEMENTSOF(want); i++)
                ok = starts_with(errors.items[i], want[i]);
        if (!CHECK(ok, "every error of a file is reported in one pass, in line order"))
                print_errors(&errors);
        CHECK(c->n_sysctls == 1, "good lines among bad ones still apply");
}

/* Found by the config fuzzer, when libinih split the lines: kept as they still must hold. */
static void test_fuzzer_findings(void) {
        check_error("[daemon]\nmode ;= observe\n", 2, "not a key",
                    "' ;' before '=' is reported, not dropped as a comment");
        check_error("\xef\xbb\xbf[sysctls] ; key=value\nnet.core.busy_poll = 50\n", 1, "unknown section [sysctls]",
                    "a byte order mark does not hide a misspelt section");
        {
                _cleanup_config_ Config *c = parse_ok("\xef\xbb\xbf[daemon]\nmode = observe\n",
                                                      "a byte order mark before a good first line is fine");
                CHECK(c->mode == DAEMON_MODE_OBSERVE, "... and the keys after it apply");
        }
        check_error("[daemon ;x]\nmode = observe\n", 1, "unknown section",
                    "a comment inside a header is an unknown section, its keys skipped");
        check_error("[daemon]\nmode: observe\n", 2, "expected 'key = value'", "':' is not an assignment");
}

int main(void) {
        test_sections_and_keys();
        test_comments_and_lines();
        test_long_lines();
        test_many_errors();
        test_fuzzer_findings();
        return tap_finish();
}
