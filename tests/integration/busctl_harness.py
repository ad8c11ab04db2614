#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A private system bus for lowlatd's bus tests, and the real busctl to look at it
(Python 3 standard library only; no D-Bus bindings are needed).

  PrivateBus   dbus-daemon with a system-bus-like config (<type>system</type>, EXTERNAL
               auth, the deny-by-default policy of /usr/share/dbus-1/system.conf) that
               <include>s the project's conf/org.lowlatd1.conf, listening on a unix
               socket in a temporary directory. restart() brings a new daemon up on the
               same address.
  Busctl       busctl --address=...; as root or, with user=65534, through setpriv.
  Monitor      busctl --json=short monitor in a thread; signals as dicts.
  Unprivileged the setpriv prefix for uid/gid 65534 with no supplementary groups.

Environment: as lowlat_harness (LOWLAT_TIMEOUT_SCALE, LOWLAT_KEEP).
"""

import atexit
import json
import os
import select
import shutil
import signal
import subprocess
import threading
import time
import xml.etree.ElementTree as ET

import lowlat_constants as C
import lowlat_harness as h

NOBODY = 65534

SYSTEM_BUS_CONFIG = """\
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<!-- Modelled on /usr/share/dbus-1/system.conf: the same type, authentication and default
     policy, so that root gets no more than a real system bus gives it and the project's
     policy file decides who may own org.lowlatd1 and call what. -->
<busconfig>
  <type>system</type>
  <listen>unix:path={socket}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <deny own="*"/>
    <deny send_type="method_call"/>
    <allow send_type="signal"/>
    <allow send_requested_reply="true" send_type="method_return"/>
    <allow send_requested_reply="true" send_type="error"/>
    <allow receive_type="method_call"/>
    <allow receive_type="method_return"/>
    <allow receive_type="error"/>
    <allow receive_type="signal"/>
    <allow send_destination="org.freedesktop.DBus"
           send_interface="org.freedesktop.DBus"/>
    <allow send_destination="org.freedesktop.DBus"
           send_interface="org.freedesktop.DBus.Introspectable"/>
    <allow send_destination="org.freedesktop.DBus"
           send_interface="org.freedesktop.DBus.Properties"/>
    <deny send_destination="org.freedesktop.DBus"
          send_interface="org.freedesktop.DBus"
          send_member="UpdateActivationEnvironment"/>
    <deny send_destination="org.freedesktop.DBus"
          send_interface="org.freedesktop.DBus.Debug.Stats"/>
  </policy>
  <!-- busctl monitor (BecomeMonitor) is root-only, as on the real system bus. -->
  <policy user="root">
    <allow send_destination="org.freedesktop.DBus"
           send_interface="org.freedesktop.DBus.Monitoring"/>
  </policy>
{includes}
</busconfig>
"""

_BUSES = []
_MONITORS = []


def _cleanup():
    for m in list(_MONITORS):
        m.close()
    for b in list(_BUSES):
        b.kill()


atexit.register(_cleanup)


def require_tools():
    """Skip (77) with a reason unless everything the bus tests need is here."""
    if os.geteuid() != 0:
        h.skip("needs root (setpriv to uid %d, busctl monitor)" % NOBODY)
    for tool in ("dbus-daemon", "busctl", "setpriv"):
        if not shutil.which(tool):
            h.skip("%s is not installed" % tool)


def unprivileged():
    return ["setpriv", "--reuid=%d" % NOBODY, "--regid=%d" % NOBODY, "--clear-groups", "--"]


class BusError(Exception):
    pass


# What a call may raise while a bus is (re)starting, for polls that wait it out.
BUS_TRANSIENT = (BusError, ValueError, subprocess.TimeoutExpired)


class PrivateBus:
    def __init__(self, tmpdir, policy_files=()):
        self.dir = os.path.join(tmpdir, "bus")
        os.makedirs(self.dir, exist_ok=True)
        # uid 65534 must reach the socket.
        os.chmod(self.dir, 0o755)
        self.socket = os.path.join(self.dir, "system_bus_socket")
        self.address = "unix:path=" + self.socket
        self.config_path = os.path.join(self.dir, "system.conf")
        for p in policy_files:
            if not os.path.isfile(p):
                raise BusError("policy file %s does not exist" % p)
        includes = "\n".join('  <include ignore_missing="no">%s</include>' % os.path.abspath(p)
                             for p in policy_files)
        h.write_text(self.config_path, SYSTEM_BUS_CONFIG.format(socket=self.socket,
                                                                includes=includes))
        self.proc = None
        self.generation = 0
        _BUSES.append(self)

    def start(self, timeout=None):
        timeout = h.scaled(10) if timeout is None else timeout
        try:
            os.unlink(self.socket)
        except FileNotFoundError:
            pass
        self.generation += 1
        self.log_path = os.path.join(self.dir, "dbus-daemon.%d.log" % self.generation)
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(
                ["dbus-daemon", "--config-file=" + self.config_path, "--nofork", "--nopidfile",
                 "--nosyslog", "--print-address=1"],
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=log)
        # The address is printed once the socket listens.
        r, _, _ = select.select([self.proc.stdout], [], [], timeout)
        line = self.proc.stdout.readline().decode(errors="replace").strip() if r else ""
        self.proc.stdout.close()
        if not line.startswith("unix:"):
            self.kill()
            raise BusError("dbus-daemon did not start (printed %r); log:\n%s" % (line, self.log()))
        os.chmod(self.socket, 0o666)
        return self

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def stop(self, sig=signal.SIGTERM):
        if self.alive():
            self.proc.send_signal(sig)
            try:
                self.proc.wait(h.scaled(10))
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def kill(self):
        self.stop(signal.SIGKILL)

    def restart(self):
        self.stop()
        return self.start()

    def log(self):
        try:
            return h.read_text(self.log_path)
        except (OSError, AttributeError):
            return ""

    def env(self):
        """Environment additions for a client or for lowlatd (sd_bus_open_system)."""
        return {"DBUS_SYSTEM_BUS_ADDRESS": self.address}


class Busctl:
    """busctl --address=ADDRESS ..., as root or as `user` (65534) via setpriv."""

    def __init__(self, address, user=None):
        self.address = address
        self.prefix = unprivileged() if user == NOBODY else []
        if user not in (None, 0, NOBODY):
            raise ValueError("only root and %d are supported" % NOBODY)

    def run(self, *args, timeout=None):
        argv = self.prefix + ["busctl", "--address=" + self.address, "--no-pager"] + list(args)
        return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, errors="replace",
                              timeout=timeout or h.scaled(30))

    def json(self, *args):
        p = self.run("--json=short", *args)
        if p.returncode != 0:
            raise BusError("busctl %s: exit %d: %s" % (" ".join(args), p.returncode,
                                                       p.stderr.strip()))
        return json.loads(p.stdout)

    def call(self, service, path, interface, member, signature=None, *args):
        argv = ["call", service, path, interface, member]
        if signature:
            argv += [signature] + [str(a) for a in args]
        return self.json(*argv)

    def get_all(self, service, path, interface):
        """{name: value} from Properties.GetAll (values as busctl's JSON gives them)."""
        out = self.call(service, path, "org.freedesktop.DBus.Properties", "GetAll", "s", interface)
        if out.get("type") != "a{sv}":
            raise BusError("GetAll returned type %r" % out.get("type"))
        return {k: v["data"] for k, v in out["data"][0].items()}

    def get_all_typed(self, service, path, interface):
        out = self.call(service, path, "org.freedesktop.DBus.Properties", "GetAll", "s", interface)
        return {k: (v["type"], v["data"]) for k, v in out["data"][0].items()}

    def get_property(self, service, path, interface, name):
        """(type, value) of one property, through busctl get-property."""
        out = self.json("get-property", service, path, interface, name)
        return out["type"], out["data"]

    def has_owner(self, name):
        """Whether name has an owner. Raises BusError when the bus cannot be asked: "could
        not ask" is not "nobody owns it"."""
        out = self.call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                        "NameHasOwner", "s", name)
        return out["data"] == [True]

    def wait_for_owner(self, name, timeout, alive=None):
        """True once name has an owner, False at the deadline; a bus that still cannot be
        asked at the deadline raises (a restarting bus may refuse a few calls before)."""
        return h.poll_until(lambda: self.has_owner(name), timeout, interval=0.1, alive=alive,
                            transient=BUS_TRANSIENT)

    def require_owner(self, name, timeout, alive=None):
        """wait_for_owner() for tests that cannot go on without the name: raises BusError."""
        if not self.wait_for_owner(name, timeout, alive=alive):
            raise BusError("%s has no owner on %s after %.1fs" % (name, self.address, timeout))

    def list_settings(self, service, path, interface):
        """ListSettings() as [(kind, object, desired, observed, state)] (the sixth field,
        an IRQ's name, is in list_settings_labels()); raises BusError."""
        return [r[:5] for r in self.list_settings_labels(service, path, interface)]

    def list_settings_labels(self, service, path, interface):
        """ListSettings() as [(kind, object, desired, observed, state, label)]."""
        out = self.call(service, path, interface, "ListSettings")
        if out.get("type") != "a(ssssss)":
            raise BusError("ListSettings returned type %r" % out.get("type"))
        return [tuple(r) for r in out["data"][0]]

    def introspect(self, service, path):
        """Parsed introspection XML: {interface: {"methods": {name: (in, out)},
        "properties": {name: (type, access, emits)}, "signals": {name: sig}}}."""
        p = self.run("introspect", "--xml-interface", service, path)
        if p.returncode != 0:
            raise BusError("busctl introspect: exit %d: %s" % (p.returncode, p.stderr.strip()))
        text = p.stdout
        # busctl prints the XML; strip the DOCTYPE, which ElementTree does not need.
        root = ET.fromstring(text[text.index("<node"):])
        out = {}
        for iface in root.findall("interface"):
            emits_default = "true"
            for a in iface.findall("annotation"):
                if a.get("name") == "org.freedesktop.DBus.Property.EmitsChangedSignal":
                    emits_default = a.get("value")
            d = {"methods": {}, "properties": {}, "signals": {}}
            for m in iface.findall("method"):
                ins = "".join(a.get("type") for a in m.findall("arg") if a.get("direction", "in") == "in")
                outs = "".join(a.get("type") for a in m.findall("arg") if a.get("direction") == "out")
                d["methods"][m.get("name")] = (ins, outs)
            for pr in iface.findall("property"):
                emits = emits_default
                for a in pr.findall("annotation"):
                    if a.get("name") == "org.freedesktop.DBus.Property.EmitsChangedSignal":
                        emits = a.get("value")
                d["properties"][pr.get("name")] = (pr.get("type"), pr.get("access"), emits)
            for s in iface.findall("signal"):
                d["signals"][s.get("name")] = "".join(a.get("type") for a in s.findall("arg"))
            out[iface.get("name")] = d
        return out


class Monitor:
    """busctl --json=short monitor: every message on the bus, parsed, in a thread.

    A line it could not parse, or busctl exiting before close(), makes every later look at
    the messages raise: "no such signal" must not pass on a monitor that stopped seeing."""

    def __init__(self, address):
        self.proc = subprocess.Popen(
            ["busctl", "--address=" + address, "--json=short", "--no-pager", "monitor"],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self._messages = []
        self.unparsed = []
        self.closed = False
        self.cond = threading.Condition()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        _MONITORS.append(self)

    def _run(self):
        for raw in self.proc.stdout:
            line = raw.decode(errors="replace").strip()
            if not line.startswith("{"):
                continue  # "Monitoring bus message stream."
            try:
                msg = json.loads(line)
            except ValueError as e:
                with self.cond:
                    self.unparsed.append("%s: %r" % (e, line[:200]))
                continue
            with self.cond:
                self._messages.append(msg)
                self.cond.notify_all()

    def _check(self):
        if self.unparsed:
            raise BusError("busctl monitor printed %d line(s) that are not JSON, first: %s"
                           % (len(self.unparsed), self.unparsed[0]))
        if not self.closed and self.proc.poll() is not None:
            raise BusError("busctl monitor exited with %s: %s"
                           % (self.proc.returncode, self.proc.stderr.read().decode(errors="replace")))

    @property
    def messages(self):
        """Every message seen so far (raises, see above)."""
        with self.cond:
            self._check()
            return list(self._messages)

    def wait_started(self, busctl, timeout=None):
        """The monitor sees its own traffic only once it is installed: poke the bus until a
        message of ours shows up, so that nothing emitted afterwards is missed."""
        marker = C.BUS_NAME + ".test-marker"

        def seen():
            busctl.has_owner(marker)
            with self.cond:
                return any(m.get("member") == "NameHasOwner" and
                           m.get("payload", {}).get("data") == [marker]
                           for m in self._messages)
        return h.poll_until(seen, timeout or h.scaled(10), interval=0.1, transient=BUS_TRANSIENT)

    def mark(self):
        with self.cond:
            self._check()
            return len(self._messages)

    def signals(self, since=0, path=None, interface=None, member=None):
        msgs = self.messages[since:]
        return [m for m in msgs if m.get("type") == "signal"
                and (path is None or m.get("path") == path)
                and (interface is None or m.get("interface") == interface)
                and (member is None or m.get("member") == member)]

    def wait_for(self, predicate, since=0, timeout=None):
        """Waits until predicate(list of messages since `since`) is truthy; returns it."""
        deadline = time.monotonic() + (h.scaled(5) if timeout is None else timeout)
        with self.cond:
            while True:
                self._check()
                v = predicate(self._messages[since:])
                if v:
                    return v
                left = deadline - time.monotonic()
                if left <= 0:
                    return v
                self.cond.wait(min(left, 0.2))

    def close(self):
        self.closed = True
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self in _MONITORS:
            _MONITORS.remove(self)


class SettingsView:
    """lowlatd's ListSettings on a private bus, for tests whose subject is something else
    (FUSE, NICs) and that look at the daemon's view on the side.

    Without dbus-daemon or busctl there is no view: `available` is False, `why` says so,
    and the caller reports its bus checks as skipped (TAP.skip). Anything else that goes
    wrong (the bus does not start, lowlatd does not take its name, a call fails) raises and
    fails the test: a broken ListSettings must not pass as "nothing to check"."""

    def __init__(self, tmpdir):
        missing = [x for x in ("dbus-daemon", "busctl") if not shutil.which(x)]
        self.why = "%s not installed" % " and ".join(missing) if missing else None
        self.bus = self.bc = None
        if missing:
            return
        self.bus = PrivateBus(tmpdir, [h.policy_path()]).start()
        self.bc = Busctl(self.bus.address)

    @property
    def available(self):
        return self.bc is not None

    def env(self):
        """For h.Daemon(env=...): lowlatd's system bus is the private one."""
        return self.bus.env() if self.bus else {}

    def wait_owner(self, d, timeout):
        if self.available:
            self.bc.require_owner(C.BUS_NAME, timeout, alive=d.alive)

    def rows(self):
        """[(kind, object, desired, observed, state)]; raises BusError."""
        if not self.available:
            raise BusError("no private bus (%s): check view.available first" % self.why)
        return self.bc.list_settings(C.BUS_NAME, C.BUS_PATH, C.BUS_INTERFACE)

    def lowlatctl_restore(self):
        """`lowlatctl restore` against the private bus: (its CompletedProcess, None), or
        (None, why it cannot run: no view, or LOWLATCTL not set) for a TAP skip."""
        lowlatctl = os.environ.get("LOWLATCTL")
        if not self.available or not lowlatctl:
            return None, self.why or "LOWLATCTL is not set"
        return subprocess.run([lowlatctl, "restore"], env=dict(os.environ, **self.env()), capture_output=True,
                              text=True, timeout=h.scaled(30)), None

    def stop(self):
        if self.bus:
            self.bus.kill()


def properties_changed(msgs, path, interface):
    """[(changed dict name->value, invalidated list)] from PropertiesChanged signals."""
    out = []
    for m in msgs:
        if (m.get("type") == "signal" and m.get("path") == path and
                m.get("interface") == "org.freedesktop.DBus.Properties" and
                m.get("member") == "PropertiesChanged"):
            data = m.get("payload", {}).get("data", [])
            if len(data) == 3 and data[0] == interface:
                changed = {k: v.get("data") for k, v in data[1].items()}
                out.append((changed, data[2]))
    return out
