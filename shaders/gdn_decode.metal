// gdn_decode.metal — gdnbench's one-token GDN decode step, f32 (mlx-native's decode ABI).
//
// ABI (mlx-native's gated_delta_net_decode_f32_N, as gdnbench's decode op binds it):
//   buffer 0  q          f32 [B, NTOK, Hg, K]   pre-scaled by the caller
//   buffer 1  k          f32 [B, NTOK, Hg, K]
//   buffer 2  v          f32 [B, NTOK, H, V]
//   buffer 3  g          f32 [B, NTOK, H]       positive decay rate: alpha = exp(-g)
//   buffer 4  beta       f32 [B, NTOK, H]
//   buffer 5  state_in   f32 [B, H, V, K]
//   buffer 6  output     f32 [B, NTOK, H, V]
//   buffer 7  state_out  f32 [B, H, V, K]      may alias state_in
//   buffer 8  params     u32[9] = {K, V, Hg, H, NTOK, B, 0, 0, bits of an f32 output
//                        scale (0 = none)}
//   threadgroup (32, NSG, 1), grid (ceil(V/NSG), H, B): simdgroup y of group x owns
//   state row v = NSG*x + y.  Value head h reads key head h % Hg (tiled GQA, the
//   llama.cpp / mlx-native decode convention).
//
// Variants: N in {1, 2, 4, 8} is the number of state cells per lane, so _N serves
// K <= 32*N; gdnbench launches N = K/32 with NSG = N simdgroups (mlx-native's
// pairing).  Lane l holds cells [l*N, l*N + N) of its row, masked past K.
//
// Per token, in f32 (the parity reference's order):
//   S *= exp(-g);  sk = S.k;  d = (v - sk) * beta;  S += d k;  y = S.q [* scale]
// NTOK > 1 walks the tokens in order with the state in registers.
//
// Shapes: K <= 32*N, any V (rows past V are skipped), any Hg dividing H.
//
// Bytes at the default shape (B=1, Hg=16, H=32, K=V=128, one token): state in and
// out 2 x 2.1 MB + q, k, v, g, beta, output 0.05 MB = 4.24 MB -> roofline 7.8 us
// on M4 Max (546 GB/s).  Each lane reads and writes N contiguous floats of a state
// row (one row of 4*K bytes per simdgroup, coalesced); q and k are re-read by the
// V simdgroups of a head (L1/L2 hits).  Two dependent simd_sums per token are the
// latency floor.
#include <metal_stdlib>
using namespace metal;

template <uint N>
static void decode_step(device const float *q, device const float *k, device const float *v,
                        device const float *g, device const float *beta, device const float *state_in,
                        device float *output, device float *state_out, constant uint *params,
                        uint3 tgid, uint3 tg_size, uint sg, uint lane) {
    const uint K = params[0], V = params[1], Hg = params[2], H = params[3], NTOK = params[4];
    const uint scale_bits = params[8];
    const uint b = tgid.z, hv = tgid.y;
    const uint row = tgid.x * tg_size.y + sg;
    if (row >= V) return;
    const uint kh = hv % Hg;
    const ulong srow = (((ulong)b * H + hv) * V + row) * K;
    const uint c0 = lane * N;

    float s[N];
    for (uint i = 0; i < N; i++) s[i] = c0 + i < K ? state_in[srow + c0 + i] : 0.0f;

    for (uint t = 0; t < NTOK; t++) {
        const ulong tok = (ulong)b * NTOK + t;
        const ulong qk = (tok * Hg + kh) * K + c0;
        const ulong gi = tok * H + hv;
        const float alpha = exp(-g[gi]);
        const float bt = beta[gi];
        const float vt = v[gi * V + row];
        float kx[N], qx[N];
        float sk = 0.0f;
        for (uint i = 0; i < N; i++) {
            const bool in = c0 + i < K;
            kx[i] = in ? k[qk + i] : 0.0f;
            qx[i] = in ? q[qk + i] : 0.0f;
            s[i] *= alpha;
            sk += s[i] * kx[i];
        }
        sk = simd_sum(sk);
        const float d = (vt - sk) * bt;
        float y = 0.0f;
        for (uint i = 0; i < N; i++) {
            s[i] += d * kx[i];
            y += s[i] * qx[i];
        }
        y = simd_sum(y);
        if (scale_bits != 0) y *= as_type<float>(scale_bits);
        if (lane == 0) output[gi * V + row] = y;
    }
    for (uint i = 0; i < N; i++)
        if (c0 + i < K) state_out[srow + c0 + i] = s[i];
}

// One kernel per N, written out: the parameter lists are the ABI.
kernel void gated_delta_net_decode_f32_1(device const float *q [[buffer(0)]],
                                         device const float *k [[buffer(1)]],
                                         device const float *v [[buffer(2)]],
                                         device const float *g [[buffer(3)]],
                                         device const float *beta [[buffer(4)]],
                                         device const float *state_in [[buffer(5)]],
                                         device float *output [[buffer(6)]],
                                         device float *state_out [[buffer(7)]],
                                         constant uint *params [[buffer(8)]],
                                         uint3 tgid [[threadgroup_position_in_grid]],
                                         uint3 tg_size [[threads_per_threadgroup]],
                                         uint sg [[simdgroup_index_in_threadgroup]],
                                         uint lane [[thread_index_in_simdgroup]]) {
    decode_step<1>(q, k, v, g, beta, state_in, output, state_out, params, tgid, tg_size, sg, lane);
}

kernel void gated_delta_net_decode_f32_2(device const float *q [[buffer(0)]],
                                         device const float *k [[buffer(1)]],
                                         device const float *v [[buffer(2)]],
                                         device const float *g [[buffer(3)]],
                                         device const float *beta [[buffer(4)]],
                                         device const float *state_in [[buffer(5)]],
                                         device float *output [[buffer(6)]],
                                         device float *state_out [[buffer(7)]],
                                         constant uint *params [[buffer(8)]],
                                         uint3 tgid [[threadgroup_position_in_grid]],
                                         uint3 tg_size [[threads_per_threadgroup]],
                                         uint sg [[simdgroup_index_in_threadgroup]],
                                         uint lane [[thread_index_in_simdgroup]]) {
    decode_step<2>(q, k, v, g, beta, state_in, output, state_out, params, tgid, tg_size, sg, lane);
}

kernel void gated_delta_net_decode_f32_4(device const float *q [[buffer(0)]],
                                         device const float *k [[buffer(1)]],
                                         device const float *v [[buffer(2)]],
                                         device const float *g [[buffer(3)]],
                                         device const float *beta [[buffer(4)]],
                                         device const float *state_in [[buffer(5)]],
                                         device float *output [[buffer(6)]],
                                         device float *state_out [[buffer(7)]],
                                         constant uint *params [[buffer(8)]],
                                         uint3 tgid [[threadgroup_position_in_grid]],
                                         uint3 tg_size [[threads_per_threadgroup]],
                                         uint sg [[simdgroup_index_in_threadgroup]],
                                         uint lane [[thread_index_in_simdgroup]]) {
    decode_step<4>(q, k, v, g, beta, state_in, output, state_out, params, tgid, tg_size, sg, lane);
}

kernel void gated_delta_net_decode_f32_8(device const float *q [[buffer(0)]],
                                         device const float *k [[buffer(1)]],
                                         device const float *v [[buffer(2)]],
                                         device const float *g [[buffer(3)]],
                                         device const float *beta [[buffer(4)]],
                                         device const float *state_in [[buffer(5)]],
                                         device float *output [[buffer(6)]],
                                         device float *state_out [[buffer(7)]],
                                         constant uint *params [[buffer(8)]],
                                         uint3 tgid [[threadgroup_position_in_grid]],
                                         uint3 tg_size [[threads_per_threadgroup]],
                                         uint sg [[simdgroup_index_in_threadgroup]],
                                         uint lane [[thread_index_in_simdgroup]]) {
    decode_step<8>(q, k, v, g, beta, state_in, output, state_out, params, tgid, tg_size, sg, lane);
}
