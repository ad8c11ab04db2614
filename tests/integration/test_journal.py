#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Journal events over the native protocol, captured on a fake
/run/systemd/journal/socket inside a private mount namespace."""

import os

import lowlat_harness as h


def mid(name):
    """An event's MESSAGE_ID shortened for a check's name: 8 hex digits and an ellipsis."""
    return h.MID[name][:8] + "\u2026"

CONFIG = """\
[daemon]
scan_interval = 1s

[cpus]
isolated = 2-3

[sysctl]
net.core.somaxconn = 8192
net.ipv4.tcp_no_such_knob = 1
"""

TIMEOUT = 5


def setting_fields_ok(e, kind, obj, expected, observed, prio):
    problems = []
    want = {"LOWLATD_KIND": kind, "LOWLATD_OBJECT": obj, "PRIORITY": str(prio),
            "SYSLOG_IDENTIFIER": "lowlatd"}
    if expected is not None:
        want["LOWLATD_EXPECTED"] = expected
    if observed is not None:
        want["LOWLATD_OBSERVED"] = observed
    for k, v in want.items():
        if e.get(k) != v:
            problems.append("%s=%r, want %r" % (k, e.get(k), v))
    if not e.get("MESSAGE"):
        problems.append("no MESSAGE")
    return problems


def run(t):
    h.enter_private_mount_namespace("the journal test")
    j = h.JournalSocket()
    host = h.FakeHost(ncpus=4, nirqs=1000, isolated="2-3", irq_affinity="0-1",
                      sysctls={"net.core.somaxconn": "8192"})
    stuck = host.irqs_matching("nvme0q*")[3]
    host.set_irq_affinity(stuck, "3")
    host.set_unmovable(stuck)

    d = h.Daemon(host, CONFIG)
    d.wait_ready()

    started = j.wait_for(h.scaled(5), MESSAGE_ID=h.MID["started"])
    t.ok(started is not None and started.get("PRIORITY") == "6",
         "a 'started' entry (%s, PRIORITY=6) is logged at READY=1" % mid("started"),
         "entries: %r" % j.entries()[:10])

    check_unsupported_unmovable(t, j, stuck)
    irq = check_irq_drift(t, d, j, host)
    mark2 = check_sysctl_drift(t, j, host)
    every = check_logged_once(t, j, irq, stuck, mark2)
    check_recovered(t, j, host, stuck)
    check_reloads(t, d, j, host)

    mark3 = j.mark()
    t.stopped_cleanly(d)
    e = j.wait_for(h.scaled(2), since=mark3, MESSAGE_ID=h.MID["stopping"])
    t.ok(e is not None, "SIGTERM logs a 'stopping' entry (%s)" % mid("stopping"),
         "entries since SIGTERM: %r" % j.entries(mark3))
    t.note("%d journal entries in all" % len(every))


def check_unsupported_unmovable(t, j, stuck):
    # Unsupported sysctl and unmovable IRQ: reported once each.
    e = j.wait_for(h.scaled(TIMEOUT), MESSAGE_ID=h.MID["unsupported"],
                   LOWLATD_OBJECT="net.ipv4.tcp_no_such_knob")
    t.ok(e is not None and e.get("PRIORITY") == "4" and e.get("LOWLATD_KIND") == "sysctl"
         and e.get("LOWLATD_ERROR"),
         "a sysctl missing on this kernel logs 'unsupported' (%s) with LOWLATD_ERROR" % mid("unsupported"),
         "entry %r; all: %r" % (e, j.entries()[:10]))
    e = j.wait_for(h.scaled(TIMEOUT), MESSAGE_ID=h.MID["unmovable"],
                   LOWLATD_OBJECT=str(stuck))
    t.ok(e is not None and e.get("PRIORITY") == "4" and e.get("LOWLATD_KIND") == "irq_affinity"
         and e.get("LOWLATD_ERROR"),
         "the read-only IRQ %d logs 'unmovable' (%s) with LOWLATD_ERROR" % (stuck, mid("unmovable")),
         "entry %r" % e)


def check_irq_drift(t, d, j, host):
    """IRQ drift -> drift entry and corrected entry; returns the IRQ moved."""
    irq = host.irqs[444]
    mark = j.mark()
    host.set_irq_affinity(irq, "2-3")
    t.ok(d.poll_until(lambda: host.irq_cpus(irq) == {0, 1}, h.scaled(TIMEOUT)),
         "IRQ %d drift corrected" % irq, host.irq_affinity(irq))
    e = j.wait_for(h.scaled(TIMEOUT), since=mark, MESSAGE_ID=h.MID["drift"],
                   LOWLATD_OBJECT=str(irq))
    t.ok(e is not None, "IRQ drift logs an entry with MESSAGE_ID %s" % mid("drift"),
         "entries since drift: %r" % j.entries(mark)[:10])
    t.note("drift entry: %r" % e)
    if e is not None:
        p = setting_fields_ok(e, "irq_affinity", str(irq), "0-1", None, 4)
        t.ok(not p, "drift entry: LOWLATD_KIND/OBJECT/EXPECTED, PRIORITY=4, MESSAGE",
             "; ".join(p))
        # observed text of irq_affinity = contents of smp_affinity_list, followed by
        # " (effective LIST)" where the kernel reports an effective affinity
        obs = e.get("LOWLATD_OBSERVED") or ""
        t.ok(obs == "2-3" or obs.startswith("2-3 (effective "),
             "drift entry: LOWLATD_OBSERVED is the smp_affinity_list contents (2-3)",
             "LOWLATD_OBSERVED=%r" % e.get("LOWLATD_OBSERVED"))
        name = host.irq_names[irq]
        t.ok(e.get("LOWLATD_IRQ_NAME") == name and ("IRQ %d (%s)" % (irq, name)) in (e.get("MESSAGE") or ""),
             "drift entry: the IRQ is named as /proc/interrupts names it (%s), no pin needed" % name,
             "LOWLATD_IRQ_NAME=%r MESSAGE=%r" % (e.get("LOWLATD_IRQ_NAME"), e.get("MESSAGE")))
    e = j.wait_for(h.scaled(TIMEOUT), since=mark, MESSAGE_ID=h.MID["corrected"],
                   LOWLATD_OBJECT=str(irq))
    t.ok(e is not None, "IRQ correction logs an entry with MESSAGE_ID %s" % mid("corrected"),
         "entries since drift: %r" % j.entries(mark)[:10])
    if e is not None:
        p = setting_fields_ok(e, "irq_affinity", str(irq), "0-1", None, 5)
        t.ok(not p, "corrected entry: LOWLATD_KIND/OBJECT/EXPECTED, PRIORITY=5", "; ".join(p))
    return irq


def check_sysctl_drift(t, j, host):
    """sysctl drift; returns the journal mark taken before it."""
    mark2 = j.mark()
    host.set_sysctl("net.core.somaxconn", "1024")
    e = j.wait_for(h.scaled(TIMEOUT), since=mark2, MESSAGE_ID=h.MID["drift"],
                   LOWLATD_OBJECT="net.core.somaxconn")
    t.ok(e is not None and not setting_fields_ok(e, "sysctl", "net.core.somaxconn",
                                                 "8192", "1024", 4),
         "sysctl drift entry: kind sysctl, expected 8192, observed 1024, PRIORITY=4",
         "entry %r; since: %r" % (e, j.entries(mark2)[:10]))
    e = j.wait_for(h.scaled(TIMEOUT), since=mark2, MESSAGE_ID=h.MID["corrected"],
                   LOWLATD_OBJECT="net.core.somaxconn")
    t.ok(e is not None and e.get("PRIORITY") == "5",
         "sysctl corrected entry with PRIORITY=5", "entry %r" % e)
    return mark2


def check_logged_once(t, j, irq, stuck, mark2):
    """Nothing repeats on later scans, and every entry is well formed; returns all entries."""
    h.settle(4)  # four scan intervals
    counts = {
        "drift %d" % irq: len(j.select(MESSAGE_ID="drift", LOWLATD_OBJECT=str(irq))),
        "corrected %d" % irq: len(j.select(MESSAGE_ID="corrected", LOWLATD_OBJECT=str(irq))),
        "drift somaxconn": len(j.select(MESSAGE_ID="drift", LOWLATD_OBJECT="net.core.somaxconn")),
        "corrected somaxconn": len(j.select(MESSAGE_ID="corrected",
                                            LOWLATD_OBJECT="net.core.somaxconn")),
        "unsupported": len(j.select(MESSAGE_ID="unsupported",
                                    LOWLATD_OBJECT="net.ipv4.tcp_no_such_knob")),
        "unmovable": len(j.select(MESSAGE_ID="unmovable", LOWLATD_OBJECT=str(stuck))),
    }
    t.ok(all(v == 1 for v in counts.values()),
         "each event is logged exactly once, not on every scan", "counts %r" % counts)
    late = [e for e in j.entries(mark2) if e.get("MESSAGE_ID") in
            (h.MID["drift"], h.MID["corrected"]) and
            e.get("LOWLATD_OBJECT") not in ("net.core.somaxconn",)]
    t.ok(not late, "no drift/corrected entries for settings nobody touched",
         "%r" % late[:10])

    every = j.entries()
    bad = [e for e in every if not e.get("MESSAGE") or not e.get("PRIORITY")
           or e.get("SYSLOG_IDENTIFIER") != "lowlatd"]
    t.ok(not bad, "every entry has MESSAGE, PRIORITY, SYSLOG_IDENTIFIER=lowlatd", "%r" % bad[:5])
    bad = [e for e in every if e.get("LOWLATD_KIND") and
           (e.get("MESSAGE_ID") not in h.MID.values() or not e.get("LOWLATD_OBJECT")
            or "LOWLATD_EXPECTED" not in e or "LOWLATD_OBSERVED" not in e)]
    t.ok(not bad, "every setting event has a known MESSAGE_ID and LOWLATD_OBJECT/EXPECTED/OBSERVED",
         "%r" % bad[:5])
    t.ok(not j.errors, "every datagram parsed", "\n".join(j.errors[:10]))
    return every


def check_recovered(t, j, host, stuck):
    # The stuck IRQ comes back by itself (the kernel or its driver moved it): 'recovered'.
    what = "the unmovable IRQ back on 0-1 by itself logs 'recovered'"
    if os.geteuid() != 0:
        t.skip(what, "only root writes through the 0444 mode, as the kernel would")
    else:
        mark4 = j.mark()
        host.set_irq_affinity(stuck, "0-1")
        e = j.wait_for(h.scaled(TIMEOUT), since=mark4, MESSAGE_ID=h.MID["recovered"],
                       LOWLATD_OBJECT=str(stuck))
        t.ok(e is not None and e.get("PRIORITY") == "6",
             "the unmovable IRQ back on 0-1 by itself logs 'recovered' (%s, PRIORITY=6)" % mid("recovered"),
             "entry %r; since: %r" % (e, j.entries(mark4)[:10]))


def check_reloads(t, d, j, host):
    d.rewrite_config(CONFIG + "bogus_key = 1\n")
    line = CONFIG.count("\n") + 1
    mark5 = j.mark()
    d.sighup()
    e = j.wait_for(h.scaled(10), since=mark5, MESSAGE_ID=h.MID["reload-failed"])
    t.ok(e is not None and e.get("PRIORITY") == "3"
         and "%s:%d:" % (d.config_path, line) in e.get("MESSAGE", ""),
         "SIGHUP with a broken config logs 'reload-failed' (%s, PRIORITY=3) "
         "with FILE:LINE in MESSAGE" % mid("reload-failed"), "entry %r; since: %r" % (e, j.entries(mark5)[:10]))
    d.rewrite_config(CONFIG.replace("8192", "16384"))
    mark6 = j.mark()
    d.sighup()
    e = j.wait_for(h.scaled(10), since=mark6, MESSAGE_ID=h.MID["reloaded"])
    t.ok(e is not None and e.get("PRIORITY") == "6",
         "SIGHUP with a good config logs 'reloaded' (%s, PRIORITY=6)" % mid("reloaded"),
         "entry %r; since: %r" % (e, j.entries(mark6)[:10]))
    t.ok(d.poll_until(lambda: host.sysctl("net.core.somaxconn") == "16384", h.scaled(TIMEOUT)),
         "the reloaded config is applied")


if __name__ == "__main__":
    h.main(run)
