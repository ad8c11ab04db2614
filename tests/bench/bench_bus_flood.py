#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A flood on the bus, in figures for docs/performance.md: the run of
tests/integration/test_bus_flood.py (CLIENTS unprivileged connections, CALLS calls each of
every member open to them, never read; then READS root Get(State) reads on one connection)
against a fake host of BENCH_BUS_IRQS IRQs (default 10,000). Prints the calls sent,
lowlatd's and dbus-daemon's CPU seconds, the root reads' p50/p99 and lowlatd's CPU when
the clients are gone; with LOWLATD_BEFORE naming another lowlatd binary (a build before
the bus limits, say), the same run against it first, for the ratio.
Run: meson test -C build --benchmark --suite bench -v bus_flood   (as root)."""
import os

import lowlat_harness as h
import test_bus_flood as flood


class Printer:
    """What flood_run() says, as plain lines; a failed check is a FAIL line."""

    def __init__(self):
        self.failed = []

    def ok(self, cond, what, diag=None):
        if not cond:
            self.failed.append(what)
            print("FAIL: %s" % what)
            if diag:
                print("  " + str(diag).replace("\n", "\n  "))
        return bool(cond)

    def note(self, text):
        print(text)

    def stopped_cleanly(self, daemon, expect=0, what="lowlatd"):
        self.ok(daemon.stop(expect=None) == expect, "%s exits %d" % (what, expect))
        daemon.kill()


def line(label, f):
    print("%s: %d IRQs, %d clients sent %d calls; lowlatd %.2f s CPU, dbus-daemon %.2f s, in %.1f s; "
          "root State read p50 %.1f ms, p99 %.1f ms; lowlatd after the clients %.3f CPU"
          % (label, f["irqs"], f["clients"], f["sent"], f["cpu_flood_s"], f["bus_cpu_s"], f["flood_wall_s"],
             f["p50"] * 1000, f["p99"] * 1000, f["idle_cpu"]))


def run():
    nirqs = int(os.environ.get("BENCH_BUS_IRQS", "10000"))
    before = os.environ.get("LOWLATD_BEFORE")
    if before:
        current = os.environ["LOWLATD"]
        os.environ["LOWLATD"] = before
        f = flood.flood_run(Printer(), nirqs)
        line("before", f)
        os.environ["LOWLATD"] = current
    p = Printer()
    f = flood.flood_run(p, nirqs)
    line("lowlatd", f)
    return 1 if p.failed else 0


if __name__ == "__main__":
    h.bench_main(run)
