// gdn_wy.metal — gdnbench's recompute of w and u from the chunk inverse (GDN pipeline step 4).
//
//   w = Ai (beta * exp(gc) * k),   u = Ai (beta * v)      per chunk, both bf16
//
// ABI (mlx-native's gated_delta_net_recompute_wu_bf16):
//   buffer 0  k      bf16 [B, T, Hg, K]
//   buffer 1  v      bf16 [B, T, H, V]
//   buffer 2  beta   f32  [B, T, H]
//   buffer 3  g      f32  [B, T, H]       chunk-cumsummed (gc)
//   buffer 4  A      f32  [B, T, H, BT]   = Ai; entries j <= i of each row are read
//   buffer 5  w      bf16 [B, T, H, K]
//   buffer 6  u      bf16 [B, T, H, V]
//   buffer 7  params u32[8] = {B, T, Hg, H, K, V, BT, NT}
//   threadgroup 0  f32  [BT, BT]  16 KB  the chunk's Ai, zero above the diagonal
//   threadgroup 1  bf16 [BT, 64]   8 KB  one 64-column slice of bf16(beta*v) or
//                                        bf16(beta*exp(gc)*k)
//   grid (NT, H, B), 256 threads.  BT = 64 and the 64-wide slices are compiled in.
//
// Shapes: every T >= 1 (a partial chunk's missing rows are zero and never stored),
// K and V in {64, 128, 256} (any multiple of 64), any Hg dividing H.  Static
// threadgroup memory: 512 bytes (beta, exp(gc)); 24.5 KB in all.
//
// Parity (FLA recompute_w_u / mlx-native): bf16(v*beta) and bf16((k*beta)*exp(gc))
// before the products, Ai in f32, products summed in f32 in ascending j, w and u
// rounded to bf16 on store — the parity reference's order.
//
// Work split per slice: thread t owns rows 4*(t/16) .. +3 and columns 4*(t%16) .. +3;
// 16 consecutive threads store one row's 128 contiguous bytes.  The j loop stops at
// the thread's last row, so simdgroup s runs 8s+8 steps: 56% of the full square.
//
// Bytes at the default shape (B=1, T=4096, Hg=16, H=32, K=V=128): k 16.8 MB + v
// 33.6 MB + beta, gc 1.0 MB + Ai 33.6 MB + w 33.6 MB + u 33.6 MB = 152.0 MB ->
// roofline 278 us on M4 Max (546 GB/s).  Math: ~2.4 GFLOP (~150 us at 16 TFLOP/s),
// so the kernel is bandwidth-bound.
#include <metal_stdlib>
using namespace metal;

constant constexpr uint WY_BT = 64;
constant constexpr uint WY_BD = 64;  // columns per slice
constant constexpr uint WY_THREADS = 256;

kernel void gated_delta_net_recompute_wu_bf16(device const bfloat *k [[buffer(0)]],
                                              device const bfloat *v [[buffer(1)]],
                                              device const float *beta [[buffer(2)]],
                                              device const float *g [[buffer(3)]],
                                              device const float *A [[buffer(4)]],
                                              device bfloat *w [[buffer(5)]],
                                              device bfloat *u [[buffer(6)]],
                                              constant uint *params [[buffer(7)]],
                                              threadgroup float *ai_tile [[threadgroup(0)]],
                                              threadgroup bfloat *x_tile [[threadgroup(1)]],
                                              uint3 tgid [[threadgroup_position_in_grid]],
                                              uint tid [[thread_index_in_threadgroup]]) {
    const uint T = params[1], Hg = params[2], H = params[3], K = params[4], V = params[5];
    const uint chunk = tgid.x, h = tgid.y, b = tgid.z;
    const uint t0 = chunk * WY_BT;
    const uint n = min(WY_BT, T - t0);
    const uint kh = h / (H / Hg);

    threadgroup float beta_s[WY_BT];
    threadgroup float eg_s[WY_BT];

    const ulong tok0 = (ulong)b * T + t0;  // first token of the chunk, batch-flattened
    if (tid < WY_BT) {
        const ulong gi = (tok0 + tid) * H + h;
        beta_s[tid] = tid < n ? beta[gi] : 0.0f;
        eg_s[tid] = tid < n ? exp(g[gi]) : 0.0f;
    }
    // Ai rows that exist, masked to j <= i; missing rows are zero.
    for (uint e = tid; e < WY_BT * WY_BT / 4; e += WY_THREADS) {
        const uint row = e / (WY_BT / 4), c4 = e % (WY_BT / 4);
        float4 x = float4(0.0f);
        if (row < n) {
            x = *(device const float4 *)(A + ((tok0 + row) * H + h) * WY_BT + c4 * 4);
            for (uint q = 0; q < 4; q++)
                if (c4 * 4 + q > row) x[q] = 0.0f;
        }
        *(threadgroup float4 *)(ai_tile + row * WY_BT + c4 * 4) = x;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);

    const uint r0 = 4 * (tid / 16), col = 4 * (tid % 16);
    const uint j_end = min(r0 + 4, n);
    // Slices: V/64 of u first, then K/64 of w.
    const uint nv = V / WY_BD, nslices = nv + K / WY_BD;
    for (uint sl = 0; sl < nslices; sl++) {
        const bool is_u = sl < nv;
        const uint D = is_u ? V : K;
        const uint d0 = (is_u ? sl : sl - nv) * WY_BD;
        // Stage the scaled slice: 64 rows x 16 bfloat4, 4 per thread.
        for (uint e = tid; e < WY_BT * WY_BD / 4; e += WY_THREADS) {
            const uint row = e / (WY_BD / 4), c4 = e % (WY_BD / 4);
            bfloat4 x = bfloat4(0.0f);
            if (row < n) {
                if (is_u) {
                    const float4 src = float4(*(device const bfloat4 *)(v + ((tok0 + row) * H + h) * V + d0 + c4 * 4));
                    x = bfloat4(src * beta_s[row]);
                } else {
                    const float4 src = float4(*(device const bfloat4 *)(k + ((tok0 + row) * Hg + kh) * K + d0 + c4 * 4));
                    x = bfloat4(src * beta_s[row] * eg_s[row]);
                }
            }
            *(threadgroup bfloat4 *)(x_tile + row * WY_BD + c4 * 4) = x;
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);

        float4 acc[4] = {float4(0.0f), float4(0.0f), float4(0.0f), float4(0.0f)};
        for (uint j = 0; j < j_end; j++) {
            const float4 x = float4(*(threadgroup bfloat4 *)(x_tile + j * WY_BD + col));
            for (uint r = 0; r < 4; r++) acc[r] += ai_tile[(r0 + r) * WY_BT + j] * x;
        }
        device bfloat *dst = is_u ? u : w;
        for (uint r = 0; r < 4; r++)
            if (r0 + r < n) *(device bfloat4 *)(dst + ((tok0 + r0 + r) * H + h) * D + d0 + col) = bfloat4(acc[r]);
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
}
