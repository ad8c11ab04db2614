#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The textfile-collector pair, lowlatd-metrics.service and lowlatd-metrics.timer, as built:
what README and lowlatctl(1) say of them (a oneshot that runs the installed lowlatctl
metrics --output into Debian's node_exporter textfile directory, lowlatd down being no
failure; a timer every 30 s that timers.target wants once enabled), systemd-analyze
verify of both, and the sandbox's exposure.

Usage: test_metrics_units.py SERVICE TIMER   (meson passes the built files)
"""

import os
import re
import shlex
import shutil
import sys

import packaging_util as u
from test_unit import exec_argv, last, parse_unit, timespan_usec, values

TEXTFILE = "/var/lib/prometheus/node-exporter/lowlatd.prom"
# Measured when the unit was written (systemd 252): root for CAP_DAC_OVERRIDE is most
# of it. A relaxed setting has to be paid for elsewhere.
MAX_EXPOSURE = 0.9


def test(t):
    service = sys.argv[1] if len(sys.argv) > 1 else os.path.join(u.BUILD_ROOT, "units", "lowlatd-metrics.service")
    timer = sys.argv[2] if len(sys.argv) > 2 else u.src("units", "lowlatd-metrics.timer")
    for f in (service, timer):
        if not os.path.isfile(f):
            raise u.Skip("%s is not built (run ninja first)" % f)
    stext, ttext = u.read(service), u.read(timer)
    s, tm = parse_unit(stext), parse_unit(ttext)

    t.ok(not re.findall(r"@[A-Za-z_]+@", stext), "the service has no unsubstituted @placeholders@")
    t.ok(last(s, "Service", "Type") == "oneshot", "the service is Type=oneshot")
    start = values(s, "Service", "ExecStart")
    argv = exec_argv(start[-1]) if start else []
    bindir = os.environ.get("LOWLATD_INSTALL_BINDIR")
    want = [os.path.join(bindir, "lowlatctl") if bindir else argv[0] if argv else None,
            "metrics", "--output=" + TEXTFILE]
    t.ok(len(start) == 1 and argv == want,
         "ExecStart= is the installed lowlatctl metrics --output=%s" % TEXTFILE, "ExecStart=%s" % start)
    t.ok("3" in (last(s, "Service", "SuccessExitStatus") or "").split(),
         "SuccessExitStatus=3: lowlatd down is written as lowlatd_up 0, not a failed unit")
    t.ok(os.path.dirname(TEXTFILE) in (last(s, "Service", "ReadWritePaths") or "").split() and
         last(s, "Service", "ProtectSystem") == "strict",
         "ProtectSystem=strict with only the textfile directory writable")
    t.ok(last(s, "Unit", "ConditionPathIsDirectory") == os.path.dirname(TEXTFILE),
         "runs only where node_exporter's textfile directory exists")
    t.ok(not values(s, "Install", "WantedBy"), "the service has no [Install]: the timer starts it")

    every = timespan_usec(last(tm, "Timer", "OnUnitActiveSec"))
    t.ok(every == 30 * 10**6, "the timer runs it every 30 s (OnUnitActiveSec=30s)",
         "OnUnitActiveSec=%s" % last(tm, "Timer", "OnUnitActiveSec"))
    t.ok(timespan_usec(last(tm, "Timer", "OnBootSec") or "") is not None, "and once after boot (OnBootSec=)")
    t.ok(values(tm, "Install", "WantedBy") == ["timers.target"], "systemctl enable hooks the timer to timers.target")
    t.ok(last(tm, "Timer", "Unit") in (None, "lowlatd-metrics.service"), "the timer starts lowlatd-metrics.service")

    analyze = shutil.which("systemd-analyze")
    if not analyze:
        t.skip("systemd-analyze verify and security", "systemd-analyze is not installed")
        return
    tmp = u.tempdir("lowlat-metrics-unit-")
    env = {"SYSTEMD_COLORS": "0", "SYSTEMD_PAGER": "", "SYSTEMD_LOG_COLOR": "0", "LC_ALL": "C"}
    verify_dir = os.path.join(tmp, "verify")
    copy = stext
    if argv and not os.access(argv[0], os.X_OK):
        u.require_program(u.LOWLATCTL, "lowlatctl")
        copy = copy.replace("ExecStart=" + argv[0], "ExecStart=" + u.LOWLATCTL)
        t.note("verifying a copy with ExecStart=%s (%s is not installed)" % (u.LOWLATCTL, argv[0]))
    u.write(os.path.join(verify_dir, "lowlatd-metrics.service"), copy)
    u.write(os.path.join(verify_dir, "lowlatd-metrics.timer"), ttext)
    man = os.path.join(tmp, "man", "man1")
    os.makedirs(man)
    shutil.copy(u.src("man", "lowlatctl.1"), man)
    p = u.run([analyze, "verify", "lowlatd-metrics.service", "lowlatd-metrics.timer"],
              env=dict(env, MANPATH=os.path.join(tmp, "man") + ":"), cwd=verify_dir)
    t.ok(p.returncode == 0 and not p.stderr.strip() and not p.stdout.strip(),
         "systemd-analyze verify lowlatd-metrics.service lowlatd-metrics.timer: no warnings", u.describe(p))

    p = u.run([analyze, "security", "--offline=yes", service], env=env)
    m = re.search(r"Overall exposure level for lowlatd-metrics\.service:\s*([0-9.]+)", p.stdout)
    score = float(m.group(1)) if m else None
    t.ok(score is not None and score <= MAX_EXPOSURE,
         "systemd-analyze security --offline=yes: exposure <= %.1f (%s)" % (MAX_EXPOSURE, score), u.describe(p))


if __name__ == "__main__":
    u.main(test)
