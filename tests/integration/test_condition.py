#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The host in one word (Condition, ConditionReasons, RebootRequired) through a real lowlatd
on a fake tree and a private system bus, read with busctl and lowlatctl:

  - a /proc/cmdline that isolates CPUs 2-3 without nohz_full= and rcu_nocbs=: every
    setting in place, the condition is reboot-required, the reason names the missing
    parameters, RebootRequired is true, and status and metrics say the same;
  - the command line fixed (as a reboot would) and lowlatd reloaded: applied, no reboot;
  - lowlatctl restore: observing, saying that restore did it; a reload: applied again;
  - a sysctl that cannot be written (a directory in its place): degraded, the reason naming
    it, and every series of lowlatd_condition 0 but degraded's;
  - CPU 0 alone as housekeeping on four CPUs, the command line lacking nohz_full=:
    lowlatctl boot refuses that line, and the condition is degraded with its reason, not
    reboot-required; with the parameters on the line, applied."""

import os
import subprocess

import busctl_harness as b
import lowlat_constants as C
import lowlat_harness as h

CONFIG = "[daemon]\nscan_interval = 1s\n\n[cpus]\nisolated = 2-3\n\n[sysctl]\nnet.core.somaxconn = 8192\n"
PARTIAL = "BOOT_IMAGE=/vmlinuz root=/dev/vda1 ro quiet isolcpus=managed_irq,domain,2-3 irqaffinity=0-1\n"
FULL = ("BOOT_IMAGE=/vmlinuz root=/dev/vda1 ro quiet isolcpus=managed_irq,domain,2-3 nohz_full=2-3 "
        "rcu_nocbs=2-3 irqaffinity=0-1 skew_tick=1 nosoftlockup\n")


def prop(bc, name):
    return bc.get_property(C.BUS_NAME, C.BUS_PATH, C.BUS_INTERFACE, name)[1]


def ctl(env, *args):
    return subprocess.run([os.environ["LOWLATCTL"]] + list(args), env=env, capture_output=True, text=True,
                          timeout=h.scaled(30))


def run(t):
    b.require_tools()
    if not os.environ.get("LOWLATCTL"):
        h.skip("LOWLATCTL is not set")
    h.isolate_from_real_journal()
    host = h.FakeHost(ncpus=4, nirqs=30, isolated="2-3")
    h.write_text(host.path("proc/cmdline"), PARTIAL)
    bus = b.PrivateBus(host.tmp, [h.policy_path()]).start()
    env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=bus.address)
    d = h.Daemon(host, CONFIG, env={"DBUS_SYSTEM_BUS_ADDRESS": bus.address})
    d.wait_ready()
    bc = b.Busctl(bus.address)
    bc.require_owner(C.BUS_NAME, h.scaled(10), alive=d.alive)

    reasons = prop(bc, "ConditionReasons")
    t.ok(prop(bc, "Condition") == "reboot-required" and prop(bc, "RebootRequired") is True,
         "nohz_full= and rcu_nocbs= missing from the command line: reboot-required, RebootRequired true",
         repr((prop(bc, "Condition"), reasons)))
    t.ok(len(reasons) == 1 and "nohz_full=2-3" in reasons[0] and "rcu_nocbs=2-3" in reasons[0] and
         "boot.cmdline" in reasons[0], "the reason names the missing parameters and where the whole line is",
         repr(reasons))
    p = ctl(env, "status")
    first = p.stdout.split("\n")[0]
    t.ok(p.returncode == 0 and first.startswith("LOWLATD OK: enforcing, ") and first.endswith("; reboot-required")
         and "Reboot required: yes" in p.stdout and "nohz_full=2-3" in p.stdout,
         "status: still OK for a monitoring plugin, the condition at the end of its line, the reason below",
         p.stdout[:800] + p.stderr)
    p = ctl(env, "metrics")
    t.ok('lowlatd_condition{condition="reboot-required"} 1' in p.stdout and
         'lowlatd_condition{condition="applied"} 0' in p.stdout and "lowlatd_reboot_required 1" in p.stdout,
         "metrics: lowlatd_condition reboot-required 1, applied 0, lowlatd_reboot_required 1", p.stdout[:1500])

    # As a reboot with the line in place would leave it; a reload reads it again.
    h.write_text(host.path("proc/cmdline"), FULL)
    p = ctl(env, "reload")
    t.ok(p.returncode == 0, "lowlatctl reload", p.stderr)
    ok = h.poll_until(lambda: prop(bc, "Condition") == "applied", h.scaled(5))
    t.ok(ok and prop(bc, "RebootRequired") is False and prop(bc, "ConditionReasons") == [],
         "the command line complete, reloaded: applied, no reason, no reboot", repr(prop(bc, "ConditionReasons")))

    p = ctl(env, "restore")
    t.ok(p.returncode == 0, "lowlatctl restore", p.stderr)
    reasons = prop(bc, "ConditionReasons")
    t.ok(prop(bc, "Condition") == "observing" and len(reasons) == 1 and "lowlatctl restore" in reasons[0],
         "after restore: observing, saying restore did it", repr(reasons))
    p = ctl(env, "status", "--json")
    t.ok('"condition":"observing"' in p.stdout and '"reboot_required":false' in p.stdout,
         "status --json: condition observing, reboot_required false", p.stdout[:600])
    p = ctl(env, "reload")
    ok = h.poll_until(lambda: prop(bc, "Condition") == "applied", h.scaled(5))
    t.ok(p.returncode == 0 and ok, "a reload enforces again: applied", repr(prop(bc, "ConditionReasons")))

    busy = host.sysctl_path("net.core.busy_poll")
    os.unlink(busy)
    os.mkdir(busy)
    d.rewrite_config(CONFIG + "net.core.busy_poll = 50\n")
    p = ctl(env, "reload")
    ok = h.poll_until(lambda: prop(bc, "Condition") == "degraded", h.scaled(5))
    reasons = prop(bc, "ConditionReasons")
    t.ok(ok and len(reasons) == 1 and reasons[0].startswith("1 setting failed: sysctl net.core.busy_poll"),
         "a sysctl that cannot be written: degraded, the reason naming it", repr(reasons))
    p = ctl(env, "metrics")
    want = ['lowlatd_condition{condition="%s"} %d' % (c, c == "degraded")
            for c in ("applied", "progressing", "degraded", "reboot-required", "observing")]
    t.ok(all(line in p.stdout.splitlines() for line in want) and "lowlatd_reboot_required 0" in p.stdout,
         "metrics: lowlatd_condition 1 for degraded alone, every condition with its series", p.stdout[:1500])
    d.stop()
    t.ok(not d.sanitizer_reports(), "no sanitizer reports", "\n".join(d.sanitizer_reports()))
    check_lone_housekeeping(t, host, bus, env)


LONE = CONFIG.replace("isolated = 2-3", "isolated = 1-3")
LONE_PARTIAL = "BOOT_IMAGE=/vmlinuz root=/dev/vda1 ro quiet isolcpus=managed_irq,domain,1-3 irqaffinity=0\n"
LONE_FULL = ("BOOT_IMAGE=/vmlinuz root=/dev/vda1 ro quiet isolcpus=managed_irq,domain,1-3 nohz_full=1-3 "
             "rcu_nocbs=1-3 irqaffinity=0 skew_tick=1 nosoftlockup\n")


def check_lone_housekeeping(t, host, bus, env):
    """CPU 0 alone as housekeeping on four CPUs: lowlatctl boot refuses the line, so the
    condition is not reboot-required (no reboot brings that line) but degraded, saying why;
    with the parameters on the running line (put there by hand) nothing is missing: applied."""
    h.write_text(host.path("proc/cmdline"), LONE_PARTIAL)
    p = subprocess.run([os.environ["LOWLATCTL"], "boot", "--root", host.root, "--config",
                        h.write_config(host, LONE, "lone.conf")], capture_output=True, text=True, timeout=h.scaled(30))
    t.ok(p.returncode == 1 and "CPU 0 alone as housekeeping on a host of 4 online CPUs" in p.stderr,
         "lowlatctl boot refuses the line that leaves CPU 0 alone", p.stdout + p.stderr)
    d = h.Daemon(host, LONE, env={"DBUS_SYSTEM_BUS_ADDRESS": bus.address})
    d.wait_ready()
    bc = b.Busctl(bus.address)
    bc.require_owner(C.BUS_NAME, h.scaled(10), alive=d.alive)
    h.poll_until(lambda: prop(bc, "Condition") != "progressing", h.scaled(5))
    reasons = prop(bc, "ConditionReasons")
    t.ok(prop(bc, "Condition") == "degraded" and prop(bc, "RebootRequired") is False,
         "the same posture in lowlatd: degraded, not reboot-required; RebootRequired false",
         repr((prop(bc, "Condition"), reasons)))
    t.ok(len(reasons) == 1 and "nohz_full=1-3" in reasons[0] and "lowlatctl boot refuses to write that line" in
         reasons[0] and "CPU 0 alone as housekeeping on a host of 4 online CPUs" in reasons[0],
         "the reason: what the line lacks, and lowlatctl boot's refusal in its words", repr(reasons))
    p = ctl(env, "metrics")
    t.ok('lowlatd_condition{condition="degraded"} 1' in p.stdout and "lowlatd_reboot_required 0" in p.stdout,
         "metrics: degraded 1, lowlatd_reboot_required 0", p.stdout[:1500])
    h.write_text(host.path("proc/cmdline"), LONE_FULL)
    h.write_text(host.path("sys/devices/system/cpu/isolated"), "1-3\n")
    h.write_text(host.path("sys/devices/system/cpu/nohz_full"), "1-3\n")
    p = ctl(env, "reload")
    ok = h.poll_until(lambda: prop(bc, "Condition") == "applied", h.scaled(5))
    t.ok(p.returncode == 0 and ok and prop(bc, "ConditionReasons") == [],
         "the parameters on the running line (by hand): nothing lacks, applied", repr(prop(bc, "ConditionReasons")))
    d.stop()
    t.ok(not d.sanitizer_reports(), "no sanitizer reports", "\n".join(d.sanitizer_reports()))


if __name__ == "__main__":
    h.main(run)
