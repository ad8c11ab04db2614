#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A large host's /proc/interrupts, and one too large to read, against lowlatd on a fake
tree with a private bus and a journal socket in a private mount namespace:

- 512 CPUs and 3,200 IRQs print a /proc/interrupts of about 18 MB, over the 16 MiB
  lowlatd once read at most (it then lost its noise counters and IRQ names with one log
  line): the watched CPUs' counters are counted, NoiseUnreadable is empty, the IRQs carry
  their names in ListSettings;
- a /proc/interrupts over the 256 MiB lowlatd reads (a sparse file): not silent. The
  journal gets one 'noise-unreadable' entry naming the file and the limit,
  NoiseUnreadable says the same, lowlatctl noise says so first and exits 3, lowlatctl
  metrics writes lowlatd_noise_readable 0;
  the IRQ names, which ListSettings then cannot read again, are said not read, once;
- the file readable again: NoiseUnreadable empty, lowlatd_noise_readable 1, and a log
  line that the counters are counted again, and one that the IRQ names are read again."""

import os
import subprocess

import busctl_harness as b
import lowlat_constants as C
import lowlat_harness as h

NAME, PATH, IFACE = C.BUS_NAME, C.BUS_PATH, C.BUS_INTERFACE
NCPUS, NIRQS = 512, 3200
OLD_LIMIT = 16 * 1024 * 1024
LIMIT_MIB = 256

CONFIG = """\
[daemon]
scan_interval = 1s

[cpus]
isolated = 2-3
"""


def lowlatctl(bus, *args):
    ctl = os.environ.get("LOWLATCTL")
    if not ctl:
        h.skip("LOWLATCTL is not set (path of the lowlatctl binary)")
    return subprocess.run([ctl] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=dict(os.environ, **bus.env()), timeout=h.scaled(60))


def unreadable(bc):
    v = bc.get_property(NAME, PATH, IFACE, "NoiseUnreadable")
    return v[1] if v and v[0] == "s" else None


def noise_rows(bc):
    out = bc.call(NAME, PATH, IFACE, "Noise")
    return out["data"][2] if out.get("type") == "tta(ussstd)" else []


def metric(bus, name):
    p = lowlatctl(bus, "metrics")
    for line in p.stdout.splitlines():
        if line.startswith(name + " "):
            return line.split()[1]
    return None


def list_settings(bc):
    """ListSettings, asked again while lowlatd answers Busy: the Noise() polls before it
    may spend the loop time lowlatd gives such calls in a second (lowlatd(8), Limits),
    which under ASan one re-read of an 18 MB /proc/interrupts nearly does alone."""
    got = []

    def ask():
        try:
            got.append(bc.call(NAME, PATH, IFACE, "ListSettings")["data"][0])
            return True
        except b.BusError as e:
            if "Too many calls" not in str(e):
                raise
            return False
    h.poll_until(ask, h.scaled(20))
    return got[0] if got else []


def check_large(t, host, bc):
    size = os.path.getsize(host.path("proc/interrupts"))
    t.ok(size > OLD_LIMIT, "%d CPUs and %d IRQs: /proc/interrupts is %.1f MB, over 16 MiB" % (NCPUS, NIRQS, size / 1e6))
    rows = []
    t.ok(h.poll_until(lambda: unreadable(bc) == "" and rows.extend(noise_rows(bc)) is None and rows, h.scaled(30)),
         "its counters are counted: NoiseUnreadable is empty and Noise() has rows", repr(unreadable(bc)))
    t.ok({r[0] for r in rows} == {2, 3} and any(r[2] == "LOC" for r in rows),
         "the rows are the watched CPUs 2 and 3, LOC among them", repr(rows[:6]))
    last = host.irq_table[-1]
    listed = list_settings(bc)
    labels = {r[1]: r[5] for r in listed if r[0] == "irq_affinity"}
    t.ok(labels.get(str(last.number)) == ", ".join(last.actions),
         "IRQ %d, the file's last, carries its name %r in ListSettings" % (last.number, ", ".join(last.actions)),
         repr(labels.get(str(last.number))))


def check_too_large(t, host, d, bus, bc, j):
    path = host.path("proc/interrupts")
    saved = host.read("proc/interrupts")
    mark = j.mark()
    # In place: lowlatd reads through an fd it keeps. Sparse: zeros, no disk.
    with open(path, "r+b") as f:
        f.truncate((LIMIT_MIB + 8) * 1024 * 1024)
    want = "/proc/interrupts is larger than the %d MiB lowlatd reads" % LIMIT_MIB
    t.ok(h.poll_until(lambda: unreadable(bc) == want, h.scaled(30)),
         "a /proc/interrupts of %d MiB: NoiseUnreadable says %r" % (LIMIT_MIB + 8, want), repr(unreadable(bc)))
    e = j.wait_for(h.scaled(10), since=mark, MESSAGE_ID="noise-unreadable")
    t.ok(e is not None and want in e.get("MESSAGE", "") and e.get("PRIORITY") == "4",
         "one 'noise-unreadable' journal entry with the reason, PRIORITY=4", repr(e))
    h.settle(3)
    t.ok(len(j.select(mark, MESSAGE_ID="noise-unreadable")) == 1, "said once, not at every scan",
         repr(j.select(mark, MESSAGE_ID="noise-unreadable")))
    p = lowlatctl(bus, "noise")
    t.ok(p.returncode == 3 and p.stdout.startswith("lowlatd cannot count the noise counters: " + want),
         "lowlatctl noise says so first and exits 3", "rc %d\n%s%s" % (p.returncode, p.stdout, p.stderr))
    p = lowlatctl(bus, "noise", "--json")
    t.ok(p.returncode == 3 and ('"unreadable":"%s"' % want) in p.stdout, "lowlatctl noise --json: \"unreadable\"",
         p.stdout[:400])
    t.ok(metric(bus, "lowlatd_noise_readable") == "0", "lowlatctl metrics: lowlatd_noise_readable 0")
    # The IRQ names too (#24 item 4): ListSettings reads them again (at most every 5 s), and
    # that they are not read is said once, not dropped without a word.
    names = "IRQ names are no longer read"

    def names_said():
        return [e for e in j.entries(mark) if names in e.get("MESSAGE", "")]

    def names_said_after_list():
        list_settings(bc)  # it reads the names at most every 5 s
        return names_said()
    t.ok(h.poll_until(names_said_after_list, h.scaled(15), interval=1.0),
         "the journal says the IRQ names are no longer read",
         repr([e.get("MESSAGE") for e in j.entries(mark)][-10:]))
    h.settle(5.5)
    list_settings(bc)
    h.settle(2)
    said = names_said()
    t.ok(len(said) == 1 and "%d MiB" % LIMIT_MIB in said[0].get("MESSAGE", ""),
         "once, naming the limit, over two reads of the names", repr([e.get("MESSAGE") for e in said]))
    t.ok(d.alive(), "lowlatd runs on")

    mark = j.mark()
    with open(path, "r+") as f:
        f.write(saved)
        f.truncate(len(saved))
    t.ok(h.poll_until(lambda: unreadable(bc) == "", h.scaled(30)),
         "the file readable again: NoiseUnreadable is empty", repr(unreadable(bc)))
    t.ok(metric(bus, "lowlatd_noise_readable") == "1", "lowlatd_noise_readable 1")
    t.ok(any("counted again" in e.get("MESSAGE", "") for e in j.entries(mark)),
         "the log says the counters are counted again", repr([e.get("MESSAGE") for e in j.entries(mark)][:10]))
    def names_again():
        list_settings(bc)  # it reads the names at most every 5 s
        return any("IRQ names are read from /proc/interrupts again" in e.get("MESSAGE", "") for e in j.entries(mark))
    t.ok(h.poll_until(names_again, h.scaled(15), interval=1.0),
         "and that the IRQ names are read again", repr([e.get("MESSAGE") for e in j.entries(mark)][-10:]))


def run(t):
    b.require_tools()
    h.lowlatd_path()
    h.enter_private_mount_namespace("the large-host noise test")
    j = h.JournalSocket()
    host = h.FakeHost(ncpus=NCPUS, nirqs=NIRQS, isolated="2-3", irq_affinity="0-1")
    bus = b.PrivateBus(host.tmp, [h.policy_path()]).start()
    bc = b.Busctl(bus.address)
    d = h.Daemon(host, CONFIG, env=bus.env())
    d.wait_ready(timeout=h.scaled(60))
    if not t.ok(bc.wait_for_owner(NAME, h.scaled(10), alive=d.alive), "lowlatd is on the private bus",
                d.stderr_tail()):
        return
    check_large(t, host, bc)
    check_too_large(t, host, d, bus, bc, j)
    t.stopped_cleanly(d)
    bus.stop()


if __name__ == "__main__":
    h.main(run)
