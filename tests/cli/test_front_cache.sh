#!/usr/bin/env bash
# test_front_cache.sh — the front end's result in the compile cache (issue 35,
# src/swmetal/front_cache.c): a warm run runs no front-end pass (compile.phases'
# `prepasses`, the `passes` column of -v) and gives the same bytes as the cold run;
# a truncated or damaged entry is rebuilt, never trusted; editing an included
# header makes a new entry.  Nothing here asserts how long anything takes.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

if ! "$GDNBENCH" info 2>/dev/null | grep -q '^  sw .*available:'; then
    skip_all "front cache: the software device is not available here ($("$GDNBENCH" info 2>&1 | grep '^  sw'))"
fi
export GDNBENCH_CACHE_DIR="$TMPD/cache"
unset GDNBENCH_SW_FRONT_CACHE GDNBENCH_SW_KEEP_CPP

# a kernel whose name and scale come from an included header; simd_sum makes it a
# lanes library too, so the lanes rewrite is part of the entry
mkdir -p "$TMPD/src"
printf '#define KNAME twice\n#define SCALE 2.0f\n' >"$TMPD/src/k.h"
cat >"$TMPD/src/k.metal" <<'EOF'
#include <metal_stdlib>
#include "k.h"
using namespace metal;
kernel void KNAME(device float *x [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    x[i] = x[i] * SCALE + simd_sum(x[i]);
}
EOF
run() { # run NAME JSON [DUMPDIR]: one run of kernel NAME
    local dump=()
    [ -n "${3:-}" ] && dump=(--dump "$3")
    "$GDNBENCH" kernel "$TMPD/src/k.metal" --function "$1" --grid 64 --threadgroup 32 \
        --buffer x=float32[64]:arange=0,1 --iters 1 --warmup 0 --json "$2" --quiet "${dump[@]}"
}
flat() { tr -d ' \t\n' <"$1" 2>/dev/null; }
# the `prepasses` of one kind in a flattened record ("" when the kind is absent)
passes() { printf '%s' "$1" | grep -Eo "\"$2\":\\{\"compiles\":[0-9]+,\"cached\":[0-9]+,\"prepasses\":[0-9]+" |
    grep -Eo '[0-9]+$'; }

expect_exit 0 "front cache: a cold run" run twice "$TMPD/cold.json" "$TMPD/d-cold"
j=$(flat "$TMPD/cold.json")
expect_match "front cache: ... runs the front end (library prepasses > 0)" "$(passes "$j" library)" '^[1-9][0-9]*$'
n=$(ls "$GDNBENCH_CACHE_DIR"/fe-*.front 2>/dev/null | wc -l | tr -d ' ')
expect_match "front cache: ... and keeps one front-end entry" "$n" '^1$'

expect_exit 0 "front cache: a warm run" run twice "$TMPD/warm.json" "$TMPD/d-warm"
j=$(flat "$TMPD/warm.json")
expect_match "front cache: ... runs no front-end pass for the library" "$(passes "$j" library)" '^0$'
expect_match "front cache: ... nor for its variants (no C++ generated)" "$(passes "$j" fibers)" '^0$'
expect_no_match "front cache: ... no kind with a pass at all" "$j" '"prepasses":[1-9]'
if cmp -s "$TMPD/d-cold/kernel_twice.safetensors" "$TMPD/d-warm/kernel_twice.safetensors"; then
    pass "front cache: ... and the same output bytes as the cold run"
else
    fail "front cache: ... the warm run's dump differs from the cold run's ($(ls "$TMPD"/d-cold "$TMPD"/d-warm))"
fi

# the counter counts: with the cache off, the same warm run runs the front end
GDNBENCH_SW_FRONT_CACHE=0 expect_exit 0 "front cache: GDNBENCH_SW_FRONT_CACHE=0" run twice "$TMPD/off.json"
expect_match "front cache: ... runs the front end again" "$(passes "$(flat "$TMPD/off.json")" library)" '^[1-9][0-9]*$'

# a damaged entry: the kernel's name changed inside it (same length) is not trusted
fe=$(ls "$GDNBENCH_CACHE_DIR"/fe-*.front | head -1)
perl -0777 -pi -e 's/twice/twicf/g' "$fe"
if grep -q twicf "$fe"; then pass "front cache: damaged the entry"; else fail "front cache: could not damage $fe"; fi
expect_exit 0 "front cache: a run over a damaged entry" run twice "$TMPD/bad.json"
expect_match "front cache: ... rebuilds it (library prepasses > 0)" "$(passes "$(flat "$TMPD/bad.json")" library)" \
    '^[1-9][0-9]*$'
expect_exit 0 "front cache: the next run" run twice "$TMPD/fixed.json"
expect_match "front cache: ... finds the rebuilt entry" "$(passes "$(flat "$TMPD/fixed.json")" library)" '^0$'

# a truncated entry, and a truncated variant alias
fe=$(ls "$GDNBENCH_CACHE_DIR"/fe-*.front | head -1)
size=$(wc -c <"$fe" | tr -d ' ')
head -c $((size / 2)) "$fe" >"$TMPD/half" && cat "$TMPD/half" >"$fe"
for vk in "$GDNBENCH_CACHE_DIR"/vk-*.vkey; do head -c 40 "$vk" >"$TMPD/half" && cat "$TMPD/half" >"$vk"; done
expect_exit 0 "front cache: a run over truncated entries" run twice "$TMPD/cut.json" "$TMPD/d-cut"
j=$(flat "$TMPD/cut.json")
expect_match "front cache: ... rebuilds the front-end entry" "$(passes "$j" library)" '^[1-9][0-9]*$'
expect_match "front cache: ... and the variant's C++ (its alias did not verify)" "$(passes "$j" fibers)" \
    '^[1-9][0-9]*$'
expect_match "front cache: ... yet finds the variant built (no clang run)" "$j" '"fibers":\{"compiles":0,'
if cmp -s "$TMPD/d-cold/kernel_twice.safetensors" "$TMPD/d-cut/kernel_twice.safetensors"; then
    pass "front cache: ... with the same output bytes"
else
    fail "front cache: ... the output after rebuilding differs"
fi

# an edited header: the kernel's new name comes from it, so an old entry would not know it
printf '#define KNAME thrice\n#define SCALE 2.0f\n' >"$TMPD/src/k.h"
expect_exit 0 "front cache: after editing the included header, the kernel it renames" run thrice "$TMPD/hdr.json"
expect_match "front cache: ... comes from a new front-end run" "$(passes "$(flat "$TMPD/hdr.json")" library)" \
    '^[1-9][0-9]*$'
n=$(ls "$GDNBENCH_CACHE_DIR"/fe-*.front 2>/dev/null | wc -l | tr -d ' ')
expect_match "front cache: ... kept as a second entry beside the first" "$n" '^2$'
expect_exit 2 "front cache: ... and the old name is gone" run twice "$TMPD/old.json"

# processes sharing an empty cache at once: each writes its entries under a name of
# its own and renames them into place, so all run and what is left verifies
export GDNBENCH_CACHE_DIR="$TMPD/shared"
for i in 1 2 3; do run thrice "$TMPD/par$i.json" >"$TMPD/par$i.out" 2>&1 & done
ok=0
for job in $(jobs -p); do wait "$job" && ok=$((ok + 1)); done
expect_match "front cache: three processes on one empty cache all run" "$ok" '^3$'
expect_exit 0 "front cache: ... and the next run" run thrice "$TMPD/par4.json"
expect_no_match "front cache: ... finds every entry they left (no pass)" "$(flat "$TMPD/par4.json")" '"prepasses":[1-9]'
export GDNBENCH_CACHE_DIR="$TMPD/cache"

# an op's -v table: the passes column, 0 on a warm run
op() { "$GDNBENCH" cumsum --backend sw --B 1 --T 64 --H 2 --iters 1 --warmup 0 -v "$@"; }
expect_exit 0 "front cache: an op, cold" op
expect_exit 0 "front cache: the op again, -v" op
expect_match "front cache: ... its table has the passes column" "$ERR" \
    '^  variant +runs cached +passes +pre-pass'
expect_no_match "front cache: ... with no pass in any row" "$ERR" '^  [a-z_]+ +[0-9]+ +[0-9]+ +[1-9]'
finish
