#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""tools/quickstart, the README's first command, prints the report and nothing of the
install or the build unless one fails.

It runs in a copy of the files it uses (tools/quickstart, tools/packages.sh,
conf/examples/seed-posture.conf) with a build/ of its own: a build.ninja whose one rule
prints a marker (or fails), and the built lowlatd and lowlatctl linked in. apt-get and
sudo are stand-ins on PATH (apt-get prints a marker, or fails; sudo runs its command), so
nothing is installed and no build directory is shared with the running suite. The
report itself is real: lowlatd --observe --once and lowlatctl check --config on this
host, which only read. Once the tree is owned by uid 65534, as a checkout of a normal
user's is under sudo: lowlatd refuses such a configuration, so the quick start must hand
it a root-owned copy.
"""

import os
import shutil

import packaging_util as u

SEED = os.path.join("conf", "examples", "seed-posture.conf")
APT_NOISE = "APT-OUTPUT-MARKER"
BUILD_NOISE = "BUILD-OUTPUT-MARKER"
BUILD_LOG_LINES = ("ninja: ", "[1/1] ", "The Meson build system")

STUB_APT_GET = """#!/bin/sh
echo "%s: apt-get $*"
[ -z "${QUICKSTART_APT_FAILS:-}" ] || { echo "E: $QUICKSTART_APT_FAILS" >&2; exit 100; }
""" % APT_NOISE

STUB_SUDO = """#!/bin/sh
exec "$@"
"""


def build_ninja(fails):
    command = ("echo %s-FAILED && exit 1" if fails else "echo %s && touch $out") % BUILD_NOISE
    return "rule step\n  command = %s\nbuild stamp: step\ndefault stamp\n" % command


def make_tree(build_fails):
    """A tree with what tools/quickstart uses and a build/ of its own."""
    tree = u.tempdir("lowlat-quickstart-")
    for path in (os.path.join("tools", "quickstart"), os.path.join("tools", "packages.sh"), SEED):
        os.makedirs(os.path.dirname(os.path.join(tree, path)), exist_ok=True)
        shutil.copy2(u.src(path), os.path.join(tree, path))
    build = os.path.join(tree, "build")
    u.write(os.path.join(build, "build.ninja"), build_ninja(build_fails))
    for program, path in ((u.LOWLATD, ("daemon", "lowlatd")), (u.LOWLATCTL, ("lowlatctl", "lowlatctl"))):
        os.makedirs(os.path.join(build, path[0]), exist_ok=True)
        os.symlink(program, os.path.join(build, *path))
    stubs = os.path.join(tree, "stubs")
    u.write(os.path.join(stubs, "apt-get"), STUB_APT_GET, mode=0o755)
    u.write(os.path.join(stubs, "sudo"), STUB_SUDO, mode=0o755)
    return tree, stubs


NOBODY = 65534


def chown_tree(tree, uid):
    """chown -hR uid:uid tree: a checkout a normal user owns."""
    for top, dirs, files in os.walk(tree):
        for name in dirs + files:
            os.lchown(os.path.join(top, name), uid, uid)
    os.lchown(tree, uid, uid)


def quickstart(build_fails=False, apt_fails=None, no_install=False, owner=None, tmpdir=None):
    tree, stubs = make_tree(build_fails)
    if owner is not None:
        chown_tree(tree, owner)
    env = {"PATH": stubs + os.pathsep + os.environ.get("PATH", "")}
    if tmpdir:
        env["TMPDIR"] = tmpdir
    if apt_fails:
        env["QUICKSTART_APT_FAILS"] = apt_fails
    # The caller's LOWLATD_NO_INSTALL (tools/run-tests passes it on) must not decide
    # whether the quick start installs: only no_install does.
    env["LOWLATD_NO_INSTALL"] = "1" if no_install else "0"
    return u.run([os.path.join(tree, "tools", "quickstart")], timeout=180, env=env)


def test(t):
    u.require_program(u.LOWLATD, "lowlatd")
    u.require_program(u.LOWLATCTL, "lowlatctl")
    if not shutil.which("ninja"):
        raise u.Skip("ninja is not installed")

    # The report as lowlatd prints it here: its first line must be in the quick start's.
    direct = u.run([u.LOWLATD, "--observe", "--once", "--changed", "--config", u.src(SEED)], timeout=120)
    if not t.ok(direct.returncode in (0, 3) and direct.stdout.strip(),
                "lowlatd --observe --once --changed --config %s reports on this host" % SEED, u.describe(direct)):
        return
    report_head = direct.stdout.splitlines()[0]

    p = quickstart()
    out = p.stdout + p.stderr
    t.ok(p.returncode == 0, "tools/quickstart exits 0", u.describe(p))
    t.ok(report_head in p.stdout and "lowlatd --observe --once --changed --config %s" % SEED in p.stdout
         and "lowlatctl check --config %s" % SEED in p.stdout,
         "tools/quickstart prints the posture report and the audit", u.describe(p))
    noise = [line for line in out.splitlines()
             if APT_NOISE in line or BUILD_NOISE in line or line.startswith(BUILD_LOG_LINES)]
    t.ok(not noise, "tools/quickstart prints nothing of apt-get's or the build's output when they succeed",
         "\n".join(noise) + "\n\n" + u.describe(p))

    p = quickstart(no_install=True)
    t.ok(p.returncode == 0 and APT_NOISE not in p.stdout + p.stderr and report_head in p.stdout,
         "LOWLATD_NO_INSTALL=1: no apt-get, the same report", u.describe(p))

    # Under sudo in a checkout a normal user owns, lowlatd (root) refuses a configuration
    # others may change: the quick start hands it a copy in a directory of root's own, and
    # removes it after. Observe mode and the audit only read this host.
    if os.geteuid() != 0:
        t.skip("tools/quickstart in a tree owned by uid %d" % NOBODY, "needs root to chown the tree")
    else:
        tmpdir = u.tempdir("lowlat-quickstart-tmp-")
        p = quickstart(owner=NOBODY, tmpdir=tmpdir)
        left = [n for n in os.listdir(tmpdir) if n.startswith("lowlatd-quickstart-config.")]
        t.ok(p.returncode == 0 and report_head in p.stdout and "owned by uid" not in p.stdout + p.stderr
             and "lowlatd --observe --once --changed --config %s" % SEED in p.stdout,
             "a tree owned by uid %d: the report, from a root-owned copy of the configuration" % NOBODY,
             u.describe(p))
        t.ok(not left, "... and the private copy is removed after the run", "left in %s: %s" % (tmpdir, left))

    p = quickstart(build_fails=True)
    out = p.stdout + p.stderr
    t.ok(p.returncode != 0 and BUILD_NOISE + "-FAILED" in p.stderr and "lowlatd --observe" not in out,
         "a failing build: tools/quickstart prints the build's output and stops before the report",
         u.describe(p))

    p = quickstart(apt_fails="APT-FAILURE-MARKER")
    out = p.stdout + p.stderr
    t.ok(p.returncode != 0 and "APT-FAILURE-MARKER" in p.stderr and BUILD_NOISE not in out
         and "lowlatd --observe" not in out,
         "a failing package install: tools/quickstart prints apt-get's output and stops", u.describe(p))


if __name__ == "__main__":
    u.main(test)
