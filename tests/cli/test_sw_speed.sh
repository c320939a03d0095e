#!/usr/bin/env bash
# test_sw_speed.sh — scripts/bench/sw_speed.sh, the yardstick of the software device's
# speed, still runs: a row per op asked for (sw time, parity-reference time, ratio),
# micro.copy against a host memcpy, and exit 2 for a bad option or an op that cannot
# run.  Two cheap ops, so that it stays a few seconds; the numbers are not judged.
source "$(dirname "$0")/lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
script=$root/scripts/bench/sw_speed.sh
bdir=$(cd "$(dirname "$GDNBENCH")" && pwd)

expect_exit 0 "sw_speed: cumsum and decode, with micro.copy" bash "$script" --ops cumsum,decode --no-numpy "$bdir"
expect_match "sw_speed: says the machine and the load" "$OUT" '^sw_speed.sh: .* cores, load average'
expect_match "sw_speed: a cumsum row with times and a ratio" "$OUT" $'\n''cumsum +[0-9]+\.[0-9]+ +[0-9]+\.[0-9]+ +[0-9]+\.[0-9]+x'
expect_match "sw_speed: a decode row with times and a ratio" "$OUT" $'\n''decode +[0-9]+\.[0-9]+ +[0-9]+\.[0-9]+ +[0-9]+\.[0-9]+x'
expect_match "sw_speed: micro.copy against memcpy" "$OUT" 'micro\.copy 16 MiB float4: sw best [0-9.]+ s \([0-9.]+ GB/s\), host memcpy .*: sw at [0-9.]+% of memcpy'
expect_exit 0 "sw_speed: --iters 3 times a median after a warmup" bash "$script" --ops cumsum --iters 3 --no-copy --no-numpy "$bdir"
expect_match "sw_speed: --iters says so" "$OUT" 'median of 3 iterations after 1 warmup per op'
expect_match "sw_speed: --iters 3 still gives the cumsum row" "$OUT" $'\n''cumsum +[0-9]+\.[0-9]+ +[0-9]+\.[0-9]+ +[0-9]+\.[0-9]+x'
expect_exit 2 "sw_speed: --iters 0" bash "$script" --iters 0 --ops cumsum "$bdir"
expect_match "sw_speed: the error names --iters" "$ERR" "iters needs a whole number"
expect_exit 2 "sw_speed: an unknown option" bash "$script" --bogus
expect_match "sw_speed: the error names it" "$ERR" "unknown option '--bogus'"
expect_exit 2 "sw_speed: an op that does not exist" bash "$script" --ops no_such_op --no-copy --no-numpy "$bdir"
expect_match "sw_speed: the error names the op" "$ERR" 'no_such_op did not run'
expect_exit 2 "sw_speed: a build directory without gdnbench" bash "$script" --ops cumsum "$TMPD/nowhere"
expect_match "sw_speed: the error says to build" "$ERR" 'build first'
finish
