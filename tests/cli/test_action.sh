#!/usr/bin/env bash
# test_action.sh — the GitHub Action's logic (scripts/ci/action.sh; action.yml wires
# it to GitHub) run here with a fake GITHUB_* environment: a temporary workspace (the
# "caller's repository") holding a kernel, a case file and, through a link, this
# repository's fixtures/cases; temporary summary and output files.
#   - a run without a baseline passes and writes the reports (they become the
#     committed baseline);
#   - a clean run against that baseline passes: the summary holds the comparison
#     table, says timing verdicts are off on the software device, outputs status=pass;
#   - a kernel edit that breaks a check is a regression: the step fails (verdict exit
#     1), the summary's table marks it, outputs status=regression, regressions=1;
#   - a kernel edit that only makes it slower: no regression with timing auto (the
#     software device's times are not a GPU's), timing judged with timing on;
#   - a failing check without a baseline fails; a missing case path is an error;
#     nothing to run is exit 2;
#   - on a hosted macOS runner (RUNNER_OS=macOS, RUNNER_ENVIRONMENT=github-hosted)
#     the summary says the paravirtual GPU's timings are not a chip's;
#   - every JUnit file it wrote is valid (junit_check.py), and action.yml passes every
#     input the script reads and calls its four steps.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/build_lib.sh"

A="$ROOT/scripts/ci/action.sh"
WS=$TMPD/ws
mkdir -p "$WS/kernels" "$WS/cases" "$WS/bench"
ln -s "$ROOT/fixtures" "$WS/fixtures"
ln -s "$ROOT/shaders" "$WS/shaders"
# saxpy; SLOW=N adds a loop of N steps whose result never changes y (a slower kernel)
write_kernel() { # BUG SLOW
    cat >"$WS/kernels/saxpy.metal" <<EOF
#include <metal_stdlib>
using namespace metal;
kernel void saxpy(device const float *x [[buffer(0)]], device float *y [[buffer(1)]],
                  constant float &a [[buffer(2)]], uint i [[thread_position_in_grid]]) {
    float t = 0.0f;
    for (uint k = 0; k < $2u; k++) t += x[i] * 1e-30f;
    y[i] = a * x[i] + y[i] + $1 + (t > 1.0f ? 1.0f : 0.0f);
}
EOF
}
write_kernel 0.0f 0
cat >"$WS/cases/saxpy.json" <<'EOF'
{"case": 1, "name": "saxpy_256", "source": "../kernels/saxpy.metal", "function": "saxpy",
 "dispatch": {"grid": [256, 1, 1], "threadgroup": [64, 1, 1]},
 "buffers": {"x": {"dtype": "float32", "shape": [256], "init": {"fill": 1}, "readonly": true},
             "y": {"dtype": "float32", "shape": [256], "init": {"fill": 1},
                   "expect": {"file": "y.npy", "atol": 0}},
             "a": {"dtype": "float32", "value": 2}}}
EOF
"$(dirname "$GDNBENCH")/gdnbench-testdata" >/dev/null 2>&1 # (not needed: the expected values come from the kernel itself)
# y = 2*1 + 1 = 3 everywhere: the expected file, as numpy would write it
printf '\x93NUMPY\x01\x00\x76\x00' >"$WS/cases/y.npy"
printf "%-117s\n" "{'descr': '<f4', 'fortran_order': False, 'shape': (256,), }" >>"$WS/cases/y.npy"
for _ in $(seq 256); do printf '\x00\x00\x40\x40'; done >>"$WS/cases/y.npy"

# act NAME SUBCOMMAND [VAR=VALUE...]: the action's script in the fake environment;
# its exit status in $RC, the summary in $SUM, the outputs in $OUTS.
act() {
    local name=$1 sub=$2
    shift 2
    if [ "$sub" != verdict ]; then # the verdict step reads what the run step left
        : >"$TMPD/summary-$name.md"
        : >"$TMPD/output-$name.txt"
    fi
    (cd "$WS" && env -u INPUT_CASES -u INPUT_SUITES -u INPUT_VALIDATE -u INPUT_BASELINE -u INPUT_BACKEND \
        -u INPUT_TIMING -u INPUT_THRESHOLD -u RUNNER_OS -u RUNNER_ENVIRONMENT \
        GITHUB_WORKSPACE="$WS" GITHUB_STEP_SUMMARY="$TMPD/summary-$name.md" GITHUB_OUTPUT="$TMPD/output-$name.txt" \
        GDNBENCH_BIN="$GDNBENCH" GDNBENCH_OUT="$TMPD/out-$name" INPUT_ARGS="--iters 10" "$@" bash "$A" "$sub") \
        >"$TMPD/log-$name.txt" 2>&1
    RC=$?
    SUM=$(cat "$TMPD/summary-$name.md")
    OUTS=$(cat "$TMPD/output-$name.txt")
}
# step NAME [VAR=VALUE...]: run, then verdict, as the action's two steps; RUN_RC, RC.
step() {
    local name=$1
    shift
    act "$name" run "$@"
    RUN_RC=$RC
    act "$name" verdict "$@"
}
CASES="INPUT_CASES=cases fixtures/cases/ours_micro_reduce_tree.json"

step first "$CASES"
[ "$RUN_RC" -eq 0 ] && [ "$RC" -eq 0 ] && pass "action: a first run without a baseline passes" ||
    fail "action: first run: run exit $RUN_RC, verdict exit $RC: $(tail -c 400 "$TMPD/log-first.txt")"
expect_match "action: first run: status=pass in the outputs" "$OUTS" "^status=pass$"
expect_match "action: first run: the summary lists each run" "$SUM" \
    "^\| \`kernel fixtures/cases/ours_micro_reduce_tree\.json\` \| pass \|$"
cp "$TMPD/out-first/new/"*.json "$WS/bench/" 2>/dev/null
n=$(ls "$WS/bench" | wc -l)
[ "$n" -eq 2 ] && pass "action: the JSON reports written (2 files: the suite of cases/ and the kernel case)" ||
    fail "action: expected 2 JSON reports, got $n: $(ls "$TMPD/out-first/new" 2>&1)"

step clean "$CASES" INPUT_BASELINE=bench INPUT_VALIDATE=cases/saxpy.json
[ "$RUN_RC" -eq 0 ] && [ "$RC" -eq 0 ] && pass "action: a clean run against the baseline passes the step" ||
    fail "action: clean run: run exit $RUN_RC, verdict exit $RC: $(tail -c 600 "$TMPD/log-clean.txt")"
expect_match "action: clean: status=pass, regressions=0" "$OUTS" "^status=pass$"
expect_match "action: clean: regressions=0" "$OUTS" "^regressions=0$"
expect_match "action: clean: the summary has the comparison table" "$SUM" \
    "^\| verdict \| op \| kernel \| shape \| device \| base \(us\) \| new \(us\) \| change \| p \| note \|$"
expect_match "action: clean: both pairs compared" "$SUM" "^2 pairs: 0 regressions"
expect_match "action: clean: timing verdicts are off on the software device, said so" "$SUM" "^Timing verdicts are off"
expect_match "action: clean: the validate run is listed" "$SUM" "^\| \`validate cases/saxpy\.json\` \| pass \|$"
expect_no_match "action: clean: no paravirtual note off macOS" "$SUM" "Paravirtual"
cp "$TMPD/summary-clean.md" "$TMPD/summary-clean.keep"

write_kernel 1.0f 0
step broken "$CASES" INPUT_BASELINE=bench
[ "$RUN_RC" -eq 0 ] && pass "action: broken kernel: the run step itself completes (so the reports are uploaded)" ||
    fail "action: broken kernel: run step exit $RUN_RC"
[ "$RC" -eq 1 ] && pass "action: broken kernel: the verdict step fails" || fail "action: broken kernel: verdict exit $RC"
expect_match "action: broken kernel: status=regression" "$OUTS" "^status=regression$"
expect_match "action: broken kernel: regressions=1" "$OUTS" "^regressions=1$"
expect_match "action: broken kernel: the table marks the pair a regression in correctness" "$SUM" \
    "^\| \*\*regression\*\* \| kernel \| saxpy \| case=saxpy_256 .*correctness: pass -> fail; kernel source changed"
expect_match "action: broken kernel: the run's row says the check failed" "$SUM" "^\| \`suite cases\` \| \*\*FAIL\*\*"
expect_match "action: broken kernel: the verdict step names the status" "$(cat "$TMPD/log-broken.txt")" \
    "::error::gdnbench: regression"

write_kernel 0.0f 20000
step slow_auto "$CASES" INPUT_BASELINE=bench
[ "$RC" -eq 0 ] && pass "action: slower kernel, timing auto on the software device: no regression" ||
    fail "action: slower kernel, timing auto: verdict exit $RC: $(grep -i regression "$TMPD/summary-slow_auto.md" | head -c 300)"
# With timing on the times are judged; what they show depends on the machine's load,
# and tests assert no timings: only that the step's verdict follows its status.
step slow_on "$CASES" INPUT_BASELINE=bench INPUT_TIMING=on
expect_no_match "action: slower kernel, timing on: timing is judged" "$SUM" "timing not judged|^Timing verdicts are off"
if grep -q '^status=regression$' <<<"$OUTS"; then want=1; else want=0; fi
[ "$RC" -eq "$want" ] && pass "action: slower kernel, timing on: the step's exit follows its status ($RC)" ||
    fail "action: slower kernel, timing on: verdict exit $RC, status says $want"
write_kernel 0.0f 0

write_kernel 1.0f 0
step failcheck "INPUT_CASES=cases"
[ "$RC" -eq 1 ] && pass "action: a failed check without a baseline fails the step" || fail "action: failed check: verdict exit $RC"
expect_match "action: failed check: status=fail" "$OUTS" "^status=fail$"
write_kernel 0.0f 0

step missing "INPUT_CASES=cases/nothing_here.json"
[ "$RC" -eq 1 ] && pass "action: a case path not in the repository fails the step" || fail "action: missing case: verdict exit $RC"
expect_match "action: missing case: status=error" "$OUTS" "^status=error$"
expect_match "action: missing case: the summary says what is missing" "$SUM" \
    "nothing_here\.json\` \| \*\*ERROR\*\*: no such case file"
act nothing run
[ "$RC" -eq 2 ] && pass "action: nothing to run is exit 2" || fail "action: nothing to run: exit $RC"

step macos "INPUT_CASES=fixtures/cases/ours_micro_reduce_tree.json" INPUT_BACKEND=sw RUNNER_OS=macOS \
    RUNNER_ENVIRONMENT=github-hosted
expect_match "action: hosted macOS runner: the summary says the paravirtual GPU's timings are not a chip's" "$SUM" \
    "Apple Paravirtual device.*not those of an Apple GPU's chip"

act key key
expect_match "action: key: a 16-digit key of gdnbench's sources in the outputs" "$OUTS" "^key=[0-9a-f]{16}$"
# A build restored from the cache, made from these sources, is used without make
# (the checkout's files are newer than its objects).  install-deps.sh run is part of
# the build step: run it only where the run part is installed already.
if command -v dpkg-query >/dev/null 2>&1 && bash "$ROOT/scripts/install-deps.sh" --list run >/dev/null &&
    [ -z "$(for p in $(bash "$ROOT/scripts/install-deps.sh" --list run); do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || echo "$p"; done)" ]; then
    mkdir -p "$TMPD/cached"
    cp "$GDNBENCH" "$TMPD/cached/gdnbench"
    key=${OUTS#key=}
    printf '%s\n' "$key" >"$TMPD/cached/source-key"
    act build build GDNBENCH_BUILD="$TMPD/cached"
    expect_match "action: build: a cached build of the same sources is used as it is" \
        "$(cat "$TMPD/log-build.txt")" "using the cached build of sources $key$"
    expect_match "action: build: bin= the cached binary" "$OUTS" "^bin=$TMPD/cached/gdnbench$"
    [ ! -d "$TMPD/cached/obj" ] && pass "action: build: make did not run" || fail "action: build: make ran over the cached build"
else
    skip "action: build: the run part of the dependencies is not all installed here (the test installs nothing)"
fi

if command -v python3 >/dev/null 2>&1; then
    bad=
    for f in "$TMPD"/out-*/junit/*.xml; do
        python3 "$ROOT/tests/cli/junit_check.py" "$f" >/dev/null 2>"$TMPD/jerr" || bad="$bad $f: $(head -c 200 "$TMPD/jerr")"
    done
    [ -z "$bad" ] && pass "action: every JUnit file the runs wrote is valid" || fail "action: invalid JUnit:$bad"
else
    skip "action: JUnit files: python3 (the test's XML oracle) is not installed"
fi

Y="$ROOT/.github/actions/gdnbench/action.yml"
for v in $(grep -o 'INPUT_[A-Z]*' "$A" | sort -u); do
    grep -q "^ *$v: \${{ inputs\." "$Y" && pass "action.yml passes $v" || fail "action.yml does not pass $v, which action.sh reads"
done
for sub in key build run verdict; do
    grep -q "scripts/ci/action.sh\" $sub$" "$Y" && pass "action.yml runs action.sh $sub" || fail "action.yml lacks the $sub step"
done
finish
