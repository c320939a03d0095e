#!/usr/bin/env bash
# test_watchdog.sh — the software device's watchdog (--sw-timeout, issue 32): a
# kernel that never terminates is stopped after the timeout and reported as a
# finding naming the lines its threads were running, in run and validate, with fast
# and full checks; the same loop fixed runs clean.  Kernels:
# tests/cli/kernels/watchdog.metal (cumsum ABI), lines marked "// @name".  The
# commands run under `timeout` only so that a broken watchdog fails instead of
# hanging the suite: nothing here asserts how long anything takes.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
K="$here/kernels/watchdog.metal"

if ! "$GDNBENCH" info 2>/dev/null | grep -q '^  sw .*available:'; then
    skip_all "watchdog: the software device is not available here ($("$GDNBENCH" info 2>&1 | grep '^  sw'))"
fi

line() { grep -n -- "// @$1\$" "$K" | cut -d: -f1; }
loop_lines="($(line loop)|$(line loop-body))"
run() { timeout 300 "$GDNBENCH" cumsum --shader "$K" --B 1 --T 65 --H 2 --iters 1 --warmup 0 "$@"; }

for checks in fast full; do
    expect_exit 2 "watchdog: a kernel that loops forever is stopped ($checks checks)" run --function loop_forever \
        --sw-checks "$checks" --sw-timeout 1 --json "$TMPD/stuck-$checks.json"
    expect_match "watchdog: ... as a device fault naming the watchdog and the timeout ($checks)" "$ERR" \
        "kernel 'loop_forever': .*dispatch stopped by the watchdog: still running after 1 s \(--sw-timeout SECONDS\)"
    # Any of the sampled places names the loop's line, fast or full checks: a thread
    # stopped inside the full checks' hooks is sampled at the kernel's call into them
    # (fault.c's sw_fault_kernel_pc), not at the kernel's first line or none.
    at=$(printf '%s\n' "$OUT" | grep -E '^ +at +')
    expect_match "watchdog: ... at a line of the loop, with its source text ($checks)" "$at" \
        "^ +at +[^ ]*watchdog\.metal:$loop_lines  \`.*// @loop(-body)?\`$"
    expect_match "watchdog: ... naming the stuck thread: index 0 of its threadgroup ($checks)" "$OUT" \
        "thread_position_in_grid \(0,[01],0\), threadgroup \(0,[01],0\), thread_index_in_threadgroup 0"
    json=$(tr -d ' \t\n' < "$TMPD/stuck-$checks.json" 2>/dev/null)
    expect_match "watchdog: ... and the JSON record has it as a timeout finding ($checks)" "$json" \
        "\"findings\":\[\{\"kind\":\"timeout\",\"kernel\":\"loop_forever\","
    expect_match "watchdog: ... with the line the at-line names ($checks)" "$json" "\"line\":$loop_lines,"
done

# The negative control: the loop fixed ends, and nothing is reported.
expect_exit 0 "watchdog: the fixed loop runs clean under the same timeout" run --function loop_fixed --sw-timeout 1
expect_exit 0 "watchdog: ... and with full checks" run --function loop_fixed --sw-timeout 1 --sw-checks full

# validate stops each case's stuck dispatch and goes on to the next case.
expect_exit 1 "watchdog: validate fails the looping kernel's case" timeout 300 "$GDNBENCH" validate cumsum \
    --shader "$K" --function loop_forever --B 1 --T 65 --H 2 --profile realistic --sw-timeout 1
expect_match "watchdog: ... naming the watchdog's finding" "$OUT" "timeout"
expect_match "watchdog: ... at the loop's line" "$OUT" "watchdog\.metal:$loop_lines"

# The option in run, validate and suite; bad values are bad input.
expect_exit 2 "watchdog: --sw-timeout -1 is bad input" run --function loop_fixed --sw-timeout -1
expect_match "watchdog: ... naming the flag and the range" "$ERR" "--sw-timeout -1 is out of range"
expect_exit 2 "watchdog: --sw-timeout x is bad input in suite too" "$GDNBENCH" suite smoke --sw-timeout x
expect_match "watchdog: ... naming the flag" "$ERR" "sw-timeout"
expect_exit 0 "watchdog: run's help documents the option and its default" "$GDNBENCH" cumsum --help
expect_match "watchdog: ... (run)" "$OUT" "--sw-timeout SECONDS .*watchdog"
expect_exit 0 "watchdog: validate's help too" "$GDNBENCH" validate cumsum --help
expect_match "watchdog: ... (validate)" "$OUT" "--sw-timeout SECONDS .*watchdog"

# ---- kernel cases take the same flags (gdnbench kernel --sw-timeout) ----
cat > "$TMPD/loop.json" <<JSON
{"case": 1, "name": "loop_forever", "source": "$K", "function": "loop_forever",
 "dispatch": {"threadgroups": [1, 2, 2], "threadgroup": [64, 1, 1]},
 "buffers": {"g": {"dtype": "float32", "shape": [130], "init": {"arange": [0, 1]}},
             "gc": {"dtype": "float32", "shape": [130], "init": "zeros"},
             "p": {"dtype": "uint32", "value": [1, 65, 2, 64, 2]}}}
JSON
expect_exit 2 "watchdog: a kernel case that loops forever is stopped (gdnbench kernel --sw-timeout)" \
    timeout 300 "$GDNBENCH" kernel "$TMPD/loop.json" --iters 1 --warmup 0 --sw-timeout 1
expect_match "watchdog: ... naming the loop's line" "$OUT$ERR" "watchdog\.metal:($loop_lines)"
sed 's/loop_forever/loop_fixed/g' "$TMPD/loop.json" > "$TMPD/fixed.json"
expect_exit 0 "watchdog: ... and its fixed twin runs clean" timeout 300 "$GDNBENCH" kernel "$TMPD/fixed.json" \
    --iters 1 --warmup 0 --sw-timeout 1
expect_exit 2 "watchdog: gdnbench kernel --sw-timeout -1 is bad input" "$GDNBENCH" kernel "$TMPD/fixed.json" \
    --sw-timeout -1
expect_match "watchdog: ... naming the flag and the range" "$ERR" "--sw-timeout -1 is out of range"

finish
