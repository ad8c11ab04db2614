#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""lowlatd --once [--observe]: one pass, a posture report on stdout, exit 0 / 3."""

import re

import lowlat_harness as h

CONFIG = h.posture_config() + "net.ipv4.tcp_rmem = 4096 87380 16777216\n"

# --once without --observe: cpu_dma_latency is a hold for the daemon's lifetime, which a
# one-shot pass cannot give, so leave it out there.
CONFIG_NO_DMA = CONFIG.replace("[pm]\ncpu_dma_latency = 0\n", "[pm]\n")


def in_posture_host():
    return h.FakeHost(ncpus=4, nirqs=1000, isolated="2-3", irq_affinity="0-1",
                      default_affinity={0, 1}, governor="performance", dma_latency=0,
                      sysctls={"net.core.somaxconn": "8192",
                               # the kernel's own formatting: tabs
                               "net.ipv4.tcp_rmem": "4096\t87380\t16777216"})


def word(w):
    return re.compile(r"(?<![\w.\-])" + re.escape(w) + r"(?![\w\-]|\.\w)")


def lines_with(text, *words):
    rxs = [word(w) for w in words]
    return [l for l in text.splitlines() if all(r.search(l) for r in rxs)]


def run(t):
    # --- drifted tree, --observe --once
    host = in_posture_host()
    irq = host.irqs[250]
    host.set_irq_affinity(irq, "0-3")
    host.set_sysctl("net.core.somaxconn", "4096")
    host.set_governor(2, "powersave")
    config = h.write_config(host, CONFIG)
    before = host.snapshot()
    r = h.run_lowlatd(host, ["--observe", "--once"], config_path=config)
    t.note("stdout of --observe --once on a drifted tree:\n" + r.stdout[-3000:])
    t.ok(r.returncode == 3, "--observe --once exits 3 when something is off",
         "exit %d; stderr:\n%s" % (r.returncode, r.stderr[-3000:]))
    diff = host.snapshot_diff(before, host.snapshot())
    t.ok(not diff, "--observe --once writes nothing", "\n".join(diff))
    t.ok(lines_with(r.stdout, "net.core.somaxconn", "4096", "8192"),
         "the report shows net.core.somaxconn observed 4096, desired 8192")
    t.ok(lines_with(r.stdout, str(irq), "0-3", "0-1"),
         "the report shows IRQ %d observed 0-3, desired 0-1" % irq)
    name = host.irq_names[irq]
    t.ok(any(("%d %s" % (irq, name)) in l for l in lines_with(r.stdout, str(irq), "0-3")),
         "... next to its name from /proc/interrupts (%d %s)" % (irq, name), r.stdout[-1500:])
    t.ok(lines_with(r.stdout, "cpu2", "powersave", "performance"),
         "the report shows cpu2's governor powersave, desired performance")
    t.ok(r.stdout.strip() != "", "the report goes to stdout")
    san = [l for l in r.stderr.splitlines() if any(p in l for p in h.SANITIZER_PATTERNS)]
    t.ok(not san, "no sanitizer reports", "\n".join(san))

    # --- the same tree, --once (enforce): corrected, exit 0
    r = h.run_lowlatd(host, ["--once"], config_path=h.write_config(host, CONFIG_NO_DMA))
    t.ok(r.returncode == 0, "--once on a drifted tree corrects it and exits 0",
         "exit %d; stdout:\n%s\nstderr:\n%s" % (r.returncode, r.stdout[-2000:], r.stderr[-2000:]))
    t.ok(host.irq_cpus(irq) == {0, 1} and host.sysctl("net.core.somaxconn") == "8192"
         and host.governor(2) == "performance", "--once wrote the posture",
         "IRQ %r somaxconn %r cpu2 %r" % (host.irq_affinity(irq), host.sysctl("net.core.somaxconn"),
                                        host.governor(2)))

    # --- a tree already in posture
    host = in_posture_host()
    config = h.write_config(host, CONFIG)
    before = host.snapshot()
    r = h.run_lowlatd(host, ["--observe", "--once"], config_path=config)
    t.ok(r.returncode == 0, "--observe --once exits 0 when the tree already matches "
         "(tcp_rmem with tabs equals the config's spaces)",
         "exit %d; stdout:\n%s\nstderr:\n%s" % (r.returncode, r.stdout[-3000:], r.stderr[-3000:]))
    diff = host.snapshot_diff(before, host.snapshot())
    t.ok(not diff, "--observe --once writes nothing on a matching tree", "\n".join(diff))

    # default_smp_affinity off, alone
    host.write("proc/irq/default_smp_affinity", "f\n")
    before = host.snapshot()
    r = h.run_lowlatd(host, ["--observe", "--once"], config_path=config)
    t.ok(r.returncode == 3 and lines_with(r.stdout, "default_smp_affinity"),
         "--observe --once: default_smp_affinity f alone is reported, exit 3",
         "exit %d; stdout:\n%s" % (r.returncode, r.stdout[-2000:]))
    t.ok(not host.snapshot_diff(before, host.snapshot()), "... and not written")

    # dma latency off, alone
    host.write("proc/irq/default_smp_affinity", "3\n")
    host.set_dma_latency(2000000000)
    r = h.run_lowlatd(host, ["--observe", "--once"], config_path=config)
    t.ok(r.returncode == 3 and "cpu_dma_latency" in r.stdout,
         "--observe --once: cpu_dma_latency 2000000000 vs 0 is reported, exit 3",
         "exit %d; stdout:\n%s" % (r.returncode, r.stdout[-2000:]))
    t.ok(host.dma_latency() == 2000000000, "... and not written")


if __name__ == "__main__":
    h.main(run)
