#!/usr/bin/env bash
# test_checks_hint.sh — a failed output check on the software device without full
# checks ends with one line pointing at --sw-checks full / gdnbench validate (issue
# 32 item 5): the usual causes of a wrong result there (races, out-of-bounds accesses)
# are what full checks name.  Kernel: head_collapse of tests/cli/kernels/findings.metal
# (threadgroups writing the same head: wrong outputs under fast checks).
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
K="$here/kernels/findings.metal"

if ! "$GDNBENCH" info 2>/dev/null | grep -q '^  sw .*available:'; then
    skip_all "checks hint: the software device is not available here ($("$GDNBENCH" info 2>&1 | grep '^  sw'))"
fi

run() { "$GDNBENCH" cumsum --B 1 --T 65 --H 2 --iters 1 --warmup 0 "$@"; }
hint="^hint: an output check failed with the software device's fast checks: run again with --sw-checks full \(or gdnbench validate cumsum\) to look for races, out-of-bounds accesses and uninitialised reads$"

expect_exit 1 "checks hint: a wrong kernel fails its output check with fast checks" \
    run --shader "$K" --function head_collapse --sw-checks fast
expect_match "checks hint: ... and the run ends with the hint, one line on stderr" "$(printf '%s\n' "$ERR" | tail -1)" "$hint"
n=$(printf '%s\n' "$ERR" | grep -c '^hint:')
expect_match "checks hint: ... once" "$n" '^1$'
expect_exit 1 "checks hint: --quiet still fails" run --shader "$K" --function head_collapse --quiet
expect_match "checks hint: ... and still hints (default checks are fast)" "$ERR" "$hint"

# Negative controls: full checks already ran (they name the bug instead), and a
# passing run says nothing.
expect_exit 2 "checks hint: with full checks the device names the bug" \
    run --shader "$K" --function head_collapse --sw-checks full
n=$(printf '%s\n' "$OUT$ERR" | grep -c '^hint:')
expect_match "checks hint: ... and gives no hint" "$n" '^0$'
expect_exit 0 "checks hint: our kernel passes" run
n=$(printf '%s\n' "$OUT$ERR" | grep -c '^hint:')
expect_match "checks hint: ... with no hint" "$n" '^0$'

finish
