#!/usr/bin/env bash
# test_example_cases.sh — every example case in fixtures/cases/ (README there) runs
# through `gdnbench kernel` on the software device and passes, and `gdnbench suite
# fixtures/cases` passes them all.  The MLX cases read MLX's kernels in place from
# ../shared (next to the checkout): each is a SKIP with the reason when it is absent,
# and the suite over the directory runs only with it.  Negative control: the same
# cases in a temporary copy, one expected .npy with its last element perturbed, make
# the cases that expect it fail (exit 1), and the suite with them (exit 1).
. "$(dirname "$0")/lib.sh"
G=$GDNBENCH
root=$(cd "$(dirname "$0")/../.." && pwd)
cases=$root/fixtures/cases
shared=$root/../shared/msl_corpus/mlx

[ -d "$cases" ] || skip_all "no fixtures/cases in this tree"
for f in "$cases"/*.json; do
    name=$(basename "$f")
    if grep -q 'shared/msl_corpus' "$f" && [ ! -d "$shared" ]; then
        skip "example $name: needs MLX's kernels at ../shared/msl_corpus/mlx (absent)"
        continue
    fi
    expect_exit 0 "example $name passes on the software device" $G kernel "$f"
    expect_match "example $name: every buffer passes" "$OUT" '^PASS$'
done

n=$(ls "$cases"/*.json | wc -l)
if [ -d "$shared" ]; then
    expect_exit 0 "suite fixtures/cases passes" $G suite "$cases"
    expect_match "suite fixtures/cases: all $n pass" "$OUT" "$n cases, $n passed, 0 failed"
else
    skip "suite fixtures/cases: needs MLX's kernels at ../shared/msl_corpus/mlx (absent)"
fi

# The copy keeps the cases' relative paths: ../../shaders and ../../../shared.
C=$TMPD/repo/fixtures/cases
mkdir -p "$C"
cp -R "$cases"/. "$C"/
ln -s "$root/shaders" "$TMPD/repo/shaders"
[ -d "$root/../shared" ] && ln -s "$root/../shared" "$TMPD/shared"
expect_exit 0 "the copy of mlx_metal_kernel_exp passes unperturbed" $G kernel "$C/mlx_metal_kernel_exp.json"
npy=$C/data/mlx_metal_kernel_exp/out.npy
size=$(wc -c <"$npy")
printf '\000\044\164\111' | dd of="$npy" bs=1 seek=$((size - 4)) conv=notrunc status=none # 1e6 (f32 LE)
expect_exit 1 "a perturbed expected .npy fails its case (negative control)" $G kernel "$C/mlx_metal_kernel_exp.json"
expect_match "the perturbed case names its output" "$OUT" 'out +buffer\(1\) +float32 +1000 +FAIL'
if [ -d "$shared" ]; then
    expect_exit 1 "suite over the perturbed copy fails (negative control)" $G suite "$C"
    # mlx_metal_kernel_strided.json expects the same out.npy: both fail.
    expect_match "suite over the perturbed copy: the two cases of that file fail" "$OUT" "$n cases, $((n - 2)) passed, 2 failed"
fi
finish
