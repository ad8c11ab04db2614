#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The noise alerts over the journal's native protocol (a fake /run/systemd/journal/socket
in a private mount namespace), against lowlatd on a fake tree whose /proc/interrupts,
/proc/softirqs and /proc/stat the test plays the kernel for:

- an [irq] pin that puts an IRQ on isolated CPU 3, then interrupts counted there: the
  'noise-irq' alert names the IRQ, its /proc/interrupts name, the CPU and the count; a
  second one within [noise] alert_interval is held back and counted into the next;
- interrupts on a CPU that is not watched: no alert;
- nohz_full CPU 2 busy (its idle time in /proc/stat stands still) with 300 ticks/s: the
  'noise-tick' alert; nohz_full CPU 3, as idle, with the same ticks: none."""

import os
import threading

import lowlat_harness as h

ALERT_INTERVAL = 4  # seconds; [noise] alert_interval

# An IRQ name as a driver may write it (invalid UTF-8, ESC, C1, a bidi override), and as
# the journal's fields show it (text_escape()).
HOSTILE = b"eth\xff\x1b[2J\xc2\x9b31m\xe2\x80\xaeevil"
SHOWN = r"eth\xff\x1b[2J\u009b31m\u202eevil"

CONFIG = """\
[daemon]
scan_interval = 1s

[cpus]
isolated = 2-3

[irq]
pin = {pinned} 3

[noise]
tick_rate_max = 10
alert_interval = %ds
""" % ALERT_INTERVAL


class Kernel:
    """The counters of the fake tree, written in place (lowlatd keeps its fds open)."""

    def __init__(self, host, irqs):
        self.host = host
        self.lock = threading.Lock()
        self.irqs = {n: {0: 100, 1: 100} for n in irqs}
        self.names = {n: host.irq_names[n] for n in irqs}
        self.loc = {c: 1000 for c in range(4)}
        self.idle = {c: 5000 for c in range(4)}
        self.publish()

    def publish(self):
        with self.lock:
            lines = ["     " + "".join("CPU%-8d" % c for c in range(4)) + "\n"]
            for n in sorted(self.irqs):
                lines.append("%3d:%s  PCI-MSI %d-edge      %s\n"
                             % (n, "".join(" %10u" % self.irqs[n].get(c, 0) for c in range(4)), n, self.names[n]))
            lines.append("LOC:%s   Local timer interrupts\n" % "".join(" %10u" % self.loc[c] for c in range(4)))
            # In place, as bytes: a name may be any bytes (surrogateescape'd in self.names).
            fd = os.open(self.host.path("proc/interrupts"), os.O_WRONLY | os.O_TRUNC)
            try:
                os.write(fd, "".join(lines).encode("utf-8", "surrogateescape"))
            finally:
                os.close(fd)
            self.host.write("proc/softirqs", "                    CPU0       CPU1       CPU2       CPU3\n"
                            "       TIMER:          1          1          1          1\n")
            stat = ["cpu  0 0 0 %d 0 0 0 0 0 0\n" % sum(self.idle.values())]
            stat += ["cpu%d 10 0 10 %d 0 0 0 0 0 0\n" % (c, self.idle[c]) for c in range(4)]
            self.host.write("proc/stat", "".join(stat) + "intr 0\nctxt 0\n")

    def add_irq(self, n, cpu, k):
        with self.lock:
            self.irqs[n][cpu] = self.irqs[n].get(cpu, 0) + k
        self.publish()


def run(t):
    h.enter_private_mount_namespace("the noise journal test")
    j = h.JournalSocket()
    host = h.FakeHost(ncpus=4, nirqs=40, isolated="2-3", nohz_full="2-3", irq_affinity="0-1")
    eth = [i for i in host.irq_table if i.name.startswith("eth")][:2] or host.irq_table[10:12]
    pinned, other = eth[0].number, eth[1].number
    k = Kernel(host, [pinned, other])

    d = h.Daemon(host, CONFIG.format(pinned=host.irq_names[pinned]))
    d.wait_ready()
    t.ok(d.poll_until(lambda: host.irq_cpus(pinned) == {3}, h.scaled(5)),
         "the pin puts IRQ %d (%s) on isolated CPU 3" % (pinned, host.irq_names[pinned]),
         host.irq_affinity(pinned))

    # The kernel services it there.
    mark = j.mark()
    k.add_irq(pinned, 3, 25)
    e = j.wait_for(h.scaled(5), since=mark, MESSAGE_ID="noise-irq", LOWLATD_SOURCE=str(pinned))
    t.ok(e is not None and e.get("LOWLATD_CPU") == "3" and e.get("LOWLATD_COUNT") == "25" and
         e.get("LOWLATD_DESCRIPTION") == host.irq_names[pinned] and e.get("PRIORITY") == "4" and
         e.get("LOWLATD_SUPPRESSED") == "0" and e.get("LOWLATD_KIND") == "noise",
         "a 'noise-irq' alert: IRQ %d, its name, CPU 3, 25 interrupts, PRIORITY=4" % pinned,
         "entry %r; since: %r" % (e, j.entries(mark)[:10]))
    if e:
        msg = e.get("MESSAGE") or ""
        t.ok(("IRQ %d (%s)" % (pinned, host.irq_names[pinned])) in msg and "isolated CPU 3" in msg and
             "25 times" in msg, "its message says which IRQ, which CPU and how many", msg)
        first = e

    # Within alert_interval: held back, counted into the next report.
    mark2 = j.mark()
    k.add_irq(pinned, 3, 5)
    e = j.wait_for(h.scaled(2.5), since=mark2, MESSAGE_ID="noise-irq", LOWLATD_SOURCE=str(pinned))
    t.ok(e is None, "5 more interrupts within alert_interval (%ds) are not reported at once" % ALERT_INTERVAL,
         repr(e))
    # Interrupts on CPU 0, which is not watched, are no noise.
    k.add_irq(other, 0, 1000)
    h.settle(ALERT_INTERVAL - 2)  # let the rate limit's window pass
    mark3 = j.mark()
    k.add_irq(pinned, 3, 7)
    e = j.wait_for(h.scaled(5), since=mark3, MESSAGE_ID="noise-irq", LOWLATD_SOURCE=str(pinned))
    t.ok(e is not None and e.get("LOWLATD_COUNT") == "7" and e.get("LOWLATD_SUPPRESSED") == "1" and
         e.get("LOWLATD_SUPPRESSED_COUNT") == "5" and "1 more like it (5 interrupts) held back" in e.get("MESSAGE", ""),
         "after alert_interval the next report gives its 7 and the held-back report (1, 5 interrupts)",
         "entry %r" % e)
    t.ok(not j.select(MESSAGE_ID="noise-irq", LOWLATD_SOURCE=str(other)),
         "1000 interrupts of IRQ %d on CPU 0, which is not watched: no alert" % other)
    t.ok(len(j.select(MESSAGE_ID="noise-irq", LOWLATD_SOURCE=str(pinned))) == 2,
         "two reports in all", repr(j.select(MESSAGE_ID="noise-irq")))

    # A hostile name: the fields are clean text, the bytes themselves in a _RAW field.
    with k.lock:
        k.names[other] = HOSTILE.decode("utf-8", "surrogateescape")
    h.settle(ALERT_INTERVAL)
    mark5 = j.mark()
    k.add_irq(other, 3, 9)
    e = j.wait_for(h.scaled(6), since=mark5, MESSAGE_ID="noise-irq", LOWLATD_SOURCE=str(other))
    t.ok(e is not None and e.get("LOWLATD_DESCRIPTION") == SHOWN and
         e.get("LOWLATD_DESCRIPTION_RAW") == HOSTILE.hex() and SHOWN in e.get("MESSAGE", ""),
         "an IRQ named with control and bidi bytes: LOWLATD_DESCRIPTION and MESSAGE escaped, "
         "LOWLATD_DESCRIPTION_RAW its bytes in hex", "entry %r" % e)

    # The tick: CPU 2 busy and ticking 300/s, CPU 3 idle and ticking as much.
    stop = threading.Event()

    def tick():
        while not stop.is_set():
            with k.lock:
                k.loc[2] += 30
                k.loc[3] += 30
                k.idle[3] += 10  # USER_HZ ticks: all of the 100 ms
                k.idle[0] += 10
                k.idle[1] += 10
            k.publish()
            stop.wait(0.1)

    mark4 = j.mark()
    th = threading.Thread(target=tick, daemon=True)
    th.start()
    try:
        e = j.wait_for(h.scaled(6), since=mark4, MESSAGE_ID="noise-tick")
    finally:
        stop.set()
        th.join()
    rate = float(e.get("LOWLATD_RATE", "0")) if e else 0
    t.ok(e is not None and e.get("LOWLATD_CPU") == "2" and e.get("LOWLATD_EXPECTED") == "10" and
         e.get("LOWLATD_SOURCE") == "LOC" and 100 < rate < 600,
         "a 'noise-tick' alert: busy nohz_full CPU 2 took about 300 ticks/s, more than 10",
         "entry %r; since: %r" % (e, j.entries(mark4)[:10]))
    t.ok(not j.select(mark4, MESSAGE_ID="noise-tick", LOWLATD_CPU="3"),
         "idle CPU 3 with the same ticks: no tick alert (it runs no task)")
    t.stopped_cleanly(d)


if __name__ == "__main__":
    h.main(run)
