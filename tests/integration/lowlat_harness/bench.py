# SPDX-License-Identifier: LGPL-2.1-or-later
"""What only the benchmarks (tests/bench) use: figures printed, not TAP; their exit and
their network namespaces."""

import shutil
import sys

from .cleanup import SKIP_RC, Skip, skip
from .namespaces import require_root
from .network import reexec_netns, unshare_netns
from .timing import scaled


def percentile(values, p):
    """The p-th percentile of values (nearest rank, no interpolation)."""
    v = sorted(values)
    return v[min(len(v) - 1, int(len(v) * p / 100))]


def report_vs_floor(floor_what, floor, what, samples, missed, fights, noun, bare_what=None, bare=None):
    """The end of a benchmark of corrections (seconds in samples, missed the changes not
    put back within scaled(2) s, fights lowlatd's "another writer" lines, noun what was
    changed): a FAIL line and 1 when any was missed, any fight reported or nothing
    measured; else the p50 and p99 (us) of floor and samples after their labels, their
    ratio, and 0. With bare (a bare corrector's samples, timed the same way: a second
    floor, as a correction is two notifications where the floor is one), its figures too
    and lowlatd's ratio to it."""
    if missed or fights or not samples or (bare is not None and not bare):
        print("FAIL: %d of %d %s not put back within %.0f s; %d fight reports%s"
              % (missed, missed + len(samples), noun, scaled(2), len(fights),
                 "; the bare corrector put nothing back" if bare is not None and not bare else ""))
        return 1
    f50, f99 = 1e6 * percentile(floor, 50), 1e6 * percentile(floor, 99)
    c50, c99 = 1e6 * percentile(samples, 50), 1e6 * percentile(samples, 99)
    print("%s: p50 %.0f us, p99 %.0f us" % (floor_what, f50, f99))
    if bare is not None:
        b50, b99 = 1e6 * percentile(bare, 50), 1e6 * percentile(bare, 99)
        print("%s: p50 %.0f us, p99 %.0f us" % (bare_what, b50, b99))
    print("%s: p50 %.0f us, p99 %.0f us" % (what, c50, c99))
    print("ratio lowlatd / floor: p50 %.2fx, p99 %.2fx" % (c50 / f50, c99 / f99))
    if bare is not None:
        print("ratio lowlatd / bare corrector: p50 %.2fx, p99 %.2fx" % (c50 / b50, c99 / b99))
        print("ratio bare corrector / floor: p50 %.2fx, p99 %.2fx" % (b50 / f50, b99 / f99))
    return 0


def bench_main(fn):
    """Exit with fn()'s status; a Skip prints "SKIP: reason" and exits 77."""
    try:
        sys.exit(fn())
    except Skip as e:
        print("SKIP: %s" % e)
        sys.exit(SKIP_RC)


def bench_reexec_in_netns(ns_env):
    """reexec_in_netns() for the benchmarks (tests/bench): the same namespaces, with their
    shorter skip reasons; they need unshare, ip and mount."""
    require_root("network namespaces and veth")
    if not all(shutil.which(x) for x in ("unshare", "ip", "mount")):
        skip("needs unshare, ip and mount")
    argv0, failure = unshare_netns()
    if failure is not None:
        skip("unshare --net --mount failed")
    reexec_netns(argv0, ns_env, None, ())
