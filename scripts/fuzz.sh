#!/bin/sh
# Runs the libFuzzer harnesses of tests/fuzz/ for a given time each.
#
#   scripts/fuzz.sh [SECONDS] [HARNESS...]
#
# SECONDS defaults to 600; no HARNESS means every tests/fuzz/fuzz_<name>.c.
# Configures and builds a clang ASan+UBSan+libFuzzer build (build-fuzz/, or
# $FUZZ_BUILD_DIR), then runs each harness, one after the other, on a copy of
# its corpus (tests/fuzz/corpus/<name>/) in a work folder
# ($FUZZ_WORK_DIR, default <build>/fuzz-work/<name>/), so the repository's
# corpus is never written to. Prints per harness: executions, seconds, new
# inputs, crashes. A crash, leak, timeout or out-of-memory leaves its
# reproducer in the work folder; the script goes on with the next harness
# and exits 1 at the end, naming every reproducer.
#
# What the repository keeps is decided by hand: every reproducer (after the
# fix) goes into tests/fuzz/corpus/<name>/, named after what it found; new
# coverage may be added as a handful of minimized inputs, never the grown
# work corpus. FUZZ_MINIMIZE=1 merges the work corpus into
# <work>/minimized/ (libFuzzer -merge=1) to pick those from.
#
# Environment: FUZZ_BUILD_DIR, FUZZ_WORK_DIR, FUZZ_MAX_LEN (default 16384),
# FUZZ_RSS_MB (2048), FUZZ_TIMEOUT_S (per input, 10), FUZZ_MINIMIZE.
set -u

src=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-600}
[ $# -gt 0 ] && shift
build=${FUZZ_BUILD_DIR:-$src/build-fuzz}
case $build in /*) ;; *) build=$src/$build ;; esac
work_root=${FUZZ_WORK_DIR:-$build/fuzz-work}
max_len=${FUZZ_MAX_LEN:-16384}
rss_mb=${FUZZ_RSS_MB:-2048}
timeout_s=${FUZZ_TIMEOUT_S:-10}

case $seconds in
    '' | *[!0-9]*)
        echo "usage: $0 [SECONDS] [HARNESS...]" >&2
        exit 2
        ;;
esac

if [ $# -eq 0 ]; then
    set --
    for f in "$src"/tests/fuzz/fuzz_*.c; do
        n=$(basename "$f" .c)
        set -- "$@" "${n#fuzz_}"
    done
fi
for h in "$@"; do
    if [ ! -f "$src/tests/fuzz/fuzz_$h.c" ]; then
        echo "fuzz.sh: no harness tests/fuzz/fuzz_$h.c" >&2
        exit 2
    fi
done

targets=""
for h in "$@"; do
    targets="$targets fuzz_$h"
done
cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER=clang -DENABLE_SANITIZERS=ON \
    -DENABLE_FUZZ=ON >/dev/null || exit 1
# shellcheck disable=SC2086 # one word per target
cmake --build "$build" -j"$(nproc)" --target $targets >/dev/null || exit 1

# Sanitizer reports end the run; leaks count as crashes.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

failed=""
printf '%-12s %12s %8s %8s %8s  %s\n' harness execs seconds new crashes started
for h in "$@"; do
    work=$work_root/$h
    rm -rf "$work/corpus" "$work/artifacts"
    mkdir -p "$work/corpus" "$work/artifacts"
    cp "$src/tests/fuzz/corpus/$h/"* "$work/corpus/" 2>/dev/null
    bin=$build/tests/fuzz/fuzz_$h
    started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
    t0=$(date +%s)
    "$bin" -max_total_time="$seconds" -rss_limit_mb="$rss_mb" -timeout="$timeout_s" -max_len="$max_len" \
        -print_final_stats=1 -artifact_prefix="$work/artifacts/" "$work/corpus" >"$work/fuzz.log" 2>&1
    rc=$?
    t1=$(date +%s)
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/fuzz.log" | tail -n 1)
    new=$(sed -n 's/^stat::new_units_added: *//p' "$work/fuzz.log" | tail -n 1)
    crashes=$(find "$work/artifacts" -type f | wc -l)
    printf '%-12s %12s %8s %8s %8s  %s\n' "$h" "${execs:-?}" $((t1 - t0)) "${new:-?}" "$crashes" "$started"
    if [ "$rc" -ne 0 ] || [ "$crashes" -ne 0 ]; then
        for a in "$work"/artifacts/*; do
            [ -f "$a" ] && failed="$failed $a"
        done
        [ "$crashes" -eq 0 ] && failed="$failed $work/fuzz.log"
    fi
    if [ "${FUZZ_MINIMIZE:-0}" = 1 ]; then
        rm -rf "$work/minimized"
        mkdir -p "$work/minimized"
        "$bin" -merge=1 -max_len="$max_len" -rss_limit_mb="$rss_mb" "$work/minimized" "$work/corpus" \
            >"$work/merge.log" 2>&1
        echo "    minimized corpus: $work/minimized ($(find "$work/minimized" -type f | wc -l) inputs)"
    fi
done

if [ -n "$failed" ]; then
    echo "fuzz.sh: crashes (reproducers, with the log next to them):"
    for f in $failed; do
        echo "    $f"
    done
    exit 1
fi
exit 0
