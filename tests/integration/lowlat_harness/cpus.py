# SPDX-License-Identifier: LGPL-2.1-or-later
"""CPU lists ('0-3,8') and the kernel's hex masks ('00000000,0000000f') as sets of CPU
numbers, and the CPUs this machine has."""

from .cleanup import skip
from .files import read_text


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


def possible_cpus(need=2):
    """How many CPUs the kernel sizes its masks for (/sys/devices/system/cpu/possible);
    skips (77) when fewer than need (one housekeeping, one isolated)."""
    ncpus = len(parse_cpulist(read_text("/sys/devices/system/cpu/possible")))
    if ncpus < need:
        skip("needs %d CPUs or more (one housekeeping, one isolated); this machine has %d" % (need, ncpus))
    return ncpus
