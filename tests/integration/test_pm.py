#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""[pm] resume_latency, min_freq, energy_performance_preference and boost (issue 13, items
2 and 3) on fake trees:

  apply      the isolated CPUs get the wake-up limit, the frequency floor and the
             preference, the housekeeping CPUs keep theirs; boost is switched off;
  clamp      a floor above cpuinfo_max_freq (and above a lower scaling_max_freq) is
             written clamped and reported once as clamped;
  drift      each file rewritten by someone else is put back (inotify, or the scan);
  restore    restore_on_exit, and Restore() on the bus (lowlatctl restore), put back
             the values found at start;
  observe    --observe writes nothing and reports the drift;
  cpus       resume_latency_cpus = housekeeping, all, and a list;
  unsupported  no cpufreq at all: min_freq, energy_performance_preference and boost are
             each reported unsupported once, with the reason, over several scans; a
             driver without EPP, and an EPP the driver does not list; boost through
             intel_pstate's no_turbo (inverted);
  refused    a floor the "driver" refuses (the file read-only to a daemon without
             CAP_DAC_OVERRIDE, as lowlatd.service runs it): reported once, the rest kept;
  offline    a CPU that goes offline (its files gone) drops out without a failure, the
             other CPUs stay kept;
  offline after restore  an isolated CPU offline and back after lowlatctl restore: the
             posture in force is kept without a failed reload, and lowlatd keeps
             observing (the rebuild for the CPUs is not an operator's reload);
  sysfs      [sysfs] refuses the files these kinds keep."""

import os
import shutil
import stat
import subprocess

import busctl_harness as b
import lowlat_constants as C
import lowlat_harness as h
import test_faults

CPU = "sys/devices/system/cpu"
EPP_LIST = "default performance balance_performance balance_power power"

BASE = """\
[daemon]
scan_interval = 1s
{daemon}

[cpus]
isolated = 2-3

[pm]
{pm}
"""

FULL_PM = """\
resume_latency = 20
min_freq = 5000000
energy_performance_preference = performance
boost = off
"""


def config(pm, daemon=""):
    return BASE.format(pm=pm, daemon=daemon)


def put(host, rel_path, text):
    """Writes a file of the fake tree, making its directory."""
    os.makedirs(os.path.dirname(host.path(rel_path)), exist_ok=True)
    h.write_text(host.path(rel_path), text)


def make_host(ncpus=4, cpufreq=True, epp=True, boost="cpufreq", max_freq=None, epp_list=EPP_LIST):
    host = h.FakeHost(ncpus=ncpus, nirqs=20, isolated="2-3", cpufreq=cpufreq)
    for c in range(ncpus):
        put(host, "%s/cpu%d/power/pm_qos_resume_latency_us" % (CPU, c), "0\n")
        if not cpufreq:
            continue
        put(host, "%s/cpu%d/cpufreq/cpuinfo_min_freq" % (CPU, c), "400000\n")
        if max_freq and c in max_freq:
            put(host, "%s/cpu%d/cpufreq/scaling_max_freq" % (CPU, c), "%d\n" % max_freq[c])
        if epp:
            put(host, "%s/cpu%d/cpufreq/energy_performance_preference" % (CPU, c), "balance_performance\n")
            put(host, "%s/cpu%d/cpufreq/energy_performance_available_preferences" % (CPU, c), epp_list + "\n")
    if boost == "cpufreq":
        put(host, CPU + "/cpufreq/boost", "1\n")
    elif boost == "no_turbo":
        put(host, CPU + "/intel_pstate/no_turbo", "0\n")
    return host


def rel(kind, cpu=None):
    return {
        "resume_latency": "%s/cpu%s/power/pm_qos_resume_latency_us",
        "min_freq": "%s/cpu%s/cpufreq/scaling_min_freq",
        "epp": "%s/cpu%s/cpufreq/energy_performance_preference",
    }[kind] % (CPU, cpu)


def value(host, kind, cpu=None):
    if kind == "boost":
        return host.read(CPU + "/cpufreq/boost").strip()
    return host.read(rel(kind, cpu)).strip()


def snapshot(host, ncpus=4):
    out = {}
    for c in range(ncpus):
        for kind in ("resume_latency", "min_freq", "epp"):
            p = host.path(rel(kind, c))
            out[(kind, c)] = h.read_text(p).strip() if os.path.exists(p) else None
    p = host.path(CPU + "/cpufreq/boost")
    out["boost"] = h.read_text(p).strip() if os.path.exists(p) else None
    return out


def count_lines(d, *needles):
    return sum(1 for l in d.stderr_lines() if all(n in l for n in needles))


def apply_drift_restore(t):
    host = make_host(max_freq={3: 3000000})
    before = snapshot(host)
    d = h.Daemon(host, config(FULL_PM, "restore_on_exit = yes"))
    d.wait_ready()
    t.ok([value(host, "resume_latency", c) for c in range(4)] == ["0", "0", "20", "20"],
         "resume_latency: 20 us on isolated CPUs 2-3, housekeeping CPUs keep 0 (no restriction)",
         repr([value(host, "resume_latency", c) for c in range(4)]))
    t.ok([value(host, "min_freq", c) for c in range(4)] == ["800000", "800000", "3500000", "3000000"],
         "min_freq 5000000 kHz is clamped to CPU 2's cpuinfo_max_freq and CPU 3's lower scaling_max_freq",
         repr([value(host, "min_freq", c) for c in range(4)]))
    t.ok(count_lines(d, "min_freq cpu2 clamped to 3500000", "cpuinfo_max_freq is 3500000 kHz") == 1 and
         count_lines(d, "min_freq cpu3 clamped to 3000000", "scaling_max_freq is 3000000 kHz") == 1,
         "each clamp is reported once, naming the bound", d.stderr_tail())
    t.ok([value(host, "epp", c) for c in range(4)] ==
         ["balance_performance", "balance_performance", "performance", "performance"],
         "energy_performance_preference = performance on CPUs 2-3 only")
    t.ok(value(host, "boost") == "0", "boost = off writes 0 to cpufreq/boost")

    for kind, cpu, drifted, want in (("resume_latency", 2, "0", "20"), ("min_freq", 3, "800000", "3000000"),
                                     ("epp", 2, "power", "performance")):
        host.write(rel(kind, cpu), drifted + "\n")
        t.ok(d.poll_until(lambda: value(host, kind, cpu) == want, h.scaled(5)),
             "%s of CPU %d rewritten to %s is put back to %s" % (kind, cpu, drifted, want),
             "holds %r" % value(host, kind, cpu))
    host.write(CPU + "/cpufreq/boost", "1\n")
    t.ok(d.poll_until(lambda: value(host, "boost") == "0", h.scaled(5)), "boost switched on again is switched off")
    t.ok(any("resume_latency cpu2" in l and "drifted" in l for l in d.stderr_lines()),
         "the drift is reported with kind and CPU", d.stderr_tail())
    h.settle(2.5)
    t.ok(count_lines(d, "clamped to") == 2, "the clamp is not reported again by later scans")

    d.stop()  # restore_on_exit; raises unless lowlatd exits 0
    after = snapshot(host)
    t.ok(after == before, "restore_on_exit puts every value back as it was",
         repr({k: (before[k], after[k]) for k in before if before[k] != after[k]}))


def on_bus():
    """A fake host (its values at start in host.before), a private bus with the shipped
    policy, lowlatd with the whole [pm] posture on it: (host, bus, env, daemon, busctl)."""
    host = make_host()
    host.before = snapshot(host)
    bus = b.PrivateBus(host.tmp, [h.policy_path()]).start()
    env = {"DBUS_SYSTEM_BUS_ADDRESS": bus.address, "RUNTIME_DIRECTORY": os.path.join(host.tmp, "run-lowlatd")}
    d = h.Daemon(host, config(FULL_PM), env=env)
    d.wait_ready()
    busctl = b.Busctl(bus.address)
    busctl.require_owner(C.BUS_NAME, h.scaled(10), alive=d.alive)
    return host, bus, env, d, busctl


def bus_restore(t):
    if os.geteuid() != 0 or not all(shutil.which(x) for x in ("dbus-daemon", "busctl")):
        t.skip("lowlatctl restore puts the power settings back", "needs root, dbus-daemon and busctl")
        return
    host, bus, env, d, _ = on_bus()
    before = host.before
    t.ok(snapshot(host) != before, "the power settings are applied before the restore")
    p = subprocess.run([os.environ["LOWLATCTL"], "restore"], env=dict(os.environ, **env), capture_output=True,
                       text=True)
    t.ok(p.returncode == 0, "lowlatctl restore exits 0", p.stderr)
    after = snapshot(host)
    t.ok(after == before, "lowlatctl restore puts resume_latency, min_freq, the preference and boost back",
         repr({k: (before[k], after[k]) for k in before if before[k] != after[k]}))
    d.stop()
    bus.stop()


def observe(t):
    host = make_host()
    before = snapshot(host)
    d = h.Daemon(host, config(FULL_PM), extra_args=["--observe"])
    d.wait_ready()
    h.settle(1.5)
    t.ok(snapshot(host) == before, "--observe writes none of the power files")
    t.ok(any("resume_latency cpu2" in l and "drifted" in l for l in d.stderr_lines()) and
         any("boost" in l and "drifted" in l for l in d.stderr_lines()),
         "--observe reports the values that differ", d.stderr_tail())
    t.stopped_cleanly(d)


def cpu_selection(t):
    for cpus, want in (("housekeeping", {0, 1}), ("all", {0, 1, 2, 3}), ("1,3", {1, 3}), ("isolated", {2, 3})):
        host = make_host()
        d = h.Daemon(host, config("resume_latency = n/a\nresume_latency_cpus = %s\n"
                                  "min_freq = max\nmin_freq_cpus = %s\n" % (cpus, cpus)))
        d.wait_ready()
        got = {c for c in range(4) if value(host, "resume_latency", c) == "n/a"}
        floor = {c for c in range(4) if value(host, "min_freq", c) == "3500000"}
        t.ok(got == want and floor == want, "*_cpus = %s selects CPUs %s" % (cpus, sorted(want)),
             "resume_latency on %s, min_freq on %s" % (sorted(got), sorted(floor)))
        t.stopped_cleanly(d)
    host = make_host()
    p = h.run_lowlatd(host, ["--check-config"], config_path=h.write_config(
        host, config("resume_latency = 10\nresume_latency_cpus = 2,9\n")))
    t.ok(p.returncode != 0 and "resume_latency_cpus: CPU 9 does not exist" in p.stderr,
         "a CPU the host cannot have is an error with FILE:LINE", p.stderr)
    nothing_isolated = h.FakeHost(ncpus=4, nirqs=20, isolated="")
    p = h.run_lowlatd(nothing_isolated, ["--check-config"], config_path=h.write_config(
        nothing_isolated, "[pm]\nmin_freq = max\n"))
    t.ok(p.returncode != 0 and "min_freq_cpus = isolated (the default), but no CPU is isolated" in p.stderr,
         "min_freq on the default isolated CPUs with none isolated is an error", p.stderr)


def unsupported(t):
    host = make_host(cpufreq=False, boost=None)
    d = h.Daemon(host, config(FULL_PM))
    d.wait_ready()
    h.settle(3.5)  # several 1 s scans
    for kind in ("min_freq", "energy_performance_preference"):
        n = count_lines(d, kind + " cpufreq unsupported", "no cpufreq driver on this host")
        t.ok(n == 1, "no cpufreq: %s is reported unsupported once, for the host" % kind, d.stderr_tail())
    t.ok(count_lines(d, "boost unsupported", "no boost control on this host") == 1,
         "no boost control: reported once with the reason", d.stderr_tail())
    t.ok([value(host, "resume_latency", c) for c in (2, 3)] == ["20", "20"],
         "resume_latency, which needs no cpufreq, is still applied")
    t.stopped_cleanly(d)

    host = make_host(epp=False)
    d = h.Daemon(host, config("energy_performance_preference = performance\n"))
    d.wait_ready()
    h.settle(2.5)
    t.ok(count_lines(d, "energy_performance_preference cpu2 unsupported",
                     "cpufreq driver (intel_pstate) offers no energy_performance_preference") == 1,
         "a driver without EPP: unsupported once per CPU, naming the driver", d.stderr_tail())
    t.stopped_cleanly(d)

    host = make_host(epp_list="default balance_performance balance_power power")
    d = h.Daemon(host, config("energy_performance_preference = performance\n"))
    d.wait_ready()
    h.settle(2.5)
    t.ok(count_lines(d, "energy_performance_preference cpu3 unsupported", "'performance' is not offered",
                     "available: default balance_performance") == 1,
         "a preference the driver does not list: unsupported once, with the list", d.stderr_tail())
    t.ok(value(host, "epp", 3) == "balance_performance", "and nothing is written")
    t.stopped_cleanly(d)

    host = make_host(boost="no_turbo")
    d = h.Daemon(host, config("boost = off\n", "restore_on_exit = yes"))
    d.wait_ready()
    t.ok(host.read(CPU + "/intel_pstate/no_turbo").strip() == "1", "intel_pstate: boost = off writes no_turbo 1")
    host.write(CPU + "/intel_pstate/no_turbo", "0\n")
    t.ok(d.poll_until(lambda: host.read(CPU + "/intel_pstate/no_turbo").strip() == "1", h.scaled(5)),
         "no_turbo set back to 0 by someone is corrected")
    d.stop()
    t.ok(host.read(CPU + "/intel_pstate/no_turbo").strip() == "0", "restore puts no_turbo back to 0")


def refused(t):
    prefix, why = test_faults.setpriv_prefix()
    if not prefix:
        t.skip("a refused power write is reported once, the rest kept", why)
        return
    host = make_host()
    path = host.path(rel("min_freq", 3))
    os.chmod(path, 0o444)

    class Unit(test_faults.UnitDaemon):
        pass
    Unit.prefix = prefix
    d = Unit(host, config(FULL_PM))
    d.wait_ready()
    h.settle(3.5)
    t.ok(count_lines(d, "min_freq cpu3: could not set") == 1,
         "the refused scaling_min_freq write is reported once over several scans", d.stderr_tail())
    t.ok(value(host, "min_freq", 3) == "800000" and value(host, "min_freq", 2) == "3500000",
         "CPU 3's floor is left as it is, CPU 2's is set")
    t.ok(value(host, "resume_latency", 3) == "20" and value(host, "epp", 3) == "performance",
         "CPU 3's other power settings are kept")
    host.write(rel("resume_latency", 3), "0\n")
    t.ok(d.poll_until(lambda: value(host, "resume_latency", 3) == "20", h.scaled(5)),
         "drift on CPU 3 is still corrected")
    t.stopped_cleanly(d)


def offline(t):
    host = make_host()
    d = h.Daemon(host, config("resume_latency = 20\nresume_latency_cpus = all\n"))
    d.wait_ready()
    t.ok(all(value(host, "resume_latency", c) == "20" for c in range(4)), "all four CPUs held at 20 us")
    # Housekeeping CPU 1 goes offline (an isolated one would make [cpus] isolated = 2-3
    # wrong): the kernel removes its power directory with the device's files.
    shutil.rmtree(host.path(CPU + "/cpu1/power"))
    shutil.rmtree(host.path(CPU + "/cpu1/cpufreq"))
    host.write(CPU + "/cpu1/online", "0\n")
    host.write(CPU + "/online", "0,2-3\n")
    host.write(CPU + "/offline", "1\n")
    t.ok(d.poll_until(lambda: any("online CPUs changed to 0,2-3" in l for l in d.stderr_lines()), h.scaled(5)),
         "lowlatd notices the online CPUs changed", d.stderr_tail())
    h.settle(1.5)
    t.ok(d.alive() and not any("Reload failed" in l for l in d.stderr_lines()),
         "lowlatd keeps running on the posture rebuilt for CPUs 0,2-3", d.stderr_tail())
    t.ok(not any("resume_latency cpu1" in l for l in d.stderr_lines()),
         "the CPU that went offline is neither a failure nor unsupported", d.stderr_tail())
    host.write(rel("resume_latency", 3), "0\n")
    t.ok(d.poll_until(lambda: value(host, "resume_latency", 3) == "20", h.scaled(5)),
         "the online CPUs are still kept")
    t.stopped_cleanly(d)


def offline_after_restore(t):
    if os.geteuid() != 0 or not all(shutil.which(x) for x in ("dbus-daemon", "busctl")):
        t.skip("an isolated CPU offline and back after a restore", "needs root, dbus-daemon and busctl")
        return
    host, bus, env, d, busctl = on_bus()
    before = host.before
    p = subprocess.run([os.environ["LOWLATCTL"], "restore"], env=dict(os.environ, **env), capture_output=True,
                       text=True)
    t.ok(p.returncode == 0 and snapshot(host) == before, "[offline after restore] lowlatctl restore puts it back",
         p.stderr)
    # Isolated CPU 3 goes offline: no posture can be built for CPUs 0-2 ([cpus] isolated
    # names CPU 3), which is no failed reload of the operator's.
    host.write(CPU + "/cpu3/online", "0\n")
    host.write(CPU + "/online", "0-2\n")
    host.write(CPU + "/offline", "3\n")
    kept = d.poll_until(lambda: [l for l in d.stderr_lines() if "Keeping the posture in force" in l], h.scaled(5))
    t.ok(kept and "CPU 3" in kept[0], "[offline after restore] CPU 3 offline: the posture in force is kept, "
         "the reason named", d.stderr_tail())
    t.ok(not any("Reload failed" in l for l in d.stderr_lines()),
         "[offline after restore] ... and no failed reload is on record", d.stderr_tail())
    error = busctl.get_property(C.BUS_NAME, C.BUS_PATH, C.BUS_INTERFACE, "LastReloadError")[1]
    t.ok(error == "", "[offline after restore] ... LastReloadError stays empty", repr(error))
    host.write(CPU + "/cpu3/online", "1\n")
    host.write(CPU + "/online", "0-3\n")
    host.write(CPU + "/offline", "\n")
    t.ok(d.poll_until(lambda: any("online CPUs changed to 0-3" in l and "Reloaded" in l for l in d.stderr_lines()),
                      h.scaled(5)), "[offline after restore] CPU 3 back: the posture is rebuilt", d.stderr_tail())
    h.settle(1.5)
    t.ok(snapshot(host) == before, "[offline after restore] ... and nothing is enforced again after the restore",
         repr({k: (before[k], snapshot(host)[k]) for k in before if before[k] != snapshot(host)[k]}))
    d.stop()
    bus.stop()


def sysfs_refuses(t):
    host = make_host()
    for path, kind in ((CPU + "/cpu2/power/pm_qos_resume_latency_us", "resume_latency"),
                       (CPU + "/cpufreq/policy*/scaling_min_freq", "min_freq"),
                       (CPU + "/cpu1/cpufreq/energy_performance_preference", "energy_performance_preference"),
                       (CPU + "/cpufreq/boost", "boost")):
        cfg = h.write_config(host, "[cpus]\nisolated = 2-3\n[sysfs]\n/%s = 1\n" % path)
        p = h.run_lowlatd(host, ["--check-config"], config_path=cfg)
        t.ok(p.returncode != 0 and "kept by lowlatd's %s" % kind in p.stderr,
             "[sysfs] refuses /%s (the %s kind keeps it)" % (path, kind), p.stderr)


FAIR = "sys/kernel/debug/sched/fair_server/cpu%d/runtime"


def fair_server(t):
    """[cpus] fair_server = off: 0 in the fair server runtime of CPUs 2-3 (debugfs in the
    fake tree), a write of the kernel's default put back, the housekeeping CPUs' left
    alone, and restore_on_exit gives the kernel's value back; without the files, each is
    unsupported with debugfs named."""
    host = make_host()
    for c in range(4):
        put(host, FAIR % c, "50000000\n")
    d = h.Daemon(host, config("", "restore_on_exit = yes").replace("isolated = 2-3\n",
                                                                   "isolated = 2-3\nfair_server = off\n"))
    d.wait_ready()
    t.ok([host.read(FAIR % c).strip() for c in range(4)] == ["50000000", "50000000", "0", "0"],
         "fair_server = off: runtime 0 on CPUs 2 and 3, the others left alone",
         repr([host.read(FAIR % c) for c in range(4)]))
    host.write(FAIR % 3, "50000000\n")
    t.ok(d.poll_until(lambda: host.read(FAIR % 3).strip() == "0", h.scaled(5)),
         "the kernel's default written back on CPU 3: put back to 0")
    d.stop()
    t.ok(all(host.read(FAIR % c).strip() == "50000000" for c in range(4)),
         "restore_on_exit: every runtime is the kernel's again")

    host = make_host()
    d = h.Daemon(host, config("").replace("isolated = 2-3\n", "isolated = 2-3\nfair_server = off\n"))
    d.wait_ready()
    said = d.stderr()
    t.ok("fair server runtime of cpu2" in said and "debugfs is not mounted" in said,
         "no debugfs files: unsupported, saying debugfs may not be mounted", said[-2000:])
    d.stop()


def timestamping(t):
    """[cpus] hold_timestamping = yes on a fake tree: the static key is the running
    kernel's, so the hold is unsupported, saying why, and no socket is opened (this
    machine's key is not switched by a test; the VM suite holds it for real)."""
    host = make_host()
    d = h.Daemon(host, config("").replace("isolated = 2-3\n", "isolated = 2-3\nhold_timestamping = yes\n"))
    d.wait_ready()
    said = d.stderr()
    sockets = [t for t in d.open_fd_targets() if t.startswith("socket:")]
    t.ok("timestamping hold SO_TIMESTAMP" in said and "held only with --root /" in said,
         "hold_timestamping on a fake tree: unsupported, saying the key is the running kernel's", said[-2000:])
    d.stop()
    return sockets


def run(t):
    h.isolate_from_real_journal()
    timestamping(t)
    fair_server(t)
    apply_drift_restore(t)
    observe(t)
    cpu_selection(t)
    unsupported(t)
    refused(t)
    offline(t)
    offline_after_restore(t)
    sysfs_refuses(t)
    bus_restore(t)


if __name__ == "__main__":
    h.main(run)
