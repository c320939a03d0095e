#!/usr/bin/env bash
# sw_perf.sh [--no-kkt] [BUILD_DIR] — speed of the software Metal device against the
# targets of ../shared/spec/swmetal.md ("Performance targets").
#
# The unit tests tests/unit/test_sw_perf.c measure the executor (fiber switch, barrier
# of 256 threads, simd collective, a kkt-shaped dispatch) but only check that the work
# was done: a test suite makes no timing assertions.  This benchmark runs those tests
# (build/gdnbench-tests sw_perf), reads the numbers they print, and sets them against
# the targets; then it times our kkt at B=1 T=4096 Hg=16 H=32 K=128 on the software
# device and on the cpu backend (target: sw within 10x of the CPU reference).
# --no-kkt leaves the kkt comparison out (about half a minute on 2 cores).
#
# Exit 0: every number within its target; 1: some number over its target;
# 2: could not run (missing build, a unit test failed, unparsable output).
set -u
kkt=1
if [ "${1:-}" = --no-kkt ]; then
    kkt=0
    shift
fi
build=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
tests="$root/$build/gdnbench-tests" gdn="$root/$build/gdnbench"
[ -x "$tests" ] && [ -x "$gdn" ] || { echo "sw_perf.sh: build first (make all): no $tests or $gdn" >&2; exit 2; }

out=$("$tests" sw_perf 2>&1)
if ! printf '%s\n' "$out" | grep -q '^unit: [1-9][0-9]* passed, 0 failed'; then
    printf '%s\n' "$out" >&2
    echo "sw_perf.sh: the sw_perf unit tests did not all pass; no numbers to report" >&2
    exit 2
fi

over=0
# row NAME VALUE UNIT TARGET: one line, and counts values over target (TARGET "-" = none)
row() {
    local verdict="information"
    if [ "$4" != - ]; then
        if awk -v v="$2" -v t="$4" 'BEGIN { exit !(v < t) }'; then verdict="within target < $4 $3"; else
            verdict="OVER target < $4 $3"
            over=1
        fi
    fi
    printf '  %-44s %10s %-3s  %s\n' "$1" "$2" "$3" "$verdict"
}
num() { printf '%s\n' "$out" | sed -n "s/^  $1/\\1/p" | head -n 1; }

fiber=$(num 'fiber switch: \([0-9.]*\) ns.*')
barrier=$(num 'barrier of 256 threads: \([0-9.]*\) us.*')
simd=$(num 'simd collective: \([0-9.]*\) ns per lane.*')
kkt_shape=$(num 'kkt-shaped dispatch .*: \([0-9.]*\) ms on.*')
overhead=$(num 'executor overhead.*, \([0-9.]*\) us per threadgroup.*')
for v in fiber barrier simd kkt_shape overhead; do
    [ -n "${!v}" ] || { echo "sw_perf.sh: no '$v' figure in the unit tests' output" >&2; exit 2; }
done

echo "software Metal device, $(uname -m), $(getconf _NPROCESSORS_ONLN 2>/dev/null || echo '?') cores"
row "fiber switch" "$fiber" ns 50
row "barrier of 256 threads" "$barrier" us 20
row "simd collective, per lane" "$simd" ns -
row "kkt-shaped dispatch, 2048 x 256 threads" "$kkt_shape" ms -
row "executor overhead per threadgroup" "$overhead" us -

if [ "$kkt" -eq 1 ]; then
    shape=(--B 1 --T 4096 --Hg 16 --H 32 --K 128)
    median() { # BACKEND ITERS: median time in us from the JSON report
        "$gdn" kkt "${shape[@]}" --backend "$1" --iters "$2" --warmup 1 --check none --quiet --json - 2>/dev/null |
            sed -n 's/^[[:space:]]*"median":[[:space:]]*\([0-9.e+-]*\),*$/\1/p' | head -n 1
    }
    sw=$(median sw 3)
    cpu=$(median cpu 5)
    [ -n "$sw" ] && [ -n "$cpu" ] || { echo "sw_perf.sh: kkt did not run on sw or cpu" >&2; exit 2; }
    ratio=$(awk -v s="$sw" -v c="$cpu" 'BEGIN { printf "%.1f", s / c }')
    row "kkt T=4096 H=32 K=128, sw median" "$(awk -v s="$sw" 'BEGIN { printf "%.1f", s / 1e3 }')" ms -
    row "kkt, cpu backend median" "$(awk -v s="$cpu" 'BEGIN { printf "%.1f", s / 1e3 }')" ms -
    row "kkt, sw / cpu" "$ratio" x 10
fi
exit "$over"
