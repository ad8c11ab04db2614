/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gatecycle CYCLES HOLD_MS CPU...: opens lowlatd's noise gate (lib/noise/gate.c: the perf
 * rings on the interrupt tracepoints) on the given CPUs, holds it HOLD_MS, drains it, closes
 * it, CYCLES times, printing each cycle's open and close times. Each opening and closing
 * turns the tracepoints on and off, which patches kernel text on every CPU: the VM suite's
 * probe of how its emulator copes (tests/e2e/gate-cycle.sh). Not for the build host.
 * Exit: 0 every cycle done, 1 an open failed, 2 bad arguments. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "host/host.h"
#include "noise/gate.h"
#include "basic/util.h"

static double now_s(void) {
        struct timespec t;

        clock_gettime(CLOCK_MONOTONIC, &t);
        return (double) t.tv_sec + (double) t.tv_nsec / 1e9;
}

static int parse_count(const char *s, unsigned max, unsigned *ret) {
        unsigned v;

        if (parse_unsigned(s, &v) < 0 || v > max)
                return -EINVAL;
        *ret = v;
        return 0;
}

int main(int argc, char **argv) {
        _cleanup_(host_freep) Host *h = NULL;
        _cleanup_free_ unsigned *cpus = NULL;
        unsigned cycles, hold_ms;
        double worst_open = 0, worst_close = 0;
        int r;

        if (argc < 4 || parse_count(argv[1], 1000000, &cycles) < 0 || parse_count(argv[2], 60000, &hold_ms) < 0) {
                fprintf(stderr, "usage: gatecycle CYCLES HOLD_MS CPU...\n");
                return 2;
        }
        cpus = calloc((size_t) argc - 3, sizeof(unsigned));
        if (!cpus)
                return 1;
        for (int i = 3; i < argc; i++)
                if (parse_count(argv[i], 8191, &cpus[i - 3]) < 0) {
                        fprintf(stderr, "gatecycle: bad CPU '%s'\n", argv[i]);
                        return 2;
                }
        r = host_open("/", &h);
        if (r < 0) {
                fprintf(stderr, "gatecycle: /: %s\n", strerror(-r));
                return 1;
        }
        for (unsigned c = 0; c < cycles; c++) {
                _cleanup_free_ uint64_t *timer = calloc((size_t) argc - 3, sizeof(uint64_t));
                NoiseGate *g = NULL;
                const char *event = NULL;
                double t0 = now_s(), t_open, t_close;

                if (!timer)
                        return 1;
                r = noise_gate_open(h, cpus, (size_t) argc - 3, &g, &event);
                if (r < 0) {
                        fprintf(stderr, "gatecycle: cycle %u: open: %s%s%s\n", c, event ?: "", event ? ": " : "",
                                strerror(-r));
                        return 1;
                }
                t_open = now_s() - t0;
                usleep(hold_ms * 1000);
                (void) noise_gate_drain(g, timer);
                t0 = now_s();
                noise_gate_free(g);
                t_close = now_s() - t0;
                worst_open = MAX(worst_open, t_open);
                worst_close = MAX(worst_close, t_close);
                printf("cycle %u: open %.3f s, close %.3f s\n", c, t_open, t_close);
                fflush(stdout);
        }
        printf("%u cycles: worst open %.3f s, worst close %.3f s\n", cycles, worst_open, worst_close);
        return 0;
}
