#!/usr/bin/env bash
# test_ir_stage.sh — the software device's IR stage (src/swmetal/ir_pass.h): a
# variant sent through it (clang to optimised LLVM IR, llir.c's reader and writer,
# clang from IR with LLVM's pipeline off) computes what the one-step build computes,
# bit for bit, for the fibers, lanes and full-check variants of kernels of ours.
# GDNBENCH_SW_IR_ROUNDTRIP=1 forces every variant through the stage with no pass.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

if ! "$GDNBENCH" info 2>/dev/null | grep -q '^  sw .*available:'; then
    skip_all "IR stage: the software device is not available here ($("$GDNBENCH" info 2>&1 | grep '^  sw'))"
fi
export GDNBENCH_CACHE_DIR="$TMPD/cache"
sos() { find "$GDNBENCH_CACHE_DIR" -name '*.so' | wc -l; }

# name | arguments
cases=(
    "kkt|kkt --backend sw --T 64 --iters 1 --warmup 0"
    "cumsum-full|cumsum --backend sw --B 1 --T 64 --H 2 --iters 1 --warmup 0 --sw-checks full"
    "attn_fwd|attn_fwd --backend sw --qL 32 --kL 32 --D 64 --Hq 2 --Hkv 1 --iters 1 --warmup 0"
)
for c in "${cases[@]}"; do
    name=${c%%|*}
    read -r -a args <<< "${c#*|}"
    expect_exit 0 "IR stage: $name built in one step" "$GDNBENCH" "${args[@]}" --dump "$TMPD/one-$name" --quiet
    before=$(sos)
    GDNBENCH_SW_IR_ROUNDTRIP=1 expect_exit 0 "IR stage: $name built through the IR stage" "$GDNBENCH" "${args[@]}" \
        --dump "$TMPD/ir-$name" --quiet
    after=$(sos)
    if [ "$after" -gt "$before" ]; then pass "IR stage: ... as variants of their own ($before -> $after objects)"
    else fail "IR stage: ... as variants of their own: the cache holds $after objects, $before before"; fi
    if diff -r "$TMPD/one-$name" "$TMPD/ir-$name" > "$TMPD/diff" 2>&1 && [ -n "$(ls "$TMPD/ir-$name")" ]; then
        pass "IR stage: ... with the same outputs, bit for bit"
    else fail "IR stage: ... with the same outputs, bit for bit: $(head -3 "$TMPD/diff")"; fi
done

# Every pass's file is in the Makefile's IR_SRC, whose hash is in every instrumented
# variant's cache key: an edited pass must never meet an object an older one made.
root=${GDNBENCH_ROOT:-$here/../..}
ir_src=$(grep '^IR_SRC' "$root/Makefile")
for f in $(grep -l '^const sw_ir_pass ' "$root"/src/swmetal/*.c); do
    b=$(basename "$f")
    case "$b" in
    ir_*.c) pass "IR stage: $b is hashed into the cache key (ir_*.c)" ;;
    *) if printf '%s' "$ir_src" | grep -q "src/swmetal/$b"; then pass "IR stage: $b is hashed into the cache key"
       else fail "IR stage: $b defines a pass but the Makefile's IR_SRC leaves it out of the cache key"; fi ;;
    esac
done
finish
