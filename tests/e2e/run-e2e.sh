#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The e2e suite, host side: boots a Debian 12 guest under qemu (software emulation), with
# systemd as PID 1, real NICs (e1000e, virtio-net), a virtio-blk root and isolated CPUs,
# installs this build into it and runs guest-test.sh there (lowlatd-e2e.service).
#
# Steps: build the guest image if the cache lacks it (mkimage.sh; keyed by a hash of the
# recipe), `meson install --destdir` this build into a 9p share, boot, wait, print the
# guest's TAP and its "N passed, N failed" line.
# Exit: 0 all passed; 1 a check failed, the guest never reported, or a needed tool is
# missing (CI installs them: tools/packages.sh); 77 skipped: LOWLATD_E2E=0, not root
# without a cached image, or qemu cannot run on this machine.
#
# Environment:
#   LOWLATD_E2E=0              skip (tools/run-tests sets it for the ASan pass)
#   LOWLATD_E2E_CACHE=DIR      image cache (default /var/cache/lowlatd-e2e as root,
#                              else $XDG_CACHE_HOME/lowlatd-e2e)
#   LOWLATD_E2E_TIMEOUT=SEC    how long the guest may run (default 900: on a loaded 2-core
#                              host the boot alone took 88 s and sections 1-13 278 s, and
#                              each kind of setting adds its guest.d file)
#   LOWLATD_E2E_BOOT_TIMEOUT=SEC  a boot that has not started the tests by then is
#                              retried once (default 150)
#   LOWLATD_E2E_APPEND=ARGS    extra kernel command line (e.g. "loglevel=7")
#   LOWLATD_E2E_GUEST_SCRIPT=F run F in the guest instead of guest-test.sh (debugging)
#   LOWLATD_E2E_ACCEL=ACCEL    qemu -accel (default tcg,thread=multi)
#   LOWLATD_E2E_KEEP=1         keep the temporary share (results, stage) for debugging
# From meson: LOWLATD_BUILD_ROOT, LOWLATD_MESON, LOWLATD_UNIT (the unit as built).
# Artifacts: $LOWLATD_BUILD_ROOT/meson-logs/e2e/ (serial log, TAP, and on failure the
# guest's journal).
set -u
here=$(cd "$(dirname "$0")" && pwd)
t_start=$SECONDS

skip() { echo "SKIP: $*"; exit 77; }
die() { echo "FAIL: $*"; exit 1; }

case ${LOWLATD_E2E:-1} in
0|no|false) skip "LOWLATD_E2E=${LOWLATD_E2E}: the VM end-to-end suite is switched off (tools/run-tests does this for the ASan pass)" ;;
esac

build=${LOWLATD_BUILD_ROOT:?LOWLATD_BUILD_ROOT not set (run through meson test)}
meson=${LOWLATD_MESON:-meson}
timeout_s=${LOWLATD_E2E_TIMEOUT:-900}
accel=${LOWLATD_E2E_ACCEL:-tcg,thread=multi}
art=$build/meson-logs/e2e
rm -rf "$art"
mkdir -p "$art"

qemu=$(command -v qemu-system-x86_64) ||
        die "qemu-system-x86_64 is not installed (Debian: qemu-system-x86, listed in tools/packages.sh); set LOWLATD_E2E=0 to skip this suite"

# --- the image ---------------------------------------------------------------------------
if [ "$(id -u)" = 0 ]; then
        cache=${LOWLATD_E2E_CACHE:-/var/cache/lowlatd-e2e}
else
        cache=${LOWLATD_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/lowlatd-e2e}
fi
sources=${LOWLATD_E2E_APT_SOURCES:-}
if [ -z "$sources" ]; then
        for f in /etc/apt/sources.list.d/debian.sources /etc/apt/sources.list; do
                if [ -s "$f" ]; then sources=$f; break; fi
        done
fi
key=$(cat "$here/mkimage.sh" "$here/lowlatd-e2e.service" "$here/lowlatd-e2e.target" ${sources:+"$sources"} |
        sha256sum | cut -c1-16)
img=$cache/$key
mkdir -p "$cache" || die "cannot create the image cache $cache"
if [ ! -f "$img/root.ext4" ]; then
        [ "$(id -u)" = 0 ] || skip "no cached guest image in $img and building one needs root (mmdebstrap --mode=root)"
        for tool in mmdebstrap mkfs.ext4; do
                command -v $tool > /dev/null ||
                        die "$tool is not installed (Debian: mmdebstrap, e2fsprogs; listed in tools/packages.sh)"
        done
        (
                flock 9
                if [ ! -f "$img/root.ext4" ]; then
                        echo "# building the guest image $img (mmdebstrap, a few minutes; log: $art/mkimage.log)"
                        t0=$SECONDS
                        if ! timeout 1800 "$here/mkimage.sh" "$img" > "$art/mkimage.log" 2>&1; then
                                tail -n 30 "$art/mkimage.log"
                                exit 1
                        fi
                        echo "# image built in $((SECONDS - t0)) s"
                        # Older images (other recipes) only take space.
                        for old in "$cache"/????????????????; do
                                if [ -d "$old" ] && [ "$old" != "$img" ]; then rm -rf "$old"; fi
                        done
                fi
        ) 9> "$cache/.lock" || die "building the guest image failed (see $art/mkimage.log)"
else
        echo "# cached guest image: $img"
fi

# --- the share: this build, installed; the guest script; parameters ----------------------
tmp=$(mktemp -d /var/tmp/lowlatd-e2e.XXXXXX 2>/dev/null || mktemp -d)
share=$tmp/share
qemu_pid=""
cleanup() {
        [ -n "$qemu_pid" ] && kill "$qemu_pid" 2>/dev/null
        if [ "${LOWLATD_E2E_KEEP:-0}" = 1 ]; then echo "# kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM
out=$("$meson" install -C "$build" --destdir "$share/stage" --no-rebuild --quiet 2>&1) ||
        die "meson install -C $build --destdir failed:
$out"
cp "${LOWLATD_E2E_GUEST_SCRIPT:-$here/guest-test.sh}" "$share/guest-test.sh"
# The checks of one kind of setting each (sourced by guest-test.sh before its last section).
mkdir -p "$share/guest.d"
cp "$here"/guest.d/*.sh "$share/guest.d/" 2>/dev/null || true
host_exposure=""
if [ -n "${LOWLATD_UNIT:-}" ] && command -v systemd-analyze > /dev/null; then
        host_exposure=$(systemd-analyze security --offline=yes --no-pager "$LOWLATD_UNIT" 2>/dev/null |
                sed -n 's/.*Overall exposure level for lowlatd\.service: *\([0-9.]*\).*/\1/p')
fi
echo "HOST_OFFLINE_EXPOSURE='$host_exposure'" > "$share/params.sh"

# --- can qemu run here at all? -----------------------------------------------------------
probe=$(timeout 3 "$qemu" -machine q35 -accel "$accel" -nodefaults -display none -S 2>&1)
[ $? -eq 124 ] || skip "qemu cannot start a q35 machine with -accel $accel here: $probe"

# --- boot --------------------------------------------------------------------------------
cmdline="root=/dev/vda rw fsck.mode=skip console=ttyS0 loglevel=4 panic=-1 systemd.show_status=error"
cmdline+=" isolcpus=managed_irq,domain,2-3 nohz_full=2-3 rcu_nocbs=2-3 systemd.unit=lowlatd-e2e.target"
cmdline+="${LOWLATD_E2E_APPEND:+ $LOWLATD_E2E_APPEND}"
# Under software emulation a boot now and then stalls in the kernel before systemd starts
# (seen: a soft lockup of a kworker at ~20 s). A boot that has not started the test script
# within boot_timeout seconds is retried once; the stalled serial log is kept.
boot_timeout=${LOWLATD_E2E_BOOT_TIMEOUT:-150}
boot() {
        # $1: attempt number. Sets qemu_rc, timed_out, stalled.
        rm -rf "$share/results"
        mkdir -p "$share/results"
        echo "# booting the guest, attempt $1 ($accel; limit ${timeout_s} s; serial log: $art/serial.log)"
        "$qemu" -machine q35 -accel "$accel" -cpu max -smp 4 -m 2G \
                -nodefaults -display none -no-reboot \
                -kernel "$img/vmlinuz" -initrd "$img/initrd.img" -append "$cmdline" \
                -drive file="$img/root.ext4",format=raw,if=virtio,snapshot=on \
                -netdev user,id=n0,restrict=on -device e1000e,netdev=n0 \
                -netdev user,id=n1,restrict=on -device virtio-net-pci,netdev=n1 \
                -virtfs local,path="$share",mount_tag=e2e,security_model=none,id=e2e \
                -serial stdio < /dev/null > "$art/serial.log" 2>&1 &
        qemu_pid=$!
        local t0=$SECONDS
        timed_out=0 stalled=0
        while kill -0 "$qemu_pid" 2>/dev/null; do
                if [ $((SECONDS - t0)) -ge "$timeout_s" ]; then
                        timed_out=1
                        break
                fi
                if [ ! -e "$share/results/tap.txt" ] && [ $((SECONDS - t0)) -ge "$boot_timeout" ]; then
                        stalled=1
                        break
                fi
                sleep 1
        done
        if kill -0 "$qemu_pid" 2>/dev/null; then
                kill "$qemu_pid"
                sleep 2
                kill -9 "$qemu_pid" 2>/dev/null
        fi
        wait "$qemu_pid" 2>/dev/null
        qemu_rc=$?
        qemu_pid=""
}
t_boot=$SECONDS
boot 1
if [ $stalled = 1 ]; then
        mv "$art/serial.log" "$art/serial-stalled.log"
        echo "# the guest did not start the tests within ${boot_timeout} s; last of its serial log:"
        tail -n 15 "$art/serial-stalled.log" | sed 's/^/#   /'
        t_boot=$SECONDS
        boot 2
fi
t_guest=$((SECONDS - t_boot))

# --- results -----------------------------------------------------------------------------
res=$share/results
cp -r "$res/." "$art/" 2>/dev/null
echo "# guest TAP:"
[ -f "$res/tap.txt" ] && cat "$res/tap.txt"
summary=$(cat "$res/summary" 2>/dev/null)
# meson --print-errorlogs shows only the tail of a long output: repeat what failed there.
if grep -q '^not ok' "$res/tap.txt" 2>/dev/null; then
        echo "# not ok, in short:"
        grep '^not ok' "$res/tap.txt"
fi
echo "# guest ran ${t_guest} s (boot, tests, poweroff); whole suite $((SECONDS - t_start)) s; artifacts in $art"
if [ -z "$summary" ]; then
        echo "# the guest never reported (qemu exit $qemu_rc$([ $timed_out = 1 ] && echo ", killed after $timeout_s s")$([ $stalled = 1 ] && echo ", no test start within $boot_timeout s")); last of the serial log:"
        tail -n 60 "$art/serial.log" | sed 's/^/#   /'
        exit 1
fi
echo "$summary"
[ $timed_out = 0 ] || { echo "# the guest did not power off within ${timeout_s} s"; exit 1; }
read -r npass _ nfail _ <<< "${summary//,/}"
[ "${nfail:-1}" = 0 ] && [ "${npass:-0}" -gt 0 ] 2>/dev/null || exit 1
# Success: the whole journal is only kept on failure (the guest writes it then).
exit 0
