#!/usr/bin/env bash
# test_validate.sh — `gdnbench validate` on small kernels of our own
# (tests/cli/kernels/validate_cumsum.metal): the correct one passes, each planted bug
# is caught with the right kind of finding and pattern, unsupported shapes are
# reported but do not fail, the JSON lists every case, bad input is exit 2.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
K="$here/kernels/validate_cumsum.metal"

if ! "$GDNBENCH" info 2>/dev/null | grep -q '^  sw .*available:'; then
    skip_all "validate: the software device is not available here ($("$GDNBENCH" info 2>&1 | grep '^  sw'))"
fi

v() { "$GDNBENCH" validate cumsum --shader "$K" --function "$@"; }

expect_exit 0 "validate: a correct cumsum passes the default sweep" v cumsum_serial --json "$TMPD/ok.json"
expect_match "validate: the table ends with the summary" "$OUT" "13 cases: 13 passed, 0 failed.* -> PASS"
expect_match "validate: every run configuration is named" "$OUT" "inorder/inorder, reverse/reverse, random:1/random:2"
json=$(cat "$TMPD/ok.json" 2>/dev/null)
expect_match "validate: JSON has the validate section" "$json" '"validate":[[:space:]]*\{'
expect_match "validate: JSON summary counts every case" "$json" '"cases":[[:space:]]*13,'
expect_match "validate: JSON embeds the schema-1 record of each case" "$json" '"record":[[:space:]]*\{'
n_cases=$(printf '%s' "$json" | grep -c '"sweep":')
expect_match "validate: JSON lists 13 cases" "$n_cases" '^13$'

expect_exit 1 "validate: a dropped partial chunk fails" v cumsum_drop_tail --T 65,129
expect_match "validate: ... as unwritten elements in the tail" "$OUT" \
    "unwritten 2, NaN 0, Inf 0; first bad \(b=0, t=64, h=0\).*
 *pattern: the tail \(last partial chunk, t >= 64\)"

expect_exit 1 "validate: a race between threadgroups fails" v cumsum_tg_race --T 65,129 --profile realistic
expect_match "validate: ... as a device-memory write-write conflict" "$OUT" \
    "the kernel failed under schedule inorder.*found 1 distinct bug .*: device_write_conflict"
ww=$(printf '%s\n' "$OUT" | grep -m1 -A4 "device memory write-write conflict" | tr '\n' '|')
expect_match "validate: ... naming both writes' lines and source" "$ww" \
    "^ +device memory write-write conflict on buffer\(1\) bytes 512\.\.519 of 520 \(2 occurrences, 4 threads, 4 threadgroups\)\| +write +[^ ]*validate_cumsum\.metal:54  \`gc\[i\] = acc;\`\|.*\| +write +[^ ]*validate_cumsum\.metal:56  \`if \(t0 \+ BT < T\) gc\[.*\] = acc;\`\|"

expect_exit 1 "validate: a race hidden in atomics fails" "$GDNBENCH" validate cumsum \
    --shader "$here/kernels/validate_cumsum_atomic.metal" --function cumsum_atomic_race --T 65,129 --profile realistic
expect_match "validate: ... as outputs that depend on the threadgroup order" "$OUT" \
    "differs from the inorder run under schedule (reverse|random).*atomics, but beyond the parity tolerance"

expect_exit 1 "validate: a missing threadgroup barrier fails" v cumsum_no_barrier --T 65 --profile realistic
expect_match "validate: ... with the software device's diagnosis" "$OUT" \
    "the kernel failed under schedule inorder.*found 2 distinct bugs .*: uninitialized_read, threadgroup_race"
un=$(printf '%s\n' "$OUT" | grep -m1 -A1 "read of uninitialised threadgroup memory on 'stage'" | tr '\n' '|')
expect_match "validate: ... naming the uninitialised read's line" "$un" \
    "^ +read of uninitialised threadgroup memory on 'stage' \(line 66\).*\| +read +[^ ]*validate_cumsum\.metal:73  \`acc \+= stage\[t\];\`\|$"

expect_exit 1 "validate: a bf16 accumulator fails" v cumsum_bf16_acc --T 65 --profile realistic
expect_match "validate: ... against bf16-parity" "$OUT" "g_cumsum vs bf16-parity: .* elements outside"

expect_exit 1 "validate: a wrong stride for one head fails" v cumsum_head_stride --T 65 --profile realistic
expect_match "validate: ... with the pattern naming the head" "$OUT" "pattern: one head \(h=1 of 2\)"

# A uniform bias (every output scaled by 1 + 6e-7) keeps each element within the
# elementwise bounds: only the rel_l2 bound catches it, in validate and in a plain run.
expect_exit 1 "validate: a uniform bias within atol/rtol fails" v cumsum_biased --T 65,129 --profile realistic
expect_match "validate: ... on rel_l2 alone" "$OUT" \
    "g_cumsum vs bf16-parity: rel_l2 [0-9.e+-]+ exceeds 4e-07 \(max_abs [0-9.e+-]+; every element within atol/rtol\)"
expect_exit 1 "run: the same bias fails a plain run" "$GDNBENCH" cumsum --backend sw --shader "$K" --function cumsum_biased \
    --T 129 --H 2 --iters 1 --warmup 0
expect_match "run: ... with the rel_l2 bound named in the table" "$OUT" "g_cumsum +bf16-parity .* FAIL +\(rel_l2 [0-9.e+-]+ > 4e-07\)"

expect_exit 0 "validate: a kernel with float atomics whose bits follow the schedule passes" "$GDNBENCH" validate cumsum \
    --shader "$here/kernels/validate_cumsum_atomic.metal" --function cumsum_atomic --T 65 --profile realistic
expect_match "validate: ... with the differences reported as a note" "$OUT" \
    "note: g_cumsum differs from the inorder run under schedule reverse.*atomics; within the parity tolerance"
expect_no_match "validate: ... and the repeat of the inorder run is identical (atomics land in group order)" "$OUT" \
    "between two identical runs"

expect_exit 0 "validate: a shape the op refuses is unsupported, not failed" v cumsum_serial --T 65 --BT 32,64 \
    --profile realistic
expect_match "validate: ... and the table says why" "$OUT" "unsupported.*
 *cumsum refuses the shape: --BT 32"

expect_exit 1 "validate: nothing supported is not a pass" v cumsum_serial --T 65 --BT 32 --profile realistic
expect_exit 2 "validate: an unknown op is bad input" "$GDNBENCH" validate nosuchop
expect_exit 2 "validate: an unknown profile is bad input" v cumsum_serial --profile nosuch
expect_match "validate: ... naming the flag" "$ERR" "--profile 'nosuch' is unknown"
expect_exit 2 "validate: --shader FILE without the main kernel's default name is bad input" "$GDNBENCH" validate cumsum --shader "$K"
expect_match "validate: ... naming the kernel it lacks" "$ERR" "defines no kernel named chunk_local_cumsum_g_f32"
expect_exit 2 "validate: a T out of range is bad input" v cumsum_serial --T 0
expect_exit 2 "validate: a kernel that does not compile cannot run" v no_such_function --T 65
expect_exit 0 "validate --help" "$GDNBENCH" validate kkt --help
expect_match "validate --help lists the stress profiles" "$OUT" "g_very_neg +log decay around -20"

finish
