#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""RPS and XPS ([nic] rps_cpus, xps_cpus, rps_flow_cnt; [cpus] rps_default_mask) against
the real kernel, in a network namespace of our own.

The test re-executes itself under `unshare --net --mount --propagation private`; nothing
it does reaches this machine's interfaces or sysctls. Inside: a fresh sysfs on /sys, a
FakeHost tree for --root with as many CPUs as this machine has (the kernel refuses a mask
wider than its CPUs) and the last one isolated, and the namespace's real
/sys/class/net, /sys/devices/virtual/net and /proc/sys/net bind-mounted into it, so that
every queue file and net.core.rps_default_mask (per namespace since 6.3) is the kernel's.
lowlatd runs with udev_source = kernel and a scan interval of a minute: whatever it puts
right within seconds came through inotify or a uevent, not the scan.

Cases: veth pairs created with 4 queues each way get every queue's masks and flow count
at start; a write to one queue's rps_cpus and to one xps_cpus inside the namespace is put
back (times reported); `ethtool -L rx 2` then `rx 4` (veth supports channels) gives the
recreated queues their masks at once; a new link matching the glob gets its masks at
once; links deleted while being applied leave no failure and no stuck settings;
net.core.rps_default_mask is kept, and a new link's queues start from it; ListSettings
shows the queue settings; `lowlatctl restore` puts back every original that still exists.
Last, with /proc/irq a fakeirqfs (where one is built): a channel change on a NIC that no
[nic] section matches makes lowlatd look at the IRQs again at once (a driver re-pins its
queue IRQs then, onto the isolated CPUs too, and no event tells of that).

Exit 77 with a reason: not root, unshare/ip/ethtool missing, no network namespace, no
veth, fewer than 2 CPUs, no RPS in this kernel.
"""

import os
import re
import sys
import time

import busctl_harness as b
import lowlat_harness as h

NS_ENV = "LOWLAT_RPS_NETNS"
TOOLS = ("unshare", "ip", "ethtool", "mount", "umount")
TIMEOUT = 5       # seconds (scaled) for what an event must do; the scan is a minute away
QUEUES = 4

CONFIG = """\
[daemon]
scan_interval = 1min
udev_source = kernel

[cpus]
isolated = {isolated}
rps_default_mask = housekeeping

[nic "rp*"]
rps_cpus = housekeeping
xps_cpus = {xps}
rps_flow_cnt = 4096

[nic "rpoff*"]
rps_cpus = none
"""



def qpath(dev, queue, name):
    return "/sys/class/net/%s/queues/%s/%s" % (dev, queue, name)


def qread(dev, queue, name):
    """The file's value; a missing file raises (the caller asked about a queue that exists)."""
    return h.read_text(qpath(dev, queue, name)).strip()


def qwrite(dev, queue, name, value):
    with open(qpath(dev, queue, name), "w") as f:
        f.write(value)


def queues(dev, prefix):
    return sorted(q for q in os.listdir("/sys/class/net/%s/queues" % dev) if q.startswith(prefix))


def mask_cpus(text):
    return h.mask_to_set(h.parse_mask(text))


class Posture:
    """What every queue should read, in CPUs (masks compare by their CPUs)."""

    def __init__(self, housekeeping, xps):
        self.rps = housekeeping
        self.xps = xps

    def wrong(self, dev, flow=True, rps=None):
        """'queue/file: value' for every file of dev that differs; [] when all hold."""
        rps = self.rps if rps is None else rps
        bad = []
        for q in queues(dev, "rx-"):
            v = qread(dev, q, "rps_cpus")
            if mask_cpus(v) != rps:
                bad.append("%s/rps_cpus: %s" % (q, v))
            if flow:
                v = qread(dev, q, "rps_flow_cnt")
                if v != "4096":
                    bad.append("%s/rps_flow_cnt: %s" % (q, v))
        if flow:
            for q in queues(dev, "tx-"):
                v = qread(dev, q, "xps_cpus")
                if mask_cpus(v) != self.xps:
                    bad.append("%s/xps_cpus: %s" % (q, v))
        return bad


def failures(d, since=0):
    return [l for l in d.stderr_lines()[since:]
            if re.search(r": could not set | failed|Cannot |[Ee]rror|unexpected", l)]


def make_host(ncpus):
    host = h.FakeHost(ncpus=ncpus, nirqs=20, isolated=str(ncpus - 1))
    h.bind_into_root(host, *h.NETNS_SYSFS, "proc/sys/net")
    return host


class Setup:
    """What the phases share: the CPUs, the posture they check for, and the settings view."""

    def __init__(self, ncpus, view):
        self.ncpus = ncpus
        self.view = view
        self.housekeeping = set(range(ncpus - 1))
        self.xps = {0}
        self.want = Posture(self.housekeeping, self.xps)
        self.hk_mask = h.format_mask(self.housekeeping, ncpus)
        self.all_mask = h.format_mask(set(range(ncpus)), ncpus)


def main_phase(t, host, ncpus):
    setup = Setup(ncpus, b.SettingsView(host.tmp))
    view = setup.view
    d = None
    try:
        d = h.Daemon(host, CONFIG.format(isolated=ncpus - 1, xps="0"), env=view.env())
        waited = d.wait_ready(h.scaled(30))
        t.ok(True, "READY=1 after %.2fs" % waited)
        view.wait_owner(d, h.scaled(TIMEOUT))

        check_start(t, setup)
        check_put_back(t, d, setup)
        check_recreated_queues(t, d, setup)
        check_new_link(t, d, setup)
        check_renames(t, d, setup)
        check_deleted_links(t, d, setup)
        check_restore(t, setup)

        t.note("lowlatd stderr (%d lines), first 30:\n%s" % (len(d.stderr_lines()), "\n".join(d.stderr_lines()[:30])))
        t.stopped_cleanly(d)
        d = None
    finally:
        if d is not None:
            d.kill()
        view.stop()


def check_start(t, setup):
    view, housekeeping, want, hk_mask, all_mask = setup.view, setup.housekeeping, setup.want, setup.hk_mask, setup.all_mask
    # 1. at start
    for dev in ("rp0", "rp1"):
        bad = want.wrong(dev)
        t.ok(not bad, "start: every one of %s's %d rx and %d tx queues holds rps_cpus %s, rps_flow_cnt 4096, "
             "xps_cpus 1" % (dev, QUEUES, QUEUES, hk_mask), "\n".join(bad))
    bad = want.wrong("rpoff0", flow=False, rps=set())
    t.ok(not bad, "start: rps_cpus = none leaves rpoff0's queues with the empty mask (was %s)" % all_mask,
         "\n".join(bad))
    v = h.read_text("/proc/sys/net/core/rps_default_mask").strip()
    t.ok(mask_cpus(v) == housekeeping, "start: net.core.rps_default_mask is %s in the namespace" % hk_mask,
         "reads %r" % v)

    if view.available:
        rows = [r for r in view.rows() if r[0] in ("nic_rps_cpus", "nic_xps_cpus", "nic_rps_flow_cnt")
                and r[1].startswith("rp0/")]
        kinds = {r[0] for r in rows}
        t.ok(len(rows) == 3 * QUEUES and kinds == {"nic_rps_cpus", "nic_xps_cpus", "nic_rps_flow_cnt"} and
             all(r[4] in ("ok", "corrected") for r in rows),
             "ListSettings: rp0 has %d queue settings (rx-N rps_cpus and rps_flow_cnt, tx-N xps_cpus), all "
             "ok or corrected" % (3 * QUEUES), repr(rows))
    else:
        t.skip("ListSettings shows the queue settings", view.why)


def check_put_back(t, d, setup):
    housekeeping, xps, want, all_mask = setup.housekeeping, setup.xps, setup.want, setup.all_mask
    # 2. a write inside the namespace is put back through inotify; one write per queue
    # (five quick ones to one file would be a fight, which lowlatd slows down for)
    mark = len(d.stderr_lines())
    times = []
    for dev in ("rp0", "rp1"):
        for q in queues(dev, "rx-"):
            qwrite(dev, q, "rps_cpus", all_mask)
            ok, secs = h.timed(lambda: mask_cpus(qread(dev, q, "rps_cpus")) == housekeeping,
                               h.scaled(TIMEOUT), d.alive)
            if not ok:
                break
            times.append(secs)
    t.ok(len(times) == 2 * QUEUES, "echo %s > rps_cpus of each of rp0's and rp1's rx queues is put back, %d "
         "times out of %d (median %.1f ms, max %.1f ms; the scan is a minute away)"
         % (all_mask, len(times), 2 * QUEUES, 1000 * sorted(times)[len(times) // 2] if times else -1,
            1000 * max(times or [-1])),
         "\n".join(want.wrong("rp0") + want.wrong("rp1")))
    qwrite("rp1", "tx-3", "xps_cpus", all_mask)
    ok, secs = h.timed(lambda: mask_cpus(qread("rp1", "tx-3", "xps_cpus")) == xps, h.scaled(TIMEOUT), d.alive)
    t.ok(ok, "echo %s > rp1/queues/tx-3/xps_cpus is put back (%.1f ms)" % (all_mask, 1000 * secs),
         "reads %s" % qread("rp1", "tx-3", "xps_cpus"))
    qwrite("rp1", "rx-0", "rps_flow_cnt", "128")
    ok, secs = h.timed(lambda: qread("rp1", "rx-0", "rps_flow_cnt") == "4096", h.scaled(TIMEOUT), d.alive)
    t.ok(ok, "echo 128 > rp1/queues/rx-0/rps_flow_cnt is put back (%.1f ms)" % (1000 * secs),
         "reads %s" % qread("rp1", "rx-0", "rps_flow_cnt"))
    drift = [l for l in d.stderr_lines()[mark:] if "rp0/rx-1" in l]
    t.ok(drift and any("nic_rps_cpus" in l for l in drift),
         "the drift is logged, naming nic_rps_cpus rp0/rx-1", "\n".join(d.stderr_lines()[mark:][-10:]))


def check_recreated_queues(t, d, setup):
    want = setup.want
    # 3. queues that come later: a channel change removes and re-adds them
    mark = len(d.stderr_lines())
    r = h.run_cmd("ethtool", "-L", "rp0", "rx", "2")
    if r.returncode != 0:
        t.skip("queues recreated by ethtool -L get their masks", "ethtool -L rp0 rx 2: %s" % r.stderr.strip())
    else:
        t.ok(queues("rp0", "rx-") == ["rx-0", "rx-1"], "ethtool -L rp0 rx 2 leaves rx-0 and rx-1",
             repr(queues("rp0", "rx-")))
        t0 = time.monotonic()
        h.run_cmd("ethtool", "-L", "rp0", "rx", str(QUEUES), check=True)
        ok, _ = h.timed(lambda: len(queues("rp0", "rx-")) == QUEUES and not want.wrong("rp0"),
                        h.scaled(TIMEOUT), d.alive)
        t.ok(ok, "ethtool -L rp0 rx %d: the recreated rx-2 and rx-3 get their masks and flow count at once "
             "(%.0f ms)" % (QUEUES, 1000 * (time.monotonic() - t0)), "\n".join(want.wrong("rp0")))
        stale = [l for l in failures(d, mark)]
        t.ok(not stale, "the queues removed meanwhile gave no failure", "\n".join(stale))


def check_new_link(t, d, setup):
    want = setup.want
    # 4. a new link that matches the glob
    t0 = time.monotonic()
    h.add_veth("rp2", "rp3", QUEUES)
    ok, _ = h.timed(lambda: not want.wrong("rp2") and not want.wrong("rp3"), h.scaled(TIMEOUT), d.alive)
    t.ok(ok, "a new veth pair rp2/rp3 (down) gets every queue's masks at once (%.0f ms)"
         % (1000 * (time.monotonic() - t0)), "\n".join(want.wrong("rp2") + want.wrong("rp3")))


def check_renames(t, d, setup):
    ncpus, view, housekeeping, all_mask = setup.ncpus, setup.view, setup.housekeeping, setup.all_mask
    # 5. renames: within the glob the queues stay kept under the new name; out of it
    # they are let go
    h.run_cmd("ip", "link", "set", "rp2", "name", "rpr2", check=True)
    ok, _ = h.timed(lambda: not view.available or any(r[1] == "rpr2/rx-0" for r in view.rows()),
                    h.scaled(TIMEOUT), d.alive)
    t.ok(ok, "rp2 renamed rpr2: its queues are kept under the new name",
         repr([r for r in view.rows() if r[1].startswith("rp")][:6]) if view.available else "")
    qwrite("rpr2", "rx-2", "rps_cpus", all_mask)
    ok, secs = h.timed(lambda: mask_cpus(qread("rpr2", "rx-2", "rps_cpus")) == housekeeping,
                       h.scaled(TIMEOUT), d.alive)
    t.ok(ok, "a write to rpr2/queues/rx-2/rps_cpus after the rename is put back (%.1f ms)" % (1000 * secs),
         "reads %s" % qread("rpr2", "rx-2", "rps_cpus"))
    h.run_cmd("ip", "link", "set", "rpr2", "name", "other2", check=True)
    ok, _ = h.timed(lambda: not view.available
                    or not any(r[1].startswith(("rpr2/", "other2/")) for r in view.rows()),
                    h.scaled(TIMEOUT), d.alive)
    t.ok(ok, "renamed out of the glob (other2): its queue settings are dropped")
    qwrite("other2", "rx-2", "rps_cpus", all_mask)
    h.settle(0.5)
    t.ok(mask_cpus(qread("other2", "rx-2", "rps_cpus")) == set(range(ncpus)),
         "and a write to other2's rps_cpus is left alone", "reads %s" % qread("other2", "rx-2", "rps_cpus"))


def check_deleted_links(t, d, setup):
    view, want = setup.view, setup.want
    # 6. links deleted while they are being applied
    mark = len(d.stderr_lines())
    for i in range(10):
        h.add_veth("rpx%d" % i, "rpy%d" % i, QUEUES)
        h.run_cmd("ip", "link", "del", "rpx%d" % i, check=True)
    h.settle(1)
    t.ok(d.alive(), "lowlatd is alive after 10 pairs were created and deleted at once")
    bad = failures(d, mark)
    t.ok(not bad, "links deleted mid-apply: no failure reported", "\n".join(bad))
    if view.available:
        left = [r for r in view.rows() if r[1].startswith("rpx") or r[1].startswith("rpy")]
        t.ok(not left, "ListSettings keeps nothing of the deleted links", repr(left[:5]))
    t.ok(not want.wrong("rp0"), "rp0 still holds its masks", "\n".join(want.wrong("rp0")))


def check_restore(t, setup):
    ncpus, view, housekeeping, hk_mask = setup.ncpus, setup.view, setup.housekeeping, setup.hk_mask
    # 7. restore puts back every original that still exists
    p, why = view.lowlatctl_restore()
    if p is None:
        t.skip("lowlatctl restore puts the queues' and the sysctl's originals back", why)
    else:
        t.ok(p.returncode == 0, "lowlatctl restore exits 0", p.stderr)
        bad = []
        for dev in ("rp0", "rp1", "rp3"):
            # rp3 was created with rps_default_mask in force: their queues had
            # the housekeeping mask before lowlatd looked, and keep it.
            rps_orig = housekeeping if dev == "rp3" else set()
            for q in queues(dev, "rx-"):
                for f, orig in (("rps_cpus", rps_orig), ("rps_flow_cnt", "0")):
                    v = qread(dev, q, f)
                    if (mask_cpus(v) if f == "rps_cpus" else v) != orig:
                        bad.append("%s/%s/%s: %s" % (dev, q, f, v))
            for q in queues(dev, "tx-"):
                v = qread(dev, q, "xps_cpus")
                if mask_cpus(v) != set():
                    bad.append("%s/%s/xps_cpus: %s" % (dev, q, v))
        bad += ["rpoff0/%s/rps_cpus: %s" % (q, qread("rpoff0", q, "rps_cpus")) for q in queues("rpoff0", "rx-")
                if mask_cpus(qread("rpoff0", q, "rps_cpus")) != set(range(ncpus))]
        v = h.read_text("/proc/sys/net/core/rps_default_mask").strip()
        if mask_cpus(v) != set():
            bad.append("rps_default_mask: %s" % v)
        t.ok(not bad, "lowlatctl restore: every queue file of rp0, rp1, rp3 and rpoff0, and rps_default_mask, "
             "reads its original again (rp3 keeps rps_cpus %s, which rps_default_mask gave it at "
             "creation)" % hk_mask, "\n".join(bad))


IRQ_CONFIG = """\
[daemon]
scan_interval = 1min
udev_source = kernel

[cpus]
isolated = {isolated}
"""


def irq_phase(t, ncpus):
    """A channel change on a NIC that no [nic] section matches: a driver re-pins its queue
    IRQs then (virtio-net puts one on each CPU, the isolated ones too: the VM suite's
    guest.d/62-mq.sh), and nothing tells of that but the queues' uevents. /proc/irq is
    fakeirqfs here, whose `set` moves an IRQ the way a driver does, with no inotify event;
    the scan is a minute away. lowlatd must look at the IRQs again when ot0's queues
    change."""
    desc = "ethtool -L on a NIC with no [nic] section: an IRQ a driver moved onto the isolated CPU is put back at once"
    exe = os.environ.get("FAKEIRQFS")
    if not exe or not os.access(exe, os.X_OK) or not os.path.exists("/dev/fuse"):
        t.skip(desc, "no fakeirqfs (FAKEIRQFS unset: no libfuse3) or no /dev/fuse")
        return
    import test_fuse_irq as fi
    host = make_host(ncpus)
    housekeeping = set(range(ncpus - 1))
    fs = fi.FakeIrqFs(exe, host, affinity=h.format_cpulist(housekeeping))
    try:
        fs.start()
    except fi.MountRefused as e:
        t.skip(desc, str(e))
        return
    d = None
    affinity = lambda irq: h.read_text(fs.path(irq, "smp_affinity_list")).strip()
    try:
        d = h.Daemon(host, IRQ_CONFIG.format(isolated=ncpus - 1))
        d.wait_ready(h.scaled(30))
        h.add_veth("ot0", "ot1", QUEUES, up=True)
        time.sleep(h.scaled(1))     # the new link's own events (a replan looks at the IRQs)
        irq = next((n for n, name in host.irq_names.items() if name == "xhci_hcd"), host.irqs[-1])
        fs.control("set %d %d" % (irq, ncpus - 1))
        time.sleep(h.scaled(0.5))
        still = affinity(irq)
        r = h.run_cmd("ethtool", "-L", "ot0", "rx", "2")
        if r.returncode != 0:
            t.skip(desc, "ethtool -L ot0 rx 2: %s" % r.stderr.strip())
        else:
            ok, secs = h.timed(lambda: h.parse_cpulist(affinity(irq)) <= housekeeping, h.scaled(TIMEOUT), d.alive)
            t.ok(ok and still == str(ncpus - 1),
                 "%s: IRQ %d, set to CPU %d with no event (reads %s half a second later), is back on %s %.0f ms "
                 "after the channel change" % (desc, irq, ncpus - 1, still, h.format_cpulist(housekeeping),
                                              1000 * secs),
                 "reads %s\n%s" % (affinity(irq), d.stderr_tail()))
        h.run_cmd("ip", "link", "del", "ot0")
        t.ok(d.alive(), "lowlatd keeps running", d.stderr_tail())
        t.stopped_cleanly(d)
        d = None
    finally:
        if d is not None:
            d.kill()
        fs.stop()


def run(t):
    with h.netns(NS_ENV, TOOLS):
        ncpus = h.possible_cpus(2)
        h.add_veths(("rp0", "rp1", QUEUES), ("rpoff0", "rpoff1", QUEUES), up=True)
        if not os.path.exists(qpath("rp0", "rx-0", "rps_cpus")):
            h.skip("this kernel has no RPS (no rx-0/rps_cpus)")
        if not os.path.exists("/proc/sys/net/core/rps_default_mask"):
            h.skip("this kernel has no net.core.rps_default_mask (6.3 and later)")
        # Where lowlatd has work at start: every rpoff0 queue steers to every CPU.
        for q in queues("rpoff0", "rx-"):
            qwrite("rpoff0", q, "rps_cpus", h.format_mask(set(range(ncpus)), ncpus))
        host = make_host(ncpus)
        main_phase(t, host, ncpus)
        irq_phase(t, ncpus)


if __name__ == "__main__":
    h.main(run)
