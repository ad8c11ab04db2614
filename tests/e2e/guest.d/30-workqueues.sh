# shellcheck shell=bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# [cpus] workqueues = housekeeping on the real kernel (sourced by guest-test.sh): the mask
# for all unbound workqueues and every workqueue's own cpumask hold the housekeeping CPUs;
# a write to one is reverted at once (inotify) and journaled; a workqueue that a module
# creates later gets the mask at the next scan; lowlatctl restore, and a reload that drops
# the key, put back what the kernel had.

WQ=/sys/devices/virtual/workqueue
wq_hk=0
for c in $(expand "$HOUSEKEEPING"); do wq_hk=$((wq_hk | 1 << c)); done
# wq_num MASK: a mask as a number (the kernel writes hex in comma-separated groups)
wq_num() {
        local v=${1//,/}
        [ -n "$v" ] && echo $((16#$v))
}
wq_mask() { wq_num "$(rd "$1")"; }
wq_is_hk() { [ "$(wq_mask "$1")" = "$wq_hk" ]; }
wq_files() {
        local f
        for f in "$WQ/cpumask" "$WQ"/*/cpumask; do [ -e "$f" ] && echo "$f"; done
        return 0
}
# "NAME=VALUE" for every cpumask that does not hold the housekeeping CPUs
wq_off() {
        local f
        for f in $(wq_files); do wq_is_hk "$f" || echo "${f#"$WQ"/}=$(rd "$f")"; done
        return 0
}
wq_all_hk() { [ -z "$(wq_off)" ]; }
wq_rows() { lowlatctl --no-legend list 2>&1 | awk '$1 == "workqueue_cpumask"'; }
wq_listed() { wq_rows | awk -v o="$1" '$2 == o { found = 1 } END { exit !found }'; }
wq_skip() { n=$((n + 1)); say "ok $n - $1 # SKIP $2"; }

declare -A WQ_PRE
for f in $(wq_files); do WQ_PRE[$f]=$(rd "$f"); done
note "before lowlatd manages workqueues: $(for f in $(wq_files); do printf '%s=%s ' "${f#"$WQ"/}" "${WQ_PRE[$f]}"; done)"

write_config "rx_usecs = 60" ""
sed -i 's/^isolated = auto$/isolated = auto\nworkqueues = housekeeping/' "$CONF"
out=$(timeout 60 systemctl reload lowlatd 2>&1)
verdict $? "systemctl reload with [cpus] workqueues = housekeeping" "$out
$(cat "$CONF")"
wait_until 20 wq_all_hk
verdict $? "every workqueue cpumask holds the housekeeping CPUs $HOUSEKEEPING (mask $(printf %x $wq_hk)) after $WAITED_MS ms" \
        "off: $(wq_off)
$(wq_rows)"
rows=$(wq_rows)
bad=$(awk '$NF != "ok" && $NF != "corrected"' <<< "$rows")
wq_listed cpumask && wq_listed writeback && [ -z "$bad" ]
verdict $? "lowlatctl list: workqueue_cpumask cpumask and writeback among $(wc -l <<< "$rows") rows, all ok or corrected" "$rows"

m30=$(mark)
out=$( (echo f > "$WQ/writeback/cpumask") 2>&1)
verdict $? "echo f > $WQ/writeback/cpumask" "$out"
wait_until 20 wq_is_hk "$WQ/writeback/cpumask"
rc=$? waited=$WAITED_MS
[ $rc -eq 0 ] && [ "$waited" -le 2000 ]
verdict $? "writeback's cpumask holds: $(rd "$WQ/writeback/cpumask") again after $waited ms (limit 2000: the inotify hint; the scan runs every 15 s)" \
        "$(jtext "$m30" SYSLOG_IDENTIFIER=lowlatd)"
wait_until 10 jhas "$m30" MESSAGE_ID="$MID_CORRECTED" LOWLATD_KIND=workqueue_cpumask LOWLATD_OBJECT=writeback
rc=$?
jhas "$m30" MESSAGE_ID="$MID_DRIFT" LOWLATD_KIND=workqueue_cpumask LOWLATD_OBJECT=writeback && [ $rc -eq 0 ]
verdict $? "the journal has the drift and the correction of workqueue_cpumask writeback" "$(jtext "$m30" SYSLOG_IDENTIFIER=lowlatd)"

# A kernel that booted with the mask for all on housekeeping (6.1 with nohz_full= does)
# had it as desired when lowlatd first looked: that value is its original, so the f
# written below, which lowlatd corrects, must never become what restore puts back.
WQ_BOOT_ALL=${WQ_PRE[$WQ/cpumask]}
m30b=$(mark)
out=$( (echo f > "$WQ/cpumask") 2>&1)
verdict $? "echo f > $WQ/cpumask (the mask for all unbound workqueues)" "$out"
wait_until 20 wq_is_hk "$WQ/cpumask"
rc=$? waited=$WAITED_MS
[ $rc -eq 0 ] && [ "$waited" -le 2000 ]
verdict $? "the mask for all unbound workqueues holds: $(rd "$WQ/cpumask") again after $waited ms" \
        "$(jtext "$m30b" SYSLOG_IDENTIFIER=lowlatd)"
wait_until 10 jhas "$m30b" MESSAGE_ID="$MID_CORRECTED" LOWLATD_KIND=workqueue_cpumask LOWLATD_OBJECT=cpumask
verdict $? "and its correction is journaled" "$(jtext "$m30b" SYSLOG_IDENTIFIER=lowlatd)"

# A workqueue that appears later: nvme_core creates nvme-wq (WQ_UNBOUND | WQ_SYSFS) when it
# loads, with no NVMe device needed; the guest has none, so it is not loaded before.
if [ ! -e "$WQ/nvme-wq" ] && modprobe nvme_core 2>/dev/null && [ -e "$WQ/nvme-wq/cpumask" ]; then
        note "modprobe nvme_core: nvme-wq appeared with cpumask $(rd "$WQ/nvme-wq/cpumask")"
        wait_until 40 wq_is_hk "$WQ/nvme-wq/cpumask"
        verdict $? "the new workqueue nvme-wq gets the housekeeping mask after $WAITED_MS ms (the next scan)" \
                "$(rd "$WQ/nvme-wq/cpumask")
$(wq_rows)"
        wq_listed nvme-wq
        verdict $? "and is listed" "$(wq_rows)"
        modprobe -r nvme_core 2>/dev/null
        if [ ! -e "$WQ/nvme-wq" ]; then
                gone() { ! wq_listed nvme-wq; }
                wait_until 40 gone
                verdict $? "modprobe -r nvme_core: nvme-wq leaves the list after $WAITED_MS ms" "$(wq_rows)"
        fi
else
        wq_skip "a workqueue created later gets the mask" "modprobe nvme_core did not create $WQ/nvme-wq"
fi

m30c=$(mark)
out=$(lowlatctl restore 2>&1)
verdict $? "lowlatctl restore${out:+: $out}" "$out"
differ=""
for f in "${!WQ_PRE[@]}"; do
        [ -e "$f" ] || continue
        [ "$(wq_mask "$f")" = "$(wq_num "${WQ_PRE[$f]}")" ] || differ+=" ${f#"$WQ"/}:${WQ_PRE[$f]}->$(rd "$f")"
done
[ -z "$differ" ]
verdict $? "after restore every workqueue cpumask is as lowlatd found it" "differ:$differ
$(jtext "$m30c" SYSLOG_IDENTIFIER=lowlatd | tail -n 10)"
out=$(timeout 60 systemctl reload lowlatd 2>&1)
wait_until 20 wq_all_hk
verdict $? "systemctl reload: enforcing again, every cpumask back on $HOUSEKEEPING after $WAITED_MS ms" "$out
off: $(wq_off)"

write_config "rx_usecs = 60" ""
out=$(timeout 60 systemctl reload lowlatd 2>&1)
as_before() {
        local f
        for f in "${!WQ_PRE[@]}"; do
                [ -e "$f" ] || continue
                [ "$(wq_mask "$f")" = "$(wq_num "${WQ_PRE[$f]}")" ] || return 1
        done
}
wait_until 20 as_before
verdict $? "a reload without the key puts the masks back as they were (after $WAITED_MS ms)" "$out
$(for f in $(wq_files); do printf '%s=%s (was %s)\n' "${f#"$WQ"/}" "$(rd "$f")" "${WQ_PRE[$f]:-}"; done)"
[ -z "$(wq_rows)" ]
verdict $? "and lowlatctl list has no workqueue_cpumask row" "$(wq_rows)"
# The mask for all as the guest booted with it, for the files after this one.
echo "$WQ_BOOT_ALL" > "$WQ/cpumask" 2>/dev/null
