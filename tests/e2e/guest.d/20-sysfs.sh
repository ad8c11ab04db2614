# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
# [sysfs] on the real guest kernel (issue 12): a multiple-choice file set through [sysfs],
# a write of another choice reverted through the inotify hint and journaled with the sysfs
# fields, and the original choice back after lowlatctl restore. The file is transparent
# huge pages (/sys/kernel/mm/transparent_hugepage/enabled, set to never); PREEMPT_RT
# kernels are built without THP, and there it is the root disk's I/O scheduler (set to
# none, mq-deadline written by hand). Sourced by guest-test.sh; leaves lowlatd enforcing
# without [sysfs].
THP=/sys/kernel/mm/transparent_hugepage/enabled SF_SET=never SF_OTHER=always SF_ALT=madvise
if [ ! -e "$THP" ]; then
        for f in /sys/block/vd*/queue/scheduler; do
                # /sys/block/vda is a link into /sys/devices: name the file itself
                [ -e "$f" ] && { THP=$(readlink -f "$f"); break; }
        done
        SF_SET=none SF_OTHER=mq-deadline SF_ALT=mq-deadline
        note "no THP on this kernel ($(uname -r)): [sysfs] is checked on $THP ($(cat "$THP" 2>&1))"
fi
# The word in force: "always madvise [never]" -> never
thp() { sed -n 's/.*\[\([^]]*\)\].*/\1/p' "$THP" 2>/dev/null; }
thp_is() { [ "$(thp)" = "$1" ]; }

if [ ! -w "$THP" ]; then
        fail "[sysfs]: $THP is writable in the guest" "$(ls -l "$THP" 2>&1)"
else
        # A host whose file holds the choice to set already would make restore prove nothing.
        thp_is "$SF_SET" && echo "$SF_ALT" > "$THP"
        thp_before=$(thp)
        note "$THP before: $(cat "$THP")"

        write_config "rx_usecs = 60" "[sysfs]
$THP = $SF_SET"
        m20=$(mark)
        out=$(timeout 60 systemctl reload lowlatd 2>&1)
        verdict $? "systemctl reload with [sysfs] $THP = $SF_SET" "$out"
        wait_until 10 thp_is "$SF_SET"
        verdict $? "$THP is $SF_SET after $WAITED_MS ms: $(cat "$THP")" "$(jtext "$m20" SYSLOG_IDENTIFIER=lowlatd | tail -n 10)"
        listed=$(lowlatctl --no-legend list 2>&1 | awk -v p="$THP" '$1 == "sysfs" && $2 == p')
        [ -n "$listed" ]
        verdict $? "lowlatctl list shows it as kind sysfs, object $THP: $listed" "$(lowlatctl list 2>&1 | tail -n 20)"

        m20b=$(mark)
        out=$( (echo "$SF_OTHER" > "$THP") 2>&1)
        verdict $? "echo $SF_OTHER > $THP" "$out"
        wait_until 20 thp_is "$SF_SET"
        rc=$? waited=$WAITED_MS
        verdict $rc "$THP is back to $SF_SET after $waited ms" "$(jtext "$m20b" SYSLOG_IDENTIFIER=lowlatd)"
        [ $rc -eq 0 ] && [ "$waited" -le 2000 ]
        verdict $? "reverted within 2 s, so through the inotify hint (the scan runs every 15 s)" \
                "$(jtext "$m20b" SYSLOG_IDENTIFIER=lowlatd)"
        wait_until 10 jhas "$m20b" MESSAGE_ID="$MID_DRIFT" LOWLATD_KIND=sysfs LOWLATD_OBJECT="$THP"
        fields=$(jentries "$m20b" MESSAGE_ID="$MID_DRIFT" LOWLATD_KIND=sysfs LOWLATD_OBJECT="$THP" | head -n1 | jfields)
        grep -qxF "LOWLATD_EXPECTED=$SF_SET" <<< "$fields" && grep -qxF "LOWLATD_OBSERVED=$SF_OTHER" <<< "$fields"
        verdict $? "the drift entry: kind sysfs, object $THP, expected $SF_SET, observed $SF_OTHER (the word in force)" \
                "${fields:-no entry}
$(jtext "$m20b" SYSLOG_IDENTIFIER=lowlatd)"
        jhas "$m20b" MESSAGE_ID="$MID_CORRECTED" LOWLATD_KIND=sysfs LOWLATD_OBJECT="$THP"
        verdict $? "a corrected entry ($MID_CORRECTED) follows" "$(jtext "$m20b" SYSLOG_IDENTIFIER=lowlatd)"

        out=$(lowlatctl restore 2>&1)
        verdict $? "lowlatctl restore exits 0${out:+: $out}" "$out"
        thp_is "$thp_before"
        verdict $? "$THP is back to its original, $thp_before: $(cat "$THP")" \
                "$(grep sysfs /run/lowlatd/originals 2>&1)"
fi

# Enforcing again, without [sysfs], for whatever comes next.
write_config "rx_usecs = 60" ""
out=$(timeout 60 systemctl reload lowlatd 2>&1)
enforcing() { [ "$(prop_s State)" = enforcing ]; }
wait_until 30 enforcing
verdict $? "reloaded without [sysfs]: enforcing again" "$out
State $(prop_s State)"
[ -z "${thp_before:-}" ] || thp_is "$thp_before"
verdict $? "a reload that no longer names $THP leaves it at ${thp_before:-its value}: $(cat "$THP" 2>&1)"
