# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
# RPS/XPS and per-CPU wake-up latency on the real guest kernel (issue 13, items 1 and 2),
# through a drop-in, systemctl, journalctl and lowlatctl:
#  - [nic "VNET"] rps_cpus = housekeeping, xps_cpus = housekeeping: the virtio-net NIC's
#    queue files read 0-1 (mask 3), or where the kernel offers no XPS on a single-queue
#    device, nic_xps_cpus is unsupported with that reason; a write of CPU 0 only (mask 1) to rx-0/rps_cpus is put
#    back within 2 s, so through inotify (the scan runs every 15 s), and journaled;
#  - [pm] resume_latency = 20 (resume_latency_cpus defaults to the isolated CPUs): CPUs
#    2-3's pm_qos_resume_latency_us read 20 while 0-1 keep theirs; a write of 0 to CPU 2's
#    is put back;
#  - [cpus] hold_timestamping = yes: the timestamping_hold setting reads "held" (lowlatd's
#    own socket with SO_TIMESTAMP), "released" after restore;
#  - [cpus] fair_server = off: where debugfs has sched/fair_server (6.12), CPUs 2-3's
#    runtime reads 0 and CPUs 0-1 keep theirs; where it has none (6.1), each is
#    unsupported with the reason;
#  - lowlatctl restore puts every queue mask, latency limit and runtime back as found.
# This NIC has one queue pair (qemu's user network has no multiqueue): queues that appear
# later, and XPS where the kernel offers it, are 62-mq.sh's, on the multi-queue NIC.
# Leaves lowlatd enforcing the base config.
RP_DROPIN=/etc/lowlatd/lowlatd.conf.d/60-rps-pm.conf
rp_q=/sys/class/net/$VNET/queues
rp_mask() { local v; v=$(rd "$1") || return 1; v=${v//,/}; printf '%d' "$((16#${v:-0}))"; }
rp_lat() { rd "/sys/devices/system/cpu/cpu$1/power/pm_qos_resume_latency_us"; }
rp_rps_is() { [ "$(rp_mask "$rp_q/rx-0/rps_cpus")" = "$1" ]; }
rp_lat_is() { [ "$(rp_lat "$1")" = "$2" ]; }

rps0=$(rp_mask "$rp_q/rx-0/rps_cpus") xps0=$(rp_mask "$rp_q/tx-0/xps_cpus" 2>/dev/null)
declare -A rp_lat0
for c in 0 1 2 3; do rp_lat0[$c]=$(rp_lat $c); done
rp_fs=/sys/kernel/debug/sched/fair_server
rp_rt() { rd "$rp_fs/cpu$1/runtime"; }
declare -A rp_rt0
if [ -d "$rp_fs" ]; then for c in 0 1 2 3; do rp_rt0[$c]=$(rp_rt $c); done; fi
rp_row() { lowlatctl --no-legend list 2>&1 | awk -v k="$1" -v o="$2" '$1 == k && $2 == o'; }
note "before: $VNET rx-0 rps_cpus $rps0, tx-0 xps_cpus $xps0 (as numbers); pm_qos_resume_latency_us of CPUs 0-3: ${rp_lat0[0]} ${rp_lat0[1]} ${rp_lat0[2]} ${rp_lat0[3]}"

mkdir -p "${RP_DROPIN%/*}"
cat > "$RP_DROPIN" <<EOF
[nic "$VNET"]
rps_cpus = housekeeping
xps_cpus = housekeeping

[pm]
resume_latency = 20

[cpus]
hold_timestamping = yes
fair_server = off
EOF
chmod 0644 "$RP_DROPIN"
m60=$(mark)
out=$(timeout 60 systemctl reload lowlatd 2>&1)
verdict $? "systemctl reload with a drop-in: [nic \"$VNET\"] rps_cpus, xps_cpus = housekeeping; [pm] resume_latency = 20" "$out"
applied() { rp_rps_is 3 && rp_lat_is 2 20 && rp_lat_is 3 20; }
wait_until 10 applied
verdict $? "rx-0 rps_cpus is 0-1 (mask 3), CPUs 2-3's resume latency 20 us (after $WAITED_MS ms)" \
        "rps $(cat "$rp_q/rx-0/rps_cpus"); cpu2 $(rp_lat 2) cpu3 $(rp_lat 3)
$(jtext "$m60" SYSLOG_IDENTIFIER=lowlatd | tail -n 10)"
# The kernel offers XPS on multi-queue devices only: on this single-queue NIC reading
# tx-0/xps_cpus fails (ENOENT; 6.1 and 6.12), and lowlatd must say so, not fail.
xps_row=$(lowlatctl --no-legend list 2>&1 | awk -v o="$VNET/tx-0" '$1 == "nic_xps_cpus" && $2 == o')
if cat "$rp_q/tx-0/xps_cpus" > /dev/null 2>&1; then
        [ "$(rp_mask "$rp_q/tx-0/xps_cpus")" = 3 ]
        verdict $? "tx-0 xps_cpus is 0-1 (mask 3)" "xps $(cat "$rp_q/tx-0/xps_cpus"); $xps_row"
else
        reason=$(jentries "$m60" MESSAGE_ID="$MID_UNSUPPORTED" LOWLATD_KIND=nic_xps_cpus | head -n1 | jq -r '.MESSAGE // empty')
        [[ $xps_row == *unsupported* ]] && [[ $reason == *"single transmit queue"* ]]
        verdict $? "tx-0 xps_cpus cannot be read on this single-queue NIC: nic_xps_cpus is unsupported, saying why: $reason" \
                "$xps_row
$(jtext "$m60" SYSLOG_IDENTIFIER=lowlatd | tail -n 10)"
fi
rp_lat_is 0 "${rp_lat0[0]}" && rp_lat_is 1 "${rp_lat0[1]}"
verdict $? "CPUs 0-1 keep theirs: $(rp_lat 0) $(rp_lat 1)"
row=$(rp_row timestamping_hold SO_TIMESTAMP)
[[ $row == *" held "*" held "* ]] && [[ $row == *" ok" || $row == *" corrected" ]]
verdict $? "hold_timestamping = yes: timestamping_hold SO_TIMESTAMP is held (lowlatd's own socket): $row" \
        "$(lowlatctl list 2>&1 | tail -n 20)"
if [ -d "$rp_fs" ]; then
        # 6.12 refuses the change (EBUSY) on CPUs isolated with isolcpus=domain, as this
        # guest's are: then unsupported, saying so, and CPUs 0-1 untouched either way.
        row=$(rp_row fair_server cpu2)
        reason=$(jentries "$m60" MESSAGE_ID="$MID_UNSUPPORTED" LOWLATD_KIND=fair_server LOWLATD_OBJECT=cpu2 | head -n1 |
                jq -r '.MESSAGE // empty')
        { { [ "$(rp_rt 2)" = 0 ] && [ "$(rp_rt 3)" = 0 ]; } ||
                { [[ $row == *unsupported* ]] && [[ $reason == *"the kernel refuses to change it"* ]]; }; } &&
                [ "$(rp_rt 0)" = "${rp_rt0[0]}" ] && [ "$(rp_rt 1)" = "${rp_rt0[1]}" ]
        verdict $? "fair_server = off: CPUs 2-3's runtime $(rp_rt 2) $(rp_rt 3)${reason:+ (${reason#*: })}, CPUs 0-1 keep ${rp_rt0[0]}" \
                "$(for c in 0 1 2 3; do echo "cpu$c $(rp_rt $c)"; done)
$row"
else
        row=$(rp_row fair_server cpu2)
        reason=$(jentries "$m60" MESSAGE_ID="$MID_UNSUPPORTED" LOWLATD_KIND=fair_server LOWLATD_OBJECT=cpu2 | head -n1 |
                jq -r '.MESSAGE // empty')
        [[ $row == *unsupported* ]] && [[ $reason == *"debugfs is not mounted"* ]]
        verdict $? "no $rp_fs on $(uname -r): fair_server cpu2 is unsupported, saying why: $reason" "$row
$(jtext "$m60" SYSLOG_IDENTIFIER=lowlatd | tail -n 10)"
fi
listed=$(lowlatctl --no-legend list 2>&1 | awk -v o="$VNET/rx-0" '$1 == "nic_rps_cpus" && $2 == o')
[ -n "$listed" ]
verdict $? "lowlatctl list shows nic_rps_cpus $VNET/rx-0: $listed" "$(lowlatctl list 2>&1 | tail -n 20)"

m60b=$(mark)
echo 1 > "$rp_q/rx-0/rps_cpus"
wait_until 10 rp_rps_is 3
rc=$? waited=$WAITED_MS
[ $rc -eq 0 ] && [ "$waited" -le 2000 ]
verdict $? "echo 1 > rx-0/rps_cpus is put back to 3 within 2 s ($waited ms: through inotify)" \
        "$(cat "$rp_q/rx-0/rps_cpus")
$(jtext "$m60b" SYSLOG_IDENTIFIER=lowlatd | tail -n 10)"
wait_until 10 jhas "$m60b" MESSAGE_ID="$MID_CORRECTED" LOWLATD_KIND=nic_rps_cpus LOWLATD_OBJECT="$VNET/rx-0"
verdict $? "the journal has its correction (kind nic_rps_cpus, object $VNET/rx-0)" \
        "$(jtext "$m60b" SYSLOG_IDENTIFIER=lowlatd | tail -n 10)"

m60c=$(mark)
echo 0 > /sys/devices/system/cpu/cpu2/power/pm_qos_resume_latency_us
wait_until 10 rp_lat_is 2 20
rc=$? waited=$WAITED_MS
[ $rc -eq 0 ] && [ "$waited" -le 2000 ]
verdict $? "echo 0 > cpu2's pm_qos_resume_latency_us is put back to 20 within 2 s ($waited ms)" \
        "$(rp_lat 2)
$(jtext "$m60c" SYSLOG_IDENTIFIER=lowlatd | tail -n 10)"
wait_until 10 jhas "$m60c" MESSAGE_ID="$MID_CORRECTED" LOWLATD_KIND=resume_latency LOWLATD_OBJECT=cpu2
verdict $? "the journal has its correction (kind resume_latency, object cpu2)" \
        "$(jtext "$m60c" SYSLOG_IDENTIFIER=lowlatd | tail -n 10)"

out=$(lowlatctl restore 2>&1)
verdict $? "lowlatctl restore exits 0${out:+: $out}" "$out"
rp_rt_back() { [ ! -d "$rp_fs" ] || { [ "$(rp_rt 2)" = "${rp_rt0[2]}" ] && [ "$(rp_rt 3)" = "${rp_rt0[3]}" ]; }; }
rp_rps_is "$rps0" && [ "$(rp_mask "$rp_q/tx-0/xps_cpus" 2>/dev/null)" = "$xps0" ] &&
        rp_lat_is 2 "${rp_lat0[2]}" && rp_lat_is 3 "${rp_lat0[3]}" && rp_rt_back
verdict $? "restore puts rps_cpus ($rps0), xps_cpus ($xps0), CPUs 2-3's latency (${rp_lat0[2]} ${rp_lat0[3]}) and fair server runtime back as found" \
        "rps $(cat "$rp_q/rx-0/rps_cpus") xps $(cat "$rp_q/tx-0/xps_cpus"); cpu2 $(rp_lat 2) cpu3 $(rp_lat 3)
$(grep -E 'nic_rps_cpus|nic_xps_cpus|resume_latency|fair_server' /run/lowlatd/originals 2>&1)"
row=$(rp_row timestamping_hold SO_TIMESTAMP)
[[ $row == *" released "* ]]
verdict $? "and the timestamping socket is closed: $row" "$(lowlatctl list 2>&1 | tail -n 20)"

rm -f "$RP_DROPIN"
out=$(timeout 60 systemctl reload lowlatd 2>&1)
enforcing() { [ "$(prop_s State)" = enforcing ]; }
wait_until 30 enforcing
verdict $? "the drop-in removed, reloaded: enforcing the base config again" "$out
State $(prop_s State)"
