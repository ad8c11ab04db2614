# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
# watchdog: quiet 150 s, text-patching (rtla timerlat: the timerlat tracer's probes)
# lowlatctl measure on the real guest kernel (issue 14, item 5), with isolcpus=2-3:
#  - with no --cpus it measures the isolated CPUs 2-3, with rtla timerlat where the kernel
#    has the timerlat tracer (not Debian 12's 6.1), else cyclictest; the report has both
#    CPUs and exit 0 (the figures are those of the emulation: only the report is checked);
#  - the result is in lowlatctl status and in the LastMeasurement property;
#  - cyclictest, asked for by name, runs with --laptop: /dev/cpu_dma_latency keeps what
#    lowlatd holds;
#  - with no tool in PATH it refuses with exit 69.
# Needs rtla and/or rt-tests in the image; without them the checks are TODO, saying so.
ms_tool=
if command -v rtla > /dev/null && grep -qw timerlat /sys/kernel/tracing/available_tracers 2>/dev/null; then
        ms_tool=timerlat
elif command -v cyclictest > /dev/null; then
        ms_tool=cyclictest
fi
note "kernel $(uname -r): available tracers: $(cat /sys/kernel/tracing/available_tracers 2>/dev/null || echo '?'); expected tool: ${ms_tool:-none}"

if [ -z "$ms_tool" ]; then
        todo "lowlatctl measure --duration 5" "neither rtla (with timerlat) nor cyclictest in the guest image"
else
        out=$(timeout 120 lowlatctl measure --duration 5 2>&1)
        rc=$?
        [ "$rc" = 0 ] && [[ $out == *"measured by $ms_tool"* ]] &&
                echo "$out" | grep -Eq '^ +2 +[0-9]+ ' && echo "$out" | grep -Eq '^ +3 +[0-9]+ '
        verdict $? "lowlatctl measure --duration 5: exit 0, CPUs 2 and 3 measured by $ms_tool" "exit $rc
$out"
        st=$(lowlatctl status 2>&1)
        [[ $st == *"Last measurement: $ms_tool"* ]] && [[ $st == *"CPU 2: min"* ]] && [[ $st == *"CPU 3: min"* ]]
        verdict $? "lowlatctl status shows the last measurement of CPUs 2 and 3" "$st"
        lm=$(prop LastMeasurement)
        [[ $lm == "(stta(uttttttb)a(ussst)) \"$ms_tool\""* ]]
        verdict $? "LastMeasurement on the bus: $ms_tool" "$lm"
fi

if command -v cyclictest > /dev/null; then
        # Read during the run: cyclictest's own request would end with it.
        dma_before=$(dma_latency)
        ms_out=$(mktemp)
        timeout 60 lowlatctl measure --tool cyclictest --cpus 2 --duration 3 > "$ms_out" 2>&1 &
        ms_pid=$!
        sleep 1.5
        dma_during=$(dma_latency)
        wait "$ms_pid"
        rc=$?
        [ "$rc" = 0 ] && [ "$dma_during" = "$dma_before" ]
        verdict $? "measure --tool cyclictest --cpus 2: exit 0, /dev/cpu_dma_latency during the run still $dma_before (--laptop)" \
                "exit $rc, during the run $dma_during
$(cat "$ms_out")"
        rm -f "$ms_out"
fi

ms_empty=$(mktemp -d)
ms_ctl=$(command -v lowlatctl)
out=$(PATH=$ms_empty "$ms_ctl" measure --duration 1 2>&1)
rc=$?
rmdir "$ms_empty"
[ "$rc" = 69 ] && [[ $out == *"no latency tool"* ]]
verdict $? "with no tool in PATH: refused, exit 69" "exit $rc
$out"
