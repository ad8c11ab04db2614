#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Shared pieces of the packaging tests (Python 3 standard library only).

These tests check what lowlatd ships around its binaries: the journal catalog, the unit,
the D-Bus policy, the installed tree and the man pages. They read the sources and run the
built programs; nothing here touches the host's /proc, /sys, bus or journal.

Environment (tests/packaging/meson.build sets all of it; the fallbacks let a test run
by hand from the source tree with a build in ./build):
  LOWLATD_SOURCE_ROOT    source tree (default: two levels above this file)
  LOWLATD_BUILD_ROOT     build tree (default: SOURCE/build)
  LOWLATD, LOWLATCTL     built programs (default: BUILD/daemon/lowlatd, BUILD/lowlatctl/lowlatctl)
  LOWLAT_KEEP=1          keep temporary directories for inspection

Result: exit 1 when any check failed, else 77 when any check was skipped (a test that
could not check everything never reports a pass), else 0.
"""

import atexit
import os
import re
import shutil
import subprocess
import sys
import tempfile
import traceback

SKIP_RC = 77

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_ROOT = os.environ.get("LOWLATD_SOURCE_ROOT") or os.path.dirname(os.path.dirname(HERE))
BUILD_ROOT = os.environ.get("LOWLATD_BUILD_ROOT") or os.path.join(SOURCE_ROOT, "build")
LOWLATD = os.environ.get("LOWLATD") or os.path.join(BUILD_ROOT, "daemon", "lowlatd")
LOWLATCTL = os.environ.get("LOWLATCTL") or os.path.join(BUILD_ROOT, "lowlatctl", "lowlatctl")

MAN_PAGES = {
    "lowlatd": ("lowlatd.8", LOWLATD),
    "lowlatd.conf": ("lowlatd.conf.5", None),
    "lowlatctl": ("lowlatctl.1", LOWLATCTL),
}


def src(*parts):
    return os.path.join(SOURCE_ROOT, *parts)


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def write(path, text, mode=None):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    if mode is not None:
        os.chmod(path, mode)


_TEMPDIRS = []


def tempdir(prefix="lowlat-pkg-"):
    d = tempfile.mkdtemp(prefix=prefix)
    _TEMPDIRS.append(d)
    return d


def _cleanup():
    if os.environ.get("LOWLAT_KEEP") == "1":
        for d in _TEMPDIRS:
            print("# kept " + d, flush=True)
        return
    for d in _TEMPDIRS:
        shutil.rmtree(d, ignore_errors=True)


atexit.register(_cleanup)


def run(argv, timeout=60, env=None, **kw):
    """subprocess.run with text output captured; never raises on a non-zero status."""
    e = dict(os.environ)
    if env:
        e.update(env)
    return subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=timeout, env=e, **kw)


def describe(p):
    """A result's status and output, for a failing check's diagnostics."""
    return "command: %s\nexit status: %s\nstdout:\n%s\nstderr:\n%s" % (
        " ".join(p.args) if isinstance(p.args, (list, tuple)) else p.args,
        p.returncode, p.stdout.rstrip(), p.stderr.rstrip())


class TAP:
    """ok N - what / not ok N - what / ok N - what # SKIP why; then 1..N."""

    def __init__(self):
        self.n = 0
        self.failed = []
        self.skipped = []

    def ok(self, cond, what, diag=None):
        self.n += 1
        if cond:
            print("ok %d - %s" % (self.n, what), flush=True)
        else:
            self.failed.append(what)
            print("not ok %d - %s" % (self.n, what), flush=True)
            if diag:
                for line in str(diag).rstrip().splitlines():
                    print("#   " + line, flush=True)
        return bool(cond)

    def skip(self, what, why):
        self.n += 1
        self.skipped.append("%s (%s)" % (what, why))
        print("ok %d - %s # SKIP %s" % (self.n, what, why), flush=True)

    def note(self, text):
        for line in str(text).rstrip().splitlines():
            print("# " + line, flush=True)

    def finish(self):
        print("1..%d" % self.n, flush=True)
        if self.failed:
            print("# %d of %d checks failed:" % (len(self.failed), self.n), flush=True)
            for f in self.failed:
                print("#   " + f, flush=True)
            return 1
        if self.skipped:
            print("# SKIP: %d of %d checks could not run here:" % (len(self.skipped), self.n),
                  flush=True)
            for s in self.skipped:
                print("#   " + s, flush=True)
            return SKIP_RC
        return 0


class Skip(Exception):
    """Raised when the whole test cannot run here."""


def main(fn):
    """Run fn(tap); exit 1 on failure, 77 on skip, 0 on pass. Exceptions fail."""
    t = TAP()
    try:
        fn(t)
        rc = t.finish()
    except Skip as e:
        print("1..0 # SKIP %s" % e, flush=True)
        rc = SKIP_RC
    except Exception as e:  # an unexpected error is a failure, with its traceback
        t.ok(False, "test aborted: %s: %s" % (type(e).__name__, e), traceback.format_exc())
        rc = t.finish()
    sys.exit(rc)


def require_program(path, what):
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        raise Skip("%s not built at %s" % (what, path))


# --- Fake host tree -------------------------------------------------------------------

def make_fake_root(cpus="0-3", isolated=""):
    """The smallest tree --check-config reads its CPU facts from."""
    root = tempdir("lowlat-root-")
    cpu = os.path.join(root, "sys/devices/system/cpu")
    write(os.path.join(cpu, "online"), cpus + "\n")
    write(os.path.join(cpu, "possible"), cpus + "\n")
    write(os.path.join(cpu, "isolated"), isolated + "\n")
    write(os.path.join(cpu, "nohz_full"), "(null)\n")
    write(os.path.join(root, "proc/irq/default_smp_affinity"), "f\n")
    write(os.path.join(root, "proc/interrupts"), "           CPU0       CPU1       CPU2       CPU3\n")
    write(os.path.join(root, "dev/cpu_dma_latency"), "")
    return root


def check_config(lowlatd, config, root):
    # A [daemon] profile names a shipped profile: the tree's, as they are installed.
    return run([lowlatd, "--check-config", "--config", config, "--root", root],
               env={"LOWLATD_PROFILES_DIR": src("conf", "profiles")})


# --- Sources --------------------------------------------------------------------------

def read_c_with_includes(path):
    """A C file followed by the local headers it includes from its own folder (one level),
    so that a test finds a #define where the compiler does: lowlatctl/top.c takes its
    noise types from noise-view.h."""
    text = read(path)
    folder = os.path.dirname(path)
    parts = [text]
    for name in re.findall(r'^\s*#\s*include\s+"([^"]+)"', text, re.M):
        header = os.path.join(folder, name)
        if os.path.isfile(header):
            parts.append(read(header))
    return "\n".join(parts)


def strip_c_comments(text):
    """text without its C comments; string and character literals are kept whole, so that a
    "/*" inside one ("ksoftirqd/*") starts nothing."""
    token = re.compile(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|/\*.*?\*/|//[^\n]*', re.S)
    return token.sub(lambda m: m.group(0) if m.group(0)[0] in "\"'" else " ", text)


def c_call_args(text, open_paren):
    """The text between text[open_paren] == '(' and its matching ')'."""
    depth = 0
    i = open_paren
    while i < len(text):
        c = text[i]
        if c == '"':
            i += 1
            while i < len(text) and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return text[open_paren + 1:i]
        i += 1
    raise ValueError("unbalanced parentheses at offset %d" % open_paren)


# --- Man pages ------------------------------------------------------------------------

def man_plain(text):
    """Roff source reduced to text for searching: comments dropped, escapes resolved."""
    out = []
    for line in text.splitlines():
        if line.startswith(('.\\"', "'\\\"")):
            continue
        line = re.sub(r'\\"[^\n]*', "", line)         # trailing comment
        line = line.replace("\\-", "-").replace("\\(aq", "'").replace("\\(em", "--")
        line = line.replace("\\e", "\\").replace("\\&", "").replace("\\ ", "\ue000")
        line = re.sub(r"\\f(\[[^\]]*\]|\(..|.)", "", line)  # font changes
        line = line.replace("\\c", "")
        # Font macros (.B .BR .IR ...) join their arguments without spaces for the
        # alternating forms, so drop the quoting and join.
        m = re.match(r"^\.(B|I|BR|RB|BI|IB|IR|RI)\s+(.*)$", line)
        if m:
            args = re.findall(r'"([^"]*)"|(\S+)', m.group(2))
            words = [a or b for a, b in args]
            line = (" " if m.group(1) in ("B", "I") else "").join(words)
        out.append(line.replace("\ue000", " "))
    return "\n".join(out)


def man_sections(text, raw=False):
    """{SECTION NAME: text} for each .SH of a page (plain text, or the roff source)."""
    sections = {}
    name = ""
    buf = []

    def close():
        body = "\n".join(buf)
        sections[name] = body if raw else man_plain(body)

    for line in text.splitlines():
        m = re.match(r'^\.SH\s+"?([^"]*)"?\s*$', line)
        if m:
            close()
            name = m.group(1).replace("\\-", "-").strip().upper()
            buf = []
        else:
            buf.append(line)
    close()
    return sections


def man_tags(raw, nested=True):
    """The tag line of every .TP/.TQ item in roff source, as plain text; nested=False: only
    the items of the outermost list (not those between .RS and .RE, such as the findings
    listed under check)."""
    lines = raw.splitlines()
    tags = []
    depth = 0
    for i, line in enumerate(lines):
        if re.match(r"^\.RS\b", line):
            depth += 1
        elif re.match(r"^\.RE\b", line):
            depth = max(depth - 1, 0)
        elif re.match(r"^\.(TP|TQ)\b", line) and i + 1 < len(lines) and (nested or depth == 0):
            tags.append(man_plain(lines[i + 1]).strip())
    return tags


def mentions_option(text, option):
    """Whether an option such as --config or -c appears as a whole word in text."""
    return re.search(r"(?<![\w-])%s(?![\w-])" % re.escape(option), text) is not None


def parser_keys():
    """{section: {key}} the configuration parser takes (test_docs, test_explain), from
    lib/config/keys.c: config_sections[] and the rows of config_keys[] ({ "SECTION", "KEY",
    parser, ... }); [service] and [process] as one section "app"."""
    text = strip_c_comments(read(src("lib", "config", "keys.c")))
    sections_text = text[text.index("config_sections[]"):]
    sections_text = sections_text[:sections_text.index("};")]
    keys_text = text[text.index("config_keys[]"):]
    keys_text = keys_text[:keys_text.index("};")]
    # [service "NAME"] and [process "COMM"] take the same keys and share a page section.
    app = lambda name: "app" if name in ("service", "process") else name
    out = {app(name): set() for name in re.findall(r'\.name\s*=\s*"(\w+)"', sections_text)}
    if not out:
        raise ValueError("no sections in config_sections[]")
    for section, key in re.findall(r'\{\s*"(\w+)"\s*,\s*"([\w.]+)"\s*,', keys_text):
        if app(section) not in out:
            raise ValueError("a row of config_keys[] names section [%s], which config_sections[] lacks" % section)
        out[app(section)].add(key)
    if "nic" in out:
        # [nic] also takes every ethtool parameter by its table name (lib/host/ethtool.c) and
        # feature.NAME (its section's assign, config_assign_nic()).
        ethtool = strip_c_comments(read(src("lib", "host", "ethtool.c")))
        table_text = ethtool[ethtool.index("param_table["):]
        out["nic"] |= set(re.findall(r'\[ETHTOOL_PARAM_\w+\]\s*=\s*\{\s*"(\w+)"', table_text))
        out["nic"].add("feature.NAME")
    return out
