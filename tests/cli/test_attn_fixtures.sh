#!/usr/bin/env bash
# test_attn_fixtures.sh — the attention and fused-decode ops against independent
# float64 torch oracles (scripts/make_fixtures.py: autograd for the attention
# gradients), through --fixture on the cpu backend.
#
# Needs python3 with torch (Debian's python3-torch 1.13 is enough: float64 autograd).
# `make test` does not install it; .ci/run does, so in CI (env CI set) a missing torch
# is a FAIL — this is the only check of those ops against an independent oracle, and
# a SKIP there would let it silently never run.  Elsewhere it is a SKIP.
. "$(dirname "$0")/lib.sh"
root=${GDNBENCH_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}

py=
for cand in python3 /usr/bin/python3; do
    if command -v "$cand" >/dev/null 2>&1 && "$cand" -c "import torch" >/dev/null 2>&1; then
        py=$cand
        break
    fi
done
if [ -z "$py" ]; then
    why="attn/decode torch fixtures: no python3 with torch (apt-get install python3-torch)"
    if [ -n "${CI:-}" ]; then
        fail "$why; CI is set, and .ci/run installs it, so its absence is a broken CI setup"
        finish
    fi
    skip_all "$why"
fi

gen() { # DIR args...: writes the fixtures, one PASS/FAIL line
    local dir=$1
    shift
    expect_exit 0 "make_fixtures.py $*" "$py" "$root/scripts/make_fixtures.py" --out "$dir" "$@"
}

gen "$TMPD/a" --ops attn_fwd,attn_bwd,prep_step,decode_seq --B 2 --Hq 4 --Hkv 2 --qL 33 --kL 47 --D 64 --causal 1 \
    --Hg 2 --H 4 --K 64 --V 32 --N 4
gen "$TMPD/b" --ops attn_fwd,attn_bwd --B 1 --Hq 2 --Hkv 1 --qL 40 --kL 17 --D 256 --causal 0
# Every op asked of the generator must have its fixture written and pass against it.
check_set() { # SET OP...
    local set=$1 op f
    shift
    for op in "$@"; do
        f=$op
        [ "$op" = decode_seq_steps ] && f=decode_seq
        if [ ! -s "$TMPD/$set/$f.safetensors" ]; then
            fail "$op fixture (set $set): make_fixtures.py did not write $f.safetensors"
            continue
        fi
        expect_exit 0 "$op matches the torch oracle (set $set)" "$GDNBENCH" "$op" --fixture "$TMPD/$set/$f.safetensors" \
            --backend cpu --iters 1 --warmup 0
        expect_match "$op checked against the fixture's outputs (set $set)" "$OUT" "fixture +[0-9.e+-]+ .*PASS"
    done
}
check_set a attn_fwd attn_bwd prep_step decode_seq decode_seq_steps
check_set b attn_fwd attn_bwd

finish
