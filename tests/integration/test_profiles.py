#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The shipped profiles ([daemon] profile = NAME) through the real programs, on a fake
host with CPUs 2-3 isolated:

- each one passes lowlatd --check-config on its own and beside the shipped
  conf/lowlatd.conf, and --check-config names the file it came from;
- lowlatd --once --observe --json with each lists a setting for every [sysctl] and [sysfs]
  key the profile's file holds, with the profile's value as desired, and the main file
  wins over the profile key by key;
- a profile in /etc/lowlatd/profiles (beside the configuration) replaces the shipped one
  of its name, and lowlatctl profile list/show say which file is read;
- a profile that does not exist is an error at the line that names it.

The shipped profiles are read from the source tree (LOWLATD_PROFILES_DIR), as they are
installed."""

import json
import os
import re
import subprocess

import lowlat_harness as h

SOURCE = os.environ.get("LOWLATD_SOURCE_ROOT", os.path.join(os.path.dirname(__file__), "..", ".."))
SHIPPED = os.path.join(SOURCE, "conf", "profiles")
ENV = {"LOWLATD_PROFILES_DIR": SHIPPED}


def profile_names():
    return sorted(f[:-5] for f in os.listdir(SHIPPED) if f.endswith(".conf"))


def profile_keys(name, section):
    """KEY = VALUE of one section of a shipped profile, as written."""
    keys, current = {}, None
    with open(os.path.join(SHIPPED, name + ".conf")) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            m = re.match(r"^\[(\w+)\]$", line)
            if m:
                current = m.group(1)
            elif current == section and "=" in line:
                k, v = line.split("=", 1)
                keys[k.strip()] = v.strip()
    return keys


def ctl(*args):
    env = dict(os.environ, **ENV)
    return subprocess.run([os.environ["LOWLATCTL"]] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, env=env, timeout=h.scaled(30))


def once_rows(host, path):
    r = h.run_lowlatd(host, ["--once", "--observe", "--json"], config_path=path, env=ENV)
    try:
        doc = json.loads(r.stdout)
    except ValueError:
        return r, None
    rows = doc.get("settings", doc) if isinstance(doc, dict) else doc
    return r, {(s["kind"], s["object"]): s for s in rows}


def check_shipped(t, host):
    names = profile_names()
    t.ok(set(names) >= {"network-latency", "realtime", "cpu-partitioning", "powersave-isolated"},
         "the four profiles ship: %s" % ", ".join(names))
    with open(os.path.join(SOURCE, "conf", "lowlatd.conf")) as f:
        shipped_conf = f.read()
    for name in names:
        path = h.write_config(host, "[daemon]\nprofile = %s\n" % name, "p-%s.conf" % name)
        r = h.run_lowlatd(host, ["--check-config"], config_path=path, env=ENV)
        want = "  profile %s: %s" % (name, os.path.join(SHIPPED, name + ".conf"))
        t.ok(r.returncode == 0 and "configuration is valid" in r.stdout and want in r.stdout.splitlines(),
             "%s: --check-config passes and names the profile's file" % name,
             "exit %d\nstdout:\n%s\nstderr:\n%s" % (r.returncode, r.stdout, r.stderr))
        path = h.write_config(host, shipped_conf, "s-%s.conf" % name,
                              {"10-profile.conf": "[daemon]\nprofile = %s\n" % name})
        r = h.run_lowlatd(host, ["--check-config"], config_path=path, env=ENV)
        t.ok(r.returncode == 0, "%s: with the shipped lowlatd.conf, --check-config passes" % name,
             "exit %d\nstderr:\n%s" % (r.returncode, r.stderr))

        path = h.write_config(host, "[daemon]\nprofile = %s\n" % name, "o-%s.conf" % name)
        r, rows = once_rows(host, path)
        if not t.ok(rows is not None, "%s: lowlatd --once --observe --json" % name,
                    "exit %d\nstdout:\n%s\nstderr:\n%s" % (r.returncode, r.stdout[:2000], r.stderr)):
            continue
        missing = ["sysctl %s = %s" % (k, v) for k, v in profile_keys(name, "sysctl").items()
                   if rows.get(("sysctl", k), {}).get("desired") != v]
        missing += ["sysfs %s = %s" % (k, v) for k, v in profile_keys(name, "sysfs").items()
                    if not any(kind == "sysfs" and obj == k for kind, obj in rows)]
        t.ok(not missing, "%s: --once lists every [sysctl] and [sysfs] key of the profile, as desired" % name,
             "missing: %s\nrows: %s" % (missing, sorted(rows)[:40]))


def check_override(t, host):
    # The main file over the profile, key by key.
    path = h.write_config(host, "[daemon]\nprofile = network-latency\n[sysctl]\nnet.core.busy_poll = 0\n",
                          "override.conf")
    r, rows = once_rows(host, path)
    t.ok(rows is not None and rows.get(("sysctl", "net.core.busy_poll"), {}).get("desired") == "0" and
         rows.get(("sysctl", "net.core.busy_read"), {}).get("desired") == "50",
         "the main file's net.core.busy_poll wins; the profile's busy_read stays",
         r.stdout[:2000] + r.stderr)

    # lowlatctl cat-config: what is in force, each line with where it was read.
    p = ctl("cat-config", "--config", path)
    shipped = os.path.join(SHIPPED, "network-latency.conf")
    lines = p.stdout.splitlines()
    t.ok(p.returncode == 0 and "#   %s (profile network-latency)" % shipped in lines and "#   %s" % path in lines and
         "net.core.busy_poll = 0  # %s:4" % path in lines and "profile = network-latency  # %s:2" % path in lines and
         any(l.startswith("net.core.busy_read = 50  # %s:" % shipped) for l in lines) and
         not any(l.startswith("net.core.busy_poll = 50") for l in lines),
         "lowlatctl cat-config: the files read, the main file's busy_poll and not the profile's, each with "
         "FILE:LINE", p.stdout + p.stderr)
    bad = h.write_config(host, "[daemon]\nprofile = network-latency\nmode = sideways\n", "bad.conf")
    p = ctl("cat-config", "--config", bad)
    t.ok(p.returncode == 1 and p.stdout == "" and ("%s:3:" % bad) in p.stderr,
         "lowlatctl cat-config of an invalid configuration: exit 1, FILE:LINE of the error", p.stdout + p.stderr)

    # A local profile of the same name replaces the shipped one.
    local = os.path.join(host.tmp, "etc", "profiles")
    os.makedirs(local, exist_ok=True)
    with open(os.path.join(local, "realtime.conf"), "w") as f:
        f.write("# mine\n[sysctl]\nvm.stat_interval = 20\n")
    path = h.write_config(host, "[daemon]\nprofile = realtime\n", "local.conf")
    r = h.run_lowlatd(host, ["--check-config"], config_path=path, env=ENV)
    t.ok(r.returncode == 0 and ("  profile realtime: %s" % os.path.join(local, "realtime.conf")) in r.stdout,
         "a profile in /etc/lowlatd/profiles replaces the shipped one of its name", r.stdout + r.stderr)
    r, rows = once_rows(host, path)
    t.ok(rows is not None and rows.get(("sysctl", "vm.stat_interval"), {}).get("desired") == "20" and
         ("sysctl", "kernel.nmi_watchdog") not in rows,
         "... and only it is read (none of the shipped realtime's keys)", r.stdout[:2000])

    p = ctl("profile", "list", "--config", path)
    line = [l for l in p.stdout.splitlines() if l.startswith("realtime ")]
    t.ok(p.returncode == 0 and line and "local, replaces the shipped one" in line[0] and
         os.path.join(local, "realtime.conf") in line[0] and
         all(re.search(r"^%s +shipped " % re.escape(n), p.stdout, re.M) for n in profile_names() if n != "realtime"),
         "lowlatctl profile list: the local realtime replaces the shipped one, the others shipped",
         p.stdout + p.stderr)
    p = ctl("profile", "list", "--json", "--config", path)
    try:
        j = {e["name"]: e for e in json.loads(p.stdout)}
    except (ValueError, TypeError, KeyError):
        j = {}
    t.ok(j.get("realtime", {}).get("source") == "local" and j["realtime"].get("replaces_shipped") is True and
         j.get("network-latency", {}).get("source") == "shipped",
         "lowlatctl profile list --json", p.stdout + p.stderr)
    p = ctl("profile", "show", "realtime", "--config", path)
    t.ok(p.returncode == 0 and p.stdout == "# %s\n# mine\n[sysctl]\nvm.stat_interval = 20\n" %
         os.path.join(local, "realtime.conf"), "lowlatctl profile show: the file read, named first", p.stdout)
    p = ctl("profile", "show", "no-such", "--config", path)
    t.ok(p.returncode == 1 and "no profile 'no-such'" in p.stderr and local in p.stderr and SHIPPED in p.stderr,
         "lowlatctl profile show of an unknown profile: exit 1, both directories named", p.stderr)
    p = ctl("profile", "frobnicate")
    t.ok(p.returncode == 64 and "see --help" in p.stderr, "lowlatctl profile frobnicate: exit 64", p.stderr)

    # An unknown profile: the error is at the line that names it.
    path = h.write_config(host, "[daemon]\nmode = observe\nprofile = no-such\n", "unknown.conf")
    r = h.run_lowlatd(host, ["--check-config"], config_path=path, env=ENV)
    t.ok(r.returncode == 1 and ("%s:3: profile: no profile 'no-such'" % path) in r.stderr,
         "an unknown profile: refused, FILE:LINE of the key", r.stderr)


def written_keys(path):
    """{(section header, key): (value, line)} of a file, the last line of each key."""
    keys, header = {}, None
    with open(path) as f:
        for n, line in enumerate(f, 1):
            text = line.split("#", 1)[0].strip() if not line.lstrip().startswith("#") else ""
            if text.startswith("["):
                header = text
            elif "=" in text:
                k, v = text.split("=", 1)
                keys[(header, k.strip())] = (v.strip(), n)
    return keys


def check_cat_config_shipped(t, host):
    """lowlatctl cat-config of every shipped file: each key it writes, under its section,
    with its value and its FILE:LINE."""
    files = [os.path.join(SOURCE, "conf", "lowlatd.conf")]
    files += sorted(os.path.join(SOURCE, "conf", "examples", f) for f in os.listdir(os.path.join(SOURCE, "conf",
                                                                                                 "examples")))
    files += [os.path.join(SHIPPED, n + ".conf") for n in profile_names()]
    for src in files:
        with open(src) as f:
            path = h.write_config(host, f.read(), "shipped-" + os.path.basename(src))
        p = ctl("cat-config", "--config", path)
        header, shown = None, set()
        for line in p.stdout.splitlines():
            if line.startswith("["):
                header = line
            elif " = " in line and "  # " in line:
                kv, where = line.rsplit("  # ", 1)
                k, v = kv.split(" = ", 1)
                shown.add((header, k, v, where))
        want = written_keys(path)
        missing = ["%s %s = %s  # %s:%d" % (sec, k, v, path, n) for (sec, k), (v, n) in want.items()
                   if (sec, k, v, "%s:%d" % (path, n)) not in shown]
        # conf/lowlatd.conf sets no key (every line a commented default): it is still read.
        t.ok(p.returncode == 0 and not missing and ("#   " + path) in p.stdout.splitlines(),
             "lowlatctl cat-config of the shipped %s: its %d keys, each with FILE:LINE"
             % (os.path.relpath(src, SOURCE), len(want)), "\n".join(missing) + "\n" + p.stdout[-2000:] + p.stderr)


def run(t):
    host = h.FakeHost(ncpus=4, nirqs=30, isolated="2-3")
    check_shipped(t, host)
    check_override(t, host)
    check_cat_config_shipped(t, host)


if __name__ == "__main__":
    h.main(run)
