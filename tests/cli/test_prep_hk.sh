#!/usr/bin/env bash
# test_prep_hk.sh — prep_step and decode_seq from a torch-style decode file that
# carries no parameters (issue 30): Hk is no axis of any tensor, so it is solved
# from conv_out's width 2*Hk*Dk + Hv*Dv (and the norm weights' Hk*Dk) once the
# state and gate tensors give Hv, Dv and Dk.  Without that, the run stopped at
# "--Hv 4 is not a multiple of --Hk 16" (the default Hk) unless --Hk was given.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
G=$GDNBENCH
need_testdata
ts() { "$TESTDATA" torch-style "$@" || fail "prep hk: gdnbench-testdata torch-style ... $2: exit $?"; }
BE=sw
"$G" info 2>/dev/null | grep -q '^  sw .*available:' || BE=cpu

$G prep_step --backend cpu --B 2 --Hk 2 --Hv 4 --Dk 32 --Dv 16 --iters 1 --warmup 0 --quiet --dump "$TMPD/d" \
    >/dev/null 2>&1
dump=$(ls "$TMPD"/d/prep_step_*.safetensors 2>/dev/null | head -1)
# The names a PyTorch port of the Qwen3.5 decode would save under.
ts "$dump" "$TMPD/ps.safetensors" mixed_qkv=conv_out A_log=a_log dt_bias=dt_bias a=a_raw b=b_raw \
    q_norm=q_norm_weight k_norm=k_norm_weight initial_state=state_in final_state=state_out.ref_f64 y=y.ref_f64
expect_exit 0 "prep hk: prep_step from a file without parameters, no --Hk" $G prep_step --backend $BE \
    --fixture "$TMPD/ps.safetensors" --iters 1 --warmup 0
expect_match "prep hk: ... Hk=2 solved from conv_out's width" "$OUT" \
    "from tensor shapes: B=2 \(mixed_qkv\), Hk=2 \(mixed_qkv\), Hv=4 \(A_log\), Dk=32 \(initial_state\), Dv=16"
expect_match "prep hk: ... and the file's outputs are checked" "$OUT" "y +fixture .*PASS"
expect_no_match "prep hk: ... nothing left to the defaults" "$OUT" "not fixed by the file"
expect_exit 0 "prep hk: --Hk that agrees is accepted" $G prep_step --backend cpu --fixture "$TMPD/ps.safetensors" \
    --Hk 2 --iters 1 --warmup 0 --quiet
expect_exit 2 "prep hk: --Hk that contradicts conv_out exits 2" $G prep_step --backend cpu \
    --fixture "$TMPD/ps.safetensors" --Hk 1
expect_match "prep hk: ... naming the flag and the tensor" "$ERR" \
    "^gdnbench: --Hk contradicts the fixture .*Hk=2 \(from tensor mixed_qkv\): drop the flag$"

# Negative control: a state read as Dv=8, Dk=64 leaves conv_out's 192 = 2*Hk*64 + 4*8
# with no whole Hk; that is the file's fault, said in one line (not a kernel run).
ts "$dump" "$TMPD/bad.safetensors" mixed_qkv=conv_out A_log=a_log dt_bias=dt_bias a=a_raw b=b_raw \
    q_norm=q_norm_weight k_norm=k_norm_weight initial_state=state_in@2,4,8,64
expect_exit 2 "prep hk: a conv_out width that fits no whole Hk exits 2" $G prep_step --backend cpu \
    --fixture "$TMPD/bad.safetensors"
expect_match "prep hk: ... naming the tensor, the expression and Hk" "$ERR" \
    "bad.safetensors: tensor 'mixed_qkv' \[2, ?192\] has 192 on axis 1, which is 2\*Hk\*Dk\+Hv\*Dv for no whole Hk"
lines=$(printf '%s\n' "$ERR" | grep -c .)
[ "$lines" -eq 1 ] && [ -z "$OUT" ] && pass "prep hk: ... one line, nothing run" ||
    fail "prep hk: $lines lines on stderr, ${#OUT} bytes on stdout"

# decode_seq: the same rule with a leading token axis ([N,B,2*Hk*Dk+Hv*Dv]).
$G decode_seq --backend cpu --B 1 --Hk 1 --Hv 2 --Dk 32 --Dv 8 --N 3 --iters 1 --warmup 0 --quiet --dump "$TMPD/s" \
    >/dev/null 2>&1
sdump=$(ls "$TMPD"/s/decode_seq_*.safetensors 2>/dev/null | head -1)
ts "$sdump" "$TMPD/seq.safetensors" qkv=conv_out A_log=a_log dt_bias=dt_bias a=a_raw b=b_raw \
    q_norm=q_norm_weight k_norm=k_norm_weight h0=state_in final_state=state_out.ref_f64 o=y.ref_f64
expect_exit 0 "prep hk: decode_seq from a file without parameters" $G decode_seq --backend $BE \
    --fixture "$TMPD/seq.safetensors" --iters 1 --warmup 0
expect_match "prep hk: ... Hk=1 solved, N from the tokens" "$OUT" "N=3 \(qkv\).*Hk=1 \(qkv\)|Hk=1 \(qkv\).*N=3"
finish
