#!/usr/bin/env bash
# test_fixture_cli.sh — --fixture with mlx-native's recorded sets, --dump round trip,
# and the errors a bad fixture gives.
. "$(dirname "$0")/lib.sh"
G=$GDNBENCH
MLX="$GDNBENCH_ROOT/../shared/fixtures/mlx-native"

if [ -d "$MLX" ]; then
    for pair in kkt:gated_delta_net_kkt wy:gated_delta_net_recompute_wu chunk_h:gated_delta_net_chunk \
                chunk_o:gated_delta_net_chunk_o solve_tril:chunk_tri_solve_invert chunk_fwd:chunk_gated_delta_rule_fwd; do
        op=${pair%%:*}
        set=${pair#*:}
        for be in cpu sw; do
            expect_exit 0 "fixture: mlx-native $set passes on $be" $G "$op" --backend $be --fixture "$MLX/${set}_meta.json" --iters 1 --warmup 0
            expect_match "fixture: mlx-native $set checked against the fixture on $be" "$OUT" "fixture +[0-9.e+-]+ .*PASS"
        done
    done
    expect_exit 2 "fixture: a flag contradicting the fixture exits 2" $G kkt --backend cpu --T 4096 --fixture "$MLX/gated_delta_net_kkt_meta.json"
    expect_match "fixture: contradiction names the flag" "$ERR" "--T contradicts the fixture"
    expect_exit 2 "fixture: wrong op for the fixture exits 2" $G chunk_o --backend cpu --fixture "$MLX/gated_delta_net_kkt_meta.json"
else
    skip "fixture: ../shared/fixtures/mlx-native is absent (third-party fixtures are read from there, never copied)"
fi

expect_exit 2 "fixture: missing file exits 2" $G kkt --backend cpu --fixture "$TMPD/nope.safetensors"
expect_match "fixture: missing file named" "$ERR" "nope.safetensors"
printf 'garbage' >"$TMPD/bad.safetensors"
expect_exit 2 "fixture: corrupt file exits 2" $G kkt --backend cpu --fixture "$TMPD/bad.safetensors"
expect_match "fixture: corrupt file named" "$ERR" "bad.safetensors"

# --dump writes inputs, outputs and references; the dump is itself a fixture.
expect_exit 0 "dump: kkt run with --dump" $G kkt --backend cpu --T 100 --Hg 1 --H 2 --K 64 --iters 1 --warmup 0 --dump "$TMPD/d"
f=$(ls "$TMPD"/d/kkt_*.safetensors 2>/dev/null | head -1)
if [ -n "$f" ]; then pass "dump: file written"; else fail "dump: no file in $TMPD/d"; fi
expect_exit 0 "dump: the dump reads back as a fixture, shape included" $G kkt --backend cpu --fixture "$f" --iters 1 --warmup 0
expect_match "dump: shape came from the dump" "$OUT" "B=1 T=100 Hg=1 H=2 K=64"

finish
