# SPDX-License-Identifier: LGPL-2.1-or-later
"""An AF_UNIX datagram socket drained from a thread, the base of the fake NOTIFY_SOCKET and
the fake journal socket."""

import os
import select
import socket
import struct
import threading

from . import cleanup


class DatagramReceiver:
    """Binds an AF_UNIX SOCK_DGRAM socket and drains it from a thread so that the daemon
    never blocks on a full queue; subclasses parse each datagram."""

    def __init__(self, path, mode=0o666):
        self.path = path
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)
        try:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
        except OSError:
            pass
        self.sock.bind(path)
        os.chmod(path, mode)
        self.lock = threading.Condition()
        self.errors = []
        self._stop = False
        self._rfd, self._wfd = os.pipe()
        # sd_journal_send raises SO_SNDBUF to 8 MiB: datagrams can be that large.
        self._buf = bytearray(16 << 20)
        self._view = memoryview(self._buf)
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        cleanup.SOCKETS.append(self)

    def _run(self):
        anc = socket.CMSG_SPACE(64 * struct.calcsize("i")) + socket.CMSG_SPACE(64)
        draining = False
        while True:
            if not draining:
                try:
                    r, _, _ = select.select([self.sock, self._rfd], [], [], 1.0)
                except (OSError, ValueError):
                    return
                if self._rfd in r:
                    draining = True   # closing: take what is queued, then stop
                elif self.sock not in r:
                    continue
            try:
                nbytes, ancdata, flags, _ = self.sock.recvmsg_into(
                    [self._buf], anc, socket.MSG_DONTWAIT if draining else 0)
                data = bytes(self._view[:nbytes])
            except BlockingIOError:
                if draining:
                    return
                continue
            except OSError:
                if draining:
                    return
                continue
            fds = []
            for level, typ, cdata in ancdata:
                if level == socket.SOL_SOCKET and typ == socket.SCM_RIGHTS:
                    n = len(cdata) - len(cdata) % struct.calcsize("i")
                    fds.extend(struct.unpack("%di" % (n // 4), cdata[:n]))
            try:
                if flags & socket.MSG_TRUNC:
                    self.errors.append("datagram truncated (%d bytes read)" % len(data))
                self._datagram(data, fds)
            except Exception as e:  # keep draining; report later
                self.errors.append("%s: %r" % (type(e).__name__, e))
            finally:
                for fd in fds:
                    try:
                        os.close(fd)
                    except OSError:
                        pass

    def _datagram(self, data, fds):
        raise NotImplementedError

    def close(self):
        if self._stop:
            return
        self._stop = True
        try:
            os.write(self._wfd, b"x")
        except OSError:
            pass
        self.thread.join(2)
        self.sock.close()
        for fd in (self._rfd, self._wfd):
            try:
                os.close(fd)
            except OSError:
                pass
        try:
            os.unlink(self.path)
        except OSError:
            pass
        if self in cleanup.SOCKETS:
            cleanup.SOCKETS.remove(self)
