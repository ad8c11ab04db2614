#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The Debian package: dpkg-buildpackage -us -uc -b builds it from a copy of the tree
(build-deb.sh; the tree itself is left as it was), lintian finds no error or warning and
every override says why, the .deb holds the files it must and no others, the config is
a conffile, the maintainer scripts do what README.md says, debian/copyright matches the
sources' licence, and the packaged lowlatd with the packaged configuration changes
nothing on a host with no isolated CPUs.

Environment (tests/packaging/meson.build): LOWLATD_SOURCE_ROOT, LOWLATD_BUILD_ROOT (the
package is kept in BUILD/deb/, where the VM suite finds it), LOWLATD_VERSION; PYTHONPATH
with tests/integration for its fake host tree. Needs dpkg-dev, debhelper, lintian and
build-essential (tools/packages.sh); without them it skips, saying which is missing.
"""

import glob
import os
import re
import shutil
import subprocess

import lowlat_harness as h
import packaging_util as u

BUILD_DEB = os.path.join(u.HERE, "build-deb.sh")
PACKAGE = "lowlatd"

# Every path the .deb must hold: (mode, what). Besides these only the docs and lintian's
# overrides (ALSO_ALLOWED) may be there.
EXPECTED = {
    "/usr/sbin/lowlatd": (0o755, "the daemon"),
    "/usr/bin/lowlatctl": (0o755, "the client"),
    "/lib/systemd/system/lowlatd.service": (0o644, "the unit"),
    "/lib/systemd/system/lowlatd-metrics.service": (0o644, "the metrics unit"),
    "/lib/systemd/system/lowlatd-metrics.timer": (0o644, "the metrics timer"),
    "/usr/share/lowlatd/prometheus/lowlatd-alerts.yml": (0o644, "the Prometheus alert rules"),
    "/usr/share/lowlatd/grafana/lowlatd.json": (0o644, "the Grafana dashboard"),
    "/usr/share/lowlatd/profiles/cpu-partitioning.conf": (0o644, "the cpu-partitioning profile"),
    "/usr/share/lowlatd/profiles/network-latency.conf": (0o644, "the network-latency profile"),
    "/usr/share/lowlatd/profiles/powersave-isolated.conf": (0o644, "the powersave-isolated profile"),
    "/usr/share/lowlatd/profiles/realtime.conf": (0o644, "the realtime profile"),
    "/usr/share/dbus-1/system.d/org.lowlatd1.conf": (0o644, "the D-Bus policy"),
    "/usr/lib/systemd/catalog/lowlatd.catalog": (0o644, "the journal catalog"),
    "/usr/share/man/man8/lowlatd.8.gz": (0o644, "lowlatd(8)"),
    "/usr/share/man/man5/lowlatd.conf.5.gz": (0o644, "lowlatd.conf(5)"),
    "/usr/share/man/man1/lowlatctl.1.gz": (0o644, "lowlatctl(1)"),
    "/usr/share/bash-completion/completions/lowlatd": (0o644, "the bash completion for lowlatd"),
    "/usr/share/bash-completion/completions/lowlatctl": (0o644, "the bash completion for lowlatctl"),
    "/etc/lowlatd/lowlatd.conf": (0o644, "the configuration"),
    "/usr/share/doc/lowlatd/copyright": (0o644, "the copyright file"),
    "/usr/share/doc/lowlatd/changelog.gz": (0o644, "the changelog"),
}
# The libraries the daemon links (not libinih: the config reader is lowlatd's own, see
# docs/hacking.md), as Debian 12 names their packages.
ALSO_ALLOWED = re.compile(r"^/usr/share/(doc/lowlatd/.*|lintian/overrides/lowlatd)$")
LIBRARY_PACKAGES = ("libsystemd0", "libudev1", "libnl-3-200", "libnl-route-3-200",
                    "libnl-genl-3-200")


def need_tools():
    missing = [t for t in ("dpkg-buildpackage", "dpkg-deb", "dpkg-parsechangelog", "dh", "lintian")
               if not shutil.which(t)]
    if missing:
        raise u.Skip("%s not installed (Debian: dpkg-dev debhelper lintian build-essential, in "
                     "tools/packages.sh)" % ", ".join(missing))


def source_state():
    """git's view of the source tree (changes, untracked and ignored files) but the build
    directories (build/, build-*/: meson's, this test's output among them), or None
    without git."""
    if not shutil.which("git"):
        return None
    p = u.run(["git", "-C", u.SOURCE_ROOT, "status", "--porcelain", "--untracked-files=all", "--ignored"])
    if p.returncode != 0:
        return None
    return "\n".join(l for l in p.stdout.splitlines() if not re.match(r"^!! build(-[^/]*)?/", l))


def deb_listing(deb):
    """{path: (mode, type char)} from dpkg-deb --contents."""
    p = u.run(["dpkg-deb", "--contents", deb])
    if p.returncode != 0:
        raise RuntimeError(u.describe(p))
    out = {}
    for line in p.stdout.splitlines():
        m = re.match(r"^([-dlhcbps])([rwxsStT-]{9})\s+\S+\s+\d+\s+\S+\s+\S+\s+\.(/\S*?)(?: -> .*)?$", line)
        if not m:
            raise ValueError("cannot parse dpkg-deb --contents line: %r" % line)
        path = m.group(3).rstrip("/") or "/"
        out[path] = (perm_bits(m.group(2)), m.group(1))
    return out


def perm_bits(text):
    mode = 0
    for i, c in enumerate(text):
        if c not in "-ST":
            mode |= 1 << (8 - i)
    return mode


def test(t):
    need_tools()
    version = u.run(["dpkg-parsechangelog", "-l", u.src("debian", "changelog"), "-S", "Version"]).stdout.strip()
    upstream = re.sub(r"-[^-]*$", "", version)
    meson_version = os.environ.get("LOWLATD_VERSION", "")
    t.ok(upstream == meson_version,
         "debian/changelog's version %s is meson's project version %s" % (version, meson_version))

    before = source_state()
    out = os.path.join(u.BUILD_ROOT, "deb")
    p = u.run([BUILD_DEB, u.SOURCE_ROOT, out], timeout=1500)
    if p.returncode == 77:
        raise u.Skip(p.stderr.strip())
    if not t.ok(p.returncode == 0, "dpkg-buildpackage -us -uc -b builds the package (build-deb.sh)", u.describe(p)):
        return
    built = p.stdout.strip().splitlines()[-1]
    log = u.read(os.path.join(built, "build.log"))
    took = re.findall(r"# dpkg-buildpackage took (\d+) s", log)
    t.note("package built in %s (dpkg-buildpackage: %s s)" % (built, took[-1] if took else "?"))
    t.ok(re.search(r"meson test --suite unit", log) and re.search(r"^Fail:\s+0\s*$", log, re.M),
         "the build ran the unit suite (dh_auto_test) and it passed",
         "\n".join(l for l in log.splitlines() if "meson test" in l or l.startswith(("Ok:", "Fail:"))))
    if before is not None:
        after = source_state()
        t.ok(after == before, "the source tree is left as it was (git status, ignored files included)",
             "before:\n%s\nafter:\n%s" % (before, after))

    arch = u.run(["dpkg", "--print-architecture"]).stdout.strip()
    deb = os.path.join(built, "%s_%s_%s.deb" % (PACKAGE, version, arch))
    changes = os.path.join(built, "%s_%s_%s.changes" % (PACKAGE, version, arch))
    if not t.ok(os.path.isfile(deb) and os.path.isfile(changes), "%s and its .changes are there" %
                os.path.basename(deb), "\n".join(os.listdir(built))):
        return

    check_lintian(t, changes)
    check_overrides(t)
    contents = check_contents(t, deb)
    check_control(t, deb)
    root = os.path.join(u.tempdir("lowlat-deb-"), "root")
    p = u.run(["dpkg-deb", "--extract", deb, root])
    if not t.ok(p.returncode == 0, "dpkg-deb --extract", u.describe(p)):
        return
    check_payload(t, root, contents, version)
    check_maintainer_scripts(t, deb)
    check_copyright(t)
    check_no_isolated_changes_nothing(t, root)


def check_lintian(t, changes):
    # --fail-on error,warning: the exit status says whether anything of that weight is left;
    # the tags are checked from the output as well, so a lintian that ignores the option
    # cannot pass by it.
    p = u.run(["lintian", "--fail-on", "error,warning", "--display-info", "--show-overrides", changes],
              timeout=600)
    tags = [l for l in p.stdout.splitlines() if re.match(r"^[EWIPXO]: ", l)]
    bad = [l for l in tags if l.startswith(("E: ", "W: "))]
    t.ok(p.returncode == 0 and not bad, "lintian finds no error and no warning (%d other tags)" % (len(tags) - len(bad)),
         u.describe(p))
    for line in tags:
        if line not in bad:
            t.note("lintian: " + line)


def check_overrides(t):
    """Each override line is preceded by a comment that says why."""
    files = glob.glob(u.src("debian", "*lintian-overrides")) + glob.glob(u.src("debian", "source", "lintian-overrides"))
    for f in files:
        lines = u.read(f).splitlines()
        bare = []
        for i, line in enumerate(lines):
            if line.strip() and not line.lstrip().startswith("#"):
                if i == 0 or not lines[i - 1].lstrip().startswith("#"):
                    bare.append(line)
        t.ok(not bare, "every override in %s carries a reason (a comment above it)" % os.path.relpath(f, u.SOURCE_ROOT),
             "\n".join(bare))
    if not files:
        t.note("no lintian overrides")


def check_contents(t, deb):
    contents = deb_listing(deb)
    for path, (mode, what) in EXPECTED.items():
        got = contents.get(path)
        t.ok(got and got[1] == "-" and got[0] == mode,
             "%s: %s, a file with mode %04o" % (what, path, mode),
             "in the .deb: %r" % (got,))
    files = {p for p, (_, kind) in contents.items() if kind != "d"}
    other = sorted(f for f in files - set(EXPECTED) if not ALSO_ALLOWED.match(f))
    t.ok(not other, "no other file but docs and lintian overrides", "\n".join(other))
    return contents


def check_control(t, deb):
    p = u.run(["dpkg-deb", "--field", deb])
    fields = dict(re.findall(r"(?m)^([A-Za-z-]+): (.*)$", p.stdout))
    depends = fields.get("Depends", "")
    missing = [pkg for pkg in LIBRARY_PACKAGES if not re.search(r"(^|, )%s( |,|$)" % re.escape(pkg), depends)]
    t.ok(not missing, "Depends names the libraries the daemon links: %s" % depends, "missing: %s" % missing)
    t.ok(not fields.get("Recommends"), "no Recommends: apt-get install ./lowlatd_*.deb needs no other archive",
         fields.get("Recommends"))
    ctl = u.tempdir("lowlat-deb-control-")
    p = u.run(["dpkg-deb", "--control", deb, ctl])
    conffiles = u.read(os.path.join(ctl, "conffiles")).split() if os.path.isfile(os.path.join(ctl, "conffiles")) else []
    t.ok(conffiles == ["/etc/lowlatd/lowlatd.conf"], "conffiles: /etc/lowlatd/lowlatd.conf and nothing else",
         "conffiles: %s" % conffiles)


def check_payload(t, root, contents, version):
    """The installed data is the source tree's, the unit starts the packaged daemon, and both
    programs say the package's version (debian/rules passes it to meson: the tree was
    copied without .git, and a checkout's git describe is not what dpkg installed)."""
    for path, source in (("/etc/lowlatd/lowlatd.conf", u.src("conf", "lowlatd.conf")),
                         ("/usr/lib/systemd/catalog/lowlatd.catalog", u.src("conf", "lowlatd.catalog")),
                         ("/usr/share/dbus-1/system.d/org.lowlatd1.conf", u.src("conf", "org.lowlatd1.conf")),
                         ("/usr/share/lowlatd/prometheus/lowlatd-alerts.yml",
                          u.src("conf", "prometheus", "lowlatd-alerts.yml")),
                         ("/usr/share/lowlatd/grafana/lowlatd.json", u.src("conf", "grafana", "lowlatd.json")),
                         ("/lib/systemd/system/lowlatd-metrics.timer", u.src("units", "lowlatd-metrics.timer")),
                         ("/usr/share/bash-completion/completions/lowlatctl",
                          u.src("shell-completion", "bash", "lowlatctl")),
                         ("/usr/share/bash-completion/completions/lowlatd",
                          u.src("shell-completion", "bash", "lowlatd"))):
        full = os.path.join(root, path.lstrip("/"))
        t.ok(os.path.isfile(full) and u.read(full) == u.read(source),
             "%s is %s" % (path, os.path.relpath(source, u.SOURCE_ROOT)))
    unit = os.path.join(root, "lib/systemd/system/lowlatd.service")
    if os.path.isfile(unit):
        starts = re.findall(r"(?m)^ExecStart=(\S+)", u.read(unit))
        t.ok(starts == ["/usr/sbin/lowlatd"], "the unit's ExecStart= is /usr/sbin/lowlatd", "%s" % starts)
    unit = os.path.join(root, "lib/systemd/system/lowlatd-metrics.service")
    if os.path.isfile(unit):
        starts = re.findall(r"(?m)^ExecStart=(\S+)", u.read(unit))
        t.ok(starts == ["/usr/bin/lowlatctl"], "the metrics unit's ExecStart= is /usr/bin/lowlatctl", "%s" % starts)
    # lowlatctl --version asks lowlatd's too: a bus that is not there, never the host's.
    env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS="unix:path=" + os.path.join(root, "no-bus"))
    for name, path in (("lowlatd", "usr/sbin/lowlatd"), ("lowlatctl", "usr/bin/lowlatctl")):
        p = u.run([os.path.join(root, path), "--version"], env=env)
        first = p.stdout.splitlines()[0] if p.stdout else ""
        t.ok(p.returncode == 0 and first == "%s %s" % (name, version),
             "the packaged %s --version says the package's version: %s" % (name, first), u.describe(p))


def script(ctl, name):
    path = os.path.join(ctl, name)
    return u.read(path) if os.path.isfile(path) else ""


def check_maintainer_scripts(t, deb):
    ctl = u.tempdir("lowlat-deb-control-")
    u.run(["dpkg-deb", "--control", deb, ctl])
    for name in ("postinst", "prerm", "postrm"):
        p = u.run(["sh", "-n", os.path.join(ctl, name)])
        t.ok(p.returncode == 0, "%s is there and passes sh -n" % name, u.describe(p))
    postinst, prerm, postrm = (script(ctl, n) for n in ("postinst", "prerm", "postrm"))
    t.ok(re.search(r"deb-systemd-helper enable 'lowlatd\.service'", postinst) and
         re.search(r"_dh_action=start", postinst) and re.search(r"_dh_action=restart", postinst),
         "postinst enables lowlatd.service and starts it on install, restarts it on upgrade", postinst)
    # The metrics timer is the administrator's choice (README, "Monitoring"): never enabled
    # nor started by the package, but its enablement state goes on purge.
    # debhelper's --no-enable keeps an enablement the administrator made: "enable" may only
    # follow its "was-enabled" test.
    enables = [m.start() for m in re.finditer(r"deb-systemd-helper enable 'lowlatd-metrics", postinst)]
    t.ok(all("was-enabled 'lowlatd-metrics.timer'" in postinst[max(0, i - 200):i] for i in enables) and
         not re.search(r"deb-systemd-invoke \S+ '?lowlatd-metrics", postinst) and
         "update-state 'lowlatd-metrics.timer'" in postinst,
         "postinst neither enables nor starts lowlatd-metrics.timer (it only records its state)", postinst)
    t.ok(re.search(r"deb-systemd-invoke stop lowlatd-metrics\.timer", prerm),
         "prerm stops the metrics timer on remove (an administrator may have started it)", prerm)
    t.ok(postrm.count("/var/lib/prometheus/node-exporter/lowlatd.prom") >= 2,
         "postrm removes the metrics file on remove and purge", postrm)
    restore = prerm.find("lowlatctl restore")
    stop = prerm.find("deb-systemd-invoke stop 'lowlatd.service'")
    t.ok(0 <= restore < stop and re.search(r'\[ "\$1" = remove \]', prerm[:restore]),
         "prerm: on remove, lowlatctl restore runs before the service is stopped", prerm)
    purge = re.search(r"(?ms)^purge\)(.*?);;", postrm)
    t.ok(purge and "/etc/lowlatd" in purge.group(1) and "/run/lowlatd" in purge.group(1) and
         "deb-systemd-helper purge 'lowlatd.service'" in postrm and
         "deb-systemd-helper purge 'lowlatd-metrics.timer'" in postrm,
         "postrm purge removes /etc/lowlatd, /run/lowlatd and the units' enablement state", postrm)


def check_copyright(t):
    """debian/copyright (DEP-5) says what the sources' SPDX headers say."""
    text = u.read(u.src("debian", "copyright"))
    t.ok(text.startswith("Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n"),
         "debian/copyright is in the machine-readable format")
    files = re.findall(r"(?ms)^Files: (.*?)\n.*?^License: (\S+)", text)
    t.ok(files == [("*", "LGPL-2.1+")], "one Files: * paragraph, License: LGPL-2.1+", "%s" % files)
    t.ok("/usr/share/common-licenses/LGPL-2.1" in text, "the licence paragraph points at common-licenses/LGPL-2.1")
    ids = {}
    for d, dirs, names in os.walk(u.SOURCE_ROOT):
        dirs[:] = [x for x in dirs if not x.startswith((".git", "build"))]
        for n in names:
            path = os.path.join(d, n)
            try:
                with open(path, encoding="utf-8", errors="replace") as f:
                    head = f.read(400)
            except OSError:
                continue
            for spdx in re.findall(r"SPDX-License-Identifier:\s*([A-Za-z0-9.+-]+)", head):
                ids.setdefault(spdx, []).append(os.path.relpath(path, u.SOURCE_ROOT))
    t.ok(set(ids) == {"LGPL-2.1-or-later"}, "every SPDX header in the tree says LGPL-2.1-or-later (%d files)" %
         sum(len(v) for v in ids.values()),
         "\n".join("%s: %s" % (k, ", ".join(v[:5])) for k, v in ids.items() if k != "LGPL-2.1-or-later"))
    common = "/usr/share/common-licenses/LGPL-2.1"
    if os.path.isfile(common):
        t.ok(u.read(u.src("LICENSE")).split() == u.read(common).split(),
             "LICENSE is the text of %s" % common)
    else:
        t.skip("LICENSE is the text of %s" % common, "base-files' %s is not here" % common)


def run_packaged(root, host, config):
    """The packaged lowlatd, --once (enforce), on the fake tree; originals under the tree."""
    env = dict(os.environ)
    env["RUNTIME_DIRECTORY"] = os.path.join(host.tmp, "run-lowlatd")
    env["DBUS_SYSTEM_BUS_ADDRESS"] = "unix:path=" + os.path.join(host.tmp, "no-system-bus")
    argv = [os.path.join(root, "usr/sbin/lowlatd"), "--root", host.root, "--config", config, "--once"]
    # A network namespace of its own when root may make one: the shipped [nic "eth*"]
    # section sets nothing, and this makes sure no NIC of this machine is even looked at.
    if os.geteuid() == 0 and shutil.which("unshare") and u.run(["unshare", "-n", "true"]).returncode == 0:
        argv = ["unshare", "-n"] + argv
    return subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, timeout=120, env=env)


def originals_entries(host):
    path = h.originals_path(host)
    if not os.path.isfile(path):
        return []
    return [l for l in u.read(path).splitlines() if "\t" in l]


def check_no_isolated_changes_nothing(t, root):
    config = os.path.join(root, "etc/lowlatd/lowlatd.conf")
    # Every IRQ on every CPU, the default affinity all CPUs, powersave: a stock host.
    host = h.FakeHost(ncpus=4, nirqs=24, isolated="", irq_affinity="0-3")
    snap = host.snapshot()
    p = run_packaged(root, host, config)
    diff = host.snapshot_diff(snap, host.snapshot())
    t.ok(p.returncode == 0 and not diff,
         "no isolated CPUs: the packaged lowlatd with the packaged config (--once, enforce) changes nothing",
         "%s\nchanged:\n%s" % (u.describe(p), "\n".join(diff)))
    # What was found already as desired is on file as found: a restore has nothing to put back.
    entries = originals_entries(host)
    found = {"irq_default_affinity": lambda obj: host.read("proc/irq/default_smp_affinity").strip(),
             "irq_affinity": lambda obj: host.irq_affinity(int(obj))}
    wrong = [e for e in entries if e.split("\t")[0] not in found or
             found[e.split("\t")[0]](e.split("\t")[1]) != e.split("\t")[2]]
    t.ok(entries and not wrong, "and its originals are the values found (%d entries; a restore changes nothing)" %
         len(entries), "\n".join(wrong or entries))
    # The same on a host that did isolate CPUs 2-3: the IRQs and the default affinity move,
    # which shows that the check above would have seen a change.
    host = h.FakeHost(ncpus=4, nirqs=24, isolated="2-3", irq_affinity="0-3")
    p = run_packaged(root, host, config)
    moved = [irq for irq in host.irqs if host.irq_cpus(irq) == {0, 1}]
    t.ok(p.returncode == 0 and len(moved) == len(host.irqs) and
         host.read("proc/irq/default_smp_affinity").strip() == "3",
         "CPUs 2-3 isolated: the same run moves all %d IRQs to 0-1 and the default affinity to 3 (%d moved)" %
         (len(host.irqs), len(moved)), u.describe(p))


if __name__ == "__main__":
    u.main(test)
