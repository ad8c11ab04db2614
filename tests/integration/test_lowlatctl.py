#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""org.lowlatd1 on a private system bus, seen through the real busctl and through
lowlatctl: properties, ListSettings, signals, the policy (root vs uid 65534), exit
statuses in every posture, JSON and Prometheus output, and lowlatd riding out a bus
restart.

Environment: LOWLATD, LOWLATD_SOURCE_ROOT (as every integration test) and LOWLATCTL,
the lowlatctl binary (skip when unset)."""

import json
import math
import os
import re
import shutil
import signal
import stat
import subprocess
import time

import busctl_harness as b
import lowlat_constants as C
import lowlat_harness as h

NAME, PATH, IFACE = C.BUS_NAME, C.BUS_PATH, C.BUS_INTERFACE
VERSION = C.VERSION

# The monitoring-plugin convention and sysexits.h, as lowlatctl(1) documents them: the
# contract under test, so deliberately not read from lowlatctl.c's #defines (a changed
# #define there must fail this test, not follow it).
EXIT_OK, EXIT_WARNING, EXIT_CRITICAL, EXIT_UNKNOWN, EXIT_USAGE = 0, 1, 2, 3, 64

SPEC_PROPERTIES = {
    "Version": "s", "Mode": "s", "State": "s", "IsolatedCPUs": "s", "HousekeepingCPUs": "s",
    "ConfigFiles": "as", "LastReloadUSec": "t", "LastReloadError": "s", "DriftEvents": "t",
    "Corrections": "t", "Failures": "t", "AppliedSettings": "t", "Fights": "t",
    "CpuDmaLatencyUSec": "i", "Settings": "u", "SettingsNotOk": "u",
    "LastMeasurement": "(stta(uttttttb)a(ussst))", "NoiseGate": "s", "NoiseReads": "(tt)",
    "Features": "as", "NoiseCPUs": "s", "LastReloadErrors": "as", "NoiseUnreadable": "s",
    "CpuDmaLatencyHeld": "b", "CpuDmaLatencySystemUSec": "i", "ConfigWarnings": "as",
    "Profiles": "as", "LastMeasurementHistogram": "(ta(uatat))",
    "Condition": "s", "ConditionReasons": "as", "RebootRequired": "b", "RestoreSkipped": "u",
}
# Version and Features are the build's; NoiseReads changes at every scan, so neither it nor
# NoiseGate is announced; RestoreSkipped is set before Restore()'s reply, read after it.
UNANNOUNCED = {"Version", "Features", "NoiseGate", "NoiseReads", "NoiseUnreadable", "RestoreSkipped"}
NOT_OK_STATES = {"drifted", "failed", "unmovable", "unsupported"}
KINDS = {"irq_affinity", "irq_default_affinity", "sysctl", "cpu_dma_latency", "governor"}
STATES = {"ok", "drifted", "corrected", "failed", "unsupported", "unmovable", "pending"}

CONFIG = """\
[daemon]
scan_interval = 1s

[cpus]
isolated = 2-3

[irq]
pin = eth0-TxRx-* 2-3

[pm]
cpu_dma_latency = 0
governor = performance

[sysctl]
net.core.somaxconn = 8192
net.ipv4.tcp_rmem = 4096 87380 16777216
"""

SIGNAL_TIMEOUT = 5   # seconds, scaled
RECONNECT_TIMEOUT = 15


# ---------------------------------------------------------------------------------------
# Prometheus text exposition format 0.0.4, strictly

_METRIC_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*\Z")
_LABEL_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*\Z")
_VALUE = re.compile(r"(?:[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|[+-]?Inf|NaN)\Z")
_TIMESTAMP = re.compile(r"-?\d+\Z")
_TYPES = {"counter", "gauge", "histogram", "summary", "untyped"}


class PromError(ValueError):
    pass


def _prom_labels(text, lineno):
    """'a="x",b="y\\"z"}' (after the '{') -> (dict, rest after '}')."""
    labels = {}
    i = 0
    while True:
        if text[i:i + 1] == "}":
            return labels, text[i + 1:]
        m = re.match(r"[a-zA-Z_][a-zA-Z0-9_]*", text[i:])
        if not m:
            raise PromError("line %d: bad label name at %r" % (lineno, text[i:]))
        name = m.group(0)
        i += len(name)
        if text[i:i + 2] != '="':
            raise PromError("line %d: expected =\" after label %s" % (lineno, name))
        i += 2
        value = []
        while True:
            if i >= len(text):
                raise PromError("line %d: unterminated label value" % lineno)
            c = text[i]
            if c == "\\":
                e = text[i + 1:i + 2]
                if e == "\\":
                    value.append("\\")
                elif e == '"':
                    value.append('"')
                elif e == "n":
                    value.append("\n")
                else:
                    raise PromError("line %d: bad escape \\%s in label value" % (lineno, e))
                i += 2
            elif c == '"':
                i += 1
                break
            elif c == "\n":
                raise PromError("line %d: raw line feed in label value" % lineno)
            else:
                value.append(c)
                i += 1
        if name in labels:
            raise PromError("line %d: label %s twice" % (lineno, name))
        labels[name] = "".join(value)
        if text[i:i + 1] == ",":
            i += 1
        elif text[i:i + 1] != "}":
            raise PromError("line %d: expected , or } after label %s" % (lineno, name))


def parse_prometheus(text):
    """Returns {"help": {family: text}, "type": {family: type},
    "samples": {(name, frozenset(labels.items())): float}}; raises PromError."""
    if not text.endswith("\n"):
        raise PromError("output does not end with a line feed")
    helps, types, samples = {}, {}, {}
    family_order = []     # families in the order their lines appear
    for lineno, line in enumerate(text[:-1].split("\n"), 1):
        if line != line.strip(" \t") and not line.startswith("#"):
            raise PromError("line %d: leading or trailing white space" % lineno)
        if line == "":
            raise PromError("line %d: empty line" % lineno)
        if line.startswith("#"):
            parts = line.split(" ", 3)
            if len(parts) >= 3 and parts[0] == "#" and parts[1] in ("HELP", "TYPE"):
                name = parts[2]
                if not _METRIC_NAME.match(name):
                    raise PromError("line %d: bad metric name %r" % (lineno, name))
                if family_order and family_order[-1] != name and name in family_order:
                    raise PromError("line %d: %s's lines are not one group" % (lineno, name))
                if not family_order or family_order[-1] != name:
                    family_order.append(name)
                if parts[1] == "HELP":
                    if name in helps:
                        raise PromError("line %d: second HELP for %s" % (lineno, name))
                    doc = parts[3] if len(parts) > 3 else ""
                    if re.search(r"\\[^\\n]|\\\Z", doc):
                        raise PromError("line %d: bad escape in HELP" % lineno)
                    helps[name] = doc
                else:
                    if name in types:
                        raise PromError("line %d: second TYPE for %s" % (lineno, name))
                    if len(parts) != 4 or parts[3] not in _TYPES:
                        raise PromError("line %d: bad TYPE line %r" % (lineno, line))
                    if any(k[0] == name for k in samples):
                        raise PromError("line %d: TYPE for %s after its samples" % (lineno, name))
                    types[name] = parts[3]
            continue
        m = re.match(r"([a-zA-Z_:][a-zA-Z0-9_:]*)", line)
        if not m:
            raise PromError("line %d: bad sample line %r" % (lineno, line))
        name = m.group(1)
        rest = line[len(name):]
        labels = {}
        if rest.startswith("{"):
            labels, rest = _prom_labels(rest[1:], lineno)
        if not rest.startswith(" "):
            raise PromError("line %d: no space before the value" % lineno)
        fields = rest[1:].split(" ")
        if len(fields) not in (1, 2) or not _VALUE.match(fields[0]) or \
                (len(fields) == 2 and not _TIMESTAMP.match(fields[1])):
            raise PromError("line %d: bad value/timestamp %r" % (lineno, rest))
        for ln in labels:
            if not _LABEL_NAME.match(ln) or ln.startswith("__"):
                raise PromError("line %d: bad label name %r" % (lineno, ln))
        family = name
        if family_order and family_order[-1] != family and family in family_order:
            raise PromError("line %d: samples of %s are not one group" % (lineno, family))
        if not family_order or family_order[-1] != family:
            family_order.append(family)
        key = (name, frozenset(labels.items()))
        if key in samples:
            raise PromError("line %d: duplicate series %s%s" % (lineno, name, labels))
        samples[key] = float(fields[0].replace("Inf", "inf").replace("NaN", "nan"))
    return {"help": helps, "type": types, "samples": samples}


def prom_value(parsed, name, **labels):
    return parsed["samples"].get((name, frozenset(labels.items())))


def prom_series(parsed, name):
    return {k[1]: v for k, v in parsed["samples"].items() if k[0] == name}


# ---------------------------------------------------------------------------------------
# lowlatctl

SANITIZER_REPORTS = []


class Ctl:
    def __init__(self, binary, address, tmpdir):
        self.binary = binary
        self.address = address
        # uid 65534 needs a copy it can reach (the build tree may be private).
        self.nobody_binary = os.path.join(tmpdir, "lowlatctl")
        shutil.copy2(binary, self.nobody_binary)
        os.chmod(self.nobody_binary, 0o755)

    def run(self, *args, user=None, address=None):
        env = dict(os.environ)
        env["DBUS_SYSTEM_BUS_ADDRESS"] = address or self.address
        argv = [self.binary] + list(args)
        if user == b.NOBODY:
            argv = b.unprivileged() + [self.nobody_binary] + list(args)
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                           universal_newlines=True, errors="replace", timeout=h.scaled(60))
        SANITIZER_REPORTS.extend("lowlatctl %s: %s" % (" ".join(args), l)
                                 for l in p.stderr.splitlines()
                                 if any(pat in l for pat in h.SANITIZER_PATTERNS))
        return p


def lowlatctl_path():
    p = os.environ.get("LOWLATCTL")
    if not p:
        h.skip("LOWLATCTL is not set (path of the lowlatctl binary)")
    if not (os.path.isfile(p) and os.access(p, os.X_OK)):
        h.skip("lowlatctl binary not found at %s" % p)
    return p


def desc(p):
    return "exit %d\nstdout:\n%s\nstderr:\n%s" % (p.returncode, p.stdout[-3000:], p.stderr[-3000:])


def parse_json(t, p, what):
    try:
        return json.loads(p.stdout)
    except ValueError as e:
        t.ok(False, "%s is valid JSON" % what, "%s\n%s" % (e, desc(p)))
        return None


def parse_status_text(text):
    """'   Label: value' lines (continuations folded into a list) up to the blank line."""
    fields = {}
    last = None
    for line in text.split("\n"):
        if not line.strip():
            break
        m = re.match(r"\s*([^:]+?): (.*)\Z", line)
        if m and not line.startswith(" " * 19):
            last = m.group(1)
            fields[last] = [m.group(2)]
        elif last:
            fields[last].append(line.strip())
    return fields


def parse_table(text):
    """The KIND OBJECT DESIRED OBSERVED STATE table (cells may hold spaces: columns are cut
    at the header's offsets). Returns (rows, footer)."""
    lines = text.rstrip("\n").split("\n")
    hdr = None
    for i, l in enumerate(lines):
        if l.startswith("KIND"):
            hdr = i
            break
    if hdr is None:
        return [], None
    cols = [lines[hdr].index(c) for c in ("KIND", "OBJECT", "DESIRED", "OBSERVED", "STATE")]
    rows = []
    footer = None
    for l in lines[hdr + 1:]:
        if not l.strip():
            continue
        if re.match(r"\d+ settings? listed\.", l):
            footer = l
            continue
        cells = []
        for j, c in enumerate(cols):
            end = cols[j + 1] if j + 1 < len(cols) else None
            cells.append(l[c:end].rstrip() if end else l[c:].rstrip())
        rows.append(tuple(cells))
    return rows, footer


def bus_rows(bc):
    return bc.list_settings(NAME, PATH, IFACE)


def shown(v):
    """A cell as lowlatctl's table shows it: "-" when empty, control characters as \\xNN."""
    if not v:
        return "-"
    return "".join("\\x%02x" % ord(c) if ord(c) < 0x20 or ord(c) == 0x7f else c for c in v)


def start_stack(t, host, config, extra_args=(), policy=True, monitor=True):
    bus = b.PrivateBus(host.tmp, [h.policy_path()] if policy else []).start()
    bc = b.Busctl(bus.address)
    mon = None
    if monitor:
        mon = b.Monitor(bus.address)
        t.ok(mon.wait_started(bc), "busctl monitor is running on the private bus")
    d = h.Daemon(host, config, extra_args=extra_args, env=bus.env())
    d.wait_ready()
    return bus, bc, mon, d


def wait_owner(t, bc, d, what):
    t0 = time.monotonic()
    ok = bc.wait_for_owner(NAME, h.scaled(5), alive=d.alive)
    t.ok(ok, "%s: %s is on the bus (%.2fs)" % (what, NAME, time.monotonic() - t0),
         "lowlatd stderr:\n%s" % d.stderr_tail())
    return ok


def drift_signals(msgs, kind=None, obj=None):
    out = []
    for m in msgs:
        if m.get("type") == "signal" and m.get("path") == PATH and \
                m.get("interface") == IFACE and m.get("member") == "Drift":
            p = m.get("payload", {})
            if p.get("type") != "ssssb":
                out.append(("BADTYPE", p.get("type")))
                continue
            k, o, e, ob, c = p["data"]
            if (kind is None or k == kind) and (obj is None or o == obj):
                out.append((k, o, e, ob, c))
    return out


def changed_names(msgs):
    names = set()
    for changed, invalidated in b.properties_changed(msgs, PATH, IFACE):
        names |= set(changed) | set(invalidated)
    return names


# ---------------------------------------------------------------------------------------
# Checks shared by the scenarios

def check_metrics_match(t, ctl, bc, what, user=None):
    p = ctl.run("metrics", user=user)
    t.ok(p.returncode == EXIT_OK, "%s: metrics exits 0" % what, desc(p))
    try:
        m = parse_prometheus(p.stdout)
    except PromError as e:
        t.ok(False, "%s: metrics output parses strictly" % what, "%s\n%s" % (e, p.stdout[:4000]))
        return None
    t.ok(True, "%s: metrics output parses strictly" % what)
    props = bc.get_all(NAME, PATH, IFACE)
    rows = bus_rows(bc)

    expect_types = {
        "lowlatd_up": "gauge", "lowlatd_info": "gauge", "lowlatd_settings": "gauge",
        "lowlatd_cpu_dma_latency_held": "gauge", "lowlatd_cpu_dma_latency_seconds": "gauge",
        "lowlatd_cpu_dma_latency_system_seconds": "gauge",
        "lowlatd_last_reload_timestamp_seconds": "gauge", "lowlatd_last_reload_success": "gauge",
        "lowlatd_config_warnings": "gauge", "lowlatd_condition": "gauge", "lowlatd_reboot_required": "gauge",
        "lowlatd_drift_events_total": "counter", "lowlatd_corrections_total": "counter",
        "lowlatd_failures_total": "counter", "lowlatd_fights_total": "counter",
        "lowlatd_posture_applied_settings_total": "counter",
        # Noise() (isolated = 2-3): the noise families, checked in test_monitoring.
        "lowlatd_isolated_cpu_interrupts_total": "counter", "lowlatd_isolated_cpu_softirqs_total": "counter",
        "lowlatd_isolated_cpu_context_switches_total": "counter", "lowlatd_isolated_cpu_nohz_full": "gauge",
        "lowlatd_noise_readable": "gauge",
    }
    t.ok(m["type"] == expect_types and set(m["help"]) == set(expect_types) and
         all(m["help"].values()),
         "%s: every family has # HELP and the right # TYPE" % what,
         "types %r\nhelp %r" % (m["type"], m["help"]))
    t.ok(prom_value(m, "lowlatd_up") == 1, "%s: lowlatd_up 1" % what)
    info = prom_series(m, "lowlatd_info")
    want_info = frozenset({"version": props["Version"], "mode": props["Mode"],
                           "state": props["State"]}.items())
    t.ok(info == {want_info: 1.0}, "%s: lowlatd_info labels are version, mode, state" % what,
         "got %r, want %r" % (info, want_info))

    counts = {}
    for r in rows:
        counts[(r[0], r[4])] = counts.get((r[0], r[4]), 0) + 1
    series = prom_series(m, "lowlatd_settings")
    got = {}
    bad_labels = []
    for labels, v in series.items():
        d = dict(labels)
        if set(d) != {"kind", "state"}:
            bad_labels.append(d)
            continue
        got[(d["kind"], d["state"])] = v
    nonzero = {k: v for k, v in got.items() if v}
    t.ok(not bad_labels and nonzero == {k: float(v) for k, v in counts.items()} and
         set(counts) <= set(got),
         "%s: lowlatd_settings{kind,state} counts match ListSettings" % what,
         "metrics %r\nListSettings %r\nbad labels %r" % (nonzero, counts, bad_labels))
    held = props["CpuDmaLatencyUSec"] >= 0 and props["CpuDmaLatencyHeld"]
    seconds = prom_value(m, "lowlatd_cpu_dma_latency_seconds")
    t.ok(prom_value(m, "lowlatd_cpu_dma_latency_held") == held and seconds is not None and
         (abs(seconds - props["CpuDmaLatencyUSec"] / 1e6) < 1e-9 if held else math.isnan(seconds)),
         "%s: lowlatd_cpu_dma_latency_held %d (CpuDmaLatencyHeld), lowlatd_cpu_dma_latency_seconds = "
         "CpuDmaLatencyUSec / 1e6 or NaN (%s)" % (what, held, props["CpuDmaLatencyUSec"]), "seconds %r" % seconds)
    system = prom_value(m, "lowlatd_cpu_dma_latency_system_seconds")
    want = props["CpuDmaLatencySystemUSec"]
    t.ok(system is not None and (abs(system - want / 1e6) < 1e-9 if want >= 0 else math.isnan(system)),
         "%s: lowlatd_cpu_dma_latency_system_seconds = CpuDmaLatencySystemUSec / 1e6 or NaN (%s)" % (what, want),
         "%r" % system)
    ts = prom_value(m, "lowlatd_last_reload_timestamp_seconds")
    t.ok(ts is not None and abs(ts - props["LastReloadUSec"] / 1e6) < 1e-6,
         "%s: lowlatd_last_reload_timestamp_seconds = LastReloadUSec / 1e6" % what,
         "%r vs %r" % (ts, props["LastReloadUSec"]))
    t.ok(prom_value(m, "lowlatd_last_reload_success") == (0 if props["LastReloadError"] else 1),
         "%s: lowlatd_last_reload_success matches LastReloadError" % what)
    for metric, prop in (("lowlatd_drift_events_total", "DriftEvents"),
                         ("lowlatd_corrections_total", "Corrections"),
                         ("lowlatd_failures_total", "Failures"),
                         ("lowlatd_fights_total", "Fights"),
                         ("lowlatd_posture_applied_settings_total", "AppliedSettings")):
        t.ok(prom_value(m, metric) == props[prop], "%s: %s = %s (%s)" % (what, metric, prop, props[prop]),
             "metric %r" % prom_value(m, metric))
    ok, why = promtool_check_metrics(p.stdout)
    t.ok(ok, "%s: promtool check metrics finds nothing to complain about" % what, why)
    return m


def promtool_check_metrics(text):
    """(True, "") when promtool check metrics accepts text, else (False, why). promtool is
    part of what the tests need (Debian: prometheus, in tools/packages.sh): missing, it is
    a failure, never a skip."""
    tool = shutil.which("promtool")
    if not tool:
        return False, ("promtool is not installed (Debian: prometheus, listed in tools/packages.sh; "
                       "tools/run-tests installs it)")
    p = subprocess.run([tool, "check", "metrics"], input=text, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, universal_newlines=True, timeout=h.scaled(60))
    return p.returncode == 0 and not p.stdout.strip(), "exit %d: %s" % (p.returncode, p.stdout)


def check_down_metrics(t, p, what):
    t.ok(p.returncode == EXIT_UNKNOWN, "%s: metrics exits 3" % what, desc(p))
    try:
        m = parse_prometheus(p.stdout)
        t.ok(list(m["samples"]) == [("lowlatd_up", frozenset())] and
             prom_value(m, "lowlatd_up") == 0 and m["type"] == {"lowlatd_up": "gauge"},
             "%s: metrics prints only lowlatd_up 0" % what, p.stdout)
        ok, why = promtool_check_metrics(p.stdout)
        t.ok(ok, "%s: promtool check metrics accepts it" % what, why)
    except PromError as e:
        t.ok(False, "%s: metrics prints only lowlatd_up 0" % what, "%s\n%s" % (e, p.stdout))


def check_listing(t, ctl, bc, what, user=None, expect_rc=EXIT_OK):
    labelled = bc.list_settings_labels(NAME, PATH, IFACE)
    rows = [r[:5] for r in labelled]
    t.ok(any(r[0] == "irq_affinity" and r[5] for r in labelled),
         "%s: ListSettings names IRQs as /proc/interrupts does (the sixth field)" % what,
         repr([r for r in labelled if r[0] == "irq_affinity"][:3]))
    p = ctl.run("list", user=user)
    got, footer = parse_table(p.stdout)
    # An IRQ's row says what it is: "24 virtio0-input.0".
    want = [tuple(shown(c) for c in (r[0], "%s %s" % (r[1], r[5]) if r[5] else r[1]) + r[2:5]) for r in labelled]
    t.ok(p.returncode == expect_rc and sorted(got) == sorted(want) and
         footer == "%d setting%s listed." % (len(rows), "" if len(rows) == 1 else "s"),
         "%s: list shows the %d rows of ListSettings (exit %d)" % (what, len(rows), expect_rc),
         "%s\nfirst differences: %r" % (desc(p), sorted(set(got) ^ set(want))[:5]))
    p = ctl.run("list", "--json", user=user)
    data = parse_json(t, p, "%s: list --json" % what)
    if data is not None:
        keys_ok = all(isinstance(o, dict) and set(o) - {"label"} == {"kind", "object", "desired", "observed",
                                                                     "state"} for o in data)
        t.ok(keys_ok and [o.get("label", "") for o in data] == [r[5] for r in labelled],
             "%s: list --json carries each row's label where it has one" % what)
        as_rows = [(o["kind"], o["object"], o["desired"], o["observed"], o["state"])
                   for o in data] if keys_ok else []
        t.ok(p.returncode == expect_rc and keys_ok and as_rows == rows,
             "%s: list --json is ListSettings as objects, in order" % what,
             "%s\nfirst rows %r vs %r" % (desc(p)[:500], as_rows[:3], rows[:3]))
    return rows


# ---------------------------------------------------------------------------------------
# Scenarios

class Stack:
    """One scenario's fake tree, private bus, bus client and monitor, daemon and lowlatctl."""

    def __init__(self, host, bus, bc, mon, d, ctl):
        self.host, self.bus, self.bc, self.mon, self.d, self.ctl = host, bus, bc, mon, d, ctl


def scenario_enforce(t, ctl_bin):
    # Pinned IRQs start on their pin: a plain file tree cannot make effective_affinity_list
    # follow a write the way the kernel does, so a pin lowlatd has to correct would look
    # stuck on its old effective CPU.
    host = h.FakeHost(ncpus=4, nirqs=1000, isolated="2-3")
    for n in host.irqs_matching("eth0-TxRx-*"):
        host.set_irq_affinity(n, "2-3", effective=True)
    bus, bc, mon, d = start_stack(t, host, CONFIG)
    ctl = Ctl(ctl_bin, bus.address, host.tmp)
    t.ok(bc.has_owner(NAME), "%s is owned when READY=1 arrives" % NAME,
         "a client ordered After=lowlatd.service would find no daemon; stderr:\n%s"
         % d.stderr_tail())
    if not wait_owner(t, bc, d, "enforce"):
        return
    stack = Stack(host, bus, bc, mon, d, ctl)

    check_introspection(t, stack)
    pr, rows, pinned = check_properties_and_rows(t, stack)
    check_all_ok(t, stack, pr, rows)
    check_usage(t, stack)
    check_drift(t, stack, pinned)
    check_reload_reapply(t, stack)
    check_bad_config(t, stack)
    check_reload_warnings(t, stack)
    check_profiles(t, stack)
    check_reload_observe(t, stack)
    check_unprivileged(t, stack)
    check_bus_restart(t, stack)
    check_stopped(t, stack)


def check_introspection(t, stack):
    bc = stack.bc
    # -- introspection, with the real busctl
    intro = bc.introspect(NAME, PATH)
    m = intro.get(IFACE, {})
    props = m.get("properties", {})
    t.ok({k: v[0] for k, v in props.items()} == SPEC_PROPERTIES,
         "introspection: the %d properties of the spec with their types" % len(SPEC_PROPERTIES),
         "got %r" % {k: v[0] for k, v in props.items()})
    t.ok(all(v[1] == "read" for v in props.values()), "introspection: every property is read-only",
         repr(props))
    t.ok(all(props[p][2] in ("true", "invalidates") for p in props if p not in UNANNOUNCED) and
         all(props[p][2] in ("false", "const") for p in UNANNOUNCED if p in props),
         "introspection: every property but Version, Features, NoiseGate and NoiseReads emits PropertiesChanged",
         repr({k: v[2] for k, v in props.items()}))
    t.ok(m.get("methods") == {"ListSettings": ("", "a(ssssss)"), "Check": ("", "a(ssssas)"), "Reload": ("", ""),
                              "Reapply": ("", ""), "Restore": ("", "u"), "Noise": ("", "tta(ussstd)"),
                              "RecordMeasurement": ("stta(uttttttb)a(ussst)", ""),
                              "RecordMeasurementHistogram": ("ta(uatat)", ""),
                              "Diff": ("ss", "tba(sss)a(ssssssss)as"), "ReloadIfUnchanged": ("t", "")},
         "introspection: methods ListSettings() -> a(ssssss), Check() -> a(ssssas), Reload(), Reapply(), "
         "Restore() -> u, Noise() -> tta(ussstd), RecordMeasurement(stta(uttttttb)a(ussst)), "
         "RecordMeasurementHistogram(ta(uatat)), Diff(ss) -> tba(sss)a(ssssssss)as, ReloadIfUnchanged(t)",
         repr(m.get("methods")))
    t.ok(m.get("signals") == {"Drift": "ssssb"}, "introspection: signal Drift(ssssb)",
         repr(m.get("signals")))


def check_properties_and_rows(t, stack):
    """GetAll and ListSettings against the config and the tree; returns the properties,
    the rows and the pinned IRQs."""
    host, bc, d = stack.host, stack.bc, stack.d
    # -- properties
    typ, val = bc.get_property(NAME, PATH, IFACE, "Version")
    t.ok((typ, val) == ("s", VERSION), "busctl get-property Version = s \"%s\"" % VERSION, repr((typ, val)))
    typed = bc.get_all_typed(NAME, PATH, IFACE)
    t.ok({k: v[0] for k, v in typed.items()} == SPEC_PROPERTIES,
         "GetAll returns every property with its spec type", repr(typed))
    pr = {k: v[1] for k, v in typed.items()}
    expect = {"Version": VERSION, "Mode": "enforce", "State": "enforcing", "IsolatedCPUs": "2-3",
              "HousekeepingCPUs": "0-1", "ConfigFiles": [d.config_path], "LastReloadUSec": 0,
              "LastReloadError": "", "CpuDmaLatencyUSec": 0, "CpuDmaLatencyHeld": True,
              "CpuDmaLatencySystemUSec": 0, "Failures": 0, "DriftEvents": 0, "Corrections": 0, "Fights": 0}
    t.ok(all(pr.get(k) == v for k, v in expect.items()),
         "GetAll values match the config and the tree",
         "\n".join("%s: %r (want %r)" % (k, pr.get(k), v) for k, v in expect.items()
                   if pr.get(k) != v))

    # -- ListSettings
    rows = bus_rows(bc)
    # The first pass is not drift: what it set is counted apart (issue 14), and nothing has
    # drifted since, so every corrected row is one the first pass set.
    first_pass = sum(1 for r in rows if r[4] == "corrected")
    t.ok(first_pass > 0 and pr["AppliedSettings"] == first_pass,
         "AppliedSettings (%d) counts the settings the first pass set (%d rows corrected), "
         "DriftEvents and Corrections stay 0" % (pr["AppliedSettings"], first_pass))
    t.ok(len(rows) == pr["Settings"], "ListSettings has Settings (%d) rows" % pr["Settings"],
         "%d rows" % len(rows))
    t.ok(sum(1 for r in rows if r[4] in NOT_OK_STATES) == pr["SettingsNotOk"],
         "SettingsNotOk counts drifted/failed/unmovable/unsupported rows")
    t.ok(all(r[0] in KINDS and r[4] in STATES for r in rows),
         "every row has a spec kind and state",
         repr([r for r in rows if r[0] not in KINDS or r[4] not in STATES][:5]))
    irq_rows = {r[1]: r for r in rows if r[0] == "irq_affinity"}
    pinned = set(host.irqs_matching("eth0-TxRx-*"))
    want_desired = {str(n): ("2-3" if n in pinned else "0-1") for n in host.irqs}
    t.ok({k: v[2] for k, v in irq_rows.items()} == want_desired,
         "an irq_affinity row per IRQ of the tree, desired = pin or housekeeping",
         "missing %r" % sorted(set(want_desired) - set(irq_rows))[:5])
    # observed: smp_affinity_list, then " (effective LIST)" where the kernel has one
    t.ok(all(r[3].split(" (effective ")[0] == host.irq_affinity(int(r[1])) for r in irq_rows.values()),
         "irq_affinity observed is the contents of smp_affinity_list (spec: Settings table)",
         "e.g. %r vs file %r" % (next(iter(irq_rows.values())),
                                 host.irq_affinity(host.irqs[0])))
    sysctls = {r[1]: (r[2], r[3]) for r in rows if r[0] == "sysctl"}
    t.ok(sysctls == {"net.core.somaxconn": ("8192", "8192"),
                     "net.ipv4.tcp_rmem": ("4096 87380 16777216", "4096 87380 16777216")},
         "sysctl rows: desired and observed, white space normalised", repr(sysctls))
    t.ok(sorted(r[1] for r in rows if r[0] == "governor") == ["cpu0", "cpu1", "cpu2", "cpu3"] and
         all(r[2] == "performance" for r in rows if r[0] == "governor"),
         "a governor row per online CPU")
    t.ok([r[1:3] for r in rows if r[0] == "cpu_dma_latency"] == [("/dev/cpu_dma_latency", "0")],
         "the cpu_dma_latency row: /dev/cpu_dma_latency, 0")
    t.ok([r[1] for r in rows if r[0] == "irq_default_affinity"] == ["default_smp_affinity"],
         "the irq_default_affinity row")
    return pr, rows, pinned


def check_all_ok(t, stack, pr, rows):
    bc, d, ctl = stack.bc, stack.d, stack.ctl
    # -- lowlatctl status / list / metrics, all ok
    p = ctl.run("status")
    f = parse_status_text(p.stdout)
    t.ok(p.returncode == EXIT_OK, "status exits 0 when everything is ok", desc(p))
    t.ok(f.get("Version") == [VERSION] and f.get("Mode") == ["enforce"] and
         f.get("State") == ["enforcing"] and f.get("Isolated CPUs") == ["2-3"] and
         f.get("Housekeeping CPUs") == ["0-1"] and f.get("Config files") == [d.config_path] and
         f.get("Last reload") == ["never"] and f.get("cpu_dma_latency") == ["0 us (held)"] and
         f.get("Failures") == ["0"] and f.get("Fights") == ["0"] and
         f.get("Drift events") == ["0"] and f.get("Corrections") == ["0"] and
         f.get("Applied settings") == [str(pr["AppliedSettings"])] and
         f.get("Settings") == ["%d (0 not ok)" % pr["Settings"]],
         "status text shows version, mode, state, CPUs, files, reload, counters, latency",
         "%r\n%s" % (f, desc(p)))
    t.ok(p.stdout.split("\n")[0] == "LOWLATD OK: enforcing, %d settings, all ok or corrected; applied" % len(rows),
         "status text: the first line is the monitoring summary, then the condition", p.stdout)
    t.ok("KIND" not in p.stdout, "status text: no table when nothing needs attention", p.stdout)

    p = ctl.run("status", "--json")
    j = parse_json(t, p, "status --json")
    if j is not None:
        want = {"version": VERSION, "mode": "enforce", "state": "enforcing", "verdict": "ok",
                "condition": "applied", "condition_reasons": [], "reboot_required": False,
                "isolated_cpus": "2-3", "housekeeping_cpus": "0-1",
                "config_files": [d.config_path], "last_reload_usec": 0,
                "last_reload_error": [], "profiles": [], "config_warnings": [], "drift_events": pr["DriftEvents"],
                "corrections": pr["Corrections"], "failures": 0, "fights": 0,
                "applied_settings": pr["AppliedSettings"], "cpu_dma_latency_usec": 0,
                "cpu_dma_latency_held": True, "cpu_dma_latency_system_usec": 0,
                "n_settings": pr["Settings"], "n_settings_not_ok": 0, "settings_not_ok": [],
                "last_measurement": None}
        t.ok(p.returncode == EXIT_OK and j == want, "status --json: the properties, verdict ok, no settings",
             "got %r\nwant %r" % (j, want))
    check_listing(t, ctl, bc, "enforce")
    p = ctl.run("list", "--state=ok,corrected", "--no-legend")
    t.ok(p.returncode == EXIT_OK and len(p.stdout.splitlines()) == len(rows) and
         not p.stdout.startswith("KIND"),
         "list --state=ok,corrected --no-legend: every row, no header", desc(p)[:500])
    p = ctl.run("list", "--state=failed")
    t.ok(p.returncode == EXIT_OK and p.stdout == "0 settings listed.\n",
         "list --state=failed: nothing", desc(p))
    check_metrics_match(t, ctl, bc, "enforce")


def check_usage(t, stack):
    bus, ctl = stack.bus, stack.ctl
    # -- usage
    for args, rc, what in ((["--help"], 0, "--help"), (["--version"], 0, "--version"),
                           (["--bogus"], EXIT_USAGE, "an unknown option"),
                           (["frobnicate"], EXIT_USAGE, "an unknown command"),
                           (["status", "extra"], EXIT_USAGE, "an extra argument"),
                           (["metrics", "--json"], EXIT_USAGE, "--json with metrics"),
                           (["status", "--state=ok"], EXIT_USAGE, "--state with status"),
                           (["list", "--state=drifed"], EXIT_USAGE, "--state with a state that does not exist")):
        p = ctl.run(*args)
        t.ok(p.returncode == rc, "lowlatctl %s exits %d" % (what, rc), desc(p))
    with open("/dev/full", "w") as full:
        p = subprocess.run([ctl.binary, "status"], stdout=full, stderr=subprocess.PIPE,
                           env=dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=bus.address),
                           universal_newlines=True, timeout=h.scaled(30))
    t.ok(p.returncode == 74 and "standard output" in p.stderr,
         "status into a full disk (/dev/full) exits 74", "exit %d: %s" % (p.returncode, p.stderr))
    p = ctl.run("--version")
    t.ok(p.stdout.startswith("lowlatctl %s\nlowlatd %s (features: " % (VERSION, VERSION)),
         "--version prints lowlatctl %s, then lowlatd's version and features" % VERSION, p.stdout)
    p = ctl.run()
    t.ok(p.returncode == EXIT_OK and "State: enforcing" in p.stdout, "no command means status",
         desc(p))


def check_drift(t, stack, pinned):
    host, bc, mon, d, ctl = stack.host, stack.bc, stack.mon, stack.d, stack.ctl
    # -- drift: signals and PropertiesChanged
    before = bc.get_all(NAME, PATH, IFACE)
    cur = mon.mark()
    host.set_sysctl("net.core.somaxconn", "4096")
    ok = d.poll_until(lambda: host.sysctl("net.core.somaxconn") == "8192", h.scaled(SIGNAL_TIMEOUT))
    t.ok(ok, "enforce: drifted sysctl is put back")
    sigs = mon.wait_for(lambda ms: len(drift_signals(ms, "sysctl", "net.core.somaxconn")) >= 2,
                        cur, h.scaled(SIGNAL_TIMEOUT))
    sigs = drift_signals(mon.messages[cur:], "sysctl", "net.core.somaxconn")
    t.ok(len(sigs) >= 1 and sigs[0] == ("sysctl", "net.core.somaxconn", "8192", "4096", False),
         "Drift(sysctl, net.core.somaxconn, 8192, 4096, false) when found drifted", repr(sigs))
    t.ok(len(sigs) >= 2 and sigs[1][:3] == ("sysctl", "net.core.somaxconn", "8192") and
         sigs[1][4] is True, "Drift(..., corrected=true) after the correction", repr(sigs))
    after = h.poll_until(lambda: (lambda a: a if a["DriftEvents"] > before["DriftEvents"] and
                                  a["Corrections"] > before["Corrections"] else None)(
        bc.get_all(NAME, PATH, IFACE)), h.scaled(SIGNAL_TIMEOUT))
    t.ok(after, "DriftEvents and Corrections went up",
         "before %r" % {k: before[k] for k in ("DriftEvents", "Corrections")})
    if after:
        t.ok(after["DriftEvents"] == before["DriftEvents"] + 1 and
             after["Corrections"] == before["Corrections"] + 1 and
             after["AppliedSettings"] == before["AppliedSettings"],
             "one rewrite: one drift event, one correction, AppliedSettings unchanged",
             "%r -> %r" % ({k: before[k] for k in ("DriftEvents", "Corrections", "AppliedSettings")},
                           {k: after[k] for k in ("DriftEvents", "Corrections", "AppliedSettings")}))
        pcs = mon.wait_for(lambda ms: [c for c, _ in b.properties_changed(ms, PATH, IFACE)
                                       if c.get("DriftEvents") == after["DriftEvents"]],
                           cur, h.scaled(SIGNAL_TIMEOUT))
        t.ok(pcs, "PropertiesChanged carries the new DriftEvents (%d)" % after["DriftEvents"],
             repr(b.properties_changed(mon.messages[cur:], PATH, IFACE)))
        t.ok("Corrections" in changed_names(mon.messages[cur:]), "PropertiesChanged names Corrections")
    irq = [n for n in host.irqs if n not in pinned][100]
    cur = mon.mark()
    host.set_irq_affinity(irq, "2-3")
    sigs = mon.wait_for(lambda ms: drift_signals(ms, "irq_affinity", str(irq)), cur,
                        h.scaled(SIGNAL_TIMEOUT))
    t.ok(sigs and sigs[0][:3] == ("irq_affinity", str(irq), "0-1") and sigs[0][3].startswith("2-3") and
         sigs[0][4] is False, "Drift(irq_affinity, %d, 0-1, 2-3, false) for a moved IRQ" % irq,
         repr(sigs))
    d.poll_until(lambda: host.irq_cpus(irq) == {0, 1}, h.scaled(SIGNAL_TIMEOUT))
    p = ctl.run("status")
    t.ok(p.returncode == EXIT_OK, "status exits 0 after corrected drift", desc(p))


def check_reload_reapply(t, stack):
    bc, mon, ctl = stack.bc, stack.mon, stack.ctl
    # -- Reload and Reapply as root
    t0 = time.time()
    cur = mon.mark()
    p = ctl.run("reload")
    t1 = time.time()
    t.ok(p.returncode == EXIT_OK and p.stdout == "", "reload as root exits 0, prints nothing", desc(p))
    pr = bc.get_all(NAME, PATH, IFACE)
    t.ok(t0 * 1e6 - 1e6 <= pr["LastReloadUSec"] <= t1 * 1e6 + 1e6 and pr["LastReloadError"] == "",
         "LastReloadUSec is the reload's CLOCK_REALTIME time, LastReloadError empty",
         "%r not in [%d, %d]" % (pr["LastReloadUSec"], t0 * 1e6, t1 * 1e6))
    t.ok(mon.wait_for(lambda ms: "LastReloadUSec" in changed_names(ms), cur, h.scaled(SIGNAL_TIMEOUT)),
         "PropertiesChanged names LastReloadUSec after Reload")
    f = parse_status_text(ctl.run("status").stdout)
    t.ok(f.get("Last reload", ["never"])[0] != "never" and "Last reload error" not in f,
         "status shows the reload time and no error", repr(f))
    p = ctl.run("reapply")
    t.ok(p.returncode == EXIT_OK, "reapply as root exits 0", desc(p))


def check_bad_config(t, stack):
    host, bc, d, ctl = stack.host, stack.bc, stack.d, stack.ctl
    # -- a bad config: InvalidConfig, old posture kept
    d.rewrite_config(CONFIG + "[bogus]\nkey = 1\n")
    p = ctl.run("reload")
    t.ok(p.returncode == 1 and "org.lowlatd1.Error.InvalidConfig" in p.stderr and
         d.config_path + ":" in p.stderr,
         "reload of an invalid config exits 1 and prints InvalidConfig with FILE:LINE", desc(p))
    pr = bc.get_all(NAME, PATH, IFACE)
    t.ok(d.config_path in pr["LastReloadError"], "LastReloadError holds the config errors",
         repr(pr["LastReloadError"]))
    p = ctl.run("status", "--json")
    j = parse_json(t, p, "status --json after a failed reload")
    if j is not None:
        t.ok(j["last_reload_error"] == pr["LastReloadErrors"] and p.returncode == EXIT_OK,
             "status --json: last_reload_error, an array of the errors, still exit 0 (old posture enforced)",
             desc(p))
    f = parse_status_text(ctl.run("status").stdout)
    t.ok(f.get("Last reload", [""])[0].endswith("(failed)") and
         d.config_path in " ".join(f.get("Last reload error", [])),
         "status text: Last reload ... (failed) and the error", repr(f))
    mm = parse_prometheus(ctl.run("metrics").stdout)
    t.ok(prom_value(mm, "lowlatd_last_reload_success") == 0, "metrics: lowlatd_last_reload_success 0")
    host.set_sysctl("net.core.somaxconn", "1024")
    t.ok(d.poll_until(lambda: host.sysctl("net.core.somaxconn") == "8192", h.scaled(SIGNAL_TIMEOUT)),
         "after a failed reload the old posture is still enforced")
    p = bc.run("call", NAME, PATH, IFACE, "Reload")
    t.ok(p.returncode != 0 and d.config_path in p.stderr,
         "busctl call Reload fails with the config errors too", desc(p))
    d.rewrite_config(CONFIG)
    p = ctl.run("reload")
    pr = bc.get_all(NAME, PATH, IFACE)
    t.ok(p.returncode == EXIT_OK and pr["LastReloadError"] == "", "a good reload clears LastReloadError",
         desc(p) + repr(pr["LastReloadError"]))


def check_profiles(t, stack):
    bc, d, ctl = stack.bc, stack.d, stack.ctl
    # -- a profile beside the configuration (/etc/lowlatd/profiles): in force after a reload
    local = os.path.join(os.path.dirname(d.config_path), "profiles")
    os.makedirs(local, exist_ok=True)
    with open(os.path.join(local, "mine.conf"), "w") as f:
        f.write("[sysctl]\nvm.stat_interval = 10\n")
    d.rewrite_config(CONFIG + "[daemon]\nprofile = mine\n")
    p = ctl.run("reload")
    pr = bc.get_all(NAME, PATH, IFACE)
    t.ok(p.returncode == EXIT_OK and pr["Profiles"] == ["mine"] and
         os.path.join(local, "mine.conf") == pr["ConfigFiles"][0],
         "a reload with profile = mine: Profiles [mine], its file first in ConfigFiles", desc(p) + repr(pr))
    f = parse_status_text(ctl.run("status").stdout)
    t.ok(f.get("Profiles") == ["mine"], "status text: Profiles: mine", repr(f))
    j = parse_json(t, ctl.run("status", "--json"), "status --json with a profile")
    if j is not None:
        t.ok(j["profiles"] == ["mine"], "status --json: profiles", repr(j))
    d.rewrite_config(CONFIG)
    p = ctl.run("reload")
    pr = bc.get_all(NAME, PATH, IFACE)
    t.ok(p.returncode == EXIT_OK and pr["Profiles"] == [], "without the key: Profiles empty", repr(pr["Profiles"]))


def check_reload_warnings(t, stack):
    bc, d, ctl = stack.bc, stack.d, stack.ctl
    # -- a valid config that will hurt: applied, and its warnings said where one looks
    line = len(CONFIG.splitlines()) + 2
    d.rewrite_config(CONFIG + "[sysctl]\nkernel.sched_rt_runtime_us = -1\n")
    p = ctl.run("reload")
    want = "%s:%d: warning: kernel.sched_rt_runtime_us = -1" % (d.config_path, line)
    t.ok(p.returncode == EXIT_OK and p.stdout == "" and "reloaded, with 1 warning:" in p.stderr and
         want in p.stderr, "reload of a config with a warning: exit 0, the warning on stderr as FILE:LINE", desc(p))
    pr = bc.get_all(NAME, PATH, IFACE)
    t.ok(len(pr["ConfigWarnings"]) == 1 and pr["ConfigWarnings"][0].startswith(want) and
         pr["LastReloadError"] == "", "ConfigWarnings holds it; LastReloadError stays empty", repr(pr))
    j = parse_json(t, ctl.run("status", "--json"), "status --json with a warning")
    if j is not None:
        t.ok(j["config_warnings"] == pr["ConfigWarnings"], "status --json: config_warnings", repr(j))
    f = parse_status_text(ctl.run("status").stdout)
    t.ok(want in " ".join(f.get("Config warnings", [])), "status text: Config warnings", repr(f))
    mm = parse_prometheus(ctl.run("metrics").stdout)
    t.ok(prom_value(mm, "lowlatd_config_warnings") == 1, "metrics: lowlatd_config_warnings 1")
    d.rewrite_config(CONFIG)
    p = ctl.run("reload")
    pr = bc.get_all(NAME, PATH, IFACE)
    t.ok(p.returncode == EXIT_OK and p.stderr == "" and pr["ConfigWarnings"] == [],
         "a reload without warnings: nothing on stderr, ConfigWarnings empty", desc(p) + repr(pr["ConfigWarnings"]))


def check_reload_observe(t, stack):
    host, bc, mon, d, ctl = stack.host, stack.bc, stack.mon, stack.d, stack.ctl
    # -- reload into observe mode: drift is a warning
    cur = mon.mark()
    d.rewrite_config(CONFIG.replace("scan_interval = 1s", "scan_interval = 1s\nmode = observe"))
    p = ctl.run("reload")
    pr = bc.get_all(NAME, PATH, IFACE)
    t.ok(p.returncode == EXIT_OK and pr["Mode"] == "observe" and pr["State"] == "observing",
         "reload into observe: Mode observe, State observing", desc(p) + repr(pr))
    t.ok(mon.wait_for(lambda ms: {"Mode", "State"} <= changed_names(ms), cur, h.scaled(SIGNAL_TIMEOUT)),
         "PropertiesChanged names Mode and State", repr(changed_names(mon.messages[cur:])))
    cur = mon.mark()
    host.set_sysctl("net.core.somaxconn", "2048")
    sigs = mon.wait_for(lambda ms: drift_signals(ms, "sysctl", "net.core.somaxconn"), cur,
                        h.scaled(SIGNAL_TIMEOUT))
    t.ok(sigs and sigs[0] == ("sysctl", "net.core.somaxconn", "8192", "2048", False),
         "observe: Drift(..., false) for the drift", repr(sigs))
    p = ctl.run("status")
    t.ok(p.returncode == EXIT_WARNING, "observe with drift: status exits 1", desc(p))
    rows, _ = parse_table(p.stdout[p.stdout.find("KIND"):])
    t.ok(rows == [("sysctl", "net.core.somaxconn", "8192", "2048", "drifted")],
         "status table lists exactly the drifted setting", desc(p))
    t.ok(host.sysctl("net.core.somaxconn") == "2048", "observe: nothing written")
    t.ok(not [s for s in drift_signals(mon.messages[cur:]) if s[4] is True],
         "observe: no Drift(..., true)")
    d.rewrite_config(CONFIG)
    p = ctl.run("reload")
    t.ok(p.returncode == EXIT_OK and d.poll_until(lambda: host.sysctl("net.core.somaxconn") == "8192",
                                                  h.scaled(SIGNAL_TIMEOUT)),
         "reload back to enforce corrects the drift", desc(p))
    t.ok(h.poll_until(lambda: ctl.run("status").returncode == EXIT_OK, h.scaled(SIGNAL_TIMEOUT)),
         "status exits 0 again")


def check_unprivileged(t, stack):
    bus, bc, ctl = stack.bus, stack.bc, stack.ctl
    # -- uid 65534: reads work, Reload and Reapply are refused by the policy
    nb = b.Busctl(bus.address, user=b.NOBODY)
    last = bc.get_all(NAME, PATH, IFACE)["LastReloadUSec"]
    for verb in ("reload", "reapply", "diff"):
        p = ctl.run(verb, user=b.NOBODY)
        t.ok(p.returncode == 1 and p.stderr.startswith("lowlatctl: %s needs root" % verb),
             "uid 65534: lowlatctl %s exits 1: it needs root" % verb, desc(p))
    t.ok(bc.get_all(NAME, PATH, IFACE)["LastReloadUSec"] == last, "uid 65534: no reload happened")
    p = nb.run("call", NAME, PATH, IFACE, "Reload")
    t.ok(p.returncode != 0 and ("denied" in p.stderr.lower() or "rejected" in p.stderr.lower()),
         "uid 65534: busctl call Reload is refused", desc(p))
    p = nb.run("set-property", NAME, PATH, IFACE, "Mode", "s", "observe")
    t.ok(p.returncode != 0, "uid 65534: busctl set-property is refused", desc(p))
    try:
        t.ok(nb.get_property(NAME, PATH, IFACE, "State") == ("s", "enforcing"),
             "uid 65534: busctl get-property State works")
        t.ok(bus_rows(nb) == bus_rows(bc), "uid 65534: busctl call ListSettings works")
        t.ok(nb.get_all(NAME, PATH, IFACE)["Version"] == VERSION, "uid 65534: GetAll works")
    except b.BusError as e:
        t.ok(False, "uid 65534: property reads and ListSettings work", str(e))
    p = ctl.run("status", user=b.NOBODY)
    t.ok(p.returncode == EXIT_OK and "State: enforcing" in p.stdout, "uid 65534: status exits 0", desc(p))
    check_listing(t, ctl, bc, "uid 65534", user=b.NOBODY)
    check_metrics_match(t, ctl, bc, "uid 65534", user=b.NOBODY)


def check_bus_restart(t, stack):
    host, bus, bc, mon, d, ctl = stack.host, stack.bus, stack.bc, stack.mon, stack.d, stack.ctl
    # -- the bus goes away: lowlatd keeps enforcing, then comes back on a new bus
    counters = bc.get_all(NAME, PATH, IFACE)
    mon.close()
    bus.stop(signal.SIGKILL)
    time.sleep(h.scaled(0.3))
    t.ok(d.alive(), "lowlatd survives the dbus-daemon being killed", d.stderr_tail())
    host.set_sysctl("net.core.somaxconn", "512")
    t.ok(d.poll_until(lambda: host.sysctl("net.core.somaxconn") == "8192", h.scaled(SIGNAL_TIMEOUT)),
         "without a bus, drift is still corrected")
    p = ctl.run("status")
    t.ok(p.returncode == EXIT_UNKNOWN, "no bus: status exits 3", desc(p))
    check_down_metrics(t, ctl.run("metrics"), "no bus")
    bus.start()
    t0 = time.monotonic()
    ok = bc.wait_for_owner(NAME, h.scaled(RECONNECT_TIMEOUT), alive=d.alive)
    t.ok(ok, "lowlatd reconnects to a new dbus-daemon on the same address (%.1fs)"
         % (time.monotonic() - t0), "lowlatd stderr:\n%s\nbus log:\n%s" % (d.stderr_tail(), bus.log()))
    if ok:
        pr = bc.get_all(NAME, PATH, IFACE)
        t.ok(pr["DriftEvents"] > counters["DriftEvents"] and
             pr["Corrections"] > counters["Corrections"],
             "counters kept and include the drift corrected while off the bus",
             "%r -> %r" % ({k: counters[k] for k in ("DriftEvents", "Corrections")},
                           {k: pr[k] for k in ("DriftEvents", "Corrections")}))
        p = ctl.run("status")
        t.ok(p.returncode == EXIT_OK, "status exits 0 on the new bus", desc(p))
        mon2 = b.Monitor(bus.address)
        mon2.wait_started(bc)
        cur = mon2.mark()
        host.set_sysctl("net.core.somaxconn", "256")
        t.ok(mon2.wait_for(lambda ms: drift_signals(ms, "sysctl", "net.core.somaxconn"), cur,
                           h.scaled(SIGNAL_TIMEOUT)),
             "Drift signals flow on the new bus")
        mon2.close()


def check_stopped(t, stack):
    bus, d, ctl = stack.bus, stack.d, stack.ctl
    # -- lowlatd stopped, bus still up
    t.stopped_cleanly(d)
    for verb in ("status", "list", "reload", "reapply"):
        p = ctl.run(verb)
        t.ok(p.returncode == EXIT_UNKNOWN, "lowlatd not running: %s exits 3" % verb, desc(p))
    p = ctl.run("status")
    t.ok("not running" in p.stdout, "lowlatd not running: status says so", desc(p))
    check_down_metrics(t, ctl.run("metrics"), "lowlatd not running")
    bus.stop()


def scenario_observe(t, ctl_bin):
    """Started with --observe: drift is a warning (1); JSON escaping of odd values."""
    host = h.FakeHost(ncpus=4, nirqs=50, isolated="2-3", irq_affinity="0-1", default_affinity={0, 1},
                      sysctls={"net.core.default_qdisc": "x"})
    # An observed value with a quote, a backslash, a control character and a tab.
    odd = 'fq_"co\\del\x01\tx'
    h.write_text(host.sysctl_path("net.core.default_qdisc"), odd + "\n")
    config = "[cpus]\nisolated = 2-3\n[sysctl]\nnet.core.somaxconn = 8192\nnet.core.default_qdisc = fq\n"
    bus, bc, mon, d = start_stack(t, host, config, extra_args=["--observe"])
    ctl = Ctl(ctl_bin, bus.address, host.tmp)
    if not wait_owner(t, bc, d, "observe"):
        return
    pr = bc.get_all(NAME, PATH, IFACE)
    t.ok(pr["Mode"] == "observe" and pr["State"] == "observing" and pr["CpuDmaLatencyUSec"] == -1,
         "--observe: Mode observe, State observing, CpuDmaLatencyUSec -1 (off)", repr(pr))
    t.ok(pr["DriftEvents"] == 0 and pr["AppliedSettings"] == 0 and pr["Corrections"] == 0,
         "--observe: the first look counts no drift (the settings show it) and sets nothing",
         repr({k: pr[k] for k in ("DriftEvents", "Corrections", "AppliedSettings")}))
    rows = bus_rows(bc)
    odd_rows = [r for r in rows if r[1] == "net.core.default_qdisc"]
    t.ok(len(odd_rows) == 1 and odd_rows[0][4] == "drifted", "the odd sysctl is drifted", repr(odd_rows))
    odd_observed = odd_rows[0][3] if odd_rows else None
    t.ok(odd_observed is not None and '"' in odd_observed and "\\" in odd_observed and
         "\x01" in odd_observed, "its observed value keeps the quote, backslash and \\x01",
         repr(odd_observed))

    p = ctl.run("status")
    t.ok(p.returncode == EXIT_WARNING, "observe with drift: status exits 1", desc(p))
    t.ok(p.stdout.split("\n")[0] == "LOWLATD WARNING: observing, 2 of %d settings need attention "
         "(2 drifted); observing" % len(rows), "status text: summary line names the warning", p.stdout[:300])
    t.ok("Condition: observing\n" in p.stdout and "lowlatd runs with --observe" in p.stdout,
         "status text: Condition observing, saying it is --observe", p.stdout[:600])
    t.ok("\\x01" in p.stdout and "\x01" not in p.stdout,
         "status text shows a control character as \\x01", repr(p.stdout[-400:]))
    f = parse_status_text(p.stdout)
    t.ok(f.get("cpu_dma_latency") == ["off"] and f.get("Mode") == ["observe"],
         "status text: cpu_dma_latency off, Mode observe", repr(f))
    p = ctl.run("status", "--json")
    j = parse_json(t, p, "observe: status --json")
    if j is not None:
        want = sorted([{"kind": "sysctl", "object": "net.core.somaxconn", "desired": "8192",
                        "observed": "4096", "state": "drifted"},
                       {"kind": "sysctl", "object": "net.core.default_qdisc", "desired": "fq",
                        "observed": odd_observed, "state": "drifted"}], key=lambda o: o["object"])
        t.ok(p.returncode == EXIT_WARNING and j["verdict"] == "warning" and
             sorted(j["settings_not_ok"], key=lambda o: o["object"]) == want,
             "status --json: settings_not_ok are the two drifted sysctls, odd value intact",
             "%r\nwant %r" % (j.get("settings_not_ok"), want))
        t.ok(j["n_settings_not_ok"] == pr["SettingsNotOk"] == 2, "n_settings_not_ok = SettingsNotOk = 2")
    t.ok("\\u0001" in p.stdout and '\\"' in p.stdout and "\\\\" in p.stdout,
         "JSON escapes \\u0001, \\\" and \\\\", p.stdout[-300:])
    check_listing(t, ctl, bc, "observe", expect_rc=EXIT_WARNING)
    p = ctl.run("list", "--state=drifted", "--json")
    j = parse_json(t, p, "list --state=drifted --json")
    if j is not None:
        t.ok(sorted(o["object"] for o in j) == ["net.core.default_qdisc", "net.core.somaxconn"],
             "list --state=drifted --json: the two sysctls", repr(j))
    m = check_metrics_match(t, ctl, bc, "observe")
    if m:
        t.ok(prom_value(m, "lowlatd_settings", kind="sysctl", state="drifted") == 2 and
             prom_value(m, "lowlatd_info", version=VERSION, mode="observe", state="observing") == 1,
             "metrics: 2 drifted sysctls, info mode=observe state=observing")
    t.ok(host.sysctl("net.core.somaxconn") == "4096", "--observe: nothing written")
    cur = mon.mark()
    irq = host.irqs[10]
    host.set_irq_affinity(irq, "3")
    sigs = mon.wait_for(lambda ms: drift_signals(ms, "irq_affinity", str(irq)), cur,
                        h.scaled(SIGNAL_TIMEOUT))
    t.ok(sigs and sigs[0][2] == "0-1" and sigs[0][3].startswith("3") and sigs[0][4] is False,
         "--observe: Drift(irq_affinity, %d, 0-1, 3, false)" % irq, repr(sigs))
    h.settle(1.5)
    t.ok(not [s for s in drift_signals(mon.messages[cur:]) if s[4] is True],
         "--observe: never Drift(..., true)")
    pr = bc.get_all(NAME, PATH, IFACE)
    t.ok(pr["DriftEvents"] == 1 and pr["Corrections"] == 0,
         "--observe: the rewrite after start is one drift event, no correction",
         repr({k: pr[k] for k in ("DriftEvents", "Corrections")}))
    t.ok(mon.wait_for(lambda ms: "SettingsNotOk" in changed_names(ms), cur, h.scaled(SIGNAL_TIMEOUT)),
         "PropertiesChanged names SettingsNotOk when a setting drifts")
    t.stopped_cleanly(d)
    bus.stop()


def scenario_failed(t, ctl_bin):
    """A governor file that rejects writes and a sysctl that is a directory: degraded, 2."""
    host = h.FakeHost(ncpus=4, nirqs=50, isolated="2-3")
    gov = host.governor_path(2)
    os.unlink(gov)
    try:
        # The same device as /dev/full: reads give zeros, every write fails with ENOSPC.
        os.mknod(gov, 0o644 | stat.S_IFCHR, os.makedev(1, 7))
    except OSError as e:
        t.note("cannot mknod a char device in the tree (%s); using a directory" % e)
        os.mkdir(gov)
    busy = host.sysctl_path("net.core.busy_poll")
    os.unlink(busy)
    os.mkdir(busy)
    config = "[cpus]\nisolated = 2-3\n[pm]\ngovernor = performance\n[sysctl]\nnet.core.busy_poll = 50\n" \
             "net.core.somaxconn = 8192\n"
    bus, bc, mon, d = start_stack(t, host, config, monitor=False)
    ctl = Ctl(ctl_bin, bus.address, host.tmp)
    if not wait_owner(t, bc, d, "failed"):
        return
    pr = bc.get_all(NAME, PATH, IFACE)
    t.ok(pr["State"] == "degraded" and pr["Failures"] >= 2,
         "failed settings: State degraded, Failures >= 2", repr(pr))
    p = ctl.run("status")
    t.ok(p.returncode == EXIT_CRITICAL, "failed settings: status exits 2", desc(p))
    n = len(bus_rows(bc))
    t.ok(p.stdout.split("\n")[0] == "LOWLATD CRITICAL: degraded, 2 of %d settings need attention "
         "(2 failed); degraded" % n, "status text: summary line names the failures", p.stdout[:300])
    rows, _ = parse_table(p.stdout[p.stdout.find("KIND"):])
    t.ok(sorted((r[0], r[1], r[4]) for r in rows) ==
         [("governor", "cpu2", "failed"), ("sysctl", "net.core.busy_poll", "failed")],
         "status table: the governor and the sysctl, failed", desc(p))
    p = ctl.run("status", "--json")
    j = parse_json(t, p, "failed: status --json")
    if j is not None:
        t.ok(p.returncode == EXIT_CRITICAL and j["verdict"] == "critical" and j["state"] == "degraded" and
             sorted(o["object"] for o in j["settings_not_ok"]) == ["cpu2", "net.core.busy_poll"],
             "status --json: verdict critical, both failed settings", repr(j))
    check_listing(t, ctl, bc, "failed", expect_rc=EXIT_CRITICAL)
    m = check_metrics_match(t, ctl, bc, "failed")
    if m:
        t.ok(prom_value(m, "lowlatd_settings", kind="governor", state="failed") == 1 and
             prom_value(m, "lowlatd_settings", kind="sysctl", state="failed") == 1 and
             prom_value(m, "lowlatd_failures_total") >= 2,
             "metrics: one failed governor, one failed sysctl, failures counted")
    t.stopped_cleanly(d)
    bus.stop()


def scenario_not_utf8(t, ctl_bin):
    """A sysctl file holding bytes that are not UTF-8 (kernel.hostname may hold anything):
    D-Bus strings must be UTF-8, so lowlatd has to clean the value, not fail ListSettings."""
    host = h.FakeHost(ncpus=4, nirqs=10, isolated="2-3", irq_affinity="0-1", default_affinity={0, 1},
                      sysctls={"kernel.hostname": "x"})
    h.write_bytes(host.sysctl_path("kernel.hostname"), b"caf\xe9-\xff\xfe\n")
    bus, bc, mon, d = start_stack(t, host, "[cpus]\nisolated = 2-3\n[sysctl]\nkernel.hostname = trading1\n",
                                  extra_args=["--observe"], monitor=False)
    ctl = Ctl(ctl_bin, bus.address, host.tmp)
    if not wait_owner(t, bc, d, "not UTF-8"):
        return
    p = bc.run("--json=short", "call", NAME, PATH, IFACE, "ListSettings")
    t.ok(p.returncode == 0, "ListSettings works when an observed value is not UTF-8", desc(p))
    p = ctl.run("list", "--json")
    j = parse_json(t, p, "not UTF-8: list --json") if p.returncode != EXIT_UNKNOWN else None
    rows = [o for o in (j or []) if o.get("object") == "kernel.hostname"]
    t.ok(p.returncode == EXIT_WARNING and len(rows) == 1 and rows[0]["state"] == "drifted",
         "lowlatctl list --json shows the drifted kernel.hostname", desc(p))
    p = ctl.run("status")
    t.ok(p.returncode == EXIT_WARNING, "status exits 1 (drift), not 3", desc(p))

    # A config error that quotes bytes which are not UTF-8: the InvalidConfig reply and
    # LastReloadError must still be sendable.
    with open(d.config_path, "ab") as f:
        f.write(b"net.core.caf\xe9 = 1\n")
    t0 = time.monotonic()
    p = bc.run("--timeout=5", "call", NAME, PATH, IFACE, "Reload")
    dt = time.monotonic() - t0
    t.ok(p.returncode != 0 and "timed out" not in p.stderr.lower() and dt < h.scaled(5),
         "Reload of a config whose error quotes non-UTF-8 bytes answers InvalidConfig (%.1fs)" % dt,
         desc(p))
    try:
        err = bc.get_all(NAME, PATH, IFACE)["LastReloadError"]
        t.ok(d.config_path in err, "after that reload, GetAll works and LastReloadError has the error",
             repr(err))
    except b.BusError as e:
        t.ok(False, "after that reload, GetAll works and LastReloadError has the error", str(e))
    t.stopped_cleanly(d)
    bus.stop()


def scenario_second_fence(t, ctl_bin):
    """Without the project's policy (a bus that lets anyone send to org.lowlatd1), lowlatd's
    own sd-bus check still refuses Reload/Reapply to uid 65534."""
    host = h.FakeHost(ncpus=4, nirqs=10, isolated="2-3")
    open_policy = os.path.join(host.tmp, "open-policy.conf")
    h.write_text(open_policy, """\
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <policy context="default">
    <allow own="%s"/>
    <allow send_destination="%s"/>
  </policy>
</busconfig>
""" % (NAME, NAME))
    bus = b.PrivateBus(host.tmp, [open_policy]).start()
    bc = b.Busctl(bus.address)
    d = h.Daemon(host, "[cpus]\nisolated = 2-3\n", env=bus.env())
    d.wait_ready()
    ctl = Ctl(ctl_bin, bus.address, host.tmp)
    if not wait_owner(t, bc, d, "open policy"):
        return
    last = bc.get_all(NAME, PATH, IFACE)["LastReloadUSec"]
    for verb in ("reload", "reapply", "diff"):
        p = ctl.run(verb, user=b.NOBODY)
        t.ok(p.returncode == 1 and p.stderr.startswith("lowlatctl: %s needs root" % verb),
             "open bus policy, uid 65534: %s refused by lowlatd itself (it needs root)" % verb, desc(p))
    t.ok(bc.get_all(NAME, PATH, IFACE)["LastReloadUSec"] == last, "open bus policy: no reload happened")
    p = ctl.run("reload")
    t.ok(p.returncode == EXIT_OK, "open bus policy: root may reload", desc(p))
    t.stopped_cleanly(d)
    bus.stop()


def scenario_no_bus(t, ctl_bin):
    tmp = h.make_tempdir()
    ctl = Ctl(ctl_bin, "unix:path=" + os.path.join(tmp, "nothing-here"), tmp)
    for verb in ("status", "list", "reload", "reapply"):
        p = ctl.run(verb)
        t.ok(p.returncode == EXIT_UNKNOWN, "no bus at all: %s exits 3" % verb, desc(p))
    check_down_metrics(t, ctl.run("metrics"), "no bus at all")


def main(t):
    b.require_tools()
    ctl_bin = lowlatctl_path()
    h.lowlatd_path()
    if not os.path.isfile(h.policy_path()):
        raise b.BusError("the project's policy file %s is missing" % h.policy_path())
    # lowlatd logs to stderr here; keep the host's journal out of it.
    h.isolate_from_real_journal()
    scenario_no_bus(t, ctl_bin)
    scenario_enforce(t, ctl_bin)
    scenario_observe(t, ctl_bin)
    scenario_failed(t, ctl_bin)
    scenario_second_fence(t, ctl_bin)
    scenario_not_utf8(t, ctl_bin)
    t.ok(not SANITIZER_REPORTS, "lowlatctl: no sanitizer reports", "\n".join(SANITIZER_REPORTS[:20]))


if __name__ == "__main__":
    h.main(main)
