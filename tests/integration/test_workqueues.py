#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""workqueue_cpumask: with [cpus] workqueues = housekeeping the real daemon writes the
mask for all unbound workqueues and each workqueue's cpumask under
sys/devices/virtual/workqueue of a fake tree, reverts a write at once (inotify), gives a
workqueue that appears later the mask at the next scan, leaves a read-only cpumask alone
(unmovable, reported once), and puts every mask back on exit (restore_on_exit); in observe
mode it writes nothing."""

import os

import lowlat_harness as h

CONFIG = """\
[daemon]
scan_interval = 1s
restore_on_exit = yes

[cpus]
isolated = 2-3
workqueues = housekeeping
"""

WQ = "sys/devices/virtual/workqueue"
HOUSEKEEPING_MASK = 0x3


def run(t):
    h.isolate_from_real_journal()
    host = h.FakeHost(ncpus=4, nirqs=20, isolated="2-3")
    for rel in ("cpumask", "writeback/cpumask", "blkcg_punt_bio/cpumask"):
        os.makedirs(os.path.dirname(host.path("%s/%s" % (WQ, rel))), exist_ok=True)
        host.write("%s/%s" % (WQ, rel), "f\n")
    os.makedirs(host.path(WQ + "/mm_percpu_wq"))
    host.write(WQ + "/mm_percpu_wq/per_cpu", "1\n")

    def mask(rel):
        return h.parse_mask(host.read("%s/%s" % (WQ, rel)))

    def on_housekeeping(*rels):
        return all(mask(r) == HOUSEKEEPING_MASK for r in rels)

    d = h.Daemon(host, CONFIG, extra_args=["--observe"])
    d.wait_ready()
    t.ok(all(mask(r) == 0xf for r in ("cpumask", "writeback/cpumask")), "--observe: no mask is written")
    t.ok(any("workqueue writeback" in l and "drift" in l for l in d.stderr_lines()),
         "--observe: the drift is reported", d.stderr_tail())
    t.stopped_cleanly(d)

    d = h.Daemon(host, CONFIG)
    d.wait_ready()
    t.ok(on_housekeeping("cpumask", "writeback/cpumask", "blkcg_punt_bio/cpumask"),
         "at READY=1 the mask for all and each workqueue's hold housekeeping (0-1)",
         repr({r: host.read("%s/%s" % (WQ, r)) for r in ("cpumask", "writeback/cpumask")}))

    host.write(WQ + "/writeback/cpumask", "c\n")
    t.ok(d.poll_until(lambda: on_housekeeping("writeback/cpumask"), h.scaled(5)),
         "a write of c (CPUs 2-3) to writeback's cpumask is reverted", d.stderr_tail())

    os.makedirs(host.path(WQ + "/nvme-wq"))
    host.write(WQ + "/nvme-wq/cpumask", "f\n")
    t.ok(d.poll_until(lambda: on_housekeeping("nvme-wq/cpumask"), h.scaled(5)),
         "a workqueue that appears gets the mask at the next scan", d.stderr_tail())

    os.makedirs(host.path(WQ + "/ro-wq"))
    host.write(WQ + "/ro-wq/cpumask", "f\n")
    os.chmod(host.path(WQ + "/ro-wq/cpumask"), 0o444)
    reported = d.poll_until(lambda: any("workqueue ro-wq" in l and "read-only" in l for l in d.stderr_lines()),
                            h.scaled(5))
    t.ok(reported and mask("ro-wq/cpumask") == 0xf, "a read-only cpumask is reported and left alone", d.stderr_tail())
    h.settle(2.5)
    t.ok(sum("workqueue ro-wq is unmovable" in l for l in d.stderr_lines()) == 1, "reported once over several scans",
         d.stderr_tail())

    d.stop()  # restore_on_exit
    t.ok(all(mask(r) == 0xf for r in ("cpumask", "writeback/cpumask", "blkcg_punt_bio/cpumask", "nvme-wq/cpumask")),
         "restore_on_exit puts every mask back to f",
         repr({r: host.read("%s/%s" % (WQ, r)) for r in ("cpumask", "writeback/cpumask", "nvme-wq/cpumask")}))


if __name__ == "__main__":
    h.main(run)
