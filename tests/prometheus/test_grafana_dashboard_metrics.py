#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The Grafana dashboard against a real lowlatd: every lowlatd series conf/grafana/lowlatd.json
queries is in what `lowlatctl metrics` prints, so that renaming a metric without the
dashboard fails here. lowlatd runs on a fake tree (isolated and nohz_full CPUs 2-3, with
/proc/softirqs and /proc/schedstat beside the tree's /proc/interrupts, so that every noise
family has series) on a private bus, with a measurement recorded the way lowlatctl measure
records one (RecordMeasurement, then RecordMeasurementHistogram: the measurement families
exist only while lowlatd keeps one). Series that are not lowlatd's (node_exporter's
node_textfile_mtime_seconds, a recording rule of the user's) are left to
test_grafana_dashboard.py.

Environment: LOWLATD, LOWLATCTL, LOWLATD_SOURCE_ROOT."""

import os
import re
import subprocess
import time

import busctl_harness as b
import grafana_dashboard as g
import lowlat_constants as C
import lowlat_harness as h

NAME, PATH, IFACE = C.BUS_NAME, C.BUS_PATH, C.BUS_INTERFACE

CONFIG = "[daemon]\nscan_interval = 1s\n\n[cpus]\nisolated = 2-3\n"

SOFTIRQS = """\
                    CPU0       CPU1       CPU2       CPU3
          HI:          0          0          0          0
       TIMER:        800        700         30          2
      NET_TX:          0          0          0          0
      NET_RX:         40         30         12          0
       SCHED:          0          0          0          0
         RCU:          9          8          1          9
"""

# The ninth number of a cpu line is the tasks switched in (lib/noise/noise.c).
SCHEDSTAT = """\
version 15
timestamp 4295000000
cpu0 0 0 0 0 0 0 100 200 3000
cpu1 0 0 0 0 0 0 100 200 2000
cpu2 0 0 0 0 0 0 10 20 30
cpu3 0 0 0 0 0 0 10 20 40
"""

# A cyclictest run of CPUs 2 and 3, as lowlatctl measure hands it over: the summary
# (tool, start, duration; per CPU samples, min, avg, p99, max, overflows, whether the
# tool's histogram reached the max) and, for the same start, the cumulative histogram.
START_USEC = 1700000000000000
SUMMARY = ["stta(uttttttb)a(ussst)", "cyclictest", str(START_USEC), "60000000", "2",
           "2", "1000", "1000", "2000", "5000", "12000", "0", "false",
           "3", "1000", "1000", "2500", "7000", "30000", "0", "false", "0"]
HISTOGRAM = ["ta(uatat)", str(START_USEC), "2",
             "2", "4", "1000", "5000", "10000", "20000", "4", "0", "990", "999", "1000",
             "3", "4", "1000", "5000", "10000", "50000", "4", "0", "900", "990", "1000"]


def sample_names(text):
    """The names of a text exposition's samples (a histogram's _bucket, _sum and _count
    each), comments left out."""
    names = set()
    for line in text.splitlines():
        if line and not line.startswith("#"):
            m = re.match(r"[a-zA-Z_:][a-zA-Z0-9_:]*", line)
            if not m:
                raise ValueError("bad sample line %r" % line)
            names.add(m.group(0))
    return names


def run(t):
    b.require_tools()
    ctl = os.environ.get("LOWLATCTL")
    if not ctl or not os.access(ctl, os.X_OK):
        h.skip("LOWLATCTL is not set to the lowlatctl binary")
    h.lowlatd_path()
    h.isolate_from_real_journal()

    wanted = {n: w for n, w in g.dashboard_series(g.load()).items()
              if n.startswith("lowlatd_")}
    t.ok(len(wanted) >= 20, "the dashboard names lowlatd's series (%d)" % len(wanted), repr(sorted(wanted)))

    host = h.FakeHost(ncpus=4, nirqs=20, isolated="2-3", nohz_full="2-3")
    host.write("proc/softirqs", SOFTIRQS)
    host.write("proc/schedstat", SCHEDSTAT)
    bus = b.PrivateBus(host.tmp, [h.policy_path()]).start()
    bc = b.Busctl(bus.address)
    d = h.Daemon(host, CONFIG, env=bus.env())
    d.wait_ready()
    if not t.ok(bc.wait_for_owner(NAME, h.scaled(5), alive=d.alive), "lowlatd is on the private bus",
                d.stderr_tail()):
        return

    p = bc.run("call", NAME, PATH, IFACE, "RecordMeasurement", *SUMMARY)
    t.ok(p.returncode == 0, "RecordMeasurement of a cyclictest run of CPUs 2-3", p.stderr)
    p = bc.run("call", NAME, PATH, IFACE, "RecordMeasurementHistogram", *HISTOGRAM)
    t.ok(p.returncode == 0, "RecordMeasurementHistogram of the same run", p.stderr)

    # The noise series come with lowlatd's first scan of the counters; wait for them
    # rather than for a fixed time.
    env = dict(os.environ, **bus.env())
    deadline = time.monotonic() + h.scaled(15)
    while True:
        p = subprocess.run([ctl, "metrics"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True, env=env, timeout=h.scaled(60))
        printed = sample_names(p.stdout) if p.returncode == 0 else set()
        missing = sorted(set(wanted) - printed)
        if not missing or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    t.ok(p.returncode == 0 and "lowlatd_up 1" in p.stdout, "lowlatctl metrics: lowlatd up",
         "exit %d\n%s%s" % (p.returncode, p.stdout[-3000:], p.stderr[-3000:]))
    t.ok(not missing,
         "every lowlatd series the dashboard queries is in a real lowlatd's lowlatctl metrics",
         "\n".join("%s, queried by %s" % (n, "; ".join(wanted[n])) for n in missing) +
         "\nprinted: %r" % sorted(printed))

    t.stopped_cleanly(d)
    bus.stop()


if __name__ == "__main__":
    h.main(run)
