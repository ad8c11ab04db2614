#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Soak (issue 7, item 5): lowlatd runs for SOAK_SECONDS against a fake host with 1,000
IRQs and scan_interval = 1s while
  - a drift thread flips a random IRQ onto isolated CPUs 4 times a second and one of six
    sysctls twice a second (so fights, and their 10 s back-off, happen too),
  - the main thread reloads every RELOAD_EVERY seconds, alternating two valid configs
    (B changes somaxconn and cpu_dma_latency and adds kernel.numa_balancing, which going
    back to A restores),
  - a bus thread calls ListSettings and Properties.GetAll through busctl on a private
    dbus-daemon (busctl_harness), and `lowlatctl status` when LOWLATCTL is set,
and samples /proc/PID: VmRSS, the number of open fds, utime+stime.

At the end (drift, reloads and bus traffic stopped) it checks:
  - the fd count equals the count after warm-up (±2 for transient sockets);
  - VmRSS grew by less than RSS_GROWTH_KIB from the warm-up sample to the end sample
    (under AddressSanitizer, whose quarantine keeps freed memory, 256 MiB by default, the
    daemon runs with quarantine_size_mb=16 and a looser bound; leaks are LeakSanitizer's
    job: ASAN_OPTIONS keeps detect_leaks=1 and stopped_cleanly() fails on any sanitizer
    report);
  - CPU use (utime+stime per wall second) is bounded, under load and when idle;
  - every injected drift was corrected, nothing is left drifted, and the host holds
    the last config exactly;
  - every reload was applied (RELOADING=1 then READY=1, "Reloaded" logged, none failed);
  - the daemon answered every bus call, with no long gap;
  - it stops cleanly, with no sanitizer report.
The figures are printed as TAP comments ("# soak: ...") for docs/testing.md.

Environment (besides lowlat_harness's):
  SOAK_SECONDS    length of the loaded phase (default 120; CI runs the suite twice,
                  once under ASan, so keep it modest)
  SOAK_SEED       seed of the drift thread (default: time-based, printed)
  LOWLATD_ASAN    1/0: whether LOWLATD is an ASan build; default: looked up in the
                  binary (the __asan_init symbol)
  LOWLATCTL       path of lowlatctl: adds `lowlatctl status` to the bus traffic
Without root, dbus-daemon or busctl the soak runs without bus traffic (noted).
"""

import os
import random
import re
import shutil
import subprocess
import threading
import time

import busctl_harness as b
import lowlat_constants as C
import lowlat_harness as h

SOAK_SECONDS = float(os.environ.get("SOAK_SECONDS", "120") or "120")
WARMUP = max(5.0, min(20.0, SOAK_SECONDS / 6))
RELOAD_EVERY = 3.0
SAMPLE_EVERY = 5.0
IRQ_FLIPS_PER_S = 4
SYSCTL_FLIPS_PER_S = 2
BUS_ROUND_EVERY = 0.5
QUIET = 5.0

RSS_GROWTH_KIB = 512
RSS_GROWTH_KIB_ASAN = 8 * 1024    # with the quarantine below, full after warm-up
ASAN_QUARANTINE_MB = 16
FD_SLACK = 2
CPU_LOADED_MAX = 0.25      # of one CPU, with the traffic above
CPU_IDLE_MAX = 0.05        # 1,000 IRQs scanned every second, nothing else
FIGHT_BACKOFF = C.FIGHT_BACKOFF_S
IRQ_LATENCY_MAX = 3.0      # an IRQ flip (inotify hint; the 1 s scan at worst)
BUS_GAP_MAX = 10.0

NAME, PATH, IFACE = C.BUS_NAME, C.BUS_PATH, C.BUS_INTERFACE

HOUSEKEEPING = "0-1"
# Drifted by the test; the same desired value in both configs.
DRIFT_SYSCTLS = {
    "net.core.busy_poll": "50",
    "net.core.busy_read": "50",
    "net.core.netdev_max_backlog": "5000",
    "vm.stat_interval": "10",
    "kernel.timer_migration": "0",
    "vm.swappiness": "10",
}
IRQ_TARGETS = ("2-3", "0-3", "1-3", "3", "2", "1-2")

CONFIG_A = h.posture_config("1s") + "".join("%s = %s\n" % kv for kv in DRIFT_SYSCTLS.items())

CONFIG_B = CONFIG_A.replace("cpu_dma_latency = 0", "cpu_dma_latency = 10") \
    .replace("net.core.somaxconn = 8192", "net.core.somaxconn = 16384") + "kernel.numa_balancing = 0\n"

FINAL = {
    "A": {"somaxconn": "8192", "dma": 0, "numa_balancing": None},   # None: the original
    "B": {"somaxconn": "16384", "dma": 10, "numa_balancing": "0"},
}


def is_asan(path):
    env = os.environ.get("LOWLATD_ASAN")
    if env in ("0", "1"):
        return env == "1"
    with open(path, "rb") as f:
        return b"__asan_init" in f.read()


class Proc:
    """/proc/PID figures."""

    def __init__(self, pid):
        self.pid = pid
        self.tick = os.sysconf("SC_CLK_TCK")

    def rss_kib(self):
        with open("/proc/%d/status" % self.pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        # -1 at warm-up and at the end would be "no growth"
        raise ValueError("no VmRSS in /proc/%d/status" % self.pid)

    def fds(self):
        return len(os.listdir("/proc/%d/fd" % self.pid))

    def cpu_s(self):
        with open("/proc/%d/stat" % self.pid) as f:
            rest = f.read().rsplit(")", 1)[1].split()
        # fields 14 and 15 (utime, stime); rest starts at field 3
        return (int(rest[11]) + int(rest[12])) / self.tick

    def sample(self):
        return {"t": time.monotonic(), "rss": self.rss_kib(), "fds": self.fds(), "cpu": self.cpu_s()}


class Drift:
    """Flips IRQs and sysctls; a second thread watches each flip until it is undone."""

    def __init__(self, host, seed):
        self.host = host
        self.rng = random.Random(seed)
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.pending = {}          # (kind, object) -> time of the first unresolved flip
        self.injected = {"irq": 0, "sysctl": 0}
        self.corrected = {"irq": 0, "sysctl": 0}   # flips seen undone
        self.latency = {"irq": [], "sysctl": []}
        self.errors = []
        self.threads = [threading.Thread(target=self._flip, daemon=True),
                        threading.Thread(target=self._watch, daemon=True)]

    def start(self):
        for th in self.threads:
            th.start()

    def finish(self):
        self.stop.set()
        for th in self.threads:
            th.join(10)

    def desired(self, kind, obj):
        return HOUSEKEEPING if kind == "irq" else DRIFT_SYSCTLS[obj]

    def current(self, kind, obj):
        return self.host.irq_affinity(obj) if kind == "irq" else self.host.sysctl(obj)

    def _inject(self, kind, obj, value):
        with self.lock:
            if kind == "irq":
                self.host.set_irq_affinity(obj, value)
            else:
                self.host.set_sysctl(obj, value)
            self.injected[kind] += 1
            self.pending.setdefault((kind, obj), time.monotonic())

    def _flip(self):
        step = 1.0 / IRQ_FLIPS_PER_S
        every = max(1, IRQ_FLIPS_PER_S // SYSCTL_FLIPS_PER_S)
        i = 0
        while not self.stop.wait(step):
            try:
                self._inject("irq", self.rng.choice(self.host.irqs), self.rng.choice(IRQ_TARGETS))
                if i % every == 0:
                    key = self.rng.choice(sorted(DRIFT_SYSCTLS))
                    self._inject("sysctl", key, str(self.rng.randint(1, 40000)))
            except OSError as e:
                self.errors.append("flip: %r" % e)
            i += 1

    def _watch(self):
        while not self.stop.wait(0.05):
            self.check()

    def check(self):
        with self.lock:
            items = list(self.pending.items())
        for (kind, obj), since in items:
            try:
                ok = self.current(kind, obj) == self.desired(kind, obj)
            except OSError:
                continue
            if ok:
                with self.lock:
                    if self.pending.get((kind, obj)) == since:
                        del self.pending[(kind, obj)]
                        self.corrected[kind] += 1
                        self.latency[kind].append(time.monotonic() - since)

    def left(self):
        with self.lock:
            return dict(self.pending)


class BusTraffic:
    def __init__(self, bus, expect_settings):
        self.bc = b.Busctl(bus.address)
        self.env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=bus.address)
        self.lowlatctl = os.environ.get("LOWLATCTL")
        self.expect = expect_settings
        self.stop = threading.Event()
        self.calls = {"ListSettings": 0, "GetAll": 0, "lowlatctl status": 0}
        self.failures = []
        self.client_errors = []
        self.clients_started = 0
        self.answers = []          # monotonic times of good answers
        self.slowest = 0.0
        self.last_props = {}
        self.thread = threading.Thread(target=self._run, daemon=True)

    def start(self):
        self.thread.start()

    def finish(self):
        self.stop.set()
        self.thread.join(h.scaled(60))

    def _one(self, what, fn):
        t0 = time.monotonic()
        try:
            err = fn()
        except Exception as e:  # busctl missing output, JSON, timeout
            err = "%s: %s" % (type(e).__name__, e)
        took = time.monotonic() - t0
        self.calls[what] += 1
        self.slowest = max(self.slowest, took)
        if err:
            self.failures.append("%s at +%.1fs: %s" % (what, t0 - self.t_start, err))
        else:
            self.answers.append(time.monotonic())

    def _list(self):
        n = len(self.bc.list_settings(NAME, PATH, IFACE))
        return None if n in self.expect else "%d settings listed, expected %s" % (n, self.expect)

    def _getall(self):
        self.last_props = self.bc.get_all(NAME, PATH, IFACE)
        return None if "Corrections" in self.last_props else "no Corrections property"

    def _status(self):
        try:
            p = subprocess.run([self.lowlatctl, "status"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               env=self.env, universal_newlines=True, timeout=h.scaled(30))
        except OSError as e:
            # The client could not be started (a rebuild replacing the binary): not a
            # question lowlatd failed to answer.
            self.client_errors.append("lowlatctl: %s" % e)
            return None
        self.clients_started += 1
        # 0 ok, 1 drift seen, 2 degraded: lowlatd answered; 3 is "unknown" (no answer)
        return None if p.returncode in (0, 1, 2) and p.stdout else \
            "exit %d: %s" % (p.returncode, p.stderr.strip()[:200])

    def _run(self):
        self.t_start = time.monotonic()
        while not self.stop.is_set():
            self._one("ListSettings", self._list)
            self._one("GetAll", self._getall)
            if self.lowlatctl:
                self._one("lowlatctl status", self._status)
            self.stop.wait(BUS_ROUND_EVERY)

    def max_gap(self, t0, t1):
        ts = [t0] + [x for x in self.answers if t0 <= x <= t1] + [t1]
        return max(b_ - a for a, b_ in zip(ts, ts[1:]))


class Soak:
    """What the phases share: the tree, the daemon and its /proc view, the load, and what
    the loaded run measured."""

    def __init__(self, host, d, proc, asan, bus, why, originals, nsettings, traffic, drift):
        self.host, self.d, self.proc, self.asan = host, d, proc, asan
        self.bus, self.why, self.originals = bus, why, originals
        self.nsettings, self.traffic, self.drift = nsettings, traffic, drift
        self.samples = []
        self.reloads = {"sent": 0, "ready": 0}
        self.current = "A"
        self.t_start = self.t_loaded_end = None
        self.warm = self.loaded_end = None
        self.lat_irq = self.lat_sys = None


def run(t):
    h.isolate_from_real_journal()
    binary = h.lowlatd_path()
    asan = is_asan(binary)
    seed = int(os.environ.get("SOAK_SEED") or int(time.time()))
    t.note("soak: %.0f s loaded (warm-up %.0f s), seed %d, %s build, scale %g"
           % (SOAK_SECONDS, WARMUP, seed, "ASan" if asan else "plain", h.SCALE))

    host = h.FakeHost(ncpus=4, nirqs=1000, isolated="2-3")
    originals = {"numa_balancing": host.sysctl("kernel.numa_balancing")}

    bus = None
    why = None
    if os.geteuid() != 0:
        why = "not root (the bus policy lets only root own %s)" % NAME
    elif not (shutil.which("dbus-daemon") and shutil.which("busctl")):
        why = "dbus-daemon or busctl is not installed"
    env = {}
    if why is None:
        bus = b.PrivateBus(host.tmp, [h.policy_path()]).start()
        env = bus.env()
    else:
        t.note("soak: no bus traffic: %s" % why)

    if asan:
        # ASan keeps freed memory in a quarantine (256 MiB by default) so that a late use
        # after free is caught; until it is full RSS climbs by whatever lowlatd frees,
        # which says nothing about leaks. A small quarantine makes RSS meaningful again
        # (leaks themselves are LeakSanitizer's, at exit).
        env["ASAN_OPTIONS"] = ":".join(x for x in (os.environ.get("ASAN_OPTIONS", "detect_leaks=1"),
                                                   "quarantine_size_mb=%d" % ASAN_QUARANTINE_MB) if x)
    d = h.Daemon(host, CONFIG_A, env=env)
    d.wait_ready()
    proc = Proc(d.proc.pid)
    # IRQs, default affinity, cpu_dma_latency, governors, sysctls (B: + numa_balancing)
    nsettings = 1000 + 1 + 1 + 4 + 1 + len(DRIFT_SYSCTLS)
    traffic = None
    if bus is not None:
        ok = b.Busctl(bus.address).wait_for_owner(NAME, h.scaled(10), alive=d.alive)
        t.ok(ok, "lowlatd owns %s on the private bus" % NAME, d.stderr_tail(5))
        traffic = BusTraffic(bus, (nsettings, nsettings + 1))

    drift = Drift(host, seed)
    soak = Soak(host, d, proc, asan, bus, why, originals, nsettings, traffic, drift)
    if not run_loaded(t, soak):
        return
    check_corrected(t, soak)
    check_final_posture(t, soak)
    check_reloads_and_bus(t, soak)
    check_quiet_and_figures(t, soak)


def pct(xs, q):
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else 0.0


def run_loaded(t, soak):
    """The loaded run: drift, reloads and bus traffic for SOAK_SECONDS; false if lowlatd died."""
    d, proc, drift, traffic, reloads = soak.d, soak.proc, soak.drift, soak.traffic, soak.reloads
    samples = soak.samples
    samples.append(proc.sample())
    current = "A"
    t_start = time.monotonic()
    drift.start()
    if traffic:
        traffic.start()

    warm = None
    next_reload = t_start + RELOAD_EVERY
    next_sample = t_start + SAMPLE_EVERY
    died_at = None
    while time.monotonic() - t_start < SOAK_SECONDS:
        now = time.monotonic()
        if not d.alive():
            died_at = now - t_start
            break
        if now >= next_reload:
            current = "B" if current == "A" else "A"
            d.rewrite_config(CONFIG_B if current == "B" else CONFIG_A)
            cur = d.sighup()
            reloads["sent"] += 1
            i = d.notify.wait_for(b"RELOADING=1", h.scaled(10), since=cur, alive=d.alive)
            if i is not None and d.notify.wait_for(b"READY=1", h.scaled(10), since=i + 1,
                                                    alive=d.alive) is not None:
                reloads["ready"] += 1
            next_reload = time.monotonic() + RELOAD_EVERY
        if now >= next_sample:
            samples.append(proc.sample())   # the daemon is alive: a failure is an error
            if warm is None and now - t_start >= WARMUP:
                warm = samples[-1]
            next_sample += SAMPLE_EVERY
        time.sleep(0.05)
    t_loaded_end = time.monotonic()
    drift.finish()
    if traffic:
        traffic.finish()
    t.ok(died_at is None and d.alive(), "lowlatd ran through the soak",
         "died at +%.1fs; stderr:\n%s" % (died_at or -1, d.stderr_tail()))
    if not d.alive():
        return False
    soak.loaded_end = proc.sample()
    soak.warm = warm if warm is not None else samples[-1]
    soak.current, soak.t_start, soak.t_loaded_end = current, t_start, t_loaded_end
    return True


def check_corrected(t, soak):
    """Everything injected is undone (fights wait out their back-off)."""
    d, drift = soak.d, soak.drift
    drift.check()
    ok = d.poll_until(lambda: (drift.check(), not drift.left())[1], h.scaled(FIGHT_BACKOFF + 5), interval=0.2)
    left = drift.left()
    t.ok(ok and not left, "every injected drift was corrected (%d IRQ flips, %d sysctl flips)"
         % (drift.injected["irq"], drift.injected["sysctl"]),
         "still drifted: %r" % {k: drift.current(*k) for k in list(left)[:10]})
    t.ok(not drift.errors, "the drift thread ran without errors", "\n".join(drift.errors[:5]))

    lat_irq = sorted(drift.latency["irq"])
    lat_sys = sorted(drift.latency["sysctl"])
    t.ok(lat_irq and lat_irq[-1] <= h.scaled(IRQ_LATENCY_MAX),
         "every IRQ flip was corrected within %.0f s (max %.2f s)" % (h.scaled(IRQ_LATENCY_MAX),
                                                                        lat_irq[-1] if lat_irq else -1),
         "slowest: %r" % lat_irq[-5:])
    soak.lat_irq, soak.lat_sys = lat_irq, lat_sys


def check_final_posture(t, soak):
    """The host holds the last config exactly."""
    host, current, originals = soak.host, soak.current, soak.originals
    want = FINAL[current]
    wrong_irqs = [n for n in host.irqs if host.irq_affinity(n) != HOUSEKEEPING]
    problems = []
    if wrong_irqs:
        problems.append("%d IRQs off %s, e.g. %r" % (len(wrong_irqs), HOUSEKEEPING,
                                                     [(n, host.irq_affinity(n)) for n in wrong_irqs[:5]]))
    for k, v in DRIFT_SYSCTLS.items():
        if host.sysctl(k) != v:
            problems.append("%s = %r" % (k, host.sysctl(k)))
    if host.sysctl("net.core.somaxconn") != want["somaxconn"]:
        problems.append("somaxconn %r" % host.sysctl("net.core.somaxconn"))
    numa = want["numa_balancing"] or originals["numa_balancing"]
    if host.sysctl("kernel.numa_balancing") != numa:
        problems.append("numa_balancing %r, want %r" % (host.sysctl("kernel.numa_balancing"), numa))
    if any(host.governor(c) != "performance" for c in range(4)):
        problems.append("governors %r" % [host.governor(c) for c in range(4)])
    if host.default_affinity_mask() != 0x3:
        problems.append("default_smp_affinity %r" % host.read("proc/irq/default_smp_affinity"))
    t.ok(not problems, "nothing is left drifted: the host holds config %s exactly" % current,
         "; ".join(problems))
    # Apart, because it fails for its own reason: the request held since config A (0) reads
    # back as "0 <= 10, stricter than asked" after a reload to B, and is not rewritten.
    t.ok(host.dma_latency() == want["dma"],
         "the held cpu_dma_latency request follows the reloads (config %s: %d)" % (current, want["dma"]),
         "dev/cpu_dma_latency holds %r" % host.dma_latency())


def check_reloads_and_bus(t, soak):
    d, reloads, traffic, why = soak.d, soak.reloads, soak.traffic, soak.why
    t_start, t_loaded_end = soak.t_start, soak.t_loaded_end
    # Reloads.
    text = d.stderr()
    n_reloaded = len(re.findall(r"^lowlatd: Reloaded ", text, re.M))
    n_failed = len(re.findall(r"^lowlatd: Reload failed", text, re.M))
    t.ok(reloads["sent"] > 0 and reloads["ready"] == reloads["sent"] and n_reloaded == reloads["sent"]
         and n_failed == 0,
         "every reload was applied: %d SIGHUPs, %d RELOADING=1/READY=1, %d 'Reloaded', %d failed"
         % (reloads["sent"], reloads["ready"], n_reloaded, n_failed),
         "\n".join(l for l in d.stderr_lines() if "Reload failed" in l)[:2000])

    # Bus.
    if not traffic:
        t.skip("lowlatd answered every bus call, throughout the soak", why)
    if traffic:
        ncalls = sum(traffic.calls.values())
        gap = traffic.max_gap(t_start, t_loaded_end)
        t.ok(ncalls > 0 and not traffic.failures,
             "lowlatd answered every bus call (%d: %s)"
             % (ncalls, ", ".join("%s %d" % kv for kv in traffic.calls.items() if kv[1])),
             "%d failures:\n%s" % (len(traffic.failures), "\n".join(traffic.failures[:10])))
        t.ok(gap <= h.scaled(BUS_GAP_MAX), "the bus answered throughout: longest gap between "
             "answers %.1f s (slowest call %.2f s)" % (gap, traffic.slowest))
        # A client that could not start is not lowlatd's failure, but a client that never
        # started asked nothing: those calls must not count as answered.
        t.ok(not traffic.lowlatctl or traffic.clients_started > 0,
             "lowlatctl status could be started during the soak (%d times; %d start failures)"
             % (traffic.clients_started, len(traffic.client_errors)), "\n".join(traffic.client_errors[:5]))


def check_quiet_and_figures(t, soak):
    """Quiet: nothing but the 1 s scan. Then the run's figures, and the bounds on them."""
    d, proc, drift, traffic, bus = soak.d, soak.proc, soak.drift, soak.traffic, soak.bus
    samples, warm, loaded_end, asan = soak.samples, soak.warm, soak.loaded_end, soak.asan
    t_start, t_loaded_end, nsettings, reloads = soak.t_start, soak.t_loaded_end, soak.nsettings, soak.reloads
    lat_irq, lat_sys = soak.lat_irq, soak.lat_sys
    q0 = proc.sample()
    h.settle(QUIET)
    end = proc.sample()
    samples.append(end)
    idle_cpu = (end["cpu"] - q0["cpu"]) / max(1e-6, end["t"] - q0["t"])
    loaded_cpu = (loaded_end["cpu"] - warm["cpu"]) / max(1e-6, loaded_end["t"] - warm["t"])

    growth = end["rss"] - warm["rss"]
    rss_max = RSS_GROWTH_KIB_ASAN if asan else RSS_GROWTH_KIB
    cpu_scale = 1.0 if not asan else 4.0
    props = {}
    if traffic:
        try:
            props = b.Busctl(bus.address).get_all(NAME, PATH, IFACE)
        except Exception:
            props = traffic.last_props

    figures = [
        "soak: %.0f s loaded + %.0f s quiet, 1000 IRQs, %d settings, scan_interval 1s, %s build"
        % (t_loaded_end - t_start, QUIET, nsettings, "ASan" if asan else "plain"),
        "soak: VmRSS %d KiB at start, %d KiB after warm-up (+%.0f s), %d KiB at the end "
        "(growth %+d KiB; max %d KiB over the run)"
        % (samples[0]["rss"], warm["rss"], warm["t"] - t_start, end["rss"], growth,
           max(s["rss"] for s in samples)),
        "soak: fds %d at start, %d after warm-up, %d at the end (min %d, max %d)"
        % (samples[0]["fds"], warm["fds"], end["fds"], min(s["fds"] for s in samples),
           max(s["fds"] for s in samples)),
        "soak: CPU %.1f%% of one CPU under load, %.1f%% idle (%.2f s CPU in all)"
        % (100 * loaded_cpu, 100 * idle_cpu, end["cpu"]),
        "soak: drift injected %d IRQ flips + %d sysctl flips; undone %d + %d (flips of a "
        "setting still pending merge); lowlatd counted DriftEvents %s, Corrections %s"
        % (drift.injected["irq"], drift.injected["sysctl"], drift.corrected["irq"],
           drift.corrected["sysctl"], props.get("DriftEvents", "?"), props.get("Corrections", "?")),
        "soak: IRQ flip undone in median %.0f ms, p99 %.0f ms, max %.0f ms; sysctl (fights "
        "back off %d s) median %.0f ms, max %.1f s"
        % (1000 * pct(lat_irq, 0.5), 1000 * pct(lat_irq, 0.99), 1000 * (lat_irq[-1] if lat_irq else 0),
           FIGHT_BACKOFF, 1000 * pct(lat_sys, 0.5), lat_sys[-1] if lat_sys else 0),
        "soak: %d reloads (A/B alternating every %.0f s)" % (reloads["sent"], RELOAD_EVERY),
    ]
    if traffic:
        figures.append("soak: %d bus calls (%s), slowest %.2f s, %d failed"
                       % (sum(traffic.calls.values()),
                          ", ".join("%s %d" % kv for kv in traffic.calls.items() if kv[1]),
                          traffic.slowest, len(traffic.failures)))
        if traffic.client_errors:
            figures.append("soak: %d client start failures (not counted): %s"
                           % (len(traffic.client_errors), traffic.client_errors[0]))
    for line in figures:
        t.note(line)
    t.note("soak: samples (s, RSS KiB, fds, CPU s): " + " ".join(
        "%.0f/%d/%d/%.2f" % (s["t"] - t_start, s["rss"], s["fds"], s["cpu"]) for s in samples))

    t.ok(abs(end["fds"] - warm["fds"]) <= FD_SLACK,
         "fd count flat: %d after warm-up, %d at the end (±%d)" % (warm["fds"], end["fds"], FD_SLACK))
    t.ok(growth < rss_max, "VmRSS growth after warm-up %+d KiB < %d KiB%s"
         % (growth, rss_max, " (ASan, quarantine %d MiB: loose bound; leaks are LeakSanitizer's)"
            % ASAN_QUARANTINE_MB if asan else ""))
    t.ok(loaded_cpu <= CPU_LOADED_MAX * cpu_scale * h.SCALE,
         "CPU under load %.1f%% of one CPU <= %.0f%%" % (100 * loaded_cpu,
                                                        100 * CPU_LOADED_MAX * cpu_scale * h.SCALE))
    t.ok(idle_cpu <= CPU_IDLE_MAX * cpu_scale * h.SCALE,
         "CPU idle (1,000 IRQs scanned each second) %.1f%% <= %.0f%%"
         % (100 * idle_cpu, 100 * CPU_IDLE_MAX * cpu_scale * h.SCALE))
    t.stopped_cleanly(d)
    if bus is not None:
        bus.stop()


if __name__ == "__main__":
    h.main(run)
