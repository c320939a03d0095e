#!/usr/bin/env bash
# test_own_data.sh — fixtures the way PyTorch users save them, tested without torch:
# `gdnbench-testdata torch-style` (tests/tools/torch_style.c) writes safetensors files
# as safetensors.torch.save_file does
# (no metadata, names of the user's choosing such as Dvec and g_cum, f32 where the
# kernel takes bf16) and .npz files as numpy.savez / savez_compressed do, from a
# `--dump` of our own inputs and references.  attn_bwd and kkt then run from them
# with --map: the shape comes from the tensors, unmatched tensors are listed, f32
# inputs are rounded into bf16 and reported, expected outputs are a third reference.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
G=$GDNBENCH
need_testdata
# ts DUMP OUT [--deflate] SPEC...: a torch-style file; a writer that fails is a FAIL here.
ts() { "$TESTDATA" torch-style "$@" || fail "own data: gdnbench-testdata torch-style ... $2: exit $?"; }
BE=sw
"$G" info 2>/dev/null | grep -q '^  sw .*available:' || BE=cpu

# --- attn_bwd: Dvec is the user's name for D_vec; lse is a known synonym of L -----
$G attn_bwd --backend cpu --B 1 --Hq 2 --Hkv 1 --qL 40 --kL 40 --D 64 --iters 1 --warmup 0 --quiet --dump "$TMPD/d" \
    >/dev/null 2>&1
dump=$(ls "$TMPD"/d/attn_bwd_*.safetensors 2>/dev/null | head -1)
ts "$dump" "$TMPD/bwd.safetensors" Q=Q:f32 K=K V=V lse=L dO=dO Dvec=D_vec \
    dq=dQ.ref_f64:f32 dk=dK.ref_f64:f32 dv=dV.ref_f64:f32 kv_cache=K
hdr=$(head -c 200 "$TMPD/bwd.safetensors" 2>/dev/null | tr -d '\0')
case "$hdr" in *__metadata__*) fail "own data: the torch-style file carries metadata" ;;
               *) pass "own data: the torch-style file has no metadata" ;; esac

expect_exit 0 "own data: attn_bwd from a torch-style file with --map Dvec=D_vec" $G attn_bwd --backend $BE \
    --fixture "$TMPD/bwd.safetensors" --map Dvec=D_vec --iters 1 --warmup 0 --json "$TMPD/bwd.json"
expect_match "own data: attn_bwd's shape came from the tensors" "$OUT" \
    "from tensor shapes: B=1 \(Q\), Hq=2 \(Q\), Hkv=1 \(K\), qL=40 \(Q\), kL=40 \(K\), D=64 \(Q\)"
expect_match "own data: ... and says what no tensor fixes" "$OUT" "not fixed by the file: causal=1 \(the default\)"
expect_match "own data: the unmatched tensor is listed once" "$OUT" "ignored: kv_cache \(1 tensor"
expect_match "own data: f32 Q rounded into bf16, and said so" "$OUT" "converted: Q f32 -> bf16 for Q \(rounded to nearest even\)"
expect_match "own data: the file's gradients are a third reference" "$OUT" "dQ +fixture .*PASS"
expect_match "own data: ... for dV too" "$OUT" "dV +fixture .*PASS"
if command -v python3 >/dev/null 2>&1; then
    fx=$(python3 -c 'import json,sys; f=json.load(open(sys.argv[1]))["fixture"]; print(f["converted"][0]["tensor"], f["converted"][0]["rounding"], f["ignored"], f["unfixed"])' "$TMPD/bwd.json" 2>&1)
    expect_match "own data: the JSON record says so too" "$fx" "^Q nearest-even \['kv_cache'\] \['causal=1'\]$"
else
    skip "own data: the JSON record says so too: python3 (to parse the JSON) is not installed"
fi
expect_exit 2 "own data: without --map, D_vec has no tensor" $G attn_bwd --backend $BE --fixture "$TMPD/bwd.safetensors"
expect_match "own data: ... the message offers the unbound tensors and --map" "$ERR" \
    "no tensor for attn_bwd's input 'D_vec'.*Dvec.*--map FILE_NAME=D_vec"
expect_exit 2 "own data: --T-like flags that contradict the tensors exit 2" $G attn_bwd --backend $BE \
    --fixture "$TMPD/bwd.safetensors" --map Dvec=D_vec --qL 64
expect_match "own data: ... naming the flag and the tensor" "$ERR" "--qL contradicts the fixture .*qL=40 \(from tensor Q\)"

# --- kkt: g_cum is the user's name for the cumsummed gate ---------------------
$G kkt --backend cpu --T 100 --Hg 1 --H 2 --K 64 --iters 1 --warmup 0 --quiet --dump "$TMPD/k" >/dev/null 2>&1
kdump=$(ls "$TMPD"/k/kkt_*.safetensors 2>/dev/null | head -1)
ts "$kdump" "$TMPD/kkt.safetensors" k=k:f32 beta=beta g_cum=g A=A.ref_f64:f32
ts "$kdump" "$TMPD/kkt_inputs.safetensors" k=k beta=beta g_cum=g
ts "$kdump" "$TMPD/kkt.npz" k=k beta=beta g_cum=g A=A.ref_f64:f32
ts "$kdump" "$TMPD/kkt_c.npz" --deflate k=k beta=beta g_cum=g
expect_exit 0 "own data: kkt from a torch-style file with --map g_cum=g" $G kkt --backend $BE \
    --fixture "$TMPD/kkt.safetensors" --map g_cum=g --iters 1 --warmup 0
expect_match "own data: kkt's shape came from the tensors, BT from A" "$OUT" \
    "from tensor shapes: B=1 \(k\), T=100 \(k\), Hg=1 \(k\), H=2 \(beta\), K=64 \(k\), BT=64 \(A\)"
expect_match "own data: kkt's A from the file is checked" "$OUT" "A +fixture .*PASS"
expect_exit 0 "own data: kkt from inputs only" $G kkt --backend $BE --fixture "$TMPD/kkt_inputs.safetensors" \
    --map g_cum=g --iters 1 --warmup 0
expect_match "own data: ... BT kept its default, and the output says so" "$OUT" "not fixed by the file: BT=64 \(the default\)"
expect_exit 0 "own data: kkt from an .npz (numpy.savez layout)" $G kkt --backend $BE --fixture "$TMPD/kkt.npz" \
    --map g_cum=g --iters 1 --warmup 0
expect_match "own data: ... read as npz, A checked" "$OUT" "fixture .*kkt.npz \(npz, 4 tensors\)"
expect_exit 2 "own data: a numpy.savez_compressed .npz exits 2" $G kkt --backend $BE --fixture "$TMPD/kkt_c.npz" \
    --map g_cum=g
expect_match "own data: ... saying deflate is not read and what to do" "$ERR" "deflate-compressed.*re-save with numpy.savez"

# --- bad input: one line naming the flag or file and the fix, nothing run --------
bad() { # bad "description" regex-for-stderr args...
    local desc=$1 re=$2
    shift 2
    expect_exit 2 "own data: $desc exits 2" $G "$@"
    expect_match "own data: $desc message" "$ERR" "$re"
    local lines
    lines=$(printf '%s\n' "$ERR" | grep -c .)
    if [ "$lines" -eq 1 ] && [ -z "$OUT" ]; then pass "own data: $desc is one line, nothing run"
    else fail "own data: $desc printed $lines lines on stderr and ${#OUT} bytes on stdout"; fi
}
ts "$kdump" "$TMPD/kkt_bad.safetensors" k=k beta=beta@1,99,2 g_cum=g
bad "tensors that contradict each other" "tensors 'k' \[1,100,1,64\] and 'beta' \[1,99,2\] disagree on T \(100 vs 99\)" \
    kkt --backend $BE --fixture "$TMPD/kkt_bad.safetensors" --map g_cum=g
bad "a --map target that is no buffer" "--map g_cum=gc: kkt has no buffer 'gc' \(its inputs and outputs: k, beta, g, A\)" \
    kkt --backend $BE --fixture "$TMPD/kkt.safetensors" --map g_cum=gc
bad "a --map source that is no tensor" "--map gcum=g: .*has no tensor 'gcum'" \
    kkt --backend $BE --fixture "$TMPD/kkt.safetensors" --map gcum=g
bad "--map without --fixture" "--map g_cum=g .*--fixture" kkt --backend $BE --map g_cum=g

finish
