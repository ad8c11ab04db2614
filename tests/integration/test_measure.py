#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""lowlatctl measure through the real binary, without lowlatd (no bus: the result is just
not recorded), on this host's real CPUs:

- a CPU that is not online: refused with exit 64 and the online list, before any tool runs,
  in one line: the missing bus, which --cpus does not need, is not mentioned (nor in the
  other refusals); a run that goes on says why its result was not recorded;
- the caller's affinity: `taskset -c A lowlatctl measure --cpus B` is refused (exit 77)
  with the reason and the taskset command that works; with A,B it runs cyclictest on B for
  1 s (it only reads timers) and says its thread ran on B;
- a tool whose thread runs on another CPU than the one it measures (a fake cyclictest that
  pins its threads elsewhere, as a confining cgroup makes the real one do): the report says
  so, and the exit status is 77;
- the duration that ran: oslat --duration 1 measures 1 s after a 1 s pre-heat;
- --json: tool, CPUs, duration, per-CPU figures and where the threads ran;
- a user without real-time priority (setpriv to uid 65534): refused before the tool starts.

The cgroup half of the check (cpuset.cpus.effective) is tested on fake trees in
tests/unit/test-measure-placement.c: confining this host's cgroups is not allowed here.

Environment: LOWLATCTL."""

import json
import os
import shutil
import stat
import subprocess

import lowlat_harness as h

EXIT_USAGE, EXIT_NOT_ON_CPUS = 64, 77   # lowlatctl(1)

# A cyclictest that takes measure's command line, starts every thread on CPU WRONG_CPU
# whatever --affinity says, and writes a histogram file of 1000 samples a thread.
FAKE_CYCLICTEST = r'''#!/usr/bin/env python3
import os, sys, threading, time
args = dict(a[2:].split("=", 1) for a in sys.argv[1:] if a.startswith("--") and "=" in a)
n, duration = int(args["threads"]), float(args["duration"])
def body():
    end = time.monotonic() + duration
    while time.monotonic() < end:
        time.sleep(0.001)
# Pinned before the threads start, which inherit it: from birth on the wrong CPU.
os.sched_setaffinity(0, {WRONG_CPU})
threads = [threading.Thread(target=body) for _ in range(n)]
for t in threads:
    t.start()
for t in threads:
    t.join()
with open(args["histfile"], "w") as f:
    f.write("# Histogram\n")
    f.write("000000" + "\t000000" * n + "\n")
    f.write("000001" + "\t000990" * n + "\n")
    f.write("000002" + "\t000010" * n + "\n")
    f.write("# Total:" + " 000001000" * n + "\n")
    f.write("# Min Latencies:" + " 00001" * n + "\n")
    f.write("# Avg Latencies:" + " 00001" * n + "\n")
    f.write("# Max Latencies:" + " 00002" * n + "\n")
    f.write("# Histogram Overflows:" + " 00000" * n + "\n")
'''


def desc(p):
    return "exit %d\nstdout:\n%s\nstderr:\n%s" % (p.returncode, p.stdout[-3000:], p.stderr[-3000:])


def cpu_list(cpus):
    return ",".join(str(c) for c in sorted(cpus))


def online_cpus():
    text = h.read_text("/sys/devices/system/cpu/online").strip()
    cpus = set()
    for part in text.split(","):
        first, _, last = part.partition("-")
        cpus.update(range(int(first), int(last or first) + 1))
    return text, cpus


class World:
    def __init__(self):
        self.ctl = os.environ.get("LOWLATCTL")
        if not self.ctl or not os.access(self.ctl, os.X_OK):
            h.skip("LOWLATCTL is not set or not executable")
        self.tmp = h.make_tempdir()
        # Only the tools named here: measure must never reach rtla, whose timerlat tracer
        # would change this host's global tracing state.
        self.bindir = os.path.join(self.tmp, "bin")
        os.makedirs(self.bindir)
        for tool in ("cyclictest", "oslat"):
            path = shutil.which(tool)
            if path:
                os.symlink(path, os.path.join(self.bindir, tool))

    def env(self, path=None):
        env = dict(os.environ)
        env["PATH"] = path or self.bindir
        env["DBUS_SYSTEM_BUS_ADDRESS"] = "unix:path=" + os.path.join(self.tmp, "no-bus-here")
        return env

    def run(self, *args, prefix=(), path=None):
        return subprocess.run(list(prefix) + [self.ctl, "measure"] + list(args), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, universal_newlines=True, errors="replace",
                              env=self.env(path), timeout=h.scaled(60))

    def has(self, tool):
        return os.path.exists(os.path.join(self.bindir, tool))


def test_offline(t, w):
    text, online = online_cpus()
    absent = max(online) + 4
    for tool in ("cyclictest", "oslat"):
        p = w.run("--cpus", str(absent), "--duration", "1", "--tool", tool)
        t.ok(p.returncode == EXIT_USAGE and "CPU %d is not online" % absent in p.stderr and
             "(online: %s)" % text in p.stderr and "Measuring" not in p.stderr and "libnuma" not in p.stderr and
             len(p.stderr.splitlines()) == 1,
             "measure --tool %s --cpus %d (online %s): exit 64 with the online list alone, no tool started" %
             (tool, absent, text), desc(p))


def affinity_pair(t):
    allowed = sorted(os.sched_getaffinity(0))
    if len(allowed) < 2:
        t.skip("affinity checks", "this process may run on one CPU only")
        return None
    return allowed[0], allowed[1]


def test_affinity(t, w):
    pair = affinity_pair(t)
    if not pair or not shutil.which("taskset"):
        if pair:
            t.skip("affinity checks", "taskset is not installed (util-linux)")
        return
    a, b = pair
    taskset = shutil.which("taskset")
    p = w.run("--cpus", str(b), "--duration", "1s", "--tool", "cyclictest", prefix=(taskset, "-c", str(a)))
    t.ok(p.returncode == EXIT_NOT_ON_CPUS and "may run on CPUs %d only (its affinity)" % a in p.stderr and
         "taskset -c %d lowlatctl measure --cpus %d" % (b, b) in p.stderr and "Measuring" not in p.stderr and
         "system bus" not in p.stderr,
         "taskset -c %d measure --cpus %d: refused before the run (exit 77), saying why and what to run" % (a, b),
         desc(p))
    if not w.has("cyclictest"):
        t.skip("measure on an allowed CPU", "cyclictest is not installed (rt-tests, in tools/packages.sh)")
        return
    p = w.run("--cpus", str(b), "--duration", "1s", "--tool", "cyclictest", prefix=(taskset, "-c", "%d,%d" % (a, b)))
    t.ok(p.returncode == 0 and "Wake-up latency on CPU %d over " % b in p.stdout and
         "measured by cyclictest" in p.stdout and "CPU %d: thread ran on %d\n" % (b, b) in p.stdout and
         "each on its own CPU" in p.stdout,
         "taskset -c %d,%d measure --cpus %d: runs, and its thread ran on %d" % (a, b, b, b), desc(p))
    p = w.run("--cpus", str(b), "--duration", "1s", "--tool", "cyclictest", "--json",
              prefix=(taskset, "-c", "%d,%d" % (a, b)))
    try:
        js = json.loads(p.stdout)
    except ValueError:
        js = {}
    cpu = (js.get("per_cpu") or [{}])[0]
    t.ok(p.returncode == 0 and js.get("tool") == "cyclictest" and js.get("cpus") == str(b) and
         0.5e6 <= js.get("duration_usec", 0) <= 1.5e6 and js.get("wall_clock_usec", 0) >= js["duration_usec"] / 2 and
         js.get("threads_on_their_cpus") is True and len(js["per_cpu"]) == 1 and cpu.get("cpu") == b and
         cpu.get("samples", 0) >= 500 and cpu["min_ns"] <= cpu["avg_ns"] <= cpu["max_ns"] and
         cpu["p99_ns"] <= cpu["max_ns"] and cpu.get("ran_on") == [b],
         "measure --json: tool, CPUs, duration (~1 s), CPU %d's figures, its thread ran on [%d]" % (b, b), desc(p))


def test_misplaced(t, w):
    pair = affinity_pair(t)
    if not pair:
        return
    a, b = pair
    fakedir = os.path.join(w.tmp, "bin-fake")
    os.makedirs(fakedir, exist_ok=True)
    fake = os.path.join(fakedir, "cyclictest")
    with open(fake, "w") as f:
        f.write(FAKE_CYCLICTEST.replace("WRONG_CPU", str(a)))
    os.chmod(fake, os.stat(fake).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    env_path = fakedir + ":" + os.path.dirname(shutil.which("python3"))
    p = w.run("--cpus", str(b), "--duration", "1", "--tool", "cyclictest", path=env_path)
    t.ok(p.returncode == EXIT_NOT_ON_CPUS and "NOT all on the CPUs they measure" in p.stdout and
         "CPU %d: thread ran on %d  <- not its CPU" % (b, a) in p.stdout and "not recorded" in p.stderr,
         "a thread measuring CPU %d seen on CPU %d: the report says so, exit 77" % (b, a), desc(p))
    p = w.run("--cpus", str(b), "--duration", "1", "--tool", "cyclictest", "--json", path=env_path)
    try:
        js = json.loads(p.stdout)
    except ValueError:
        js = {}
    t.ok(p.returncode == EXIT_NOT_ON_CPUS and js.get("threads_on_their_cpus") is False and
         (js.get("per_cpu") or [{}])[0].get("ran_on") == [a],
         "and --json: threads_on_their_cpus false, ran_on [%d]" % a, desc(p))


def test_oslat_duration(t, w):
    pair = affinity_pair(t)
    if not pair:
        return
    if not w.has("oslat"):
        t.skip("oslat's duration", "oslat is not installed (rt-tests, in tools/packages.sh)")
        return
    b = pair[1]
    p = w.run("--cpus", str(b), "--duration", "1", "--tool", "oslat")
    t.ok(p.returncode == 0 and ("over 1.0 s" in p.stdout or "over 0.9 s" in p.stdout or "over 1.1 s" in p.stdout) and
         "warms the CPUs up for 1 s" in p.stdout,
         "oslat --duration 1: the report says 1 s measured (its own Duration), and why the run took longer",
         desc(p))
    lines = p.stderr.splitlines()
    t.ok(len(lines) >= 2 and "cannot connect to the system bus: there is no socket" in lines[-2] and
         "not recorded by lowlatd" in lines[-1],
         "no bus: after the run, why its result was not recorded (the socket that is missing)", desc(p))
    t.ok("(noise not counted: lowlatd is not reachable on the system bus)" in p.stdout and "Noise()" not in p.stdout,
         "no bus: the report says the noise was not counted because lowlatd is not reachable", desc(p))


def test_not_root(t, w):
    """A user without real-time priority is told before any tool starts (before: the tool's
    own 'Unable to change scheduling policy!' after it started)."""
    setpriv = shutil.which("setpriv")
    if not setpriv:
        t.skip("measure as a user", "setpriv is missing")
        return
    os.chmod(w.tmp, 0o755)
    p = w.run("--cpus", "0", "--duration", "1", "--tool", "cyclictest",
              prefix=[setpriv, "--reuid", "65534", "--regid", "65534", "--clear-groups"])
    t.ok(p.returncode == EXIT_NOT_ON_CPUS and "measure needs root" in p.stderr and
         "real-time priority 95" in p.stderr and "Measuring" not in p.stderr and
         "Unable to change scheduling policy" not in p.stderr and "system bus" not in p.stderr,
         "measure as uid 65534: exit 77, 'needs root' in lowlatctl's words, no tool started", desc(p))


def run(t):
    w = World()
    test_not_root(t, w)
    test_offline(t, w)
    test_affinity(t, w)
    test_misplaced(t, w)
    test_oslat_duration(t, w)


if __name__ == "__main__":
    h.main(run)
