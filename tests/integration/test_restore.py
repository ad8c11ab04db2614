#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Restore: originals are recorded under the runtime directory before the first change,
survive a daemon restart (and are not replaced by lowlatd's own values), and are put
back by Restore() on the bus (root only; lowlatctl restore), by a stop with
restore_on_exit = yes, and, for settings a reload drops, by that reload."""

import os
import shutil
import subprocess

import busctl_harness as b
import lowlat_constants as C
import lowlat_harness as h

BASE = h.posture_config("1s")


def originals(path):
    """{(kind, object): value} from the originals file (lib/setting/originals.c: "boot_id ID" and
    "root PATH", then KIND<TAB>OBJECT<TAB>VALUE lines). The file is never removed, only
    rewritten: a missing file or a line of another shape raises, so that "restored entries
    are forgotten" cannot pass on a file that was not read."""
    out = {}
    with open(path) as f:
        lines = f.read().splitlines()
    if len(lines) < 2 or not lines[0].startswith("boot_id ") or not lines[1].startswith("root "):
        raise ValueError("%s: no boot_id/root header: %r" % (path, lines[:2]))
    for n, line in enumerate(lines[2:], 3):
        parts = line.split("\t")
        if len(parts) != 3:
            raise ValueError("%s:%d: not KIND<TAB>OBJECT<TAB>VALUE: %r" % (path, n, line))
        out[(parts[0], parts[1])] = parts[2]
    return out


def snapshot(host, irqs):
    return {
        "irqs": {n: host.irq_affinity(n) for n in irqs},
        "somaxconn": host.sysctl("net.core.somaxconn"),
        "governor": host.governor(0),
        "default": host.read("proc/irq/default_smp_affinity").strip(),
    }


def run(t):
    h.isolate_from_real_journal()
    host = h.FakeHost(ncpus=4, nirqs=200, isolated="2-3")
    runtime = os.path.join(host.tmp, "run-lowlatd")
    env = {"RUNTIME_DIRECTORY": runtime}
    odir = h.originals_path(host, runtime)
    before = snapshot(host, host.irqs)

    # 1. originals recorded before the first change
    d = h.Daemon(host, BASE + "[daemon]\nrestore_on_exit = yes\n", env=env)
    d.wait_ready()
    o = originals(odir)
    t.ok(o.get(("sysctl", "net.core.somaxconn")) == before["somaxconn"],
         "the original somaxconn is recorded", repr(o.get(("sysctl", "net.core.somaxconn"))))
    t.ok(o.get(("governor", "cpu0")) == before["governor"], "the original governor is recorded")
    irq = host.irqs[50]
    t.ok(o.get(("irq_affinity", str(irq))) == before["irqs"][irq],
         "an IRQ's original affinity is recorded (without the effective part)",
         repr(o.get(("irq_affinity", str(irq)))))
    t.ok(o.get(("cpu_dma_latency", "/dev/cpu_dma_latency")) == "released",
         "cpu_dma_latency's original is 'no request of ours'")
    t.ok(host.sysctl("net.core.somaxconn") == "8192" and host.irq_affinity(irq) == "0-1",
         "the posture is applied")
    with open(odir) as f:
        mode = os.fstat(f.fileno()).st_mode & 0o777
    t.ok(mode == 0o600, "the originals file is private (0600)", "%o" % mode)

    # 2. a restart keeps the originals: lowlatd's own values are not mistaken for them
    d.stop()    # restore_on_exit = yes: puts everything back
    after = snapshot(host, host.irqs)
    t.ok(after == before, "restore_on_exit: SIGTERM puts every setting back",
         repr({k: v for k, v in after.items() if v != before[k]})[:600])
    t.ok(not originals(odir), "restored entries are forgotten", repr(originals(odir))[:200])

    d = h.Daemon(host, BASE, env=env)
    d.wait_ready()
    d.stop()  # no restore_on_exit: the posture stays
    t.ok(host.sysctl("net.core.somaxconn") == "8192", "without restore_on_exit a stop leaves the posture")
    d = h.Daemon(host, BASE, env=env)
    d.wait_ready()
    o = originals(odir)
    t.ok(o.get(("sysctl", "net.core.somaxconn")) == before["somaxconn"],
         "a restarted lowlatd keeps the true original, not its own 8192",
         repr(o.get(("sysctl", "net.core.somaxconn"))))

    # 3. a reload that drops a setting restores it
    d.rewrite_config(BASE.replace("net.core.somaxconn = 8192\n", ""))
    mark = d.notify.mark()
    d.sighup()
    d.notify.wait_for(b"READY=1", h.scaled(10), since=mark)
    ok = d.poll_until(lambda: host.sysctl("net.core.somaxconn") == before["somaxconn"], h.scaled(5))
    t.ok(ok, "a sysctl dropped by a reload is restored", "holds %r" % host.sysctl("net.core.somaxconn"))
    t.ok(host.governor(0) == "performance", "settings still configured are kept")

    # 4. Restore() on the bus: root only
    if os.geteuid() != 0 or not all(shutil.which(x) for x in ("dbus-daemon", "busctl", "setpriv")):
        t.skip("Restore() on the bus: root only, puts every setting back, then observe mode",
               "needs root, dbus-daemon, busctl and setpriv")
        d.stop()
        return
    d.stop()
    bus = b.PrivateBus(host.tmp, [h.policy_path()]).start()
    env2 = dict(env, DBUS_SYSTEM_BUS_ADDRESS=bus.address)
    d = h.Daemon(host, BASE, env=env2)
    d.wait_ready()
    root = b.Busctl(bus.address)
    nobody = b.Busctl(bus.address, user=b.NOBODY)
    root.require_owner(C.BUS_NAME, h.scaled(10), alive=d.alive)
    p = nobody.run("call", C.BUS_NAME, C.BUS_PATH, C.BUS_INTERFACE, "Restore")
    t.ok(p.returncode != 0 and ("AccessDenied" in p.stderr + p.stdout or "Access denied" in p.stderr),
         "Restore() as uid 65534 is denied", p.stderr)
    t.ok(host.sysctl("net.core.somaxconn") == "8192", "... and changed nothing")
    lowlatctl = os.environ.get("LOWLATCTL")
    if lowlatctl:
        p = subprocess.run([lowlatctl, "restore"], env=dict(os.environ, **env2), capture_output=True, text=True)
        t.ok(p.returncode == 0, "lowlatctl restore as root exits 0", p.stderr)
    else:
        p = root.run("call", C.BUS_NAME, C.BUS_PATH, C.BUS_INTERFACE, "Restore")
        t.ok(p.returncode == 0, "Restore() as root succeeds", p.stderr)
    after = snapshot(host, host.irqs)
    t.ok(after == before, "Restore() puts every setting back", repr(after)[:300])
    mode = root.get_property(C.BUS_NAME, C.BUS_PATH, C.BUS_INTERFACE, "Mode")
    t.ok("observe" in str(mode), "and lowlatd switches to observe mode", repr(mode))
    host.set_sysctl("net.core.somaxconn", "1234")
    h.settle(2.5)
    t.ok(host.sysctl("net.core.somaxconn") == "1234", "after Restore() drift is reported, not corrected")
    mark = d.notify.mark()
    d.sighup()
    d.notify.wait_for(b"READY=1", h.scaled(10), since=mark)
    t.ok(d.poll_until(lambda: host.sysctl("net.core.somaxconn") == "8192", h.scaled(5)),
         "a reload after Restore() enforces again")
    t.stopped_cleanly(d)
    bus.stop()


if __name__ == "__main__":
    h.main(run)
