# SPDX-License-Identifier: LGPL-2.1-or-later
"""NotifySocket: systemd's NOTIFY_SOCKET, collecting what the daemon sends (READY=1,
RELOADING=1, STATUS=...)."""

import os
import time

from .cleanup import make_tempdir
from .datagram import DatagramReceiver


class NotifySocket(DatagramReceiver):
    """systemd's NOTIFY_SOCKET: collects every KEY=VALUE line the daemon sends.

    self.messages is a list of (time, bytes-line) in arrival order; use mark() to take
    a cursor and wait_for(b"READY=1", timeout, since=cursor) to wait for a new one."""

    def __init__(self, path=None, tmpdir=None):
        if path is None:
            path = os.path.join(tmpdir or make_tempdir(), "notify.sock")
        self.messages = []
        super().__init__(path)

    def _datagram(self, data, fds):
        with self.lock:
            now = time.monotonic()
            for line in data.split(b"\n"):
                if line:
                    self.messages.append((now, line))
            self.lock.notify_all()

    def mark(self):
        with self.lock:
            return len(self.messages)

    def lines(self, since=0):
        with self.lock:
            return [m for _, m in self.messages[since:]]

    def find(self, match, since=0):
        """Index of the first line at or after `since` that equals match (bytes) or,
        when match ends with b'=', starts with it; None when absent."""
        with self.lock:
            for i in range(since, len(self.messages)):
                line = self.messages[i][1]
                if line == match or (match.endswith(b"=") and line.startswith(match)):
                    return i
        return None

    def wait_for(self, match, timeout, since=0, alive=None):
        """Wait until a line matching `match` arrives at or after `since`; returns its
        index or None on timeout. `alive` is an optional callable that returns False
        when waiting is pointless (daemon exited)."""
        deadline = time.monotonic() + timeout
        while True:
            i = self.find(match, since)
            if i is not None:
                return i
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            if alive is not None and not alive():
                # one last look: the message may have raced the exit
                time.sleep(0.05)
                return self.find(match, since)
            with self.lock:
                self.lock.wait(min(left, 0.1))
