#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Drift after READY=1 is corrected (enforce) or only reported (--observe)."""

import os
import re
import time

import lowlat_harness as h

CONFIG = """\
[daemon]
scan_interval = 1s

[cpus]
isolated = 2-3

[irq]
pin = eth0-TxRx-* 2-3

[pm]
governor = performance

[sysctl]
net.core.somaxconn = 8192
net.ipv4.tcp_rmem = 4096 87380 16777216
"""

DRIFT_TIMEOUT = 5  # seconds (scaled by LOWLAT_TIMEOUT_SCALE)


def timed_poll(d, pred):
    t0 = time.monotonic()
    ok = d.poll_until(pred, h.scaled(DRIFT_TIMEOUT))
    return bool(ok), time.monotonic() - t0


def mentions(lines, word):
    """Lines that name `word` as a whole token (not inside a CPU list or a number)."""
    rx = re.compile(r"(?<![\w.\-])" + re.escape(word) + r"(?![\w\-]|\.\w)")
    return [l for l in lines if rx.search(l)]


def enforce(t):
    host = h.FakeHost(ncpus=4, nirqs=1000, isolated="2-3")
    pinned = host.irqs_matching("eth0-TxRx-*")
    free = [n for n in host.irqs if n not in pinned]
    d = h.Daemon(host, CONFIG)
    d.wait_ready()
    irq = free[500]
    t.ok(host.irq_cpus(irq) == {0, 1}, "IRQ %d starts on 0-1 after READY" % irq,
         host.irq_affinity(irq))

    host.set_irq_affinity(irq, "2-3")
    ok, dt = timed_poll(d, lambda: host.irq_cpus(irq) == {0, 1})
    t.ok(ok, "IRQ %d moved to 2-3 is put back on 0-1 (%.3fs)" % (irq, dt),
         "smp_affinity_list %r after %.1fs" % (host.irq_affinity(irq), dt))

    host.set_irq_affinity(irq, "1-2")
    ok, dt = timed_poll(d, lambda: host.irq_cpus(irq) == {0, 1})
    t.ok(ok, "IRQ %d moved to 1-2 (partly isolated) is put back (%.3fs)" % (irq, dt),
         "smp_affinity_list %r" % host.irq_affinity(irq))

    p = pinned[3]
    host.set_irq_affinity(p, "0-1")
    ok, dt = timed_poll(d, lambda: host.irq_cpus(p) == {2, 3})
    t.ok(ok, "pinned IRQ %d moved to 0-1 is put back on 2-3 (%.3fs)" % (p, dt),
         "smp_affinity_list %r" % host.irq_affinity(p))

    host.set_sysctl("net.core.somaxconn", "4096")
    ok, dt = timed_poll(d, lambda: host.sysctl("net.core.somaxconn") == "8192")
    t.ok(ok, "rewritten sysctl net.core.somaxconn is put back to 8192 (%.3fs)" % dt,
         "file holds %r" % host.sysctl("net.core.somaxconn"))

    host.set_sysctl("net.ipv4.tcp_rmem", "4096\t131072\t6291456")
    ok, dt = timed_poll(d, lambda: h.normalise_ws(host.sysctl("net.ipv4.tcp_rmem"))
                        == "4096 87380 16777216")
    t.ok(ok, "rewritten sysctl net.ipv4.tcp_rmem is put back (%.3fs)" % dt,
         "file holds %r" % host.sysctl("net.ipv4.tcp_rmem"))

    host.write("proc/irq/default_smp_affinity", "f\n")
    ok, dt = timed_poll(d, lambda: host.default_affinity_mask() == 0x3)
    t.ok(ok, "default_smp_affinity rewritten to f is put back to 3 (%.3fs)" % dt,
         "file holds %r" % host.read("proc/irq/default_smp_affinity"))

    host.set_governor(3, "powersave")
    ok, dt = timed_poll(d, lambda: host.governor(3) == "performance")
    t.ok(ok, "cpu3 governor set to powersave is put back to performance (%.3fs)" % dt,
         "file holds %r" % host.governor(3))

    # A burst: 200 IRQs moved at once (a driver reset re-requesting its vectors).
    burst = free[100:300]
    for n in burst:
        host.set_irq_affinity(n, "0-3")
    ok, dt = timed_poll(d, lambda: all(host.irq_cpus(n) == {0, 1} for n in burst))
    left = [n for n in burst if host.irq_cpus(n) != {0, 1}]
    t.ok(ok, "a burst of 200 IRQs moved to 0-3 is all put back (%.3fs)" % dt,
         "%d still wrong, e.g. %r" % (len(left), left[:10]))

    # Something lowlatd does not manage stays as the writer left it.
    host.set_sysctl("vm.swappiness", "10")
    host.set_irq_affinity(free[700], "0")     # housekeeping only: within the posture
    host.set_sysctl("net.core.somaxconn", "1")  # and a managed one, as a progress marker
    ok, _ = timed_poll(d, lambda: host.sysctl("net.core.somaxconn") == "8192")
    h.settle(2.5)
    t.ok(host.sysctl("vm.swappiness") == "10", "an unmanaged sysctl is left alone",
         "vm.swappiness holds %r" % host.sysctl("vm.swappiness"))
    t.ok(host.irq_cpus(free[700]) == {0},
         "an IRQ moved within the housekeeping CPUs (0) is left alone",
         "smp_affinity_list %r" % host.irq_affinity(free[700]))
    t.ok(d.alive(), "lowlatd still running after the drift", d.stderr_tail())
    t.stopped_cleanly(d)


def observe(t):
    # The tree starts partly in posture, partly not.
    host = h.FakeHost(ncpus=4, nirqs=1000, isolated="2-3", irq_affinity="0-1",
                      sysctls={"net.core.somaxconn": "8192"})
    drifted_at_start = host.irqs[-1]
    host.set_irq_affinity(drifted_at_start, "0-3")
    before = host.snapshot()
    d = h.Daemon(host, CONFIG, extra_args=["--observe"])
    d.wait_ready()
    after = host.snapshot()
    diff = host.snapshot_diff(before, after)
    t.ok(not diff, "--observe: nothing in the tree is written at startup", "\n".join(diff))

    t.ok(poll_lines(d, str(drifted_at_start)),
         "--observe: IRQ %d, drifted at startup, is reported on stderr" % drifted_at_start,
         d.stderr_tail())

    irq = host.irqs[400]
    host.set_irq_affinity(irq, "2-3")
    host.set_sysctl("net.core.somaxconn", "1024")
    host.set_governor(2, "schedutil")
    t.ok(poll_lines(d, str(irq)), "--observe: drift of IRQ %d is reported on stderr" % irq,
         d.stderr_tail())
    t.ok(poll_lines(d, "net.core.somaxconn"),
         "--observe: drift of net.core.somaxconn is reported on stderr", d.stderr_tail())
    h.settle(3)
    t.ok(host.irq_affinity(irq) == "2-3", "--observe: drifted IRQ %d is left on 2-3" % irq,
         "smp_affinity_list %r" % host.irq_affinity(irq))
    t.ok(host.sysctl("net.core.somaxconn") == "1024", "--observe: drifted sysctl is left alone",
         "file holds %r" % host.sysctl("net.core.somaxconn"))
    t.ok(host.governor(2) == "schedutil", "--observe: drifted governor is left alone",
         "file holds %r" % host.governor(2))
    expected = dict(before)
    for rel in ("proc/irq/%d/smp_affinity_list" % irq, "proc/irq/%d/smp_affinity" % irq,
                "proc/sys/net/core/somaxconn",
                "sys/devices/system/cpu/cpu2/cpufreq/scaling_governor"):
        p = host.path(rel)
        with open(p, "rb") as f:
            expected[rel] = (os.lstat(p).st_mode, f.read())
    diff = host.snapshot_diff(expected, host.snapshot())
    t.ok(not diff, "--observe: nothing but the test's own writes changed in the tree",
         "\n".join(diff))
    t.ok(d.alive(), "--observe: lowlatd keeps running", d.stderr_tail())
    t.stopped_cleanly(d, what="lowlatd --observe")


def poll_lines(d, word):
    return d.poll_until(lambda: mentions(d.stderr_lines(), word), h.scaled(DRIFT_TIMEOUT))


def run(t):
    h.isolate_from_real_journal()
    enforce(t)
    observe(t)


if __name__ == "__main__":
    h.main(run)
