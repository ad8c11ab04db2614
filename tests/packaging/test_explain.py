#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""lowlatctl explain against the code, through the built program (no daemon, no bus):

- every key the parser takes (lib/config/keys.c's rows, [nic]'s ethtool parameters and
  feature.NAME; packaging_util.parser_keys()) is explained as SECTION.KEY, with text that
  names the key, and as KEY alone where one section has it (else the candidates, exit 1);
  every section as [SECTION];
- every finding id lib/audit/*.c raises (finding_add() and its wrappers, read from the
  sources) is explained, with a "Why:" and a "Fix:" line in its text and non-empty why and
  fix in --json, and every id lowlatctl(1) documents is one the audit raises;
- tools/explain-table.py refuses a finding row whose Why: or Fix: part is missing or
  empty, naming lowlatctl.1:LINE, so that the build fails rather than explain going without;
- every event of lib/log/log.c's events[] has an entry in conf/lowlatd.catalog, and
  explain gives that entry by the event's name and by its MESSAGE_ID;
- bad input is a clear error with the exit status lowlatctl(1) gives: an unknown word or
  an ambiguous key exits 1 naming what was looked for (and what is close), no word, two,
  an empty one or --list with another verb exit 64.

Environment (tests/packaging/meson.build): LOWLATCTL, LOWLATD_SOURCE_ROOT."""

import fnmatch
import glob
import json
import os
import re
import sys

import packaging_util as u

# No bus at all: explain must not need one.
NO_BUS = {"DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent/lowlat-explain-test"}
USAGE = 64


def explain(*args):
    return u.run([u.LOWLATCTL] + list(args), timeout=30, env=NO_BUS)


def explain_json(word):
    """(process, [objects]) of explain --json WORD; objects is None when it is no JSON array."""
    p = explain("--json", "explain", word)
    try:
        doc = json.loads(p.stdout)
    except ValueError:
        return p, None
    return p, doc if isinstance(doc, list) else None


def raised_finding_ids():
    """The ids lib/audit passes to finding_add(), finding_add_details() and the wrappers
    named *_finding_add(): the third argument, when it is a string literal shaped as an id."""
    ids = set()
    for path in sorted(glob.glob(u.src("lib", "audit", "*.c"))):
        text = u.strip_c_comments(u.read(path))
        for m in re.finditer(r'\b\w*finding_add(?:_details)?\s*\(\s*[^,]+,\s*[^,]+,\s*"([^"]*)"', text):
            if re.match(r"^[a-z]+\.[A-Za-z0-9_.-]+$", m.group(1)):
                ids.add(m.group(1))
    return ids


def log_events():
    """{name: MESSAGE_ID} of lib/log/log.c's events[] rows."""
    text = u.strip_c_comments(u.read(u.src("lib", "log", "log.c")))
    rows = re.findall(r'\[EVENT_\w+\]\s*=\s*\{\s*"([0-9a-f]{32})"\s*,\s*"([a-z-]+)"', text)
    return {name: message_id for message_id, name in rows}


def catalog_subjects():
    """{MESSAGE_ID: Subject} of conf/lowlatd.catalog."""
    out, current = {}, None
    for line in u.read(u.src("conf", "lowlatd.catalog")).splitlines():
        m = re.match(r"^-- ([0-9a-f]{32})\s*$", line)
        if m:
            current = m.group(1)
        elif current and line.startswith("Subject:") and current not in out:
            out[current] = line[len("Subject:"):].strip()
    return out


def qualified_keys():
    """[(word, key as the page writes it, sections having it)]: SECTION.KEY for every key of
    the parser, [service] and [process] each."""
    words = []
    for section, names in sorted(u.parser_keys().items()):
        for name in sorted(names):
            word_name = "feature.rx-gro" if name == "feature.NAME" else name
            for s in (("service", "process") if section == "app" else (section,)):
                words.append(("%s.%s" % (s, word_name), name, s))
    return words


def check_keys(t):
    words = qualified_keys()
    t.ok(len(words) > 60, "the parser's keys read: %d" % len(words))
    bad = []
    for word, name, section in words:
        p, doc = explain_json(word)
        text = doc[0].get("text", "") if doc else ""
        if p.returncode != 0 or not doc or doc[0].get("kind") != "key" or doc[0].get("name") != word or \
                "%s=" % name not in text or "lowlatd.conf(5)" not in doc[0].get("source", ""):
            bad.append(u.describe(p))
            continue
        plain = explain("explain", word)
        if plain.returncode != 0 or text not in plain.stdout:
            bad.append(u.describe(plain))
    t.ok(not bad, "every key the parser takes is explained as SECTION.KEY (text, --json)", "\n".join(bad[:5]))


def check_bare_keys(t):
    """KEY alone: the key's text where only one section (or [service] and [process], which
    share theirs) has it, else exit 1 naming every SECTION.KEY."""
    by_name = {}
    for word, name, section in qualified_keys():
        if name != "feature.NAME":
            by_name.setdefault(name, []).append(word)
    bad = []
    for name, words in sorted(by_name.items()):
        p = explain("explain", name)
        # [service] and [process] share one text: one answer
        if len(words) == 1 or {w.split(".", 1)[0] for w in words} <= {"service", "process"}:
            ok = p.returncode == 0 and "%s=" % name in p.stdout
        else:
            ok = p.returncode == 1 and not p.stdout and "ambiguous" in p.stderr and \
                all(w in p.stderr for w in words)
        if not ok:
            bad.append(u.describe(p))
    t.ok(by_name and not bad, "a bare KEY: explained where one section has it, else exit 1 with the candidates",
         "\n".join(bad[:5]))
    p = explain("explain", "policy")
    t.ok(p.returncode == 1 and all(w in p.stderr for w in ("service.policy", "process.policy", "kthread.policy")),
         "explain policy: exit 1, naming service.policy, process.policy and kthread.policy", u.describe(p))


def check_sections(t):
    bad = []
    for section in sorted(u.parser_keys()):
        for s in (("service", "process") if section == "app" else (section,)):
            p = explain("explain", "[%s]" % s)
            if p.returncode != 0 or not re.search(r"\[%s\].* SECTIONS?\n" % s.upper(), p.stdout):
                bad.append(u.describe(p))
    t.ok(not bad, "every section is explained as [SECTION], with its lowlatd.conf(5) text", "\n".join(bad[:3]))
    p = explain("explain", "sysctl.net.core.busy_poll")
    t.ok(p.returncode == 0 and p.stdout.startswith("[SYSCTL] SECTION\n"),
         "sysctl.net.core.busy_poll: [sysctl], which takes any key", u.describe(p))


def check_findings(t):
    raised = raised_finding_ids()
    t.ok(len(raised) > 40, "finding ids raised in lib/audit read: %d" % len(raised), " ".join(sorted(raised)))
    bad = []
    for finding_id in sorted(raised):
        p, doc = explain_json(finding_id)
        found = [d for d in doc or [] if d.get("kind") == "finding"]
        severity = found[0].get("severity", "") if len(found) == 1 else ""
        if p.returncode != 0 or len(found) != 1 or found[0].get("name") != finding_id or \
                not re.match(r"^(critical|warning|info)(/(critical|warning|info))*$", severity) or \
                finding_id.split(".")[0] not in found[0].get("text", ""):
            bad.append(u.describe(p))
    t.ok(not bad, "every finding id lib/audit raises is explained, with a severity", "\n".join(bad[:5]))
    bad = []
    for finding_id in sorted(raised):
        p, doc = explain_json(finding_id)
        found = [d for d in doc or [] if d.get("kind") == "finding"]
        plain = explain("explain", finding_id)
        if not found or not finding_has_why_and_fix(found[0], plain.stdout):
            bad.append("%s: %s" % (finding_id, u.describe(plain)))
    t.ok(raised and not bad, "every finding id lib/audit raises has a Why and a Fix, as text and as --json's why and fix",
         "\n".join(bad[:5]))
    p = explain("--json", "explain", "--list")
    documented = [d["name"] for d in json.loads(p.stdout) if d["kind"] == "finding"] if p.returncode == 0 else []
    unused = [d for d in documented if not any(fnmatch.fnmatchcase(r, d) for r in raised)]
    t.ok(documented and not unused, "every finding lowlatctl(1) documents is raised by lib/audit",
         "documented only: " + " ".join(unused))


def finding_has_why_and_fix(doc, stdout):
    """doc: explain --json's object of a finding, stdout: plain explain's. Each part is a
    line of its own that starts with its label and says something, and --json has it too."""
    for label, field in (("Why:", "why"), ("Fix:", "fix")):
        value = doc.get(field, "")
        m = re.search(r"^    %s (\S.*)$" % label, stdout, re.M)
        if not value.strip() or not m or not value.startswith(m.group(1)[:20]):
            return False
    return True


def explain_table(page):
    """tools/explain-table.py run on the real lowlatd.conf(5) and catalog and the given
    lowlatctl(1) text: the process."""
    d = u.tempdir()
    path = os.path.join(d, "lowlatctl.1")
    u.write(path, page)
    return u.run([sys.executable, u.src("tools", "explain-table.py"), u.src("man", "lowlatd.conf.5"), path,
                  u.src("conf", "lowlatd.catalog"), os.path.join(d, "explain-table.c")])


def check_why_fix_required(t):
    """A finding row that lacks its Why: or Fix: part, or leaves one empty, fails the build."""
    page = u.read(u.src("man", "lowlatctl.1"))
    lines = page.split("\n")
    p = explain_table(page)
    t.ok(p.returncode == 0, "tools/explain-table.py takes lowlatctl(1) as it is", u.describe(p))
    for label in ("Why:", "Fix:"):
        n = next((i for i, line in enumerate(lines) if line.startswith(label + " ")), None)
        t.ok(n is not None, "lowlatctl(1) has a line starting %s" % label)
        if n is None:
            continue
        # the .br before it and the line itself go: the row has no such part
        p = explain_table("\n".join(lines[:n - 1] + lines[n + 1:]))
        t.ok(p.returncode == 1 and re.search(r"lowlatctl\.1:\d+: .*%s" % label, p.stderr),
             "a finding row without its %s line: explain-table.py fails, naming lowlatctl.1:LINE" % label,
             u.describe(p))
        p = explain_table("\n".join(lines[:n] + [label] + lines[n + 1:]))
        t.ok(p.returncode == 1 and "lowlatctl.1:%d: %s says nothing" % (n + 1, label) in p.stderr,
             "a finding row whose %s says nothing: explain-table.py fails at its line" % label, u.describe(p))


def check_events(t):
    events, subjects = log_events(), catalog_subjects()
    t.ok(len(events) > 10, "lib/log's events read: %s" % " ".join(sorted(events)))
    missing = sorted(name for name, message_id in events.items() if message_id not in subjects)
    t.ok(not missing, "conf/lowlatd.catalog has an entry for every event of lib/log", " ".join(missing))
    bad = []
    for name, message_id in sorted(events.items()):
        for word in (name, message_id):
            p, doc = explain_json(word)
            if p.returncode != 0 or not doc or len(doc) != 1 or doc[0].get("kind") != "event" or \
                    doc[0].get("name") != name or doc[0].get("message_id") != message_id or \
                    not doc[0].get("text", "").startswith("Subject: %s\n" % subjects.get(message_id)):
                bad.append(u.describe(p))
    t.ok(not bad, "every event is explained by name and by MESSAGE_ID, as its catalog entry", "\n".join(bad[:5]))


def check_bad_input(t):
    p = explain("explain", "pm.governer")
    t.ok(p.returncode == 1 and not p.stdout and "'pm.governer'" in p.stderr and "pm.governor" in p.stderr,
         "an unknown key: exit 1, naming it and the key close to it", u.describe(p))
    for word in ("nosuchthing", "[nosuch]", "nic.no_such_key", "boot.nosuch"):
        p = explain("explain", word)
        t.ok(p.returncode == 1 and not p.stdout and "'%s'" % word in p.stderr,
             "explain %s: exit 1, naming what was looked for" % word, u.describe(p))
    for args, what in ((["explain"], "no word"), (["explain", ""], "an empty word"),
                       (["explain", "drift", "pm"], "two words"), (["explain", "--list", "pm"], "--list and a word"),
                       (["status", "--list"], "--list with another verb")):
        p = explain(*args)
        t.ok(p.returncode == USAGE and not p.stdout and p.stderr.startswith("lowlatctl: "),
             "%s: an invalid command line (%d), said on stderr" % (what, USAGE), u.describe(p))


def test(t):
    u.require_program(u.LOWLATCTL, "lowlatctl")
    check_keys(t)
    check_bare_keys(t)
    check_sections(t)
    check_findings(t)
    check_why_fix_required(t)
    check_events(t)
    check_bad_input(t)


if __name__ == "__main__":
    u.main(test)
