#!/usr/bin/env bash
# test_pipeline_limits.sh — the pipeline limits the software device enforces as Metal
# does (issue 32): a kernel's [[max_total_threads_per_threadgroup(N)]] (either
# spelling, N an expression) is its pipeline's maxTotalThreadsPerThreadgroup, and a
# run dispatching more threads per threadgroup fails naming both numbers; the same
# scan declaring the op's 64 runs clean.  Kernels: tests/cli/kernels/limits.metal
# (cumsum ABI).  The device's own refusals (dispatch past the pipeline's limit, a
# threadgroup memory length not a multiple of 16) are sw_objc_pipeline_limits.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
K="$here/kernels/limits.metal"

if ! "$GDNBENCH" info 2>/dev/null | grep -q '^  sw .*available:'; then
    skip_all "pipeline limits: the software device is not available here ($("$GDNBENCH" info 2>&1 | grep '^  sw'))"
fi

run() { "$GDNBENCH" cumsum --shader "$K" --B 1 --T 65 --H 2 --iters 1 --warmup 0 --function "$@"; }

expect_exit 2 "pipeline limits: 64 threads per threadgroup for a kernel declaring at most 32 is an error" \
    run scan_capped_32
expect_match "pipeline limits: ... naming both numbers" "$OUT$ERR" \
    "scan_capped_32: 64 threads per threadgroup exceed the pipeline's limit of 32"
expect_exit 0 "pipeline limits: the control, declaring 64, runs clean" run scan_capped_64
expect_exit 0 "pipeline limits: gdnbench compile still lists both" "$GDNBENCH" compile "$K"
expect_match "pipeline limits: ... (the attribute is no compile error)" "$OUT" "scan_capped_32"

finish
