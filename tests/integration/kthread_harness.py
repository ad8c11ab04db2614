#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Real kernel threads for the kthreads test and benchmark, made and watched harmlessly.

  KthreadForks  the kernel's proc connector, as lowlatd listens to it: every fork by
                kthreadd (a new kernel thread), with the kernel's own fork time
                (CLOCK_MONOTONIC, like time.monotonic()) and when it arrived here; and
                every PROC_EVENT_COMM (a task renamed), to show which renames the kernel
                reports (prctl(PR_SET_NAME) and /proc comm writes; not its own naming of a
                new kernel thread).
  LoopMounts    creates kernel threads on demand: each mount of a small ext4 image
                through a loop device starts jbd2/loopN-8 (a movable thread) and a
                workqueue rescuer for ext4 (PF_NO_SETAFFINITY); the unmount stops them.
                Call it in a private mount namespace (lowlat_harness's
                enter_private_mount_namespace()): the mounts are seen nowhere else.
  kthreads()    {tid: (comm, Cpus_allowed_list, policy, rt_priority)} of every kernel
                thread, to show that nothing was changed.

Needs root and the proc connector (CONFIG_PROC_EVENTS); the helpers raise
lowlat_harness.Skip with the reason when the host lacks something."""

import os
import re
import shutil
import socket
import struct
import subprocess
import threading
import time

import lowlat_harness as h

NETLINK_CONNECTOR = 11
CN_IDX_PROC = CN_VAL_PROC = 1
PROC_CN_MCAST_LISTEN, PROC_CN_MCAST_IGNORE = 1, 2
PROC_EVENT_FORK = 1
PROC_EVENT_COMM = 0x200
NLMSG_DONE = 3
KTHREADD = 2


class KthreadForks:
    """Listens to the proc connector from a thread; .forks is a list of
    (tid, fork_time, arrival_time) in seconds of CLOCK_MONOTONIC, .comms one of
    (tid, comm, arrival_time)."""

    def __init__(self):
        try:
            self.sock = socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, NETLINK_CONNECTOR)
            self.sock.bind((0, CN_IDX_PROC))
            self._op(PROC_CN_MCAST_LISTEN)
        except OSError as e:
            raise h.Skip("the proc connector is not available here: %s" % e)
        self.sock.settimeout(0.2)
        self.forks = []
        self.comms = []
        self.lock = threading.Condition()
        self._stop = False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _op(self, op):
        cn = struct.pack("=IIIIHHI", CN_IDX_PROC, CN_VAL_PROC, 0, 0, 4, 0, op)
        nlh = struct.pack("=IHHII", 16 + len(cn), NLMSG_DONE, 0, 0, 0)
        self.sock.sendto(nlh + cn, (0, 0))

    def _run(self):
        while not self._stop:
            try:
                data = self.sock.recv(65536)
            except socket.timeout:
                continue
            except OSError:
                continue  # ENOBUFS: this listener lost some; the checks say what they miss
            now = time.monotonic()
            off = 0
            while off + 16 <= len(data):
                length = struct.unpack_from("=I", data, off)[0]
                if length < 16 or off + length > len(data):
                    break
                if length >= 68:
                    what, _cpu, ts = struct.unpack_from("=IIQ", data, off + 36)
                    _ppid, ptgid, cpid, ctgid = struct.unpack_from("=iiii", data, off + 52)
                    if what == PROC_EVENT_FORK and ptgid == KTHREADD and cpid == ctgid:
                        with self.lock:
                            self.forks.append((cpid, ts / 1e9, now))
                            self.lock.notify_all()
                    elif what == PROC_EVENT_COMM and length >= 76:
                        # comm_proc_event: process_pid, process_tgid, comm[16]
                        pid = struct.unpack_from("=i", data, off + 52)[0]
                        name = data[off + 60:off + 76].split(b"\0")[0].decode(errors="replace")
                        with self.lock:
                            self.comms.append((pid, name, now))
                off += (length + 3) & ~3

    def mark(self):
        with self.lock:
            return len(self.forks)

    def since(self, mark):
        with self.lock:
            return list(self.forks[mark:])

    def close(self):
        self._stop = True
        self.thread.join(2)
        try:
            self._op(PROC_CN_MCAST_IGNORE)
        except OSError:
            pass
        self.sock.close()


def comm(tid):
    try:
        with open("/proc/%d/comm" % tid) as f:
            return f.read().strip()
    except OSError:
        return None


class LoopMounts:
    """An ext4 image on a loop device, mounted and unmounted on demand."""

    def __init__(self, tmp):
        for tool in ("mkfs.ext4", "losetup", "mount", "umount"):
            if not shutil.which(tool):
                raise h.Skip("%s is needed to make kernel threads" % tool)
        self.image = os.path.join(tmp, "kthreads.ext4")
        self.mnt = os.path.join(tmp, "kthreads.mnt")
        os.makedirs(self.mnt, exist_ok=True)
        with open(self.image, "wb") as f:
            f.truncate(16 << 20)
        r = subprocess.run(["mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", self.image],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
        if r.returncode != 0:
            raise h.Skip("mkfs.ext4 failed: %s" % r.stdout.strip())
        r = subprocess.run(["losetup", "-f", "--show", self.image], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, universal_newlines=True)
        if r.returncode != 0:
            raise h.Skip("no loop device: %s" % r.stdout.strip())
        self.device = r.stdout.strip()
        self.mounted = False

    def _run(self, argv):
        r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
        if r.returncode != 0:
            raise RuntimeError("%s: %s" % (" ".join(argv), r.stdout.strip()))

    def mount(self):
        self._run(["mount", "-t", "ext4", self.device, self.mnt])
        self.mounted = True

    def umount(self):
        if self.mounted:
            self._run(["umount", self.mnt])
            self.mounted = False

    def cycles(self, n):
        """n mounts and unmounts in one shell: about two new kernel threads each."""
        script = 'for i in $(seq %d); do mount -t ext4 "$1" "$2" && umount "$2" || exit 1; done' % n
        self._run(["sh", "-c", script, "sh", self.device, self.mnt])

    def close(self):
        try:
            self.umount()
        finally:
            subprocess.run(["losetup", "-d", self.device], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _status_field(text, key):
    m = re.search(r"^%s:\s*(.*)$" % re.escape(key), text, re.M)
    return m.group(1).strip() if m else None


def kthreads():
    """{tid: (comm, Cpus_allowed_list, policy, rt_priority)} of every kernel thread."""
    out = {}
    with open("/proc/2/task/2/children") as f:
        tids = [2] + [int(t) for t in f.read().split()]
    for tid in tids:
        try:
            with open("/proc/%d/stat" % tid) as f:
                stat = f.read()
            with open("/proc/%d/status" % tid) as f:
                status = f.read()
        except OSError:
            continue  # exited meanwhile
        fields = stat[stat.rindex(")") + 2:].split()
        out[tid] = (stat[stat.index("(") + 1:stat.rindex(")")], _status_field(status, "Cpus_allowed_list"),
                    int(fields[38]), int(fields[37]))
    return out


def socket_drops(pid):
    """Drops of lowlatd's proc connector socket (/proc/net/netlink, protocol 11), by the
    inodes of its fds; None when it has none."""
    inodes = set()
    for fd in os.listdir("/proc/%d/fd" % pid):
        try:
            link = os.readlink("/proc/%d/fd/%s" % (pid, fd))
        except OSError:
            continue
        m = re.match(r"socket:\[(\d+)\]", link)
        if m:
            inodes.add(m.group(1))
    with open("/proc/net/netlink") as f:
        lines = f.read().splitlines()
    head = lines[0].split()
    for line in lines[1:]:
        cols = dict(zip(head, line.split()))
        if cols.get("Eth") == str(NETLINK_CONNECTOR) and cols.get("Inode") in inodes:
            return int(cols["Drops"])
    return None


def percentile(values, p):
    v = sorted(values)
    if not v:
        raise ValueError("no values")
    return v[min(len(v) - 1, int(round(p / 100.0 * (len(v) - 1))))]
