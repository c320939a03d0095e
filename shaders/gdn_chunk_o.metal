// gdn_chunk_o.metal — gdnbench's chunk output (GDN pipeline step 6).
//
//   o_t = scale * ( exp(gc_t) h[c] q_t + sum_{j<=t} (q_t . k_j) exp(gc_t - gc_j) v_new_j )
//
// ABI (mlx-native's gated_delta_net_chunk_o_bf16):
//   buffer 0  q      bf16 [B, T, Hg, K]
//   buffer 1  k      bf16 [B, T, Hg, K]
//   buffer 2  v_new  bf16 [B, T, H, V]
//   buffer 3  h      bf16 [B, NT, H, V, K]   state entering each chunk
//   buffer 4  g      f32  [B, T, H]          chunk-cumsummed (gc)
//   buffer 5  o      bf16 [B, T, H, V]
//   buffer 6  params u32[11] = {B, T, Hg, H, K, V, BT, NT, BK=32, BV=32, bits of f32 scale}
//   threadgroup 0  8 KB (mlx-native: bf16 [BT, BT]); here f32 [64, 32]: the q slice
//                  during the K loop, then the v_new tile
//   grid (V/32, NT, B*H), 256 threads.  BT = 64, BK = BV = 32 are compiled in.
//
// Shapes: every T >= 1 (a partial chunk's missing tokens are zero rows, masked out of
// the q.k matrix and never stored), K in {64, 128, 256} (any multiple of 32), V any
// multiple of 32, any Hg dividing H.  Static threadgroup memory: 12.25 KB; 20.25 KB
// with the host's 8 KB.
//
// Parity (FLA chunk_fwd_kernel_o / mlx-native): q.h and q.k accumulate in f32 from bf16
// operands; the gated, causally masked q.k matrix is rounded to bf16 before its product
// with v_new; o = bf16((q.h * exp(gc)) * scale + (A v_new) * scale).  Sums inside each
// 8x8 product follow the MMA's order, so f32 partial sums can differ from the parity
// reference's in the last bits.
//
// Design: 8 simdgroups, simdgroup s owns tokens 8s..8s+7 of the chunk: its [8, 32]
// block of q.h^T (4 tiles) and its row of q.k^T blocks j <= s (s+1 tiles; 36 of 64
// computed in all).  K is walked in 32-wide slices staged in threadgroup memory as f32
// (k and h transposed so every MMA operand is a plain 8x8 load).  The gate, the causal
// mask and the bf16 rounding of the q.k block happen in registers (Apple's lane->element
// map, sgm_row/sgm_col), so the q.k matrix never touches memory; o leaves through a
// bf16 tile in rows of 64 contiguous bytes.
//
// Bytes at the default shape (B=1, T=4096, Hg=16, H=32, K=V=128): q 16.8 MB + k
// 16.8 MB + v_new 33.6 MB + h 67.1 MB + gc 0.5 MB + o 33.6 MB = 168.3 MB -> roofline
// 308 us on M4 Max (546 GB/s).  The ABI's grid recomputes q.k^T for each of the V/32
// value blocks: ~10.3 GFLOP (~640 us at 16 TFLOP/s), so the kernel is compute-bound
// at this shape; q and k of a chunk are re-read per value block (from L2).
#include <metal_stdlib>
using namespace metal;

constant constexpr uint CO_BT = 64;
constant constexpr uint CO_BK = 32;
constant constexpr uint CO_BV = 32;
constant constexpr uint CO_THREADS = 256;

typedef simdgroup_matrix<float, 8, 8> sgmat;

// Position of element e (0 or 1) of thread_elements() in lane `lane` of an 8x8
// simdgroup matrix on Apple GPUs.
static inline uint sgm_row(uint lane) { return ((lane / 4) & 4) + (lane / 2) % 4; }
static inline uint sgm_col(uint lane, uint e) { return ((lane / 4) & 2) * 2 + (lane % 2) * 2 + e; }

kernel void gated_delta_net_chunk_o_bf16(device const bfloat *q [[buffer(0)]],
                                         device const bfloat *k [[buffer(1)]],
                                         device const bfloat *v_new [[buffer(2)]],
                                         device const bfloat *h [[buffer(3)]],
                                         device const float *g [[buffer(4)]],
                                         device bfloat *o [[buffer(5)]],
                                         constant uint *params [[buffer(6)]],
                                         threadgroup float *qs [[threadgroup(0)]],
                                         uint3 tgid [[threadgroup_position_in_grid]],
                                         uint tid [[thread_index_in_threadgroup]],
                                         uint sg [[simdgroup_index_in_threadgroup]],
                                         uint lane [[thread_index_in_simdgroup]]) {
    const uint T = params[1], Hg = params[2], H = params[3], K = params[4], V = params[5], NT = params[7];
    const float scale = as_type<float>(params[10]);
    const uint c = tgid.y, b = tgid.z / H, hv = tgid.z % H;
    const uint v0 = tgid.x * CO_BV, t0 = c * CO_BT;
    const uint n = min(CO_BT, T - t0);
    const uint kh = hv / (H / Hg);
    const ulong tok0 = (ulong)b * T + t0;

    threadgroup float kts[CO_BK * CO_BT];  // k slice transposed: [kk][j]
    threadgroup float hts[CO_BK * CO_BV];  // h slice transposed: [kk][v]; later o as bf16 [t][v]
    threadgroup float g_s[CO_BT];

    if (tid < CO_BT) g_s[tid] = tid < n ? g[(tok0 + tid) * H + hv] : 0.0f;

    const uint tr = 8 * sg;  // this simdgroup's first token
    sgmat oq[4], aq[8];
    for (uint i = 0; i < 4; i++) oq[i] = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);
    for (uint i = 0; i < 8; i++) aq[i] = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);

    device const bfloat *hc = h + ((((ulong)b * NT + c) * H + hv) * V + v0) * K;
    for (uint kb = 0; kb < K; kb += CO_BK) {
        // q and k rows of the slice: 64 rows x 8 bfloat4, 2 per thread.
        for (uint e = tid; e < CO_BT * CO_BK / 4; e += CO_THREADS) {
            const uint row = e / (CO_BK / 4), c4 = e % (CO_BK / 4);
            float4 xq = float4(0.0f), xk = float4(0.0f);
            if (row < n) {
                const ulong off = ((tok0 + row) * Hg + kh) * K + kb + c4 * 4;
                xq = float4(*(device const bfloat4 *)(q + off));
                xk = float4(*(device const bfloat4 *)(k + off));
            }
            *(threadgroup float4 *)(qs + row * CO_BK + c4 * 4) = xq;
            for (uint i = 0; i < 4; i++) kts[(c4 * 4 + i) * CO_BT + row] = xk[i];
        }
        // h rows v0..v0+31 of the slice: 32 rows x 8 bfloat4, 1 per thread.
        for (uint e = tid; e < CO_BV * CO_BK / 4; e += CO_THREADS) {
            const uint vv = e / (CO_BK / 4), c4 = e % (CO_BK / 4);
            const float4 x = float4(*(device const bfloat4 *)(hc + (ulong)vv * K + kb + c4 * 4));
            for (uint i = 0; i < 4; i++) hts[(c4 * 4 + i) * CO_BV + vv] = x[i];
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        for (uint kk = 0; kk < CO_BK / 8; kk++) {
            sgmat qm;
            simdgroup_load(qm, qs + tr * CO_BK + kk * 8, CO_BK);
            for (uint ct = 0; ct < 4; ct++) {
                sgmat hm;
                simdgroup_load(hm, hts + kk * 8 * CO_BV + ct * 8, CO_BV);
                simdgroup_multiply_accumulate(oq[ct], qm, hm, oq[ct]);
            }
            for (uint jt = 0; jt < 8; jt++) {
                if (jt > sg) break;
                sgmat km;
                simdgroup_load(km, kts + kk * 8 * CO_BT + jt * 8, CO_BT);
                simdgroup_multiply_accumulate(aq[jt], qm, km, aq[jt]);
            }
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }

    // v_new tile [64 j][32 v] into the q slice's space.
    for (uint e = tid; e < CO_BT * CO_BV / 4; e += CO_THREADS) {
        const uint row = e / (CO_BV / 4), c4 = e % (CO_BV / 4);
        float4 x = float4(0.0f);
        if (row < n) x = float4(*(device const bfloat4 *)(v_new + ((tok0 + row) * H + hv) * V + v0 + c4 * 4));
        *(threadgroup float4 *)(qs + row * CO_BV + c4 * 4) = x;
    }

    // Gate q.h by exp(gc_t); gate, mask and round the q.k block, in registers.
    const uint t = tr + sgm_row(lane);
    const float gt = g_s[t];
    const float eg = exp(gt);
    for (uint ct = 0; ct < 4; ct++) {
        thread auto &e = oq[ct].thread_elements();
        e[0] *= eg;
        e[1] *= eg;
    }
    for (uint jt = 0; jt < 8; jt++) {
        if (jt > sg) break;
        thread auto &e = aq[jt].thread_elements();
        for (uint i = 0; i < 2; i++) {
            const uint j = jt * 8 + sgm_col(lane, i);
            e[i] = (j <= t && t < n) ? float(bfloat(e[i] * exp(gt - g_s[j]))) : 0.0f;
        }
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);

    sgmat p[4];
    for (uint ct = 0; ct < 4; ct++) p[ct] = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);
    for (uint jt = 0; jt < 8; jt++) {
        if (jt > sg) break;
        for (uint ct = 0; ct < 4; ct++) {
            sgmat vm;
            simdgroup_load(vm, qs + jt * 8 * CO_BV + ct * 8, CO_BV);
            simdgroup_multiply_accumulate(p[ct], aq[jt], vm, p[ct]);
        }
    }

    threadgroup bfloat *obuf = (threadgroup bfloat *)hts;  // [64 t][32 v]
    for (uint ct = 0; ct < 4; ct++) {
        thread auto &eo = oq[ct].thread_elements();
        thread auto &ep = p[ct].thread_elements();
        for (uint i = 0; i < 2; i++) obuf[t * CO_BV + ct * 8 + sgm_col(lane, i)] = bfloat(eo[i] * scale + ep[i] * scale);
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint e = tid; e < CO_BT * CO_BV / 4; e += CO_THREADS) {
        const uint row = e / (CO_BV / 4), c4 = e % (CO_BV / 4);
        if (row < n)
            *(device bfloat4 *)(o + ((tok0 + row) * H + hv) * V + v0 + c4 * 4) =
                *(threadgroup bfloat4 *)(obuf + row * CO_BV + c4 * 4);
    }
}
