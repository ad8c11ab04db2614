#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""lowlatctl boot through the real program, on fake trees (--root):

- print mode: the parameters the running line lacks, the whole line (the running line's
  other arguments kept), the loader "grub" on a tree with etc/default/grub and
  usr/sbin/update-grub, "none" on a bare one; --json;
- --apply writes etc/default/grub.d/lowlatd.cfg (0644, lowlatctl's header, less what
  GRUB_CMDLINE_LINUX adds) and does not run update-grub under --root; a second --apply
  leaves it unchanged; --remove deletes it, and refuses a drop-in without the header;
- --apply on a bare tree is refused with the line to add by hand; a configuration
  isolating every CPU is refused; one isolating none has nothing to write;
- and on "/" inside a private mount namespace (tmpfs over /etc/default, a fake update-grub
  first on PATH): --apply writes the drop-in there and runs update-grub; --remove undoes
  it. The real /etc is never touched."""

import json
import os
import stat
import subprocess

import lowlat_harness as h

CMDLINE = "BOOT_IMAGE=/vmlinuz root=UUID=1234 ro quiet splash console=ttyS0\n"
DROPIN = "etc/default/grub.d/lowlatd.cfg"


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    h.write_text(path, text)


def boot(root, conf, *args, env=None):
    argv = [os.environ["LOWLATCTL"], "boot", "--config", conf] + (["--root", root] if root else []) + list(args)
    return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          env=env or dict(os.environ), timeout=h.scaled(30))


def config(tmp, name, isolated):
    path = os.path.join(tmp, name)
    write(path, "[cpus]\nisolated = %s\n" % isolated)
    return path


def grub_tree(host):
    write(host.path("proc/cmdline"), CMDLINE)
    write(host.path("etc/default/grub"), 'GRUB_DEFAULT=0\nGRUB_CMDLINE_LINUX="console=ttyS0"\n')
    write(host.path("usr/sbin/update-grub"), "#!/bin/sh\nexit 0\n")
    os.chmod(host.path("usr/sbin/update-grub"), 0o755)


def print_mode(t, tmp, conf):
    host = h.FakeHost(ncpus=4, isolated="")
    grub_tree(host)
    p = boot(host.root, conf)
    t.ok(p.returncode == 0, "boot prints (exit 0)", p.stdout + p.stderr)
    t.ok("isolcpus=managed_irq,domain,2-3" in p.stdout.split("Line:")[0] and "nohz_full=2-3" in p.stdout,
         "the parameters the running line lacks", p.stdout)
    t.ok('GRUB_CMDLINE_LINUX_DEFAULT="quiet splash console=ttyS0 isolcpus=managed_irq,domain,2-3 nohz_full=2-3 '
         'rcu_nocbs=2-3 irqaffinity=0-1' in p.stdout and "BOOT_IMAGE" not in p.stdout and "root=" not in p.stdout,
         "the whole line: the running line's other arguments kept", p.stdout)
    t.ok("Boot loader: grub" in p.stdout, "the loader: grub", p.stdout)
    j = boot(host.root, conf, "--json")
    try:
        doc = json.loads(j.stdout)
    except ValueError:
        doc = {}
    t.ok(j.returncode == 0 and doc.get("loader") == "grub" and "nohz_full=2-3" in doc.get("needed", "") and
         doc.get("line", "").startswith("quiet splash console=ttyS0 isolcpus="), "--json", j.stdout + j.stderr)
    t.ok(not os.path.exists(host.path(DROPIN)), "nothing is written without --apply")
    bare = h.FakeHost(ncpus=4, isolated="")
    write(bare.path("proc/cmdline"), CMDLINE)
    p = boot(bare.root, conf)
    t.ok(p.returncode == 0 and "Boot loader: none" in p.stdout, "the loader: none on a bare tree", p.stdout)
    p = boot(bare.root, conf, "--apply")
    t.ok(p.returncode == 1 and "isolcpus=managed_irq,domain,2-3" in p.stderr and "by hand" in p.stderr,
         "--apply there is refused with the line to add by hand", p.stderr)
    return host


def apply_remove(t, host, conf):
    p = boot(host.root, conf, "--apply")
    path = host.path(DROPIN)
    text = h.read_text(path) if os.path.exists(path) else ""
    t.ok(p.returncode == 0 and "update-grub not run" in p.stderr, "--apply under --root: written, update-grub "
         "not run", p.stderr)
    t.ok(text.startswith("# Written by lowlatctl boot --apply") and
         'GRUB_CMDLINE_LINUX_DEFAULT="quiet splash isolcpus=managed_irq,domain,2-3 nohz_full=2-3 rcu_nocbs=2-3 '
         'irqaffinity=0-1 skew_tick=1 nosoftlockup"\n' in text, "the drop-in: header, the line less "
         "GRUB_CMDLINE_LINUX's console=ttyS0", text)
    t.ok(os.path.exists(path) and stat.S_IMODE(os.stat(path).st_mode) == 0o644, "mode 0644")
    p = boot(host.root, conf, "--apply")
    t.ok(p.returncode == 0 and "unchanged" in p.stderr and h.read_text(path) == text,
         "a second --apply: the same file, unchanged", p.stderr)
    p = boot(host.root, conf, "--remove")
    t.ok(p.returncode == 0 and not os.path.exists(path), "--remove deletes it", p.stderr)
    write(path, 'GRUB_CMDLINE_LINUX_DEFAULT="mine"\n')
    p = boot(host.root, conf, "--remove")
    t.ok(p.returncode == 1 and os.path.exists(path) and "someone else" in p.stderr,
         "--remove refuses a drop-in without lowlatctl's header", p.stderr)
    p = boot(host.root, conf, "--apply")
    t.ok(p.returncode == 1 and h.read_text(path) == 'GRUB_CMDLINE_LINUX_DEFAULT="mine"\n',
         "and --apply does not replace it", p.stderr)
    os.unlink(path)


def refusals(t, tmp, host):
    p = boot(host.root, config(tmp, "all.conf", "0-3"), "--apply")
    t.ok(p.returncode == 1 and "housekeeping" in p.stderr and not os.path.exists(host.path(DROPIN)),
         "a configuration isolating every CPU is refused, saying why", p.stderr)
    none = os.path.join(tmp, "none.conf")
    write(none, "[daemon]\n")
    p = boot(host.root, none)
    t.ok(p.returncode == 0 and "isolates no CPU" in p.stdout, "isolating nothing: nothing to write (exit 0)",
         p.stdout + p.stderr)
    p = boot(host.root, none, "--apply")
    t.ok(p.returncode == 1 and not os.path.exists(host.path(DROPIN)), "and --apply is refused", p.stderr)
    p = boot(host.root, none, "--apply", "--remove")
    t.ok(p.returncode == 64, "--apply with --remove: usage (64)", p.stderr)


def on_system_root(t, tmp):
    """Inside the private mount namespace: / is the root, /etc/default a tmpfs. The
    configuration isolates this machine's last online CPU."""
    if not h.in_private_mount_namespace():
        t.skip("--apply on /", "not in a private mount namespace")
        return
    online = h.read_text("/sys/devices/system/cpu/online").strip()
    last = int(online.replace(",", "-").split("-")[-1])
    if last == 0:
        t.skip("--apply on /", "a single CPU: nothing can be isolated")
        return
    conf = config(tmp, "system.conf", str(last))
    saved = None
    if os.path.exists("/etc/default/grub"):
        saved = h.read_text("/etc/default/grub")
    os.makedirs("/etc/default", exist_ok=True)
    r = h.mount("-t", "tmpfs", "-o", "mode=0755", "tmpfs", "/etc/default")
    if r.returncode != 0:
        t.skip("--apply on /", "mount -t tmpfs on /etc/default failed: %s" % r.stdout.strip())
        return
    write("/etc/default/grub", saved if saved is not None else 'GRUB_CMDLINE_LINUX=""\n')
    bindir = os.path.join(tmp, "bin")
    ran = os.path.join(tmp, "update-grub.ran")
    write(os.path.join(bindir, "update-grub"), "#!/bin/sh\necho ran >> %s\n" % ran)
    os.chmod(os.path.join(bindir, "update-grub"), 0o755)
    env = dict(os.environ, PATH=bindir + ":" + os.environ.get("PATH", "/usr/bin:/bin"))
    p = boot(None, conf, "--apply", env=env)
    t.ok(p.returncode == 0 and os.path.exists("/" + DROPIN) and os.path.exists(ran) and
         "update-grub ran; the new line takes effect at the next boot" in p.stderr,
         "--apply on /: the drop-in written, the (fake) update-grub run", p.stdout + p.stderr)
    p = boot(None, conf, "--remove", env=env)
    runs = h.read_text(ran).count("ran") if os.path.exists(ran) else 0
    # Not "the new line takes effect", as it said after --remove too (seen on a real GRUB).
    t.ok(p.returncode == 0 and not os.path.exists("/" + DROPIN) and runs == 2 and
         "update-grub ran; the next boot is without lowlatctl's arguments" in p.stderr and "new line" not in p.stderr,
         "--remove on /: deleted, update-grub run again, and said so", p.stdout + p.stderr)
    update_grub_fails(t, tmp, conf, bindir, env)
    h.unmount_all()


def update_grub_fails(t, tmp, conf, bindir, env):
    """update-grub failing: the drop-in is put back as it was (none, then the text before)."""
    stub = os.path.join(bindir, "update-grub")
    write(stub, "#!/bin/sh\necho broken >&2\nexit 3\n")
    p = boot(None, conf, "--apply", env=env)
    t.ok(p.returncode == 1 and not os.path.exists("/" + DROPIN) and "put back" in p.stderr,
         "update-grub failing after --apply: the new drop-in taken away again, exit 1", p.stdout + p.stderr)
    write(stub, "#!/bin/sh\nexit 0\n")
    p = boot(None, conf, "--apply", env=env)
    before = h.read_text("/" + DROPIN) if os.path.exists("/" + DROPIN) else None
    write(stub, "#!/bin/sh\nexit 3\n")
    p = boot(None, conf, "--remove", env=env)
    after = h.read_text("/" + DROPIN) if os.path.exists("/" + DROPIN) else None
    t.ok(p.returncode == 1 and before is not None and after == before and "put back" in p.stderr,
         "update-grub failing after --remove: the drop-in back byte for byte, exit 1", p.stdout + p.stderr)
    os.unlink("/" + DROPIN)


def run(t):
    h.require_root("a private mount namespace with a tmpfs over /etc/default")
    h.enter_private_mount_namespace("--apply on / with a tmpfs over /etc/default")
    tmp = h.make_tempdir("lowlat-boot-")
    conf = config(tmp, "lowlatd.conf", "2-3")
    host = print_mode(t, tmp, conf)
    apply_remove(t, host, conf)
    refusals(t, tmp, host)
    on_system_root(t, tmp)


if __name__ == "__main__":
    h.main(run)
