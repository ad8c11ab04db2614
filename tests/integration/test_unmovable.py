#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""An IRQ whose smp_affinity_list is read-only (0444) and sits on an isolated CPU is
reported once, never written, and the daemon keeps going."""

import os
import re

import lowlat_harness as h

CONFIG = """\
[daemon]
scan_interval = 1s

[cpus]
isolated = 2-3

[sysctl]
net.core.somaxconn = 8192
"""


def mentions_irq(lines, irq, name):
    rx = re.compile(r"(?<![\w.\-/])%d(?![\w\-]|\.\w)" % irq)
    return [l for l in lines if rx.search(l) or name in l]


def run(t):
    h.isolate_from_real_journal()
    host = h.FakeHost(ncpus=4, nirqs=1000, isolated="2-3")
    nvme = host.irqs_matching("nvme1q*")
    stuck = nvme[7]
    name = host.irq_names[stuck]
    host.set_irq_affinity(stuck, "2-3")
    host.set_unmovable(stuck)
    path = host.irq_path(stuck)
    st0 = os.stat(path)
    t.note("unmovable IRQ %d (%s)" % (stuck, name))

    d = h.Daemon(host, CONFIG)
    d.wait_ready()
    t.ok(d.alive(), "lowlatd reaches READY=1 with an unmovable IRQ")
    others = [n for n in host.irqs if n != stuck and host.irq_cpus(n) != {0, 1}]
    t.ok(not others, "every other IRQ was moved to 0-1", "wrong: %r" % others[:10])

    got = d.poll_until(lambda: mentions_irq(d.stderr_lines(), stuck, name), h.scaled(5))
    t.ok(got, "the unmovable IRQ %d is reported on stderr" % stuck, d.stderr_tail())

    # Several scan intervals (1 s each) pass; drive progress with a managed sysctl.
    for _ in range(4):
        host.set_sysctl("net.core.somaxconn", "1")
        d.poll_until(lambda: host.sysctl("net.core.somaxconn") == "8192", h.scaled(5))
        h.settle(1.2)
    lines = mentions_irq(d.stderr_lines(), stuck, name)
    t.ok(len(lines) == 1, "IRQ %d is reported exactly once over 5+ scan intervals" % stuck,
         "%d lines mention it:\n%s" % (len(lines), "\n".join(lines[:10])))

    st1 = os.stat(path)
    t.ok(host.irq_affinity(stuck) == "2-3", "its smp_affinity_list is not written",
         "holds %r" % host.irq_affinity(stuck))
    t.ok(st1.st_mtime_ns == st0.st_mtime_ns and st1.st_size == st0.st_size,
         "its smp_affinity_list was not even opened for writing (mtime unchanged)",
         "mtime %d -> %d" % (st0.st_mtime_ns, st1.st_mtime_ns))
    t.ok((st1.st_mode & 0o777) == 0o444, "its mode is left at 0444", "%o" % st1.st_mode)

    # Other drift is still handled while the stuck IRQ stays stuck.
    irq = host.irqs[600]
    host.set_irq_affinity(irq, "2-3")
    t.ok(d.poll_until(lambda: host.irq_cpus(irq) == {0, 1}, h.scaled(5)),
         "other IRQ drift is still corrected", "IRQ %d holds %r" % (irq, host.irq_affinity(irq)))
    t.ok(d.alive(), "lowlatd keeps running", d.stderr_tail())
    t.stopped_cleanly(d)


if __name__ == "__main__":
    h.main(run)
