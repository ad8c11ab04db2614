#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The e2e checks, run inside the qemu guest by lowlatd-e2e.service (systemd as PID 1,
# udevd, journald, the system bus, an e1000e and a virtio-net NIC (and a virtio-net with
# 4 queue pairs, MQ, where the host could make it), a virtio-blk root,
# isolcpus=managed_irq,domain,2-3 nohz_full=2-3 rcu_nocbs=2-3), on one of three kernels
# (E2E_KERNEL: 6.1, rt or 6.12). The host (run-e2e.sh) passes this script, guest.d/, the
# Debian package under test (deb/lowlatd_*.deb) and params.sh in the 9p share mounted at
# /run/e2e; results go to /run/e2e/results:
#   tap.txt      TAP lines, ending with the plan and "N passed, N failed"
#   summary      the last line alone
#   kernel       the kernel and systemd versions, one line
#   journal.*    the whole journal (export and text) when anything failed
# The package is installed with apt-get first and purged with apt-get last: the checks in
# between run lowlatd as the package installed it.
# Everything is driven through the tools a user has: systemctl, journalctl, busctl,
# lowlatctl, ethtool, ip, sysctl, irqbalance from Debian. Nothing here is timed as a
# benchmark: software emulation is slow and noisy; waits are generous polls.
set -u
export LC_ALL=C
umask 022

SHARE=/run/e2e
# shellcheck source=tests/e2e/guest-lib.sh
. "$SHARE/guest-lib.sh"
# The README's systemd-analyze security figure, measured with systemd 252 (Debian 12)
README_EXPOSURE=2.8
README_SYSTEMD=252

write_config() {
        # $1: extra lines for the [nic] section, $2: extra sections
        cat > "$CONF" <<EOF
# Written by the lowlatd e2e test (tests/e2e/guest-test.sh).
[daemon]
mode = enforce
# Long, so that a correction within a second or two can only have come from an event
# (inotify, rtnetlink, ethtool netlink, udev). WatchdogSec=30s makes the scan run every
# 15 s all the same (lowlatd(8), NOTIFY).
scan_interval = 60s

[cpus]
isolated = auto

[irq]
default_affinity = housekeeping

[pm]
cpu_dma_latency = 0

[nic "$E1K"]
${1}
${2:-}
EOF
        chmod 0644 "$CONF"
}


# ===== setup ===========================================================================
GUEST_SYSTEMD=$(systemctl --version | awk 'NR == 1 { print $2 }')
echo "kernel $(uname -r), systemd $GUEST_SYSTEMD" > "$R/kernel"
patch_count_init
# apt-get install runs under timeout 300
section "setup: kernel $E2E_KERNEL; install the package under test with apt-get" "quiet 330 s"
note "kernel $(uname -r) ($(uname -v)), systemd $GUEST_SYSTEMD, cmdline: $(cat /proc/cmdline)"
# kernel_at_least MAJOR MINOR
kernel_at_least() {
        local v=$(uname -r) major minor
        major=${v%%.*} minor=${v#*.}
        minor=${minor%%[!0-9]*}
        [ "$major" -gt "$1" ] || { [ "$major" -eq "$1" ] && [ "$minor" -ge "$2" ]; }
}
RT=0
[[ $(uname -v) == *PREEMPT_RT* ]] && RT=1
case $E2E_KERNEL in
6.1) [[ $(uname -r) == 6.1.* ]] && [ $RT = 0 ] ;;
rt) [[ $(uname -r) == 6.1.* ]] && [ $RT = 1 ] ;;
6.12) [[ $(uname -r) == 6.12.* ]] && [ $RT = 0 ] && [ "$GUEST_SYSTEMD" -ge 257 ] ;;
*) false ;;
esac
verdict $? "the guest runs the kernel asked for ($E2E_KERNEL): $(uname -r)$([ $RT = 1 ] && echo ", PREEMPT_RT"), systemd $GUEST_SYSTEMD"

E1K=$(nic_by_driver e1000e)
VNET=$(nic_by_driver virtio_net)
MQ=""
for d in /sys/class/net/*; do
        [ -n "$E2E_MQ_MAC" ] && [ "$(cat "$d/address" 2>/dev/null)" = "$E2E_MQ_MAC" ] && MQ=${d##*/}
done
[ -n "$E1K" ] && [ -n "$VNET" ] && { [ -z "$E2E_MQ_MAC" ] || [ -n "$MQ" ]; }
verdict $? "NICs found: e1000e '$E1K', virtio-net '$VNET'$([ -n "$E2E_MQ_MAC" ] && echo ", multi-queue virtio-net '$MQ' ($E2E_MQ_MAC)")" "$(ip -br link)"
[ -z "$E2E_MQ_MAC" ] && note "no multi-queue NIC: $E2E_MQ_REASON"
# The multi-queue NIC's IRQs are guest.d/62-mq.sh's, whose channel changes start from the
# driver's own pinning: irqbalance (section 9) is told to leave them alone, as it would
# otherwise move some (seen on 6.1: output.0 onto CPU 3, input.1 and output.1 from 1 to
# 0) and section 13 could not find them as they were before the install.
MQ_IRQ_BAN=""
[ -n "$MQ" ] && for irq in $(irqs_named "^$(virtio_dev "$MQ")-"); do MQ_IRQ_BAN+=" --banirq=$irq"; done
MQ_IRQ_BAN=${MQ_IRQ_BAN# }
[ "$(rd /sys/devices/system/cpu/isolated)" = "$ISOLATED" ]
verdict $? \
        "the kernel isolated CPUs $ISOLATED" "isolated: $(rd /sys/devices/system/cpu/isolated)"

# The image's latency tools, for lowlatctl measure and top: rtla (a userspace tool built
# from the kernel's source, its own version), cyclictest (rt-tests) and tmux.
rtla_usage=$(rtla 2>&1) cyclictest_help=$(cyclictest --help 2>&1)
[[ $rtla_usage == *timerlat* ]] && [[ $cyclictest_help == *cyclictest* ]] && command -v tmux > /dev/null
verdict $? "the image has rtla ($(dpkg-query -W -f='${Version}' rtla 2>&1)), rt-tests ($(dpkg-query -W -f='${Version}' rt-tests 2>&1)) and tmux ($(dpkg-query -W -f='${Version}' tmux 2>&1)), and rtla and cyclictest run" \
        "rtla: $rtla_usage
cyclictest: $(head -n 3 <<< "$cyclictest_help")"

# What the host had before lowlatd was installed, for section 13 (restore) and the
# purge at the end: every IRQ's affinity, the default affinity, the latency request,
# every sysctl, each NIC's ethtool settings and root qdisc.
declare -A PRE_IRQ PRE_NIC
for f in /proc/irq/[0-9]*/smp_affinity_list; do
        irq=${f#/proc/irq/}
        PRE_IRQ[${irq%%/*}]=$(rd "$f")
done
PRE_DEFAULT=$(rd /proc/irq/default_smp_affinity)
PRE_DMA=$(dma_latency)
# sysctl -a into a file: a loop over a thousand keys would cost minutes of forks here.
sysctl -a > /run/e2e-pre-sysctl.txt 2>/dev/null
squeeze() { tr -s '[:space:]' ' ' | sed 's/^ //; s/ $//'; }
pre_sysctl() { awk -v k="$1" 'index($0, k " = ") == 1 { print substr($0, length(k) + 4); exit }' /run/e2e-pre-sysctl.txt | squeeze; }
nic_state() {
        # $1: interface, $2: c (coalescing), k (features), g (rings), l (channels) or q (root qdisc)
        if [ "$2" = q ]; then
                tc qdisc show dev "$1" root 2>&1 | awk 'NR == 1 { print $2 }'
        else
                ethtool -"$2" "$1" 2>&1
        fi
}
for nic in "$E1K" "$VNET" ${MQ:+"$MQ"}; do
        for what in c k g l q; do PRE_NIC[$nic/$what]=$(nic_state "$nic" $what); done
done

# The noise gate's perf rings stay closed but for guest.d/70-noise.sh, which opens them once
# with its own drop-in: opening and closing them patches the kernel's IPI handlers, which
# QEMU's multi-threaded TCG does not do safely (tests/tools/gatecycle crashed or hung every
# kernel here within 11 to 166 rounds: tests/e2e/gate-cycle.sh, lowlatd(8) NOISE GATE).
# run-e2e.sh boots single-threaded TCG, which does, but a round costs about a second there,
# and the suite would do some 12 rounds per kernel, at every start, stop and restart; and a
# run on multi-threaded TCG (LOWLATD_E2E_ACCEL, at the risk docs/e2e.md measured) patches
# text as seldom as the suite can.
E2E_DROPIN=/etc/lowlatd/lowlatd.conf.d/00-e2e-gate.conf
mkdir -p "${E2E_DROPIN%/*}"
printf '# tests/e2e/guest-test.sh: no perf rings under TCG but in guest.d/70-noise.sh\n[noise]\ngate = off\n' > "$E2E_DROPIN"
chmod 0644 "$E2E_DROPIN"
DEB=$(ls "$SHARE"/deb/lowlatd_*.deb 2>/dev/null | head -n1)
m_install=$(mark)
t_apt=$(now_ms)
out=$(DEBIAN_FRONTEND=noninteractive timeout 300 apt-get install -y --no-install-recommends "$DEB" 2>&1)
verdict $? "apt-get install ${DEB#"$SHARE"/} ($(($(now_ms) - t_apt)) ms)" "$out"
status=$(dpkg-query -W -f='${Status} ${Version}' lowlatd 2>&1)
[[ $status == "install ok installed "* ]]
verdict $? "dpkg: lowlatd $status" "$out"
LOWLATD=$(command -v lowlatd) LOWLATCTL=$(command -v lowlatctl)
conffiles=$(dpkg-query -W -f='${Conffiles}' lowlatd | awk 'NF { print $1 }')
[ "$LOWLATD" = /usr/sbin/lowlatd ] && [ "$LOWLATCTL" = /usr/bin/lowlatctl ] && [ "$conffiles" = "$CONF" ]
verdict $? "lowlatd: $LOWLATD, lowlatctl: $LOWLATCTL, conffiles: $conffiles, unit: $(systemctl show -P FragmentPath lowlatd)" \
        "$(dpkg-query -L lowlatd)"
out=$(journalctl --list-catalog 2>&1 | grep -c -e "$MID_DRIFT" -e "$MID_FIGHT" -e "$MID_UNMOVABLE")
[ "$out" -eq 3 ]
verdict $? "the catalog is in journalctl --list-catalog (systemd's dpkg trigger ran --update-catalog)" \
        "$(ls -l /usr/lib/systemd/catalog/ 2>&1)"
enabled=$(systemctl is-enabled lowlatd 2>&1) active=$(systemctl is-active lowlatd 2>&1)
[ "$enabled" = enabled ] && [ "$active" = active ]
verdict $? "the package enabled and started lowlatd.service: $enabled, $active" \
        "$(systemctl status --no-pager lowlatd 2>&1)"
on_bus() { [ "$(prop_s State)" = enforcing ]; }
wait_until 30 on_bus
verdict $? "lowlatd owns org.lowlatd1 on the system bus after $WAITED_MS ms (the package's policy, no manual reload): State $(prop_s State)" \
        "$(jtext "$m_install" SYSLOG_IDENTIFIER=lowlatd | tail -n 10)"

# The shipped configuration moves IRQs off the isolated CPUs and sets the default
# affinity, nothing else: every other IRQ as it was, no other kind of setting, the
# latency request and the NICs untouched.
kinds=$(lowlatctl --no-legend list 2>&1 | awk '{ print $1 }' | sort -u | xargs)
[ "$kinds" = "irq_affinity irq_default_affinity" ]
verdict $? "as shipped, lowlatd keeps IRQ affinities and the default affinity only: $kinds" "$(lowlatctl list 2>&1)"
mapfile -t UNMOVABLE < <(settings_in_state unmovable irq_affinity)
moved=0 untouched=0 bad=""
for irq in "${!PRE_IRQ[@]}"; do
        [ -e "/proc/irq/$irq/smp_affinity_list" ] || continue
        now=$(rd "/proc/irq/$irq/smp_affinity_list")
        if touches_isolated "${PRE_IRQ[$irq]}" && [[ " ${UNMOVABLE[*]} " != *" $irq "* ]]; then
                if touches_isolated "$now"; then bad+=" $irq:${PRE_IRQ[$irq]}->$now(still on $ISOLATED)"; else moved=$((moved + 1)); fi
        elif [ "$now" = "${PRE_IRQ[$irq]}" ]; then
                untouched=$((untouched + 1))
        else
                bad+=" $irq:${PRE_IRQ[$irq]}->$now"
        fi
done
[ -z "$bad" ] && [ "$moved" -gt 0 ]
verdict $? "as shipped: $moved IRQs moved off $ISOLATED, the other $untouched as they were" "wrong:$bad"
dflt=$(rd /proc/irq/default_smp_affinity)
[ $((16#$dflt)) -eq 3 ] && [ "$(dma_latency)" = "$PRE_DMA" ] && [ "$(nic_state "$E1K" c)" = "${PRE_NIC[$E1K/c]}" ]
verdict $? "as shipped: default_smp_affinity $PRE_DEFAULT -> $dflt; /dev/cpu_dma_latency ($(dma_latency)) and $E1K's coalescing untouched"
out=$(timeout 60 systemctl stop lowlatd 2>&1)
verdict $? "systemctl stop lowlatd: the tests below start it with their own configuration" "$out"

write_config "rx_usecs = 50
irq_cpus = 1"
out=$(lowlatd --check-config 2>&1)
verdict $? "lowlatd --check-config accepts the test config" "$out"

# ===== 1 ===============================================================================
# The host as it was before lowlatd was installed is PRE_IRQ and PRE_DEFAULT above: the
# originals lowlatd recorded then are kept in /run/lowlatd across the stop and start.
# systemctl start runs under timeout 120
section "1: systemctl start reaches active (Type=notify); isolated = auto reads $ISOLATED" "quiet 150 s"
m0=$(mark)
start_ms=$(now_ms)
out=$(timeout 120 systemctl start lowlatd 2>&1)
rc=$?
STARTED_AT=$(now_ms)
verdict $rc "systemctl start lowlatd returns 0 (took $((STARTED_AT - start_ms)) ms)" "$out
$(systemctl status --no-pager lowlatd 2>&1)"
[ "$(systemctl is-active lowlatd)" = active ]
verdict $? "lowlatd.service is active" "$(systemctl status --no-pager lowlatd 2>&1)"
type=$(systemctl show -P Type lowlatd) status=$(systemctl show -P StatusText lowlatd)
[ "$type" = notify ] && [ -n "$status" ]
verdict $? "Type=notify and a STATUS= line: '$status'" "Type=$type"
jhas "$m0" MESSAGE_ID=$MID_STARTED _SYSTEMD_UNIT=lowlatd.service
verdict $? "the started message (READY=1) is in the journal from _SYSTEMD_UNIT=lowlatd.service" "$(jtext "$m0" _SYSTEMD_UNIT=lowlatd.service)"
iso=$(prop_s IsolatedCPUs) hk=$(prop_s HousekeepingCPUs)
[ "$iso" = "$ISOLATED" ] && [ "$hk" = "$HOUSEKEEPING" ]
verdict $? "isolated = auto resolved to IsolatedCPUs '$iso', HousekeepingCPUs '$hk'" "$(prop IsolatedCPUs)"

# ===== 2 ===============================================================================
section "2: every movable IRQ off CPUs $ISOLATED; managed virtio-blk queues unmovable"
mapfile -t UNMOVABLE < <(settings_in_state unmovable irq_affinity)
note "unmovable according to lowlatd: ${UNMOVABLE[*]:-none}"
bad="" pending=() checked=0
for irq in $(listed_irqs); do
        [ -f "/proc/irq/$irq/smp_affinity_list" ] || continue
        [[ " ${UNMOVABLE[*]} " == *" $irq "* ]] && continue
        aff=$(rd "/proc/irq/$irq/smp_affinity_list") eff=$(rd "/proc/irq/$irq/effective_affinity_list")
        checked=$((checked + 1))
        if touches_isolated "$aff"; then
                bad+="IRQ $irq ($(irq_name "$irq")): smp_affinity_list $aff, effective $eff"$'\n'
        elif [ -n "$eff" ] && touches_isolated "$eff"; then
                pending+=("$irq")
        fi
done
[ -z "$bad" ] && [ "$checked" -gt 0 ]
verdict $? "all $checked movable IRQs in /proc/interrupts have smp_affinity_list off $ISOLATED" "$bad"
pend_text=$(for irq in "${pending[@]}"; do
        echo "IRQ $irq ($(irq_name "$irq")): smp_affinity_list $(rd /proc/irq/$irq/smp_affinity_list), effective $(rd /proc/irq/$irq/effective_affinity_list), interrupts per CPU: $(awk -v i="$irq:" '$1 == i { print $2, $3, $4, $5 }' /proc/interrupts)"
done)
[ ${#pending[@]} -gt 0 ] && note "effective_affinity_list still on $ISOLATED (x86 without interrupt remapping moves an IRQ at its next interrupt):" && diag "$pend_text"
dflt=$(rd /proc/irq/default_smp_affinity)
[ $((16#$dflt)) -eq 3 ]
verdict $? "/proc/irq/default_smp_affinity is the housekeeping mask (3): '$dflt'"
unheld=""
for d in /proc/irq/[0-9]*; do
        irq=${d##*/}
        grep -qE "^ *$irq:" /proc/interrupts && continue
        aff=$(rd "/proc/irq/$irq/smp_affinity_list")
        touches_isolated "$aff" && unheld+=" $irq($aff)"
done
[ -n "$unheld" ] && note "IRQs with no handler (not in /proc/interrupts) on isolated CPUs:$unheld"

# The managed queues of the virtio-blk root disk that sit on an isolated CPU
managed_iso=()
for irq in $(irqs_named '^virtio[0-9]+-req\.[0-9]+$'); do
        touches_isolated "$(rd /proc/irq/$irq/smp_affinity_list)" && managed_iso+=("$irq")
done
note "virtio-blk request-queue IRQs on isolated CPUs: ${managed_iso[*]:-none}"
missing=""
for irq in "${managed_iso[@]}"; do
        [[ " ${UNMOVABLE[*]} " == *" $irq "* ]] || missing+=" $irq"
done
[ ${#managed_iso[@]} -gt 0 ] && [ -z "$missing" ]
verdict $? "the managed virtio-blk queue IRQs on $ISOLATED (${managed_iso[*]:-none}) are in state unmovable" \
        "not unmovable:$missing
$(lowlatctl list 2>&1 | grep -E 'unmovable|failed')"
# Does the kernel agree? Each IRQ lowlatd calls unmovable must refuse a write.
refused="" accepted=""
declare -A REFUSAL
for irq in "${UNMOVABLE[@]}"; do
        err=$( (echo "$HOUSEKEEPING" > "/proc/irq/$irq/smp_affinity_list") 2>&1) && accepted+=" $irq" || refused+=" $irq(${err##*: })"
        REFUSAL[$irq]=${err##*: }
done
[ -z "$accepted" ]
verdict $? "the kernel refuses an affinity write to every IRQ lowlatd reports unmovable:$refused" \
        "accepted (so they were movable):$accepted"
# Up to 6.11 the kernel answers a write to a managed IRQ's affinity with EIO. 6.12 answers
# EPERM and creates the file read-only (mode 0444), which lowlatd reads as "not movable"
# before it writes; either way the IRQ is unmovable, reported once, never rewritten.
if kernel_at_least 6 12; then
        want_error="Operation not permitted" want_reason="read-only|Operation not permitted" want_mode=444
else
        want_error="Input/output error" want_reason="Input/output error" want_mode=644
fi
wrong="" reasons=""
for irq in "${managed_iso[@]}"; do
        reason=$(jentries "$m0" MESSAGE_ID=$MID_UNMOVABLE LOWLATD_OBJECT="$irq" | jq -r .LOWLATD_ERROR | head -n1)
        mode=$(stat -c %a "/proc/irq/$irq/smp_affinity_list")
        reasons+="IRQ $irq: mode $mode, the kernel's answer: ${REFUSAL[$irq]:-?}; LOWLATD_ERROR=$reason"$'\n'
        [ "${REFUSAL[$irq]:-}" = "$want_error" ] && [ "$mode" = "$want_mode" ] && [[ $reason =~ $want_reason ]] ||
                wrong+=" $irq"
done
[ ${#managed_iso[@]} -gt 0 ] && [ -z "$wrong" ]
verdict $? "kernel $(uname -r): the managed IRQs' smp_affinity_list has mode $want_mode, a write gets '$want_error', lowlatd says so in LOWLATD_ERROR" \
        "not so:$wrong
$reasons"
note "$reasons"
failed=$(lowlatctl --no-legend --state=failed list 2>&1)
[ -z "$failed" ]
verdict $? "no setting is in state failed" "$failed
$(jtext "$m0" MESSAGE_ID=$MID_FAILED)"

# Traffic on the virtio-net NIC makes its IRQs fire: the kernel completes the move.
ip link set "$VNET" up && ip addr add 10.0.2.15/24 dev "$VNET"
ping -q -c 10 -i 0.2 -W 2 -I "$VNET" 10.0.2.2 > /dev/null 2>&1
vin=$(irqs_named "^$(virtio_dev "$VNET")-input\\.0\$" | head -n1)
n_vin=$(awk -v i="$vin:" '$1 == i { print $2 + $3 + $4 + $5 }' /proc/interrupts)
note "after 10 pings on $VNET: IRQ $vin ($(irq_name "$vin")) fired $n_vin times; effective $(rd /proc/irq/$vin/effective_affinity_list)"
vin_ok() { ! touches_isolated "$(rd /proc/irq/$vin/effective_affinity_list)"; }
vin_state() { lowlatctl --no-legend list | awk -v o="$vin" '$1 == "irq_affinity" && $2 == o { print $NF }'; }
vin_settled() { vin_ok && [[ $(vin_state) =~ ^(ok|corrected)$ ]]; }
wait_until 25 vin_settled
verdict $? "IRQ $vin fired: effective_affinity_list $(rd /proc/irq/$vin/effective_affinity_list), lowlatd's state for it '$(vin_state)' after $WAITED_MS ms" \
        "$(lowlatctl list 2>&1 | awk -v o="$vin" '$2 == o')"
ip addr flush dev "$VNET"
ip link set "$VNET" down

# ===== 3 ===============================================================================
section "3: ip link set $E1K up creates IRQs; they are pinned (irq_cpus = 1) at once"
before=$(irqs_named "^$E1K" | xargs)
note "e1000e IRQs before link up: ${before:-none}"
e1k_pinned() {
        local irq ids
        ids=$(irqs_named "^$E1K")
        [ "$(echo $ids | wc -w)" -ge 3 ] || return 1
        for irq in $ids; do
                [ "$(rd /proc/irq/$irq/smp_affinity_list)" = 1 ] || return 1
        done
}
m3=$(mark)
out=$(ip link set "$E1K" up 2>&1)
verdict $? "ip link set $E1K up" "$out"
wait_until 20 e1k_pinned
rc=$? waited=$WAITED_MS
E1K_IRQS=$(irqs_named "^$E1K" | xargs)
after=$(for irq in $E1K_IRQS; do echo "IRQ $irq $(irq_name $irq): $(rd /proc/irq/$irq/smp_affinity_list) (effective $(rd /proc/irq/$irq/effective_affinity_list))"; done)
lat=""
for irq in $E1K_IRQS; do lat+=" $irq:$(jtime "$m3" MESSAGE_ID=$MID_CORRECTED LOWLATD_OBJECT="$irq")ms"; done
note "$after"
note "lowlatd's corrected entries, time after link up (IRQ:ms):$lat"
[ $rc -eq 0 ] && [ "$waited" -le 2000 ]
verdict $? "the $(echo $E1K_IRQS | wc -w) new e1000e IRQs have smp_affinity_list 1 after $waited ms (limit 2000; the scan runs every 15 s)" \
        "$after
$(jtext "$m3" SYSLOG_IDENTIFIER=lowlatd)"
notok=$(for irq in $E1K_IRQS; do lowlatctl --no-legend list | awk -v o="$irq" '$1 == "irq_affinity" && $2 == o && $NF != "ok" && $NF != "corrected"'; done)
[ -z "$notok" ] && [ -n "$E1K_IRQS" ]
verdict $? "lowlatctl list shows the new IRQs ok or corrected" "$notok"

# ===== 4 ===============================================================================
section "4: a write of $ISOLATED to smp_affinity_list is reverted, journaled, explained"
victim=$(irqs_named "^$(virtio_dev "$VNET")-input\\.0\$" | head -n1)
[ -n "$victim" ] || victim=$(irqs_named "^$(virtio_dev "$VNET")-config\$" | head -n1)
note "victim IRQ $victim ($(irq_name "$victim")), now $(rd /proc/irq/$victim/smp_affinity_list)"
m4=$(mark)
out=$( (echo "$ISOLATED" > "/proc/irq/$victim/smp_affinity_list") 2>&1)
verdict $? "echo $ISOLATED > /proc/irq/$victim/smp_affinity_list" "$out"
off_isolated() { ! touches_isolated "$(rd /proc/irq/$victim/smp_affinity_list)"; }
wait_until 20 off_isolated
rc=$? waited=$WAITED_MS
verdict $rc "IRQ $victim is back off $ISOLATED after $waited ms: $(rd /proc/irq/$victim/smp_affinity_list)"
[ $rc -eq 0 ] && [ "$waited" -le 2000 ]
verdict $? "IRQ $victim was reverted within 2 s, so through the inotify hint (the scan runs every 15 s)" "$(jtext "$m4" SYSLOG_IDENTIFIER=lowlatd)"
wait_until 10 jhas "$m4" MESSAGE_ID=$MID_DRIFT LOWLATD_OBJECT="$victim"
fields=$(jentries "$m4" MESSAGE_ID=$MID_DRIFT LOWLATD_OBJECT="$victim" | head -n1 | jfields)
expect_ok=0
for f in "LOWLATD_KIND=irq_affinity" "LOWLATD_OBJECT=$victim" "LOWLATD_EXPECTED=$HOUSEKEEPING" "PRIORITY=4" \
         "SYSLOG_IDENTIFIER=lowlatd" "_SYSTEMD_UNIT=lowlatd.service"; do
        grep -qxF "$f" <<< "$fields" || expect_ok=1
done
obs=$(printf '%s\n' "$fields" | sed -n 's/^LOWLATD_OBSERVED=//p' | head -n1)
[[ $obs == "$ISOLATED"* ]] || expect_ok=1
verdict $expect_ok "journalctl MESSAGE_ID=$MID_DRIFT LOWLATD_OBJECT=$victim: kind, object, expected $HOUSEKEEPING, observed '$obs', priority 4, unit" "${fields:-no entry}
$(jtext "$m4" SYSLOG_IDENTIFIER=lowlatd)"
diag "$fields"
jhas "$m4" MESSAGE_ID=$MID_CORRECTED LOWLATD_OBJECT="$victim"
verdict $? "a corrected entry ($MID_CORRECTED) follows" "$(jtext "$m4" SYSLOG_IDENTIFIER=lowlatd)"
x=$(journalctl -x -q --no-pager MESSAGE_ID=$MID_DRIFT LOWLATD_OBJECT="$victim" 2>&1 | tail -n 30)
grep -q "Subject: Low-latency setting drifted: irq_affinity $victim" <<< "$x" &&
        grep -q "Something other than lowlatd changed it" <<< "$x"
verdict $? "journalctl -x shows the catalog text with the fields filled in" "$x"

# ===== 5 ===============================================================================
section "5: [nic \"$E1K\"] rx_usecs = 50 is applied; ethtool -C rx-usecs 100 is reverted"
v=$(coalesce "$E1K" rx-usecs)
[ "$v" = 50 ]
verdict $? "ethtool -c $E1K: rx-usecs $v (configured 50)" "$(ethtool -c "$E1K" 2>&1 | grep rx-usecs)"
m5=$(mark)
out=$(ethtool -C "$E1K" rx-usecs 100 2>&1)
verdict $? "ethtool -C $E1K rx-usecs 100" "$out"
back50() { [ "$(coalesce "$E1K" rx-usecs)" = 50 ]; }
wait_until 20 back50
rc=$?
[ $rc -eq 0 ] && [ "$WAITED_MS" -le 2000 ]
verdict $? "rx-usecs is 50 again after $WAITED_MS ms (limit 2000: ethtool netlink notification)" "$(ethtool -c "$E1K" 2>&1 | grep rx-usecs)"
wait_until 5 jhas "$m5" MESSAGE_ID=$MID_DRIFT LOWLATD_KIND=nic_coalesce
ent=$(jentries "$m5" MESSAGE_ID=$MID_DRIFT LOWLATD_KIND=nic_coalesce | jfields)
grep -qxF "LOWLATD_OBJECT=$E1K/rx_usecs" <<< "$ent" && grep -qxF "LOWLATD_OBSERVED=100" <<< "$ent"
verdict $? "drift entry LOWLATD_KIND=nic_coalesce LOWLATD_OBJECT=$E1K/rx_usecs observed 100" "${ent:-no entry}
$(jtext "$m5" SYSLOG_IDENTIFIER=lowlatd)"

# ===== 6 ===============================================================================
section "6: busctl on the system bus and lowlatctl status; unprivileged reads, Reapply refused"
state=$(prop_s State) mode=$(prop_s Mode) nset=$(prop Settings | awk '{print $2}')
[ "$mode" = enforce ] && [ -n "$nset" ]
verdict $? "busctl get-property on the system bus: Mode '$mode', State '$state', Settings $nset" "$(prop Mode)"
nlist=$(busctl call "${BUS[@]}" ListSettings 2>&1 | awk '{print $2}')
[ -n "$nset" ] && [ "$nlist" = "$nset" ]
verdict $? "busctl call ListSettings returns the $nset settings" "ListSettings: $nlist"
intro=$(busctl introspect "${BUS[@]}" 2>&1)
grep -q '^\.Reapply ' <<< "$intro" && grep -q '^\.Drift ' <<< "$intro"
verdict $? "busctl introspect lists Reapply and the Drift signal" "$intro"
out=$(lowlatctl status 2>&1)
rc=$?
[ $rc -eq 0 ] && grep -q '^LOWLATD OK: enforcing' <<< "$out" && grep -q "Isolated CPUs: $ISOLATED" <<< "$out" && [ "$state" = enforcing ]
verdict $? "lowlatctl status exits 0, State enforcing: $(head -n1 <<< "$out")" "exit $rc
$out"
root_first=$(head -n1 <<< "$out")
# The host's one word on the real kernel: every setting in place, so applied, or
# reboot-required where the guest's command line lacks a parameter the posture needs (the
# warning-level boot and kernel findings), saying which.
cond=$(prop_s Condition) reboot=$(prop RebootRequired) reasons=$(prop ConditionReasons)
case $cond in
applied) [ "$reboot" = "b false" ] && [ "$reasons" = "as 0" ] && [[ $root_first == *"; applied" ]] ;;
reboot-required) [ "$reboot" = "b true" ] && [[ $reasons == *"the kernel command line lacks "* ]] &&
        [[ $root_first == *"; reboot-required" ]] ;;
*) false ;;
esac
verdict $? "Condition $cond, RebootRequired ${reboot#b }, as the status line says" "$reasons
$out"
out=$(as_nobody lowlatctl status 2>&1)
rc=$?
[ $rc -ne 3 ] && [ "$(head -n1 <<< "$out")" = "$root_first" ]
verdict $? "as uid 65534: lowlatctl status reads the same (exit $rc)" "$out"
out=$(as_nobody busctl get-property "${BUS[@]}" State 2>&1)
[ "$out" = "s \"$state\"" ]
verdict $? "as uid 65534: busctl get-property State: $out" "$out"
out=$(as_nobody busctl call "${BUS[@]}" ListSettings 2>&1)
verdict $? "as uid 65534: busctl call ListSettings works" "$out"
out=$(as_nobody lowlatctl check 2>&1)
rc=$?
[ $rc -ne 3 ] && grep -q 'boot\.\|irq\.' <<< "$out"
verdict $? "as uid 65534: lowlatctl check works (exit $rc)" "$out"
out=$(as_nobody lowlatctl reapply 2>&1)
rc=$?
[ $rc -eq 1 ] && grep -q 'reapply needs root' <<< "$out"
verdict $? "as uid 65534: lowlatctl reapply is refused (exit $rc): $out" "$out"
out=$(as_nobody busctl call "${BUS[@]}" Reapply 2>&1)
rc=$?
[ $rc -ne 0 ] && grep -qi 'access denied\|AccessDenied' <<< "$out"
verdict $? "as uid 65534: busctl call Reapply is refused: $out" "$out"
out=$(lowlatctl reapply 2>&1)
verdict $? "as root: lowlatctl reapply works" "$out"

# ----- 2, continued: reported once ------------------------------------------------------
elapsed=$(($(now_ms) - STARTED_AT))
[ "$elapsed" -lt 35000 ] && sleep $(((35000 - elapsed) / 1000 + 1))
section "2, continued: unmovable IRQs reported once over $((($(now_ms) - STARTED_AT) / 1000)) s (2+ scans, a reapply)"
counts="" once=0
for irq in "${UNMOVABLE[@]}"; do
        k=$(jcount "$m0" MESSAGE_ID=$MID_UNMOVABLE LOWLATD_OBJECT="$irq")
        f=$(jcount "$m0" MESSAGE_ID=$MID_FAILED LOWLATD_OBJECT="$irq")
        counts+=" $irq:$k/$f"
        [ "$k" -eq 1 ] && [ "$f" -eq 0 ] || once=1
done
[ ${#UNMOVABLE[@]} -gt 0 ] && [ $once -eq 0 ]
verdict $? "each unmovable IRQ has exactly one unmovable entry and no correction-failed entry (IRQ:unmovable/failed$counts)" \
        "$(jtext "$m0" MESSAGE_ID=$MID_UNMOVABLE)"

# ===== 7 ===============================================================================
section "7: systemctl reload applies a changed config; a broken one keeps the old posture"
# net.core.busy_poll where the kernel has it. PREEMPT_RT kernels are built without
# CONFIG_NET_RX_BUSY_POLL (it depends on !PREEMPT_RT), so there the reload carries
# net.core.netdev_budget instead; section 14 checks that lowlatd calls busy_poll unsupported.
if [ -e /proc/sys/net/core/busy_poll ]; then
        SYSCTL_KEY=net.core.busy_poll SYSCTL_WANT=50 SYSCTL_DRIFT=0
else
        SYSCTL_KEY=net.core.netdev_budget SYSCTL_WANT=600 SYSCTL_DRIFT=300
fi
pid=$(main_pid)
write_config "rx_usecs = 60
irq_cpus = 1" "[sysctl]
$SYSCTL_KEY = $SYSCTL_WANT"
m7=$(mark)
out=$(timeout 60 systemctl reload lowlatd 2>&1)
verdict $? "systemctl reload lowlatd (new: rx_usecs 60, $SYSCTL_KEY $SYSCTL_WANT)" "$out"
applied() { [ "$(sysctl -n $SYSCTL_KEY)" = "$SYSCTL_WANT" ] && [ "$(coalesce "$E1K" rx-usecs)" = 60 ]; }
wait_until 10 applied
verdict $? "the new posture is applied: $SYSCTL_KEY $(sysctl -n $SYSCTL_KEY), rx-usecs $(coalesce "$E1K" rx-usecs)"
wait_until 10 jhas "$m7" MESSAGE_ID=$MID_RELOADED
verdict $? "the reloaded message ($MID_RELOADED) is in the journal" "$(jtext "$m7" SYSLOG_IDENTIFIER=lowlatd)"
[ "$(main_pid)" = "$pid" ] && [ "$(systemctl is-active lowlatd)" = active ]
verdict $? "same main PID $pid, active"
cp "$CONF" /run/e2e-good.conf
printf '\n[daemon]\nscan_interval = banana\n' >> "$CONF"
badline=$(grep -n 'banana' "$CONF" | cut -d: -f1)
m7b=$(mark)
out=$(timeout 60 systemctl reload lowlatd 2>&1)
note "systemctl reload with the broken config: exit $?${out:+: $out}"
wait_until 10 jhas "$m7b" MESSAGE_ID=$MID_RELOAD_FAILED
rc=$?
msg=$(journalctl -q -o cat --no-pager MESSAGE_ID=$MID_RELOAD_FAILED 2>&1)
[ $rc -eq 0 ] && grep -q "$CONF:$badline" <<< "$msg"
verdict $? "reload-failed ($MID_RELOAD_FAILED) says why: $(tr '\n' ' ' <<< "$msg")" "$(jtext "$m7b" SYSLOG_IDENTIFIER=lowlatd)"
[ "$(systemctl is-active lowlatd)" = active ] && [ "$(main_pid)" = "$pid" ]
verdict $? "the service stays active, same PID" "$(systemctl status --no-pager lowlatd 2>&1)"
err=$(prop_s LastReloadError)
[ -n "$err" ]
verdict $? "busctl LastReloadError: $err"
applied
verdict $? "the old posture holds: $SYSCTL_KEY $(sysctl -n $SYSCTL_KEY), rx-usecs $(coalesce "$E1K" rx-usecs)"
m7c=$(mark)
sysctl -q -w $SYSCTL_KEY=$SYSCTL_DRIFT
sysctl_back() { [ "$(sysctl -n $SYSCTL_KEY)" = "$SYSCTL_WANT" ]; }
wait_until 20 sysctl_back
rc=$? waited=$WAITED_MS
verdict $rc "and is still enforced: sysctl -w $SYSCTL_KEY=$SYSCTL_DRIFT reverted after $waited ms" "$(jtext "$m7c" SYSLOG_IDENTIFIER=lowlatd)"
[ $rc -eq 0 ] && [ "$waited" -le 2000 ]
verdict $? "$SYSCTL_KEY was reverted within 2 s, so through the inotify hint (the scan runs every 15 s)" "$(jtext "$m7c" SYSLOG_IDENTIFIER=lowlatd)"
cp /run/e2e-good.conf "$CONF"
timeout 60 systemctl reload lowlatd
no_reload_error() { [ -z "$(prop_s LastReloadError)" ]; }
wait_until 10 no_reload_error
verdict $? "a good reload clears LastReloadError"

# ===== 8 ===============================================================================
# systemctl start runs under timeout 120
section "8: /dev/cpu_dma_latency is 0 while lowlatd runs; stop releases it" "quiet 150 s"
v=$(dma_latency)
[ "$v" = 0 ]
verdict $? "/dev/cpu_dma_latency reads $v while lowlatd runs" "CpuDmaLatencyUSec: $(prop CpuDmaLatencyUSec)"
out=$(timeout 60 systemctl stop lowlatd 2>&1)
verdict $? "systemctl stop lowlatd" "$out"
v=$(dma_latency)
[ "$v" = 2000000000 ]
verdict $? "after stop it reads $v (no request held)"
out=$(timeout 120 systemctl start lowlatd 2>&1)
[ $? -eq 0 ] && [ "$(dma_latency)" = 0 ]
verdict $? "systemctl start: it reads $(dma_latency) again" "$out"

# ===== 9 ===============================================================================
section "9: irqbalance without the isolated CPUs banned conflicts; with them banned it does not"
# No pins for this part: irqbalance moves pinned IRQs whatever CPUs it bans.
write_config "rx_usecs = 60" ""
timeout 60 systemctl reload lowlatd
ip addr add 10.0.2.15/24 dev "$E1K" 2>/dev/null
irqbalance_phase() {
        # $1: /etc/default/irqbalance contents, $2: seconds to watch
        local load_pid
        printf '%s\n' "$1" ${MQ_IRQ_BAN:+"IRQBALANCE_ARGS=\"$MQ_IRQ_BAN\""} > /etc/default/irqbalance
        PHASE_MARK=$(mark)
        timeout 60 systemctl start irqbalance.service
        ping -f -q -w "$2" 10.0.2.2 > /dev/null 2>&1 &
        load_pid=$!
        sleep 5
        CHECK=$(lowlatctl --json check 2>&1)
        IRQB_FINDING=$(jq -r '.[] | select(.id == "irq.irqbalance") | "\(.severity): \(.message)"' <<< "$CHECK" 2>/dev/null)
        wait_until "$2" jhas "$PHASE_MARK" MESSAGE_ID=$MID_IRQ_WRITER
        FIGHT=$?
        FIGHT_MS=$WAITED_MS
        IRQB_DRIFTS=$(jentries "$PHASE_MARK" MESSAGE_ID=$MID_DRIFT LOWLATD_KIND=irq_affinity | jq -r .LOWLATD_OBSERVED |
                while read -r o; do touches_isolated "${o%% *}" && echo "$o"; done | wc -l)
        # The most drift entries any one IRQ got (a fight needs 5 within 60 s)
        IRQB_MAX=$(jentries "$PHASE_MARK" MESSAGE_ID=$MID_DRIFT LOWLATD_KIND=irq_affinity | jq -r .LOWLATD_OBJECT |
                sort | uniq -c | sort -rn | head -n1 | awk '{print $1 + 0}')
        IRQB_LOG=$(jtext "$PHASE_MARK" SYSLOG_IDENTIFIER=lowlatd | grep -v ' is back at ' | tail -n 40)
        IRQB_ACTIVE=$(systemctl is-active irqbalance.service)
        kill "$load_pid" 2>/dev/null
        wait "$load_pid" 2>/dev/null
        timeout 60 systemctl stop irqbalance.service
}
# IRQBALANCE_BANNED_CPUS=0: an explicit, empty ban. irqbalance then skips its own
# isolcpus=/nohz_full= detection (cputree.c, setup_banned_cpus) and places IRQs on 2-3.
irqbalance_phase "IRQBALANCE_BANNED_CPUS=0" 35
note "unbanned: irqbalance $IRQB_ACTIVE; $IRQB_DRIFTS irq_affinity drift entries observed on an isolated CPU, at most ${IRQB_MAX:-0} for one IRQ; IRQ writer report: $([ $FIGHT = 0 ] && echo "after $FIGHT_MS ms" || echo none)"
[ -n "$IRQB_FINDING" ]
verdict $? "lowlatctl check reports irq.irqbalance: ${IRQB_FINDING%%: *}" "$CHECK"
diag "$IRQB_FINDING"
[ "$IRQB_DRIFTS" -gt 0 ]
verdict $? "irqbalance moved IRQs onto $ISOLATED; lowlatd logged and corrected each ($IRQB_DRIFTS drift entries)" "$IRQB_LOG"
[[ $IRQB_FINDING == warning:* ]]
verdict $? "the irq.irqbalance finding is a warning: this irqbalance did put IRQs on $ISOLATED" "$IRQB_FINDING"
writer=$(jentries "$PHASE_MARK" MESSAGE_ID=$MID_IRQ_WRITER | head -n1 | jfields)
[ $FIGHT -eq 0 ] && grep -q "^LOWLATD_WRITER=irqbalance (pid [0-9]*)$" <<< "$writer" &&
        grep -qxF "PRIORITY=4" <<< "$writer"
verdict $? "irqbalance is reported as the other IRQ writer ($MID_IRQ_WRITER, LOWLATD_WRITER) after $FIGHT_MS ms" \
        "${writer:-no entry}
$IRQB_LOG"
x=$(journalctl -x -q --no-pager MESSAGE_ID=$MID_IRQ_WRITER 2>&1 | tail -n 25)
grep -q "Another program is rewriting IRQ affinities" <<< "$x" && grep -q "IRQBALANCE_BANNED_CPULIST=$ISOLATED" <<< "$x"
verdict $? "journalctl -x explains the IRQ writer report from the catalog" "$x"
irqbalance_phase "IRQBALANCE_BANNED_CPULIST=$ISOLATED" 20
note "banned: irqbalance $IRQB_ACTIVE; $IRQB_DRIFTS drift entries observed on an isolated CPU over 20 s"
[ -z "$IRQB_FINDING" ]
verdict $? "with IRQBALANCE_BANNED_CPULIST=$ISOLATED lowlatctl check does not report irq.irqbalance" "$IRQB_FINDING"
[ $FIGHT -ne 0 ] && [ "$IRQB_DRIFTS" -eq 0 ]
verdict $? "and over 20 s irqbalance moved nothing onto $ISOLATED and no IRQ writer was reported" "$IRQB_LOG"

# A writer that does keep rewriting one IRQ, as a script or a colleague would: the fight
# report itself, end to end. The scan runs every 250 ms here, so this does not depend on
# inotify.
write_config "rx_usecs = 60" ""
sed -i 's/^scan_interval = .*/scan_interval = 250ms/' "$CONF"
timeout 60 systemctl reload lowlatd
fvictim=$victim
mf=$(mark)
( for _ in $(seq 60); do echo "$ISOLATED" > "/proc/irq/$fvictim/smp_affinity_list"; sleep 0.5; done ) &
writer=$!
wait_until 30 jhas "$mf" MESSAGE_ID=$MID_FIGHT LOWLATD_OBJECT="$fvictim"
rc=$? waited=$WAITED_MS
fight_cond=$(prop_s Condition) fight_reasons=$(prop ConditionReasons)
kill "$writer" 2>/dev/null
wait "$writer" 2>/dev/null
fight=$(jentries "$mf" MESSAGE_ID=$MID_FIGHT LOWLATD_OBJECT="$fvictim" | head -n1 | jfields)
[ $rc -eq 0 ] && grep -qxF "LOWLATD_KIND=irq_affinity" <<< "$fight" && grep -qxF "PRIORITY=4" <<< "$fight"
verdict $? "a script rewriting IRQ $fvictim every 0.5 s is reported as a fight after $waited ms (kind, object, priority 4)" \
        "${fight:-no entry}
$(jtext "$mf" SYSLOG_IDENTIFIER=lowlatd | tail -n 20)"
[ "$fight_cond" = degraded ] && [[ $fight_reasons == *"another writer fights lowlatd over "*"IRQ $fvictim"* ]]
verdict $? "while the script fights: Condition degraded, naming IRQ $fvictim" "$fight_cond: $fight_reasons"
x=$(journalctl -x -q --no-pager MESSAGE_ID=$MID_FIGHT LOWLATD_OBJECT="$fvictim" 2>&1 | tail -n 20)
grep -q "Another writer keeps changing irq_affinity $fvictim" <<< "$x"
verdict $? "journalctl -x explains the fight from the catalog" "$x"
write_config "rx_usecs = 60" ""
timeout 60 systemctl reload lowlatd
back_off() { ! touches_isolated "$(rd /proc/irq/$fvictim/smp_affinity_list)"; }
wait_until 30 back_off
verdict $? "once the writer stops, IRQ $fvictim is put back off $ISOLATED (after $WAITED_MS ms)" "$(lowlatctl list 2>&1 | awk -v o="$fvictim" '$2 == o')"

# ===== 10 ==============================================================================
section "10: systemd-analyze security in the guest matches the offline figure"
exposure() { sed -n 's/.*Overall exposure level for lowlatd\.service: *\([0-9.]*\).*/\1/p'; }
online=$(systemd-analyze security --no-pager lowlatd.service 2>&1 | exposure)
offline=$(systemd-analyze security --no-pager --offline=yes "$(systemctl show -P FragmentPath lowlatd)" 2>&1 | exposure)
note "guest (systemd $GUEST_SYSTEMD): running unit $online, offline $offline; host build offline ${HOST_OFFLINE_EXPOSURE:-n/a} (systemd ${HOST_SYSTEMD:-?}); README $README_EXPOSURE (systemd $README_SYSTEMD)"
# Each systemd version weighs the settings its own way: the README's figure and the host's
# are compared only where the guest runs the same systemd.
[ -n "$online" ] && [ "$online" = "$offline" ] &&
        { [ "$GUEST_SYSTEMD" != "$README_SYSTEMD" ] || [ "$online" = "$README_EXPOSURE" ]; } &&
        { [ -z "$HOST_OFFLINE_EXPOSURE" ] || [ "$GUEST_SYSTEMD" != "$HOST_SYSTEMD" ] || [ "$online" = "$HOST_OFFLINE_EXPOSURE" ]; }
verdict $? \
        "systemd-analyze security lowlatd.service: $online, the offline figure $offline$([ "$GUEST_SYSTEMD" = "$README_SYSTEMD" ] && echo ", the README's")" \
        "$(systemd-analyze security --no-pager lowlatd.service 2>&1 | grep -v '^  *✓' | head -n 40)"

out=$(systemctl is-active lowlatd; systemctl show -P NRestarts lowlatd)
[ "$out" = "active
0" ]
verdict $? "lowlatd is still active and never restarted" "$out
$(jtext "$m0" UNIT=lowlatd.service | grep -iE 'watchdog|restart|fail')"

# ===== 12 ==============================================================================
# [cpus] evict_strays on a real systemd host. With isolcpus=domain the kernel confines
# init to the housekeeping CPUs and its children inherit that, so a stray has to ask for
# the isolated CPUs: a service with CPUAffinity=0-3. lowlatd moves it; never PID 1 or a
# per-CPU kernel thread.
section "12: evict_strays moves a stray service off $ISOLATED; PID 1 and kernel threads stay"
allowed() { sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "/proc/$1/status" 2>/dev/null; }
pid1_before=$(allowed 1)
write_config "rx_usecs = 60" ""
sed -i 's/^isolated = auto$/isolated = auto\nevict_strays = yes/; s/^scan_interval = .*/scan_interval = 1s/' "$CONF"
out=$(timeout 60 systemctl reload lowlatd 2>&1)
verdict $? "systemctl reload with evict_strays = yes" "$out
$(cat "$CONF")"
m12=$(mark)
systemd-run --unit=e2e-stray --quiet -p CPUAffinity=0-3 sleep 600
stray=$(systemctl show -P MainPID e2e-stray.service)
moved() { [ "$(allowed "$stray")" = "$HOUSEKEEPING" ]; }
wait_until 30 moved
verdict $? "a service started with CPUAffinity=0-3 (pid $stray) is moved to $HOUSEKEEPING after $WAITED_MS ms" \
        "Cpus_allowed_list: $(allowed "$stray")
$(lowlatctl list 2>&1 | grep stray_tasks)
$(jtext "$m12" SYSLOG_IDENTIFIER=lowlatd | tail -n 10)"
jhas "$m12" MESSAGE_ID=$MID_DRIFT LOWLATD_KIND=stray_tasks && jhas "$m12" MESSAGE_ID=$MID_CORRECTED LOWLATD_KIND=stray_tasks
verdict $? "the journal has the stray_tasks drift and its correction" "$(jtext "$m12" SYSLOG_IDENTIFIER=lowlatd | tail -n 10)"
kthread=$(pgrep -x ksoftirqd/2 | head -n1)
[ "$(allowed 1)" = "$pid1_before" ] && [ -n "$kthread" ] && [ "$(allowed "$kthread")" = 2 ]
verdict $? "PID 1 keeps $pid1_before and ksoftirqd/2 keeps CPU 2" \
        "PID 1: $(allowed 1), ksoftirqd/2 ($kthread): $(allowed "$kthread")"
systemctl stop e2e-stray.service 2>/dev/null
write_config "rx_usecs = 60" ""
timeout 60 systemctl reload lowlatd

# ===== 13 ==============================================================================
# lowlatctl restore on the real host: every value lowlatd changed goes back to what the
# host had before lowlatd first ran (kept in /run/lowlatd/originals), the latency request
# is released, and lowlatd observes until the next reload.
section "13: lowlatctl restore puts the host back as it was before lowlatd; a reload enforces again"
m13=$(mark)
out=$(lowlatctl restore 2>&1)
verdict $? "lowlatctl restore exits 0${out:+: $out}" "$out"
mode=$(prop_s Mode) state=$(prop_s State)
[ "$mode" = observe ] && [ "$state" = observing ]
verdict $? "after restore: Mode $mode, State $state" "$(prop Mode) $(prop State)"
moved_before=0 differ=""
for irq in "${!PRE_IRQ[@]}"; do
        [ -e "/proc/irq/$irq/smp_affinity_list" ] || continue
        touches_isolated "${PRE_IRQ[$irq]}" && moved_before=$((moved_before + 1))
        now=$(rd "/proc/irq/$irq/smp_affinity_list")
        [ "$now" = "${PRE_IRQ[$irq]}" ] || differ+=" $irq:${PRE_IRQ[$irq]}->$now"
done
[ -z "$differ" ] && [ "$moved_before" -gt 0 ]
verdict $? "every IRQ that existed before lowlatd has its pre-lowlatd affinity again ($moved_before of them were on $ISOLATED)" \
        "differ:$differ"
[ "$(rd /proc/irq/default_smp_affinity)" = "$PRE_DEFAULT" ]
verdict $? "default_smp_affinity is back to $PRE_DEFAULT" "reads $(rd /proc/irq/default_smp_affinity)"
lat=$(dma_latency)
[ "$lat" = 2000000000 ]
verdict $? "the /dev/cpu_dma_latency request is released (reads $lat)" "reads $lat"
jhas "$m13" MESSAGE_ID=$MID_RESTORED _SYSTEMD_UNIT=lowlatd.service
verdict $? "the journal has the restored message" "$(jtext "$m13" SYSLOG_IDENTIFIER=lowlatd | tail -n 10)"
out=$(timeout 60 systemctl reload lowlatd 2>&1)
back() { [ "$(prop_s State)" = enforcing ] && ! touches_isolated "$(rd "/proc/irq/$victim/smp_affinity_list")"; }
wait_until 30 back
verdict $? "systemctl reload: enforcing again, IRQ $victim off $ISOLATED (after $WAITED_MS ms)" \
        "$out
State $(prop_s State), IRQ $victim: $(rd "/proc/irq/$victim/smp_affinity_list")"

# ===== 14 ==============================================================================
# What differs between the kernels: the preemption model the audit reports, and on
# PREEMPT_RT the threaded handlers (section 2 checks EIO against 6.12's EPERM).
section "14: the kernel ($E2E_KERNEL, $(uname -r)): the audit's preemption model; on PREEMPT_RT, IRQ threads follow"
CHECK=$(lowlatctl --json check 2>&1)
finding() { jq -r --arg id "$1" '.[] | select(.id == $id) | "\(.severity): \(.message)"' <<< "$CHECK" 2>/dev/null; }
preempt=$(finding kernel.preempt) rtconfig=$(finding kernel.config.PREEMPT_RT) noconfig=$(finding kernel.config-missing)
note "kernel.preempt: ${preempt:-none}"
note "kernel.config.PREEMPT_RT: ${rtconfig:-none}"
if [ $RT = 1 ]; then
        [ -z "$preempt" ] && [ -z "$rtconfig" ] && [ -z "$noconfig" ] && jq -e 'length > 0' <<< "$CHECK" > /dev/null
        verdict $? "PREEMPT_RT: lowlatctl check finds the preemption model right (no kernel.preempt, no kernel.config.PREEMPT_RT finding)" "$CHECK"
else
        [ -n "$rtconfig" ] && [ -z "$noconfig" ]
        verdict $? "not PREEMPT_RT: lowlatctl check says so (kernel.config.PREEMPT_RT) and names the model (kernel.preempt: ${preempt%%: *})" "$CHECK"
fi

# The kernel thread that runs IRQ $1's handler ("irq/N-name", the name cut to 15 bytes)
irq_thread() {
        local d c
        for d in /proc/[0-9]*; do
                read -r c < "$d/comm" 2>/dev/null || continue
                [[ $c == "irq/$1-"* ]] && { echo "${d#/proc/}"; return 0; }
        done
        return 1
}
irq_count() { awk -v i="$1:" '$1 == i { s = 0; for (c = 2; c <= 5; c++) s += $c; print s }' /proc/interrupts; }
threads_on() {
        # $1: CPU list. Pins the e1000e IRQs there (irq_cpus), makes traffic on the NIC, and
        # checks the handler thread of every one of them that fired since.
        local cpus=$1 irq tid before after allowed fired=0 wrong="" rows=""
        local -A count
        write_config "irq_cpus = $cpus" ""
        timeout 60 systemctl reload lowlatd
        pinned() { local i; for i in $(irqs_named "^$E1K"); do [ "$(rd /proc/irq/$i/smp_affinity_list)" = "$cpus" ] || return 1; done; }
        wait_until 20 pinned
        verdict $? "irq_cpus = $cpus: the e1000e IRQs ($(irqs_named "^$E1K" | xargs)) are pinned to $cpus after $WAITED_MS ms"
        for irq in $(irqs_named "^$E1K"); do count[$irq]=$(irq_count "$irq"); done
        ping -q -c 30 -i 0.05 -W 1 -I "$E1K" 10.0.2.2 > /dev/null 2>&1
        sleep 1
        for irq in $(irqs_named "^$E1K"); do
                tid=$(irq_thread "$irq") after=$(irq_count "$irq")
                allowed=$([ -n "$tid" ] && sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "/proc/$tid/status")
                rows+="IRQ $irq ($(irq_name "$irq")): ${count[$irq]} -> $after interrupts, thread ${tid:-none} $(cat "/proc/$tid/comm" 2>/dev/null), Cpus_allowed_list ${allowed:-?}, effective $(rd /proc/irq/$irq/effective_affinity_list)"$'\n'
                [ "$after" -gt "${count[$irq]}" ] || continue
                fired=$((fired + 1))
                [ -n "$tid" ] && [ "$allowed" = "$cpus" ] || wrong+=" $irq"
        done
        note "$rows"
        [ "$fired" -gt 0 ] && [ -z "$wrong" ]
        verdict $? "the threads of the $fired e1000e IRQs that fired run on CPU $cpus, as their IRQs do" "not so:$wrong
$rows"
}
if [ $RT = 1 ]; then
        # No busy polling on PREEMPT_RT: the sysctl does not exist, and lowlatd says so
        # instead of failing.
        write_config "rx_usecs = 60" "[sysctl]
net.core.busy_poll = 50"
        timeout 60 systemctl reload lowlatd
        unsupported_busy_poll() { settings_in_state unsupported sysctl | grep -qx net.core.busy_poll; }
        wait_until 10 unsupported_busy_poll && ! grep -q '^CONFIG_NET_RX_BUSY_POLL=y' "/boot/config-$(uname -r)"
        verdict $? "PREEMPT_RT has no net.core.busy_poll (CONFIG_NET_RX_BUSY_POLL is off): lowlatctl list calls it unsupported" \
                "$(lowlatctl list 2>&1 | grep -i sysctl)
$(grep NET_RX_BUSY_POLL "/boot/config-$(uname -r)")"
        ip link set "$E1K" up
        ip addr add 10.0.2.15/24 dev "$E1K" 2>/dev/null
        threads_on 1
        threads_on 0
        write_config "rx_usecs = 60" ""
        timeout 60 systemctl reload lowlatd
else
        note "not PREEMPT_RT: IRQ handler threads here: $(for d in /proc/[0-9]*; do c=$(cat "$d/comm" 2>/dev/null); [[ $c == irq/* ]] && printf '%s ' "$c"; done)"
fi

# ===== one file per kind of setting ===================================================
# A kind's own checks live in guest.d/NN-NAME.sh (in name order), sourced here with every
# helper above at hand. Each writes the config it needs (write_config, or its own), reloads,
# checks, and leaves lowlatd running and enforcing for the next one.
for check in "$SHARE"/guest.d/*.sh; do
        [ -f "$check" ] || continue
        # A file's "# watchdog: ..." line, if it has one, is its step's hint (section).
        section "guest.d/${check##*/}" "$(sed -n 's/^# watchdog: //p' "$check" | head -n 1)"
        # shellcheck source=/dev/null
        . "$check"
done

# ===== 11 ==============================================================================
# Last, because it may kill the daemon. The watchdog ping rides on the scan; a reload
# re-arms the scan timer. Reloads 10 s apart must not keep the ping away for WatchdogSec.
section "11: reloads 10 s apart do not starve the watchdog (WatchdogSec=30s, scan every 15 s)"
restarts0=$(systemctl show -P NRestarts lowlatd)
m11=$(mark)
for _ in 1 2 3; do
        timeout 30 systemctl reload lowlatd
        sleep 10
done
sleep 3
wd=$(jtext "$m11" UNIT=lowlatd.service | grep -iE 'watchdog|restart|fail')
[ -z "$wd" ] && [ "$(systemctl show -P NRestarts lowlatd)" = "$restarts0" ] && [ "$(systemctl is-active lowlatd)" = active ]
verdict $? "three reloads 10 s apart: no watchdog timeout, no restart" "$wd"

# ===== 15 ==============================================================================
# The very last: apt-get purge. The prerm has lowlatd put back everything it changed
# (lowlatctl restore) before the stop; after it no file of lowlatd is left and the host
# is as it was before the package was installed.
# apt-get purge runs under timeout 300
section "15: apt-get purge lowlatd: no file of lowlatd left, the host as before the install" "quiet 330 s"
mapfile -t PKG_FILES < <(dpkg-query -L lowlatd 2>/dev/null)
# Every setting lowlatd wrote since it was installed, from its corrected entries
mapfile -t TOUCHED < <(jentries "$m_install" MESSAGE_ID=$MID_CORRECTED |
        jq -r '"\(.LOWLATD_KIND) \(.LOWLATD_OBJECT)"' | sort -u)
note "before the purge: lowlatd $(systemctl is-active lowlatd), ${#TOUCHED[@]} settings written since the install, $(grep -c $'\t' /run/lowlatd/originals 2>/dev/null) originals on file"
rm -f "$E2E_DROPIN" # not the package's: it would keep /etc/lowlatd
m15=$(mark)
t_apt=$(now_ms)
out=$(DEBIAN_FRONTEND=noninteractive timeout 300 apt-get purge -y lowlatd 2>&1)
verdict $? "apt-get purge -y lowlatd ($(($(now_ms) - t_apt)) ms)" "$out"
grep -q "every value lowlatd changed is back to what the host had before" <<< "$out" &&
        jhas "$m15" MESSAGE_ID=$MID_RESTORED
verdict $? "the prerm ran lowlatctl restore before the stop (its message, and the restored entry in the journal)" \
        "$out
$(jtext "$m15" SYSLOG_IDENTIFIER=lowlatd | tail -n 10)"
status=$(dpkg-query -W -f='${Status}' lowlatd 2>&1)
! [[ $status == *" installed" || $status == *config-files* ]]
verdict $? "dpkg knows no lowlatd any more: ${status:-none}"
left=""
for f in "${PKG_FILES[@]}" /etc/lowlatd /run/lowlatd /usr/share/doc/lowlatd; do
        { [ -e "$f" ] || [ -L "$f" ]; } && ! { [ -d "$f" ] && [[ " ${PKG_FILES[*]} " == *" $f "* ]] && [[ $f != *lowlat* ]]; } &&
                left+="$f"$'\n'
done
# The test's own units (lowlatd-e2e.service, .target) and the share are not lowlatd's.
found=$(find / \( -path /proc -o -path /sys -o -path "$SHARE" \) -prune -o -iname '*lowlat*' ! -name '*lowlatd-e2e*' -print 2>/dev/null)
[ -z "$left" ] && [ -z "$found" ]
verdict $? "no file of the package is left (${#PKG_FILES[@]} paths), and no file named *lowlat* anywhere" "left:
$left
found:
$found"
load=$(systemctl show -P LoadState lowlatd.service 2>&1)
catalog=$(journalctl --list-catalog 2>&1 | grep -c -e "$MID_DRIFT" -e "$MID_FIGHT" -e "$MID_UNMOVABLE")
[ "$load" = not-found ] && [ "$catalog" -eq 0 ] && ! busctl status org.lowlatd1 > /dev/null 2>&1
verdict $? "systemd has no lowlatd.service ($load), the catalog's entries are gone ($catalog left), no org.lowlatd1 on the bus"

# The host as before the install. IRQs created since (the e1000e's at link up) have no
# "before"; tasks evict_strays moved are not put back, by design.
differ="" same=0
for irq in "${!PRE_IRQ[@]}"; do
        [ -e "/proc/irq/$irq/smp_affinity_list" ] || continue
        now=$(rd "/proc/irq/$irq/smp_affinity_list")
        if [ "$now" = "${PRE_IRQ[$irq]}" ]; then same=$((same + 1)); else differ+=" $irq:${PRE_IRQ[$irq]}->$now"; fi
done
[ -z "$differ" ] && [ "$same" -gt 0 ] && [ "$(rd /proc/irq/default_smp_affinity)" = "$PRE_DEFAULT" ] &&
        [ "$(dma_latency)" = "$PRE_DMA" ]
verdict $? "all $same IRQs that were there before have their affinity from before the install; default_smp_affinity $(rd /proc/irq/default_smp_affinity), /dev/cpu_dma_latency $(dma_latency) as before" \
        "differ:$differ
default_smp_affinity: before $PRE_DEFAULT, now $(rd /proc/irq/default_smp_affinity); cpu_dma_latency: before $PRE_DMA, now $(dma_latency)"
declare -A by_kind
wrong="" unchecked=""
for entry in "${TOUCHED[@]}"; do
        kind=${entry%% *} object=${entry#* }
        by_kind[$kind]=$((${by_kind[$kind]:-0} + 1))
        case $kind in
        irq_affinity|irq_default_affinity|cpu_dma_latency) ;; # above
        sysctl)
                now=$(sysctl -n "$object" 2>&1 | squeeze) pre=$(pre_sysctl "$object")
                [ "$now" = "$pre" ] || wrong+=" $object:${pre:-?}->$now"
                ;;
        nic_coalesce|nic_feature|nic_ring|nic_channels|nic_qdisc)
                nic=${object%%/*}
                what=$(case $kind in nic_coalesce) echo c ;; nic_feature) echo k ;; nic_ring) echo g ;;
                        nic_channels) echo l ;; nic_qdisc) echo q ;; esac)
                if [ -z "${PRE_NIC[$nic/$what]+set}" ]; then
                        unchecked+=" $kind:$object(no state from before)"
                else
                        [ "$(nic_state "$nic" $what)" = "${PRE_NIC[$nic/$what]}" ] || wrong+=" $kind:$object"
                fi
                ;;
        stray_tasks) ;;
        *) unchecked+=" $kind:$object" ;;
        esac
done
note "settings lowlatd wrote since the install, by kind: $(for k in "${!by_kind[@]}"; do printf '%s %s, ' "$k" "${by_kind[$k]}"; done)"
[ -n "$unchecked" ] && note "not compared here (no reader for the kind):$unchecked"
[ -z "$wrong" ] && [ ${#TOUCHED[@]} -gt 0 ]
verdict $? "every sysctl and NIC setting lowlatd wrote is as it was before the install" "not so:$wrong"
finish
