# SPDX-License-Identifier: LGPL-2.1-or-later
"""What a test process leaves behind and ends at exit (temporary directories, daemons,
sockets), and its early way out: skip(). The registries, the atexit hook and the SIGTERM
handler live here and nowhere else."""

import atexit
import os
import shutil
import signal
import sys
import tempfile


SKIP_RC = 77


# The package's modules register what they start here, and cleanup_all() ends it: at
# exit, on skip(), on SIGTERM and once a reexec()'s child is done. A failed check sets
# FAILED, which keeps the temporary directories for a look.
TEMPDIRS = []
DAEMONS = []
SOCKETS = []
FAILED = [False]


def cleanup_all():
    for d in list(DAEMONS):
        try:
            d.kill()
        except Exception:
            pass
    for s in list(SOCKETS):
        try:
            s.close()
        except Exception:
            pass
    keep = os.environ.get("LOWLAT_KEEP") == "1" or FAILED[0]
    for t in list(TEMPDIRS):
        if keep:
            print("# kept temporary directory %s" % t, flush=True)
        else:
            shutil.rmtree(t, ignore_errors=True)
    TEMPDIRS.clear()


atexit.register(cleanup_all)


def _on_sigterm(signum, frame):
    raise SystemExit(128 + signum)


try:
    signal.signal(signal.SIGTERM, _on_sigterm)
except ValueError:
    pass


def make_tempdir(prefix="lowlat-"):
    base = os.environ.get("TMPDIR") or "/tmp"
    # AF_UNIX paths are limited to 107 bytes; keep the directory short.
    if len(base) > 60 or not os.path.isdir(base):
        base = "/tmp"
    d = tempfile.mkdtemp(prefix=prefix, dir=base)
    os.chmod(d, 0o755)
    TEMPDIRS.append(d)
    return d


class Skip(Exception):
    pass


def skip(reason):
    """Print the reason and exit 77 (meson's 'skipped')."""
    print("1..0 # SKIP " + reason, flush=True)
    cleanup_all()
    sys.exit(SKIP_RC)
