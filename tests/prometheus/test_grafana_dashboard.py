#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""conf/grafana/lowlatd.json, the Grafana dashboard: valid JSON; no data source written in
(every query goes through the $datasource variable, and there are no __inputs to fill in at
import); job and instance variables on lowlatd_up, every selector filtered by them; each
panel's PromQL, with Grafana's variables replaced, accepted by promtool check rules as a
recording rule (a failure names the panel); counters only under rate() or increase(); every
lowlatd_* series it names one lowlatctl metrics prints; and every series the alert rules
(conf/prometheus/lowlatd-alerts.yml) use is on the dashboard, so that the two cannot part
ways. That the series are in a real lowlatd's output is test_grafana_dashboard_metrics.py's.

promtool (Debian: prometheus) is part of what the tests need (tools/packages.sh): missing,
it is a failure, not a skip."""

import json
import os
import re
import shutil

import grafana_dashboard as g
import packaging_util as u

METRICS_C = u.src("lowlatctl", "metrics.c")
DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}
# The one data source a dashboard may name outright: Grafana's own, for its built-in
# annotations.
GRAFANA_BUILTIN = {"type": "grafana", "uid": "-- Grafana --"}


def datasources(node, path="$"):
    """[(JSON path, value)] of every "datasource" key in the file."""
    out = []
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "datasource":
                out.append((path + "." + k, v))
            out += datasources(v, path + "." + k)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += datasources(v, "%s[%d]" % (path, i))
    return out


def check_file(t, text):
    try:
        d = json.loads(text)
    except ValueError as e:
        t.ok(False, "lowlatd.json is valid JSON", str(e))
        return None
    t.ok(isinstance(d, dict) and d.get("title") and d.get("uid") and d.get("schemaVersion", 0) >= 36,
         "lowlatd.json is valid JSON: a dashboard with a title, a uid and a schemaVersion of Grafana 10 or later",
         repr({k: d.get(k) for k in ("title", "uid", "schemaVersion")}))
    t.ok(d.get("id") is None, "no database id (a dashboard imported keeps the id Grafana gives it)", repr(d.get("id")))
    return d


def check_datasource(t, d):
    variables = {v.get("name"): v for v in d.get("templating", {}).get("list", [])}
    ds = variables.get("datasource", {})
    t.ok(ds.get("type") == "datasource" and ds.get("query") == "prometheus" and not ds.get("current"),
         "a datasource variable of type prometheus, with no data source chosen in it", repr(ds))
    wrong = [(p, v) for p, v in datasources(d)
             if v != DATASOURCE and not (v == GRAFANA_BUILTIN and p.startswith("$.annotations."))]
    t.ok(not wrong, "every datasource in the file is ${datasource}: no uid or name of a data source written in",
         "\n".join("%s: %r" % w for w in wrong))
    t.ok("__inputs" not in d and "${DS_" not in json.dumps(d),
         "no __inputs or ${DS_...}: the dashboard imports as it is, by file or by provisioning")
    targets = [(p.get("title"), tg) for p in g.panels(d) for tg in p.get("targets", [])]
    t.ok(targets and all(tg.get("datasource") == DATASOURCE for _, tg in targets),
         "every target queries ${datasource}",
         repr([title for title, tg in targets if tg.get("datasource") != DATASOURCE]))


def check_variables(t, d):
    variables = {v.get("name"): v for v in d.get("templating", {}).get("list", [])}

    def query(name):
        q = variables.get(name, {}).get("query")
        return q.get("query") if isinstance(q, dict) else q

    job, instance = variables.get("job", {}), variables.get("instance", {})
    t.ok(query("job") == "label_values(lowlatd_up, job)" and job.get("multi") and job.get("includeAll"),
         "variable job: label_values(lowlatd_up, job), several at once or all", repr(job))
    t.ok(query("instance") == 'label_values(lowlatd_up{job=~"$job"}, instance)' and instance.get("multi")
         and instance.get("includeAll"),
         "variable instance: label_values(lowlatd_up{job=~\"$job\"}, instance), several at once or all",
         repr(instance))
    t.ok(all(not v.get("current") for v in variables.values()),
         "no variable has a chosen value saved in the file (of the host it was drawn on)",
         repr({n: v.get("current") for n, v in variables.items() if v.get("current")}))

    # Every selector is filtered by the variables; a recording rule of the user's
    # (a name with ':') need not carry job.
    unfiltered = []
    for where, expr in g.queries(d):
        if where.startswith("variable"):
            continue
        for name in g.series_names(g.substitute(expr)):
            for m in re.finditer(r"(?<![\w:])%s(?![\w:])\s*(\{[^}]*\})?" % re.escape(name), expr):
                labels = m.group(1) or ""
                if 'instance=~"$instance"' not in labels or (":" not in name and 'job=~"$job"' not in labels):
                    unfiltered.append("%s: %s%s" % (where, name, labels))
    t.ok(not unfiltered, 'every selector has instance=~"$instance" and job=~"$job"', "\n".join(unfiltered))


def check_panels(t, d):
    ps = [p for p in g.panels(d)]
    ids = [p.get("id") for p in ps]
    t.ok(len(ids) == len(set(ids)) and None not in ids, "every panel has an id of its own", repr(ids))
    titles = [p.get("title") for p in ps if p.get("type") != "row"]
    t.ok(len(titles) == len(set(titles)) and all(titles), "every panel has a title of its own", repr(titles))
    bare = [p.get("title") for p in ps if p.get("type") != "row" and
            not (p.get("targets") and p.get("description") and p.get("gridPos"))]
    t.ok(not bare, "every panel has queries, a description and a place", repr(bare))


def check_promtool(t, d, tmp):
    tool = shutil.which("promtool")
    t.ok(tool, "promtool is installed",
         "promtool is not installed (Debian: prometheus, listed in tools/packages.sh; tools/run-tests installs it)")
    qs = []
    for where, expr in g.queries(d):
        try:
            qs.append((where, g.substitute(expr)))
        except g.DashboardError as e:
            t.ok(False, "%s: only variables the test knows" % where, str(e))
    if not tool:
        return

    def rules_file(name, items):
        # One group per query, named after its panel: promtool's errors say which.
        # JSON strings are YAML double-quoted scalars.
        text = "groups:\n" + "".join(
            "  - name: %s\n    rules:\n      - record: dashboard:query_%d\n        expr: %s\n"
            % (json.dumps(where), i, json.dumps(expr)) for i, (where, expr) in enumerate(items))
        path = os.path.join(tmp, name)
        u.write(path, text)
        return path

    p = u.run([tool, "check", "rules", rules_file("dashboard.rules.yml", qs)])
    ok = p.returncode == 0 and "SUCCESS: %d rules found" % len(qs) in p.stdout
    failing = []
    if not ok:
        for i, q in enumerate(qs):
            one = u.run([tool, "check", "rules", rules_file("query-%d.rules.yml" % i, [q])])
            if one.returncode != 0:
                failing.append("%s: %s\n  %s" % (q[0], q[1], (one.stdout + one.stderr).strip()))
    t.ok(ok, "promtool check rules accepts each of the dashboard's %d queries as a recording rule" % len(qs),
         "\n".join(failing) + "\n" + u.describe(p))


def check_counters(t, d):
    """A counter is read through rate() or increase(); a histogram's buckets through
    histogram_quantile() (lowlatd's are a snapshot of the last measurement: no rate)."""
    bad = []
    for where, expr in g.queries(d):
        if where.startswith("variable"):
            continue
        for m in re.finditer(r"(?<![\w:])(\w+_total)(?![\w:])", expr):
            if not re.search(r"\b(rate|increase)\(\s*$", expr[:m.start()]):
                bad.append("%s: %s outside rate() or increase()" % (where, m.group(1)))
        for m in re.finditer(r"(?<![\w:])(\w+_bucket)(?![\w:])", expr):
            if not expr.lstrip().startswith("histogram_quantile("):
                bad.append("%s: %s outside histogram_quantile()" % (where, m.group(1)))
    t.ok(not bad, "counters only under rate() or increase(), histogram buckets under histogram_quantile()",
         "\n".join(bad))


def check_series(t, d):
    used = g.dashboard_series(d)
    printed = set(re.findall(r'"(lowlatd_[a-z_]+)"', u.read(METRICS_C)))
    alerts = g.alert_series(u.read(g.ALERT_RULES))
    recorded = {n for n in alerts if ":" in n}
    unknown = sorted((n, used[n]) for n in used
                     if n not in printed and n not in g.NODE_EXPORTER_SERIES and n not in recorded)
    t.ok(used and not unknown,
         "every series the dashboard names is one lowlatctl metrics prints, node_exporter's "
         "node_textfile_mtime_seconds, or a recording rule the alert rules name",
         "\n".join("%s (%s)" % (n, "; ".join(w)) for n, w in unknown) + "\nprinted: %r" % sorted(printed))
    t.ok(len(alerts) >= 8, "the alert rules name their series (%d)" % len(alerts), repr(sorted(alerts)))
    missing = sorted(alerts - set(used))
    t.ok(not missing, "every series the alert rules use is on the dashboard (a renamed series is renamed in both)",
         "alerts only: %r" % missing)


def test(t):
    text = u.read(g.DASHBOARD)
    d = check_file(t, text)
    if d is None:
        return
    check_datasource(t, d)
    check_variables(t, d)
    check_panels(t, d)
    check_promtool(t, d, u.tempdir("lowlat-grafana-"))
    check_counters(t, d)
    check_series(t, d)


if __name__ == "__main__":
    u.main(test)
