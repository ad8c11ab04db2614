#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A deliberately hung guest (issue 21): run-e2e.sh on one kernel with the test-only knob
# LOWLATD_E2E_HANG, which stops the guest script for good as its step 2 begins (the
# package installed, lowlatd started). The watchdog must stop the guest within its quiet
# bound (LOWLATD_E2E_QUIET, 30 s here), long before the whole guest's limit, name the step,
# show the script's last TAP lines, not boot it again (no text is patched there), and fail
# the kernel. Skips as run-e2e.sh does (77: no qemu here, not root without an image).
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=${LOWLATD_BUILD_ROOT:?LOWLATD_BUILD_ROOT not set (run through meson test)}
kernel=${LOWLATD_E2E_HANG_KERNEL:-6.1}
art=$build/meson-logs/e2e-hang
quiet=30
step='2: every movable IRQ off CPUs*'

t0=$SECONDS
out=$(LOWLATD_E2E_KERNELS=$kernel LOWLATD_E2E_HANG=$step LOWLATD_E2E_QUIET=$quiet \
        LOWLATD_E2E_ARTIFACTS=$art "$here/run-e2e.sh" 2>&1)
rc=$?
took=$((SECONDS - t0))
printf '%s\n' "$out" | sed 's/^/# /'
[ $rc = 77 ] && { echo "SKIP: run-e2e.sh skipped: $(tail -n 1 <<< "$out")"; exit 77; }

n=0 nfail=0
check() { n=$((n + 1)); if eval "$2"; then echo "ok $n - $1"; else nfail=$((nfail + 1)); echo "not ok $n - $1"; fi; }
stopped=$(grep -m1 '^# attempt 1: ' <<< "$out")
silent=$(sed -n 's/.*said nothing for \([0-9]*\) s.*/\1/p' <<< "$stopped")
check "run-e2e.sh fails the kernel (exit $rc)" '[ $rc = 1 ]'
check "the guest reached the hang: the knob's line is in its TAP" \
        'grep -q "^#   # E2E_HANG=.*the script stops here" <<< "$out"'
check "the watchdog stopped it for its silence in step 2, within the bound: $stopped" \
        '[[ $stopped == *"said nothing for "*" s in step '\''2: every movable IRQ off CPUs"* ]] && [ "${silent:-999}" -gt $quiet ] && [ "${silent:-999}" -le $((quiet + 5)) ]'
check "it was not booted again (step 2 patches no text)" '! grep -q "booting once more" <<< "$out" && ! grep -q "attempt 2" <<< "$out"'
check "the kernel's result line says so: $(grep "^# $kernel: " <<< "$out")" \
        'grep -q "^# $kernel: failed: the guest said nothing for" <<< "$out"'
check "the serial log of the stopped boot is kept" '[ -s "$art/$kernel/serial-attempt1.log" ]'
check "the whole run took $took s, far below the guest limit of 1500 s" '[ $took -lt 900 ]'
echo "1..$n"
echo "$((n - nfail)) passed, $nfail failed"
[ $nfail = 0 ]
