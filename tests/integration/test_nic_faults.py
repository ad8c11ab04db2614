#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""NIC faults against the real kernel, in a network namespace of our own: links renamed
and deleted while lowlatd applies a posture that matches them, and queues that vanish
between their uevent and lowlatd's write.

The test re-executes itself under `unshare --net --mount --propagation private`; nothing
it does reaches this machine's interfaces. Inside: a fresh sysfs on /sys, a FakeHost tree
for --root with the namespace's /sys/class/net and /sys/devices/virtual/net bind-mounted
into it (every queue file is the kernel's), and lowlatd with udev_source = kernel and a
scan a minute away, `[nic "f*"]` holding txqueuelen and every queue's rps_cpus and
xps_cpus.

Cases:
  churn   60 veth pairs created with 4 queues, each renamed within the glob, renamed out
          of it or deleted at once while lowlatd applies them; a steady pair (fs0/fs1) is
          changed by nobody. lowlatd stays up, reports no failure and no failure twice for
          one object, keeps nothing of the deleted links, gives the survivors their
          posture, and the steady pair keeps its own.
  flip    fp0 renamed to xp0 and back 100 times in one `ip -batch`: lowlatd follows, reports
          no failure, fp0 ends with its posture (and the restore below finds its originals).
  queues  `ethtool -L fq0 rx 1 tx 1` and `rx 8 tx 8` in a tight loop (queues removed and
          added under lowlatd's writes): the same, and at the end every queue of fq0 has
          its mask.
  restore `lowlatctl restore` puts back the original txqueuelen, rps_cpus and xps_cpus of
          every link and queue that still exists.

Exit 77 with a reason: not root, unshare/ip/ethtool missing, no network namespace, no
veth, fewer than 2 CPUs, no RPS in this kernel.
"""

import json
import os
import re
import subprocess
import threading
import time

import busctl_harness as b
import lowlat_harness as h

NS_ENV = "LOWLAT_NIC_FAULTS_NETNS"
TOOLS = ("unshare", "ip", "ethtool", "mount", "umount")
TIMEOUT = 5
WANT = 4321
CHURN = 60
FLAPS = 40
FLIPS = 100
QUEUES = 4
FQ_QUEUES = 8

CONFIG = """\
[daemon]
scan_interval = 1min
udev_source = kernel

[cpus]
isolated = {isolated}

[nic "f*"]
txqueuelen = {want}
rps_cpus = housekeeping
xps_cpus = housekeeping
"""



def set_channels(dev, n, busy):
    """ethtool -L DEV rx N tx N. In a tight loop the kernel sometimes answers "netlink error:
    Resource temporarily unavailable" (a few runs in a hundred under ASan, with or without
    the restore fixes; the cause in the kernel is not traced), which left fq0 with one
    queue each way and failed the check below: asked again, a bounded number of times;
    busy[0] counts those answers."""
    for _ in range(10):
        r = h.run_cmd("ethtool", "-L", dev, "rx", str(n), "tx", str(n))
        if r.returncode == 0 or "temporarily unavailable" not in r.stderr:
            return r
        busy[0] += 1
        time.sleep(0.05)
    return r


def txqlen(dev):
    r = h.run_cmd("ip", "-j", "link", "show", "dev", dev, check=True)
    return int(json.loads(r.stdout)[0]["txqlen"])


def links():
    r = h.run_cmd("ip", "-j", "link", "show", check=True)
    return sorted(l["ifname"] for l in json.loads(r.stdout))


def rx_queues(dev):
    return sorted(q for q in os.listdir("/sys/class/net/%s/queues" % dev) if q.startswith("rx-"))


def tx_queues(dev):
    return sorted(q for q in os.listdir("/sys/class/net/%s/queues" % dev) if q.startswith("tx-"))


def rps(dev, q):
    return h.mask_to_set(h.parse_mask(h.read_text("/sys/class/net/%s/queues/%s/rps_cpus" % (dev, q)).strip()))


def xps(dev, q):
    return h.mask_to_set(h.parse_mask(h.read_text("/sys/class/net/%s/queues/%s/xps_cpus" % (dev, q)).strip()))


def wrong(dev, housekeeping):
    """What of dev's posture does not hold, as text; [] when all does."""
    bad = []
    try:
        if txqlen(dev) != WANT:
            bad.append("%s txqueuelen %d" % (dev, txqlen(dev)))
        for q in rx_queues(dev):
            if rps(dev, q) != housekeeping:
                bad.append("%s/%s rps_cpus %s" % (dev, q, sorted(rps(dev, q))))
        for q in tx_queues(dev):
            if xps(dev, q) != housekeeping:
                bad.append("%s/%s xps_cpus %s" % (dev, q, sorted(xps(dev, q))))
    except (OSError, RuntimeError) as e:
        bad.append("%s: %s" % (dev, e))
    return bad


FAILURE = re.compile(r": could not set | failed|Cannot |[Ee]rror|unexpected|another writer|could not be put back")
OBJECT = re.compile(r"\b(f[a-z0-9]+/(?:rx-\d+|tx-\d+|txqueuelen))\b")


def failures(d, since=0):
    return [l for l in d.stderr_lines()[since:] if FAILURE.search(l)]


def repeated(lines):
    """Objects a failure was reported for more than once."""
    seen = {}
    for l in lines:
        for o in OBJECT.findall(l):
            seen[o] = seen.get(o, 0) + 1
    return {o: n for o, n in seen.items() if n > 1}


def make_host(ncpus):
    host = h.FakeHost(ncpus=ncpus, nirqs=20, isolated=str(ncpus - 1))
    h.bind_into_root(host, *h.NETNS_SYSFS)
    return host


def churn(survivors, errors):
    """Creates pairs and at once renames or deletes them, as fast as ip(8) goes."""
    try:
        for i in range(CHURN):
            a, b_ = "fc%da" % i, "fc%db" % i
            h.add_veth(a, b_, QUEUES)
            h.run_cmd("ip", "link", "set", a, "up")
            if i % 3 == 0:
                h.run_cmd("ip", "link", "set", a, "name", "fr%d" % i, check=True)      # still in the glob
                h.run_cmd("ip", "link", "del", "fr%d" % i, check=True)
            elif i % 3 == 1:
                h.run_cmd("ip", "link", "set", a, "name", "x%d" % i, check=True)       # out of the glob
                h.run_cmd("ip", "link", "set", "x%d" % i, "name", "fk%d" % i, check=True)  # and back in
                survivors.append("fk%d" % i)
                survivors.append(b_)
            else:
                h.run_cmd("ip", "link", "del", a, check=True)
    except Exception as e:  # noqa: BLE001 - reported by the main thread
        errors.append(repr(e))


def main_phase(t, host, ncpus):
    housekeeping = set(range(ncpus - 1))
    view = b.SettingsView(host.tmp)
    d = None
    try:
        d = h.Daemon(host, CONFIG.format(isolated=ncpus - 1, want=WANT), env=view.env())
        d.wait_ready(h.scaled(30))
        view.wait_owner(d, h.scaled(TIMEOUT))
        steady = ("fs0", "fs1", "fq1")
        check_start(t, d, housekeeping, steady)
        survivors = check_churn(t, d, view, housekeeping, steady)
        check_flip(t, d, housekeeping)
        flaps = check_vanishing_queues(t, d, housekeeping, steady)
        check_single_queue(t, d, housekeeping, flaps)
        check_restore(t, d, view, steady, survivors)
        t.ok(not d.sanitizer_reports(), "no sanitizer report", "\n".join(d.sanitizer_reports()[:5]))
        t.note("lowlatd stderr (%d lines), last 20:\n%s" % (len(d.stderr_lines()), "\n".join(d.stderr_lines()[-20:])))
        t.stopped_cleanly(d)
        d = None
    finally:
        if d is not None:
            d.kill()
        view.stop()


def check_start(t, d, housekeeping, steady):
    ok = h.poll_until(lambda: not any(wrong(x, housekeeping) for x in steady + ("fq0",)), h.scaled(TIMEOUT),
                      alive=d.alive)
    t.ok(ok, "start: fs0, fs1, fq0 and fq1 hold txqueuelen %d, rps_cpus and xps_cpus housekeeping" % WANT,
         "\n".join(sum((wrong(x, housekeeping) for x in steady + ("fq0",)), [])))


def check_churn(t, d, view, housekeeping, steady):
    """Links renamed and deleted mid-apply; returns the links that survive."""
    mark = len(d.stderr_lines())
    survivors, errors = [], []
    th = threading.Thread(target=churn, args=(survivors, errors))
    t0 = time.monotonic()
    th.start()
    th.join(h.scaled(120))
    t.ok(not errors and not th.is_alive(), "[churn] %d veth pairs created, renamed and deleted in %.1f s"
         % (CHURN, time.monotonic() - t0), "\n".join(errors))
    ok = h.poll_until(lambda: not any(wrong(x, housekeeping) for x in survivors), h.scaled(TIMEOUT),
                      alive=d.alive)
    t.ok(ok and d.alive(), "[churn] lowlatd is up, and the %d surviving links (renamed out of the glob and back, "
         "or their peers) hold txqueuelen and every queue's mask" % len(survivors),
         "\n".join(sum((wrong(x, housekeeping) for x in survivors), [])[:10]))
    bad = failures(d, mark)
    t.ok(not bad, "[churn] no failure reported for links deleted or renamed mid-apply",
         "\n".join(bad[:10]) + "\nrepeated: %r" % repeated(bad))
    t.ok(not repeated(bad), "[churn] no failure reported twice for one object", repr(repeated(bad)))
    if view.available:
        present = set(links())
        stale = [r for r in view.rows() if r[0].startswith("nic_") and r[1].split("/")[0] not in present]
        t.ok(not stale, "[churn] ListSettings keeps nothing of the deleted links", repr(stale[:5]))
        out = [r for r in view.rows() if r[1].startswith("x")]
        t.ok(not out, "[churn] nothing is kept under a name outside the glob", repr(out[:5]))
    else:
        t.skip("[churn] ListSettings keeps nothing of the deleted links", view.why)
    t.ok(not any(wrong(x, housekeeping) for x in steady), "[churn] fs0, fs1 and fq1 were not disturbed",
         "\n".join(sum((wrong(x, housekeeping) for x in steady), [])))
    return survivors


def check_flip(t, d, housekeeping):
    # flip: one link renamed out of the glob and back, over and over, faster than lowlatd
    # follows (each rename out puts its queues back under a name the next rename takes
    # away; each one back applies them again). With the name looked up once, a write
    # here failed with ENOENT in 1 of 5 ASan runs; looked up again in a bounded loop,
    # a put-back still failed in 2 of 5 (the name went back and forth between looks).
    mark = len(d.stderr_lines())
    batch = "".join("link set fp0 name xp0\nlink set xp0 name fp0\n" for _ in range(FLIPS))
    t0 = time.monotonic()
    r = subprocess.run(["ip", "-batch", "-"], input=batch, capture_output=True, text=True, timeout=h.scaled(60))
    secs = time.monotonic() - t0
    ok = h.poll_until(lambda: not wrong("fp0", housekeeping), h.scaled(TIMEOUT), alive=d.alive)
    t.ok(r.returncode == 0 and ok and d.alive(), "[flip] fp0 renamed to xp0 and back %d times (%.2f s): lowlatd is up "
         "and fp0 holds its posture" % (FLIPS, secs), r.stderr + "\n".join(wrong("fp0", housekeeping)))
    bad = failures(d, mark)
    t.ok(not bad, "[flip] no failure reported", "\n".join(bad[:10]))


def check_vanishing_queues(t, d, housekeeping, steady):
    """Queues that vanish between their uevent and the write; returns the rounds done."""
    mark = len(d.stderr_lines())
    t0 = time.monotonic()
    flaps = 0
    flap_error = ""
    busy = [0]
    for i in range(FLAPS):
        r = set_channels("fq0", 1, busy)
        if r.returncode == 0:
            r = set_channels("fq0", FQ_QUEUES, busy)
        if r.returncode != 0:
            flap_error = "%s: exit %d: %s" % (" ".join(r.args), r.returncode, r.stderr.strip())
            break
        flaps += 1
    secs = time.monotonic() - t0
    if flaps == 0:
        t.skip("[queues] fq0's queues removed and added under lowlatd's writes",
               "ethtool -L fq0 rx 1 tx 1 failed: %s"
               % h.run_cmd("ethtool", "-L", "fq0", "rx", "1", "tx", "1").stderr.strip())
    else:
        ok = h.poll_until(lambda: len(rx_queues("fq0")) == FQ_QUEUES and len(tx_queues("fq0")) == FQ_QUEUES
                          and not wrong("fq0", housekeeping), h.scaled(TIMEOUT), alive=d.alive)
        t.ok(ok and d.alive(), "[queues] after %d rounds of ethtool -L fq0 rx 1 tx 1 / rx %d tx %d (%.1f s) lowlatd "
             "is up and all %d rx and %d tx queues of fq0 have their masks"
             % (flaps, FQ_QUEUES, FQ_QUEUES, secs, FQ_QUEUES, FQ_QUEUES),
             "\n".join(wrong("fq0", housekeeping) + [flap_error, "fq0 has rx %d tx %d; ethtool -L answered EAGAIN %d times"
                                                       % (len(rx_queues("fq0")), len(tx_queues("fq0")), busy[0])]))
        bad = failures(d, mark)
        t.ok(not repeated(bad), "[queues] no failure reported twice for one queue (%d reported in all)" % len(bad),
             "\n".join(bad[:10]))
        t.ok(len(bad) <= 2 * FQ_QUEUES,
             "[queues] at most one report per queue that vanished mid-write (%d)" % len(bad), "\n".join(bad[:10]))
        t.ok(not any(wrong(x, housekeeping) for x in steady), "[queues] fs0, fs1 and fq1 were not disturbed",
             "\n".join(sum((wrong(x, housekeeping) for x in steady), [])))
    return flaps


def check_single_queue(t, d, housekeeping, flaps):
    # a pause at one queue each way, long enough for lowlatd to look at the single
    # queue (XPS is offered on multi-queue devices only), then back
    mark = len(d.stderr_lines())
    if flaps > 0:
        h.run_cmd("ethtool", "-L", "fq0", "rx", "1", "tx", "1", check=True)
        h.settle(1)
        h.run_cmd("ethtool", "-L", "fq0", "rx", str(FQ_QUEUES), "tx", str(FQ_QUEUES), check=True)
        ok = h.poll_until(lambda: not wrong("fq0", housekeeping), h.scaled(TIMEOUT), alive=d.alive)
        t.ok(ok, "[queues] one queue each way for a second, then %d again: every queue of fq0 has its masks "
             "(what a single queue could not take is not kept as unsupported)" % FQ_QUEUES,
             "\n".join(wrong("fq0", housekeeping) + d.stderr_lines()[mark:][-10:]))


def check_restore(t, d, view, steady, survivors):
    """lowlatctl restore after all of it."""
    p, why = view.lowlatctl_restore()
    if p is None:
        t.skip("lowlatctl restore after the faults", why)
    else:
        t.ok(p.returncode == 0, "[restore] lowlatctl restore exits 0", p.stderr)
        bad = []
        for dev in steady + ("fq0", "fp0", "fp1") + tuple(survivors):
            if txqlen(dev) != 1000:
                bad.append("%s txqueuelen %d" % (dev, txqlen(dev)))
            bad += ["%s/%s rps_cpus %s" % (dev, q, sorted(rps(dev, q))) for q in rx_queues(dev) if rps(dev, q)]
            bad += ["%s/%s xps_cpus %s" % (dev, q, sorted(xps(dev, q))) for q in tx_queues(dev) if xps(dev, q)]
        # A queue of a link renamed out of the glob and back mid-apply (x46 -> fk46) kept
        # lowlatd's mask here in about 4 runs of 10 under ASan, until the put-back as it
        # left the glob followed the interface by its index, not by a name looked up
        # once (issue 13).
        t.ok(not bad, "[restore] every link that still exists (%d) has txqueuelen 1000, rps_cpus and xps_cpus 0 "
             "again" % (len(steady) + 3 + len(survivors)),
             "\n".join(bad[:10] + [l for l in d.stderr_lines() if "could not be put back" in l][:5]))


def run(t):
    with h.netns(NS_ENV, TOOLS):
        ncpus = h.possible_cpus(2)
        h.add_veths(("fs0", "fs1", QUEUES), ("fq0", "fq1", FQ_QUEUES), ("fp0", "fp1", QUEUES))
        for dev in ("fs0", "fs1", "fq0", "fq1", "fp0", "fp1"):
            h.run_cmd("ip", "link", "set", dev, "up", check=True)
        if not os.path.exists("/sys/class/net/fs0/queues/rx-0/rps_cpus"):
            h.skip("this kernel has no RPS (no rx-0/rps_cpus)")
        host = make_host(ncpus)
        main_phase(t, host, ncpus)


if __name__ == "__main__":
    h.main(run)
