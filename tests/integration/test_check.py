#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""lowlatctl check end to end: Check() over a private bus, computed by the real daemon from
a fake tree with stray tasks and a configured application; human and --json output (the
grouped stray-task finding with every task in its details, over the bus and with
--config), exit status by the worst severity, open to an unprivileged caller."""

import json
import os
import subprocess
import time

import busctl_harness as b
import lowlat_constants as C
import lowlat_harness as h

CONFIG = """\
[cpus]
isolated = 2-3

[process "matcher"]
policy = fifo
priority = 80
"""

STAT = ("{pid} ({comm}) S 1 {pid} {pid} 0 -1 4194560 100 0 0 0 5 3 0 0 {prio} 0 1 0 100 1000000 200 "
        "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 {cpu} {rtprio} {policy} 0 0 0 0 0 0 0 0 0 0 0\n")
STATUS = ("Name:\t{comm}\nTgid:\t{pid}\nPid:\t{pid}\nPPid:\t1\nVmLck:\t0 kB\nHugetlbPages:\t0 kB\n"
          "Threads:\t1\nCapEff:\t0000000000000000\nCpus_allowed_list:\t{allowed}\n")
STRAYS = 8  # more than the 5 a message names
LIMITS = ("Limit                     Soft Limit           Hard Limit           Units     \n"
          "Max locked memory         8388608              8388608              bytes     \n")


def add_process(host, pid, comm, allowed, policy=0, rtprio=0, env="PATH=/usr/bin\nTZ=:/etc/localtime", cpu=None):
    prio = -1 - rtprio if policy else 20
    fields = dict(pid=pid, comm=comm, allowed=allowed, policy=policy, rtprio=rtprio, prio=prio,
                  cpu=min(h.parse_cpulist(allowed)) if cpu is None else cpu)
    for d in ("proc/%d" % pid, "proc/%d/task/%d" % (pid, pid)):
        os.makedirs(host.path(d), exist_ok=True)
        host.write(d + "/stat", STAT.format(**fields))
        host.write(d + "/status", STATUS.format(**fields))
    host.write("proc/%d/comm" % pid, comm + "\n")
    h.write_bytes(host.path("proc/%d/cmdline" % pid), comm.encode() + b"\0")
    host.write("proc/%d/cgroup" % pid, "0::/user.slice\n")
    h.write_bytes(host.path("proc/%d/environ" % pid), env.replace("\n", "\0").encode() + b"\0")
    host.write("proc/%d/limits" % pid, LIMITS)


def run(t):
    b.require_tools()
    lowlatctl = os.environ.get("LOWLATCTL")
    if not lowlatctl:
        h.skip("LOWLATCTL is not set")
    h.isolate_from_real_journal()
    host = h.FakeHost(ncpus=4, nirqs=50, isolated="2-3")
    add_process(host, 4242, "rogue", "0-3", cpu=3)                # a stray: may run on 2-3, last on 3
    add_process(host, 4243, "matcher", "2-3", policy=1, rtprio=90)  # the app, healthy
    add_process(host, 4244, "batch", "0-1")                       # housekeeping only: fine
    for i in range(STRAYS - 1):                                   # more strays, last on CPU 0
        add_process(host, 5000 + i, "helper%d" % i, "0-3")

    bus = b.PrivateBus(host.tmp, [h.policy_path()]).start()
    env = {"DBUS_SYSTEM_BUS_ADDRESS": bus.address}
    d = h.Daemon(host, CONFIG, env=env)
    d.wait_ready()
    b.Busctl(bus.address).require_owner(C.BUS_NAME, h.scaled(10), alive=d.alive)
    run_env = dict(os.environ, **env)

    p = subprocess.run([lowlatctl, "check", "--json"], env=run_env, capture_output=True, text=True)
    try:
        findings = json.loads(p.stdout)
    except ValueError:
        findings = None
    t.ok(isinstance(findings, list) and all({"severity", "id", "subject", "message"} <= set(f) <=
                                            {"severity", "id", "subject", "message", "details"} for f in findings),
         "check --json is an array of {severity, id, subject, message[, details]}", p.stdout[:500] + p.stderr)
    findings = findings or []
    check_strays(t, findings, "Check() over the bus")
    t.ok(all(isinstance(f.get("details", []), list) and f.get("details") != [] for f in findings),
         "\"details\" is a list of lines, left out when a finding has none",
         repr([f.get("details") for f in findings]))
    t.ok(not [f for f in findings if f["id"].startswith("app.") and "matcher" in f["subject"]],
         "the healthy application has no app.* finding",
         repr([f for f in findings if f["id"].startswith("app.")]))
    t.ok(all(f["message"] for f in findings), "every finding has a message with the fix")
    worst = min(({"critical": 0, "warning": 1, "info": 2}.get(f["severity"], 3) for f in findings), default=3)
    want = {0: 2, 1: 1}.get(worst, 0)
    t.ok(p.returncode == want, "check exits %d for the worst severity" % want, "exit %d" % p.returncode)

    p = subprocess.run(b.unprivileged() + [lowlatctl, "check"], env=run_env, capture_output=True, text=True)
    t.ok(p.returncode == want and "sched.stray-task" in p.stdout and "rogue" in p.stdout,
         "uid 65534 may run lowlatctl check (human output)", p.stdout[-400:] + p.stderr)
    t.ok("allowed on 0-3" not in p.stdout and "helper%d" % (STRAYS - 2) not in p.stdout,
         "the text output names the few most in the way, not every task's detail line", p.stdout[-1500:])
    t.ok("finding" in p.stdout.splitlines()[-1] if p.stdout else False, "the output ends with a count line",
         p.stdout[-200:])

    # The application stops running as configured: the audit says so.
    host.write("proc/4243/stat", STAT.format(pid=4243, comm="matcher", prio=20, cpu=2, rtprio=0, policy=0))
    host.write("proc/4243/task/4243/stat", STAT.format(pid=4243, comm="matcher", prio=20, cpu=2, rtprio=0, policy=0))
    p = subprocess.run([lowlatctl, "check", "--json"], env=run_env, capture_output=True, text=True)
    findings = json.loads(p.stdout) if p.stdout.startswith("[") else []
    t.ok(any(f["id"] == "app.policy" and "matcher" in f["subject"] for f in findings),
         "an application that lost SCHED_FIFO is reported (app.policy)", p.stdout[:600])

    off_the_loop(t, host, d, lowlatctl, run_env)

    t.stopped_cleanly(d)
    bus.stop()
    local_audit(t, host, lowlatctl)


def check_strays(t, findings, how):
    """One sched.stray-task finding for all the strays, the one last on an isolated CPU
    named first, every stray in its details."""
    strays = [f for f in findings if f["id"] == "sched.stray-task"]
    t.ok(len(strays) == 1 and strays[0]["subject"] == "%d tasks" % STRAYS,
         "%s: one sched.stray-task finding, subject \"%d tasks\"" % (how, STRAYS), repr(strays)[:800])
    if not strays:
        return
    details = strays[0].get("details", [])
    t.ok(len(details) == STRAYS and details[0] == "pid 4242 (rogue) allowed on 0-3, last on CPU 3, 0.08 s CPU",
         "%s: --json has every stray in \"details\", the one last on isolated CPU 3 first" % how, repr(details))
    t.ok(not any("4243" in d or "4244" in d for d in details),
         "%s: the configured application and a housekeeping-only task are not strays" % how, repr(details))
    t.ok("isolated CPUs 2-3: when one wakes up" in strays[0]["message"] and
         "The 5 most in the way" in strays[0]["message"] and "pid 4242 (rogue) last on CPU 3" in strays[0]["message"],
         "%s: the message names the isolated CPUs and the 5 most in the way" % how, strays[0]["message"])


def local_audit(t, host, lowlatctl):
    """check --config: the same audit in lowlatctl itself, no daemon, no bus."""
    env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS="unix:path=" + host.path("no-bus"))
    conf = h.write_config(host, CONFIG)
    p = subprocess.run([lowlatctl, "check", "--json", "--config", conf, "--root", host.root], env=env,
                       capture_output=True, text=True)
    findings = json.loads(p.stdout) if p.stdout.startswith("[") else []
    t.ok(any(f["id"] == "sched.stray-task" for f in findings),
         "check --config --root: the audit runs here, with no bus, and finds the stray tasks",
         p.stdout[:400] + p.stderr[-400:])
    check_strays(t, findings, "check --config")
    worst = min(({"critical": 0, "warning": 1, "info": 2}.get(f["severity"], 3) for f in findings), default=3)
    want = {0: 2, 1: 1}.get(worst, 0)
    t.ok(p.returncode == want, "check --config exits %d for the worst severity" % want, "exit %d" % p.returncode)
    bad = h.write_config(host, "[cpus]\nisolated = banana\n", name="bad.conf")
    p = subprocess.run([lowlatctl, "check", "--config", bad, "--root", host.root], env=env,
                       capture_output=True, text=True)
    t.ok(p.returncode == 3 and "%s:2:" % bad in p.stderr and not p.stdout,
         "check --config of a broken file: FILE:LINE: reason, no report, exit 3",
         "exit %d\n%s%s" % (p.returncode, p.stdout[:200], p.stderr[-400:]))
    p = subprocess.run([lowlatctl, "status", "--config", conf], env=env, capture_output=True, text=True)
    t.ok(p.returncode == 64 and "--config" in p.stderr, "--config with another command is a usage error (64)",
         "exit %d %s" % (p.returncode, p.stderr))


def off_the_loop(t, host, d, lowlatctl, run_env):
    """Check() runs in a child: concurrent callers share one audit, a stuck audit is
    killed after 10 s, and the event loop keeps correcting meanwhile."""
    calls = [subprocess.Popen([lowlatctl, "check", "--json"], env=run_env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(8)]
    outs = [c.communicate(timeout=h.scaled(30)) for c in calls]
    results = [json.loads(o) if o.startswith("[") else None for o, _ in outs]
    t.ok(all(r is not None and r == results[0] for r in results) and results[0],
         "8 concurrent Check() calls all get the same findings",
         "\n".join(e for _, e in outs)[:600])

    # A read that never returns (here a FIFO; on a real host a task whose memory lock is
    # held, as ps knows): the audit hangs, the daemon does not.
    fifo = host.path("proc/4299/stat")
    os.makedirs(os.path.dirname(fifo), exist_ok=True)
    host.write("proc/4299/comm", "stuck\n")
    os.mkfifo(fifo)
    t0 = time.monotonic()
    stuck = subprocess.Popen([lowlatctl, "check"], env=run_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
    time.sleep(1)
    irq = host.irqs[7]
    host.set_irq_affinity(irq, "2-3")
    fixed = d.poll_until(lambda: host.irq_affinity(irq) == "0-1", h.scaled(3))
    t.ok(fixed and stuck.poll() is None,
         "while an audit hangs, drift is still corrected at once (IRQ %d holds %r)" % (irq, host.irq_affinity(irq)),
         d.stderr_tail())
    out, err = stuck.communicate(timeout=h.scaled(40))
    waited = time.monotonic() - t0
    t.ok(stuck.returncode != 0 and "longer than 10 s" in err and 9 <= waited,
         "the hung audit is killed after 10 s and the caller told why (%.1f s, exit %d)" % (waited, stuck.returncode),
         out[-300:] + err[-300:])
    os.unlink(fifo)
    host.write("proc/4299/stat", "")
    p = subprocess.run([lowlatctl, "check", "--json"], env=run_env, capture_output=True, text=True)
    t.ok(p.stdout.startswith("[") and "sched.stray-task" in p.stdout,
         "the next Check() works again", p.stdout[:300] + p.stderr[-300:])
    t.ok(d.alive(), "lowlatd is still running", d.stderr_tail())


if __name__ == "__main__":
    h.main(run)
