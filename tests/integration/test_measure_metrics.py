#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A measurement into monitoring, through a real lowlatd on a private bus: lowlatctl measure
--cpus 0-1 runs a fake cyclictest that replays a report cyclictest wrote on a real host
(tests/unit/measure-data/cyclictest-cpus-0-1.hist: a 200 us histogram, with overflows up
to 1.3 ms), its threads on their CPUs and asleep, so that nothing runs at real-time
priority here. Then:

- lowlatctl metrics: promtool check metrics accepts it; lowlatd_measurement_latency_seconds
  per CPU has cumulative buckets ending in +Inf, the counts the report's histogram gives
  below each bound (computed here on their own), no bound between the histogram's reach
  and the max (unknown there), +Inf = _count = the samples; the max, the start and the
  duration match LastMeasurement;
- measure --json: the same buckets;
- LastMeasurementHistogram on the bus, tied to LastMeasurement's start;
- RecordMeasurementHistogram's refusals (InvalidArgs: another run's start, a CPU not
  measured, unsorted bounds, decreasing counts, one count short, 65 bounds, more samples
  than measured; AccessDenied for uid 65534), the kept histogram untouched by each;
- a new RecordMeasurement drops the histogram: metrics then has the max and no histogram.

Environment: LOWLATD, LOWLATCTL, LOWLATD_SOURCE_ROOT."""

import json
import os
import re
import shutil
import stat
import subprocess

import busctl_harness as b
import lowlat_constants as C
import lowlat_harness as h
from test_lowlatctl import PromError, parse_prometheus, prom_series, prom_value, promtool_check_metrics

NAME, PATH, IFACE = C.BUS_NAME, C.BUS_PATH, C.BUS_INTERFACE
HISTOGRAM = "lowlatd_measurement_latency_seconds"
# lowlatctl/measure-buckets.c's bounds, in ns.
BOUNDS_NS = [us * 1000 for us in (1, 2, 3, 5, 7, 10, 15, 20, 30, 50, 70, 100, 150, 200, 300, 500, 700, 1000,
                                  2000, 5000, 10000)]

# cyclictest as measure runs it, replaying REPORT: one thread per CPU of --affinity, each
# pinned to its own CPU and asleep for --duration, then the histogram file.
FAKE_CYCLICTEST = r'''#!/usr/bin/env python3
import os, shutil, sys, threading, time
args = dict(a[2:].split("=", 1) for a in sys.argv[1:] if a.startswith("--") and "=" in a)
cpus = [int(c) for c in args["affinity"].split(",")] if "-" not in args["affinity"] else \
    list(range(int(args["affinity"].split("-")[0]), int(args["affinity"].split("-")[1]) + 1))
duration = float(args["duration"])
def body(cpu):
    os.sched_setaffinity(0, {cpu})
    end = time.monotonic() + duration
    while time.monotonic() < end:
        time.sleep(0.01)
threads = [threading.Thread(target=body, args=(c,)) for c in cpus]
for t in threads:
    t.start()
for t in threads:
    t.join()
shutil.copyfile(REPORT, args["histfile"])
'''

CONFIG = "[daemon]\nscan_interval = 1s\n\n[cpus]\nisolated = 2-3\n"


def desc(p):
    return "exit %d\nstdout:\n%s\nstderr:\n%s" % (p.returncode, p.stdout[-3000:], p.stderr[-3000:])


def report_path():
    return os.path.join(h.source_root(), "tests", "unit", "measure-data", "cyclictest-cpus-0-1.hist")


def parse_report(text):
    """Per column: (histogram counts per µs, overflows, max in ns), as cyclictest writes them."""
    rows, overflows, maxima = [], [], []
    for line in text.splitlines():
        if re.match(r"\d+\s", line):
            rows.append([int(v) for v in line.split()[1:]])
        elif line.startswith("# Histogram Overflows:"):
            overflows = [int(v) for v in line.split(":")[1].split()]
        elif line.startswith("# Max Latencies:"):
            maxima = [int(v) * 1000 for v in line.split(":")[1].split()]
    if not rows or not overflows or not maxima:
        raise RuntimeError("%s is not a cyclictest histogram file" % report_path())
    return [([r[i] for r in rows], overflows[i], maxima[i]) for i in range(len(overflows))]


def expected_buckets(hist, overflows, max_ns, samples):
    """{bound: samples below it} for the bounds that can be known: below the histogram's reach
    (its 1 µs buckets summed), at or above the max (every sample), and anywhere when
    nothing overflowed."""
    reach, out = len(hist) * 1000, {}
    for bound in BOUNDS_NS:
        if bound >= max_ns:
            out[bound] = samples
        elif bound <= reach:
            out[bound] = sum(hist[:bound // 1000])
        elif overflows == 0:
            out[bound] = sum(hist)
    return out


class World:
    def __init__(self, t):
        self.t = t
        self.ctl = os.environ.get("LOWLATCTL")
        if not self.ctl or not os.access(self.ctl, os.X_OK):
            h.skip("LOWLATCTL is not set or not executable")
        online = h.read_text("/sys/devices/system/cpu/online").strip()
        if not re.match(r"0-([1-9]|\d\d+)", online):
            h.skip("CPUs 0 and 1 are not both online (%s): the recorded report is of two CPUs" % online)
        self.sanitizer_reports = []
        self.host = h.FakeHost(ncpus=4, nirqs=10, isolated="2-3")
        self.bindir = os.path.join(self.host.tmp, "bin")
        os.makedirs(self.bindir)
        fake = os.path.join(self.bindir, "cyclictest")
        h.write_text(fake, FAKE_CYCLICTEST.replace("REPORT", repr(report_path())))
        os.chmod(fake, os.stat(fake).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        self.bus = b.PrivateBus(self.host.tmp, [h.policy_path()]).start()
        self.bc = b.Busctl(self.bus.address)
        self.d = h.Daemon(self.host, CONFIG, env=self.bus.env())
        self.d.wait_ready()
        self.up = t.ok(self.bc.wait_for_owner(NAME, h.scaled(5), alive=self.d.alive), "lowlatd is on the bus",
                       self.d.stderr_tail())

    def run(self, *args):
        env = dict(os.environ, PATH=self.bindir + ":" + os.environ.get("PATH", "/usr/bin:/bin"), **self.bus.env())
        p = subprocess.run([self.ctl] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True, errors="replace", env=env, timeout=h.scaled(60))
        self.sanitizer_reports.extend("lowlatctl %s: %s" % (" ".join(args), l) for l in p.stderr.splitlines()
                                      if any(pat in l for pat in h.SANITIZER_PATTERNS))
        return p


def histogram_of(m, cpu):
    """{le: value} of the _bucket series of cpu, the _sum and the _count."""
    buckets = {}
    for labels, v in prom_series(m, HISTOGRAM + "_bucket").items():
        d = dict(labels)
        if d.get("cpu") == str(cpu):
            buckets[d["le"]] = v
    key = {"cpu": str(cpu), "tool": "cyclictest"}
    return buckets, prom_value(m, HISTOGRAM + "_sum", **key), prom_value(m, HISTOGRAM + "_count", **key)


def check_bucket_order(t, text, cpu):
    """The _bucket lines of cpu in the order printed: le ascending, counts never decreasing,
    +Inf last."""
    les = re.findall(r'(?m)^%s_bucket\{cpu="%d",tool="cyclictest",le="([^"]+)"\} (\d+)$' % (HISTOGRAM, cpu), text)
    bounds = [float(le) for le, _ in les[:-1]]
    counts = [int(c) for _, c in les]
    t.ok(les and les[-1][0] == "+Inf" and bounds == sorted(set(bounds)) and counts == sorted(counts),
         "CPU %d: buckets in ascending le, cumulative, ending in +Inf" % cpu, "%r" % les)


def test_metrics(t, w):
    p = w.run("measure", "--cpus", "0-1", "--duration", "1", "--json")
    if p.returncode == 77 and "cannot run" in p.stderr:
        t.skip("measure on CPUs 0-1", "this process may not run there: %s" % p.stderr.strip())
        return None
    t.ok(p.returncode == 0 and "not recorded" not in p.stderr, "measure --cpus 0-1 with the replayed report: "
         "exit 0, recorded", desc(p))
    try:
        js = json.loads(p.stdout)
    except ValueError:
        js = {}
    typ, lm = w.bc.get_property(NAME, PATH, IFACE, "LastMeasurement")
    t.ok(lm[0] == "cyclictest" and [c[0] for c in lm[3]] == [0, 1], "LastMeasurement: cyclictest on CPUs 0 and 1",
         repr(lm))
    samples = {c[0]: c[1] for c in lm[3]}
    report = parse_report(h.read_text(report_path()))
    want = {cpu: expected_buckets(hist, over, mx, samples.get(cpu, 0))
            for cpu, (hist, over, mx) in enumerate(report)}
    got_json = {c["cpu"]: {b["le_ns"]: b["count"] for b in c.get("buckets", [])} for c in js.get("per_cpu", [])}
    t.ok(got_json == want, "measure --json: each CPU's buckets, the report's counts below each bound",
         "got %r\nwant %r" % (got_json, want))

    typ, hv = w.bc.get_property(NAME, PATH, IFACE, "LastMeasurementHistogram")
    t.ok(typ == "(ta(uatat))" and hv[0] == lm[1] and
         {r[0]: dict(zip(r[1], r[2])) for r in hv[1]} == want,
         "LastMeasurementHistogram: the run's start, per CPU the bounds and cumulative counts", repr((typ, hv)))

    p = w.run("metrics")
    t.ok(p.returncode == 0, "metrics exits 0", desc(p))
    ok, why = promtool_check_metrics(p.stdout)
    t.ok(ok, "promtool check metrics accepts metrics with the measurement", why + "\n" + p.stdout[-4000:])
    try:
        m = parse_prometheus(p.stdout)
    except PromError as e:
        t.ok(False, "metrics parses strictly", "%s\n%s" % (e, p.stdout[-4000:]))
        return lm
    t.ok(m["type"].get(HISTOGRAM) == "histogram" and
         m["type"].get("lowlatd_measurement_latency_max_seconds") == "gauge" and
         m["type"].get("lowlatd_measurement_timestamp_seconds") == "gauge" and
         m["type"].get("lowlatd_measurement_duration_seconds") == "gauge",
         "the measurement families and their types", repr(m["type"]))
    for cpu, (hist, over, mx) in enumerate(report):
        buckets, total, count = histogram_of(m, cpu)
        finite = {round(float(le) * 1e9): v for le, v in buckets.items() if le != "+Inf"}
        t.ok(finite == {k: float(v) for k, v in want[cpu].items()},
             "CPU %d: a bucket for each bound that can be known, the report's count below it" % cpu,
             "got %r\nwant %r" % (sorted(finite.items()), sorted(want[cpu].items())))
        t.ok(over > 0 and not any(len(hist) * 1000 < bound < mx for bound in finite),
             "CPU %d: no bound between the histogram's reach (%d us) and the max (%d us)" %
             (cpu, len(hist), mx // 1000), repr(sorted(finite)))
        t.ok(buckets.get("+Inf") == samples[cpu] == count,
             "CPU %d: +Inf and _count are its %d samples" % (cpu, samples[cpu]), repr((buckets.get("+Inf"), count)))
        avg = lm[3][cpu][3]
        t.ok(total is not None and abs(total - avg * samples[cpu] / 1e9) < 1e-6,
             "CPU %d: _sum is avg x samples in seconds" % cpu, repr(total))
        t.ok(prom_value(m, "lowlatd_measurement_latency_max_seconds", cpu=str(cpu), tool="cyclictest") ==
             lm[3][cpu][5] / 1e9, "CPU %d: lowlatd_measurement_latency_max_seconds is its max" % cpu)
        check_bucket_order(t, p.stdout, cpu)
    ts = prom_value(m, "lowlatd_measurement_timestamp_seconds", tool="cyclictest")
    dur = prom_value(m, "lowlatd_measurement_duration_seconds", tool="cyclictest")
    t.ok(ts is not None and abs(ts - lm[1] / 1e6) < 1e-6 and dur is not None and abs(dur - lm[2] / 1e6) < 1e-6,
         "lowlatd_measurement_timestamp_seconds and _duration_seconds: the run's start and length", repr((ts, dur)))
    return lm


def histogram_args(start, rows):
    """busctl's arguments for RecordMeasurementHistogram(start, rows)."""
    out = ["ta(uatat)", str(start), str(len(rows))]
    for cpu, bounds, counts in rows:
        out += [str(cpu), str(len(bounds))] + [str(x) for x in bounds] + [str(len(counts))] + \
               [str(x) for x in counts]
    return out


def test_refusals(t, w, lm):
    start = lm[1]
    before = w.bc.get_property(NAME, PATH, IFACE, "LastMeasurementHistogram")
    cases = (
        ("another run's start", start + 1, [(0, [1000], [0])], "Not the histogram"),
        ("a CPU not measured", start, [(7, [1000], [0])], "CPU 7 was not measured"),
        ("unsorted bounds", start, [(0, [2000, 1000], [0, 0])], "ascending"),
        ("decreasing counts", start, [(0, [1000, 2000], [5, 4])], "decrease"),
        ("one count short", start, [(0, [1000, 2000], [0])], "one count per bound"),
        ("65 bounds", start, [(0, list(range(1000, 66000, 1000)), [0] * 65)], "too many"),
        ("more samples than measured", start, [(0, [1000], [10 ** 9])], "more samples"),
        ("a CPU twice", start, [(0, [1000], [0]), (0, [1000], [0])], "given twice"),
    )
    for what, s, rows, reason in cases:
        p = w.bc.run("call", NAME, PATH, IFACE, "RecordMeasurementHistogram", *histogram_args(s, rows))
        t.ok(p.returncode != 0 and reason in p.stderr,
             "RecordMeasurementHistogram with %s: refused, saying why (%s)" % (what, reason), desc(p))
    nobody = b.Busctl(w.bus.address, user=b.NOBODY)
    p = nobody.run("call", NAME, PATH, IFACE, "RecordMeasurementHistogram", *histogram_args(start, [(0, [1000], [0])]))
    t.ok(p.returncode != 0 and ("AccessDenied" in p.stderr or "denied" in p.stderr.lower()),
         "RecordMeasurementHistogram is refused to uid 65534", desc(p))
    t.ok(w.bc.get_property(NAME, PATH, IFACE, "LastMeasurementHistogram") == before,
         "the kept histogram is untouched by every refusal")


def test_new_summary_drops_histogram(t, w):
    p = w.bc.run("call", NAME, PATH, IFACE, "RecordMeasurement", "stta(uttttttb)a(ussst)", "oslat", "1700000000000000",
                 "1000000", "1", "1", "100", "1000", "2000", "3000", "50000", "0", "0", "0")
    t.ok(p.returncode == 0, "RecordMeasurement of another run (oslat, by busctl)", desc(p))
    typ, hv = w.bc.get_property(NAME, PATH, IFACE, "LastMeasurementHistogram")
    t.ok(hv == [0, []], "LastMeasurementHistogram is empty again: the histogram was the last run's", repr(hv))
    p = w.run("metrics")
    ok, why = promtool_check_metrics(p.stdout)
    t.ok(p.returncode == 0 and ok and HISTOGRAM + "_bucket" not in p.stdout and
         re.search(r'(?m)^lowlatd_measurement_latency_max_seconds\{cpu="1",tool="oslat"\} 0\.000050000$', p.stdout),
         "metrics: the new run's max (50 us), no histogram, and promtool accepts it", desc(p) + "\n" + why)


def run(t):
    b.require_tools()
    h.lowlatd_path()
    h.isolate_from_real_journal()
    w = World(t)
    if not w.up:
        return
    p = w.run("metrics")
    t.ok(p.returncode == 0 and "lowlatd_measurement_" not in p.stdout,
         "before any measurement: no lowlatd_measurement_ series", desc(p))
    lm = test_metrics(t, w)
    if lm:
        test_refusals(t, w, lm)
        test_new_summary_drops_histogram(t, w)
    t.ok(not w.sanitizer_reports, "lowlatctl: no sanitizer reports", "\n".join(w.sanitizer_reports[:20]))
    t.stopped_cleanly(w.d)
    w.bus.stop()


if __name__ == "__main__":
    h.main(run)
