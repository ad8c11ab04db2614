/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lowlatctl metrics: a lowlatd_settings series for every kind and state liblowlat knows,
 * counted or 0, plus any a newer lowlatd reports; label values escaped. */
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "setting/setting.h"
#include "tap.h"
#include "basic/util.h"

/* What metrics_print() writes for these settings, newly allocated; aborts on failure (a
 * test with no output to look at must not pass). */
static char *metrics_text(const SettingRow *rows, size_t n) {
        ManagerInfo info = {
                .version = "0.1.0",
                .mode = "enforce",
                .state = "enforcing",
                .last_reload_error = "",
                .cpu_dma_latency_usec = -1,
        };
        SettingList l = { .rows = (SettingRow *) rows, .n = n, .allocated = n };
        char *buf = NULL;
        size_t size = 0;
        FILE *f;
        int r;

        f = open_memstream(&buf, &size);
        if (!f)
                abort();
        r = metrics_print(f, &info, &l, NULL, NULL);
        if (fclose(f) != 0 || r < 0) {
                printf("# metrics_print() failed: %s\n", strerror(r < 0 ? -r : errno));
                abort();
        }
        return buf;
}

/* The value of lowlatd_settings{kind=kind,state=state}, or -1 when there is no such line.
 * kind and state are written as they appear between the quotes (already escaped). */
static long series_value(const char *text, const char *kind, const char *state) {
        _cleanup_free_ char *prefix = strdup_printf("\nlowlatd_settings{kind=\"%s\",state=\"%s\"} ", kind, state);
        const char *p;

        if (!prefix)
                abort();
        p = strstr(text, prefix);
        return p ? strtol(p + strlen(prefix), NULL, 10) : -1;
}

static size_t count_lines_starting(const char *text, const char *start) {
        size_t n = 0;

        for (const char *line = text; line && *line;) {
                if (strncmp(line, start, strlen(start)) == 0)
                        n++;
                line = strchr(line, '\n');
                if (line)
                        line++;
        }
        return n;
}

/* The point of the test: a kind added to liblowlat has its series from the start, so a
 * dashboard or alert on it never sees the series vanish when every setting is ok. */
static void test_every_kind_and_state(void) {
        _cleanup_free_ char *text = metrics_text(NULL, 0);

        for (SettingKind k = 0; k < _SETTING_KIND_MAX; k++) {
                const char *kind = setting_kind_to_string(k);
                _cleanup_free_ char *what = strdup_printf("no settings: kind %s has a 0 in each of the %d states",
                                                          kind, (int) _SETTING_STATE_MAX);
                _cleanup_free_ char *missing = strdup("");

                for (SettingState s = 0; s < _SETTING_STATE_MAX && missing; s++)
                        if (series_value(text, kind, setting_state_to_string(s)) != 0) {
                                char *m = strdup_printf("%s %s", missing, setting_state_to_string(s));
                                free(missing);
                                missing = m;
                        }
                if (!CHECK(missing && !*missing, what ?: kind))
                        printf("#   no 0 series for state(s):%s\n", missing ?: " ?");
        }
        CHECK(count_lines_starting(text, "lowlatd_settings{") == (size_t) _SETTING_KIND_MAX * _SETTING_STATE_MAX,
              "no settings: exactly kinds x states series, nothing else");
}

static void test_counts(void) {
        const SettingRow rows[] = {
                { "sysctl", "net.core.somaxconn", "8192", "8192", "ok" },
                { "sysctl", "net.core.busy_poll", "50", "0", "drifted" },
                { "cpuidle", "cpu3/state2", "disabled", "enabled", "drifted" },
                { "cpuidle", "cpu3/state3", "disabled", "enabled", "drifted" },
                { "nic_qdisc", "eth0", "fq", "fq", "corrected" },
        };
        _cleanup_free_ char *text = metrics_text(rows, ELEMENTSOF(rows));

        CHECK(series_value(text, "sysctl", "ok") == 1 && series_value(text, "sysctl", "drifted") == 1,
              "sysctl: 1 ok, 1 drifted");
        CHECK(series_value(text, "cpuidle", "drifted") == 2 && series_value(text, "cpuidle", "ok") == 0,
              "cpuidle: 2 drifted, 0 ok");
        CHECK(series_value(text, "nic_qdisc", "corrected") == 1, "nic_qdisc: 1 corrected");
        CHECK(series_value(text, "stray_tasks", "failed") == 0, "stray_tasks, no settings: still a 0 series");
        CHECK(count_lines_starting(text, "lowlatd_settings{") == (size_t) _SETTING_KIND_MAX * _SETTING_STATE_MAX,
              "known kinds and states only: exactly kinds x states series");
}

/* A newer lowlatd may report a kind or state this lowlatctl has never heard of. */
static void test_unknown_names(void) {
        const SettingRow rows[] = {
                { "future_kind", "x", "1", "2", "fighting" },
        };
        _cleanup_free_ char *text = metrics_text(rows, ELEMENTSOF(rows));

        CHECK(series_value(text, "future_kind", "fighting") == 1, "an unknown kind and state are counted");
        CHECK(series_value(text, "future_kind", "ok") == 0, "an unknown kind has a series in every known state");
        CHECK(series_value(text, "sysctl", "fighting") == 0, "an unknown state has a series for every known kind");
        CHECK(count_lines_starting(text, "lowlatd_settings{") ==
                      (size_t) (_SETTING_KIND_MAX + 1) * (_SETTING_STATE_MAX + 1),
              "one more kind and one more state: (kinds+1) x (states+1) series");
}

static void test_escaping(void) {
        const SettingRow rows[] = {
                { "a\"b\\c\nd", "x", "1", "1", "ok" },
        };
        _cleanup_free_ char *text = metrics_text(rows, ELEMENTSOF(rows));

        CHECK(series_value(text, "a\\\"b\\\\c\\nd", "ok") == 1, "label values escape \", \\ and line feed");
}

static void test_down(void) {
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);

        if (!f)
                abort();
        metrics_print_down(f);
        if (fclose(f) != 0)
                abort();
        CHECK_STR(buf,
                  "# HELP lowlatd_up Whether lowlatd answered on the system bus.\n"
                  "# TYPE lowlatd_up gauge\n"
                  "lowlatd_up 0\n",
                  "lowlatd not answering: only lowlatd_up 0");
        free(buf);
}

static void test_noise(void) {
        MetricsNoiseSource sources[] = {
                { 3, (char *) "irq", (char *) "42", (char *) "eth0-TxRx-0", 37 },
                { 3, (char *) "timer", (char *) "LOC", (char *) "Local timer interrupts", 1200 },
                { 3, (char *) "ipi", (char *) "RES", (char *) "Rescheduling \"interrupts\"", 4 },
                { 3, (char *) "softirq", (char *) "NET_RX", (char *) "", 12 },
                { 2, (char *) "ctxsw", (char *) "ctxsw", (char *) "", 99 },
        };
        MetricsNoise n = { sources, ELEMENTSOF(sources), CPUSET_EMPTY };
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);

        if (!f || cpuset_add(&n.nohz_full, 3) < 0)
                abort();
        CHECK(metrics_print_noise(f, &n) == 0, "metrics_print_noise()");
        if (fclose(f) != 0)
                abort();
        CHECK(strstr(buf, "# TYPE lowlatd_isolated_cpu_interrupts_total counter\n"), "interrupts: a counter");
        CHECK(strstr(buf, "lowlatd_isolated_cpu_interrupts_total{cpu=\"3\",kind=\"irq\",source=\"42\",name=\"eth0-TxRx-0\"} 37\n"),
              "a device IRQ: cpu, kind, source and name");
        CHECK(strstr(buf, "lowlatd_isolated_cpu_interrupts_total{cpu=\"3\",kind=\"timer\",source=\"LOC\",name=\"Local timer interrupts\"} 1200\n"),
              "the timer");
        CHECK(strstr(buf, "name=\"Rescheduling \\\"interrupts\\\"\"} 4\n"), "an ipi line, its name escaped");
        CHECK(strstr(buf, "lowlatd_isolated_cpu_softirqs_total{cpu=\"3\",type=\"NET_RX\"} 12\n"), "softirqs by type");
        CHECK(!strstr(buf, "lowlatd_isolated_cpu_interrupts_total{cpu=\"3\",kind=\"softirq\""),
              "softirqs are not interrupts");
        CHECK(strstr(buf, "lowlatd_isolated_cpu_context_switches_total{cpu=\"2\"} 99\n"), "context switches");
        CHECK(strstr(buf, "lowlatd_isolated_cpu_nohz_full{cpu=\"2\"} 0\n") &&
                      strstr(buf, "lowlatd_isolated_cpu_nohz_full{cpu=\"3\"} 1\n"),
              "nohz_full per watched CPU");
        cpuset_done(&n.nohz_full);
        free(buf);
}

int main(void) {
        test_noise();
        test_every_kind_and_state();
        test_counts();
        test_unknown_names();
        test_escaping();
        test_down();
        return tap_finish();
}
