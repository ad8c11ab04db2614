#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A change of an interface's txqueuelen -> put back by lowlatd, over BENCH_LINK_CHANGES
(default 200) changes, against the bare change -> RTM_NEWLINK round trip with no daemon,
in one run.

Runs in a network namespace of its own (unshare --net --mount): veth pairs, and lowlatd
with `[nic "bl*"] txqueuelen = 4321` and a one-minute scan, so every correction comes from
the RTM_NEWLINK the change caused. Five corrections of one setting within a minute are a
fight, which lowlatd slows down for; the changes go round the links, at most four each.

The change is what `ip link set dev IF txqueuelen N` sends (RTM_SETLINK with IFLA_TXQLEN),
made from this process so that no fork and exec is in the figures. Each sample is timed
from just before the send to:
  floor   our own RTNLGRP_LINK socket receiving the RTM_NEWLINK that tells of the change
          (no lowlatd running);
  bare    the same as lowlatd below with bench-link-echo in its place (BENCH_LINK_ECHO:
          RTM_NEWLINK in, its IFLA_TXQLEN compared, RTM_SETLINK and its ACK, nothing else),
          a second floor: a correction is two notifications, the floor one;
  lowlatd the same socket receiving the RTM_NEWLINK with txqueuelen 4321 again: lowlatd got
          the notification, looked at the link, wrote, and the kernel announced it.
Prints p50/p99 of each and lowlatd's ratios to both floors. Run: meson test -C build --benchmark --suite bench
-v (needs root; exits 77 without it or without network namespaces)."""

import os
import select
import socket
import struct
import subprocess
import time

import lowlat_harness as h

NS_ENV = "LOWLAT_BENCH_LINK_NETNS"
WANT = 4321
PER_LINK = 4

RTM_NEWLINK, RTM_SETLINK = 16, 19
NLM_F_REQUEST, NLM_F_ACK = 0x1, 0x4
NLMSG_ERROR = 2
IFLA_TXQLEN = 13
RTMGRP_LINK = 0x1

CONFIG = """\
[daemon]
scan_interval = 1min
udev_source = kernel
[cpus]
isolated = 1
[nic "bl*"]
txqueuelen = {want}
"""



class Rtnl:
    """A request socket and a RTNLGRP_LINK monitor, by hand (the standard library has no
    netlink helpers)."""

    def __init__(self):
        self.req = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
        self.req.bind((0, 0))
        self.mon = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
        self.mon.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
        self.mon.bind((0, RTMGRP_LINK))
        self.seq = 0

    def send_txqlen(self, ifindex, value):
        self.seq += 1
        attr = struct.pack("HHI", 8, IFLA_TXQLEN, value)
        body = struct.pack("BxHiII", socket.AF_UNSPEC, 0, ifindex, 0, 0) + attr
        self.req.send(struct.pack("IHHII", 16 + len(body), RTM_SETLINK, NLM_F_REQUEST | NLM_F_ACK, self.seq, 0)
                      + body)

    def read_ack(self):
        data = self.req.recv(65536)
        length, kind = struct.unpack_from("IH", data, 0)
        if kind != NLMSG_ERROR or struct.unpack_from("i", data, 16)[0] != 0:
            raise RuntimeError("RTM_SETLINK refused: %r" % data[:40])

    def wait_txqlen(self, ifindex, value, deadline):
        """Reads link notifications until one says ifindex has txqueuelen value."""
        while True:
            left = deadline - time.perf_counter()
            if left <= 0 or not select.select([self.mon], [], [], left)[0]:
                return False
            data = self.mon.recv(1 << 16)
            off = 0
            while off + 16 <= len(data):
                length, kind = struct.unpack_from("IH", data, off)
                if length < 16:
                    break
                if kind == RTM_NEWLINK and length >= 32:
                    index = struct.unpack_from("i", data, off + 20)[0]
                    a = off + 32
                    while index == ifindex and a + 4 <= off + length:
                        alen, atype = struct.unpack_from("HH", data, a)
                        if alen < 4:
                            break
                        if atype & 0x3fff == IFLA_TXQLEN and struct.unpack_from("I", data, a + 4)[0] == value:
                            return True
                        a += (alen + 3) & ~3
                off += (length + 3) & ~3

    def drain(self):
        while select.select([self.mon], [], [], 0)[0]:
            self.mon.recv(1 << 16)


def time_corrections(nl, order):
    """Each change of order timed until the RTM_NEWLINK saying WANT again; returns
    (samples, missed)."""
    corrected, missed = [], 0
    for i, ifindex in enumerate(order):
        nl.drain()
        t0 = time.perf_counter()
        nl.send_txqlen(ifindex, 100 + i)
        if nl.wait_txqlen(ifindex, WANT, t0 + h.scaled(2)):
            corrected.append(time.perf_counter() - t0)
        else:
            missed += 1
        nl.read_ack()
    return corrected, missed


def bare_corrector(nl, links, order):
    """The changes against bench-link-echo; None without BENCH_LINK_ECHO."""
    echo = os.environ.get("BENCH_LINK_ECHO")
    if not echo:
        return None
    for ifindex in links:
        nl.send_txqlen(ifindex, WANT)
        nl.read_ack()
    p = subprocess.Popen([echo, str(WANT)] + [str(i) for i in links], stdout=subprocess.PIPE, text=True)
    try:
        if p.stdout.readline().strip() != "ready":
            raise SystemExit("bench-link-echo did not start")
        bare, missed = time_corrections(nl, order)
        return bare if not missed else []
    finally:
        p.kill()
        p.wait()


def main():
    if os.environ.get(NS_ENV) != "1":
        h.bench_reexec_in_netns(NS_ENV)
    n = int(os.environ.get("BENCH_LINK_CHANGES", "200"))
    os.makedirs("/run/systemd", exist_ok=True)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "mode=0755", "tmpfs", "/run/systemd"], capture_output=True,
                       text=True)
    if r.returncode != 0:
        h.skip("mount tmpfs on /run/systemd: %s" % r.stderr.strip())
    links = []
    for i in range((n + 2 * PER_LINK - 1) // (2 * PER_LINK)):
        a, b = "bl%da" % i, "bl%db" % i
        r = subprocess.run(["ip", "link", "add", a, "type", "veth", "peer", "name", b], capture_output=True,
                           text=True)
        if r.returncode != 0:
            h.skip("cannot create a veth pair: %s" % r.stderr.strip())
        links += [socket.if_nametoindex(a), socket.if_nametoindex(b)]
    order = [links[i % len(links)] for i in range(n)]
    nl = Rtnl()

    # The floor: our own change, seen on our own monitor socket, no daemon.
    floor = []
    for i, ifindex in enumerate(order):
        value = 100 + i
        nl.drain()
        t0 = time.perf_counter()
        nl.send_txqlen(ifindex, value)
        if not nl.wait_txqlen(ifindex, value, t0 + h.scaled(2)):
            print("FAIL: no RTM_NEWLINK for a txqueuelen change of ifindex %d" % ifindex)
            return 1
        floor.append(time.perf_counter() - t0)
        nl.read_ack()

    bare = bare_corrector(nl, links, order)
    # lowlatd's originals are the lengths the veths were created with.
    for ifindex in links:
        nl.send_txqlen(ifindex, 1000)
        nl.read_ack()

    host = h.FakeHost(ncpus=2, nirqs=8, isolated="1")
    d = h.Daemon(host, CONFIG.format(want=WANT))
    try:
        d.wait_ready(h.scaled(60))
        time.sleep(1)
        corrected, missed = time_corrections(nl, order)
        fights = [l for l in d.stderr_lines() if "another writer" in l]
        d.stop()
    finally:
        if d.alive():
            d.kill()

    return h.report_vs_floor("txqueuelen change -> its RTM_NEWLINK, no daemon (%d changes, %d links)"
                             % (len(floor), len(links)), floor,
                             "txqueuelen change -> put back by lowlatd (%d changes)" % len(corrected), corrected,
                             missed, fights, "changes",
                             "txqueuelen change -> put back by a bare corrector (bench-link-echo)", bare)


if __name__ == "__main__":
    h.bench_main(main)
