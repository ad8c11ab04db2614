# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
# RPS/XPS on a multi-queue NIC (issue 13, item 1): the guest's third NIC, MQ, a virtio-net
# with E2E_MQ_QUEUES (4) queue pairs on a tap in qemu's own network namespace on the host
# (run-e2e.sh), whose host side answers at E2E_MQ_PEER.
#  - What virtio-net itself does, with lowlatd keeping no queue mask of MQ (the base
#    config): its queue masks and IRQs at boot, and after `ethtool -L MQ combined 2` and
#    back to 4 (noted: rps_cpus of the new rx queues, xps_cpus of every tx queue, where the
#    driver pins the queue IRQs), and lowlatd moving those IRQs off CPUs 2-3 again;
#  - [nic "MQ"] rps_cpus = housekeeping, xps_cpus = housekeeping: every rx-N/rps_cpus and
#    tx-N/xps_cpus reads 0-1 (mask 3); XPS is supported here (the single-queue NIC's
#    unsupported case is 60-rps-pm.sh's); echo f > rx-0/rps_cpus, echo f > tx-1/xps_cpus
#    and echo 1 > rx-2/rps_cpus are put back within 2 s (inotify);
#  - ethtool -L MQ combined 2, then 4: the queues that were removed and added again, and
#    those the driver reset, have their masks again, and the queue IRQs are off CPUs 2-3,
#    at once (the time it took is noted; the scan would take up to 15 s);
#  - lowlatctl restore puts every queue's masks back as they were before the drop-in.
# Leaves MQ with E2E_MQ_QUEUES queue pairs and lowlatd enforcing the base config.
MQ_DROPIN=/etc/lowlatd/lowlatd.conf.d/62-mq.conf
if [ -z "$MQ" ]; then
        skipped "RPS/XPS on a multi-queue virtio-net NIC" "${E2E_MQ_REASON:-the guest has no multi-queue NIC}"
        return 0
fi
mq_q=/sys/class/net/$MQ/queues
hexmask() { local v=${1//,/}; printf '%d' "$((16#${v:-0}))"; }
mq_mask() { local v; v=$(rd "$1") || return 1; hexmask "$v"; }
# The polls below read with the shell's own read, no fork: under emulation a fork costs
# tens of milliseconds, and they time lowlatd.
# is_mask FILE MASK (MASK a number)
is_mask() { local v; read -r v < "$1" 2>/dev/null || return 1; v=${v//,/}; [ $((16#${v:-0})) = "$2" ]; }
mq_n() { local d c=0; for d in "$mq_q/$1"-*; do [ -d "$d" ] && c=$((c + 1)); done; echo $c; }
# mq_masks rx|tx: "rx-0=3 rx-1=3 ..." (the masks as numbers)
mq_masks() {
        local d f out="" i nq
        f=$([ "$1" = rx ] && echo rps_cpus || echo xps_cpus) nq=$(mq_n "$1")
        for ((i = 0; i < nq; i++)); do
                d=$mq_q/$1-$i
                out+="$1-$i=$(mq_mask "$d/$f" 2>/dev/null || echo '?') "
        done
        echo "${out% }"
}
# all_masks N MASK: N queue pairs, every rx-N/rps_cpus and tx-N/xps_cpus reads MASK
all_masks() {
        local i
        [ -d "$mq_q/rx-$(($1 - 1))" ] && [ ! -d "$mq_q/rx-$1" ] && [ -d "$mq_q/tx-$(($1 - 1))" ] && [ ! -d "$mq_q/tx-$1" ] ||
                return 1
        for ((i = 0; i < $1; i++)); do
                is_mask "$mq_q/rx-$i/rps_cpus" "$2" && is_mask "$mq_q/tx-$i/xps_cpus" "$2" || return 1
        done
}
mq_irqs() { irqs_named "^$(virtio_dev "$MQ")-(input|output)\\.[0-9]+\$"; }
# Its queue IRQs: virtio-net asks for them at probe, for every queue pair it may have, and
# keeps them across channel changes.
MQ_IRQS=$(mq_irqs | xargs)
# "name:affinity(hint HINT)" for every queue IRQ of MQ
mq_irq_text() {
        local irq out=""
        for irq in $(mq_irqs); do
                out+="$(irq_name "$irq"):$(rd "/proc/irq/$irq/smp_affinity_list")"
                out+="(hint $(mq_mask "/proc/irq/$irq/affinity_hint" 2>/dev/null || echo '?')) "
        done
        echo "${out% }"
}
# mq_irqs_off: no queue IRQ of MQ may run on an isolated CPU (2 or 3, or a range with them)
mq_irqs_off() {
        local irq v
        for irq in $MQ_IRQS; do
                read -r v < "/proc/irq/$irq/smp_affinity_list" || return 1
                [[ $v =~ [23] ]] && return 1
        done
        return 0
}
mq_state() { echo "$(mq_masks rx); $(mq_masks tx); IRQs $(mq_irq_text)"; }

# --- what virtio-net does, lowlatd keeping no queue mask of MQ ---------------------------
note "$MQ at boot ($(mq_n rx) rx, $(mq_n tx) tx queues; ethtool -l combined, maximum and current: $(ethtool -l "$MQ" 2>/dev/null | awk '/^Combined/ { print $2 }' | xargs)): $(mq_state)"
[ "$(mq_n rx)" = "$E2E_MQ_QUEUES" ] && [ "$(mq_n tx)" = "$E2E_MQ_QUEUES" ]
verdict $? "$MQ has $E2E_MQ_QUEUES rx and tx queues" "$(ls "$mq_q"; ethtool -l "$MQ" 2>&1)"
ip link set "$MQ" up && ip addr add "$E2E_MQ_GUEST/24" dev "$MQ" 2>/dev/null
out=$(ping -c 3 -i 0.2 -W 2 -I "$MQ" "$E2E_MQ_PEER" 2>&1)
verdict $? "$MQ reaches its peer $E2E_MQ_PEER on the tap in qemu's network namespace" "$out"

out=$(ethtool -L "$MQ" combined 2 2>&1)
rc=$?
two() { [ "$(mq_n rx)" = 2 ] && [ "$(mq_n tx)" = 2 ]; }
wait_until 10 two
verdict $((rc | $?)) "ethtool -L $MQ combined 2: 2 rx and tx queues" "$out
$(ls "$mq_q")"
note "virtio-net, combined 2: $(mq_state)"
m=$(mark)
out=$(ethtool -L "$MQ" combined "$E2E_MQ_QUEUES" 2>&1)
rc=$?
wait_until 20 mq_irqs_off
rc2=$? waited=$WAITED_MS
full() { [ "$(mq_n rx)" = "$E2E_MQ_QUEUES" ] && [ "$(mq_n tx)" = "$E2E_MQ_QUEUES" ]; }
wait_until 10 full
verdict $((rc | $?)) "ethtool -L $MQ combined $E2E_MQ_QUEUES: $E2E_MQ_QUEUES rx and tx queues again" "$out
$(ls "$mq_q")"
note "virtio-net, combined $E2E_MQ_QUEUES again (the driver's pinning is the hint): $(mq_state)"
# The scan runs every 15 s: within 5 s is the queues' uevents.
[ $rc2 -eq 0 ] && [ "$waited" -le 5000 ]
verdict $? "lowlatd (no [nic] section for $MQ) moves the queue IRQs the driver re-pinned off $ISOLATED within 5 s ($waited ms after ethtool -L returned)" \
        "$(mq_irq_text)
$(jtext "$m" SYSLOG_IDENTIFIER=lowlatd | tail -n 12)"

# --- lowlatd keeps the masks ---------------------------------------------------------------
declare -A mq_rps0 mq_xps0
for ((i = 0; i < E2E_MQ_QUEUES; i++)); do
        mq_rps0[$i]=$(mq_mask "$mq_q/rx-$i/rps_cpus") mq_xps0[$i]=$(mq_mask "$mq_q/tx-$i/xps_cpus")
done
mkdir -p "${MQ_DROPIN%/*}"
cat > "$MQ_DROPIN" <<EOF
[nic "$MQ"]
rps_cpus = housekeeping
xps_cpus = housekeeping
EOF
chmod 0644 "$MQ_DROPIN"
m62=$(mark)
out=$(timeout 60 systemctl reload lowlatd 2>&1)
verdict $? "systemctl reload with a drop-in: [nic \"$MQ\"] rps_cpus, xps_cpus = housekeeping" "$out"
wait_until 10 all_masks "$E2E_MQ_QUEUES" 3
verdict $? "every rx-N/rps_cpus and tx-N/xps_cpus of $MQ is 0-1 (mask 3), after $WAITED_MS ms" \
        "$(mq_state)
$(jtext "$m62" SYSLOG_IDENTIFIER=lowlatd | tail -n 10)"
rows=$(lowlatctl --no-legend list 2>&1 | awk -v p="$MQ/" '($1 == "nic_rps_cpus" || $1 == "nic_xps_cpus") && index($2, p) == 1')
bad=$(awk '$NF !~ /^(ok|corrected)$/' <<< "$rows")
[ "$(wc -l <<< "$rows")" = $((2 * E2E_MQ_QUEUES)) ] && [ -z "$bad" ]
verdict $? "lowlatctl list: nic_rps_cpus and nic_xps_cpus for each of the $E2E_MQ_QUEUES queues of $MQ, none unsupported (XPS on a multi-queue device)" \
        "$rows"

m62b=$(mark)
echo f > "$mq_q/rx-0/rps_cpus" 2>/dev/null
got=$(rd "$mq_q/rx-0/rps_cpus")
wait_until 10 all_masks "$E2E_MQ_QUEUES" 3
rc=$? waited=$WAITED_MS
[ $rc -eq 0 ] && [ "$waited" -le 2000 ]
verdict $? "echo f > rx-0/rps_cpus (the kernel keeps it as $got): rx-0 reads 3 again within 2 s ($waited ms)" \
        "$(mq_state)
$(jtext "$m62b" SYSLOG_IDENTIFIER=lowlatd | tail -n 10)"
m62c=$(mark)
echo f > "$mq_q/tx-1/xps_cpus"
wait_until 10 all_masks "$E2E_MQ_QUEUES" 3
rc=$? waited=$WAITED_MS
[ $rc -eq 0 ] && [ "$waited" -le 2000 ]
verdict $? "echo f > tx-1/xps_cpus (XPS takes the isolated CPUs) is put back to 3 within 2 s ($waited ms: inotify)" \
        "$(mq_state)
$(jtext "$m62c" SYSLOG_IDENTIFIER=lowlatd | tail -n 10)"
wait_until 10 jhas "$m62c" MESSAGE_ID="$MID_CORRECTED" LOWLATD_KIND=nic_xps_cpus LOWLATD_OBJECT="$MQ/tx-1"
rc=$?
found=$(jentries "$m62c" MESSAGE_ID="$MID_DRIFT" LOWLATD_KIND=nic_xps_cpus LOWLATD_OBJECT="$MQ/tx-1" | jq -r .LOWLATD_OBSERVED | head -n1)
[ $rc -eq 0 ] && [ "$(hexmask "${found:-0}")" = 15 ]
verdict $? "the journal has the drift (found ${found:-nothing}: the kernel took f) and its correction (kind nic_xps_cpus, object $MQ/tx-1)" \
        "$(jtext "$m62c" SYSLOG_IDENTIFIER=lowlatd | tail -n 10)"
m62d=$(mark)
echo 1 > "$mq_q/rx-2/rps_cpus"
wait_until 10 all_masks "$E2E_MQ_QUEUES" 3
rc=$? waited=$WAITED_MS
[ $rc -eq 0 ] && [ "$waited" -le 2000 ]
verdict $? "echo 1 > rx-2/rps_cpus is put back to 3 within 2 s ($waited ms)" \
        "$(mq_state)
$(jtext "$m62d" SYSLOG_IDENTIFIER=lowlatd | tail -n 10)"

# ethtool -L: queues removed and added again, the driver's own XPS and IRQ pinning; the
# scan runs every 15 s, so "at once" is well under that: the uevents of the queues. The
# time is from ethtool's return to all of it put back as seen by a poll that does not fork,
# and from the same moment to lowlatd's last journal entry about it.
m62q=$(mark)
for q in 2 "$E2E_MQ_QUEUES"; do
        m=$(mark)
        out=$(ethtool -L "$MQ" combined "$q" 2>&1)
        rc=$?
        t0=$(mark)
        settled() { all_masks "$q" 3 && mq_irqs_off; }
        wait_until 20 settled
        rc2=$? waited=$WAITED_MS
        sleep 1
        last=$(jentries "$t0" SYSLOG_IDENTIFIER=lowlatd | jq -r '.__REALTIME_TIMESTAMP' | sort -n | tail -n1)
        [ $rc -eq 0 ] && [ $rc2 -eq 0 ] && [ "$waited" -le 5000 ]
        verdict $? "ethtool -L $MQ combined $q: every queue's rps_cpus and xps_cpus is 3 and the queue IRQs are off $ISOLATED within 5 s ($waited ms after ethtool returned; lowlatd's last entry at $(((${last:-$t0} - t0) / 1000)) ms)" \
                "$out
now: $(mq_state)
$(jtext "$m" SYSLOG_IDENTIFIER=lowlatd | tail -n 20)"
        note "combined $q, put back: $(mq_state)"
        note "combined $q, lowlatd's journal: $(jtext "$m" SYSLOG_IDENTIFIER=lowlatd | grep -v '^lowlatd: IRQ' | sed 's/^lowlatd: //' | paste -sd '|'); IRQs corrected: $(jentries "$m" MESSAGE_ID="$MID_CORRECTED" LOWLATD_KIND=irq_affinity | jq -r .LOWLATD_OBJECT | sort -n | xargs)"
done
# Said once per replan; the second change may come in with the link's own notification,
# which replans it first: the journal of both changes, not of the last one alone.
jtext "$m62q" SYSLOG_IDENTIFIER=lowlatd | grep -q "Interface $MQ changed its queues"
verdict $? "the journal says why: interface $MQ changed its queues" \
        "$(jtext "$m62q" SYSLOG_IDENTIFIER=lowlatd | grep -v '^lowlatd: IRQ' | tail -n 20)"
failed=$(lowlatctl --no-legend --state=failed list 2>&1)
[ -z "$failed" ]
verdict $? "no setting is in state failed after the channel changes" "$failed"

out=$(lowlatctl restore 2>&1)
verdict $? "lowlatctl restore exits 0${out:+: $out}" "$out"
want="" now=""
for ((i = 0; i < E2E_MQ_QUEUES; i++)); do
        want+="rx-$i=${mq_rps0[$i]} tx-$i=${mq_xps0[$i]} "
        now+="rx-$i=$(mq_mask "$mq_q/rx-$i/rps_cpus") tx-$i=$(mq_mask "$mq_q/tx-$i/xps_cpus") "
done
[ "$want" = "$now" ]
verdict $? "restore puts every queue's rps_cpus and xps_cpus of $MQ back as before the drop-in: ${want% }" \
        "now: $now
$(grep -E "nic_(rps|xps)_cpus.$MQ/" /run/lowlatd/originals 2>&1)"

# The queue IRQs' originals are what lowlatd found before its first write to each: for
# those it first moved after the channel changes, the driver's re-pinning (onto CPUs 2-3),
# not what they had at the install. Restore puts that back, and section 15's comparison
# after the purge starts from it.
differ="" repinned=""
for irq in $MQ_IRQS; do
        now=$(rd "/proc/irq/$irq/smp_affinity_list")
        orig=$(awk -F '\t' -v o="$irq" '$1 == "irq_affinity" && $2 == o { print $3 }' /run/lowlatd/originals)
        [ -n "$orig" ] && [ "$now" != "$orig" ] && differ+=" $irq:$now(original $orig)"
        if [ -n "${PRE_IRQ[$irq]+set}" ] && [ "$now" != "${PRE_IRQ[$irq]}" ]; then
                repinned+=" $irq:${PRE_IRQ[$irq]}->$now"
                PRE_IRQ[$irq]=$now
        fi
done
[ -z "$differ" ]
verdict $? "restore puts each queue IRQ of $MQ lowlatd moved back to its original" "differ:$differ
$(grep irq_affinity /run/lowlatd/originals)"
note "queue IRQs of $MQ whose original is the driver's re-pinning, not what they had at the install:${repinned:- none}"

rm -f "$MQ_DROPIN"
out=$(timeout 60 systemctl reload lowlatd 2>&1)
enforcing() { [ "$(prop_s State)" = enforcing ]; }
wait_until 30 enforcing
verdict $? "the drop-in removed, reloaded: enforcing the base config again" "$out
State $(prop_s State)"
