/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The pieces every verb of lowlatctl shares beyond basic/cells.h: durations given as
 * options, timestamps and microseconds, and the exit status once printed. */
#include <inttypes.h>
#include <string.h>
#include <time.h>

#include "client.h"
#include "basic/macro.h"
#include "basic/util.h"

int parse_duration_option(const char *option, const char *value, uint64_t min_usec, uint64_t max_usec,
                          uint64_t *ret) {
        _cleanup_free_ char *min = NULL, *max = NULL;
        uint64_t usec;
        int r;

        /* The one reader of durations, the configuration's too: "500ms", "2m", "1h 30min". */
        r = parse_duration_usec(value, &usec);
        if (r == -EINVAL) {
                fprintf(stderr, "lowlatctl: %s: '%s' is not a duration (e.g. 500ms, 10s, 1min)\n", option, value);
                return r;
        }
        if (r >= 0 && usec >= min_usec && usec <= max_usec) {
                *ret = usec;
                return 1;
        }
        /* The bounds as the reader takes them back. */
        min = format_duration_usec(min_usec);
        max = format_duration_usec(max_usec);
        fprintf(stderr, "lowlatctl: %s: '%s' is out of range (%s to %s)\n", option, value, min ?: "?", max ?: "?");
        return -EINVAL;
}

/* Local time as "Tue 2024-05-07 10:00:00 CEST"; NULL on failure. */
char *format_timestamp(uint64_t usec) {
        time_t t = (time_t) (usec / USEC_PER_SEC);
        struct tm tm;

        if (!localtime_r(&t, &tm))
                return NULL;
        for (size_t size = 64; size <= 4096; size *= 2) {
                _cleanup_free_ char *buf = malloc(size);
                if (!buf)
                        return NULL;
                if (strftime(buf, size, "%a %Y-%m-%d %H:%M:%S %Z", &tm) > 0)
                        return TAKE_PTR(buf);
        }
        return NULL;
}

/* Exit status for a verb that printed something: the verdict, unless stdout failed. */
int finish_output(int verdict) {
        if (fflush(stdout) != 0 || ferror(stdout)) {
                fprintf(stderr, "lowlatctl: cannot write to standard output: %s\n", strerror(errno));
                return EXIT_OUTPUT;
        }
        return verdict;
}
/* Nanoseconds as µs: whole when they are (cyclictest's), else with one decimal. */
const char *format_usec(char *buf, size_t size, const char *prefix, uint64_t ns) {
        if (ns % 1000 == 0)
                snprintf(buf, size, "%s%" PRIu64, prefix, ns / 1000);
        else
                snprintf(buf, size, "%s%.1f", prefix, (double) ns / 1000.0);
        return buf;
}

void print_usec(FILE *f, uint64_t ns, int width) {
        char buf[48];
        fprintf(f, "%*s", width, format_usec(buf, sizeof(buf), "", ns));
}
