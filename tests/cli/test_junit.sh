#!/usr/bin/env bash
# test_junit.sh — `--junit FILE` on run, suite (named and a directory of cases),
# validate (an op and a case), kernel and compare: every file is parsed by
# tests/cli/junit_check.py (Python's XML parser against the JUnit schema's rules:
# elements, required attributes, counts that add up; a test-only oracle) and by the
# project's own well-formedness checker (gdnbench-testdata xml); then what it says is
# held against what ran — a passing case passes, a failed check is a <failure> whose
# message names it, a race's failure lists the device's findings with their source
# lines, a case that cannot run is an <error>, an unsupported shape is <skipped>, and
# a name holding < & " ' comes back unchanged through the escaping.
. "$(dirname "$0")/lib.sh"
need_testdata

command -v python3 >/dev/null 2>&1 || skip_all "junit: python3 (the test's XML oracle) is not installed"
CHECK="python3 $GDNBENCH_ROOT/tests/cli/junit_check.py"
K=$GDNBENCH_ROOT/tests/cli/kernels/validate_cumsum.metal

# junit FILE DESC: the file passes the oracle and the project's checker; its listing in $J.
junit() {
    local f=$1 desc=$2
    if J=$($CHECK "$f" 2>"$TMPD/jerr"); then
        pass "$desc: valid JUnit ($(head -n1 <<<"$J"))"
    else
        fail "$desc: not valid JUnit: $(head -c 600 "$TMPD/jerr")"
        J=
    fi
    if "$TESTDATA" xml "$f" >/dev/null 2>"$TMPD/xerr"; then
        pass "$desc: well-formed for gdnbench-testdata xml"
    else
        fail "$desc: gdnbench-testdata xml: $(head -c 300 "$TMPD/xerr")"
    fi
}

# ---- run (an op over shapes) ----
expect_exit 0 "run: kkt at two shapes with --junit" \
    "$GDNBENCH" kkt --T 64,65 --iters 1 --warmup 0 --quiet --junit "$TMPD/run.xml" --json "$TMPD/run.json"
junit "$TMPD/run.xml" "run"
expect_match "run: two passing test cases named by shape" "$J" \
    "^tests=2 failures=0 errors=0 skipped=0
pass	gdnbench\.kkt	B=1 T=64 [^	]*	
pass	gdnbench\.kkt	B=1 T=65 "
expect_exit 1 "run: a failing check (atol 0) with --junit" \
    "$GDNBENCH" kkt --T 64 --iters 1 --warmup 0 --quiet --atol 0 --rtol 0 --junit "$TMPD/runfail.xml" \
    --json "$TMPD/runfail.json"
junit "$TMPD/runfail.xml" "run, failing"
expect_match "run, failing: a <failure> whose message names the output, reference and tolerance" "$J" \
    "^failure	gdnbench\.kkt	B=1 T=64 [^	]*	A vs f64: max_abs [^	]* \(atol 0 rtol 0\), [0-9]+ bad"

# ---- suite NAME ----
expect_exit 0 "suite smoke with --junit" "$GDNBENCH" suite smoke --iters 1 --warmup 0 --quiet --junit "$TMPD/suite.xml"
junit "$TMPD/suite.xml" "suite smoke"
expect_match "suite smoke: its 9 cases, one test case each" "$J" "^tests=9 failures=0 errors=0 skipped=0"
expect_match "suite smoke: classname is the op" "$J" "pass	gdnbench\.chunk_fwd	B=1 T=100 "

# ---- validate OP: a race, with the device's findings' source lines ----
expect_exit 1 "validate: a racy cumsum with --junit" "$GDNBENCH" validate cumsum --shader "$K" \
    --function cumsum_tg_race --T 65 --H 2 --profile realistic --quiet --junit "$TMPD/val.xml"
junit "$TMPD/val.xml" "validate, racy"
expect_match "validate, racy: each sweep case a <failure> naming the bug" "$J" \
    "^failure	gdnbench\.validate\.cumsum	#1 base \[realistic\] B=1 T=65 H=2 [^	]*	the kernel failed under .*device_write_conflict"
expect_match "validate, racy: the failure's text lists the finding with its source line" "$J" \
    "  \|     write +[^ ]*validate_cumsum\.metal:[0-9]+  \`gc\[i\] = acc;\`"
expect_exit 0 "validate: an unsupported shape is skipped, not failed" "$GDNBENCH" validate kkt --T 65 --K 64,100 \
    --H 2 --Hg 1 --profile realistic --quiet --junit "$TMPD/valskip.xml"
junit "$TMPD/valskip.xml" "validate, unsupported shape"
expect_match "validate, unsupported shape: counted as skipped" "$J" "^tests=3 failures=0 errors=0 skipped=1"
expect_match "validate, unsupported shape: a <skipped> with the kernel's reason" "$J" \
    "^skipped	gdnbench\.validate\.kkt	[^	]*K=100[^	]*	kkt refuses the shape: .+"

# ---- kernel cases: suite DIR, kernel, validate CASE ----
D=$TMPD/cases
mkdir -p "$D"
cat >"$D/saxpy.metal" <<'EOF'
#include <metal_stdlib>
using namespace metal;
kernel void saxpy(device const float *x [[buffer(0)]], device float *y [[buffer(1)]],
                  constant float &a [[buffer(2)]], uint i [[thread_position_in_grid]]) {
    y[i] = a * x[i] + y[i];
}
EOF
write_case() { # FILE NAME FUNCTION Y0
    cat >"$D/$1" <<EOF
{"case": 1, "name": "$2", "source": "saxpy.metal", "function": "$3",
 "dispatch": {"grid": [4, 1, 1], "threadgroup": [4, 1, 1]},
 "buffers": {"x": {"dtype": "float32", "shape": [4], "init": {"arange": [0, 1]}, "readonly": true},
             "y": {"dtype": "float32", "shape": [4], "init": {"fill": 1},
                   "expect": {"value": [$4, 3, 5, 7], "atol": 0}},
             "a": {"dtype": "float32", "value": 2}}}
EOF
}
write_case a_pass.json 'esc <&\"'"'"'> ok' saxpy 1
write_case b_fail.json 'wrong_first' saxpy 2
write_case c_error.json 'no_such_function' nope 1
expect_exit 2 "suite DIR: a passing, a failing and a broken case with --junit (exit 2: one could not run)" \
    "$GDNBENCH" suite "$D" --iters 1 --quiet --junit "$TMPD/cases.xml"
junit "$TMPD/cases.xml" "suite DIR"
expect_match "suite DIR: counts" "$J" "^tests=3 failures=1 errors=1 skipped=0"
expect_match "suite DIR: the name with < & \" ' comes back unchanged" "$J" \
    "pass	gdnbench\.kernel	esc <&\"'> ok	"
expect_match "suite DIR: the wrong expectation is a <failure> naming the buffer" "$J" \
    "failure	gdnbench\.kernel	wrong_first	(.*; )?y vs expected: max_abs 1 "
expect_match "suite DIR: the case that cannot run is an <error> under its name, naming the file and why" "$J" \
    "error	gdnbench\.kernel	no_such_function	.*c_error\.json.*nope"
expect_exit 0 "kernel CASE --junit -: the document on stdout" "$GDNBENCH" kernel "$D/a_pass.json" --iters 1 --quiet \
    --junit -
printf '%s\n' "$OUT" >"$TMPD/kernel.xml"
junit "$TMPD/kernel.xml" "kernel, to stdout"
expect_match "kernel: one passing test case" "$J" "^tests=1 failures=0 errors=0 skipped=0"
expect_exit 0 "validate CASE with --junit" "$GDNBENCH" validate "$D/a_pass.json" --junit "$TMPD/kval.xml"
junit "$TMPD/kval.xml" "validate CASE"
expect_match "validate CASE: a test case per schedule and poison pattern" "$J" "^tests=5 failures=0 errors=0 skipped=0"
expect_match "validate CASE: named by the case and the schedule" "$J" \
    "^pass	gdnbench\.validate\.kernel	esc <&\"'> ok random:2	$"
expect_match "validate CASE: ... and the second poison pattern" "$J" \
    "^pass	gdnbench\.validate\.kernel	esc <&\"'> ok poison 0x5a	$"
expect_exit 1 "validate CASE: a wrong expectation with --junit" "$GDNBENCH" validate "$D/b_fail.json" \
    --junit "$TMPD/kvalfail.xml"
junit "$TMPD/kvalfail.xml" "validate CASE, failing"
expect_match "validate CASE, failing: every schedule a <failure> saying a check failed" "$J" \
    "^tests=5 failures=5 errors=0 skipped=0"
expect_match "validate CASE, failing: the message says how to see the table" "$J" \
    "^failure	gdnbench\.validate\.kernel	wrong_first inorder	a check failed \(run \`gdnbench kernel"

# ---- compare ----
expect_exit 0 "compare: a report against itself with --junit" "$GDNBENCH" compare "$TMPD/run.json" "$TMPD/run.json" \
    --junit "$TMPD/cmp.xml"
junit "$TMPD/cmp.xml" "compare, same"
expect_match "compare, same: a passing test case per pair" "$J" "^tests=2 failures=0 errors=0 skipped=0"
expect_exit 1 "compare: NEW fails its check with --junit" "$GDNBENCH" compare "$TMPD/run.json" "$TMPD/runfail.json" \
    --junit "$TMPD/cmpfail.xml"
junit "$TMPD/cmpfail.xml" "compare, regression"
expect_match "compare, regression: the pair is a <failure>, the record only in BASE is skipped" "$J" \
    "^tests=2 failures=1 errors=0 skipped=1"
expect_match "compare, regression: the failure's message is the verdict" "$J" \
    "failure	gdnbench\.compare\.kkt	gated_delta_net_kkt_bf16 B=1 T=64 [^	]*	regression: correctness: pass -> fail"
expect_exit 2 "compare: --junit without a file is bad input" "$GDNBENCH" compare "$TMPD/run.json" "$TMPD/run.json" --junit
finish
