#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""lowlatctl when lowlatd cannot answer, in words a person can act on:
  - no system bus (no socket; a socket nobody listens on): the socket's path and
    "systemctl start lowlatd" (which starts D-Bus too: the unit wants dbus.socket);
  - a bus without lowlatd: "lowlatd is not running" with the same command;
  - status says either on stdout, "LOWLATD UNKNOWN: REASON" (with --json
    {"verdict": "unknown", "reason": ...}), exit 3 as lowlatctl(1) documents, so that a
    monitoring check never gets an empty answer;
  - uid 65534 calling a privileged verb (reload, reapply, restore, diff, reload
    --if-unchanged) on a private bus with the shipped policy: "VERB needs root", never the
    bus's "Rejected send message ...".

Environment: LOWLATD, LOWLATCTL (meson sets them), LOWLATD_SOURCE_ROOT."""

import json
import os
import re
import shutil
import socket
import subprocess

import busctl_harness as b
import lowlat_constants as C
import lowlat_harness as h

NAME, PATH, IFACE = C.BUS_NAME, C.BUS_PATH, C.BUS_INTERFACE
EXIT_UNKNOWN = 3
START = "systemctl start lowlatd"
RAW = ("org.freedesktop.DBus.Error", "Rejected send message", "matched rules", "No such file or directory")


def lowlatctl(address, *args, user=None, binary=None):
    ctl = binary or os.environ.get("LOWLATCTL")
    argv = ([ctl] if user is None else b.unprivileged() + [ctl]) + list(args)
    return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                          errors="replace", env=dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=address),
                          timeout=h.scaled(60))


def desc(p):
    return "exit %d\nstdout:\n%s\nstderr:\n%s" % (p.returncode, p.stdout[-3000:], p.stderr[-3000:])


def raw_words(p):
    return [w for w in RAW if w in p.stdout + p.stderr]


def check_unknown(t, address, what, reason):
    """status and status --json say reason (a regex) on stdout, exit 3, nothing on stderr;
    list says it on stderr."""
    p = lowlatctl(address, "status")
    m = re.fullmatch(r"LOWLATD UNKNOWN: (.*)\n", p.stdout)
    t.ok(p.returncode == EXIT_UNKNOWN and m and re.fullmatch(reason, m.group(1)) and p.stderr == "" and
         not raw_words(p), "%s: status prints LOWLATD UNKNOWN and why on stdout, exits 3" % what, desc(p))
    p = lowlatctl(address, "status", "--json")
    try:
        js = json.loads(p.stdout)
    except ValueError:
        js = {}
    t.ok(p.returncode == EXIT_UNKNOWN and sorted(js) == ["reason", "verdict"] and js["verdict"] == "unknown" and
         re.fullmatch(reason, js["reason"]) and m and js["reason"] == m.group(1),
         "%s: status --json is {\"verdict\": \"unknown\", \"reason\": ...}, the same reason" % what, desc(p))
    p = lowlatctl(address, "list")
    t.ok(p.returncode == EXIT_UNKNOWN and p.stdout == "" and re.fullmatch("lowlatctl: " + reason + "\n", p.stderr),
         "%s: list says the same on stderr, exits 3" % what, desc(p))


def check_no_bus(t, tmp):
    path = os.path.join(tmp, "no-such-socket")
    check_unknown(t, "unix:path=" + path, "no bus socket",
                  r"cannot connect to the system bus: there is no socket %s \(D-Bus is not running; %s starts it "
                  r"too\)" % (re.escape(path), START))
    # A socket that is there but that nobody listens on: a D-Bus that died.
    path = os.path.join(tmp, "dead-socket")
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(path)
    check_unknown(t, "unix:path=" + path, "a bus socket nobody listens on",
                  r"cannot connect to the system bus at %s: nobody listens there \(is D-Bus running\? %s starts it "
                  r"too\)" % (re.escape(path), START))
    dead.close()
    p = lowlatctl("unix:path=" + path, "--version")
    t.ok(p.returncode == 0 and p.stdout.splitlines()[0] == "lowlatctl " + C.VERSION and
         p.stdout.splitlines()[1].startswith("lowlatd: version unknown: cannot connect to the system bus"),
         "no bus: --version says its own version and why lowlatd's is unknown, exit 0", desc(p))


def check_no_daemon(t, bus):
    check_unknown(t, bus.address, "a bus without lowlatd",
                  r"lowlatd is not running \(%s is not on the system bus at %s\); start it: %s"
                  % (re.escape(NAME), re.escape(bus.socket), START))
    for verb in ("reload", "noise"):
        p = lowlatctl(bus.address, verb)
        t.ok(p.returncode == EXIT_UNKNOWN and "lowlatctl: lowlatd is not running" in p.stderr and START in p.stderr,
             "a bus without lowlatd: %s says lowlatd is not running, exits 3" % verb, desc(p))


def check_not_root(t, tmp, bus):
    host = h.FakeHost(ncpus=4, nirqs=10, isolated="2-3")
    d = h.Daemon(host, "[cpus]\nisolated = 2-3\n\n[sysctl]\nnet.core.somaxconn = 8192\n", env=bus.env())
    d.wait_ready()
    bc = b.Busctl(bus.address)
    bc.require_owner(NAME, h.scaled(10), alive=d.alive)
    # uid 65534 needs a copy it can reach (the build tree may be private).
    ctl = os.path.join(tmp, "lowlatctl")
    shutil.copy2(os.environ["LOWLATCTL"], ctl)
    os.chmod(ctl, 0o755)
    last = bc.get_all(NAME, PATH, IFACE)["LastReloadUSec"]
    for verb, method in (("reload", "Reload"), ("reapply", "Reapply"), ("restore", "Restore")):
        p = lowlatctl(bus.address, verb, user=b.NOBODY, binary=ctl)
        want = "lowlatctl: %s needs root: lowlatd lets only root call %s (this is uid %d)\n" % (verb, method, b.NOBODY)
        t.ok(p.returncode == 1 and p.stderr == want and not raw_words(p),
             "uid %d: lowlatctl %s says it needs root, exit 1" % (b.NOBODY, verb), desc(p))
    # The privileged verbs that send arguments: Diff and ReloadIfUnchanged.
    conf = os.path.join(tmp, "proposed.conf")
    with open(conf, "w") as f:
        f.write("[cpus]\nisolated = 2-3\n")
    os.chmod(conf, 0o644)
    os.chmod(tmp, 0o755)
    for argv, what, method in ((["diff", conf], "diff FILE", "Diff"),
                               (["reload", "--if-unchanged", "0123456789abcdef"], "reload --if-unchanged",
                                "ReloadIfUnchanged")):
        p = lowlatctl(bus.address, *argv, user=b.NOBODY, binary=ctl)
        want = "lowlatctl: %s needs root: lowlatd lets only root call %s (this is uid %d)\n" % (argv[0], method,
                                                                                                 b.NOBODY)
        t.ok(p.returncode == 1 and p.stderr == want and not raw_words(p),
             "uid %d: lowlatctl %s says it needs root, exit 1" % (b.NOBODY, what), desc(p))
    t.ok(bc.get_all(NAME, PATH, IFACE)["LastReloadUSec"] == last and host.sysctl("net.core.somaxconn") == "8192",
         "uid %d: nothing was reloaded nor restored" % b.NOBODY)
    p = lowlatctl(bus.address, "status", user=b.NOBODY, binary=ctl)
    t.ok(p.returncode == 0 and p.stdout.startswith("LOWLATD OK: "), "uid %d: status still works" % b.NOBODY,
         desc(p))
    t.stopped_cleanly(d)


def run(t):
    b.require_tools()
    h.lowlatd_path()
    if not os.environ.get("LOWLATCTL"):
        h.skip("LOWLATCTL is not set (path of the lowlatctl binary)")
    h.isolate_from_real_journal()
    tmp = h.make_tempdir()
    check_no_bus(t, tmp)
    bus = b.PrivateBus(tmp, [h.policy_path()]).start()
    check_no_daemon(t, bus)
    check_not_root(t, tmp, bus)
    bus.stop()


if __name__ == "__main__":
    h.main(run)
