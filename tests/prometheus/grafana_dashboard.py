# SPDX-License-Identifier: LGPL-2.1-or-later
"""A reader of conf/grafana/lowlatd.json for the tests (standard library only): the PromQL
of every panel target and template variable, as Prometheus would get it from Grafana, and
the series each one names. test_grafana_dashboard.py checks the file on its own and
against the alert rules; test_grafana_dashboard_metrics.py against a real lowlatd."""

import json
import os
import re

SOURCE_ROOT = os.environ.get("LOWLATD_SOURCE_ROOT") or \
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DASHBOARD = os.path.join(SOURCE_ROOT, "conf", "grafana", "lowlatd.json")
ALERT_RULES = os.path.join(SOURCE_ROOT, "conf", "prometheus", "lowlatd-alerts.yml")

# Grafana's variables, replaced as Grafana would with a value Prometheus takes: the
# template variables sit inside =~"..." (a multi-value selection becomes a regex), the
# built-in intervals inside [...].
SUBSTITUTIONS = (
    (re.compile(r"\$\{?__rate_interval\}?"), "5m"),
    (re.compile(r"\$\{?__interval\}?"), "1m"),
    (re.compile(r"\$\{?__range\}?"), "6h"),
    (re.compile(r"\$\{?(job|instance)\}?"), ".+"),
)

# Not series: PromQL's aggregations, keywords and literals, and the label names
# of grouping clauses (removed before names are taken, see series_names()).
KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "and", "or", "unless",
            "offset", "bool", "inf", "nan", "atan2", "sum", "min", "max", "avg", "group", "stddev",
            "stdvar", "count", "count_values", "bottomk", "topk", "quantile"}

# Series that are not lowlatd's and that the dashboard may name, as the alert rules do:
# node_exporter's own, on the file lowlatctl metrics writes.
NODE_EXPORTER_SERIES = {"node_textfile_mtime_seconds"}


class DashboardError(Exception):
    pass


def load(path=DASHBOARD):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def panels(dashboard):
    """Every panel, those inside collapsed rows included, in order."""
    for p in dashboard.get("panels", []):
        yield p
        for inner in p.get("panels", []):
            yield inner


def queries(dashboard):
    """[(where, PromQL as written)]: each panel target's expr, and the series query of each
    query variable (label_values(SELECTOR, label) -> SELECTOR)."""
    out = []
    for p in panels(dashboard):
        for t in p.get("targets", []):
            where = "panel %r (id %s), target %s" % (p.get("title"), p.get("id"), t.get("refId"))
            if "expr" not in t or not t["expr"].strip():
                raise DashboardError("%s has no expr" % where)
            out.append((where, t["expr"]))
    for v in dashboard.get("templating", {}).get("list", []):
        if v.get("type") != "query":
            continue
        q = v.get("query")
        q = q.get("query") if isinstance(q, dict) else q
        m = re.fullmatch(r"\s*label_values\((.*),\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\)\s*", q or "")
        if not m:
            raise DashboardError("variable %r: not a label_values(SELECTOR, LABEL) query: %r" % (v.get("name"), q))
        out.append(("variable %r" % v.get("name"), m.group(1)))
    return out


def substitute(expr):
    """expr as Prometheus gets it from Grafana; a variable left over is an error."""
    for pattern, value in SUBSTITUTIONS:
        expr = pattern.sub(value, expr)
    if "$" in re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr):
        raise DashboardError("a Grafana variable the tests do not know is left in %r" % expr)
    return expr


def series_names(expr):
    """The metric names a PromQL expression selects: identifiers that are not functions
    (followed by "("), keywords or aggregations, once strings, label matchers, ranges,
    grouping clauses and numbers are out of the way."""
    e = re.sub(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'', '""', expr)
    e = re.sub(r"\{[^}]*\}", " ", e)
    e = re.sub(r"\[[^\]]*\]", " ", e)
    e = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", e)
    e = re.sub(r"(?<![a-zA-Z0-9_:.])[0-9][0-9.eE+-]*", " ", e)
    names = set()
    for m in re.finditer(r"[a-zA-Z_:][a-zA-Z0-9_:]*", e):
        rest = e[m.end():].lstrip()
        if rest.startswith("(") or m.group(0).lower() in KEYWORDS:
            continue
        names.add(m.group(0))
    return names


def dashboard_series(dashboard):
    """{name: [where]} of every series the dashboard's queries name."""
    out = {}
    for where, expr in queries(dashboard):
        for name in series_names(substitute(expr)):
            out.setdefault(name, []).append(where)
    return out


def alert_series(text):
    """The series the alert rules' expressions name (standard library only: each expr is
    on its line, or a block after "expr: |")."""
    exprs = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"^(\s+)expr: *(.*)$", line)
        if not m:
            continue
        if m.group(2).strip() in ("|", ">", "|-", ">-"):
            block = []
            for nxt in lines[i + 1:]:
                if nxt.strip() and len(nxt) - len(nxt.lstrip()) <= len(m.group(1)):
                    break
                block.append(nxt)
            exprs.append("\n".join(block))
        else:
            exprs.append(m.group(2))
    names = set()
    for e in exprs:
        names |= series_names(e)
    return names
