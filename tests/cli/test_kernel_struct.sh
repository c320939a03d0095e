#!/usr/bin/env bash
# test_kernel_struct.sh — a case's "struct" buffer laid out as the compiled kernel
# lays out its struct (issue 30, case.md): struct_fields.metal's Params has a bool
# before a long, a float3 (16 bytes) and a packed_float3 (12), an int array; the
# kernel copies each field out and the case expects every value, so any layout
# computed by packing members back to back fails it.  An unknown field is exit 2
# naming the struct's real fields; a vector with too few values is exit 2.
. "$(dirname "$0")/lib.sh"
G=$GDNBENCH
here=$(cd "$(dirname "$0")" && pwd)
D=$TMPD/kstruct
mkdir -p "$D"
cp "$here/kernels/cases/struct_fields.metal" "$D/"
cat >"$D/s.json" <<'JSON'
{"case": 1, "source": "struct_fields.metal", "function": "struct_fields",
 "dispatch": {"grid": [1], "threadgroup": [1]},
 "buffers": {"prm": {"struct": {"flag": 1, "big": 1234567, "v": [1, 2, 3], "p": [4, 5, 6], "tail": 7, "arr": [8, 9, 10]}},
             "out": {"dtype": "float32", "shape": [12], "expect": {"value": [1, 1234567, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10], "atol": 0}}}}
JSON
if OUT=$("$G" kernel "$D/s.json" 2>&1); then pass "struct fields land where the kernel reads them"
else fail "struct case: $OUT"; fi

sed 's/"tail": 7, //; s/1, 2, 3, 4, 5, 6, 7, 8/1, 2, 3, 4, 5, 6, 0, 8/' "$D/s.json" >"$D/zero.json"
if OUT=$("$G" kernel "$D/zero.json" 2>&1); then pass "a field left out is zero"
else fail "left-out field: $OUT"; fi

sed 's/"tail": 7/"tial": 7/' "$D/s.json" >"$D/u.json"
"$G" kernel "$D/u.json" >/dev/null 2>"$TMPD/err"; rc=$?
ERR=$(cat "$TMPD/err")
if [ $rc -eq 2 ] && [ "$(printf '%s\n' "$ERR" | grep -c .)" -eq 1 ] &&
   printf '%s' "$ERR" | grep -q "buffers.prm.struct.tial: .*no field 'tial': its fields are flag, big, v, p, tail, arr"; then
    pass "unknown field: exit 2, one line with the real fields"
else fail "unknown field: rc=$rc $ERR"; fi

sed 's/"p": \[4, 5, 6\]/"p": [4, 5]/' "$D/s.json" >"$D/w.json"
"$G" kernel "$D/w.json" >/dev/null 2>"$TMPD/err"; rc=$?
if [ $rc -eq 2 ] && grep -q "buffers.prm.struct.p: 2 values given, the field holds 3" "$TMPD/err"; then
    pass "a vector of the wrong size: exit 2"
else fail "wrong size: rc=$rc $(cat "$TMPD/err")"; fi
finish
