// decode_ctx.metal — micro.decode_ctx: the memory one decode token touches.
//
// Gated DeltaNet keeps a fixed D x D f32 state per head, whatever the context;
// attention reads the whole KV cache, which grows with it.  Head dim D = 128.
//
// micro_gdn_decode — one token of the gated delta rule, one thread per state
//   column j of head h (grid H, 128 threads):
//     S = exp(g) S;  u = beta (v - S^T k);  S += k u^T;  o = S^T q / sqrt(D)
//   ABI: 0 q, 1 k, 2 v f32[H,D], 3 g, 4 beta f32[H], 5 state, 6 state_out f32[H,D,D]
//        (row = k index), 7 o f32[H,D].
// micro_attn_decode_partial / _combine — split-K decode attention over a bf16 KV
//   cache [ctx, Hkv, D] with G = H/Hkv query heads per KV head.  Partial: grid
//   (chunks of 1024 keys, Hkv), 4 simdgroups of 256 keys each; a lane holds 4 of
//   the 128 dimensions, a simd_sum gives each score, online softmax per head;
//   writes (max, sum, acc[D]) per simdgroup.  Combine: grid H, one thread per
//   output dimension, merges the parts.
//   ABI partial: 0 q f32[H,D], 1 k_cache, 2 v_cache bf16[ctx,Hkv,D], 3 part_m,
//        4 part_l f32[H,parts], 5 part_acc f32[H,parts,D], 6 params uint[3] = {ctx, Hkv, G}.
//   ABI combine: 0 part_m, 1 part_l, 2 part_acc, 3 o f32[H,D], 4 params uint[1] = {parts}.
#include <metal_stdlib>
using namespace metal;

constant constexpr uint D = 128;
constant constexpr uint CHUNK = 1024;
constant constexpr uint SG_KEYS = 256;
constant constexpr uint SG_PER_CHUNK = CHUNK / SG_KEYS;
constant constexpr uint MAX_G = 8;
// Finite stand-in for -infinity: fast math may assume no infinities.
constant constexpr float NO_SCORE = -1.0e30f;

kernel void micro_gdn_decode(device const float *q [[buffer(0)]],
                             device const float *k [[buffer(1)]],
                             device const float *v [[buffer(2)]],
                             device const float *g [[buffer(3)]],
                             device const float *beta [[buffer(4)]],
                             device const float *state [[buffer(5)]],
                             device float *state_out [[buffer(6)]],
                             device float *o [[buffer(7)]],
                             uint h [[threadgroup_position_in_grid]],
                             uint j [[thread_index_in_threadgroup]]) {
    device const float *S = state + h * D * D;
    device float *S_out = state_out + h * D * D;
    device const float *kh = k + h * D;
    device const float *qh = q + h * D;
    float decay = exp(g[h]);
    float kv = 0.0f;
    for (uint i = 0; i < D; i++) kv += decay * S[i * D + j] * kh[i];
    float u = beta[h] * (v[h * D + j] - kv);
    float out = 0.0f;
    for (uint i = 0; i < D; i++) {
        float s = decay * S[i * D + j] + kh[i] * u;
        S_out[i * D + j] = s;
        out += s * qh[i];
    }
    o[h * D + j] = out * rsqrt(float(D));
}

kernel void micro_attn_decode_partial(device const float *q [[buffer(0)]],
                                      device const bfloat *k_cache [[buffer(1)]],
                                      device const bfloat *v_cache [[buffer(2)]],
                                      device float *part_m [[buffer(3)]],
                                      device float *part_l [[buffer(4)]],
                                      device float *part_acc [[buffer(5)]],
                                      constant uint *params [[buffer(6)]],
                                      uint2 tgpos [[threadgroup_position_in_grid]],
                                      uint sg [[simdgroup_index_in_threadgroup]],
                                      uint lane [[thread_index_in_simdgroup]]) {
    uint ctx = params[0], hkv = params[1], G = params[2];
    uint chunk = tgpos.x, kvh = tgpos.y;
    uint parts = ((ctx + CHUNK - 1) / CHUNK) * SG_PER_CHUNK;
    uint part = chunk * SG_PER_CHUNK + sg;
    float scale = rsqrt(float(D));
    float4 qv[MAX_G], acc[MAX_G];
    float m[MAX_G], l[MAX_G];
    for (uint gi = 0; gi < G; gi++) {
        device const float *qh = q + (kvh * G + gi) * D + lane * 4;
        qv[gi] = float4(qh[0], qh[1], qh[2], qh[3]) * scale;
        acc[gi] = float4(0.0f);
        m[gi] = NO_SCORE;
        l[gi] = 0.0f;
    }
    uint first = part * SG_KEYS, last = min(first + SG_KEYS, ctx);
    for (uint key = first; key < last; key++) {
        uint base = (key * hkv + kvh) * D + lane * 4;
        float4 kk = float4(float(k_cache[base]), float(k_cache[base + 1]), float(k_cache[base + 2]),
                           float(k_cache[base + 3]));
        float4 vv = float4(float(v_cache[base]), float(v_cache[base + 1]), float(v_cache[base + 2]),
                           float(v_cache[base + 3]));
        for (uint gi = 0; gi < G; gi++) {
            float s = simd_sum(dot(qv[gi], kk));
            float m_new = max(m[gi], s);
            float corr = exp(m[gi] - m_new), p = exp(s - m_new);
            l[gi] = l[gi] * corr + p;
            acc[gi] = acc[gi] * corr + p * vv;
            m[gi] = m_new;
        }
    }
    for (uint gi = 0; gi < G; gi++) {
        uint h = kvh * G + gi;
        if (lane == 0) {
            part_m[h * parts + part] = m[gi];
            part_l[h * parts + part] = l[gi];
        }
        device float *a = part_acc + (h * parts + part) * D + lane * 4;
        a[0] = acc[gi].x;
        a[1] = acc[gi].y;
        a[2] = acc[gi].z;
        a[3] = acc[gi].w;
    }
}

kernel void micro_attn_decode_combine(device const float *part_m [[buffer(0)]],
                                      device const float *part_l [[buffer(1)]],
                                      device const float *part_acc [[buffer(2)]],
                                      device float *o [[buffer(3)]],
                                      constant uint *params [[buffer(4)]],
                                      uint h [[threadgroup_position_in_grid]],
                                      uint j [[thread_index_in_threadgroup]]) {
    uint parts = params[0];
    float M = NO_SCORE;
    for (uint p = 0; p < parts; p++) M = max(M, part_m[h * parts + p]);
    float L = 0.0f, acc = 0.0f;
    for (uint p = 0; p < parts; p++) {
        float w = exp(part_m[h * parts + p] - M);
        L += part_l[h * parts + p] * w;
        acc += part_acc[(h * parts + p) * D + j] * w;
    }
    o[h * D + j] = acc / L;
}
