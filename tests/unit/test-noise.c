/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The noise counters (lib/noise/noise.c): /proc/interrupts, /proc/softirqs, /proc/schedstat and
 * /proc/stat parsed incrementally, rates between scans, counters going backwards, CPUs
 * coming online, hostile text, and the rate-limited alerts. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "basic/macro.h"
#include "faketree.h"
#include "noise/noise.h"
#include "tap.h"
#include "basic/util.h"

#define SEC USEC_PER_SEC

static const char x86[] =
        "           CPU0       CPU1       CPU2       CPU3       \n"
        "  0:         45          0          0          0   IO-APIC   2-edge      timer\n"
        "  1:          0       9213          0          0   IO-APIC   1-edge      i8042\n"
        " 25:          7          0          0          0   IO-APIC   6-edge    \n"
        "131:   12345678          0         17          0  PCI-MSIX-0000:03:00.0   0-edge      eth0-TxRx-0\n"
        "132:          0   87654321          0          3  PCI-MSIX-0000:03:00.0   1-edge      eth0-TxRx-1\n"
        "NMI:          3          4          5          6   Non-maskable interrupts\n"
        "LOC:    1234567    2345678        250        120   Local timer interrupts\n"
        "RES:         10         11         12          0   Rescheduling interrupts\n"
        "ERR:          0\n"
        "MIS:          0\n";

static const char softirqs[] =
        "                    CPU0       CPU1       CPU2       CPU3       \n"
        "          HI:          0          0          0          0\n"
        "       TIMER:     732911     586642         40          2\n"
        "      NET_RX:       7754      10019          3          0\n";

static Noise *watch(unsigned a, unsigned b) {
        unsigned cpus[] = { a, b };
        Noise *n = NULL;
        if (noise_new(cpus, 2, &n) < 0)
                abort();
        return n;
}

static NoiseCounterRow *row(Noise *n, const char *source) {
        size_t it = 0;
        NoiseCounterRow *r;
        while ((r = noise_next_row(n, &it)))
                if (streq(r->source, source))
                        return r;
        return NULL;
}

static uint64_t count(Noise *n, const char *source, size_t cpu_index) {
        NoiseCounterRow *r = row(n, source);
        return r && r->cells[cpu_index].present ? r->cells[cpu_index].count : UINT64_MAX;
}

static int parse(Noise *n, NoiseFormat f, const char *text) {
        return noise_parse(n, f, text, strlen(text));
}

static void test_parse(void) {
        Noise *n = watch(2, 3);
        NoiseCounterRow *r;

        CHECK(parse(n, NOISE_FORMAT_INTERRUPTS, x86) == 0, "x86 /proc/interrupts parses");
        CHECK(n->files[NOISE_FORMAT_INTERRUPTS].bad_lines == 0, "no bad lines");
        CHECK(count(n, "131", 0) == 17 && count(n, "132", 1) == 3, "device IRQ counts of CPUs 2 and 3");
        r = row(n, "131");
        CHECK(r && r->kind == NOISE_IRQ, "a numbered line is an irq source");
        CHECK_STR(r ? r->description : NULL, "eth0-TxRx-0", "its description is the action name (lib/host/interrupts.c)");
        CHECK_STR(row(n, "25") ? row(n, "25")->description : NULL, "", "an IRQ with no action has no description");
        r = row(n, "LOC");
        CHECK(r && r->kind == NOISE_TIMER && r->cells[0].count == 250, "LOC is the timer, 250 on CPU 2");
        CHECK_STR(r ? r->description : NULL, "Local timer interrupts", "LOC's text");
        CHECK(row(n, "RES") && row(n, "RES")->kind == NOISE_IPI && row(n, "NMI")->kind == NOISE_IPI,
              "RES and NMI are ipi sources");
        CHECK(!row(n, "ERR") && !row(n, "MIS"), "ERR and MIS, machine-wide totals, are no source");
        CHECK(parse(n, NOISE_FORMAT_INTERRUPTS,
                    "           CPU0       CPU1       CPU2       CPU3       \n"
                    "IPI0:        10         11         12         13       Rescheduling interrupts\n"
                    "Err:          0\n") == 0 &&
                      count(n, "IPI0", 0) == 12 && row(n, "IPI0")->kind == NOISE_IPI && !row(n, "Err"),
              "arm64: IPI0 is an ipi source, Err a machine-wide total");
        CHECK(parse(n, NOISE_FORMAT_SOFTIRQS, softirqs) == 0 && count(n, "TIMER", 0) == 40 &&
                      row(n, "NET_RX")->kind == NOISE_SOFTIRQ,
              "softirqs per type");
        noise_free(n);
}

/* The same values with the columns 12 digits wide: the fixed layout fails, the slow path
 * reads them. */
static void test_wide_counts(void) {
        Noise *n = watch(1, 2);
        const char *text = "           CPU0       CPU1       CPU2\n"
                           " 42: 123456789012          5          6   PCI-MSI 1-edge  eth1\n"
                           " 43:          1 99999999999          7   PCI-MSI 2-edge  eth2\n"
                           " 44: 18446744073709551615 1 2   PCI-MSI 3-edge  eth3\n";

        CHECK(parse(n, NOISE_FORMAT_INTERRUPTS, text) == 0, "wide counts parse");
        CHECK(count(n, "42", 0) == 5 && count(n, "42", 1) == 6, "a wide count before the watched columns");
        CHECK(count(n, "43", 0) == 99999999999ULL && count(n, "43", 1) == 7, "a wide count in a watched column");
        CHECK(count(n, "44", 0) == 1 && count(n, "44", 1) == 2, "2^64-1 before the watched columns");
        CHECK_STR(row(n, "43") ? row(n, "43")->description : NULL, "eth2", "the name after wide counts");
        noise_free(n);
}

static void test_hostile(void) {
        Noise *n = watch(0, 1);
        static const char *const bad[] = {
                "",
                "garbage\n",
                "\n\n\n",
                "CPU0 CPU1x\n 1: 2 3\n",
                "           CPUx\n",
        };
        char *big;
        size_t len = 0;

        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                CHECK(parse(n, NOISE_FORMAT_INTERRUPTS, bad[i]) == -EBADMSG, "text with no CPU header is an error");
        CHECK(parse(n, NOISE_FORMAT_INTERRUPTS,
                    "           CPU0       CPU1\n"
                    " 42: 99999999999999999999999          1   PCI-MSI eth0\n" /* > 2^64 */
                    " 43:\n"                                                  /* truncated */
                    " 44:          5\n"                                        /* shorter than the header */
                    "xx\n"
                    " 45:          1          2          3          4          5   more columns than the header\n"
                    " 46: 12ab 3\n"
                    ":          1          2\n"
                    " 47:          8          9") == 0,
              "hostile lines: the file still parses");
        CHECK(!row(n, "42"), "a count above 2^64 is a bad line, not a wrapped number");
        CHECK(row(n, "43") && !row(n, "43")->cells[0].present, "a truncated line has no counts");
        CHECK(count(n, "44", 0) == 5 && !row(n, "44")->cells[1].present, "a short line has the counts it has");
        CHECK(count(n, "45", 1) == 2, "more counts than the header: the header's columns are read");
        CHECK(!row(n, "46"), "'12ab' is a bad line");
        CHECK(count(n, "47", 1) == 9, "a last line with no newline");
        CHECK(n->files[NOISE_FORMAT_INTERRUPTS].bad_lines == 4, "four bad lines counted");
        {
                char m[64];
                snprintf(m, sizeof(m), "bad_lines = %u", n->files[NOISE_FORMAT_INTERRUPTS].bad_lines);
                CHECK(true, m);
        }

        /* A thousand columns, watched CPUs 0 and 1 in columns 998 and 999. */
        big = malloc(1024 * 1024);
        len += (size_t) sprintf(big + len, "    ");
        for (unsigned c = 0; c < 1000; c++)
                len += (size_t) sprintf(big + len, "CPU%-8u", (c + 2) % 1000);
        len += (size_t) sprintf(big + len, "\n  7:");
        for (unsigned c = 0; c < 1000; c++)
                len += (size_t) sprintf(big + len, " %10u", c);
        len += (size_t) sprintf(big + len, "  PCI-MSI 7-edge  big\n");
        CHECK(noise_parse(n, NOISE_FORMAT_INTERRUPTS, big, len) == 0, "a thousand columns parse");
        CHECK(count(n, "7", 0) == 998 && count(n, "7", 1) == 999, "CPUs found by the header, not by position");
        /* Too many columns: an error, never a crash. */
        len = (size_t) sprintf(big, " ");
        for (unsigned c = 0; c < 9000; c++)
                len += (size_t) sprintf(big + len, "CPU%u ", c);
        big[len++] = '\n';
        CHECK(noise_parse(n, NOISE_FORMAT_INTERRUPTS, big, len) == -EBADMSG, "9000 columns are refused");
        free(big);

        CHECK(parse(n, NOISE_FORMAT_SCHEDSTAT, "version 15\ncpu0 1 2\ncpu1 0 0 1 2 3 4 5 6 77\ncpuX\n") == 0 &&
                      count(n, "ctxsw", 1) == 77 && n->files[NOISE_FORMAT_SCHEDSTAT].bad_lines == 2,
              "schedstat: a short and a garbled cpu line are bad, a good one is read");
        noise_free(n);
}

static void test_incremental(void) {
        Noise *n = watch(2, 3);
        char *copy = strdup(x86);
        NoiseCounterRow *r131;

        CHECK(parse(n, NOISE_FORMAT_INTERRUPTS, x86) == 0, "first read");
        r131 = row(n, "131");
        /* The same text: every line is recognised, none parsed; the rows stay. */
        CHECK(parse(n, NOISE_FORMAT_INTERRUPTS, copy) == 0 && row(n, "131") == r131 && count(n, "131", 0) == 17,
              "an unchanged read keeps the rows and counts");
        /* One count changes in place (same width). */
        *strstr(copy, "        17  ") = ' ';
        strstr(copy, "        17  ")[0] = ' ';
        memcpy(strstr(copy, "        17  ") + 8, "19", 2);
        CHECK(parse(n, NOISE_FORMAT_INTERRUPTS, copy) == 0 && count(n, "131", 0) == 19 && row(n, "131") == r131,
              "a changed line is parsed again: 19");
        free(copy);
        noise_free(n);

        /* A read that names IRQ 42 twice (the fuzzer's find): the row holds the second
         * line's count; in the next read the first line is unchanged, the second gone, and
         * the count must be the first line's, not the one left from before. */
        n = watch(0, 1);
        CHECK(parse(n, NOISE_FORMAT_INTERRUPTS, "   CPU0 CPU1\n 42:          1          2  a\n 42:          5          6  a\n") == 0 &&
                      count(n, "42", 1) == 6,
              "a source named twice: the last line's counts");
        CHECK(parse(n, NOISE_FORMAT_INTERRUPTS, "   CPU0 CPU1\n 42:          1          2  a\n") == 0 && count(n, "42", 1) == 2,
              "the next read parses its unchanged line again");
        noise_free(n);
}

static void test_rates(void) {
        Noise *n = watch(2, 3);
        const char *h = "           CPU0       CPU1       CPU2       CPU3\n";
        char text[1024];

#define PUBLISH(c2, c3) (snprintf(text, sizeof(text), "%s 42:          0          0 %10u %10u  PCI-MSI eth0\n", h, \
                                  (unsigned) (c2), (unsigned) (c3)),                                             \
                         parse(n, NOISE_FORMAT_INTERRUPTS, text))
        CHECK(PUBLISH(100, 5) == 0, "read");
        noise_scan(n, 10 * SEC);
        CHECK(n->interval_usec == 0 && noise_cell_rate(n, &row(n, "42")->cells[0]) == 0, "first scan: no interval, no rate");
        PUBLISH(150, 5);
        noise_scan(n, 12 * SEC);
        CHECK(n->interval_usec == 2 * SEC && row(n, "42")->cells[0].delta == 50 && noise_cell_rate(n, &row(n, "42")->cells[0]) == 25.0,
              "50 in 2 s: 25/s");
        PUBLISH(20, 5); /* offline and back, or wrapped */
        noise_scan(n, 14 * SEC);
        CHECK(noise_cell_rate(n, &row(n, "42")->cells[0]) == 0 && row(n, "42")->cells[0].delta == 0,
              "a counter that goes backwards: rate 0, not negative or huge");
        PUBLISH(30, 5);
        noise_scan(n, 15 * SEC);
        CHECK(noise_cell_rate(n, &row(n, "42")->cells[0]) == 10.0, "then 10 from the new baseline in 1 s");
        /* CPU 3 goes offline (its column goes away) and comes back with a count since boot. */
        snprintf(text, sizeof(text), "           CPU0       CPU1       CPU2\n 42:          0          0         30  PCI-MSI eth0\n");
        parse(n, NOISE_FORMAT_INTERRUPTS, text);
        noise_scan(n, 16 * SEC);
        CHECK(!row(n, "42")->cells[1].present && row(n, "42")->cells[0].count == 30, "CPU 3's column is gone, CPU 2's read");
        PUBLISH(31, 900000);
        noise_scan(n, 17 * SEC);
        CHECK(row(n, "42")->cells[1].present && noise_cell_rate(n, &row(n, "42")->cells[1]) == 0 && noise_cell_rate(n, &row(n, "42")->cells[0]) == 1.0,
              "CPU 3 back online: no rate from its count since boot");
        PUBLISH(31, 900004);
        noise_scan(n, 18 * SEC);
        CHECK(noise_cell_rate(n, &row(n, "42")->cells[1]) == 4.0, "then its rate");
        /* A new line after the first read: all its counts are new. */
        snprintf(text, sizeof(text), "%s 42:          0          0         31     900004  PCI-MSI eth0\n"
                                     " 77:          0          0          6          0  PCI-MSI nvme0q1\n", h);
        parse(n, NOISE_FORMAT_INTERRUPTS, text);
        noise_scan(n, 20 * SEC);
        CHECK(row(n, "77") && row(n, "77")->cells[0].delta == 6 && noise_cell_rate(n, &row(n, "77")->cells[0]) == 3.0,
              "a new IRQ line: its 6 interrupts are its first interval's");
        PUBLISH(31, 900004);
        CHECK(!row(n, "77"), "a line that vanishes is dropped");
#undef PUBLISH
        noise_free(n);
}

typedef struct Seen {
        unsigned n;
        NoiseAlert last;
} Seen;

static void on_alert(const NoiseAlert *a, void *userdata) {
        Seen *s = userdata;
        s->n++;
        s->last = *a;
}

static void test_alerts(void) {
        Noise *n = watch(2, 3);
        NoiseAlertPolicy policy = { 10, 60 * SEC, NOISE_BUSY_SHARE_MIN };
        CPUSet nohz = CPUSET_EMPTY;
        Seen seen = {};
        char text[1024];
        const char *h = "           CPU0       CPU1       CPU2       CPU3\n";

#define PUBLISH(irq, loc, idle2)                                                                                      \
        do {                                                                                                          \
                snprintf(text, sizeof(text), "%s 42:          0          0 %10u          0  PCI-MSI eth0\n"          \
                                             "LOC:          0          0 %10u %10u   Local timer interrupts\n", h,  \
                         (unsigned) (irq), (unsigned) (loc), (unsigned) (loc));                                      \
                parse(n, NOISE_FORMAT_INTERRUPTS, text);                                                              \
                snprintf(text, sizeof(text), "cpu  1 2 3 4 5\ncpu2 1 0 1 %u 0 0 0\ncpu3 1 0 1 %u 0\n",             \
                         (unsigned) (idle2), (unsigned) (loc));                                                       \
        } while (0)
#define SCAN(t)                                                                           \
        do {                                                                              \
                noise_scan(n, (t));                                                       \
                if (noise_wants_stat(n, &policy))                                          \
                        noise_parse_stat(n, text, strlen(text), 100);                     \
                noise_check_alerts(n, &policy, (t), on_alert, &seen);                     \
        } while (0)

        cpuset_add(&nohz, 2);
        cpuset_add(&nohz, 3);
        noise_set_nohz_full(n, &nohz);
        PUBLISH(5, 100, 1000);
        SCAN(10 * SEC);
        CHECK(seen.n == 0, "the first scan alerts on nothing (counts since boot)");
        CHECK(!noise_wants_stat(n, &policy), "no CPU ticks above the limit: /proc/stat is not read");
        PUBLISH(9, 100, 1000);
        SCAN(20 * SEC);
        CHECK(seen.n == 1 && seen.last.kind == NOISE_ALERT_DEVICE_IRQ && seen.last.cpu == 2 && seen.last.count == 4 &&
                      streq(seen.last.row->source, "42") && seen.last.suppressed == 0,
              "4 interrupts of IRQ 42 on CPU 2: one alert");
        PUBLISH(12, 100, 1000);
        SCAN(30 * SEC);
        PUBLISH(20, 100, 1000);
        SCAN(40 * SEC);
        CHECK(seen.n == 1, "within alert_interval: held back");
        PUBLISH(21, 100, 1000);
        SCAN(80 * SEC);
        CHECK(seen.n == 2 && seen.last.count == 1 && seen.last.suppressed == 2 && seen.last.suppressed_count == 11,
              "after it: one alert, with the 2 held back and their 11 interrupts");
        /* Ticks: 300/s on CPU 2 (busy: idle stands still) and CPU 3 (idle all along: its idle
         * time, here LOC's value in USER_HZ ticks, grows faster than the clock). */
        seen.n = 0;
        PUBLISH(21, 3100, 1000);
        SCAN(90 * SEC);
        if (!CHECK(seen.n == 0, "the first interval above the limit only starts the busy measure"))
                printf("#   %u alerts, last kind %d cpu %u count %" PRIu64 "\n", seen.n, seen.last.kind, seen.last.cpu, seen.last.count);
        PUBLISH(21, 6100, 1000);
        SCAN(100 * SEC);
        CHECK(seen.n == 1 && seen.last.kind == NOISE_ALERT_TICK && seen.last.cpu == 2 && seen.last.rate == 300.0,
              "busy nohz_full CPU 2 at 300 ticks/s: a tick alert; idle CPU 3: none");
        noise_set_nohz_full(n, NULL);
        PUBLISH(21, 9100, 1000);
        SCAN(110 * SEC);
        CHECK(seen.n == 1, "a CPU that is not nohz_full: no tick alert");
        policy.interval_usec = 0;
        PUBLISH(30, 9100, 1000);
        SCAN(500 * SEC);
        CHECK(seen.n == 1, "alert_interval = off: no alerts");
#undef PUBLISH
#undef SCAN
        cpuset_done(&nohz);
        noise_free(n);
}

/* A file larger than the most noise reads is not read, and said so: the counts stay the
 * last good read's; a file of exactly that size is read. Through a fake tree, as the
 * daemon reads it (a kept fd, pread from 0). */
static void check_limit(const Host *h, const char *root) {
        _cleanup_(noise_freep) Noise *n = watch(2, 3);
        size_t size = sizeof(x86) - 1;
        _cleanup_free_ char *big = NULL;

        n->file_max = size;
        CHECK(noise_read(n, h, 1 * SEC) == 0 && !n->unreadable && count(n, "LOC", 0) == 250,
              "a /proc/interrupts of exactly file_max bytes is read");
        big = malloc(size + 2);
        if (!big)
                abort();
        memcpy(big, x86, size);
        memcpy(big + size, "\n", 2);
        faketree_write(root, "proc/interrupts", big); /* in place: the kept fd reads it */
        CHECK(noise_read(n, h, 2 * SEC) == -EFBIG, "one byte more: -EFBIG");
        CHECK(n->unreadable && strstr(n->unreadable, "/proc/interrupts is larger than the ") &&
                      strstr(n->unreadable, " bytes lowlatd reads"),
              "unreadable says which file and the limit");
        CHECK(count(n, "LOC", 0) == 250, "the counts stay the last good read's");
        n->file_max = 256 * 1024 * 1024;
        CHECK(noise_read(n, h, 3 * SEC) == 0 && !n->unreadable, "read again under the limit: readable");
}

static void test_limit(void) {
        _cleanup_(noise_freep) Noise *fresh = watch(2, 3);
        _cleanup_(host_freep) Host *h = NULL;
        char root[64];

        CHECK(fresh->file_max == 256 * 1024 * 1024, "a new Noise reads at most 256 MiB");
        faketree_mkdtemp(root, sizeof(root), "test-noise");
        faketree_write(root, "proc/interrupts", x86);
        faketree_write(root, "proc/softirqs", softirqs);
        if (CHECK(host_open(root, &h) == 0, "the fake tree opens"))
                check_limit(h, root);
        faketree_remove(root);
}

static void test_kind_names(void) {
        CHECK_STR(noise_kind_to_string(NOISE_IRQ), "irq", "irq");
        CHECK_STR(noise_kind_to_string(NOISE_CTXSW), "ctxsw", "ctxsw");
        CHECK(noise_kind_to_string(_NOISE_KIND_MAX) == NULL, "out of range: NULL");
        CHECK(noise_kind_from_string("softirq") == NOISE_SOFTIRQ, "softirq");
}

int main(void) {
        test_parse();
        test_wide_counts();
        test_hostile();
        test_incremental();
        test_rates();
        test_alerts();
        test_kind_names();
        test_limit();
        return tap_finish();
}
