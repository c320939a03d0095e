#!/usr/bin/env bash
# test_cli_errors.sh — exit codes and one-line messages for bad input (cli.md).
. "$(dirname "$0")/lib.sh"
G=$GDNBENCH

expect_exit 0 "cli: --help exits 0" $G --help
expect_exit 0 "cli: list exits 0" $G list
expect_match "cli: list names cumsum" "$OUT" "cumsum"
expect_exit 0 "cli: info exits 0" $G info
expect_exit 0 "cli: op --help exits 0" $G cumsum --help
expect_match "cli: op --help lists dims" "$OUT" "--T"
expect_exit 2 "cli: no arguments" $G
expect_exit 2 "cli: unknown op" $G nosuchop
expect_match "cli: unknown op message names it" "$ERR" "nosuchop"

bad() { # bad "description" regex-for-stderr args...
    local desc=$1 re=$2
    shift 2
    expect_exit 2 "cli: $desc exits 2" $G "$@"
    expect_match "cli: $desc message" "$ERR" "$re"
    local lines
    lines=$(printf '%s\n' "$ERR" | grep -c .)
    if [ "$lines" -eq 1 ]; then pass "cli: $desc is one line"; else fail "cli: $desc printed $lines lines"; fi
}

bad "unknown flag" "--bogus" cumsum --bogus 1
bad "T=0" "--T 0" cumsum --T 0
bad "negative T" "--T" cumsum --T -5
bad "non-numeric T" "--T 'abc' is not an integer" cumsum --T abc
bad "BT not 64" "--BT 32" cumsum --BT 32
bad "missing value" "--T needs a value" cumsum --T
bad "empty range" "--T '9..3'" cumsum --T 9..3
bad "bad step" "step" cumsum --T 1..9:y2
bad "bad check" "--check 'x'" cumsum --check x
bad "bad backend" "--backend 'gpu'" cumsum --backend gpu
bad "iters 0" "--iters 0" cumsum --iters 0
bad "bad seed" "--seed" cumsum --seed -1
bad "negative atol" "--atol" cumsum --atol -1
bad "bad dtype" "--dtype 'f64'" cumsum --dtype f64
bad "function without shader" "--function f needs --shader FILE" cumsum --backend sw --function f
bad "unreadable shader" "--shader x.metal: x.metal: cannot read it" cumsum --backend sw --shader x.metal
bad "bad constant" "--constant" cumsum --constant 12
# MSL source must be UTF-8 (Metal's newLibraryWithSource: takes an NSString): a Latin-1
# byte is refused on every backend, naming the file, its line:column and byte offset,
# in the main file and in a header it includes.
printf '#include <metal_stdlib>\nusing namespace metal;\n// caf\351 au lait\nkernel void k(device float *y [[buffer(0)]],\n    uint i [[thread_position_in_grid]]) { y[i] = 1.0f; }\n' >"$TMPD/latin1.metal"
bad "Latin-1 shader" "latin1.metal:3:7: error: byte 53 \\(0xE9\\) is not UTF-8" cumsum --backend sw --T 64 --H 1 \
    --shader "$TMPD/latin1.metal" --function k
mkdir -p "$TMPD/inc"
printf '// \374ber\n#define SCALE 2.0f\n' >"$TMPD/inc/scale.h"
printf '#include <metal_stdlib>\n#include "scale.h"\nusing namespace metal;\nkernel void k(device float *y [[buffer(0)]],\n    uint i [[thread_position_in_grid]]) { y[i] = SCALE; }\n' >"$TMPD/utf8.metal"
bad "Latin-1 header" "inc/scale.h:1:4: error: byte 3 \\(0xFC\\) is not UTF-8" cumsum --backend sw --T 64 --H 1 \
    --shader "$TMPD/utf8.metal" --include "$TMPD/inc" --function k
bad "bad sw-checks" "--sw-checks" cumsum --sw-checks most
bad "huge expansion" "more than" cumsum --T 1..100000:+1 --H 1..100:+1
bad "one bad shape in a list" "--T 0" cumsum --T 64,0

expect_exit 0 "cli: list of shapes runs" $G cumsum --backend cpu --T 1,63..65 --H 2 --iters 2 --warmup 0 --quiet
expect_exit 0 "cli: range with factor" $G cumsum --backend cpu --T 64..256:x2 --H 1 --iters 1 --warmup 0 --quiet
# The cpu backend's output is the bf16-parity reference: parity is no check there.
expect_exit 0 "cli: cpu backend runs kkt" $G kkt --backend cpu --T 100 --H 2 --Hg 1 --iters 1 --warmup 0 --json "$TMPD/cpu.json"
expect_match "cli: cpu parity row says self, not a check" "$OUT" "A +bf16-parity +(- +)+self, not a check"
if printf '%s' "$OUT" | grep -Eq "bf16-parity .*PASS"; then fail "cli: cpu parity shown as PASS"; else pass "cli: cpu parity not shown as PASS"; fi
expect_match "cli: cpu JSON lists parity as not checked" "$(tr -d ' \n\t' <"$TMPD/cpu.json")" \
    '"not_checked":\[\{"output":"A","reference":"bf16-parity","reason":"self"'
expect_exit 1 "cli: impossible tolerance fails the check with exit 1" $G cumsum --backend cpu --T 64 --H 2 --iters 1 --check f64 --atol 0 --rtol 0
expect_match "cli: failing check prints FAIL and the first bad coordinate" "$OUT" "FAIL.*first at \["
bad "shape too big for memory" "reduce the shape" kkt --quiet --backend cpu --T 16777216 --H 4096 --Hg 4096
GDNBENCH_MEM_LIMIT_MB=1 expect_exit 2 "cli: a memory budget refuses a shape that does not fit" $G chunk_fwd --backend cpu --T 4096 --quiet
# --capture records a real GPU's work: other backends refuse it before anything runs.
bad "--capture on the software device" "--capture needs --backend metal.*--backend sw" cumsum --backend sw --capture "$TMPD/cap" --T 64 --H 1
bad "--capture on the cpu backend" "--capture needs --backend metal.*--backend cpu" cumsum --backend cpu --capture "$TMPD/cap" --T 64 --H 1
if [ -e "$TMPD/cap" ]; then fail "cli: a refused --capture created its directory"; else pass "cli: a refused --capture creates nothing"; fi
# The same for kernel cases (`kernel`, `suite`; `validate` runs on the software device).
kc=(kernel "$(dirname "$0")/kernels/cases/add_one.metal" --function add_one --grid 64 --threadgroup 32
    --buffer "x=float32[64]" --buffer "out=float32[64]" --buffer n=uint32:64)
bad "kernel --capture on the software device" "^gdnbench kernel: --capture needs --backend metal.*--backend sw\$" \
    "${kc[@]}" --backend sw --capture "$TMPD/kcap"
bad "validate --capture" "--capture needs --backend metal.*--backend sw" validate \
    "$(dirname "$0")/../../fixtures/cases/ours_l2norm_bf16.json" --backend metal --capture "$TMPD/kcap"
bad "suite --capture on the software device" "--capture needs --backend metal.*--backend sw" suite \
    "$(dirname "$0")/kernels" --backend sw --capture "$TMPD/kcap"
if [ -e "$TMPD/kcap" ]; then fail "cli: a refused kernel --capture created its directory"; else pass "cli: a refused kernel --capture creates nothing"; fi
expect_exit 0 "cli: kernel --help" $G kernel --help
expect_match "cli: kernel --help names --capture" "$OUT" "--capture DIR +\(--backend metal\)"
expect_match "cli: ... and the trace's file" "$OUT" "DIR/kernel-<case name>\.gputrace"

# How many runs: --iters is exact, --max-time/--max-noise adapt (runner/sampling.h).
bad "--iters with --max-time" "--iters N takes exactly N samples.*--max-time" cumsum --backend cpu --iters 3 --max-time 1
bad "--max-time 0" "--max-time 0 is out of range" cumsum --backend cpu --max-time 0
bad "--max-noise over 100" "--max-noise 150 is out of range" cumsum --backend cpu --max-noise 150
bad "--min-samples 0" "--min-samples 0 is out of range" cumsum --backend cpu --min-samples 0
expect_exit 0 "cli: adaptive run" $G cumsum --backend cpu --T 64 --H 1 --max-time 0.2 --max-noise 50 --min-samples 4 \
    --json "$TMPD/adaptive.json"
expect_match "cli: the header says how samples are taken" "$OUT" "timed samples until 0.2 s or 50% noise \(at least 4"
expect_match "cli: the table says why sampling stopped" "$OUT" "samples [0-9]+, stopped (at the noise target|by the time budget)"
expect_match "cli: the table shows the warmup run" "$OUT" "warmup 1 run: first .*x the median"
expect_match "cli: JSON records the sampling" "$(tr -d ' \n\t' <"$TMPD/adaptive.json")" \
    '"warmup_samples":\[[0-9.e+-]+\],"sampling":\{"mode":"adaptive","stop":"(noisetarget|budget)","cold":false'
expect_exit 0 "cli: --iters is exact" $G cumsum --backend cpu --T 64 --H 1 --iters 3 --warmup 2 --json "$TMPD/iters.json"
expect_match "cli: --iters takes that many samples" "$OUT" "time \(wall clock, n=3\).*"
expect_match "cli: JSON of --iters" "$(tr -d ' \n\t' <"$TMPD/iters.json")" \
    '"warmup":2,"iterations":3,.*"sampling":\{"mode":"iters","stop":"iters"'

finish
