# SPDX-License-Identifier: LGPL-2.1-or-later
"""A fake journald: JournalSocket at /run/systemd/journal/socket in a private mount
namespace, the journal's native protocol parsed into entries; and
isolate_from_real_journal() for tests that read the daemon's log on stderr."""

import os
import struct
import time

import lowlat_constants as C

from .datagram import DatagramReceiver
from .namespaces import PRIVATE_MNT_ENV, enter_private_mount_namespace, in_private_mount_namespace


JOURNAL_SOCKET = "/run/systemd/journal/socket"


# MESSAGE_IDs by event name ("drift", "corrected", ...), as lowlatd's events table has them.
MID = C.MESSAGE_IDS


def parse_journal_native(data):
    """Parse one entry in the journal's native protocol into a list of (key, bytes).

    Each field is either 'KEY=value\\n' or, binary safe, 'KEY\\n' + le64 size + data + '\\n'."""
    fields = []
    pos = 0
    n = len(data)
    while pos < n:
        nl = data.find(b"\n", pos)
        if nl < 0:
            nl = n
        line = data[pos:nl]
        if not line:
            pos = nl + 1
            continue
        eq = line.find(b"=")
        if eq >= 0:
            fields.append((line[:eq].decode("ascii", "replace"), line[eq + 1:]))
            pos = nl + 1
            continue
        key = line.decode("ascii", "replace")
        if nl + 9 > n:
            raise ValueError("binary field %s: truncated size" % key)
        size = struct.unpack("<Q", data[nl + 1:nl + 9])[0]
        start = nl + 9
        end = start + size
        if end > n:
            raise ValueError("binary field %s: size %d beyond datagram" % (key, size))
        fields.append((key, data[start:end]))
        pos = end
        if pos < n:
            if data[pos:pos + 1] != b"\n":
                raise ValueError("binary field %s: missing trailing newline" % key)
            pos += 1
    return fields


class JournalEntry(dict):
    """dict of KEY -> str (last value wins); .fields keeps every (key, bytes)."""

    def __init__(self, fields, via_memfd=False):
        super().__init__()
        self.fields = fields
        self.via_memfd = via_memfd
        self.time = time.monotonic()
        for k, v in fields:
            self[k] = v.decode("utf-8", "replace")

    def __repr__(self):
        keys = ("MESSAGE_ID", "PRIORITY", "LOWLATD_KIND", "LOWLATD_OBJECT",
                "LOWLATD_EXPECTED", "LOWLATD_OBSERVED", "LOWLATD_ERROR", "MESSAGE")
        return "{" + ", ".join("%s=%r" % (k, self[k]) for k in keys if k in self) + "}"


class JournalSocket(DatagramReceiver):
    """A fake journald at /run/systemd/journal/socket. Only inside a private mount
    namespace with a tmpfs on /run/systemd (see enter_private_mount_namespace()).

    Large entries arrive as a memfd passed with SCM_RIGHTS and an empty datagram."""

    def __init__(self, path=JOURNAL_SOCKET):
        if os.environ.get(PRIVATE_MNT_ENV) != "1":
            raise RuntimeError("JournalSocket outside the private mount namespace")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        self.entries_list = []
        super().__init__(path)

    def _datagram(self, data, fds):
        chunks = []
        if data:
            chunks.append((data, False))
        for fd in fds:
            os.lseek(fd, 0, os.SEEK_SET)
            buf = []
            while True:
                b = os.read(fd, 1 << 16)
                if not b:
                    break
                buf.append(b)
            chunks.append((b"".join(buf), True))
        for raw, memfd in chunks:
            e = JournalEntry(parse_journal_native(raw), via_memfd=memfd)
            with self.lock:
                self.entries_list.append(e)
                self.lock.notify_all()

    def entries(self, since=0):
        with self.lock:
            return list(self.entries_list[since:])

    def mark(self):
        with self.lock:
            return len(self.entries_list)

    def select(self, since=0, **fields):
        """Entries whose fields equal every given value; MESSAGE_ID may be given by name.
        A MESSAGE_ID that is neither a known name nor one of the ids raises: a misspelt
        name would match nothing and pass every "not logged" check."""
        want = dict(fields)
        if "MESSAGE_ID" in want:
            mid = want["MESSAGE_ID"]
            if mid in MID:
                want["MESSAGE_ID"] = MID[mid]
            elif mid not in MID.values():
                raise KeyError("MESSAGE_ID %r is not one of lowlatd's events %s" % (mid, sorted(MID)))
        return [e for e in self.entries(since)
                if all(e.get(k) == v for k, v in want.items())]

    def wait_for(self, timeout, since=0, **fields):
        deadline = time.monotonic() + timeout
        while True:
            got = self.select(since, **fields)
            if got:
                return got[0]
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            with self.lock:
                self.lock.wait(min(left, 0.1))


def isolate_from_real_journal():
    """Tests that read the daemon's log on stderr need it NOT to find a journal socket
    (the spec sends events to the journal when /run/systemd/journal/socket exists).
    When this machine has one, hide it in a private mount namespace."""
    if in_private_mount_namespace():
        if not os.path.ismount("/run/systemd"):
            enter_private_mount_namespace()
        return
    if os.path.exists(JOURNAL_SOCKET):
        enter_private_mount_namespace("this host has a journal socket; reading stderr "
                                      "logs needs it hidden")
