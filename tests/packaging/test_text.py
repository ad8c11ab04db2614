#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""What ships says things as facts, and the repository stands on its own.

- No shipped file (README.md, units/, conf/, man/, debian/ but its changelog, tools/)
  names an issue number ("issue 6", "(issue 7)", "#22"): a reader has no tracker to
  look in.
- No file of the repository points at files outside it (a path of the machine it was
  written on, the guides' folder, the design notes it was written from): the guides are
  cited by title and address.
- The README's first screen (24 lines) has the two quick-start commands.
- Every relative link of README.md and docs/*.md leads to a file of the repository, and
  every #anchor to a heading of its page.
"""

import os
import re
import subprocess

import packaging_util as u

SHIPPED = ["README.md", "units", "conf", "man", "debian", "tools"]
NOT_SHIPPED_TEXT = {os.path.join("debian", "changelog")}  # Debian's own "Closes: #N"

ISSUE_RE = re.compile(r"\b(?:issue|bug|ticket)s?\s*#?\d+|(?<![\w&/])#\d+\b", re.I)
# Built from pieces, so that this file does not match itself.
OUTSIDE_RE = re.compile("|".join([
    r"\bshared/" + "seeds\\b",            # the folder the guides were read from
    r"(?<![\w.])/" + "work/",             # the machine the project was written on
    r"\bseeds?\s+" + r"0\d\d\b",          # a guide by its file's number
    r"(?-i:\b(?:DESIGN|STYLE)\.md\b|\bSPE" + r"C\b)",  # the project's brief, not in the repository
]), re.I)

FIRST_SCREEN = 24
QUICK_START = ["tools/quickstart", "tools/run-tests"]


def repository_files():
    """The files of the repository, relative to its root: git's list where there is one
    (tracked and new, without what .gitignore leaves out: the build directories), else a
    walk that skips build directories."""
    try:
        p = subprocess.run(["git", "-C", u.SOURCE_ROOT, "ls-files", "-z", "--cached", "--others",
                            "--exclude-standard"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                           check=True)
        files = [f for f in p.stdout.decode().split("\0") if f]
        if files:
            return [f for f in files if os.path.isfile(u.src(f))]
    except (OSError, subprocess.CalledProcessError):
        pass
    out = []
    for top, dirs, names in os.walk(u.SOURCE_ROOT):
        dirs[:] = [d for d in dirs if not d.startswith(".")
                   and not os.path.exists(os.path.join(top, d, "meson-private"))]
        out += [os.path.relpath(os.path.join(top, n), u.SOURCE_ROOT) for n in names]
    return out


def text_of(rel):
    """The file's text, or None for a binary one."""
    with open(u.src(rel), "rb") as f:
        data = f.read()
    if b"\0" in data:
        return None
    return data.decode("utf-8", errors="replace")


def matches(rel, text, regex):
    return ["%s:%d: %s" % (rel, n, line.strip()) for n, line in enumerate(text.split("\n"), 1)
            if regex.search(line)]


def shipped(rel):
    return (rel not in NOT_SHIPPED_TEXT
            and any(rel == top or rel.startswith(top + os.sep) for top in SHIPPED))


def slug(heading):
    """The anchor GitHub gives a Markdown heading."""
    s = re.sub(r"[`*_]", "", heading.strip().lower())
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def check_links(t, files):
    pages = ["README.md"] + sorted(f for f in files if re.match(r"^docs/[^/]+\.md$", f))
    for page in pages:
        text = u.read(u.src(page))
        anchors = {slug(h) for h in re.findall(r"^#+\s+(.*)$", text, re.M)}
        links = re.findall(r"\]\(([^)\s]+)\)", text)
        bad = []
        for link in links:
            if re.match(r"^[a-z]+:", link):
                continue  # an address, not a file
            path, _, anchor = link.partition("#")
            if path:
                target = os.path.normpath(os.path.join(os.path.dirname(page), path))
                if target.startswith("..") or not os.path.exists(u.src(target)):
                    bad.append("%s: no such file in the repository" % link)
                    continue
                if anchor and target.endswith(".md"):
                    target_text = u.read(u.src(target))
                    if anchor not in {slug(h) for h in re.findall(r"^#+\s+(.*)$", target_text, re.M)}:
                        bad.append("%s: %s has no such heading" % (link, target))
            elif anchor not in anchors:
                bad.append("%s: no such heading on the page" % link)
        t.ok(not bad, "%s: its %d relative links lead to files and headings of the repository"
             % (page, len([l for l in links if not re.match(r"^[a-z]+:", l)])), "\n".join(bad))


def test(t):
    files = repository_files()
    if not t.ok(any(f == "README.md" for f in files), "the repository's files listed (%d)" % len(files)):
        return

    ships = sorted(f for f in files if shipped(f))
    found = []
    for rel in ships:
        text = text_of(rel)
        if text is not None:
            found += matches(rel, text, ISSUE_RE)
    t.ok(ships and not found, "no shipped file (%d: %s) names an issue number"
         % (len(ships), ", ".join(SHIPPED)), "\n".join(found))

    found = []
    me = os.path.relpath(os.path.abspath(__file__), u.SOURCE_ROOT)
    for rel in files:
        text = text_of(rel) if rel != me else None
        if text is not None:
            found += matches(rel, text, OUTSIDE_RE)
    t.ok(not found, "no file of the repository points at files outside it", "\n".join(found))

    first = "\n".join(u.read(u.src("README.md")).split("\n")[:FIRST_SCREEN])
    missing = [c for c in QUICK_START if c not in first]
    t.ok(not missing, "README.md's first %d lines give the quick start (%s)" % (FIRST_SCREEN, ", ".join(QUICK_START)),
         "missing: " + " ".join(missing))

    check_links(t, files)


if __name__ == "__main__":
    u.main(test)
