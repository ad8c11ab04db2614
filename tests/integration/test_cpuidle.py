#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""cpuidle: with [pm] cpu_dma_latency set, every idle state of an isolated CPU whose exit
latency is above the target is kept disabled (drift corrected, original put back by a
restore); shallower states and housekeeping CPUs are left alone."""

import os

import lowlat_harness as h

CONFIG = """\
[daemon]
scan_interval = 1s
restore_on_exit = yes

[cpus]
isolated = 2-3

[pm]
cpu_dma_latency = 5
"""

STATES = [("POLL", 0), ("C1", 2), ("C1E", 10), ("C6", 133)]


def state_path(host, cpu, state, name):
    return host.path("sys/devices/system/cpu/cpu%d/cpuidle/state%d/%s" % (cpu, state, name))


def run(t):
    h.isolate_from_real_journal()
    host = h.FakeHost(ncpus=4, nirqs=50, isolated="2-3")
    for cpu in range(4):
        for i, (name, latency) in enumerate(STATES):
            d = os.path.dirname(state_path(host, cpu, i, "x"))
            os.makedirs(d)
            h.write_text(os.path.join(d, "name"), name + "\n")
            h.write_text(os.path.join(d, "latency"), "%d\n" % latency)
            h.write_text(os.path.join(d, "disable"), "0\n")

    def disabled(cpu, state):
        return h.read_text(state_path(host, cpu, state, "disable")).strip()

    d = h.Daemon(host, CONFIG)
    d.wait_ready()
    deep = [(c, s) for c in (2, 3) for s in (2, 3)]
    t.ok(all(disabled(c, s) == "1" for c, s in deep),
         "C1E (10 us) and C6 (133 us) are disabled on isolated CPUs 2-3 (target 5 us)",
         repr({(c, s): disabled(c, s) for c, s in deep}))
    t.ok(all(disabled(c, s) == "0" for c in (2, 3) for s in (0, 1)),
         "POLL and C1 (within the target) stay enabled")
    t.ok(all(disabled(c, s) == "0" for c in (0, 1) for s in range(4)),
         "housekeeping CPUs' idle states are left alone")

    h.write_text(state_path(host, 2, 3, "disable"), "0\n")
    ok = d.poll_until(lambda: disabled(2, 3) == "1", h.scaled(5))
    t.ok(ok, "re-enabling C6 on CPU 2 is drift, corrected")
    # The report follows the correction (the write comes first): wait for it.
    t.ok(d.poll_until(lambda: any("cpuidle cpu2/state3 (C6)" in l for l in d.stderr_lines()), h.scaled(5)),
         "the report names the state", d.stderr_tail())

    d.stop()  # restore_on_exit
    t.ok(all(disabled(c, s) == "0" for c, s in deep), "restore_on_exit re-enables them as they were",
         repr({(c, s): disabled(c, s) for c, s in deep}))

    d = h.Daemon(host, CONFIG.replace("cpu_dma_latency = 5", "cpu_dma_latency = off"))
    d.wait_ready()
    h.settle(1.5)
    t.ok(all(disabled(c, s) == "0" for c in range(4) for s in range(4)),
         "without a cpu_dma_latency target no idle state is touched")
    t.stopped_cleanly(d)


if __name__ == "__main__":
    h.main(run)
