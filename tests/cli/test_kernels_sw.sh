#!/usr/bin/env bash
# test_kernels_sw.sh — gdnbench's own GDN kernels (shaders/gdn_*.metal) on the software
# Metal device, checked against the f64 and bf16-parity CPU references.
#
# Covers what the kernels promise in their header comments: every T (1, a partial
# first chunk, exact chunks, partial last chunks, 4097 for the cheap kernels), GQA
# ratios H = Hg, 2 Hg, 4 Hg, head dims 64/128/256 where the op supports them, and one
# pass of every op under --sw-checks full (exact out-of-bounds, uninitialised
# threadgroup reads, threadgroup races).  Small H and one iteration keep it to about
# two minutes on two cores; the compiled kernels are cached after the first run.
. "$(dirname "$0")/lib.sh"
need_testdata
G=$GDNBENCH

if ! "$G" info 2>/dev/null | grep -Eq '^ *sw +available'; then
    skip_all "kernels on sw: this build has no software Metal device (gdnbench info)"
fi

# sw DESC ARGS... : one gdnbench run on the sw backend, both references; on failure the
# FAIL line carries the table rows that failed.
sw() {
    local desc=$1
    shift
    "$G" "$@" --backend sw --iters 1 --warmup 0 --check both >"$TMPD/out" 2>"$TMPD/err"
    local rc=$?
    if [ "$rc" -eq 0 ]; then
        pass "kernels: $desc"
    else
        fail "kernels: $desc: exit $rc; $(grep -E 'FAIL|error' "$TMPD/out" | head -5 | tr -s ' ') $(head -c 400 "$TMPD/err")"
    fi
}

TS=1,63,64,65,100,256

sw "cumsum T=$TS,4097" cumsum --T $TS,4097 --H 4
sw "kkt T=$TS,4097 H=4 Hg=1,2,4" kkt --T $TS,4097 --H 4 --Hg 1,2,4
sw "kkt K=64,256" kkt --T 65,128 --H 2 --Hg 1 --K 64,256
sw "solve_tril T=$TS,4097" solve_tril --T $TS,4097 --H 2 --Hg 1
sw "wy T=$TS H=4 Hg=1,2,4" wy --T $TS --H 4 --Hg 1,2,4
sw "wy K,V=64,256" wy --T 65,100 --H 2 --Hg 1 --K 64,256 --V 64,256
sw "chunk_h T=$TS H=4 Hg=1,2,4" chunk_h --T $TS --H 4 --Hg 1,2,4 --V 64
sw "chunk_h K=V=128 and K=64,256" chunk_h --T 1,100 --H 2 --Hg 1 --K 64,128,256 --V 128
sw "chunk_o T=$TS H=2,4 Hg=1,2" chunk_o --T $TS --H 2 --Hg 1,2 --V 64
sw "chunk_o V=128, K=64,256" chunk_o --T 65 --H 2 --Hg 1 --K 64,256 --V 128
sw "recurrent T=$TS H=2 Hg=1,2" recurrent --T $TS --H 2 --Hg 1,2 --V 64
sw "recurrent K=64,256 l2norm" recurrent --T 65 --H 2 --Hg 1 --K 64,256 --V 64 --l2norm 1
sw "decode K=64,128,256 H=4 Hg=1,2,4" decode --H 4 --Hg 1,2,4 --K 64,128,256 --V 64,128
sw "chunk_fwd T=$TS H=2 Hg=1" chunk_fwd --T $TS --H 2 --Hg 1 --V 64
sw "chunk_fwd l2norm, H=4 Hg=1 K=V=128" chunk_fwd --T 100 --H 4 --Hg 1 --l2norm 1
# The long tail: 65 chunks, the last one a single token, K=V=128.
for op in wy chunk_h chunk_o recurrent chunk_fwd; do
    sw "$op T=4097 H=2 Hg=1 K=V=128" $op --T 4097 --H 2 --Hg 1
done

sw "cumsum under --sw-checks full" cumsum --T 1,65 --H 2 --sw-checks full
for op in kkt solve_tril; do
    sw "$op under --sw-checks full T=1,65" $op --T 1,65 --H 2 --Hg 1 --sw-checks full
done
for op in wy chunk_h chunk_o recurrent chunk_fwd; do
    sw "$op under --sw-checks full T=1,65" $op --T 1,65 --H 2 --Hg 1 --V 64 --sw-checks full
done
sw "decode under --sw-checks full" decode --H 2 --Hg 1 --sw-checks full

# Our kernels through the third-party path: --shader FILE --function NAME (the same
# files a user would point at), with function constants passed on the command line.
R=$GDNBENCH_ROOT
expect_exit 0 "kernels via --shader: kkt" $G kkt --backend sw --shader "$R/shaders/gdn_kkt.metal" \
    --function gated_delta_net_kkt_bf16 --T 65 --Hg 1 --H 2 --iters 1 --warmup 0
expect_match "kernels via --shader: kkt passes both references" "$OUT" "A +bf16-parity .*PASS"
expect_exit 0 "kernels via --shader: chunk_o" $G chunk_o --backend sw --shader "$R/shaders/gdn_chunk_o.metal" \
    --function gated_delta_net_chunk_o_bf16 --T 100 --Hg 1 --H 2 --iters 1 --warmup 0
expect_exit 0 "kernels via --shader + --constant: attn_fwd causal" $G attn_fwd --backend sw \
    --shader "$R/shaders/flash_attn.metal" --function flash_attn_fwd_bf16_d64 --constant 301=true \
    --B 1 --Hq 2 --Hkv 1 --qL 33 --kL 33 --D 64 --causal 1 --iters 1 --warmup 0
# --constant takes each constant's type from the function (functionConstantsDictionary):
# cumsum's kernel with uint/short/half/bool/ushort constants writes its output only when
# every value arrives as its declared type; a value the type cannot hold is refused.
sed -e '/^kernel void chunk_local_cumsum_g_f32/i constant uint fc_u [[function_constant(10)]];\nconstant short fc_s [[function_constant(11)]];\nconstant half fc_h [[function_constant(12)]];\nconstant bool fc_b [[function_constant(13)]];\nconstant ushort fc_us [[function_constant(14)]];' \
    -e 's/^    if (sg != 0) return;/    if (sg != 0 || !(fc_b \&\& fc_u == 4000000000u \&\& fc_s == -300 \&\& fc_h == half(0.5f) \&\& fc_us == 65535)) return;/' \
    "$R/shaders/gdn_cumsum.metal" >"$TMPD/typed.metal"
typed=(cumsum --backend sw --shader "$TMPD/typed.metal" --T 64 --H 2 --iters 1 --warmup 0)
expect_exit 0 "kernels via --constant: uint, short, half, bool and ushort arrive as declared" $G "${typed[@]}" \
    --constant 10=4000000000 --constant 11=-300 --constant 12=0.5 --constant 13=true --constant 14=0xFFFF
expect_exit 1 "kernels via --constant: a different value fails the check (the test can fail)" $G "${typed[@]}" \
    --constant 10=4000000000 --constant 11=-300 --constant 12=0.5 --constant 13=true --constant 14=65534
for bad in "11=70000:is out of range for short" "10=-1:is out of range for uint" "12=1e5:is out of range for half" \
    "13=2:is not a bool" "14=1.5:is not an integer"; do
    expect_exit 2 "kernels via --constant ${bad%%:*}: refused" $G "${typed[@]}" --constant "${bad%%:*}"
    expect_match "kernels via --constant ${bad%%:*}: one line naming the type" "$ERR" \
        "^gdnbench: cumsum: function constant ${bad%%:*}: 'chunk_local_cumsum_g_f32' declares it as [a-z]+: .*${bad#*:}"
done
expect_exit 2 "kernels via --shader: unknown function exits 2" $G kkt --backend sw --shader "$R/shaders/gdn_kkt.metal" \
    --function no_such_kernel --T 65 --Hg 1 --H 2 --iters 1 --warmup 0
expect_match "kernels via --shader: unknown function named" "$ERR" "no_such_kernel"
printf 'kernel void broken(device float *x [[buffer(0)]]) { x[0] = ; }\n' >"$TMPD/broken.metal"
expect_exit 2 "kernels via --shader: MSL that fails to compile exits 2" $G kkt --backend sw --shader "$TMPD/broken.metal" \
    --function broken --T 65 --Hg 1 --H 2 --iters 1 --warmup 0
expect_match "kernels via --shader: compile error points at the .metal line" "$ERR" "broken.metal:1"

# The report names the function constants the pipeline was built with: the op's own
# (attention's 200/201/300/301) and those given with --constant.
"$G" attn_fwd --backend sw --B 1 --Hq 2 --Hkv 1 --qL 33 --kL 33 --D 64 --causal 1 --iters 1 --warmup 0 \
    --quiet --json "$TMPD/attn.json" >/dev/null 2>&1
consts=$(paste -d= <("$TESTDATA" json "$TMPD/attn.json" '.kernel.constants[].index' 2>&1) \
    <("$TESTDATA" json "$TMPD/attn.json" '.kernel.constants[].value' 2>&1) | paste -sd ' ' -)
expect_match "report: kernel.constants lists the launch's constants" "$consts" "^200=false 201=false 300=false 301=true$"

finish
