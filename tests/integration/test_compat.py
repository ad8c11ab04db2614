#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""lowlatctl against a lowlatd of another version, on a private system bus with the shipped
policy. fakelowlatd (tests/tools) plays that lowlatd; first its interface is checked
against the real lowlatd's (the same members with the same signatures, the same Features),
so that what it takes away or adds is all that differs:
  - an older lowlatd (no Features property, no Noise, Check or Restore): lowlatctl says
    "lowlatd VERSION has no noise counters; upgrade it" and the like, never D-Bus's
    UnknownMethod, and what that lowlatd has still works (status, list, metrics);
  - the same with the policy file of its day, which lets no one but root call Noise: the
    bus's AccessDenied is told apart from "needs root" by the daemon's introspection, and
    for a lowlatd with Features by that property;
  - a newer lowlatd (a method, a property, a feature, and a field at the end of every
    struct more than this lowlatctl knows): every verb reads what it knows and shows it;
  - lowlatctl --version: its own version and the daemon's, with its features;
  - measure against a lowlatd that keeps measurements but not their histograms (no
    RecordMeasurementHistogram, no LastMeasurementHistogram): the summary is recorded, the
    histogram quietly not sent, and metrics is what promtool accepts without the histogram;
    against one that has them, both are sent.

Environment: LOWLATD, LOWLATCTL, FAKELOWLATD (meson sets them), LOWLATD_SOURCE_ROOT."""

import json
import os
import re
import select
import shutil
import subprocess

import busctl_harness as b
import lowlat_constants as C
import lowlat_harness as h
from lowlat_harness import cleanup
from test_lowlatctl import promtool_check_metrics
from test_measure_metrics import FAKE_CYCLICTEST, report_path

NAME, PATH, IFACE = C.BUS_NAME, C.BUS_PATH, C.BUS_INTERFACE
OLD_VERSION = "0.1.0-230-g8bbec47"
NEW_VERSION = "9.9.9-newer"
# A lowlatd from before the noise counters, the audit and Restore (and Features).
OLDER = ["Features", "Noise", "NoiseGate", "NoiseReads", "NoiseCPUs", "NoiseUnreadable", "Check", "Restore",
         "CpuDmaLatencyHeld", "CpuDmaLatencySystemUSec", "Diff", "ReloadIfUnchanged", "RecordMeasurementHistogram",
         "Condition", "ConditionReasons", "RebootRequired",
         "LastMeasurementHistogram"]
# What a person must never be shown instead of words.
RAW = ("org.freedesktop.DBus.Error", "Unknown method", "Rejected send message")


class FakeLowlatd:
    def __init__(self, bus, tmp, *args):
        self.bus, self.args = bus, list(args)
        self.log = os.path.join(tmp, "fakelowlatd.log")
        self.proc = None

    def start(self):
        fake = os.environ.get("FAKELOWLATD")
        if not fake or not os.access(fake, os.X_OK):
            h.skip("FAKELOWLATD is not set to the fakelowlatd binary (meson sets it)")
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen([fake] + self.args, env=dict(os.environ, **self.bus.env()),
                                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=log)
        cleanup.DAEMONS.append(self)
        r, _, _ = select.select([self.proc.stdout], [], [], h.scaled(10))
        line = self.proc.stdout.readline().decode(errors="replace").strip() if r else ""
        if line != "READY":
            self.kill()
            raise RuntimeError("fakelowlatd did not start (printed %r): %s" % (line, h.read_text(self.log)))
        return self

    def kill(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        if self in cleanup.DAEMONS:
            cleanup.DAEMONS.remove(self)


class Ctl:
    """lowlatctl on a bus, as root or as uid 65534 (a copy it can reach)."""

    def __init__(self, tmp):
        self.binary = os.environ.get("LOWLATCTL")
        if not self.binary or not os.access(self.binary, os.X_OK):
            h.skip("LOWLATCTL is not set to the lowlatctl binary (meson sets it)")
        self.nobody_binary = os.path.join(tmp, "lowlatctl")
        shutil.copy2(self.binary, self.nobody_binary)
        os.chmod(self.nobody_binary, 0o755)

    def run(self, bus, *args, user=None):
        argv = ([self.binary] if user is None else b.unprivileged() + [self.nobody_binary]) + list(args)
        return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                              errors="replace", env=dict(os.environ, **bus.env()), timeout=h.scaled(60))


def desc(p):
    return "exit %d\nstdout:\n%s\nstderr:\n%s" % (p.returncode, p.stdout[-3000:], p.stderr[-3000:])


def raw_words(p):
    return [w for w in RAW if w in p.stdout + p.stderr]


def shape(intro):
    """An interface's members: {("method"|"property"|"signal", name): signature and flags}."""
    out = {}
    for kind, members in (("method", intro["methods"]), ("property", intro["properties"]),
                          ("signal", intro["signals"])):
        for name, sig in members.items():
            out[(kind, name)] = sig
    return out


def check_fake_is_lowlatd(t, tmp, bus, bc):
    """fakelowlatd with nothing taken away has no member the real lowlatd lacks, each with
    the real one's signature (and flags), and the same Features."""
    host = h.FakeHost(ncpus=4, nirqs=10, isolated="2-3")
    d = h.Daemon(host, "[cpus]\nisolated = 2-3\n", env=bus.env())
    d.wait_ready()
    bc.require_owner(NAME, h.scaled(10), alive=d.alive)
    real = shape(bc.introspect(NAME, PATH)[IFACE])
    real_features = bc.get_property(NAME, PATH, IFACE, "Features")
    t.stopped_cleanly(d)
    fake = FakeLowlatd(bus, tmp).start()
    got = shape(bc.introspect(NAME, PATH)[IFACE])
    fake_features = bc.get_property(NAME, PATH, IFACE, "Features")
    fake.kill()
    wrong = {k: (v, real.get(k)) for k, v in got.items() if real.get(k) != v}
    t.ok(got and not wrong, "fakelowlatd's %d members are lowlatd's, with its signatures" % len(got),
         "fake vs real: %r" % wrong)
    t.ok(real_features[0] == "as" and real_features == fake_features and "noise" in real_features[1],
         "Features: %s, the same on both" % " ".join(real_features[1]), "%r vs %r" % (real_features, fake_features))


def check_older(t, ctl, bus):
    for user, who in ((None, "root"), (b.NOBODY, "uid 65534")):
        for verb, lacking, rc in (("noise", "no noise counters", 3), ("check", "no host audit (check)", 3)):
            p = ctl.run(bus, verb, user=user)
            want = "lowlatctl: lowlatd %s has %s; upgrade it\n" % (OLD_VERSION, lacking)
            t.ok(p.returncode == rc and p.stderr == want and not raw_words(p),
                 "older lowlatd, %s: lowlatctl %s says \"%s\" (exit %d)" % (who, verb, want.strip(), rc), desc(p))
    p = ctl.run(bus, "restore")
    t.ok(p.returncode == 1 and p.stderr == "lowlatctl: lowlatd %s has no restore of the original values; "
         "upgrade it\n" % OLD_VERSION and not raw_words(p), "older lowlatd, root: lowlatctl restore says so", desc(p))
    p = ctl.run(bus, "restore", user=b.NOBODY)
    t.ok(p.returncode == 1 and p.stderr.startswith("lowlatctl: restore needs root") and not raw_words(p),
         "older lowlatd, uid 65534: lowlatctl restore needs root (that comes first)", desc(p))
    for args in (("diff",), ("reload", "--if-unchanged=0123456789abcdef")):
        p = ctl.run(bus, *args)
        t.ok(p.returncode == 1 and p.stderr == "lowlatctl: lowlatd %s has no dry run of a reload (diff); upgrade it\n"
             % OLD_VERSION and not raw_words(p), "older lowlatd, root: lowlatctl %s says so" % " ".join(args),
             desc(p))

    p = ctl.run(bus, "status")
    t.ok(p.returncode == 1 and re.search(r"(?m)^ +Version: %s$" % re.escape(OLD_VERSION), p.stdout) and
         "drifted" in p.stdout, "older lowlatd: status works (its version, the drifted IRQ, exit 1)", desc(p))
    t.ok(re.search(r"(?m)^ +cpu_dma_latency: 0 us \(held\)$", p.stdout),
         "older lowlatd, without CpuDmaLatencyHeld: its request asked for is taken as held, as it always was",
         desc(p))
    t.ok(not re.search(r"(?m)^ +(Condition|Reboot required): ", p.stdout) and
         not p.stdout.split("\n")[0].endswith(("applied", "degraded")),
         "older lowlatd, without Condition: status says nothing of a condition rather than guess", desc(p))
    p = ctl.run(bus, "list", "--json")
    rows = json.loads(p.stdout) if p.returncode in (0, 1) else []
    t.ok([(r["kind"], r["state"]) for r in rows] == [("sysctl", "ok"), ("irq_affinity", "drifted")],
         "older lowlatd: list --json has its two settings", desc(p))
    p = ctl.run(bus, "metrics")
    t.ok(p.returncode == 0 and "lowlatd_up 1" in p.stdout and "lowlatd_isolated_cpu" not in p.stdout and
         "lowlatd_condition" not in p.stdout and "lowlatd_reboot_required" not in p.stdout,
         "older lowlatd: metrics without the noise and condition families", desc(p))
    p = ctl.run(bus, "--version")
    want = ["lowlatctl " + C.VERSION,
            "lowlatd %s (no Features property: older than this lowlatctl; upgrade it)" % OLD_VERSION]
    t.ok(p.returncode == 0 and p.stdout.splitlines() == want, "older lowlatd: --version: %s" % " / ".join(want),
         desc(p))


def older_policy(tmp):
    """The shipped policy as it was before Noise(): no allow rule for it."""
    text = h.read_text(h.policy_path())
    rule = re.compile(r'\s*<allow send_destination="%s"\s+send_interface="%s"\s+send_member="Noise"/>'
                      % (re.escape(NAME), re.escape(IFACE)))
    if len(rule.findall(text)) != 1:
        raise RuntimeError("no single allow rule for Noise in %s" % h.policy_path())
    path = os.path.join(tmp, "org.lowlatd1-older.conf")
    h.write_text(path, rule.sub("", text))
    return path


def check_older_policy(t, ctl, tmp):
    """uid 65534 calling Noise is refused by the bus itself (AccessDenied, as for a
    privileged method): lowlatctl asks the daemon whether it has Noise at all."""
    bus = b.PrivateBus(os.path.join(tmp, "older-policy"), [older_policy(tmp)]).start()
    want = "lowlatctl: lowlatd %s has no noise counters; upgrade it\n" % OLD_VERSION
    for args, what in ((OLDER, "introspection, no Features"), (["Noise"], "its Features")):
        fake = FakeLowlatd(bus, tmp, "--version", OLD_VERSION, *[a for m in args for a in ("--without", m)]).start()
        p = ctl.run(bus, "noise", user=b.NOBODY)
        t.ok(p.returncode == 3 and p.stderr == want and not raw_words(p),
             "older lowlatd and its policy, uid 65534: noise is refused by the bus, and lowlatctl says the daemon "
             "lacks it (%s)" % what, desc(p))
        fake.kill()
    fake = FakeLowlatd(bus, tmp, "--version", NEW_VERSION).start()
    p = ctl.run(bus, "noise", user=b.NOBODY)
    t.ok(p.returncode == 3 and "the D-Bus policy for %s (org.lowlatd1.conf) is not the running lowlatd's" % NAME
         in p.stderr and not raw_words(p), "a lowlatd with Noise behind a policy that refuses it: the policy is "
         "not lowlatd's", desc(p))
    fake.kill()
    bus.stop()


def check_newer(t, ctl, bus):
    p = ctl.run(bus, "status", "--json")
    st = json.loads(p.stdout) if p.returncode == 1 else {}
    t.ok(st.get("version") == NEW_VERSION and [(r["object"], r["observed"], r["state"]) for r in
                                              st.get("settings_not_ok", [])] == [("24", "0-3", "drifted")],
         "newer lowlatd: status --json reads its settings' known fields", desc(p))
    p = ctl.run(bus, "list", "--json")
    rows = json.loads(p.stdout) if p.returncode == 1 else []
    t.ok([tuple(r.get(k) for k in ("kind", "object", "desired", "observed", "state", "label")) for r in rows] ==
         [("sysctl", "net.core.somaxconn", "8192", "8192", "ok", None),
          ("irq_affinity", "24", "0-1", "0-3", "drifted", "eth0-TxRx-0")],
         "newer lowlatd: list --json, every known field of both rows", desc(p))
    p = ctl.run(bus, "check", "--json")
    findings = json.loads(p.stdout) if p.returncode == 1 else []
    t.ok([(f["id"], f.get("details")) for f in findings] == [("power.governor", ["cpu2", "cpu3"])],
         "newer lowlatd: check --json, the finding and its detail lines", desc(p))
    p = ctl.run(bus, "noise", "--json")
    noise = json.loads(p.stdout) if p.returncode == 0 else {}
    t.ok([(s["cpu"], s["kind"], s["source"], s["count"]) for s in noise.get("sources", [])] == [(2, "irq", "24", 42)],
         "newer lowlatd: noise --json, its source", desc(p))
    p = ctl.run(bus, "metrics")
    t.ok(p.returncode == 0 and re.search(r'(?m)^lowlatd_isolated_cpu_\w+\{[^}]*cpu="2"', p.stdout),
         "newer lowlatd: metrics with its noise", desc(p))
    p = ctl.run(bus, "--version")
    lines = p.stdout.splitlines()
    t.ok(p.returncode == 0 and len(lines) == 2 and lines[1].startswith("lowlatd %s (features: " % NEW_VERSION) and
         "time-travel" in lines[1] and "lacks" not in lines[1], "newer lowlatd: --version lists its features",
         desc(p))
    t.ok(not any(raw_words(ctl.run(bus, v)) for v in ("status", "list", "noise", "check")),
         "newer lowlatd: no D-Bus error anywhere")


def measure_with_fake_tool(ctl, bus, tmp):
    """lowlatctl measure --cpus 0-1 as root, cyclictest on PATH replaying a recorded report
    (test_measure_metrics's fake: asleep on the CPUs, nothing at real-time priority)."""
    bindir = os.path.join(tmp, "bin-fake-cyclictest")
    if not os.path.isdir(bindir):
        os.makedirs(bindir)
        fake = os.path.join(bindir, "cyclictest")
        h.write_text(fake, FAKE_CYCLICTEST.replace("REPORT", repr(report_path())))
        os.chmod(fake, 0o755)
    env = dict(os.environ, PATH=bindir + ":" + os.environ.get("PATH", "/usr/bin:/bin"), **bus.env())
    return subprocess.run([ctl.binary, "measure", "--cpus", "0-1", "--duration", "1"], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, errors="replace", env=env,
                          timeout=h.scaled(60))


def check_measure_histogram(t, ctl, bus, tmp):
    online = h.read_text("/sys/devices/system/cpu/online").strip()
    if not re.match(r"0-([1-9]|\d\d+)", online):
        t.skip("measure against a lowlatd without histograms", "CPUs 0 and 1 are not both online (%s)" % online)
        return
    fake = FakeLowlatd(bus, tmp, "--version", OLD_VERSION, "--without", "RecordMeasurementHistogram",
                       "--without", "LastMeasurementHistogram").start()
    mark = len(h.read_text(fake.log))
    p = measure_with_fake_tool(ctl, bus, tmp)
    log = h.read_text(fake.log)[mark:]
    t.ok(p.returncode == 0 and "not recorded" not in p.stderr and not raw_words(p) and
         "RecordMeasurement() called" in log and "RecordMeasurementHistogram" not in log,
         "lowlatd without histograms: measure records the summary and sends no histogram, quietly",
         desc(p) + "\nfakelowlatd:\n" + log)
    p = ctl.run(bus, "metrics")
    ok, why = promtool_check_metrics(p.stdout)
    t.ok(p.returncode == 0 and ok and "lowlatd_measurement_latency_seconds" not in p.stdout and not raw_words(p),
         "lowlatd without histograms: metrics without the histogram, which promtool accepts", desc(p) + why)
    fake.kill()

    fake = FakeLowlatd(bus, tmp, "--version", NEW_VERSION).start()
    mark = len(h.read_text(fake.log))
    p = measure_with_fake_tool(ctl, bus, tmp)
    log = h.read_text(fake.log)[mark:]
    t.ok(p.returncode == 0 and "not recorded" not in p.stderr and "RecordMeasurement() called" in log and
         "RecordMeasurementHistogram() called" in log,
         "lowlatd with histograms: measure sends the summary, then the histogram", desc(p) + "\nfakelowlatd:\n" + log)
    fake.kill()


def run(t):
    b.require_tools()
    h.lowlatd_path()
    h.isolate_from_real_journal()
    tmp = h.make_tempdir()
    ctl = Ctl(tmp)
    bus = b.PrivateBus(tmp, [h.policy_path()]).start()
    bc = b.Busctl(bus.address)
    check_fake_is_lowlatd(t, tmp, bus, bc)

    fake = FakeLowlatd(bus, tmp, "--version", OLD_VERSION, *[a for m in OLDER for a in ("--without", m)]).start()
    check_older(t, ctl, bus)
    fake.kill()
    check_older_policy(t, ctl, tmp)

    fake = FakeLowlatd(bus, tmp, "--version", NEW_VERSION, "--newer").start()
    check_newer(t, ctl, bus)
    fake.kill()
    check_measure_histogram(t, ctl, bus, tmp)
    bus.stop()


if __name__ == "__main__":
    h.main(run)
