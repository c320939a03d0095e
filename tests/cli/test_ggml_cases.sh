#!/usr/bin/env bash
# test_ggml_cases.sh — llama.cpp's ggml-metal kernels (issue 36) run from the case
# files in fixtures/cases/ggml/ (README there) on the software device, launched as
# ggml-metal's host code launches them, and match expected outputs computed
# independently by scripts/make_cases.py: an add with src1 broadcast over rows, an
# RMS norm, a matrix-vector product with src0 broadcast over batches, a softmax with
# mask, ALiBi and sinks.  Each also under `gdnbench validate` (every schedule and
# poison pattern, full checks): three pass; kernel_soft_max's is a finding of the
# device in llama.cpp's own code (a write to threadgroup memory after an execution-only
# barrier, mem_none, that the read before it needs ordered), pinned here so a change
# of the barrier checks shows.  The kernel source is read in place from
# ../shared/msl_corpus/ggml: without it every check is a SKIP with the reason.
# Negative controls: one expected value perturbed in a temporary copy fails its case
# (exit 1); the ggml_metal_kargs_* structs (C typedefs) are laid out by
# reflection, so a field that is not in the struct is refused naming its real fields.
. "$(dirname "$0")/lib.sh"
G=$GDNBENCH
root=$(cd "$(dirname "$0")/../.." && pwd)
cases=$root/fixtures/cases/ggml
shared=$root/../shared/msl_corpus/ggml

if ! "$G" info 2>/dev/null | grep -Eq '^ *sw +available'; then
    skip_all "ggml cases: this build has no software Metal device (gdnbench info)"
fi

# ggml's kernel arguments are C typedefs of unnamed (or tagged) structs: their fields
# are laid out by reflection like `struct NAME {` ones (runs without ../shared too).
cat >"$TMPD/td.json" <<'JSON'
{"case": 1, "dispatch": {"grid": [3], "threadgroup": [3]},
 "source": {"text": "#include <metal_stdlib>\nusing namespace metal;\ntypedef struct { int32_t a; float b[3]; uint64_t c; } kargs_a;\ntypedef struct kargs_tag { int16_t d; float e; } kargs_b;\nkernel void td(constant kargs_a & p [[buffer(0)]], constant kargs_b & q [[buffer(1)]],\n    device float *o [[buffer(2)]], uint i [[thread_position_in_grid]]) {\n  o[i] = p.a + p.b[i] + float(p.c) + q.d * q.e;\n}\n"},
 "function": "td",
 "buffers": {"p": {"struct": {"a": 1, "b": [10, 20, 30], "c": 100}}, "q": {"struct": {"d": 2, "e": 0.5}},
             "o": {"dtype": "float32", "shape": [3], "expect": {"value": [112, 122, 132], "atol": 0}}}}
JSON
expect_exit 0 "typedef'd structs (unnamed and tagged) are laid out by field name" $G kernel "$TMPD/td.json"

[ -d "$cases" ] || skip_all "no fixtures/cases/ggml in this tree"
[ -d "$shared" ] || skip_all "ggml cases: need llama.cpp's ggml-metal.metal at ../shared/msl_corpus/ggml (absent)"

n=0
for f in "$cases"/*.json; do
    name=$(basename "$f" .json)
    n=$((n + 1))
    expect_exit 0 "$name passes on the software device" $G kernel "$f"
    expect_match "$name: every buffer passes" "$OUT" '^PASS$'
    expect_match "$name: dst matches the expected values" "$OUT" '^  dst +buffer\([0-9]+\) +float32 +[0-9]+ +PASS +expect:'
done
expect_exit 0 "suite fixtures/cases/ggml passes" $G suite "$cases"
expect_match "suite fixtures/cases/ggml: all $n pass" "$OUT" "$n cases, $n passed, 0 failed"

for name in ggml_add ggml_mul_mv; do
    expect_exit 0 "$name passes gdnbench validate" $G validate "$cases/$name.json"
done
# validate's full checks include the numeric ones: kernel_rms_norm computes its fused
# operands' pointers even when nothing is fused, as `i03 % args.nef3[1]` with the
# unused slots zero (as the case gives them), an integer division by zero whose result
# is never used; the GPU does not trap, the software device names it.
expect_exit 1 "ggml_rms_norm under validate: the modulo by an unused fusion slot's zero is found" \
    $G validate "$cases/ggml_rms_norm.json"
expect_match "... as a numeric finding at its line" "$OUT$ERR" \
    "integer division by zero: 0 / 0 in 'int' at [^ ]*ggml-metal\.metal:[0-9]+"
expect_exit 1 "ggml_soft_max under validate: the race in llama.cpp's kernel_soft_max is found" \
    $G validate "$cases/ggml_soft_max.json"
expect_match "the finding names the mem_none barrier and the flag it lacks" "$OUT" \
    "threadgroup memory race .*barrier at line 2084 .*threadgroup_barrier\(mem_flags::mem_none\), orders execution but not threadgroup memory: it needs mem_flags::mem_threadgroup"

# The copy keeps the cases' relative paths to ../../../../shared.
C=$TMPD/repo/fixtures/cases/ggml
mkdir -p "$C"
cp -R "$cases"/. "$C"/
ln -s "$root/../shared" "$TMPD/shared"
expect_exit 0 "the copy of ggml_rms_norm passes unperturbed" $G kernel "$C/ggml_rms_norm.json"
npy=$C/data/ggml_rms_norm/dst.npy
size=$(wc -c <"$npy")
printf '\000\000\200\077' | dd of="$npy" bs=1 seek=$((size - 4)) conv=notrunc status=none # 1.0 (f32 LE)
expect_exit 1 "a perturbed expected value fails its case (negative control)" $G kernel "$C/ggml_rms_norm.json"
expect_match "the perturbed case names its output" "$OUT" 'dst +buffer\(4\) +float32 +1218 +FAIL'

sed 's/"ne00_t": 203/"ne00_t": 203, "ne01": 3/' "$cases/ggml_rms_norm.json" > "$C/bad_field.json"
expect_exit 2 "a field ggml_metal_kargs_norm lacks is refused" $G kernel "$C/bad_field.json"
expect_match "the refusal lists the typedef'd struct's real fields" "$ERR" \
    "struct has no field 'ne01': its fields are ne00, ne00_t, nb1, nb2, nb3, eps, nef1, nef2, nef3, nbf1, nbf2, nbf3"
finish
