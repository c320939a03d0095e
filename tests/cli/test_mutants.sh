#!/usr/bin/env bash
# test_mutants.sh — the power of `gdnbench validate`, measured on planted bugs.
#
# tests/mutants/make_mutants.sh writes mutated copies of our shaders into the build
# directory; every mutant must be caught (exit 1, and the expected kind of finding in
# the output), and every unmodified kernel must pass the same validation (exit 0).
# The totals are checked too: every mutant caught, no false alarm.  Small shapes keep
# the whole test within a few minutes on 2 cores (most of it is clang compiling the
# mutants).  Loops read their lists on fd 3 so gdnbench never sees them on stdin.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
root=${GDNBENCH_ROOT:-$(cd "$here/../.." && pwd)}
shaders="$root/shaders"
out="$(dirname "$GDNBENCH")/mutants"

if [ ! -f "$shaders/gdn_kkt.metal" ]; then
    skip_all "mutants: our kernels are not in $shaders yet"
fi
if ! "$GDNBENCH" info 2>/dev/null | grep -q '^  sw .*available:'; then
    skip_all "mutants: the software device is not available here"
fi

start=$(date +%s)
rm -rf "$out"
if ! bash "$here/../mutants/make_mutants.sh" "$out" "$shaders" > "$TMPD/make.log" 2>&1; then
    fail "mutants: make_mutants.sh failed (a kernel changed under a mutant?): $(head -c 600 "$TMPD/make.log")"
    finish
fi
pass "mutants: make_mutants.sh generated $(wc -l < "$out/mutants.tsv") mutants"

total=0
caught=0
false_alarms=0
unmodified=0
# The unmodified kernels, at the same shapes as their mutants (the last mutant's shape
# of each op), and the whole pipeline.  Plain bash 3.2 (macOS): no associative arrays.
{
    awk -F'\t' '{ shape[$2] = $5 } END { for (op in shape) print op "\t" shape[op] }' "$out/mutants.tsv"
    printf 'chunk_fwd\t%s\n' "--B 1 --T 65 --Hg 2 --H 4 --K 64 --V 64 --profile realistic"
} | sort > "$TMPD/unmodified.tsv"
while IFS=$'\t' read -r op args <&3; do
    unmodified=$((unmodified + 1))
    # shellcheck disable=SC2086
    expect_exit 0 "mutants: unmodified $op passes validate $args" "$GDNBENCH" validate "$op" $args
    [ "$(printf '%s' "$OUT" | grep -c ' -> PASS$')" -eq 1 ] || false_alarms=$((false_alarms + 1))
done 3< "$TMPD/unmodified.tsv"

while IFS=$'\t' read -r name op fn file args expect <&3; do
    total=$((total + 1))
    # shellcheck disable=SC2086
    expect_exit 1 "mutants: $name is caught" "$GDNBENCH" validate "$op" --shader "$file" --function "$fn" $args
    rc_ok=$(printf '%s' "$OUT" | grep -c ' -> FAIL$')
    expect_match "mutants: $name is reported as /$expect/" "$OUT" "$expect"
    if [ "$rc_ok" -eq 1 ] && printf '%s' "$OUT" | grep -Eq -- "$expect"; then caught=$((caught + 1)); fi
done 3< "$out/mutants.tsv"

# A bug 10x beyond parity's noise must fail even when a loose atol/rtol admits every
# element: the rel_l2 and bf16-ulp bounds are not loosened by --atol/--rtol.
loose=$(awk -F'\t' '$1 == "chunk_o_round_before_gate"' "$out/mutants.tsv")
if [ -n "$loose" ]; then
    IFS=$'\t' read -r name op fn file args expect <<< "$loose"
    # shellcheck disable=SC2086
    expect_exit 1 "mutants: $name fails even with --atol 1 --rtol 1" "$GDNBENCH" validate "$op" --shader "$file" \
        --function "$fn" $args --atol 1 --rtol 1
    expect_match "mutants: ... by the bf16 ulp bound" "$OUT" "99% of elements within [0-9]+ bf16 ulps, bound 4"
else
    fail "mutants: chunk_o_round_before_gate is not in mutants.tsv, so the --atol/--rtol check ran on nothing"
fi

# The totals are the test: every mutant caught, no unmodified kernel flagged.
summary="caught $caught of $total mutants, $false_alarms false alarms on $unmodified unmodified kernels ($(( $(date +%s) - start )) s)"
if [ "$total" -gt 0 ] && [ "$caught" -eq "$total" ] && [ "$false_alarms" -eq 0 ] && [ "$unmodified" -gt 0 ]; then
    pass "mutants: $summary"
else
    fail "mutants: $summary"
fi

finish
