#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""lowlatd --check-config: good configs pass, every kind of error is reported as
FILE:LINE: reason (all of them), drop-ins in CONF.d/ override the main file."""

import os
import re

import lowlat_constants as C
import lowlat_harness as h

# The parser's limits, from lib/config/config.h.
SCAN_MIN_MS = C.SCAN_INTERVAL_MIN_USEC // 1000
SCAN_MAX_S = C.SCAN_INTERVAL_MAX_USEC // C.USEC_PER_SEC


GOOD = """\
# a complete, valid config
; semicolon comment
[daemon]
mode = enforce
scan_interval = 10s   # inline comment

[cpus]
isolated = 2-3
housekeeping = 0-1

[irq]
default_affinity = housekeeping
pin = eth0-TxRx-* 2-3
pin = nvme0q* 1

[pm]
cpu_dma_latency = 0
governor = performance

[sysctl]
net.core.somaxconn = 8192
net.ipv4.tcp_rmem = 4096 87380 16777216
kernel.numa_balancing = 0
net.core.busy_poll = 50
"""

# (name, config text, [acceptable error lines], must-mention words (any of, lowercase)
#  [, a line that must be among them])
# Each text has exactly one error; the acceptable lines are where it can be reported.
BAD = [
    ("unknown section", "[daemon]\nscan_interval = 1s\n[bogus]\nfoo = 1\n", [3, 4], ["bogus"]),
    ("unknown key", "[daemon]\nscan_interval = 1s\nbogus_key = 1\n", [3], ["bogus_key"]),
    ("unknown key in [cpus]", "[cpus]\nisolated = 2-3\nisolcpus = 2-3\n", [3], ["isolcpus"]),
    ("malformed duration", "[daemon]\nscan_interval = 10 parsecs\n", [2], []),
    ("malformed duration (unit only)", "[daemon]\nscan_interval = ms\n", [2], []),
    ("negative duration", "[daemon]\nscan_interval = -5s\n", [2], []),
    ("scan_interval below %dms" % SCAN_MIN_MS,
     "[daemon]\nscan_interval = %dms\n" % (SCAN_MIN_MS // 2), [2], []),
    ("scan_interval above %ds" % SCAN_MAX_S,
     "[daemon]\nscan_interval = %dh\n" % (SCAN_MAX_S // 3600 + 1), [2], []),
    ("scan_interval above %ds (min)" % SCAN_MAX_S,
     "[daemon]\nscan_interval = %dmin\n" % (SCAN_MAX_S // 60 + 1), [2], []),
    ("scan_interval above %ds (bare seconds)" % SCAN_MAX_S,
     "[daemon]\nscan_interval = %d\n" % (SCAN_MAX_S + 1), [2], []),
    ("bad mode", "[daemon]\nmode = sometimes\n", [2], []),
    ("empty isolated list", "[cpus]\nisolated =\n", [2], []),
    ("malformed isolated list", "[cpus]\nisolated = 3-2\n", [2], []),
    ("overlapping isolated/housekeeping", "[cpus]\nisolated = 2-3\nhousekeeping = 0-2\n",
     [2, 3], []),
    ("empty housekeeping", "[cpus]\nisolated = 2-3\nhousekeeping =\n", [3], []),
    ("isolated CPU that does not exist", "[cpus]\nisolated = 2-7\n", [2], []),
    ("housekeeping CPU that does not exist", "[cpus]\nisolated = 2-3\nhousekeeping = 0,9\n",
     [3], []),
    ("pin CPU that does not exist", "[irq]\npin = eth0-TxRx-* 4\n", [2], []),
    ("pin without CPU list", "[irq]\npin = eth0-TxRx-*\n", [2], []),
    ("cpu_dma_latency out of range",
     "[pm]\ncpu_dma_latency = %d\n" % (C.DMA_LATENCY_MAX_USEC + 1), [2], []),
    ("cpu_dma_latency negative", "[pm]\ncpu_dma_latency = -1\n", [2], []),
    ("cpu_dma_latency not a number", "[pm]\ncpu_dma_latency = 0x\n", [2], []),
    ("sysctl key with /", "[sysctl]\nnet/core/somaxconn = 8192\n", [2], []),
    ("sysctl key with ..", "[sysctl]\nnet..core.somaxconn = 8192\n", [2], []),
    ("sysctl key escaping with ../", "[sysctl]\n../../etc/passwd = x\n", [2], []),
    ("sysctl key with one component", "[sysctl]\nsomaxconn = 8192\n", [2], []),
    ("sysctl empty value", "[sysctl]\nnet.core.somaxconn =\n", [2], []),
    ("syntax error: no =", "[daemon]\nscan_interval = 1s\nthis line has no equals sign\n",
     [3], []),
    # The key after a broken header may be reported too (it is outside any section).
    ("syntax error: unterminated [section", "[daemon\nscan_interval = 1s\n", [1, 2], [], 1),
    ("line too long (%d characters)" % (C.CONFIG_LINE_MAX + 1),
     "[cpus]\nevict_strays = no\n" + C.slices_line(C.CONFIG_LINE_MAX + 1) + "\n", [3], []),
]

MULTI = """\
[daemon]
scan_interval = 1 fortnight
mode = enforce
bogus = 1

[cpus]
isolated = 2-3

[sysctl]
net/core/somaxconn = 1
net.core.busy_poll = 50
no equals here
"""
MULTI_LINES = [2, 4, 10, 12]


def error_lines(stderr, path, warnings=False):
    """{line: [texts]} for every 'PATH:LINE: reason' line in stderr (warnings: only the
    'PATH:LINE: warning: reason' lines, else only the others)."""
    rx = re.compile(r"^(?:lowlatd: )?" + re.escape(path) + r":(\d+): (.+)$")
    out = {}
    for l in stderr.splitlines():
        m = rx.match(l.strip())
        if m and m.group(2).startswith("warning: ") == warnings:
            out.setdefault(int(m.group(1)), []).append(m.group(2))
    return out


# Valid, applied, and said: (config text, the line warned about, words the warning holds).
WARNINGS = [
    ("[daemon]\nscan_interval = 5s\nscan_interval = 10s\n", 3, ["scan_interval is set again", "line 2"]),
    ("[sysctl]\nvm.swappiness = 10\nvm.swappiness = 1\n", 3, ["vm.swappiness is set again", "line 2"]),
    ("[sysfs]\n/sys/kernel/mm/ksm/run = 0\n/sys/kernel/mm/ksm/run = 1\n", 3, ["is set again"]),
    ("[irq]\npin = eth0-* 0\npin = eth0-* 1\n", 3, ["'eth0-*' is pinned again", "line 2"]),
    ("[cpus]\nisolated = 2-3\n[irq]\npin = * 0-3\n", 4, ["every irq", "isolated cpus 2-3"]),
    ("[sysctl]\nkernel.sched_rt_runtime_us = -1\n", 2, ["throttling off", "950000"]),
    ("[nic \"*\"]\ntxqueuelen = 1\n", 1, ["loopback interface lo"]),
    ("[nic \"e?h0-a-name-of-forty-characters-or-so\"]\ntxqueuelen = 1\n", 1,
     ["can match no interface", "15 characters"]),
    ("[kthread \"*\"]\npolicy = fifo\npriority = 99\ncpus = 0\n", 2, ["every kernel thread real-time", "fifo"]),
    ("[sysfs]\n/sys/kernel/rcu_normal = 1\n", 2, ["outside what lowlatd.service may write", "readwritepaths="]),
    # What the host it runs on says: its governors, and the files a [sysfs] pattern matches.
    ("[pm]\ngovernor = ludicrous\n", 2, ["'ludicrous' is not offered by cpu 0", "available: performance powersave"]),
    ("[sysfs]\n/sys/kernel/mm/ksm/* = 1\n", 2,
     ["matches 2 files on this host, 1 of them read-only", "/sys/kernel/mm/ksm/pages_shared"]),
    # eth0's IRQs (eth0-TxRx-N in /proc/interrupts) go where its irq_cpus says.
    ("[nic \"eth*\"]\nirq_cpus = 0\n[irq]\npin = eth0-TxRx-* 1\n", 4,
     ["puts irq", "on cpus 1", "an irq of eth0", "irq_cpus = 0", "no effect"]),
    # Two patterns taking in one IRQ of this host: the later overrides the earlier for it.
    ("[irq]\npin = eth0-TxRx-* 0\npin = eth0-TxRx-1 1\n", 3,
     ["'eth0-txrx-1' (cpus 1) overrides line 2's 'eth0-txrx-*' (cpus 0)", "(eth0-txrx-1)", "no effect"]),
]


def check_warnings(t, host):
    os.makedirs(host.path("sys/kernel/mm/ksm"), exist_ok=True)
    host.write("sys/kernel/mm/ksm/run", "0\n")
    host.write("sys/kernel/mm/ksm/pages_shared", "0\n")
    os.chmod(host.path("sys/kernel/mm/ksm/pages_shared"), 0o444)
    os.makedirs(host.path("sys/class/net/eth0"), exist_ok=True)
    for i, (text, line, words) in enumerate(WARNINGS):
        path, r = check(host, text, "warn%02d.conf" % i)
        warned = error_lines(r.stderr, path, warnings=True)
        said = " ".join(warned.get(line, [])).lower()
        t.ok(r.returncode == 0 and not error_lines(r.stderr, path) and list(warned) == [line]
             and all(w in said for w in words) and "with 1 warning" in r.stdout,
             "warning: %s... (exit 0, one warning at line %d)" % (words[0], line),
             "exit %d; stdout %r; stderr:\n%s" % (r.returncode, r.stdout, r.stderr))
        r = h.run_lowlatd(host, ["--check-config", "--strict"], config_path=path)
        t.ok(r.returncode == 1 and "refused by --strict (1 warning)" in r.stderr,
             "... and --check-config --strict refuses it (exit 1)", "exit %d; stderr:\n%s" % (r.returncode, r.stderr))
    path = h.write_config(host, "[sysctl]\nkernel.sched_rt_runtime_us = -1\n", "warn-once.conf")
    r = h.run_lowlatd(host, ["--once", "--observe"], config_path=path)
    t.ok(list(error_lines(r.stderr, path, warnings=True)) == [2], "lowlatd --once says the warning on stderr too",
         "exit %d; stderr:\n%s" % (r.returncode, r.stderr))
    bare = h.FakeHost(ncpus=2, nirqs=10, isolated="1", cpufreq=False)
    path, r = check(bare, "[pm]\ngovernor = performance\n", "warn-nocpufreq.conf")
    t.ok(r.returncode == 0 and "cannot be checked here: no CPU of this host has cpufreq" in r.stderr,
         "governor on a host without cpufreq: said that it cannot be checked", r.stderr)
    path, r = check(bare, "[nic \"eth0\"]\nirq_cpus = 0\n[irq]\npin = eth0-* 1\n", "warn-nonet.conf")
    t.ok(r.returncode == 0 and list(error_lines(r.stderr, path, warnings=True)) == [2]
         and "cannot be checked here: %s/sys/class/net: No such file" % bare.root in r.stderr,
         "irq_cpus and pins on a host whose interfaces cannot be read: said that it cannot be checked", r.stderr)
    # A drop-in that sets a key of the main file again is what drop-ins are for: no warning.
    path = h.write_config(host, "[sysctl]\nvm.swappiness = 10\n", "warn-dropin.conf",
                          {"50-x.conf": "[sysctl]\nvm.swappiness = 1\n"})
    r = h.run_lowlatd(host, ["--check-config", "--strict"], config_path=path)
    t.ok(r.returncode == 0 and "warning" not in r.stderr, "a drop-in overriding the main file is no warning",
         "exit %d; stderr:\n%s" % (r.returncode, r.stderr))
    r = h.run_lowlatd(host, ["--strict"], config_path=path)
    t.ok(r.returncode == 1 and "--strict applies to --check-config only" in r.stderr,
         "--strict without --check-config is refused", r.stderr)


def check(host, text, name):
    path = h.write_config(host, text, name)
    return path, h.run_lowlatd(host, ["--check-config"], config_path=path)


def check_good(t, host):
    path, r = check(host, GOOD, "good.conf")
    t.ok(r.returncode == 0, "a complete, valid config passes (exit 0)",
         "exit %d; stderr:\n%s" % (r.returncode, r.stderr))
    t.ok(not error_lines(r.stderr, path), "no FILE:LINE errors for the valid config", r.stderr)
    t.ok(not error_lines(r.stderr, path, warnings=True) and "warning" not in r.stdout,
         "and no warnings", r.stdout + r.stderr)
    r = h.run_lowlatd(host, ["--check-config", "--strict"], config_path=path)
    t.ok(r.returncode == 0, "the valid config passes --strict too", r.stderr)


def run(t):
    host = h.FakeHost(ncpus=4, nirqs=1000, isolated="2-3")

    check_good(t, host)
    check_warnings(t, host)

    # An empty file is refused (a truncated write, not a posture); one header is the
    # intentionally empty posture of all defaults.
    path, r = check(host, "", "empty.conf")
    t.ok(r.returncode == 1 and "the file is empty" in r.stderr and path in r.stderr,
         "an empty config file is refused, naming the file", "exit %d; stderr:\n%s" % (r.returncode, r.stderr))
    path, r = check(host, "[daemon]\n", "header-only.conf")
    t.ok(r.returncode == 0, "a config of one section header passes (all defaults)",
         "exit %d; stderr:\n%s" % (r.returncode, r.stderr))
    # The longest line the parser takes: one more character is "line too long" below.
    path, r = check(host, "[cpus]\n" + C.slices_line(C.CONFIG_LINE_MAX) + "\n", "longest-line.conf")
    t.ok(r.returncode == 0, "a line of %d characters passes" % C.CONFIG_LINE_MAX,
         "exit %d; stderr:\n%s" % (r.returncode, r.stderr))

    for i, case in enumerate(BAD):
        what, text, lines, words = case[:4]
        need = case[4] if len(case) > 4 else None
        path, r = check(host, text, "bad%02d.conf" % i)
        errs = error_lines(r.stderr, path)
        got = sorted(errs)
        ok = r.returncode == 1 and got and all(l in lines for l in got)
        if ok and need is not None:
            ok = need in got
        if ok and words:
            ok = any(w in " ".join(sum(errs.values(), [])).lower() for w in words)
        san = [l for l in r.stderr.splitlines() if any(p in l for p in h.SANITIZER_PATTERNS)]
        t.ok(ok and not san, "%s: exit 1 and %s:%s: reason" % (
            what, os.path.basename(path), "|".join(map(str, lines))),
            "exit %d; error lines %r; stderr:\n%s" % (r.returncode, got, r.stderr))

    path, r = check(host, MULTI, "multi.conf")
    errs = error_lines(r.stderr, path)
    t.ok(r.returncode == 1 and sorted(errs) == MULTI_LINES,
         "several errors in one file are all reported (lines %r)" % MULTI_LINES,
         "exit %d; error lines %r; stderr:\n%s" % (r.returncode, sorted(errs), r.stderr))

    r = h.run_lowlatd(host, ["--check-config"], config_path=os.path.join(host.tmp, "nope.conf"))
    t.ok(r.returncode != 0 and "nope.conf" in r.stderr, "a missing main config is an error",
         "exit %d; stderr:\n%s" % (r.returncode, r.stderr))

    # --- drop-ins
    main_text = """\
[daemon]
scan_interval = 1s
[cpus]
isolated = 2-3
[sysctl]
net.core.somaxconn = 100
kernel.numa_balancing = 0
"""
    dropins = {
        "20-b.conf": "[sysctl]\nnet.core.somaxconn = 300\n",
        "10-a.conf": "[sysctl]\nnet.core.somaxconn = 200\nnet.core.busy_poll = 50\n",
        "30-c.conf.disabled": "this is not a config file at all\n",
        "README": "garbage [ without = sense\n",
    }
    path = h.write_config(host, main_text, "dropin.conf", dropins)
    r = h.run_lowlatd(host, ["--check-config"], config_path=path)
    t.ok(r.returncode == 0, "main file with drop-ins passes; non-*.conf files are ignored",
         "exit %d; stderr:\n%s" % (r.returncode, r.stderr))
    r = h.run_lowlatd(host, ["--once"], config_path=path)
    t.ok(host.sysctl("net.core.somaxconn") == "300",
         "drop-ins override the main file, later (20-b.conf) wins",
         "somaxconn %r; --once exit %d; stderr:\n%s" % (host.sysctl("net.core.somaxconn"),
                                                       r.returncode, r.stderr))
    t.ok(host.sysctl("kernel.numa_balancing") == "0" and host.sysctl("net.core.busy_poll") == "50",
         "drop-ins merge key by key (main's and 10-a's other keys kept)",
         "numa_balancing %r busy_poll %r" % (host.sysctl("kernel.numa_balancing"),
                                             host.sysctl("net.core.busy_poll")))

    bad_dropin = "# drop-in\n[daemon]\nscan_interval = forever\n"
    dropins["50-bad.conf"] = bad_dropin
    path = h.write_config(host, main_text, "dropin2.conf", dropins)
    r = h.run_lowlatd(host, ["--check-config"], config_path=path)
    dpath = path + ".d/50-bad.conf"
    errs = error_lines(r.stderr, dpath)
    t.ok(r.returncode == 1 and sorted(errs) == [3],
         "an error in a drop-in names the drop-in's path and line (%s:3:)" % os.path.basename(dpath),
         "exit %d; stderr:\n%s" % (r.returncode, r.stderr))
    t.ok(not error_lines(r.stderr, path), "... and not the main file",
         r.stderr)

    # An error in the main file plus one in a drop-in: both reported.
    path = h.write_config(host, main_text + "oops = 1\n", "dropin3.conf", dropins)
    r = h.run_lowlatd(host, ["--check-config"], config_path=path)
    t.ok(r.returncode == 1 and sorted(error_lines(r.stderr, path)) == [8]
         and sorted(error_lines(r.stderr, path + ".d/50-bad.conf")) == [3],
         "errors in the main file and a drop-in are both reported",
         "exit %d; stderr:\n%s" % (r.returncode, r.stderr))


if __name__ == "__main__":
    h.main(run)
