#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The originals file, through the real daemon on a fake tree: a --root run keeps its
originals in a state directory of its own and never reads, rewrites or drops the host's
/run/lowlatd/originals (checked in a private mount namespace, with a tmpfs over
/run/lowlatd holding a sentinel file, so the real one is never touched)."""

import os

import lowlat_harness as h

CONFIG = h.posture_config("1s")


def boot_id():
    with open("/proc/sys/kernel/random/boot_id") as f:
        return f.read().strip()


def private_run_lowlatd(t):
    """A tmpfs over /run/lowlatd in this (private) mount namespace; where the host has no
    /run/lowlatd, a tmpfs over /run first, so that creating the directory changes nothing
    outside."""
    if os.path.isdir("/run/lowlatd"):
        r = h.mount("-t", "tmpfs", "-o", "mode=0755", "tmpfs", "/run/lowlatd")
    else:
        r = h.mount("-t", "tmpfs", "-o", "mode=0755", "tmpfs", "/run")
        if r.returncode == 0:
            os.makedirs("/run/lowlatd")
            os.makedirs("/run/systemd")  # still no journal socket: logs stay on stderr
    if r.returncode != 0:
        h.skip("cannot mount a tmpfs over /run/lowlatd: %s" % r.stdout.strip())


def root_keeps_its_own(t):
    private_run_lowlatd(t)
    sentinel = ("boot_id %s\nroot /\nsysctl\tnet.core.somaxconn\t4096\nirq_affinity\t30\t0-3\n" % boot_id()).encode()
    host_file = "/run/lowlatd/originals"
    h.write_bytes(host_file, sentinel)
    os.chmod(host_file, 0o600)

    host = h.FakeHost(ncpus=4, nirqs=40, isolated="2-3")
    before = host.sysctl("net.core.somaxconn")
    # No RUNTIME_DIRECTORY: the daemon's own default, /run/lowlatd, as under the unit.
    d = h.Daemon(host, CONFIG, env={"RUNTIME_DIRECTORY": None})
    d.wait_ready()
    t.ok(host.sysctl("net.core.somaxconn") == "8192", "lowlatd --root enforces on the tree")
    own = h.originals_path(host, "/run/lowlatd")
    log = d.stderr()
    d.stop()
    with open(host_file, "rb") as f:
        after = f.read()
    t.ok(after == sentinel, "the host's /run/lowlatd/originals is byte-identical after a --root run", repr(after)[:400])
    t.ok(os.path.isfile(own), "the fake root's originals are in a directory of their own: %s" % own,
         repr(os.listdir("/run/lowlatd")))
    text = h.read_text(own) if os.path.isfile(own) else ""
    t.ok("root %s\n" % os.path.realpath(host.root) in text and
         "sysctl\tnet.core.somaxconn\t%s\n" % before in text,
         "... holding the tree's own original somaxconn (%s) under its root" % before, text[:400])
    t.ok("Keeping original values in %s" % own in log, "the log names the state directory at start", log[-2000:])

    # A state directory that cannot be had: enforced all the same, restore said off.
    os.unlink(own)
    os.rmdir(os.path.dirname(own))
    h.write_text(os.path.dirname(own), "a file where the directory should be\n")
    host.set_sysctl("net.core.somaxconn", before)
    d = h.Daemon(host, CONFIG, env={"RUNTIME_DIRECTORY": None})
    d.wait_ready()
    t.ok(host.sysctl("net.core.somaxconn") == "8192", "without its state directory the run still enforces")
    t.ok("restore will not be possible" in d.stderr(), "and says restore is off", d.stderr()[-2000:])
    d.stop()
    with open(host_file, "rb") as f:
        t.ok(f.read() == sentinel, "the host's file is still untouched")


def run(t):
    h.require_root("a private /run/lowlatd")
    h.enter_private_mount_namespace("a --root run beside the host's /run/lowlatd")
    root_keeps_its_own(t)
    h.unmount_all()


if __name__ == "__main__":
    h.main(run)
