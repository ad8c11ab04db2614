#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The version the programs report comes from the sources (tools/version.sh through
meson's vcs_tag): in a git checkout, git describe's shape with the commit
("0.1.0-392-ga95bff9"); in a copy without .git, the project version; with meson's
package_version (what debian/rules passes), that version whatever git says. The built
lowlatd and lowlatctl say what version.h says.

Environment (tests/packaging/meson.build): LOWLATD, LOWLATCTL, LOWLATD_SOURCE_ROOT,
LOWLATD_VERSION (meson's project version), LOWLATD_VERSION_H (the build's version.h),
LOWLATD_MESON (skips the meson checks without it).
"""

import os
import re
import shutil

import packaging_util as u

VERSION_SH = u.src("tools", "version.sh")
PROJECT_VERSION = os.environ.get("LOWLATD_VERSION", "")


def header_version(path):
    m = re.search(r'(?m)^#define LOWLATD_VERSION "([^"]*)"$', u.read(path))
    return m.group(1) if m else None


def in_git_checkout():
    p = u.run(["git", "-C", u.SOURCE_ROOT, "rev-parse", "--show-toplevel"]) if shutil.which("git") else None
    return p is not None and p.returncode == 0 and \
        os.path.realpath(p.stdout.strip()) == os.path.realpath(u.SOURCE_ROOT)


def copy_without_git():
    """The tree's files (as git lists them, or all but build*/ and .git) in a fresh
    directory with no .git anywhere above it: what build-deb.sh builds the package from."""
    dest = os.path.join(u.tempdir("lowlat-version-"), "lowlatd")
    def ignore(folder, names):
        top = os.path.realpath(folder) == os.path.realpath(u.SOURCE_ROOT)
        return [n for n in names if n in (".git", "__pycache__") or (top and n.startswith("build"))]
    shutil.copytree(u.SOURCE_ROOT, dest, ignore=ignore, symlinks=True)
    return dest


def check_built(t):
    """The binaries say what this build's version.h says, and it is the source's."""
    header = os.environ.get("LOWLATD_VERSION_H") or os.path.join(u.BUILD_ROOT, "common", "version.h")
    version = header_version(header)
    if not t.ok(version, "%s defines LOWLATD_VERSION" % header):
        return
    for name, binary in (("lowlatd", u.LOWLATD), ("lowlatctl", u.LOWLATCTL)):
        env = {"DBUS_SYSTEM_BUS_ADDRESS": "unix:path=" + os.path.join(u.tempdir(), "no-bus")}
        p = u.run([binary, "--version"], env=env)
        first = p.stdout.splitlines()[0] if p.stdout else ""
        t.ok(p.returncode == 0 and first == "%s %s" % (name, version),
             "%s --version says this build's version %s" % (name, version), u.describe(p))
    if not in_git_checkout():
        t.skip("the version names the commit", "%s is not a git checkout" % u.SOURCE_ROOT)
        return
    commit = u.run(["git", "-C", u.SOURCE_ROOT, "rev-parse", "HEAD"]).stdout.strip()
    m = re.fullmatch(r"(.+)-(\d+)-g([0-9a-f]{7,})(-dirty)?", version)
    t.ok(m, "the version is git describe's shape, VERSION-COUNT-gCOMMIT: %s" % version)
    t.ok(m and commit.startswith(m.group(3)), "the version names HEAD, %s: %s" % (commit[:12], version))


def check_script(t):
    """version.sh alone, on this tree and on a copy without .git."""
    p = u.run([VERSION_SH, u.SOURCE_ROOT, "7.7-1~test", PROJECT_VERSION])
    t.ok(p.returncode == 0 and p.stdout == "7.7-1~test\n", "a package version wins over git", u.describe(p))
    copy = copy_without_git()
    p = u.run([VERSION_SH, copy, "", PROJECT_VERSION])
    t.ok(p.returncode == 0 and p.stdout == PROJECT_VERSION + "\n",
         "without .git: the project version %s" % PROJECT_VERSION, u.describe(p))
    return copy


def check_meson(t, copy):
    """meson setup of the copy: the generated version.h with and without package_version."""
    meson = os.environ.get("LOWLATD_MESON") or shutil.which("meson")
    if not meson:
        t.skip("meson writes the version into version.h", "meson is not installed")
        return
    for option, want in (([], PROJECT_VERSION), (["-Dpackage_version=7.7-1~test"], "7.7-1~test")):
        build = os.path.join(copy, "build-version-%d" % len(option))
        p = u.run([meson, "setup", build] + option, cwd=copy, timeout=300)
        what = "meson setup%s in a copy without .git" % "".join(" " + o for o in option)
        if not t.ok(p.returncode == 0, what, u.describe(p)):
            continue
        p = u.run(["ninja", "-C", build, "common/version.h"], timeout=120)
        got = header_version(os.path.join(build, "common", "version.h")) if p.returncode == 0 else None
        t.ok(got == want, "without .git%s, version.h says %s" % (", " + option[0] if option else "", want),
             "got %r\n%s" % (got, u.describe(p)))


def test(t):
    u.require_program(u.LOWLATD, "lowlatd")
    u.require_program(u.LOWLATCTL, "lowlatctl")
    if not PROJECT_VERSION:
        raise u.Skip("LOWLATD_VERSION (meson's project version) is not set")
    check_built(t)
    copy = check_script(t)
    check_meson(t, copy)


if __name__ == "__main__":
    u.main(test)
