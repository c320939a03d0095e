#!/usr/bin/env bash
# test_kernel_struct.sh — a case's "struct" buffer laid out as the compiled kernel
# lays out its struct (issue 30, case.md): struct_fields.metal's Params has a bool
# before a long, a float3 (16 bytes) and a packed_float3 (12), an int array; the
# kernel copies each field out and the case expects every value, so any layout
# computed by packing members back to back fails it.  An unknown field is exit 2
# naming the struct's real fields; a vector with too few values is exit 2.  Nested
# structs and an array of structs (nested JSON objects, an array of objects) land
# where the kernel reads them; an unknown nested field names the nested struct's
# fields; an object for a number field, and too many elements, are exit 2.
. "$(dirname "$0")/lib.sh"
G=$GDNBENCH
# the case: tests/cli/kernels/cases/struct_fields.json (every field given)
case_dir kstruct struct_fields.metal struct_fields.json
if OUT=$("$G" kernel "$D/struct_fields.json" 2>&1); then pass "struct fields land where the kernel reads them"
else fail "struct case: $OUT"; fi

sed 's/"tail": 7, //; s/1, 2, 3, 4, 5, 6, 7, 8/1, 2, 3, 4, 5, 6, 0, 8/' "$D/struct_fields.json" >"$D/zero.json"
if OUT=$("$G" kernel "$D/zero.json" 2>&1); then pass "a field left out is zero"
else fail "left-out field: $OUT"; fi

sed 's/"tail": 7/"tial": 7/' "$D/struct_fields.json" >"$D/u.json"
"$G" kernel "$D/u.json" >/dev/null 2>"$TMPD/err"; rc=$?
ERR=$(cat "$TMPD/err")
if [ $rc -eq 2 ] && [ "$(printf '%s\n' "$ERR" | grep -c .)" -eq 1 ] &&
   printf '%s' "$ERR" | grep -q "buffers.prm.struct.tial: .*no field 'tial': its fields are flag, big, v, p, tail, arr"; then
    pass "unknown field: exit 2, one line with the real fields"
else fail "unknown field: rc=$rc $ERR"; fi

sed 's/"p": \[4, 5, 6\]/"p": [4, 5]/' "$D/struct_fields.json" >"$D/w.json"
"$G" kernel "$D/w.json" >/dev/null 2>"$TMPD/err"; rc=$?
if [ $rc -eq 2 ] && grep -q "buffers.prm.struct.p: 2 values given, the field holds 3" "$TMPD/err"; then
    pass "a vector of the wrong size: exit 2"
else fail "wrong size: rc=$rc $(cat "$TMPD/err")"; fi

# Nested: Outer { int n; Inner in; Inner list[2]; packed_float3 tail; }, Inner { bool on; float3 v; }.
cat >"$D/n.json" <<'JSON'
{"case": 1, "source": "struct_fields.metal", "function": "nested_fields",
 "dispatch": {"grid": [1], "threadgroup": [1]},
 "buffers": {"o": {"struct": {"n": 5, "in": {"on": true, "v": [1, 2, 3]},
                              "list": [{"on": false, "v": [4, 5, 6]}, {"on": 1, "v": [7, 8, 9]}],
                              "tail": [10, 11, 12]}},
             "out": {"dtype": "float32", "shape": [16],
                     "expect": {"value": [5, 1, 1, 2, 3, 0, 4, 5, 6, 1, 7, 8, 9, 10, 11, 12], "atol": 0}}}}
JSON
if OUT=$("$G" kernel "$D/n.json" --iters 1 2>&1); then pass "nested struct and array-of-struct fields land where the kernel reads them"
else fail "nested struct case: $OUT"; fi
if OUT=$("$G" kernel "$D/n.json" --print-case 2>&1) && printf '%s' "$OUT" >"$D/n2.json" &&
   "$G" kernel "$D/n2.json" --iters 1 >/dev/null 2>&1; then pass "a nested struct case prints and reads back"
else fail "nested --print-case: $OUT"; fi

sed 's/"list": \[{"on": false, "v": \[4, 5, 6\]}, /"list": [/; s/0, 4, 5, 6, 1, 7, 8, 9/1, 7, 8, 9, 0, 0, 0, 0/' "$D/n.json" >"$D/n1.json"
if OUT=$("$G" kernel "$D/n1.json" --iters 1 2>&1); then pass "array elements left out are zero"
else fail "short array of structs: $OUT"; fi

bad_nested() {  # DESC SED REGEX
    sed "$2" "$D/n.json" >"$D/nb.json"
    "$G" kernel "$D/nb.json" --iters 1 >/dev/null 2>"$TMPD/err"; rc=$?
    if [ $rc -eq 2 ] && [ "$(grep -c . "$TMPD/err")" -eq 1 ] && grep -Eq "$3" "$TMPD/err"; then pass "$1: exit 2, one line"
    else fail "$1: rc=$rc $(cat "$TMPD/err")"; fi
}
bad_nested "an unknown nested field" 's/"in": {"on": true/"in": {"off": true/' \
    "buffers\.o\.struct\.in\.off: member 'in''s struct has no field 'off': its fields are on, v"
bad_nested "an unknown field in an array element" 's/{"on": 1, "v"/{"on": 1, "w"/' \
    "buffers\.o\.struct\.list\[1\]\.w: member 'list''s struct has no field 'w'"
bad_nested "numbers for a nested struct" 's/"in": {"on": true, "v": \[1, 2, 3\]}/"in": [1, 2, 3, 4]/' \
    "buffers\.o\.struct\.in: .*give an object of its fields by name"
bad_nested "an object for an array of structs" 's/"list": \[{"on": false, "v": \[4, 5, 6\]}, {"on": 1, "v": \[7, 8, 9\]}\]/"list": {"on": true}/' \
    "buffers\.o\.struct\.list: the field is an array of structs: give an array of objects"
bad_nested "too many elements" 's/{"on": 1, "v": \[7, 8, 9\]}\]/{"on": 1}, {"on": 1}]/' \
    "buffers\.o\.struct\.list: 3 elements given, the array holds 2"
finish
