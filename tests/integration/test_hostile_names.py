#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""An IRQ whose name in /proc/interrupts holds a byte that is not UTF-8, ESC, U+009B (CSI)
and U+202E (right-to-left override): drivers name IRQs after network devices, and those
may hold any byte. Through the real daemon on a fake tree, a private bus and a fake
journal socket: ListSettings still answers (sd-bus refuses a string that is not UTF-8),
every terminal output (status, list, noise, top) and the journal's entry are valid UTF-8
with no control character and no bidi control a terminal would act on; list --json and
noise --json escape them as \\u escapes; metrics is valid UTF-8 that promtool accepts."""

import json
import os
import shutil
import subprocess

import busctl_harness as b
import lowlat_constants as C
import lowlat_harness as h

NAME, PATH, IFACE = C.BUS_NAME, C.BUS_PATH, C.BUS_INTERFACE
EXIT_UNKNOWN = 3

HOSTILE = b"eth\xff\x1b[2J\xc2\x9b31m\xe2\x80\xaeevil"
# On the bus: the byte that is not UTF-8 as \xff (lowlatd(8)); the rest is valid UTF-8.
ON_BUS = "eth\\xff\x1b[2J\u009b31m\u202eevil"
# On a terminal: every control escaped (lib/basic/util.h: text_escape()).
SHOWN = b"eth\\xff\\x1b[2J\\u009b31m\\u202eevil"
PLACEHOLDER = b"hostile-name-placeholder"

CONFIG = """\
[daemon]
scan_interval = 1s

[cpus]
isolated = 2-3
"""


def unsafe(data, keep="\n"):
    """What makes data unsafe to print: not UTF-8, or the control characters it holds."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        return "not UTF-8: %s" % e
    bad = sorted({"U+%04X" % ord(c) for c in text
                  if (ord(c) < 0x20 and c not in keep) or 0x7f <= ord(c) <= 0x9f
                  or ord(c) in (0x061c, 0x200e, 0x200f) or 0x2028 <= ord(c) <= 0x202e
                  or 0x2066 <= ord(c) <= 0x2069})
    return "holds %s" % ", ".join(bad) if bad else None


def name_irq(host, irq):
    """Renames irq in the fake /proc/interrupts to HOSTILE (bytes, which the harness's
    text writer cannot write)."""
    entry = next(i for i in host.irq_table if i.number == irq)
    entry.actions = [PLACEHOLDER.decode()]
    host._write_interrupts()
    path = host.path("proc/interrupts")
    with open(path, "rb") as f:
        data = f.read()
    if data.count(PLACEHOLDER) != 1:
        raise RuntimeError("the placeholder is not in %s once" % path)
    with open(path, "wb") as f:
        f.write(data.replace(PLACEHOLDER, HOSTILE))


def ctl_run(ctl, bus, *args):
    env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=bus.address)
    return subprocess.run([ctl] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                          timeout=h.scaled(60))


def check_output(t, p, what, want_rc=(0,), must_show=True):
    problem = unsafe(p.stdout) or unsafe(p.stderr)
    t.ok(p.returncode in want_rc and not problem,
         "%s: exit %s, valid UTF-8, no raw control or bidi character" % (what, "/".join(map(str, want_rc))),
         "exit %d (%s)\n%r\n%r" % (p.returncode, problem, p.stdout[-1500:], p.stderr[-500:]))
    if must_show:
        t.ok(SHOWN in p.stdout, "%s: the IRQ's name is shown escaped" % what, repr(p.stdout[-1500:]))


def main(t):
    b.require_tools()
    ctl = os.environ.get("LOWLATCTL")
    if not ctl or not os.access(ctl, os.X_OK):
        h.skip("LOWLATCTL is not set to the lowlatctl binary")
    h.lowlatd_path()
    h.enter_private_mount_namespace("the journal's entry for a hostile IRQ name")
    j = h.JournalSocket()

    host = h.FakeHost(ncpus=4, nirqs=200, isolated="2-3", irq_affinity="0-1")
    # An IRQ counted on every CPU (the fake counts are 0 where number % 3 == 0), so that
    # it is noise on the isolated ones too.
    irq = next(i for i in host.irqs if i % 3 and i > 16)
    name_irq(host, irq)

    bus = b.PrivateBus(host.tmp, [h.policy_path()]).start()
    bc = b.Busctl(bus.address)
    d = h.Daemon(host, CONFIG, env=bus.env())
    d.wait_ready()
    if not t.ok(bc.wait_for_owner(NAME, h.scaled(5), alive=d.alive), "lowlatd is on the private bus",
                d.stderr_tail()):
        return

    rows = []
    try:
        rows = bc.list_settings_labels(NAME, PATH, IFACE)
        error = ""
    except b.BusError as e:
        error = str(e)
    t.ok(rows, "ListSettings answers with an IRQ named with a byte that is not UTF-8", error)
    labels = [r[5] for r in rows if r[0] == "irq_affinity" and r[1] == str(irq)]
    t.ok(labels == [ON_BUS], "ListSettings: IRQ %d's label is its name, the invalid byte as \\xff" % irq,
         repr(labels))

    check_output(t, ctl_run(ctl, bus, "status"), "lowlatctl status", must_show=False)
    check_output(t, ctl_run(ctl, bus, "list"), "lowlatctl list")
    p = ctl_run(ctl, bus, "list", "--json")
    check_output(t, p, "lowlatctl list --json", must_show=False)
    try:
        data = json.loads(p.stdout.decode("utf-8"))
        labels = [r.get("label") for r in data if r.get("object") == str(irq)]
    except (ValueError, AttributeError) as e:
        labels = [repr(e)]
    t.ok(labels == [ON_BUS], "list --json: valid JSON, the label is the bus's string once parsed", repr(labels))

    # Noise: the IRQ's counts on CPUs 2-3 once the first scans have them.
    seen = h.poll_until(lambda: SHOWN in ctl_run(ctl, bus, "noise").stdout, h.scaled(10), alive=d.alive)
    t.ok(seen, "lowlatctl noise lists the IRQ by its escaped name")
    check_output(t, ctl_run(ctl, bus, "noise"), "lowlatctl noise")
    p = ctl_run(ctl, bus, "noise", "--json")
    check_output(t, p, "lowlatctl noise --json", must_show=False)
    check_output(t, ctl_run(ctl, bus, "top", "--iterations=1"), "lowlatctl top --iterations=1")

    # Prometheus label values escape only backslash, quote and line feed (text format
    # 0.0.4) and take any UTF-8: the name is the bus's string, as the JSON's is.
    p = ctl_run(ctl, bus, "metrics")
    problem = None
    try:
        p.stdout.decode("utf-8")
    except UnicodeDecodeError as e:
        problem = str(e)
    t.ok(p.returncode == 0 and not problem, "lowlatctl metrics: exit 0, valid UTF-8",
         "exit %d (%s): %r" % (p.returncode, problem, p.stderr))
    label = b'name="' + ON_BUS.replace("\\", "\\\\").encode() + b'"'
    t.ok(label in p.stdout, "lowlatctl metrics: the IRQ's name label is the bus's string, its backslash escaped",
         repr(p.stdout[-1500:]))
    t.ok(b"\nlowlatd_up 1\n" in b"\n" + p.stdout, "lowlatctl metrics: lowlatd_up 1", repr(p.stdout[:300]))
    tool = shutil.which("promtool")
    if t.ok(tool, "promtool is installed", "Debian: prometheus (tools/packages.sh)"):
        q = subprocess.run([tool, "check", "metrics"], input=p.stdout, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=h.scaled(60))
        t.ok(q.returncode == 0 and not q.stdout.strip(), "promtool check metrics accepts the output",
             "exit %d: %r" % (q.returncode, q.stdout))

    check_journal(t, d, j, host, irq)
    t.stopped_cleanly(d)
    bus.stop()


def check_journal(t, d, j, host, irq):
    mark = j.mark()
    host.set_irq_affinity(irq, "2-3")
    t.ok(d.poll_until(lambda: host.irq_cpus(irq) == {0, 1}, h.scaled(5)), "IRQ %d drift corrected" % irq)
    e = j.wait_for(h.scaled(5), since=mark, MESSAGE_ID=h.MID["drift"], LOWLATD_OBJECT=str(irq))
    if not t.ok(e is not None, "the drift of IRQ %d is logged" % irq, repr(j.entries(mark)[:10])):
        return
    raw = dict(e.fields)
    problems = ["%s %s" % (k, unsafe(v, keep="")) for k, v in e.fields if unsafe(v, keep="")]
    t.ok(not problems, "the journal entry: every field valid UTF-8, no control or bidi character",
         "; ".join(problems))
    t.ok(SHOWN in raw.get("MESSAGE", b""), "MESSAGE names the IRQ escaped as a terminal shows it",
         repr(raw.get("MESSAGE")))
    t.ok(raw.get("LOWLATD_IRQ_NAME") == SHOWN, "LOWLATD_IRQ_NAME is the escaped name", repr(raw.get("LOWLATD_IRQ_NAME")))
    t.ok(raw.get("LOWLATD_IRQ_NAME_RAW") == HOSTILE.hex().encode(),
         "LOWLATD_IRQ_NAME_RAW is the name's bytes in hex", repr(raw.get("LOWLATD_IRQ_NAME_RAW")))


if __name__ == "__main__":
    h.main(main)
