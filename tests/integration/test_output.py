#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""What lowlatd and lowlatctl print, through the real programs: lowlatd --once lists every
setting (--changed only those not ok, --json for programs), tables as wide as their cells
(a long [sysfs] path, a count in the trillions), reasons with host paths as the host
writes them (a leading /), lowlatctl list --kind and --state, and their names listed by
--kind=help and --state=help.

Environment: LOWLATD, LOWLATCTL, LOWLATD_SOURCE_ROOT (as every integration test)."""

import json
import re

import busctl_harness as b
import lowlat_constants as C
import lowlat_harness as h
from test_lowlatctl import Ctl, desc, lowlatctl_path, parse_json, parse_table, start_stack, wait_owner
from test_noise import interrupts_text, softirqs_text

NAME, PATH, IFACE = C.BUS_NAME, C.BUS_PATH, C.BUS_INTERFACE
EXIT_USAGE = 64
STATES = {"pending", "ok", "drifted", "corrected", "failed", "unsupported", "unmovable", "would change"}
LONG_SYSFS = "/sys/devices/system/machinecheck/machinecheck0/a_rather_long_attribute_name_for_a_table"
MISSING_SYSCTL = "net.core.no_such_sysctl_here"
MISSING_SYSCTL_PATH = "/proc/sys/" + MISSING_SYSCTL.replace(".", "/")

CONFIG = h.posture_config() + MISSING_SYSCTL + " = 1\n\n[sysfs]\n" + LONG_SYSFS + " = 1\n"


def host_with_drift():
    host = h.FakeHost(ncpus=4, nirqs=30, isolated="2-3", irq_affinity="0-1", default_affinity={0, 1},
                      governor="performance", dma_latency=0, sysctls={"net.core.somaxconn": "4096"})
    return host


def table_rows(t, text, what):
    """The rows of a KIND ... STATE table, each cut at the header's offsets, and the
    number the summary line gives. A row whose cells do not start at the header's
    offsets (a column pushed apart) fails."""
    lines = text.split("\n")
    hdr = next((i for i, l in enumerate(lines) if l.startswith("KIND ")), None)
    if not t.ok(hdr is not None, "%s: a header line" % what, text[-2000:]):
        return [], None
    cols = [lines[hdr].index(c) for c in ("KIND", "OBJECT", "DESIRED", "OBSERVED", "STATE")]
    rows, total, misaligned = [], None, []
    for l in lines[hdr + 1:]:
        m = re.match(r"(\d+) settings: ", l)
        if m:
            total = int(m.group(1))
            continue
        if not l.strip():
            continue
        cells = [l[c:(cols[j + 1] if j + 1 < len(cols) else None)] for j, c in enumerate(cols)]
        # Every cell starts at its column and is followed by at least two spaces.
        if any(c.startswith(" ") or (j + 1 < len(cells) and not c.endswith("  ")) for j, c in enumerate(cells)):
            misaligned.append(l)
        rows.append([c.strip() for c in cells])
    t.ok(not misaligned, "%s: every row's cells start under their header" % what, "\n".join(misaligned[:5]))
    return rows, total


def state_word(cell):
    return cell.split(":")[0]


def test_once(t):
    host = host_with_drift()
    config = h.write_config(host, CONFIG)
    r = h.run_lowlatd(host, ["--observe", "--once"], config_path=config)
    t.note("--observe --once:\n" + r.stdout[-2500:])
    rows, total = table_rows(t, r.stdout, "--observe --once")
    states = {state_word(row[4]) for row in rows}
    t.ok(r.returncode == 3 and total and len(rows) == total and "ok" in states,
         "--observe --once lists every setting, the ok ones too (%d of %r)" % (len(rows), total), desc(r))
    t.ok(states <= STATES, "--observe --once: the STATE column holds states only", repr(states))
    t.ok(any(row[1] == LONG_SYSFS and state_word(row[4]) == "unsupported" for row in rows),
         "the long [sysfs] path has its row, in its column", desc(r))
    sysctl = [row for row in rows if row[1] == MISSING_SYSCTL]
    t.ok(sysctl and sysctl[0][4] == "unsupported: no such sysctl on this kernel (%s)" % MISSING_SYSCTL_PATH,
         "a reason names the host path with its leading /", repr(sysctl))
    t.ok(any(row[1] == "net.core.somaxconn" and row[4] == "would change" for row in rows),
         "observe mode: the drifted sysctl would change", desc(r))

    r = h.run_lowlatd(host, ["--observe", "--once", "--changed"], config_path=config)
    changed, total_changed = table_rows(t, r.stdout, "--observe --once --changed")
    t.ok(r.returncode == 3 and total_changed == total and changed and
         {state_word(row[4]) for row in changed} == {"would change", "unsupported"} and
         len(changed) == sum(1 for row in rows if state_word(row[4]) != "ok"),
         "--changed: only the settings that are not ok, and the same summary", desc(r))

    r = h.run_lowlatd(host, ["--observe", "--once", "--json"], config_path=config)
    try:
        j = json.loads(r.stdout)
    except ValueError as e:
        t.ok(False, "--once --json is valid JSON", "%s\n%s" % (e, desc(r)))
        return
    settings = j.get("settings", [])
    t.ok(r.returncode == 3 and j.get("mode") == "observe" and len(settings) == total == j.get("n_settings") and
         sum(j.get("counts", {}).values()) == total,
         "--once --json: mode, every setting, n_settings and the counts by state", desc(r))
    by_object = {s["object"]: s for s in settings}
    missing = by_object.get(MISSING_SYSCTL, {})
    t.ok(missing.get("kind") == "sysctl" and missing.get("state") == "unsupported" and
         missing.get("reason", "").endswith("(%s)" % MISSING_SYSCTL_PATH) and
         by_object.get("net.core.somaxconn", {}).get("state") == "drifted" and
         by_object.get("net.core.somaxconn", {}).get("observed") == "4096",
         "--once --json: kind, state in the bus's words, observed, reason", repr(list(by_object.items())[:4]))
    r = h.run_lowlatd(host, ["--observe", "--once", "--json", "--changed"], config_path=config)
    j = json.loads(r.stdout) if r.stdout.startswith("{") else {}
    t.ok({s["state"] for s in j.get("settings", [])} == {"drifted", "unsupported"} and
         j.get("n_settings") == total, "--once --json --changed: the settings not ok only", desc(r))
    r = h.run_lowlatd(host, ["--changed"], config_path=config)
    t.ok(r.returncode == 1 and "--once" in r.stderr, "--changed without --once is a usage error", desc(r))


def test_list_kind(t, ctl_bin):
    b.require_tools()
    host = host_with_drift()
    bus, bc, _, d = start_stack(t, host, CONFIG, extra_args=["--observe"], monitor=False)
    ctl = Ctl(ctl_bin, bus.address, host.tmp)
    if not wait_owner(t, bc, d, "list --kind"):
        return
    p = ctl.run("list", "--kind=help")
    kinds = p.stdout.split()
    t.ok(p.returncode == 0 and {"irq_affinity", "sysctl", "governor", "sysfs", "slice_cpus"} <= set(kinds),
         "--kind=help: the kinds, one a line", desc(p))
    p = ctl.run("list", "--state=help")
    t.ok(p.returncode == 0 and set(p.stdout.split()) == STATES - {"would change"},
         "--state=help: the states, one a line", desc(p))
    rows, _ = parse_table(ctl.run("list").stdout)
    p = ctl.run("list", "--kind", "sysctl")
    got, _ = parse_table(p.stdout)
    t.ok(got and {r[0] for r in got} == {"sysctl"} and len(got) == sum(1 for r in rows if r[0] == "sysctl"),
         "list --kind sysctl: every sysctl, nothing else", desc(p))
    p = ctl.run("list", "--kind=sysctl,governor", "--state=ok")
    got, _ = parse_table(p.stdout)
    want = [r for r in rows if r[0] in ("sysctl", "governor") and r[4] == "ok"]
    t.ok(got and got == want, "list --kind=sysctl,governor --state=ok: both filters", desc(p))
    p = ctl.run("list", "--kind", "governor", "--json")
    j = parse_json(t, p, "list --kind governor --json")
    t.ok(j and {s["kind"] for s in j} == {"governor"} and len(j) == 4, "list --kind --json: the 4 governors",
         desc(p))
    p = ctl.run("list", "--kind", "sysctls")
    t.ok(p.returncode == EXIT_USAGE and "unknown kind 'sysctls'" in p.stderr and "sysctl" in p.stderr,
         "list --kind sysctls (a typo): exit 64, with the kinds", desc(p))
    p = ctl.run("status", "--kind", "sysctl")
    t.ok(p.returncode == EXIT_USAGE and "list only" in p.stderr, "--kind applies to list only", desc(p))
    t.stopped_cleanly(d)
    bus.stop()


def test_top_columns(t, ctl_bin):
    """A count in the trillions (a long-running host) widens its column; every row follows."""
    b.require_tools()
    host = h.FakeHost(ncpus=4, nirqs=20, isolated="", irq_affinity="0-1")
    online = [0, 1, 2, 3]
    irqs = {42: ({2: 123456789012345}, "eth0-TxRx-0"), 43: ({2: 7}, "a-device-with-a-longer-name")}
    host.write("proc/interrupts", interrupts_text(online, irqs, {"LOC": {2: 90, 3: 80}}))
    host.write("proc/softirqs", softirqs_text(online, {"TIMER": {2: 30}}))
    bus, bc, _, d = start_stack(t, host, "[daemon]\nscan_interval = 1s\n\n[noise]\ncpus = 2-3\n", monitor=False)
    ctl = Ctl(ctl_bin, bus.address, host.tmp)
    if not wait_owner(t, bc, d, "top"):
        return
    p = ctl.run("top", "--iterations", "1")
    lines = p.stdout.splitlines()
    hdr = next((l for l in lines if l.startswith("CPU ")), "")
    rows = [l for l in lines if re.match(r"\d+\s", l) and "quiet" not in l and "more" not in l]
    kind_at, count_end = hdr.find("KIND"), hdr.find("COUNT") + len("COUNT")
    bad = [l for l in rows if not re.match(r"(irq|timer|ipi|softirq|ctxsw) ", l[kind_at:]) or
           not l[:count_end].endswith(tuple("0123456789")) or l[count_end:count_end + 2] != "  "]
    t.ok(p.returncode == 0 and rows and any("123456789012345" in l for l in rows) and not bad,
         "top: the counts right-aligned under COUNT, every KIND under KIND, with a 15-digit count", desc(p))
    p = ctl.run("noise")
    t.ok(p.returncode == 0 and re.search(r"sources on CPUs 2-3;", p.stdout),
         "noise: the CPUs written as a range (2-3), as every CPU list", desc(p))
    t.stopped_cleanly(d)
    bus.stop()


def main(t):
    ctl = lowlatctl_path()
    h.lowlatd_path()
    h.isolate_from_real_journal()
    test_once(t)
    test_list_kind(t, ctl)
    test_top_columns(t, ctl)


if __name__ == "__main__":
    h.main(main)
