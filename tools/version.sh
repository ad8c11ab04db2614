#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The version lowlatd and lowlatctl report (--version, the bus property Version, the
# journal's start message), printed on one line. Meson runs it at every build (vcs_tag).
#
# Usage: version.sh SOURCE_ROOT PACKAGE_VERSION PROJECT_VERSION
#   PACKAGE_VERSION  meson's package_version option: a package build (debian/rules)
#                    passes its own version, which then wins, so that the binaries in a
#                    .deb say what dpkg says. Empty otherwise.
#   PROJECT_VERSION  meson's project version, for a tree that is not a git checkout.
# Otherwise, in a git checkout whose top is SOURCE_ROOT: `git describe` against the
# newest tag vX.Y.Z ("0.1.0-230-g8bbec47"), or, with no such tag, the same shape counted
# from the first commit ("0.1.0-392-ga95bff9"); "-dirty" when tracked files differ from
# the commit. A tarball unpacked inside some other repository is not that repository.
set -u

src=$1 package=$2 project=$3

if [ -n "$package" ]; then
        echo "$package"
        exit 0
fi
if command -v git > /dev/null 2>&1 &&
        top=$(git -C "$src" rev-parse --show-toplevel 2> /dev/null) &&
        [ "$(cd "$top" && pwd -P)" = "$(cd "$src" && pwd -P)" ]; then
        if described=$(git -C "$src" describe --tags --match 'v[0-9]*' --abbrev=7 --dirty 2> /dev/null); then
                echo "${described#v}"
                exit 0
        fi
        if count=$(git -C "$src" rev-list --count HEAD 2> /dev/null) &&
                commit=$(git -C "$src" describe --always --abbrev=7 --dirty 2> /dev/null); then
                echo "$project-$count-g$commit"
                exit 0
        fi
fi
echo "$project"
