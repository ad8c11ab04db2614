#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A stand-in for irqbalance's control socket under a fake root, for the unit and
integration tests; never a real irqbalance, and never outside ROOT.

    fake_irqbalance.py ROOT [--banned LIST] [--sleep N] [--apply-after S] [--busy S]
                            [--uid UID] [--log FILE] [--pid-file FILE]
                            [--user UID] [--claim-pid PID] [--listen-after S]

Like irqbalance.c's init_socket() and sock_handle() (1.9): it listens on
ROOT/run/irqbalance/irqbalance<PID>.sock (its own PID, written to ROOT/proc/<PID>/comm as
"irqbalance"), backlog 1, SO_PASSCRED; reads one message per connection and obeys it only
when the sender's SCM_CREDENTIALS say uid UID (default 0); "setup" is answered with
"SLEEP N BANNED MASK" and a close; "settings cpus LIST" bans LIST and "settings cpus NULL"
goes back to its own ban (--banned, default none), from its next rescan on: --apply-after
seconds later (default 0), after which it answers nothing for --busy seconds (irqbalance
sleeps through a rescan).

Every connection is appended to --log as a JSON line: {"pid", "uid", "command",
"obeyed", "time" (time.monotonic(): CLOCK_MONOTONIC)}, except "sync", which it answers
"ok" once all connections before it are logged. ROOT/run/fake-irqbalance.answer, when
present, changes how "setup" is answered from then on: "normal", "garbage" (text
irqbalance never sends), "silent" (no answer, the connection held open) or "close"
(closed without an answer). SIGTERM exits as irqbalance does: the socket is removed, and
so is ROOT/proc/<PID> (the process is gone). SIGKILL leaves both behind, as a crash would. --pid-file gets "PID LISTEN_TIME" once it listens
(LISTEN_TIME: time.monotonic() right after listen()).

Impostors and slow starters, for lowlatd's checks of who serves the socket and when:
--user UID binds and listens as UID (its socket directory handed to UID first, as a unit's
RuntimeDirectory= with User= is), so that SO_PEERCRED says UID; it keeps uid 0 as its saved
uid for its own bookkeeping (the pid file, the log). --claim-pid PID names its socket (and
the proc/PID/comm it writes) after PID instead of its own. --listen-after S binds its
socket under its final name and listens only S seconds later, as an irqbalance that is
slow between bind() and listen() would.
"""

import argparse
import json
import os
import select
import signal
import socket
import struct
import sys
import time

SO_PASSCRED = getattr(socket, "SO_PASSCRED", 16)
SCM_CREDENTIALS = getattr(socket, "SCM_CREDENTIALS", 2)
UCRED = struct.Struct("iII")


def parse_list(text):
    cpus = set()
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        if "-" in part:
            a, b = part.split("-", 1)
            cpus.update(range(int(a), int(b) + 1))
        else:
            cpus.add(int(part))
    return cpus


def irqbalance_mask(cpus):
    """As bitmap_scnprintf(): 32-bit groups of 8 hex digits, leading zero groups left out."""
    groups = max(cpus) // 32 + 1 if cpus else 1
    out = []
    for g in reversed(range(groups)):
        v = sum(1 << (c - g * 32) for c in cpus if g * 32 <= c < g * 32 + 32)
        out.append("%08x" % v)
    return ",".join(out)


class FakeIrqbalance:
    def __init__(self, args):
        self.args = args
        self.root = args.root
        self.pid = os.getpid()
        self.own = parse_list(args.banned) if args.banned else set()
        self.told = None          # what "settings cpus" asked for: a set, or None (its own)
        self.pending = None       # (apply_at, value) of a command not applied yet
        self.banned = set(self.own)
        self.busy_until = 0.0
        self.held = []            # connections it never answers ("silent")
        self.dir = os.path.join(self.root, "run", "irqbalance")
        self.claimed = args.claim_pid or self.pid
        self.path = os.path.join(self.dir, "irqbalance%d.sock" % self.claimed)
        self.proc = os.path.join(self.root, "proc", str(self.claimed))
        self.logfile = None

    def start(self):
        os.makedirs(self.proc, exist_ok=True)
        with open(os.path.join(self.proc, "comm"), "w") as f:
            f.write("irqbalance\n")
        os.makedirs(self.dir, exist_ok=True)
        if self.args.log:
            self.logfile = open(self.args.log, "a", buffering=1)
        if self.args.user is not None:
            os.chown(self.dir, self.args.user, self.args.user)
            os.setgroups([])
            os.setresgid(self.args.user, self.args.user, 0)
            os.setresuid(self.args.user, self.args.user, 0)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        if self.args.listen_after is not None:
            self.sock.bind(self.path)
            time.sleep(self.args.listen_after)
            self.sock.setsockopt(socket.SOL_SOCKET, SO_PASSCRED, 1)
            self.sock.listen(1)
        else:
            # Bound under another name and renamed once it listens: irqbalance's bind() and
            # listen() are microseconds apart, a Python's on a loaded test machine need not be.
            tmp = os.path.join(self.dir, ".fake%d" % self.pid)
            self.sock.bind(tmp)
            self.sock.setsockopt(socket.SOL_SOCKET, SO_PASSCRED, 1)
            self.sock.listen(1)
            os.rename(tmp, self.path)
        listened = time.monotonic()
        if self.args.pid_file:
            self.as_root(self.write_pid_file, listened)

    def as_root(self, fn, *args):
        """fn with uid 0 back for a moment (--user keeps it as the saved uid)."""
        if self.args.user is None:
            return fn(*args)
        os.setresuid(self.args.user, 0, 0)
        try:
            return fn(*args)
        finally:
            os.setresuid(self.args.user, self.args.user, 0)

    def write_pid_file(self, listened):
        tmp = self.args.pid_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d %.6f\n" % (self.pid, listened))
        os.rename(tmp, self.args.pid_file)

    def stop(self, *unused):
        self.as_root(self.remove)
        sys.exit(0)

    def remove(self):
        for p in (self.path, os.path.join(self.proc, "comm")):
            try:
                os.unlink(p)
            except FileNotFoundError:
                pass
        try:
            os.rmdir(self.proc)
        except OSError:
            pass

    def answer_mode(self):
        try:
            with open(os.path.join(self.root, "run", "fake-irqbalance.answer")) as f:
                return f.read().strip() or "normal"
        except FileNotFoundError:
            return "normal"

    def log(self, entry):
        if self.logfile:
            entry["time"] = time.monotonic()
            self.logfile.write(json.dumps(entry) + "\n")

    def rescan_if_due(self, now):
        if self.pending and now >= self.pending[0]:
            self.told = self.pending[1]
            self.pending = None
            self.banned = set(self.told) if self.told is not None else set(self.own)
            self.busy_until = now + self.args.busy

    def handle(self, conn):
        data, ancdata, _, _ = conn.recvmsg(500, socket.CMSG_SPACE(UCRED.size))
        uid = None
        for level, kind, payload in ancdata:
            if level == socket.SOL_SOCKET and kind == SCM_CREDENTIALS and len(payload) >= UCRED.size:
                _, uid, _ = UCRED.unpack(payload[:UCRED.size])
                break
        command = data.decode(errors="replace")
        if command == "sync":
            # The tests' own: every connection before it has been handled and logged.
            conn.sendall(b"ok")
            conn.close()
            return
        obeyed = uid == self.args.uid
        self.log({"pid": self.pid, "uid": uid, "command": command, "obeyed": obeyed})
        if not obeyed:
            conn.close()
            return
        if command.startswith("setup"):
            mode = self.answer_mode()
            if mode == "silent":
                self.held.append(conn)
                return
            if mode == "garbage":
                conn.sendall(b"NODE 0 CPU 1 what is this")
            elif mode == "normal":
                conn.sendall(("SLEEP %d BANNED %s" % (self.args.sleep, irqbalance_mask(self.banned))).encode())
        elif command.startswith("settings cpus "):
            value = command[len("settings cpus "):].split(" ")[0]
            told = None if value.startswith("NULL") else parse_list(value)
            self.pending = (time.monotonic() + self.args.apply_after, told)
        conn.close()

    def run(self):
        signal.signal(signal.SIGTERM, self.stop)
        signal.signal(signal.SIGINT, self.stop)
        self.start()
        while True:
            now = time.monotonic()
            self.rescan_if_due(now)
            timeout = 0.05 if self.pending else 1.0
            if now < self.busy_until:
                time.sleep(min(self.busy_until - now, 0.05))
                continue
            ready, _, _ = select.select([self.sock], [], [], timeout)
            if ready:
                conn, _ = self.sock.accept()
                try:
                    self.handle(conn)
                except OSError:
                    conn.close()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("root")
    p.add_argument("--banned", default="", help="its own ban (IRQBALANCE_BANNED_CPULIST or isolcpus=)")
    p.add_argument("--sleep", type=int, default=10, help="the interval it reports (SLEEP)")
    p.add_argument("--apply-after", type=float, default=0.0, help="seconds until a told ban applies")
    p.add_argument("--busy", type=float, default=0.0, help="seconds it does not answer after applying one")
    p.add_argument("--uid", type=int, default=0, help="the only uid it obeys")
    p.add_argument("--log", help="append one JSON line per connection here")
    p.add_argument("--pid-file", help="written once it listens: PID LISTEN_TIME")
    p.add_argument("--user", type=int, help="bind and listen as this uid")
    p.add_argument("--claim-pid", type=int, help="name its socket after this PID, not its own")
    p.add_argument("--listen-after", type=float, help="bind under its name, listen S seconds later")
    FakeIrqbalance(p.parse_args()).run()


if __name__ == "__main__":
    main()
