#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Builds lowlatd's Debian package (dpkg-buildpackage -us -uc -b) from a copy of the source
# tree, never in it: dpkg-buildpackage writes ../*.deb and debian/ build directories. The
# result is kept in OUTDIR/HASH/, HASH being of the tree's files (names, modes, contents),
# so the packaging test and the VM suite, run on the same sources, build it once.
#
# Usage: build-deb.sh SOURCE_ROOT OUTDIR
# Prints the directory that holds the .deb, .changes, .buildinfo and build.log.
# Exit: 0 built (or found), 1 the build failed (the end of its log on stderr), 77 a tool
# is missing (Debian: dpkg-dev debhelper build-essential, in tools/packages.sh).
# Environment: DEB_BUILD_OPTIONS is passed on (e.g. parallel=2, nocheck).
set -euo pipefail

src=$(cd "${1:?usage: build-deb.sh SOURCE_ROOT OUTDIR}" && pwd)
out=${2:?usage: build-deb.sh SOURCE_ROOT OUTDIR}

for tool in dpkg-buildpackage dpkg-parsechangelog dh; do
        if ! command -v "$tool" > /dev/null; then
                echo "build-deb.sh: $tool is not installed (Debian: dpkg-dev, debhelper; tools/packages.sh lists them)" >&2
                exit 77
        fi
done

# The files of the tree: git's view when it is a checkout (tracked and untracked, not
# ignored: the build directories stay out), else everything but build*/ and .git.
list_files() {
        if git -C "$src" rev-parse --is-inside-work-tree > /dev/null 2>&1; then
                git -C "$src" ls-files -z --cached --others --exclude-standard |
                        while IFS= read -r -d '' f; do [ -e "$src/$f" ] && printf '%s\0' "$f"; done
        else
                (cd "$src" && find . \( -name .git -o -name 'build*' \) -prune -o \( -type f -o -type l \) -printf '%P\0')
        fi
}
mapfile -d '' files < <(list_files | sort -z)
[ ${#files[@]} -gt 0 ] || { echo "build-deb.sh: no files found in $src" >&2; exit 1; }
hash=$(cd "$src" && for f in "${files[@]}"; do
                printf '%s %s ' "$f" "$(stat -c %a "$f")"
                sha256sum < "$f"
        done | sha256sum | cut -c1-16)

mkdir -p "$out"
exec 9> "$out/.lock"
flock 9
dest=$out/$hash
if [ -f "$dest/done" ]; then
        echo "$dest"
        exit 0
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/lowlatd-deb.XXXXXX")
trap 'rm -rf "$work"' EXIT
version=$(dpkg-parsechangelog -l "$src/debian/changelog" -S Version)
tree=$work/lowlatd-${version%%-*}
mkdir -p "$tree"
printf '%s\0' "${files[@]}" | tar -C "$src" --null --no-recursion -T - -cf - | tar -C "$tree" -xf -

log=$work/build.log
t0=$SECONDS
if ! (cd "$tree" && dpkg-buildpackage -us -uc -b) > "$log" 2>&1; then
        echo "build-deb.sh: dpkg-buildpackage -us -uc -b failed; the end of its log:" >&2
        tail -n 40 "$log" >&2
        exit 1
fi
echo "# dpkg-buildpackage took $((SECONDS - t0)) s" >> "$log"

rm -rf "$dest.tmp"
mkdir -p "$dest.tmp"
cp "$work"/*.deb "$work"/*.changes "$work"/*.buildinfo "$log" "$dest.tmp/"
touch "$dest.tmp/done"
# Older builds (other sources) only take space.
for old in "$out"/*/; do
        old=${old%/}
        [ "$old" != "$dest.tmp" ] && [ -f "$old/done" ] && rm -rf "$old"
done
mv "$dest.tmp" "$dest"
echo "$dest"
