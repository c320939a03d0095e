#!/usr/bin/env bash
# test_attn_fixtures.sh — the attention and fused-decode ops against independent
# float64 torch oracles (scripts/make_fixtures.py: autograd for the attention
# gradients), through --fixture on the cpu backend.  Skips when no python3 with torch.
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
    echo "SKIP attn/decode torch fixtures: no python3 with torch (apt-get install python3-torch)"
    exit 0
fi

gen() { # DIR args...: writes the fixtures, one PASS/FAIL line
    local dir=$1
    shift
    expect_exit 0 "make_fixtures.py $*" "$py" "$root/scripts/make_fixtures.py" --out "$dir" "$@"
}

gen "$TMPD/a" --ops attn_fwd,attn_bwd,prep_step,decode_seq --B 2 --Hq 4 --Hkv 2 --qL 33 --kL 47 --D 64 --causal 1 \
    --Hg 2 --H 4 --K 64 --V 32 --N 4
gen "$TMPD/b" --ops attn_fwd,attn_bwd --B 1 --Hq 2 --Hkv 1 --qL 40 --kL 17 --D 256 --causal 0
for set in a b; do
    for op in attn_fwd attn_bwd prep_step decode_seq decode_seq_steps; do
        f=$op
        [ "$op" = decode_seq_steps ] && f=decode_seq
        [ -e "$TMPD/$set/$f.safetensors" ] || continue
        expect_exit 0 "$op matches the torch oracle (set $set)" "$GDNBENCH" "$op" --fixture "$TMPD/$set/$f.safetensors" \
            --backend cpu --iters 1 --warmup 0
        expect_match "$op checked against the fixture's outputs (set $set)" "$OUT" "fixture +[0-9.e+-]+ .*PASS"
    done
done
