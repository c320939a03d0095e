#!/usr/bin/env bash
# test_stages.sh — a third-party kernel for one stage of an op, on the software
# device: --shader FILE --function NAME on the main stage (the other stages from FILE
# by default name, else ours), --shader FILE alone, --stage NAME=FILE[:FUNCTION];
# judged on the op's final outputs, reported per stage as ours or theirs, in run,
# validate and suite.  "Their" kernels are copies of ours with renamed functions.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
G=$GDNBENCH
R=$GDNBENCH_ROOT

if ! "$G" info 2>/dev/null | grep -q '^  sw .*available:'; then
    skip_all "stages: the software device is not available here"
fi

sed 's/gated_delta_net_kkt_bf16/their_kkt/' "$R/shaders/gdn_kkt.metal" >"$TMPD/their_kkt.metal"
# a broken one: the gate's sign flipped (what tests/mutants calls kkt_gate_sign)
sed 's/exp(gc_s\[i\] - gc_s\[j\])/exp(gc_s[j] - gc_s[i])/' "$TMPD/their_kkt.metal" >"$TMPD/bad_kkt.metal"
cmp -s "$TMPD/their_kkt.metal" "$TMPD/bad_kkt.metal" && fail "stages: the broken kkt is not broken (sed matched nothing)"
sed 's/"flash_attn_train_bwd_bf16_d64"/"their_bwd_d64"/' "$R/shaders/flash_attn.metal" >"$TMPD/their_bwd.metal"
cp "$R/shaders/gdn_kkt.metal" "$TMPD/same_names.metal"
CF="--T 65 --Hg 1 --H 2 --K 64 --V 64 --iters 1 --warmup 0"
ATT="--B 1 --Hq 2 --Hkv 1 --qL 40 --kL 40 --D 64 --iters 1 --warmup 0"

# chunk_fwd with their kkt and our other stages, judged on o and final.
expect_exit 0 "stages: chunk_fwd --stage kkt=their_kkt.metal:their_kkt passes" $G chunk_fwd --backend sw \
    --stage kkt="$TMPD/their_kkt.metal:their_kkt" $CF --json "$TMPD/cf.json"
expect_match "stages: the table says kkt ran theirs" "$OUT" "stage kkt +their_kkt .*theirs: .*their_kkt.metal"
expect_match "stages: ... and cumsum ours" "$OUT" "stage cumsum +chunk_local_cumsum_g_f32 .*ours: "
expect_match "stages: judged on the final outputs" "$OUT" "final +bf16-parity .*PASS"
origins=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(" ".join(s["name"]+"="+s["origin"] for s in r["launch"]["stages"]))' "$TMPD/cf.json" 2>&1)
expect_match "stages: the JSON says per stage whose kernel ran" "$origins" \
    "^cumsum=ours kkt=theirs solve_tril=ours wy=ours chunk_h=ours chunk_o=ours$"
# compare: a run with their kkt is not the same kernel as one with ours
$G chunk_fwd --backend sw $CF --quiet --json "$TMPD/cf_ours.json" >/dev/null 2>&1
"$G" compare "$TMPD/cf_ours.json" "$TMPD/cf.json" >"$TMPD/cmp.txt" 2>&1
expect_match "stages: compare marks their kkt stage as a changed kernel" "$(cat "$TMPD/cmp.txt")" "kernel source changed"
"$G" compare "$TMPD/cf_ours.json" "$TMPD/cf_ours.json" >"$TMPD/cmp2.txt" 2>&1
if grep -q "kernel source changed" "$TMPD/cmp2.txt"; then fail "stages: compare calls ours vs ours changed"
else pass "stages: compare pairs ours with ours unchanged"; fi
expect_exit 1 "stages: a broken kkt stage fails chunk_fwd's outputs" $G chunk_fwd --backend sw \
    --stage kkt="$TMPD/bad_kkt.metal:their_kkt" $CF
expect_match "stages: ... the failure is in o" "$OUT" "o +bf16-parity .*FAIL"

# attn_bwd: --function names the main (backward) kernel; the casts come from the same
# file under their default name.
expect_exit 0 "stages: attn_bwd --shader FILE --function NAME passes" $G attn_bwd --backend sw \
    --shader "$TMPD/their_bwd.metal" --function their_bwd_d64 $ATT --json "$TMPD/bwd.json"
expect_match "stages: the backward stage is theirs" "$OUT" "stage attn_bwd +their_bwd_d64 .*theirs: "
expect_match "stages: the casts are the file's own by default name" "$OUT" "stage cast_dV +f32_to_bf16_cast .*theirs: "
main=$(python3 -c 'import json,sys; k=json.load(open(sys.argv[1]))["kernel"]; print(k["function"], k["origin"])' "$TMPD/bwd.json" 2>&1)
expect_match "stages: the record's kernel is the main stage's" "$main" "^their_bwd_d64 theirs$"
expect_exit 0 "stages: chunk_fwd --help" $G chunk_fwd --help
expect_match "stages: ... lists the stage only some shapes run, with the flag that brings it in" "$OUT" \
    "^  and with --l2norm 1: l2norm \(gdn_l2norm_qk_bf16 in shaders/gdn_l2norm\.metal\)$"
expect_exit 0 "stages: attn_bwd --help names the main stage" $G attn_bwd --help
expect_match "stages: ... and which kernel that is" "$OUT" "main stage: attn_bwd \(our kernel flash_attn_train_bwd_bf16_d256"

# --shader FILE alone: every stage FILE defines under its default name.
expect_exit 0 "stages: --shader FILE alone runs FILE's kernel of the default name" $G kkt --backend sw \
    --shader "$TMPD/same_names.metal" --T 65 --Hg 1 --H 2 --K 64 --iters 1 --warmup 0
expect_match "stages: ... reported as theirs" "$OUT" "kernel gated_delta_net_kkt_bf16  theirs: .*same_names.metal"
expect_exit 2 "stages: --shader FILE alone without the main kernel's default name exits 2" $G attn_bwd --backend sw \
    --shader "$TMPD/their_bwd.metal" $ATT
expect_match "stages: ... naming the kernel it lacks and the fix" "$ERR" \
    "defines no kernel named flash_attn_train_bwd_bf16_d64 .*--function NAME"
expect_exit 2 "stages: --function on an op without a main stage exits 2" $G chunk_fwd --backend sw \
    --shader "$TMPD/their_kkt.metal" --function their_kkt $CF
expect_match "stages: ... pointing at --stage" "$ERR" "none is its main one.*--stage STAGE=FILE:their_kkt"

# --constant goes to the user's kernels only: ours keep their own constants.
expect_exit 0 "stages: --constant with a --stage kernel" $G chunk_fwd --backend sw \
    --stage kkt="$TMPD/their_kkt.metal:their_kkt" --constant 7=true $CF --quiet

# validate and suite take the same choice.
expect_exit 0 "stages: validate kkt with --stage" $G validate kkt --stage kkt="$TMPD/their_kkt.metal:their_kkt" \
    --T 65 --Hg 1 --H 2 --K 64 --B 1 --profile realistic --json "$TMPD/v.json"
expect_match "stages: validate's header names the stage's kernel" "$OUT" "stage kkt: .*their_kkt.metal:their_kkt"
vo=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["cases"][0]["record"]["kernel"]["origin"])' "$TMPD/v.json" 2>&1)
expect_match "stages: validate's JSON says theirs" "$vo" "^theirs$"
expect_exit 1 "stages: validate catches a broken stage" $G validate kkt --stage kkt="$TMPD/bad_kkt.metal:their_kkt" \
    --T 65 --Hg 1 --H 2 --K 64 --B 1 --profile realistic
expect_exit 0 "stages: suite smoke with --stage kkt" $G suite smoke --backend sw --iters 1 --warmup 0 --quiet \
    --stage kkt="$TMPD/their_kkt.metal:their_kkt" --json "$TMPD/suite"
so=$(python3 -c 'import json,sys; rs=json.load(open(sys.argv[1])); print(" ".join(r["op"] for r in rs if r["kernel"].get("origin") == "theirs" or any(s.get("origin") == "theirs" for s in (r["launch"] or {}).get("stages", []))))' "$TMPD/suite/suite-smoke-v1-sw.json" 2>&1)
expect_match "stages: the suite ran their kkt in kkt and chunk_fwd only" "$so" "^kkt chunk_fwd$"
expect_exit 2 "stages: suite refuses --function" $G suite smoke --backend sw --function their_kkt
expect_match "stages: ... pointing at --stage" "$ERR" "--stage STAGE=FILE:their_kkt"

# --- bad input: one line naming the flag and the fix, nothing run -----------------
bad() { # bad "description" regex-for-stderr args...
    local desc=$1 re=$2
    shift 2
    expect_exit 2 "stages: $desc exits 2" $G "$@"
    expect_match "stages: $desc message" "$ERR" "$re"
    local lines
    lines=$(printf '%s\n' "$ERR" | grep -c .)
    if [ "$lines" -eq 1 ] && [ -z "$OUT" ]; then pass "stages: $desc is one line, nothing run"
    else fail "stages: $desc printed $lines lines on stderr and ${#OUT} bytes on stdout"; fi
}
bad "an unknown stage name" \
    "--stage kkz=.*: chunk_fwd has no stage 'kkz' \(stages: cumsum, kkt, solve_tril, wy, chunk_h, chunk_o\)" \
    chunk_fwd --backend sw --stage kkz="$TMPD/their_kkt.metal:their_kkt" $CF
bad "FILE:FUNCTION without that function" \
    "--stage kkt=.*their_kkt.metal:nope: .* defines no kernel function 'nope' \(it defines: their_kkt\): check the name" \
    chunk_fwd --backend sw --stage kkt="$TMPD/their_kkt.metal:nope" $CF
bad "FILE without the stage's default name" "add :FUNCTION" \
    chunk_fwd --backend sw --stage kkt="$TMPD/their_kkt.metal" $CF
bad "a --stage file that does not exist" "--stage kkt=.*nofile.metal: .*cannot read it" \
    kkt --backend sw --stage kkt="$TMPD/nofile.metal" --T 65 --Hg 1 --H 2 --K 64
bad "a --stage spec without a file" "--stage 'kkt' must be NAME=FILE" kkt --backend sw --stage kkt
bad "--stage on the cpu backend" "--stage needs a Metal backend" kkt --backend cpu --stage kkt="$TMPD/their_kkt.metal"
bad "a --function missing from a list of shapes' file" "--function nope: .*defines no kernel function 'nope'" \
    kkt --backend sw --shader "$TMPD/their_kkt.metal" --function nope --T 65,129 --Hg 1 --H 2 --K 64
bad "an unknown stage in a suite" "--stage kkz=.*no op of the suite has a stage 'kkz'" \
    suite smoke --backend sw --stage kkz="$TMPD/their_kkt.metal:their_kkt"

finish
