#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""lowlatctl noise, top and measure against a real lowlatd on a fake tree that isolates no
CPU but watches 2-3 ([noise] cpus = 2-3), on a private bus:

- noise: the table ranked by rate and --json, matching Noise() as busctl reads it;
- top: in a detached tmux session of fixed size (the real terminal emulator: escapes,
  raw mode, alternate screen), the screen read with capture-pane: the CPUs, a source's
  rate from successive Noise() totals, a new source highlighted, q and Ctrl-C exit 0 with
  the terminal restored (tmux's own alternate_on and cursor_flag, and stty); plain frames
  when stdout is a pipe;
- measure: cyclictest (never rtla: its tracer would change this host's tracing state) on
  CPU 1 for 2 s, with --laptop so /dev/cpu_dma_latency is left alone; the report, the
  result in status (text and JSON) and on the bus (busctl), RecordMeasurement refused to
  an unprivileged caller; the refusals: no tool (69) and no isolated CPUs without --cpus
  (78).

Environment: LOWLATD, LOWLATCTL, LOWLATD_SOURCE_ROOT."""

import json
import os
import re
import shutil
import subprocess
import time

import busctl_harness as b
import lowlat_constants as C
import lowlat_harness as h
from test_noise import interrupts_text, softirqs_text

NAME, PATH, IFACE = C.BUS_NAME, C.BUS_PATH, C.BUS_INTERFACE
EXIT_NO_TOOL, EXIT_NO_CPUS = 69, 78   # lowlatctl(1), measure

CONFIG = """\
[daemon]
scan_interval = 1s

[noise]
cpus = 2-3
"""


def lowlatctl_path():
    p = os.environ.get("LOWLATCTL")
    if not p or not os.access(p, os.X_OK):
        h.skip("LOWLATCTL is not set or not executable")
    return p


class World:
    def __init__(self, t):
        self.t = t
        self.ctl = lowlatctl_path()
        self.sanitizer_reports = []
        self.host = h.FakeHost(ncpus=4, nirqs=20, isolated="", irq_affinity="0-1")
        self.state = {
            "online": [0, 1, 2, 3],
            "irqs": {42: ({0: 1000, 2: 7}, "eth0-TxRx-0")},
            "arch": {"LOC": {0: 5000, 1: 5000, 2: 90, 3: 80}, "RES": {2: 4}, "NMI": {}, "CAL": {}},
            "soft": {"TIMER": {0: 800, 2: 30, 3: 2}, "NET_RX": {2: 12}},
        }
        self.publish()
        self.bus = b.PrivateBus(self.host.tmp, [h.policy_path()]).start()
        self.bc = b.Busctl(self.bus.address)
        self.d = h.Daemon(self.host, CONFIG, env=self.bus.env())
        self.d.wait_ready()
        self.up = t.ok(self.bc.wait_for_owner(NAME, h.scaled(5), alive=self.d.alive),
                       "lowlatd watching CPUs 2-3 of a host without isolated CPUs is on the bus",
                       self.d.stderr_tail())

    def publish(self):
        s = self.state
        self.host.write("proc/interrupts", interrupts_text(s["online"], s["irqs"], s["arch"]))
        self.host.write("proc/softirqs", softirqs_text([0, 1, 2, 3], s["soft"]))

    def env(self, **extra):
        env = dict(os.environ)
        env.update(self.bus.env())
        env.update(extra)
        return env

    def run(self, *args, env=None, timeout=60):
        p = subprocess.run([self.ctl] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True, errors="replace", env=env or self.env(),
                           timeout=h.scaled(timeout))
        self.sanitizer_reports.extend("lowlatctl %s: %s" % (" ".join(args), l) for l in p.stderr.splitlines()
                                      if any(pat in l for pat in h.SANITIZER_PATTERNS))
        return p


def desc(p):
    return "exit %d\nstdout:\n%s\nstderr:\n%s" % (p.returncode, p.stdout[-3000:], p.stderr[-3000:])


# ---------------------------------------------------------------------------------------

def test_noise(t, w):
    # Wait for a rate: IRQ 42 on CPU 2 moves by 300 between two scans.
    w.state["irqs"][42][0][2] = 307
    w.publish()
    w.d.poll_until(lambda: any(r[0] == 2 and r[2] == "42" and r[5] > 0
                               for r in w.bc.call(NAME, PATH, IFACE, "Noise")["data"][2]), h.scaled(5))
    p = w.run("noise")
    lines = p.stdout.splitlines()
    t.ok(p.returncode == 0 and lines and lines[0].split() == ["CPU", "KIND", "SOURCE", "DESCRIPTION", "COUNT",
                                                               "RATE/S"],
         "lowlatctl noise: exit 0, a table CPU KIND SOURCE DESCRIPTION COUNT RATE/S", desc(p))
    rows = [l.split() for l in lines[1:] if re.match(r"\d+\s+(irq|timer|ipi|softirq|ctxsw)\s", l)]
    t.ok(rows and rows[0][:3] == ["2", "irq", "42"] and "eth0-TxRx-0" in lines[1] and rows[0][-2] == "307",
         "ranked by rate: IRQ 42 on CPU 2 (eth0-TxRx-0, count 307) first", desc(p))
    t.ok({r[0] for r in rows} == {"2", "3"}, "only the watched CPUs 2 and 3", desc(p))
    t.ok(re.search(r"\d+ sources on CPUs 2-3; rates over lowlatd's last scan interval", p.stdout),
         "a footer with the number of sources, the CPUs and what the rates cover", desc(p))
    t.ok(re.search(r"^Gate: off: not the live host \(--root\); \d+ scans read /proc/interrupts, 0 did without it\.$",
                   p.stdout, re.M),
         "and how the counters are read: NoiseGate and NoiseReads (a fake tree: no gate)", desc(p))
    p = w.run("noise", "--no-legend")
    t.ok(p.returncode == 0 and not p.stdout.startswith("CPU") and "sources on" not in p.stdout,
         "--no-legend: rows only", desc(p))
    # A scan may come between lowlatctl's call and busctl's: compare with the one before
    # and the one after.
    before = w.bc.call(NAME, PATH, IFACE, "Noise")["data"]
    p = w.run("noise", "--json")
    try:
        j = json.loads(p.stdout)
    except ValueError as e:
        t.ok(False, "noise --json is valid JSON", "%s\n%s" % (e, desc(p)))
        return
    bus = w.bc.call(NAME, PATH, IFACE, "Noise")["data"]
    t.ok(j.get("gate", {}).get("mode") == "off: not the live host (--root)" and j["gate"]["full_reads"] >= 1 and
         j["gate"]["gated_reads"] == 0, "noise --json: the gate, as NoiseGate and NoiseReads say", desc(p))
    t.ok(set(j) == {"sampled_usec", "interval_usec", "watched_cpus", "unreadable", "gate", "sources"} and
         j["watched_cpus"] == w.bc.get_property(NAME, PATH, IFACE, "NoiseCPUs")[1] and j["unreadable"] == "" and
         any(j["interval_usec"] == n[1] and
             {(s["cpu"], s["kind"], s["source"]) for s in j["sources"]} == {(r[0], r[1], r[2]) for r in n[2]}
             for n in (before, bus)),
         "noise --json: the same watched CPUs and sources as NoiseCPUs and Noise() on the bus, \"unreadable\" empty",
         "%s\nNoise() before: %r\nafter: %r" % (desc(p), before[:2], bus[:2]))
    rates = [s["rate"] for s in j["sources"]]
    t.ok(rates == sorted(rates, reverse=True), "noise --json: ranked by rate", repr(rates))
    p = w.run("noise", "--json", "--state=ok")
    t.ok(p.returncode == 64, "noise --state: a usage error (64)", desc(p))


# ---------------------------------------------------------------------------------------

class Tmux:
    """A tmux server of our own (-L), a detached session of fixed size."""

    def __init__(self, tmpdir, name):
        self.sock = "lowlat-%d-%s" % (os.getpid(), name)
        self.session = name
        self.tmpdir = tmpdir

    def cmd(self, *args, check=True):
        p = subprocess.run(["tmux", "-L", self.sock, "-f", "/dev/null"] + list(args), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, universal_newlines=True, errors="replace", timeout=30)
        if check and p.returncode != 0:
            raise RuntimeError("tmux %s: %s" % (" ".join(args), p.stderr.strip()))
        return p.stdout

    def start(self, shell_command, env):
        # The command runs under sh inside the pane: after lowlatctl exits the shell
        # records its exit status and the terminal's modes, then waits to be read.
        self.cmd("new-session", "-d", "-s", self.session, "-x", "100", "-y", "30",
                 "env " + " ".join("%s='%s'" % kv for kv in env.items()) + " sh -c '%s'" % shell_command)
        self.cmd("set-option", "-t", self.session, "remain-on-exit", "on")

    def screen(self):
        return self.cmd("capture-pane", "-p", "-t", self.session)

    def screen_with_attributes(self):
        return self.cmd("capture-pane", "-p", "-e", "-t", self.session)

    def flag(self, name):
        return self.cmd("display-message", "-p", "-t", self.session, "#{%s}" % name).strip()

    def keys(self, *keys):
        self.cmd("send-keys", "-t", self.session, *keys)

    def kill(self):
        self.cmd("kill-server", check=False)


def top_session(t, w, name, quit_keys, what):
    tmp = w.host.tmp
    status_file = os.path.join(tmp, "top-%s.status" % name)
    stty_file = os.path.join(tmp, "top-%s.stty" % name)
    tm = Tmux(tmp, name)
    env = {"DBUS_SYSTEM_BUS_ADDRESS": w.bus.address, "TERM": "xterm", "PATH": os.environ.get("PATH", "")}
    try:
        # trap: the shell outlives the Ctrl-C sent to the pane's process group (a trap,
        # unlike an ignored signal, is reset to the default in lowlatctl at exec).
        tm.start("trap : INT; %s top --interval 0.5; echo $? > %s; stty -a > %s; sleep 60" % (w.ctl, status_file, stty_file),
                 env)
        t.ok(h.poll_until(lambda: "lowlatctl top" in tm.screen(), h.scaled(10)),
             "%s: the header is on the screen" % what, tm.screen())
        scr = tm.screen()
        t.ok(tm.flag("alternate_on") == "1" and tm.flag("cursor_flag") == "0",
             "%s: on the alternate screen, cursor hidden" % what,
             "alternate_on=%s cursor_flag=%s" % (tm.flag("alternate_on"), tm.flag("cursor_flag")))
        t.ok(re.search(r"Watched: 2-3", scr) and re.search(r"^2 ", scr, re.M) and re.search(r"^3 ", scr, re.M),
             "%s: CPUs 2 and 3 are shown" % what, scr)
        t.ok(all(len(l) <= 100 for l in scr.splitlines()) and len(scr.splitlines()) <= 30,
             "%s: the frame fits the 100x30 terminal" % what, scr)
        if name == "q":
            # A steady 200 per refresh on IRQ 42, CPU 2: the rate shows and updates.
            deadline = time.monotonic() + h.scaled(10)
            rates = []
            while time.monotonic() < deadline:
                w.state["irqs"][42][0][2] += 200
                w.publish()
                h.settle(0.25)
                m = re.search(r"^2\s+\+?\s*([\d.]+)\s+(\d+)\s+(\d+)\s+irq\s+42\s", tm.screen(), re.M)
                if m:
                    rates.append((float(m.group(1)), int(m.group(3))))
                if len({r[1] for r in rates}) >= 3 and any(r[0] > 0 for r in rates):
                    break
            t.ok(len({r[1] for r in rates}) >= 3 and any(300 <= r[0] <= 1000 for r in rates),
                 "top: IRQ 42's count updates on the screen and its rate is ~800/s (200 per 0.25 s)",
                 repr(rates[-8:]) + "\n" + tm.screen())
            # A new source: CAL on CPU 3, never seen before, shown highlighted.
            w.state["arch"]["CAL"] = {3: 5}
            w.publish()
            ok = h.poll_until(lambda: re.search(r"^3\s+\+.*ipi\s+CAL", tm.screen(), re.M), h.scaled(5))
            attr = tm.screen_with_attributes()
            line = next((l for l in attr.splitlines() if "CAL" in l), "")
            t.ok(ok and ("\x1b[1m" in line or "\x1b[7m" in line or re.search(r"\x1b\[[0-9;]*7[0-9;]*m", line)),
                 "top: a new source (CAL on CPU 3) is marked + and shown bold/reverse", repr(line))
            # SIGWINCH: a smaller terminal gets a smaller frame. 8 lines are fewer than the
            # sources: the frame fills the screen, and must not scroll its header off (the
            # 6.12 guest's screen did, when a frame's last line ended in a newline).
            tm.cmd("resize-window", "-t", tm.session, "-x", "60", "-y", "8")
            h.settle(1.2)
            scr = tm.screen()
            lines = scr.splitlines()
            t.ok(all(len(l) <= 60 for l in lines) and lines and lines[0].startswith("lowlatctl top") and
                 any("more" in l for l in lines),
                 "top: resized to 60x8, the frame follows (SIGWINCH, TIOCGWINSZ), fills the screen with "
                 "its header still on the first line", scr)
        tm.keys(*quit_keys)
        t.ok(h.poll_until(lambda: os.path.exists(status_file) and os.path.getsize(status_file) > 0, h.scaled(5)),
             "%s: lowlatctl top exits" % what, tm.screen())
        rc = h.read_text(status_file).strip() if os.path.exists(status_file) else "?"
        t.ok(rc == "0", "%s: exit status 0" % what, rc)
        h.poll_until(lambda: os.path.exists(stty_file) and os.path.getsize(stty_file) > 0, h.scaled(5))
        stty = h.read_text(stty_file) if os.path.exists(stty_file) else ""
        t.ok(re.search(r"(^|\s)icanon(\s|$)", stty) and re.search(r"(^|\s)echo(\s|$)", stty) and
             tm.flag("alternate_on") == "0" and tm.flag("cursor_flag") == "1",
             "%s: the terminal is restored (canonical mode, echo, main screen, cursor shown)" % what,
             "alternate_on=%s cursor_flag=%s\n%s" % (tm.flag("alternate_on"), tm.flag("cursor_flag"), stty))
    finally:
        tm.kill()


def test_top(t, w):
    if not shutil.which("tmux"):
        t.skip("top in tmux", "tmux is not installed (tools/packages.sh lists it)")
    else:
        top_session(t, w, "q", ["q"], "top, q")
        top_session(t, w, "c", ["C-c"], "top, Ctrl-C")
    # Not a terminal: plain frames, no escapes, --iterations ends it.
    p = w.run("top", "--iterations", "2", "-d", "0.3")
    frames = [f for f in p.stdout.split("\n\n") if "lowlatctl top" in f]
    t.ok(p.returncode == 0 and len(frames) == 2 and "\x1b" not in p.stdout and
         all(re.search(r"^2\s+\+?\s*[\d.]+\s+\d+\s+\d+\s+irq\s+42\s+eth0-TxRx-0", f, re.M) and
             re.search(r"^3\s", f, re.M) for f in frames),
         "top with stdout a pipe: --iterations 2 prints two plain frames and exits 0", desc(p))
    p = w.run("top", "--interval", "0")
    t.ok(p.returncode == 64, "top --interval 0: a usage error", desc(p))


# ---------------------------------------------------------------------------------------

def test_measure(t, w):
    cyclictest = shutil.which("cyclictest")
    if not cyclictest:
        t.skip("measure with cyclictest", "cyclictest is not installed (rt-tests, in tools/packages.sh)")
        return
    # PATH with cyclictest alone: measure must pick it, and can never reach rtla, whose
    # timerlat tracer would change this host's global tracing state.
    bindir = os.path.join(w.host.tmp, "bin-cyclictest")
    os.makedirs(bindir)
    os.symlink(cyclictest, os.path.join(bindir, "cyclictest"))
    empty = os.path.join(w.host.tmp, "bin-empty")
    os.makedirs(empty)

    p = w.run("measure", "--duration", "2", env=w.env(PATH=bindir))
    t.ok(p.returncode == EXIT_NO_CPUS and "no isolated CPUs" in p.stderr and "--cpus" in p.stderr,
         "measure on a host without isolated CPUs and no --cpus: refused, exit 78, saying --cpus", desc(p))
    p = w.run("measure", "--duration", "2", "--cpus", "1", env=w.env(PATH=empty))
    t.ok(p.returncode == EXIT_NO_TOOL and "no latency tool" in p.stderr and "rt-tests" in p.stderr,
         "measure with no tool installed: refused, exit 69, naming the packages", desc(p))
    p = w.run("measure", "--cpus", "1", "--tool", "oslat", env=w.env(PATH=bindir))
    t.ok(p.returncode == EXIT_NO_TOOL and "oslat is not installed" in p.stderr,
         "measure --tool oslat without oslat: exit 69", desc(p))

    # Watch CPU 1 too, so that the noise counted during the run is there to show: LOC
    # and RES on CPU 1 move while cyclictest runs.
    w.d.rewrite_config(CONFIG.replace("cpus = 2-3", "cpus = 1-3"))
    p = w.run("reload")
    t.ok(p.returncode == 0 and w.d.poll_until(
        lambda: any(r[0] == 1 for r in w.bc.call(NAME, PATH, IFACE, "Noise")["data"][2]), h.scaled(5)),
        "reloaded with [noise] cpus = 1-3", desc(p))

    before = h.read_text("/proc/sys/kernel/ftrace_enabled") if os.path.exists("/proc/sys/kernel/ftrace_enabled") \
        else None
    proc = subprocess.Popen([w.ctl, "measure", "--duration", "2", "--cpus", "1"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, universal_newlines=True, errors="replace",
                            env=w.env(PATH=bindir))
    h.settle(0.8)
    w.state["arch"]["LOC"][1] += 1000
    w.state["arch"]["RES"][1] = 5
    w.publish()
    out, err = proc.communicate(timeout=h.scaled(60))
    p = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
    t.ok(p.returncode == 0, "measure --duration 2 --cpus 1 with cyclictest: exit 0", desc(p))
    m = re.search(r"^\s+1\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+>?([\d.]+)\s+([\d.]+)", p.stdout, re.M)
    t.ok(m and int(m.group(1)) >= 1000 and float(m.group(2)) <= float(m.group(3)) <= float(m.group(5)) and
         float(m.group(4)) <= float(m.group(5)),
         "the report: CPU 1 with ~2000 samples and min <= avg <= max, p99 <= max", desc(p))
    t.ok("measured by cyclictest" in p.stdout and re.search(r"CPU 1:\n\s+\d+-\s*\d+ us\s+\d+ #", p.stdout),
         "the report names the tool and has CPU 1's histogram", desc(p))
    t.ok(re.search(r"^\s+1\s.*\sLOC 1000, RES 5$", p.stdout, re.M),
         "beside CPU 1: the noise counted during the run (LOC 1000, RES 5)", desc(p))
    if before is not None:
        t.ok(h.read_text("/proc/sys/kernel/ftrace_enabled") == before, "the host's tracing state is untouched")

    st = w.run("status")
    # The duration kept is what cyclictest measured (its samples times its 1 ms interval):
    # a little under the 2 s asked, the threads starting after its timer does.
    t.ok(re.search(r"Last measurement: cyclictest, .*, (1\.[5-9]|2\.\d) s", st.stdout) and
         re.search(r"CPU 1: min [\d.]+, avg [\d.]+, p99 >?[\d.]+, max [\d.]+ us", st.stdout),
         "lowlatctl status shows the last measurement", desc(st))
    js = w.run("status", "--json")
    try:
        lm = json.loads(js.stdout).get("last_measurement") or {}
    except ValueError:
        lm = {}
    t.ok(lm.get("tool") == "cyclictest" and [c["cpu"] for c in lm.get("cpus", [])] == [1] and
         1.5e6 <= lm.get("duration_usec", 0) <= 30e6,
         "status --json: last_measurement with CPU 1", desc(js))
    typ, val = w.bc.get_property(NAME, PATH, IFACE, "LastMeasurement")
    t.ok(typ == "(stta(uttttttb)a(ussst))" and val[0] == "cyclictest" and val[3] and val[3][0][0] == 1 and
         val[3][0][1] >= 1000 and sorted((n[0], n[2], n[4]) for n in val[4]) == [(1, "LOC", 1000), (1, "RES", 5)],
         "busctl get-property LastMeasurement: (tool, when, duration, per-CPU figures, noise)", repr((typ, val)))
    nobody = b.Busctl(w.bus.address, user=b.NOBODY)
    p2 = nobody.run("call", NAME, PATH, IFACE, "RecordMeasurement", "stta(uttttttb)a(ussst)", "cyclictest", "1", "1000000", "1", "1", "1", "1", "1", "1", "1", "0", "0", "0")
    t.ok(p2.returncode != 0 and ("AccessDenied" in p2.stderr or "denied" in p2.stderr.lower()),
         "RecordMeasurement is refused to an unprivileged caller", p2.stderr)
    p3 = w.bc.run("call", NAME, PATH, IFACE, "RecordMeasurement", "stta(uttttttb)a(ussst)",
                  "cyclictest", "1", "1000000", "1", "1", "5", "10", "1", "20", "9", "0", "0", "0")
    t.ok(p3.returncode != 0 and "min <= avg <= max" in p3.stderr,
         "RecordMeasurement with p99 above max: refused with the reason", p3.stderr)
    typ, val2 = w.bc.get_property(NAME, PATH, IFACE, "LastMeasurement")
    t.ok(val2 == val, "and the last good measurement stays", repr(val2))


def run(t):
    b.require_tools()
    h.lowlatd_path()
    lowlatctl_path()
    h.isolate_from_real_journal()
    w = World(t)
    if not w.up:
        return
    test_noise(t, w)
    test_top(t, w)
    test_measure(t, w)
    t.ok(not w.sanitizer_reports, "lowlatctl: no sanitizer reports", "\n".join(w.sanitizer_reports[:20]))
    t.stopped_cleanly(w.d)
    w.bus.stop()


if __name__ == "__main__":
    h.main(run)
