// gdn_recurrent.metal — gdnbench's token-by-token GDN forward (FLA fused_recurrent).
//
// gdnbench defines this ABI (mlx-native has no bf16 prefill recurrence):
//
//   gated_delta_net_recurrent_bf16
//   buffer 0  q      bf16 [B, T, Hg, K]
//   buffer 1  k      bf16 [B, T, Hg, K]
//   buffer 2  v      bf16 [B, T, H, V]
//   buffer 3  g      f32  [B, T, H]      raw natural-log decay (not cumsummed), g <= 0
//   buffer 4  beta   f32  [B, T, H]
//   buffer 5  h0     f32  [B, H, V, K]   initial state
//   buffer 6  o      bf16 [B, T, H, V]
//   buffer 7  final  f32  [B, H, V, K]   state after the last token
//   buffer 8  params u32[8] = {B, T, Hg, H, K, V, bits of f32 scale, l2norm (0/1)}
//   threadgroup (32, NSG, 1), grid (ceil(V/NSG), H, B); gdnbench uses NSG = 4.
//   Simdgroup y of group x owns state row v = NSG*x + y; lane l holds its K/32
//   contiguous cells [l*K/32, (l+1)*K/32).  Value head h reads key head h / (H/Hg).
//
// Per token, in f32 (the parity reference's order, mlx-native's decode order):
//   [l2norm: q, k *= 1/sqrt(sum x^2 + 1e-6)]   q *= scale
//   S *= exp(g_t);  sk = S.k;  d = (v_t - sk) * beta_t;  S += d k;  o_t = bf16(S.q)
//
// Shapes: any T >= 1, K in {64, 128, 256} (compiled per K, chosen at run time), any V
// (rows past V are skipped), any Hg dividing H.  No threadgroup memory.
//
// Bytes at the default shape (B=1, T=4096, Hg=16, H=32, K=V=128): q, k 33.6 MB + v
// 33.6 MB + g, beta 1.0 MB + h0 2.1 MB + o 33.6 MB + final 2.1 MB = 105.9 MB ->
// roofline 194 us on M4 Max (546 GB/s).  The state never leaves registers, but each
// token costs two dependent simd_sum reductions, so a simdgroup's walk over T is
// latency-bound (microseconds per ~100 tokens), far from the roofline at long T;
// it is the decode-shaped kernel, and the correctness yardstick for the chunked
// pipeline.  The NSG simdgroups of a group read the same q, k rows (L1 hits).
#include <metal_stdlib>
using namespace metal;

struct recurrent_args {
    device const bfloat *q;
    device const bfloat *k;
    device const bfloat *v;
    device const float *g;
    device const float *beta;
    device const float *h0;
    device bfloat *o;
    device float *final_state;
    uint T, Hg, H, V;
    float scale;
    bool l2norm;
    uint b, hv, row;
};

// KPL = K/32 state cells per lane.
template <uint KPL>
static void recurrent_run(thread const recurrent_args &a, uint lane) {
    constexpr uint K = 32 * KPL;
    const uint kh = a.hv / (a.H / a.Hg);
    const ulong srow = (((ulong)a.b * a.H + a.hv) * a.V + a.row) * K + lane * KPL;

    float s[KPL];
    for (uint i = 0; i < KPL; i++) s[i] = a.h0[srow + i];

    for (uint t = 0; t < a.T; t++) {
        const ulong tok = (ulong)a.b * a.T + t;
        const ulong qk = (tok * a.Hg + kh) * K + lane * KPL;
        const ulong gi = tok * a.H + a.hv;
        float kx[KPL], qx[KPL];
        for (uint i = 0; i < KPL; i++) {
            kx[i] = float(a.k[qk + i]);
            qx[i] = float(a.q[qk + i]);
        }
        const float decay = exp(a.g[gi]);
        const float bt = a.beta[gi];
        const float vt = float(a.v[gi * a.V + a.row]);
        if (a.l2norm) {
            float2 ss = float2(0.0f);
            for (uint i = 0; i < KPL; i++) ss += float2(kx[i] * kx[i], qx[i] * qx[i]);
            ss = simd_sum(ss);
            const float ik = 1.0f / sqrt(ss.x + 1e-6f), iq = 1.0f / sqrt(ss.y + 1e-6f);
            for (uint i = 0; i < KPL; i++) {
                kx[i] *= ik;
                qx[i] *= iq;
            }
        }
        float sk = 0.0f;
        for (uint i = 0; i < KPL; i++) {
            qx[i] *= a.scale;
            s[i] *= decay;
            sk += s[i] * kx[i];
        }
        sk = simd_sum(sk);
        const float d = (vt - sk) * bt;
        float y = 0.0f;
        for (uint i = 0; i < KPL; i++) {
            s[i] += d * kx[i];
            y += s[i] * qx[i];
        }
        y = simd_sum(y);
        if (lane == 0) a.o[gi * a.V + a.row] = bfloat(y);
    }
    for (uint i = 0; i < KPL; i++) a.final_state[srow + i] = s[i];
}

kernel void gated_delta_net_recurrent_bf16(device const bfloat *q [[buffer(0)]],
                                           device const bfloat *k [[buffer(1)]],
                                           device const bfloat *v [[buffer(2)]],
                                           device const float *g [[buffer(3)]],
                                           device const float *beta [[buffer(4)]],
                                           device const float *h0 [[buffer(5)]],
                                           device bfloat *o [[buffer(6)]],
                                           device float *final_state [[buffer(7)]],
                                           constant uint *params [[buffer(8)]],
                                           uint3 tgid [[threadgroup_position_in_grid]],
                                           uint3 tg_size [[threads_per_threadgroup]],
                                           uint sg [[simdgroup_index_in_threadgroup]],
                                           uint lane [[thread_index_in_simdgroup]]) {
    const uint V = params[5];
    const uint row = tgid.x * tg_size.y + sg;
    if (row >= V) return;
    const recurrent_args a = {q, k, v, g, beta, h0, o, final_state,
                              params[1], params[2], params[3], V,
                              as_type<float>(params[6]), params[7] != 0,
                              tgid.z, tgid.y, row};
    switch (params[4]) {
    case 64: recurrent_run<2>(a, lane); break;
    case 128: recurrent_run<4>(a, lane); break;
    case 256: recurrent_run<8>(a, lane); break;
    default: break;  // refused by the op's validate
    }
}
