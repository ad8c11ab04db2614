#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The journal catalog (conf/lowlatd.catalog) against the MESSAGE_IDs lowlatd emits.

The ids come from the events table in lib/log/log.c, the only place the daemon takes a
MESSAGE_ID from. Every id there needs a catalog entry (or `journalctl -x` explains
nothing), and every catalog entry needs an id there (or it documents an event that no
longer exists). Then the catalog is compiled by the real journalctl in a scratch root
and each id must come back with a Subject.
"""

import os
import re
import shutil

import packaging_util as u

ID_RE = re.compile(r"^[0-9a-f]{32}$")
# Events whose entries may use @LOWLATD_ERROR@: the spec sends LOWLATD_ERROR only on these.
EVENTS_WITH_ERROR = {"correction-failed", "unsupported", "unmovable"}
# Fields journald adds itself; a catalog may use any of them.
TRUSTED_FIELD_RE = re.compile(r"^_[A-Z0-9_]+$")


def parse_log_c(text):
    """(events, setting_events, fields): events {EVENT_X: (id, name, priority)} from the
    events table, the EVENT_X that are about a setting (they carry the LOWLATD_* setting
    fields), and every field name log.c builds with field()."""
    text = u.strip_c_comments(text)
    m = re.search(r"\bevents\s*\[[^\]]*\]\s*=\s*\{(.*?)\n\};", text, re.S)
    if not m:
        raise ValueError("no events[] table in lib/log/log.c")
    events = {}
    for e in re.finditer(r'\[\s*(EVENT_\w+)\s*\]\s*=\s*\{\s*"([^"]*)"\s*,\s*"([^"]*)"\s*,\s*(\w+)\s*\}',
                         m.group(1)):
        events[e.group(1)] = (e.group(2), e.group(3), e.group(4))
    # A table entry the regex did not understand must not vanish silently.
    n_entries = len(re.findall(r"\[\s*EVENT_\w+\s*\]\s*=", m.group(1)))
    if n_entries != len(events):
        raise ValueError("understood %d of %d entries of the events[] table" % (len(events), n_entries))
    # Events about a setting: the EventId members before _EVENT_SETTING_MAX (lib/basic/event.h).
    enum = re.search(r"typedef enum EventId \{(.*?)_EVENT_SETTING_MAX", u.strip_c_comments(u.read(u.src("lib", "basic", "event.h"))), re.S)
    if not enum:
        raise ValueError("no _EVENT_SETTING_MAX in the EventId enum of lib/basic/event.h")
    setting_events = set(re.findall(r"\b(EVENT_\w+)\s*,", enum.group(1)))
    fields = set(re.findall(r'\bfield\(\s*"([A-Z0-9_]+)"', text))
    fields |= {"MESSAGE", "PRIORITY", "SYSLOG_IDENTIFIER"}
    # Events with a writer of their own (log_irq_writer): the fields that function sends.
    own_fields = {}
    for fn in re.finditer(r"^\w[^\n;]*\)\s*\{\n(.*?)^\}", text, re.M | re.S):
        ids = set(re.findall(r"event_info\(\s*(EVENT_\w+)\s*\)", fn.group(1)))
        if len(ids) == 1:
            own_fields[ids.pop()] = set(re.findall(r'\bfield\(\s*"([A-Z0-9_]+)"', fn.group(1)))
    return events, setting_events, fields, own_fields


def parse_catalog(text):
    """[(id, lang, headers {name: value}, body, line number)] in file order."""
    entries = []
    cur = None
    for num, line in enumerate(text.splitlines(), 1):
        m = re.match(r"^-- (\S+)(?: (\S+))?\s*$", line)
        if m:
            cur = {"id": m.group(1), "lang": m.group(2), "headers": {}, "body": [], "line": num,
                   "in_headers": True}
            entries.append(cur)
            continue
        if cur is None:
            continue  # comments and blank lines before the first entry
        if cur["in_headers"]:
            h = re.match(r"^([A-Za-z][A-Za-z-]*):\s*(.*)$", line)
            if h:
                cur["headers"][h.group(1)] = h.group(2)
                continue
            cur["in_headers"] = False
        cur["body"].append(line)
    for e in entries:
        e["body"] = "\n".join(e["body"]).strip()
        del e["in_headers"]
    return entries


def parse_dump(text):
    """{id: {header: value}} from journalctl --dump-catalog."""
    out = {}
    cur = None
    for line in text.splitlines():
        m = re.match(r"^-- ([0-9a-f]{32})\s*$", line)
        if m:
            cur = out.setdefault(m.group(1), {})
            continue
        if cur is not None:
            h = re.match(r"^([A-Za-z][A-Za-z-]*):\s*(.*)$", line)
            if h and h.group(1) not in cur:
                cur[h.group(1)] = h.group(2)
    return out


def check_log_ids(t, events, code_ids):
    t.ok(len(events) > 0, "lib/log/log.c: events table parsed (%d events)" % len(events))
    bad = ["%s %r" % (k, v[0]) for k, v in events.items() if not ID_RE.match(v[0])]
    t.ok(not bad, "lib/log/log.c: every MESSAGE_ID is 32 lower-case hex digits", "\n".join(bad))
    t.ok(len(code_ids) == len(events), "lib/log/log.c: MESSAGE_IDs are unique",
         "%d events, %d distinct ids" % (len(events), len(code_ids)))


def check_catalog_entries(t, entries, cat_ids, code_ids):
    t.ok(len(entries) > 0, "catalog: entries parsed (%d)" % len(entries))
    bad = ["line %d: %r" % (e["line"], e["id"]) for e in entries if not ID_RE.match(e["id"])]
    t.ok(not bad, "catalog: every id is 32 lower-case hex digits", "\n".join(bad))
    dups = sorted({i for i in cat_ids if cat_ids.count(i) > 1})
    t.ok(not dups, "catalog: no id has two entries", "\n".join(dups))

    missing = ["%s (%s)" % (i, n) for i, n in sorted(code_ids.items()) if i not in cat_ids]
    t.ok(not missing, "every MESSAGE_ID in lib/log/log.c has a catalog entry",
         "missing from conf/lowlatd.catalog:\n" + "\n".join(missing))
    extra = ["%s (line %d: %s)" % (e["id"], e["line"], e["headers"].get("Subject", ""))
             for e in entries if e["id"] not in code_ids]
    t.ok(not extra, "every catalog entry is a MESSAGE_ID lib/log/log.c emits",
         "in conf/lowlatd.catalog but not in lib/log/log.c:\n" + "\n".join(extra))

    no_subject = [e["id"] for e in entries if not e["headers"].get("Subject", "").strip()]
    t.ok(not no_subject, "catalog: every entry has a Subject", "\n".join(no_subject))
    no_body = [e["id"] for e in entries if not e["body"]]
    t.ok(not no_body, "catalog: every entry explains the event (non-empty body)", "\n".join(no_body))
    no_defined_by = [e["id"] for e in entries if e["headers"].get("Defined-By") != "lowlatd"]
    t.ok(not no_defined_by, "catalog: every entry has Defined-By: lowlatd", "\n".join(no_defined_by))

    # Documentation= links must reach a page we ship.
    bad = []
    for e in entries:
        for ref in e["headers"].get("Documentation", "").split():
            m = re.match(r"^man:([\w.-]+)\((\d)\)$", ref)
            if m and not os.path.isfile(u.src("man", "%s.%s" % (m.group(1), m.group(2)))):
                if m.group(1).startswith("lowlat"):
                    bad.append("%s: %s" % (e["id"], ref))
    t.ok(not bad, "catalog: man: links point at pages in man/", "\n".join(bad))


def check_placeholders(t, entries, events, setting_events, fields, own_fields):
    # @FIELD@ placeholders: journalctl -x fills them from the entry's fields, so each must be a
    # field that event carries.
    setting_fields = {f for f in fields if f.startswith("LOWLATD_")}
    name_of = {v[0]: (k, v[1]) for k, v in events.items()}
    bad = []
    for e in entries:
        if e["id"] not in name_of:
            continue
        key, name = name_of[e["id"]]
        text = e["headers"].get("Subject", "") + "\n" + e["body"]
        for var in sorted(set(re.findall(r"@([A-Za-z0-9_]+)@", text))):
            if TRUSTED_FIELD_RE.match(var):
                continue
            if var not in fields:
                bad.append("%s (%s): @%s@ is not a field lowlatd sends" % (e["id"], name, var))
            elif key in own_fields:
                if var not in own_fields[key] | {"MESSAGE", "PRIORITY", "SYSLOG_IDENTIFIER"}:
                    bad.append("%s (%s): @%s@ is not among the fields this event sends (%s)" %
                               (e["id"], name, var, ", ".join(sorted(own_fields[key]))))
            elif var in setting_fields and key not in setting_events:
                bad.append("%s (%s): @%s@, but this event is not about a setting" % (e["id"], name, var))
            elif var == "LOWLATD_ERROR" and name not in EVENTS_WITH_ERROR:
                bad.append("%s (%s): @LOWLATD_ERROR@ is only sent on %s" %
                           (e["id"], name, ", ".join(sorted(EVENTS_WITH_ERROR))))
    t.ok(not bad, "catalog: every @FIELD@ placeholder is a field that event carries", "\n".join(bad))


def check_journalctl(t, catalog_path, code_ids, cat_ids):
    # The real thing: compile the catalog and read it back.
    journalctl = shutil.which("journalctl")
    what_update = "journalctl --update-catalog accepts the catalog without warnings"
    what_dump = "journalctl --dump-catalog shows every MESSAGE_ID with a Subject"
    if not journalctl:
        t.skip(what_update, "journalctl is not installed")
        t.skip(what_dump, "journalctl is not installed")
        return
    root = u.tempdir("lowlat-catalog-")
    os.makedirs(os.path.join(root, "usr/lib/systemd/catalog"))
    shutil.copy(catalog_path, os.path.join(root, "usr/lib/systemd/catalog/lowlatd.catalog"))
    p = u.run([journalctl, "--root=" + root, "--update-catalog"])
    if p.returncode != 0 and not os.path.exists(os.path.join(root, "var/lib/systemd/catalog/database")) \
            and re.search(r"(?i)not supported|unrecognized option|permission denied", p.stderr):
        t.skip(what_update, "journalctl cannot build a catalog here: " + p.stderr.strip())
        t.skip(what_dump, "no catalog database")
        return
    t.ok(p.returncode == 0 and not p.stderr.strip(), what_update, u.describe(p))
    p = u.run([journalctl, "--root=" + root, "--dump-catalog"])
    dump = parse_dump(p.stdout)
    problems = []
    for i, n in sorted(code_ids.items()):
        if i not in dump:
            problems.append("%s (%s): not in the dump" % (i, n))
        elif not dump[i].get("Subject", "").strip():
            problems.append("%s (%s): no Subject in the dump" % (i, n))
    t.ok(p.returncode == 0 and not problems, what_dump,
         "\n".join(problems) + ("\n" + u.describe(p) if p.returncode else ""))
    p = u.run([journalctl, "--root=" + root, "--list-catalog"])
    listed = set(re.findall(r"^([0-9a-f]{32}) ", p.stdout, re.M))
    t.ok(p.returncode == 0 and listed == set(cat_ids),
         "journalctl --list-catalog lists exactly the catalog's %d ids" % len(set(cat_ids)),
         "only listed: %s\nnot listed: %s" % (sorted(listed - set(cat_ids)), sorted(set(cat_ids) - listed)))


def test(t):
    events, setting_events, fields, own_fields = parse_log_c(u.read(u.src("lib", "log", "log.c")))
    catalog_path = u.src("conf", "lowlatd.catalog")
    entries = parse_catalog(u.read(catalog_path))

    code_ids = {v[0]: v[1] for v in events.values()}
    check_log_ids(t, events, code_ids)
    cat_ids = [e["id"] for e in entries]
    check_catalog_entries(t, entries, cat_ids, code_ids)
    check_placeholders(t, entries, events, setting_events, fields, own_fields)
    check_journalctl(t, catalog_path, code_ids, cat_ids)


if __name__ == "__main__":
    u.main(test)
