#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The table behind `lowlatctl explain`, written as C at build time from the very files the
man pages and the journal catalog are installed from, so that what explain says cannot
drift from them:

- lowlatd.conf(5): each "[NAME] SECTION" whole, and each key's .TP item in it;
- lowlatctl(1): the list of findings under `check` (a .TP item each, tagged
  '.BR ID " (SEVERITY)"'), each body ending in a "Why:" and a "Fix:" part, each after a .br
  (an item without them is an error naming FILE:LINE);
- lowlatd.catalog: each entry, by MESSAGE_ID (lowlatctl maps event names to ids through
  lib/log/log.c's own table, not through a copy here).

Usage: explain-table.py LOWLATD.CONF.5 LOWLATCTL.1 LOWLATD.CATALOG OUTPUT.c

The roff is turned into plain text wrapped for an 80-column terminal: the requests the
pages use and the escapes they use. Anything else is an error naming FILE:LINE, so that a
page that starts using a new escape fails the build here rather than printing it raw.
Python 3 standard library only."""

import re
import sys
import textwrap

WIDTH = 79
INDENT = 4

# \(xx: what each one the pages use reads as on a terminal without fonts (ASCII, as man(1)
# prints the pages with -Tascii: the micro sign is "u" there too).
SPECIAL = {
    "-": "-", "em": "--", "lq": '"', "rq": '"', "dq": '"', "aq": "'", "bu": "*", "mc": "u",
    "->": "->", "oq": "'", "cq": "'", "ti": "~", "ha": "^", "mu": "x", "<=": "<=", ">=": ">=",
}
# A non-breaking space ("\ ") until the paragraph is wrapped.
NBSP = "\x00"
FONT_MACROS = {"B", "I", "BR", "RB", "BI", "IB", "IR", "RI"}
IGNORED = {"ft", "ne", "ad", "nh", "hy", "if", "TH", "ns", "na", "in", "ll", "PD", "UC", "ds"}


class RoffError(Exception):
    pass


def inline(text, where):
    """One line's text with its escapes resolved and fonts dropped."""
    out = []
    i = 0
    while i < len(text):
        c = text[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        e = text[i + 1:i + 2]
        if e == '"':
            break  # a comment to the end of the line
        if e == "f":
            if text[i + 2:i + 3] == "(":
                i += 5
            elif text[i + 2:i + 3] == "[":
                i = text.index("]", i) + 1
            else:
                i += 3
            continue
        if e == "(":
            name = text[i + 2:i + 4]
            if name not in SPECIAL:
                raise RoffError("%s: unknown special character \\(%s" % (where, name))
            out.append(SPECIAL[name])
            i += 4
            continue
        simple = {"-": "-", "e": "\\", "&": "", ":": "", "|": "", "^": "", "%": "", " ": NBSP, "0": NBSP,
                  "c": "\x01", "'": "'", "`": "`", ".": "."}
        if e not in simple:
            raise RoffError("%s: unknown escape \\%s" % (where, e))
        out.append(simple[e])
        i += 2
    return "".join(out)


def split_args(rest):
    """A request's arguments: words, or "quoted words" ("" is a quote inside)."""
    args = []
    for m in re.finditer(r'"((?:[^"]|"")*)"?|((?:\\.|\S)+)', rest):
        args.append(m.group(1).replace('""', '"') if m.group(1) is not None else m.group(2))
    return args


def font_macro_text(macro, rest):
    """.B words / .BR a b c: one font's words are joined by spaces, alternating ones are not."""
    args = split_args(rest)
    return (" " if len(macro) == 1 else "").join(args)


class Renderer:
    """Plain text of roff lines: filled paragraphs, .TP/.IP items, .RS insets, .nf blocks."""

    def __init__(self, where, width=WIDTH, hang=0):
        self.where = where
        self.width = width
        self.hang = hang  # continuation lines' extra indent ("Why: " hangs its text)
        self.lines = []
        self.words = []
        self.base = 0
        self.item = False
        self.stack = []
        self.nofill = False
        self.tag_next = 0
        self.bullet = None

    def indent(self):
        return self.base + (INDENT if self.item else 0)

    def flush(self):
        text = " ".join(self.words).replace("\x01 ", "").replace("\x01", "")
        self.words = []
        if not text.strip():
            return
        first = " " * self.indent()
        if self.bullet is not None:
            first = " " * max(self.indent() - 2, 0) + self.bullet + " "
            self.bullet = None
        for line in textwrap.wrap(text, self.width, initial_indent=first,
                                  subsequent_indent=" " * (self.indent() + self.hang),
                                  break_long_words=False, break_on_hyphens=False):
            self.lines.append(line.replace(NBSP, " "))

    def blank(self):
        self.flush()
        if self.lines and self.lines[-1] != "":
            self.lines.append("")

    def text(self, text):
        if self.nofill:
            self.lines.append((" " * self.indent() + text.replace("\x01", "")).rstrip().replace(NBSP, " "))
        elif self.tag_next:
            # a tag line stands alone, at the item's left edge
            self.tag_next -= 1
            self.lines.append((" " * self.base + text.replace("\x01", "")).replace(NBSP, " "))
        else:
            self.words.append(text)

    def request(self, name, rest, n):
        where = "%s:%d" % (self.where, n)
        if name in FONT_MACROS:
            self.text(inline(font_macro_text(name, rest), where))
        elif name in ("PP", "P", "LP"):
            self.blank()
            self.item = False
        elif name in ("TP", "TQ"):
            if name == "TP":
                self.blank()
            else:
                self.flush()
            self.item = True
            self.tag_next = 1
        elif name == "IP":
            self.blank()
            self.item = True
            args = split_args(rest)
            if args and args[0]:
                self.bullet = inline(args[0], where)
        elif name == "RS":
            self.flush()
            self.stack.append((self.base, self.item))
            self.base += INDENT
            self.item = False
        elif name == "RE":
            self.flush()
            if self.stack:
                self.base, self.item = self.stack.pop()
        elif name in ("nf", "fi"):
            self.flush()
            self.nofill = name == "nf"
        elif name == "br":
            self.flush()
        elif name == "sp":
            self.blank()
        elif name in ("SS", "SH"):
            self.blank()
            self.lines.append(inline(" ".join(split_args(rest)), where))
        elif name not in IGNORED:
            raise RoffError("%s: request .%s is not one explain-table.py renders" % (where, name))

    def feed(self, lines, first_line):
        for n, line in enumerate(lines, first_line):
            if line.startswith(('.\\"', "'\\\"")) or line in (".", "'"):
                continue
            m = re.match(r"^[.'](\S+)\s*(.*)$", line)
            if m:
                self.request(m.group(1), m.group(2), n)
            else:
                self.text(inline(line, "%s:%d" % (self.where, n)))
        return self

    def result(self):
        self.flush()
        while self.lines and self.lines[-1] == "":
            self.lines.pop()
        while self.lines and self.lines[0] == "":
            self.lines.pop(0)
        return "\n".join(self.lines) + "\n"


def render(lines, first_line, where):
    return Renderer(where).feed(lines, first_line).result()


def man_sections(lines):
    """[(title, first line number, [lines])] for each .SH of a page."""
    sections = []
    for n, line in enumerate(lines, 1):
        m = re.match(r"^\.SH\s+(.*)$", line)
        if m:
            sections.append((inline(" ".join(split_args(m.group(1))), "line %d" % n), n + 1, []))
        elif sections:
            sections[-1][2].append(line)
    return sections


# ---- lowlatd.conf(5): sections and keys -------------------------------------------------

MACRO_FONTS = {"B": "BB", "I": "II", "BR": "BR", "RB": "RB", "BI": "BI", "IB": "IB", "IR": "IR", "RI": "RI"}


def styled(line, where):
    """[(character, font)] of a tag line, font "B", "I" or "R": which parts of a key's name
    are literal (bold) and which stand for a name of the reader's (italic)."""
    m = re.match(r"^\.(\S+)\s*(.*)$", line)
    if m and m.group(1) in MACRO_FONTS:
        fonts = MACRO_FONTS[m.group(1)]
        args = split_args(m.group(2))
    else:
        fonts, args = "RR", [line]
    out = []
    for k, arg in enumerate(args):
        font = fonts[k % 2]
        for piece in re.split(r"(\\f(?:\(..|\[[^]]*\]|.))", arg):
            if piece.startswith("\\f"):
                letter = piece[2:].strip("([]")[:1]
                font = {"B": "B", "I": "I"}.get(letter, "R" if letter in ("R", "P") else font)
            else:
                out.extend((c, font) for c in inline(piece, where).replace(NBSP, " "))
        if len(fonts) == 2 and fonts[0] == fonts[1] and k + 1 < len(args):
            out.append((" ", font))
    return out


def tag_keys(line, where):
    """The keys a tag line documents: [(name, pattern)], pattern None for a literal name,
    "feature.*" for feature.NAME; a name entirely in italics (dotted.key, /sys/path) is
    no key but a stand-in for any: ("", None)."""
    chars = styled(line, where)
    plain = "".join(c for c, _ in chars)
    keys = []
    for m in re.finditer(r"(?:^|(?<=[\s,]))([^\s=,|]+)=", plain):
        fonts = [f for _, f in chars[m.start(1):m.end(1)]]
        if all(f == "I" for f in fonts):
            keys.append(("", None))
            continue
        pattern = re.sub(r"I+", "*", "".join("I" if f == "I" else "L" for f in fonts))
        if "*" not in pattern:
            keys.append((m.group(1), None))
            continue
        # the literal letters where they are, a star for each italic run
        glob, last = [], None
        for (c, f) in chars[m.start(1):m.end(1)]:
            if f != "I":
                glob.append(c)
            elif last != "I":
                glob.append("*")
            last = f
        keys.append((m.group(1), "".join(glob)))
    return keys


def section_items(lines, first_line):
    """[(first line number, [lines], [tag lines])] of each top-level .TP item of a section:
    it lasts until the next one, a .PP at the same level, or the section's end; an .IP or
    an .RS inset inside it is part of it."""
    items, current, depth, tags_due = [], None, 0, 0
    for n, line in enumerate(lines, first_line):
        m = re.match(r"^\.(\S+)", line)
        request = m.group(1) if m else None
        if request == "RS":
            depth += 1
        elif request == "RE":
            depth = max(depth - 1, 0)
        elif depth == 0 and request == "TP":
            current = (n, [], [])
            items.append(current)
            tags_due = 1
        elif depth == 0 and request in ("PP", "P", "LP", "SS"):
            current = None
        if current is None:
            continue
        current[1].append(line)
        if request == "TQ":
            tags_due = 1
        elif request != "TP" and tags_due and not line.startswith('.\\"'):
            current[2].append((n, line))
            tags_due = 0
    return items


def conf_page(path):
    """(sections, keys): [(name, title, takes_any_key, text)], [(section, key, pattern, text)]."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    sections, keys = [], []
    for title, first, body in man_sections(lines):
        names = [n.lower() for n in re.findall(r"\[(\w+)\]", title)]
        if not names or not re.search(r"\bSECTIONS?$", title):
            continue
        renderer = Renderer(path)
        renderer.base = INDENT
        text = title + "\n" + renderer.feed(body, first).result()
        section_keys, any_key = [], False
        for n, item_lines, tags in section_items(body, first):
            item_text = render(item_lines, n, path)
            for tn, tag in tags:
                for key, pattern in tag_keys(tag, "%s:%d" % (path, tn)):
                    if key:
                        section_keys.append((key, pattern, item_text))
                    else:
                        any_key = True
        if not section_keys and not any_key:
            raise RoffError("%s: %s documents no key" % (path, title))
        for name in names:
            sections.append((name, title, any_key, text))
            keys.extend((name, key, pattern, item_text) for key, pattern, item_text in section_keys)
    if not sections:
        raise RoffError("%s: no [SECTION] SECTION found" % path)
    return sections, keys


# ---- lowlatctl(1): the findings ----------------------------------------------------------

FINDING_PARTS = ("Why:", "Fix:")


def finding_parts(block, first_line, path, where):
    """(when, why, fix) of a finding's text: its lines split at each .br whose next line starts
    "Why:" or "Fix:"; each part as [(line number, [lines])]. Both parts are required, once,
    in that order, so that explain always has a reason and a fix to give."""
    parts = [(first_line, [])]
    for n, line in enumerate(block, first_line):
        nxt = block[n - first_line + 1] if n - first_line + 1 < len(block) else ""
        if re.match(r"^\.br\s*$", line) and nxt.startswith(FINDING_PARTS):
            parts.append((n + 1, []))
            continue
        parts[-1][1].append(line)
    labels = [lines[0].split(None, 1)[0] for _, lines in parts[1:]]
    if labels != list(FINDING_PARTS) or not parts[0][1]:
        raise RoffError("%s: a finding's text is when it is raised, then .br and a line starting Why:, "
                        "then .br and a line starting Fix: (found %s)" % (where, ", ".join(labels) or "neither"))
    for (n, lines), label in zip(parts[1:], FINDING_PARTS):
        if not " ".join(lines)[len(label):].strip():
            raise RoffError("%s:%d: %s says nothing" % (path, n, label))
    return parts


def finding_items(lines, first_line, path):
    """[(line number, id, severity, [body lines])] of the findings' tagged list: from the
    .RS after "The findings (" to its .RE, each item ".TP", then '.BR ID " (SEVERITY)"',
    then its body."""
    items, i = [], 0
    while i < len(lines) and not lines[i].startswith(".RE"):
        if lines[i] != ".TP":
            raise RoffError("%s:%d: the findings' list holds .TP items only, not %r" % (path, first_line + i, lines[i]))
        tag_line = first_line + i + 1
        m = re.match(r'^\.BR (\S+) " \(([^)]*)\)"$', lines[i + 1] if i + 1 < len(lines) else "")
        if not m:
            raise RoffError('%s:%d: a finding\'s tag is .BR ID " (SEVERITY)"' % (path, tag_line))
        i += 2
        body_line, body = first_line + i, []
        while i < len(lines) and lines[i] != ".TP" and not lines[i].startswith(".RE"):
            body.append(lines[i])
            i += 1
        items.append((tag_line, m.group(1), m.group(2), body_line, body))
    if i == len(lines):
        raise RoffError("%s:%d: the findings' list has no .RE" % (path, first_line))
    return items


def findings_table(path):
    """[(id, severity, text, why, fix)] of lowlatctl(1)'s list of findings (under `check`,
    after "The findings ("): text as explain prints it (the when, then Why: and Fix: lines
    whose text hangs), why and fix unwrapped, without their labels (--json's fields)."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    for n, line in enumerate(lines):
        if not line.startswith("The findings (") or n + 1 >= len(lines) or lines[n + 1] != ".RS":
            continue
        findings = []
        for tag_line, raw_id, raw_severity, body_line, body in finding_items(lines[n + 2:], n + 3, path):
            where = "%s:%d" % (path, tag_line)
            finding_id = inline(raw_id, where)
            severity = inline(raw_severity, where)
            (when_line, when), (why_line, why), (fix_line, fix) = finding_parts(body, body_line, path, where)
            texts, plain = [], []
            for first, part, hang in ((when_line, when, 0), (why_line, why, 5), (fix_line, fix, 5)):
                renderer = Renderer(path, hang=hang)
                renderer.base = INDENT
                texts.append(renderer.feed(part, first).result())
                plain.append(" ".join(Renderer(path, width=10 ** 6).feed(part, first).result().split()))
            findings.append((finding_id, severity, "%s (%s)\n%s" % (finding_id, severity, "".join(texts)),
                             plain[1][len("Why:"):].strip(), plain[2][len("Fix:"):].strip()))
        if not findings:
            raise RoffError("%s:%d: the findings' list is empty" % (path, n + 1))
        return findings
    raise RoffError('%s: no list of findings (a line starting "The findings (", then .RS)' % path)


# ---- lowlatd.catalog: the events ---------------------------------------------------------

def catalog(path):
    """[(message id, subject, text)]: text is the entry as journalctl -x shows it, Subject
    line first, the @FIELD@ placeholders as written."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    entries, current = [], None
    for n, line in enumerate(lines, 1):
        m = re.match(r"^-- ([0-9a-f]{32})(?:\s.*)?$", line)
        if m:
            current = [m.group(1), None, [], True]
            entries.append(current)
        elif current is None:
            continue
        elif current[3] and line.startswith("Subject:"):
            current[1] = line[len("Subject:"):].strip()
        elif current[3] and line == "":
            current[3] = False
        elif not current[3]:
            current[2].append(line)
    out = []
    for message_id, subject, body, _ in entries:
        if subject is None:
            raise RoffError("%s: entry %s has no Subject" % (path, message_id))
        while body and body[-1] == "":
            body.pop()
        out.append((message_id, subject, "Subject: %s\n\n%s\n" % (subject, "\n".join(body))))
    if not out:
        raise RoffError("%s: no entries" % path)
    return out


# ---- The C ------------------------------------------------------------------------------

def c_string(s):
    """A C string expression of s, a literal a line, printable ASCII else octal escapes."""
    if s is None:
        return "NULL"
    parts = []
    for line in s.splitlines(keepends=True):
        out = []
        for b in line.encode("utf-8"):
            c = chr(b)
            if c == "\\" or c == '"':
                out.append("\\" + c)
            elif c == "\n":
                out.append("\\n")
            elif 0x20 <= b < 0x7f and c != "?":  # "?" too: no trigraphs
                out.append(c)
            else:
                out.append("\\%03o" % b)
        parts.append('"%s"' % "".join(out))
    return "\n                ".join(parts) if parts else '""'


class Texts:
    """Each text once, as a static array the rows point to: [service] and [process] share
    theirs, as do keys documented by one item (rx_usecs=, tx_usecs=, ...)."""

    def __init__(self):
        self.names = {}
        self.lines = []

    def ref(self, text):
        if text not in self.names:
            self.names[text] = "text_%d" % len(self.names)
            self.lines.append("static const char %s[] =\n                %s;" % (self.names[text], c_string(text)))
        return self.names[text]


def c_rows(out, ctype, name, rows):
    out.append("const %s %s[] = {" % (ctype, name))
    out.extend("        { %s }," % ", ".join(row) for row in rows)
    out += ["};", "const size_t %s = ELEMENTSOF(%s);" % (name.replace("explain_", "explain_n_"), name), ""]


def c_table(sections, keys, findings, events, sources):
    texts = Texts()
    source = {name: "lowlatd.conf(5), " + title for name, title, _, _ in sections}
    rows = {
        "sections": [(c_string(name), c_string(source[name]), "true" if any_key else "false", texts.ref(text))
                     for name, title, any_key, text in sections],
        "keys": [(c_string(section), c_string(key), c_string(pattern), c_string(source[section]), texts.ref(text))
                 for section, key, pattern, text in keys],
        "findings": [(c_string(finding_id), c_string(severity), texts.ref(text), c_string(why), c_string(fix))
                     for finding_id, severity, text, why, fix in findings],
        "events": [(c_string(message_id), c_string(subject), texts.ref(text))
                   for message_id, subject, text in events],
    }
    out = ["/* Generated by tools/explain-table.py from %s: do not edit. */" % ", ".join(sources),
           '#include "explain.h"', ""] + texts.lines + [""]
    c_rows(out, "ExplainSection", "explain_sections", rows["sections"])
    c_rows(out, "ExplainKey", "explain_keys", rows["keys"])
    c_rows(out, "ExplainFinding", "explain_findings", rows["findings"])
    c_rows(out, "ExplainEvent", "explain_events", rows["events"])
    return "\n".join(out)


def main(argv):
    if len(argv) != 5:
        sys.stderr.write("usage: explain-table.py LOWLATD.CONF.5 LOWLATCTL.1 LOWLATD.CATALOG OUTPUT.c\n")
        return 2
    conf, ctl, catalog_path, output = argv[1:]
    try:
        sections, keys = conf_page(conf)
        text = c_table(sections, keys, findings_table(ctl), catalog(catalog_path), [
            "man/lowlatd.conf.5", "man/lowlatctl.1", "conf/lowlatd.catalog"])
    except (RoffError, OSError, ValueError) as e:
        sys.stderr.write("explain-table.py: %s\n" % e)
        return 1
    with open(output, "w", encoding="ascii") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
