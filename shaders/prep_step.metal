// prep_step.metal — fused decode of one Qwen3.5/3.6 Gated DeltaNet layer from its conv
// output (kernels.md "Fused decode prep_step"): q/k RMSNorm, the decay and beta gates,
// and one step of the delta-rule recurrence, all in f32.
//
// Buffers (both kernels):
//   0 conv_out      f32 [B, 2*Hk*Dk + Hv*Dv]   q | k | v of one token
//   1 a_log         f32 [Hv]
//   2 dt_bias       f32 [Hv]
//   3 a_raw         f32 [B, Hv]
//   4 b_raw         f32 [B, Hv]
//   5 q_norm_weight f32 [Hk*Dk]                 (carries the attention scale)
//   6 k_norm_weight f32 [Hk*Dk]
//   7 state_in      f32 [B, Hv, Dv, Dk]
//   8 state_out     f32 [B, Hv, Dv, Dk]         may alias state_in (each row is read
//                                               before it is written, by its owner)
//   9 y             f32 [B, Hv, Dv]
//  10 params        u32 {B, Hk, Hv, Dk, Dv}     (+ N for mt_gated_delta_prep_seq)
// mt_gated_delta_prep_seq takes N tokens: conv_out [N,B,...], a_raw/b_raw [N,B,Hv],
// y [N,B,Hv,Dv] (token-major), and keeps the state row in registers between tokens.
//
// Geometry: grid [Dv, B*Hv, 1] threadgroups of 32 threads (one simdgroup).  The
// threadgroup (v, b*Hv + h) owns state row S[b,h,v,:]; lane l holds elements
// l, l+32, ... (Dk % 32 == 0, Dk <= 256).  Every threadgroup of a head recomputes the
// head's q/k norms (Dk loads from cache, cheaper than a second dispatch).
//
// Reductions are explicit xor butterflies (offsets 16, 8, 4, 2, 1) over per-lane
// sums in element order, so the f32 result is the same on every device and matches
// the parity reference (src/ref/prep_step_ref.c) operation for operation.
#include <metal_stdlib>
using namespace metal;

constant constexpr uint PREP_MAX_PER_LANE = 8; // Dk <= 256
constant constexpr float PREP_RMS_EPS = 1e-6f;

static inline float butterfly_sum(float x) {
    x = x + simd_shuffle_xor(x, 16);
    x = x + simd_shuffle_xor(x, 8);
    x = x + simd_shuffle_xor(x, 4);
    x = x + simd_shuffle_xor(x, 2);
    x = x + simd_shuffle_xor(x, 1);
    return x;
}

// RMS-normalised row x[0..Dk) times w, the lane's elements into out[].
static inline void rms_norm_lane(device const float *x, device const float *w, uint Dk, uint lane,
                                 thread float *out) {
    float ss = 0.0f;
    for (uint i = 0; i < Dk / 32; i++) {
        float v = x[lane + 32 * i];
        ss += v * v;
    }
    float inv = 1.0f / sqrt(butterfly_sum(ss) / float(Dk) + PREP_RMS_EPS);
    for (uint i = 0; i < Dk / 32; i++) out[i] = x[lane + 32 * i] * inv * w[lane + 32 * i];
}

// One token for the threadgroup's state row s[] (in registers): returns y[v].
static inline float prep_token(device const float *conv_row, device const float *a_log,
                               device const float *dt_bias, float a_raw, float b_raw,
                               device const float *q_norm_weight, device const float *k_norm_weight,
                               uint Hk, uint Hv, uint Dk, uint Dv, uint h, uint v, uint lane,
                               thread float *s) {
    uint hk = h / (Hv / Hk);
    float q[PREP_MAX_PER_LANE], k[PREP_MAX_PER_LANE];
    rms_norm_lane(conv_row + hk * Dk, q_norm_weight + hk * Dk, Dk, lane, q);
    rms_norm_lane(conv_row + (Hk + hk) * Dk, k_norm_weight + hk * Dk, Dk, lane, k);
    float x = a_raw + dt_bias[h];
    float softplus = x > 20.0f ? x : log(1.0f + exp(x));
    float g = exp(-exp(a_log[h]) * softplus);
    float beta = 1.0f / (1.0f + exp(-b_raw));
    float vv = conv_row[2 * Hk * Dk + h * Dv + v];

    float kv = 0.0f;
    for (uint i = 0; i < Dk / 32; i++) {
        s[i] = g * s[i];
        kv += s[i] * k[i];
    }
    float delta = beta * (vv - butterfly_sum(kv));
    float yv = 0.0f;
    for (uint i = 0; i < Dk / 32; i++) {
        s[i] = s[i] + delta * k[i];
        yv += s[i] * q[i];
    }
    return butterfly_sum(yv);
}

kernel void mt_gated_delta_prep_step(device const float *conv_out [[buffer(0)]],
                                     device const float *a_log [[buffer(1)]],
                                     device const float *dt_bias [[buffer(2)]],
                                     device const float *a_raw [[buffer(3)]],
                                     device const float *b_raw [[buffer(4)]],
                                     device const float *q_norm_weight [[buffer(5)]],
                                     device const float *k_norm_weight [[buffer(6)]],
                                     device const float *state_in [[buffer(7)]],
                                     device float *state_out [[buffer(8)]],
                                     device float *y [[buffer(9)]],
                                     constant uint *params [[buffer(10)]],
                                     uint3 tgid [[threadgroup_position_in_grid]],
                                     uint lane [[thread_index_in_simdgroup]]) {
    const uint Hk = params[1], Hv = params[2], Dk = params[3], Dv = params[4];
    const uint v = tgid.x, bh = tgid.y, b = bh / Hv, h = bh % Hv;
    const uint C = 2 * Hk * Dk + Hv * Dv;
    const ulong row = (ulong(bh) * Dv + v) * Dk;

    float s[PREP_MAX_PER_LANE];
    for (uint i = 0; i < Dk / 32; i++) s[i] = state_in[row + lane + 32 * i];
    float yv = prep_token(conv_out + ulong(b) * C, a_log, dt_bias, a_raw[bh], b_raw[bh], q_norm_weight,
                          k_norm_weight, Hk, Hv, Dk, Dv, h, v, lane, s);
    for (uint i = 0; i < Dk / 32; i++) state_out[row + lane + 32 * i] = s[i];
    if (lane == 0) y[ulong(bh) * Dv + v] = yv;
}

kernel void mt_gated_delta_prep_seq(device const float *conv_out [[buffer(0)]],
                                    device const float *a_log [[buffer(1)]],
                                    device const float *dt_bias [[buffer(2)]],
                                    device const float *a_raw [[buffer(3)]],
                                    device const float *b_raw [[buffer(4)]],
                                    device const float *q_norm_weight [[buffer(5)]],
                                    device const float *k_norm_weight [[buffer(6)]],
                                    device const float *state_in [[buffer(7)]],
                                    device float *state_out [[buffer(8)]],
                                    device float *y [[buffer(9)]],
                                    constant uint *params [[buffer(10)]],
                                    uint3 tgid [[threadgroup_position_in_grid]],
                                    uint lane [[thread_index_in_simdgroup]]) {
    const uint B = params[0], Hk = params[1], Hv = params[2], Dk = params[3], Dv = params[4], N = params[5];
    const uint v = tgid.x, bh = tgid.y, b = bh / Hv, h = bh % Hv;
    const uint C = 2 * Hk * Dk + Hv * Dv;
    const ulong row = (ulong(bh) * Dv + v) * Dk;

    float s[PREP_MAX_PER_LANE];
    for (uint i = 0; i < Dk / 32; i++) s[i] = state_in[row + lane + 32 * i];
    for (uint t = 0; t < N; t++) {
        const ulong tb = ulong(t) * B + b; // token-major: [N, B, ...]
        float yv = prep_token(conv_out + tb * C, a_log, dt_bias, a_raw[tb * Hv + h], b_raw[tb * Hv + h],
                              q_norm_weight, k_norm_weight, Hk, Hv, Dk, Dv, h, v, lane, s);
        if (lane == 0) y[(tb * Hv + h) * Dv + v] = yv;
    }
    for (uint i = 0; i < Dk / 32; i++) state_out[row + lane + 32 * i] = s[i];
}
