# SPDX-License-Identifier: LGPL-2.1-or-later
"""Integration-test harness for lowlatd (Python 3 standard library only).

Every test runs lowlatd against a fake host tree under --root in a temporary directory;
nothing here touches the machine's real /proc/irq, sysctls or network interfaces.

Tests write `import lowlat_harness as h` and use the names below; each module owns one
piece:
  cleanup     temporary directories and what is ended at exit; skip() (exit 77)
  timing      LOWLAT_TIMEOUT_SCALE, poll_until(), settle(), timed()
  files       in-place reads and writes
  cpus        CPU lists and masks, possible_cpus()
  fakehost    FakeHost: ROOT/proc, ROOT/sys, ROOT/dev as the spec lays them out
  datagram    the AF_UNIX datagram receiver under the two sockets below
  notify      NotifySocket, playing systemd's NOTIFY_SOCKET
  journal     JournalSocket, a fake /run/systemd/journal/socket (private mount namespace
              only); isolate_from_real_journal()
  namespaces  reexec(), private mount namespaces, mount() and unmount_all()
  network     network namespaces, veth pairs, run_cmd()
  daemon      Daemon (lowlatd started on a FakeHost with a config), run_lowlatd(), LiveRoot
  tap         TAP ("ok N - what" / "not ok N - what"; exit 0 / 1 / 77) and main()
  bench       what only tests/bench uses

Environment (tests/integration/meson.build sets it; to run a test by hand, set PYTHONPATH
to this package's parent directory and tests/ as meson does):
  PYTHONPATH             tests/integration (the harnesses) and tests/ (lowlat_constants)
  LOWLATD                path of the lowlatd binary (meson sets it)
  LOWLATD_SOURCE_ROOT    source tree (fallback: <root>/build/daemon/lowlatd)
  LOWLAT_TIMEOUT_SCALE   multiply every deadline (e.g. 3 under ASan/valgrind)
  LOWLAT_KEEP=1          keep the temporary directories for inspection
"""

from .bench import bench_main, bench_reexec_in_netns, percentile, report_vs_floor
from .cleanup import SKIP_RC, Skip, make_tempdir, skip
from .cpus import (
    format_cpulist, format_mask, mask_to_set, parse_cpulist, parse_mask, possible_cpus,
    set_to_mask,
)
from .daemon import (
    SANITIZER_PATTERNS, Daemon, DaemonError, LiveRoot, escape_root, lowlatd_path,
    originals_path, policy_path, posture_config, run_lowlatd, source_root, write_config,
)
from .fakehost import DEFAULT_SYSCTLS, IRQ, X86_SUMMARY_LINES, FakeHost
from .files import normalise_ws, read_text, write_bytes, write_text
from .journal import (
    JOURNAL_SOCKET, MID, JournalEntry, JournalSocket, isolate_from_real_journal,
    parse_journal_native,
)
from .namespaces import (
    PRIVATE_MNT_ENV, detach_inherited_fakeirqfs, enter_private_mount_namespace,
    in_private_mount_namespace, mount, reexec, require_root, unmount_all,
)
from .network import (
    NETNS_SYSFS, NETNS_UNSHARE, add_veth, add_veths, bind_into_root, netns, reexec_in_netns,
    run_cmd, setup_netns,
)
from .notify import NotifySocket
from .tap import TAP, main
from .timing import SCALE, poll_until, scaled, settle, timed

__all__ = [
    "DEFAULT_SYSCTLS", "Daemon", "DaemonError", "FakeHost", "IRQ", "JOURNAL_SOCKET",
    "JournalEntry", "JournalSocket", "LiveRoot", "MID", "NETNS_SYSFS", "NETNS_UNSHARE",
    "NotifySocket", "PRIVATE_MNT_ENV", "SANITIZER_PATTERNS", "SCALE", "SKIP_RC", "Skip", "TAP",
    "X86_SUMMARY_LINES", "add_veth", "add_veths", "bench_main", "bench_reexec_in_netns",
    "bind_into_root", "detach_inherited_fakeirqfs", "enter_private_mount_namespace",
    "format_cpulist", "format_mask", "in_private_mount_namespace", "isolate_from_real_journal",
    "lowlatd_path", "main", "make_tempdir", "mask_to_set", "mount", "netns", "normalise_ws",
    "parse_cpulist", "parse_journal_native", "parse_mask", "percentile", "policy_path",
    "poll_until", "possible_cpus", "posture_config", "read_text", "reexec", "reexec_in_netns",
    "report_vs_floor", "require_root", "run_cmd", "run_lowlatd", "scaled", "set_to_mask",
    "settle", "setup_netns", "skip", "source_root", "timed", "unmount_all", "write_bytes",
    "write_config", "write_text",
]
