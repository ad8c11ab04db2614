# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
# Link extras on the emulated e1000e NIC (issue 13, item 4), whose driver has pause
# parameters, through a drop-in, systemctl, ethtool, ip, journalctl and lowlatctl:
#  - [nic "E1K"] pause_autoneg = off and pause_rx/pause_tx the opposite of what the driver
#    has, txqueuelen another length: applied on reload;
#  - eee = off: either applied (ethtool --show-eee says disabled) or unsupported with the
#    driver's reason, reported once; nothing else is accepted, and the outcome is printed;
#  - ethtool -A E1K rx BEFORE is put back within 2 s (the PAUSE_NTF; the scan runs every
#    15 s), and so is ip link set dev E1K txqueuelen BEFORE (the RTM_NEWLINK), journaled
#    as corrections of kind nic_pause and nic_txqueuelen;
#  - lowlatctl restore puts the pause parameters and the queue length back as found.
# Leaves lowlatd enforcing the base config.
LK_DROPIN=/etc/lowlatd/lowlatd.conf.d/65-link.conf
# lk_pause Autonegotiate|RX|TX: on or off, as ethtool -a prints it
lk_pause() { ethtool -a "$E1K" 2>/dev/null | awk -v k="$1:" '$1 == k { print $2 }'; }
lk_txq() { rd "/sys/class/net/$E1K/tx_queue_len"; }
lk_eee() { ethtool --show-eee "$E1K" 2>&1 | sed -n 's/^EEE status: *//p'; }
lk_flip() { if [ "$1" = on ]; then echo off; else echo on; fi; }
lk_row() { lowlatctl --no-legend list 2>&1 | awk -v o="$E1K/$1" '$2 == o'; }

an0=$(lk_pause Autonegotiate) rx0=$(lk_pause RX) tx0=$(lk_pause TX) txq0=$(lk_txq)
note "before: $E1K pause autoneg '$an0' rx '$rx0' tx '$tx0', txqueuelen $txq0, EEE '$(lk_eee)'"
[ -n "$rx0" ] && [ -n "$tx0" ] && [ -n "$an0" ]
verdict $? "ethtool -a $E1K reads the e1000e's pause parameters" "$(ethtool -a "$E1K" 2>&1)"
rxw=$(lk_flip "$rx0") txw=$(lk_flip "$tx0")
txqw=$((txq0 == 2000 ? 3000 : 2000))

mkdir -p "${LK_DROPIN%/*}"
cat > "$LK_DROPIN" <<EOF
[nic "$E1K"]
pause_autoneg = off
pause_rx = $rxw
pause_tx = $txw
eee = off
txqueuelen = $txqw
EOF
chmod 0644 "$LK_DROPIN"
m65=$(mark)
out=$(timeout 60 systemctl reload lowlatd 2>&1)
verdict $? "systemctl reload with a drop-in: [nic \"$E1K\"] pause_autoneg = off, pause_rx = $rxw, pause_tx = $txw, eee = off, txqueuelen = $txqw" "$out"
lk_applied() {
        [ "$(lk_pause Autonegotiate)" = off ] && [ "$(lk_pause RX)" = "$rxw" ] && [ "$(lk_pause TX)" = "$txw" ] &&
                [ "$(lk_txq)" = "$txqw" ]
}
wait_until 20 lk_applied
verdict $? "pause autoneg off, rx $rxw, tx $txw and txqueuelen $txqw on $E1K (after $WAITED_MS ms)" \
        "$(ethtool -a "$E1K" 2>&1); txqueuelen $(lk_txq)
$(lk_row pause_rx) / $(lk_row txqueuelen)
$(jtext "$m65" SYSLOG_IDENTIFIER=lowlatd | tail -n 10)"

# EEE: applied or unsupported with a reason, nothing else; which one is the driver's.
lk_eee_settled() { [[ $(lk_row eee) =~ (ok|corrected|unsupported|failed)$ ]]; }
wait_until 10 lk_eee_settled
eee_row=$(lk_row eee)
if [[ $eee_row == *unsupported ]]; then
        ent=$(jentries "$m65" MESSAGE_ID="$MID_UNSUPPORTED" LOWLATD_OBJECT="$E1K/eee")
        reason=$(printf '%s\n' "$ent" | head -n1 | jq -r '.LOWLATD_ERROR // .MESSAGE // empty')
        [ "$(printf '%s\n' "$ent" | grep -c .)" = 1 ] && [ -n "$reason" ] &&
                [ "$(printf '%s\n' "$ent" | jq -r '.LOWLATD_KIND')" = nic_eee ]
        verdict $? "eee = off: the e1000e offers no EEE here; nic_eee $E1K/eee is unsupported, reported once, saying: $reason" \
                "$eee_row
$(printf '%s\n' "$ent" | jfields)"
else
        [[ $eee_row =~ (ok|corrected)$ ]] && [[ $(lk_eee) == disabled* ]]
        verdict $? "eee = off: the e1000e has EEE; nic_eee $E1K/eee is applied, ethtool --show-eee says '$(lk_eee)'" \
                "$eee_row
$(ethtool --show-eee "$E1K" 2>&1)"
fi

m65b=$(mark)
ethtool -A "$E1K" rx "$rx0" > /dev/null 2>&1
lk_rx_back() { [ "$(lk_pause RX)" = "$rxw" ]; }
wait_until 10 lk_rx_back
rc=$? waited=$WAITED_MS
[ $rc -eq 0 ] && [ "$waited" -le 2000 ]
verdict $? "ethtool -A $E1K rx $rx0 is put back to $rxw within 2 s ($waited ms: through ETHTOOL_MSG_PAUSE_NTF)" \
        "$(ethtool -a "$E1K" 2>&1)
$(jtext "$m65b" SYSLOG_IDENTIFIER=lowlatd | tail -n 10)"
wait_until 10 jhas "$m65b" MESSAGE_ID="$MID_CORRECTED" LOWLATD_KIND=nic_pause LOWLATD_OBJECT="$E1K/pause_rx"
verdict $? "the journal has its correction (kind nic_pause, object $E1K/pause_rx)" \
        "$(jtext "$m65b" SYSLOG_IDENTIFIER=lowlatd | tail -n 10)"

m65c=$(mark)
ip link set dev "$E1K" txqueuelen "$txq0"
lk_txq_back() { [ "$(lk_txq)" = "$txqw" ]; }
wait_until 10 lk_txq_back
rc=$? waited=$WAITED_MS
[ $rc -eq 0 ] && [ "$waited" -le 2000 ]
verdict $? "ip link set dev $E1K txqueuelen $txq0 is put back to $txqw within 2 s ($waited ms: through RTM_NEWLINK)" \
        "txqueuelen $(lk_txq)
$(jtext "$m65c" SYSLOG_IDENTIFIER=lowlatd | tail -n 10)"
wait_until 10 jhas "$m65c" MESSAGE_ID="$MID_CORRECTED" LOWLATD_KIND=nic_txqueuelen LOWLATD_OBJECT="$E1K/txqueuelen"
verdict $? "the journal has its correction (kind nic_txqueuelen, object $E1K/txqueuelen)" \
        "$(jtext "$m65c" SYSLOG_IDENTIFIER=lowlatd | tail -n 10)"
if [[ $eee_row == *unsupported ]]; then
        [ "$(jcount "$m65" MESSAGE_ID="$MID_UNSUPPORTED" LOWLATD_OBJECT="$E1K/eee")" = 1 ]
        verdict $? "$E1K/eee is still reported unsupported once, after the changes and their notifications" \
                "$(jtext "$m65" MESSAGE_ID="$MID_UNSUPPORTED")"
fi

out=$(lowlatctl restore 2>&1)
verdict $? "lowlatctl restore exits 0${out:+: $out}" "$out"
lk_restored() {
        [ "$(lk_pause Autonegotiate)" = "$an0" ] && [ "$(lk_pause RX)" = "$rx0" ] && [ "$(lk_pause TX)" = "$tx0" ] &&
                [ "$(lk_txq)" = "$txq0" ]
}
wait_until 10 lk_restored
verdict $? "restore puts pause autoneg $an0, rx $rx0, tx $tx0 and txqueuelen $txq0 back as found" \
        "$(ethtool -a "$E1K" 2>&1); txqueuelen $(lk_txq)
$(grep -E 'nic_pause|nic_eee|nic_txqueuelen' /run/lowlatd/originals 2>&1)"

rm -f "$LK_DROPIN"
out=$(timeout 60 systemctl reload lowlatd 2>&1)
enforcing() { [ "$(prop_s State)" = enforcing ]; }
wait_until 30 enforcing
verdict $? "the drop-in removed, reloaded: enforcing the base config again" "$out
State $(prop_s State)"
