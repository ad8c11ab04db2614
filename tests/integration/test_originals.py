#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The originals file, through the real daemon on a fake tree: a --root run keeps its
originals in a state directory of its own and never reads, rewrites or drops the host's
/run/lowlatd/originals (checked in a private mount namespace, with a tmpfs over
/run/lowlatd holding a sentinel file, so the real one is never touched); a setting already
as desired at start has that value on file as its original, so that a drift by someone
else, corrected, never becomes the original restore puts back; and restore writes no
original on file that its setting could not have read (each is skipped, said, counted)."""

import os
import shutil
import subprocess

import busctl_harness as b
import lowlat_constants as C
import lowlat_harness as h

CONFIG = h.posture_config("1s")


def boot_id():
    with open("/proc/sys/kernel/random/boot_id") as f:
        return f.read().strip()


def private_run_lowlatd(t):
    """A tmpfs over /run/lowlatd in this (private) mount namespace; where the host has no
    /run/lowlatd, a tmpfs over /run first, so that creating the directory changes nothing
    outside."""
    if os.path.isdir("/run/lowlatd"):
        r = h.mount("-t", "tmpfs", "-o", "mode=0755", "tmpfs", "/run/lowlatd")
    else:
        r = h.mount("-t", "tmpfs", "-o", "mode=0755", "tmpfs", "/run")
        if r.returncode == 0:
            os.makedirs("/run/lowlatd")
            os.makedirs("/run/systemd")  # still no journal socket: logs stay on stderr
    if r.returncode != 0:
        h.skip("cannot mount a tmpfs over /run/lowlatd: %s" % r.stdout.strip())


def root_keeps_its_own(t):
    private_run_lowlatd(t)
    sentinel = ("boot_id %s\nroot /\nsysctl\tnet.core.somaxconn\t4096\nirq_affinity\t30\t0-3\n" % boot_id()).encode()
    host_file = "/run/lowlatd/originals"
    h.write_bytes(host_file, sentinel)
    os.chmod(host_file, 0o600)

    host = h.FakeHost(ncpus=4, nirqs=40, isolated="2-3")
    before = host.sysctl("net.core.somaxconn")
    # No RUNTIME_DIRECTORY: the daemon's own default, /run/lowlatd, as under the unit.
    d = h.Daemon(host, CONFIG, env={"RUNTIME_DIRECTORY": None})
    d.wait_ready()
    t.ok(host.sysctl("net.core.somaxconn") == "8192", "lowlatd --root enforces on the tree")
    own = h.originals_path(host, "/run/lowlatd")
    log = d.stderr()
    d.stop()
    with open(host_file, "rb") as f:
        after = f.read()
    t.ok(after == sentinel, "the host's /run/lowlatd/originals is byte-identical after a --root run", repr(after)[:400])
    t.ok(os.path.isfile(own), "the fake root's originals are in a directory of their own: %s" % own,
         repr(os.listdir("/run/lowlatd")))
    text = h.read_text(own) if os.path.isfile(own) else ""
    t.ok("root %s\n" % os.path.realpath(host.root) in text and
         "sysctl\tnet.core.somaxconn\t%s\n" % before in text,
         "... holding the tree's own original somaxconn (%s) under its root" % before, text[:400])
    t.ok("Keeping original values in %s" % own in log, "the log names the state directory at start", log[-2000:])

    # A state directory that cannot be had: enforced all the same, restore said off.
    os.unlink(own)
    os.rmdir(os.path.dirname(own))
    h.write_text(os.path.dirname(own), "a file where the directory should be\n")
    host.set_sysctl("net.core.somaxconn", before)
    d = h.Daemon(host, CONFIG, env={"RUNTIME_DIRECTORY": None})
    d.wait_ready()
    t.ok(host.sysctl("net.core.somaxconn") == "8192", "without its state directory the run still enforces")
    t.ok("restore will not be possible" in d.stderr(), "and says restore is off", d.stderr()[-2000:])
    d.stop()
    with open(host_file, "rb") as f:
        t.ok(f.read() == sentinel, "the host's file is still untouched")


def found_as_desired(t):
    """somaxconn and an IRQ already as desired at start; both drift, lowlatd corrects them;
    a stop with restore_on_exit = yes must put back the values from before the start."""
    host = h.FakeHost(ncpus=4, nirqs=40, isolated="2-3", sysctls={"net.core.somaxconn": "8192"})
    irq = host.irqs[10]
    host.set_irq_affinity(irq, "0-1")
    d = h.Daemon(host, CONFIG + "[daemon]\nrestore_on_exit = yes\n")
    d.wait_ready()
    o = h.read_text(h.originals_path(host))
    t.ok("sysctl\tnet.core.somaxconn\t8192\n" in o and "irq_affinity\t%d\t0-1\n" % irq in o,
         "settings found as desired at start are on file with the value found", o[:600])
    host.set_sysctl("net.core.somaxconn", "1234")
    host.set_irq_affinity(irq, "0-3")
    corrected = d.poll_until(lambda: host.sysctl("net.core.somaxconn") == "8192" and
                             host.irq_affinity(irq) == "0-1", h.scaled(10))
    t.ok(corrected, "someone else's drift is corrected",
         "%s, %s" % (host.sysctl("net.core.somaxconn"), host.irq_affinity(irq)))
    o = h.read_text(h.originals_path(host))
    t.ok("sysctl\tnet.core.somaxconn\t1234" not in o and "irq_affinity\t%d\t0-3\n" % irq not in o,
         "the drifted values never went on file as originals", o[:600])
    d.stop()  # restore_on_exit
    t.ok(host.sysctl("net.core.somaxconn") == "8192", "restore puts back somaxconn as found before the start (8192)",
         host.sysctl("net.core.somaxconn"))
    t.ok(host.irq_affinity(irq) == "0-1", "restore puts back the IRQ as found before the start (0-1)",
         host.irq_affinity(irq))


KSM = "sys/kernel/mm/ksm/run"


def crafted_file(t):
    """An originals file with a shell command for a sysctl, a reversed range of CPUs the
    host does not have for an IRQ, and 100 KB for a sysfs file: restore writes none."""
    host = h.FakeHost(ncpus=4, nirqs=40, isolated="2-3")
    os.makedirs(os.path.dirname(host.path(KSM)), exist_ok=True)
    host.write(KSM, "1\n")
    irq = host.irqs[10]
    path = h.originals_path(host)
    os.makedirs(os.path.dirname(path), mode=0o700)
    crafted = {"sysctl\tnet.core.somaxconn": "1 2 3 $(x)", "irq_affinity\t%d" % irq: "99999999-0",
               "sysfs\t/" + KSM: "1" * 100000}
    h.write_text(path, "boot_id %s\nroot %s\n" % (boot_id(), os.path.realpath(host.root)) +
                 "".join("%s\t%s\n" % kv for kv in crafted.items()))
    os.chmod(path, 0o600)
    d = h.Daemon(host, CONFIG + "[daemon]\nrestore_on_exit = yes\n\n[sysfs]\n/%s = 0\n" % KSM)
    d.wait_ready()
    t.ok(host.sysctl("net.core.somaxconn") == "8192" and host.irq_affinity(irq) == "0-1" and
         host.read(KSM).strip() == "0", "the posture is applied (the crafted entries taken as originals)")
    d.stop()  # restore_on_exit
    log = d.stderr()
    t.ok(host.sysctl("net.core.somaxconn") == "8192", "restore does not write '1 2 3 $(x)' to a sysctl",
         host.sysctl("net.core.somaxconn"))
    t.ok(host.irq_affinity(irq) == "0-1", "nor '99999999-0' to an IRQ's affinity", host.irq_affinity(irq))
    t.ok(host.read(KSM).strip() == "0", "nor 100 KB to a sysfs file", "%d bytes" % len(host.read(KSM)))
    for what, why in (("sysctl net.core.somaxconn", "not numbers"), ("irq_affinity %d" % irq, "not a CPU list"),
                      ("sysfs /" + KSM, "longer than any value read")):
        n = log.count("Not restoring %s:" % what)
        t.ok(n == 1 and why in log, "each is said once: %s (%s)" % (what, why), log[-3000:])
    t.ok("3 originals on file skipped" in log, "and counted in the restore's result", log[-3000:])
    t.ok(host.irq_affinity(host.irqs[11]) == host.irq_affinity(host.irqs[12]) != "0-1",
         "the good originals are still restored", host.irq_affinity(host.irqs[11]))


WQ = "sys/devices/virtual/workqueue"
MASKS_CONFIG = """\
[daemon]
scan_interval = 1s

[cpus]
isolated = 2-3
workqueues = housekeeping
rps_default_mask = housekeeping
"""


def mask_host():
    """4 CPUs, 2-3 isolated, with the global workqueue cpumask and net.core.rps_default_mask."""
    host = h.FakeHost(ncpus=4, nirqs=20, isolated="2-3")
    os.makedirs(host.path(WQ), exist_ok=True)
    host.write(WQ + "/cpumask", "f\n")
    host.write("proc/sys/net/core/rps_default_mask", "0\n")
    return host


def write_originals(host, entries):
    path = h.originals_path(host)
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    h.write_text(path, "boot_id %s\nroot %s\n" % (boot_id(), os.path.realpath(host.root)) +
                 "".join("%s\t%s\n" % kv for kv in entries))
    os.chmod(path, 0o600)
    return path


def crafted_masks(t):
    """#24 item 8 for the mask kinds, through the daemon and lowlatctl on a private bus: an
    originals file with a shell command for the workqueue cpumask, 'zz zz' for the default
    IRQ affinity and CPUs 0-7 (a host of 4) for rps_default_mask. lowlatctl restore writes
    none of them, each is said once naming the file, and lowlatctl says how many it skipped
    (RestoreSkipped; Restore() keeps its signature)."""
    lowlatctl = os.environ.get("LOWLATCTL")
    if not lowlatctl or not shutil.which("dbus-daemon"):
        t.skip("crafted masks through lowlatctl restore", "needs LOWLATCTL and dbus-daemon")
        return
    host = mask_host()
    path = write_originals(host, [("workqueue_cpumask\tcpumask", "1 2 3 $(x)"),
                                  ("irq_default_affinity\tdefault_smp_affinity", "zz zz"),
                                  ("rps_default_mask\tnet.core.rps_default_mask", "ff")])
    bus = b.PrivateBus(host.tmp, [h.policy_path()]).start()
    env = {"DBUS_SYSTEM_BUS_ADDRESS": bus.address}
    d = h.Daemon(host, MASKS_CONFIG, env=env)
    d.wait_ready()
    root = b.Busctl(bus.address)
    root.require_owner(C.BUS_NAME, h.scaled(10), alive=d.alive)
    wq, da, rps = (host.read(WQ + "/cpumask").strip(), host.default_affinity_mask(),
                   host.read("proc/sys/net/core/rps_default_mask").strip())
    t.ok(h.parse_mask(wq) == 0x3 and da == 0x3 and h.parse_mask(rps) == 0x3,
         "the posture is applied (the crafted entries taken as originals)", "%s %x %s" % (wq, da, rps))
    p = subprocess.run([lowlatctl, "restore"], env=dict(os.environ, **env), capture_output=True, text=True)
    t.ok(p.returncode == 0, "lowlatctl restore exits 0", p.stderr)
    t.ok("3 originals on file were not written" in p.stderr,
         "lowlatctl restore says how many originals it skipped", p.stderr)
    typ, skipped = root.get_property(C.BUS_NAME, C.BUS_PATH, C.BUS_INTERFACE, "RestoreSkipped")
    t.ok(typ == "u" and skipped == 3, "RestoreSkipped is 3", "%r %r" % (typ, skipped))
    t.ok(host.read(WQ + "/cpumask").strip() == wq, "restore does not write '1 2 3 $(x)' to the workqueue cpumask",
         host.read(WQ + "/cpumask"))
    t.ok(host.default_affinity_mask() == 0x3, "nor 'zz zz' to default_smp_affinity",
         host.read("proc/irq/default_smp_affinity"))
    t.ok(host.read("proc/sys/net/core/rps_default_mask").strip() == rps, "nor CPUs 0-7 to rps_default_mask",
         host.read("proc/sys/net/core/rps_default_mask"))
    log = d.stderr()
    for what, why in (("workqueue_cpumask cpumask", "not a CPU mask"),
                      ("irq_default_affinity default_smp_affinity", "not a CPU mask"),
                      ("rps_default_mask net.core.rps_default_mask", "CPUs this host does not have")):
        lines = [l for l in log.splitlines() if "Not restoring %s:" % what in l]
        t.ok(len(lines) == 1 and why in lines[0] and path in lines[0],
             "said once, with why and the file: %s (%s)" % (what, why), "\n".join(lines) or log[-3000:])
    d.stop()
    bus.stop()


def workqueue_drift_restored(t):
    """#24 item 7 for the global workqueue cpumask: already as desired (3) at start, drifted
    to f by someone else and corrected; restore puts back 3, the value before the start,
    never the drifted f."""
    host = mask_host()
    host.write(WQ + "/cpumask", "3\n")
    d = h.Daemon(host, MASKS_CONFIG.replace("[daemon]\n", "[daemon]\nrestore_on_exit = yes\n"))
    d.wait_ready()
    o = h.read_text(h.originals_path(host))
    t.ok("workqueue_cpumask\tcpumask\t3\n" in o, "the mask found as desired at start is on file (3)", o[:600])
    host.write(WQ + "/cpumask", "f\n")
    t.ok(d.poll_until(lambda: h.parse_mask(host.read(WQ + "/cpumask")) == 0x3, h.scaled(10)),
         "someone else's f is corrected to 3", host.read(WQ + "/cpumask"))
    o = h.read_text(h.originals_path(host))
    t.ok("workqueue_cpumask\tcpumask\tf\n" not in o, "the drifted f never went on file", o[:600])
    d.stop()  # restore_on_exit
    t.ok(h.parse_mask(host.read(WQ + "/cpumask")) == 0x3,
         "restore puts back the mask of before the start (3), not the drifted f", host.read(WQ + "/cpumask"))


def run(t):
    h.require_root("a private /run/lowlatd")
    h.enter_private_mount_namespace("a --root run beside the host's /run/lowlatd")
    root_keeps_its_own(t)
    found_as_desired(t)
    crafted_file(t)
    crafted_masks(t)
    workqueue_drift_restored(t)
    h.unmount_all()


if __name__ == "__main__":
    h.main(run)
