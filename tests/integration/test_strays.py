#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""[cpus] evict_strays = yes against the real kernel, without touching this machine.

The test re-runs itself as PID 1 of new PID, mount and network namespaces (unshare
--pid --fork --mount-proc --net, mounts private), so lowlatd --root / sees only the
test's own tasks in /proc. Everything else lowlatd could write under --root / is a fake
tree bind-mounted over the real paths first: /proc/irq, /proc/sys,
/sys/devices/system/cpu (two CPUs, CPU 1 isolated) and /dev/cpu_dma_latency; the config
sets no sysctl, governor or latency. The moves themselves are real sched_setaffinity()
calls on the test's sleepers, from CPUs 0-1 to CPU 0.

Checked: a stray process and all its threads are moved to housekeeping; a [process]
application and PID 1 (this test) are left alone; a task re-pinned with taskset is moved
back within a few 200 ms scans; observe mode reports and moves nothing; --root on a fake
tree is unsupported and moves nothing. Kernel threads are not visible in a new PID
namespace: their exclusion is tested on a fake /proc in tests/unit/test-setting-strays.c. With
kthreads = housekeeping as well, lowlatd finds no kernel thread here and touches none (the
proc connector, which a new network namespace lacks, is said to be unavailable once).

Hostile comm (#24 item 3): a stray that renames itself through /proc/self/comm to a byte
that is not UTF-8, ESC, U+009B (CSI) and U+202E, seen by lowlatd --observe on a private
bus with a fake journal socket: ListSettings answers, lowlatctl list, status and list
--json print valid UTF-8 with no control or bidi character and name the task, its comm
made printable ASCII ('?' for each byte outside it); the drift's journal entry has no such
character in any field. Without dbus-daemon, busctl or LOWLATCTL those checks are skipped."""

import json
import os
import re
import shutil
import subprocess
import sys
import time

import busctl_harness as b
import lowlat_harness as h
import test_hostile_names as hn

INNER_ENV = "LOWLAT_STRAYS_NAMESPACE"

CONFIG = """\
[daemon]
scan_interval = 200ms

[cpus]
isolated = 1
housekeeping = 0
evict_strays = yes
kthreads = housekeeping

[process "latapp"]
"""

# 11 bytes of a comm's 15: a byte that is not UTF-8, ESC, U+009B (CSI), U+202E.
HOSTILE_COMM = b"c\xff\x1b[2J\xc2\x9b\xe2\x80\xae"
# What lowlatd shows of it: every byte outside printable ASCII as '?'.
SHOWN_COMM = "c??[2J?????"

# A process with two more threads, allowed on CPUs 0-1; optionally renamed first (the
# name's bytes as they are: os.fsencode undoes the argument's decoding).
SLEEPER = """\
import os, sys, threading, time
if len(sys.argv) > 1:
    with open("/proc/self/comm", "wb") as f:
        f.write(os.fsencode(sys.argv[1]))
os.sched_setaffinity(0, {0, 1})
for _ in range(2):
    threading.Thread(target=time.sleep, args=(600,), daemon=True).start()
time.sleep(600)
"""


def allowed(pid):
    """{tid: Cpus_allowed_list} of every thread of pid; raises when a thread's status has
    none (an empty answer would pass "every thread of PID 1 is left alone")."""
    out = {}
    for tid in os.listdir("/proc/%d/task" % pid):
        with open("/proc/%d/task/%s/status" % (pid, tid)) as f:
            for line in f:
                if line.startswith("Cpus_allowed_list:"):
                    out[int(tid)] = line.split(":", 1)[1].strip()
        if int(tid) not in out:
            raise ValueError("no Cpus_allowed_list in /proc/%d/task/%s/status" % (pid, tid))
    return out


def all_on(pid, cpus):
    a = allowed(pid)
    return len(a) == 3 and all(v == cpus for v in a.values())


def spawn_sleeper(comm=None):
    argv = [sys.executable, "-c", SLEEPER] + ([comm] if comm else [])
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL)
    if not h.poll_until(lambda: len(os.listdir("/proc/%d/task" % p.pid)) == 3, h.scaled(10)):
        raise RuntimeError("sleeper %d did not start its threads" % p.pid)
    return p


def mount(*args):
    r = subprocess.run(["mount"] + list(args), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       universal_newlines=True)
    if r.returncode != 0:
        raise h.Skip("mount %s failed: %s" % (" ".join(args), r.stdout.strip()))


def enter_namespaces():
    """Re-run this file as PID 1 of fresh namespaces; returns only inside them."""
    if os.environ.get(INNER_ENV) == "1":
        return
    h.require_root("moving tasks in a PID namespace")
    unshare = shutil.which("unshare")
    if not unshare or not shutil.which("taskset"):
        h.skip("unshare(1) and taskset(1) are needed")
    if os.cpu_count() is None or os.cpu_count() < 2 or not {0, 1} <= os.sched_getaffinity(0):
        h.skip("needs CPUs 0 and 1 (CPU 1 plays the isolated CPU)")
    argv = [unshare, "--pid", "--fork", "--mount-proc", "--mount", "--net", "--propagation", "private"]
    probe = subprocess.run(argv + ["true"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if probe.returncode != 0:
        h.skip("unshare --pid --mount --net failed: %s" % probe.stdout.decode(errors="replace").strip())
    env = dict(os.environ)
    env[INNER_ENV] = "1"
    sys.stdout.flush()
    rc = subprocess.call(argv + [sys.executable, os.path.abspath(sys.argv[0])], env=env)
    sys.exit(rc if rc >= 0 else 1)


def fake_the_host(host):
    """Bind the fake tree over every path lowlatd --root / could write, and check it took."""
    if os.getpid() != 1 or os.readlink("/proc/self") != "1":
        raise RuntimeError("not PID 1 of a fresh PID namespace with its own /proc")
    mount("--make-rprivate", "/")
    boot_id = os.path.join(host.root, "proc/sys/kernel/random/boot_id")
    os.makedirs(os.path.dirname(boot_id), exist_ok=True)
    with open("/proc/sys/kernel/random/boot_id") as f:
        h.write_text(boot_id, f.read())
    mount("--bind", host.path("proc/irq"), "/proc/irq")
    mount("--bind", host.path("proc/sys"), "/proc/sys")
    mount("--bind", host.path("sys/devices/system/cpu"), "/sys/devices/system/cpu")
    if os.path.exists("/dev/cpu_dma_latency"):
        mount("--bind", host.path("dev/cpu_dma_latency"), "/dev/cpu_dma_latency")
    if os.path.isdir("/run/systemd"):
        mount("-t", "tmpfs", "tmpfs", "/run/systemd")  # no journal: logs go to stderr
    checks = {
        "/proc/irq/default_smp_affinity": host.read("proc/irq/default_smp_affinity"),
        "/sys/devices/system/cpu/isolated": "1\n",
        "/proc/sys/net/core/somaxconn": host.read("proc/sys/net/core/somaxconn"),
    }
    for path, want in checks.items():
        if h.read_text(path) != want:
            raise RuntimeError("%s is not the fake tree's after the bind mount" % path)


def ctl(view, *args):
    return subprocess.run([os.environ["LOWLATCTL"]] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          env=dict(os.environ, **view.env()), timeout=h.scaled(60))


def hostile_comm_outputs(t, view, pid):
    """lowlatctl list, status and list --json: valid UTF-8, no control or bidi character,
    the task named with its comm made printable."""
    shown = ("pid %d (%s) on 0-1 (3 threads)" % (pid, SHOWN_COMM)).encode()
    for args in (("list",), ("status",), ("list", "--json")):
        p = ctl(view, *args)
        problem = hn.unsafe(p.stdout) or hn.unsafe(p.stderr)
        t.ok(p.returncode in (0, 1) and not problem and shown in p.stdout,
             "lowlatctl %s: the stray with a hostile comm shown as %r, valid UTF-8, no raw control or bidi "
             "character" % (" ".join(args), SHOWN_COMM),
             "exit %d (%s)\n%r\n%r" % (p.returncode, problem, p.stdout[-1500:], p.stderr[-500:]))
    p = ctl(view, "list", "--json")
    try:
        rows = [r for r in json.loads(p.stdout.decode("utf-8")) if r.get("kind") == "stray_tasks"]
    except (ValueError, AttributeError) as e:
        rows = [repr(e)]
    t.ok(len(rows) == 1 and shown.decode() in rows[0].get("observed", ""),
         "list --json: the stray_tasks row's observed value names the task once parsed", repr(rows))


def hostile_comm_phase(t, live, host):
    """A real process renamed to HOSTILE_COMM, reported by lowlatd --observe on a private
    bus and a fake journal (this namespace has its own tmpfs on /run/systemd)."""
    what = "a stray with a hostile comm through the bus and the journal"
    view = b.SettingsView(host.tmp)
    if not view.available or not os.environ.get("LOWLATCTL"):
        t.skip(what, view.why or "LOWLATCTL is not set")
        return
    os.environ[h.PRIVATE_MNT_ENV] = "1"  # the tmpfs on /run/systemd is this namespace's own
    j = h.JournalSocket()
    stray = spawn_sleeper(HOSTILE_COMM)
    try:
        with open("/proc/%d/comm" % stray.pid, "rb") as f:
            comm = f.read()
        t.ok(comm == HOSTILE_COMM + b"\n", "the sleeper's comm holds the hostile bytes", repr(comm))
        d = h.Daemon(live, CONFIG, extra_args=["--observe"], env=view.env())
        d.wait_ready()
        view.wait_owner(d, h.scaled(10))
        e = j.wait_for(h.scaled(5), MESSAGE_ID=h.MID["drift"], LOWLATD_KIND="stray_tasks")
        try:
            rows = [r for r in view.rows() if r[0] == "stray_tasks"]
        except b.BusError as err:
            rows = [repr(err)]
        t.ok(len(rows) == 1 and "pid %d (%s) on 0-1" % (stray.pid, SHOWN_COMM) in rows[0][3],
             "ListSettings answers; stray_tasks' observed value names the task as %r" % SHOWN_COMM, repr(rows))
        hostile_comm_outputs(t, view, stray.pid)
        if t.ok(e is not None, "the stray's drift reaches the journal", repr([x.get("MESSAGE") for x in j.entries()])):
            problems = ["%s %s" % (k, hn.unsafe(v, keep="")) for k, v in e.fields if hn.unsafe(v, keep="")]
            t.ok(not problems, "the drift's journal entry: every field valid UTF-8, no control or bidi character",
                 "; ".join(problems))
            t.ok(("(%s)" % SHOWN_COMM).encode() in dict(e.fields).get("MESSAGE", b""),
                 "the journal's MESSAGE names the comm made printable", repr(dict(e.fields).get("MESSAGE")))
        t.stopped_cleanly(d)
    finally:
        stray.kill()
        stray.wait()
        view.stop()
        j.close()


def run(t):
    enter_namespaces()
    host = h.FakeHost(ncpus=2, nirqs=20, isolated="1")
    fake_the_host(host)
    live = h.LiveRoot(host.tmp)

    stray = spawn_sleeper()
    app = spawn_sleeper("latapp")
    t.ok(all_on(stray.pid, "0-1") and all_on(app.pid, "0-1"), "sleepers start on CPUs 0-1",
         repr((allowed(stray.pid), allowed(app.pid))))

    d = h.Daemon(live, CONFIG)
    d.wait_ready()
    moved = d.poll_until(lambda: all_on(stray.pid, "0"), h.scaled(5))
    t.ok(moved, "a stray process and all three of its threads are moved to housekeeping CPU 0",
         "%r\n%s" % (allowed(stray.pid), d.stderr_tail()))
    t.ok(all_on(app.pid, "0-1"), "the [process \"latapp\"] application is left alone", repr(allowed(app.pid)))
    t.ok(all(v == "0-1" for v in allowed(1).values()), "PID 1 (this test) and its threads are left alone",
         repr(allowed(1)))
    t.ok(all(v == "0" for v in allowed(d.pid).values()), "lowlatd keeps to housekeeping", repr(allowed(d.pid)))

    subprocess.run(["taskset", "-a", "-p", "-c", "0-1", str(stray.pid)], stdout=subprocess.DEVNULL, check=True)
    t0 = time.monotonic()
    back = d.poll_until(lambda: all_on(stray.pid, "0"), h.scaled(5))
    t.ok(back, "re-pinned to 0-1 with taskset: moved back (%.2fs)" % (time.monotonic() - t0),
         "%r\n%s" % (allowed(stray.pid), d.stderr_tail()))
    log = d.stderr()
    t.ok("stray_tasks 1 drifted: expected none, found pid %d (python3) on 0-1 (3 threads)" % stray.pid in log,
         "the drift is logged with the task", d.stderr_tail())
    t.ok("stray_tasks 1 corrected to none" in log, "and the correction", d.stderr_tail())
    t.ok(not [l for l in log.splitlines() if "could not set" in l and "pid 1 (" in l],
         "PID 1 is left alone by choice, not reported as a failure", d.stderr_tail())
    t.ok(not re.search(r"kernel thread \d", log) and log.count("The proc connector is unavailable") == 1,
         "kthreads = housekeeping in a PID namespace: no kernel thread is seen or touched; the proc connector "
         "is said to be unavailable once", d.stderr_tail())
    t.stopped_cleanly(d)
    t.ok(all_on(stray.pid, "0"), "stopping lowlatd does not put evicted tasks back", repr(allowed(stray.pid)))

    # Observe mode: reported, not moved.
    subprocess.run(["taskset", "-a", "-p", "-c", "0-1", str(stray.pid)], stdout=subprocess.DEVNULL, check=True)
    d = h.Daemon(live, CONFIG, extra_args=["--observe"])
    d.wait_ready()
    reported = d.poll_until(lambda: "stray_tasks 1 drifted" in d.stderr(), h.scaled(5))
    t.ok(reported, "observe mode reports the stray", d.stderr_tail())
    h.settle(1.0)  # five scans
    t.ok(all_on(stray.pid, "0-1"), "observe mode moves nothing", repr(allowed(stray.pid)))
    t.stopped_cleanly(d)

    # A fake root: its PIDs are not this host's tasks.
    p = h.run_lowlatd(host, ["--once"], h.write_config(host, CONFIG, "fake.conf"))
    out = p.stdout + p.stderr
    t.ok("evict_strays needs --root /" in out and "unsupported" in out,
         "--root on a fake tree: stray_tasks is unsupported, with why", out[-2000:])
    t.ok(all_on(stray.pid, "0-1"), "and nothing is moved", repr(allowed(stray.pid)))

    for p in (stray, app):
        p.kill()
        p.wait()

    hostile_comm_phase(t, live, host)


if __name__ == "__main__":
    h.main(run)
