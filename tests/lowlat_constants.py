# SPDX-License-Identifier: LGPL-2.1-or-later
"""lowlatd's constants as its sources define them, for the Python tests: read at import
time, so that a test never checks against a copy that has gone stale.

Numbers and names come from `#define`s, looked for in every header under lib/ and daemon/
and then in their .c files (the C may move a constant from one file to another); every
definition found must agree. MESSAGE_IDs come from the events table (lib/log/log.c today) and
each must have its entry in conf/lowlatd.catalog; the version from the build's version.h
(or tools/version.sh). Anything missing, ambiguous or not understood raises ConstantError
at import: every test that uses this module then fails, saying which constant and why.

Source tree: LOWLATD_SOURCE_ROOT (meson sets it), else the tree this file is in.
"""

import ast
import glob
import os
import re
import subprocess

SOURCE_ROOT = os.environ.get("LOWLATD_SOURCE_ROOT") or \
    os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class ConstantError(RuntimeError):
    pass


def _read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


_C_TOKEN = re.compile(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|/\*.*?\*/|//[^\n]*', re.S)


def _strip_comments(text):
    """C comments blanked out (string and character literals kept as they are)."""
    return _C_TOKEN.sub(lambda m: m.group(0) if m.group(0)[0] in "\"'" else " ", text)


def _c_files():
    """Headers first, then .c files, under lib/, common/, daemon/ and lowlatctl/ at any depth."""
    out = []
    for ext in ("h", "c"):
        for top in ("lib", "common", "daemon", "lowlatctl"):
            out += sorted(glob.glob(os.path.join(SOURCE_ROOT, top, "**", "*." + ext), recursive=True))
    if not out:
        raise ConstantError("no C sources under %s/lib or its siblings (LOWLATD_SOURCE_ROOT?)"
                            % SOURCE_ROOT)
    return out


# An object-like #define (not NAME(args)), continuation lines joined.
_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(\w+)(?![\w(])[ \t]*(.*?)[ \t]*$", re.M)
_CAST = re.compile(r"\(\s*(?:const\s+)?(?:(?:(?:unsigned|signed|long|short|int|char)\b\s*)+"
                   r"|(?:u?int(?:8|16|32|64)_t|size_t|ssize_t|usec_t)\s*)\)")
_EXPR_TOKEN = re.compile(r"\s*(?:(0[xX][0-9a-fA-F]+|\d+)[uUlL]*\b|([A-Za-z_]\w*)|(<<|>>|[-+*/%()|&^~]))")
_STRINGS = re.compile(r'\s*(?:"(?:\\.|[^"\\])*"\s*)+')
_EXPR_NODES = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Constant, ast.Add, ast.Sub, ast.Mult,
               ast.FloorDiv, ast.Mod, ast.LShift, ast.RShift, ast.BitOr, ast.BitAnd, ast.BitXor,
               ast.USub, ast.UAdd, ast.Invert)


def _definitions():
    """{NAME: [(file, value text)]} of every object-like #define under lib/ and daemon/."""
    defs = {}
    for path in _c_files():
        text = _strip_comments(_read(path).replace("\\\n", " "))
        for m in _DEFINE.finditer(text):
            defs.setdefault(m.group(1), []).append((os.path.relpath(path, SOURCE_ROOT), m.group(2)))
    return defs


_DEFS = _definitions()
_VALUES = {}


def _evaluate(name, text, seen):
    """The value of a #define's text: a string (literals concatenated) or an integer
    expression over literals, casts and other #defines."""
    if _STRINGS.fullmatch(text):
        return "".join(ast.literal_eval(s) for s in re.findall(r'"(?:\\.|[^"\\])*"', text))
    expr = _CAST.sub(" ", text)
    out, pos = [], 0
    while pos < len(expr.rstrip()):
        m = _EXPR_TOKEN.match(expr, pos)
        if not m:
            raise ConstantError("%s: cannot read %r at %r" % (name, text, expr[pos:]))
        number, ident, op = m.groups()
        if number is not None:
            octal = len(number) > 1 and number[0] == "0" and number[1] not in "xX"
            out.append(str(int(number, 8 if octal else 0)))
        elif ident is not None:
            value = _value(ident, seen)
            if not isinstance(value, int):
                raise ConstantError("%s: %s is not a number (%r)" % (name, ident, value))
            out.append(str(value))
        else:
            out.append("//" if op == "/" else op)   # C's integer division
        pos = m.end()
    tree = ast.parse(" ".join(out), mode="eval")
    if not all(isinstance(n, _EXPR_NODES) for n in ast.walk(tree)):
        raise ConstantError("%s: %r is not an integer expression" % (name, text))
    return eval(compile(tree, name, "eval"))


def _value(name, seen=()):
    if name in _VALUES:
        return _VALUES[name]
    if name in seen:
        raise ConstantError("%s is defined in terms of itself" % name)
    found = _DEFS.get(name)
    if not found:
        raise ConstantError("#define %s not found in any lib/, common/, daemon/ or lowlatctl/ source under %s"
                            % (name, SOURCE_ROOT))
    values = {}
    for path, text in found:
        values.setdefault(_evaluate(name, text, seen + (name,)), []).append(path)
    if len(values) > 1:
        raise ConstantError("#define %s differs between files: %s" % (
            name, "; ".join("%r in %s" % (v, ", ".join(p)) for v, p in values.items())))
    _VALUES[name] = next(iter(values))
    return _VALUES[name]


def define(name):
    """The value of `#define name`, wherever under lib/, common/, daemon/ or lowlatctl/ it is; raises
    ConstantError when it is not there, not understood, or defined differently twice."""
    return _value(name)


def _message_ids():
    """{event name: MESSAGE_ID} from the events table ([EVENT_X] = { "ID", "name", ... }),
    each checked against conf/lowlatd.catalog."""
    ids = {}
    for path in _c_files():
        text = _strip_comments(_read(path))
        for m in re.finditer(r'\[\s*EVENT_\w+\s*\]\s*=\s*\{\s*"([0-9a-f]{32})"\s*,\s*"([^"]+)"', text):
            if ids.get(m.group(2), m.group(1)) != m.group(1):
                raise ConstantError("event %s has two MESSAGE_IDs" % m.group(2))
            ids[m.group(2)] = m.group(1)
    if not ids:
        raise ConstantError("no events table ([EVENT_X] = { \"MESSAGE_ID\", \"name\", ... }) "
                            "under lib/ or daemon/")
    catalog = os.path.join(SOURCE_ROOT, "conf", "lowlatd.catalog")
    documented = set(re.findall(r"^-- ([0-9a-f]{32})\s*$", _read(catalog), re.M))
    missing = sorted("%s (%s)" % (i, n) for n, i in ids.items() if i not in documented)
    if missing:
        raise ConstantError("MESSAGE_IDs without an entry in %s: %s" % (catalog, ", ".join(missing)))
    return ids


def _project_version():
    text = _read(os.path.join(SOURCE_ROOT, "meson.build"))
    m = re.search(r"\bproject\s*\(.*?\bversion\s*:\s*'([^']+)'", text, re.S)
    if not m:
        raise ConstantError("no version : '...' in meson.build's project()")
    return m.group(1)


def _build_version():
    """What the programs of the build under test report: the version.h meson generated
    (LOWLATD_VERSION_H, set by the suites' meson.build), else what tools/version.sh says of
    the source tree now."""
    header = os.environ.get("LOWLATD_VERSION_H")
    if header:
        m = re.search(r'(?m)^#define LOWLATD_VERSION "([^"\\]+)"$', _read(header))
        if not m:
            raise ConstantError("no #define LOWLATD_VERSION \"...\" in %s" % header)
        return m.group(1)
    p = subprocess.run([os.path.join(SOURCE_ROOT, "tools", "version.sh"), SOURCE_ROOT, "", PROJECT_VERSION],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    if p.returncode != 0 or not p.stdout.strip():
        raise ConstantError("tools/version.sh failed (%d): %s" % (p.returncode, p.stderr.strip()))
    return p.stdout.strip()


USEC_PER_SEC = define("USEC_PER_SEC")

# lib/setting/setting.h: the fight detector and its back-off
FIGHT_CORRECTIONS = define("FIGHT_CORRECTIONS")
FIGHT_BACKOFF_S = define("FIGHT_BACKOFF_USEC") / USEC_PER_SEC
# daemon/manager.h: distinct IRQs rewritten that make "another IRQ balancer"
IRQ_WRITER_IRQS = define("IRQ_WRITER_IRQS")

# lib/config/config.h: limits the config parser enforces
SCAN_INTERVAL_MIN_USEC = define("SCAN_INTERVAL_MIN_USEC")
SCAN_INTERVAL_MAX_USEC = define("SCAN_INTERVAL_MAX_USEC")
DMA_LATENCY_MAX_USEC = define("DMA_LATENCY_MAX_USEC")
CONFIG_LINE_MAX = define("CONFIG_LINE_MAX")

# daemon/bus.c: the bus API
BUS_NAME = define("BUS_NAME")
BUS_PATH = define("BUS_PATH")
BUS_INTERFACE = define("BUS_INTERFACE")

# The journal's MESSAGE_IDs by event name ("drift", "corrected", ...)
MESSAGE_IDS = _message_ids()

# meson.build's project version, and what this build's programs report (tools/version.sh:
# git describe in a checkout, e.g. "0.1.0-392-ga95bff9")
PROJECT_VERSION = _project_version()
VERSION = _build_version()


def slices_line(length):
    """A valid '[cpus] slices = system.slice user.slice init.scope a... b...' line of exactly
    `length` characters (at least 60): the one key whose value may fill a CONFIG_LINE_MAX
    line (a [sysctl] value holds 255 characters, a unit name 255 too), for the tests of the
    longest line."""
    line = "slices = system.slice user.slice init.scope"
    n = 0
    while len(line) < length:
        room = length - len(line) - 1 - len(".slice")
        line += " " + chr(ord("a") + n) * max(1, min(room, 200)) + ".slice"
        n += 1
    if len(line) != length:
        raise ValueError("no slices line of %d characters" % length)
    return line
