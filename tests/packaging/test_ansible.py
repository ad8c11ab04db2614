#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The Ansible role in contrib/ansible, on this machine, without touching its /etc.

- ansible-lint (Debian 12's) finds nothing in contrib/ansible, and ansible-playbook
  --syntax-check takes the example playbooks.
- The role, run with ansible-playbook -c local into a temporary configuration directory
  (lowlatd_manage_service: false: templating and validation only), writes a main file and a
  drop-in from its variables (a profile, isolated CPUs, sysctls, [sysfs], a [nic] section)
  that lowlatd --check-config accepts, against a fake 4-CPU tree; a second run changes
  nothing (changed=0).
- An invalid CPU list, in the main file or in a drop-in, fails the play at the validate
  step and leaves the files as they were.
The real run (package, service, condition, restore) is the VM suite's guest.d/90-ansible.sh.
"""

import os
import re
import shutil

import packaging_util as u

ROLE_DIR = u.src("contrib", "ansible")
# ansible-core refuses a locale that is not UTF-8 (a test run under LC_ALL=C, say).
UTF8 = {"LC_ALL": "C.UTF-8"}

PLAY = """---
- name: Render lowlatd's configuration into a test directory
  hosts: all
  gather_facts: false
  roles:
    - role: lowlatd
"""


def vars_file(confdir, daemon, isolated, dropin_isolated="2-3"):
    return """---
lowlatd_config_dir: %s
lowlatd_manage_service: false
lowlatd_daemon_path: %s
lowlatd_profile: network-latency
lowlatd_isolated_cpus: "%s"
lowlatd_cpus:
  evict_strays: true
lowlatd_sysctls:
  vm.stat_interval: 10
lowlatd_sysfs:
  /sys/kernel/mm/transparent_hugepage/enabled: never
lowlatd_nics:
  "eth*":
    rx_usecs: 50
    irq_cpus: 0-1
lowlatd_dropins:
  - name: 50-test.conf
    sections:
      irq:
        pin: ["eth9-* %s"]
""" % (confdir, daemon, isolated, dropin_isolated)


def playbook(tmp, varsfile):
    env = {"ANSIBLE_ROLES_PATH": os.path.join(ROLE_DIR, "roles"),
           "ANSIBLE_LOCAL_TEMP": os.path.join(tmp, "ansible-local"),
           "ANSIBLE_REMOTE_TEMP": os.path.join(tmp, "ansible-remote"),
           "ANSIBLE_NOCOLOR": "1", "ANSIBLE_FORCE_COLOR": "0",
           "ANSIBLE_RETRY_FILES_ENABLED": "0", "HOME": tmp, **UTF8}
    return u.run(["ansible-playbook", "-c", "local", "-i", "localhost,",
                  "-e", "@" + varsfile, os.path.join(tmp, "play.yml")], timeout=300, env=env)


def recap(p, what):
    m = re.search(r"localhost\s*:.*\b%s=(\d+)" % what, p.stdout)
    return int(m.group(1)) if m else None


def lint(t):
    lint_p = u.run(["ansible-lint", "--offline", "--nocolor", "."], timeout=600, cwd=ROLE_DIR,
                   env={"HOME": u.tempdir("lowlat-lint-"), **UTF8})
    t.ok(lint_p.returncode == 0, "ansible-lint contrib/ansible: no finding", u.describe(lint_p))
    for book in ("site.yml", "restore.yml"):
        p = u.run(["ansible-playbook", "--syntax-check", book], timeout=120, cwd=ROLE_DIR, env=UTF8)
        t.ok(p.returncode == 0, "ansible-playbook --syntax-check %s" % book, u.describe(p))


def render(t, tmp, daemon):
    confdir = os.path.join(tmp, "etc-lowlatd")
    u.write(os.path.join(tmp, "play.yml"), PLAY)
    good = os.path.join(tmp, "good.yml")
    u.write(good, vars_file(confdir, daemon, "2-3"))
    p = playbook(tmp, good)
    main = os.path.join(confdir, "lowlatd.conf")
    dropin = os.path.join(confdir, "lowlatd.conf.d", "50-test.conf")
    t.ok(p.returncode == 0 and os.path.isfile(main) and os.path.isfile(dropin),
         "the role writes lowlatd.conf and a drop-in into a test directory", u.describe(p))
    if not os.path.isfile(main):
        return
    text = u.read(main)
    want = ["profile = network-latency", "isolated = 2-3", "evict_strays = yes",
            "[sysctl]\nvm.stat_interval = 10", "[sysfs]\n/sys/kernel/mm/transparent_hugepage/enabled = never",
            '[nic "eth*"]\nirq_cpus = 0-1\nrx_usecs = 50']
    missing = [w for w in want if w not in text]
    t.ok(not missing, "the main file has every variable: profile, CPUs, sysctl, sysfs, nic",
         "missing: %r\n%s" % (missing, text))
    c = u.run([daemon, "--check-config", "-c", main])
    t.ok(c.returncode == 0, "lowlatd --check-config accepts what the role wrote", u.describe(c) + "\n" + text)
    p2 = playbook(tmp, good)
    t.ok(p2.returncode == 0 and recap(p2, "changed") == 0, "a second run changes nothing (changed=0)",
         u.describe(p2))
    before = {f: u.read(f) for f in (main, dropin)}
    for what, args in (("the main file", ("0-99", "2-3")), ("a drop-in", ("2-3", "0-99"))):
        bad = os.path.join(tmp, "bad.yml")
        u.write(bad, vars_file(confdir, daemon, *args))
        pb = playbook(tmp, bad)
        # Ansible's message for a validate: command that refused, with lowlatd's FILE:LINE
        failed_at = re.search(r'"msg": "failed to validate".*lowlatd\.conf[^"]*:\d+: ', pb.stdout)
        t.ok(pb.returncode != 0 and failed_at is not None,
             "an invalid CPU list (0-99) in %s fails the play at the validate step" % what, u.describe(pb))
        t.ok(all(u.read(f) == before[f] for f in before),
             "after the refused %s the files are as they were" % what)


def test(t):
    for tool in ("ansible-playbook", "ansible-lint"):
        if not shutil.which(tool):
            raise u.Skip("%s is not installed (Debian: ansible-core, ansible-lint; tools/packages.sh)" % tool)
    u.require_program(u.LOWLATD, "lowlatd")
    lint(t)
    tmp = u.tempdir("lowlat-ansible-")
    root = u.make_fake_root(cpus="0-3", isolated="2-3")
    # The role runs lowlatd_daemon_path --check-config -c FILE: the build's lowlatd, on
    # the fake tree, with the shipped profiles of the source tree.
    daemon = os.path.join(tmp, "lowlatd")
    u.write(daemon, "#!/bin/sh\nLOWLATD_PROFILES_DIR='%s' exec '%s' --root '%s' \"$@\"\n" % (
        u.src("conf", "profiles"), u.LOWLATD, root), 0o755)
    render(t, tmp, daemon)


if __name__ == "__main__":
    u.main(test)
