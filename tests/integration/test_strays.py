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
proc connector, which a new network namespace lacks, is said to be unavailable once)."""

import os
import re
import shutil
import subprocess
import sys
import time

import lowlat_harness as h

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

# A process with two more threads, allowed on CPUs 0-1; optionally renamed first.
SLEEPER = """\
import os, sys, threading, time
if len(sys.argv) > 1:
    with open("/proc/self/comm", "w") as f:
        f.write(sys.argv[1])
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


if __name__ == "__main__":
    h.main(run)
