#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The man pages and the example configuration against the code.

- every option the programs accept (their getopt tables) is in --help, and every option
  in --help is in the OPTIONS section of the program's man page, and the other way round;
  lowlatctl's commands likewise (verbs table, --help, COMMANDS);
- every config key the parser accepts (the rows of lib/config/keys.c's key table) is
  documented in its [SECTION] of lowlatd.conf(5) and present
  (usually commented out) in its section of conf/lowlatd.conf, and nothing else is;
- groff -man -ww -z finds nothing to warn about in any page, nor does groff as man(1) runs
  it on a UTF-8 or an ASCII terminal, and every page is printable ASCII;
- lowlatctl(1) lists exactly the kinds of the registry (lib/setting/kind.h), and
  lowlatd.conf(5)'s DESCRIPTION every section of config_sections[] (lib/config/keys.c);
- what lowlatd.conf(5) says of indentation is what the reader does: an indented file reads
  as the same file unindented;
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
        commands = set(u.man_tags(u.man_sections(raw, raw=True).get("COMMANDS", ""), nested=False))
        t.ok(verbs == commands, "%s: COMMANDS of %s documents exactly its commands" % (name, page),
             "verbs: %s\nman COMMANDS: %s" % (sorted(verbs), sorted(commands)))


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
    keys = u.parser_keys()
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


# How a page is rendered: the plain command (no preprocessor, groff's default device, the
# input read as Latin-1), and as man(1) runs it on a UTF-8 and on an ASCII terminal
# (preprocessors from the page's '\" line, preconv, 80 columns).
GROFF_RUNS = [
    ("groff -man -ww -z", False, []),
    ("man(1) on a UTF-8 terminal", True, ["-Tutf8", "-rLL=78n"]),
    ("man(1) on an ASCII terminal", True, ["-Tascii", "-rLL=78n"]),
]


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
        # A byte outside printable ASCII (a form feed, a raw UTF-8 micro sign) renders
        # differently on each device, or not at all: characters are roff escapes.
        # (split at newlines only: splitlines() would take a form feed for a line break)
        odd = ["line %d: %r" % (n, line) for n, line in enumerate(text.split("\n"), 1)
               if re.search(r"[^\t\x20-\x7e]", line)]
        t.ok(not odd, "%s: printable ASCII only (special characters as roff escapes)" % page,
             "\n".join(odd))
        # Preprocessors as man(1) runs them: the '\" line names them (t = tbl).
        pre = []
        first = text.splitlines()[0] if text else ""
        mm = re.match(r"^'\\\" ([a-z]+)", first)
        if mm:
            pre = ["-" + c for c in mm.group(1) if c in "tepgrR"]
        for how, as_man, args in GROFF_RUNS:
            what = "%s: no warnings from %s" % (page, how)
            if not groff:
                t.skip(what, "groff is not installed")
                continue
            argv = [groff] + (["-k"] + pre if as_man else []) + ["-man", "-ww", "-z"] + args + [path]
            p = u.run(argv, env={"LC_ALL": "C.UTF-8"})
            t.ok(p.returncode == 0 and not p.stderr.strip() and not p.stdout.strip(), what, u.describe(p))


def setting_kinds():
    """The kinds of the registry, X(ENUM, name) lines of SETTING_KINDS in lib/setting/kind.h."""
    text = u.strip_c_comments(u.read(u.src("lib", "setting", "kind.h")))
    m = re.search(r"#define\s+SETTING_KINDS\(X\)((?:[^\n]*\\\n)*[^\n]*)", text)
    if not m:
        raise ValueError("no SETTING_KINDS(X) in lib/setting/kind.h")
    kinds = re.findall(r"\bX\(\s*\w+\s*,\s*(\w+)\s*\)", m.group(1))
    if not kinds:
        raise ValueError("SETTING_KINDS(X) has no X(ENUM, name) line")
    return kinds


def check_kinds(t):
    """lowlatctl(1) names every kind of the registry in its paragraph on kinds: the words
    set in bold from ".I kind" to "see lowlatd(8)"."""
    kinds = setting_kinds()
    raw = u.read(u.src("man", "lowlatctl.1"))
    m = re.search(r"^\.I kind\n(.*?)^see\n", raw, re.M | re.S)
    if not t.ok(m, "lowlatctl(1) has its paragraph on kinds (.I kind ... see lowlatd(8))"):
        return
    listed = []
    for line in m.group(1).splitlines():
        mm = re.match(r"^\.(?:B|BR|RB)\s+(.*)$", line)
        if mm:
            listed += [w for w in re.findall(r'"[^"]*"|\S+', mm.group(1)) if re.match(r"^[a-z][a-z0-9_]*$", w)]
    dup = sorted({k for k in listed if listed.count(k) > 1})
    t.ok(set(listed) == set(kinds) and not dup,
         "lowlatctl(1) lists exactly the %d kinds of lib/setting/kind.h" % len(kinds),
         "missing: %s\nnot in the registry: %s\ntwice: %s" % (
             " ".join(k for k in kinds if k not in listed) or "-",
             " ".join(sorted(set(listed) - set(kinds))) or "-", " ".join(dup) or "-"))


def config_section_names():
    """The section names of config_sections[] in lib/config/keys.c."""
    text = u.strip_c_comments(u.read(u.src("lib", "config", "keys.c")))
    table = text[text.index("config_sections[]"):]
    names = re.findall(r'\.name\s*=\s*"(\w+)"', table[:table.index("};")])
    if not names:
        raise ValueError("no sections in config_sections[]")
    return names


def check_description(t):
    """lowlatd.conf(5)'s DESCRIPTION has an item for every section the reader knows."""
    names = config_section_names()
    raw = u.man_sections(u.read(u.src("man", "lowlatd.conf.5")), raw=True).get("DESCRIPTION", "")
    described = set()
    for tag in u.man_tags(raw):
        described |= set(re.findall(r"\[(\w+)", tag))
    t.ok(described == set(names),
         "lowlatd.conf(5) DESCRIPTION has an item for each section of config_sections[] (%s)" % " ".join(names),
         "missing: %s\nnot a section: %s" % (" ".join(n for n in names if n not in described) or "-",
                                              " ".join(sorted(described - set(names))) or "-"))


def indent(text):
    """text with every line indented, with spaces, a tab or both in turn."""
    pads = ["  ", "\t", " \t "]
    return "".join(pads[i % 3] + line for i, line in enumerate(text.splitlines(True)))


def check_indentation(t):
    """lowlatd.conf(5) says white space before a key, a header or a comment is ignored and
    an indented line is never the continuation of the one before: so an indented file
    reads as the same file unindented."""
    u.require_program(u.LOWLATD, "lowlatd")
    fmt = u.man_sections(u.read(u.src("man", "lowlatd.conf.5"))).get("FILE FORMAT", "")
    t.ok("indented line is a line of its own" in fmt and "first column" not in fmt
         and "first character other than white space is" in fmt,
         "lowlatd.conf(5) FILE FORMAT: an indented line is a line of its own, an indented "
         "comment a comment (no first-column rule)", fmt)
    root = u.make_fake_root(cpus="0-3")
    u.write(os.path.join(root, "proc/sys/kernel/numa_balancing"), "0\n")
    u.write(os.path.join(root, "proc/sys/vm/stat_interval"), "1\n")
    tmp = u.tempdir("lowlat-indent-")
    # Were an indented line a continuation, numa_balancing's value would be
    # "1 vm.stat_interval = 10"; were '#' a comment only in the first column, the comment
    # line would be a key "# not" of [sysctl].
    flat = ("[daemon]\nmode = observe\n[cpus]\nisolated = 2-3\n# not = a key\n; nor = this\n"
            "[sysctl]\nkernel.numa_balancing = 1\nvm.stat_interval = 10\n")
    runs = {}
    for name, text in (("flat", flat), ("indented", indent(flat))):
        path = os.path.join(tmp, name + ".conf")
        u.write(path, text)
        runs[name] = u.run([u.LOWLATD, "--observe", "--once", "--config", path, "--root", root])
    f, i = runs["flat"], runs["indented"]
    t.ok("numa_balancing" in f.stdout and "stat_interval" in f.stdout and f.returncode in (0, 3)
         and not f.stderr.strip(), "lowlatd --observe --once reads the flat file", u.describe(f))
    t.ok((i.returncode, i.stdout, i.stderr) == (f.returncode, f.stdout, f.stderr),
         "the same file indented (spaces, tabs) reads the same: lowlatd --observe --once prints the same",
         "flat:\n%s\nindented:\n%s" % (u.describe(f), u.describe(i)))

    # Every key the shipped example documents, enabled and indented.
    text = u.read(u.src("conf", "lowlatd.conf"))
    key = r"(?:[A-Za-z0-9_.-]+|/sys/\S+)\s*="
    enabled = re.sub(r"(?m)^#(?=%s|\[\w+\s+\"[^\"]*\"\]\s*$)" % key, "", text)
    path = os.path.join(tmp, "example-indented.conf")
    u.write(path, indent(enabled))
    p = u.check_config(u.LOWLATD, path, u.make_fake_root(cpus="0-3", isolated="2-3"))
    t.ok(p.returncode == 0, "conf/lowlatd.conf with its keys enabled and every line indented passes --check-config",
         u.describe(p))


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


# systemd's time units (systemd.time(7)) a comment may name, in microseconds.
TIME_UNITS = {"us": 1, "usec": 1, "ms": 1000, "msec": 1000, "s": 10**6, "sec": 10**6, "m": 60 * 10**6,
              "min": 60 * 10**6, "h": 3600 * 10**6, "hr": 3600 * 10**6}


def check_small_claims(t):
    """Three small sentences that were once untrue: measure's exit status 77 in --help, the
    units conf/lowlatd.conf names for scan_interval, the README's .deb name."""
    u.require_program(u.LOWLATCTL, "lowlatctl")
    p = u.run([u.LOWLATCTL, "--help"])
    status = re.search(r"(?s)Exit status:(.*)", p.stdout)
    code = u.read(u.src("lowlatctl", "measure-verb.c"))
    privileges = re.search(r"(?s)static int measure_check_privileges\(.*?\n}\n", code)
    t.ok(status and re.search(r"\b77 not root\b", re.sub(r"\s+", " ", status.group(1)))
         and privileges and "measure needs root" in privileges.group(0)
         and "return EXIT_NOT_ON_CPUS;" in privileges.group(0)
         and "#define EXIT_NOT_ON_CPUS 77" in u.read(u.src("lowlatctl", "client.h")),
         "lowlatctl --help names not-root as a reason for 77, the status measure's root check returns",
         p.stdout[-600:])

    conf = u.read(u.src("conf", "lowlatd.conf"))
    comment = re.search(r"(?s)((?:^#[^\n]*\n)+)#scan_interval =", conf, re.M)
    units = re.search(r"time units \(([^;)]*)", comment.group(1) if comment else "")
    words = re.findall(r"[a-zA-Z]+", units.group(1).replace(" or ", ", ")) if units else []
    unknown = [w for w in words if w not in TIME_UNITS]
    t.ok(words and not unknown, "conf/lowlatd.conf names scan_interval's units: %s" % " ".join(words),
         "unknown to this test: %s\n%s" % (unknown, comment.group(1) if comment else "no comment"))
    root = u.make_fake_root()
    tmp = u.tempdir("lowlat-units-")
    for w in words:
        if w not in TIME_UNITS:
            continue
        n = -(-100000 // TIME_UNITS[w])  # the fewest of this unit in the range (100ms..1h)
        path = os.path.join(tmp, "%s.conf" % w)
        u.write(path, "[daemon]\nscan_interval = %d%s\n" % (n, w))
        r = u.check_config(u.LOWLATD, path, root)
        t.ok(r.returncode == 0, "scan_interval = %d%s, as the comment allows, passes --check-config" % (n, w),
             u.describe(r))

    readme = u.read(u.src("README.md"))
    deb = re.findall(r"\.\./lowlatd_[^\n]*?\.deb", readme)
    changelog = re.match(r"lowlatd \(([^)]+)\)", u.read(u.src("debian", "changelog")))
    if not t.ok(len(deb) == 1 and changelog, "README.md names the package file once", str(deb)):
        return
    if not shutil.which("dpkg-parsechangelog") or not shutil.which("dpkg"):
        t.skip("README's .deb against what dpkg-buildpackage writes", "dpkg-dev is not installed")
        return
    arch = u.run(["dpkg", "--print-architecture"]).stdout.strip()
    said = u.run(["sh", "-c", "cd \"$1\" && echo %s" % deb[0].strip('"'), "sh", u.SOURCE_ROOT]).stdout.strip()
    t.ok(said == "../lowlatd_%s_%s.deb" % (changelog.group(1), arch),
         "README.md's package file is the one dpkg-buildpackage writes (debian/changelog's version)",
         "README: %s -> %s" % (deb[0], said))


def test(t):
    check_program(t, "lowlatd", u.src("daemon", "lowlatd.c"), "lowlatd.8", has_verbs=False)
    check_program(t, "lowlatctl", u.src("lowlatctl", "lowlatctl.c"), "lowlatctl.1", has_verbs=True)
    check_config_keys(t)
    check_configs(t)
    check_line_limit(t)
    check_groff(t)
    check_kinds(t)
    check_description(t)
    check_indentation(t)
    check_small_claims(t)


if __name__ == "__main__":
    u.main(test)
