#!/usr/bin/env bash
# test_barriers.sh — barrier semantics in the race checks (issue 32 item 3): a
# threadgroup barrier orders memory only in the address spaces its mem_flags name
# (mem_none: execution only), simdgroup_barrier only its own simdgroup; a race across
# a barrier that lacks the flag names that barrier and the flag it needs.  Each rule's
# kernel and its fixed twin: tests/cli/kernels/barriers.metal (cumsum ABI), lines
# marked "// @name".
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
K="$here/kernels/barriers.metal"

if ! "$GDNBENCH" info 2>/dev/null | grep -q '^  sw .*available:'; then
    skip_all "barriers: the software device is not available here ($("$GDNBENCH" info 2>&1 | grep '^  sw'))"
fi

line() { grep -n -- "// @$1\$" "$K" | cut -d: -f1; }
full() { "$GDNBENCH" cumsum --shader "$K" --B 1 --T 65 --H 2 --iters 1 --warmup 0 --sw-checks full --function "$@"; }

expect_exit 2 "barriers: threadgroup_barrier(mem_none) between a threadgroup write and another thread's read is a race" \
    full scan_mem_none --json "$TMPD/none.json"
expect_match "barriers: ... naming the barrier, its flags and the flag it needs" "$OUT" \
    "threadgroup memory race on 'stage' .*: the barrier at line $(line bar-none) between them, threadgroup_barrier\(mem_flags::mem_none\), orders execution but not threadgroup memory: it needs mem_flags::mem_threadgroup"
expect_match "barriers: ... the write's line" "$OUT" "write +[^ ]*barriers\.metal:$(line none-store) "
expect_match "barriers: ... the read's line" "$OUT" "read +[^ ]*barriers\.metal:$(line none-load) "
expect_match "barriers: ... and the JSON's detail says it too" "$(tr -d ' \t\n' < "$TMPD/none.json")" \
    "\"kind\":\"threadgroup_race\".*\"detail\":\"thebarrieratline$(line bar-none)betweenthem,threadgroup_barrier\(mem_flags::mem_none\)"

expect_exit 2 "barriers: mem_device does not order threadgroup memory" full scan_mem_device
expect_match "barriers: ... named at its line" "$OUT" \
    "the barrier at line $(line bar-device) between them, threadgroup_barrier\(mem_flags::mem_device\), orders execution but not threadgroup memory"

expect_exit 2 "barriers: simdgroup_barrier does not order another simdgroup's threadgroup writes" full scan_simd_barrier
expect_match "barriers: ... a race on the staged bytes of simdgroup 1 (threads 32..63)" "$OUT" \
    "threadgroup memory race on 'stage' \(line [0-9]+\) bytes 128\.\.255 of 256"
expect_match "barriers: ... naming the simdgroup_barrier, what it orders and what is needed" "$OUT" \
    "the simdgroup_barrier or simd function at line $(line bar-simd) between them orders only its own simdgroup \(simdgroups 1 and 0 here\): it needs threadgroup_barrier\(mem_flags::mem_threadgroup\)"

expect_exit 2 "barriers: mem_threadgroup does not order device memory" full scan_device_tg_barrier
expect_match "barriers: ... a write-write conflict naming the barrier and mem_device" "$OUT" \
    "device memory write-write conflict on buffer\(1\) .*: the barrier at line $(line bar-tg) between them, threadgroup_barrier\(mem_flags::mem_threadgroup\), orders execution but not device memory: it needs mem_flags::mem_device"
expect_match "barriers: ... between the staging write and the sum's write" "$OUT" \
    "write +[^ ]*barriers\.metal:$(line dev-sum) "

# The negative controls: the same kernels with the barrier that orders the memory.
expect_exit 0 "barriers: the threadgroup scan with mem_threadgroup is clean" full scan_fixed
expect_exit 0 "barriers: the device scan with mem_device is clean" full scan_device_fixed

finish
