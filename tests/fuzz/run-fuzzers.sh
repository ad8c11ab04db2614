#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Builds the libFuzzer targets in tests/fuzz/ with clang (meson's compiler may be gcc, which
# has no libFuzzer) and runs each for a bounded time on a copy of its seed corpus.
#
#   run-fuzzers.sh [TARGET...]      targets: audit busaddr checkstream config cpuset ethtool interrupts irqbalance measure measurement netlink noise originals procconn sysfs systemd task util (default: all)
#
# What each reads (fuzz-TARGET.c says more, and what it checks):
#   audit        the audit on a fake tree: /proc/cmdline (isolcpus= and the rest), the kernel
#                release and its config, an application's /proc/PID/status and environ
#   busaddr      the system bus's address (DBUS_SYSTEM_BUS_ADDRESS, %XX escapes)
#   checkstream  the Check() child's stream of findings (audit/finding-stream.c)
#   config       the configuration files
#   cpuset       CPU lists and masks
#   ethtool      ethtool netlink replies, ACKs, extended ACKs and monitor notifications
#   interrupts   /proc/interrupts
#   irqbalance   irqbalance's answers and socket names
#   measure      the latency tools' reports (lowlatctl measure)
#   measurement  RecordMeasurement() and RecordMeasurementHistogram() arguments
#   netlink      netlink_drain() and the rtnetlink link messages, extended ACKs
#   noise        /proc/interrupts, softirqs, schedstat and stat as the noise counters read them
#   originals    the originals file restore reads back
#   procconn     the proc connector's messages
#   sysfs        [sysfs] path rules and choice lists
#   systemd      PID 1's AllowedCPUs and ControlGroup replies
#   task         /proc/PID/stat and policy texts
#   util         the text helpers (booleans, durations, UTF-8)
#
# Environment: FUZZ_SECONDS (per target, default 30; 0 only replays the seed corpus),
# LOWLATD_FUZZ=0 (skip), FUZZ_CC (default: the first clang found), FUZZ_OUT (where binaries,
# logs and crash inputs go and stay; default <build>/tests/fuzz/out, else a temporary
# directory kept only when something failed), LOWLATD_SOURCE_ROOT, LOWLATD_BUILD_ROOT.
# Exit status: 0 nothing found; 1 a crash, leak, timeout or out-of-memory (the input is kept
# and its path printed), or a build failure; 77 skipped (no clang or libFuzzer runtime).
set -u -o pipefail

source_root=${LOWLATD_SOURCE_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
build_root=${LOWLATD_BUILD_ROOT:-}
fuzz_dir=$source_root/tests/fuzz
seconds=${FUZZ_SECONDS:-30}
all_targets=(audit busaddr checkstream config cpuset ethtool interrupts irqbalance measure measurement netlink noise originals procconn sysfs systemd task util)
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=("${all_targets[@]}")

# Every target links all of lib/ (the parsers call into each other, and lib/ grows), with
# the libraries lib/ depends on; whichever of these pkg-config knows.
lib_dependencies=(libsystemd libnl-3.0 libnl-route-3.0 libnl-genl-3.0 libudev)

skip() {
        echo "SKIP: $*"
        exit 77
}

if [ "${LOWLATD_FUZZ:-1}" = 0 ]; then
        skip "LOWLATD_FUZZ=0"
fi
case $seconds in
'' | *[!0-9]*) echo "FUZZ_SECONDS='$seconds' is not a whole number of seconds"; exit 1 ;;
esac
for t in "${targets[@]}"; do
        if [ ! -f "$fuzz_dir/fuzz-$t.c" ]; then
                echo "unknown target '$t' (have: ${all_targets[*]})"
                exit 1
        fi
done

cc=${FUZZ_CC:-}
if [ -z "$cc" ]; then
        for candidate in clang clang-19 clang-18 clang-17 clang-16 clang-15 clang-14; do
                if command -v "$candidate" >/dev/null; then
                        cc=$candidate
                        break
                fi
        done
fi
if [ -z "$cc" ] || ! command -v "$cc" >/dev/null; then
        skip "no clang (libFuzzer needs it; apt install clang)"
fi
command -v pkg-config >/dev/null || skip "no pkg-config"
present=()
for d in "${lib_dependencies[@]}"; do
        pkg-config --exists "$d" && present+=("$d")
done
read -r -a dep_cflags <<<"$(pkg-config --cflags "${present[@]}")"
read -r -a dep_libs <<<"$(pkg-config --libs "${present[@]}")"

if [ -n "${FUZZ_OUT:-}" ]; then
        out=$FUZZ_OUT
        keep_out=1
elif [ -n "$build_root" ]; then
        out=$build_root/tests/fuzz/out
        keep_out=1
else
        out=$(mktemp -d "${TMPDIR:-/tmp}/lowlatd-fuzz.XXXXXX") || exit 1
        keep_out=0
fi
# Results of an earlier run would be mistaken for this one's.
rm -rf "$out/artifacts" "$out/corpus" "$out/logs" "$out/obj"
mkdir -p "$out/artifacts" "$out/corpus" "$out/logs" "$out/obj" || exit 1

# shellcheck disable=SC2054 # the commas belong to the options
sanitize=(-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all)
cflags=(-g -O1 -fno-omit-frame-pointer -std=gnu11 -D_GNU_SOURCE -I "$source_root/lib")
[ -n "$build_root" ] && [ -f "$build_root/build-config.h" ] && cflags+=(-I "$build_root")
warnings=(-Wall -Wextra -Wshadow -Wwrite-strings -Wundef -Wmissing-prototypes -Wno-unused-parameter)

printf '#include <stddef.h>\n#include <stdint.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void) d; (void) n; return 0; }\n' >"$out/obj/probe.c"
if ! "$cc" "${sanitize[@]}" "$out/obj/probe.c" -o "$out/obj/probe" >"$out/logs/probe.log" 2>&1; then
        sed 's/^/    /' "$out/logs/probe.log" | head -5
        skip "$cc cannot link -fsanitize=fuzzer,address,undefined (install libclang-rt-dev for it)"
fi

echo "building with $($cc --version | head -1)"
objects=()
pids=()
for f in "$source_root"/lib/*.c "$source_root"/lib/*/*.c; do
        [ -e "$f" ] || continue
        o=$out/obj/$(printf %s "${f#"$source_root"/lib/}" | tr / -); o=${o%.c}.o
        # lib/ is compiled without -Werror: a warning only this clang gives must not hide a
        # finding. The harnesses are held to -Werror.
        "$cc" "${cflags[@]}" -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all \
                "${dep_cflags[@]}" -c "$f" -o "$o" 2>"$o.log" &
        pids+=($!)
        objects+=("$o")
done
for i in "${!pids[@]}"; do
        if ! wait "${pids[$i]}"; then
                cat "${objects[$i]}.log"
                echo "FAIL: cannot compile ${objects[$i]##*/}"
                exit 1
        fi
done
for t in "${targets[@]}"; do
        extra=()
        # fuzz-config sees every key the reader hands the key table.
        # shellcheck disable=SC2054
        [ "$t" = config ] && extra=(-Wl,--wrap=config_key_find)
        # fuzz-measure: lowlatctl's readers of the latency tools' reports live in lowlatctl/,
        # the tools' names in common/.
        # fuzz-busaddr: the bus address is read in common/.
        # fuzz-audit builds its fake host with the unit tests' tree helpers.
        [ "$t" = audit ] && extra=(-I "$source_root/tests/unit")
        [ "$t" = busaddr ] && extra=(-I "$source_root/common" "$source_root/common/bus-address.c")
        # fuzz-measurement: RecordMeasurement's readers live in daemon/, compiled into it.
        [ "$t" = measurement ] && extra=(-I "$source_root/daemon" -I "$source_root/common"
                "$source_root/daemon/measurement-histogram.c" "$source_root/common/measure-tool.c")
        [ "$t" = measure ] && extra=(-I "$source_root/lowlatctl" -I "$source_root/common"
                "$source_root/lowlatctl/measure.c" "$source_root/common/measure-tool.c" -lm)
        # fuzz-ethtool compiles host/ethtool.c itself, its socket calls swapped for the input.
        linked=()
        for o in "${objects[@]}"; do
                [ "$t" = ethtool ] && [ "$o" = "$out/obj/host-ethtool.o" ] && continue
                linked+=("$o")
        done
        if ! "$cc" "${cflags[@]}" "${warnings[@]}" -Werror "${sanitize[@]}" -I "$fuzz_dir" \
                "$fuzz_dir/fuzz-$t.c" "${dep_cflags[@]}" "${linked[@]}" "${extra[@]}" "${dep_libs[@]}" -o "$out/fuzz-$t"; then
                echo "FAIL: cannot build fuzz-$t"
                exit 1
        fi
done

# meson test sets its own ASAN_OPTIONS (abort_on_error=1, ...); the fuzzer's want differs.
export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:abort_on_error=0:allocator_may_return_null=0:symbolize=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:symbolize=1
unset MALLOC_PERTURB_

failed=0
summary=()
for t in "${targets[@]}"; do
        corpus=$out/corpus/$t
        log=$out/logs/fuzz-$t.log
        mkdir -p "$corpus"
        [ -d "$fuzz_dir/corpus/$t" ] && cp -r "$fuzz_dir/corpus/$t/." "$corpus/"
        if [ "$seconds" -eq 0 ]; then
                budget=(-runs=0)
        else
                budget=(-max_total_time="$seconds")
        fi
        dict=()
        [ -f "$fuzz_dir/$t.dict" ] && dict=(-dict="$fuzz_dir/$t.dict")
        echo "fuzz-$t: running ${seconds}s on $(find "$corpus" -type f | wc -l) seed inputs"
        # libFuzzer exits 77 on a crash unless told otherwise, which meson reads as a skip.
        "$out/fuzz-$t" "${budget[@]}" -timeout=10 -rss_limit_mb=1024 -print_final_stats=1 \
                -error_exitcode=1 -timeout_exitcode=1 -artifact_prefix="$out/artifacts/$t-" \
                "${dict[@]}" "$corpus" >"$log" 2>&1
        rc=$?
        executions=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
        mapfile -t findings < <(find "$out/artifacts" -maxdepth 1 -type f -name "$t-*" | sort)
        n_findings=${#findings[@]}
        line="fuzz-$t: ${executions:-?} executions, $n_findings crashes, corpus $(find "$corpus" -type f | wc -l) inputs"
        if [ $rc -ne 0 ] || [ "$n_findings" -ne 0 ]; then
                failed=1
                line="$line: FAILED (exit $rc)"
                echo "$line"
                # The sanitizer's report and the invariant that broke.
                grep -E -m 20 'invariant violated|ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:|SUMMARY:|^    #[0-9]+ ' "$log" | sed 's/^/    /'
                for f in "${findings[@]}"; do
                        echo "    input kept: $f ($(stat -c %s "$f") bytes)"
                        [ "$(stat -c %s "$f")" -le 2048 ] && echo "    base64: $(base64 -w0 "$f")"
                done
                echo "    full log: $log"
                keep_out=1
        else
                echo "$line"
        fi
        summary+=("$line")
done

echo
echo "summary (${seconds}s per target, $cc):"
printf '  %s\n' "${summary[@]}"
if [ $keep_out -eq 0 ]; then
        rm -rf "$out"
else
        echo "binaries, logs and corpora: $out (reproduce: $out/fuzz-TARGET FILE)"
fi
exit $failed
