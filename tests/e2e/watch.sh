# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
# The VM suite's watchdog (issue 21), sourced by run-e2e.sh and driven by
# tests/e2e/test-watch.sh without a VM: watch_guest waits for a booted guest and stops
# it as soon as it has said nothing for longer than its step allows, instead of at the
# whole run's limit.
#
# Progress is what the guest script writes to its TAP file on the 9p share (every ok /
# not ok line and every "# " note, guest-test.sh say()): not the serial log, where a stuck
# kernel goes on printing RCU stall and soft-lockup warnings. The guest names its steps
# and their bounds in that same file:
#   # --- NAME                                a new step (guest-test.sh section()); its quiet
#                                             bound is the default again
#   # watchdog: quiet N s[, text-patching]    within this step, N seconds without a line are
#                                             normal; "text-patching" says the step patches
#                                             kernel text (tracers, tracepoints, perf), the
#                                             known way an emulator hangs a guest (docs/e2e.md)
#
# watch_guest PID TAP [QUIET [BOOT [LIMIT]]]
#   PID    the qemu process; TAP the guest's TAP file as the host sees it
#   QUIET  the default quiet bound in seconds (WATCH_QUIET_DEFAULT, 120)
#   BOOT   seconds for TAP to appear at all (the boot and the install of the test unit)
#   LIMIT  seconds for the whole guest
# Returns when qemu has exited or must be stopped (the caller stops it), with:
#   WATCH_RESULT    exited | no-start | quiet | limit
#   WATCH_STEP      the step the guest was last in ("" before the first)
#   WATCH_BOUND     that step's quiet bound, s
#   WATCH_PATCHING  1 when that step said text-patching, else 0
#   WATCH_SILENT    seconds since the last line, when it was stopped
#   WATCH_LONGEST, WATCH_LONGEST_STEP  the longest quiet stretch that ended in a line,
#                   and its step: how close a passing guest came to its bounds
WATCH_QUIET_DEFAULT=120

# watch_scan TEXT: the step markers in newly written TAP text, in order.
watch_scan() {
        local line
        while IFS= read -r line; do
                line=${line%$'\r'}
                case $line in
                "# --- "*)
                        WATCH_STEP=${line#"# --- "}
                        WATCH_BOUND=$watch_default WATCH_PATCHING=0
                        ;;
                "# watchdog: quiet "*)
                        local spec=${line#"# watchdog: quiet "} n
                        n=${spec%% *}
                        [[ $n =~ ^[0-9]+$ ]] && [ "$n" -gt 0 ] && WATCH_BOUND=$n
                        [[ $spec == *text-patching* ]] && WATCH_PATCHING=1
                        ;;
                esac
        done <<< "$1"
}

watch_guest() {
        local pid=$1 tap=$2 boot=${4:-150} limit=${5:-1500}
        local t0=$SECONDS last=$SECONDS size=0 now_size silent
        watch_default=${3:-$WATCH_QUIET_DEFAULT}
        WATCH_RESULT="" WATCH_STEP="" WATCH_BOUND=$watch_default WATCH_PATCHING=0 WATCH_SILENT=0
        WATCH_LONGEST=0 WATCH_LONGEST_STEP=""
        while kill -0 "$pid" 2>/dev/null; do
                if [ $((SECONDS - t0)) -ge "$limit" ]; then
                        WATCH_RESULT=limit
                        break
                fi
                if [ ! -e "$tap" ]; then
                        if [ $((SECONDS - t0)) -ge "$boot" ]; then
                                WATCH_RESULT=no-start
                                break
                        fi
                        last=$SECONDS
                        sleep 1
                        continue
                fi
                now_size=$(stat -c %s "$tap" 2>/dev/null || echo 0)
                if [ "$now_size" -gt "$size" ]; then
                        silent=$((SECONDS - last))
                        if [ "$silent" -gt "$WATCH_LONGEST" ]; then
                                WATCH_LONGEST=$silent WATCH_LONGEST_STEP=$WATCH_STEP
                        fi
                        watch_scan "$(tail -c +$((size + 1)) "$tap" 2>/dev/null | head -c $((now_size - size)))"
                        size=$now_size last=$SECONDS
                elif [ "$now_size" -lt "$size" ]; then
                        # The guest emptied its TAP (a script starting over): read it anew.
                        size=0
                        continue
                fi
                WATCH_SILENT=$((SECONDS - last))
                if [ "$WATCH_SILENT" -gt "$WATCH_BOUND" ]; then
                        WATCH_RESULT=quiet
                        break
                fi
                sleep 1
        done
        [ -n "$WATCH_RESULT" ] || WATCH_RESULT=exited
}

# watch_report: one line on how the guest ended, for the log and the results.
watch_report() {
        case $WATCH_RESULT in
        exited) echo "the guest powered off (longest quiet stretch ${WATCH_LONGEST} s, in '${WATCH_LONGEST_STEP:-before the first step}')" ;;
        no-start) echo "the guest did not start its tests" ;;
        quiet) echo "the guest said nothing for ${WATCH_SILENT} s in step '${WATCH_STEP:-before the first step}' (its bound: ${WATCH_BOUND} s$([ "$WATCH_PATCHING" = 1 ] && echo ", a step that patches kernel text"))" ;;
        limit) echo "the guest was still running at the whole guest's limit, in step '${WATCH_STEP:-before the first step}'" ;;
        esac
}

# guest_attempts BOOT: runs "BOOT 1", a function that boots the guest and waits for it with
# watch_guest, and "BOOT 2" once more where the first ended for a reason known to lie
# outside what is tested: the boot never started the tests (a stall of the emulated kernel
# before systemd), or it hung in a step that patches kernel text (docs/e2e.md). Any other
# stop is a failure, not retried. GUEST_RETRIED says why the guest was booted twice ("" when
# it was not), for the caller to report beside the second boot's results; the WATCH_
# variables are the last boot's.
guest_attempts() {
        local boot=$1
        GUEST_RETRIED=""
        "$boot" 1
        case $WATCH_RESULT in
        no-start)
                GUEST_RETRIED="the first boot did not start its tests"
                ;;
        quiet)
                [ "$WATCH_PATCHING" = 1 ] &&
                        GUEST_RETRIED="the first boot hung in '$WATCH_STEP', a step that patches kernel text, after ${WATCH_SILENT} s without a line"
                ;;
        esac
        [ -n "$GUEST_RETRIED" ] || return 0
        echo "# booting once more: $GUEST_RETRIED"
        "$boot" 2
}
