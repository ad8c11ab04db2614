# SPDX-License-Identifier: LGPL-2.1-or-later
"""TAP reporting ('ok N - what', 'not ok N - what', '1..N') and main(), which runs a test
and exits 0 (pass), 1 (fail) or 77 (skip)."""

import os
import sys
import traceback

from . import cleanup
from .cleanup import SKIP_RC, Skip, cleanup_all
from .daemon import DaemonError


class TAP:
    def __init__(self, name=None):
        self.n = 0
        self.failed = 0
        self.skipped = 0
        self.name = name or os.path.basename(sys.argv[0])
        self.daemons = []

    def ok(self, cond, what, diag=None):
        self.n += 1
        if cond:
            print("ok %d - %s" % (self.n, what), flush=True)
        else:
            self.failed += 1
            cleanup.FAILED[0] = True
            print("not ok %d - %s" % (self.n, what), flush=True)
            if diag:
                for line in str(diag).splitlines():
                    print("#   " + line, flush=True)
        return bool(cond)

    def skip(self, what, reason):
        """A check this machine cannot make, said so in TAP: "ok N - what # SKIP reason"."""
        self.n += 1
        self.skipped += 1
        print("ok %d - %s # SKIP %s" % (self.n, what, reason), flush=True)

    def note(self, text):
        for line in str(text).splitlines():
            print("# " + line, flush=True)

    def stopped_cleanly(self, daemon, expect=0, what="lowlatd"):
        """SIGTERM the daemon: one check for the exit status, one for sanitizer reports."""
        try:
            rc = daemon.stop(expect=None)
            self.ok(rc == expect, "%s exits %d on SIGTERM" % (what, expect),
                    "exit status %s; stderr tail:\n%s" % (rc, daemon.stderr_tail()))
        except DaemonError as e:
            self.ok(False, "%s exits %d on SIGTERM" % (what, expect), str(e))
        rep = daemon.sanitizer_reports()
        self.ok(not rep, "%s: no sanitizer reports" % what, "\n".join(rep[:20]))
        daemon.kill()

    def finish(self):
        print("1..%d" % self.n, flush=True)
        if self.skipped:
            print("# %d of %d checks skipped" % (self.skipped, self.n), flush=True)
        if self.failed:
            print("# %d of %d checks failed" % (self.failed, self.n), flush=True)
        return 1 if self.failed else 0


def main(fn):
    """Run fn(tap) and exit 0/1/77; exceptions become a failing check."""
    t = TAP()
    rc = 1
    try:
        fn(t)
        rc = t.finish()
    except Skip as e:
        print("1..0 # SKIP %s" % e, flush=True)
        rc = SKIP_RC
    except SystemExit:
        raise
    except BaseException as e:
        tb = traceback.format_exc()
        t.ok(False, "test aborted: %s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else ""),
             tb)
        for d in list(cleanup.DAEMONS):
            t.note("stderr tail of lowlatd pid %s:\n%s" % (d.pid if d.proc else "-", d.stderr_tail(20)))
        rc = t.finish()
    cleanup_all()
    sys.exit(rc)
