# SPDX-License-Identifier: LGPL-2.1-or-later
"""Mount namespaces: running a test again inside one (reexec), a private one with a tmpfs on
/run/systemd, the mounts made in it (mount, unmount_all), and the fakeirqfs mounts it
inherits."""

import os
import re
import shutil
import subprocess
import sys

from .cleanup import cleanup_all, skip


PRIVATE_MNT_ENV = "LOWLAT_PRIVATE_MNT"


def require_root(what):
    if os.geteuid() != 0:
        skip("%s needs root" % what)


def in_private_mount_namespace():
    return os.environ.get(PRIVATE_MNT_ENV) == "1"


def reexec(prefix, env, pass_fds=()):
    """Runs this test again under prefix (unshare ...) with env, waits for it, cleans up
    and exits with its status: all the parent has left to do once the child holds the new
    namespaces."""
    sys.stdout.flush()
    p = subprocess.Popen(list(prefix) + [sys.executable, os.path.abspath(sys.argv[0])] + sys.argv[1:],
                         env=env, pass_fds=pass_fds)
    try:
        rc = p.wait()
    except BaseException:
        p.terminate()
        try:
            rc = p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()
            rc = p.wait()
    cleanup_all()
    os._exit(rc if rc >= 0 else 128 - rc)


_MOUNTS = []


def mount(*argv):
    """mount(8) with argv; what mounted is remembered for unmount_all()."""
    r = subprocess.run(["mount"] + list(argv), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       universal_newlines=True)
    if r.returncode == 0:
        _MOUNTS.append(argv[-1])
    return r


def unmount_all():
    """Lazily unmounts what mount() mounted, the last first."""
    while _MOUNTS:
        subprocess.run(["umount", "-l", _MOUNTS.pop()], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def enter_private_mount_namespace(reason="needs a private mount namespace"):
    """Re-execute this test under `unshare -m --propagation private` (once), then mount
    a tmpfs on /run/systemd inside it. Skips (77) when that is not possible."""
    if not in_private_mount_namespace():
        if os.geteuid() != 0:
            skip("%s: unshare -m and mount need root" % reason)
        unshare = shutil.which("unshare")
        if not unshare:
            skip("%s: unshare(1) not found" % reason)
        probe = subprocess.run([unshare, "-m", "--propagation", "private", "true"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if probe.returncode != 0:
            skip("%s: unshare -m failed: %s" % (reason, probe.stdout.decode(errors="replace").strip()))
        env = dict(os.environ)
        env[PRIVATE_MNT_ENV] = "1"
        reexec([unshare, "-m", "--propagation", "private"], env)
    # inside
    os.makedirs("/run/systemd", exist_ok=True)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "mode=0755", "tmpfs", "/run/systemd"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if r.returncode != 0:
        skip("%s: mount -t tmpfs on /run/systemd failed: %s"
             % (reason, r.stdout.decode(errors="replace").strip()))


def _unescape_mountinfo(field):
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def detach_inherited_fakeirqfs():
    """unshare -m copies every mount of the parent namespace, including any fakeirqfs that
    another test (fakeirqfs-smoke, test_fuse_irq, a second run of either) has mounted right
    now. The copy holds that FUSE connection open: its fusermount3 -u would no longer end
    its fakeirqfs until this test exits. Detach those copies (this namespace only)."""
    inherited = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            pre, sep, post = line.partition(" - ")
            if sep and post.split(" ", 1)[0] == "fuse.fakeirqfs":
                inherited.append(_unescape_mountinfo(pre.split()[4]))
    for mnt in reversed(inherited):
        subprocess.run(["umount", "-l", mnt], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
