# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
# watchdog: quiet 150 s, text-patching (the noise gate's perf rings on the interrupt tracepoints)
# Noise on the isolated CPUs (issue 14), on the real guest kernel (isolcpus and nohz_full
# on 2-3), through lowlatctl, busctl and journalctl, with the noise gate's perf rings open
# (every drop-in here says gate = perf; the suite's base config keeps them closed under
# TCG, guest-test.sh E2E_DROPIN), on PREEMPT_RT too:
#  - observe mode first, so lowlatd moves nothing: the virtio-net NIC's receive IRQ put on
#    CPU 2 by hand, then 100 pings: lowlatctl noise counts that IRQ on CPU 2 (at least one
#    interrupt per ping), its count lies between two reads of /proc/interrupts around it,
#    and the local timer ticks of 2-3 over 10 s are noted (and far below a running tick);
#  - enforce: lowlatd moves the IRQ away; over 10 s of pings no movable device IRQ is
#    counted on 2-3 (unmovable ones are noted, not judged);
#  - an [irq] pin that forces the IRQ onto CPU 3, with traffic: the catalogued journal
#    alert names the IRQ, CPU 3 and a count;
#  - the gate: NoiseGate names the rings; over 10 s of 200 ms scans only those after an
#    interrupt other than the timer read /proc/interrupts;
#  - lowlatctl top in tmux shows the isolated CPUs, updates, and q quits.
# Leaves lowlatd enforcing the base config (the rings closed again).
NZ_DROPIN=/etc/lowlatd/lowlatd.conf.d/70-noise.conf
MID_NOISE_IRQ=91c147c8955f4a67a47d5e7c8e5fc632
nz_dev=$(basename "$(readlink -f "/sys/class/net/$VNET/device")")
nz_irq=$(irqs_named "^${nz_dev}-input\\.0\$" | head -n1)
ip link set "$VNET" up
ip addr replace 10.0.2.15/24 dev "$VNET"
nz_ping() { ping -q -c "$1" -i "${2:-0.05}" -W 2 -I "$VNET" 10.0.2.2 > /dev/null 2>&1; }
# nz_noise: lowlatctl noise --json, once per check step
nz_noise() { lowlatctl noise --json 2>/dev/null; }
# nz_count JSON CPU SOURCE: the count lowlatd reports for SOURCE on CPU (0 when absent)
nz_count() { jq -r --argjson c "$2" --arg s "$3" '[.sources[] | select(.cpu == $c and .source == $s) | .count] | add // 0' <<< "$1"; }
# nz_irq_counts JSON: "IRQ:COUNT" for every device IRQ counted on CPUs 2-3, summed over both
nz_irq_counts() {
        jq -r '[.sources[] | select(.kind == "irq" and (.cpu == 2 or .cpu == 3))] | group_by(.source)[] |
                "\(.[0].source):\(map(.count) | add)"' <<< "$1" | sort
}
# nz_proc CPU LABEL: that CPU's column of /proc/interrupts for LABEL ("41" or "LOC")
nz_proc() { awk -v l="$2:" -v c="CPU$1" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) col = i } $1 == l { print $(col + 1); exit }' /proc/interrupts; }
nz_reload() {
        local out
        out=$(timeout 60 systemctl reload lowlatd 2>&1)
        verdict $? "$1" "$out"
}

if [ -z "$nz_irq" ]; then
        fail "the virtio-net NIC $VNET ($nz_dev) has a receive IRQ named ${nz_dev}-input.0" "$(cat /proc/interrupts)"
else
        # --- observe: the IRQ is left where it was put, and counted there --------------
        mkdir -p "${NZ_DROPIN%/*}"
        printf '[daemon]\nmode = observe\n\n[noise]\ngate = perf\n' > "$NZ_DROPIN"
        chmod 0644 "$NZ_DROPIN"
        nz_reload "systemctl reload with [daemon] mode = observe: lowlatd watches and moves nothing"
        echo 2 > "/proc/irq/$nz_irq/smp_affinity_list"
        nz_ping 5 0.1 # x86 without interrupt remapping moves an IRQ at its next interrupt
        eff=$(rd "/proc/irq/$nz_irq/effective_affinity_list")
        p0=$(nz_proc 2 "$nz_irq")
        j0=$(nz_noise)
        nz_ping 100 0.02
        j1=$(nz_noise)
        p1=$(nz_proc 2 "$nz_irq")
        c0=$(nz_count "$j0" 2 "$nz_irq") c1=$(nz_count "$j1" 2 "$nz_irq")
        note "IRQ $nz_irq ($(irq_name "$nz_irq")) on CPU 2 (effective $eff): 100 pings added $((c1 - c0)) interrupts there (lowlatd's count $c0 -> $c1, /proc/interrupts $p0 -> $p1)"
        [ "$eff" = 2 ] && [ $((c1 - c0)) -ge 100 ] && [ "$c1" -ge "$p0" ] && [ "$c1" -le "$p1" ]
        verdict $? "observe mode: IRQ $nz_irq left on CPU 2 shows up as noise: 100 pings add $((c1 - c0)) interrupts on CPU 2 in lowlatctl noise, its total within /proc/interrupts' counts read around the pings" \
                "effective $eff; noise: $(jq -c '[.sources[] | select(.cpu == 2 and .kind == "irq")]' <<< "$j1")"
        row=$(jq -c --arg s "$nz_irq" '.sources[] | select(.cpu == 2 and .source == $s)' <<< "$j1")
        [[ $(jq -r .kind <<< "$row") == irq ]] && [[ $(jq -r .description <<< "$row") == "${nz_dev}-input.0" ]]
        verdict $? "the row is kind irq with the /proc/interrupts name ${nz_dev}-input.0: $row"
        # The tick: nohz_full on 2-3, and both CPUs idle, so it stops; a running tick would be
        # CONFIG_HZ (250 on Debian) a second.
        l2=$(nz_count "$j1" 2 LOC) l3=$(nz_count "$j1" 3 LOC)
        sleep 10
        j2=$(nz_noise)
        t2=$(($(nz_count "$j2" 2 LOC) - l2)) t3=$(($(nz_count "$j2" 3 LOC) - l3))
        note "local timer interrupts over 10 s: CPU 2 $t2, CPU 3 $t3"
        [ "$t2" -ge 0 ] && [ "$t3" -ge 0 ] && [ "$t2" -lt 500 ] && [ "$t3" -lt 500 ]
        verdict $? "LOC on the nohz_full CPUs over 10 s: $t2 and $t3 ticks (a running tick would be 2,500)"

        # --- enforce: the IRQ moves away, and 2-3 see no device IRQ under traffic ----------
        printf '[noise]\nalert_interval = 1s\ngate = perf\n' > "$NZ_DROPIN"
        nz_reload "systemctl reload back to enforce"
        away() { ! touches_isolated "$(rd "/proc/irq/$nz_irq/effective_affinity_list")"; }
        nz_ping 3 0.1
        wait_until 10 away
        verdict $? "IRQ $nz_irq moved off $ISOLATED (effective $(rd "/proc/irq/$nz_irq/effective_affinity_list"))"
        mapfile -t nz_unmovable < <(settings_in_state unmovable irq_affinity)
        b=$(nz_irq_counts "$(nz_noise)")
        nz_ping 200 0.05
        a=$(nz_irq_counts "$(nz_noise)")
        grew="" unmovable_grew=""
        while IFS=: read -r irq cnt; do
                [ -z "$irq" ] && continue
                was=$(awk -F: -v i="$irq" '$1 == i { print $2 }' <<< "$b")
                [ "$cnt" -gt "${was:-0}" ] || continue
                if [[ " ${nz_unmovable[*]} " == *" $irq "* ]]; then unmovable_grew+=" $irq:+$((cnt - ${was:-0}))"; else grew+=" $irq:+$((cnt - ${was:-0}))"; fi
        done <<< "$a"
        [ -n "$unmovable_grew" ] && note "unmovable (managed) IRQs counted on $ISOLATED meanwhile:$unmovable_grew"
        [ -z "$grew" ]
        verdict $? "enforcing: over 10 s of pings no movable device IRQ is counted on $ISOLATED" "grew:$grew
before: $b
after: $a"

        # --- the gate: perf rings on 2-3 spare quiet scans /proc/interrupts -----------------
        # The guest's isolated CPUs are not silent: something outside lowlatd (it is there
        # with lowlatd stopped too) sends each about one function-call IPI (CAL) every 2 s.
        # So the check is against what /proc/interrupts says reached 2-3: each interrupt
        # other than the timer opens the gate for at most two scans (its own and, if it came
        # during a read, the next); every other scan must do without the file.
        gate=$(busctl get-property org.lowlatd1 /org/lowlatd1 org.lowlatd1.Manager NoiseGate 2>&1)
        [[ $gate == *'"perf: '*'rings on 2 of 2 CPUs (2-3)'*'timer counted apart"' ]]
        verdict $? "NoiseGate$([ "$(cat /sys/kernel/realtime 2>/dev/null)" = 1 ] && echo " (PREEMPT_RT)"): perf rings on the isolated CPUs 2-3, the local timer counted apart: $gate" \
                "$(journalctl -b -u lowlatd --no-pager 2>&1 | grep -i 'noise' | tail -n 5)"
        printf '[daemon]\nscan_interval = 200ms\n\n[noise]\nalert_interval = 1s\ngate = perf\n' > "$NZ_DROPIN"
        nz_reload "systemctl reload with a 200 ms scan"
        nz_reads() { busctl get-property org.lowlatd1 /org/lowlatd1 org.lowlatd1.Manager NoiseReads 2>/dev/null | awk '{ print $2, $3 }'; }
        # nz_others: interrupts other than LOC on CPUs 2 and 3 so far, summed
        nz_others() { awk 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "CPU2") c = i; next } $1 != "LOC:" && $(c + 1) ~ /^[0-9]+$/ { s += $(c + 1) + $(c + 2) } END { print s + 0 }' /proc/interrupts; }
        read -r f0 g0 <<< "$(nz_reads)"
        e0=$(nz_others)
        sleep 10
        e1=$(nz_others)
        read -r f1 g1 <<< "$(nz_reads)"
        sc=$((f1 - f0 + g1 - g0)) ev=$((e1 - e0))
        note "the gate over 10 s of 200 ms scans: $sc scans, $((g1 - g0)) without /proc/interrupts, $((f1 - f0)) with it; $ev interrupts other than the timer reached CPUs 2-3 meanwhile"
        if [[ $gate == *'"perf: '* ]]; then
                [ "$sc" -ge 25 ] && [ $((g1 - g0)) -gt 0 ] && [ $((g1 - g0)) -ge $((sc - 2 * ev - 2)) ]
                verdict $? "the gate opens only for what reached CPUs 2-3: $((g1 - g0)) of $sc scans did without /proc/interrupts, $ev other interrupts there (at least $((sc - 2 * ev - 2)) wanted)"
        else
                [ "$sc" -ge 25 ] && [ $((g1 - g0)) -eq 0 ]
                verdict $? "without the gate every scan reads /proc/interrupts: $((f1 - f0)) of $sc"
        fi

        # --- a pin onto CPU 3: the journal alert (the scan's gate opens for it) ---------------
        cat > "$NZ_DROPIN" <<EOF
[daemon]
scan_interval = 2s

[irq]
pin = $(irq_name "$nz_irq") 3

[noise]
alert_interval = 1s
gate = perf
EOF
        m70=$(mark)
        nz_reload "systemctl reload with [irq] pin = $(irq_name "$nz_irq") 3 and a 2 s scan"
        alerted() { nz_ping 20 0.05; jhas "$m70" MESSAGE_ID=$MID_NOISE_IRQ LOWLATD_SOURCE="$nz_irq" LOWLATD_CPU=3; }
        wait_until 60 alerted
        fields=$(jentries "$m70" MESSAGE_ID=$MID_NOISE_IRQ LOWLATD_SOURCE="$nz_irq" LOWLATD_CPU=3 | head -n1 | jfields)
        cnt=$(sed -n 's/^LOWLATD_COUNT=//p' <<< "$fields")
        [ "${cnt:-0}" -gt 0 ] && grep -q "^PRIORITY=" <<< "$fields" && grep -q "^_SYSTEMD_UNIT=lowlatd.service" <<< "$fields"
        verdict $? "a pin of IRQ $nz_irq onto CPU 3 with traffic: journal alert $MID_NOISE_IRQ for CPU 3, $cnt interrupts (after $WAITED_MS ms)" \
                "${fields:-no entry}
$(jtext "$m70" SYSLOG_IDENTIFIER=lowlatd | tail -n 10)"
        out=$(journalctl --list-catalog 2>&1 | grep -c "$MID_NOISE_IRQ")
        [ "$out" -ge 1 ]
        verdict $? "the alert's MESSAGE_ID is in the installed journal catalog"

        rm -f "$NZ_DROPIN"
        nz_reload "systemctl reload without the noise drop-in"
        nz_ping 3 0.1
        wait_until 10 away
        verdict $? "IRQ $nz_irq back off $ISOLATED after the pin is gone"
fi

# --- lowlatctl top in tmux --------------------------------------------------------------
if command -v tmux > /dev/null; then
        tx() { tmux -L e2e-noise -f /dev/null "$@"; }
        tx new-session -d -s top -x 120 -y 30 "TERM=xterm lowlatctl top --interval 1; echo \$? > /run/e2e-top.rc; sleep 30"
        screen1="" screen2=""
        shows_cpus() { screen1=$(tx capture-pane -p -t top 2>&1); grep -q "Isolated CPUs: $ISOLATED" <<< "$screen1" && grep -qE '^2 ' <<< "$screen1" && grep -qE '^3 ' <<< "$screen1"; }
        wait_until 20 shows_cpus
        verdict $? "lowlatctl top in tmux shows the isolated CPUs $ISOLATED and a row for each" "$screen1"
        clock1=$(sed -n '1s/.* - \([0-9:]*\) - .*/\1/p' <<< "$screen1")
        updated() { screen2=$(tx capture-pane -p -t top 2>&1); c=$(sed -n '1s/.* - \([0-9:]*\) - .*/\1/p' <<< "$screen2"); [ -n "$c" ] && [ "$c" != "$clock1" ]; }
        wait_until 10 updated
        verdict $? "lowlatctl top refreshes (header clock $clock1 -> $(sed -n '1s/.* - \([0-9:]*\) - .*/\1/p' <<< "$screen2"))" "$screen2"
        rm -f /run/e2e-top.rc
        tx send-keys -t top q
        quit() { [ -s /run/e2e-top.rc ]; }
        wait_until 10 quit
        [ "$(cat /run/e2e-top.rc 2>/dev/null)" = 0 ]
        verdict $? "q quits lowlatctl top with status 0" "rc $(cat /run/e2e-top.rc 2>/dev/null); $(tx capture-pane -p -t top 2>&1 | tail -n 5)"
        tx kill-server 2>/dev/null
else
        fail "tmux is in the guest image (mkimage.sh)"
fi
