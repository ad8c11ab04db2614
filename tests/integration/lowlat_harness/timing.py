# SPDX-License-Identifier: LGPL-2.1-or-later
"""Deadlines scaled by LOWLAT_TIMEOUT_SCALE, and the ways a test waits: poll_until() for
something to happen, timed() for how long it took, settle() for nothing to happen."""

import os
import time


SCALE = float(os.environ.get("LOWLAT_TIMEOUT_SCALE", "1") or "1")


def scaled(seconds):
    return seconds * SCALE


def poll_until(predicate, timeout=None, interval=0.02, alive=None,
               transient=(OSError, ValueError)):
    """Call predicate until it returns a truthy value or the deadline passes; returns
    the last value. Stops early (returning a falsy value) when alive() turns False.

    An exception in `transient` (a file caught mid-rewrite, a busctl call while the bus
    restarts) counts as "not yet"; but when the last call raised one, it is raised again:
    a predicate that cannot get its data must not read as "did not happen"."""
    timeout = scaled(5) if timeout is None else timeout
    deadline = time.monotonic() + timeout
    while True:
        error = None
        try:
            v = predicate()
        except transient as e:
            v, error = None, e
        if v:
            return v
        if time.monotonic() >= deadline or (alive is not None and not alive()):
            if error is not None:
                raise error
            return v
        time.sleep(interval)


def settle(seconds):
    """Let time pass for negative checks ("nothing happens over N scan intervals").
    Never used to wait for something to happen."""
    time.sleep(scaled(seconds))


def timed(probe, timeout, alive, interval=0.001):
    """Polls probe() every interval seconds until it is true: (ok, seconds). Gives up
    with False after timeout seconds or once alive() is false."""
    t0 = time.monotonic()
    while True:
        if probe():
            return True, time.monotonic() - t0
        if time.monotonic() - t0 > timeout or not alive():
            return False, time.monotonic() - t0
        time.sleep(interval)
