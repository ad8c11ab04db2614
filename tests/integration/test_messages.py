#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Messages a person can act on, through the real programs: a reload's errors one
`FILE:LINE: reason` a line (lowlatctl reload, status, status --json's array, the bus's
LastReloadErrors).

Environment: LOWLATD, LOWLATCTL, LOWLATD_SOURCE_ROOT (as every integration test)."""

import busctl_harness as b
import lowlat_constants as C
import lowlat_harness as h
from test_lowlatctl import Ctl, desc, lowlatctl_path, parse_json, parse_status_text, start_stack, wait_owner

NAME, PATH, IFACE = C.BUS_NAME, C.BUS_PATH, C.BUS_INTERFACE

CONFIG = "[daemon]\nscan_interval = 1s\n\n[cpus]\nisolated = 2-3\n\n[sysctl]\nnet.core.somaxconn = 8192\n"
# Two errors, on lines 3 and 6.
TWO_ERRORS = "[daemon]\nscan_interval = 1s\nbogus_key = 1\n[cpus]\nisolated = 2-3\nisolcpus = 2-3\n"


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
    test_reload_errors(t, ctl)


if __name__ == "__main__":
    h.main(main)
