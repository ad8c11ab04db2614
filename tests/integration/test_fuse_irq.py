#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""lowlatd against fakeirqfs: a FUSE /proc/irq with the kernel's errors and proc-entry
lifetimes, which plain files cannot give.

A FakeHost (4 CPUs, 2-3 isolated) has its proc/irq replaced by a fakeirqfs mount with
the same IRQ numbers, every IRQ at 0-3. The real lowlatd runs with scan_interval = 1s,
and the test checks, phase by phase:
  - first pass: every movable IRQ at 0-1 (read through the mount), READY=1;
  - a managed IRQ on isolated CPUs is unmovable, reported once, written at most once
    (legacy ABI: one write that gets EIO; modern ABI: files 0444, no write at all),
    never written again over several scans, and the daemon keeps going;
  - an IRQ that vanishes between scans leaves the daemon's view (STATUS=, and
    ListSettings when a private bus can be had) without an error storm, and comes back
    corrected when it appears again at 2-3; likewise vanish + appear in one step (old
    fds give EIO), and a vanish right after the daemon's read (mid-scan);
  - another writer (`set`, no inotify event through FUSE) is undone by the periodic scan;
  - with CPU 1 offline, housekeeping writes ("0-1" still holds CPU 0) succeed.
The legacy phase logs to a fake journal (MESSAGE_ID, LOWLATD_ERROR); the modern phase
logs to stderr. Everything runs in a private mount namespace, so the FUSE mounts are
invisible to (and not copied by) the rest of the machine; the copies of other tests'
fakeirqfs mounts that entering it makes are detached at once, so that their unmount
still ends their fakeirqfs (tests run in parallel).

Environment: FAKEIRQFS (meson sets it when libfuse3 was found), plus lowlat_harness's.
Exit 77 with a reason: not root, no /dev/fuse, FAKEIRQFS unset, or the mount refused.
"""

import os
import re
import select
import shutil
import signal
import subprocess
import time

import busctl_harness as b
import lowlat_harness as h

CONFIG = """\
[daemon]
scan_interval = 1s

[cpus]
isolated = 2-3
"""

NCPUS = 4
NIRQS = 160          # 7 legacy, 10 single, eth0 and eth1 queues, then nvme0 queues
HOUSEKEEPING = "0-1"
TIMEOUT = 5          # seconds (scaled) for anything the 1 s scan must do

# fakeirqfs's stderr when the kernel or libfuse refuses the mount: skip, not fail.
MOUNT_REFUSED = ("permission denied", "operation not permitted", "fusermount",
                 "fuse: device not found", "no such device", "failed to open /dev/fuse",
                 "mount failed", "fuse_session_mount")

MID_NAME = {v: k for k, v in h.MID.items()}

_FILESYSTEMS = []


# ---------------------------------------------------------------------------------------
# The FUSE mount

class MountRefused(Exception):
    pass


class FakeIrqFs:
    """fakeirqfs mounted at HOST/proc/irq in place of the plain directory (moved aside)."""

    def __init__(self, exe, host, managed=(), abi="legacy", affinity="0-3"):
        self.exe = exe
        self.host = host
        self.mnt = host.irq_dir
        self.log_path = os.path.join(host.tmp, "fakeirqfs.log")
        self.plain = os.path.join(host.tmp, "proc-irq.plain")
        self.argv = [exe, self.mnt,
                     "--cpus=%d" % host.ncpus,
                     "--online=" + h.format_cpulist(host.online),
                     "--irqs=" + h.format_cpulist(host.irqs),
                     "--default-affinity=" + h.format_cpulist(host.all_cpus),
                     "--affinity=" + affinity,
                     "--managed-abi=" + abi]
        if managed:
            self.argv.append("--managed=" + h.format_cpulist(managed))
        self.proc = None
        self.returncode = None
        self.mounted = False

    def start(self):
        os.rename(self.mnt, self.plain)
        os.mkdir(self.mnt)
        rfd, wfd = os.pipe()
        argv = self.argv + ["--ready-fd=%d" % wfd]
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                         pass_fds=(wfd,))
        _FILESYSTEMS.append(self)
        os.close(wfd)
        got = b""
        deadline = time.monotonic() + h.scaled(20)
        try:
            while b"\n" not in got:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                r, _, _ = select.select([rfd], [], [], left)
                if not r:
                    break
                chunk = os.read(rfd, 64)
                if not chunk:
                    break       # closed without "ready": it exited (or gave up)
                got += chunk
        finally:
            os.close(rfd)
        if got.strip() == b"ready" and os.path.ismount(self.mnt):
            self.mounted = True
            return self
        # Not mounted: put the plain directory back, then tell a refusal (skip) from a
        # bug (fail).
        self.stop()
        text = self.log()
        if any(p in text.lower() for p in MOUNT_REFUSED):
            raise MountRefused("fakeirqfs could not mount (exit %s): %s"
                               % (self.returncode, " ".join(text.split())[:300]))
        raise RuntimeError("fakeirqfs did not report ready (read %r, exit %s); log:\n%s"
                           % (got, self.returncode, text))

    def log(self):
        """fakeirqfs's stdout and stderr (start() creates the file): raises when unreadable,
        or "no sanitizer reports" would pass on a log nobody read."""
        return h.read_text(self.log_path)

    def path(self, *parts):
        return os.path.join(self.mnt, *[str(p) for p in parts])

    def control(self, command):
        """Write one or more ';'-separated commands to .control (raises OSError)."""
        with open(self.path(".control"), "w") as f:
            f.write(command + "\n")

    def stats(self):
        """{name: (writes, failed, opens, reads, state)}; name is 'default_smp_affinity'
        or the IRQ number as an int."""
        out = {}
        for line in h.read_text(self.path(".stats")).splitlines():
            if not line or line.startswith("#"):
                continue
            f = line.split()
            name = int(f[0]) if f[0].isdigit() else f[0]
            out[name] = (int(f[1]), int(f[2]), int(f[3]), int(f[4]), f[5])
        return out

    def irq_stats(self, irq):
        st = self.stats()
        if irq not in st:
            raise KeyError("IRQ %d is not in fakeirqfs's .stats" % irq)
        return st[irq]

    def stop(self):
        """Unmount (fusermount3 -u, then umount), wait for fakeirqfs; SIGTERM, then
        SIGKILL and a lazy umount as fallbacks. Returns fakeirqfs's exit status."""
        if self.proc is None:
            return self.returncode
        if os.path.ismount(self.mnt):
            tool = shutil.which("fusermount3")
            argv = [tool, "-u", self.mnt] if tool else ["umount", self.mnt]
            r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            if r.returncode != 0 and tool:
                subprocess.run(["umount", self.mnt], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
        for sig in (None, signal.SIGTERM, signal.SIGKILL):
            if sig is not None and self.proc.poll() is None:
                self.proc.send_signal(sig)
            try:
                self.returncode = self.proc.wait(h.scaled(10))
                break
            except subprocess.TimeoutExpired:
                continue
        if os.path.ismount(self.mnt):
            subprocess.run(["umount", "-l", self.mnt], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
        self.mounted = os.path.ismount(self.mnt)
        if not self.mounted and os.path.isdir(self.plain):
            try:
                os.rmdir(self.mnt)
                os.rename(self.plain, self.mnt)
            except OSError:
                pass
        if self in _FILESYSTEMS:
            _FILESYSTEMS.remove(self)
        self.proc = None
        return self.returncode


def _unmount_all():
    for fs in list(_FILESYSTEMS):
        try:
            fs.stop()
        except Exception:
            pass


# ---------------------------------------------------------------------------------------
# The daemon's log, from the fake journal or from stderr, as (event name, text) per IRQ

def word_rx(irq):
    """'IRQ 57' or a path '/irq/57/': not any number (a count in a summary line)."""
    return re.compile(r"\bIRQ %d\b|/irq/%d/" % (irq, irq))


STDERR_EVENTS = (
    ("unmovable", re.compile(r" is unmovable, leaving it at ")),
    ("correction-failed", re.compile(r": could not set ")),
    ("fight-ended", re.compile(r": the other writer stopped")),
    ("fight", re.compile(r" keeps being changed back to ")),
    ("recovered", re.compile(r" is back at ")),
    ("unsupported", re.compile(r" unsupported: ")),
    ("drift", re.compile(r" drifted: expected ")),
    ("corrected", re.compile(r" corrected to ")),
)


class JournalLog:
    kind = "journal"

    def __init__(self, journal):
        self.j = journal
        self.daemon = None

    def mark(self):
        return self.j.mark()

    def about(self, irq, since=0):
        """(event name, entry) for entries about IRQ irq (by object or in the message)."""
        rx = word_rx(irq)
        out = []
        for e in self.j.entries(since):
            if e.get("LOWLATD_OBJECT") == str(irq) or rx.search(e.get("MESSAGE", "")):
                out.append((MID_NAME.get(e.get("MESSAGE_ID"), e.get("MESSAGE_ID")), e))
        return out

    def named(self, name, since=0):
        return [e for e in self.j.entries(since) if e.get("MESSAGE_ID") == h.MID[name]]

    @staticmethod
    def text(entry):
        return repr(entry)

    @staticmethod
    def error_of(entry):
        return entry.get("LOWLATD_ERROR", "")


class StderrLog:
    kind = "stderr"

    def __init__(self):
        self.daemon = None

    def mark(self):
        return len(self.daemon.stderr_lines())

    @staticmethod
    def classify(line):
        for name, rx in STDERR_EVENTS:
            if rx.search(line):
                return name
        return "other"

    def about(self, irq, since=0):
        rx = word_rx(irq)
        return [(self.classify(l), l) for l in self.daemon.stderr_lines()[since:] if rx.search(l)]

    def named(self, name, since=0):
        return [l for l in self.daemon.stderr_lines()[since:] if self.classify(l) == name]

    @staticmethod
    def text(line):
        return line

    @staticmethod
    def error_of(line):
        return line.split(" is unmovable, leaving it at ", 1)[-1]


def messages(log, since, containing):
    """The messages logged since the mark that contain the text."""
    if log.kind == "journal":
        texts = [e.get("MESSAGE", "") for e in log.j.entries(since)]
    else:
        texts = log.daemon.stderr_lines()[since:]
    return [m for m in texts if containing in m]


def names(events):
    return [n for n, _ in events]


def describe(log, events):
    return "\n".join(log.text(e) for _, e in events) or "(none)"


# ---------------------------------------------------------------------------------------
# The daemon's view: STATUS= on NOTIFY_SOCKET, and ListSettings on a private bus

STATUS_RX = re.compile(rb"^STATUS=(\w+): (\d+) settings, (\d+) drifted, (\d+) failed, "
                       rb"(\d+) unmovable")


def last_status(d):
    """(state, settings, drifted, failed, unmovable) from the newest STATUS= line."""
    for line in reversed(d.notify.lines()):
        m = STATUS_RX.match(line)
        if m:
            return (m.group(1).decode(),) + tuple(int(x) for x in m.groups()[1:])
    return None


def settings_count(d):
    st = last_status(d)
    return st[1] if st else None


def status_line(d):
    st = [l for l in d.notify.lines() if l.startswith(b"STATUS=")]
    return st[-1].decode(errors="replace") if st else "(no STATUS=)"


def irq_rows(view):
    """{object: (desired, observed, state)} of the irq_affinity rows of ListSettings."""
    return {r[1]: r[2:] for r in view.rows() if r[0] == "irq_affinity"}


# ---------------------------------------------------------------------------------------

def affinity(fs, irq):
    return h.read_text(fs.path(irq, "smp_affinity_list")).strip()


def scans_pass(fs, d, quiet_irq, n):
    """Wait until the daemon has read quiet_irq's files at least 2n more times: every scan
    preads its smp_affinity_list and effective_affinity_list once each, so that is at
    least n scans. Returns True when they happened before the deadline."""
    base = fs.irq_stats(quiet_irq)[3]
    return d.poll_until(lambda: fs.irq_stats(quiet_irq)[3] - base >= 2 * n,
                        h.scaled(TIMEOUT + 2 * n), interval=0.05)


def set_cpu_online(host, cpu, online):
    if online:
        host.online.add(cpu)
    else:
        host.online.discard(cpu)
    cpu_dir = host.sys_cpu_dir
    h.write_text(os.path.join(cpu_dir, "online"), h.format_cpulist(host.online) + "\n")
    h.write_text(os.path.join(cpu_dir, "offline"),
                 h.format_cpulist(host.all_cpus - host.online) + "\n")
    h.write_text(os.path.join(cpu_dir, "cpu%d" % cpu, "online"), "1\n" if online else "0\n")
    host._write_interrupts()   # its CPU columns are the online CPUs


class Phase:
    """What the steps of one phase share: the test, its prefix, the fake host and the
    IRQs each step plays with; the mount, the bus view and the daemon once started; and
    the number of settings the first pass reports."""

    def __init__(self, t, abi, log):
        self.t = t
        self.abi = abi
        self.log = log
        self.P = "[%s ABI, %s] " % (abi, log.kind)
        self.host = h.FakeHost(ncpus=NCPUS, nirqs=NIRQS, isolated="2-3")
        eth0 = self.host.irqs_matching("eth0-TxRx-*")
        self.managed = self.host.irqs_matching("nvme0q*")[2]
        self.vanish, self.flip, self.midscan, self.external, self.offline_irq = eth0[5:10]
        self.quiet = eth0[20]      # nobody touches it: its read counter counts scans
        self.fs = None
        self.view = None
        self.d = None
        self.n_settings = None


def first_pass(c):
    """Step 1, the first pass: READY=1, every movable IRQ at housekeeping, one write
    each, STATUS=. False when the daemon never got ready."""
    t, P, host, fs, view, d = c.t, c.P, c.host, c.fs, c.view, c.d
    managed = c.managed
    try:
        waited = d.wait_ready(h.scaled(30))
        t.ok(True, P + "READY=1 after the first pass (%.2fs)" % waited)
    except h.DaemonError as e:
        t.ok(False, P + "READY=1 after the first pass",
             str(e) + "\nfakeirqfs log:\n" + fs.log())
        return False
    view.wait_owner(d, h.scaled(TIMEOUT))
    wrong = {n: affinity(fs, n) for n in host.irqs if n != managed}
    wrong = {n: a for n, a in wrong.items() if a != HOUSEKEEPING}
    t.ok(not wrong, P + "every movable IRQ reads %s through the mount (%d IRQs)"
         % (HOUSEKEEPING, len(host.irqs) - 1), "wrong: %r" % sorted(wrong.items())[:10])
    dflt = h.read_text(fs.path("default_smp_affinity")).strip()
    t.ok(dflt == "3", P + "default_smp_affinity reads 3 (CPUs 0-1)", "reads %r" % dflt)
    st = fs.stats()
    bad_writes = {n: s[:2] for n, s in st.items()
                  if isinstance(n, int) and n != managed and s[0:2] != (1, 0)}
    t.ok(not bad_writes, P + "the first pass wrote each movable IRQ once, without an error",
         "IRQ: (writes, failed) %r" % sorted(bad_writes.items())[:10])
    status0 = last_status(d)
    t.ok(status0 is not None and status0[1] == len(host.irqs) + 1 and status0[2:4] == (0, 0)
         and status0[4] == 1,
         P + "STATUS= counts %d settings, 0 drifted, 0 failed, 1 unmovable"
         % (len(host.irqs) + 1),
         status_line(d))
    c.n_settings = status0[1] if status0 else len(host.irqs) + 1
    return True


def managed_irq_step(c):
    """Steps 2 and 3, the managed IRQ: unmovable, reported once, never written again."""
    t, P, abi, log, fs, view, d = c.t, c.P, c.abi, c.log, c.fs, c.view, c.d
    managed, quiet = c.managed, c.quiet
    want_writes = 1 if abi == "legacy" else 0
    want_error = "Input/output error" if abi == "legacy" else "read-only"
    got = d.poll_until(lambda: [e for n, e in log.about(managed) if n == "unmovable"],
                       h.scaled(TIMEOUT))
    t.ok(got, P + "managed IRQ %d is reported unmovable" % managed,
         describe(log, log.about(managed)))
    if got:
        e = got[0]
        err = log.error_of(e)
        t.ok(want_error in err, P + "the report gives the kernel's reason (%r)" % want_error,
             log.text(e))
        if log.kind == "journal":
            problems = ["%s=%r" % (k, e.get(k)) for k, v in
                        (("PRIORITY", "4"), ("LOWLATD_KIND", "irq_affinity"),
                         ("LOWLATD_OBJECT", str(managed)), ("LOWLATD_EXPECTED", HOUSEKEEPING),
                         ("SYSLOG_IDENTIFIER", "lowlatd")) if e.get(k) != v]
            if not (e.get("LOWLATD_OBSERVED") or "").startswith("3"):
                problems.append("LOWLATD_OBSERVED=%r" % e.get("LOWLATD_OBSERVED"))
            t.ok(not problems, P + "unmovable entry (%s…): PRIORITY=4, kind, "
                 "object, expected %s, observed 3" % (h.MID["unmovable"][:8], HOUSEKEEPING),
                 ", ".join(problems) + "\n" + log.text(e))
    s = fs.irq_stats(managed)
    t.ok(s[0] == want_writes and s[1] == want_writes,
         P + "managed IRQ %d: %d write(s), %d refused, after the first pass"
         % (managed, want_writes, want_writes), ".stats: writes %d failed %d" % s[:2])
    what = P + "ListSettings shows IRQ %d unmovable" % managed
    if view.available:
        rows = irq_rows(view)
        t.ok(rows.get(str(managed), ("", "", ""))[2] == "unmovable", what, repr(rows.get(str(managed))))
    else:
        t.skip(what, view.why)

    reads_before = fs.irq_stats(managed)[3]
    t.ok(scans_pass(fs, d, quiet, 4), P + "four more scans pass (1 s interval)",
         ".stats:\n" + h.read_text(fs.path(".stats"))[:300])
    s = fs.irq_stats(managed)
    t.ok(s[0] == want_writes, P + "managed IRQ %d is never written again over the scans"
         % managed, ".stats: writes %d failed %d" % s[:2])
    t.ok(s[3] > reads_before, P + "... but it is still read (watched) by the scans",
         "reads %d -> %d" % (reads_before, s[3]))
    ev = log.about(managed)
    t.ok(names(ev) == ["unmovable"], P + "IRQ %d is reported exactly once" % managed,
         describe(log, ev))
    t.ok(affinity(fs, managed) == "3", P + "managed IRQ %d stays at 3" % managed,
         affinity(fs, managed))
    t.ok(d.alive(), P + "lowlatd keeps running", d.stderr_tail())


def vanish_between_scans(c):
    """Step 4a: an IRQ vanishes between scans, then appears again at 2-3."""
    t, P, log, fs, view, d = c.t, c.P, c.log, c.fs, c.view, c.d
    vanish, quiet, n_settings = c.vanish, c.quiet, c.n_settings
    mark = log.mark()
    fs.control("vanish %d" % vanish)
    got = d.poll_until(lambda: settings_count(d) == n_settings - 1, h.scaled(TIMEOUT))
    t.ok(got, P + "vanished IRQ %d leaves the daemon's view (STATUS= %d settings)"
         % (vanish, n_settings - 1), status_line(d))
    what = P + "ListSettings no longer lists IRQ %d" % vanish
    if view.available:
        rows = irq_rows(view)
        t.ok(str(vanish) not in rows and str(quiet) in rows, what, repr(rows.get(str(vanish))))
    else:
        t.skip(what, view.why)
    scans_pass(fs, d, quiet, 2)
    ev = log.about(vanish, mark)
    t.ok(len(ev) <= 1, P + "no error storm for the vanished IRQ %d (at most one line)" % vanish,
         describe(log, ev))
    t.ok(fs.irq_stats(vanish)[4] == "vanished" and d.alive(),
         P + "IRQ %d is gone and lowlatd runs on" % vanish, d.stderr_tail())

    mark = log.mark()
    fs.control("appear %d 2-3" % vanish)
    got = d.poll_until(lambda: affinity(fs, vanish) == HOUSEKEEPING, h.scaled(TIMEOUT))
    t.ok(got, P + "IRQ %d appears again at 2-3 and the next scan moves it to %s"
         % (vanish, HOUSEKEEPING), "reads %r" % affinity(fs, vanish))
    got = d.poll_until(lambda: settings_count(d) == n_settings, h.scaled(TIMEOUT))
    t.ok(got, P + "... and it is back in the daemon's view (STATUS= %d settings)" % n_settings,
         status_line(d))
    got = d.poll_until(lambda: "corrected" in names(log.about(vanish, mark)), h.scaled(TIMEOUT))
    ev = log.about(vanish, mark)
    t.ok(got and names(ev) == ["drift", "corrected"],
         P + "the reappeared IRQ %d is logged as drifted, then corrected" % vanish,
         describe(log, ev))
    s = fs.irq_stats(vanish)
    t.ok(s[:2] == (1, 0) and s[4] == "present",
         P + "one write to the new IRQ %d entry, accepted" % vanish,
         ".stats: writes %d failed %d %s" % (s[0], s[1], s[4]))


def vanish_and_appear(c):
    """Step 4b: vanish and appear in one step: the daemon's fds now read EIO."""
    t, P, log, fs, d = c.t, c.P, c.log, c.fs, c.d
    flip = c.flip
    mark = log.mark()
    fs.control("vanish %d; appear %d 2-3" % (flip, flip))
    got = d.poll_until(lambda: affinity(fs, flip) == HOUSEKEEPING, h.scaled(TIMEOUT))
    t.ok(got, P + "IRQ %d replaced by a new entry at 2-3 is corrected to %s (old fds give EIO)"
         % (flip, HOUSEKEEPING), "reads %r" % affinity(fs, flip))
    d.poll_until(lambda: "corrected" in names(log.about(flip, mark)), h.scaled(TIMEOUT))
    ev = log.about(flip, mark)
    t.ok(names(ev) == ["drift", "corrected"],
         P + "... logged as drifted and corrected, no read error", describe(log, ev))
    s = fs.irq_stats(flip)
    t.ok(s[:2] == (1, 0), P + "... with one accepted write to the new entry",
         ".stats: writes %d failed %d" % s[:2])


def vanish_mid_scan(c):
    """Step 4c: the IRQ goes away right after the daemon reads it (driver unbind mid-scan)."""
    t, P, log, fs, d = c.t, c.P, c.log, c.fs, c.d
    midscan, quiet, n_settings = c.midscan, c.quiet, c.n_settings
    mark = log.mark()
    fs.control("set %d 2-3; vanish-after-read %d" % (midscan, midscan))
    got = d.poll_until(lambda: fs.irq_stats(midscan)[4] == "vanished", h.scaled(TIMEOUT))
    t.ok(got, P + "IRQ %d vanishes right after the scan reads it" % midscan,
         repr(fs.irq_stats(midscan)))
    got = d.poll_until(lambda: settings_count(d) == n_settings - 1, h.scaled(TIMEOUT))
    t.ok(got, P + "... and leaves the daemon's view (STATUS= %d settings)" % (n_settings - 1),
         status_line(d))
    scans_pass(fs, d, quiet, 2)
    ev = log.about(midscan, mark)
    t.ok(len(ev) <= 1 and not set(names(ev)) & {"correction-failed", "unmovable", "other"},
         P + "... without an error (at most one drift line)", describe(log, ev))
    s = fs.irq_stats(midscan)
    t.ok(s[1] == 0, P + "... and no failed write", ".stats: writes %d failed %d" % s[:2])
    fs.control("appear %d 2-3" % midscan)
    got = d.poll_until(lambda: affinity(fs, midscan) == HOUSEKEEPING, h.scaled(TIMEOUT))
    t.ok(got, P + "IRQ %d appears again and is corrected to %s" % (midscan, HOUSEKEEPING),
         "reads %r" % affinity(fs, midscan))


def external_writer(c):
    """Step 5: another writer moves an IRQ; FUSE raises no inotify event, the scan finds it."""
    t, P, log, fs, d = c.t, c.P, c.log, c.fs, c.d
    external = c.external
    mark = log.mark()
    t0 = time.monotonic()
    fs.control("set %d 2-3" % external)
    got = d.poll_until(lambda: affinity(fs, external) == HOUSEKEEPING, h.scaled(TIMEOUT))
    took = time.monotonic() - t0
    t.ok(got, P + "external write of 2-3 to IRQ %d is undone by the periodic scan (%.2fs)"
         % (external, took), "reads %r" % affinity(fs, external))
    d.poll_until(lambda: "corrected" in names(log.about(external, mark)), h.scaled(TIMEOUT))
    ev = log.about(external, mark)
    t.ok(names(ev) == ["drift", "corrected"], P + "... logged as drifted, then corrected",
         describe(log, ev))
    if log.kind == "journal" and ev:
        e = ev[0][1]
        t.ok(e.get("LOWLATD_OBSERVED", "").startswith("2-3")
             and e.get("LOWLATD_EXPECTED") == HOUSEKEEPING,
             P + "the drift entry says expected %s, observed 2-3" % HOUSEKEEPING, log.text(e))


def cpu_offline_step(c):
    """Step 6: CPU 1 goes offline, then online again."""
    t, P, log, host, fs, d = c.t, c.P, c.log, c.host, c.fs, c.d
    offline_irq = c.offline_irq
    # CPU 1 goes offline: the posture is rebuilt from the unchanged configuration
    # (housekeeping is online minus isolated, now 0), and an IRQ written meanwhile is
    # corrected to the new housekeeping set without a failed write. CPU 1 back online:
    # rebuilt again.
    fs.control("offline 1")
    set_cpu_online(host, 1, False)
    mark = log.mark()
    fs.control("set %d 2-3" % offline_irq)
    got = d.poll_until(lambda: affinity(fs, offline_irq) == "0", h.scaled(TIMEOUT))
    eff = h.read_text(fs.path(offline_irq, "effective_affinity_list")).strip()
    s = fs.irq_stats(offline_irq)
    t.ok(got and eff == "0" and s[1] == 0,
         P + "with CPU 1 offline IRQ %d is corrected to the new housekeeping CPU 0, no failed write"
         % offline_irq,
         "reads %r, effective %r, failed writes %d" % (affinity(fs, offline_irq), eff, s[1]))
    rebuilt = d.poll_until(lambda: messages(log, mark, "(online CPUs changed to 0,2-3)"), h.scaled(TIMEOUT))
    t.ok(rebuilt, P + "... the posture was rebuilt: 'Reloaded ... (online CPUs changed to 0,2-3)'",
         "\n".join(messages(log, mark, ""))[-1500:])
    fs.control("online 1")
    set_cpu_online(host, 1, True)
    mark = log.mark()
    rebuilt = d.poll_until(lambda: messages(log, mark, "(online CPUs changed to 0-3)"), h.scaled(TIMEOUT))
    t.ok(rebuilt, P + "CPU 1 online again: rebuilt for 0-3",
         "\n".join(messages(log, mark, ""))[-1500:])


def whole_run(c):
    """What holds over the whole run, and lowlatd stopping cleanly."""
    t, P, log, d = c.t, c.P, c.log, c.d
    n_settings = c.n_settings
    failed = log.named("correction-failed")
    t.ok(not failed, P + "no correction-failed events in the whole run",
         "\n".join(log.text(e) for e in failed[:10]))
    st = last_status(d)
    t.ok(st is not None and st[1:] == (n_settings, 0, 0, 1),
         P + "final STATUS=: %d settings, 0 drifted, 0 failed, 1 unmovable" % n_settings,
         status_line(d))
    t.ok(d.alive(), P + "lowlatd is still running", d.stderr_tail())
    t.stopped_cleanly(d, what=P + "lowlatd")


def stop_phase(c):
    """Whatever step a phase ended at: the daemon, the bus and fakeirqfs are stopped, and
    fakeirqfs must have unmounted, exited 0 and logged no sanitizer report."""
    t, P, fs, view, d = c.t, c.P, c.fs, c.view, c.d
    if d is not None:
        d.kill()
    if view is not None:
        view.stop()
    rc = fs.stop()
    flog = fs.log()
    rep = [l for l in flog.splitlines() if any(p in l for p in h.SANITIZER_PATTERNS)]
    t.ok(rc == 0 and not fs.mounted,
         P + "fakeirqfs unmounted and exited 0", "exit %s, mounted %s; log:\n%s"
         % (rc, fs.mounted, flog[-2000:]))
    t.ok(not rep, P + "fakeirqfs: no sanitizer reports", "\n".join(rep[:20]))


def phase(t, exe, abi, log):
    """One daemon on one fakeirqfs mount; `abi` is fakeirqfs's --managed-abi."""
    c = Phase(t, abi, log)
    P = c.P
    t.note("%smanaged %d, vanish %d, vanish+appear %d, vanish mid-scan %d, external %d, "
           "offline-CPU write %d, quiet %d"
           % (P, c.managed, c.vanish, c.flip, c.midscan, c.external, c.offline_irq, c.quiet))

    c.fs = FakeIrqFs(exe, c.host, managed=[c.managed], abi=abi).start()
    try:
        # A managed queue interrupt sits on an isolated CPU (the kernel put it there).
        c.fs.control("set %d 3" % c.managed)
        c.view = b.SettingsView(c.host.tmp)
        if not c.view.available:
            t.note("%sno private bus (%s): the daemon's view is checked through STATUS= only"
                   % (P, c.view.why))
        c.d = h.Daemon(c.host, CONFIG, env=c.view.env())
        log.daemon = c.d

        if not first_pass(c):
            return
        managed_irq_step(c)
        vanish_between_scans(c)
        vanish_and_appear(c)
        vanish_mid_scan(c)
        external_writer(c)
        cpu_offline_step(c)
        whole_run(c)
    finally:
        stop_phase(c)


OFFLINE_CONFIG = """\
[daemon]
scan_interval = 1s

[cpus]
isolated = 2-3
housekeeping = 1
"""


def offline_phase(t, exe):
    """CPU hotplug: with housekeeping = CPU 1 alone, taking CPU 1 offline makes every
    write refused with EINVAL (no online CPU in the mask). That is a passing state: the
    IRQs are failed, not unmovable, and are put back when CPU 1 comes online again."""
    P = "[offline CPU] "
    host = h.FakeHost(ncpus=NCPUS, nirqs=40, isolated="2-3")
    fs = FakeIrqFs(exe, host).start()
    d = None
    try:
        d = h.Daemon(host, OFFLINE_CONFIG)
        d.wait_ready(h.scaled(30))
        t.ok(all(affinity(fs, n) == "1" for n in host.irqs), P + "every IRQ starts on CPU 1")

        fs.control("offline 1")
        set_cpu_online(host, 1, False)
        failed = d.poll_until(lambda: (last_status(d) or (0,) * 5)[3] > 0, h.scaled(TIMEOUT))
        t.ok(failed, P + "with CPU 1 offline the IRQs the kernel moved are reported failed", status_line(d))
        st = last_status(d)
        t.ok(st is not None and st[4] == 0, P + "... and none is marked unmovable", status_line(d))
        reason = [l for l in d.stderr_lines() if "CPU 1 is not online" in l]
        t.ok(reason, P + "the report says why (no online CPU)", d.stderr_tail())

        fs.control("online 1")
        set_cpu_online(host, 1, True)
        back = d.poll_until(lambda: all(affinity(fs, n) == "1" for n in host.irqs), h.scaled(TIMEOUT + 5))
        t.ok(back, P + "CPU 1 online again: every IRQ is put back on it within a few scans",
             "still elsewhere: %r" % [(n, affinity(fs, n)) for n in host.irqs if affinity(fs, n) != "1"][:5])
        t.ok(d.alive(), P + "lowlatd keeps running", d.stderr_tail())
        t.stopped_cleanly(d)
        d = None
    finally:
        if d is not None:
            d.kill()
        fs.stop()


def run(t):
    exe = os.environ.get("FAKEIRQFS")
    if not exe:
        h.skip("FAKEIRQFS is not set (fakeirqfs is built only where libfuse3 is found)")
    if not (os.path.isfile(exe) and os.access(exe, os.X_OK)):
        h.skip("FAKEIRQFS=%s is not an executable" % exe)
    if os.geteuid() != 0:
        h.skip("needs root (FUSE mount with allow_other, private mount namespace)")
    if not os.path.exists("/dev/fuse"):
        h.skip("no /dev/fuse on this machine")
    try:
        fd = os.open("/dev/fuse", os.O_RDWR)
        os.close(fd)
    except OSError as e:
        h.skip("cannot open /dev/fuse: %s" % e.strerror)

    # Private mount namespace: the FUSE mounts stay out of everyone else's sight, and a
    # tmpfs on /run/systemd gives the fake journal socket.
    h.enter_private_mount_namespace("the FUSE /proc/irq test")
    h.detach_inherited_fakeirqfs()
    try:
        j = h.JournalSocket()
        try:
            phase(t, exe, "legacy", JournalLog(j))
        finally:
            j.close()       # unlinks the socket: the next daemon logs to stderr
        phase(t, exe, "modern", StderrLog())
        offline_phase(t, exe)
    except MountRefused as e:
        if t.n == 0:
            raise h.Skip(str(e))
        raise
    finally:
        _unmount_all()


if __name__ == "__main__":
    h.main(run)
