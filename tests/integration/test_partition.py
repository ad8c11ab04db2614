#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""[cpus] partition: a transient slice made an isolated cpuset partition, against a fake PID 1.

The rig is test_slices.py's: a private dbus-daemon carrying lowlatd's object and
tests/tools/fakepid1, which answers StartTransientUnit and StopUnit as systemd does and
makes or removes the slice's cgroup under the fake root, with cpuset.cpus.partition reading
"member" as a new cgroup's does. The fake tree stands in for the kernel: what it cannot do
(refuse a write, change cpuset.cpus.isolated by itself) the test writes by hand. The scan
runs every 60 s, so a correction within seconds came from an event.

Checked: the first pass confines system.slice, user.slice, init.scope and machine.slice
(which exists here) without [cpus] slices, then starts isolated.slice with AllowedCPUs= the
isolated CPUs and writes "isolated"; the original ("absent") is recorded. "member" written
by someone is put back at once; the kernel's "isolated invalid (REASON)" is reported with
its reason and repaired; other CPUs given to the slice (AllowedCPUs=) are drift, put back
through PID 1, seen by its signal or by inotify on the cgroup's cpuset.cpus; a partition
6.12 left partial (cpuset.cpus.isolated of the root
short of the slice's CPUs) is reported as such; the slice stopped by someone is started
again; PID 1 refusing is a failure with PID 1's words; restore stops the slice and gives
the other units their CPUs back; observe mode sends PID 1 nothing and writes nothing; a
write the cgroup file refuses is a failure with what the file says; without the cpuset
controller or the partition file the setting is unsupported, saying why. lowlatctl diff of a
file that adds the key names the slice to be started, its partition and the units it
confines, of one that drops it the slice stopped and the units' CPUs given back; lowlatctl
check reports the partition isolated, and per CPU which mechanism is in force from where."""

import json
import os
import shutil
import subprocess

import busctl_harness as bh
import lowlat_constants as C
import lowlat_harness as h
from lowlat_harness.daemon import _daemon_env
import test_slices as ts

UNITS = ["system.slice=0-3", "user.slice", "init.scope", "machine.slice"]
SLICE = "isolated.slice"
PARTITION = "sys/fs/cgroup/%s/cpuset.cpus.partition" % SLICE
INVALID = "isolated invalid (Cpu list in cpuset.cpus not exclusive)"

CONFIG = """\
[daemon]
scan_interval = 60s

[cpus]
isolated = 2-3
partition = isolated.slice

[sysctl]
net.core.busy_poll = 50
"""

CONFIG_NONE = CONFIG.replace("partition = isolated.slice\n", "")


def partition_row(bc):
    rows = [r for r in bc.list_settings(C.BUS_NAME, C.BUS_PATH, C.BUS_INTERFACE) if r[0] == "cpuset_partition"]
    return rows[0] if len(rows) == 1 else rows


def partition_file(host):
    """The partition file's text, None when the slice has no cgroup."""
    path = host.path(PARTITION)
    return h.read_text(path).strip() if os.path.exists(path) else None


def reapply(bc):
    ts.call_void(bc, C.BUS_NAME, C.BUS_PATH, C.BUS_INTERFACE, "Reapply")


class Rig:
    def __init__(self, host, bus, bc, fake):
        self.host, self.bus, self.bc, self.fake = host, bus, bc, fake
        self.want = {"system.slice": "0-1", "user.slice": "0-1", "init.scope": "0-1", "machine.slice": "0-1"}


def run(t):
    h.isolate_from_real_journal()
    bh.require_tools()
    fake_path = os.environ.get("FAKEPID1")
    if not fake_path or not os.access(fake_path, os.X_OK):
        h.skip("FAKEPID1 is not set to the fakepid1 binary (meson sets it)")
    if not os.path.isfile(ts.SYSTEMD_POLICY):
        h.skip("systemd's bus policy %s is not installed (package systemd)" % ts.SYSTEMD_POLICY)

    host = h.FakeHost(ncpus=4, nirqs=20, isolated="")
    os.makedirs(host.path("run/systemd/system"))
    os.makedirs(host.path("sys/fs/cgroup/machine.slice"))
    h.write_text(host.path("sys/fs/cgroup/cgroup.controllers"), "cpuset cpu io memory pids\n")
    bus = bh.PrivateBus(host.tmp, [h.policy_path(), ts.SYSTEMD_POLICY]).start()
    bc = bh.Busctl(bus.address)
    fake = ts.FakePid1(fake_path, host, bus, bc, UNITS).start()
    rig = Rig(host, bus, bc, fake)
    try:
        check_diff_adds(t, rig)
        d = check_first_pass(t, rig)
        check_diff_removes(t, d, rig)
        check_put_back(t, d, rig)
        check_stopped_and_refused(t, d, rig)
        check_restore(t, d, rig)
        check_cpus_drift(t, rig)
        check_observe(t, rig)
        check_write_refused(t, rig)
        check_unsupported(t, rig)
        t.ok("Rejected" not in bus.log(), "the bus policy rejected nothing", bus.log()[-2000:])
    finally:
        fake.stop()


def check_first_pass(t, rig):
    host, bus, bc, fake = rig.host, rig.bus, rig.bc, rig.fake
    d = h.Daemon(host, CONFIG, env=bus.env())
    d.wait_ready()
    bc.require_owner(C.BUS_NAME, h.scaled(10), alive=d.alive)
    t.ok(fake.all_allowed() == rig.want,
         "without [cpus] slices, partition confines system.slice, user.slice, init.scope and machine.slice to 0-1",
         "%r\n%s" % (fake.all_allowed(), d.stderr_tail()))
    calls = fake.calls()
    t.ok(len(calls) == 5 and calls[-1] == "StartTransientUnit isolated.slice AllowedCPUs=2-3",
         "then PID 1 is asked for one transient isolated.slice with AllowedCPUs=2-3, after the confinement",
         repr(calls))
    t.ok(partition_file(host) == "isolated", "its cgroup's cpuset.cpus.partition reads isolated",
         repr(partition_file(host)))
    row = partition_row(bc)
    t.ok(row == ("cpuset_partition", SLICE, "isolated", "isolated", "corrected"),
         "ListSettings: cpuset_partition isolated.slice, isolated, corrected", repr(row))
    originals = h.read_text(h.originals_path(host))
    t.ok("cpuset_partition\tisolated.slice\tabsent\n" in originals,
         "the original is recorded: the slice was absent", originals)
    t.ok("cpuset_partition 1" in d.stderr(), "the start's summary counts it", d.stderr_tail())
    return d


def diff(rig, text, *args):
    """lowlatctl diff [ARGS] FILE (FILE holding text) against the running lowlatd."""
    path = h.write_config(rig.host, text, "diff.conf")
    env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=rig.bus.address)
    return subprocess.run([os.environ["LOWLATCTL"], "diff"] + list(args) + [path], env=env, capture_output=True,
                          text=True, timeout=h.scaled(30))


def check_diff_adds(t, rig):
    host, bus, bc, fake = rig.host, rig.bus, rig.bc, rig.fake
    d = h.Daemon(host, CONFIG_NONE, env=bus.env())
    d.wait_ready()
    bc.require_owner(C.BUS_NAME, h.scaled(10), alive=d.alive)
    p = diff(rig, CONFIG, "--json")
    doc = json.loads(p.stdout) if p.returncode == 0 else {"settings": []}
    rows = {(r["kind"], r["object"]): r for r in doc["settings"]}
    part = rows.get(("cpuset_partition", SLICE), {})
    t.ok((part.get("change"), part.get("will"), part.get("host"), part.get("effect")) ==
         ("added", "isolated", "absent", "write"),
         "diff --json adding partition: the slice's partition added, isolated, the host's absent, written",
         p.stdout + p.stderr)
    t.ok({o: (r["will"], r["effect"]) for (k, o), r in rows.items() if k == "slice_cpus"} ==
         {u: ("0-1", "write") for u in rig.want},
         "and the confinement it implies: the four units' AllowedCPUs= 0-1", json.dumps(doc["settings"], indent=1))
    p = diff(rig, CONFIG)
    t.ok(p.returncode == 0 and "+  cpuset_partition  isolated.slice  - -> isolated  (host: absent; " in p.stdout and
         "the slice isolated.slice is started if it is not, with AllowedCPUs= the isolated CPUs, and made an "
         "isolated cpuset partition" in p.stdout and
         "Partition: [cpus] partition = isolated.slice confines init.scope, machine.slice, system.slice, user.slice to "
         "the housekeeping CPUs 0-1" in p.stdout,
         "the text: the slice to be created, its partition, the units it confines", p.stdout + p.stderr)
    t.ok(fake.calls() == [] and partition_file(host) is None, "a diff starts nothing and writes nothing",
         repr(fake.calls()))
    t.stopped_cleanly(d)


def check_diff_removes(t, d, rig):
    p = diff(rig, CONFIG_NONE)
    t.ok(p.returncode == 0 and "-  cpuset_partition  isolated.slice  isolated -> -" in p.stdout and
         "(host: isolated; made a member again and the slice lowlatd started stopped)" in p.stdout and
         "Partition: [cpus] partition removed: init.scope, machine.slice, system.slice, user.slice get their CPUs "
         "back"
         in p.stdout,
         "diff dropping partition: the partition undone, the slice stopped, the units' CPUs given back",
         p.stdout + p.stderr)
    t.ok(partition_file(rig.host) == "isolated", "and nothing was undone", repr(partition_file(rig.host)))
    env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=rig.bus.address)
    p = subprocess.run([os.environ["LOWLATCTL"], "check", "--json"], env=env, capture_output=True, text=True,
                       timeout=h.scaled(60))
    try:
        found = {(x["id"], x["subject"]): x for x in json.loads(p.stdout)}
    except ValueError:
        found = {}
    part = found.get(("sched.partition", SLICE), {})
    t.ok(part.get("severity") == "info" and 'reads "isolated" and holds CPUs 2-3' in part.get("message", ""),
         "check --json: sched.partition says the partition is isolated, with its CPUs", p.stdout[-3000:] + p.stderr)
    mech = found.get(("isolation.mechanisms", "cpus 2-3"), {})
    t.ok("load balancing: in force (partition isolated.slice)" in mech.get("details", []) and
         "tick: missing, only a boot gives it" in mech.get("details", []) and
         "nohz_full=2-3 rcu_nocbs=2-3 isolcpus=managed_irq,2-3" in mech.get("message", ""),
         "isolation.mechanisms: load balancing from the partition, the tick missing, with the boot parameters",
         json.dumps(mech, indent=1))


def overwrite(path, text):
    """Writes text over the file in one write(), without truncating it first: the kernel's
    cgroup file never reads empty, and a truncation in the fake tree let lowlatd read ""
    between the truncation and the write (its read-back "wrote isolated but read back ",
    or a drift "found " instead of the text). Shorter text is padded with newlines, which
    lowlatd strips as it strips the kernel's one."""
    data = text.encode()
    fd = os.open(path, os.O_WRONLY)
    try:
        data += b"\n" * max(0, os.fstat(fd).st_size - len(data))
        os.write(fd, data)
    finally:
        os.close(fd)


def put_back(host, text):
    """Writes text to the partition file; True when it reads isolated again within 3 s."""
    overwrite(host.path(PARTITION), text + "\n")
    return h.poll_until(lambda: partition_file(host) == "isolated", h.scaled(3), interval=0.01)


def check_put_back(t, d, rig):
    host, bc = rig.host, rig.bc
    t.ok(put_back(host, "member"), "'member' written by someone is put back at once (inotify)", d.stderr_tail())
    t.ok(d.poll_until(lambda: "cpuset partition of isolated.slice drifted: expected isolated, found member"
                      in d.stderr(), h.scaled(3)),
         "the log says what was found", d.stderr_tail())
    # The file reads isolated once lowlatd wrote it, before it read it back: the next drift
    # waits for the correction to end (the bus answers from the same loop), or lowlatd reads
    # back the test's next value as its own write's (seen under ASan).
    h.poll_until(lambda: partition_row(bc)[3:] == ("isolated", "corrected"), h.scaled(3))
    t.ok(put_back(host, INVALID), "the kernel's 'isolated invalid (...)' is repaired", d.stderr_tail())
    t.ok(d.poll_until(lambda: "expected isolated, found " + INVALID in d.stderr(), h.scaled(3)),
         "and reported with the kernel's reason", d.stderr_tail())

    # 6.12 after the partition's CPUs went offline and came back: the file says isolated,
    # the root isolates fewer. The fake kernel does not follow the repair: a failure that
    # says what was read back; once the root isolates them all, a Reapply finds it whole.
    h.write_text(host.path("sys/fs/cgroup/cpuset.cpus.isolated"), "2\n")
    reapply(bc)
    partial = "isolated partial (the kernel isolates 2 of 2-3)"
    # Seen by the Reapply (its failure says what was read back) or first by the look that
    # the root file's change set off (a drift naming it): either names the partial state.
    t.ok(d.poll_until(lambda: "expected isolated, found " + partial in d.stderr() or
                      "wrote isolated but read back " + partial in d.stderr(), h.scaled(3)),
         "a partial partition (root's cpuset.cpus.isolated 2, the slice's CPUs 2-3) is seen", d.stderr_tail())
    t.ok(partition_row(bc)[4] == "failed" and "wrote isolated but read back " + partial in d.stderr(),
         "rewritten; as the fake kernel does not follow, a failure that says what was read back",
         "%r\n%s" % (partition_row(bc), d.stderr_tail()))
    h.write_text(host.path("sys/fs/cgroup/cpuset.cpus.isolated"), "2-3\n")
    reapply(bc)
    t.ok(h.poll_until(lambda: partition_row(bc)[4] in ("ok", "corrected"), h.scaled(3)),
         "whole again: good", repr(partition_row(bc)))


def check_cpus_drift(t, rig):
    """Someone gives the partition's slice other CPUs (systemctl set-property isolated.slice
    AllowedCPUs=...): drift, journaled as such, and AllowedCPUs= put back through PID 1; seen
    through PID 1's signal, and with the signals off through the cgroup's cpuset.cpus. A
    daemon of its own: the corrections before would make these a fight (5 in 60 s)."""
    host, bus, bc, fake = rig.host, rig.bus, rig.bc, rig.fake
    d = h.Daemon(host, CONFIG, env=bus.env())
    d.wait_ready()
    bc.require_owner(C.BUS_NAME, h.scaled(10), alive=d.alive)
    t.ok(partition_file(host) == "isolated", "a new lowlatd: the slice started again, isolated",
         repr(partition_file(host)))
    for signals, cpus in (("true", "2"), ("false", "1-3")):
        fake.call("Signals", "b", signals)
        before = len(fake.calls())
        fake.call("Drift", "ss", SLICE, cpus)
        back = h.poll_until(lambda: fake.allowed(SLICE) == "2-3", h.scaled(3), interval=0.01)
        how = "PID 1's signal" if signals == "true" else "inotify on cpuset.cpus alone"
        t.ok(back and "isolated.slice runtime=yes AllowedCPUs=2-3" in fake.calls()[before:],
             "AllowedCPUs=%s on the slice is put back to 2-3 through PID 1 (%s)" % (cpus, how),
             "%r %r\n%s" % (fake.allowed(SLICE), fake.calls()[before:], d.stderr_tail()))
        t.ok(d.poll_until(lambda: any(line.startswith("lowlatd: cpuset partition of isolated.slice drifted: expected "
                                                      "isolated, found isolated") and
                                      line.endswith(" on CPUs %s, not 2-3" % cpus) for line in d.stderr().splitlines()),
                          h.scaled(3)),
             "reported as drift, naming the CPUs found and wanted", d.stderr_tail())
        t.ok(h.read_text(host.path("sys/fs/cgroup/%s/cpuset.cpus" % SLICE)).strip() == "2-3" and
             partition_file(host) == "isolated", "the cgroup has CPUs 2-3 again, still isolated",
             repr(partition_file(host)))
        # Answered once the correction that PID 1 saw has read its result back (one loop).
        t.ok(h.poll_until(lambda: partition_row(bc)[3:] == ("isolated", "corrected"), h.scaled(3)),
             "ListSettings: isolated, corrected", repr(partition_row(bc)))
    fake.call("Signals", "b", "true")
    bc.call(C.BUS_NAME, C.BUS_PATH, C.BUS_INTERFACE, "Restore")
    t.ok(not os.path.exists(host.path("sys/fs/cgroup/" + SLICE)), "restore stops the slice again",
         repr(fake.calls()[-6:]))
    t.stopped_cleanly(d)


def check_stopped_and_refused(t, d, rig):
    host, bc, fake = rig.host, rig.bc, rig.fake
    # Someone stops the slice: a transient unit is gone; lowlatd starts it again.
    fake.call("Stop", "s", SLICE)
    t.ok(h.poll_until(lambda: partition_file(host) == "isolated", h.scaled(3), interval=0.01),
         "the slice stopped by someone is started again and made isolated", d.stderr_tail())
    t.ok(fake.calls().count("StartTransientUnit isolated.slice AllowedCPUs=2-3") == 2,
         "through a second StartTransientUnit", repr(fake.calls()))

    # PID 1 refuses: a failure with its words; the rest of the posture still kept.
    fake.call("Refuse", "b", "true")
    fake.call("Stop", "s", SLICE)
    t.ok(h.poll_until(lambda: partition_row(bc)[4] == "failed", h.scaled(3)),
         "PID 1 refusing the transient slice: failed", repr(partition_row(bc)))
    t.ok(d.poll_until(lambda: "starting isolated.slice failed: PID 1 refused StartTransientUnit: "
                              "org.freedesktop.DBus.Error.AccessDenied" in d.stderr(), h.scaled(3)),
         "with PID 1's own error", d.stderr_tail())
    host.set_sysctl("net.core.busy_poll", "0")
    t.ok(h.poll_until(lambda: host.sysctl("net.core.busy_poll") == "50", h.scaled(3)),
         "meanwhile a sysctl drift is still corrected", d.stderr_tail())
    fake.call("Refuse", "b", "false")
    reapply(bc)
    t.ok(h.poll_until(lambda: partition_file(host) == "isolated" and partition_row(bc)[4] == "corrected",
                      h.scaled(3)),
         "PID 1 agrees again: Reapply starts the slice and makes it isolated", repr(partition_row(bc)))


def check_restore(t, d, rig):
    host, bc, fake = rig.host, rig.bc, rig.fake
    out = bc.call(C.BUS_NAME, C.BUS_PATH, C.BUS_INTERFACE, "Restore")
    t.ok(out["data"][0] >= 5, "Restore() restores the four units and the partition", repr(out))
    calls = fake.calls()
    stop = calls.index("StopUnit isolated.slice") if "StopUnit isolated.slice" in calls else len(calls)
    t.ok(stop < len(calls) and not os.path.exists(host.path("sys/fs/cgroup/" + SLICE)),
         "the slice lowlatd started is stopped, its cgroup gone", repr(calls))
    t.ok(len(calls) - stop == 5 and all("runtime=yes AllowedCPUs=" in c for c in calls[stop + 1:]),
         "before the four units get their CPUs back", repr(calls))
    t.ok(fake.all_allowed() == {"system.slice": "0-3", "user.slice": "", "init.scope": "", "machine.slice": ""},
         "the other units have their CPUs back (system.slice 0-3, the others unset)", repr(fake.all_allowed()))
    t.stopped_cleanly(d)


def check_observe(t, rig):
    host, bus, bc, fake = rig.host, rig.bus, rig.bc, rig.fake
    fake.stop()
    fake.start()
    d = h.Daemon(host, CONFIG, extra_args=["--observe"], env=bus.env())
    d.wait_ready()
    bc.require_owner(C.BUS_NAME, h.scaled(10), alive=d.alive)
    row = partition_row(bc)
    t.ok(row == ("cpuset_partition", SLICE, "isolated", "absent", "drifted"),
         "observe mode: drifted, observed absent (no slice)", repr(row))
    t.ok(fake.calls() == [] and not os.path.exists(host.path("sys/fs/cgroup/" + SLICE)),
         "PID 1 is sent nothing, no cgroup is made", repr(fake.calls()))
    t.stopped_cleanly(d)
    # A slice that exists, member, its CPUs given (a cgroup whose cpuset.cpus is still empty
    # is waited for: test-setting-partition): seen, not written.
    os.makedirs(host.path("sys/fs/cgroup/" + SLICE))
    h.write_text(host.path("sys/fs/cgroup/%s/cpuset.cpus" % SLICE), "2-3\n")
    h.write_text(host.path(PARTITION), "member\n")
    p = h.run_lowlatd(host, ["--once", "--observe"], h.write_config(host, CONFIG, "once.conf"), env=bus.env())
    t.ok(partition_file(host) == "member" and fake.calls() == [],
         "observe mode with the slice member: nothing written", p.stdout + p.stderr)

    # A slice that was there before lowlatd: made isolated, and on restore a member again,
    # not stopped.
    d = h.Daemon(host, CONFIG, env=bus.env())
    d.wait_ready()
    bc.require_owner(C.BUS_NAME, h.scaled(10), alive=d.alive)
    t.ok(partition_file(host) == "isolated" and not [c for c in fake.calls() if c.startswith("Start")],
         "a slice already there is made isolated without asking PID 1 to start it", repr(fake.calls()))
    bc.call(C.BUS_NAME, C.BUS_PATH, C.BUS_INTERFACE, "Restore")
    t.ok(partition_file(host) == "member" and "StopUnit isolated.slice" not in fake.calls(),
         "restore makes it a member again and leaves it running", "%r %r" % (partition_file(host), fake.calls()))
    t.stopped_cleanly(d)


def check_write_refused(t, rig):
    """The cgroup file refusing the write: lowlatd without CAP_DAC_OVERRIDE and the file
    read-only stands in for the kernel's EINVAL; the reason is what the file says."""
    host, bus, fake = rig.host, rig.bus, rig.fake
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        t.skip("a partition write refused", "needs root and setpriv")
        return
    h.write_text(host.path(PARTITION), INVALID + "\n")
    os.chmod(host.path(PARTITION), 0o444)
    conf = h.write_config(host, CONFIG, "once.conf")
    argv = ["setpriv", "--bounding-set=-dac_override", "--", h.lowlatd_path(), "--root", host.root,
            "--config", conf, "--once"]
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_daemon_env(host.tmp, bus.env()),
                       timeout=h.scaled(60), universal_newlines=True, errors="replace")
    out = p.stdout + p.stderr
    t.ok("cpuset partition of isolated.slice: could not set isolated: writing member to "
         "/sys/fs/cgroup/isolated.slice/cpuset.cpus.partition failed: Permission denied; the file reads: " + INVALID
         in out, "a refused write is a failure that gives the errno and what the file says", out)
    os.chmod(host.path(PARTITION), 0o644)
    shutil.rmtree(host.path("sys/fs/cgroup/" + SLICE))


def check_unsupported(t, rig):
    host, bus, fake = rig.host, rig.bus, rig.fake
    conf = h.write_config(host, CONFIG, "once.conf")
    h.write_text(host.path("sys/fs/cgroup/cgroup.controllers"), "cpu io memory pids\n")
    p = h.run_lowlatd(host, ["--once"], conf, env=bus.env())
    out = p.stdout + p.stderr
    t.ok(any(line.startswith("cpuset_partition") and "unsupported: the cgroup v2 tree at %s/sys/fs/cgroup has no "
             "cpuset controller" % host.root in line for line in out.splitlines()),
         "no cpuset controller: unsupported, saying so", out)
    h.write_text(host.path("sys/fs/cgroup/cgroup.controllers"), "cpuset cpu io memory pids\n")
    calls = len(fake.calls())
    fake.call("Partitions", "b", "false")
    p = h.run_lowlatd(host, ["--once"], conf, env=bus.env())
    out = p.stdout + p.stderr
    t.ok("the cgroup of isolated.slice has no cpuset.cpus.partition: this kernel has no cpuset partitions" in out,
         "a kernel without cpuset.cpus.partition: unsupported, saying so", out)
    t.ok([c for c in fake.calls()[calls:] if c.startswith("Start")] == ["StartTransientUnit isolated.slice AllowedCPUs=2-3"],
         "(the slice was started to find out)", repr(fake.calls()))


if __name__ == "__main__":
    h.main(run)
