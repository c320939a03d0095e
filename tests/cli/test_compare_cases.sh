#!/usr/bin/env bash
# test_compare_cases.sh — `gdnbench compare` pairs kernel-case records by the case's
# name too: two cases of one function (add_one on 64 and on 32 elements) are two
# pairs, each named in the shape column; negative control: a base with only one case
# and a new report with only the other pair nothing (exit 2, "nothing to pair"), where
# pairing by function alone would compare different work.
. "$(dirname "$0")/lib.sh"
G=$GDNBENCH
case_dir cmpcase add_one.metal
for n in 64 32; do
    cat >"$D/add$n.json" <<JSON
{"case": 1, "name": "add_one_$n", "source": "add_one.metal", "function": "add_one",
 "dispatch": {"grid": [$n], "threadgroup": [32]},
 "buffers": {"x": {"dtype": "float32", "shape": [$n], "init": {"arange": [0, 1]}, "readonly": true},
             "out": {"dtype": "float32", "shape": [$n]}, "n": {"dtype": "uint32", "value": $n}}}
JSON
    expect_exit 0 "compare cases: add_one_$n runs (base)" $G kernel "$D/add$n.json" --iters 5 --json "$D/base$n.json"
    expect_exit 0 "compare cases: add_one_$n runs (new)" $G kernel "$D/add$n.json" --iters 5 --json "$D/new$n.json"
done
mkdir -p "$D/base" "$D/new"
cp "$D/base64.json" "$D/base32.json" "$D/base/"
cp "$D/new64.json" "$D/new32.json" "$D/new/"
$G compare "$D/base" "$D/new" >"$D/both.txt" 2>&1
expect_match "compare cases: two cases of one function are two pairs" "$(cat "$D/both.txt")" '^2 pairs: .* 0 unpaired'
expect_match "compare cases: the 64-element case pairs with itself" "$(cat "$D/both.txt")" 'add_one +case=add_one_64 '
expect_match "compare cases: the 32-element case pairs with itself" "$(cat "$D/both.txt")" 'add_one +case=add_one_32 '

expect_exit 2 "compare cases: different cases of one function do not pair (negative control)" \
    $G compare "$D/base64.json" "$D/new32.json"
expect_match "compare cases: nothing to pair, said so" "$ERR" 'nothing to pair'
finish
