# SPDX-License-Identifier: LGPL-2.1-or-later
"""Running lowlatd: where its binary and the project's files are, its environment and config
files, a run to completion (run_lowlatd) and a daemon started and watched (Daemon)."""

import os
import signal
import subprocess
import time

import lowlat_constants as C

from . import cleanup
from .cleanup import skip
from .files import write_text
from .notify import NotifySocket
from .timing import poll_until, scaled


SANITIZER_PATTERNS = (
    "ERROR: AddressSanitizer",
    "ERROR: LeakSanitizer",
    "runtime error:",          # UBSan
    "ThreadSanitizer",
    "==ERROR==",
)


def source_root():
    """LOWLATD_SOURCE_ROOT (meson sets it), else the tree the tests are in."""
    return C.SOURCE_ROOT


def policy_path():
    """The project's D-Bus policy, conf/org.lowlatd1.conf."""
    return os.path.join(source_root(), "conf", "org.lowlatd1.conf")


def lowlatd_path():
    p = os.environ.get("LOWLATD")
    if not p:
        p = os.path.join(source_root(), "build", "daemon", "lowlatd")
    if not (os.path.isfile(p) and os.access(p, os.X_OK)):
        skip("lowlatd binary not found at %s (set LOWLATD)" % p)
    return p


class DaemonError(Exception):
    pass


def _daemon_env(tmp, extra=None):
    env = dict(os.environ)
    for k in ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID", "LISTEN_FDS",
              "LISTEN_PID", "LISTEN_FDNAMES", "INVOCATION_ID", "JOURNAL_STREAM"):
        env.pop(k, None)
    # Never reach the real system bus from a test.
    env["DBUS_SYSTEM_BUS_ADDRESS"] = "unix:path=" + os.path.join(tmp, "no-system-bus")
    # Originals of the fake tree go with the fake tree, never to the real /run/lowlatd.
    env["RUNTIME_DIRECTORY"] = os.path.join(tmp, "run-lowlatd")
    env.setdefault("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=0")
    env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1")
    if extra:
        for k, v in extra.items():
            if v is None:
                env.pop(k, None)
            else:
                env[k] = v
    return env


def escape_root(root):
    """root as lowlatd names its state directory (lib/setting/originals.c, systemd-escape
    --path): the canonical path without its leading '/', '/' as '-', and every byte but
    [A-Za-z0-9:_.] (or a leading '.') as \\xNN."""
    out = []
    for c in os.path.realpath(root).strip("/").encode():
        ch = chr(c)
        if ch == "/":
            out.append("-")
        elif ch.isascii() and (ch.isalnum() or ch in ":_" or (ch == "." and out)):
            out.append(ch)
        else:
            out.append("\\x%02x" % c)
    return "".join(out)


def originals_path(host, runtime=None):
    """The originals file of a daemon on host's tree (--root host.root) under the runtime
    directory runtime (default: host.tmp/run-lowlatd, what Daemon and run_lowlatd set)."""
    runtime = runtime or os.path.join(host.tmp, "run-lowlatd")
    return os.path.join(runtime, "root", escape_root(host.root), "originals")


def posture_config(scan_interval=None):
    """The config of a plain posture on a FakeHost() of 4 CPUs: CPUs 2-3 isolated,
    cpu_dma_latency = 0, governor = performance and net.core.somaxconn = 8192, under a
    [daemon] section with scan_interval when one is given. [sysctl] comes last, so that a
    test can append keys to it."""
    daemon = "[daemon]\nscan_interval = %s\n\n" % scan_interval if scan_interval else ""
    return daemon + """\
[cpus]
isolated = 2-3

[pm]
cpu_dma_latency = 0
governor = performance

[sysctl]
net.core.somaxconn = 8192
"""


def write_config(host, text, name="lowlatd.conf", dropins=None):
    """Write the main config (and CONF.d/ drop-ins) under host.tmp/etc; returns its path."""
    etc = os.path.join(host.tmp, "etc")
    os.makedirs(etc, exist_ok=True)
    path = os.path.join(etc, name)
    write_text(path, text)
    if dropins:
        d = path + ".d"
        os.makedirs(d, exist_ok=True)
        for fn, t in dropins.items():
            write_text(os.path.join(d, fn), t)
    return path


def run_lowlatd(host, args, config_path=None, timeout=None, env=None):
    """Run lowlatd to completion (for --check-config / --once); returns CompletedProcess
    with text stdout/stderr."""
    argv = [lowlatd_path(), "--root", host.root]
    if config_path:
        argv += ["--config", config_path]
    argv += list(args)
    return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          env=_daemon_env(host.tmp, env), timeout=timeout or scaled(60),
                          universal_newlines=True, errors="replace")


class LiveRoot:
    """What Daemon and run_lowlatd need of a host, for lowlatd --root / on this machine's
    own /proc and /sys (observe mode, or a PID namespace with fake trees bound over what
    it could write): the root and a scratch directory."""

    def __init__(self, tmp):
        self.root = "/"
        self.tmp = tmp


class Daemon:
    """lowlatd --root HOST --config FILE, with NOTIFY_SOCKET pointed at self.notify."""

    def __init__(self, host, config_text, extra_args=(), env=None, dropins=None,
                 config_name="lowlatd.conf", start=True):
        self.host = host
        self.config_path = write_config(host, config_text, config_name, dropins)
        self.extra_args = list(extra_args)
        self.env_extra = env or {}
        self.notify = NotifySocket(tmpdir=host.tmp)
        n = sum(1 for f in os.listdir(host.tmp) if f.startswith("lowlatd-stderr"))
        self.stderr_path = os.path.join(host.tmp, "lowlatd-stderr.%d.log" % n)
        self.stdout_path = os.path.join(host.tmp, "lowlatd-stdout.%d.log" % n)
        self.proc = None
        self.returncode = None
        if start:
            self.start()

    @property
    def argv(self):
        return [lowlatd_path(), "--root", self.host.root, "--config", self.config_path] + \
            self.extra_args

    def start(self):
        env = _daemon_env(self.host.tmp, self.env_extra)
        env["NOTIFY_SOCKET"] = self.notify.path
        self._err = open(self.stderr_path, "wb")
        self._out = open(self.stdout_path, "wb")
        self.proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL, stdout=self._out,
                                     stderr=self._err, env=env)
        self.pid = self.proc.pid
        cleanup.DAEMONS.append(self)
        return self

    def rewrite_config(self, text):
        write_text(self.config_path, text)

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def stderr(self):
        """Everything the daemon wrote to stderr. Raises when its log file is not there (a
        daemon never started): "no output" must not read as "nothing went wrong"."""
        with open(self.stderr_path, "r", errors="replace") as f:
            return f.read()

    def stderr_lines(self):
        return self.stderr().splitlines()

    def stdout(self):
        with open(self.stdout_path, "r", errors="replace") as f:
            return f.read()

    def stderr_tail(self, n=40):
        return "\n".join(self.stderr_lines()[-n:])

    def sanitizer_reports(self):
        return [l for l in self.stderr_lines() if any(p in l for p in SANITIZER_PATTERNS)]

    def wait_ready(self, timeout=None, since=0):
        """Wait for READY=1 (at or after notify index `since`); returns seconds waited.
        Raises DaemonError when the daemon exits or the deadline passes."""
        timeout = scaled(30) if timeout is None else timeout
        t0 = time.monotonic()
        i = self.notify.wait_for(b"READY=1", timeout, since=since, alive=self.alive)
        if i is None:
            if not self.alive():
                raise DaemonError("lowlatd exited with %s before READY=1; stderr:\n%s"
                                  % (self.proc.returncode, self.stderr_tail()))
            raise DaemonError("no READY=1 within %.1fs; notify: %r; stderr:\n%s"
                              % (timeout, self.notify.lines(since)[-10:], self.stderr_tail()))
        return time.monotonic() - t0

    def signal(self, sig):
        if not self.alive():
            raise DaemonError("lowlatd is not running (rc %s); stderr:\n%s"
                              % (self.proc.returncode, self.stderr_tail()))
        os.kill(self.proc.pid, sig)

    def sighup(self):
        """Send SIGHUP; returns the notify cursor taken just before it."""
        cur = self.notify.mark()
        self.signal(signal.SIGHUP)
        return cur

    def stop(self, expect=0, timeout=None):
        """SIGTERM, wait; returns the exit status. Raises DaemonError when it had already
        died, does not exit in time, or exits with a status other than `expect`
        (pass expect=None to accept any)."""
        timeout = scaled(20) if timeout is None else timeout
        already_dead = not self.alive()
        if not already_dead:
            os.kill(self.proc.pid, signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise DaemonError("lowlatd did not exit within %.0fs of SIGTERM" % timeout)
        finally:
            self._close_files()
        self.returncode = rc
        if already_dead:
            raise DaemonError("lowlatd had already exited with %s; stderr:\n%s"
                              % (rc, self.stderr_tail()))
        if expect is not None and rc != expect:
            raise DaemonError("lowlatd exited with %s, expected %s; stderr:\n%s"
                              % (rc, expect, self.stderr_tail()))
        return rc

    def kill(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                pass
        self._close_files()
        self.notify.close()
        if self in cleanup.DAEMONS:
            cleanup.DAEMONS.remove(self)

    def _close_files(self):
        for f in (getattr(self, "_err", None), getattr(self, "_out", None)):
            if f is not None and not f.closed:
                f.close()

    def open_fd_targets(self):
        """Paths of the daemon's open fds (from /proc/PID/fd). Raises OSError when they
        cannot be listed (the daemon is gone): an empty list would pass "no longer holds
        X open"."""
        out = []
        d = "/proc/%d/fd" % self.proc.pid
        for n in os.listdir(d):
            try:
                out.append(os.readlink(os.path.join(d, n)))
            except FileNotFoundError:
                pass    # closed between the listing and the readlink: not open
        return out

    def holds_open(self, path):
        """Whether the daemon has path open (raises when it cannot be told, see above)."""
        rp = os.path.realpath(path)
        return any(os.path.realpath(p) == rp for p in self.open_fd_targets())

    def fd_count(self):
        """The number of the daemon's open fds; raises OSError when the daemon is gone."""
        return len(os.listdir("/proc/%d/fd" % self.proc.pid))

    def steady_fd_count(self, quiet=0.5, timeout=10):
        """The daemon's fd count once it has stayed the same for `quiet` seconds: right
        after READY=1 some fds are still transient (sd-event keeps the O_PATH fd of a new
        inotify watch until its next iteration, sd_notify() opens a socket per message), and
        a baseline taken then makes a leak check fail on a daemon that leaks nothing."""
        deadline = time.monotonic() + scaled(timeout)
        last, since = self.fd_count(), time.monotonic()
        while time.monotonic() < deadline:
            time.sleep(0.05)
            n = self.fd_count()
            if n != last:
                last, since = n, time.monotonic()
            elif time.monotonic() - since >= quiet:
                break
        return last

    def poll_until(self, predicate, timeout=None, interval=0.02):
        return poll_until(predicate, timeout, interval, alive=self.alive)
