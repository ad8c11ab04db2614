#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The textfile collector end to end: the command of lowlatd-metrics.service (as built,
with the file under a temporary directory) against a real lowlatd on a private bus and a
fake tree. The file it writes passes promtool check metrics; the first pass is counted in
lowlatd_posture_applied_settings_total and not as drift, a real drift afterwards is; a
reader never sees half a file; lowlatd stopped gives lowlatd_up 0 and exit 3 (which the
unit counts as success); a directory that cannot take the file gives 74 and leaves nothing
behind. Then the alert rules (conf/prometheus/lowlatd-alerts.yml) run under promtool test
rules on the series of these real files: LowlatdDrift stays quiet after the start and
fires after the real drift.

promtool (Debian: prometheus) is part of what the tests need (tools/packages.sh):
missing, it is a failure, not a skip.

Environment: LOWLATD, LOWLATCTL, LOWLATD_SOURCE_ROOT, LOWLATD_METRICS_UNIT (the built
lowlatd-metrics.service)."""

import os
import re
import shlex
import shutil
import stat
import subprocess
import threading

import busctl_harness as b
import lowlat_constants as C
import lowlat_harness as h

NAME, PATH, IFACE = C.BUS_NAME, C.BUS_PATH, C.BUS_INTERFACE
TEXTFILE = "/var/lib/prometheus/node-exporter/lowlatd.prom"
EXIT_OK, EXIT_UNKNOWN, EXIT_OUTPUT = 0, 3, 74

CONFIG = """\
[daemon]
scan_interval = 1s

[cpus]
isolated = 2-3

[sysctl]
net.core.somaxconn = 8192
"""


def promtool():
    return shutil.which("promtool")


def service_command(ctl, output):
    """The unit's ExecStart=, with the installed lowlatctl replaced by the built one and
    its --output file by output; the rest as the unit has it."""
    unit = os.environ.get("LOWLATD_METRICS_UNIT")
    if not unit or not os.path.isfile(unit):
        raise RuntimeError("LOWLATD_METRICS_UNIT does not name the built lowlatd-metrics.service (%r)" % unit)
    starts = re.findall(r"(?m)^ExecStart=(.*)$", h.read_text(unit))
    if len(starts) != 1:
        raise RuntimeError("%s has %d ExecStart= lines" % (unit, len(starts)))
    argv = shlex.split(starts[0])
    if os.path.basename(argv[0]) != "lowlatctl" or "--output=" + TEXTFILE not in argv:
        raise RuntimeError("unexpected ExecStart=%s" % starts[0])
    return [ctl] + [("--output=" + output if a == "--output=" + TEXTFILE else a) for a in argv[1:]]


def run(argv, address):
    env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=address)
    return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                          universal_newlines=True, timeout=h.scaled(60))


def samples(text):
    """{(name, labels text): value text} of a text exposition, comments skipped."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = re.match(r"([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+)$", line)
        if not m:
            raise ValueError("bad sample line %r" % line)
        out[(m.group(1), m.group(2) or "")] = m.group(3)
    return out


def value(text, name):
    v = samples(text).get((name, ""))
    return float(v) if v is not None else None


def check_file(t, path, what):
    """The file as node_exporter finds it: mode 0644, nothing else left in the directory,
    promtool check metrics content. Returns its text or None."""
    if not t.ok(os.path.isfile(path), "%s: %s written" % (what, os.path.basename(path))):
        return None
    mode = stat.S_IMODE(os.stat(path).st_mode)
    t.ok(mode == 0o644, "%s: the file is mode 0644 (node_exporter reads it as its own user)" % what, "%04o" % mode)
    left = sorted(set(os.listdir(os.path.dirname(path))) - {os.path.basename(path)})
    t.ok(not left, "%s: no temporary file left beside it" % what, repr(left))
    text = h.read_text(path)
    tool = promtool()
    if tool:
        p = subprocess.run([tool, "check", "metrics"], input=text, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, universal_newlines=True, timeout=h.scaled(60))
        t.ok(p.returncode == 0 and not p.stdout.strip(), "%s: promtool check metrics accepts the file" % what,
             "exit %d: %s" % (p.returncode, p.stdout))
    return text


def rules_test(first, second, third, tmp):
    """A promtool test file on the series of the three real files as Prometheus would
    scrape them: after the start (minutes 0-4), after the drift (5-19), after the restart
    (20-29). LowlatdDrift is quiet at 4m, fires at 6m, and is quiet again at 29m, when
    the drift is out of its 10-minute window and the restart's first pass, which set what
    drifted while lowlatd was down, is all there is; lowlatd down and failures never fire."""
    files = [samples(first)] * 5 + [samples(second)] * 15 + [samples(third)] * 10
    series = []
    for key in sorted(set.intersection(*(set(f) for f in files))):
        name, labels = key
        labels = labels[1:-1] if labels else ""
        labels = 'instance="h",job="node"' + ("," + labels if labels else "")
        series.append("      - series: '%s{%s}'\n        values: '%s'\n"
                      % (name, labels, " ".join(f[key] for f in files)))
    rules = os.path.join(h.source_root(), "conf", "prometheus", "lowlatd-alerts.yml")
    # ALERTS, the series Prometheus keeps of firing alerts, says whether one fires
    # without repeating its annotations here.
    text = ("rule_files:\n  - %s\nevaluation_interval: 1m\ntests:\n  - interval: 1m\n    input_series:\n%s"
            "    alert_rule_test:\n"
            "      - {eval_time: 4m, alertname: LowlatdDrift, exp_alerts: []}\n"
            "      - {eval_time: 29m, alertname: LowlatdDrift, exp_alerts: []}\n"
            "      - {eval_time: 29m, alertname: LowlatdDown, exp_alerts: []}\n"
            "      - {eval_time: 29m, alertname: LowlatdFailures, exp_alerts: []}\n"
            # The fake tree's counters stand still: no noise.
            "      - {eval_time: 29m, alertname: LowlatdIsolatedCpuDeviceIrq, exp_alerts: []}\n"
            "      - {eval_time: 29m, alertname: LowlatdIsolatedCpuTicks, exp_alerts: []}\n"
            "    promql_expr_test:\n"
            "      - expr: ALERTS{alertname=\"LowlatdDrift\",alertstate=\"firing\"}\n"
            "        eval_time: 6m\n"
            "        exp_samples:\n"
            "          - labels: 'ALERTS{alertname=\"LowlatdDrift\",alertstate=\"firing\",instance=\"h\",job=\"node\","
            "severity=\"warning\"}'\n"
            "            value: 1\n"
            % (rules, "".join(series)))
    path = os.path.join(tmp, "real.test.yml")
    h.write_text(path, text)
    return path


def noise_checks(t, host, text):
    """The noise families of a real lowlatd watching isolated CPUs 2-3 of the fake tree,
    against the counts the tree's /proc/interrupts holds (lowlat_harness writes them)."""
    s = samples(text)
    irq = next(n for n in host.irqs if n % 3)
    want = (irq * 7919 + 2 * 104729) % 100000
    key = ("lowlatd_isolated_cpu_interrupts_total",
           '{cpu="2",kind="irq",source="%d",name="%s"}' % (irq, host.irq_names[irq]))
    t.ok(s.get(key) == str(want), "noise: IRQ %d on CPU 2 is %d, named %s" % (irq, want, host.irq_names[irq]),
         "%r" % [k for k in s if k[0] == key[0]][:5])
    loc = [v for (name, labels), v in s.items()
           if name == "lowlatd_isolated_cpu_interrupts_total" and 'cpu="3",kind="timer",source="LOC"' in labels]
    t.ok(loc == ["3017"], "noise: LOC on CPU 3 is a timer series (3017)", repr(loc))
    cpus = {re.search(r'cpu="(\d+)"', labels).group(1) for (name, labels) in s
            if name.startswith("lowlatd_isolated_cpu_")}
    t.ok(cpus == {"2", "3"}, "noise: only the isolated CPUs 2-3 have series", repr(cpus))
    t.ok(s.get(("lowlatd_isolated_cpu_nohz_full", '{cpu="2"}')) in ("0", "1"),
         "noise: lowlatd_isolated_cpu_nohz_full per watched CPU")


class Rig:
    """What every phase uses: the fake tree, the private bus, the unit's command and its file."""

    def __init__(self, host, bus, bc, ctl, argv, out):
        self.host, self.bus, self.bc = host, bus, bc
        self.ctl, self.argv, self.out = ctl, argv, out

    def run_unit(self):
        return run(self.argv, self.bus.address)


def main(t):
    b.require_tools()
    ctl = os.environ.get("LOWLATCTL")
    if not ctl or not os.access(ctl, os.X_OK):
        h.skip("LOWLATCTL is not set to the lowlatctl binary")
    h.lowlatd_path()
    h.isolate_from_real_journal()
    t.ok(promtool(), "promtool is installed",
         "promtool is not installed (Debian: prometheus, listed in tools/packages.sh; tools/run-tests installs it)")

    host = h.FakeHost(ncpus=4, nirqs=200, isolated="2-3")
    textdir = os.path.join(host.tmp, "node-exporter")
    os.makedirs(textdir)
    out = os.path.join(textdir, "lowlatd.prom")
    argv = service_command(ctl, out)
    t.note("the unit's command: %s" % " ".join(shlex.quote(a) for a in argv))

    bus = b.PrivateBus(host.tmp, [h.policy_path()]).start()
    bc = b.Busctl(bus.address)
    d = h.Daemon(host, CONFIG, env=bus.env())
    d.wait_ready()
    if not t.ok(bc.wait_for_owner(NAME, h.scaled(5), alive=d.alive), "lowlatd is on the private bus",
                d.stderr_tail()):
        return
    rig = Rig(host, bus, bc, ctl, argv, out)

    first, props = check_after_start(t, rig)
    second = check_after_drift(t, d, rig, props)
    check_whole_file_reads(t, rig)
    check_fight(t, d, rig)
    d, third = check_restart(t, d, rig)

    if first and second and third and promtool():
        test_file = rules_test(first, second, third, host.tmp)
        p = subprocess.run([promtool(), "test", "rules", test_file], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, universal_newlines=True, timeout=h.scaled(120))
        t.ok(p.returncode == 0 and "SUCCESS" in p.stdout,
             "promtool test rules on these real series: LowlatdDrift quiet after the start, firing after the "
             "drift, quiet after the restart",
             p.stdout[-3000:])

    check_stopped(t, d, rig)
    bus.stop()


def check_after_start(t, rig):
    """The file after the first pass; returns (its text or None, the daemon's properties)."""
    host, bc, out = rig.host, rig.bc, rig.out
    p = rig.run_unit()
    t.ok(p.returncode == EXIT_OK and not p.stdout and not p.stderr,
         "the unit's command exits 0 and prints nothing", "exit %d\n%s%s" % (p.returncode, p.stdout, p.stderr))
    first = check_file(t, out, "after start")
    props = bc.get_all(NAME, PATH, IFACE)
    if first:
        t.ok(value(first, "lowlatd_up") == 1 and value(first, "lowlatd_drift_events_total") == 0 and
             value(first, "lowlatd_corrections_total") == 0 and
             value(first, "lowlatd_posture_applied_settings_total") == props["AppliedSettings"] > 0,
             "after start: the first pass is in lowlatd_posture_applied_settings_total (%s), "
             "drift and corrections are 0" % props["AppliedSettings"], first[-1500:])

    if first:
        noise_checks(t, host, first)
    return first, props


def check_after_drift(t, d, rig, props):
    host, bc, out = rig.host, rig.bc, rig.out
    host.set_sysctl("net.core.somaxconn", "4096")
    t.ok(d.poll_until(lambda: host.sysctl("net.core.somaxconn") == "8192" and
                      bc.get_all(NAME, PATH, IFACE)["Corrections"] == 1, h.scaled(5)),
         "a real drift is corrected")
    rig.run_unit()
    second = check_file(t, out, "after a drift")
    if second:
        t.ok(value(second, "lowlatd_drift_events_total") == 1 and value(second, "lowlatd_corrections_total") == 1 and
             value(second, "lowlatd_posture_applied_settings_total") == props["AppliedSettings"],
             "after a drift: one drift event, one correction, applied unchanged", second[-1500:])
    return second


def check_whole_file_reads(t, rig):
    """A reader never sees half a file: node_exporter reads it at any time."""
    out = rig.out
    stop = threading.Event()
    seen = {"reads": 0, "bad": []}
    last_line = "lowlatd_posture_applied_settings_total"

    def reader():
        while not stop.is_set():
            try:
                text = h.read_text(out)
            except FileNotFoundError:
                seen["bad"].append("missing")
                continue
            seen["reads"] += 1
            if not text.endswith("\n") or last_line not in text.rsplit("\n", 2)[-2]:
                seen["bad"].append(text[-200:])

    th = threading.Thread(target=reader)
    th.start()
    codes = [rig.run_unit().returncode for _ in range(15)]
    stop.set()
    th.join()
    t.ok(codes == [EXIT_OK] * 15 and seen["reads"] > 0 and not seen["bad"],
         "15 rewrites while a reader reads the file again and again: %d reads, every one a whole file"
         % seen["reads"], "exits %r\nbad reads %r" % (codes, seen["bad"][:3]))
    check_file(t, out, "after the rewrites")


def check_fight(t, d, rig):
    host, bc, out = rig.host, rig.bc, rig.out
    # Another writer flipping the sysctl back: five corrections within 60 s (the drift
    # above was the first) make a fight, which LowlatdFight alerts on.
    for _ in range(C.FIGHT_CORRECTIONS):
        if bc.get_all(NAME, PATH, IFACE)["Fights"]:
            break
        host.set_sysctl("net.core.somaxconn", "4096")
        d.poll_until(lambda: host.sysctl("net.core.somaxconn") == "8192", h.scaled(5))
    t.ok(d.poll_until(lambda: bc.get_all(NAME, PATH, IFACE)["Fights"] == 1, h.scaled(5)),
         "the writer that keeps flipping the sysctl back is one fight (Fights 1)",
         repr(bc.get_all(NAME, PATH, IFACE)))
    rig.run_unit()
    fought = check_file(t, out, "after a fight")
    if fought:
        t.ok(value(fought, "lowlatd_fights_total") == 1, "after a fight: lowlatd_fights_total 1", fought[-800:])


def check_restart(t, d, rig):
    """Returns the restarted daemon and the file after its first pass (or None)."""
    host, bc, bus, out = rig.host, rig.bc, rig.bus, rig.out
    # A restart that finds drift made while lowlatd was down: its first pass sets it, which
    # is applied, not drift (with restore_on_exit = no the rest of the posture stayed).
    t.stopped_cleanly(d)
    moved = [n for n in host.irqs if host.irq_cpus(n) <= {0, 1}][:10]
    for n in moved:
        host.set_irq_affinity(n, "2-3")
    d = h.Daemon(host, CONFIG, env=bus.env())
    d.wait_ready()
    t.ok(bc.wait_for_owner(NAME, h.scaled(5), alive=d.alive) and
         all(host.irq_cpus(n) <= {0, 1} for n in moved), "lowlatd restarted, and it moved the 10 IRQs back",
         d.stderr_tail())
    rig.run_unit()
    third = check_file(t, out, "after a restart")
    if third:
        t.ok(value(third, "lowlatd_drift_events_total") == 0 and value(third, "lowlatd_corrections_total") == 0 and
             value(third, "lowlatd_posture_applied_settings_total") == 10,
             "after a restart: the 10 IRQs its first pass moved back are applied settings, not drift", third[-1500:])
    return d, third


def check_stopped(t, d, rig):
    """lowlatd stopped, and a directory that cannot take the file."""
    host, out = rig.host, rig.out
    t.stopped_cleanly(d)
    p = rig.run_unit()
    t.ok(p.returncode == EXIT_UNKNOWN, "lowlatd stopped: exit 3 (SuccessExitStatus=3 in the unit)",
         "exit %d\n%s" % (p.returncode, p.stderr))
    down = check_file(t, out, "lowlatd stopped")
    if down:
        t.ok(samples(down) == {("lowlatd_up", ""): "0"}, "lowlatd stopped: the file says only lowlatd_up 0", down)

    gone = os.path.join(host.tmp, "no-such-dir", "lowlatd.prom")
    p = run([rig.ctl, "metrics", "--output=" + gone], rig.bus.address)
    t.ok(p.returncode == EXIT_OUTPUT and gone in p.stderr and not os.path.exists(os.path.dirname(gone)),
         "a directory that is not there: exit 74, the reason on stderr", "exit %d\n%s" % (p.returncode, p.stderr))


if __name__ == "__main__":
    h.main(main)
