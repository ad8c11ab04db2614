# shellcheck shell=bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# [cpus] slices with systemd 252 as PID 1: AllowedCPUs= of system.slice, user.slice and
# init.scope set at run time through PID 1's bus API and kept. What another writer sets
# with systemctl set-property is put back, a process started in user.slice afterwards runs
# on the housekeeping CPUs only, lowlatctl measure started there refuses to measure the
# isolated CPUs and gives a command that does, and lowlatctl restore puts each unit back
# as it was.
# Sourced by guest-test.sh (see guest.d/README); leaves lowlatd enforcing without slices.
SLICE_UNITS="system.slice user.slice init.scope"
allowed_cpus() { systemctl show -P AllowedCPUs "$1" 2>/dev/null; }
cpus_allowed_of() { sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "/proc/$1/status" 2>/dev/null; }
slices_at() {
        local u
        for u in $SLICE_UNITS; do [ "$(allowed_cpus "$u")" = "$1" ] || return 1; done
}
# verdict RC DESCRIPTION with a diagnostic command that runs only on failure: journal
# queries cost seconds each under software emulation.
slice_verdict() {
        local rc=$1 what=$2
        shift 2
        if [ "$rc" -eq 0 ]; then pass "$what"; else fail "$what" "$("$@" 2>&1)"; fi
}
slice_log() { slices_show; lowlatctl list 2>&1 | grep slice_cpus; jtext "$SLICE_MARK" SYSLOG_IDENTIFIER=lowlatd | tail -n 20; }
offenders() { echo "$bad"; slices_show; }
drift_diag() { echo "${ent:-no entry}"; slice_log; }
probe_diag() { cat "/proc/$probe/cgroup"; slices_show; }
slices_show() {
        local u
        for u in $SLICE_UNITS; do
                printf '%s: AllowedCPUs=%s cpuset.cpus=%s effective=%s\n' "$u" "$(allowed_cpus "$u")" \
                        "$(rd "/sys/fs/cgroup/$u/cpuset.cpus")" "$(rd "/sys/fs/cgroup/$u/cpuset.cpus.effective")"
        done
}

declare -A PRE_SLICE
for u in $SLICE_UNITS; do PRE_SLICE[$u]=$(allowed_cpus "$u"); done
note "before: $(slices_show | tr '\n' ';')"
note "PID 1 Cpus_allowed_list $(cpus_allowed_of 1); root cgroup.controllers: $(cat /sys/fs/cgroup/cgroup.controllers); subtree_control: $(cat /sys/fs/cgroup/cgroup.subtree_control)"

write_config "rx_usecs = 60" "[cpus]
slices = $SLICE_UNITS"
SLICE_MARK=$(mark)
out=$(timeout 60 systemctl reload lowlatd 2>&1)
verdict $? "systemctl reload with [cpus] slices = $SLICE_UNITS" "$out"
wait_until 20 slices_at "$HOUSEKEEPING"
slice_verdict $? "AllowedCPUs= of $SLICE_UNITS is $HOUSEKEEPING (after $WAITED_MS ms)" slice_log
[ -f /run/systemd/system.control/user.slice.d/50-AllowedCPUs.conf ] &&
        [ ! -e /etc/systemd/system.control/user.slice.d/50-AllowedCPUs.conf ]
verdict $? "set at run time only: a drop-in under /run/systemd/system.control, none under /etc" \
        "$(ls -lR /run/systemd/system.control /etc/systemd/system.control 2>&1)"
st=$(lowlatctl --no-legend list 2>&1 | awk '$1 == "slice_cpus"')
[ "$(grep -cE ' (ok|corrected)$' <<< "$st")" -eq 3 ]
verdict $? "lowlatctl list: three slice_cpus settings, ok or corrected" "$st"
bad=""
for p in 1 $(pidof systemd-journald) $(pidof dbus-daemon) $(pidof systemd-udevd) $(main_pid); do
        a=$(cpus_allowed_of "$p")
        touches_isolated "$a" && bad+=" $p ($(cat "/proc/$p/comm" 2>/dev/null)): $a"
done
[ -z "$bad" ]
slice_verdict $? "PID 1, journald, dbus-daemon, udevd and lowlatd stay off $ISOLATED" offenders

# Another writer. busctl monitor settles whether set-property alone makes PID 1 send
# PropertiesChanged (lowlatd's own correction is a set-property too, so only 0 is telling).
monlog=$(mktemp)
timeout 4 busctl monitor --match "type='signal',sender='org.freedesktop.systemd1',path='/org/freedesktop/systemd1/unit/user_2eslice',member='PropertiesChanged'" > "$monlog" 2>&1 &
monpid=$!
sleep 0.5
SLICE_MARK=$(mark)
md=$SLICE_MARK
out=$(systemctl set-property --runtime user.slice AllowedCPUs=0-3 2>&1)
verdict $? "systemctl set-property --runtime user.slice AllowedCPUs=0-3 (another writer)" "$out"
user_back() { [ "$(allowed_cpus user.slice)" = "$HOUSEKEEPING" ]; }
wait_until 20 user_back
rc=$? waited=$WAITED_MS
slice_verdict $rc "user.slice is back at AllowedCPUs=$HOUSEKEEPING after $waited ms" slice_log
[ $rc -eq 0 ] && [ "$waited" -le 2000 ]
slice_verdict $? "within 2 s, so through an event (the scan runs every 15 s)" slice_log
wait "$monpid" 2>/dev/null
note "PropertiesChanged signals from PID 1 for user.slice in the 3.5 s after set-property: $(grep -c 'Member=PropertiesChanged' "$monlog")"
rm -f "$monlog"
wait_until 5 jhas "$md" MESSAGE_ID=$MID_DRIFT LOWLATD_KIND=slice_cpus LOWLATD_OBJECT=user.slice
ent=$(jentries "$md" MESSAGE_ID=$MID_DRIFT LOWLATD_KIND=slice_cpus LOWLATD_OBJECT=user.slice | head -n1 | jfields)
grep -qxF "LOWLATD_EXPECTED=$HOUSEKEEPING" <<< "$ent" && grep -qxF "LOWLATD_OBSERVED=0-3" <<< "$ent" &&
        grep -qxF "_SYSTEMD_UNIT=lowlatd.service" <<< "$ent"
slice_verdict $? "the drift entry: LOWLATD_KIND=slice_cpus LOWLATD_OBJECT=user.slice, expected $HOUSEKEEPING, observed 0-3" \
        drift_diag
jhas "$md" MESSAGE_ID=$MID_CORRECTED LOWLATD_KIND=slice_cpus LOWLATD_OBJECT=user.slice
slice_verdict $? "and the corrected entry" slice_log

# A process started in user.slice now, even one asking for every CPU.
out=$(systemd-run --slice=user.slice --unit=e2e-slice-probe --quiet -p CPUAffinity=0-3 sleep 600 2>&1)
verdict $? "systemd-run --slice=user.slice -p CPUAffinity=0-3 sleep 600" "$out"
probe=$(systemctl show -P MainPID e2e-slice-probe.service)
probe_confined() { [ -n "$probe" ] && [ "$probe" != 0 ] && [ "$(cpus_allowed_of "$probe")" = "$HOUSEKEEPING" ]; }
wait_until 10 probe_confined
slice_verdict $? "it (pid $probe) runs on $HOUSEKEEPING only: Cpus_allowed_list $(cpus_allowed_of "$probe")" \
        probe_diag
systemctl stop e2e-slice-probe.service 2>/dev/null

# lowlatctl measure from a login shell's slice, which now allows $HOUSEKEEPING only: its
# threads could not run on $ISOLATED. It refuses before the run, saying why, and the
# command it gives measures them (exit 77 first, then exit 0 with both CPUs).
if command -v cyclictest > /dev/null; then
        out=$(timeout 60 systemd-run --scope --slice=user.slice --quiet lowlatctl measure --tool cyclictest --duration 1 2>&1)
        rc=$?
        cmd=$(sed -n 's/^  \(systemd-run .*\)$/\1/p' <<< "$out" | head -n1)
        [ "$rc" = 77 ] && [[ $out == *"allows CPUs $HOUSEKEEPING only (its cpuset.cpus.effective)"* ]] && [ -n "$cmd" ]
        verdict $? "lowlatctl measure in a scope of user.slice: refused (exit 77), naming its cgroup's CPUs $HOUSEKEEPING and a command" \
                "exit $rc
$out"
        out=$(timeout 90 bash -c "$cmd" 2>&1)
        rc=$?
        [ "$rc" = 0 ] && echo "$out" | grep -Eq '^ +2 +[0-9]+ ' && echo "$out" | grep -Eq '^ +3 +[0-9]+ '
        verdict $? "the command it gives ($cmd): exit 0, CPUs 2 and 3 measured" "exit $rc
$out
$(slices_show)"
else
        todo "lowlatctl measure from user.slice" "no cyclictest in the guest image"
fi

out=$(lowlatctl --json check 2>&1)
pid1=$(jq -r '.[] | select(.id == "sched.pid1-affinity" or .id == "sched.slice-unconfined") | "\(.id): \(.message)"' <<< "$out" 2>/dev/null)
[ -z "$pid1" ]
verdict $? "lowlatctl check: PID 1 on $HOUSEKEEPING and no unconfined slice to report" "$pid1"

# Restore: each unit as it was before lowlatd (unset stays unset), then enforcing without slices.
SLICE_MARK=$(mark)
out=$(lowlatctl restore 2>&1)
verdict $? "lowlatctl restore${out:+: $out}" "$out"
as_before() {
        local u
        for u in $SLICE_UNITS; do [ "$(allowed_cpus "$u")" = "${PRE_SLICE[$u]}" ] || return 1; done
}
wait_until 10 as_before
slice_verdict $? "every unit has its AllowedCPUs= from before lowlatd again ($(for u in $SLICE_UNITS; do printf '%s=%s ' "$u" "${PRE_SLICE[$u]:-unset}"; done))" \
        slice_log
write_config "rx_usecs = 60" ""
out=$(timeout 60 systemctl reload lowlatd 2>&1)
enforcing() { [ "$(prop_s State)" = enforcing ]; }
wait_until 20 enforcing
verdict $? "reload without slices: enforcing again" "$out
State $(prop_s State)"
as_before
slice_verdict $? "and the units keep the AllowedCPUs= they had" slices_show
