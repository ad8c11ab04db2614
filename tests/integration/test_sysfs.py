#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""[sysfs] PATH = VALUE against a fake tree: the files are written at start (a choice file
compares on its selected word), a rewrite is reverted through inotify long before the
scan, the originals are recorded as the selected word, a reload that drops an entry puts
its file back, a config whose path leads out of /sys (or onto a file another setting
keeps) is refused with FILE:LINE at start and at reload, and restore_on_exit puts every
file back.

Then, in a network namespace of the daemon's own (root, unshare, nsenter, ip): a file a
pattern gains when a device appears is kept at once when the kernel's uevent comes (a veth
created there), not at the next scan a minute later. (Untagged uevents of the host reach
that namespace too; any of them does it, which is what a real host sees.)"""

import os
import shutil
import subprocess
import time

import lowlat_harness as h

THP = "sys/kernel/mm/transparent_hugepage/enabled"
KSM = "sys/kernel/mm/ksm/run"
BANK = "sys/devices/system/machinecheck/machinecheck%d/ignore_ce"

CONFIG = """\
[daemon]
# A minute: a correction within a second or two can only have come from an event.
scan_interval = 60s
restore_on_exit = yes

[cpus]
isolated = 2-3

[sysfs]
/sys/kernel/mm/transparent_hugepage/enabled = never
/sys/devices/system/machinecheck/machinecheck*/ignore_ce = 1
/sys/kernel/mm/ksm/run = 0
"""


def originals(path):
    """{(kind, object): value} of the originals file; raises when it cannot be read."""
    with open(path) as f:
        lines = f.read().splitlines()
    return dict(((k, o), v) for k, o, v in (line.split("\t") for line in lines[2:]))


def make_host(banks=2):
    host = h.FakeHost(ncpus=4, nirqs=20, isolated="2-3")
    for rel, text in [(THP, "always [madvise] never\n"), (KSM, "1\n")] + [(BANK % n, "0\n") for n in range(banks)]:
        os.makedirs(os.path.dirname(host.path(rel)), exist_ok=True)
        host.write(rel, text)
    return host


def fake_tree(t):
    host = make_host()
    runtime = os.path.join(host.tmp, "run-lowlatd")
    env = {"RUNTIME_DIRECTORY": runtime}

    # Refused before anything runs: a link out of /sys, a file another setting keeps.
    os.makedirs(host.path("etc"), exist_ok=True)
    host.write("etc/secret", "x\n")
    os.symlink("/etc/secret", host.path("sys/kernel/leak"))
    bad = h.write_config(host, CONFIG + "/sys/kernel/leak = 1\n"
                         "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor = performance\n",
                         name="bad.conf")
    p = h.run_lowlatd(host, ["--check-config"], bad)
    t.ok(p.returncode != 0 and "bad.conf:13: /sys/kernel/leak leads out of /sys (to /etc/secret)" in p.stderr
         and "bad.conf:14: /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor is kept by lowlatd's governor "
         "settings" in p.stderr,
         "--check-config refuses a link out of /sys and the governor's file, each at its line", p.stderr)
    t.ok(host.read("etc/secret") == "x\n", "nothing was written")

    # Files that act when written (#24 item 9), through the daemon: named as such, reached
    # through a link or taken in by a pattern, each refused at its line.
    pci = "sys/devices/pci0000:00/0000:00:1f.0"
    os.makedirs(host.path(pci), exist_ok=True)
    for name in ("remove", "rescan", "reset"):
        host.write("%s/%s" % (pci, name), "")
    acting = h.write_config(host, CONFIG + "/%s/remove = 1\n/%s/reset = 1\n" % (pci, pci), name="acting.conf")
    p = h.run_lowlatd(host, ["--check-config"], acting)
    t.ok(p.returncode != 0 and "acting.conf:13: /%s/remove is a file that acts when written" % pci in p.stderr
         and "acting.conf:14: /%s/reset is a file that acts when written" % pci in p.stderr,
         "--check-config refuses remove and reset, each at its line", p.stderr)
    p = h.run_lowlatd(host, ["--once"], acting)
    t.ok(p.returncode != 0 and "acting.conf:13:" in p.stderr, "and lowlatd will not start on it", p.stderr[-2000:])
    os.symlink("../../devices/pci0000:00/0000:00:1f.0/rescan", host.path("sys/kernel/mm/innocent"))
    linked = h.write_config(host, CONFIG + "/sys/kernel/mm/innocent = 1\n/sys/devices/pci0000:00/*/res* = 1\n",
                            name="linked.conf")
    p = h.run_lowlatd(host, ["--once"], linked)
    t.ok(p.returncode != 0 and "linked.conf:13: /sys/kernel/mm/innocent is a file that acts when written" in p.stderr
         and "linked.conf:14: /sys/devices/pci0000:00/*/res* matches /%s/rescan, which is a file that acts" % pci
         in p.stderr, "a link to rescan and a pattern that takes in rescan and reset are refused, each at its line",
         p.stderr[-2000:])
    t.ok(all(host.read("%s/%s" % (pci, name)) == "" for name in ("remove", "rescan", "reset")),
         "nothing was written to remove, rescan or reset",
         repr({name: host.read("%s/%s" % (pci, name)) for name in ("remove", "rescan", "reset")}))

    d = h.Daemon(host, CONFIG, env=env)
    d.wait_ready()
    t.ok(host.read(THP) == "never", "THP: never", repr(host.read(THP)))
    t.ok(host.read(KSM) == "0" and host.read(BANK % 0) == "1" and host.read(BANK % 1) == "1",
         "KSM off, both banks ignore corrected errors")
    o = originals(h.originals_path(host, runtime))
    t.ok(o.get(("sysfs", "/" + THP)) == "madvise" and o.get(("sysfs", "/" + BANK % 1)) == "0",
         "the originals: THP's selected word, the bank's value", repr(o))

    # A choice file as the kernel shows it: its selected word is the value.
    host.write(THP, "always madvise [never]\n")
    h.settle(0.3)
    t.ok(host.read(THP) == "always madvise [never]\n", "'always madvise [never]' is left alone")

    mark = len(d.stderr_lines())
    t0 = time.monotonic()
    host.write(THP, "[always] madvise never\n")
    ok = d.poll_until(lambda: host.read(THP) == "never", h.scaled(3))
    t.ok(ok, "a write of 'always' is reverted (after %.0f ms, inotify: the scan is a minute away)"
         % ((time.monotonic() - t0) * 1000), repr(host.read(THP)))
    said = "\n".join(d.stderr_lines()[mark:])
    t.ok("sysfs /sys/kernel/mm/transparent_hugepage/enabled" in said, "the report names the file", said)

    # A reload that drops an entry puts its file back.
    d.rewrite_config(CONFIG.replace("/sys/kernel/mm/transparent_hugepage/enabled = never\n", ""))
    cur = d.sighup()
    d.wait_ready(since=cur)
    ok = d.poll_until(lambda: host.read(THP) == "madvise", h.scaled(3))
    t.ok(ok, "a reload without the THP line puts madvise back", repr(host.read(THP)))

    # A reload into a refused config keeps the posture it has.
    d.rewrite_config(CONFIG + "/sys/kernel/leak = 1\n")
    mark = len(d.stderr_lines())
    cur = d.sighup()
    d.wait_ready(since=cur)
    said = "\n".join(d.stderr_lines()[mark:])
    t.ok("lowlatd.conf:13: /sys/kernel/leak leads out of /sys" in said, "the reload fails at the line", said)
    host.write(KSM, "1\n")
    ok = d.poll_until(lambda: host.read(KSM) == "0", h.scaled(3))
    t.ok(ok and host.read(THP) == "madvise", "and the previous posture is still kept (KSM reverted, THP left)")
    t.ok(host.read("etc/secret") == "x\n", "the file outside /sys is never written")

    d.stop()
    t.ok(host.read(KSM) == "1" and host.read(BANK % 0) == "0" and host.read(BANK % 1) == "0",
         "restore_on_exit: KSM and the banks are back", repr([host.read(KSM), host.read(BANK % 0)]))
    t.ok(not d.sanitizer_reports(), "no sanitizer reports", "\n".join(d.sanitizer_reports()))


class NetnsDaemon(h.Daemon):
    """lowlatd as the first process of a network namespace of its own: unshare execs it,
    so the pid is lowlatd's and /proc/PID/ns/net is where its uevents come from."""

    @property
    def argv(self):
        return [shutil.which("unshare"), "--net", "--"] + super().argv


def uevents(t):
    what = "a device's uevent re-expands the patterns at once"
    if os.geteuid() != 0 or not all(shutil.which(x) for x in ("unshare", "nsenter", "ip")):
        t.skip(what, "needs root, unshare, nsenter and ip")
        return
    probe = subprocess.run(["unshare", "--net", "true"], capture_output=True, text=True)
    if probe.returncode != 0:
        t.skip(what, "unshare --net failed: %s" % probe.stderr.strip())
        return
    host = make_host()
    d = NetnsDaemon(host, CONFIG.replace("[daemon]\n", "[daemon]\nudev_source = kernel\n"))
    d.wait_ready()
    t.ok(host.read(BANK % 1) == "1", "the banks there at start are kept")

    # The bank appears in the fake tree, then a device in lowlatd's namespace. Untagged
    # uevents of the host (another device anywhere) reach the namespace too, so the one
    # that does it may come earlier: either way a uevent, as the scan is a minute away.
    mark = len(d.stderr_lines())
    t0 = time.monotonic()
    os.makedirs(os.path.dirname(host.path(BANK % 2)))
    host.write(BANK % 2, "0\n")
    p = subprocess.run(["nsenter", "--net=/proc/%d/ns/net" % d.pid, "ip", "link", "add", "sfs0", "type", "veth",
                        "peer", "name", "sfs1"], capture_output=True, text=True)
    t.ok(p.returncode == 0, "a veth pair in lowlatd's namespace", p.stderr)
    ok = d.poll_until(lambda: host.read(BANK % 2) == "1", h.scaled(3))
    t.ok(ok, "its uevent: the new bank is kept (after %.0f ms)" % ((time.monotonic() - t0) * 1000),
         repr(host.read(BANK % 2)) + "\n" + d.stderr_tail())
    # The line follows the write it summarises: wait for it as for the file.
    line = "Devices changed: set 1 settings (sysfs 1)"
    d.poll_until(lambda: line in "\n".join(d.stderr_lines()[mark:]), h.scaled(3))
    said = "\n".join(d.stderr_lines()[mark:])
    t.ok(line in said, "summarised in one line", said)
    d.stop()
    t.ok(not d.sanitizer_reports(), "no sanitizer reports", "\n".join(d.sanitizer_reports()))


def run(t):
    h.isolate_from_real_journal()
    fake_tree(t)
    uevents(t)


if __name__ == "__main__":
    h.main(run)
