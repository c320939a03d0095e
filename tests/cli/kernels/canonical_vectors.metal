// canonical_vectors.metal — 8-byte vectors through the simd-group functions, for
// tests/cli/test_ir_canonical.sh: x86-64 passes a float2 or a half4 across a call
// as a double, arm64 as the vector, and the counting variant's count table must not
// show it.  A float2 simd_sum, simd_max and prefix sum (the prelude's lane fold,
// sw_sync.h), half4 and float2 shuffles in loops, and a float2 helper by value.
#include <metal_stdlib>
using namespace metal;

static float2 cmul(float2 a, float2 b) { return float2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }

kernel void canonical_vectors(device const float2 *x [[buffer(0)]],
                              device const half4 *h [[buffer(1)]],
                              device float4 *out [[buffer(2)]],
                              constant uint &n [[buffer(3)]],
                              uint i [[thread_position_in_grid]]) {
    float2 acc = float2(0.0f);
    half4 hv = h[i];
    float2 z = float2(1.0f, 0.0f);
    for (uint t = 0; t < n; t++) {
        float2 v = x[(i + t) % 64];
        acc += simd_sum(v);
        acc += simd_prefix_exclusive_sum(v) * simd_max(v);
        for (ushort o = 16; o > 0; o /= 2) hv = max(hv, simd_shuffle_xor(hv, o));
        for (ushort o = 1; o < 32; o *= 2) v += simd_shuffle_down(v, o);
        z = cmul(z, v * 0.125f);
    }
    out[i] = float4(acc + z, float(hv.x), float(hv.w));
}
