#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""[nic "GLOB"] txqueuelen, pause_rx, pause_tx, pause_autoneg and eee against the real
kernel, in a network namespace of our own.

The test re-executes itself under `unshare --net --mount --propagation private`; nothing
it does reaches this machine's interfaces. Inside: a tmpfs on /run/systemd with a fake
journal socket (every event is read as the journal would get it), a fresh sysfs on /sys,
a FakeHost tree for --root (NIC settings speak netlink only), a veth pair and a tap
device, and the real lowlatd with udev_source = kernel and a scan a minute away: a change
put back within seconds came through rtnetlink or the ethtool monitor, not the scan.

Cases: txqueuelen is applied at start on the veth pair and the tap, with no drift
reported; `ip link set dev X txqueuelen N` is put back (drift and corrected journal
entries with LOWLATD_KIND = nic_txqueuelen), 12 times over the three links; pause and EEE
on veth and tap are unsupported with the kernel's reason, one journal entry each, not
repeated after link events, a link going down and up and a reload; ListSettings shows
the new kinds; `lowlatctl restore` puts the original txqueuelen back. Then a second
daemon with a 1 s scan: still one unsupported entry per setting after three scans. Then
`--observe --once` reports the drifted txqueuelen and changes nothing. (A driver that
has pause parameters is not in reach here: the VM suite's e1000e, guest.d/65-link.sh.)

Exit 77 with a reason: not root, unshare/ip missing, no network namespace, no veth or tun.
"""

import json

import busctl_harness as b
import lowlat_harness as h

NS_ENV = "LOWLAT_LINK_NETNS"
TOOLS = ("unshare", "ip", "mount", "umount")
TIMEOUT = 5           # seconds (scaled) for what an event must do
CHANGES = 12
WANT = 4321           # nobody's default
LINKS = ("lk0", "lk1", "lkt0")
UNSUPPORTED = ("pause_autoneg", "pause_rx", "pause_tx", "eee")

CONFIG = """\
[daemon]
scan_interval = {scan}
udev_source = kernel

[cpus]
isolated = 1

[nic "lk*"]
txqueuelen = {want}
pause_autoneg = off
pause_rx = off
pause_tx = off
eee = off
"""



def txqlen(dev):
    """The kernel's txqueuelen of dev, through ip(8)'s JSON; raises when dev is gone."""
    r = h.run_cmd("ip", "-j", "link", "show", "dev", dev, check=True)
    return int(json.loads(r.stdout)[0]["txqlen"])


def unsupported_entries(j, dev, key, since=0):
    return j.select(since, MESSAGE_ID="unsupported", LOWLATD_OBJECT="%s/%s" % (dev, key))


def main_phase(t, host, j, before):
    view = b.SettingsView(host.tmp)
    d = None
    try:
        d = h.Daemon(host, CONFIG.format(scan="1min", want=WANT), env=view.env())
        waited = d.wait_ready(h.scaled(30))
        t.ok(True, "READY=1 after %.2fs" % waited)
        view.wait_owner(d, h.scaled(TIMEOUT))

        # 1. at start
        got = {dev: txqlen(dev) for dev in LINKS}
        t.ok(all(v == WANT for v in got.values()),
             "start: txqueuelen %d on lk0, lk1 (veth) and lkt0 (tap); before: %r" % (WANT, before), repr(got))
        h.settle(0.5)
        early = j.select(0, MESSAGE_ID="drift")
        t.ok(not early, "start: no drift reported (the links' own older RTM_NEWLINKs are not taken for a change)",
             repr(early[:3]))

        # 2. pause and EEE: unsupported on veth and tap, with the kernel's reason, once
        for dev in LINKS:
            for key in UNSUPPORTED:
                e = j.wait_for(h.scaled(TIMEOUT), MESSAGE_ID="unsupported", LOWLATD_OBJECT="%s/%s" % (dev, key))
                kind = "nic_eee" if key == "eee" else "nic_pause"
                t.ok(e is not None and e.get("LOWLATD_KIND") == kind and e.get("LOWLATD_ERROR"),
                     "%s/%s: unsupported entry, LOWLATD_KIND=%s, reason: %s"
                     % (dev, key, kind, e.get("LOWLATD_ERROR") if e else "-"),
                     repr(j.entries()[-5:]))

        # 3. ip link set txqueuelen: put back through rtnetlink, every time. Five
        # corrections of one setting within a minute are a fight, which lowlatd slows down
        # for: the changes go round the three links, four each.
        mark = j.mark()
        times = []
        for i in range(CHANGES):
            dev = LINKS[i % len(LINKS)]
            h.run_cmd("ip", "link", "set", "dev", dev, "txqueuelen", str(100 + i), check=True)
            ok, secs = h.timed(lambda: txqlen(dev) == WANT, h.scaled(TIMEOUT), d.alive, interval=0.0005)
            if not ok:
                break
            times.append(secs)
        times.sort()
        t.ok(len(times) == CHANGES,
             "ip link set dev X txqueuelen N is put back to %d, %d times out of %d on lk0, lk1 and lkt0 (median "
             "%.1f ms, max %.1f ms, as ip(8) then sees it; the scan is a minute away)"
             % (WANT, len(times), CHANGES, 1000 * times[len(times) // 2] if times else -1, 1000 * max(times or [-1])),
             repr({dev: txqlen(dev) for dev in LINKS}))
        dr = j.select(mark, MESSAGE_ID="drift", LOWLATD_OBJECT="lk0/txqueuelen")
        co = j.select(mark, MESSAGE_ID="corrected", LOWLATD_OBJECT="lk0/txqueuelen")
        t.ok(dr and dr[0].get("LOWLATD_KIND") == "nic_txqueuelen" and dr[0].get("LOWLATD_EXPECTED") == str(WANT)
             and dr[0].get("LOWLATD_OBSERVED") == "100",
             "drift entry: LOWLATD_KIND=nic_txqueuelen, LOWLATD_OBJECT=lk0/txqueuelen, expected %d, observed 100"
             % WANT, repr(dr[:1]))
        t.ok(co and co[0].get("LOWLATD_KIND") == "nic_txqueuelen", "corrected entry for lk0/txqueuelen", repr(co[:1]))
        fights = j.select(0, MESSAGE_ID="fight")
        t.ok(not fights, "no fight reported (four changes per link)", repr(fights[:2]))

        # 4. still one unsupported entry each, after link events, a down/up and a reload
        h.run_cmd("ip", "link", "set", "lk1", "mtu", "1400", check=True)
        h.run_cmd("ip", "link", "set", "lk0", "down", check=True)
        h.run_cmd("ip", "link", "set", "lk0", "up", check=True)
        d.wait_ready(h.scaled(30), since=d.sighup())
        h.settle(1.5)
        counts = {"%s/%s" % (dev, key): len(unsupported_entries(j, dev, key)) for dev in LINKS for key in UNSUPPORTED}
        t.ok(all(v == 1 for v in counts.values()),
             "one unsupported entry for each of the %d pause/EEE settings after an MTU change, lk0 down and up, "
             "%d txqueuelen events and a reload" % (len(counts), CHANGES), repr(counts))
        t.ok(txqlen("lk0") == WANT, "lk0 holds txqueuelen %d after down/up and the reload" % WANT)

        # 5. the bus shows the kinds
        if view.available:
            rows = {r[1]: r for r in view.rows() if r[1].startswith("lk0/")}
            want_rows = {"lk0/txqueuelen": ("nic_txqueuelen", ("ok", "corrected")),
                         "lk0/pause_rx": ("nic_pause", ("unsupported",)),
                         "lk0/eee": ("nic_eee", ("unsupported",))}
            bad = ["%s: %r" % (o, rows.get(o)) for o, (k, states) in want_rows.items()
                   if o not in rows or rows[o][0] != k or rows[o][4] not in states]
            t.ok(not bad, "ListSettings: lk0/txqueuelen nic_txqueuelen ok, lk0/pause_rx nic_pause and lk0/eee "
                 "nic_eee unsupported", "\n".join(bad))
        else:
            t.skip("ListSettings shows nic_txqueuelen, nic_pause and nic_eee", view.why)

        # 6. restore puts the originals back
        p, why = view.lowlatctl_restore()
        if p is None:
            t.skip("lowlatctl restore puts the original txqueuelen back", why)
        else:
            t.ok(p.returncode == 0, "lowlatctl restore exits 0", p.stderr)
            got = {dev: txqlen(dev) for dev in LINKS}
            t.ok(got == before, "lowlatctl restore: txqueuelen is back to the originals %r" % before, repr(got))
        t.ok(not d.sanitizer_reports(), "no sanitizer report", d.sanitizer_reports())
        t.stopped_cleanly(d)
        d = None
    finally:
        if d is not None:
            d.kill()
        view.stop()


def scan_phase(t, host, j):
    """A scan every second: an unsupported setting is still reported once."""
    P = "[scan 1s] "
    mark = j.mark()
    d = h.Daemon(host, CONFIG.format(scan="1s", want=WANT))
    try:
        d.wait_ready(h.scaled(30))
        h.settle(3.5)
        counts = {"%s/%s" % (dev, key): len(unsupported_entries(j, dev, key, mark)) for dev in LINKS
                  for key in UNSUPPORTED}
        t.ok(all(v == 1 for v in counts.values()),
             P + "one unsupported entry per pause/EEE setting after three scans, not one per scan", repr(counts))
        t.stopped_cleanly(d, what=P + "lowlatd")
        d = None
    finally:
        if d is not None:
            d.kill()


def once_phase(t, host):
    """--observe --once: the drifted txqueuelen and the unsupported settings in the report,
    nothing changed."""
    P = "[--observe --once] "
    h.run_cmd("ip", "link", "set", "dev", "lk1", "txqueuelen", "999", check=True)
    config = h.write_config(host, CONFIG.format(scan="1min", want=WANT), name="once.conf")
    r = h.run_lowlatd(host, ["--observe", "--once"], config_path=config)
    out = r.stdout if isinstance(r.stdout, str) else r.stdout.decode(errors="replace")
    lines = [l for l in out.splitlines() if "lk1/txqueuelen" in l or "lk1/pause_rx" in l or "lk1/eee" in l]
    t.ok(any("lk1/txqueuelen" in l and "999" in l and str(WANT) in l for l in lines),
         P + "the report has lk1/txqueuelen, 999 observed against %d desired" % WANT, out[-2000:])
    t.ok(any("lk1/pause_rx" in l and "unsupported" in l for l in lines)
         and any("lk1/eee" in l and "unsupported" in l for l in lines),
         P + "and lk1/pause_rx and lk1/eee unsupported", "\n".join(lines))
    t.ok(txqlen("lk1") == 999, P + "txqueuelen of lk1 is left at 999", str(txqlen("lk1")))


def run(t):
    with h.netns(NS_ENV, TOOLS):
        j = None
        try:
            # The fake journal is a datagram socket: at the default queue of 10 datagrams a
            # daemon's start (one unsupported entry per setting) overruns it and lowlatd
            # drops entries, as it must rather than block. Per namespace: ours only.
            h.write_text("/proc/sys/net/unix/max_dgram_qlen", "1024")
            try:
                h.run_cmd("ip", "link", "add", "lk0", "type", "veth", "peer", "name", "lk1", check=True)
            except RuntimeError as e:
                h.skip("cannot create a veth pair in a network namespace: %s" % e)
            r = h.run_cmd("ip", "tuntap", "add", "dev", "lkt0", "mode", "tap")
            if r.returncode != 0:
                h.skip("cannot create a tap device: %s" % r.stderr.strip())
            for dev in LINKS:
                h.run_cmd("ip", "link", "set", dev, "up", check=True)
            before = {dev: txqlen(dev) for dev in LINKS}
            host = h.FakeHost(ncpus=2, nirqs=20, isolated="1")
            j = h.JournalSocket()
            main_phase(t, host, j, before)
            scan_phase(t, host, j)
            once_phase(t, host)
            t.ok(not j.errors, "the journal socket parsed every datagram", "\n".join(j.errors))
            dropped = [e for e in j.entries() if "were dropped" in e.get("MESSAGE", "")]
            t.ok(not dropped, "lowlatd dropped no journal entry", repr(dropped[:2]))
        finally:
            if j is not None:
                j.close()


if __name__ == "__main__":
    h.main(run)
