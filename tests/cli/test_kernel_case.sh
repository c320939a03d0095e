#!/usr/bin/env bash
# test_kernel_case.sh — `gdnbench kernel` case files and the flag form (issue 30,
# ../shared/spec/case.md): the flag form printed as a case file (--print-case) is the
# case the file gives; every kind of bad input is exit 2 with one line naming the key
# path (unknown key, wrong JSON type, a file whose dtype or shape disagrees with the
# case, an expected file of another shape, not JSON with line and column, a threadgroup
# over 1024, threadgroup memory over 32 KiB, a bad --buffer SPEC); and cases run on the
# software device: checks pass on a good kernel and fail on planted bugs (an element
# left unwritten, a readonly input written, a NaN, a wrong expectation), unbound
# parameters and unknown functions are exit 2, a two-pass "dispatches" sequence with a
# function constant by name runs in one command buffer; validate fails a threadgroup
# race that a plain run passes (and passes its fix) and a kernel that reads an output
# before writing it (a second, finite poison pattern); suite runs a directory.
. "$(dirname "$0")/lib.sh"
G=$GDNBENCH
need_testdata
case_dir case add_one.metal

one_line() { # desc
    local n
    n=$(printf '%s\n' "$ERR" | grep -c .)
    if [ "$n" -eq 1 ]; then pass "$1"; else fail "$1: $n lines: $(printf '%s' "$ERR" | head -c 300)"; fi
}

"$TESTDATA" tensors "$D/x.npy" x:f32:64:arange=0,1 || fail "write x.npy"
"$TESTDATA" tensors "$D/out.npy" out:f32:64:arange=1,1 || fail "write out.npy"
"$TESTDATA" tensors "$D/x32.npy" x:f32:32:arange=0,1 || fail "write x32.npy"
"$TESTDATA" tensors "$D/xi.npy" x:i32:64:arange=0,1 || fail "write xi.npy"
"$TESTDATA" tensors "$D/both.safetensors" x:f32:64:arange=0,1 out:f32:64:arange=1,1 || fail "write both.safetensors"

# A good case (file input, expected file, scalar) and its normal form.
cat >"$D/good.json" <<'JSON'
{"case": 1, "name": "add_one_64", "source": "add_one.metal", "function": "add_one",
 "dispatch": {"grid": [64], "threadgroup": [32]},
 "buffers": {"x": {"file": "x.npy", "readonly": true},
             "out": {"dtype": "float32", "shape": [64], "init": "poison", "expect": {"file": "out.npy", "atol": 0}},
             "n": {"dtype": "uint32", "value": 64}}}
JSON
expect_exit 0 "kernel: --print-case of a good case exits 0" $G kernel "$D/good.json" --print-case
printf '%s\n' "$OUT" >"$D/printed.json"
expect_match "kernel: the printed case keeps the expectation" "$OUT" '"expect":'
cp "$D/printed.json" "$D/again.json"
expect_exit 0 "kernel: the printed case reads back" $G kernel "$D/again.json" --print-case
if [ "$OUT" = "$(cat "$D/printed.json")" ]; then pass "kernel: the printed case is a fixed point"; else fail "kernel: printing the printed case changed it"; fi

# The flag form is the same case.
(cd "$D" && "$G" kernel add_one.metal --function add_one --grid 64 --threadgroup 32 --buffer x=x.npy \
    --buffer out=float32[64]:poison --buffer n=uint32:64 --expect out=out.npy --print-case) >"$D/flags.json" 2>"$TMPD/ferr"
expect_match "kernel: the flag form prints a case" "$(cat "$D/flags.json")" '"function":[[:space:]]+"add_one"'
expect_match "kernel: the flag form's scalar" "$(cat "$D/flags.json")" '"value":[[:space:]]+64'
expect_exit 0 "kernel: the flag form's case reads back as a file" $G kernel "$D/flags.json" --print-case
expect_exit 0 "kernel: an .safetensors member as input" \
    $G kernel "$D/add_one.metal" --function add_one --grid 64 --threadgroup 32 --buffer "x=$D/both.safetensors:x" \
    --buffer out=float32[64] --buffer n=uint32:64 --expect "out=$D/both.safetensors:out" --print-case

# bad_case NAME JSON-SUBSTITUTION REGEX: good.json edited by sed, exit 2, one line, message.
bad_case() {
    local desc=$1 sedexpr=$2 re=$3
    sed "$sedexpr" "$D/good.json" >"$D/bad.json"
    expect_exit 2 "kernel: $desc exits 2" $G kernel "$D/bad.json" --print-case
    one_line "kernel: $desc is one line"
    expect_match "kernel: $desc names the key" "$ERR" "$re"
}
bad_case "an unknown key" 's/"atol": 0/"atoll": 0/' 'bad.json: buffers\.out\.expect: unknown key "atoll"'
bad_case "a wrong JSON type" 's/"file": "out.npy"/"file": 3/' 'buffers\.out\.expect\.file: must be a string, not a number'
bad_case "an input file of another dtype" 's/"file": "x.npy"/"file": "x.npy", "dtype": "int32"/' \
    'buffers\.x\.file: x\.npy holds float32 but "dtype" says int32'
bad_case "an input file of another shape" 's/"file": "x.npy"/"file": "x.npy", "shape": [8, 8]/' \
    'buffers\.x\.file: x\.npy has shape \[64\] but "shape" says \[8,8\]'
bad_case "an expected file of another shape" 's/"file": "out.npy"/"file": "x32.npy"/' \
    'buffers\.out\.expect\.file: x32\.npy has shape \[32\] but buffer out is \[64\]'
bad_case "a missing file" 's/"file": "x.npy"/"file": "nope.npy"/' 'buffers\.x\.file: .*nope\.npy'
bad_case "a missing source" 's/"add_one.metal"/"nope.metal"/' 'bad\.json: source: .*nope\.metal'
bad_case "a threadgroup over 1024" 's/"threadgroup": \[32\]/"threadgroup": [64, 32]/' \
    'dispatch\.threadgroup: is 2048 threads, over Metal.s 1024'
bad_case "threadgroup memory over 32 KiB" 's/"threadgroup": \[32\]/"threadgroup": [32], "threadgroup_memory": {"0": 40000}/' \
    'dispatch\.threadgroup_memory\.0: must be an integer from 1 to 32768'
bad_case "a value out of its dtype's range" 's/"value": 64/"value": -64/' 'buffers\.n\.value: -64 is not a uint32 value'
bad_case "an int32 file where the case says float32" 's/"file": "x.npy"/"file": "xi.npy", "dtype": "float32"/' \
    'xi\.npy holds int32 but "dtype" says float32'
bad_case "not JSON" 's/"case": 1,/"case": 1,,/' 'bad\.json:1:[0-9]+: not JSON'
bad_case "two forms in one buffer" 's/"file": "x.npy"/"file": "x.npy", "value": 3/' 'buffers\.x: give one of "file", "value" or "struct"'

expect_exit 2 "kernel: a bad --buffer SPEC exits 2" $G kernel "$D/add_one.metal" --function add_one --grid 64 \
    --threadgroup 32 --buffer x=float31[64]
expect_match "kernel: a bad --buffer SPEC names the dtype list" "$ERR" '--buffer x=float31\[64\]: "float31" is not a dtype'
expect_exit 2 "kernel: --expect for an unknown buffer exits 2" $G kernel "$D/add_one.metal" --function add_one --grid 64 \
    --threadgroup 32 --buffer x=float32[64] --expect y=out.npy
expect_match "kernel: --expect for an unknown buffer says so" "$ERR" 'NAME is not given by a --buffer'
expect_exit 2 "kernel: flags beside a case file exit 2" $G kernel "$D/good.json" --grid 4
expect_exit 0 "kernel: --help exits 0" $G kernel --help

# ---- running cases (the software device) ----
need_sw "kernel: running cases"
export GDNBENCH_CACHE_DIR="$TMPD/cache"
case_kernel controls.metal
expect_exit 0 "kernel: a good case runs and passes" $G kernel "$D/good.json"
expect_match "kernel: the table names each binding" "$OUT" 'out +buffer\(1\) +float32 +64 +PASS +expect: max_abs 0'
expect_match "kernel: the readonly input is checked" "$OUT" 'x +buffer\(0\) .*PASS +readonly: 0 elements changed'
expect_match "kernel: determinism is checked" "$OUT" 'determinism: bitwise identical'
# Timed as an op run is, by the one run driver: adaptive sampling by default, exact
# --iters, --warmup; the same sampling lines and JSON timing fields.
expect_match "kernel: adaptive sampling by default, with the runner's line" "$OUT" \
    'samples [0-9]+, (stopped|cold|as --iters)'
expect_exit 0 "kernel: --iters and --warmup as for an op" $G kernel "$D/good.json" --iters 4 --warmup 2 \
    --json "$D/iters.out.json"
expect_match "kernel: --iters 4 takes four samples" "$OUT" 'samples 4, as --iters asked'
expect_match "kernel: --warmup 2 runs twice first" "$OUT" 'warmup 2 runs: first'
expect_match "kernel: determinism over every run, warmup included" "$OUT" 'bitwise identical across 6 runs'
expect_match "kernel: the report's sampling mode" "$("$TESTDATA" json "$D/iters.out.json" .timing.sampling.mode)" '^"?iters"?$'
expect_match "kernel: the report's samples" "$("$TESTDATA" json "$D/iters.out.json" .timing.iterations)" '^4$'
expect_match "kernel: the report's warmup" "$("$TESTDATA" json "$D/iters.out.json" .timing.warmup)" '^2$'
expect_exit 0 "kernel: an adaptive run with a budget" $G kernel "$D/good.json" --max-time 0.2 --min-samples 2 \
    --json "$D/adapt.out.json"
expect_match "kernel: the adaptive report says why it stopped" \
    "$("$TESTDATA" json "$D/adapt.out.json" .timing.sampling.stop)" '^"?(noise target|budget)"?$'
expect_exit 2 "kernel: --iters with --max-time is refused as for an op" $G kernel "$D/good.json" --iters 3 --max-time 1
expect_match "kernel: ... in one line naming both" "$ERR" '--iters N takes exactly N samples, so --max-time'
expect_exit 0 "kernel: the flag form runs" $G kernel "$D/add_one.metal" --function add_one --grid 64 --threadgroup 32 \
    --buffer "x=$D/x.npy" --buffer out=float32[64] --buffer n=uint32:64 --expect "out=$D/out.npy" --iters 2

# run_case DESC SED EXIT REGEX: good.json edited, run, exit status and a line of the table or stderr.
run_case() {
    local desc=$1 sedexpr=$2 want=$3 re=$4
    sed "$sedexpr" "$D/good.json" >"$D/run.json"
    expect_exit "$want" "kernel: $desc exits $want" $G kernel "$D/run.json"
    expect_match "kernel: $desc: says so" "$OUT$ERR" "$re"
}
run_case "a wrong expectation" 's/"file": "out.npy", "atol": 0/"file": "x.npy", "atol": 0/' 1 \
    'out +buffer\(1\) .*FAIL +expect: max_abs 1 .*64 bad, first at 0'
run_case "a kernel leaving an element unwritten (negative control)" 's/"add_one.metal", "function": "add_one"/"controls.metal", "function": "skip_last"/' 1 \
    'out +buffer\(1\) .*FAIL .*1 unwritten'
run_case "a kernel writing a readonly input (negative control)" 's/"add_one.metal", "function": "add_one"/"controls.metal", "function": "clobber"/' 1 \
    'x +buffer\(0\) .*FAIL +readonly: 63 elements changed'
run_case "a NaN in an output without expect" \
    's/"add_one.metal", "function": "add_one"/"controls.metal", "function": "nan_at_zero"/; s/, "expect": {"file": "out.npy", "atol": 0}//' 1 \
    'out +buffer\(1\) .*FAIL +output: nan 1 inf 0'
run_case "an unbound parameter" 's/"n": {"dtype": "uint32", "value": 64}/"m": {"dtype": "uint32", "value": 64}/' 2 \
    "buffers: parameter 'n' \[\[buffer\(2\)\]\] of 'add_one' is not bound"
run_case "an unknown function" 's/"function": "add_one"/"function": "add_two"/' 2 "run.json: function: kernel function 'add_two' not found"
run_case "a threadgroup too small to hold the grid's work? no: a grid over 2^32" 's/"grid": \[64\]/"grid": [64, 0]/' 2 'dispatch\.grid\[1\]: must be an integer from 1'

# A two-pass sequence in one command buffer, a constant by name, a rebinding.
cat >"$D/seq.json" <<'JSON'
{"case": 1, "source": "controls.metal",
 "dispatches": [
   {"function": "twice", "dispatch": {"grid": [64], "threadgroup": [32]}, "bind": {"y": "tmp"}},
   {"function": "plus", "constants": {"add_two": true}, "dispatch": {"threadgroups": [2], "threadgroup": [32]},
    "bind": {"x": "tmp"}}],
 "buffers": {"x": {"dtype": "float32", "shape": [64], "init": {"arange": [0, 1]}, "readonly": true},
             "tmp": {"dtype": "float32", "shape": [64]},
             "y": {"dtype": "float32", "shape": [64], "expect": {"value": [EXPECTED]}}}}
JSON
vals=$(seq 0 63 | awk '{ if (NR > 1) printf ", "; printf "%d", 2 * $1 + 2 }')
sed -i "s/EXPECTED/$vals/" "$D/seq.json"
expect_exit 0 "kernel: a two-pass sequence with a constant by name passes" $G kernel "$D/seq.json"
sed 's/"add_two": true/"add_two": false/' "$D/seq.json" >"$D/seq1.json"
expect_exit 1 "kernel: the sequence with the other constant fails" $G kernel "$D/seq1.json"
sed 's/"add_two": true/"add_three": true/' "$D/seq.json" >"$D/seq2.json"
expect_exit 2 "kernel: a constant name the kernel lacks exits 2" $G kernel "$D/seq2.json"
expect_match "kernel: a constant name the kernel lacks lists the real ones" "$ERR" "declares no constant of that name \(it declares: add_two\)"
# validate: a race only other schedules expose (negative control), and its fix.
cat >"$D/race.json" <<'JSON'
{"case": 1, "source": "controls.metal", "function": "neighbour_race",
 "dispatch": {"threadgroups": [1], "threadgroup": [32], "threadgroup_memory": {"0": 128}},
 "buffers": {"out": {"dtype": "float32", "shape": [32]}}}
JSON
expect_exit 0 "kernel: the racy kernel passes a plain run (one schedule, same bytes every run)" $G kernel "$D/race.json"
expect_exit 1 "validate: the racy kernel fails under validate's schedules (negative control)" $G validate "$D/race.json"
expect_match "validate: the race is named" "$OUT" 'FAIL'
sed 's/neighbour_race/neighbour_fixed/' "$D/race.json" >"$D/fixed.json"
expect_exit 0 "validate: the kernel with its barrier passes every schedule" $G validate "$D/fixed.json"
expect_match "validate: every schedule is listed" "$OUT" 'random:2 +PASS'
cat >"$D/maxinto.json" <<'JSON'
{"case": 1, "source": "controls.metal", "function": "max_into", "dispatch": {"grid": [64], "threadgroup": [32]},
 "buffers": {"x": {"dtype": "float32", "shape": [64], "init": {"arange": [0, 1]}}, "out": {"dtype": "float32", "shape": [64]}}}
JSON
expect_exit 0 "kernel: a kernel reading its output first passes a plain run (fmax skips the NaN poison)" $G kernel "$D/maxinto.json"
expect_exit 1 "validate: it fails under the finite poison (negative control)" $G validate "$D/maxinto.json"
expect_match "validate: the poison run names the output" "$OUT" "poison 0x5a +FAIL +'out' differs from its bytes under the NaN poison"
sed 's/"threadgroup_memory": {"0": 128}/"threadgroup_memory": {"1": 128}/' "$D/race.json" >"$D/tgbad.json"
expect_exit 2 "kernel: a threadgroup length for an index the kernel lacks exits 2" $G kernel "$D/tgbad.json"

# The JSON report: schema 1 with the case's own key; compare reads it.
expect_exit 0 "kernel: --json writes the report" $G kernel "$D/good.json" --json "$D/good.out.json" --quiet
expect_match "kernel: the report names the case" "$("$TESTDATA" json "$D/good.out.json" .case.name)" '^"?add_one_64"?$'
expect_match "kernel: the report has each binding" "$("$TESTDATA" json "$D/good.out.json" .case.buffers[1].index)" '^1$'
expect_match "kernel: the report's check is against the expectation" "$("$TESTDATA" json "$D/good.out.json" .check[0].reference)" 'expected'
expect_exit 0 "compare: two kernel-case reports compare" $G compare "$D/good.out.json" "$D/good.out.json"


# --dump DIR: every buffer as the run left it, read back as another case's input.
expect_exit 0 "kernel: --dump writes the case's buffers" $G kernel "$D/good.json" --iters 2 --dump "$D/dump"
expect_match "kernel: --dump names its file" "$OUT" "dumped $D/dump/kernel_add_one_64.safetensors"
expect_match "kernel: the dump holds the expectation beside the output" \
    "$(head -c 2048 "$D/dump/kernel_add_one_64.safetensors" | tr -c '[:print:]' ' ')" '"out\.expected":\{"dtype":"F64"'
vals=$(seq 0 63 | awk '{ if (NR > 1) printf ", "; printf "%d", $1 + 2 }')
cat >"$D/readback.json" <<JSON
{"case": 1, "name": "readback", "source": "add_one.metal", "function": "add_one",
 "dispatch": {"grid": [64], "threadgroup": [32]},
 "buffers": {"x": {"file": "dump/kernel_add_one_64.safetensors", "tensor": "out", "readonly": true},
             "out": {"dtype": "float32", "shape": [64], "expect": {"value": [$vals], "atol": 0}},
             "n": {"dtype": "uint32", "value": 64}}}
JSON
expect_exit 0 "kernel: the dumped output (x + 1) read back gives x + 2 exactly" $G kernel "$D/readback.json" --iters 1

# {"backend": "sw"}: on the software device itself the output is its own reference,
# listed and not checked (as an op's output on the backend that is its reference);
# the other checks still apply.  The metal path (a second run on the software device
# as the reference) is tests/unit/test_kcase_reference.c's: Linux has no Metal.
sed 's/"expect": {"file": "out.npy", "atol": 0}/"expect": {"backend": "sw"}/' "$D/good.json" >"$D/bsw.json"
expect_exit 0 "kernel: expect {backend: sw} on sw passes" $G kernel "$D/bsw.json" --iters 2 --json "$D/bsw.out.json"
expect_match "kernel: ... and says it is its own reference" "$OUT" \
    'out +buffer\(1\) +float32 +64 +PASS +expect sw: this run is the sw device.s, its own reference \(not a check\)'
expect_match "kernel: the report lists it as not checked" \
    "$("$TESTDATA" json "$D/bsw.out.json" '.not_checked[0].reference')" '^"?sw"?$'
sed 's/"add_one.metal", "function": "add_one"/"controls.metal", "function": "skip_last"/' "$D/bsw.json" >"$D/bsw1.json"
expect_exit 1 "kernel: ... its unwritten element still fails it" $G kernel "$D/bsw1.json" --iters 2
if [ "$(uname)" != Darwin ]; then
    expect_exit 2 "kernel: --backend metal without Metal is one line, exit 2" $G kernel "$D/bsw.json" --backend metal
    expect_match "kernel: ... naming --backend sw" "$ERR" 'needs macOS with Metal.framework; on this host use --backend sw'
fi

# suite DIR: every case, one verdict.
mkdir -p "$D/suite"
cp "$D/good.json" "$D/suite/a.json"
cp "$D/fixed.json" "$D/suite/b.json"
cp "$D/add_one.metal" "$D/controls.metal" "$D/x.npy" "$D/out.npy" "$D/suite/"
expect_exit 0 "suite: a directory of passing cases exits 0" $G suite "$D/suite" --json "$D/suite.out.json"
expect_match "suite: counts its cases" "$OUT" 'suite .*: 2 cases, 2 passed, 0 failed, 0 could not run'
expect_match "suite: --json writes every case's record" "$("$TESTDATA" json "$D/suite.out.json" '#')" '^2$'
sed 's/"function": "add_one"/"function": "skip_last"/; s/"add_one.metal"/"controls.metal"/' "$D/good.json" >"$D/suite/c.json"
expect_exit 1 "suite: a failing case makes it exit 1" $G suite "$D/suite"
finish
