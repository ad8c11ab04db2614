#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The e2e suite, host side: boots a Debian guest under qemu (software emulation), with
# systemd as PID 1, real NICs (e1000e, virtio-net, and a virtio-net with 4 queue pairs on a
# tap in qemu's own network namespace), a virtio-blk root and isolated CPUs,
# once per kernel, installs lowlatd into it from the Debian package under test
# (apt-get install ./lowlatd_*.deb) and runs guest-test.sh there (lowlatd-e2e.service),
# which ends with apt-get purge.
#
# Kernels (LOWLATD_E2E_KERNELS, default all five, in this order):
#   6.1    Debian 12's kernel and systemd 252
#   rt     Debian 12's PREEMPT_RT kernel (linux-image-rt-amd64)
#   6.12   Debian 13: kernel 6.12, systemd 257
#   6.1-partition, 6.12-partition  6.1's and 6.12's images booted again without isolcpus,
#          nohz_full and rcu_nocbs, running guest-partition.sh ([cpus] partition: CPUs
#          isolated at run time only) instead of guest-test.sh: short second boots (about
#          2.5 minutes each), not second images; 6.1 as far as its partitions go (no
#          cpuset.cpus.isolated, the workqueues left alone: reported unsupported)
# Steps: build the package from a copy of the tree (tests/packaging/build-deb.sh; the
# packaging test's build of the same sources is reused from BUILD/deb/), then for each
# kernel: build its guest image if the cache lacks it (mkimage.sh; keyed by a hash of the
# recipe and the kernel), boot, wait, print the guest's TAP and its "N passed, N failed"
# line; last, one line per kernel and the sum.
# Exit: 0 all passed on every kernel; 1 a check failed, a guest never reported, the
# package did not build, or a needed tool is missing (CI installs them:
# tools/packages.sh); 77 skipped: LOWLATD_E2E=0, not root without a cached image, or qemu
# cannot run on this machine.
#
# Environment:
#   LOWLATD_E2E=0              skip (tools/run-tests leaves the suite out of the ASan pass)
#   LOWLATD_E2E_KERNELS=LIST   the kernels to run, e.g. "6.1" when time is short
#   LOWLATD_E2E_CACHE=DIR      image cache (default /var/cache/lowlatd-e2e as root,
#                              else $XDG_CACHE_HOME/lowlatd-e2e)
#   LOWLATD_E2E_TIMEOUT=SEC    how long one guest may run (default 1500: one file of checks per
#                              kind of setting, under software emulation on 2 busy cores)
#   LOWLATD_E2E_BOOT_TIMEOUT=SEC  a boot that has not started the tests by then is
#                              retried once (default 150)
#   LOWLATD_E2E_APPEND=ARGS    extra kernel command line (e.g. "loglevel=7")
#   LOWLATD_E2E_GUEST_SCRIPT=F run F in the guest instead of guest-test.sh (debugging)
#   LOWLATD_E2E_EXTRA=FILES    files copied into the share's extra/ (/run/e2e/extra in the
#                              guest) for such a script, e.g. gate-cycle.sh's gatecycle
#   LOWLATD_E2E_QUIET=SEC      a guest that writes no TAP line for SEC seconds (default 120;
#                              a step may ask for more: watch.sh) is stopped and reported
#   LOWLATD_E2E_HANG=GLOB      test-only: the guest script stops for good in the first step
#                              whose name matches (LOWLATD_E2E_HANG_ONCE=1: on the first boot
#                              only), to see the watchdog catch it
#   LOWLATD_E2E_ACCEL=ACCEL    qemu -accel (default tcg,thread=single: see below)
#   LOWLATD_E2E_KEEP=1         keep the temporary share (results, package) for debugging
#   LOWLATD_E2E_ARTIFACTS=DIR  where the artifacts go (default below; emptied first)
# From meson: LOWLATD_SOURCE_ROOT, LOWLATD_BUILD_ROOT, LOWLATD_UNIT (the unit as built).
# Artifacts: $LOWLATD_BUILD_ROOT/meson-logs/e2e/KERNEL/ (image build log, serial log,
# TAP, and on failure the guest's journal).
set -u
here=$(cd "$(dirname "$0")" && pwd)
t_start=$SECONDS

skip() { echo "SKIP: $*"; exit 77; }
die() { echo "FAIL: $*"; exit 1; }

case ${LOWLATD_E2E:-1} in
0|no|false) skip "LOWLATD_E2E=${LOWLATD_E2E}: the VM end-to-end suite is switched off" ;;
esac

build=${LOWLATD_BUILD_ROOT:?LOWLATD_BUILD_ROOT not set (run through meson test)}
source_root=${LOWLATD_SOURCE_ROOT:-$(cd "$here/../.." && pwd)}
timeout_s=${LOWLATD_E2E_TIMEOUT:-1500}
LOWLATD_E2E_HANG=${LOWLATD_E2E_HANG:-}
# Single-threaded TCG: the guest's four vCPUs take turns on one host thread. Under QEMU's
# multi-threaded TCG, kernel text that one vCPU patches while another runs it is not kept
# coherent: a stale breakpoint byte runs after the patch is done ("Oops: int3"), or a CPU
# never leaves an IPI (tests/e2e/gate-cycle.sh crashed or hung every kernel within 11-166
# rounds of the noise gate; one rt guest of a whole suite hung in rtla timerlat). Text is
# patched whenever a tracer, a tracepoint, a perf event or a static key is turned on or
# off (lowlatctl measure, the noise gate, the first cgroup BPF program of a kind that
# systemd attaches, RPS, a module's jump labels, ...): far more places than a list of the
# suite's steps could keep safe. Single-threaded, gate-cycle.sh's loops passed on every
# kernel, and the suite costs little more time: docs/e2e.md has the figures.
accel=${LOWLATD_E2E_ACCEL:-tcg,thread=single}
kernels=${LOWLATD_E2E_KERNELS:-6.1 rt 6.12 6.1-partition 6.12-partition}
for k in $kernels; do
        # rt-6.12 (Debian 13's PREEMPT_RT kernel) is for guest scripts such as gate-cycle.sh;
        # guest-test.sh knows the three above, guest-partition.sh the *-partition ones.
        case $k in 6.1|rt|6.12|rt-6.12|6.1-partition|6.12-partition) ;;
        *) die "LOWLATD_E2E_KERNELS: unknown kernel '$k' (6.1, rt, 6.12, rt-6.12, 6.1-partition, 6.12-partition)" ;;
        esac
done
[ -n "${kernels// /}" ] || die "LOWLATD_E2E_KERNELS is empty"
art=${LOWLATD_E2E_ARTIFACTS:-$build/meson-logs/e2e}
rm -rf "$art"
mkdir -p "$art"

qemu=$(command -v qemu-system-x86_64) ||
        die "qemu-system-x86_64 is not installed (Debian: qemu-system-x86, listed in tools/packages.sh); set LOWLATD_E2E=0 to skip this suite"

# --- can qemu run here at all? -----------------------------------------------------------
probe=$(timeout 3 "$qemu" -machine q35 -accel "$accel" -nodefaults -display none -S 2>&1)
[ $? -eq 124 ] || skip "qemu cannot start a q35 machine with -accel $accel here: $probe"

# --- the multi-queue NIC's network namespace --------------------------------------------
# The guest's third NIC is a virtio-net with 4 queue pairs (RPS/XPS per queue, ethtool -L;
# guest.d/62-mq.sh): qemu's user network has one queue, so it sits on a multi-queue tap.
# The tap never exists on this host: qemu runs in a network namespace of its own (unshare
# --net, which execs, so the pid is qemu's), where the tap is made before qemu opens it,
# and given an address as the guest's peer (10.0.3.1/24; the guest takes 10.0.3.2). The
# namespace and the tap go with qemu. Nothing else of qemu's uses the host's network: the
# user NICs are restrict=on and the share is 9p. Where no namespace or tap can be made,
# the guest gets no such NIC and its checks are skipped with this reason.
MQ_TAP=e2etap0 MQ_PEER=10.0.3.1 MQ_GUEST=10.0.3.2 MQ_QUEUES=4
mq_setup="ip link set lo up && ip tuntap add dev $MQ_TAP mode tap multi_queue &&
        ip addr add $MQ_PEER/24 dev $MQ_TAP && ip link set $MQ_TAP up"
mq_reason=""
if ! command -v unshare > /dev/null || ! command -v ip > /dev/null; then
        mq_reason="unshare (util-linux) or ip (iproute2) is not installed on the host"
elif ! probe=$(unshare --net -- sh -c "$mq_setup" 2>&1); then
        mq_reason="no multi-queue tap in a private network namespace here (unshare --net; ip tuntap add mode tap multi_queue): ${probe:-failed}"
fi
if [ -z "$mq_reason" ]; then
        echo "# multi-queue NIC: virtio-net, $MQ_QUEUES queue pairs, on tap $MQ_TAP ($MQ_PEER) in qemu's own network namespace"
else
        echo "# no multi-queue NIC in the guest: $mq_reason"
fi

if [ "$(id -u)" = 0 ]; then
        cache=${LOWLATD_E2E_CACHE:-/var/cache/lowlatd-e2e}
else
        cache=${LOWLATD_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/lowlatd-e2e}
fi
mkdir -p "$cache" || die "cannot create the image cache $cache"
sources=${LOWLATD_E2E_APT_SOURCES:-}
if [ -z "$sources" ]; then
        for f in /etc/apt/sources.list.d/debian.sources /etc/apt/sources.list; do
                if [ -s "$f" ]; then sources=$f; break; fi
        done
fi

# --- the package under test --------------------------------------------------------------
t0=$SECONDS
deb_dir=$("$source_root/tests/packaging/build-deb.sh" "$source_root" "$build/deb" 2> "$art/build-deb.err")
rc=$?
[ $rc -eq 0 ] || die "the Debian package did not build (build-deb.sh exit $rc):
$(cat "$art/build-deb.err")"
deb=$(ls "$deb_dir"/lowlatd_*.deb 2>/dev/null | grep -v dbgsym | head -n1)
[ -n "$deb" ] || die "build-deb.sh left no lowlatd_*.deb in $deb_dir"
echo "# package: $deb ($((SECONDS - t0)) s: built, or found from the packaging test's build)"

host_exposure=""
if [ -n "${LOWLATD_UNIT:-}" ] && command -v systemd-analyze > /dev/null; then
        host_exposure=$(systemd-analyze security --offline=yes --no-pager "$LOWLATD_UNIT" 2>/dev/null |
                sed -n 's/.*Overall exposure level for lowlatd\.service: *\([0-9.]*\).*/\1/p')
fi
host_systemd=$(systemctl --version 2>/dev/null | awk 'NR == 1 { print $2 }')

tmp=$(mktemp -d /var/tmp/lowlatd-e2e.XXXXXX 2>/dev/null || mktemp -d)
qemu_pid=""
cleanup() {
        [ -n "$qemu_pid" ] && kill "$qemu_pid" 2>/dev/null
        if [ "${LOWLATD_E2E_KEEP:-0}" = 1 ]; then echo "# kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# --- one kernel's image ------------------------------------------------------------------
# ensure_image KERNEL: sets img (the cached image directory) or returns 1.
ensure_image() {
        local k=$1 key
        key=$( (cat "$here/mkimage.sh" "$here/lowlatd-e2e.service" "$here/lowlatd-e2e.target" ${sources:+"$sources"}
                echo "kernel $k") | sha256sum | cut -c1-16)
        img=$cache/$k-$key
        if [ -f "$img/root.ext4" ]; then
                echo "# cached guest image: $img"
                return 0
        fi
        mkdir -p "$art/$k"
        if [ "$(id -u)" != 0 ]; then
                echo "# no cached guest image in $img and building one needs root (mmdebstrap --mode=root)"
                return 77
        fi
        for tool in mmdebstrap mkfs.ext4; do
                command -v $tool > /dev/null ||
                        die "$tool is not installed (Debian: mmdebstrap, e2fsprogs; listed in tools/packages.sh)"
        done
        (
                flock 9
                if [ ! -f "$img/root.ext4" ]; then
                        echo "# building the guest image $img (mmdebstrap, a few minutes; log: $art/$k/mkimage.log)"
                        t0=$SECONDS
                        if ! timeout 1800 "$here/mkimage.sh" "$k" "$img" > "$art/$k/mkimage.log" 2>&1; then
                                tail -n 30 "$art/$k/mkimage.log"
                                exit 1
                        fi
                        echo "# image built in $((SECONDS - t0)) s"
                        # Older images of this kernel (other recipes) only take space. Images
                        # named by a bare hash, or for other kernels, are left alone.
                        for old in "$cache/$k"-????????????????; do
                                if [ -d "$old" ] && [ "$old" != "$img" ]; then rm -rf "$old"; fi
                        done
                fi
        ) 9> "$cache/.lock" || { echo "# building the guest image for kernel $k failed (see $art/$k/mkimage.log)"; return 1; }
}

# --- one kernel's boot -------------------------------------------------------------------
cmdline_base="root=/dev/vda rw fsck.mode=skip console=ttyS0 loglevel=4 panic=-1 systemd.show_status=error"
cmdline_base+=" systemd.unit=lowlatd-e2e.target${LOWLATD_E2E_APPEND:+ $LOWLATD_E2E_APPEND}"
# The boot isolation every guest has but the *-partition ones (run_kernel sets cmdline).
boot_isolation="isolcpus=managed_irq,domain,2-3 nohz_full=2-3 rcu_nocbs=2-3"
# Under software emulation a boot now and then stalls in the kernel before systemd starts
# (seen: a soft lockup of a kworker at ~20 s). A boot that has not started the test script
# within boot_timeout seconds is retried once (watch.sh guest_attempts), its serial log kept.
boot_timeout=${LOWLATD_E2E_BOOT_TIMEOUT:-150}
# Once the tests run, a guest that writes no TAP line for quiet_s seconds (longer where a
# step says so: watch.sh) is stopped then and there, not at timeout_s.
quiet_s=${LOWLATD_E2E_QUIET:-120}
# shellcheck source=tests/e2e/watch.sh
. "$here/watch.sh"
boot() {
        # $1: attempt number; share, img, kart set by the caller. Sets qemu_rc and the
        # watch_guest results (WATCH_RESULT, WATCH_STEP, ...).
        rm -rf "$share/results"
        mkdir -p "$share/results"
        sed -i '/^E2E_ATTEMPT=/d' "$share/params.sh"
        echo "E2E_ATTEMPT=$1" >> "$share/params.sh"
        echo "# booting the guest, attempt $1 ($accel; limit ${timeout_s} s, ${quiet_s} s without a TAP line; serial log: $kart/serial.log)"
        local wrap=() mq=()
        if [ -z "$mq_reason" ]; then
                # sh execs qemu: qemu_pid below is qemu's.
                wrap=(unshare --net -- sh -c "$mq_setup"' && exec "$@"' qemu)
                # queues=N pairs, vectors: one per queue of either way, config and control.
                mq=(-netdev "tap,id=n2,ifname=$MQ_TAP,script=no,downscript=no,queues=$MQ_QUEUES"
                        -device "virtio-net-pci,netdev=n2,mq=on,vectors=$((2 * MQ_QUEUES + 2)),mac=52:54:00:e2:e0:04")
        fi
        "${wrap[@]}" "$qemu" -machine q35 -accel "$accel" -cpu max -smp 4 -m 2G \
                -nodefaults -display none -no-reboot \
                -kernel "$img/vmlinuz" -initrd "$img/initrd.img" -append "$cmdline" \
                -drive file="$img/root.ext4",format=raw,if=virtio,snapshot=on \
                -netdev user,id=n0,restrict=on -device e1000e,netdev=n0 \
                -netdev user,id=n1,restrict=on -device virtio-net-pci,netdev=n1 \
                "${mq[@]}" \
                -virtfs local,path="$share",mount_tag=e2e,security_model=none,id=e2e \
                -serial stdio < /dev/null > "$kart/serial.log" 2>&1 &
        qemu_pid=$!
        watch_guest "$qemu_pid" "$share/results/tap.txt" "$quiet_s" "$boot_timeout" "$timeout_s"
        if kill -0 "$qemu_pid" 2>/dev/null; then
                kill "$qemu_pid"
                sleep 2
                kill -9 "$qemu_pid" 2>/dev/null
        fi
        wait "$qemu_pid" 2>/dev/null
        qemu_rc=$?
        qemu_pid=""
        echo "# attempt $1: $(watch_report)"
        [ "$WATCH_RESULT" = exited ] && return 0
        # Stopped: keep what it said, and show the end of it here.
        mv "$kart/serial.log" "$kart/serial-attempt$1.log"
        cp "$share/results/tap.txt" "$kart/tap-attempt$1.txt" 2>/dev/null
        if [ -f "$share/results/tap.txt" ]; then
                echo "# last of its TAP ($kart/tap-attempt$1.txt):"
                tail -n 5 "$share/results/tap.txt" | sed 's/^/#   /'
        fi
        echo "# last of its serial log ($kart/serial-attempt$1.log):"
        tail -n 40 "$kart/serial-attempt$1.log" | sed 's/^/#   /'
}

# run_kernel KERNEL: image, share, boot, results. Appends to the totals; returns 0 when
# every check passed, 77 when the kernel could not run here, else 1.
total_pass=0 total_fail=0
results=()
run_kernel() {
        local k=$1 t_k=$SECONDS t_image summary npass nfail rc
        kart=$art/$k
        mkdir -p "$kart"
        echo "# ===== kernel $k"
        # A *-partition pseudo-kernel boots its kernel's image without the boot isolation
        # and runs guest-partition.sh.
        local image_k=${k%-partition} script=$here/guest-test.sh
        cmdline="$cmdline_base $boot_isolation"
        if [ "$image_k" != "$k" ]; then
                cmdline=$cmdline_base
                script=$here/guest-partition.sh
        fi
        ensure_image "$image_k"
        rc=$?
        t_image=$((SECONDS - t_k))
        if [ $rc -ne 0 ]; then
                results+=("$k: $([ $rc = 77 ] && echo skipped || echo failed): no guest image")
                return $rc
        fi

        # The share: the package, the guest script and its checks, parameters.
        share=$tmp/$k/share
        mkdir -p "$share/deb" "$share/guest.d"
        cp "$deb" "$share/deb/"
        cp "${LOWLATD_E2E_GUEST_SCRIPT:-$script}" "$share/guest-test.sh"
        cp "$here/guest-lib.sh" "$share/"
        # lowlatctl boot on a real GRUB, sourced by guest-partition.sh where grub is installed.
        cp "$here/guest-boot.sh" "$share/"
        if [ -n "${LOWLATD_E2E_EXTRA:-}" ]; then
                mkdir -p "$share/extra"
                # shellcheck disable=SC2086 # a list of files
                cp $LOWLATD_E2E_EXTRA "$share/extra/" || die "LOWLATD_E2E_EXTRA: cannot copy $LOWLATD_E2E_EXTRA"
        fi
        # The checks of one kind of setting each (sourced by guest-test.sh before its last sections).
        cp "$here"/guest.d/*.sh "$share/guest.d/" 2>/dev/null || true
        # The Ansible role, which guest.d/90-ansible.sh runs against the guest itself.
        cp -r "$here/../../contrib/ansible" "$share/ansible"
        {
                echo "HOST_OFFLINE_EXPOSURE='$host_exposure'"
                echo "HOST_SYSTEMD='$host_systemd'"
                echo "E2E_KERNEL='$k'"
                echo "E2E_MQ_MAC='$([ -z "$mq_reason" ] && echo 52:54:00:e2:e0:04)'"
                echo "E2E_MQ_QUEUES=$MQ_QUEUES E2E_MQ_PEER=$MQ_PEER E2E_MQ_GUEST=$MQ_GUEST"
                echo "E2E_MQ_REASON='${mq_reason//\'/}'"
                echo "E2E_HANG='${LOWLATD_E2E_HANG//\'/}' E2E_HANG_ONCE='${LOWLATD_E2E_HANG_ONCE:-0}'"
        } > "$share/params.sh"

        local t_boot=$SECONDS t_guest
        guest_attempts boot
        t_guest=$((SECONDS - t_boot))

        local res=$share/results
        cp -r "$res/." "$kart/" 2>/dev/null
        echo "# guest TAP ($k):"
        [ -f "$res/tap.txt" ] && cat "$res/tap.txt"
        summary=$(cat "$res/summary" 2>/dev/null)
        # meson --print-errorlogs shows only the tail of a long output: repeat what failed there.
        if grep -q '^not ok' "$res/tap.txt" 2>/dev/null; then
                echo "# not ok ($k), in short:"
                grep '^not ok' "$res/tap.txt"
        fi
        echo "# kernel $k: image ${t_image} s, guest ran ${t_guest} s (boot, tests, poweroff), $((SECONDS - t_k)) s in all; artifacts in $kart"
        [ -n "$GUEST_RETRIED" ] && echo "# kernel $k booted twice: $GUEST_RETRIED; the TAP above is the second boot's"
        if [ -z "$summary" ]; then
                echo "# the guest never reported (qemu exit $qemu_rc; $(watch_report))"
                if [ -f "$kart/serial.log" ]; then
                        echo "# last of the serial log:"
                        tail -n 60 "$kart/serial.log" | sed 's/^/#   /'
                fi
                results+=("$k: failed: $(watch_report)${GUEST_RETRIED:+ (second boot; $GUEST_RETRIED)} ($((SECONDS - t_k)) s)")
                total_fail=$((total_fail + 1))
                return 1
        fi
        read -r npass _ nfail _ <<< "${summary//,/}"
        total_pass=$((total_pass + ${npass:-0})) total_fail=$((total_fail + ${nfail:-1}))
        results+=("$k: $summary ($(cat "$res/kernel" 2>/dev/null); guest ${t_guest} s, $((SECONDS - t_k)) s in all; longest quiet ${WATCH_LONGEST} s in '${WATCH_LONGEST_STEP}'${GUEST_RETRIED:+; booted twice: $GUEST_RETRIED})")
        if [ "$WATCH_RESULT" != exited ]; then
                echo "# the guest reported but did not power off: $(watch_report)"
                return 1
        fi
        [ "${nfail:-1}" = 0 ] && [ "${npass:-0}" -gt 0 ] 2>/dev/null
}

status=0 ran=0
for k in $kernels; do
        run_kernel "$k"
        rc=$?
        case $rc in 0) ran=$((ran + 1)) ;; 77) ;; *) ran=$((ran + 1)); status=1 ;; esac
done
echo "# ===== per kernel"
printf '# %s\n' "${results[@]}"
echo "# whole suite $((SECONDS - t_start)) s"
[ $ran -gt 0 ] || skip "no kernel could run here: ${results[*]}"
echo "$total_pass passed, $total_fail failed"
# Success: the whole journal is only kept on failure (the guest writes it then).
exit $status
