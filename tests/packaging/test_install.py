#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""meson install into a scratch DESTDIR: every file lands in its standard place, the
installed data is what the source tree holds, the installed unit runs the installed
daemon, and the installed example configuration passes --check-config.

Environment (tests/packaging/meson.build): LOWLATD_MESON (the meson that configured
the build), LOWLATD_BUILD_ROOT, LOWLATD_PREFIX, LOWLATD_INSTALL_{SBINDIR,BINDIR,MANDIR,
DATADIR,DBUSPOLICYDIR,UNITDIR,BASHCOMPLETIONDIR} (absolute), LOWLATD_VERSION. Without them the build's own options are read
with meson introspect.
"""

import filecmp
import gzip
import json
import os
import re
import shlex
import shutil
import stat

import packaging_util as u


def meson_command():
    m = os.environ.get("LOWLATD_MESON")
    if m and os.access(m, os.X_OK):
        return [m]
    m = shutil.which("meson")
    if m:
        return [m]
    raise u.Skip("meson is not installed")


def build_options(meson):
    """Install directories and version, from the environment or meson introspect."""
    keys = ("PREFIX", "INSTALL_SBINDIR", "INSTALL_BINDIR", "INSTALL_MANDIR", "INSTALL_DATADIR",
            "INSTALL_DBUSPOLICYDIR", "INSTALL_UNITDIR", "INSTALL_BASHCOMPLETIONDIR", "VERSION")
    got = {k: os.environ.get("LOWLATD_" + k) for k in keys}
    if all(got.values()):
        return got
    p = u.run(meson + ["introspect", u.BUILD_ROOT, "--buildoptions", "--projectinfo"])
    if p.returncode != 0:
        raise u.Skip("cannot read the build's options: " + p.stderr.strip())
    info = json.loads(p.stdout)
    opts = {o["name"]: o["value"] for o in info["buildoptions"]}
    prefix = opts["prefix"]
    return {
        "PREFIX": prefix,
        "INSTALL_SBINDIR": os.path.join(prefix, opts["sbindir"]),
        "INSTALL_BINDIR": os.path.join(prefix, opts["bindir"]),
        "INSTALL_MANDIR": os.path.join(prefix, opts["mandir"]),
        "INSTALL_DATADIR": os.path.join(prefix, opts["datadir"]),
        "INSTALL_DBUSPOLICYDIR": opts.get("dbuspolicydir") or "/usr/share/dbus-1/system.d",
        "INSTALL_UNITDIR": opts.get("systemdsystemunitdir") or os.path.join(prefix, "lib/systemd/system"),
        "INSTALL_BASHCOMPLETIONDIR": opts.get("bashcompletiondir") or
        os.path.join(prefix, opts["datadir"], "bash-completion", "completions"),
        "VERSION": info["projectinfo"]["version"],
    }


def under(destdir, path):
    return os.path.join(destdir, path.lstrip("/"))


def find_man(destdir, mandir, page):
    section = page.rsplit(".", 1)[1]
    base = under(destdir, os.path.join(mandir, "man" + section, page))
    for candidate in (base, base + ".gz"):
        if os.path.isfile(candidate):
            return candidate
    return None


def read_maybe_gz(path):
    if path.endswith(".gz"):
        with gzip.open(path, "rt", encoding="utf-8") as f:
            return f.read()
    return u.read(path)


def test(t):
    meson = meson_command()
    if not os.path.isfile(os.path.join(u.BUILD_ROOT, "meson-private", "install.dat")):
        raise u.Skip("%s is not a configured meson build directory" % u.BUILD_ROOT)
    o = build_options(meson)
    destdir = os.path.join(u.tempdir("lowlat-install-"), "dest")

    # --no-rebuild: meson test has already built what the test depends on, and a nested
    # ninja run inside the test would race the outer one.
    p = u.run(meson + ["install", "-C", u.BUILD_ROOT, "--no-rebuild", "--destdir", destdir],
              timeout=300)
    if not t.ok(p.returncode == 0, "meson install --destdir succeeds", u.describe(p)):
        return

    sbin_lowlatd, expected = expected_files(o)
    check_placed(t, destdir, o, expected)
    check_runs(t, destdir, o, expected, sbin_lowlatd)
    check_consumers(t, destdir, expected)

    other = sorted(set(installed_files(destdir)) -
                   {os.path.normpath(p) for p, _ in expected.values()} -
                   {f for f in installed_files(destdir) if "/man/man" in f})
    if other:
        t.note("also installed:\n" + "\n".join(other))


def expected_files(o):
    """(the installed daemon's path, {what: (installed path, source it must equal or None)})."""
    prefix = o["PREFIX"]
    sbin_lowlatd = os.path.join(o["INSTALL_SBINDIR"], "lowlatd")
    expected = {
        "lowlatd": (sbin_lowlatd, None),
        "lowlatctl": (os.path.join(o["INSTALL_BINDIR"], "lowlatctl"), None),
        "unit": (os.path.join(o["INSTALL_UNITDIR"], "lowlatd.service"), None),
        "metrics unit": (os.path.join(o["INSTALL_UNITDIR"], "lowlatd-metrics.service"), None),
        "metrics timer": (os.path.join(o["INSTALL_UNITDIR"], "lowlatd-metrics.timer"),
                          u.src("units", "lowlatd-metrics.timer")),
        "Prometheus alert rules": (os.path.join(o["INSTALL_DATADIR"], "lowlatd", "prometheus", "lowlatd-alerts.yml"),
                                   u.src("conf", "prometheus", "lowlatd-alerts.yml")),
        "Grafana dashboard": (os.path.join(o["INSTALL_DATADIR"], "lowlatd", "grafana", "lowlatd.json"),
                              u.src("conf", "grafana", "lowlatd.json")),
        "D-Bus policy": (os.path.join(o["INSTALL_DBUSPOLICYDIR"], "org.lowlatd1.conf"),
                         u.src("conf", "org.lowlatd1.conf")),
        "journal catalog": (os.path.join(prefix, "lib/systemd/catalog/lowlatd.catalog"),
                            u.src("conf", "lowlatd.catalog")),
        "example config": ("/etc/lowlatd/lowlatd.conf", u.src("conf", "lowlatd.conf")),
    }
    # -Dbashcompletiondir=no leaves the completion out.
    if o["INSTALL_BASHCOMPLETIONDIR"] != "no":
        for program in ("lowlatd", "lowlatctl"):
            expected["bash completion for " + program] = (
                os.path.join(o["INSTALL_BASHCOMPLETIONDIR"], program), u.src("shell-completion", "bash", program))
    return sbin_lowlatd, expected


def check_placed(t, destdir, o, expected):
    for what, (path, source) in expected.items():
        full = under(destdir, path)
        if not t.ok(os.path.isfile(full), "%s installed as %s" % (what, path),
                    "not there; installed files:\n" + "\n".join(installed_files(destdir))):
            continue
        mode = stat.S_IMODE(os.stat(full).st_mode)
        if source is None and what not in ("unit", "metrics unit"):
            t.ok(mode & 0o111 == 0o111 and not mode & 0o022,
                 "%s is executable and not group/world-writable (%04o)" % (what, mode))
        else:
            t.ok(mode & 0o444 == 0o444 and not mode & 0o133,
                 "%s is readable by all, not executable or writable by others (%04o)" % (what, mode))
        if source:
            t.ok(filecmp.cmp(full, source, shallow=False),
                 "installed %s is identical to %s" % (what, os.path.relpath(source, u.SOURCE_ROOT)))

    for name, (page, _) in u.MAN_PAGES.items():
        section = page.rsplit(".", 1)[1]
        found = find_man(destdir, o["INSTALL_MANDIR"], page)
        where = os.path.join(o["INSTALL_MANDIR"], "man" + section, page)
        if t.ok(found, "man page %s(%s) installed as %s[.gz]" % (name, section, where)):
            t.ok(read_maybe_gz(found) == u.read(u.src("man", page)),
                 "installed %s is man/%s" % (os.path.basename(found), page))


def check_runs(t, destdir, o, expected, sbin_lowlatd):
    # The installed unit must start the installed daemon.
    unit = under(destdir, expected["unit"][0])
    if os.path.isfile(unit):
        starts = re.findall(r"(?m)^ExecStart=(.*)$", u.read(unit))
        argv = shlex.split(starts[-1].lstrip("-@:+!|")) if starts else []
        t.ok(len(starts) == 1 and argv and argv[0] == sbin_lowlatd,
             "installed unit's ExecStart= is the installed %s" % sbin_lowlatd, "ExecStart=%s" % starts)
        t.ok(argv and os.access(under(destdir, argv[0]), os.X_OK),
             "ExecStart= binary exists in the installed tree")

    # The metrics unit runs the installed lowlatctl.
    unit = under(destdir, expected["metrics unit"][0])
    if os.path.isfile(unit):
        starts = re.findall(r"(?m)^ExecStart=(.*)$", u.read(unit))
        argv = shlex.split(starts[-1]) if starts else []
        t.ok(len(starts) == 1 and argv[:2] == [expected["lowlatctl"][0], "metrics"],
             "installed metrics unit's ExecStart= is the installed lowlatctl metrics", "ExecStart=%s" % starts)

    binary = under(destdir, sbin_lowlatd)
    config = under(destdir, "/etc/lowlatd/lowlatd.conf")
    if os.access(binary, os.X_OK):
        p = u.run([binary, "--version"])
        t.ok(p.returncode == 0 and o["VERSION"] in p.stdout,
             "installed lowlatd --version prints %s" % o["VERSION"], u.describe(p))
        if os.path.isfile(config):
            root = u.make_fake_root()
            p = u.check_config(binary, config, root)
            t.ok(p.returncode == 0, "installed example config passes installed lowlatd --check-config",
                 u.describe(p))
    ctl = under(destdir, expected["lowlatctl"][0])
    if os.access(ctl, os.X_OK):
        # It asks lowlatd's version too: of no bus, never the host's.
        p = u.run([ctl, "--version"], env={"DBUS_SYSTEM_BUS_ADDRESS": "unix:path=" + os.path.join(destdir, "no-bus")})
        t.ok(p.returncode == 0 and o["VERSION"] in p.stdout,
             "installed lowlatctl --version prints %s" % o["VERSION"], u.describe(p))


def check_consumers(t, destdir, expected):
    # Installed where the consumers look.
    analyze = shutil.which("systemd-analyze")
    what = "unit directory %s is on systemd's unit path" % os.path.dirname(expected["unit"][0])
    if analyze:
        p = u.run([analyze, "unit-paths"], env={"SYSTEMD_COLORS": "0"})
        if p.returncode == 0:
            paths = {os.path.normpath(line.strip()) for line in p.stdout.splitlines() if line.strip()}
            t.ok(os.path.normpath(os.path.dirname(expected["unit"][0])) in paths, what, p.stdout)
        else:
            t.skip(what, "systemd-analyze unit-paths fails here: " + p.stderr.strip())
    else:
        t.skip(what, "systemd-analyze is not installed")

    journalctl = shutil.which("journalctl")
    what = "journalctl finds the installed catalog (--root=DESTDIR --update-catalog)"
    catalog_ids = set(re.findall(r"(?m)^-- ([0-9a-f]{32})\s*$", u.read(u.src("conf", "lowlatd.catalog"))))
    if journalctl:
        p = u.run([journalctl, "--root=" + destdir, "--update-catalog"])
        q = u.run([journalctl, "--root=" + destdir, "--list-catalog"])
        listed = set(re.findall(r"(?m)^([0-9a-f]{32}) ", q.stdout))
        t.ok(p.returncode == 0 and listed == catalog_ids, what,
             "%d of %d ids listed\n%s\n%s" % (len(listed & catalog_ids), len(catalog_ids),
                                            u.describe(p), u.describe(q)))
        shutil.rmtree(os.path.join(destdir, "var"), ignore_errors=True)
    else:
        t.skip(what, "journalctl is not installed")

    # dbus-daemon reads system.d relative to its own config, not to our prefix: the policy
    # must land where the system bus looks, whatever the prefix, or lowlatd cannot own
    # org.lowlatd1.
    policy_dir = os.path.dirname(expected["D-Bus policy"][0])
    read_dirs = dbus_system_includedirs()
    if read_dirs is not None:
        t.ok(os.path.normpath(policy_dir) in read_dirs,
             "the D-Bus policy goes where the system bus reads policies (%s)" % policy_dir,
             "the bus reads %s" % ", ".join(sorted(read_dirs)))
    else:
        t.skip("the D-Bus policy goes where the system bus reads policies", "no dbus system.conf here")


def installed_files(destdir):
    out = []
    for d, _, files in os.walk(destdir):
        for f in files:
            out.append("/" + os.path.relpath(os.path.join(d, f), destdir))
    return sorted(out)


def dbus_system_includedirs():
    """The <includedir>s of the system bus's config; None when there is no such config
    here. A config with none raises: "nothing found" would read as "no dbus here"."""
    conf = "/usr/share/dbus-1/system.conf"
    if not os.path.isfile(conf):
        return None
    dirs = set()
    for d in re.findall(r"<includedir>\s*([^<]+?)\s*</includedir>", u.read(conf)):
        dirs.add(os.path.normpath(d if os.path.isabs(d) else os.path.join(os.path.dirname(conf), d)))
    if not dirs:
        raise ValueError("%s has no <includedir>" % conf)
    return dirs


if __name__ == "__main__":
    u.main(test)
