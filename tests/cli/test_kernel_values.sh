#!/usr/bin/env bash
# test_kernel_values.sh — a kernel case's "value" buffers (scalars and arrays) and
# "struct" buffers are bound with setBytes, as the spec says and as MLX and llama.cpp
# bind theirs, up to Metal's 4 KiB limit for it; a larger value is bound as a buffer
# of its bytes.  A 4096-byte table goes by setBytes, an 8192-byte one as a buffer,
# both give exact sums; a read past a one-element value is a finding on its 4 bytes
# (the software device checks its copy of setBytes data as it checks buffers).
# Negative controls (by hand): a limit of 0 makes every value a buffer (the
# "(setBytes)" rows fail); a limit of 8192 sends the 8 KiB table by setBytes, which
# the software device refuses as Metal's validation does (exit 2).
. "$(dirname "$0")/lib.sh"
G=$GDNBENCH
need_sw "kernel values"
export GDNBENCH_CACHE_DIR="$TMPD/cache"
case_dir kvalues values.metal

# table_case NAME N: a table of N floats arange(0, 1), out[i] = 2i + N/2 for i < N/2.
table_case() {
    local half=$(($2 / 2))
    local table expect
    table=$(seq 0 $(($2 - 1)) | paste -sd, -)
    expect=$(seq 0 $((half - 1)) | awk -v h="$half" '{ if (NR > 1) printf ","; printf "%d", 2 * $1 + h }')
    cat >"$D/$1.json" <<JSON
{"case": 1, "name": "$1", "source": "values.metal", "function": "table_sum",
 "dispatch": {"grid": [$half], "threadgroup": [64]},
 "buffers": {"table": {"dtype": "float32", "value": [$table]},
             "out": {"dtype": "float32", "shape": [$half], "expect": {"value": [$expect], "atol": 0}},
             "half_n": {"dtype": "uint32", "value": $half}}}
JSON
}
table_case small 1024
table_case large 2048
expect_exit 0 "kernel values: a 4096-byte table gives exact sums" $G kernel "$D/small.json" --iters 2
expect_match "kernel values: ... bound with setBytes" "$OUT" 'table +buffer\(0\) +float32 +1024 +PASS +input \(setBytes\)'
expect_match "kernel values: a scalar goes by setBytes too" "$OUT" 'half_n +buffer\(2\) +uint32 +1 +PASS +input \(setBytes\)'
expect_exit 0 "kernel values: an 8192-byte table gives exact sums" $G kernel "$D/large.json" --iters 2
expect_match "kernel values: ... bound as a buffer (over setBytes' 4 KiB)" "$OUT" 'table +buffer\(0\) +float32 +2048 +PASS +input$'

cat >"$D/past.json" <<'JSON'
{"case": 1, "name": "past", "source": "values.metal", "function": "past_value",
 "dispatch": {"grid": [2], "threadgroup": [2]},
 "buffers": {"n": {"dtype": "uint32", "value": 7}, "out": {"dtype": "uint32", "shape": [2]}}}
JSON
expect_exit 2 "kernel values: a read past a one-element value is a finding" $G kernel "$D/past.json" --iters 1 \
    --sw-checks full
expect_match "kernel values: ... on the 4 bytes setBytes gave" "$OUT$ERR" \
    'out-of-bounds read on buffer\(0\) bytes 4\.\.7 \(past its end; it has 4 bytes\)'

# A "struct" goes by setBytes as well (struct_fields.metal: test_kernel_struct.sh).
case_kernel struct_fields.metal struct_fields.json
expect_exit 0 "kernel values: a struct by setBytes reads its fields exactly" $G kernel "$D/struct_fields.json" --iters 1
expect_match "kernel values: ... and says so" "$OUT" 'prm +buffer\([0-9]+\) +uint8 +[0-9]+ +PASS +input \(setBytes\)'
finish
