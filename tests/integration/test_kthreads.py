#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""[cpus] kthreads = housekeeping against the real kernel and its proc connector, in
observe mode: nothing on this machine is changed.

lowlatd runs with --root / --observe in a private mount namespace, where a fake journal
socket collects its entries; CPU 1 plays the isolated CPU, and the scan runs every 60 s,
so that what it reports within a second of a thread's creation can only have come from
the proc connector. Kernel threads are created by mounting a small ext4 image through a
loop device, in the test's private mount namespace (kthread_harness.LoopMounts): the kernel
starts jbd2/loopN-8, a movable thread, and a workqueue rescuer with PF_NO_SETAFFINITY. The
test listens to the proc connector too, for the kernel's own fork times.

Checked: a first pass (--once) reports every kernel thread allowed on CPU 1: as one it would
change, or, the per-CPU ones with PF_NO_SETAFFINITY, as unmovable; each thread created afterwards is reported, with the
journal's fields, within 100 ms of its fork (the kernel's time); nothing of any kernel
thread changes (CPUs, policy); with lowlatd stopped (SIGSTOP) while kernel threads are
created until its connector socket drops messages, it says so once, looks at every kernel
thread, reports the ones created meanwhile, and the next new thread within 100 ms again;
nothing else is disturbed (no other warning, the daemon stops cleanly). The enforcing side
(threads really moved) runs in the VM suite (tests/e2e/guest.d/50-kthreads.sh) and on fake
trees (tests/unit/test-setting-kthreads.c)."""

import os
import signal
import time

import kthread_harness as k
import lowlat_constants as C
import lowlat_harness as h

CONFIG = """\
[daemon]
scan_interval = 60s

[cpus]
isolated = 1
housekeeping = 0
kthreads = housekeeping
"""

DEADLINE = 0.100  # seconds from the kernel's fork to lowlatd's report (the figure)


def drift_of(journal, tid, since=0):
    """lowlatd's report of kernel thread tid, or None: a drift, or for a thread the kernel
    pins (PF_NO_SETAFFINITY) an unmovable entry, never both."""
    got = [e for mid in ("drift", "unmovable")
           for e in journal.select(since, MESSAGE_ID=mid, LOWLATD_KIND="kthread_affinity", LOWLATD_OBJECT=str(tid))]
    return min(got, key=lambda e: e.time) if got else None


def wait_reported(d, journal, forks, since=0, timeout=None):
    """Waits until every fork in forks has its drift entry; returns {tid: entry}."""
    def all_there():
        found = {tid: drift_of(journal, tid, since) for tid, _, _ in forks}
        return found if all(found.values()) else None
    return d.poll_until(all_there, timeout or h.scaled(3), interval=0.01) or \
        {tid: drift_of(journal, tid, since) for tid, _, _ in forks}


def cpu_ticks(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def quiet(pid):
    """Whether the process used no CPU time over 0.3 s."""
    before = cpu_ticks(pid)
    time.sleep(0.3)
    return cpu_ticks(pid) == before


def late(forks, reported):
    """'tid (comm): N ms' for each fork reported after DEADLINE, or not at all."""
    out = []
    for tid, forked, _ in forks:
        e = reported.get(tid)
        delay = (e.time - forked) if e else None
        if delay is None or delay > DEADLINE:
            out.append("%d (%s): %s" % (tid, k.comm(tid) or "gone", "not reported" if e is None else
                                        "%.1f ms" % (delay * 1000)))
    return out


def delays_ms(forks, reported):
    return sorted((reported[tid].time - forked) * 1000 for tid, forked, _ in forks if reported.get(tid))


def created_by_a_mount(forks, mounts):
    """Mounts the image; returns the forks of the kernel threads that started. The mount
    returns once they exist; their forks reach this listener within a millisecond or so."""
    mark = forks.mark()
    mounts.mount()
    h.poll_until(lambda: forks.since(mark), h.scaled(2), interval=0.005)
    time.sleep(0.05)
    return forks.since(mark)


def lost_notices(journal, since):
    return [e["MESSAGE"] for e in journal.entries(since) if "Kernel thread creations were lost" in e.get("MESSAGE", "")]


def run(t):
    h.require_root("the proc connector (CAP_NET_ADMIN) and loop mounts")
    if os.cpu_count() is None or os.cpu_count() < 2:
        h.skip("needs two CPUs (CPU 1 plays the isolated one)")
    h.enter_private_mount_namespace("a fake journal and loop mounts of the test's own")
    journal = h.JournalSocket()
    tmp = h.make_tempdir("lowlat-kthreads-")
    forks = k.KthreadForks()
    mounts = k.LoopMounts(tmp)
    try:
        check(t, journal, tmp, forks, mounts)
    finally:
        mounts.close()
        forks.close()


def check(t, journal, tmp, forks, mounts):
    before = k.kthreads()
    host = h.LiveRoot(tmp)

    # What a first pass finds: --once --changed prints every setting that is not in order.
    p = h.run_lowlatd(host, ["--once", "--changed", "--observe"], h.write_config(host, CONFIG, "once.conf"))
    rows = {}
    for line in p.stdout.splitlines():
        cols = line.split(None, 3)
        if len(cols) == 4 and cols[0] == "kthread_affinity":
            rows[int(cols[1])] = cols[3]
    on_cpu1 = [tid for tid, (name, cpus, _, _) in before.items()
               if cpus and 1 in h.parse_cpulist(cpus) and not name.startswith("irq/")]
    missing = [tid for tid in on_cpu1 if tid not in rows and tid in k.kthreads()]
    t.ok(p.returncode == C.define("EXIT_DRIFT") and on_cpu1 and not missing,
         "lowlatd --once --observe: every kernel thread allowed on CPU 1 would change or is unmovable (%d of them)" %
         len(on_cpu1),
         "exit %d; not reported: %s\n%s" % (p.returncode, ", ".join("%d (%s)" % (tid, before[tid][0]) for tid in missing),
                                            p.stderr[-2000:]))
    percpu = [tid for tid, text in rows.items() if "(PF_NO_SETAFFINITY)" in text]
    t.ok(all(tid in percpu for tid, (name, _, _, _) in before.items() if name in ("ksoftirqd/1", "migration/1")),
         "per-CPU threads say PF_NO_SETAFFINITY (%d of them, ksoftirqd/1 and migration/1 among them)" % len(percpu),
         "%r" % rows)

    d = h.Daemon(host, CONFIG, extra_args=["--observe"])
    d.wait_ready()
    started = journal.mark()

    # A kernel thread created afterwards: seen through the proc connector at once.
    new = created_by_a_mount(forks, mounts)
    got = wait_reported(d, journal, new, started)
    t.ok(new and not late(new, got),
         "each kernel thread the mount started (%s) is reported within %d ms of its fork: %s ms" %
         (", ".join(k.comm(tid) or str(tid) for tid, _, _ in new), DEADLINE * 1000,
          ", ".join("%.1f" % ms for ms in delays_ms(new, got))),
         "\n".join(late(new, got)) + "\n" + d.stderr_tail())
    both = [tid for tid, _, _ in new
            if journal.select(started, MESSAGE_ID="unmovable", LOWLATD_OBJECT=str(tid)) and
            journal.select(started, MESSAGE_ID="drift", LOWLATD_OBJECT=str(tid))]
    t.ok(not both, "a new thread the kernel pins is reported unmovable, never first as a drift",
         "drift and unmovable: %r" % both)
    jbd2 = [got.get(tid) for tid, _, _ in new if (k.comm(tid) or "").startswith("jbd2/")]
    e = jbd2[0] if jbd2 else None
    t.ok(e and e.get("LOWLATD_EXPECTED") == "0" and e.get("LOWLATD_OBSERVED") == "0-1" and
         e.get("LOWLATD_KTHREAD_NAME", "").startswith("jbd2/"),
         "jbd2 is reported as a drift from 0-1 to 0, its name in LOWLATD_KTHREAD_NAME: %s" %
         (e.get("MESSAGE") if e else None), "%r" % jbd2)
    t.ok(not journal.select(started, MESSAGE_ID="corrected") and
         not journal.select(started, MESSAGE_ID="correction-failed"),
         "observe mode corrects nothing", "%r" % journal.select(started, MESSAGE_ID="corrected")[:3])
    mounts.umount()

    # Lost events: the socket overflows while lowlatd is stopped.
    t.ok(k.socket_drops(d.pid) == 0, "lowlatd has a proc connector socket, no drops yet",
         "drops: %r" % k.socket_drops(d.pid))
    d.signal(signal.SIGSTOP)
    mark = forks.mark()
    cycles = 0
    try:
        while (k.socket_drops(d.pid) or 0) == 0 and cycles < 1500:
            mounts.cycles(25)
            cycles += 25
    finally:
        d.signal(signal.SIGCONT)
    drops = k.socket_drops(d.pid)
    t.ok(drops and drops > 0, "%d mounts while lowlatd was stopped: its socket dropped %s messages" % (cycles, drops))
    lost = d.poll_until(lambda: lost_notices(journal, started), h.scaled(3))
    t.ok(lost, "lowlatd says that kernel thread creations were lost: %s" % (lost[0] if lost else None),
         d.stderr_tail())
    h.settle(0.5)
    t.ok(len(lost_notices(journal, started)) == 1, "once (%d)" % len(lost_notices(journal, started)))

    # After the overflow the connector still works, at once: once lowlatd has caught up
    # with the backlog (its CPU time standing still for 0.3 s), so that the bound measures
    # the connector, not the recovery's length on a loaded machine.
    d.poll_until(lambda: quiet(d.pid), h.scaled(10))
    new = created_by_a_mount(forks, mounts)
    got = wait_reported(d, journal, new, started)
    t.ok(new and not late(new, got), "after the overflow, a new kernel thread is reported within %d ms again: %s ms" %
         (DEADLINE * 1000, ", ".join("%.1f" % ms for ms in delays_ms(new, got))), "\n".join(late(new, got)))
    mounts.umount()

    # The test has no system bus; and the first pass in observe mode reports every thread
    # allowed on CPU 1 at once, more than this fake journal's socket queue (10 datagrams)
    # takes: lowlatd says how many it dropped, which is the journal's business, not lost
    # posture. A new thread with PF_NO_SETAFFINITY (the ext4 rescuer) is unmovable, as
    # enforce mode would find it.
    warnings = [e["MESSAGE"] for e in journal.entries(started)
                if int(e.get("PRIORITY", "6")) <= 4 and e.get("MESSAGE_ID") != h.MID["drift"] and
                not (e.get("MESSAGE_ID") == h.MID["unmovable"] and "PF_NO_SETAFFINITY" in e["MESSAGE"]) and
                "on the system bus" not in e["MESSAGE"] and not e["MESSAGE"].endswith("the journal was not accepting them")]
    t.ok(not warnings, "no warning but drift and unmovable reports (the rest of the posture is undisturbed)",
         "\n".join(warnings[:10]))

    after = k.kthreads()
    changed = ["%d %s: %r -> %r" % (tid, before[tid][0], before[tid], after[tid])
               for tid in before if tid in after and before[tid][1:] != after[tid][1:]]
    t.ok(not changed, "no kernel thread that was there before has other CPUs or another policy (%d compared)" %
         len([tid for tid in before if tid in after]), "\n".join(changed[:10]))
    t.stopped_cleanly(d)


if __name__ == "__main__":
    h.main(run)
