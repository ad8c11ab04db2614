# shellcheck shell=bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# What the guest scripts share (sourced by guest-test.sh and guest-partition.sh, from the 9p
# share at $SHARE, which the sourcing script sets): the results folder, the parameters the
# host passed (params.sh), TAP output, the watchdog's steps, the count of text patches, the
# journal and bus helpers, and finish(), which writes the plan and the summary and exits.
R=$SHARE/results
mkdir -p "$R"
TAP=$R/tap.txt
: > "$TAP"
# shellcheck source=/dev/null
[ -f "$SHARE/params.sh" ] && . "$SHARE/params.sh"
: "${HOST_OFFLINE_EXPOSURE:=}" "${HOST_SYSTEMD:=}" "${E2E_KERNEL:=6.1}"
# The multi-queue virtio-net NIC (run-e2e.sh): its MAC, queue pairs, the host-side peer's
# address and the guest's, or the reason the host could not give the guest one.
: "${E2E_MQ_MAC:=}" "${E2E_MQ_QUEUES:=4}" "${E2E_MQ_PEER:=10.0.3.1}" "${E2E_MQ_GUEST:=10.0.3.2}" "${E2E_MQ_REASON:=}"

ISOLATED=2-3
HOUSEKEEPING=0-1
BUS=(org.lowlatd1 /org/lowlatd1 org.lowlatd1.Manager)
MID_DRIFT=f04069d9094949389d6cd603580a168f
MID_CORRECTED=fabaec5540894c8f892a78f8fcca5b77
MID_FAILED=961a95a2e0124643a8f5d7412069c374
MID_UNMOVABLE=47ac721808a54ca4862384a8de3d47ed
MID_UNSUPPORTED=ef3e9aebf3a741b495409f9a30a18179
MID_FIGHT=7c8f13bfd92945dca46d033877c5c682
MID_IRQ_WRITER=9d0feb6bc8ff47ad85b710377c55b0f8
MID_STARTED=be656bd3ee70446a8fe73981a0733db1
MID_RELOADED=5e183a2eaaac40d6b6fc3c19b6e5d7bd
MID_RELOAD_FAILED=07d08d0b39ac4007b501c84afc780328
MID_RESTORED=cf6e9f4ca18d4057b7e64fc4d170dd0d
CONF=/etc/lowlatd/lowlatd.conf

# --- TAP -------------------------------------------------------------------------------
n=0 npass=0 nfail=0
say() { printf '%s\n' "$*"; printf '%s\n' "$*" >> "$TAP"; }
diag() { [ -n "${1:-}" ] && printf '%s\n' "$1" | head -n 40 | sed 's/^/#   /' | tee -a "$TAP"; return 0; }
note() { local l; while IFS= read -r l; do say "# $l"; done <<< "$*"; }
pass() { n=$((n + 1)); npass=$((npass + 1)); say "ok $n - $1"; }
fail() { n=$((n + 1)); nfail=$((nfail + 1)); say "not ok $n - $1"; diag "${2:-}"; }
# todo DESCRIPTION REASON [DIAGNOSTIC]: a known gap, not counted as a failure
ntodo=0
todo() { n=$((n + 1)); ntodo=$((ntodo + 1)); say "not ok $n - $1 # TODO $2"; diag "${3:-}"; }
# skipped DESCRIPTION REASON: a check this guest cannot run (TAP SKIP; not counted as passed)
skipped() { n=$((n + 1)); say "ok $n - $1 # SKIP $2"; }
# verdict CONDITION-STATUS DESCRIPTION [DIAGNOSTIC]
verdict() { if [ "$1" -eq 0 ]; then pass "$2"; else fail "$2" "${3:-}"; fi; }
# section NAME [HINT]: a new step. The host's watchdog (watch.sh) stops a guest that writes
# no TAP line for 120 s; HINT, "quiet N s[, text-patching]", gives this step a longer bound
# and says whether it patches kernel text (then a hang is retried once, and said so).
# E2E_HANG (params.sh, from the host's LOWLATD_E2E_HANG, test-only) is a glob: the script
# stops for good as the first step whose name matches begins, before its hint (so under
# the default bound), on every boot (E2E_HANG_ONCE=1: on the first only). test-hang.sh
# uses it to see the watchdog catch a hung guest.
section() {
        patch_count_step
        say "# --- $1"
        # shellcheck disable=SC2053 # E2E_HANG is a glob
        if [ -n "${E2E_HANG:-}" ] && [[ $1 == $E2E_HANG ]] &&
                { [ "${E2E_HANG_ONCE:-0}" != 1 ] || [ "${E2E_ATTEMPT:-1}" = 1 ]; }; then
                say "# E2E_HANG='$E2E_HANG': the script stops here (test-only knob, boot ${E2E_ATTEMPT:-1})"
                sleep infinity
        fi
        [ -n "${2:-}" ] && say "# watchdog: $2"
        return 0
}

# --- which steps patch kernel text --------------------------------------------------------
# Measured, for docs/e2e.md: kprobes on text_poke_bp() (one site: a static call, a jump label
# that is not batched) and text_poke_finish() (a batch of sites: jump labels, ftrace), the two
# ways x86 patches live text, each ending in IPIs that make every CPU see the new bytes. Set
# before anything else runs (run-e2e.sh boots single-threaded TCG, under which patching is
# safe); section() notes how many calls each step made. (A kprobe on text_poke_sync(), the
# IPI itself, counts nothing: its calls come from inside the patching, where kprobes are
# not taken.) Where the kernel has no such kprobe, one note says why and nothing is counted.
PATCH_PROFILE=/sys/kernel/tracing/kprobe_profile
PATCH_LAST=""
patch_count_init() {
        local t=/sys/kernel/tracing err f
        [ -d "$t/events" ] || mount -t tracefs nodev "$t" 2>/dev/null
        for f in text_poke_bp text_poke_finish; do
                if ! err=$( { echo "p:e2e/e2e_poke_${f#text_poke_} $f" >> "$t/kprobe_events" &&
                        echo 1 > "$t/events/e2e/e2e_poke_${f#text_poke_}/enable"; } 2>&1); then
                        note "no count of text patches on this kernel (a kprobe on $f: ${err:-refused})"
                        PATCH_PROFILE=""
                        return 0
                fi
        done
        PATCH_LAST=$(patch_count)
}
# patch_count: calls of both so far (kprobe_profile: name, hits, misses)
patch_count() { awk '$1 ~ /^e2e_poke_/ { n += $2 } END { if (NR) print n + 0 }' "$PATCH_PROFILE" 2>/dev/null; }
# patch_count_step: the count of the step that ends here, when it patched text at all
patch_count_step() {
        [ -n "$PATCH_PROFILE" ] && [ -n "$PATCH_LAST" ] || return 0
        local now
        now=$(patch_count)
        [ -n "$now" ] || return 0
        [ "$now" -gt "$PATCH_LAST" ] && say "# text patches in this step: $((now - PATCH_LAST)) (text_poke_bp and text_poke_finish calls)"
        PATCH_LAST=$now
}

# --- helpers ---------------------------------------------------------------------------
now_ms() { local t=${EPOCHREALTIME/./}; echo $((t / 1000)); }
WAITED_MS=0
# wait_until SECONDS COMMAND...: poll every 50 ms; WAITED_MS is how long it took.
wait_until() {
        local limit=$(($1 * 1000)) start
        shift
        start=$(now_ms)
        while :; do
                if "$@"; then WAITED_MS=$(($(now_ms) - start)); return 0; fi
                WAITED_MS=$(($(now_ms) - start))
                [ "$WAITED_MS" -ge "$limit" ] && return 1
                sleep 0.05
        done
}
# CPU list -> space-separated CPU numbers
expand() {
        local part a b i out=""
        local IFS=,
        for part in $1; do
                part=${part//[[:space:]]/}
                [ -z "$part" ] && continue
                if [[ $part == *-* ]]; then
                        a=${part%-*} b=${part#*-}
                        for ((i = a; i <= b; i++)); do out+=" $i"; done
                else
                        out+=" $part"
                fi
        done
        echo $out
}
touches_isolated() {
        local c
        for c in $(expand "$1"); do
                [[ " $(expand $ISOLATED) " == *" $c "* ]] && return 0
        done
        return 1
}
rd() { local v; v=$(cat "$1" 2>/dev/null) || return 1; printf '%s' "${v//[[:space:]]/}"; }
# Journal queries. A mark is a realtime timestamp in microseconds; entries are selected
# with journalctl's own field matches, as JSON, and kept if journald received them after
# the mark. Not --after-cursor: journalctl 252 returned nothing for a cursor combined
# with field matches here. Not -o export: a binary field (e.g. _SELINUX_CONTEXT ending
# in a newline) puts an empty line inside an entry.
mark() { echo "${EPOCHREALTIME/./}"; }
jentries() {
        local m=$1
        shift
        journalctl --sync 2>/dev/null
        journalctl -q -o json --no-pager "$@" 2>/dev/null |
                jq -c --argjson m "${m:-0}" 'select((.__REALTIME_TIMESTAMP | tonumber) >= $m)'
}
jcount() { jentries "$@" | wc -l; }
# jtext MARK MATCHES...: "IDENTIFIER: MESSAGE" lines, for diagnostics
jtext() { jentries "$@" | jq -r '"\(.SYSLOG_IDENTIFIER // "?"): \(.MESSAGE)"'; }
# jfields: KEY=VALUE lines of the fields a user looks at, from jentries output
jfields() {
        jq -r 'to_entries[] | select(.key | test("^(MESSAGE|MESSAGE_ID|PRIORITY|SYSLOG_IDENTIFIER|_SYSTEMD_UNIT|LOWLATD_.*)$")) |
                "\(.key)=\(.value)"'
}
# jtime MARK MATCHES...: milliseconds from MARK to the last matching entry
jtime() {
        local m=$1 t
        t=$(jentries "$@" | jq -r '.__REALTIME_TIMESTAMP' | sort -n | tail -n1)
        [ -n "$t" ] && echo $(((t - m) / 1000))
}
jhas() { [ "$(jcount "$@")" -gt 0 ]; }
prop() { busctl get-property "${BUS[@]}" "$1" 2>&1; }
prop_s() { prop "$1" | sed -n 's/^[a-z]* "\{0,1\}\([^"]*\)"\{0,1\}$/\1/p'; }
irq_name() { awk -v irq="$1:" '$1 == irq { print $NF }' /proc/interrupts; }
# IRQ numbers whose /proc/interrupts name matches an extended regex
irqs_named() { awk -v re="$1" '$1 ~ /^[0-9]+:$/ && $NF ~ re { sub(":", "", $1); print $1 }' /proc/interrupts; }
listed_irqs() { awk '$1 ~ /^[0-9]+:$/ { sub(":", "", $1); print $1 }' /proc/interrupts; }
settings_in_state() { lowlatctl --no-legend --state="$1" list 2>/dev/null | awk -v k="$2" '$1 == k { print $2 }'; }
coalesce() { ethtool -c "$1" 2>/dev/null | awk -v k="$2:" '$1 == k { print $2 }'; }
dma_latency() { od -An -t d4 -N4 /dev/cpu_dma_latency 2>/dev/null | tr -d ' \n'; }
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"; }
main_pid() { systemctl show -P MainPID lowlatd; }
# The first NIC of a driver, not the multi-queue virtio-net (MQ below; found by its MAC)
nic_by_driver() {
        local d
        for d in /sys/class/net/*; do
                [ -n "${E2E_MQ_MAC:-}" ] && [ "$(cat "$d/address" 2>/dev/null)" = "$E2E_MQ_MAC" ] && continue
                [ "$(basename "$(readlink -f "$d/device/driver" 2>/dev/null)")" = "$1" ] && { basename "$d"; return; }
        done
}
# A virtio NIC's virtio device ("virtio2"), which names its IRQs in /proc/interrupts
virtio_dev() { basename "$(readlink -f "/sys/class/net/$1/device")"; }

finish() {
        section "end"
        say "1..$n"
        [ "$ntodo" -gt 0 ] && say "# $ntodo TODO (known gaps, not counted)"
        say "$npass passed, $nfail failed"
        echo "$npass passed, $nfail failed" > "$R/summary"
        journalctl -o short-precise --no-pager -u lowlatd > "$R/lowlatd.journal.txt" 2>&1
        if [ "$nfail" -gt 0 ]; then
                journalctl -o export --no-pager > "$R/journal.export" 2>/dev/null
                journalctl -o short-precise --no-pager > "$R/journal.txt" 2>/dev/null
        fi
        sync
        [ "$nfail" -eq 0 ]
        exit $?
}
