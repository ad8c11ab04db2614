#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Host text other than IRQ names (#24 item 3; test_hostile_names.py has those): an
interface name, a [sysfs] file's value and a process's comm holding a byte that is not
UTF-8, ESC, U+009B (CSI) and U+202E (right-to-left override). The kernel takes any byte in an interface name
but '/', ':', white space and NUL; a sysfs file reads what its driver prints.

In a network namespace of the test's own (re-executed under unshare --net --mount): a veth
pair, one end named with those bytes, kept by [nic "h*"] txqueuelen; a fake tree whose
[sysfs] file holds them; the real lowlatd on a private bus and a fake journal socket.
With --observe, ListSettings answers, and lowlatctl list and status print valid UTF-8 with
no control or bidi character, the name and the value escaped; list --json gives the bus's
strings; lowlatctl check (Check() in the daemon, auditing the fake /proc) names a stray
whose comm holds those bytes, escaped. Then enforcing: a txqueuelen changed by hand and the hostile value written to the
file are put back, and their journal entries are valid UTF-8 with no control or bidi
character in any field.

Exit 77 with a reason: not root, unshare/ip/dbus-daemon missing, no network namespace or
veth."""

import json
import os
import subprocess

import busctl_harness as b
import lowlat_harness as h
import test_check as tc
import test_hostile_names as hn

NS_ENV = "LOWLAT_HOSTILE_TEXT_NETNS"
TOOLS = ("unshare", "ip", "mount", "umount", "dbus-daemon", "busctl")
# 9 bytes: within IFNAMSIZ, and no byte the kernel refuses in a name.
IFNAME = b"h\xff\x1b[2J\xe2\x80\xae"
PEER = "hpeer0"
VALUE = b"v\xff\x1b[2J\xc2\x9b1m\xe2\x80\xaeok"
KSM = "sys/kernel/mm/ksm/run"
# A comm as prctl(PR_SET_NAME) or /proc/PID/comm takes it: 11 bytes of the 15.
COMM = b"c\xff\x1b[2J\xc2\x9b\xe2\x80\xae"
COMM_PID = 4242
PLACEHOLDER = "commplaceholder"
WANT = 4321

CONFIG = """\
[daemon]
scan_interval = 1s
udev_source = kernel

[cpus]
isolated = 1

[nic "h*"]
txqueuelen = %d

[sysfs]
/%s = 0
""" % (WANT, KSM)


def ip(*args, check=True):
    """ip(8) with bytes arguments (the hostile name is not text)."""
    r = subprocess.run([b"ip"] + [a if isinstance(a, bytes) else a.encode() for a in args],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=h.scaled(30))
    if check and r.returncode != 0:
        raise RuntimeError("ip %r: exit %d: %s" % (args, r.returncode, r.stderr.decode(errors="replace")))
    return r


def txqlen(name):
    r = ip("-j", "link", "show", "dev", name)
    # ip(8) prints the name's ESC raw inside its JSON: strict=False takes it.
    return int(json.loads(r.stdout.decode("utf-8", errors="surrogateescape"), strict=False)[0]["txqlen"])


def ctl(bus, *args):
    return subprocess.run([os.environ["LOWLATCTL"]] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          env=dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=bus.address), timeout=h.scaled(60))


def check_clean(t, p, what, must_show=()):
    """Observe mode: the settings are drifted, which status and list answer with exit 1."""
    problem = hn.unsafe(p.stdout) or hn.unsafe(p.stderr)
    t.ok(p.returncode in (0, 1) and not problem,
         "%s: exit 0 or 1 (drifted), valid UTF-8, no raw control or bidi character" % what,
         "exit %d (%s)\n%r\n%r" % (p.returncode, problem, p.stdout[-1500:], p.stderr[-500:]))
    for text in must_show:
        t.ok(text in p.stdout, "%s shows %r" % (what, text), repr(p.stdout[-1500:]))


def add_hostile_process(host):
    """A stray process in the fake /proc (test_check's files) whose comm is COMM: its stat,
    status and comm hold the bytes."""
    tc.add_process(host, COMM_PID, PLACEHOLDER, "0-1", cpu=1)
    for rel in ("proc/%d/stat" % COMM_PID, "proc/%d/status" % COMM_PID, "proc/%d/task/%d/stat" % (COMM_PID, COMM_PID),
                "proc/%d/task/%d/status" % (COMM_PID, COMM_PID), "proc/%d/comm" % COMM_PID):
        with open(host.path(rel), "rb") as f:
            data = f.read()
        with open(host.path(rel), "wb") as f:
            f.write(data.replace(PLACEHOLDER.encode(), COMM))


def check_comm(t, view):
    """lowlatctl check: Check() audits the fake tree's processes in the daemon; the stray
    is named with its comm, escaped."""
    for args in (("check",), ("check", "--json")):
        p = ctl(view.bus, *args)
        problem = hn.unsafe(p.stdout) or hn.unsafe(p.stderr)
        t.ok(p.returncode in (0, 1, 2) and not problem and b"%d" % COMM_PID in p.stdout,
             "lowlatctl %s: a stray with a hostile comm is named, valid UTF-8, no raw control or bidi character"
             % " ".join(args), "exit %d (%s)\n%r\n%r" % (p.returncode, problem, p.stdout[-1500:], p.stderr[-500:]))
    p = ctl(view.bus, "check")
    t.ok(b"c\\xff\\x1b[2J\\u009b\\u202e" in p.stdout, "lowlatctl check shows the comm escaped",
         repr(p.stdout[-1500:]))


def observe_phase(t, host, view):
    d = h.Daemon(host, CONFIG, extra_args=["--observe"], env=view.env())
    d.wait_ready(h.scaled(30))
    view.wait_owner(d, h.scaled(10))
    try:
        rows = view.rows()
        error = ""
    except b.BusError as e:
        rows, error = [], str(e)
    t.ok(rows, "ListSettings answers with an interface name and a sysfs value that are not UTF-8", error)
    objects = [r[1] for r in rows if r[0] == "nic_txqueuelen"]
    t.ok(objects == ["h\\xff\x1b[2J\u202e/txqueuelen"] or
         sorted(objects) == sorted(["h\\xff\x1b[2J\u202e/txqueuelen", PEER + "/txqueuelen"]),
         "ListSettings: the interface's object is its name, the invalid byte as \\xff", repr(objects))
    observed = [r[3] for r in rows if r[0] == "sysfs"]
    t.ok(observed == ["v\\xff\x1b[2J\u009b1m\u202eok"], "ListSettings: the sysfs value, the invalid byte as \\xff",
         repr(observed))
    check_clean(t, ctl(view.bus, "list"), "lowlatctl list",
                must_show=(b"h\\xff\\x1b[2J\\u202e/txqueuelen", b"v\\xff\\x1b[2J\\u009b1m\\u202eok"))
    check_clean(t, ctl(view.bus, "status"), "lowlatctl status")
    check_comm(t, view)
    p = ctl(view.bus, "list", "--json")
    check_clean(t, p, "lowlatctl list --json")
    try:
        data = json.loads(p.stdout.decode("utf-8"))
        got = sorted(r.get("object") for r in data if r.get("kind") in ("nic_txqueuelen", "sysfs"))
    except (ValueError, AttributeError) as e:
        got = [repr(e)]
    t.ok("h\\xff\x1b[2J\u202e/txqueuelen" in got, "list --json: the object is the bus's string once parsed",
         repr(got))
    t.stopped_cleanly(d)


def enforce_phase(t, host, view, j):
    d = h.Daemon(host, CONFIG, env=view.env())
    d.wait_ready(h.scaled(30))
    t.ok(d.poll_until(lambda: txqlen(IFNAME) == WANT and host.read(KSM).strip() == "0", h.scaled(10)),
         "enforcing: the hostile interface's txqueuelen and the sysfs file are put in place")
    mark = j.mark()
    ip("link", "set", "dev", IFNAME, "txqueuelen", "77")
    with open(host.path(KSM), "wb") as f:
        f.write(VALUE + b"\n")
    t.ok(d.poll_until(lambda: txqlen(IFNAME) == WANT and host.read(KSM).strip() == "0", h.scaled(10)),
         "both drifts are put back")
    nic = j.wait_for(h.scaled(5), since=mark, MESSAGE_ID=h.MID["drift"], LOWLATD_KIND="nic_txqueuelen")
    ksm = j.wait_for(h.scaled(5), since=mark, MESSAGE_ID=h.MID["drift"], LOWLATD_KIND="sysfs")
    for what, e in (("the interface's drift", nic), ("the sysfs file's drift", ksm)):
        if not t.ok(e is not None, "%s is logged" % what, repr([x.get("MESSAGE") for x in j.entries(mark)][:10])):
            continue
        problems = ["%s %s" % (k, hn.unsafe(v, keep="")) for k, v in e.fields if hn.unsafe(v, keep="")]
        t.ok(not problems, "%s: every journal field valid UTF-8, no control or bidi character" % what,
             "; ".join(problems))
    if nic is not None:
        t.ok(b"h\\xff\\x1b[2J\\u202e" in dict(nic.fields).get("MESSAGE", b""),
             "the interface's MESSAGE names it escaped as a terminal shows it", repr(dict(nic.fields).get("MESSAGE")))
    if ksm is not None:
        t.ok(b"\\x1b[2J" in dict(ksm.fields).get("MESSAGE", b""), "the sysfs MESSAGE shows the value escaped",
             repr(dict(ksm.fields).get("MESSAGE")))
    t.stopped_cleanly(d)


def run(t):
    if not os.environ.get("LOWLATCTL"):
        h.skip("LOWLATCTL is not set to the lowlatctl binary")
    with h.netns(NS_ENV, TOOLS):
        h.write_text("/proc/sys/net/unix/max_dgram_qlen", "1024")
        try:
            ip("link", "add", IFNAME, "type", "veth", "peer", "name", PEER)
        except RuntimeError as e:
            h.skip("cannot create a veth with a name of such bytes in a network namespace: %s" % e)
        ip("link", "set", IFNAME, "up")
        ip("link", "set", PEER, "up")
        host = h.FakeHost(ncpus=2, nirqs=20, isolated="1")
        os.makedirs(os.path.dirname(host.path(KSM)), exist_ok=True)
        with open(host.path(KSM), "wb") as f:
            f.write(VALUE + b"\n")
        add_hostile_process(host)
        j = h.JournalSocket()
        view = b.SettingsView(host.tmp)
        try:
            observe_phase(t, host, view)
            enforce_phase(t, host, view, j)
        finally:
            view.stop()
            j.close()


if __name__ == "__main__":
    h.main(run)
