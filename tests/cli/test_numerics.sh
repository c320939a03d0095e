#!/usr/bin/env bash
# test_numerics.sh — the numeric checks (--sw-checks numerics, part of full; issue 32
# item 1): each kind of finding from a kernel of tests/cli/kernels/numerics.metal
# (lines marked "// @name"), named at its line with the operands, and each kernel's
# fixed twin (NAME_ok) with no finding.  The float Inf/NaN findings come from the
# numerics IR pass (src/swmetal/ir_numerics.c), the same on every host:
# test_arm64_qemu.sh runs this script on the arm64 build too (GDNBENCH_TARGET_ARCH
# says which machine's code the gdnbench under test runs).
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
K="$here/kernels/numerics.metal"

if ! "$GDNBENCH" info 2>/dev/null | grep -q '^  sw .*available:'; then
    skip_all "numerics: the software device is not available here ($("$GDNBENCH" info 2>&1 | grep '^  sw'))"
fi

line() { grep -n -- "// @$1\$" "$K" | cut -d: -f1; }
# kern FUNCTION CHECKS S K [X]: 64 threads, x filled with X (default 1).
kern() {
    "$GDNBENCH" kernel "$K" --function "$1" --grid 64 --threadgroup 32 --iters 1 --sw-checks "$2" \
        --buffer "x=float32[64]:fill=${5:-1}" --buffer "y=float32[64]:fill=0" --buffer "s=float32:$3" \
        --buffer "k=int32:$4"
}
# bad NAME MARKER S K X PATTERN: the finding at the marked line; then NAME_ok is clean.
bad() {
    local name=$1 marker=$2 s=$3 k=$4 x=$5 pattern=$6
    expect_exit 2 "numerics: $name is a numeric finding (a device finding: exit 2, as in an op run)" kern "$name" numerics "$s" "$k" "$x"
    expect_match "numerics: ... $pattern at its line" "$OUT" \
        "kernel '$name': (numeric error: )?$pattern.* at [^ ]*numerics\.metal:$(line "$marker") by thread_position_in_grid"
    expect_exit 0 "numerics: ${name}_ok (the fixed kernel) has none" kern "${name}_ok" numerics "$s" "$k" "$x"
    expect_no_match "numerics: ... no numeric finding" "$OUT" "numeric error"
}

bad to_int to-int 1e10 8 1 "conversion overflows: 1e\+10 \('float'\) is outside the range of 'int'"
bad to_bfloat to-bfloat 3.4e38 8 1 "conversion overflows: 3\.39999995e\+38 \('float'\) rounds to Inf in 'bfloat'"
bad int_overflow int-add 1 2147483600 1 "signed integer overflow: 2147483600 \+ 48 does not fit in 'int'"
bad shift shift 1 0 1 "shift out of range: 1 shifted by 3[2-9], and 'unsigned int' has 32 bits"
bad short_wrap short-wrap 1 1000 1 "16-bit integer wraps: 33000 \('int'\) becomes -32536 in 'short'"
# Integer division by zero: the check names it with its operands; on x86-64 the
# hardware's trap then stops the dispatch, a second finding (arm64's divide
# instruction gives 0 and does not trap).
expect_exit 2 "numerics: int_div is a finding" kern int_div numerics 1 1
expect_match "numerics: ... the division by zero with its operands" "$OUT" "integer division by zero: 0 / 0 in 'int'"
if [ "${GDNBENCH_TARGET_ARCH:-$(uname -m)}" = x86_64 ]; then
    expect_match "numerics: ... then the hardware's trap, a second finding at its line" "$OUT" \
        "2 distinct findings.*fault: integer division by zero at [^ ]*numerics\.metal:$(line int-div) "
fi
expect_exit 0 "numerics: int_div_ok (the fixed kernel) has none" kern int_div_ok numerics 1 1

bad half_acc half-acc 10000 8 1 "floating-point overflow: 59968 \+ 10000 = inf \('half'\)"
bad to_half to-half 100000 8 1 "conversion overflows: 100000 \('float'\) rounds to Inf in 'half' \(its largest is 65504\)"
# every element of a vector conversion (the third of a half4 here)
bad to_half4 to-half4 100000 8 1 "conversion overflows: 100000 \('float'\) rounds to Inf in 'half'"
bad float_overflow fmul 1e30 8 1e10 "floating-point overflow: (1\.00000002e\+30 \* 1e\+10|1e\+10 \* 1\.00000002e\+30) = inf \('float'\)"
bad zero_div_zero nan 1 8 1 "invalid floating-point operation: 0 / 0 = -?nan \('float'\)"
bad zero_times_inf zero-inf 1 0 1 "invalid floating-point operation: 0 \* inf = -?nan \('float'\)"
# div_zero_ok's d != 0 ? x / d : 0 has its division speculated by the optimiser:
# checked at the select, where only the lanes it picks count
bad div_zero div-zero 1 8 1 "floating-point division by zero: 1 / 0 = inf \('float'\)"
bad exp_overflow exp 100 8 1 "floating-point overflow: exp\(100\) = inf \('float'\)"
bad sqrt_domain sqrt 2 8 1 "invalid floating-point operation: sqrt\(-1\) = -?nan \('float'\)"
# full checks include the numeric ones
expect_exit 2 "numerics: full checks report the half overflow too" kern half_acc full 10000 8
expect_match "numerics: ... at its line" "$OUT" "numerics\.metal:$(line half-acc) "
# fast checks never run the numerics variant: the same kernel has no finding
expect_no_match "numerics: fast checks report no numeric finding" "$(kern short_wrap fast 1 1000 2>&1)" "numeric error"

# An op with its own --shader: the finding in the JSON report, and --sw-max-findings.
scan() { "$GDNBENCH" cumsum --shader "$K" --function scan_half --B 1 --T 65 --H 2 --iters 1 --warmup 0 \
    --sw-checks numerics "$@"; }
expect_exit 2 "numerics: an op's run with a numeric finding fails as a device fault" scan --json "$TMPD/scan.json"
expect_match "numerics: ... two distinct findings" "$OUT" "2 distinct findings"
expect_match "numerics: ... the signed overflow's line and text" "$OUT" \
    "numerics\.metal:$(line scan-int) +\`int big = 2147483000"
J=$(tr -d ' \t\n' < "$TMPD/scan.json")
expect_match "numerics: ... the JSON names the kind, detail and line" "$J" \
    "\"kind\":\"numeric\",\"kernel\":\"scan_half\".*\"detail\":\"conversionoverflows:.*\"line\":$(line scan-half)"
expect_exit 2 "numerics: --sw-max-findings 1" scan --sw-max-findings 1
expect_match "numerics: ... prints one and says one more was left out" "$OUT" "1 more"

finish
