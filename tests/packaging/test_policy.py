#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""conf/org.lowlatd1.conf: a real dbus-daemon accepts it, and its rules agree with the
vtable in daemon/bus.c.

The vtable decides which methods are public (SD_BUS_VTABLE_UNPRIVILEGED) and which are
root only; the policy must say the same, so that a public method added to the vtable
without an allow rule, or a privileged one that a broad rule lets everyone call, fails
here. The rules are evaluated as dbus-daemon does: the default context (the system
bus's own deny-by-default, then the file's <policy context="default">), then for root
<policy user="root">; the last matching rule wins.
"""

import os
import re
import select
import shutil
import signal
import subprocess
import xml.etree.ElementTree as ET

import lowlat_constants as C
import packaging_util as u

# The parts of /usr/share/dbus-1/system.conf that decide what a policy file must open up.
SYSTEM_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
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
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus"/>
  </policy>
  <include ignore_missing="no">{policy}</include>
</busconfig>
"""
# Rules of the system bus's default context that matter for a method call to our name.
SYSTEM_DEFAULT_RULES = [("deny", {"own": "*"}), ("deny", {"send_type": "method_call"})]

ENVIRONMENT_NOISE = re.compile(r"Failed to set fd limit|Failed to (start|connect to) .*(audit|selinux|apparmor)",
                               re.I)

STANDARD_READ = [
    ("org.freedesktop.DBus.Introspectable", "Introspect"),
    ("org.freedesktop.DBus.Peer", "Ping"),
    ("org.freedesktop.DBus.Properties", "Get"),
    ("org.freedesktop.DBus.Properties", "GetAll"),
]


def parse_vtable(text):
    """({method: public?}, [writable property]) from daemon/bus.c's vtable."""
    text = u.strip_c_comments(text)
    m = re.search(r"sd_bus_vtable\s+\w+\s*\[\s*\]\s*=\s*\{", text)
    if not m:
        raise ValueError("no sd_bus_vtable array in daemon/bus.c")
    body = text[m.end():text.index("SD_BUS_VTABLE_END", m.end())]
    start = re.search(r"SD_BUS_VTABLE_START\s*\(", body)
    start_flags = u.c_call_args(body, start.end() - 1) if start else ""
    methods = {}
    for mm in re.finditer(r"\bSD_BUS_METHOD\w*\s*\(", body):
        args = u.c_call_args(body, mm.end() - 1)
        name = re.match(r'\s*"([^"]+)"', args)
        if not name:
            raise ValueError("cannot read the method name of %s" % args[:60])
        public = "SD_BUS_VTABLE_UNPRIVILEGED" in args or "SD_BUS_VTABLE_UNPRIVILEGED" in start_flags
        methods[name.group(1)] = public
    writable = re.findall(r'\bSD_BUS_WRITABLE_PROPERTY\w*\s*\(\s*"([^"]+)"', body)
    return methods, writable


def parse_policy(path):
    """{("default",): rules, ("user", "root"): rules, ...}; rules [(allow|deny, attrs)]."""
    tree = ET.parse(path)
    root = tree.getroot()
    if root.tag != "busconfig":
        raise ValueError("root element is <%s>, not <busconfig>" % root.tag)
    policies = {}
    for pol in root.findall("policy"):
        key = tuple(sorted(pol.attrib.items()))
        rules = policies.setdefault(key, [])
        for r in pol:
            if r.tag in ("allow", "deny"):
                rules.append((r.tag, dict(r.attrib)))
    return policies


def _attr_match(rule_value, value):
    if rule_value == "*":
        return True
    return value is not None and rule_value == value


def send_allowed(rule_lists, dest, interface, member, msg_type="method_call"):
    """dbus-daemon's verdict on sending a message: the last matching send rule wins."""
    verdict = False
    for rules in rule_lists:
        for kind, attrs in rules:
            send = {k: v for k, v in attrs.items() if k.startswith("send_")}
            if not send or set(attrs) - set(send) - {"eavesdrop", "log"}:
                continue  # not a send rule (own=, receive_*, user=...)
            msg = {"send_destination": dest, "send_interface": interface, "send_member": member,
                   "send_type": msg_type, "send_path": C.BUS_PATH}
            if all(k in msg and _attr_match(v, msg[k]) for k, v in send.items()):
                verdict = kind == "allow"
    return verdict


def own_allowed(rule_lists, name):
    verdict = False
    for rules in rule_lists:
        for kind, attrs in rules:
            if "own" in attrs and _attr_match(attrs["own"], name):
                verdict = kind == "allow"
            elif "own_prefix" in attrs and (name == attrs["own_prefix"]
                                            or name.startswith(attrs["own_prefix"] + ".")):
                verdict = kind == "allow"
    return verdict


def start_bus(config, timeout=10):
    """(ok, output): dbus-daemon started with config and printed its address."""
    proc = subprocess.Popen(["dbus-daemon", "--config-file=" + config, "--nofork", "--nopidfile",
                             "--nosyslog", "--print-address=1"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        r, _, _ = select.select([proc.stdout], [], [], timeout)
        line = proc.stdout.readline().decode(errors="replace").strip() if r else ""
        ok = line.startswith("unix:")
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        try:
            _, err = proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate()
    return ok, (line + "\n" + err.decode(errors="replace")).strip()


def test(t):
    policy_path = u.src("conf", "org.lowlatd1.conf")
    bus_name, interface = C.BUS_NAME, C.BUS_INTERFACE
    methods, writable = parse_vtable(u.read(u.src("daemon", "bus.c")))
    t.ok(bus_name and interface, "daemon/bus.c: BUS_NAME and BUS_INTERFACE found (%s, %s)"
         % (bus_name, interface))
    t.ok(methods, "daemon/bus.c: vtable methods parsed: %s" %
         ", ".join("%s (%s)" % (k, "public" if v else "privileged") for k, v in sorted(methods.items())))

    try:
        policies = parse_policy(policy_path)
        t.ok(True, "policy file is well-formed XML with a <busconfig> root")
    except (ET.ParseError, ValueError) as e:
        t.ok(False, "policy file is well-formed XML with a <busconfig> root", str(e))
        policies = {}

    default = policies.get((("context", "default"),), [])
    root_rules = policies.get((("user", "root"),), [])
    odd = [dict(k) for k in policies if k not in ((("context", "default"),), (("user", "root"),))]
    t.ok(not odd, "policy has only <policy context=\"default\"> and <policy user=\"root\">",
         "other policies: %s" % odd)
    as_user = [SYSTEM_DEFAULT_RULES, default]
    as_root = [SYSTEM_DEFAULT_RULES, default, root_rules]

    t.ok(own_allowed(as_root, bus_name), "root may own %s" % bus_name)
    t.ok(not own_allowed(as_user, bus_name), "other users may not own %s" % bus_name)

    # Every vtable method: root may call it; others exactly when it is public.
    for name, public in sorted(methods.items()):
        t.ok(send_allowed(as_root, bus_name, interface, name),
             "root may call %s.%s" % (interface, name))
        user_ok = send_allowed(as_user, bus_name, interface, name)
        if public:
            t.ok(user_ok, "public method %s (SD_BUS_VTABLE_UNPRIVILEGED) has an allow rule for everyone"
                 % name, "add <allow send_destination=\"%s\" send_interface=\"%s\" send_member=\"%s\"/> "
                 "to <policy context=\"default\">" % (bus_name, interface, name))
        else:
            t.ok(not user_ok, "privileged method %s is refused to other users" % name,
                 "the default context lets everyone call %s; only SD_BUS_VTABLE_UNPRIVILEGED "
                 "methods may be open" % name)

    # Allow rules for Manager members the vtable does not have are stale (a renamed method).
    stale = [a.get("send_member") for k, a in default
             if k == "allow" and a.get("send_interface") == interface
             and a.get("send_member") and a["send_member"] not in methods]
    t.ok(not stale, "no allow rule names a %s member the vtable lacks" % interface, " ".join(stale))

    # lowlatctl tells a non-root caller that a command needs root for exactly the
    # privileged methods of lowlatd's vtables (its privileged_methods[] in lowlatctl/bus.c).
    privileged = {m for vtable_file in ("bus.c", "bus-measurement.c")
                  for m, public in parse_vtable(u.read(u.src("daemon", vtable_file)))[0].items() if not public}
    table = re.search(r"privileged_methods\[\] = \{(.*?)\n\};", u.read(u.src("lowlatctl", "bus.c")), re.S)
    client = set(re.findall(r'\{ "(\w+)", "[\w-]+" \}', table.group(1))) if table else set()
    t.ok(client == privileged, "lowlatctl's privileged_methods[] are the vtables' privileged methods: %s"
         % " ".join(sorted(privileged)), "lowlatctl: %s" % " ".join(sorted(client)))

    for iface, member in STANDARD_READ:
        t.ok(send_allowed(as_user, bus_name, iface, member),
             "everyone may call %s.%s" % (iface, member))
    # The policy keeps Properties.Set root-only even while no property is writable, so a
    # writable property added later is not open to everyone by accident.
    t.ok(not send_allowed(as_user, bus_name, "org.freedesktop.DBus.Properties", "Set"),
         "Properties.Set is refused to other users%s"
         % (" (writable properties: %s)" % ", ".join(writable) if writable else ""))
    t.ok(not send_allowed(as_user, bus_name, interface, "NoSuchMethod"),
         "a %s member without a rule is refused to other users (default deny)" % interface)

    # dbus-daemon itself: it refuses to start on a config it cannot use.
    what = "a dbus-daemon with a system-bus config including the policy starts"
    what_neg = "the same dbus-daemon refuses a truncated copy of the policy (the check can fail)"
    if not shutil.which("dbus-daemon"):
        t.skip(what, "dbus-daemon is not installed")
        t.skip(what_neg, "dbus-daemon is not installed")
        return
    tmp = u.tempdir("lowlat-policy-")
    config = os.path.join(tmp, "system.conf")
    u.write(config, SYSTEM_CONFIG.format(socket=os.path.join(tmp, "bus"), policy=policy_path))
    ok, out = start_bus(config)
    t.ok(ok, what, out)
    # dbus-daemon also reports its own environment (raising RLIMIT_NOFILE fails in a
    # container); only what it says about the configuration counts here.
    warnings = [l for l in out.splitlines()[1:] if l.strip() and not ENVIRONMENT_NOISE.search(l)]
    t.ok(ok and not warnings, "dbus-daemon prints no warnings about the policy", "\n".join(warnings))

    broken = os.path.join(tmp, "broken.conf")
    text = u.read(policy_path)
    u.write(broken, text[:text.rindex("</busconfig>")])
    u.write(config, SYSTEM_CONFIG.format(socket=os.path.join(tmp, "bus2"), policy=broken))
    ok, out = start_bus(config)
    t.ok(not ok, what_neg, out)


if __name__ == "__main__":
    u.main(test)
