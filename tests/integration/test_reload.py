#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""SIGHUP: a broken config keeps the old posture; a good one is applied; dropping
cpu_dma_latency releases the hold."""

import os

import lowlat_harness as h

CONFIG_A = """\
[daemon]
scan_interval = 1s

[cpus]
isolated = 2-3

[pm]
cpu_dma_latency = 0

[sysctl]
net.core.somaxconn = 8192
"""

# Line 9 has an unknown key; the other changes must NOT be half-applied.
CONFIG_BROKEN = """\
[daemon]
scan_interval = 1s

[cpus]
isolated = 1-3

[pm]
cpu_dma_latency = 0
bogus_knob = 1

[sysctl]
net.core.somaxconn = 16384
"""
BROKEN_LINE = 9

# Different isolated set, a new sysctl, a changed sysctl, no cpu_dma_latency.
CONFIG_B = """\
[daemon]
scan_interval = 1s

[cpus]
isolated = 1-3

[sysctl]
net.core.somaxconn = 16384
kernel.numa_balancing = 0
"""

TIMEOUT = 5


def reload_cycle(t, d, what):
    """SIGHUP; check RELOADING=1 then READY=1 after it. Returns True when both came."""
    cur = d.sighup()
    i = d.notify.wait_for(b"RELOADING=1", h.scaled(10), since=cur, alive=d.alive)
    t.ok(i is not None, "%s: RELOADING=1 on the notify socket" % what,
         "notify since SIGHUP: %r" % d.notify.lines(cur))
    j = d.notify.wait_for(b"READY=1", h.scaled(15), since=(i + 1) if i is not None else cur,
                          alive=d.alive)
    t.ok(j is not None, "%s: READY=1 after RELOADING=1" % what,
         "notify since SIGHUP: %r" % d.notify.lines(cur))
    return i is not None and j is not None


def run(t):
    h.isolate_from_real_journal()
    host = h.FakeHost(ncpus=4, nirqs=1000, isolated="2-3")
    d = h.Daemon(host, CONFIG_A)
    d.wait_ready()
    irq = host.irqs[321]
    t.ok(host.irq_cpus(irq) == {0, 1} and host.sysctl("net.core.somaxconn") == "8192"
         and host.dma_latency() == 0, "config A applied at READY=1")
    t.ok(d.holds_open(host.dma_path), "config A: dev/cpu_dma_latency is held open",
         "open fds: %r" % d.open_fd_targets())
    host.set_dma_latency(2000000000)
    t.ok(d.poll_until(lambda: host.dma_latency() == 0, h.scaled(TIMEOUT)),
         "config A: a rewritten dev/cpu_dma_latency is put back to 0",
         "holds %r" % host.dma_latency_raw())

    # --- broken config
    d.rewrite_config(CONFIG_BROKEN)
    reload_cycle(t, d, "broken config")
    t.ok(d.alive(), "broken config: lowlatd keeps running", d.stderr_tail())
    loc = "%s:%d:" % (d.config_path, BROKEN_LINE)
    t.ok(d.poll_until(lambda: [l for l in d.stderr_lines() if loc in l], h.scaled(5)),
         "broken config: error logged as %s reason" % loc, d.stderr_tail())
    t.ok([l for l in d.stderr_lines() if loc in l and "bogus_knob" in l],
         "broken config: the error names the unknown key", d.stderr_tail())

    host.set_irq_affinity(irq, "2-3")
    host.set_sysctl("net.core.somaxconn", "4096")
    t.ok(d.poll_until(lambda: host.irq_cpus(irq) == {0, 1}, h.scaled(TIMEOUT)),
         "broken config: old posture kept, IRQ drift to 2-3 corrected back to 0-1",
         "IRQ %d holds %r" % (irq, host.irq_affinity(irq)))
    t.ok(d.poll_until(lambda: host.sysctl("net.core.somaxconn") == "8192", h.scaled(TIMEOUT)),
         "broken config: old posture kept, somaxconn corrected to the old 8192",
         "holds %r" % host.sysctl("net.core.somaxconn"))
    h.settle(1.5)
    t.ok(host.sysctl("net.core.somaxconn") == "8192" and host.irq_cpus(irq) == {0, 1},
         "broken config: nothing of it was half-applied (no 16384, IRQ stays 0-1)",
         "somaxconn %r, IRQ %r" % (host.sysctl("net.core.somaxconn"), host.irq_affinity(irq)))

    # --- good config B
    d.rewrite_config(CONFIG_B)
    reload_cycle(t, d, "config B")
    t.ok(d.alive(), "config B: lowlatd keeps running", d.stderr_tail())
    t.ok(d.poll_until(lambda: host.sysctl("net.core.somaxconn") == "16384", h.scaled(TIMEOUT)),
         "config B: changed sysctl applied (somaxconn 16384)",
         "holds %r" % host.sysctl("net.core.somaxconn"))
    t.ok(d.poll_until(lambda: host.sysctl("kernel.numa_balancing") == "0", h.scaled(TIMEOUT)),
         "config B: new sysctl applied (kernel.numa_balancing 0)",
         "holds %r" % host.sysctl("kernel.numa_balancing"))
    wrong = lambda: [n for n in host.irqs if host.irq_cpus(n) != {0}]  # noqa: E731
    t.ok(d.poll_until(lambda: not wrong(), h.scaled(TIMEOUT)),
         "config B: isolated 1-3 moves every IRQ to 0",
         "%d wrong, e.g. %r" % (len(wrong()), [(n, host.irq_affinity(n)) for n in wrong()[:5]]))
    t.ok(d.poll_until(lambda: host.default_affinity_mask() == 0x1, h.scaled(TIMEOUT)),
         "config B: default_smp_affinity becomes 1",
         "holds %r" % host.read("proc/irq/default_smp_affinity"))

    host.set_irq_affinity(irq, "0-1")
    t.ok(d.poll_until(lambda: host.irq_cpus(irq) == {0}, h.scaled(TIMEOUT)),
         "config B: drift to 0-1 (CPU 1 now isolated) is corrected to 0",
         "IRQ %d holds %r" % (irq, host.irq_affinity(irq)))

    # --- cpu_dma_latency removed: hold released, file no longer rewritten
    t.ok(d.poll_until(lambda: not d.holds_open(host.dma_path), h.scaled(TIMEOUT)),
         "config B: dev/cpu_dma_latency is closed (latency hold released)",
         "open fds: %r" % d.open_fd_targets())
    host.set_dma_latency(2000000000)
    host.set_sysctl("net.core.somaxconn", "1")  # progress marker
    d.poll_until(lambda: host.sysctl("net.core.somaxconn") == "16384", h.scaled(TIMEOUT))
    h.settle(3.5)  # more than three scan intervals
    t.ok(host.dma_latency() == 2000000000,
         "config B: dev/cpu_dma_latency is no longer rewritten",
         "holds %r" % host.dma_latency_raw())

    t.ok(d.alive(), "lowlatd still running after two reloads", d.stderr_tail())
    t.stopped_cleanly(d)

    watchdog_during_reloads(t, host)
    cpu_hotplug(t)


CONFIG_SLOW_SCAN = """\
[daemon]
scan_interval = 10s

[cpus]
isolated = 2-3
"""


def watchdog_during_reloads(t, host):
    """The scan timer carries the WATCHDOG=1 pings and a reload re-arms it: reloads coming
    faster than the tick must still ping (the VM e2e run found systemd killing a healthy
    daemon after three reloads 10 s apart under WatchdogSec=30s)."""
    d = h.Daemon(host, CONFIG_SLOW_SCAN, env={"WATCHDOG_USEC": "4000000"})
    d.wait_ready()
    # The tick is min(10 s, 4 s / 2) = 2 s; a SIGHUP every 1.5 s re-arms it before it fires.
    cur = d.notify.mark()
    for _ in range(6):
        d.sighup()
        h.settle(1.5)
    lines = d.notify.lines(cur)
    pings = sum(1 for l in lines if l == b"WATCHDOG=1")
    t.ok(pings >= 4, "six reloads 1.5 s apart under a 2 s tick: WATCHDOG=1 still sent (%d times)" % pings,
         "notify lines: %r" % lines[:40])
    t.ok(d.alive(), "lowlatd still running after the reloads", d.stderr_tail())
    t.stopped_cleanly(d)



CONFIG_HOTPLUG = """\
[daemon]
scan_interval = 200ms

[cpus]
isolated = 2-3

[pm]
governor = performance
"""


def set_online(host, cpus):
    host.online = set(cpus)
    host.write("sys/devices/system/cpu/online", h.format_cpulist(host.online) + "\n")
    for c in host.all_cpus - {0}:
        host.write("sys/devices/system/cpu/cpu%d/online" % c, "1\n" if c in host.online else "0\n")


def cpu_hotplug(t):
    """The posture depends on the online CPUs: a CPU coming online is rebuilt for (its
    governor, the default housekeeping set), from the configuration in force, but never
    from a configuration edited on disk and not reloaded."""
    host = h.FakeHost(ncpus=4, nirqs=50, isolated="2-3", offline=(1,))
    d = h.Daemon(host, CONFIG_HOTPLUG)
    d.wait_ready()
    t.ok(host.read("proc/irq/default_smp_affinity").strip().lstrip("0,") == "1",
         "CPU 1 offline: default_smp_affinity is CPU 0 alone",
         host.read("proc/irq/default_smp_affinity"))

    # CPU 1 comes online with its cpufreq directory, as the kernel creates it.
    cpufreq = "sys/devices/system/cpu/cpu1/cpufreq"
    os.makedirs(host.path(cpufreq), exist_ok=True)
    host.write(cpufreq + "/scaling_governor", "powersave\n")
    host.write(cpufreq + "/scaling_available_governors", "performance powersave\n")
    set_online(host, {0, 1, 2, 3})
    t.ok(d.poll_until(lambda: host.governor(1) == "performance", h.scaled(5)),
         "CPU 1 online: its governor is set to performance", "holds %r" % host.governor(1))
    t.ok(d.poll_until(lambda: host.read("proc/irq/default_smp_affinity").strip().lstrip("0,") == "3",
                      h.scaled(5)),
         "... and the housekeeping set is 0-1 again (default_smp_affinity 3)",
         host.read("proc/irq/default_smp_affinity"))
    t.ok(d.poll_until(lambda: [l for l in d.stderr_lines() if "(online CPUs changed to 0-3)" in l], h.scaled(5)),
         "the journal says why the posture was rebuilt", d.stderr_tail())

    # An edit on disk that nobody reloaded must not ride along with a hotplug rebuild.
    d.rewrite_config(CONFIG_HOTPLUG + "\n[sysctl]\nnet.core.somaxconn = 777\n")
    before = host.sysctl("net.core.somaxconn")
    set_online(host, {0, 2, 3})
    noticed = d.poll_until(lambda: [l for l in d.stderr_lines() if "configuration on disk changed" in l],
                           h.scaled(5))
    t.ok(noticed, "CPU 1 offline after an unreloaded edit: not rebuilt, and the journal says why",
         d.stderr_tail())
    h.settle(1)
    t.ok(host.sysctl("net.core.somaxconn") == before,
         "the edit is not applied (net.core.somaxconn still %s)" % before,
         "holds %r" % host.sysctl("net.core.somaxconn"))
    t.ok(d.alive(), "lowlatd still running after the CPU changes", d.stderr_tail())
    t.stopped_cleanly(d)


if __name__ == "__main__":
    h.main(run)
