#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""bash completion (shell-completion/bash/): each file loaded in a real bash registers its
function, and the function, called the way bash calls it (COMP_WORDS split at '=' as
COMP_WORDBREAKS does) against the built programs, completes lowlatctl's verbs, the
options of both programs, the kinds and states of list --kind/--state (comma lists too),
measure's tools, explain's words (explain --list) and file names for --config. Run once
in a plain bash and once more after bash-completion's own script when it is installed.

Environment (tests/packaging/meson.build): LOWLATD, LOWLATCTL, LOWLATD_SOURCE_ROOT."""

import os
import re
import shutil
import subprocess

import packaging_util as u

BASH_COMPLETION = "/usr/share/bash-completion/bash_completion"
VERBS = {"status", "list", "metrics", "reload", "check", "reapply", "restore", "noise", "top", "measure", "profile", "cat-config", "suggest",
         "diff", "explain", "boot"}
CTL_OPTIONS = {"--json", "--state=", "--kind=", "--no-legend", "--config=", "--root=", "--output=", "--interval=",
               "--iterations=", "--duration=", "--cpus=", "--tool=", "--list", "--help", "--version"}
LOWLATD_OPTIONS = {"--config=", "--root=", "--observe", "--check-config", "--once", "--changed", "--json",
                   "--help", "--version"}

# Calls the completion function as bash does on TAB: one case a line of input, "WORD|WORD|...",
# the last word the one being completed; prints "CASE:" then one candidate a line.
DRIVER = r"""
while IFS= read -r line; do
        IFS='|' read -r -a COMP_WORDS <<<"$line"
        [[ $line == *'|' ]] && COMP_WORDS+=("")
        COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
        COMP_LINE="${COMP_WORDS[*]}"
        COMP_POINT=${#COMP_LINE}
        COMPREPLY=()
        case ${COMP_WORDS[0]} in
                *lowlatd) "$LOWLATD_FUNCTION" ;;
                *) "$LOWLATCTL_FUNCTION" ;;
        esac
        printf 'CASE:%s\n' "$line"
        printf '%s\n' "${COMPREPLY[@]}"
done
"""


def registered_function(t, path, program, prelude):
    """Sources the file in bash and returns the function `complete -p` names for program."""
    p = u.run(["bash", "--norc", "--noprofile", "-c", '%s source "$1" && complete -p %s' % (prelude, program),
               "bash", path])
    m = re.search(r"complete .*-F (\S+) %s$" % re.escape(program), p.stdout.strip())
    t.ok(p.returncode == 0 and m, "%s: sourced in bash, it registers a function for %s" % (
        os.path.relpath(path, u.SOURCE_ROOT), program), u.describe(p))
    return m.group(1) if m else None


def complete(cases, ctl_function, lowlatd_function, prelude):
    """{case: [candidates]} for every case ("WORD|WORD|..."), in one bash."""
    script = "%s source \"$1\"; source \"$2\"\n%s" % (prelude, DRIVER)
    env = dict(os.environ, LOWLATCTL_FUNCTION=ctl_function, LOWLATD_FUNCTION=lowlatd_function)
    p = subprocess.run(["bash", "--norc", "--noprofile", "-c", script, "bash",
                        u.src("shell-completion", "bash", "lowlatctl"), u.src("shell-completion", "bash", "lowlatd")],
                       input="\n".join(cases) + "\n", stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=60, env=env)
    got, current = {}, None
    for line in p.stdout.splitlines():
        if line.startswith("CASE:"):
            current = line[5:]
            got[current] = []
        elif current is not None and line:
            got[current].append(line)
    return got, p


def help_options(program):
    """The long options --help lists, each "--name" or "--name=" when it takes a value."""
    p = u.run([program, "--help"])
    return set(re.findall(r"(?m)^ {2,}(?:-[a-zA-Z] )?(--[a-z][a-z-]*=?)", p.stdout))


def help_verbs():
    p = u.run([u.LOWLATCTL, "--help"])
    commands = p.stdout.split("Commands:", 1)[-1].split("Options:", 1)[0]
    return set(re.findall(r"(?m)^  ([a-z][a-z-]*) ", commands))


def help_kinds():
    p = u.run([u.LOWLATCTL, "list", "--kind=help"])
    return set(p.stdout.split()) if p.returncode == 0 else set()


def check_round(t, ctl_function, lowlatd_function, prelude, label):
    ctl, lowlatd = u.LOWLATCTL, u.LOWLATD
    tmp = u.tempdir("lowlat-completion-")
    u.write(os.path.join(tmp, "lowlatd.conf"), "[daemon]\n")
    u.write(os.path.join(tmp, "other.txt"), "")
    os.mkdir(os.path.join(tmp, "rootdir"))
    os.mkdir(os.path.join(tmp, "profiles"))
    u.write(os.path.join(tmp, "profiles", "mine.conf"), "[pm]\n")
    u.write(os.path.join(tmp, "profiles", "other.conf"), "[pm]\n")
    cases = {
        "verbs": (ctl, ""),
        "verbs after an option": (ctl, "--json", ""),
        "a verb's prefix": (ctl, "me"),
        "nothing after the verb": (ctl, "status", ""),
        "options": (ctl, "list", "--"),
        "an option's prefix": (ctl, "list", "--k"),
        "kinds (--kind=)": (ctl, "list", "--kind", "=", ""),
        "kinds by prefix (--kind=sys)": (ctl, "list", "--kind", "=", "sys"),
        "kinds (--kind KIND)": (ctl, "list", "--kind", "gov"),
        "a comma list of kinds": (ctl, "list", "--kind", "sysctl,gov"),
        "states (--state=dr)": (ctl, "list", "--state", "=", "dr"),
        "tools": (ctl, "measure", "--tool", ""),
        "profile's words": (ctl, "profile", ""),
        "profile names after show": (ctl, "--config", os.path.join(tmp, "lowlatd.conf"), "profile", "show", "m"),
        "profile names, --config=": (ctl, "--config", "=", os.path.join(tmp, "lowlatd.conf"), "profile", "show", ""),
        "files for --config": (ctl, "check", "--config", os.path.join(tmp, "low")),
        "explain's keys": (ctl, "explain", "pm.gov"),
        "explain's findings and events": (ctl, "--json", "explain", "dri"),
        "nothing after explain's word": (ctl, "explain", "drift", ""),
        "lowlatd options": (lowlatd, "--"),
        "lowlatd options by prefix": (lowlatd, "--ch"),
        "lowlatd --config FILE": (lowlatd, "--config", os.path.join(tmp, "low")),
        "lowlatd --root DIR": (lowlatd, "--root", os.path.join(tmp, "r")),
    }
    keys = {name: "|".join(words) for name, words in cases.items()}
    got, p = complete(list(keys.values()), ctl_function, lowlatd_function, prelude)
    if not t.ok(p.returncode == 0 and len(got) == len(cases), "%s: bash ran every case" % label, u.describe(p)):
        return

    def g(name):
        return got.get(keys[name], [])

    kinds, verbs = help_kinds(), help_verbs()
    ctl_options, lowlatd_options = help_options(ctl), help_options(lowlatd)
    # What the programs' help lists, and at least what lowlatctl(1) and lowlatd(8) name.
    expect = {
        "verbs": VERBS <= verbs and set(g("verbs")) == verbs,
        "verbs after an option": set(g("verbs after an option")) == verbs,
        "a verb's prefix": set(g("a verb's prefix")) == {"metrics", "measure"},
        "nothing after the verb": g("nothing after the verb") == [],
        "options": CTL_OPTIONS <= ctl_options and set(g("options")) == ctl_options,
        "an option's prefix": g("an option's prefix") == ["--kind="],
        "kinds (--kind=)": len(kinds) > 20 and set(g("kinds (--kind=)")) == kinds,
        "kinds by prefix (--kind=sys)": set(g("kinds by prefix (--kind=sys)")) == {"sysctl", "sysfs"},
        "kinds (--kind KIND)": g("kinds (--kind KIND)") == ["governor"],
        "a comma list of kinds": g("a comma list of kinds") == ["sysctl,governor"],
        "states (--state=dr)": g("states (--state=dr)") == ["drifted"],
        "tools": set(g("tools")) == {"timerlat", "cyclictest", "oslat"},
        "profile's words": set(g("profile's words")) == {"list", "show"},
        "profile names after show": g("profile names after show") == ["mine"],
        "profile names, --config=": {"mine", "other"} <= set(g("profile names, --config=")),
        "files for --config": g("files for --config") == [os.path.join(tmp, "lowlatd.conf")],
        "explain's keys": g("explain's keys") == ["pm.governor"],
        "explain's findings and events": g("explain's findings and events") == ["drift"],
        "nothing after explain's word": g("nothing after explain's word") == [],
        "lowlatd options": LOWLATD_OPTIONS <= lowlatd_options and set(g("lowlatd options")) == lowlatd_options,
        "lowlatd options by prefix": set(g("lowlatd options by prefix")) == {"--check-config", "--changed"},
        "lowlatd --config FILE": g("lowlatd --config FILE") == [os.path.join(tmp, "lowlatd.conf")],
        "lowlatd --root DIR": g("lowlatd --root DIR") == [os.path.join(tmp, "rootdir")],
    }
    for name, ok in expect.items():
        t.ok(ok, "%s: %s (%s)" % (label, name, " ".join(cases[name][1:]) or "empty"), "got %r" % g(name))


def test(t):
    if not shutil.which("bash"):
        raise u.Skip("bash is not installed")
    u.require_program(u.LOWLATCTL, "lowlatctl")
    u.require_program(u.LOWLATD, "lowlatd")
    rounds = [("", "plain bash")]
    if os.path.isfile(BASH_COMPLETION):
        rounds.append(('source %s;' % BASH_COMPLETION, "with bash-completion"))
    else:
        t.note("bash-completion is not installed: checked in a plain bash only")
    for prelude, label in rounds:
        ctl_function = registered_function(t, u.src("shell-completion", "bash", "lowlatctl"), "lowlatctl", prelude)
        lowlatd_function = registered_function(t, u.src("shell-completion", "bash", "lowlatd"), "lowlatd", prelude)
        if ctl_function and lowlatd_function:
            check_round(t, ctl_function, lowlatd_function, prelude, label)


if __name__ == "__main__":
    u.main(test)
