#!/usr/bin/env bash
# test_kernel_mlx.sh — `gdnbench kernel` on an "mlx_metal_kernel" case (issue 30,
# ../shared/spec/case.md): the body a Python user passes to mx.fast.metal_kernel runs
# unchanged inside the signature MLX generates, with `<input>_shape`, `_strides` and
# `_ndim` bound from the input buffer's own shape (row-major strides, in elements) and
# a template argument.  The kernel reads its input through shape and strides in an
# order that only gives the expected values when both are bound right; negative
# controls: a wrong expectation fails (exit 1), and the same body on a [5, 3] input
# (other shape and strides) fails the same expectation (exit 1); a case buffer named
# like a generated parameter, and an input name with no buffer, are exit 2.
. "$(dirname "$0")/lib.sh"
G=$GDNBENCH
D=$TMPD/mlx
mkdir -p "$D"

# out[i] = a[col, row] for the [3, 5] input read as its transpose, plus ndim (2): only
# right with a_shape = [3, 5] and a_strides = [5, 1].  a = arange(15).
cat >"$D/t.json" <<'JSON'
{"case": 1, "name": "mlx_transpose_plus_ndim",
 "mlx_metal_kernel": {"name": "tplus", "input_names": ["a"], "output_names": ["out"],
   "source": "    uint i = thread_position_in_grid.x;\n    uint r = i / a_shape[0], c = i % a_shape[0];\n    out[i] = a[c * a_strides[0] + r * a_strides[1]] + T(a_ndim);\n",
   "template": {"T": "float32"}},
 "dispatch": {"grid": [15, 1, 1], "threadgroup": [15, 1, 1]},
 "buffers": {"a": {"dtype": "float32", "shape": [3, 5], "init": {"arange": [0, 1]}, "readonly": true},
             "out": {"dtype": "float32", "shape": [15], "init": "poison",
                     "expect": {"value": [2, 7, 12, 3, 8, 13, 4, 9, 14, 5, 10, 15, 6, 11, 16], "atol": 0}}}}
JSON
expect_exit 0 "kernel mlx: an mlx_metal_kernel case passes" $G kernel "$D/t.json"
expect_match "kernel mlx: the output is checked against its expectation" "$OUT" 'out +buffer\(4\) +float32 +15 +PASS +expect: max_abs 0'
expect_match "kernel mlx: a_shape is bound from the input's shape" "$OUT" 'a_shape +buffer\(1\) +int32 +2 +PASS'
expect_match "kernel mlx: a_strides is bound as int64" "$OUT" 'a_strides +buffer\(2\) +int64 +2 +PASS'
expect_match "kernel mlx: a_ndim is bound" "$OUT" 'a_ndim +buffer\(3\) +int32 +1 +PASS'

sed 's/\[2, 7, 12, 3,/[2, 7, 12, 4,/' "$D/t.json" >"$D/wrong.json"
expect_exit 1 "kernel mlx: a wrong expectation fails (negative control)" $G kernel "$D/wrong.json"
sed 's/"shape": \[3, 5\]/"shape": [5, 3]/' "$D/t.json" >"$D/other.json"
expect_exit 1 "kernel mlx: another input shape gives other values (negative control)" $G kernel "$D/other.json"

sed 's/"readonly": true},/"readonly": true}, "a_ndim": {"dtype": "int32", "value": 2},/' "$D/t.json" >"$D/clash.json"
expect_exit 2 "kernel mlx: a buffer named like a generated parameter exits 2" $G kernel "$D/clash.json"
expect_match "kernel mlx: the clash names the buffer" "$ERR" 'buffers\.a_ndim: MLX generates a parameter of that name'
sed 's/"input_names": \["a"\]/"input_names": ["b"]/' "$D/t.json" >"$D/noin.json"
expect_exit 2 "kernel mlx: an input without a buffer exits 2" $G kernel "$D/noin.json"
finish
