# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
# watchdog: quiet 200 s
# What the whole posture costs at idle (issue 28, item 3), next to irqbalance in the same
# boot, in the 6.12 guest only (one kernel is enough for a footprint; docs/performance.md
# has the figures):
#  - lowlatd with every kind the boot allows (slices, workqueues, kthreads, evict_strays,
#    the irqbalance ban, [pm], a sysctl, [sysfs], coalescing, RPS/XPS, hold_timestamping,
#    fair_server, the noise counters; not [cpus] partition, which needs a guest booted
#    without isolcpus), nothing drifting, 60 s: its wakeups (voluntary and involuntary
#    context switches of all its threads, from /proc/PID/task/*/status, per second),
#    RssAnon (/proc/PID/status) and Pss (/proc/PID/smaps_rollup);
#  - then lowlatctl restore and stop, and Debian's irqbalance (IRQBALANCE_BANNED_CPULIST
#    the isolated CPUs, as it is run beside isolcpus=) for the same window.
# The window itself forks nothing (bash builtins read the files; it waits with read -t on
# a FIFO), and nothing else in the guest runs but journald, udevd, the bus and PID 1.
# Software emulation makes time noisy, not wakeups: the counts are what the daemons asked
# for. The verdicts are only what is honest here: both windows ran with their daemon alive
# and nothing corrected in lowlatd's, and a generous bound (1 wakeup/s) that a polling loop
# would break; RssAnon no higher than irqbalance's (issue 28's goal) is TODO while it is
# not met; the figures are notes.
# Leaves lowlatd running and enforcing the base config, irqbalance stopped, every IRQ
# irqbalance moved where it was.
if [ "$E2E_KERNEL" != 6.12 ]; then
        skipped "the idle footprint of the full posture beside irqbalance" "measured in the 6.12 guest only"
        return 0
fi
IDLE_S=60
IDLE_FIFO=/run/e2e-idle.fifo
IDLE_IRQB_SAVED=/run/e2e-idle-irqbalance.default
rm -f "$IDLE_FIFO"
mkfifo "$IDLE_FIFO"
exec {idle_fd}<> "$IDLE_FIFO"

# idle_sample PID: IDLE_CTXT (context switches of all its threads), IDLE_ANON and IDLE_PSS
# (kB), with builtins only: a fork would be a process event in the window.
idle_sample() {
        local t k v _
        IDLE_CTXT=0 IDLE_ANON="" IDLE_PSS=""
        for t in /proc/"$1"/task/*/status; do
                while read -r k v _; do
                        case $k in
                        voluntary_ctxt_switches: | nonvoluntary_ctxt_switches:) IDLE_CTXT=$((IDLE_CTXT + v)) ;;
                        esac
                done < "$t"
        done
        while read -r k v _; do [ "$k" = RssAnon: ] && IDLE_ANON=$v; done < "/proc/$1/status"
        while read -r k v _; do [ "$k" = Pss: ] && IDLE_PSS=$v; done < "/proc/$1/smaps_rollup"
        [ -n "$IDLE_ANON" ] && [ -n "$IDLE_PSS" ]
}
# idle_window PID: IDLE_N context switches over IDLE_S seconds, IDLE_RATE per second (two
# decimals), IDLE_ANON and IDLE_PSS at the end; fails if PID did not live through it.
idle_window() {
        local c0 t0 t1
        IDLE_N=0 IDLE_RATE='?' IDLE_ANON='?' IDLE_PSS='?'
        idle_sample "$1" || return 1
        c0=$IDLE_CTXT t0=${EPOCHREALTIME/./}
        read -r -t "$IDLE_S" -u "$idle_fd" _
        t1=${EPOCHREALTIME/./}
        [ -d "/proc/$1" ] && idle_sample "$1" || return 1
        IDLE_N=$((IDLE_CTXT - c0))
        local hundredths=$((IDLE_N * 100000000 / (t1 - t0)))
        printf -v IDLE_RATE '%d.%02d' $((hundredths / 100)) $((hundredths % 100))
}

# ----- lowlatd with every kind ------------------------------------------------------------
# idle_posture: the configuration with every kind this boot allows
idle_posture() {
        write_config "rx_usecs = 60" "[nic \"$VNET\"]
rps_cpus = housekeeping
xps_cpus = housekeeping

[sysctl]
vm.stat_interval = 7

[sysfs]
/sys/kernel/mm/transparent_hugepage/enabled = never"
        sed -i "s/^isolated = auto\$/isolated = auto\\nslices = system.slice user.slice init.scope\\nworkqueues = housekeeping\\nkthreads = housekeeping\\nevict_strays = yes\\nhold_timestamping = yes\\nfair_server = off/; s/^default_affinity = housekeeping\$/default_affinity = housekeeping\\nirqbalance = ban/; s/^cpu_dma_latency = 0\$/cpu_dma_latency = 0\\nresume_latency = 20/" "$CONF"
}
idle_posture
out=$(timeout 60 systemctl reload lowlatd 2>&1)
idle_enforcing() { [ "$(prop_s State)" = enforcing ]; }
wait_until 30 idle_enforcing
verdict $? "the full posture: reloaded, enforcing" "$out
$(cat "$CONF")"
# Settled: the reload's looks done, a scan in between (the scan runs every 15 s).
sleep 5
idle_kinds=$(lowlatctl --no-legend list 2>/dev/null | awk '{ print $1 }' | sort | uniq -c | awk '{ printf "%s %s, ", $2, $1 }')
idle_n=$(lowlatctl --no-legend list 2>/dev/null | wc -l)
note "the full posture: $idle_n settings: ${idle_kinds%, }"
idle_pid=$(main_pid)
m95=$(mark)
idle_window "$idle_pid"
rc=$?
LLD_RATE=$IDLE_RATE LLD_N=$IDLE_N LLD_ANON=$IDLE_ANON LLD_PSS=$IDLE_PSS
corrected=$(jcount "$m95" MESSAGE_ID="$MID_CORRECTED" _SYSTEMD_UNIT=lowlatd.service)
note "idle ${IDLE_S} s, lowlatd $(lowlatd --version 2>/dev/null | head -n 1) with the full posture ($idle_n settings): $LLD_N context switches, $LLD_RATE wakeups/s; RssAnon $LLD_ANON kB, Pss $LLD_PSS kB"
[ "$rc" = 0 ] && [ "$(main_pid)" = "$idle_pid" ] && [ "$corrected" = 0 ]
verdict $? "lowlatd (pid $idle_pid) idled ${IDLE_S} s with the full posture, nothing corrected ($corrected corrections)" \
        "$(jtext "$m95" SYSLOG_IDENTIFIER=lowlatd | tail -n 20)"
[ "$rc" = 0 ] && [ "$LLD_N" -le "$IDLE_S" ]
verdict $? "lowlatd's idle wakeups at most 1/s: $LLD_RATE/s"

out=$( { lowlatctl restore && timeout 60 systemctl stop lowlatd; } 2>&1)
verdict $? "lowlatctl restore, systemctl stop lowlatd: irqbalance's turn" "$out"

# ----- irqbalance --------------------------------------------------------------------------
declare -A IDLE_AFF
for f in /proc/irq/[0-9]*/smp_affinity_list; do
        irq=${f#/proc/irq/}
        IDLE_AFF[${irq%%/*}]=$(rd "$f")
done
cp /etc/default/irqbalance "$IDLE_IRQB_SAVED" 2>/dev/null
printf '%s\n' "IRQBALANCE_BANNED_CPULIST=$ISOLATED" ${MQ_IRQ_BAN:+"IRQBALANCE_ARGS=\"$MQ_IRQ_BAN\""} > /etc/default/irqbalance
out=$(timeout 60 systemctl start irqbalance.service 2>&1)
irqb_pid=$(systemctl show -P MainPID irqbalance.service)
sleep 5
idle_window "$irqb_pid"
rc=$?
note "idle ${IDLE_S} s, irqbalance $(dpkg-query -W -f='${Version}' irqbalance 2>/dev/null) (IRQBALANCE_BANNED_CPULIST=$ISOLATED): $IDLE_N context switches, $IDLE_RATE wakeups/s; RssAnon $IDLE_ANON kB, Pss $IDLE_PSS kB"
[ "$rc" = 0 ] && [ "$(systemctl show -P MainPID irqbalance.service)" = "$irqb_pid" ]
verdict $? "irqbalance (pid $irqb_pid) idled ${IDLE_S} s in the same boot" "$out
$(systemctl status --no-pager irqbalance.service 2>&1)"
# Issue 28's goal, a known gap while it is not met: in the first run (after a reload from
# the base posture) lowlatd's RssAnon was 2.8 times irqbalance's.
if [ "$rc" = 0 ] && [ "$LLD_ANON" != '?' ] && [ "$LLD_ANON" -le "$IDLE_ANON" ]; then
        pass "lowlatd's RssAnon with the full posture ($LLD_ANON kB) no higher than irqbalance's ($IDLE_ANON kB)"
else
        todo "lowlatd's RssAnon with the full posture ($LLD_ANON kB) no higher than irqbalance's ($IDLE_ANON kB)" \
                "issue 28, item 3: not met yet"
fi
note "lowlatd / irqbalance: wakeups $LLD_RATE / $IDLE_RATE per s, RssAnon $LLD_ANON / $IDLE_ANON kB, Pss $LLD_PSS / $IDLE_PSS kB"
timeout 60 systemctl stop irqbalance.service
if [ -f "$IDLE_IRQB_SAVED" ]; then mv "$IDLE_IRQB_SAVED" /etc/default/irqbalance; fi
# What irqbalance moved goes back, for the checks of the restore and the purge after this.
idle_moved=""
for irq in "${!IDLE_AFF[@]}"; do
        f=/proc/irq/$irq/smp_affinity_list
        if [ -e "$f" ] && [ "$(rd "$f")" != "${IDLE_AFF[$irq]}" ]; then
                idle_moved+=" $irq"
                echo "${IDLE_AFF[$irq]}" > "$f" 2>/dev/null
        fi
done
note "IRQs irqbalance moved, put back:${idle_moved:- none}"
exec {idle_fd}>&-
rm -f "$IDLE_FIFO"

write_config "rx_usecs = 60" ""
out=$(timeout 120 systemctl start lowlatd 2>&1)
wait_until 60 idle_enforcing
verdict $? "lowlatd started again with the test's configuration, enforcing" "$out
$(systemctl status --no-pager lowlatd 2>&1)"
