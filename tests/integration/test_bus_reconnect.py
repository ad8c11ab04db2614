#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The bus comes back whatever was replaced (lowlatd(8), the end of "D-BUS INTERFACE"):
with lowlatd connected to a private dbus-daemon (the shipped policy), the bus goes away
and comes back on the same address as
  1. a new dbus-daemon in the same directory (the daemon replaced);
  2. a dbus-daemon that listens elsewhere and whose socket is renamed into the directory
     (the socket replaced, IN_MOVED_TO);
  3. the directory removed, made again, and a new dbus-daemon in it;
  4. the directory renamed away, a new one made, and a new dbus-daemon in it;
  5. the directory removed, and made again only after lowlatd has seen it gone.
The bus goes away as on a clean stop (no socket left behind: lowlatd waits for one to
appear rather than polling). Each time lowlatd must own org.lowlatd1 again within
RECONNECT_MAX and answer a Get on the new bus. Before this change lowlatd's watch stayed
on the old directory's inode, so 3-5 never reconnected (it waited for an inotify event
that could not come)."""

import os
import shutil
import time

import busctl_harness as b
import lowlat_constants as C
import lowlat_harness as h

RECONNECT_MAX = 5.0  # from before the new dbus-daemon starts (itself a second or two here)


def make_dir(bus, config):
    os.makedirs(bus.dir, exist_ok=True)
    os.chmod(bus.dir, 0o755)
    h.write_text(bus.config_path, config)


def gone(bus, socket=None):
    """Stop dbus-daemon as a service manager would (SIGTERM: it removes its socket, so
    lowlatd waits for the socket to be made again rather than polling one that
    refuses), and give lowlatd time to see it."""
    bus.stop()
    socket = socket or bus.socket
    if os.path.exists(socket):
        os.unlink(socket)
    time.sleep(1.5)  # past lowlatd's first retry, which a quick comeback would meet


def come_back(t, d, bus, what, since):
    """Whether lowlatd owns the name on bus (serving at the usual address) within
    RECONNECT_MAX and answers a Get."""
    bc = b.Busctl("unix:path=" + os.path.join(os.path.dirname(bus.config_path), "system_bus_socket"))
    ok = bc.wait_for_owner(C.BUS_NAME, h.scaled(RECONNECT_MAX), alive=d.alive)
    took = time.monotonic() - since
    state = None
    if ok:
        try:
            state = bc.get_property(C.BUS_NAME, C.BUS_PATH, C.BUS_INTERFACE, "State")
        except b.BUS_TRANSIENT as e:
            state = repr(e)
    t.ok(ok and state not in (None, ""), "%s: lowlatd is back on the bus (%.1f s) and answers (State %r)"
         % (what, took, state), "lowlatd stderr:\n%s\nbus log:\n%s" % (d.stderr_tail(15), bus.log()))
    return ok


def run(t):
    b.require_tools()
    h.isolate_from_real_journal()
    host = h.FakeHost(ncpus=4, nirqs=50, isolated="2-3")
    bus = b.PrivateBus(host.tmp, [h.policy_path()]).start()
    config = h.read_text(bus.config_path)
    d = h.Daemon(host, h.posture_config("1s"), env=bus.env())
    d.wait_ready()
    t.ok(b.Busctl(bus.address).wait_for_owner(C.BUS_NAME, h.scaled(10), alive=d.alive),
         "lowlatd owns %s on the private bus" % C.BUS_NAME, d.stderr_tail(5))

    # 1. the daemon replaced
    gone(bus)
    since = time.monotonic()
    bus.start()
    come_back(t, d, bus, "a new dbus-daemon in the same directory", since)

    # 2. the socket replaced: a bus made elsewhere, its socket renamed into place
    gone(bus)
    other = b.PrivateBus(os.path.join(host.tmp, "elsewhere"), [h.policy_path()]).start()
    time.sleep(0.3)
    since = time.monotonic()
    os.rename(other.socket, bus.socket)
    other.config_path = bus.config_path  # where come_back() looks: the socket's new place
    come_back(t, d, other, "a socket renamed into the directory", since)
    gone(other, bus.socket)

    # 3. the directory removed and made again
    shutil.rmtree(bus.dir)
    make_dir(bus, config)
    since = time.monotonic()
    bus.start()
    come_back(t, d, bus, "the directory removed and made again", since)

    # 4. the directory renamed away, a new one in its place
    gone(bus)
    os.rename(bus.dir, bus.dir + ".old")
    make_dir(bus, config)
    since = time.monotonic()
    bus.start()
    come_back(t, d, bus, "the directory renamed away and a new one made", since)

    # 5. the directory gone for a while (lowlatd notices), then made again
    gone(bus)
    shutil.rmtree(bus.dir)
    time.sleep(1.5)
    make_dir(bus, config)
    since = time.monotonic()
    bus.start()
    come_back(t, d, bus, "the directory made again after a while", since)

    t.ok(d.alive(), "lowlatd kept running", d.stderr_tail(10))
    t.stopped_cleanly(d)
    bus.kill()


if __name__ == "__main__":
    h.main(run)
