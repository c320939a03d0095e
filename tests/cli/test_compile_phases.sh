#!/usr/bin/env bash
# test_compile_phases.sh — what compiling kernels costs, as users see it (issue 35):
# `-v` prints the software device's compile table per case, and `--json` has
# `compile.phases` per kind of variant with clang's phases; a second process finds
# every variant built (no clang run); the cpu backend compiles nothing (null).
# Nothing here asserts how long anything takes.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

if ! "$GDNBENCH" info 2>/dev/null | grep -q '^  sw .*available:'; then
    skip_all "compile phases: the software device is not available here ($("$GDNBENCH" info 2>&1 | grep '^  sw'))"
fi
export GDNBENCH_CACHE_DIR="$TMPD/cache"
run() { "$GDNBENCH" cumsum --backend sw --B 1 --T 64 --H 2 --iters 1 --warmup 0 "$@"; }

expect_exit 0 "compile phases: -v on an empty cache" run -v --json "$TMPD/cold.json"
expect_match "compile phases: -v prints the total and the clang runs on stderr" "$ERR" \
    '^compile: [0-9]+\.[0-9]+ s, [1-9][0-9]* clang runs?, [0-9]+ variants? found built$'
expect_match "compile phases: ... a header naming the phases" "$ERR" \
    '^  variant +runs cached +passes +pre-pass +front-end +optimise +codegen +link +total s$'
expect_match "compile phases: ... and a row of the run variant with every phase (seconds)" "$ERR" \
    '^  fibers +[1-9][0-9]* +[0-9]+ +[0-9]+( +[0-9]+\.[0-9]+){6}$'
json=$(tr -d ' \t\n' < "$TMPD/cold.json" 2>/dev/null)
expect_match "compile phases: --json has compile.phases with the library's pre-pass" "$json" \
    '"compile":\{"wall_s":[0-9.e-]+,"phases":\{"library":\{"compiles":[0-9]+,"cached":[0-9]+,"prepasses":[1-9][0-9]*,"prepass_s":[0-9.e-]+,'
expect_match "compile phases: ... and clang's phases of the run variant, none null" "$json" \
    '"fibers":\{"compiles":[1-9][0-9]*,"cached":[0-9]+,"prepasses":[1-9][0-9]*,"prepass_s":[0-9.e-]+,"frontend_s":[0-9.e-]+,"optimise_s":[0-9.e-]+,"codegen_s":[0-9.e-]+,"link_s":[0-9.e-]+,"wall_s":[0-9.e-]+\}'

expect_exit 0 "compile phases: the same run again (the cache is warm)" run -v --json "$TMPD/warm.json"
expect_match "compile phases: ... runs clang no more" "$ERR" '^compile: [0-9.]+ s, 0 clang runs, [1-9][0-9]* variants? found built$'
json=$(tr -d ' \t\n' < "$TMPD/warm.json" 2>/dev/null)
expect_match "compile phases: ... and says so in the JSON" "$json" '"fibers":\{"compiles":0,"cached":[1-9]'

expect_exit 0 "compile phases: without -v" run
if printf '%s' "$ERR" | grep -q '^compile:'; then fail "compile phases: ... no compile table without -v"
else pass "compile phases: ... no compile table without -v"; fi

expect_exit 0 "compile phases: the cpu backend" "$GDNBENCH" cumsum --backend cpu --B 1 --T 64 --H 2 --iters 1 \
    --warmup 0 --json "$TMPD/cpu.json"
json=$(tr -d ' \t\n' < "$TMPD/cpu.json" 2>/dev/null)
expect_match "compile phases: ... has compile null" "$json" '"compile":null'
# a kernel case (gdnbench kernel) on the software device: its record has the phases too
printf 'kernel void twice(device float *x [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n    x[i] *= 2.0f;\n}\n' \
    > "$TMPD/twice.metal"
expect_exit 0 "compile phases: a kernel case" "$GDNBENCH" kernel "$TMPD/twice.metal" --function twice --grid 64 \
    --threadgroup 32 --buffer x=float32[64]:arange=0,1 --iters 1 --json "$TMPD/case.json" --quiet
json=$(tr -d ' \t\n' < "$TMPD/case.json" 2>/dev/null)
expect_match "compile phases: ... has compile.phases with its run variant" "$json" \
    '"compile":\{"wall_s":[0-9.e-]+,"phases":\{.*"fibers":\{"compiles":1,'
finish
