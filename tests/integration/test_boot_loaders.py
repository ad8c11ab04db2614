#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""lowlatctl boot with the loaders that keep a list of arguments (test_boot covers GRUB):

- detection on fake trees (--root), in its order: GRUB, systemd-boot (its files or a UKI
  directory in an ESP), BLS entries with grubby, /etc/kernel/cmdline with kernel-install;
  none, and --apply's refusal naming what was looked for;
- /etc/kernel/cmdline under --root: the administrator's words kept byte for byte, a value
  of theirs replaced and given back, the state file, --remove exact (their later words
  kept, a word of ours they changed left), a file lowlatctl created removed again;
- the lone housekeeping CPU rule: refused on 3 and 4 CPUs, written on 2, never for
  --remove;
- and on "/" in a private mount namespace (tmpfs over /boot, /etc/default, /etc/kernel and
  /var/lib; stubs for grubby, bootctl and kernel-install first on PATH): grubby's call and
  the entries before and after, --remove exact, a failing grubby puts every entry back
  byte for byte; kernel-install run for the running kernel, and a failing one puts
  /etc/kernel/cmdline and the state file back byte for byte. The real /boot, /etc and
  /var/lib are never touched."""

import glob
import json
import os
import subprocess

import lowlat_harness as h

CMDLINE = "BOOT_IMAGE=/vmlinuz root=UUID=1234 ro quiet splash console=ttyS0\n"
STATE = "var/lib/lowlatd/boot-args"
ARGS4 = ["isolcpus=managed_irq,domain,2-3", "nohz_full=2-3", "rcu_nocbs=2-3", "irqaffinity=0-1", "skew_tick=1",
         "nosoftlockup"]

# grubby as it edits BLS entries: --remove-args drops each word (a bare name: with any
# value), --args replaces a parameter of that name or appends; every call is logged.
GRUBBY = r'''#!/usr/bin/env python3
import glob, os, sys
log, fail = os.environ["STUB_LOG"], os.environ.get("STUB_FAIL_GRUBBY")
with open(log, "a") as f:
    f.write("grubby " + "\t".join(sys.argv[1:]) + "\n")
rem, add = [], []
for a in sys.argv[1:]:
    if a.startswith("--remove-args="): rem = a.split("=", 1)[1].split()
    if a.startswith("--args="): add = a.split("=", 1)[1].split()
for n, path in enumerate(sorted(glob.glob("/boot/loader/entries/*.conf"))):
    if fail and n == 1:
        sys.exit(1)
    lines = open(path).read().split("\n")
    for i, line in enumerate(lines):
        if not line.startswith("options "):
            continue
        words = line.split()[1:]
        for r in rem:
            words = [w for w in words if w != r and ("=" in r or w.split("=")[0] != r)]
        for a in add:
            words = [w for w in words if w.split("=")[0] != a.split("=")[0]] + [a]
        lines[i] = "options " + " ".join(words)
    open(path, "w").write("\n".join(lines))
'''


def write(path, text, mode=None):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    h.write_text(path, text)
    if mode:
        os.chmod(path, mode)


def read(path):
    return h.read_text(path) if os.path.exists(path) else None


def boot(root, conf, *args, env=None):
    argv = [os.environ["LOWLATCTL"], "boot", "--config", conf] + (["--root", root] if root else []) + list(args)
    return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          env=env or dict(os.environ), timeout=h.scaled(30))


def boot_json(root, conf, *args, env=None):
    p = boot(root, conf, "--json", *args, env=env)
    try:
        return p, json.loads(p.stdout)
    except ValueError:
        return p, {}


def config(tmp, name, isolated):
    path = os.path.join(tmp, name)
    write(path, "[cpus]\nisolated = %s\n" % isolated)
    return path


def tree(files, ncpus=4):
    host = h.FakeHost(ncpus=ncpus, nirqs=8, isolated="")
    write(host.path("proc/cmdline"), CMDLINE)
    for rel, text in files.items():
        write(host.path(rel), text, 0o755 if rel.startswith("usr/") else None)
    return host


def detection(t, conf):
    entry = {"boot/loader/entries/a.conf": "title A\noptions root=UUID=1 ro\n"}
    grubby = {"usr/sbin/grubby": "#!/bin/sh\n"}
    cases = [
        ("BLS entries with grubby", dict(entry, **grubby), "bls"),
        ("BLS entries without grubby", entry, "none"),
        ("systemd-boot's loader.conf in /efi", {"efi/loader/loader.conf": "timeout 3\n"}, "systemd-boot"),
        ("a UKI directory in /boot/efi", {"boot/efi/EFI/Linux/x.efi": ""}, "systemd-boot"),
        ("systemd-boot before BLS: its entries are BLS entries too",
         dict(entry, **grubby, **{"boot/loader/loader.conf": ""}), "systemd-boot"),
        ("/etc/kernel/cmdline with kernel-install", {"etc/kernel/cmdline": "root=UUID=1\n",
                                                     "usr/bin/kernel-install": "#!/bin/sh\n"}, "systemd-boot"),
        ("/etc/kernel/cmdline without kernel-install", {"etc/kernel/cmdline": "root=UUID=1\n"}, "none"),
        ("GRUB with update-grub before BLS", dict(entry, **grubby, **{"etc/default/grub": "",
                                                                      "usr/sbin/update-grub": "#!/bin/sh\n"}), "grub"),
    ]
    for what, files, want in cases:
        host = tree(files)
        p, doc = boot_json(host.root, conf)
        t.ok(p.returncode == 0 and doc.get("loader") == want, "detection: %s -> %s" % (what, want),
             p.stdout + p.stderr)
    p, doc = boot_json(host.root, conf)
    t.ok(doc.get("arguments", "").split() == ARGS4, "--json: the arguments lowlatd adds, alone", p.stdout)
    host = tree({})
    p = boot(host.root, conf, "--apply")
    t.ok(p.returncode == 1 and "no boot loader found" in p.stderr and "grubby" in p.stderr and
         "kernel-install" in p.stderr and "isolcpus=managed_irq,domain,2-3" in p.stderr,
         "none found: --apply refused, naming what was looked for and the arguments to add", p.stderr)


def kernel_cmdline_under_root(t, conf):
    admin = "root=UUID=1 ro  quiet nohz_full=1-3 nosoftlockup\n"
    # A UKI's ESP: still systemd-boot once the file is gone.
    host = tree({"etc/kernel/cmdline": admin, "usr/bin/kernel-install": "#!/bin/sh\nexit 1\n",
                 "efi/EFI/Linux/uki.efi": ""})
    path, state = host.path("etc/kernel/cmdline"), host.path(STATE)
    os.makedirs(host.path("var/lib"), exist_ok=True)
    p, doc = boot_json(host.root, conf, "--apply")
    text = read(path) or ""
    t.ok(p.returncode == 0 and doc.get("loader") == "systemd-boot" and doc.get("result") == "written" and
         doc.get("command_result", "").startswith("not run"), "--apply under --root: written, kernel-install "
         "not run", p.stdout + p.stderr)
    t.ok(text == "root=UUID=1 ro  quiet nohz_full=2-3 nosoftlockup isolcpus=managed_irq,domain,2-3 rcu_nocbs=2-3 "
         "irqaffinity=0-1 skew_tick=1\n", "the admin's words kept byte for byte, their nohz_full replaced in "
         "place, ours appended", text)
    st = read(state) or ""
    t.ok("loader systemd-boot\n" in st and "replace nohz_full=1-3 nohz_full=2-3\n" in st and
         "add rcu_nocbs=2-3\n" in st and "nosoftlockup" not in st, "the state file: what was added and replaced, "
         "not the admin's own nosoftlockup", st)
    p = boot(host.root, conf, "--apply")
    t.ok(p.returncode == 0 and read(path) == text and "already holds" in p.stderr,
         "a second --apply: unchanged", p.stderr)
    write(path, text.replace("\n", " mine=1\n"))
    p = boot(host.root, conf, "--remove")
    t.ok(p.returncode == 0 and read(path) == admin.replace("\n", " mine=1\n") and read(state) is None,
         "--remove: exactly the admin's words back, their later one kept, the state file gone",
         p.stderr + repr(read(path)))
    write(path, admin)
    boot(host.root, conf, "--apply")
    write(path, read(path).replace("rcu_nocbs=2-3", "rcu_nocbs=3"))
    p = boot(host.root, conf, "--remove")
    t.ok(p.returncode == 0 and read(path) == admin.replace("\n", " rcu_nocbs=3\n") and "left as" in p.stderr,
         "--remove leaves a word of ours the admin changed since", p.stderr + repr(read(path)))
    os.unlink(path)
    p = boot(host.root, conf, "--apply")
    t.ok(p.returncode == 0 and read(path) == "root=UUID=1234 ro quiet splash console=ttyS0 " + " ".join(ARGS4) + "\n",
         "no file: created from the running line (less BOOT_IMAGE=) with the arguments", p.stderr +
         repr(read(path)))
    p = boot(host.root, conf, "--remove")
    t.ok(p.returncode == 0 and not os.path.exists(path) and read(state) is None,
         "--remove deletes the file lowlatctl created", p.stderr)
    write(state, "# not ours\nloader grub\n")
    p = boot(host.root, conf, "--apply")
    t.ok(p.returncode == 1 and not os.path.exists(path), "a state file lowlatctl did not write: refused", p.stderr)


def lone_housekeeping(t, tmp):
    host = tree({}, ncpus=4)
    p = boot(host.root, config(tmp, "hk4.conf", "1-3"))
    t.ok(p.returncode == 1 and "CPU 0 alone as housekeeping" in p.stderr and "4 online" in p.stderr,
         "4 CPUs, 1-3 isolated: CPU 0 alone is refused, saying why", p.stderr)
    p = boot(host.root, config(tmp, "hk4.conf", "1-3"), "--remove")
    t.ok(p.returncode == 0, "--remove is not refused for it", p.stderr)
    host3 = tree({}, ncpus=3)
    p = boot(host3.root, config(tmp, "hk3.conf", "1-2"))
    t.ok(p.returncode == 1 and "alone as housekeeping" in p.stderr, "3 CPUs, 1-2 isolated: refused", p.stderr)
    host2 = tree({}, ncpus=2)
    p, doc = boot_json(host2.root, config(tmp, "hk2.conf", "1"))
    t.ok(p.returncode == 0 and "nohz_full=1" in doc.get("arguments", "").split(),
         "2 CPUs, 1 isolated: the only way to isolate anything, written", p.stdout + p.stderr)


def namespace_setup(t, tmp):
    """tmpfs over what the loaders touch; the stubs first on PATH. The environment, or None."""
    for d in ("/boot", "/etc/default", "/etc/kernel", "/var/lib"):
        if d == "/etc/kernel" and not os.path.isdir(d):
            continue  # kernel_install_on_root() skips, saying so
        if not os.path.isdir(d):
            t.skip("on /", "%s is not a directory here: nothing to mount a tmpfs on" % d)
            return None
        r = h.mount("-t", "tmpfs", "-o", "mode=0755", "tmpfs", d)
        if r.returncode != 0:
            t.skip("on /", "mount -t tmpfs on %s failed: %s" % (d, r.stdout.strip()))
            return None
    bindir = os.path.join(tmp, "bin")
    write(os.path.join(bindir, "grubby"), GRUBBY, 0o755)
    write(os.path.join(bindir, "bootctl"), "#!/bin/sh\nexit ${STUB_BOOTCTL:-1}\n", 0o755)
    write(os.path.join(bindir, "kernel-install"), '#!/bin/sh\nprintf "kernel-install %s\\n" "$*" >> "$STUB_LOG"\n'
          'exit ${STUB_FAIL_KERNEL_INSTALL:-0}\n', 0o755)
    return dict(os.environ, PATH=bindir + ":" + os.environ.get("PATH", "/usr/bin:/bin"),
                STUB_LOG=os.path.join(tmp, "stub.log"))


def entries():
    return {p: h.read_text(p) for p in sorted(glob.glob("/boot/loader/entries/*.conf"))}


def options(text):
    return [line.split()[1:] for line in text.split("\n") if line.startswith("options ")][0]


def log_lines(env):
    text = read(env["STUB_LOG"]) or ""
    os.unlink(env["STUB_LOG"]) if os.path.exists(env["STUB_LOG"]) else None
    return [line for line in text.split("\n") if line]


def bls_on_root(t, conf, env, args):
    admin = "title T\nversion 1\noptions root=UUID=1 ro quiet irqaffinity=0-1023\nlinux /vmlinuz\n"
    plain = "title P\nversion 2\noptions root=UUID=1 ro quiet irqaffinity=0-1023\nlinux /vmlinuz-2\n"
    write("/boot/loader/entries/a.conf", admin)
    write("/boot/loader/entries/b.conf", plain)
    before = entries()
    ours = [a for a in args if not a.startswith("irqaffinity=")]
    irq = [a for a in args if a.startswith("irqaffinity=")][0]
    p, doc = boot_json(None, conf, "--apply", env=env)
    calls, after = log_lines(env), entries()
    t.ok(p.returncode == 0 and doc.get("loader") == "bls" and doc.get("command_result") == "ran",
         "BLS on /: --apply ran grubby", p.stdout + p.stderr)
    t.ok(calls == ["grubby --update-kernel=ALL\t--remove-args=irqaffinity=0-1023\t--args=%s" % " ".join(args)],
         "one call: the admin's irqaffinity taken out, the arguments put in", repr(calls))
    t.ok(all(set(options(v)) == {"root=UUID=1", "ro", "quiet"} | set(args) for v in after.values()),
         "every entry: the admin's words and lowlatd's", repr(after))
    st = read("/" + STATE) or ""
    t.ok("loader bls\n" in st and "replace irqaffinity=0-1023 %s\n" % irq in st and
         all("add %s\n" % a in st for a in ours), "the state file records each change", st)
    p = boot(None, conf, "--apply", env=env)
    t.ok(p.returncode == 0 and log_lines(env) == [] and entries() == after, "a second --apply: grubby not run",
         p.stderr)
    write("/boot/loader/entries/a.conf", after["/boot/loader/entries/a.conf"].replace("\nlinux", " mine=1\nlinux"))
    p = boot(None, conf, "--remove", env=env)
    got = entries()
    t.ok(p.returncode == 0 and sorted(options(got["/boot/loader/entries/a.conf"])) ==
         sorted(options(admin) + ["mine=1"]) and sorted(options(got["/boot/loader/entries/b.conf"])) ==
         sorted(options(plain)) and read("/" + STATE) is None,
         "--remove: exactly the admin's words back (their later mine=1 kept), the state file gone",
         p.stderr + repr(got) + repr(log_lines(env)))
    bls_failures(t, conf, env, before)


def bls_failures(t, conf, env, before):
    for path, text in before.items():
        write(path, text.replace(" irqaffinity=0-1023", ""))
    clean = entries()
    p = boot(None, conf, "--apply", env=env)
    mid = entries()
    p = boot(None, conf, "--remove", env=env)
    t.ok(p.returncode == 0 and entries() == clean and mid != clean,
         "BLS: nothing of the admin's replaced, --remove gives every entry back byte for byte", p.stderr)
    log_lines(env)
    fenv = dict(env, STUB_FAIL_GRUBBY="1")
    p = boot(None, conf, "--apply", env=fenv)
    t.ok(p.returncode == 1 and entries() == clean and read("/" + STATE) is None and "put back" in p.stderr,
         "grubby failing halfway: every entry back byte for byte, no state file, exit 1", p.stderr)
    log_lines(env)
    write("/boot/loader/entries/b.conf", clean["/boot/loader/entries/b.conf"].replace("quiet", "quiet nohz_full=0"))
    disagree = entries()
    p = boot(None, conf, "--apply", env=env)
    t.ok(p.returncode == 1 and entries() == disagree and log_lines(env) == [] and "differ" in p.stderr,
         "entries that disagree on a parameter lowlatd sets: refused, grubby not run", p.stderr)
    write("/boot/loader/entries/b.conf", "title K\noptions $kernelopts\n")
    p = boot(None, conf, "--apply", env=env)
    t.ok(p.returncode == 1 and "$kernelopts" in p.stderr and log_lines(env) == [],
         "an entry with $kernelopts: refused", p.stderr)
    for path in entries():
        os.unlink(path)


def kernel_install_on_root(t, conf, env, args):
    if not os.path.ismount("/etc/kernel"):
        t.skip("systemd-boot on /", "no /etc/kernel here to mount a tmpfs on")
        return
    release = os.uname().release
    write("/boot/vmlinuz-" + release, "")
    write("/boot/initrd.img-" + release, "")
    admin = "root=UUID=1 ro quiet\n"
    write("/etc/kernel/cmdline", admin)
    ienv = dict(env, STUB_BOOTCTL="0")
    p, doc = boot_json(None, conf, "--apply", env=ienv)
    calls = log_lines(env)
    image = ["/usr/lib/modules/%s/vmlinuz" % release, "/boot/vmlinuz-" + release]
    call = calls[0].split() if len(calls) == 1 else []
    t.ok(p.returncode == 0 and doc.get("loader") == "systemd-boot" and read("/etc/kernel/cmdline") ==
         admin.replace("\n", " " + " ".join(args) + "\n"), "systemd-boot on / (bootctl is-installed): "
         "/etc/kernel/cmdline written", p.stdout + p.stderr)
    t.ok(call[:3] == ["kernel-install", "add", release] and len(call) >= 4 and call[3] in image and
         doc.get("command_result") == "ran", "kernel-install add for the running kernel, with its image", repr(calls))
    written, state = read("/etc/kernel/cmdline"), read("/" + STATE)
    fenv = dict(ienv, STUB_FAIL_KERNEL_INSTALL="1")
    p = boot(None, conf, "--remove", env=fenv)
    t.ok(p.returncode == 1 and read("/etc/kernel/cmdline") == written and read("/" + STATE) == state and
         "put back" in p.stderr, "kernel-install failing after --remove: the file and the state back byte for byte",
         p.stderr)
    p = boot(None, conf, "--remove", env=ienv)
    t.ok(p.returncode == 0 and read("/etc/kernel/cmdline") == admin and read("/" + STATE) is None and
         len(log_lines(env)) == 2, "--remove: the admin's file back byte for byte, kernel-install run again",
         p.stderr)
    p = boot(None, conf, "--apply", env=fenv)
    t.ok(p.returncode == 1 and read("/etc/kernel/cmdline") == admin and read("/" + STATE) is None,
         "kernel-install failing after --apply: the file back byte for byte, no state file, exit 1", p.stderr)


def on_system_root(t, tmp):
    if not h.in_private_mount_namespace():
        t.skip("on /", "not in a private mount namespace")
        return
    online = h.read_text("/sys/devices/system/cpu/online").strip()
    cpus = h.parse_cpulist(online)
    if len(cpus) < 2:
        t.skip("on /", "a single CPU: nothing can be isolated")
        return
    conf = config(tmp, "system.conf", str(max(cpus)))
    env = namespace_setup(t, tmp)
    if env is None:
        return
    p, doc = boot_json(None, conf, env=env)
    args = doc.get("arguments", "").split()
    t.ok(p.returncode == 0 and "nohz_full=%d" % max(cpus) in args, "the arguments for this machine",
         p.stdout + p.stderr)
    if args:
        bls_on_root(t, conf, env, args)
        kernel_install_on_root(t, conf, env, args)
    h.unmount_all()


def run(t):
    h.require_root("a private mount namespace with tmpfs over /boot, /etc/default, /etc/kernel and /var/lib")
    h.enter_private_mount_namespace("--apply on / with tmpfs over the boot loaders' files")
    tmp = h.make_tempdir("lowlat-bootl-")
    conf = config(tmp, "lowlatd.conf", "2-3")
    detection(t, conf)
    kernel_cmdline_under_root(t, conf)
    lone_housekeeping(t, tmp)
    on_system_root(t, tmp)


if __name__ == "__main__":
    h.main(run)
