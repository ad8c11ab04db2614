#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The VM suite's watchdog (watch.sh) against fake guests: background shells that write a
# TAP file the way guest-test.sh does, then exit, go quiet or never start. No VM: what a
# real hung guest looks like is in docs/e2e.md (LOWLATD_E2E_HANG). TAP; exit 1 on a failure.
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/e2e/watch.sh
. "$here/watch.sh"
dir=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$dir"' EXIT

n=0 nfail=0
check() { # check DESCRIPTION CONDITION...
        local what=$1
        shift
        n=$((n + 1))
        if "$@"; then echo "ok $n - $what"; else nfail=$((nfail + 1)); echo "not ok $n - $what"; watch_dump; fi
}
watch_dump() {
        echo "#   result=$WATCH_RESULT step='$WATCH_STEP' bound=$WATCH_BOUND patching=$WATCH_PATCHING silent=$WATCH_SILENT longest=$WATCH_LONGEST in '$WATCH_LONGEST_STEP' retried='${GUEST_RETRIED:-}'"
}
is() { [ "$1" = "$2" ]; }

# guest SCRIPT: a fake guest writing to $dir/tap.txt in the background; sets gpid.
guest() {
        rm -f "$dir/tap.txt"
        bash -c "$1" &
        gpid=$!
}
tap=$dir/tap.txt
export tap

# 1. A guest that keeps talking and powers off. Polled each second on a loaded machine, a
# 1 s sleep can read as 2 or 3 s: the long step is far enough from it to tell them apart.
guest 'for i in 1 5 1; do echo "# --- step $i" >> "$tap"; sleep $i; echo "ok $i" >> "$tap"; done'
watch_guest "$gpid" "$tap" 10 5 30
check "a guest that writes a line every few seconds and exits: exited" is "$WATCH_RESULT" exited
check "its longest quiet stretch is the 5 s one, in its step (polled each second)" \
        eval '[ "$WATCH_LONGEST" -ge 4 ] && [ "$WATCH_LONGEST" -le 8 ] && [ "$WATCH_LONGEST_STEP" = "step 5" ]'
check "watch_report says it powered off" eval '[[ $(watch_report) == "the guest powered off"* ]]'

# 2. A guest that goes quiet within a step: stopped after the default bound, not the limit.
guest 'echo "# --- setup" >> "$tap"; echo "# --- 4: a write is reverted" >> "$tap"; echo "ok 1" >> "$tap"; sleep 300'
t0=$SECONDS
watch_guest "$gpid" "$tap" 3 5 60
dt=$((SECONDS - t0))
check "a guest quiet for longer than 3 s: stopped as quiet" is "$WATCH_RESULT" quiet
check "in its last step, after the bound and well before the limit ($dt s)" \
        eval '[ "$WATCH_STEP" = "4: a write is reverted" ] && [ "$WATCH_SILENT" -gt 3 ] && [ "$dt" -le 7 ]'
check "not a text-patching step" is "$WATCH_PATCHING" 0
check "watch_report names the step, the silence and the bound" \
        eval '[[ $(watch_report) == "the guest said nothing for "*" s in step '\''4: a write is reverted'\'' (its bound: 3 s)" ]]'
kill "$gpid" 2>/dev/null

# 3. A step's hint gives it a longer bound; the next step has the default again.
guest 'echo "# --- slow" >> "$tap"; echo "# watchdog: quiet 8 s" >> "$tap"; sleep 5; echo "ok 1" >> "$tap"
        echo "# --- fast" >> "$tap"; sleep 300'
t0=$SECONDS
watch_guest "$gpid" "$tap" 3 5 60
dt=$((SECONDS - t0))
check "5 s of quiet in a step that allows 8 s is not a hang; the next step's 3 s is" \
        eval '[ "$WATCH_RESULT" = quiet ] && [ "$WATCH_STEP" = fast ] && [ "$WATCH_BOUND" = 3 ] && [ "$dt" -ge 8 ] && [ "$dt" -le 12 ]'
check "the longest quiet stretch that ended in a line was the slow step's 5 s" \
        eval '[ "$WATCH_LONGEST" -ge 4 ] && [ "$WATCH_LONGEST" -le 6 ] && [ "$WATCH_LONGEST_STEP" = slow ]'
kill "$gpid" 2>/dev/null

# 4. A text-patching step that hangs is said to be one.
guest 'echo "# --- guest.d/75-measure.sh" >> "$tap"; echo "# watchdog: quiet 2 s, text-patching (rtla)" >> "$tap"; sleep 300'
watch_guest "$gpid" "$tap" 3 5 60
check "a hang in a step that says text-patching: quiet, WATCH_PATCHING=1, bound 2 s" \
        eval '[ "$WATCH_RESULT" = quiet ] && [ "$WATCH_PATCHING" = 1 ] && [ "$WATCH_BOUND" = 2 ]'
check "watch_report says the step patches kernel text" eval '[[ $(watch_report) == *"a step that patches kernel text)" ]]'
kill "$gpid" 2>/dev/null

# 5. No TAP at all: the boot never started the tests.
guest 'sleep 300'
t0=$SECONDS
watch_guest "$gpid" "$tap" 3 4 60
check "no TAP file within the boot bound: no-start, after $((SECONDS - t0)) s" \
        eval '[ "$WATCH_RESULT" = no-start ] && [ $((SECONDS - t0)) -le 6 ]'
kill "$gpid" 2>/dev/null

# 6. A guest that talks but never ends: the whole limit.
guest 'while :; do echo "# --- loop" >> "$tap"; sleep 1; done'
watch_guest "$gpid" "$tap" 3 5 4
check "a guest still talking at the whole limit: limit" is "$WATCH_RESULT" limit
kill "$gpid" 2>/dev/null

# 7. guest_attempts: what is booted twice, and said so; what is not.
# fake_boot N: attempt N of the guest named by the "plan" file's line N.
plan=()
fake_boot() {
        guest "${plan[$(($1 - 1))]}"
        watch_guest "$gpid" "$tap" 2 3 30
        kill "$gpid" 2>/dev/null
        boots+=("$1:$WATCH_RESULT")
}
ok_guest='echo "# --- only" >> "$tap"; echo "ok 1" >> "$tap"'
hang_patching='echo "# --- guest.d/70-noise.sh" >> "$tap"; echo "# watchdog: quiet 2 s, text-patching" >> "$tap"; sleep 300'
hang_plain='echo "# --- 2: IRQs" >> "$tap"; sleep 300'

plan=("$hang_patching" "$ok_guest") boots=()
guest_attempts fake_boot > "$dir/out"
check "a hang in a text-patching step is booted once more, and the second boot counts" \
        eval '[ "${boots[*]}" = "1:quiet 2:exited" ] && [ "$WATCH_RESULT" = exited ]'
check "GUEST_RETRIED names the step, and the log says so" \
        eval '[[ $GUEST_RETRIED == *"hung in '\''guest.d/70-noise.sh'\'', a step that patches kernel text"* ]] && grep -q "^# booting once more: " "$dir/out"'

plan=("$hang_plain" "$ok_guest") boots=()
guest_attempts fake_boot > "$dir/out"
check "a hang in any other step is not retried: one boot, quiet, GUEST_RETRIED empty" \
        eval '[ "${boots[*]}" = "1:quiet" ] && [ -z "$GUEST_RETRIED" ] && [ ! -s "$dir/out" ]'

plan=("sleep 300" "$ok_guest") boots=()
guest_attempts fake_boot > "$dir/out"
check "a boot that never started its tests is booted once more" \
        eval '[ "${boots[*]}" = "1:no-start 2:exited" ] && [ "$GUEST_RETRIED" = "the first boot did not start its tests" ]'

plan=("$hang_patching" "$hang_patching") boots=()
guest_attempts fake_boot > "$dir/out"
check "a second hang is not retried again: two boots, the last quiet" \
        eval '[ "${boots[*]}" = "1:quiet 2:quiet" ] && [ "$WATCH_RESULT" = quiet ] && [ -n "$GUEST_RETRIED" ]'

plan=("$ok_guest") boots=()
guest_attempts fake_boot > "$dir/out"
check "a guest that passes is booted once" eval '[ "${boots[*]}" = "1:exited" ] && [ -z "$GUEST_RETRIED" ]'

echo "1..$n"
echo "$((n - nfail)) passed, $nfail failed"
[ "$nfail" = 0 ]
