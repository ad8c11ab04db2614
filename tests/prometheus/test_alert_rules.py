#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""conf/prometheus/lowlatd-alerts.yml: promtool check rules accepts it, promtool test rules
passes lowlatd-alerts.test.yml (input series that fire each alert and series that must
not), every alert has a severity, a summary and a description, every lowlatd_* series
an expression names is one `lowlatctl metrics` prints (a renamed metric must not leave an
alert that never fires), and every alert is tested.

promtool (Debian: prometheus) is part of what the tests need (tools/packages.sh, which
tools/run-tests installs): missing, it is a failure, not a skip."""

import os
import re
import shutil

import packaging_util as u

RULES = u.src("conf", "prometheus", "lowlatd-alerts.yml")
TESTS = u.src("tests", "prometheus", "lowlatd-alerts.test.yml")
METRICS_C = u.src("lowlatctl", "metrics.c")


def promtool():
    tool = shutil.which("promtool")
    if not tool:
        return None
    return tool


def alerts(text):
    """[(name, block of text)] of the rules file, in order (standard library only: no YAML
    parser; the file keeps one "- alert:" per rule)."""
    parts = re.split(r"^\s+- alert: *(\S+)\s*$", text, flags=re.M)
    return list(zip(parts[1::2], parts[2::2]))


def test(t):
    tool = promtool()
    t.ok(tool, "promtool is installed",
         "promtool is not installed (Debian: prometheus, listed in tools/packages.sh; tools/run-tests installs it)")
    rules = u.read(RULES)
    if tool:
        p = u.run([tool, "check", "rules", RULES])
        t.ok(p.returncode == 0 and "SUCCESS" in p.stdout, "promtool check rules %s" % os.path.relpath(RULES, u.src()),
             u.describe(p))
        p = u.run([tool, "test", "rules", TESTS], timeout=120)
        t.ok(p.returncode == 0 and "SUCCESS" in p.stdout,
             "promtool test rules %s" % os.path.relpath(TESTS, u.src()), u.describe(p))

    found = alerts(rules)
    t.ok(len(found) >= 6, "the rules file has its alerts (%d)" % len(found), ", ".join(n for n, _ in found))
    bare = [n for n, block in found
            if not (re.search(r"^\s+severity: *(critical|warning)\s*$", block, re.M) and
                    re.search(r"^\s+summary: *\S", block, re.M) and
                    re.search(r"^\s+description: *\S", block, re.M))]
    t.ok(not bare, "every alert has a severity (critical or warning), a summary and a description", repr(bare))

    printed = set(re.findall(r'"(lowlatd_[a-z_]+)"', u.read(METRICS_C)))
    used = set()
    for _, block in found:
        m = re.search(r"^\s+expr: *(.*)$", block, re.M)
        used |= set(re.findall(r"\b(lowlatd_[a-z_]+)\b", m.group(1) if m else ""))
    t.ok(used and used <= printed, "every lowlatd_* series the alerts use is one lowlatctl metrics prints",
         "not printed: %r\nprinted: %r" % (sorted(used - printed), sorted(printed)))

    tests = u.read(TESTS)
    tested = set(re.findall(r"alertname: *(\w+)", tests))
    fired = set(re.findall(r"alertname: *(\w+)\n\s+exp_alerts:\n\s+- exp_labels", tests))
    names = {n for n, _ in found}
    t.ok(names <= fired, "the unit tests make every alert fire", "never fired: %r" % sorted(names - fired))
    quiet = set(re.findall(r"alertname: *(\w+), *exp_alerts: *\[\]", tests))
    t.ok(names <= quiet, "the unit tests also have every alert stay quiet", "never quiet: %r" % sorted(names - quiet))
    t.ok(tested <= names, "the unit tests name no alert the file lacks", repr(sorted(tested - names)))


if __name__ == "__main__":
    u.main(test)
