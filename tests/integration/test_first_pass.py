#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""First pass: by READY=1 the whole posture is applied on a 4-CPU, 1,000-IRQ fake host."""

import re
import time

import lowlat_harness as h

CONFIG = """\
# lowlatd test config: first pass
[daemon]
mode = enforce
scan_interval = 1s

[cpus]
isolated = 2-3

[irq]
default_affinity = housekeeping
pin = eth0-TxRx-* 2-3

[pm]
cpu_dma_latency = 0
governor = performance

[sysctl]
net.core.somaxconn = 8192
net.ipv4.tcp_rmem = 4096 87380 16777216
kernel.numa_balancing = 0
net.core.busy_poll = 50
"""

SYSCTLS = {
    "net.core.somaxconn": "8192",
    "net.ipv4.tcp_rmem": "4096 87380 16777216",
    "kernel.numa_balancing": "0",
    "net.core.busy_poll": "50",
}


def run(t):
    h.isolate_from_real_journal()
    # IRQs start on every CPU (0-3); a few start on housekeeping CPU 0 only, which is
    # already within the posture and must be left as it is.
    host = h.FakeHost(ncpus=4, nirqs=1000, isolated="2-3", irq_affinity="0-3")
    pinned = set(host.irqs_matching("eth0-TxRx-*"))
    already_ok = [n for n in host.irqs if n not in pinned][100:103]
    for n in already_ok:
        host.set_irq_affinity(n, "0")
    t.ok(len(host.irqs) >= 1000 and host.ncpus >= 4,
         "fake host has %d IRQs on %d CPUs" % (len(host.irqs), host.ncpus))
    t.ok(len(pinned) == 64, "fake host has 64 eth0-TxRx-* IRQs to pin")

    d = h.Daemon(host, CONFIG, env={"WATCHDOG_USEC": "2000000"})
    t0 = time.monotonic()
    d.wait_ready()
    t.note("READY=1 after %.2fs" % (time.monotonic() - t0))
    t.ok(True, "READY=1 arrives on NOTIFY_SOCKET")

    # Everything below must already hold when READY=1 is sent: no polling.
    wrong = []
    for n in host.irqs:
        if n in pinned or n in already_ok:
            continue
        cpus = host.irq_cpus(n)
        if cpus != {0, 1}:
            wrong.append("%d:%r" % (n, host.irq_affinity(n)))
    t.ok(not wrong, "every unpinned IRQ's smp_affinity_list is 0-1 at READY=1",
         "%d wrong, e.g. %s" % (len(wrong), ", ".join(wrong[:10])))

    wrong = ["%d:%r" % (n, host.irq_affinity(n)) for n in sorted(pinned)
             if host.irq_cpus(n) != {2, 3}]
    t.ok(not wrong, "pinned eth0-TxRx-* IRQs are 2-3",
         "%d wrong, e.g. %s" % (len(wrong), ", ".join(wrong[:10])))

    wrong = ["%d:%r" % (n, host.irq_affinity(n)) for n in already_ok if host.irq_cpus(n) != {0}]
    t.ok(not wrong, "IRQs already on housekeeping CPUs only (0) are left alone",
         "changed: %s" % ", ".join(wrong))

    raw = host.read("proc/irq/default_smp_affinity")
    try:
        mask = h.parse_mask(raw)
    except ValueError:
        mask = None
    t.ok(mask == 0x3, "default_smp_affinity is the mask of 0-1 (0x3)", "file holds %r" % raw)

    for key, want in SYSCTLS.items():
        got = host.sysctl(key)
        t.ok(h.normalise_ws(got) == want, "sysctl %s = %s" % (key, want), "file holds %r" % got)
    t.ok(host.sysctl("vm.swappiness") == "60", "sysctls not in the config are untouched",
         "vm.swappiness holds %r" % host.sysctl("vm.swappiness"))

    raw = host.dma_latency_raw()
    t.ok(host.dma_latency() == 0 and len(raw) == 4,
         "dev/cpu_dma_latency holds the binary s32 0", "file holds %r" % raw)
    t.ok(d.holds_open(host.dma_path), "dev/cpu_dma_latency is held open", "open fds: %r" % d.open_fd_targets())

    wrong = ["cpu%d:%r" % (c, host.governor(c)) for c in sorted(host.online)
             if host.governor(c) != "performance"]
    t.ok(not wrong, "scaling_governor is performance on every online CPU", ", ".join(wrong))

    status = [l for l in d.notify.lines() if l.startswith(b"STATUS=")]
    t.ok(status and len(status[-1]) > len(b"STATUS="), "a STATUS= line arrives on NOTIFY_SOCKET",
         "notify lines: %r" % d.notify.lines()[:10])
    if status:
        last = status[-1].decode(errors="replace")
        t.note("last %s" % last)
        bad = [m.group(0) for m in re.finditer(r"\b(\d+) (drifted|failed|unmovable)\b", last)
               if m.group(1) != "0"]
        t.ok(not bad, "STATUS= reports nothing drifted, failed or unmovable", last)
    i = d.notify.find(b"READY=1")
    t.ok(i is not None and d.notify.find(b"READY=1", i + 1) is None,
         "READY=1 is sent once at startup", "notify lines: %r" % d.notify.lines()[:20])

    got = d.notify.wait_for(b"WATCHDOG=1", h.scaled(5), alive=d.alive)
    t.ok(got is not None, "WATCHDOG=1 arrives when WATCHDOG_USEC is set",
         "notify lines: %r" % d.notify.lines()[-10:])

    t.ok(d.alive(), "lowlatd keeps running after the first pass", d.stderr_tail())
    cur = d.notify.mark()
    t.stopped_cleanly(d)
    t.ok(d.notify.find(b"STOPPING=1", cur) is not None, "STOPPING=1 is sent on SIGTERM",
         "notify lines after SIGTERM: %r" % d.notify.lines(cur))

    # The daemon's own one-shot observer must agree that the tree is now in posture.
    r = h.run_lowlatd(host, ["--observe", "--once"], config_path=d.config_path)
    t.ok(r.returncode == 0, "afterwards, lowlatd --observe --once finds the tree in posture (exit 0)",
         "exit %d; stdout:\n%s" % (r.returncode, "\n".join(
             l for l in r.stdout.splitlines() if not l.rstrip().endswith(" ok"))[-3000:]))


if __name__ == "__main__":
    h.main(run)
