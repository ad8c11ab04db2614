#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The man pages and the example configuration against the code.

- every option the programs accept (their getopt tables) is in --help, and every option
  in --help is in the OPTIONS section of the program's man page, and the other way round;
  lowlatctl's commands likewise (verbs table, --help, COMMANDS);
- every config key the parser accepts (the rows of lib/config/keys.c's key table) is
  documented in its [SECTION] of lowlatd.conf(5) and present
  (usually commented out) in its section of conf/lowlatd.conf, and nothing else is;
- groff -man -ww -z finds nothing to warn about in any page;
- conf/lowlatd.conf passes --check-config as shipped, and with every commented-out
  key = value line enabled ([sysfs] paths included); so do conf/examples/*.conf and the EXAMPLE of lowlatd.conf(5);
- the longest line lowlatd.conf(5) and conf/lowlatd.conf allow is the longest line
  --check-config takes.
"""

import glob
import os
import re
import shutil

import lowlat_constants as C
import packaging_util as u

HELP_OPTION_LINE = re.compile(r"^\s+-")
LONG_RE = re.compile(r"(?<![\w-])--([a-z][a-z0-9-]*)")
SHORT_RE = re.compile(r"(?<![\w-])-([a-zA-Z])(?![\w-])")


def getopt_table(c_source):
    """({long option names}, {short option letters}) from a C file's getopt_long call."""
    text = u.strip_c_comments(c_source)
    m = re.search(r"struct\s+option\s+\w+\s*\[\s*\]\s*=\s*\{(.*?)\};", text, re.S)
    if not m:
        raise ValueError("no struct option table")
    longs = set(re.findall(r'\{\s*"([^"]+)"\s*,', m.group(1)))
    g = re.search(r'getopt_long\s*\([^,]+,[^,]+,\s*"([^"]*)"', text)
    if not g:
        raise ValueError("no getopt_long call with a short-option string")
    return longs, set(re.sub(r"[:+-]", "", g.group(1)))


def verbs_table(c_source):
    """The command names of a C file's verbs[] table; raises when there is none (a
    renamed table must not read as "a program without commands")."""
    text = u.strip_c_comments(c_source)
    m = re.search(r"(?:\}|\bVerb)\s*verbs\s*\[\s*\]\s*=\s*\{(.*?)\};", text, re.S)
    if not m:
        raise ValueError("no verbs[] table")
    return set(re.findall(r'\{\s*"([^"]+)"\s*,', m.group(1)))


def help_options(help_text):
    longs, shorts = set(), set()
    for line in help_text.splitlines():
        if HELP_OPTION_LINE.match(line):
            # Only the option column: text before two or more spaces after the options.
            column = re.split(r"\s{2,}", line.strip(), maxsplit=1)[0]
            longs |= set(LONG_RE.findall(column))
            shorts |= set(SHORT_RE.findall(column))
    return longs, shorts


def help_commands(help_text):
    out = set()
    in_commands = False
    for line in help_text.splitlines():
        if re.match(r"^Commands:", line):
            in_commands = True
            continue
        if in_commands:
            m = re.match(r"^\s+([a-z][a-z0-9-]*)\s", line)
            if m:
                out.add(m.group(1))
            elif line.strip() == "" or not line.startswith(" "):
                in_commands = False
    return out


def check_program(t, name, source, page, has_verbs):
    binary = u.LOWLATD if name == "lowlatd" else u.LOWLATCTL
    u.require_program(binary, name)
    p = u.run([binary, "--help"])
    if not t.ok(p.returncode == 0 and p.stdout.strip(), "%s --help exits 0 with text" % name,
                u.describe(p)):
        return
    help_long, help_short = help_options(p.stdout)
    code_long, code_short = getopt_table(u.read(source))
    t.ok(code_long, "%s: getopt table parsed (%s)" % (name, " ".join(sorted("--" + o for o in code_long))))

    missing = sorted({"--" + o for o in code_long - help_long} | {"-" + o for o in code_short - help_short})
    t.ok(not missing, "%s: every option in its getopt table is in --help" % name,
         "accepted but not in --help: " + " ".join(missing))
    extra = sorted({"--" + o for o in help_long - code_long} | {"-" + o for o in help_short - code_short})
    t.ok(not extra, "%s: every option in --help is accepted" % name, "in --help only: " + " ".join(extra))

    raw = u.read(u.src("man", page))
    sections = u.man_sections(raw)
    options_text = sections.get("OPTIONS", "")
    t.ok(options_text, "%s: %s has an OPTIONS section" % (name, page))
    missing = [o for o in sorted({"--" + o for o in help_long} | {"-" + o for o in help_short})
               if not u.mentions_option(options_text, o)]
    t.ok(not missing, "%s: every option in --help is in OPTIONS of %s" % (name, page),
         "missing from man/%s OPTIONS: %s" % (page, " ".join(missing)))
    tag_long, tag_short = set(), set()
    for tag in u.man_tags(u.man_sections(raw, raw=True).get("OPTIONS", "")):
        tag_long |= set(LONG_RE.findall(tag))
        tag_short |= set(SHORT_RE.findall(tag))
    extra = sorted({"--" + o for o in tag_long - code_long} | {"-" + o for o in tag_short - code_short})
    t.ok(not extra, "%s: every option %s documents is accepted" % (name, page),
         "documented but not accepted: " + " ".join(extra))

    if has_verbs:
        verbs = verbs_table(u.read(source))
        in_help = help_commands(p.stdout)
        t.ok(verbs == in_help, "%s: --help lists exactly the commands of its verbs table" % name,
             "verbs: %s\n--help: %s" % (sorted(verbs), sorted(in_help)))
        commands = set(u.man_tags(u.man_sections(raw, raw=True).get("COMMANDS", "")))
        t.ok(verbs == commands, "%s: COMMANDS of %s documents exactly its commands" % (name, page),
             "verbs: %s\nman COMMANDS: %s" % (sorted(verbs), sorted(commands)))


def parser_keys():
    """{section: {key}} from lib/config/keys.c: config_sections[] and the rows of
    config_keys[] ({ "SECTION", "KEY", parser, ... })."""
    text = u.strip_c_comments(u.read(u.src("lib", "config", "keys.c")))
    sections_text = text[text.index("config_sections[]"):]
    sections_text = sections_text[:sections_text.index("};")]
    keys_text = text[text.index("config_keys[]"):]
    keys_text = keys_text[:keys_text.index("};")]
    # [service "NAME"] and [process "COMM"] take the same keys and share a page section.
    app = lambda name: "app" if name in ("service", "process") else name
    out = {app(name): set() for name in re.findall(r'\.name\s*=\s*"(\w+)"', sections_text)}
    if not out:
        raise ValueError("no sections in config_sections[]")
    for section, key in re.findall(r'\{\s*"(\w+)"\s*,\s*"([\w.]+)"\s*,', keys_text):
        if app(section) not in out:
            raise ValueError("a row of config_keys[] names section [%s], which config_sections[] lacks" % section)
        out[app(section)].add(key)
    if "nic" in out:
        # [nic] also takes every ethtool parameter by its table name (lib/host/ethtool.c) and
        # feature.NAME (its section's assign, config_assign_nic()).
        ethtool = u.strip_c_comments(u.read(u.src("lib", "host", "ethtool.c")))
        table_text = ethtool[ethtool.index("param_table["):]
        out["nic"] |= set(re.findall(r'\[ETHTOOL_PARAM_\w+\]\s*=\s*\{\s*"(\w+)"', table_text))
        out["nic"].add("feature.NAME")
    return out


def example_keys(text):
    """{section: {key}} of conf/lowlatd.conf, counting commented-out "#key = value" lines."""
    out = {}
    section = None
    for line in text.splitlines():
        # A header may be commented out too (#[service "NAME"]): the example documents a
        # section that an installed default must not switch on.
        m = re.match(r'^#?\s*\[(\w+)(?:\s+"[^"]*")?\]\s*$', line)
        if m:
            section = m.group(1)
            section = "app" if section in ("service", "process") else section
            out.setdefault(section, set())
            continue
        m = re.match(r"^[#;]?([A-Za-z0-9_.-]+)\s*=", line)
        if m and section is not None:
            key = m.group(1)
            # feature.rx-gro stands for the feature.NAME form the parser takes
            out[section].add("feature.NAME" if key.startswith("feature.") else key)
    return out


def check_config_keys(t):
    keys = parser_keys()
    t.ok(keys and any(keys.values()), "lib/config/keys.c: keys parsed: %s" %
         "; ".join("[%s] %s" % (s, " ".join(sorted(k))) for s, k in sorted(keys.items())))

    raw = u.read(u.src("man", "lowlatd.conf.5"))
    sections = u.man_sections(raw)
    raw_sections = u.man_sections(raw, raw=True)
    example = example_keys(u.read(u.src("conf", "lowlatd.conf")))
    for section, names in sorted(keys.items()):
        # [service "NAME"] and [process "COMM"] share one handler ("app") and one page section.
        title = "[SERVICE] AND [PROCESS] SECTIONS" if section == "app" else "[%s] SECTION" % section.upper()
        body = sections.get(title)
        if not t.ok(body is not None, "lowlatd.conf(5) has a %s" % title,
                    "sections: %s" % sorted(sections)):
            continue
        missing = [k for k in sorted(names) if not re.search(r"(?<![\w.])%s=" % re.escape(k), body)]
        t.ok(not missing, "lowlatd.conf(5) %s documents every key the parser accepts" % title,
             "missing: " + " ".join(missing))
        documented = {re.match(r"^([\w.]+)=", tag).group(1) for tag in u.man_tags(raw_sections[title])
                      if re.match(r"^([\w.]+)=", tag)}
        if names:
            extra = sorted(documented - names)
            t.ok(not extra, "lowlatd.conf(5) %s documents no key the parser rejects" % title,
                 "documented only: " + " ".join(extra))
        t.ok(section in example, "conf/lowlatd.conf has a [%s] section" % section)
        missing = sorted(names - example.get(section, set()))
        t.ok(not missing, "conf/lowlatd.conf [%s] shows every key the parser accepts" % section,
             "missing: " + " ".join(missing))
        if names:
            extra = sorted(example.get(section, set()) - names)
            t.ok(not extra, "conf/lowlatd.conf [%s] shows no key the parser rejects" % section,
                 "unknown: " + " ".join(extra))
    extra_sections = sorted(set(example) - set(keys))
    t.ok(not extra_sections, "conf/lowlatd.conf has no section the parser rejects",
         " ".join(extra_sections))


def check_groff(t):
    groff = shutil.which("groff")
    for _, (page, _) in sorted(u.MAN_PAGES.items()):
        path = u.src("man", page)
        text = u.read(path)
        name, section = page.rsplit(".", 1)
        m = re.search(r'^\.TH\s+"?([^\s"]+)"?\s+"?(\w+)"?', text, re.M)
        t.ok(m and m.group(1).lower() == name.lower() and m.group(2) == section,
             "%s: .TH names %s section %s" % (page, name.upper(), section),
             ".TH %s" % (" ".join(m.groups()) if m else "missing"))
        what = "groff -man -ww -z -Tutf8 -rLL=78n %s: no warnings" % page
        if not groff:
            t.skip(what, "groff is not installed")
            continue
        # Preprocessors as man(1) runs them: the '\" line names them (t = tbl).
        pre = []
        first = text.splitlines()[0] if text else ""
        mm = re.match(r"^'\\\" ([a-z]+)", first)
        if mm:
            pre = ["-" + c for c in mm.group(1) if c in "tepgrR"]
        # Formatted for an 80-column terminal, as man(1) shows it: a table cell too narrow
        # for a long word only warns at a real line length.
        p = u.run([groff, "-k"] + pre + ["-man", "-ww", "-z", "-Tutf8", "-rLL=78n", path],
                  env={"LC_ALL": "C.UTF-8"})
        t.ok(p.returncode == 0 and not p.stderr.strip() and not p.stdout.strip(), what, u.describe(p))


def man_example_config():
    """(main file, drop-in) from the EXAMPLE section of lowlatd.conf(5): its .nf blocks
    that contain a [section] header."""
    raw = u.man_sections(u.read(u.src("man", "lowlatd.conf.5")), raw=True).get("EXAMPLE", "")
    blocks = re.findall(r"^\.nf\n(.*?)^\.fi", raw, re.M | re.S)
    configs = []
    for b in blocks:
        plain = u.man_plain(b)
        if re.search(r"^\[\w+\]", plain, re.M):
            configs.append(plain.strip() + "\n")
    return configs


def check_configs(t):
    u.require_program(u.LOWLATD, "lowlatd")
    root = u.make_fake_root(cpus="0-3", isolated="2-3")
    example = u.src("conf", "lowlatd.conf")
    p = u.check_config(u.LOWLATD, example, root)
    t.ok(p.returncode == 0, "conf/lowlatd.conf passes --check-config", u.describe(p))

    # Every commented-out key shows a default or an example: they must be valid too.
    text = u.read(example)
    # A key is a word, or a [sysfs] path.
    key = r"(?:[A-Za-z0-9_.-]+|/sys/\S+)\s*="
    enabled = re.sub(r"(?m)^#(?=%s|\[\w+\s+\"[^\"]*\"\]\s*$)" % key, "", text)
    n = len(re.findall(r"(?m)^#(?=%s)" % key, text))
    tmp = u.tempdir("lowlat-docs-")
    path = os.path.join(tmp, "enabled.conf")
    u.write(path, enabled)
    p = u.check_config(u.LOWLATD, path, root)
    t.ok(n > 0 and p.returncode == 0,
         "conf/lowlatd.conf with its %d commented-out keys enabled passes --check-config" % n,
         u.describe(p))

    for ex in sorted(glob.glob(u.src("conf", "examples", "*.conf"))):
        p = u.check_config(u.LOWLATD, ex, root)
        t.ok(p.returncode == 0, "%s passes --check-config" % os.path.relpath(ex, u.SOURCE_ROOT),
             u.describe(p))

    configs = man_example_config()
    if t.ok(configs, "lowlatd.conf(5) EXAMPLE has a configuration"):
        main = os.path.join(tmp, "man-example", "lowlatd.conf")
        u.write(main, configs[0])
        for i, dropin in enumerate(configs[1:]):
            u.write(os.path.join(tmp, "man-example", "lowlatd.conf.d", "%02d-example.conf" % i), dropin)
        p = u.check_config(u.LOWLATD, main, root)
        t.ok(p.returncode == 0, "lowlatd.conf(5) EXAMPLE (main file and %d drop-in) passes --check-config"
             % (len(configs) - 1), u.describe(p) + "\nconfig:\n" + "\n".join(configs))


def check_line_limit(t):
    """The documented longest line is the longest line the parser takes."""
    u.require_program(u.LOWLATD, "lowlatd")
    root = u.make_fake_root()
    tmp = u.tempdir("lowlat-lines-")
    claims = []
    man = u.man_plain(u.read(u.src("man", "lowlatd.conf.5")))
    claims += sorted({("lowlatd.conf(5)", int(n)) for n in
                      re.findall(r"(?i)a line (?:may be at most|longer than) (\d+) characters", man)})
    example = u.read(u.src("conf", "lowlatd.conf"))
    claims += [("conf/lowlatd.conf", int(n)) for n in
               re.findall(r"(?i)lines? (?:are|is) limited to (\d+) characters", example)]
    if not t.ok(claims, "the docs state the longest config line"):
        return

    def accepted(n):
        path = os.path.join(tmp, "len%d.conf" % n)
        u.write(path, "[cpus]\n%s\n" % C.slices_line(n))
        p = u.check_config(u.LOWLATD, path, root)
        return p.returncode == 0, p

    for where, n in claims:
        ok_n, p1 = accepted(n)
        ok_more, p2 = accepted(n + 1)
        t.ok(ok_n and not ok_more,
             "%s says lines may be %d characters: --check-config takes %d and refuses %d"
             % (where, n, n, n + 1),
             "%d characters: %s\n%d characters: %s\n%s" % (
                 n, "accepted" if ok_n else "refused", n + 1, "accepted" if ok_more else "refused",
                 (p1.stderr if not ok_n else p2.stderr).strip()))


def test(t):
    check_program(t, "lowlatd", u.src("daemon", "lowlatd.c"), "lowlatd.8", has_verbs=False)
    check_program(t, "lowlatctl", u.src("lowlatctl", "lowlatctl.c"), "lowlatctl.1", has_verbs=True)
    check_config_keys(t)
    check_configs(t)
    check_line_limit(t)
    check_groff(t)


if __name__ == "__main__":
    u.main(test)
