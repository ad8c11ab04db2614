#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Integration-test harness for lowlatd (Python 3 standard library only).

Every test runs lowlatd against a fake host tree under --root in a temporary directory;
nothing here touches the machine's real /proc/irq, sysctls or network interfaces.

Pieces:
  FakeHost      builds ROOT/proc, ROOT/sys, ROOT/dev as the spec lays them out
  NotifySocket  an AF_UNIX datagram socket playing systemd's NOTIFY_SOCKET
  Daemon        starts/stops lowlatd on a FakeHost with a config file
  JournalSocket a fake /run/systemd/journal/socket (private mount namespace only)
  TAP           "ok N - what" / "not ok N - what" reporting; exit 0 / 1 / 77
  skip()        print a reason and exit 77

Environment (tests/integration/meson.build sets it; to run a test by hand, set PYTHONPATH
to this directory and tests/ as meson does):
  PYTHONPATH             this directory (the harnesses) and tests/ (lowlat_constants)
  LOWLATD                path of the lowlatd binary (meson sets it)
  LOWLATD_SOURCE_ROOT    source tree (fallback: <root>/build/daemon/lowlatd)
  LOWLAT_TIMEOUT_SCALE   multiply every deadline (e.g. 3 under ASan/valgrind)
  LOWLAT_KEEP=1          keep the temporary directories for inspection
"""

import atexit
import contextlib
import fnmatch
import os
import re
import select
import shutil
import signal
import socket
import stat
import struct
import subprocess
import sys
import tempfile
import threading
import time
import traceback

import lowlat_constants as C

SKIP_RC = 77
SCALE = float(os.environ.get("LOWLAT_TIMEOUT_SCALE", "1") or "1")
PRIVATE_MNT_ENV = "LOWLAT_PRIVATE_MNT"
JOURNAL_SOCKET = "/run/systemd/journal/socket"

# MESSAGE_IDs by event name ("drift", "corrected", ...), as lowlatd's events table has them.
MID = C.MESSAGE_IDS

SANITIZER_PATTERNS = (
    "ERROR: AddressSanitizer",
    "ERROR: LeakSanitizer",
    "runtime error:",          # UBSan
    "ThreadSanitizer",
    "==ERROR==",
)


def scaled(seconds):
    return seconds * SCALE


class Skip(Exception):
    pass


def skip(reason):
    """Print the reason and exit 77 (meson's 'skipped')."""
    print("1..0 # SKIP " + reason, flush=True)
    _cleanup_all()
    sys.exit(SKIP_RC)


# ---------------------------------------------------------------------------------------
# CPU lists and masks

def parse_cpulist(text):
    """'0-3,8' -> {0,1,2,3,8}; '' -> set(); raises ValueError on garbage."""
    s = set()
    text = text.strip()
    if not text:
        return s
    for part in text.split(","):
        part = part.strip()
        if not part:
            raise ValueError("empty element in cpu list %r" % text)
        if "-" in part:
            a, b = part.split("-", 1)
            a, b = int(a, 10), int(b, 10)
            if a > b:
                raise ValueError("bad range %r" % part)
            s.update(range(a, b + 1))
        else:
            s.add(int(part, 10))
    return s


def format_cpulist(cpus):
    cpus = sorted(set(cpus))
    out = []
    i = 0
    while i < len(cpus):
        j = i
        while j + 1 < len(cpus) and cpus[j + 1] == cpus[j] + 1:
            j += 1
        out.append(str(cpus[i]) if i == j else "%d-%d" % (cpus[i], cpus[j]))
        i = j + 1
    return ",".join(out)


def parse_mask(text):
    """Kernel bitmap '00000000,0000000f' -> int; raises ValueError."""
    t = text.strip().replace(",", "")
    if not t:
        raise ValueError("empty mask")
    return int(t, 16)


def mask_to_set(mask):
    return {i for i in range(mask.bit_length()) if mask >> i & 1}


def set_to_mask(cpus):
    m = 0
    for c in cpus:
        m |= 1 << c
    return m


def format_mask(cpus, nbits):
    """The kernel's comma-grouped hex form, e.g. 'f' for 4 CPUs, '00000000,ffffffff'."""
    m = set_to_mask(cpus)
    ngroups = max(1, (nbits + 31) // 32)
    if ngroups == 1:
        width = max(1, (nbits + 3) // 4)
        return "%0*x" % (width, m)
    groups = []
    for g in range(ngroups - 1, -1, -1):
        groups.append("%08x" % ((m >> (32 * g)) & 0xFFFFFFFF))
    return ",".join(groups)


def normalise_ws(text):
    return " ".join(text.split())


# ---------------------------------------------------------------------------------------
# Temporary directories and cleanup

_TEMPDIRS = []
_DAEMONS = []
_SOCKETS = []
_FAILED = [False]


def _cleanup_all():
    for d in list(_DAEMONS):
        try:
            d.kill()
        except Exception:
            pass
    for s in list(_SOCKETS):
        try:
            s.close()
        except Exception:
            pass
    keep = os.environ.get("LOWLAT_KEEP") == "1" or _FAILED[0]
    for t in list(_TEMPDIRS):
        if keep:
            print("# kept temporary directory %s" % t, flush=True)
        else:
            shutil.rmtree(t, ignore_errors=True)
    _TEMPDIRS.clear()


atexit.register(_cleanup_all)


def _on_sigterm(signum, frame):
    raise SystemExit(128 + signum)


try:
    signal.signal(signal.SIGTERM, _on_sigterm)
except ValueError:
    pass


def make_tempdir(prefix="lowlat-"):
    base = os.environ.get("TMPDIR") or "/tmp"
    # AF_UNIX paths are limited to 107 bytes; keep the directory short.
    if len(base) > 60 or not os.path.isdir(base):
        base = "/tmp"
    d = tempfile.mkdtemp(prefix=prefix, dir=base)
    os.chmod(d, 0o755)
    _TEMPDIRS.append(d)
    return d


# ---------------------------------------------------------------------------------------
# File helpers (in place: open 'w' truncates, never rename)

def read_text(path):
    with open(path, "r") as f:
        return f.read()


def write_text(path, text):
    with open(path, "w") as f:
        f.write(text)


def write_bytes(path, data):
    with open(path, "wb") as f:
        f.write(data)


# ---------------------------------------------------------------------------------------
# Fake host

DEFAULT_SYSCTLS = {
    "net/core/somaxconn": "4096",
    "net/core/busy_poll": "0",
    "net/core/busy_read": "0",
    "net/core/netdev_max_backlog": "1000",
    "net/core/default_qdisc": "fq_codel",
    "net/core/rmem_max": "212992",
    "net/core/wmem_max": "212992",
    "net/ipv4/tcp_rmem": "4096\t131072\t6291456",
    "net/ipv4/tcp_wmem": "4096\t16384\t4194304",
    "net/ipv4/tcp_congestion_control": "cubic",
    "net/ipv4/tcp_fastopen": "1",
    "kernel/numa_balancing": "1",
    "kernel/sched_rt_runtime_us": "950000",
    "kernel/timer_migration": "1",
    "kernel/watchdog": "1",
    "kernel/nmi_watchdog": "1",
    "vm/stat_interval": "1",
    "vm/swappiness": "60",
}

X86_SUMMARY_LINES = [
    ("NMI", "Non-maskable interrupts"),
    ("LOC", "Local timer interrupts"),
    ("SPU", "Spurious interrupts"),
    ("PMI", "Performance monitoring interrupts"),
    ("IWI", "IRQ work interrupts"),
    ("RTR", "APIC ICR read retries"),
    ("RES", "Rescheduling interrupts"),
    ("CAL", "Function call interrupts"),
    ("TLB", "TLB shootdowns"),
    ("TRM", "Thermal event interrupts"),
    ("THR", "Threshold APIC interrupts"),
    ("DFR", "Deferred Error APIC interrupts"),
    ("MCE", "Machine check exceptions"),
    ("MCP", "Machine check polls"),
]


class IRQ:
    __slots__ = ("number", "chip", "hwirq", "trigger", "actions")

    def __init__(self, number, chip, hwirq, trigger, actions):
        self.number = number
        self.chip = chip
        self.hwirq = hwirq
        self.trigger = trigger
        self.actions = actions  # list of action names (shared IRQs have several)

    @property
    def name(self):
        return self.actions[0]


def _make_irq_table(nirqs):
    """A realistic, non-contiguous IRQ table with nirqs entries."""
    irqs = []
    legacy = [
        (0, "IO-APIC", 2, "edge", ["timer"]),
        (1, "IO-APIC", 1, "edge", ["i8042"]),
        (8, "IO-APIC", 8, "edge", ["rtc0"]),
        (9, "IO-APIC", 9, "fasteoi", ["acpi"]),
        (12, "IO-APIC", 12, "edge", ["i8042"]),
        (16, "IO-APIC", 16, "fasteoi", ["i801_smbus", "ehci_hcd:usb1"]),
        (23, "IO-APIC", 23, "fasteoi", ["ehci_hcd:usb2"]),
    ]
    for n, chip, hw, trig, act in legacy[:nirqs]:
        irqs.append(IRQ(n, chip, hw, trig, act))
    if len(irqs) >= nirqs:
        return irqs

    singles = [
        ("PCI-MSI-0000:00:1f.2", "ahci[0000:00:1f.2]"),
        ("PCI-MSI-0000:00:14.0", "xhci_hcd"),
        ("PCI-MSI-0000:00:16.0", "mei_me"),
        ("PCI-MSI-0000:00:02.0", "i915"),
        ("PCI-MSI-0000:00:1f.3", "snd_hda_intel:card0"),
        ("DMAR-MSI", "dmar0"),
        ("DMAR-MSI", "dmar1"),
        ("IR-PCI-MSIX-0000:3b:00.0", "eth0"),
        ("IR-PCI-MSIX-0000:3b:00.1", "eth1"),
        ("IR-PCI-MSIX-0000:5e:00.0", "mlx5_async0@pci:0000:5e:00.0"),
    ]
    # Queue families, interleaved the way drivers allocate them.
    families = [
        ("IR-PCI-MSIX-0000:3b:00.0", "eth0-TxRx-%d", 64),
        ("IR-PCI-MSIX-0000:3b:00.1", "eth1-TxRx-%d", 64),
        ("IR-PCI-MSIX-0000:01:00.0", "nvme0q%d", 65),
        ("IR-PCI-MSIX-0000:02:00.0", "nvme1q%d", 65),
        ("IR-PCI-MSIX-0000:5e:00.0", "mlx5_comp%d@pci:0000:5e:00.0", None),
    ]
    n = 24
    step = 0

    def next_number():
        nonlocal n, step
        num = n
        step += 1
        n += 1
        if step % 7 == 0:       # holes, as freed vectors leave them
            n += 1
        if step % 97 == 0:      # and bigger jumps between domains
            n += 13
        return num

    for chip, name in singles:
        if len(irqs) >= nirqs:
            return irqs
        irqs.append(IRQ(next_number(), chip, len(irqs), "edge", [name]))
    for chip, pattern, count in families:
        i = 0
        while len(irqs) < nirqs and (count is None or i < count):
            irqs.append(IRQ(next_number(), chip, i + 1, "edge", [pattern % i]))
            i += 1
        if len(irqs) >= nirqs:
            break
    return irqs


class FakeHost:
    """A fake /proc, /sys, /dev tree under self.root (spec: 'Fake host tree')."""

    def __init__(self, ncpus=4, nirqs=1000, isolated="2-3", nohz_full=None,
                 irq_affinity=None, irq_affinities=None, default_affinity=None,
                 governor="powersave", available_governors="performance powersave",
                 cpufreq=True, sysctls=None, omit_sysctls=(), dma_latency=2000000000,
                 offline=(), tmpdir=None):
        self.tmp = tmpdir or make_tempdir()
        self.root = os.path.join(self.tmp, "root")
        self.ncpus = ncpus
        self.all_cpus = set(range(ncpus))
        self.online = self.all_cpus - set(offline)
        self.isolated_text = isolated or ""
        self.irq_table = _make_irq_table(nirqs)
        self.irqs = [i.number for i in self.irq_table]
        self.by_number = {i.number: i for i in self.irq_table}
        self.irq_names = {i.number: i.name for i in self.irq_table}

        cpu = self.sys_cpu_dir = os.path.join(self.root, "sys/devices/system/cpu")
        os.makedirs(cpu)
        full = format_cpulist(self.all_cpus)
        write_text(os.path.join(cpu, "possible"), full + "\n")
        write_text(os.path.join(cpu, "present"), full + "\n")
        write_text(os.path.join(cpu, "online"), format_cpulist(self.online) + "\n")
        write_text(os.path.join(cpu, "offline"), format_cpulist(self.all_cpus - self.online) + "\n")
        write_text(os.path.join(cpu, "kernel_max"), "8191\n")
        write_text(os.path.join(cpu, "isolated"), self.isolated_text + "\n")
        write_text(os.path.join(cpu, "nohz_full"), (nohz_full if nohz_full else "(null)") + "\n")
        for c in range(ncpus):
            d = os.path.join(cpu, "cpu%d" % c)
            os.makedirs(d)
            if c != 0:
                write_text(os.path.join(d, "online"), "1\n" if c in self.online else "0\n")
            if cpufreq and c in self.online:
                f = os.path.join(d, "cpufreq")
                os.makedirs(f)
                write_text(os.path.join(f, "scaling_governor"), governor + "\n")
                write_text(os.path.join(f, "scaling_available_governors"), available_governors + "\n")
                write_text(os.path.join(f, "scaling_driver"), "intel_pstate\n")
                write_text(os.path.join(f, "scaling_min_freq"), "800000\n")
                write_text(os.path.join(f, "scaling_max_freq"), "3500000\n")
                write_text(os.path.join(f, "cpuinfo_max_freq"), "3500000\n")

        # proc/irq
        self.irq_dir = os.path.join(self.root, "proc/irq")
        os.makedirs(self.irq_dir)
        da = default_affinity if default_affinity is not None else self.all_cpus
        write_text(os.path.join(self.irq_dir, "default_smp_affinity"),
                   format_mask(da, ncpus) + "\n")
        initial = irq_affinity if irq_affinity is not None else full
        irq_affinities = irq_affinities or {}
        for irq in self.irq_table:
            d = os.path.join(self.irq_dir, str(irq.number))
            os.makedirs(d)
            aff = irq_affinities.get(irq.number, initial)
            cpus = parse_cpulist(aff)
            write_text(os.path.join(d, "smp_affinity_list"), format_cpulist(cpus) + "\n")
            write_text(os.path.join(d, "smp_affinity"), format_mask(cpus, ncpus) + "\n")
            eff = min(cpus) if cpus else 0
            write_text(os.path.join(d, "effective_affinity_list"), "%d\n" % eff)
            write_text(os.path.join(d, "effective_affinity"), format_mask({eff}, ncpus) + "\n")
            write_text(os.path.join(d, "node"), "0\n")
            write_text(os.path.join(d, "spurious"), "count 0\nunhandled 0\nlast_unhandled 0 ms\n")
            for a in irq.actions:
                os.makedirs(os.path.join(d, a), exist_ok=True)
        self._write_interrupts()

        # sysctls
        vals = dict(DEFAULT_SYSCTLS)
        if sysctls:
            for k, v in sysctls.items():
                vals[self._sysctl_rel(k)] = v
        for k in omit_sysctls:
            vals.pop(self._sysctl_rel(k), None)
        self.sysctl_defaults = vals
        for rel, v in vals.items():
            p = os.path.join(self.root, "proc/sys", rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            write_text(p, v + "\n")

        # dev
        os.makedirs(os.path.join(self.root, "dev"))
        self.dma_path = os.path.join(self.root, "dev/cpu_dma_latency")
        if dma_latency is None:
            write_bytes(self.dma_path, b"")
        else:
            write_bytes(self.dma_path, struct.pack("=i", dma_latency))

    # -- /proc/interrupts in the kernel's format (kernel/irq/proc.c + x86 arch lines)
    def _write_interrupts(self):
        online = sorted(self.online)
        nr_irqs = max(self.irqs) + 1 if self.irqs else 16
        prec = max(3, len(str(nr_irqs)))
        lines = [" " * (prec + 2) + "".join("CPU%-8d" % c for c in online).rstrip() + "\n"]
        for irq in self.irq_table:
            counts = "".join("%10u " % ((irq.number * 7919 + c * 104729) % 100000 if irq.number % 3 else 0)
                             for c in online)
            lines.append("%*d: %s %8s %*d-%s      %s\n" % (
                prec, irq.number, counts, irq.chip, prec, irq.hwirq, irq.trigger,
                ", ".join(irq.actions)))
        for short, desc in X86_SUMMARY_LINES:
            counts = "".join("%10u " % (c * 1000 + 17) for c in online)
            lines.append("%*s: %s  %s\n" % (prec, short, counts, desc))
        lines.append("%*s: %10u\n" % (prec, "ERR", 0))
        lines.append("%*s: %10u\n" % (prec, "MIS", 0))
        write_text(os.path.join(self.root, "proc/interrupts"), "".join(lines))

    # -- generic helpers
    def path(self, rel):
        return os.path.join(self.root, rel.lstrip("/"))

    def read(self, rel):
        return read_text(self.path(rel))

    def write(self, rel, text):
        """Rewrite a file in place (O_TRUNC), the way a drifting writer does."""
        write_text(self.path(rel), text)

    # -- IRQs
    def irqs_matching(self, glob):
        return [i.number for i in self.irq_table
                if any(fnmatch.fnmatchcase(a, glob) for a in i.actions)]

    def irq_path(self, irq, name="smp_affinity_list"):
        return os.path.join(self.irq_dir, str(irq), name)

    def irq_affinity(self, irq):
        return read_text(self.irq_path(irq)).strip()

    def irq_cpus(self, irq):
        return parse_cpulist(read_text(self.irq_path(irq)))

    def set_irq_affinity(self, irq, cpulist, effective=False):
        """Move an IRQ the way irqbalance or a driver reset would: in place. The
        effective_affinity{,_list} files keep the spec's static value unless
        effective=True (then, as the kernel does, the lowest CPU of the new list)."""
        cpus = parse_cpulist(cpulist)
        mode = os.stat(self.irq_path(irq)).st_mode
        write_text(self.irq_path(irq, "smp_affinity"), format_mask(cpus, self.ncpus) + "\n")
        write_text(self.irq_path(irq), format_cpulist(cpus) + "\n")
        os.chmod(self.irq_path(irq), stat.S_IMODE(mode))
        if effective and cpus:
            # The kernel picks one CPU of the new mask as the effective target.
            eff = min(cpus)
            write_text(self.irq_path(irq, "effective_affinity"), format_mask({eff}, self.ncpus) + "\n")
            write_text(self.irq_path(irq, "effective_affinity_list"), "%d\n" % eff)

    def set_unmovable(self, irq):
        """chmod 0444: lowlatd must treat the IRQ as unmovable (root ignores modes)."""
        os.chmod(self.irq_path(irq), 0o444)
        os.chmod(self.irq_path(irq, "smp_affinity"), 0o444)

    def default_affinity_mask(self):
        return parse_mask(read_text(os.path.join(self.irq_dir, "default_smp_affinity")))

    # -- sysctls
    @staticmethod
    def _sysctl_rel(key):
        return key.replace(".", "/") if "/" not in key else key

    def sysctl_path(self, key):
        return os.path.join(self.root, "proc/sys", self._sysctl_rel(key))

    def sysctl(self, key):
        return read_text(self.sysctl_path(key)).strip()

    def set_sysctl(self, key, value):
        write_text(self.sysctl_path(key), value + "\n")

    # -- power management
    def dma_latency(self):
        """The s32 held in dev/cpu_dma_latency, or None when it holds < 4 bytes."""
        with open(self.dma_path, "rb") as f:
            data = f.read()
        if len(data) < 4:
            return None
        return struct.unpack("=i", data[:4])[0]

    def dma_latency_raw(self):
        with open(self.dma_path, "rb") as f:
            return f.read()

    def set_dma_latency(self, value):
        write_bytes(self.dma_path, struct.pack("=i", value))

    def governor_path(self, cpu):
        return os.path.join(self.sys_cpu_dir, "cpu%d" % cpu, "cpufreq/scaling_governor")

    def governor(self, cpu):
        return read_text(self.governor_path(cpu)).strip()

    def set_governor(self, cpu, name):
        write_text(self.governor_path(cpu), name + "\n")

    # -- whole-tree comparison
    def snapshot(self):
        """{relpath: (mode, bytes-or-None)} for every file and directory under root."""
        snap = {}
        for dirpath, dirnames, filenames in os.walk(self.root):
            for dn in dirnames:
                p = os.path.join(dirpath, dn)
                snap[os.path.relpath(p, self.root)] = (os.lstat(p).st_mode, None)
            for fn in filenames:
                p = os.path.join(dirpath, fn)
                st = os.lstat(p)
                data = None
                if stat.S_ISREG(st.st_mode):
                    with open(p, "rb") as f:
                        data = f.read()
                snap[os.path.relpath(p, self.root)] = (st.st_mode, data)
        return snap

    @staticmethod
    def snapshot_diff(a, b, limit=10):
        """Human-readable differences between two snapshots (empty list: identical)."""
        diffs = []
        for k in sorted(set(a) | set(b)):
            if k not in a:
                diffs.append("created %s" % k)
            elif k not in b:
                diffs.append("removed %s" % k)
            elif a[k] != b[k]:
                (ma, da), (mb, db) = a[k], b[k]
                if ma != mb:
                    diffs.append("mode of %s %o -> %o" % (k, ma, mb))
                if da != db:
                    diffs.append("content of %s %r -> %r" % (k, da, db))
        if len(diffs) > limit:
            diffs = diffs[:limit] + ["... and %d more" % (len(diffs) - limit)]
        return diffs


# ---------------------------------------------------------------------------------------
# Datagram receivers

class _DatagramReceiver:
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
        _SOCKETS.append(self)

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
        if self in _SOCKETS:
            _SOCKETS.remove(self)


class NotifySocket(_DatagramReceiver):
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


class JournalSocket(_DatagramReceiver):
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


# ---------------------------------------------------------------------------------------
# Namespaces

def require_root(what):
    if os.geteuid() != 0:
        skip("%s needs root" % what)


def in_private_mount_namespace():
    return os.environ.get(PRIVATE_MNT_ENV) == "1"


def reexec(prefix, env, pass_fds=()):
    """Runs this test again under prefix (unshare ...) with env, waits for it, cleans up
    and exits with its status: all the parent has left to do once the child holds the new
    namespaces."""
    sys.stdout.flush()
    p = subprocess.Popen(list(prefix) + [sys.executable, os.path.abspath(sys.argv[0])] + sys.argv[1:],
                         env=env, pass_fds=pass_fds)
    try:
        rc = p.wait()
    except BaseException:
        p.terminate()
        try:
            rc = p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()
            rc = p.wait()
    _cleanup_all()
    os._exit(rc if rc >= 0 else 128 - rc)


_MOUNTS = []


def mount(*argv):
    """mount(8) with argv; what mounted is remembered for unmount_all()."""
    r = subprocess.run(["mount"] + list(argv), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       universal_newlines=True)
    if r.returncode == 0:
        _MOUNTS.append(argv[-1])
    return r


def unmount_all():
    """Lazily unmounts what mount() mounted, the last first."""
    while _MOUNTS:
        subprocess.run(["umount", "-l", _MOUNTS.pop()], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)



def enter_private_mount_namespace(reason="needs a private mount namespace"):
    """Re-execute this test under `unshare -m --propagation private` (once), then mount
    a tmpfs on /run/systemd inside it. Skips (77) when that is not possible."""
    if not in_private_mount_namespace():
        if os.geteuid() != 0:
            skip("%s: unshare -m and mount need root" % reason)
        unshare = shutil.which("unshare")
        if not unshare:
            skip("%s: unshare(1) not found" % reason)
        probe = subprocess.run([unshare, "-m", "--propagation", "private", "true"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if probe.returncode != 0:
            skip("%s: unshare -m failed: %s" % (reason, probe.stdout.decode(errors="replace").strip()))
        env = dict(os.environ)
        env[PRIVATE_MNT_ENV] = "1"
        reexec([unshare, "-m", "--propagation", "private"], env)
    # inside
    os.makedirs("/run/systemd", exist_ok=True)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "mode=0755", "tmpfs", "/run/systemd"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if r.returncode != 0:
        skip("%s: mount -t tmpfs on /run/systemd failed: %s"
             % (reason, r.stdout.decode(errors="replace").strip()))


def _unescape_mountinfo(field):
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def detach_inherited_fakeirqfs():
    """unshare -m copies every mount of the parent namespace, including any fakeirqfs that
    another test (fakeirqfs-smoke, test_fuse_irq, a second run of either) has mounted right
    now. The copy holds that FUSE connection open: its fusermount3 -u would no longer end
    its fakeirqfs until this test exits. Detach those copies (this namespace only)."""
    inherited = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            pre, sep, post = line.partition(" - ")
            if sep and post.split(" ", 1)[0] == "fuse.fakeirqfs":
                inherited.append(_unescape_mountinfo(pre.split()[4]))
    for mnt in reversed(inherited):
        subprocess.run(["umount", "-l", mnt], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


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


# ---------------------------------------------------------------------------------------
# Network namespaces (test_nic, test_rps, test_link, test_nic_faults, bench_rps, bench_link)

NETNS_UNSHARE = ("--net", "--mount", "--propagation", "private")


def _unshare_netns():
    """(unshare argv for a network and a private mount namespace, None) when unshare(1)
    can make them here, else (that argv, what unshare printed)."""
    argv0 = [shutil.which("unshare")] + list(NETNS_UNSHARE)
    probe = subprocess.run(argv0 + ["true"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if probe.returncode != 0:
        return argv0, probe.stdout.decode(errors="replace").strip()
    return argv0, None


def _reexec_netns(argv0, ns_env, env, pass_fds):
    env = dict(os.environ, **(env or {}))
    env[ns_env] = "1"
    env[PRIVATE_MNT_ENV] = "1"   # lets JournalSocket and the mounts below run in there
    reexec(argv0, env, pass_fds=pass_fds)


def reexec_in_netns(ns_env, tools, env=None, pass_fds=()):
    """Runs this test again under `unshare --net --mount --propagation private`, with
    ns_env=1, PRIVATE_MNT_ENV=1 and env in its environment and pass_fds open, and exits
    with its status (never returns). The test calls it when ns_env is not "1" yet; nothing
    the inner run does reaches this machine's interfaces or sysctls. Skips (77) when not
    root, when a program in tools is missing or when unshare cannot make the namespaces."""
    if os.geteuid() != 0:
        skip("needs root (network and mount namespaces)")
    missing = [x for x in tools if not shutil.which(x)]
    if missing:
        skip("missing tools: %s" % ", ".join(missing))
    argv0, failure = _unshare_netns()
    if failure is not None:
        skip("unshare --net --mount failed: %s" % failure)
    _reexec_netns(argv0, ns_env, env, pass_fds)


def bench_reexec_in_netns(ns_env):
    """reexec_in_netns() for the benchmarks (tests/bench): the same namespaces, with their
    shorter skip reasons; they need unshare, ip and mount."""
    require_root("network namespaces and veth")
    if not all(shutil.which(x) for x in ("unshare", "ip", "mount")):
        skip("needs unshare, ip and mount")
    argv0, failure = _unshare_netns()
    if failure is not None:
        skip("unshare --net --mount failed")
    _reexec_netns(argv0, ns_env, None, ())


def setup_netns():
    """Inside reexec_in_netns(): detaches inherited fakeirqfs mounts, mounts a tmpfs on
    /run/systemd (hides the host's journal socket) and a fresh sysfs on /sys (so that
    /sys/class/net and the uevents libudev resolves are this namespace's), and brings lo
    up. Skips (77) when a mount fails; unmount_all() undoes the mounts."""
    detach_inherited_fakeirqfs()
    os.makedirs("/run/systemd", exist_ok=True)
    r = mount("-t", "tmpfs", "-o", "mode=0755", "tmpfs", "/run/systemd")
    if r.returncode != 0:
        skip("mount -t tmpfs on /run/systemd failed: %s" % r.stdout.strip())
    r = mount("-t", "sysfs", "sysfs", "/sys")
    if r.returncode != 0:
        skip("mounting a fresh sysfs on /sys failed: %s" % r.stdout.strip())
    run_cmd("ip", "link", "set", "lo", "up")


@contextlib.contextmanager
def netns(ns_env, tools, env=None, pass_fds=()):
    """`with netns(NS_ENV, TOOLS):` runs the block in a network namespace of this test's
    own: outside it (ns_env not "1") reexec_in_netns() runs the whole test again in there
    and exits with its status; inside, setup_netns() comes first and unmount_all() after
    the block, however it ends."""
    if os.environ.get(ns_env) != "1":
        reexec_in_netns(ns_env, tools, env=env, pass_fds=pass_fds)      # never returns
    try:
        setup_netns()
        yield
    finally:
        unmount_all()


def possible_cpus(need=2):
    """How many CPUs the kernel sizes its masks for (/sys/devices/system/cpu/possible);
    skips (77) when fewer than need (one housekeeping, one isolated)."""
    ncpus = len(parse_cpulist(read_text("/sys/devices/system/cpu/possible")))
    if ncpus < need:
        skip("needs %d CPUs or more (one housekeeping, one isolated); this machine has %d" % (need, ncpus))
    return ncpus


def run_cmd(*argv, check=False):
    """Runs a tool (ip, ethtool, tc ...) with a scaled 30 s limit: its CompletedProcess
    (text stdout and stderr). With check, a non-zero exit raises RuntimeError with the
    tool's stderr."""
    r = subprocess.run(list(argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, errors="replace", timeout=scaled(30))
    if check and r.returncode != 0:
        raise RuntimeError("%s: exit %d: %s" % (" ".join(argv), r.returncode, r.stderr.strip()))
    return r


def add_veth(a, b, queues, up=False):
    """ip link add A type veth peer name B, with `queues` receive and transmit queues each
    way; both links set up when up. A failure raises RuntimeError."""
    q = ["numrxqueues", str(queues), "numtxqueues", str(queues)]
    run_cmd("ip", "link", "add", a, *q, "type", "veth", "peer", "name", b, *q, check=True)
    if up:
        run_cmd("ip", "link", "set", a, "up", check=True)
        run_cmd("ip", "link", "set", b, "up", check=True)


def add_veths(*pairs, up=False):
    """add_veth(a, b, queues, up) for each (a, b, queues) at a test's start; skips (77)
    when this kernel cannot make a veth pair here."""
    try:
        for a, b, queues in pairs:
            add_veth(a, b, queues, up=up)
    except RuntimeError as e:
        skip("cannot create a veth pair in a network namespace: %s" % e)


NETNS_SYSFS = ("sys/class/net", "sys/devices/virtual/net")


def bind_into_root(host, *rels):
    """Bind-mounts this namespace's /REL over host's ROOT/REL (created first) for each
    REL (NETNS_SYSFS: every link and queue file is then the kernel's), through mount(), so
    that unmount_all() undoes them. A failed mount raises RuntimeError."""
    for rel in rels:
        src, dst = "/" + rel, host.path(rel)
        os.makedirs(dst, exist_ok=True)
        r = mount("--bind", src, dst)
        if r.returncode != 0:
            raise RuntimeError("mount --bind %s %s: %s" % (src, dst, r.stdout.strip()))


def timed(probe, timeout, alive, interval=0.001):
    """Polls probe() every interval seconds until it is true: (ok, seconds). Gives up
    with False after timeout seconds or once alive() is false."""
    t0 = time.monotonic()
    while True:
        if probe():
            return True, time.monotonic() - t0
        if time.monotonic() - t0 > timeout or not alive():
            return False, time.monotonic() - t0
        time.sleep(interval)


# ---------------------------------------------------------------------------------------
# The daemon

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
        _DAEMONS.append(self)
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
        if self in _DAEMONS:
            _DAEMONS.remove(self)

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


def poll_until(predicate, timeout=None, interval=0.02, alive=None,
               transient=(OSError, ValueError)):
    """Call predicate until it returns a truthy value or the deadline passes; returns
    the last value. Stops early (returning a falsy value) when alive() turns False.

    An exception in `transient` (a file caught mid-rewrite, a busctl call while the bus
    restarts) counts as "not yet"; but when the last call raised one, it is raised again:
    a predicate that cannot get its data must not read as "did not happen"."""
    timeout = scaled(5) if timeout is None else timeout
    deadline = time.monotonic() + timeout
    while True:
        error = None
        try:
            v = predicate()
        except transient as e:
            v, error = None, e
        if v:
            return v
        if time.monotonic() >= deadline or (alive is not None and not alive()):
            if error is not None:
                raise error
            return v
        time.sleep(interval)


def settle(seconds):
    """Let time pass for negative checks ("nothing happens over N scan intervals").
    Never used to wait for something to happen."""
    time.sleep(scaled(seconds))


# ---------------------------------------------------------------------------------------
# Benchmarks (tests/bench): figures, not TAP

def percentile(values, p):
    """The p-th percentile of values (nearest rank, no interpolation)."""
    v = sorted(values)
    return v[min(len(v) - 1, int(len(v) * p / 100))]


def report_vs_floor(floor_what, floor, what, samples, missed, fights, noun):
    """The end of a benchmark of corrections (seconds in samples, missed the changes not
    put back within scaled(2) s, fights lowlatd's "another writer" lines, noun what was
    changed): a FAIL line and 1 when any was missed, any fight reported or nothing
    measured; else the p50 and p99 (us) of floor and samples after their labels, their
    ratio, and 0."""
    if missed or fights or not samples:
        print("FAIL: %d of %d %s not put back within %.0f s; %d fight reports"
              % (missed, missed + len(samples), noun, scaled(2), len(fights)))
        return 1
    f50, f99 = 1e6 * percentile(floor, 50), 1e6 * percentile(floor, 99)
    c50, c99 = 1e6 * percentile(samples, 50), 1e6 * percentile(samples, 99)
    print("%s: p50 %.0f us, p99 %.0f us" % (floor_what, f50, f99))
    print("%s: p50 %.0f us, p99 %.0f us" % (what, c50, c99))
    print("ratio lowlatd / floor: p50 %.2fx, p99 %.2fx" % (c50 / f50, c99 / f99))
    return 0


def bench_main(fn):
    """Exit with fn()'s status; a Skip prints "SKIP: reason" and exits 77."""
    try:
        sys.exit(fn())
    except Skip as e:
        print("SKIP: %s" % e)
        sys.exit(SKIP_RC)


# ---------------------------------------------------------------------------------------
# TAP reporting

class TAP:
    def __init__(self, name=None):
        self.n = 0
        self.failed = 0
        self.skipped = 0
        self.name = name or os.path.basename(sys.argv[0])
        self.daemons = []

    def ok(self, cond, what, diag=None):
        self.n += 1
        if cond:
            print("ok %d - %s" % (self.n, what), flush=True)
        else:
            self.failed += 1
            _FAILED[0] = True
            print("not ok %d - %s" % (self.n, what), flush=True)
            if diag:
                for line in str(diag).splitlines():
                    print("#   " + line, flush=True)
        return bool(cond)

    def skip(self, what, reason):
        """A check this machine cannot make, said so in TAP: "ok N - what # SKIP reason"."""
        self.n += 1
        self.skipped += 1
        print("ok %d - %s # SKIP %s" % (self.n, what, reason), flush=True)

    def note(self, text):
        for line in str(text).splitlines():
            print("# " + line, flush=True)

    def stopped_cleanly(self, daemon, expect=0, what="lowlatd"):
        """SIGTERM the daemon: one check for the exit status, one for sanitizer reports."""
        try:
            rc = daemon.stop(expect=None)
            self.ok(rc == expect, "%s exits %d on SIGTERM" % (what, expect),
                    "exit status %s; stderr tail:\n%s" % (rc, daemon.stderr_tail()))
        except DaemonError as e:
            self.ok(False, "%s exits %d on SIGTERM" % (what, expect), str(e))
        rep = daemon.sanitizer_reports()
        self.ok(not rep, "%s: no sanitizer reports" % what, "\n".join(rep[:20]))
        daemon.kill()

    def finish(self):
        print("1..%d" % self.n, flush=True)
        if self.skipped:
            print("# %d of %d checks skipped" % (self.skipped, self.n), flush=True)
        if self.failed:
            print("# %d of %d checks failed" % (self.failed, self.n), flush=True)
        return 1 if self.failed else 0


def main(fn):
    """Run fn(tap) and exit 0/1/77; exceptions become a failing check."""
    t = TAP()
    rc = 1
    try:
        fn(t)
        rc = t.finish()
    except Skip as e:
        print("1..0 # SKIP %s" % e, flush=True)
        rc = SKIP_RC
    except SystemExit:
        raise
    except BaseException as e:
        tb = traceback.format_exc()
        t.ok(False, "test aborted: %s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else ""),
             tb)
        for d in list(_DAEMONS):
            t.note("stderr tail of lowlatd pid %s:\n%s" % (d.pid if d.proc else "-", d.stderr_tail(20)))
        rc = t.finish()
    _cleanup_all()
    sys.exit(rc)
