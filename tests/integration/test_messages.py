#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Messages a person can act on, through the real programs: a reload's errors one
`FILE:LINE: reason` a line (lowlatctl reload, status, status --json's array, the bus's
LastReloadErrors), durations through one reader everywhere (the configuration, measure
--duration, top -d) with bounds the reader takes back, a missing configuration named with
its reason, and an unknown option pointing at --help.

Environment: LOWLATD, LOWLATCTL, LOWLATD_SOURCE_ROOT (as every integration test)."""

import os
import re
import subprocess

import busctl_harness as b
import lowlat_constants as C
import lowlat_harness as h
from test_lowlatctl import Ctl, desc, lowlatctl_path, parse_json, parse_status_text, start_stack, wait_owner

NAME, PATH, IFACE = C.BUS_NAME, C.BUS_PATH, C.BUS_INTERFACE
EXIT_USAGE = 64   # lowlatctl(1)
EXIT_INVALID = 1  # lowlatd(8)

CONFIG = "[daemon]\nscan_interval = 1s\n\n[cpus]\nisolated = 2-3\n\n[sysctl]\nnet.core.somaxconn = 8192\n"
# Two errors, on lines 3 and 6.
TWO_ERRORS = "[daemon]\nscan_interval = 1s\nbogus_key = 1\n[cpus]\nisolated = 2-3\nisolcpus = 2-3\n"


def run(argv, env=None):
    return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                          errors="replace", env=env, timeout=h.scaled(60))


def no_bus_env(tmp):
    env = dict(os.environ)
    env["DBUS_SYSTEM_BUS_ADDRESS"] = "unix:path=" + os.path.join(tmp, "no-bus-here")
    return env


def test_unknown_option(t, ctl):
    tmp = h.make_tempdir()
    for argv, rc, what in (([h.lowlatd_path(), "--bogus"], EXIT_INVALID, "lowlatd --bogus"),
                           ([h.lowlatd_path(), "--check-config", "surplus"], EXIT_INVALID,
                            "lowlatd with a surplus argument"),
                           ([ctl, "--bogus"], EXIT_USAGE, "lowlatctl --bogus"),
                           ([ctl, "-x", "status"], EXIT_USAGE, "lowlatctl -x"),
                           ([ctl, "list", "surplus"], EXIT_USAGE, "lowlatctl list with a surplus argument")):
        p = run(argv, env=no_bus_env(tmp))
        t.ok(p.returncode == rc and "see --help" in p.stderr and p.stdout == "",
             "%s: exit %d, and the message says 'see --help'" % (what, rc), desc(p))


def test_missing_config(t):
    host = h.FakeHost(ncpus=4, nirqs=10, isolated="2-3")
    absent = os.path.join(host.tmp, "etc", "absent.conf")
    for args, what in ((["--check-config"], "--check-config"), (["--once", "--observe"], "--once --observe")):
        p = h.run_lowlatd(host, args, config_path=absent)
        lines = p.stderr.strip().splitlines()
        t.ok(p.returncode == EXIT_INVALID and len(lines) == 1 and absent in lines[0] and
             "No such file or directory" in lines[0] and "--config" in lines[0],
             "%s with a missing file: one line naming it, the reason, and --config" % what, desc(p))
        t.ok("invalid" not in p.stderr, "%s: a missing file is not called an invalid configuration" % what,
             desc(p))


def check_config(host, text):
    return h.run_lowlatd(host, ["--check-config"], config_path=h.write_config(host, text))


def range_bounds(stderr):
    m = re.search(r"is out of range \((\S+) to (\S+)\)", stderr)
    return m.groups() if m else None


def test_config_durations(t):
    host = h.FakeHost(ncpus=4, nirqs=10, isolated="2-3")
    for key, value in (("[daemon]\nscan_interval", "1h"), ("[daemon]\nscan_interval", "2m"),
                       ("[daemon]\nscan_interval", "1min 30s"), ("[daemon]\nscan_interval", "30"),
                       ("[noise]\nalert_interval", "1h"), ("[noise]\nalert_interval", "1h 30min"),
                       ("[noise]\nalert_interval", "2m")):
        p = check_config(host, "%s = %s\n" % (key, value))
        t.ok(p.returncode == 0, "%s = %s is accepted" % (key.split("\n")[1], value), desc(p))
    for key, value, bounds in (("[daemon]\nscan_interval", "61min", ("100ms", "1h")),
                               ("[daemon]\nscan_interval", "50ms", ("100ms", "1h")),
                               ("[noise]\nalert_interval", "25h", ("1s", "24h"))):
        name = key.split("\n")[1]
        p = check_config(host, "%s = %s\n" % (key, value))
        got = range_bounds(p.stderr)
        t.ok(p.returncode == EXIT_INVALID and got == bounds,
             "%s = %s: out of range (%s to %s)" % (name, value, bounds[0], bounds[1]), desc(p))
        for bound in got or ():
            p = check_config(host, "%s = %s\n" % (key, bound))
            t.ok(p.returncode == 0, "%s = %s, the bound as the message writes it, is accepted" % (name, bound),
                 desc(p))


def test_ctl_durations(t, ctl):
    env = no_bus_env(h.make_tempdir())
    # An unknown tool is refused after the options are read: what is said about --duration
    # is the reader's answer alone, and nothing is measured.
    for value in ("1m", "90s", "1h 30min", "2", "24h"):
        p = run([ctl, "measure", "--duration", value, "--cpus", "0", "--tool", "no-such-tool"], env=env)
        t.ok("--duration" not in p.stderr and "unknown tool" in p.stderr,
             "measure --duration %s is read as systemd reads it" % value, desc(p))
    for value, words in (("1.5s", "whole number of seconds"), ("0", "out of range (1s to 24h)"),
                         ("25h", "out of range (1s to 24h)"), ("10 parsecs", "is not a duration")):
        p = run([ctl, "measure", "--duration", value, "--cpus", "0", "--tool", "cyclictest"], env=env)
        t.ok(p.returncode == EXIT_USAGE and "--duration" in p.stderr and words in p.stderr,
             "measure --duration %s: exit 64, '%s'" % (value, words), desc(p))
    for value in ("500ms", "2m", "1.5", "1h"):
        p = run([ctl, "top", "-d", value, "--iterations", "1"], env=env)
        t.ok(p.returncode != EXIT_USAGE and "--interval" not in p.stderr,
             "top -d %s is read by the same reader" % value, desc(p))
    for value in ("50ms", "61min", "0"):
        p = run([ctl, "top", "-d", value], env=env)
        bounds = range_bounds(p.stderr)
        t.ok(p.returncode == EXIT_USAGE and bounds == ("100ms", "1h"),
             "top -d %s: exit 64, out of range (100ms to 1h)" % value, desc(p))
    for bound in ("100ms", "1h"):
        p = run([ctl, "top", "-d", bound, "--iterations", "1"], env=env)
        t.ok(p.returncode != EXIT_USAGE, "top -d %s, the bound as the message writes it, is accepted" % bound,
             desc(p))


def test_reload_errors(t, ctl_bin):
    b.require_tools()
    host = h.FakeHost(ncpus=4, nirqs=10, isolated="2-3", irq_affinity="0-1", default_affinity={0, 1})
    bus, bc, _, d = start_stack(t, host, CONFIG, monitor=False)
    ctl = Ctl(ctl_bin, bus.address, host.tmp)
    if not wait_owner(t, bc, d, "reload errors"):
        return
    d.rewrite_config(TWO_ERRORS)
    want = ["%s:3:" % d.config_path, "%s:6:" % d.config_path]
    p = ctl.run("reload")
    got = [l for l in p.stderr.splitlines() if l.startswith(d.config_path + ":")]
    t.ok(p.returncode == 1 and [l.split(" ")[0] for l in got] == want and "; " + d.config_path not in p.stderr,
         "reload with two errors: each FILE:LINE: reason on a line of its own", desc(p))
    pr = bc.get_all(NAME, PATH, IFACE)
    errors = pr.get("LastReloadErrors")
    t.ok(isinstance(errors, list) and [e.split(" ")[0] for e in errors] == want,
         "LastReloadErrors (as): the two errors, one element each", repr(errors))
    t.ok(pr["LastReloadError"].split("\n") == errors,
         "LastReloadError (s, as before): the same errors, one a line", repr(pr["LastReloadError"]))
    p = ctl.run("status", "--json")
    j = parse_json(t, p, "status --json after a reload with two errors")
    if j is not None:
        t.ok(j["last_reload_error"] == errors, "status --json: last_reload_error is the array of the errors",
             repr(j.get("last_reload_error")))
    f = parse_status_text(ctl.run("status").stdout)
    t.ok([l.split(" ")[0] for l in f.get("Last reload error", [])] == want,
         "status: Last reload error, one error a line", repr(f))
    d.rewrite_config(CONFIG)
    p = ctl.run("reload")
    pr = bc.get_all(NAME, PATH, IFACE)
    j = parse_json(t, ctl.run("status", "--json"), "status --json after a good reload")
    t.ok(p.returncode == 0 and pr["LastReloadErrors"] == [] and j is not None and j["last_reload_error"] == [],
         "a good reload: LastReloadErrors and last_reload_error empty", desc(p) + repr(pr["LastReloadErrors"]))
    t.stopped_cleanly(d)
    bus.stop()


def main(t):
    ctl = lowlatctl_path()
    h.lowlatd_path()
    h.isolate_from_real_journal()
    test_unknown_option(t, ctl)
    test_missing_config(t)
    test_config_durations(t)
    test_ctl_durations(t, ctl)
    test_reload_errors(t, ctl)


if __name__ == "__main__":
    h.main(main)
