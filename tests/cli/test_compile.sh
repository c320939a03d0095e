#!/usr/bin/env bash
# test_compile.sh — `gdnbench compile` (issue 14): kernels and bindings listed,
# exit 0 / 1 / 2, first error mapped to the file and line (in headers too), one line
# for what the software device cannot provide, includes resolved as Metal does
# (-I, next to the including file, <metal_*> in headers), -D, a cache that notices
# edited headers, and --include/--define on a --shader run.
. "$(dirname "$0")/lib.sh"
G=$GDNBENCH
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

expect_exit 0 "compile: --help exits 0" $G compile --help
expect_exit 2 "compile: no file exits 2" $G compile
expect_exit 2 "compile: unreadable file exits 2" $G compile "$TMPD/none.metal"
expect_match "compile: unreadable file message names it" "$ERR" "cannot read .*none.metal"
expect_exit 2 "compile: bad -D exits 2" $G compile "$root/tests/msl/features.metal" -D 9x=1
expect_match "compile: bad -D message" "$ERR" "macro name must be an identifier"
expect_exit 2 "compile: unknown option exits 2" $G compile "$root/tests/msl/features.metal" --bogus

if ! "$G" info 2>/dev/null | grep -Eq '^ *sw +available'; then
    skip_all "compile: this build has no software Metal device (gdnbench info)"
fi
export GDNBENCH_CACHE_DIR="$TMPD/cache"

# one line of stderr
one_line() { # desc
    local n
    n=$(printf '%s\n' "$ERR" | grep -c .)
    if [ "$n" -eq 1 ]; then pass "$1"; else fail "$1: $n lines: $(printf '%s' "$ERR" | head -c 300)"; fi
}

expect_exit 0 "compile: features.metal compiles" $G compile "$root/tests/msl/features.metal"
expect_match "compile: lists a kernel by host name" "$OUT" "kernel scaled_f3 "
expect_match "compile: implicit index, space, type and access" "$OUT" "buffer\(1\) +scale +constant float +read"
expect_match "compile: device pointer is read_write" "$OUT" "buffer\(2\) +out2 +device float +read_write"
expect_match "compile: id attribute" "$OUT" "\[\[thread_index_in_quadgroup\]\] +qlane +ushort"
expect_match "compile: function constant, optional" "$OUT" "function constant 11: int fc_expr \(optional"
expect_match "compile: function constant, required" "$OUT" "function constant 20: bool fc_flag \(required\)"
block() { printf '%s\n' "$OUT" | awk -v k="kernel $1 " 'index($0, k) == 1 { on = 1; next } /^kernel / { on = 0 } on'; }
expect_match "compile: threadgroup memory of a kernel" "$(block conversions)" "threadgroup memory: 1032 bytes"
expect_match "compile: threadgroup memory of a template instance" "$(block tg_sized_f64)" "threadgroup memory: 264 bytes"
expect_match "compile: threadgroup memory of another instance" "$(block tg_sized_h8)" "threadgroup memory: 24 bytes"
expect_exit 0 "compile: --json -" $G compile "$root/tests/msl/features.metal" --json -
expect_match "compile: json threadgroup memory" "$OUT" '"threadgroup_memory_bytes":[[:space:]]*264'

expect_match "compile: json kernels" "$OUT" '"name":[[:space:]]*"implicit_index"'
expect_match "compile: json binding space" "$OUT" '"address_space":[[:space:]]*"device"'
expect_match "compile: json constants" "$OUT" '"required":[[:space:]]*false'

# errors map to the file and line, in a header too
printf '#include <metal_stdlib>\nusing namespace metal;\nkernel void k(device float *o [[buffer(0)]]) {\n  o[0] = nope;\n}\n' \
    > "$TMPD/bad.metal"
expect_exit 1 "compile: an error exits 1" $G compile "$TMPD/bad.metal"
expect_match "compile: error names the .metal line" "$(printf '%s' "$ERR" | head -1)" "bad.metal:4:[0-9]+: error: use of undeclared identifier 'nope'"
mkdir -p "$TMPD/inc/sub"
printf '#pragma once\n#include <metal_math>\ninline float twice(float x) {\n  return x * undefined_here;\n}\n' \
    > "$TMPD/inc/sub/broken.h"
printf '#include "sub/broken.h"\nkernel void k(device float *o [[buffer(0)]]) { o[0] = twice(1); }\n' \
    > "$TMPD/usesbroken.metal"
expect_exit 1 "compile: an error in a header exits 1" $G compile "$TMPD/usesbroken.metal" -I "$TMPD/inc"
expect_match "compile: header error names the header line" "$(printf '%s' "$ERR" | head -1)" "inc/sub/broken.h:4:[0-9]+: error"

# what the software device cannot provide: one line, exit 1
printf '#include <metal_stdlib>\n#include <MetalPerformancePrimitives/MetalPerformancePrimitives.h>\nkernel void k(device float *o [[buffer(0)]]) {}\n' \
    > "$TMPD/mpp.metal"
expect_exit 1 "compile: MetalPerformancePrimitives exits 1" $G compile "$TMPD/mpp.metal"
expect_match "compile: MetalPerformancePrimitives says not supported" "$ERR" "mpp.metal:2:.*not supported by the software Metal device: Apple's MetalPerformancePrimitives"
one_line "compile: MetalPerformancePrimitives is one line"
printf '#include <metal_stdlib>\nusing namespace metal;\nkernel void k(texture2d<float> t [[texture(0)]], device float *o [[buffer(0)]]) {}\n' \
    > "$TMPD/tex.metal"
expect_exit 1 "compile: a texture exits 1" $G compile "$TMPD/tex.metal"
expect_match "compile: a texture says not supported" "$ERR" "tex.metal:3:[0-9]+: error: not supported by the software Metal device: textures"
one_line "compile: a texture is one line"
printf '#include <metal_stdlib>\nusing namespace metal;\nvertex float4 v(uint i [[vertex_id]]) { return float4(0); }\n' \
    > "$TMPD/vert.metal"
expect_exit 1 "compile: a vertex function exits 1" $G compile "$TMPD/vert.metal"
expect_match "compile: a vertex function says not supported" "$ERR" "not supported by the software Metal device: render stages"
one_line "compile: a vertex function is one line"

# includes: next to the including file first, then -I; -D
mkdir -p "$TMPD/proj/kernels" "$TMPD/proj/include/lib"
printf '#pragma once\n#include "detail.h"\ninline float scale_of(float x) { return x * DETAIL_FACTOR; }\n' \
    > "$TMPD/proj/include/lib/api.h"
printf '#pragma once\n#include <metal_stdlib>\n#define DETAIL_FACTOR 2.0f\n' > "$TMPD/proj/include/lib/detail.h"
printf '#include "lib/api.h"\n#ifndef MODE\n#error MODE is not defined\n#endif\nkernel void MODE(device float *o [[buffer(0)]]) { o[0] = scale_of(1); }\n' \
    > "$TMPD/proj/kernels/k.metal"
expect_exit 1 "compile: without -I the header is not found" $G compile "$TMPD/proj/kernels/k.metal" -D MODE=kx
expect_match "compile: missing header named at its include" "$ERR" "k.metal:1:[0-9]+: .*'lib/api.h' file not found"
expect_exit 1 "compile: without -D the #error stops it" $G compile "$TMPD/proj/kernels/k.metal" -I "$TMPD/proj/include"
expect_match "compile: #error names its line" "$ERR" "k.metal:3:[0-9]+: error: MODE is not defined"
expect_exit 0 "compile: -I and -D" $G compile "$TMPD/proj/kernels/k.metal" -I "$TMPD/proj/include" -D MODE=kx
expect_match "compile: -D names the kernel" "$OUT" "kernel kx "
expect_exit 0 "compile: --include= and --define= spellings" $G compile "$TMPD/proj/kernels/k.metal" \
    --include="$TMPD/proj/include" --define=MODE=ky
expect_match "compile: --define names the kernel" "$OUT" "kernel ky "

# the cache key covers every file the compile read: an edited header is seen
printf '#define DETAIL_FACTOR undefined_factor\n' > "$TMPD/proj/include/lib/detail.h"
expect_exit 1 "compile: an edited header is recompiled (error)" $G compile "$TMPD/proj/kernels/k.metal" \
    -I "$TMPD/proj/include" -D MODE=kx
expect_match "compile: the edited header's error" "$ERR" "undefined_factor"
printf '#define DETAIL_FACTOR 3.0f\n' > "$TMPD/proj/include/lib/detail.h"
expect_exit 0 "compile: the fixed header compiles again" $G compile "$TMPD/proj/kernels/k.metal" \
    -I "$TMPD/proj/include" -D MODE=kx

# --include / --define on a --shader run: a cumsum kernel whose scan lives in a header
mkdir -p "$TMPD/cs/inc"
cat > "$TMPD/cs/inc/scan.h" <<'EOF'
#pragma once
#include <metal_stdlib>
inline void scan_chunk(device const float *g, device float *gc, ulong first, uint n, uint H) {
    float acc = 0.0f;
    for (uint t = 0; t < n; t++) {
        acc += g[first + (ulong)t * H];
        gc[first + (ulong)t * H] = acc * SCALE;
    }
}
EOF
cat > "$TMPD/cs/cumsum_inc.metal" <<'EOF'
#include "scan.h"
using namespace metal;
kernel void cumsum_inc(device const float *g [[buffer(0)]], device float *gc [[buffer(1)]],
                       constant uint *p [[buffer(2)]], uint3 tg [[threadgroup_position_in_grid]],
                       uint tid [[thread_index_in_threadgroup]]) {
    const uint T = p[1], H = p[2], BT = p[3], NT = p[4];
    const uint h = tg.y, b = tg.z / NT, t0 = (tg.z % NT) * BT;
    if (tid != 0 || t0 >= T) return;
    scan_chunk(g, gc, ((ulong)b * T + t0) * H + h, min(BT, T - t0), H);
}
EOF
expect_exit 0 "compile: run --shader with --include and --define passes" $G cumsum --backend sw --T 100 --H 2 \
    --iters 1 --warmup 0 --shader "$TMPD/cs/cumsum_inc.metal" --function cumsum_inc --include "$TMPD/cs/inc" \
    --define SCALE=1.0f --check both
expect_exit 1 "compile: a --define that changes the result fails the check" $G cumsum --backend sw --T 100 --H 2 \
    --iters 1 --warmup 0 --shader "$TMPD/cs/cumsum_inc.metal" --function cumsum_inc --include "$TMPD/cs/inc" \
    --define SCALE=2.0f --check both
expect_exit 2 "compile: --define without --shader exits 2" $G cumsum --backend sw --define SCALE=1
# A large library (more kernels than GDNBENCH_SW_WHOLE_LIBRARY_MAX, default 16):
# checked whole by newLibrary, each kernel compiled alone for its pipeline, and
# the compile command's listing from one unoptimised build of all of them.
{
    printf '#include "scan.h"\nusing namespace metal;\n'
    printf 'template <int S>\n[[kernel]] void cs(device const float *g [[buffer(0)]], device float *gc [[buffer(1)]],\n'
    printf '    constant uint *p [[buffer(2)]], uint3 tg [[threadgroup_position_in_grid]],\n'
    printf '    uint tid [[thread_index_in_threadgroup]]) {\n'
    printf '    const uint T = p[1], H = p[2], BT = p[3], NT = p[4];\n'
    printf '    const uint h = tg.y, b = tg.z / NT, t0 = (tg.z %% NT) * BT;\n'
    printf '    if (tid != 0 || t0 >= T) return;\n'
    printf '    scan_chunk(g, gc, ((ulong)b * T + t0) * H + h, min(BT, T - t0), H);\n'
    printf '    if (S != 1) gc[0] = float(S);\n}\n'
    for i in $(seq 1 40); do
        printf 'template [[host_name("cs_%d")]] [[kernel]] decltype(cs<%d>) cs<%d>;\n' "$i" "$i" "$i"
    done
} > "$TMPD/cs/big.metal"
expect_exit 0 "compile: a 40-kernel library compiles" $G compile "$TMPD/cs/big.metal" -I "$TMPD/cs/inc" -D SCALE=1.0f
expect_match "compile: a large library says it is compiled a kernel at a time" "$OUT" "a pipeline compiles and optimises its kernel alone"
expect_match "compile: the large library lists its last kernel" "$OUT" "kernel cs_40 "
expect_exit 0 "compile: large library json" $G compile "$TMPD/cs/big.metal" -I "$TMPD/cs/inc" -D SCALE=1.0f --json -
expect_match "compile: json per_kernel" "$OUT" '"per_kernel":[[:space:]]*true'
expect_exit 0 "compile: a kernel of a large library runs and passes, full checks" $G cumsum --backend sw --T 100 --H 2 \
    --iters 1 --warmup 0 --shader "$TMPD/cs/big.metal" --function cs_1 --include "$TMPD/cs/inc" \
    --define SCALE=1.0f --check both --sw-checks full
expect_exit 1 "compile: another kernel of it computes its own (wrong) values" $G cumsum --backend sw --T 100 --H 2 \
    --iters 1 --warmup 0 --shader "$TMPD/cs/big.metal" --function cs_7 --include "$TMPD/cs/inc" \
    --define SCALE=1.0f --check both
# the listing of the per-kernel path is the listing of the whole-library path
$G compile "$root/tests/msl/features.metal" | tail -n +2 > "$TMPD/list_whole.txt"
GDNBENCH_SW_WHOLE_LIBRARY_MAX=4 $G compile "$root/tests/msl/features.metal" | tail -n +3 > "$TMPD/list_split.txt"
if [ -s "$TMPD/list_whole.txt" ] && cmp -s "$TMPD/list_whole.txt" "$TMPD/list_split.txt"; then
    pass "compile: per-kernel listing equals the whole-library listing"
else
    fail "compile: per-kernel listing differs: $(diff "$TMPD/list_whole.txt" "$TMPD/list_split.txt" | head -5)"
fi
finish
