#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Observe mode gives a setting that enforce mode would find refused the state enforce
mode gives it (unmovable, with the same reason), never "would change": nothing is written
either way.

- A fake tree with an IRQ whose smp_affinity_list is read-only (0444) on the isolated
  CPUs, and one that can move: lowlatd --observe --once (table and --json) says
  unmovable for the first, would change for the second, and writes neither.
- The same host under a running lowlatd --observe on a private bus: lowlatctl list says
  unmovable and drifted.
- This machine's own kernel threads, read through --root / in observe mode ([cpus]
  kthreads = housekeeping, CPU 1 the isolated one): every thread with PF_NO_SETAFFINITY
  (ksoftirqd/1, migration/1, cpuhp/1) is unmovable, none of them would change; the
  threads themselves are not touched (observe mode changes nothing).

Environment: LOWLATD, LOWLATCTL, LOWLATD_SOURCE_ROOT (as every integration test)."""

import json
import os

import busctl_harness as b
import kthread_harness as k
import lowlat_harness as h
from test_lowlatctl import Ctl, desc, lowlatctl_path, parse_table, start_stack, wait_owner

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
    test_once(t)
    test_list(t, ctl)
    test_kthreads(t)


if __name__ == "__main__":
    h.main(main)
