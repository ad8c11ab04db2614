#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Not part of the suite: a guest script for run-e2e.sh that patches kernel text over and
# over, the way the suite's own steps do, to measure how the emulator copes (docs/e2e.md).
# As root, from a configured build directory BUILD, for kernels K (6.1, rt, 6.12, rt-6.12):
#
#   LOWLATD_SOURCE_ROOT=$PWD LOWLATD_BUILD_ROOT=$PWD/BUILD LOWLATD_E2E_KERNELS="K ..." \
#   LOWLATD_E2E_GUEST_SCRIPT=tests/e2e/gate-cycle.sh \
#   LOWLATD_E2E_EXTRA=BUILD/tests/tools/gatecycle LOWLATD_E2E_TIMEOUT=3000 \
#   [LOWLATD_E2E_ACCEL=tcg,thread=multi] tests/e2e/run-e2e.sh
#
# Phase 1: 300 rounds of tests/tools/gatecycle, which opens and closes lowlatd's noise gate
# (the perf rings on 13 interrupt tracepoints, lib/noise/gate.c) on CPUs 2-3, 20 ms held;
# phase 2: 300 more while pings flood through the virtio-net NIC's receive IRQ, pinned to
# isolated CPU 3; where the kernel has the timerlat tracer (of Debian's kernels, only the
# RT ones), phase 3 switches it on and off 300 times through tracefs and phase 4 runs
# lowlatctl measure's own rtla timerlat hist command line 30 times (ROUNDS_TRACER and
# ROUNDS_RTLA below; the docs' figures are of 100 runs).
# Under QEMU 7.2's multi-threaded TCG (the suite's accelerator until 2026-12-01) the gate
# failed on every kernel, RT or not:
#   - 6.12: after 15 rounds, "Oops: int3" in __sysvec_call_function_single: a CPU woken
#     from HLT by a function-call IPI ran a breakpoint byte the patching had already
#     removed (the code at RIP read back as the NOP), then "Fatal exception in interrupt";
#   - 6.12-rt: the same oops after 165 rounds;
#   - 6.1: after 11 rounds, "rcu_preempt kthread timer wakeup didn't happen ... Possible
#     timer handling issue on cpu=0", then nothing;
#   - 6.1-rt: hung after 166 rounds of phase 1, and in another run after 18 rounds of the
#     flood.
# The flood alone (no gate) ran 420 s with the guest alive. Under single-threaded TCG, the
# suite's accelerator since, every phase passed on 6.1, rt and 6.12 (docs/e2e.md): the
# emulator, not the kernel. "ok"/"not ok" per phase in /run/e2e/results/tap.txt; a phase
# that fails or does not end within its limit is "not ok", with SysRq w, l and t on the
# console where it still prints.
set -u
export LC_ALL=C
SHARE=/run/e2e
R=$SHARE/results
mkdir -p "$R"
TAP=$R/tap.txt
# shellcheck source=/dev/null
[ -f "$SHARE/params.sh" ] && . "$SHARE/params.sh"
: > "$TAP"
say() { printf '%s\n' "$*"; printf '%s\n' "$*" >> "$TAP"; sync; }
n=0 npass=0 nfail=0
pass() { n=$((n + 1)); npass=$((npass + 1)); say "ok $n - $*"; }
fail() { n=$((n + 1)); nfail=$((nfail + 1)); say "not ok $n - $*"; }
finish() {
        say "1..$n"
        say "$npass passed, $nfail failed"
        echo "$npass passed, $nfail failed" > "$R/summary"
        echo "kernel $(uname -r), systemd $(systemctl --version | awk 'NR == 1 { print $2 }')" > "$R/kernel"
        dmesg > "$R/dmesg.txt"
        sync
        exit 0
}
echo 1 > /proc/sys/kernel/sysrq
say "# kernel $(uname -a), realtime $(cat /sys/kernel/realtime 2>/dev/null || echo 0)"
GATECYCLE=$SHARE/extra/gatecycle
if [ ! -x "$GATECYCLE" ]; then
        fail "gatecycle in the share (LOWLATD_E2E_EXTRA=BUILD/tests/tools/gatecycle)"
        finish
fi
nic=""
for d in /sys/class/net/*; do
        if [ "$(basename "$(readlink -f "$d/device/driver" 2>/dev/null)")" = virtio_net ]; then
                nic=${d##*/}
                break
        fi
done
dev=$(basename "$(readlink -f "/sys/class/net/$nic/device")")
irq=$(awk -v re="^${dev}-input\\.0\$" '$1 ~ /^[0-9]+:$/ && $NF ~ re { sub(":", "", $1); print $1 }' /proc/interrupts | head -n1)
if [ -z "$nic" ] || [ -z "$irq" ]; then
        fail "a virtio-net NIC with a receive IRQ: '$nic' '$irq'"
        finish
fi
ip link set "$nic" up
ip addr replace 10.0.2.15/24 dev "$nic"
echo 3 > "/proc/irq/$irq/smp_affinity_list"
say "# $nic ($dev): receive IRQ $irq pinned to CPU 3"
# stuck LABEL: a loop that failed or did not end within its limit: what the console can
# still tell (SysRq w, l, t), then the results.
stuck() {
        fail "$1"
        echo w > /proc/sysrq-trigger
        echo l > /proc/sysrq-trigger
        sleep 5
        echo t > /proc/sysrq-trigger
        sleep 10
        finish
}
# phase LABEL CYCLES
phase() {
        local out rc
        { timeout 900 "$GATECYCLE" "$2" 20 2 3 2>&1; echo "exit $?"; } | tee /dev/console > "$R/gatecycle.txt"
        out=$(grep -v '^exit ' "$R/gatecycle.txt")
        rc=$(sed -n 's/^exit //p' "$R/gatecycle.txt")
        if [ "$rc" -eq 0 ]; then
                pass "$1: $(tail -n1 <<< "$out")"
                return 0
        fi
        stuck "$1: gatecycle exit $rc after: $(tail -n2 <<< "$out" | tr '\n' ' ')"
}
t0=$SECONDS
phase "300 open/close cycles, no traffic" 300
ping -q -f -w 900 -I "$nic" 10.0.2.2 > /dev/null 2>&1 &
flood=$!
phase "300 open/close cycles with a ping flood on CPU 3's IRQ" 300
kill "$flood" 2>/dev/null
say "# IRQ $irq: $(awk -v i="$irq:" '$1 == i' /proc/interrupts | tr -s ' ')"
say "# the gate's 600 rounds took $((SECONDS - t0)) s"

# Phases 3 and 4: the timerlat tracer, which lowlatctl measure starts through rtla where the
# kernel has it (guest.d/75-measure.sh; the step that hung the rt guest of a CI run). Turning
# it on hooks the osnoise probes onto the irq, softirq, sched and nmi tracepoints (and turns
# on its own), so each switch patches text like a gate round does. Phase 3 switches it
# through tracefs, phase 4 runs lowlatctl measure's own rtla command line.
T=/sys/kernel/tracing
[ -d "$T/events" ] || mount -t tracefs nodev "$T" 2>/dev/null
ROUNDS_TRACER=300 ROUNDS_RTLA=30
if ! grep -qw timerlat "$T/available_tracers" 2>/dev/null; then
        say "ok $((n + 1)) - $ROUNDS_TRACER timerlat on/off rounds # SKIP no timerlat tracer in $(uname -r): $(cat "$T/available_tracers" 2>/dev/null)"
        say "ok $((n + 2)) - $ROUNDS_RTLA rtla timerlat hist runs # SKIP no timerlat tracer"
        n=$((n + 2))
        finish
fi
t0=$SECONDS
tracer_rounds() {
        local i
        for ((i = 1; i <= ROUNDS_TRACER; i++)); do
                echo timerlat > "$T/current_tracer" || return 1
                sleep 0.05
                echo nop > "$T/current_tracer" || return 1
                [ $((i % 50)) -eq 0 ] && echo "timerlat round $i, $((SECONDS - t0)) s" > /dev/console
        done
        return 0
}
tracer_rounds &
tp=$!
while kill -0 "$tp" 2>/dev/null && [ $((SECONDS - t0)) -lt 900 ]; do sleep 1; done
if kill -0 "$tp" 2>/dev/null; then
        kill "$tp" 2>/dev/null
        stuck "$ROUNDS_TRACER timerlat on/off rounds: not done within 900 s"
fi
if wait "$tp"; then
        pass "$ROUNDS_TRACER timerlat on/off rounds through tracefs in $((SECONDS - t0)) s"
else
        fail "$ROUNDS_TRACER timerlat on/off rounds: a tracefs write failed"
fi
if ! command -v rtla > /dev/null; then
        fail "rtla in the guest image (mkimage.sh)"
        finish
fi
t0=$SECONDS
worst=0 bad=0
# lowlatctl/measure.c measure_tool_argv(): MEASURE_PRIORITY 95, MEASURE_HISTOGRAM_USEC 1000.
for ((i = 1; i <= ROUNDS_RTLA; i++)); do
        t1=$SECONDS
        out=$(timeout 120 rtla timerlat hist --cpus=2-3 --duration=1 --priority=f:95 --entries=1000 --no-irq 2>&1)
        rc=$?
        [ $((SECONDS - t1)) -gt "$worst" ] && worst=$((SECONDS - t1))
        if [ "$rc" = 124 ]; then
                stuck "rtla timerlat hist, run $i: not done within 120 s"
        elif [ "$rc" != 0 ] || ! grep -q '^max:' <<< "$out"; then
                bad=$((bad + 1))
                echo "rtla run $i: exit $rc: $(tail -n 3 <<< "$out")" > /dev/console
        fi
        [ $((i % 10)) -eq 0 ] && echo "rtla run $i, $((SECONDS - t0)) s" > /dev/console
done
if [ "$bad" = 0 ]; then
        pass "$ROUNDS_RTLA runs of rtla timerlat hist --duration=1 on CPUs 2-3 in $((SECONDS - t0)) s (the longest $worst s)"
else
        fail "$ROUNDS_RTLA runs of rtla timerlat hist: $bad failed"
fi
finish
