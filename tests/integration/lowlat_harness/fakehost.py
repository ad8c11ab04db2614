# SPDX-License-Identifier: LGPL-2.1-or-later
"""FakeHost: a fake /proc, /sys and /dev under ROOT for lowlatd --root, with a realistic IRQ
table ('Fake host tree' in the spec); its readers and writers change files in place."""

import fnmatch
import os
import stat
import struct

from .cleanup import make_tempdir
from .cpus import format_cpulist, format_mask, parse_cpulist, parse_mask
from .files import read_text, write_bytes, write_text


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
        self._write_cpus(nohz_full, cpufreq, governor, available_governors)
        self._write_irqs(default_affinity, irq_affinity, irq_affinities)
        self._write_sysctls(sysctls, omit_sysctls)
        self._write_dev(dma_latency)

    # -- the tree, written once by __init__
    def _write_cpus(self, nohz_full, cpufreq, governor, available_governors):
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
        for c in range(self.ncpus):
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

    def _write_irqs(self, default_affinity, irq_affinity, irq_affinities):
        ncpus = self.ncpus
        self.irq_dir = os.path.join(self.root, "proc/irq")
        os.makedirs(self.irq_dir)
        da = default_affinity if default_affinity is not None else self.all_cpus
        write_text(os.path.join(self.irq_dir, "default_smp_affinity"),
                   format_mask(da, ncpus) + "\n")
        initial = irq_affinity if irq_affinity is not None else format_cpulist(self.all_cpus)
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

    def _write_sysctls(self, sysctls, omit_sysctls):
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

    def _write_dev(self, dma_latency):
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
