#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""lowlatctl diff [FILE] and lowlatctl reload --if-unchanged=DIGEST against a live lowlatd
on a private system bus, a fake tree, and a network namespace of lowlatd's own with a
veth pair (so that a [nic] section has real settings to drop):

  - diff FILE with a file that adds a sysctl, drops the [nic] section and changes
    isolated reports exactly those keys, and settings of exactly those kinds: the sysctl
    added (the host's value and "write"), the NIC's settings removed, the IRQ affinities
    and the default affinity changed from 0-1 to 0; the tree is byte for byte as before,
    and the daemon did not reload (LastReloadUSec, Settings unchanged);
  - --json says the same; diff with no FILE reports nothing when the files did not change;
  - reload --if-unchanged with the digest of a diff made before the file changed is
    refused (exit 1, "changed since the diff") and applies nothing; with the digest of
    diff FILE, after FILE was put in place, it reloads and the new posture is on the host;
  - an invalid FILE is refused with its FILE:LINE, a missing one and a bad digest are
    refused in words, an unprivileged diff is refused ("diff needs root").

Exit 77 with a reason: not root, no dbus-daemon or busctl, no unshare/nsenter/ip, no
network namespace."""

import json
import os
import shutil
import subprocess

import busctl_harness as b
import lowlat_constants as C
import lowlat_harness as h

CONFIG_A = """\
[daemon]
udev_source = kernel

[cpus]
isolated = 2-3

[sysctl]
net.core.somaxconn = 8192

[nic "dv*"]
gro = off
"""

# isolated 2-3 -> 1-3, kernel.numa_balancing added, the [nic] section dropped.
CONFIG_B = """\
[daemon]
udev_source = kernel

[cpus]
isolated = 1-3

[sysctl]
net.core.somaxconn = 8192
kernel.numa_balancing = 0
"""

CONFIG_BROKEN = """\
[daemon]
udev_source = kernel

[cpus]
isolated = 1-3
bogus_knob = 1
"""

NIC_KINDS = {"nic_feature", "nic_features", "feature"}  # whatever ListSettings calls them
ISOLATION_KINDS = {"irq_affinity", "irq_default_affinity"}


class NetnsDaemon(h.Daemon):
    """lowlatd as the first process of a network namespace of its own."""

    @property
    def argv(self):
        return [shutil.which("unshare"), "--net", "--"] + super().argv


def lowlatctl(env, *args, user=None):
    argv = (b.unprivileged() if user == "nobody" else []) + [os.environ["LOWLATCTL"]] + list(args)
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=h.scaled(30))


def keys_of(doc):
    return {k["key"]: (k["was"], k["will"]) for k in doc["keys"]}


def digest_of(text):
    for line in text.splitlines():
        if line.startswith("Digest: "):
            return line.split()[1]
    return None


def check_diff(t, host, d, env, busctl, path_b):
    before = host.snapshot()
    reload_usec = busctl.get_property(C.BUS_NAME, C.BUS_PATH, C.BUS_INTERFACE, "LastReloadUSec")[1]
    n_settings = busctl.get_property(C.BUS_NAME, C.BUS_PATH, C.BUS_INTERFACE, "Settings")[1]

    p = lowlatctl(env, "diff", "--json", path_b)
    t.ok(p.returncode == 0, "lowlatctl diff --json FILE: exit 0", p.stdout + p.stderr)
    doc = json.loads(p.stdout) if p.returncode == 0 else {"keys": [], "settings": [], "digest": ""}
    keys = keys_of(doc)
    want = {"[cpus] isolated": ("2-3", "1-3"), "[sysctl] kernel.numa_balancing": (None, "0"),
            '[nic "dv*"] gro': ("off", None)}
    t.ok(keys == want, "the keys: isolated 2-3 -> 1-3, kernel.numa_balancing added, the [nic] gro gone",
         json.dumps(doc["keys"], indent=1))

    rows = doc["settings"]
    added = [r for r in rows if r["change"] == "added"]
    removed = [r for r in rows if r["change"] == "removed"]
    changed = [r for r in rows if r["change"] == "changed"]
    t.ok([(r["kind"], r["object"], r["host"], r["effect"]) for r in added] ==
         [("sysctl", "kernel.numa_balancing", "1", "write")],
         "added: the sysctl alone, the host's 1 to be written", json.dumps(added, indent=1))
    t.ok(removed and all(r["object"].startswith(("dv0", "dv1")) and r["will"] is None for r in removed),
         "removed: the settings of dv0 and dv1 only (%d)" % len(removed), json.dumps(removed, indent=1))
    t.ok(all(r["effect"] in ("restore", "none", "leave") for r in removed),
         "each removed setting is restored or left, never written anew", json.dumps(removed, indent=1))
    irq = [r for r in changed if r["kind"] == "irq_affinity"]
    t.ok(changed and all(r["kind"] in ISOLATION_KINDS for r in changed) and irq and
         all(r["was"] == "0-1" and r["will"] == "0" and r["host"].split(" ")[0] == "0-1" and r["effect"] == "write" for r in irq),
         "changed: IRQ affinities 0-1 -> 0 (%d), nothing but the isolation's kinds" % len(irq),
         json.dumps(changed[:5], indent=1))
    t.ok(len(doc["digest"]) == 16, "a digest of 16 hex digits: %s" % doc["digest"])

    p = lowlatctl(env, "diff", path_b)
    t.ok(p.returncode == 0 and "[cpus] isolated" in p.stdout and "2-3 -> 1-3" in p.stdout and
         "sysctl" in p.stdout and "kernel.numa_balancing" in p.stdout and
         "--if-unchanged=%s" % doc["digest"] in p.stdout,
         "the text says the same, with the command that applies exactly this", p.stdout + p.stderr)

    after = host.snapshot()
    t.ok(before == after, "nothing in the tree was written", "\n".join(host.snapshot_diff(before, after)))
    t.ok(busctl.get_property(C.BUS_NAME, C.BUS_PATH, C.BUS_INTERFACE, "LastReloadUSec")[1] == reload_usec and
         busctl.get_property(C.BUS_NAME, C.BUS_PATH, C.BUS_INTERFACE, "Settings")[1] == n_settings,
         "and lowlatd did not reload (LastReloadUSec and Settings as before)")
    return doc["digest"]


def check_unchanged(t, env):
    p = lowlatctl(env, "diff", "--json")
    doc = json.loads(p.stdout) if p.returncode == 0 else None
    t.ok(doc is not None and doc["keys"] == [] and doc["settings"] == [],
         "diff of the files in force: no key, no setting", p.stdout + p.stderr)
    return doc["digest"] if doc else ""


def check_refusals(t, host, env, d):
    bad = os.path.join(host.tmp, "broken.conf")
    h.write_text(bad, CONFIG_BROKEN)
    p = lowlatctl(env, "diff", bad)
    t.ok(p.returncode == 1 and "broken.conf:6:" in p.stderr and "bogus_knob" in p.stderr,
         "diff of an invalid FILE: exit 1, its FILE:LINE", p.stdout + p.stderr)
    p = lowlatctl(env, "diff", os.path.join(host.tmp, "missing.conf"))
    t.ok(p.returncode == 1 and "cannot open" in p.stderr and "missing.conf" in p.stderr,
         "diff of a missing FILE: exit 1, in words", p.stderr)
    p = lowlatctl(env, "diff", user="nobody")
    t.ok(p.returncode == 1 and "diff needs root" in p.stderr, "diff as uid 65534: exit 1, needs root", p.stderr)
    p = lowlatctl(env, "reload", "--if-unchanged=xyz")
    t.ok(p.returncode == 64 and "not a digest" in p.stderr, "--if-unchanged=xyz: exit 64", p.stderr)
    p = lowlatctl(env, "status", "--if-unchanged=0123456789abcdef")
    t.ok(p.returncode == 64 and "applies to reload only" in p.stderr, "--if-unchanged with status: exit 64",
         p.stderr)


def check_reload(t, host, d, env, busctl, digest_b, path_b):
    stale = check_unchanged(t, env)
    # The file changes after that diff: the reload it was made for is refused.
    d.rewrite_config(CONFIG_A.replace("8192", "8190"))
    p = lowlatctl(env, "reload", "--if-unchanged=" + stale)
    t.ok(p.returncode == 1 and "changed since the diff" in p.stderr,
         "reload --if-unchanged with the digest of a diff made before the edit: refused, exit 1", p.stderr)
    t.ok(host.sysctl("net.core.somaxconn") == "8192", "and nothing was applied (somaxconn still 8192)")
    t.ok(busctl.get_property(C.BUS_NAME, C.BUS_PATH, C.BUS_INTERFACE, "LastReloadError")[1] == "",
         "a refusal is no failed reload (LastReloadError empty)")

    # diff FILE, then FILE put in place: the digest carries over, and the reload takes.
    shutil.copyfile(path_b, d.config_path)
    p = lowlatctl(env, "reload", "--if-unchanged=" + digest_b)
    t.ok(p.returncode == 0, "reload --if-unchanged with diff FILE's digest, FILE in place: exit 0", p.stderr)
    irq = host.irqs[20]
    ok = h.poll_until(lambda: host.sysctl("kernel.numa_balancing") == "0" and host.irq_cpus(irq) == {0},
                      h.scaled(5))
    t.ok(ok, "the new posture is on the host: numa_balancing 0, IRQ %d on CPU 0" % irq,
         repr((host.sysctl("kernel.numa_balancing"), host.irq_cpus(irq))))


def run(t):
    b.require_tools()
    if not os.environ.get("LOWLATCTL"):
        h.skip("LOWLATCTL is not set")
    if os.geteuid() != 0 or not all(shutil.which(x) for x in ("unshare", "nsenter", "ip")):
        h.skip("needs root, unshare, nsenter and ip")
    probe = subprocess.run(["unshare", "--net", "true"], capture_output=True, text=True)
    if probe.returncode != 0:
        h.skip("unshare --net failed: %s" % probe.stderr.strip())
    h.isolate_from_real_journal()
    host = h.FakeHost(ncpus=4, nirqs=50, isolated="2-3")
    bus = b.PrivateBus(host.tmp, [h.policy_path()]).start()
    env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=bus.address)
    d = NetnsDaemon(host, CONFIG_A, env={"DBUS_SYSTEM_BUS_ADDRESS": bus.address})
    d.wait_ready()
    busctl = b.Busctl(bus.address)
    busctl.require_owner(C.BUS_NAME, h.scaled(10), alive=d.alive)

    p = subprocess.run(["nsenter", "--net=/proc/%d/ns/net" % d.pid, "ip", "link", "add", "dv0", "type", "veth",
                        "peer", "name", "dv1"], capture_output=True, text=True)
    t.ok(p.returncode == 0, "a veth pair dv0/dv1 in lowlatd's namespace", p.stderr)
    ok = h.poll_until(lambda: sum(1 for s in busctl.list_settings(C.BUS_NAME, C.BUS_PATH, C.BUS_INTERFACE)
                                  if s[1].startswith("dv")) >= 2, h.scaled(10))
    t.ok(ok, "lowlatd keeps settings of both")

    path_b = os.path.join(host.tmp, "new.conf")
    h.write_text(path_b, CONFIG_B)
    digest_b = check_diff(t, host, d, env, busctl, path_b)
    check_refusals(t, host, env, d)
    check_reload(t, host, d, env, busctl, digest_b, path_b)
    d.stop()
    t.ok(not d.sanitizer_reports(), "no sanitizer reports", "\n".join(d.sanitizer_reports()))


if __name__ == "__main__":
    h.main(run)
