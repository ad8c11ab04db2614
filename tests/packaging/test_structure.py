#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The shape of the tree holds (docs/hacking.md says it; this keeps it true):

- no function over 100 lines, C or Python, tests included;
- no source file (C, Python, shell) over 1,200 lines;
- lib/ in floors: a folder includes only itself and the folders below it
  (basic < host < config < setting, noise < audit, log);
- no include circle between the modules (a .c/.h pair) of lib/, daemon/, lowlatctl/ and
  common/: a module that reaches itself again through another's header.

The C function lengths come from a small scanner of our own (comments, strings and
preprocessor lines left out, braces counted at file level), not from ctags, which the
test machine may not have.
"""

import ast
import os
import re
import sys

import packaging_util as u

FUNCTION_MAX = 100
FILE_MAX = 1200
SOURCE_DIRS = ["lib", "daemon", "lowlatctl", "common", "tests", "tools"]
MODULE_DIRS = ["lib", "daemon", "lowlatctl", "common"]
FLOORS = {"basic": 0, "host": 1, "config": 2, "setting": 3, "noise": 3, "audit": 4, "log": 4}
INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def tree_files(root, suffixes):
    for top in SOURCE_DIRS:
        for d, dirs, files in os.walk(os.path.join(root, top)):
            dirs[:] = [x for x in dirs if x not in ("__pycache__", "corpus", "measure-data")]
            for f in files:
                if f.endswith(suffixes):
                    yield os.path.join(d, f)


def c_code_only(text):
    """text with comments, string and character literals and preprocessor lines blanked
    (newlines kept, so line numbers stay)."""
    out = []
    i, n = 0, len(text)
    at_line_start = True
    while i < n:
        c = text[i]
        if at_line_start and c == "#":
            # a directive, with its continuation lines
            while i < n and text[i] != "\n":
                if text[i] == "\\" and i + 1 < n and text[i + 1] == "\n":
                    out.append("\n")
                    i += 2
                    continue
                i += 1
            continue
        if c == "/" and text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
            continue
        if c == "/" and text.startswith("//", i):
            while i < n and text[i] != "\n":
                i += 1
            continue
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + "\n" * text.count("\n", i, j) + c)
            i = j + 1
            continue
        if c == "\n":
            at_line_start = True
        elif not c.isspace():
            at_line_start = False
        out.append(c)
        i += 1
    return "".join(out)


def c_functions(text):
    """(name, first line, lines) of each function defined at file level."""
    code = c_code_only(text)
    found = []
    depth = 0
    start = 0  # where the current file-level declaration began
    opened = None
    for i, c in enumerate(code):
        if c == "{":
            if depth == 0:
                opened = i
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0 and opened is not None:
                head = code[start:opened]
                m = re.search(r"(\w+)\s*\([^;{}]*\)\s*$", head.strip())
                if m and not re.search(r"=\s*$|\b(struct|enum|union)\s+\w*\s*$", head.strip()):
                    first = code.count("\n", 0, start + len(head) - len(head.lstrip())) + 1
                    last = code.count("\n", 0, i) + 1
                    found.append((m.group(1), first, last - first + 1))
                opened = None
                start = i + 1
        elif c == ";" and depth == 0:
            start = i + 1
    return found


def check_sizes(t, root):
    long_functions, long_files = [], []
    for path in tree_files(root, (".c", ".h", ".py", ".sh")):
        rel = os.path.relpath(path, root)
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        if text.count("\n") > FILE_MAX:
            long_files.append("%s (%d lines)" % (rel, text.count("\n")))
        if path.endswith((".c", ".h")):
            for name, line, length in c_functions(text):
                if length > FUNCTION_MAX:
                    long_functions.append("%s:%d %s (%d lines)" % (rel, line, name, length))
        elif path.endswith(".py"):
            for node in ast.walk(ast.parse(text, rel)):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    length = node.end_lineno - node.lineno + 1
                    if length > FUNCTION_MAX:
                        long_functions.append("%s:%d %s (%d lines)" % (rel, node.lineno, node.name, length))
    t.ok(not long_functions, "no function over %d lines" % FUNCTION_MAX, "\n".join(long_functions))
    t.ok(not long_files, "no source file over %d lines" % FILE_MAX, "\n".join(long_files))


def check_scanner(t):
    """The scanner itself, on a sample whose answer is known."""
    sample = ("static int f(int a) {\n  if (a) {\n    return 1; /* } */\n  }\n  return \"{\"[0];\n}\n"
              "struct s { int x; };\nstatic const int t[] = {\n 1,\n};\n"
              "#define M(x) { x }\nint\ng(void)\n{\n  return 0;\n}\n")
    t.ok(c_functions(sample) == [("f", 1, 6), ("g", 12, 5)],
         "the function scanner finds f (6 lines) and g (5 lines), no struct, table or macro",
         repr(c_functions(sample)))
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"d"}}
    t.ok(find_circles(graph) == ["a <-> b <-> c"], "the circle finder finds a -> b -> c -> a and no other",
         repr(find_circles(graph)))


def module_of(root, path):
    rel = os.path.relpath(path, root)
    return os.path.splitext(rel)[0]


def resolve_include(root, including, name):
    """The file of the tree an #include "name" in including means, or None (a system or
    generated header)."""
    for base in (os.path.dirname(including), os.path.join(root, "lib"), os.path.join(root, "common")):
        p = os.path.normpath(os.path.join(base, name))
        if os.path.exists(p):
            return p
    return None


def find_circles(graph):
    """The groups of modules that reach one another (Tarjan's strongly connected
    components of more than one module), each as "a <-> b <-> c"."""
    index, low, on_stack, stack, circles = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                circles.append(" <-> ".join(sorted(component)))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return circles


def check_includes(t, root):
    graph = {}
    floor_breaks = []
    for top in MODULE_DIRS:
        for d, _, files in os.walk(os.path.join(root, top)):
            for f in files:
                if not f.endswith((".c", ".h")):
                    continue
                path = os.path.join(d, f)
                with open(path, encoding="utf-8") as fh:
                    text = fh.read()
                mod = module_of(root, path)
                deps = graph.setdefault(mod, set())
                for name in INCLUDE_RE.findall(text):
                    target = resolve_include(root, path, name)
                    if not target:
                        continue
                    dep = module_of(root, target)
                    if dep != mod:
                        deps.add(dep)
                    parts, dep_parts = mod.split(os.sep), dep.split(os.sep)
                    if parts[0] == "lib" and dep_parts[0] == "lib" and parts[1] != dep_parts[1]:
                        if FLOORS.get(dep_parts[1], 99) >= FLOORS.get(parts[1], -1):
                            floor_breaks.append("%s includes %s" % (os.path.relpath(path, root), name))
    t.ok(not floor_breaks, "lib/ folders include only the floors below them", "\n".join(floor_breaks))

    edges = sum(len(d) for d in graph.values())
    t.ok(len(graph) > 50 and edges > 100, "the include graph covers the tree (%d modules, %d includes)"
         % (len(graph), edges))
    circles = find_circles(graph)
    t.ok(not circles, "no include circle between modules", "\n".join(circles))


def test(t):
    check_scanner(t)
    check_sizes(t, u.SOURCE_ROOT)
    check_includes(t, u.SOURCE_ROOT)


if __name__ == "__main__":
    u.main(test)
