#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# [cpus] partition on the real kernel (issue 25): the e2e guest of the pseudo-kernel
# 6.12-partition, Debian 13's 6.12 image booted WITHOUT isolcpus, nohz_full and rcu_nocbs
# (run-e2e.sh), so that the isolated CPUs are isolated at run time only. Run by
# lowlatd-e2e.service in place of guest-test.sh, with its helpers (guest-lib.sh). Checks:
# lowlatd makes isolated.slice (AllowedCPUs=2-3) an isolated cpuset partition and confines
# the other units to 0-1; a service in the slice runs on 2-3 only and one in system.slice
# never does; "member" written by someone, the slice stopped and a CPU of the partition
# taken offline and back are put right; lowlatctl restore undoes it all; --observe writes
# nothing. The guest powers off at the end (its disk is a snapshot): no purge.
set -u
export LC_ALL=C
umask 022

SHARE=/run/e2e
# shellcheck source=tests/e2e/guest-lib.sh
. "$SHARE/guest-lib.sh"

SLICE=isolated.slice
PART=/sys/fs/cgroup/$SLICE/cpuset.cpus.partition
UNITS="system.slice user.slice init.scope"
allowed_cpus() { systemctl show -P AllowedCPUs "$1" 2>/dev/null; }
cpus_allowed_of() { sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "/proc/$1/status" 2>/dev/null; }
units_at() {
        local u
        for u in $UNITS; do [ "$(allowed_cpus "$u")" = "$1" ] || return 1; done
}
# The cpuset_partition row of lowlatctl list: "STATE OBSERVED"
part_row() {
        lowlatctl --json list --kind=cpuset_partition 2>/dev/null |
                jq -r '.. | objects | select(.kind? == "cpuset_partition") | "\(.state) \(.observed)"' 2>/dev/null
}
part_state() { local r; r=$(part_row); echo "${r%% *}"; }
part_ok() { [ "$(rd "$PART")" = isolated ] && [[ $(part_state) == @(ok|corrected) ]]; }
slice_active() { [ "$(systemctl is-active "$SLICE" 2>/dev/null)" = active ]; }
# What a failed check shows: the files and units it is about, and lowlatd's last words.
show() {
        local u
        echo "$SLICE: $(systemctl is-active "$SLICE" 2>&1), AllowedCPUs=$(allowed_cpus "$SLICE"), partition: $(cat "$PART" 2>&1)"
        for u in $UNITS; do echo "$u: AllowedCPUs=$(allowed_cpus "$u"), effective $(rd "/sys/fs/cgroup/$u/cpuset.cpus.effective")"; done
        echo "root: cpuset.cpus.effective $(rd /sys/fs/cgroup/cpuset.cpus.effective), isolated $(rd /sys/fs/cgroup/cpuset.cpus.isolated), subtree_control $(cat /sys/fs/cgroup/cgroup.subtree_control)"
        echo "online $(rd /sys/devices/system/cpu/online); workqueue cpumask $(rd /sys/devices/virtual/workqueue/cpumask)"
        lowlatctl --no-legend list 2>&1 | grep -E 'cpuset_partition|slice_cpus'
        journalctl -q --no-pager -n 15 -u lowlatd 2>&1
}
# psr_on PID SECONDS: the CPUs a task was seen on (/proc/PID/stat field 39), sampled every
# 0.1 s with bash's own read (no fork per look); "gone" when the task could not be read.
psr_on() {
        local pid=$1 secs=$2 i f seen=""
        for ((i = 0; i < secs * 10; i++)); do
                if read -r -a f < "/proc/$pid/stat" 2>/dev/null && [ ${#f[@]} -ge 39 ]; then
                        seen+=" ${f[38]}"
                else
                        seen+=" gone"
                fi
                sleep 0.1
        done
        tr ' ' '\n' <<< "$seen" | sort -u | xargs
}

section "setup: 6.12 booted without boot isolation; install the package under test" "quiet 330 s"
GUEST_SYSTEMD=$(systemctl --version | awk 'NR == 1 { print $2 }')
echo "kernel $(uname -r), systemd $GUEST_SYSTEMD" > "$R/kernel"
cmdline=$(cat /proc/cmdline)
note "kernel $(uname -r), systemd $GUEST_SYSTEMD, cmdline: $cmdline"
[[ $(uname -r) == 6.12.* ]] && [ "$GUEST_SYSTEMD" -ge 257 ] && [[ $cmdline != *isolcpus* ]] &&
        [[ $cmdline != *nohz_full* ]] && [[ $cmdline != *rcu_nocbs* ]] && [ -z "$(rd /sys/devices/system/cpu/isolated)" ]
verdict $? "6.12 and systemd 257, no isolcpus/nohz_full/rcu_nocbs, the kernel isolated nothing at boot" \
        "isolated: $(rd /sys/devices/system/cpu/isolated)"
declare -A PRE
for u in $UNITS; do PRE[$u]=$(allowed_cpus "$u"); done
PRE_ROOT=$(rd /sys/fs/cgroup/cpuset.cpus.effective) PRE_WQ=$(rd /sys/devices/virtual/workqueue/cpumask)
note "before: $(for u in $UNITS; do printf '%s AllowedCPUs=%s; ' "$u" "${PRE[$u]:-unset}"; done)root effective ${PRE_ROOT:-none (no cpuset controller yet)}, workqueue cpumask $PRE_WQ"
# No perf rings: guest-test.sh's E2E_DROPIN.
mkdir -p /etc/lowlatd/lowlatd.conf.d
printf '[noise]\ngate = off\n' > /etc/lowlatd/lowlatd.conf.d/00-e2e-gate.conf
DEB=$(ls "$SHARE"/deb/lowlatd_*.deb 2>/dev/null | head -n1)
t_apt=$(now_ms)
out=$(DEBIAN_FRONTEND=noninteractive timeout 300 apt-get install -y --no-install-recommends "$DEB" 2>&1)
verdict $? "apt-get install ${DEB#"$SHARE"/} ($(($(now_ms) - t_apt)) ms)" "$out"

# ===== enforce ==========================================================================
section "partition = $SLICE, isolated = $ISOLATED: the slice, the partition, the rest on $HOUSEKEEPING" "quiet 150 s"
cat > "$CONF" <<EOF
# Written by the lowlatd e2e test (tests/e2e/guest-partition.sh).
[daemon]
mode = enforce
# Long: a correction within seconds came from an event.
scan_interval = 60s

[cpus]
isolated = $ISOLATED
partition = $SLICE
EOF
chmod 0644 "$CONF"
m_on=$(mark)
out=$(timeout 120 systemctl restart lowlatd 2>&1)
verdict $? "systemctl restart lowlatd with the partition configured" "$out
$(systemctl status --no-pager lowlatd 2>&1)"
wait_until 30 part_ok
verdict $? "$PART reads isolated and lowlatctl list calls it $(part_state) (after $WAITED_MS ms)" "$(show)"
[ "$(allowed_cpus "$SLICE")" = "$ISOLATED" ] && slice_active
verdict $? "$SLICE is active with AllowedCPUs=$ISOLATED: $(allowed_cpus "$SLICE")" "$(show)"
units_at "$HOUSEKEEPING"
verdict $? "implied confinement: $UNITS have AllowedCPUs=$HOUSEKEEPING" "$(show)"
[ "$(rd /sys/fs/cgroup/cpuset.cpus.effective)" = "$HOUSEKEEPING" ] && [ "$(rd /sys/fs/cgroup/cpuset.cpus.isolated)" = "$ISOLATED" ]
verdict $? "the root's cpuset.cpus.effective is $HOUSEKEEPING, its cpuset.cpus.isolated $ISOLATED" "$(show)"
wq=$(rd /sys/devices/virtual/workqueue/cpumask)
[ $((16#$wq)) -eq 3 ]
verdict $? "the unbound workqueues' cpumask left $ISOLATED: $PRE_WQ -> $wq" "$(show)"
# Written once PID 1 has given the new cgroup its CPUs: "isolated" written before that is
# "isolated invalid (cpuset.cpus and cpuset.cpus.exclusive are empty)", a failure. At start
# the corrections are summed up in one line.
jtext "$m_on" SYSLOG_IDENTIFIER=lowlatd | grep -q '^lowlatd: Posture applied: .*cpuset_partition 1' &&
        ! jhas "$m_on" MESSAGE_ID=$MID_FAILED LOWLATD_KIND=cpuset_partition
verdict $? "the journal's 'Posture applied' line counts the partition, and no failed entry" "$(jtext "$m_on" SYSLOG_IDENTIFIER=lowlatd | tail -n 15)"
cond=$(prop_s Condition)
note "Condition: $cond; lowlatctl status: $(lowlatctl status 2>&1 | head -n 3 | tr '\n' ' ')"

# A service in the slice, one in system.slice.
out=$(systemd-run --slice="$SLICE" --unit=e2e-part-in --quiet sleep 600 2>&1)
in_pid=$(systemctl show -P MainPID e2e-part-in.service)
[ -n "$in_pid" ] && [ "$in_pid" != 0 ] && [ "$(cpus_allowed_of "$in_pid")" = "$ISOLATED" ]
verdict $? "systemd-run --slice=$SLICE sleep: pid $in_pid runs on $ISOLATED only (Cpus_allowed_list $(cpus_allowed_of "$in_pid"); taskset: $(taskset -pc "$in_pid" 2>&1 | sed 's/.*: //'))" \
        "$out
$(cat "/proc/$in_pid/cgroup" 2>&1)
$(show)"
systemd-run --unit=e2e-part-out --quiet bash -c 'while :; do :; done'
out_pid=$(systemctl show -P MainPID e2e-part-out.service)
seen=$(psr_on "$out_pid" 3)
refused=$(taskset -pc 2 "$out_pid" 2>&1)
rc=$?
[ -n "$seen" ] && [[ $seen != *gone* ]] && ! touches_isolated "${seen// /,}" && [ "$rc" -ne 0 ] &&
        [ "$(cpus_allowed_of "$out_pid")" = "$HOUSEKEEPING" ]
verdict $? "a busy loop in system.slice (pid $out_pid) ran on CPUs {$seen} over 3 s, never $ISOLATED; taskset -pc 2 refused" \
        "taskset exit $rc: $refused
Cpus_allowed_list $(cpus_allowed_of "$out_pid")
$(show)"
systemctl stop e2e-part-out.service

# ===== drift ============================================================================
section "drift: member written, the slice stopped, CPU 3 offline and back"
m_d=$(mark)
echo member > "$PART"
wait_until 10 part_ok
verdict $? "echo member > $PART: isolated again after $WAITED_MS ms" "$(show)"
jhas "$m_d" MESSAGE_ID=$MID_DRIFT LOWLATD_KIND=cpuset_partition LOWLATD_OBJECT=$SLICE &&
        jhas "$m_d" MESSAGE_ID=$MID_CORRECTED LOWLATD_KIND=cpuset_partition LOWLATD_OBJECT=$SLICE
verdict $? "the journal has its drift ($MID_DRIFT) and corrected entries" "$(jentries "$m_d" MESSAGE_ID=$MID_DRIFT | jfields)
$(jtext "$m_d" SYSLOG_IDENTIFIER=lowlatd | tail -n 10)"

m_s=$(mark)
out=$(systemctl stop "$SLICE" 2>&1)
verdict $? "systemctl stop $SLICE (and e2e-part-in.service in it)" "$out"
back() { slice_active && part_ok && [ "$(allowed_cpus "$SLICE")" = "$ISOLATED" ]; }
wait_until 20 back
verdict $? "$SLICE started again, AllowedCPUs=$ISOLATED, the partition isolated after $WAITED_MS ms" "$(show)
$(jtext "$m_s" SYSLOG_IDENTIFIER=lowlatd | tail -n 10)"
# The cgroup going away turns "member" first (an inotify event) and refuses writes with
# ENODEV: waited out, not a failure.
! jhas "$m_s" MESSAGE_ID=$MID_FAILED LOWLATD_KIND=cpuset_partition
verdict $? "no failed entry for the partition meanwhile" "$(jtext "$m_s" SYSLOG_IDENTIFIER=lowlatd | tail -n 10)"

m_h=$(mark)
echo 0 > /sys/devices/system/cpu/cpu3/online
sleep 2
note "CPU 3 offline: partition '$(cat "$PART" 2>&1)', root isolated $(rd /sys/fs/cgroup/cpuset.cpus.isolated), lowlatctl: $(part_row)"
echo 1 > /sys/devices/system/cpu/cpu3/online
whole() { part_ok && [ "$(rd /sys/fs/cgroup/cpuset.cpus.isolated)" = "$ISOLATED" ] && [ "$(rd /sys/fs/cgroup/cpuset.cpus.effective)" = "$HOUSEKEEPING" ]; }
wait_until 30 whole
verdict $? "CPU 3 back online: the partition isolates $ISOLATED again, root effective $HOUSEKEEPING (after $WAITED_MS ms)" "$(show)
$(jtext "$m_h" SYSLOG_IDENTIFIER=lowlatd | tail -n 10)"
units_at "$HOUSEKEEPING" && [ "$(allowed_cpus "$SLICE")" = "$ISOLATED" ]
verdict $? "and the units' AllowedCPUs= are as before the hotplug" "$(show)"
# While CPU 3 was offline a reload (the online CPUs changed) is refused ("isolated: CPU 3
# does not exist or is offline"), and the next look after it came back reloads: an
# automatic reload that, coming after the restore below, enforced again (seen on 6.12). A
# reload now settles it before the restore.
note "lowlatd on the hotplug: $(jtext "$m_h" SYSLOG_IDENTIFIER=lowlatd | grep -E 'Reload|online' | tr '\n' ';')"
out=$(timeout 60 systemctl reload lowlatd 2>&1)
enforcing() { [ "$(prop_s State)" = enforcing ] && part_ok; }
wait_until 20 enforcing
verdict $? "systemctl reload after the hotplug: enforcing, the partition isolated (after $WAITED_MS ms)" "$out
$(show)"

# ===== restore ==========================================================================
section "lowlatctl restore: the partition undone, the slice gone, every unit as before"
out=$(lowlatctl restore 2>&1)
verdict $? "lowlatctl restore${out:+: $out}" "$out"
gone() { [ "$(systemctl show -P LoadState "$SLICE" 2>/dev/null)" = not-found ] || ! slice_active; }
restored() {
        local u
        gone || return 1
        for u in $UNITS; do [ "$(allowed_cpus "$u")" = "${PRE[$u]}" ] || return 1; done
        [ "$(rd /sys/fs/cgroup/cpuset.cpus.effective)" = 0-3 ]
}
wait_until 15 restored
verdict $? "$SLICE stopped ($(systemctl show -P LoadState "$SLICE" 2>&1)), $UNITS back to their AllowedCPUs= ($(for u in $UNITS; do printf '%s ' "${PRE[$u]:-unset}"; done)), root effective 0-3 (after $WAITED_MS ms)" \
        "$(show)"
[ -z "$(rd /sys/fs/cgroup/cpuset.cpus.isolated)" ] && [ "$(rd /sys/devices/virtual/workqueue/cpumask)" = "$PRE_WQ" ]
verdict $? "nothing isolated any more: root cpuset.cpus.isolated empty, workqueue cpumask $PRE_WQ again" "$(show)"

# ===== observe ==========================================================================
section "lowlatd --observe with the partition configured writes nothing" "quiet 150 s"
DROPIN=/run/systemd/system/lowlatd.service.d/e2e-observe.conf
mkdir -p "${DROPIN%/*}"
printf '[Service]\nExecStart=\nExecStart=/usr/sbin/lowlatd --observe\n' > "$DROPIN"
systemctl daemon-reload
out=$(timeout 120 systemctl restart lowlatd 2>&1)
verdict $? "systemctl restart lowlatd with ExecStart=lowlatd --observe" "$out"
observing() { [ "$(prop_s State)" = observing ] && [ -n "$(part_state)" ]; }
wait_until 20 observing
sleep 3
row=$(part_row)
[ "${row%% *}" = drifted ] && [[ $row == *absent* ]] && ! slice_active && [ ! -e "/sys/fs/cgroup/$SLICE" ]
rc=$?
for u in $UNITS; do [ "$(allowed_cpus "$u")" = "${PRE[$u]}" ] || rc=1; done
verdict $rc "observing: the partition reported ($row), $SLICE not started, the units' AllowedCPUs= untouched" "$(show)"
rm -f "$DROPIN"
systemctl daemon-reload
# lowlatctl boot on a real GRUB (guest-boot.sh), where the image has it (6.12's: mkimage.sh).
if command -v grub-mkconfig > /dev/null; then . "$SHARE/guest-boot.sh"; else skipped "lowlatctl boot on a real GRUB" "no grub-mkconfig in this image"; fi
finish
