#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Observe mode claims nothing it does not do.

Its /dev/cpu_dma_latency request: lowlatd --observe only reads the device (the fake
tree's file holds 2000000000), so the bus says CpuDmaLatencyHeld false and
CpuDmaLatencySystemUSec 2000000000 (and follows the file when it changes), lowlatctl
status says "not held (observe mode)" with the system value, in text and JSON, and
lowlatctl metrics says held 0, the request NaN and the system value; the file is not
written. Enforce mode on the same tree holds it (Held true, "0 us (held)").

Refusals: observe mode gives a setting that enforce mode would find refused the state
enforce mode gives it (unmovable, with the same reason), never "would change": nothing is
written either way.

- A fake tree with an IRQ whose smp_affinity_list is read-only (0444) on the isolated
  CPUs, and one that can move: lowlatd --observe --once (table and --json) says
  unmovable for the first, would change for the second, and writes neither.
- A governor the driver does not offer: unsupported, with the reason enforce mode gives.
- The same host under a running lowlatd --observe on a private bus: lowlatctl list says
  unmovable and drifted.
- This machine's own kernel threads, read through --root / in observe mode ([cpus]
  kthreads = housekeeping, CPU 1 the isolated one): every thread with PF_NO_SETAFFINITY
  (ksoftirqd/1, migration/1, cpuhp/1) is unmovable, none of them would change; the
  threads themselves are not touched (observe mode changes nothing).

Environment: LOWLATD, LOWLATCTL, LOWLATD_SOURCE_ROOT (as every integration test)."""

import json
import math
import os

import busctl_harness as b
import kthread_harness as k
import lowlat_harness as h
import lowlat_constants as C
from test_lowlatctl import (Ctl, desc, lowlatctl_path, parse_prometheus, parse_status_text, parse_table,
                            prom_value, start_stack, wait_owner)

NAME, PATH, IFACE = C.BUS_NAME, C.BUS_PATH, C.BUS_INTERFACE

EXIT_DRIFT = 3

IRQ_CONFIG = """\
[daemon]
scan_interval = 60s

[cpus]
isolated = 2-3
"""

KTHREAD_CONFIG = """\
[daemon]
scan_interval = 60s

[cpus]
isolated = 1
housekeeping = 0
kthreads = housekeeping
"""

REFUSED_REASON = "smp_affinity_list is read-only"

DMA_CONFIG = """\
[daemon]
scan_interval = 1s

[cpus]
isolated = 2-3

[pm]
cpu_dma_latency = 0
"""
NO_REQUEST = 2000000000  # what the device reads with no request but the default


def test_dma_observe(t, ctl_bin):
    b.require_tools()
    host = h.FakeHost(ncpus=4, nirqs=30, isolated="2-3", irq_affinity="0-1", default_affinity={0, 1},
                      dma_latency=NO_REQUEST)
    bus, bc, _, d = start_stack(t, host, DMA_CONFIG, extra_args=["--observe"], monitor=False)
    ctl = Ctl(ctl_bin, bus.address, host.tmp)
    if not wait_owner(t, bc, d, "observe, cpu_dma_latency = 0"):
        return
    pr = bc.get_all(NAME, PATH, IFACE)
    t.ok(pr.get("CpuDmaLatencyUSec") == 0 and pr.get("CpuDmaLatencyHeld") is False and
         pr.get("CpuDmaLatencySystemUSec") == NO_REQUEST,
         "--observe: CpuDmaLatencyUSec 0 asked, CpuDmaLatencyHeld false, CpuDmaLatencySystemUSec %d" % NO_REQUEST,
         repr({k: v for k, v in pr.items() if k.startswith("CpuDma")}))

    p = ctl.run("status")
    f = parse_status_text(p.stdout)
    want = "0 us, not held (observe mode); system value %d us" % NO_REQUEST
    t.ok(f.get("cpu_dma_latency") == [want], "status: cpu_dma_latency: %s" % want, desc(p))
    p = ctl.run("status", "--json")
    try:
        j = json.loads(p.stdout)
    except ValueError:
        j = {}
    t.ok(j.get("cpu_dma_latency_usec") == 0 and j.get("cpu_dma_latency_held") is False and
         j.get("cpu_dma_latency_system_usec") == NO_REQUEST,
         "status --json: cpu_dma_latency_held false, cpu_dma_latency_system_usec %d" % NO_REQUEST, desc(p))

    p = ctl.run("metrics")
    try:
        m = parse_prometheus(p.stdout)
    except Exception as e:  # the parser's own error names the line
        t.ok(False, "metrics parses", "%s\n%s" % (e, p.stdout[-2000:]))
        m = None
    if m:
        held = prom_value(m, "lowlatd_cpu_dma_latency_held")
        seconds = prom_value(m, "lowlatd_cpu_dma_latency_seconds")
        system = prom_value(m, "lowlatd_cpu_dma_latency_system_seconds")
        t.ok(held == 0 and seconds is not None and math.isnan(seconds) and system == NO_REQUEST / 1e6,
             "metrics: lowlatd_cpu_dma_latency_held 0, _seconds NaN, _system_seconds %g" % (NO_REQUEST / 1e6),
             "held %r seconds %r system %r" % (held, seconds, system))

    # Someone else's request: the system value follows it at the next scan.
    host.set_dma_latency(20)
    got = d.poll_until(lambda: bc.get_property(NAME, PATH, IFACE, "CpuDmaLatencySystemUSec")[1] == 20, h.scaled(5))
    t.ok(got and bc.get_property(NAME, PATH, IFACE, "CpuDmaLatencyHeld")[1] is False,
         "another holder's 20 us: CpuDmaLatencySystemUSec 20, still not held by lowlatd",
         repr(bc.get_property(NAME, PATH, IFACE, "CpuDmaLatencySystemUSec")))
    t.ok(host.dma_latency() == 20, "observe mode did not write the device", repr(host.dma_latency_raw()))
    t.stopped_cleanly(d)
    bus.stop()

    # Enforce mode on the same tree takes the request: held, and said so.
    host.set_dma_latency(NO_REQUEST)
    bus, bc, _, d = start_stack(t, host, DMA_CONFIG, monitor=False)
    ctl = Ctl(ctl_bin, bus.address, host.tmp)
    if not wait_owner(t, bc, d, "enforce, cpu_dma_latency = 0"):
        return
    pr = bc.get_all(NAME, PATH, IFACE)
    f = parse_status_text(ctl.run("status").stdout)
    t.ok(pr.get("CpuDmaLatencyHeld") is True and pr.get("CpuDmaLatencySystemUSec") == 0 and
         f.get("cpu_dma_latency") == ["0 us (held)"],
         "enforce mode: CpuDmaLatencyHeld true, the system value 0, status '0 us (held)'",
         "%r %r" % ({k: v for k, v in pr.items() if k.startswith("CpuDma")}, f.get("cpu_dma_latency")))
    t.stopped_cleanly(d)
    bus.stop()


def irq_host():
    """Two IRQs on the isolated CPUs: one the kernel would refuse to move, one it would
    move. Returns (host, stuck, movable)."""
    host = h.FakeHost(ncpus=4, nirqs=30, isolated="2-3", irq_affinity="0-1", default_affinity={0, 1})
    stuck, movable = host.irqs[5], host.irqs[6]
    host.set_irq_affinity(stuck, "2-3")
    host.set_unmovable(stuck)
    host.set_irq_affinity(movable, "2-3")
    return host, stuck, movable


def irq_rows(rows, irq):
    return [r for r in rows if r[0] == "irq_affinity" and r[1].split()[0] == str(irq)]


def test_once(t):
    host, stuck, movable = irq_host()
    before = os.stat(host.irq_path(stuck))
    config = h.write_config(host, IRQ_CONFIG)

    p = h.run_lowlatd(host, ["--observe", "--once"], config_path=config)
    rows, _ = parse_table(p.stdout)
    got = irq_rows(rows, stuck)
    t.ok(p.returncode == EXIT_DRIFT and len(got) == 1 and got[0][4].startswith("unmovable: " + REFUSED_REASON),
         "--observe --once: the IRQ with a read-only smp_affinity_list is unmovable, with enforce mode's reason",
         "%r\n%s" % (got, desc(p)))
    got = irq_rows(rows, movable)
    t.ok(len(got) == 1 and got[0][4] == "would change", "--observe --once: the movable IRQ would change",
         "%r" % got)

    p = h.run_lowlatd(host, ["--observe", "--once", "--json"], config_path=config)
    try:
        j = json.loads(p.stdout)
    except ValueError as e:
        t.ok(False, "--observe --once --json is valid JSON", "%s\n%s" % (e, desc(p)))
        return
    by_object = {s["object"]: s for s in j.get("settings", []) if s.get("kind") == "irq_affinity"}
    s, m = by_object.get(str(stuck), {}), by_object.get(str(movable), {})
    t.ok(s.get("state") == "unmovable" and s.get("reason", "").startswith(REFUSED_REASON) and
         m.get("state") == "drifted" and j.get("counts", {}).get("unmovable") == 1,
         "--observe --once --json: unmovable (one of them) and drifted, in the bus's words", repr((s, m)))

    after = os.stat(host.irq_path(stuck))
    t.ok(host.irq_affinity(stuck) == "2-3" and host.irq_affinity(movable) == "2-3" and
         after.st_mtime_ns == before.st_mtime_ns,
         "observe mode wrote neither IRQ", "%r %r" % (host.irq_affinity(stuck), host.irq_affinity(movable)))


def test_governor_not_offered(t):
    """A governor the driver does not offer: enforce mode calls it unsupported without
    writing, and so does observe mode now."""
    host = h.FakeHost(ncpus=4, nirqs=30, isolated="2-3", irq_affinity="0-1", default_affinity={0, 1},
                      governor="powersave", available_governors="performance powersave")
    config = h.write_config(host, IRQ_CONFIG + "\n[pm]\ngovernor = schedutil\n")
    p = h.run_lowlatd(host, ["--observe", "--once", "--json"], config_path=config)
    try:
        j = json.loads(p.stdout)
    except ValueError as e:
        t.ok(False, "--observe --once --json is valid JSON", "%s\n%s" % (e, desc(p)))
        return
    governors = [s for s in j.get("settings", []) if s.get("kind") == "governor"]
    t.ok(len(governors) == 4 and all(s.get("state") == "unsupported" and
                                     "governor 'schedutil' is not offered" in s.get("reason", "")
                                     for s in governors),
         "--observe --once: a governor the driver does not offer is unsupported on each of the 4 CPUs, "
         "with enforce mode's reason", repr(governors[:2]))
    t.ok(host.governor(2) == "powersave", "and nothing was written", host.governor(2))


def test_list(t, ctl_bin):
    b.require_tools()
    host, stuck, movable = irq_host()
    bus, bc, _, d = start_stack(t, host, IRQ_CONFIG, extra_args=["--observe"], monitor=False)
    ctl = Ctl(ctl_bin, bus.address, host.tmp)
    if not wait_owner(t, bc, d, "list"):
        return
    p = ctl.run("list", "--kind", "irq_affinity")
    rows, _ = parse_table(p.stdout)
    s, m = irq_rows(rows, stuck), irq_rows(rows, movable)
    t.ok(len(s) == 1 and s[0][4].startswith("unmovable") and
         len(m) == 1 and m[0][4].startswith("drifted"),
         "lowlatctl list in observe mode: unmovable for the refused IRQ, drifted for the movable one",
         "%r %r\n%s" % (s, m, desc(p)))
    p = ctl.run("list", "--state", "unmovable", "--json")
    try:
        j = json.loads(p.stdout)
    except ValueError:
        j = None
    t.ok(isinstance(j, list) and [(x.get("object"), x.get("state")) for x in j] == [(str(stuck), "unmovable")],
         "lowlatctl list --state unmovable --json: that IRQ alone", desc(p))
    t.ok(host.irq_affinity(movable) == "2-3", "the running daemon in observe mode moved nothing")
    t.stopped_cleanly(d)
    bus.stop()


def test_kthreads(t):
    if os.geteuid() != 0:
        t.skip("this machine's kernel threads", "reading every thread's stat through --root / needs root")
        return
    if (os.cpu_count() or 0) < 2:
        t.skip("this machine's kernel threads", "needs two CPUs (CPU 1 plays the isolated one)")
        return
    before = k.kthreads()
    tmp = h.make_tempdir("lowlat-observe-refused-")
    host = h.LiveRoot(tmp)
    p = h.run_lowlatd(host, ["--observe", "--once", "--json"], h.write_config(host, KTHREAD_CONFIG))
    try:
        j = json.loads(p.stdout)
    except ValueError as e:
        t.ok(False, "--observe --once --json on this machine is valid JSON", "%s\n%s" % (e, desc(p)))
        return
    rows = {int(s["object"]): s for s in j.get("settings", []) if s.get("kind") == "kthread_affinity"}
    # The ones on CPU 1: the others are where they should be (ok).
    pinned = {tid: s for tid, s in rows.items()
              if "(PF_NO_SETAFFINITY)" in s.get("observed", "") and s.get("state") != "ok"}
    wrong = ["%d (%s): %s" % (tid, s.get("label"), s.get("state")) for tid, s in pinned.items()
             if s.get("state") != "unmovable" or "PF_NO_SETAFFINITY" not in s.get("reason", "")]
    named = {before[tid][0] for tid in pinned if tid in before}
    t.ok(pinned and not wrong and {"ksoftirqd/1", "migration/1"} <= named,
         "--observe --once: every thread with PF_NO_SETAFFINITY on CPU 1 is unmovable, with its reason "
         "(%d of them, ksoftirqd/1 and migration/1 among them%s)" %
         (len(pinned), ", cpuhp/1 too" if "cpuhp/1" in named else ""),
         "wrong: %s\nnamed: %s\n%s" % (wrong[:10], sorted(named)[:20], p.stderr[-2000:]))
    movable = [s for s in rows.values() if s.get("state") == "drifted"]
    t.ok(all("(PF_NO_SETAFFINITY)" not in s.get("observed", "") for s in movable),
         "the ones it would change (%d) are movable ones only" % len(movable))
    after = k.kthreads()
    moved = [tid for tid in pinned if tid in before and tid in after and before[tid][1] != after[tid][1]]
    t.ok(not moved, "no kernel thread's CPUs changed", repr(moved[:10]))


def main(t):
    ctl = lowlatctl_path()
    h.lowlatd_path()
    h.isolate_from_real_journal()
    test_dma_observe(t, ctl)
    test_once(t)
    test_governor_not_offered(t)
    test_list(t, ctl)
    test_kthreads(t)


if __name__ == "__main__":
    h.main(main)
