#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Another writer that keeps flipping a setting back: reported once as a fight,
corrected at a bounded rate (one correction per 10 s) instead of a tight loop, and
lowlatd pins itself to the housekeeping CPUs it may use."""

import os
import re
import time

import lowlat_constants as C
import lowlat_harness as h

# Housekeeping is CPU 0 alone, so self-pinning is visible on a 2-CPU machine.
CONFIG = """\
[daemon]
scan_interval = 1s

[cpus]
isolated = 1-3
"""

FIGHT_CORRECTIONS = C.FIGHT_CORRECTIONS
FIGHT_BACKOFF = C.FIGHT_BACKOFF_S


def cpus_allowed(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("Cpus_allowed_list:"):
                return h.parse_cpulist(line.split(":", 1)[1].strip())
    raise ValueError("no Cpus_allowed_list in /proc/%d/status" % pid)


def run(t):
    h.isolate_from_real_journal()
    host = h.FakeHost(ncpus=4, nirqs=1000, isolated="1-3")
    d = h.Daemon(host, CONFIG)
    d.wait_ready()

    allowed = os.sched_getaffinity(0)
    want = {0} & allowed or allowed
    t.ok(cpus_allowed(d.proc.pid) == want,
         "lowlatd pins itself to housekeeping CPU 0 (intersected with what it may use)",
         "Cpus_allowed_list %r, expected %r" % (cpus_allowed(d.proc.pid), want))

    irq = host.irqs[123]
    rx = re.compile(r"IRQ %d\b.*another writer" % irq)
    # The other writer: flips the IRQ back each time lowlatd has corrected it.
    for i in range(FIGHT_CORRECTIONS):
        host.set_irq_affinity(irq, "1-3")
        ok = d.poll_until(lambda: host.irq_affinity(irq) == "0", h.scaled(5))
        t.ok(ok, "flip %d is corrected at once" % (i + 1), "holds %r" % host.irq_affinity(irq))
    # The report follows the 5th correction; the harness reads stderr asynchronously.
    d.poll_until(lambda: [l for l in d.stderr_lines() if rx.search(l)], h.scaled(5))
    fights = [l for l in d.stderr_lines() if rx.search(l)]
    t.ok(len(fights) == 1, "the fight is reported once after %d corrections" % FIGHT_CORRECTIONS,
         d.stderr_tail())

    # In the fight, corrections are spaced: a flip right after a correction waits.
    host.set_irq_affinity(irq, "1-3")
    t0 = time.monotonic()
    early = d.poll_until(lambda: host.irq_affinity(irq) == "0", 3)
    t.ok(not early, "during the fight the next flip is not corrected within 3 s",
         "corrected after %.1f s" % (time.monotonic() - t0))
    late = d.poll_until(lambda: host.irq_affinity(irq) == "0", h.scaled(FIGHT_BACKOFF + 5))
    t.ok(late, "it is corrected once the %d s back-off has passed" % FIGHT_BACKOFF,
         "holds %r after %.1f s" % (host.irq_affinity(irq), time.monotonic() - t0))

    fights = [l for l in d.stderr_lines() if rx.search(l)]
    t.ok(len(fights) == 1, "the fight is still reported only once", "\n".join(fights))
    other = host.irqs[500]
    host.set_irq_affinity(other, "2-3")
    t.ok(d.poll_until(lambda: host.irq_affinity(other) == "0", h.scaled(5)),
         "other settings are corrected at once meanwhile")
    t.ok(d.alive(), "lowlatd keeps running", d.stderr_tail())
    t.stopped_cleanly(d)

    irq_balancer(t)


IRQ_WRITER_IRQS = C.IRQ_WRITER_IRQS
WRITER_RX = re.compile(r"Another program is rewriting IRQ affinities: (\d+) IRQs \(([\d ]+)\)")


def irq_balancer(t):
    """An IRQ balancer moves many IRQs once each: no single IRQ is a fight, the pattern is
    (irqbalance 1.9 in the VM e2e guest moved 7 IRQs once each and no fight was reported)."""
    host = h.FakeHost(ncpus=4, nirqs=200, isolated="2-3")
    config = CONFIG.replace("isolated = 1-3", "isolated = 2-3")
    d = h.Daemon(host, config)
    d.wait_ready()
    irqs = host.irqs[10:10 + IRQ_WRITER_IRQS + 2]
    for n in irqs[:IRQ_WRITER_IRQS - 1]:
        host.set_irq_affinity(n, "0-3")
        d.poll_until(lambda: host.irq_affinity(n) == "0-1", h.scaled(5))
    t.ok(not [l for l in d.stderr_lines() if WRITER_RX.search(l)],
         "%d IRQs rewritten once each: not yet reported" % (IRQ_WRITER_IRQS - 1), d.stderr_tail())
    # The same IRQ again does not count twice.
    host.set_irq_affinity(irqs[0], "0-3")
    d.poll_until(lambda: host.irq_affinity(irqs[0]) == "0-1", h.scaled(5))
    t.ok(not [l for l in d.stderr_lines() if WRITER_RX.search(l)],
         "one of them again: still %d distinct IRQs, not reported" % (IRQ_WRITER_IRQS - 1), d.stderr_tail())
    for n in irqs[IRQ_WRITER_IRQS - 1:]:
        host.set_irq_affinity(n, "2-3")
        d.poll_until(lambda: host.irq_affinity(n) == "0-1", h.scaled(5))
    d.poll_until(lambda: [l for l in d.stderr_lines() if WRITER_RX.search(l)], h.scaled(5))
    lines = [l for l in d.stderr_lines() if WRITER_RX.search(l)]
    t.ok(len(lines) == 1, "the %dth distinct IRQ makes it an IRQ writer, reported once (%d IRQs moved)"
         % (IRQ_WRITER_IRQS, len(irqs)), d.stderr_tail())
    if lines:
        m = WRITER_RX.search(lines[0])
        named = set(int(x) for x in m.group(2).split())
        t.ok(int(m.group(1)) == IRQ_WRITER_IRQS and named <= set(irqs) and len(named) == IRQ_WRITER_IRQS,
             "it names %d of the rewritten IRQs" % IRQ_WRITER_IRQS, lines[0])
        t.ok("no known IRQ balancer is running" in lines[0], "and says no known balancer runs", lines[0])
    t.ok(all(host.irq_affinity(n) == "0-1" for n in irqs), "every rewritten IRQ was put back",
         " ".join("%d:%s" % (n, host.irq_affinity(n)) for n in irqs))
    t.stopped_cleanly(d)

    # With an irqbalance process in the tree's /proc, the report names it.
    os.makedirs(host.path("proc/4242"), exist_ok=True)
    host.write("proc/4242/comm", "irqbalance\n")
    d = h.Daemon(host, config)
    d.wait_ready()
    for n in host.irqs[50:50 + IRQ_WRITER_IRQS]:
        host.set_irq_affinity(n, "3")
        d.poll_until(lambda: host.irq_affinity(n) == "0-1", h.scaled(5))
    d.poll_until(lambda: [l for l in d.stderr_lines() if WRITER_RX.search(l)], h.scaled(5))
    lines = [l for l in d.stderr_lines() if WRITER_RX.search(l)]
    t.ok(len(lines) == 1 and "irqbalance (pid 4242) is running" in lines[0]
         and "IRQBALANCE_BANNED_CPULIST=2-3" in lines[0],
         "with irqbalance running, the report names it and the ban to add", d.stderr_tail())
    t.stopped_cleanly(d)


if __name__ == "__main__":
    h.main(run)
