# SPDX-License-Identifier: LGPL-2.1-or-later
"""Network namespaces (test_nic, test_rps, test_link, test_nic_faults, bench_rps, bench_link):
running a test again in one, setting it up, veth pairs in it, its sysfs bound into a fake
root, and the tools (ip, ethtool, tc) run there."""

import contextlib
import os
import shutil
import subprocess

from .cleanup import skip
from .namespaces import PRIVATE_MNT_ENV, detach_inherited_fakeirqfs, mount, reexec, unmount_all
from .timing import scaled


NETNS_UNSHARE = ("--net", "--mount", "--propagation", "private")


def unshare_netns():
    """(unshare argv for a network and a private mount namespace, None) when unshare(1)
    can make them here, else (that argv, what unshare printed)."""
    argv0 = [shutil.which("unshare")] + list(NETNS_UNSHARE)
    probe = subprocess.run(argv0 + ["true"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if probe.returncode != 0:
        return argv0, probe.stdout.decode(errors="replace").strip()
    return argv0, None


def reexec_netns(argv0, ns_env, env, pass_fds):
    env = dict(os.environ, **(env or {}))
    env[ns_env] = "1"
    env[PRIVATE_MNT_ENV] = "1"   # lets JournalSocket and the mounts below run in there
    reexec(argv0, env, pass_fds=pass_fds)


def reexec_in_netns(ns_env, tools, env=None, pass_fds=()):
    """Runs this test again under `unshare --net --mount --propagation private`, with
    ns_env=1, PRIVATE_MNT_ENV=1 and env in its environment and pass_fds open, and exits
    with its status (never returns). The test calls it when ns_env is not "1" yet; nothing
    the inner run does reaches this machine's interfaces or sysctls. Skips (77) when not
    root, when a program in tools is missing or when unshare cannot make the namespaces."""
    if os.geteuid() != 0:
        skip("needs root (network and mount namespaces)")
    missing = [x for x in tools if not shutil.which(x)]
    if missing:
        skip("missing tools: %s" % ", ".join(missing))
    argv0, failure = unshare_netns()
    if failure is not None:
        skip("unshare --net --mount failed: %s" % failure)
    reexec_netns(argv0, ns_env, env, pass_fds)


def setup_netns():
    """Inside reexec_in_netns(): detaches inherited fakeirqfs mounts, mounts a tmpfs on
    /run/systemd (hides the host's journal socket) and a fresh sysfs on /sys (so that
    /sys/class/net and the uevents libudev resolves are this namespace's), and brings lo
    up. Skips (77) when a mount fails; unmount_all() undoes the mounts."""
    detach_inherited_fakeirqfs()
    os.makedirs("/run/systemd", exist_ok=True)
    r = mount("-t", "tmpfs", "-o", "mode=0755", "tmpfs", "/run/systemd")
    if r.returncode != 0:
        skip("mount -t tmpfs on /run/systemd failed: %s" % r.stdout.strip())
    r = mount("-t", "sysfs", "sysfs", "/sys")
    if r.returncode != 0:
        skip("mounting a fresh sysfs on /sys failed: %s" % r.stdout.strip())
    run_cmd("ip", "link", "set", "lo", "up")


@contextlib.contextmanager
def netns(ns_env, tools, env=None, pass_fds=()):
    """`with netns(NS_ENV, TOOLS):` runs the block in a network namespace of this test's
    own: outside it (ns_env not "1") reexec_in_netns() runs the whole test again in there
    and exits with its status; inside, setup_netns() comes first and unmount_all() after
    the block, however it ends."""
    if os.environ.get(ns_env) != "1":
        reexec_in_netns(ns_env, tools, env=env, pass_fds=pass_fds)      # never returns
    try:
        setup_netns()
        yield
    finally:
        unmount_all()


def run_cmd(*argv, check=False):
    """Runs a tool (ip, ethtool, tc ...) with a scaled 30 s limit: its CompletedProcess
    (text stdout and stderr). With check, a non-zero exit raises RuntimeError with the
    tool's stderr."""
    r = subprocess.run(list(argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, errors="replace", timeout=scaled(30))
    if check and r.returncode != 0:
        raise RuntimeError("%s: exit %d: %s" % (" ".join(argv), r.returncode, r.stderr.strip()))
    return r


def add_veth(a, b, queues, up=False):
    """ip link add A type veth peer name B, with `queues` receive and transmit queues each
    way; both links set up when up. A failure raises RuntimeError."""
    q = ["numrxqueues", str(queues), "numtxqueues", str(queues)]
    run_cmd("ip", "link", "add", a, *q, "type", "veth", "peer", "name", b, *q, check=True)
    if up:
        run_cmd("ip", "link", "set", a, "up", check=True)
        run_cmd("ip", "link", "set", b, "up", check=True)


def add_veths(*pairs, up=False):
    """add_veth(a, b, queues, up) for each (a, b, queues) at a test's start; skips (77)
    when this kernel cannot make a veth pair here."""
    try:
        for a, b, queues in pairs:
            add_veth(a, b, queues, up=up)
    except RuntimeError as e:
        skip("cannot create a veth pair in a network namespace: %s" % e)


NETNS_SYSFS = ("sys/class/net", "sys/devices/virtual/net")


def bind_into_root(host, *rels):
    """Bind-mounts this namespace's /REL over host's ROOT/REL (created first) for each
    REL (NETNS_SYSFS: every link and queue file is then the kernel's), through mount(), so
    that unmount_all() undoes them. A failed mount raises RuntimeError."""
    for rel in rels:
        src, dst = "/" + rel, host.path(rel)
        os.makedirs(dst, exist_ok=True)
        r = mount("--bind", src, dst)
        if r.returncode != 0:
            raise RuntimeError("mount --bind %s %s: %s" % (src, dst, r.stdout.strip()))
