#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A write to a queue's rps_cpus -> put back by lowlatd, over BENCH_RPS_WRITES (default
1000) writes, against the same write seen through inotify with no daemon, in one run.

Runs in a network namespace of its own (unshare --net --mount, a fresh sysfs): veth pairs
with 16 receive queues each way, and lowlatd with `[nic "bv*"] rps_cpus = housekeeping`
(the last CPU isolated) and a one-minute scan, so every correction comes from its inotify
hint. Five corrections of one file within a minute are a fight, which lowlatd slows down
for; the writes are spread so that no file takes more than two.

Each sample is timed from just before our write (every CPU's mask, open with O_TRUNC) to:
  floor   our own inotify watch on the file delivering the event of that write, then one
          pread of the file (no lowlatd running);
  bare    the same as lowlatd below with bench-echo in its place (BENCH_ECHO: inotify on
          every queue file, pread, write the housekeeping mask back, nothing else), a
          second floor: a correction is two notifications, the floor one;
  lowlatd the pread after an inotify event reading the housekeeping mask again: lowlatd
          saw the event, read, compared, wrote and we saw its write.
Prints p50/p99 of each and lowlatd's ratios to both floors. Run: meson test -C build --benchmark --suite bench
-v (needs root; exits 77 without it or without network namespaces)."""

import ctypes
import os
import select
import struct
import subprocess
import time

import lowlat_harness as h

NS_ENV = "LOWLAT_BENCH_RPS_NETNS"
QUEUES = 16
PER_FILE = 2
IN_MODIFY = 0x2

CONFIG = """\
[daemon]
scan_interval = 1min
udev_source = kernel
[cpus]
isolated = {isolated}
[nic "bv*"]
rps_cpus = housekeeping
"""

_libc = ctypes.CDLL(None, use_errno=True)


class Inotify:
    def __init__(self):
        self.fd = _libc.inotify_init1(os.O_CLOEXEC)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")

    def watch(self, path):
        wd = _libc.inotify_add_watch(self.fd, path.encode(), IN_MODIFY)
        if wd < 0:
            raise OSError(ctypes.get_errno(), "inotify_add_watch %s" % path)
        return wd

    def wait(self, timeout=10.0):
        """Waits for at least one event; returns their watch descriptors ([] on timeout)."""
        if not select.select([self.fd], [], [], timeout)[0]:
            return []
        data = os.read(self.fd, 4096)
        wds, off = [], 0
        while off + 16 <= len(data):
            wd, _, _, length = struct.unpack_from("iIII", data, off)
            wds.append(wd)
            off += 16 + length
        return wds

    def close(self):
        os.close(self.fd)



def write_mask(path, mask):
    fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
    try:
        os.write(fd, mask.encode())
    finally:
        os.close(fd)


def time_corrections(order, files, housekeeping, all_mask):
    """Each write of order timed until the housekeeping mask is read back after an inotify
    event on its file; returns (samples, missed)."""
    corrected, missed = [], 0
    ino = Inotify()
    wds = {ino.watch(f): f for f in files}
    for path in order:
        t0 = time.perf_counter()
        write_mask(path, all_mask)
        deadline = t0 + h.scaled(2)
        done = False
        while not done and time.perf_counter() < deadline:
            for wd in ino.wait(max(0.0, deadline - time.perf_counter())):
                if wds.get(wd) == path:
                    with open(path) as f:
                        done = h.mask_to_set(h.parse_mask(f.read())) == housekeeping
        if done:
            corrected.append(time.perf_counter() - t0)
        else:
            missed += 1
    ino.close()
    return corrected, missed


def bare_corrector(order, files, housekeeping, all_mask, ncpus):
    """The writes against bench-echo watching every queue file; None without BENCH_ECHO."""
    echo = os.environ.get("BENCH_ECHO")
    if not echo:
        return None
    for f in files:
        write_mask(f, h.format_mask(housekeeping, ncpus))
    with open(files[0]) as f:
        value = f.read().strip()  # the kernel's own format, which bench-echo compares
    p = subprocess.Popen([echo, files[0], value] + files[1:], stdout=subprocess.PIPE, text=True)
    try:
        if p.stdout.readline().strip() != "ready":
            raise SystemExit("bench-echo did not start")
        bare, missed = time_corrections(order, files, housekeeping, all_mask)
        return bare if not missed else []
    finally:
        p.kill()
        p.wait()


def main():
    if os.environ.get(NS_ENV) != "1":
        h.bench_reexec_in_netns(NS_ENV)
    n = int(os.environ.get("BENCH_RPS_WRITES", "1000"))
    for argv in (["mount", "-t", "tmpfs", "-o", "mode=0755", "tmpfs", "/run/systemd"],
                 ["mount", "-t", "sysfs", "sysfs", "/sys"]):
        os.makedirs(argv[-1], exist_ok=True)
        r = subprocess.run(argv, capture_output=True, text=True)
        if r.returncode != 0:
            h.skip("%s: %s" % (" ".join(argv), r.stderr.strip()))
    ncpus = len(h.parse_cpulist(h.read_text("/sys/devices/system/cpu/possible")))
    if ncpus < 2:
        h.skip("needs two CPUs")
    pairs = (n + 2 * QUEUES * PER_FILE - 1) // (2 * QUEUES * PER_FILE)
    files = []
    for i in range(pairs):
        a, b = "bv%da" % i, "bv%db" % i
        r = subprocess.run(["ip", "link", "add", a, "numrxqueues", str(QUEUES), "numtxqueues", "1", "type", "veth",
                            "peer", "name", b, "numrxqueues", str(QUEUES), "numtxqueues", "1"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            h.skip("cannot create a veth pair: %s" % r.stderr.strip())
        files += ["/sys/class/net/%s/queues/rx-%d/rps_cpus" % (dev, q) for dev in (a, b) for q in range(QUEUES)]
    if not os.path.exists(files[0]):
        h.skip("this kernel has no RPS")
    all_mask = h.format_mask(set(range(ncpus)), ncpus)
    housekeeping = set(range(ncpus - 1))
    order = [files[i % len(files)] for i in range(n)]

    # The floor: our own write seen through inotify, no daemon.
    ino = Inotify()
    for f in files:
        ino.watch(f)
    floor = []
    for path in order:
        t0 = time.perf_counter()
        write_mask(path, all_mask)
        if not ino.wait():
            print("FAIL: no inotify event for a write to %s" % path)
            return 1
        with open(path) as f:
            f.read()
        floor.append(time.perf_counter() - t0)
        write_mask(path, "0")
        ino.wait()
    ino.close()

    bare = bare_corrector(order, files, housekeeping, all_mask, ncpus)

    host = h.FakeHost(ncpus=ncpus, nirqs=8, isolated=str(ncpus - 1))
    h.bind_into_root(host, *h.NETNS_SYSFS)
    d = h.Daemon(host, CONFIG.format(isolated=ncpus - 1))
    try:
        d.wait_ready(h.scaled(60))
        time.sleep(1)
        corrected, missed = time_corrections(order, files, housekeeping, all_mask)
        fights = [l for l in d.stderr_lines() if "another writer" in l]
        d.stop()
    finally:
        if d.alive():
            d.kill()
        h.unmount_all()

    return h.report_vs_floor("rps_cpus write -> seen through inotify, no daemon (%d writes, %d files)"
                             % (len(floor), len(files)), floor,
                             "rps_cpus write -> put back by lowlatd (%d writes)" % len(corrected), corrected,
                             missed, fights, "writes",
                             "rps_cpus write -> put back by a bare corrector (bench-echo)", bare)


if __name__ == "__main__":
    h.bench_main(main)
