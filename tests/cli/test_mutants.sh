#!/usr/bin/env bash
# test_mutants.sh — the power of `gdnbench validate`, measured on planted bugs.
#
# tests/mutants/make_mutants.sh writes mutated copies of our shaders into the build
# directory; every mutant must be caught (exit 1, and the expected kind of finding in
# the output), and every unmodified kernel must pass the same validation (exit 0).
# Prints the catch rate and the false-alarm count.  Small shapes keep the whole test
# within a few minutes on 2 cores (most of it is clang compiling the mutants).
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
root=${GDNBENCH_ROOT:-$(cd "$here/../.." && pwd)}
shaders="$root/shaders"
out="$(dirname "$GDNBENCH")/mutants"

if [ ! -f "$shaders/gdn_kkt.metal" ]; then
    echo "SKIP mutants: our kernels are not in $shaders yet"
    exit 0
fi
if ! "$GDNBENCH" info 2>/dev/null | grep -q '^  sw .*available:'; then
    echo "SKIP mutants: the software device is not available here"
    exit 0
fi

start=$(date +%s)
rm -rf "$out"
if ! bash "$here/../mutants/make_mutants.sh" "$out" "$shaders" > "$TMPD/make.log" 2>&1; then
    echo "FAIL mutants: make_mutants.sh failed (a kernel changed under a mutant?): $(head -c 600 "$TMPD/make.log")"
    exit 0
fi
echo "PASS mutants: make_mutants.sh generated $(wc -l < "$out/mutants.tsv") mutants"

total=0
caught=0
false_alarms=0
# The unmodified kernels, at the same shapes as their mutants (and the whole pipeline).
declare -A shape_of
while IFS=$'\t' read -r name op fn file args expect; do
    shape_of[$op]=$args
done < "$out/mutants.tsv"
shape_of[chunk_fwd]="--B 1 --T 65 --Hg 2 --H 4 --K 64 --V 64 --profile realistic"
for op in $(printf '%s\n' "${!shape_of[@]}" | sort); do
    # shellcheck disable=SC2086
    expect_exit 0 "mutants: unmodified $op passes validate ${shape_of[$op]}" "$GDNBENCH" validate "$op" ${shape_of[$op]}
    [ "$(printf '%s' "$OUT" | grep -c ' -> PASS$')" -eq 1 ] || false_alarms=$((false_alarms + 1))
done

while IFS=$'\t' read -r name op fn file args expect; do
    total=$((total + 1))
    # shellcheck disable=SC2086
    expect_exit 1 "mutants: $name is caught" "$GDNBENCH" validate "$op" --shader "$file" --function "$fn" $args
    rc_ok=$(printf '%s' "$OUT" | grep -c ' -> FAIL$')
    expect_match "mutants: $name is reported as /$expect/" "$OUT" "$expect"
    if [ "$rc_ok" -eq 1 ] && printf '%s' "$OUT" | grep -Eq -- "$expect"; then caught=$((caught + 1)); fi
done < "$out/mutants.tsv"

# A bug 10x beyond parity's noise must fail even when a loose atol/rtol admits every
# element: the rel_l2 and bf16-ulp bounds are not loosened by --atol/--rtol.
loose=$(awk -F'\t' '$1 == "chunk_o_round_before_gate"' "$out/mutants.tsv")
if [ -n "$loose" ]; then
    IFS=$'\t' read -r name op fn file args expect <<< "$loose"
    # shellcheck disable=SC2086
    expect_exit 1 "mutants: $name fails even with --atol 1 --rtol 1" "$GDNBENCH" validate "$op" --shader "$file" \
        --function "$fn" $args --atol 1 --rtol 1
    expect_match "mutants: ... by the bf16 ulp bound" "$OUT" "99% of elements within [0-9]+ bf16 ulps, bound 4"
fi

echo "mutants: caught $caught of $total mutants, $false_alarms false alarms on unmodified kernels ($(( $(date +%s) - start )) s)"
