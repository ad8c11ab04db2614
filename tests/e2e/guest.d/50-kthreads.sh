# SPDX-License-Identifier: LGPL-2.1-or-later
# watchdog: quiet 150 s (systemctl restart under timeout 120)
# [cpus] kthreads = housekeeping and [kthread "GLOB"] on the guest's real kernel (issue 12,
# item 2), through systemctl, journalctl, busctl, lowlatctl, taskset and chrt.
#
# Booted with nohz_full=2-3, the kernel starts every new kernel thread on the housekeeping
# CPUs 0-1, and kthreads it started before are mostly there too. So:
#  1. "after start, no movable kernel thread is allowed on 2-3" is made to mean something:
#     scsi_debug's scsi_eh_0 is made a stray with taskset (0-3) before kthreads is switched
#     on; per-CPU threads on 2-3 (ksoftirqd/2, ...) are unmovable, reported once;
#  2. "a kernel thread created afterwards is moved by the proc connector's event": under
#     a 60 s scan, within 1 s (the emulator's cold first thread after a reload took 126 ms
#     on 6.1 on a slower host; the 200 timed creations below give the figures, and the
#     host's bench_kthreads.py lowlatd's own, p50 6 ms); lowlatd's isolated list
#     is widened to 1-3 for a while (the kernel's stays 2-3), so a new scsi_eh_N, which the
#     kernel starts on 0-1, is one lowlatd has to move, to CPU 0 (kthreadd is held on 0-1:
#     6.12 starts a new thread on kthreadd's CPUs, 6.1 on its own). The kernel's fork time
#     comes from the proc connector (a perl helper: the image has perl-base, no python);
#     the journal and the bus must say so; then 200 creations are timed (fork -> moved,
#     against fork -> the connector event at the helper, in the same run);
#  3. [kthread "scsi_eh_*"] policy = fifo: refused under the shipped unit's
#     RestrictRealtime=yes, with the reason; set with a drop-in RestrictRealtime=no, kept
#     against chrt; lowlatctl restore puts CPUs and policy back as found.
# It leaves the unit as shipped and lowlatd enforcing the base config.

KT_ADD_HOST=/sys/bus/pseudo/drivers/scsi_debug/add_host
KT_TIMES=/run/kthread-times.pl
kt_children() { echo 2 $(cat /proc/2/task/2/children 2>/dev/null); }
kt_allowed() { sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "/proc/$1/status" 2>/dev/null; }
kt_name() { cat "/proc/$1/comm" 2>/dev/null; }
# Kernel threads the kernel lets be moved (no PF_NO_SETAFFINITY, not an IRQ thread) that
# are allowed on a CPU of the list $1: "tid (name) cpus" each. One awk over every thread's
# stat and status: under emulation a few processes per thread take a minute.
kt_movable_on() {
        local tid files=()
        for tid in $(kt_children); do
                [ -r "/proc/$tid/stat" ] && [ -r "/proc/$tid/status" ] && files+=("/proc/$tid/stat" "/proc/$tid/status")
        done
        awk -v want="$1" '
                function cpus(list, set,   n, parts, i, r, a) {
                        n = split(list, parts, ",")
                        for (i = 1; i <= n; i++) {
                                if (split(parts[i], r, "-") == 2) { for (a = r[1] + 0; a <= r[2] + 0; a++) set[a] = 1 }
                                else if (parts[i] != "") set[parts[i] + 0] = 1
                        }
                }
                BEGIN { cpus(want, wanted) }
                # The name runs from the first "(" to the last ")"; flags are field 9.
                FILENAME ~ /\/stat$/ && FNR == 1 {
                        n = split($0, all, ")")
                        tail = all[n]
                        comm = substr($0, index($0, "(") + 1, length($0) - length(tail) - index($0, "(") - 1)
                        split(tail, fields, " ")
                        flags = fields[7] + 0
                        next
                }
                FILENAME ~ /\/status$/ && /^Cpus_allowed_list:/ {
                        if (int(flags / 67108864) % 2 == 1 || comm ~ /^irq\//) next
                        split("", have); cpus($2, have)
                        for (c in have) if (c in wanted) { split(FILENAME, p, "/"); print p[3] " (" comm ") " $2; break }
                }' "${files[@]}"
}
kt_config() {
        # $1: the [cpus] isolated value, $2: extra lines for [cpus], $3: extra sections
        write_config "rx_usecs = 60" "${3:-}"
        sed -i "s/^isolated = auto\$/isolated = $1\\nkthreads = housekeeping${2:+\\n$2}/; s/^scan_interval = .*/scan_interval = ${KT_SCAN:-60s}/" "$CONF"
}
kt_newest_eh() { pgrep -n '^scsi_eh_'; }
cat > "$KT_TIMES" <<'PERL'
#!/usr/bin/perl
# kthread-times.pl COUNT PREFIX TARGET CREATE: COUNT times, create a kernel thread (CREATE:
# "write:FILE:TEXT" writes TEXT to FILE, anything else runs under sh -c), wait for the
# proc connector's fork by kthreadd of a thread whose name starts with PREFIX, then for its
# Cpus_allowed_list to read TARGET ("-": do not wait). One line each:
# "TID NAME FORK->EVENT_MS FORK->MOVED_MS" ("-" when not moved within 2 s), times from the
# kernel's fork (CLOCK_MONOTONIC). perl-base only: no modules.
use strict;
use warnings;

my ($count, $prefix, $target, $create) = @ARGV;
die "usage: $0 COUNT PREFIX TARGET CREATE\n" unless defined $create;

sub mono {
        my $ts = "\0" x 16;
        syscall(228, 1, $ts) == 0 or die "clock_gettime: $!\n"; # x86_64, CLOCK_MONOTONIC
        my ($s, $ns) = unpack("q q", $ts);
        return $s * 1e9 + $ns;
}

# AF_NETLINK 16, SOCK_DGRAM 2, NETLINK_CONNECTOR 11; group CN_IDX_PROC 1.
socket(my $sock, 16, 2, 11) or die "socket: $!\n";
bind($sock, pack("S S L L", 16, 0, 0, 1)) or die "bind: $!\n";
my $cn = pack("L L L L S S L", 1, 1, 0, 0, 4, 0, 1); # PROC_CN_MCAST_LISTEN
send($sock, pack("L S S L L", 16 + length($cn), 3, 0, 0, 0) . $cn, 0, pack("S S L L", 16, 0, 0, 0))
        or die "send: $!\n";

# Forks by kthreadd that arrive within $timeout s: [tid, fork_ns, arrival_ns] each.
sub forks {
        my ($timeout) = @_;
        my @out;
        my $rin = '';
        vec($rin, fileno($sock), 1) = 1;
        while (select(my $rout = $rin, undef, undef, $timeout) > 0) {
                my $data;
                last unless defined recv($sock, $data, 65536, 0);
                my $now = mono();
                my $off = 0;
                while ($off + 16 <= length($data)) {
                        my $len = unpack("L", substr($data, $off, 4));
                        last if $len < 16 || $off + $len > length($data);
                        if ($len >= 68) {
                                my ($what, $cpu, $ts) = unpack("L L Q", substr($data, $off + 36, 16));
                                my ($pp, $pt, $cp, $ct) = unpack("l l l l", substr($data, $off + 52, 16));
                                push @out, [$cp, $ts, $now] if $what == 1 && $pt == 2 && $cp == $ct;
                        }
                        $off += ($len + 3) & ~3;
                }
                $timeout = 0;
        }
        return @out;
}

sub slurp {
        open(my $f, '<', $_[0]) or return undef;
        local $/;
        my $t = <$f>;
        close $f;
        return $t;
}

sub name_of {
        my $c = slurp("/proc/$_[0]/comm");
        chomp $c if defined $c;
        return $c;
}

sub allowed_of {
        my $t = slurp("/proc/$_[0]/status");
        return undef unless defined $t;
        return $t =~ /^Cpus_allowed_list:\s*(\S+)/m ? $1 : undef;
}

sub create {
        if ($create =~ /^write:([^:]+):(.*)$/) {
                open(my $f, '>', $1) or die "$1: $!\n";
                print $f $2;
                close $f or die "$1: $!\n";
        } else {
                system("sh", "-c", $create) == 0 or die "$create failed\n";
        }
}

$| = 1;
forks(0.1);
for my $i (1 .. $count) {
        # A child creates while this process waits in select(): the arrival times are real.
        my $child = fork();
        die "fork: $!\n" unless defined $child;
        if ($child == 0) {
                create();
                exit 0;
        }
        my (@seen, $hit);
        my $deadline = mono() + 2e9;
        while (!$hit && mono() < $deadline) {
                push @seen, forks(0.02);
                for my $e (@seen) {
                        my $n = name_of($e->[0]);
                        if (defined $n && index($n, $prefix) == 0) {
                                $hit = [@$e, $n];
                                last;
                        }
                }
        }
        unless ($hit) {
                waitpid($child, 0);
                print "- missed - -\n";
                next;
        }
        my ($tid, $fork, $arrival, $name) = @$hit;
        my $moved;
        while ($target ne '-' && mono() < $fork + 2e9) {
                my $a = allowed_of($tid);
                last unless defined $a;
                if ($a eq $target) {
                        $moved = mono();
                        last;
                }
                select(undef, undef, undef, 0.0005);
        }
        waitpid($child, 0);
        die "creating a kernel thread failed\n" if $? != 0;
        printf("%d %s %.3f %s\n", $tid, $name, ($arrival - $fork) / 1e6,
               defined $moved ? sprintf("%.3f", ($moved - $fork) / 1e6) : "-");
}
PERL

# ----- 1: kthreads = housekeeping after start ------------------------------------------
m=$(mark)
out=$( { modprobe scsi_debug add_host=0 num_tgts=0 || modprobe scsi_debug add_host=0; } 2>&1 && echo 1 > "$KT_ADD_HOST" 2>&1)
eh0=$(kt_newest_eh)
verdict $? "modprobe scsi_debug and add_host start a kernel thread: scsi_eh ($eh0 $(kt_name "$eh0")) on $(kt_allowed "$eh0")" "$out"
taskset -p -c 0-3 "$eh0" > /dev/null 2>&1
stray_before=$(kt_movable_on "$ISOLATED")
note "movable kernel threads allowed on $ISOLATED before: $(printf '%s' "$stray_before" | tr '\n' ';')"
[ "$(kt_allowed "$eh0")" = 0-3 ]
verdict $? "taskset makes scsi_eh ($eh0) a stray on 0-3" "$(kt_allowed "$eh0")"
KT_SCAN=1s kt_config auto
out=$(timeout 60 systemctl reload lowlatd 2>&1)
verdict $? "systemctl reload with [cpus] kthreads = housekeeping" "$out
$(cat "$CONF")"
none_on_isolated() { [ -z "$(kt_movable_on "$ISOLATED")" ]; }
wait_until 20 none_on_isolated
verdict $? "after the reload no movable kernel thread is allowed on $ISOLATED ($(printf '%s' "$stray_before" | grep -c .) were; after $WAITED_MS ms)" \
        "$(kt_movable_on "$ISOLATED")"
[ "$(kt_allowed "$eh0")" = "$HOUSEKEEPING" ]
verdict $? "scsi_eh ($eh0) is on $HOUSEKEEPING (its CPUs minus the isolated ones)" "$(kt_allowed "$eh0")"
ksoft=$(pgrep -x ksoftirqd/2 | head -n1)
wait_until 10 jhas "$m" MESSAGE_ID=$MID_UNMOVABLE LOWLATD_KIND=kthread_affinity LOWLATD_OBJECT="$ksoft"
verdict $? "ksoftirqd/2 ($ksoft) is reported unmovable" "$(jtext "$m" SYSLOG_IDENTIFIER=lowlatd | grep -i kernel | tail -n 10)"
fields=$(jentries "$m" MESSAGE_ID=$MID_UNMOVABLE LOWLATD_OBJECT="$ksoft" | head -n1 | jfields)
grep -qx "LOWLATD_KTHREAD_NAME=ksoftirqd/2" <<< "$fields" && grep -q "^LOWLATD_ERROR=PF_NO_SETAFFINITY" <<< "$fields"
verdict $? "its entry has LOWLATD_KTHREAD_NAME=ksoftirqd/2 and PF_NO_SETAFFINITY as the reason" "$fields"
busctl call "${BUS[@]}" Reapply > /dev/null 2>&1
sleep 2
n_unmov=$(jcount "$m" MESSAGE_ID=$MID_UNMOVABLE LOWLATD_OBJECT="$ksoft")
[ "$n_unmov" = 1 ] && [ "$(kt_allowed "$ksoft")" = 2 ]
verdict $? "reported once, after a Reapply and 2 scans too ($n_unmov), and left on CPU 2" "$(kt_allowed "$ksoft")"
unmov=$(settings_in_state unmovable kthread_affinity)
[[ " ${unmov//$'\n'/ } " == *" $ksoft "* ]]
verdict $? "lowlatctl list shows kthread_affinity $ksoft unmovable ($(wc -w <<< "$unmov") unmovable kernel threads)" "$(lowlatctl list 2>&1 | grep kthread | head -n 20)"
m1=$(mark)
taskset -p -c 0-3 "$eh0" > /dev/null 2>&1
back() { [ "$(kt_allowed "$eh0")" = "$HOUSEKEEPING" ]; }
wait_until 10 back
verdict $? "taskset of scsi_eh ($eh0) back to 0-3 is undone by the scan (scan_interval = 1s; after $WAITED_MS ms)" \
        "$(kt_allowed "$eh0")"
jhas "$m1" MESSAGE_ID=$MID_CORRECTED LOWLATD_KIND=kthread_affinity LOWLATD_OBJECT="$eh0"
verdict $? "and the journal has the correction" "$(jtext "$m1" SYSLOG_IDENTIFIER=lowlatd | tail -n 5)"

# ----- 2: a kernel thread created afterwards --------------------------------------------
# lowlatd's isolated CPUs are 1-3 now: a new thread, which the kernel starts on 0-1, has
# to go to CPU 0. The scan is a minute: only the proc connector can explain a quick move.
# kthreadd itself is held on 0-1 ([kthread "kthreadd"]): where a new thread keeps the CPUs
# it inherits from kthreadd (6.12 does; 6.1 resets them to its housekeeping CPUs), moving
# kthreadd to CPU 0 would have the kernel start every new thread there, and there would be
# nothing left for lowlatd to move.
kt_config 1-3 "" '[kthread "kthreadd"]
cpus = 0-1'
out=$(timeout 60 systemctl reload lowlatd 2>&1)
verdict $? "systemctl reload with isolated = 1-3 (lowlatd's; the kernel's stays $ISOLATED) and a 60 s scan" "$out"
none_on_1_3() { [ -z "$(kt_movable_on 1-3 | grep -v '^2 ')" ] && [ "$(kt_allowed 2)" = 0-1 ]; }
wait_until 20 none_on_1_3
verdict $? "every movable kernel thread but kthreadd is off 1-3, and kthreadd is on 0-1 as its section says (after $WAITED_MS ms)" \
        "$(kt_movable_on 1-3)"
m2=$(mark)
corr0=$(prop Corrections | awk '{print $2}')
mon=/run/kt-drift-signals.txt
timeout 30 stdbuf -oL busctl monitor --match="type='signal',interface='org.lowlatd1.Manager',member='Drift'" > "$mon" 2>&1 &
mon_pid=$!
sleep 1
out=$(perl "$KT_TIMES" 1 scsi_eh_ 0 "write:$KT_ADD_HOST:1" 2>&1)
read -r tid name event_ms moved_ms _ <<< "$out"
note "created $name ($tid): connector event $event_ms ms after the fork, moved to CPU 0 $moved_ms ms after it"
# The scan is a minute away: a move within 1 s is the event's. The latency is the 200
# creations' figures below; under software emulation one cold sample is not a bound.
[ "$moved_ms" != - ] && awk -v t="$moved_ms" 'BEGIN { exit !(t <= 1000) }'
verdict $? "a kernel thread created afterwards ($name, $tid) is moved on the proc connector's event, not the 60 s scan: $moved_ms ms after its fork" \
        "$out
$(kt_allowed "$tid")
$(jtext "$m2" SYSLOG_IDENTIFIER=lowlatd | tail -n 10)"
wait_until 10 jhas "$m2" MESSAGE_ID=$MID_CORRECTED LOWLATD_KIND=kthread_affinity LOWLATD_OBJECT="$tid"
fields=$(jentries "$m2" MESSAGE_ID=$MID_DRIFT LOWLATD_OBJECT="$tid" | head -n1 | jfields)
jhas "$m2" MESSAGE_ID=$MID_CORRECTED LOWLATD_OBJECT="$tid" && grep -qx "LOWLATD_KTHREAD_NAME=$name" <<< "$fields" &&
        grep -qx "LOWLATD_EXPECTED=0" <<< "$fields" && grep -qx "_SYSTEMD_UNIT=lowlatd.service" <<< "$fields"
verdict $? "the journal has its drift (expected 0, LOWLATD_KTHREAD_NAME=$name) and its correction" "$fields
$(jtext "$m2" SYSLOG_IDENTIFIER=lowlatd | tail -n 10)"
sleep 1
kill "$mon_pid" 2>/dev/null
wait "$mon_pid" 2>/dev/null
corr1=$(prop Corrections | awk '{print $2}')
grep -q "STRING \"kthread_affinity\"" "$mon" && grep -q "STRING \"$tid\"" "$mon" && [ "${corr1:-0}" -gt "${corr0:-0}" ]
verdict $? "the bus says so: a Drift signal for kthread_affinity $tid, Corrections $corr0 -> $corr1" "$(head -n 40 "$mon")"

KT_N=${KT_N:-200}
t0=$(now_ms)
corr0=$(prop Corrections | awk '{print $2}')
perl "$KT_TIMES" "$KT_N" scsi_eh_ 0 "write:$KT_ADD_HOST:1" > /run/kt-times.txt 2>&1
rc=$?
took=$(( $(now_ms) - t0 ))
sleep 1
corr1=$(prop Corrections | awk '{print $2}')
moved=$(awk '$4 != "-" && $4 != "" { n++ } END { print n + 0 }' /run/kt-times.txt)
pct() { awk -v c="$1" '$c != "-" && $c ~ /^[0-9.]+$/ { print $c }' /run/kt-times.txt | sort -n |
        awk -v p="$2" '{ v[NR] = $1 } END { if (NR == 0) { print "-"; exit } i = int(p / 100 * (NR - 1) + 0.5) + 1; print v[i] }'; }
note "kernel thread created -> moved, $KT_N scsi_eh threads in $took ms (software emulation): p50 $(pct 4 50) ms, p99 $(pct 4 99) ms, max $(pct 4 100) ms; the proc connector event at a bare socket in the same run: p50 $(pct 3 50) ms, p99 $(pct 3 99) ms"
# Each was moved by lowlatd, not started there by the kernel: one correction each at least
# (their rescuers' unmovable reports are no corrections). A thread the proc connector
# reports is drift on a posture in place, so its move is a correction, not one of the
# AppliedSettings a start or a reload counts (the reload above moved the old threads).
[ $rc -eq 0 ] && [ "$moved" = "$KT_N" ] && [ $(( ${corr1:-0} - ${corr0:-0} )) -ge "$KT_N" ]
verdict $? "all $KT_N new kernel threads were moved ($moved; Corrections $corr0 -> $corr1), $(awk '$4 ~ /^[0-9.]+$/ && $4 <= 100 { n++ } END { print n + 0 }' /run/kt-times.txt) of them within 100 ms" \
        "$(grep -v '^[0-9]' /run/kt-times.txt | head; awk '$4 == "-" || $4 > 100' /run/kt-times.txt | head)"

# ----- 3: [kthread] policy ---------------------------------------------------------------
# The threads of the timing runs go (scsi_debug removes the last hosts added); scsi_eh_0
# stays, for restore to find as it was found.
echo "-$KT_N" > "$KT_ADD_HOST" 2>/dev/null; echo -1 > "$KT_ADD_HOST" 2>/dev/null
KT_SCAN=1s kt_config auto "" '[kthread "scsi_eh_*"]
policy = fifo
priority = 10'
m3=$(mark)
out=$(timeout 60 systemctl reload lowlatd 2>&1)
wait_until 10 jhas "$m3" MESSAGE_ID=$MID_FAILED LOWLATD_KIND=kthread_policy LOWLATD_OBJECT="$eh0"
err=$(jentries "$m3" MESSAGE_ID=$MID_FAILED LOWLATD_OBJECT="$eh0" LOWLATD_KIND=kthread_policy | head -n1 | jq -r '.LOWLATD_ERROR // empty')
[[ $err == *"RestrictRealtime=no"* ]]
verdict $? "under the shipped unit (RestrictRealtime=yes) policy = fifo fails once, saying why: $err" \
        "$out
$(jtext "$m3" SYSLOG_IDENTIFIER=lowlatd | tail -n 10)"
mkdir -p /run/systemd/system/lowlatd.service.d
printf '[Service]\nRestrictRealtime=no\n' > /run/systemd/system/lowlatd.service.d/50-realtime.conf
systemctl daemon-reload
out=$(timeout 120 systemctl restart lowlatd 2>&1)
fifo10() { chrt -p "$eh0" 2>/dev/null | grep -q "SCHED_FIFO" && chrt -p "$eh0" 2>/dev/null | grep -q "priority: 10"; }
wait_until 20 fifo10
verdict $? "with a drop-in RestrictRealtime=no: scsi_eh ($eh0) runs SCHED_FIFO 10" "$out
$(chrt -p "$eh0" 2>&1)"
m4=$(mark)
chrt -o -p 0 "$eh0"
wait_until 10 fifo10
verdict $? "chrt -o -p 0 is undone by the scan (after $WAITED_MS ms)" "$(chrt -p "$eh0" 2>&1)"
jhas "$m4" MESSAGE_ID=$MID_CORRECTED LOWLATD_KIND=kthread_policy LOWLATD_OBJECT="$eh0"
verdict $? "and the journal has the kthread_policy correction" "$(jtext "$m4" SYSLOG_IDENTIFIER=lowlatd | tail -n 5)"
out=$(lowlatctl restore 2>&1)
found() { [ "$(kt_allowed "$eh0")" = 0-3 ] && chrt -p "$eh0" 2>/dev/null | grep -q "SCHED_OTHER"; }
wait_until 10 found
verdict $? "lowlatctl restore puts scsi_eh ($eh0) back as found: CPUs 0-3 (taskset's, from before kthreads was on), SCHED_OTHER" \
        "$out
$(kt_allowed "$eh0"); $(chrt -p "$eh0" 2>&1)"

# Back to the unit as shipped and the base config, enforcing.
rm -f /run/systemd/system/lowlatd.service.d/50-realtime.conf
rmdir /run/systemd/system/lowlatd.service.d 2>/dev/null # the purge check finds any *lowlat* left
systemctl daemon-reload
write_config "rx_usecs = 60" ""
timeout 120 systemctl restart lowlatd
rmmod scsi_debug 2>/dev/null
[ "$(systemctl is-active lowlatd)" = active ] && [ "$(prop_s State)" = enforcing ]
verdict $? "lowlatd restarted as shipped with the base config, enforcing" "$(systemctl status --no-pager lowlatd 2>&1 | tail -n 5)"
