# shellcheck shell=bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# lowlatctl boot on a real GRUB (issue 25, item 2): sourced by guest-partition.sh near its
# end, in the 6.12 image booted without boot isolation, where mkimage.sh installed
# grub2-common (update-grub, grub-mkconfig, grub-probe) with no boot sector: the guest
# still boots with -kernel, so grub.cfg is written for real but never read. The
# configuration in force is guest-partition.sh's ([cpus] isolated = 2-3). Checks: update-grub
# makes the first grub.cfg (what installing GRUB does); a plain lowlatctl boot names GRUB,
# prints the line and writes nothing; --apply writes /etc/default/grub.d/lowlatd.cfg with
# exactly that line and update-grub puts it on grub.cfg's linux lines; a second --apply
# changes nothing; --remove gives back both files byte for byte. Uses guest-lib.sh's helpers.

BOOT_DROPIN=/etc/default/grub.d/lowlatd.cfg
GRUB_CFG=/boot/grub/grub.cfg
BOOT_SAVE=$R/grub
mkdir -p "$BOOT_SAVE"
# What lowlatctl could write: every file's checksum and mtime under the two directories,
# and /etc/default/grub.
grub_files_state() {
        find /etc/default/grub /etc/default/grub.d /boot/grub -xdev -printf '%p %y %m %TY-%Tm-%Td %TT\n' | sort
        find /etc/default/grub /etc/default/grub.d /boot/grub -xdev -type f -exec sha256sum {} + | sort -k 2
}
# grub.cfg's linux lines (the kernel and its arguments), normal or recovery
linux_lines() { awk '$1 == "linux"' "$1"; }
# has_words LINE WORDS: every word of WORDS is a word of LINE
has_words() {
        local w
        for w in $2; do [[ " $1 " == *" $w "* ]] || return 1; done
}

section "lowlatctl boot on a real GRUB: update-grub, the drop-in, grub.cfg" "quiet 240 s"
t_grub=$(now_ms)
out=$(timeout 180 update-grub 2>&1)
rc=$?
[ $rc -eq 0 ] && [ -s "$GRUB_CFG" ] && [ -n "$(linux_lines "$GRUB_CFG")" ] && [ ! -e "$BOOT_DROPIN" ]
verdict $? "update-grub writes the first $GRUB_CFG ($(($(now_ms) - t_grub)) ms, $(linux_lines "$GRUB_CFG" | wc -l) linux lines); no $BOOT_DROPIN yet" \
        "exit $rc: $out"
note "update-grub said: $(tr '\n' ' ' <<< "$out")"
note "GRUB $(grub-mkconfig --version 2>&1 | awk '{ print $NF }'); grub-probe: / on $(grub-probe --target=device / 2>&1), $(grub-probe --target=fs / 2>&1)"
cp "$GRUB_CFG" "$BOOT_SAVE/grub.cfg.before"

# ----- a plain lowlatctl boot -----
state0=$(grub_files_state)
text=$(lowlatctl boot 2>&1)
rc_text=$?
json=$(lowlatctl --json boot 2>/dev/null)
rc_json=$?
line=$(jq -r '.line // empty' <<< "$json" 2>/dev/null)
args=$(jq -r '.arguments // empty' <<< "$json" 2>/dev/null)
note "lowlatctl boot: $(tr '\n' ';' <<< "$text")"
[ $rc_text -eq 0 ] && [ $rc_json -eq 0 ] && [ "$(jq -r .loader <<< "$json" 2>/dev/null)" = grub ] &&
        grep -qx 'Boot loader: grub' <<< "$text" &&
        grep -qxF "Line:        GRUB_CMDLINE_LINUX_DEFAULT=\"$line\"" <<< "$text" &&
        has_words "$line" "isolcpus=managed_irq,$ISOLATED nohz_full=$ISOLATED rcu_nocbs=$ISOLATED" &&
        [[ " $line " != *"isolcpus=managed_irq,domain,"* ]] && has_words "$line" "$args"
# [cpus] partition takes the load balancing: the boot adds managed IRQs, not domain.
verdict $? "lowlatctl boot names GRUB and prints the line, with isolcpus (managed_irq, no domain under the partition), nohz_full and rcu_nocbs for $ISOLATED: $args" \
        "exit $rc_text (--json $rc_json)
$text
$json"
[ "$(grub_files_state)" = "$state0" ]
verdict $? "a plain lowlatctl boot (and --json boot) wrote nothing: /etc/default/grub, grub.d and /boot/grub as before (checksums, modes, mtimes)" \
        "$(diff <(echo "$state0") <(grub_files_state))"

# ----- --apply -----
t_apply=$(now_ms)
out=$(timeout 180 lowlatctl --json boot --apply 2>"$BOOT_SAVE/apply.err")
rc=$?
note "lowlatctl boot --apply ($(($(now_ms) - t_apply)) ms): $(tr '\n' ' ' < "$BOOT_SAVE/apply.err")"
[ $rc -eq 0 ] && [ "$(jq -r '"\(.result) \(.command) \(.command_result)"' <<< "$out" 2>/dev/null)" = "written update-grub ran" ]
verdict $? "lowlatctl boot --apply: the drop-in written, update-grub ran" "exit $rc: $out
$(cat "$BOOT_SAVE/apply.err")"
cp "$GRUB_CFG" "$BOOT_SAVE/grub.cfg.applied"
cp "$BOOT_DROPIN" "$BOOT_SAVE/lowlatd.cfg" 2>/dev/null
# shellcheck source=/dev/null
value=$(. "$BOOT_DROPIN" 2>/dev/null && printf '%s' "${GRUB_CMDLINE_LINUX_DEFAULT-unset}")
[ "$(grep -v '^#' "$BOOT_DROPIN" 2>/dev/null)" = "GRUB_CMDLINE_LINUX_DEFAULT=\"$line\"" ] &&
        [ "$value" = "$line" ] && [ "$(stat -c %a "$BOOT_DROPIN")" = 644 ] &&
        head -n1 "$BOOT_DROPIN" | grep -q '^# Written by lowlatctl boot --apply'
verdict $? "$BOOT_DROPIN: lowlatctl's header and GRUB_CMDLINE_LINUX_DEFAULT=\"the line\" alone, mode 0644" \
        "$(cat "$BOOT_DROPIN" 2>&1)
sourced: $value"
# 10_linux puts GRUB_CMDLINE_LINUX and GRUB_CMDLINE_LINUX_DEFAULT on the normal entries and
# GRUB_CMDLINE_LINUX alone on the recovery ones ("single"): the recovery boot stays plain.
normal=$(linux_lines "$GRUB_CFG" | grep -vw single)
recovery=$(linux_lines "$GRUB_CFG" | grep -w single)
rc=0
[ -n "$normal" ] || rc=1
while IFS= read -r l; do [ -z "$l" ] || has_words "$l" "$line" || rc=1; done <<< "$normal"
while IFS= read -r l; do [ -z "$l" ] || ! has_words "$l" "nohz_full=$ISOLATED" || rc=1; done <<< "$recovery"
verdict $rc "grub.cfg: its $(grep -c . <<< "$normal") normal linux lines carry every word of the line, its $(grep -c . <<< "$recovery") recovery lines (GRUB_CMDLINE_LINUX only) none of it" \
        "$(linux_lines "$GRUB_CFG")"
changed=$(diff "$BOOT_SAVE/grub.cfg.before" "$GRUB_CFG" | grep '^[<>]' | awk '$2 != "linux"')
! cmp -s "$BOOT_SAVE/grub.cfg.before" "$GRUB_CFG" && [ -z "$changed" ]
verdict $? "grub.cfg changed, and only in its linux lines" "$(diff "$BOOT_SAVE/grub.cfg.before" "$GRUB_CFG")"

# ----- --apply again: unchanged -----
t_again=$(now_ms)
out=$(timeout 180 lowlatctl --json boot --apply 2>/dev/null)
rc=$?
note "lowlatctl boot --apply again: $(($(now_ms) - t_again)) ms"
[ $rc -eq 0 ] && [ "$(jq -r .result <<< "$out" 2>/dev/null)" = unchanged ] &&
        cmp -s "$BOOT_SAVE/lowlatd.cfg" "$BOOT_DROPIN" && cmp -s "$BOOT_SAVE/grub.cfg.applied" "$GRUB_CFG"
verdict $? "lowlatctl boot --apply again: 'unchanged', the drop-in and grub.cfg the same bytes after update-grub ran again" \
        "exit $rc: $out
$(diff "$BOOT_SAVE/grub.cfg.applied" "$GRUB_CFG")"

# ----- --remove -----
t_remove=$(now_ms)
out=$(timeout 180 lowlatctl --json boot --remove 2>"$BOOT_SAVE/remove.err")
rc=$?
note "lowlatctl boot --remove ($(($(now_ms) - t_remove)) ms): $(tr '\n' ' ' < "$BOOT_SAVE/remove.err")"
[ $rc -eq 0 ] && [ "$(jq -r '"\(.result) \(.update_grub)"' <<< "$out" 2>/dev/null)" = "removed ran" ] &&
        grep -q "update-grub ran; the next boot is without lowlatctl's arguments" "$BOOT_SAVE/remove.err"
verdict $? "lowlatctl boot --remove: the drop-in removed, update-grub ran, and it says the next boot is without the arguments" "exit $rc: $out
$(cat "$BOOT_SAVE/remove.err")"
cp "$GRUB_CFG" "$BOOT_SAVE/grub.cfg.removed"
[ ! -e "$BOOT_DROPIN" ] && cmp "$BOOT_SAVE/grub.cfg.before" "$GRUB_CFG" > /dev/null
verdict $? "$BOOT_DROPIN absent again (as before --apply), $GRUB_CFG the same bytes as before --apply (cmp)" \
        "$(ls -l "$BOOT_DROPIN" 2>&1)
$(diff "$BOOT_SAVE/grub.cfg.before" "$GRUB_CFG")"
# The mtimes of grub.cfg and grub.d moved (update-grub rewrote one, lowlatctl wrote in the
# other): only the contents are compared now.
[ "$(grub_files_state | grep -v ' [dfl] [0-7]* [0-9-]* [0-9:.]*$')" = "$(grep -v ' [dfl] [0-7]* [0-9-]* [0-9:.]*$' <<< "$state0")" ]
verdict $? "every file under /etc/default/grub, grub.d and /boot/grub has its checksum from before --apply" \
        "$(diff <(echo "$state0") <(grub_files_state))"
note "lowlatctl boot on a real GRUB: $(($(now_ms) - t_grub)) ms in all"
