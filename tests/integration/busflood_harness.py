#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Clients that flood lowlatd's bus methods and never read the answers (Python 3 standard
library only): each is a python3 process, run as uid 65534 through setpriv, that speaks
the D-Bus wire protocol itself (busctl waits for every reply, which is the opposite of
what is wanted here), sends COUNT method calls (or as many as SECONDS allow) as fast as its socket takes them, prints how many it sent, and then holds its connection open, still reading
nothing, until it is stopped.

  Flood(socket, count, seconds, calls)   start() / sent() / stop()
  StateReader(socket)                    a root connection timing Get(State)
  STATE_READ, OPEN_CALLS           what the flooders send: every member non-root may call
"""

import os
import signal
import subprocess
import sys

import busctl_harness as b
import lowlat_constants as C

# (interface, member, signature, args): every member the shipped policy opens to non-root.
OPEN_CALLS = [
    (C.BUS_INTERFACE, "ListSettings", "", ()),
    (C.BUS_INTERFACE, "Check", "", ()),
    (C.BUS_INTERFACE, "Noise", "", ()),
    ("org.freedesktop.DBus.Properties", "GetAll", "s", (C.BUS_INTERFACE,)),
    ("org.freedesktop.DBus.Properties", "Get", "ss", (C.BUS_INTERFACE, "State")),
    ("org.freedesktop.DBus.Introspectable", "Introspect", "", ()),
    ("org.freedesktop.DBus.Peer", "Ping", "", ()),
]

# The wire protocol, as little of it as the clients need (little-endian method calls
# with string arguments; the fixed header and header fields of what comes back).
WIRE = r'''
import os, socket, struct, sys, time

def pad(b, n):
    return b + b"\0" * (-len(b) % n)

def string(s, kind):
    s = s.encode()
    if kind == "g":
        return bytes([len(s)]) + s + b"\0"
    return struct.pack("<I", len(s)) + s + b"\0"

def message(serial, dest, path, iface, member, sig, args):
    body = b""
    for a in args:
        body = pad(body, 4) + string(a, "s")
    fields = []
    for code, kind, value in ((1, "o", path), (2, "s", iface), (3, "s", member), (6, "s", dest),
                              (8, "g", sig)):
        if value is None or (kind == "g" and not value):
            continue
        fields.append(pad(bytes([code, 1]) + kind.encode() + b"\0", 1) + string(value, kind))
    array = b""
    for f in fields:
        array = pad(array, 8) + f
    head = struct.pack("<cBBBIII", b"l", 1, 0, 1, len(body), serial, len(array)) + array
    return pad(head, 8) + body

def auth_hello(s):
    s.sendall(b"\0AUTH EXTERNAL " + str(os.getuid()).encode().hex().encode() + b"\r\n")
    if not s.recv(4096).startswith(b"OK"):
        sys.exit("authentication refused")
    s.sendall(b"BEGIN\r\n")
    s.sendall(message(1, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "Hello", "", ()))
'''

# The flooding client, run with `python3 -c`: argv = socket path, seconds, destination, path,
# then the calls as interface/member/signature/arg,arg.
CLIENT = WIRE + r'''
sock_path, count, seconds, dest, path = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4], sys.argv[5]
calls = [c.split("/") for c in sys.argv[6:]]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sock_path)
auth_hello(s)
# count calls, or as many as seconds allow, as fast as the socket takes them
serial, sent, end = 2, 0, time.monotonic() + seconds
while sent < count and time.monotonic() < end:
    iface, member, sig, args = calls[sent % len(calls)]
    s.sendall(message(serial, dest, path, iface, member, sig, [a for a in args.split(",") if a]))
    serial += 1
    sent += 1
print(sent, flush=True)
sys.stdout.close()
while True:
    time.sleep(3600)  # hold the connection, reading nothing
'''


class Flood:
    def __init__(self, socket_path, count, seconds, calls=OPEN_CALLS):
        self.argv = b.unprivileged() + [
            sys.executable, "-c", CLIENT, socket_path, str(count), "%g" % seconds, C.BUS_NAME, C.BUS_PATH
        ] + ["%s/%s/%s/%s" % (i, m, s, ",".join(a)) for i, m, s, a in calls]
        self.proc = None
        self.count = None

    def start(self):
        self.proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, start_new_session=True)
        return self

    def sent(self, timeout):
        """How many calls it sent, once its flooding time is over."""
        if self.count is None:
            line = self.proc.stdout.readline().decode().strip()
            if not line.isdigit():
                self.stop()
                raise RuntimeError("flood client failed: %r %s" % (line, self.proc.stderr.read().decode()))
            self.count = int(line)
        return self.count

    def stop(self):
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()


exec(WIRE)  # message(), auth_hello() here too, for the root reader


class StateReader:
    """A root connection that reads State with Properties.Get and times each answer from
    the send to the reply (no process start in the figure, unlike busctl)."""

    def __init__(self, socket_path):
        import socket
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
        self.sock.connect(socket_path)
        auth_hello(self.sock)
        self.buf = b""
        self.serial = 1
        self._wait_reply(1, 10)

    def _read_message(self, deadline):
        import struct
        import time
        while True:
            if len(self.buf) >= 16:
                body_len, _, fields_len = struct.unpack_from("<III", self.buf, 4)
                total = 16 + fields_len + (-fields_len % 8) + body_len
                if len(self.buf) >= total:
                    msg, self.buf = self.buf[:total], self.buf[total:]
                    return msg
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no answer on the bus")
            self.sock.settimeout(left)
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("the bus closed the connection")
            self.buf += chunk

    @staticmethod
    def _reply_serial(msg):
        import struct
        (fields_len,) = struct.unpack_from("<I", msg, 12)
        i, end = 16, 16 + fields_len
        while i < end:
            i += -i % 8
            code, siglen = msg[i], msg[i + 1]
            sig = msg[i + 2:i + 2 + siglen].decode()
            i += 3 + siglen
            if sig in ("s", "o"):
                i += -i % 4
                (n,) = struct.unpack_from("<I", msg, i)
                i += 4 + n + 1
            elif sig == "g":
                i += 1 + msg[i] + 1
            elif sig == "u":
                i += -i % 4
                (v,) = struct.unpack_from("<I", msg, i)
                if code == 5:
                    return v
                i += 4
            else:
                return None
        return None

    def _wait_reply(self, serial, timeout):
        import time
        deadline = time.monotonic() + timeout
        while True:
            msg = self._read_message(deadline)
            if msg[1] in (2, 3) and self._reply_serial(msg) == serial:
                return msg

    def read_state(self, timeout):
        """Seconds from sending Get(State) to its answer; raises on an error or a timeout."""
        import time
        self.serial += 1
        start = time.monotonic()
        self.sock.sendall(message(self.serial, C.BUS_NAME, C.BUS_PATH, "org.freedesktop.DBus.Properties", "Get",
                                  "ss", (C.BUS_INTERFACE, "State")))
        msg = self._wait_reply(self.serial, timeout)
        took = time.monotonic() - start
        if msg[1] != 2:
            raise RuntimeError("Get(State) answered with an error")
        return took

    def close(self):
        self.sock.close()
