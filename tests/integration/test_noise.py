#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Noise() on a private bus, through the real busctl, against lowlatd on a fake tree whose
/proc/interrupts and /proc/softirqs the test rewrites between scans: totals and rates,
a new IRQ line, a CPU coming online (a new column), a counter going backwards, an IRQ line
vanishing; readable by an unprivileged caller; with no row, NoiseCPUs and lowlatctl noise
say whether no CPU is watched or none took anything. Then, read-only, the real host's counters
with [noise] cpus = 0-1 in observe mode (this host isolates no CPU)."""

import os
import subprocess

import busctl_harness as b
import lowlat_constants as C
import lowlat_harness as h

NAME, PATH, IFACE = C.BUS_NAME, C.BUS_PATH, C.BUS_INTERFACE

CONFIG = """\
[daemon]
scan_interval = 1s

[cpus]
isolated = 2-3
"""

ARCH = [("NMI", "Non-maskable interrupts"), ("LOC", "Local timer interrupts"),
        ("RES", "Rescheduling interrupts"), ("CAL", "Function call interrupts")]


def interrupts_text(online, irqs, arch):
    """/proc/interrupts as kernel/irq/proc.c prints it: online CPUs only, " %10u" per
    column. irqs: {number: ({cpu: count}, name)}; arch: {label: {cpu: count}}."""
    lines = [" " * 5 + "".join("CPU%-8d" % c for c in online) + "\n"]
    for n in sorted(irqs):
        counts, name = irqs[n]
        lines.append("%3d:%s  PCI-MSI %d-edge      %s\n"
                     % (n, "".join(" %10u" % counts.get(c, 0) for c in online), n, name))
    for label, desc in ARCH:
        lines.append("%3s:%s   %s\n" % (label, "".join(" %10u" % arch.get(label, {}).get(c, 0) for c in online),
                                       desc))
    lines.append("ERR: %10u\nMIS: %10u\n" % (3, 0))
    return "".join(lines)


def softirqs_text(possible, rows):
    lines = [" " * 20 + "".join("CPU%-8d" % c for c in possible) + "\n"]
    for name in ("HI", "TIMER", "NET_TX", "NET_RX", "SCHED", "RCU"):
        lines.append("%12s:%s\n" % (name, "".join(" %10u" % rows.get(name, {}).get(c, 0) for c in possible)))
    return "".join(lines)


def noise(bc, user=None):
    """Noise() as (sampled_usec, interval_usec, {(cpu, kind, source): (description, count, rate)})."""
    c = b.Busctl(bc.address, user=user) if user else bc
    out = c.call(NAME, PATH, IFACE, "Noise")
    if out.get("type") != "tta(ussstd)":
        raise b.BusError("Noise returned type %r" % out.get("type"))
    sampled, interval, rows = out["data"]
    return sampled, interval, {(r[0], r[1], r[2]): (r[3], r[4], r[5]) for r in rows}


class Counters:
    """The fake tree's /proc/interrupts and /proc/softirqs: change state, then publish()."""

    def __init__(self, host):
        self.host = host
        self.state = {
            "online": [0, 1, 2],
            "irqs": {42: ({0: 1000, 2: 7}, "eth0-TxRx-0"), 43: ({1: 50}, "eth0-TxRx-1")},
            "arch": {"LOC": {0: 5000, 1: 5000, 2: 90}, "RES": {2: 4}, "NMI": {}, "CAL": {2: 1}},
            "soft": {"TIMER": {0: 800, 2: 30, 3: 2}, "NET_RX": {2: 12}, "RCU": {3: 9}},
        }

    def publish(self):
        state = self.state
        self.host.write("proc/interrupts", interrupts_text(state["online"], state["irqs"], state["arch"]))
        self.host.write("proc/softirqs", softirqs_text([0, 1, 2, 3], state["soft"]))


def rate_of(bc, key, delta):
    """Whether Noise()'s rate for key is delta interrupts over the last scan interval."""
    _, iv, r = noise(bc)
    return iv > 0 and key in r and abs(r[key][2] * iv / 1e6 - delta) < 1e-6 * delta + 1e-3


def fake_tree(t):
    host = h.FakeHost(ncpus=4, nirqs=20, isolated="2-3", irq_affinity="0-1")
    counters = Counters(host)
    counters.publish()
    bus = b.PrivateBus(host.tmp, [h.policy_path()]).start()
    bc = b.Busctl(bus.address)
    d = h.Daemon(host, CONFIG, env=bus.env())
    d.wait_ready()
    if not t.ok(bc.wait_for_owner(NAME, h.scaled(5), alive=d.alive), "lowlatd is on the private bus",
                d.stderr_tail()):
        return

    check_first_read(t, d, bc)
    check_rates(t, d, bc, counters)
    check_new_lines_and_cpus(t, d, bc, counters)
    check_backwards_and_cache(t, d, bc, counters)

    # A reload that names other CPUs watches those from then on; none watches nothing.
    d.rewrite_config(CONFIG + "\n[noise]\ncpus = 1-2\n")
    d.sighup()
    t.ok(d.poll_until(lambda: {k[0] for k in noise(bc)[2]} == {1, 2}, h.scaled(5)),
         "after a reload with [noise] cpus = 1-2: CPUs 1 and 2", repr(sorted(noise(bc)[2])[:10]))
    d.rewrite_config(CONFIG + "\n[noise]\ncpus = none\n")
    d.sighup()
    t.ok(d.poll_until(lambda: noise(bc)[2] == {}, h.scaled(5)), "[noise] cpus = none: an empty array")
    check_nothing_watched(t, d, bc, counters)

    t.stopped_cleanly(d)
    bus.stop()


def lowlatctl_noise(bc, *args):
    ctl = os.environ.get("LOWLATCTL")
    if not ctl:
        h.skip("LOWLATCTL is not set (path of the lowlatctl binary)")
    return subprocess.run([ctl, "noise"] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=bc.address),
                          timeout=h.scaled(30))


def check_nothing_watched(t, d, bc, counters):
    """Noise() with no row has two causes, which NoiseCPUs tells apart and lowlatctl words:
    no CPU is watched (here: [noise] cpus = none), or no counter of the watched ones is
    above 0 (CPU 1, its counters set to 0)."""
    t.ok(bc.get_property(NAME, PATH, IFACE, "NoiseCPUs") == ("s", ""), "[noise] cpus = none: NoiseCPUs is \"\"",
         repr(bc.get_property(NAME, PATH, IFACE, "NoiseCPUs")))
    p = lowlatctl_noise(bc)
    t.ok(p.returncode == 0 and p.stdout == "No noise sources: lowlatd watches no CPU (there are no isolated CPUs, "
         "and [noise] cpus names none).\n", "lowlatctl noise: no CPU is watched",
         "exit %d\n%s%s" % (p.returncode, p.stdout, p.stderr))
    p = lowlatctl_noise(bc, "--json")
    t.ok(p.returncode == 0 and '"watched_cpus":"",' in p.stdout and '"sources":[]' in p.stdout,
         "lowlatctl noise --json: watched_cpus \"\" and no source", p.stdout + p.stderr)

    for counts, _ in counters.state["irqs"].values():
        counts.pop(1, None)
    for rows in (counters.state["arch"], counters.state["soft"]):
        for counts in rows.values():
            counts.pop(1, None)
    counters.publish()
    d.rewrite_config(CONFIG + "\n[noise]\ncpus = 1\n")
    d.sighup()
    t.ok(d.poll_until(lambda: bc.get_property(NAME, PATH, IFACE, "NoiseCPUs")[1] == "1" and noise(bc)[2] == {},
                      h.scaled(5)),
         "[noise] cpus = 1 with its counters at 0: NoiseCPUs is \"1\", Noise() has no row", repr(noise(bc)[2]))
    p = lowlatctl_noise(bc)
    t.ok(p.returncode == 0 and p.stdout.startswith("No noise sources: lowlatd watches CPU 1, and none of its "
                                                   "counters is above 0.\n"),
         "lowlatctl noise: CPU 1 is watched and took nothing",
         "exit %d\n%s%s" % (p.returncode, p.stdout, p.stderr))


def check_first_read(t, d, bc):
    """The first scan's counts: names, kinds, which CPUs, what is left out."""
    intro = bc.introspect(NAME, PATH)[IFACE]["methods"].get("Noise")
    t.ok(intro == ("", "tta(ussstd)"), "Noise() takes nothing and returns (t, t, a(ussstd))", repr(intro))
    gate = bc.get_property(NAME, PATH, IFACE, "NoiseGate")[1]
    t.ok(gate == "off: not the live host (--root)",
         "a fake tree gets no perf gate (its CPUs are not this machine's): every scan reads the file", gate)

    sampled, interval, rows = noise(bc)
    t.ok(sampled > 0, "sampled_usec is a CLOCK_MONOTONIC time", sampled)
    t.ok(rows.get((2, "irq", "42")) == ("eth0-TxRx-0", 7, rows.get((2, "irq", "42"), (0, 0, 0))[2]),
         "IRQ 42 on CPU 2: 7, named eth0-TxRx-0", repr(rows))
    t.ok(rows.get((2, "timer", "LOC"), ("",))[0:2] == ("Local timer interrupts", 90),
         "LOC on CPU 2 is a timer source with its text and count 90", repr(rows))
    t.ok(rows.get((2, "ipi", "RES"), ("",))[0:2] == ("Rescheduling interrupts", 4) and
         rows.get((2, "ipi", "CAL"), ("",))[1:2] == (1,),
         "RES and CAL on CPU 2 are ipi sources", repr(rows))
    t.ok(rows.get((2, "softirq", "TIMER"), ("",))[0:2] == ("", 30) and
         rows.get((2, "softirq", "NET_RX"), ("",))[1:2] == (12,) and
         rows.get((3, "softirq", "RCU"), ("",))[1:2] == (9,),
         "softirqs per type on CPUs 2 and 3", repr(rows))
    t.ok(not any(k[0] not in (2, 3) for k in rows), "only the isolated CPUs 2-3 appear", repr(sorted(rows)))
    t.ok(not any(k[0] == 3 and k[1] != "softirq" for k in rows),
         "CPU 3, absent from /proc/interrupts' header (offline), has no interrupt sources", repr(sorted(rows)))
    t.ok(not any(k[2] in ("ERR", "MIS", "43") for k in rows) and (2, "ipi", "NMI") not in rows,
         "machine-wide totals (ERR, MIS) and zero counts are left out", repr(sorted(rows)))
    try:
        _, _, rows_nobody = noise(bc, user=b.NOBODY)
        t.ok(rows_nobody.get((2, "irq", "42"), (0, 0))[1] == 7, "an unprivileged caller may call Noise()")
    except b.BusError as e:
        t.ok(False, "an unprivileged caller may call Noise()", str(e))

    t.ok(d.poll_until(lambda: noise(bc)[1] > 0, h.scaled(5)),
         "interval_usec is set once a second scan ran")


def check_rates(t, d, bc, counters):
    """Counts change between scans: the rate covers the scan interval."""
    state, publish = counters.state, counters.publish
    state["irqs"][42][0][2] = 507
    state["arch"]["LOC"][2] = 190
    state["soft"]["NET_RX"][2] = 112
    publish()
    # Within 100 ms of the call before, a call may get that call's read.
    t.ok(h.poll_until(lambda: noise(bc)[2][(2, "irq", "42")][1] == 507, 0.5),
         "a call re-reads the counters: IRQ 42 on CPU 2 is 507 without waiting for a scan",
         repr(noise(bc)[2].get((2, "irq", "42"))))
    t.ok(d.poll_until(lambda: rate_of(bc, (2, "irq", "42"), 500), h.scaled(5)),
         "IRQ 42's rate is 500 interrupts over the last scan interval", repr(noise(bc)))
    sampled, interval, rows = noise(bc)
    t.ok(abs(rows[(2, "timer", "LOC")][2] * interval / 1e6 - 100) < 1e-3 and
         abs(rows[(2, "softirq", "NET_RX")][2] * interval / 1e6 - 100) < 1e-3,
         "LOC's and NET_RX's rates over the same interval: 100 each", repr(rows))
    t.ok(d.poll_until(lambda: noise(bc)[2][(2, "irq", "42")][2] == 0, h.scaled(5)),
         "with no new interrupts the rate falls back to 0 at the next scan")


def check_new_lines_and_cpus(t, d, bc, counters):
    state, publish = counters.state, counters.publish
    # A new IRQ line: its counts are all new since the last scan.
    state["irqs"][77] = ({2: 30}, "nvme0q3")
    publish()
    t.ok(d.poll_until(lambda: noise(bc)[2].get((2, "irq", "77"), ("",))[0:2] == ("nvme0q3", 30), h.scaled(5)),
         "a new IRQ line appears with its name and count")
    t.ok(d.poll_until(lambda: rate_of(bc, (2, "irq", "77"), 30), h.scaled(5)),
         "a new IRQ line's count is its first interval's rate", repr(noise(bc)[2].get((2, "irq", "77"))))

    # CPU 3 comes online: a new column in /proc/interrupts.
    # IRQ 42 on CPU 2 moves by 5 at the same time: its rate says when a scan saw this.
    state["online"] = [0, 1, 2, 3]
    state["irqs"][42][0][3] = 12345
    state["irqs"][42][0][2] = 512
    state["arch"]["LOC"][3] = 6000
    publish()
    t.ok(d.poll_until(lambda: noise(bc)[2].get((3, "irq", "42"), (0, 0))[1] == 12345, h.scaled(5)),
         "CPU 3 comes online: its column is read (IRQ 42: 12345)")
    t.ok(d.poll_until(lambda: rate_of(bc, (2, "irq", "42"), 5), h.scaled(5)) and
         noise(bc)[2][(3, "irq", "42")][2] == 0 and noise(bc)[2][(3, "timer", "LOC")][2] == 0,
         "at the scan that sees CPU 3 its counts since boot are not a rate; CPU 2's column is still right",
         repr(noise(bc)))
    state["arch"]["LOC"][3] = 6050
    publish()
    t.ok(d.poll_until(lambda: rate_of(bc, (3, "timer", "LOC"), 50), h.scaled(5)),
         "CPU 3's LOC rate once it has a baseline: 50 over the interval")


def check_backwards_and_cache(t, d, bc, counters):
    state, publish = counters.state, counters.publish
    # Backwards (a CPU offline and back, a wrap): never a negative or huge rate.
    # NET_RX moves by 7 at the same time: its rate says when a scan saw this.
    state["irqs"][42][0][2] = 3
    state["soft"]["NET_RX"][2] = 119
    publish()
    seen = []

    def backwards_seen():
        r = noise(bc)[2]
        seen.append(r[(2, "irq", "42")])
        return rate_of(bc, (2, "softirq", "NET_RX"), 7)
    t.ok(d.poll_until(backwards_seen, h.scaled(5)) and noise(bc)[2][(2, "irq", "42")][1:] == (3, 0.0) and
         all(0 <= s[2] < 1e6 for s in seen),
         "a counter that goes backwards gives rate 0, never a negative or huge one", repr(seen[-5:]))
    state["irqs"][42][0][2] = 13
    publish()
    t.ok(d.poll_until(lambda: rate_of(bc, (2, "irq", "42"), 10), h.scaled(5)),
         "and counts from the new baseline (10 more)")

    # A line vanishes.
    del state["irqs"][77]
    publish()
    t.ok(d.poll_until(lambda: (2, "irq", "77") not in noise(bc)[2], h.scaled(5)),
         "an IRQ line that vanishes leaves Noise()")

    # Cached within 100 ms, fresh after.
    stamps = [noise(bc)[0] for _ in range(5)]
    t.ok(all(y == x or y - x >= 100000 for x, y in zip(stamps, stamps[1:])),
         "calls in a row read the counters again at most every 100 ms", repr(stamps))
    a = stamps[-1]
    h.settle(0.15)
    t.ok(noise(bc)[0] - a >= 100000, "a call 150 ms later reads again")


def real_host(t):
    """This host's own counters, observe mode, nothing written."""
    if not os.path.exists("/proc/interrupts"):
        t.skip("real host counters", "no /proc/interrupts")
        return
    tmp = h.make_tempdir()
    bus = b.PrivateBus(tmp, [h.policy_path()]).start()
    bc = b.Busctl(bus.address)
    live = h.LiveRoot(tmp)
    d = h.Daemon(live, "[daemon]\nmode = observe\nscan_interval = 1s\n\n[noise]\ncpus = 0-1\n", env=bus.env())
    d.wait_ready()
    if not t.ok(bc.wait_for_owner(NAME, h.scaled(5), alive=d.alive), "observe mode on the real host: on the bus",
                d.stderr_tail()):
        return
    _, _, rows = noise(bc)
    kinds = {k[1] for k in rows}
    t.ok({"timer", "softirq"} <= kinds and {k[0] for k in rows} <= {0, 1},
         "observe mode on the real host with [noise] cpus = 0-1: timer and softirq counters of CPUs 0-1",
         repr(sorted(rows)[:20]))
    with open("/proc/interrupts") as f:
        loc = next((line.split() for line in f if line.strip().startswith("LOC:")), None)
    if loc:
        ours = rows.get((0, "timer", "LOC"), ("", 0))[1]
        t.ok(0 < ours <= int(loc[1]), "CPU 0's LOC matches /proc/interrupts (read just after: %s >= %d)"
             % (loc[1], ours))
    t.ok(d.poll_until(lambda: noise(bc)[1] > 0 and noise(bc)[2].get((0, "timer", "LOC"), ("", 0, 0))[2] > 0,
                      h.scaled(5)),
         "and a tick rate on CPU 0 after the second scan", repr(noise(bc)[2].get((0, "timer", "LOC"))))
    gate_checks(t, bc, d)
    t.stopped_cleanly(d)
    bus.stop()


def perf_available():
    """Whether this process could open a CPU-wide perf event on irq:irq_handler_entry (what
    lowlatd's gate needs): tracefs mounted and perf allowed. Returns (bool, why)."""
    for base in ("/sys/kernel/tracing", "/sys/kernel/debug/tracing"):
        if os.path.exists(os.path.join(base, "events/irq/irq_handler_entry/id")):
            return True, base
    return False, "no tracefs with irq:irq_handler_entry"


def gate_checks(t, bc, d):
    """The gate on the live host: perf rings on CPUs 0-1, and scans counted on either side.
    This host's CPUs take interrupts all the time, so most scans read the file; that some
    did without it is not asserted (the VM suite's isolated CPUs 2-3 are where it shows)."""
    gate = bc.get_property(NAME, PATH, IFACE, "NoiseGate")[1]
    ok, why = perf_available()
    if not ok:
        t.ok(gate.startswith("off: "), "without tracefs the gate is off and says why", gate)
        return
    if not t.ok(gate.startswith("perf: ") and "rings on 2 of 2 CPUs (0-1)" in gate,
                "the live host: the gate has perf rings on CPUs 0-1", gate + "\n" + d.stderr_tail()):
        return
    full, gated = bc.get_property(NAME, PATH, IFACE, "NoiseReads")[1]
    t.ok(full >= 2 and full + gated >= 2, "NoiseReads counts the scans' reads (%d full, %d gated)" % (full, gated))
    # A reload with [noise] gate = off: no perf, every scan reads the file.
    d.rewrite_config("[daemon]\nmode = observe\nscan_interval = 1s\n\n[noise]\ncpus = 0-1\ngate = off\n")
    d.sighup()
    t.ok(d.poll_until(lambda: bc.get_property(NAME, PATH, IFACE, "NoiseGate")[1] == "off: [noise] gate = off",
                      h.scaled(5)),
         "after a reload with [noise] gate = off: NoiseGate says so",
         bc.get_property(NAME, PATH, IFACE, "NoiseGate")[1])
    g0 = bc.get_property(NAME, PATH, IFACE, "NoiseReads")[1][1]
    h.settle(2.5)
    full2, g1 = bc.get_property(NAME, PATH, IFACE, "NoiseReads")[1]
    t.ok(g1 == g0 == 0 and full2 >= 2, "and no scan does without the file (%d full, %d gated)" % (full2, g1))


def run(t):
    b.require_tools()
    h.lowlatd_path()
    h.isolate_from_real_journal()
    fake_tree(t)
    real_host(t)


if __name__ == "__main__":
    h.main(run)
