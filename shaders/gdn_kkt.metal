// gdn_kkt.metal — gdnbench's beta-scaled, gated K K^T per chunk (GDN pipeline step 2).
//
//   A[i, j] = beta_i * (k_i . k_j) * exp(gc_i - gc_j)   for j < i inside a chunk, else 0
//
// ABI (mlx-native's gated_delta_net_kkt_bf16):
//   buffer 0  k      bf16 [B, T, Hg, K]
//   buffer 1  beta   f32  [B, T, H]
//   buffer 2  g      f32  [B, T, H]      already chunk-cumsummed (gc)
//   buffer 3  A      f32  [B, T, H, BT]  row = token, column = position j in the chunk
//   buffer 4  params u32[8] = {B, T, Hg, H, K, BT, NT, BK}
//   threadgroup 0  bf16 [BT, BK]  8 KB   one BK-wide slice of the chunk's k rows
//   threadgroup 1  f32  [BT, BT] 16 KB   the A tile before its coalesced store; during
//                                        the K loop its first 8 KB hold bf16(beta*k)
//   grid (NT, H, B), 256 threads.  BT = BK = 64 are compiled in (validate refuses others).
//
// Shapes: every T >= 1 (rows past T are neither read nor written; a partial chunk's
// missing tokens act as zero keys), K in {64, 128, 256} (any multiple of 64), any Hg
// dividing H (value head h reads key head h / (H/Hg)).  Static threadgroup memory:
// 512 bytes (beta and gc of the chunk), 24.5 KB in all.
//
// Parity (FLA chunk_scaled_dot_kkt / mlx-native): beta_i*k_i is rounded to bf16
// before the dot; the dot accumulates in f32 in ascending K order; the gate
// multiplies the finished dot.  Same order as the parity reference.
//
// Work split: the 64x64 tile is 16x16 blocks of 4x4.  Threads 0..135 each own one of
// the 136 blocks on or below the diagonal (whole simdgroups 5..7 skip the dot
// loop), threads 136..255 own the 120 blocks above it, which are zero.
//
// Bytes at the default shape (B=1, T=4096, Hg=16, H=32, K=128): k 16.8 MB + beta
// 0.5 MB + gc 0.5 MB + A 33.6 MB = 51.4 MB -> roofline 94 us on M4 Max (546 GB/s).
// Math: 2 * 64*64*128 * 136/256 flop per (chunk, head) = 1.1 GFLOP, ~70 us at the
// ~16 TFLOP/s f32 peak, so the kernel stays bandwidth-bound.  Each value head
// re-reads its key head's rows (H/Hg = 2 times), which the L2 absorbs.
#include <metal_stdlib>
using namespace metal;

constant constexpr uint KKT_BT = 64;
constant constexpr uint KKT_BK = 64;
constant constexpr uint KKT_THREADS = 256;
constant constexpr uint KKT_LOWER_BLOCKS = 136;  // 4x4 blocks with bj <= bi in a 16x16 grid

kernel void gated_delta_net_kkt_bf16(device const bfloat *k [[buffer(0)]],
                                     device const float *beta [[buffer(1)]],
                                     device const float *g [[buffer(2)]],
                                     device float *A [[buffer(3)]],
                                     constant uint *params [[buffer(4)]],
                                     threadgroup bfloat *k_tile [[threadgroup(0)]],
                                     threadgroup float *a_tile [[threadgroup(1)]],
                                     uint3 tgid [[threadgroup_position_in_grid]],
                                     uint tid [[thread_index_in_threadgroup]]) {
    const uint T = params[1], Hg = params[2], H = params[3], K = params[4];
    const uint chunk = tgid.x, h = tgid.y, b = tgid.z;
    const uint t0 = chunk * KKT_BT;
    const uint n = min(KKT_BT, T - t0);
    const uint kh = h / (H / Hg);

    threadgroup float beta_s[KKT_BT];
    threadgroup float gc_s[KKT_BT];
    // bf16(beta_i * k_i) for the current BK slice, in the A tile's space until the end.
    threadgroup bfloat *kb_tile = (threadgroup bfloat *)a_tile;

    if (tid < KKT_BT) {
        const ulong gi = ((ulong)b * T + t0 + tid) * H + h;
        beta_s[tid] = tid < n ? beta[gi] : 0.0f;
        gc_s[tid] = tid < n ? g[gi] : 0.0f;
    }

    // This thread's 4x4 block: (bi, bj) in block units.
    uint bi, bj;
    const bool lower = tid < KKT_LOWER_BLOCKS;
    if (lower) {
        bi = 0;
        while ((bi + 1) * (bi + 2) / 2 <= tid) bi++;
        bj = tid - bi * (bi + 1) / 2;
    } else {
        const uint q = tid - KKT_LOWER_BLOCKS;  // strictly-lower index, transposed
        uint r = 1;
        while ((r + 1) * r / 2 <= q) r++;
        bi = q - r * (r - 1) / 2;
        bj = r;
    }

    float acc[4][4];
    for (uint r = 0; r < 4; r++)
        for (uint c = 0; c < 4; c++) acc[r][c] = 0.0f;

    threadgroup_barrier(mem_flags::mem_threadgroup);

    const ulong k_row0 = ((ulong)b * T + t0) * Hg + kh;  // in units of K-element rows
    for (uint kb = 0; kb < K; kb += KKT_BK) {
        // Stage k[:, kb:kb+64] and bf16(beta*k): 64 rows x 16 bfloat4, 4 per thread,
        // 16 consecutive threads cover one row's 128 contiguous bytes.
        for (uint e = tid; e < KKT_BT * KKT_BK / 4; e += KKT_THREADS) {
            const uint row = e / (KKT_BK / 4), c4 = e % (KKT_BK / 4);
            bfloat4 x = bfloat4(0.0f);
            if (row < n) x = *(device const bfloat4 *)(k + (k_row0 + (ulong)row * Hg) * K + kb + c4 * 4);
            *(threadgroup bfloat4 *)(k_tile + row * KKT_BK + c4 * 4) = x;
            *(threadgroup bfloat4 *)(kb_tile + row * KKT_BK + c4 * 4) = bfloat4(float4(x) * beta_s[row]);
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);

        if (lower) {
            for (uint d = 0; d < KKT_BK; d += 4) {
                float4 a[4], kj[4];
                for (uint r = 0; r < 4; r++) a[r] = float4(*(threadgroup bfloat4 *)(kb_tile + (bi * 4 + r) * KKT_BK + d));
                for (uint c = 0; c < 4; c++) kj[c] = float4(*(threadgroup bfloat4 *)(k_tile + (bj * 4 + c) * KKT_BK + d));
                for (uint r = 0; r < 4; r++)
                    for (uint c = 0; c < 4; c++) {
                        // ascending d, one rounding per multiply and per add
                        float s = acc[r][c];
                        s += a[r].x * kj[c].x;
                        s += a[r].y * kj[c].y;
                        s += a[r].z * kj[c].z;
                        s += a[r].w * kj[c].w;
                        acc[r][c] = s;
                    }
            }
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }

    // Gate, mask, and park the block in the A tile (kb_tile is dead after the barrier above).
    for (uint r = 0; r < 4; r++) {
        const uint i = bi * 4 + r;
        float4 out = float4(0.0f);
        if (lower) {
            for (uint c = 0; c < 4; c++) {
                const uint j = bj * 4 + c;
                out[c] = j < i ? acc[r][c] * exp(gc_s[i] - gc_s[j]) : 0.0f;
            }
        }
        *(threadgroup float4 *)(a_tile + i * KKT_BT + bj * 4) = out;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);

    // Coalesced store of the rows that exist: 16 threads per 256-byte row.
    const ulong a_row0 = ((ulong)b * T + t0) * H + h;
    for (uint e = tid; e < KKT_BT * KKT_BT / 4; e += KKT_THREADS) {
        const uint row = e / (KKT_BT / 4), c4 = e % (KKT_BT / 4);
        if (row < n)
            *(device float4 *)(A + (a_row0 + (ulong)row * H) * KKT_BT + c4 * 4) =
                *(threadgroup float4 *)(a_tile + row * KKT_BT + c4 * 4);
    }
}
