#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""lowlatctl suggest on captured topologies in fake trees (--root), through the real
program:

- a 2-socket Xeon with SMT and a NIC on node 1: whole cores of node 1, not its first one,
  nothing of node 0; the NIC's IRQs on node 1's housekeeping CPUs;
- a 1-socket 8-core host without SMT: half of cores 2-7 (CPU 0 and a second CPU stay);
- a 2-CPU VM, and a host of two SMT siblings: refused, saying why (exit 78);
- a 64-core host with 8 NUMA nodes and two NICs on nodes 2 and 5: cores on both nodes,
  each NIC's IRQs on its own node; --cores 4 takes them from the first NIC's node;
- a host whose boot isolated CPUs 2-3: isolated = auto, and a word when they split a core;
- --cores beyond what may be given, an unknown --nic: exit 64;
- --write: a drop-in beside --config, valid with lowlatd --check-config on that tree, and
  never written over; --profile names a profile in it."""

import json
import os
import subprocess

import lowlat_harness as h

SOURCE = os.environ.get("LOWLATD_SOURCE_ROOT", os.path.join(os.path.dirname(__file__), "..", ".."))
ENV = {"LOWLATD_PROFILES_DIR": os.path.join(SOURCE, "conf", "profiles")}


def write(root, rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def topology(tmp, name, packages, cores, smt, nodes_per_package=1, isolated=(), nics=None):
    """A tree with packages x cores x smt CPUs numbered as Linux does on x86 (the first
    thread of every core, then the second ones), nodes_per_package NUMA nodes per package,
    and NICs {name: node}. Returns the root."""
    root = os.path.join(tmp, name)
    n_cores = packages * cores
    n = n_cores * smt
    node_cpus = {}
    for core in range(n_cores):
        package = core // cores
        node = package * nodes_per_package + (core % cores) * nodes_per_package // cores
        siblings = [core + k * n_cores for k in range(smt)]
        for cpu in siblings:
            d = "sys/devices/system/cpu/cpu%d/topology/" % cpu
            write(root, d + "thread_siblings_list", h.format_cpulist(siblings) + "\n")
            write(root, d + "physical_package_id", "%d\n" % package)
            write(root, d + "core_id", "%d\n" % (core % cores))
            node_cpus.setdefault(node, []).append(cpu)
    for f in ("online", "possible", "present"):
        write(root, "sys/devices/system/cpu/" + f, "0-%d\n" % (n - 1))
    write(root, "sys/devices/system/cpu/isolated", h.format_cpulist(isolated) + "\n")
    write(root, "sys/devices/system/cpu/nohz_full", "(null)\n")
    write(root, "sys/devices/system/node/online", h.format_cpulist(node_cpus) + "\n")
    for node, cpus in node_cpus.items():
        write(root, "sys/devices/system/node/node%d/cpulist" % node, h.format_cpulist(cpus) + "\n")
    for nic, node in (nics or {}).items():
        write(root, "sys/class/net/%s/device/numa_node" % nic, "%d\n" % node)
    return root


def suggest(root, *args):
    env = dict(os.environ, **ENV)
    return subprocess.run([os.environ["LOWLATCTL"], "suggest", "--root", root] + list(args),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, timeout=h.scaled(30))


def as_json(t, p, what):
    try:
        return json.loads(p.stdout)
    except ValueError:
        t.ok(False, "%s: JSON" % what, "exit %d\n%s\n%s" % (p.returncode, p.stdout, p.stderr))
        return None


def run(t):
    tmp = h.make_tempdir("lowlat-suggest-")

    # A 2-socket Xeon, 8 cores a socket, SMT: node 0 CPUs 0-7,16-23, node 1 8-15,24-31.
    xeon = topology(tmp, "xeon", 2, 8, 2, nics={"eth2": 1})
    p = suggest(xeon, "--nic", "eth2", "--json")
    j = as_json(t, p, "xeon")
    if j:
        t.ok(j["isolated"] == "9-11,25-27" and j["from_boot"] is False,
             "2-socket SMT, NIC on node 1: three whole cores of node 1 (9-11 and their siblings 25-27)", repr(j))
        t.ok(j["nics"] == [{"name": "eth2", "node": 1, "irq_cpus": "8,12-15,24,28-31"}],
             "eth2's IRQs on node 1's housekeeping CPUs", repr(j["nics"]))
        t.ok(j["boot_args"] == "isolcpus=managed_irq,domain,9-11,25-27 nohz_full=9-11,25-27 rcu_nocbs=9-11,25-27",
             "the boot line for them", j["boot_args"])
    p = suggest(xeon, "--nic", "eth2")
    t.ok(p.returncode == 0 and "isolated = 9-11,25-27" in p.stdout and "[nic \"eth2\"]" in p.stdout and
         "# NIC eth2 is on NUMA node 1." in p.stdout and "9,25 10,26 11,27" in p.stdout and
         "2 packages, 16 cores, 32 CPUs (2 per core), 2 NUMA nodes" in p.stdout,
         "the text says the topology, the cores and why", p.stdout + p.stderr)

    # One socket, 8 cores, no SMT.
    small = topology(tmp, "eight", 1, 8, 1)
    j = as_json(t, suggest(small, "--json"), "eight")
    t.ok(j and j["isolated"] == "2-4" and j["housekeeping"] == "0-1,5-7",
         "8 cores without SMT: CPU 0 and a second CPU stay, half of 2-7 isolated", repr(j))

    # Too small.
    for name, packages, cores, smt in (("vm2", 1, 2, 1), ("siblings", 1, 1, 2)):
        root = topology(tmp, name, packages, cores, smt)
        p = suggest(root)
        t.ok(p.returncode == 78 and "too small to isolate anything" in p.stderr and p.stdout == "",
             "%s: refused (exit 78), saying why" % name, "exit %d\n%s%s" % (p.returncode, p.stdout, p.stderr))

    # 64 cores on 8 NUMA nodes (2 packages of 4 nodes), NICs on nodes 2 and 5.
    big = topology(tmp, "big", 2, 32, 1, nodes_per_package=4, nics={"ens1": 2, "ens2": 5})
    j = as_json(t, suggest(big, "--nic", "ens1", "--nic", "ens2", "--json"), "big")
    if j:
        t.ok(j["isolated"] == "17-19,41-43", "8 nodes, NICs on 2 and 5: three cores on each of their nodes", repr(j))
        t.ok([n["irq_cpus"] for n in j["nics"]] == ["16,20-23", "40,44-47"], "each NIC's IRQs on its own node",
             repr(j["nics"]))
    j = as_json(t, suggest(big, "--nic", "ens1", "--nic", "ens2", "--cores", "4", "--json"), "big --cores 4")
    t.ok(j and j["isolated"] == "17-20", "--cores 4: from the first NIC's node", repr(j))
    p = suggest(big, "--nic", "ens1", "--cores", "9")
    t.ok(p.returncode == 64 and "only 7 whole cores" in p.stderr, "--cores beyond what node 2 can give: exit 64",
         p.stderr)
    p = suggest(big, "--nic", "nope0")
    t.ok(p.returncode == 64 and "no such network interface" in p.stderr, "an unknown --nic: exit 64", p.stderr)

    # The boot isolated 2-3 already (on a 4-CPU VM, and splitting a core on an SMT host).
    booted = topology(tmp, "booted", 1, 4, 1, isolated=[2, 3])
    p = suggest(booted)
    t.ok(p.returncode == 0 and "isolated = auto" in p.stdout and "The CPUs the boot isolated (2-3)" in p.stdout and
         "split a core" not in p.stdout, "the boot isolated 2-3: isolated = auto", p.stdout + p.stderr)
    split = topology(tmp, "split", 1, 4, 2, isolated=[2, 3])
    p = suggest(split)
    t.ok(p.returncode == 0 and "They split a core" in p.stdout, "boot isolation that splits cores: said",
         p.stdout)

    # --write: a drop-in beside --config, checked; never over an earlier one.
    conf = os.path.join(tmp, "etc", "lowlatd.conf")
    write(tmp, "etc/lowlatd.conf", "[daemon]\nmode = observe\n")
    p = suggest(small, "--config", conf, "--profile", "cpu-partitioning", "--write")
    dropin = os.path.join(tmp, "etc", "lowlatd.conf.d", "50-lowlatctl-suggest.conf")
    t.ok(p.returncode == 0 and os.path.exists(dropin) and "the configuration with it is valid" in p.stderr,
         "--write: the drop-in written and the configuration checked", p.stdout + p.stderr)
    if os.path.exists(dropin):
        with open(dropin) as f:
            text = f.read()
        t.ok(text == p.stdout and "profile = cpu-partitioning" in text and "isolated = 2-4" in text,
             "it holds what was printed, the profile named", text)
        r = subprocess.run([h.lowlatd_path(), "--root", small, "--config", conf, "--check-config"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           env=dict(os.environ, **ENV), timeout=h.scaled(30))
        t.ok(r.returncode == 0 and "profile cpu-partitioning" in r.stdout,
             "lowlatd --check-config on that tree takes it", r.stdout + r.stderr)
    p = suggest(small, "--config", conf, "--write")
    t.ok(p.returncode == 1 and "File exists" in p.stderr, "a second --write is refused: never over a file",
         p.stderr)


if __name__ == "__main__":
    h.main(run)
