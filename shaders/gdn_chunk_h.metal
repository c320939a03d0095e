// gdn_chunk_h.metal — gdnbench's inter-chunk state pass (GDN pipeline step 5).
//
// With S [V, K] (f32) the state entering chunk c, per (b, h):
//   h[c] = bf16(S)
//   v_new_t = u_t - S w_t                             stored bf16
//   S = exp(gl) S + sum_t bf16(v_new_t * exp(gl - gc_t)) k_t^T     (gl = gc of the
//                                                      chunk's last token)
//   final = S after the last chunk (f32)
//
// ABI (mlx-native's gated_delta_net_chunk_inter_state_bf16):
//   buffer 0  k      bf16 [B, T, Hg, K]
//   buffer 1  w      bf16 [B, T, H, K]
//   buffer 2  u      bf16 [B, T, H, V]
//   buffer 3  g      f32  [B, T, H]          chunk-cumsummed (gc)
//   buffer 4  h0     f32  [B, H, V, K]
//   buffer 5  h      bf16 [B, NT, H, V, K]   state entering each chunk
//   buffer 6  v_new  bf16 [B, T, H, V]
//   buffer 7  final  f32  [B, H, V, K]
//   buffer 8  params u32[8] = {B, T, Hg, H, K, V, BT, NT}
//   threadgroup 0  scratch from the host, at least max(8 KB, 64*K) + 4.25 KB bytes
//                  (gdnbench gives mlx-native's (BT*BV + BV*K)*4, capped at 32 KB): a 32-column
//                  f32 slice of w^T or k, or bf16(S) [32, K]; the u / v_new tile
//                  bf16 [64, 32]; gc of the chunk.  No static threadgroup memory.
//   grid (V/32, H, B), 128 threads.
//
// Shapes: every T >= 1 (missing tokens of a partial last chunk are zero rows that
// are never stored; gl is the last real token's gc), K in {64, 128, 256} (compiled
// per K, chosen at run time; 12.25 KB for K <= 128, 20.25 KB for K=256), V any
// multiple of 32, any Hg dividing H.
//
// Parity (FLA chunk_gated_delta_rule_fwd_h as ported by mlx-native, whose fixtures the
// parity reference matches bit for bit): the w.S product reads the f32 S (upstream
// FLA's Triton reads bf16(S)), summed in ascending K; v_new is rounded from the f32
// u - w.S; the update uses bf16(v_new_f32 * exp(gl - gc_t)), summed over the chunk's
// tokens in ascending order, then S = S * exp(gl) + update — the reference's order,
// so with the emulator's in-order 8x8 products h, v_new and final match it exactly.
//
// Design: each of the 4 simdgroups owns 8 rows of the group's 32 value rows and keeps
// those rows of S (K/8 8x8 f32 tiles) in registers for the whole sequence, so the
// rows' state never leaves the simdgroup:
//   - S tiles are rounded to bf16 into threadgroup memory and copied out as h[c]
//     (32 contiguous rows of K, coalesced);
//   - v_new^T [8 v, 64 t] = S [8 v, K] x w^T [K, 64 t], with w staged
//     transposed in 32-column slices;
//   - v_new is finished element-wise in registers (the lane->element map of an
//     8x8 simdgroup matrix is Apple's: see sgm_row/sgm_col) and stays in registers
//     as the A operand of the update  v_dec^T [8 v, 64 t] x k [64 t, K], which is
//     folded into S one 8-column tile at a time;
//   - u is read and v_new written through a [64, 32] bf16 tile, both coalesced.
//
// Bytes at the default shape (B=1, T=4096, Hg=16, H=32, K=V=128): k 16.8 MB + w
// 33.6 MB + u 33.6 MB + gc 0.5 MB + h0 2.1 MB + h 67.1 MB + v_new 33.6 MB + final
// 2.1 MB = 189.3 MB -> roofline 347 us on M4 Max (546 GB/s).  Math: 4 * 64*128*128
// flop per (chunk, head) = 8.6 GFLOP (~540 us at 16 TFLOP/s), and only
// V/32 * H * B = 128 threadgroups walk the chunks in sequence, so on a GPU this
// pass is compute- and latency-bound, not bandwidth-bound.  The 4 value-row
// groups of a head each re-read that head's w and k (from L2).
#include <metal_stdlib>
using namespace metal;

constant constexpr uint CH_BT = 64;
constant constexpr uint CH_BV = 32;
constant constexpr uint CH_KS = 32;  // K columns per staged slice
constant constexpr uint CH_THREADS = 128;

typedef simdgroup_matrix<float, 8, 8> sgmat;

// Position of element e (0 or 1) of thread_elements() in lane `lane` of an 8x8
// simdgroup matrix on Apple GPUs.
static inline uint sgm_row(uint lane) { return ((lane / 4) & 4) + (lane / 2) % 4; }
static inline uint sgm_col(uint lane, uint e) { return ((lane / 4) & 2) * 2 + (lane % 2) * 2 + e; }

struct chunk_h_args {
    device const bfloat *k;
    device const bfloat *w;
    device const bfloat *u;
    device const float *g;
    device const float *h0;
    device bfloat *h;
    device bfloat *v_new;
    device float *final_state;
    uint T, Hg, H, V, NT;
    uint b, hv, v0;
};

template <uint K>
static void chunk_h_run(thread const chunk_h_args &a, threadgroup float *stage, threadgroup bfloat *ubuf,
                        threadgroup float *g_s, uint tid, uint sg, uint lane) {
    constexpr uint KT = K / 8;             // 8x8 tiles along K
    constexpr uint NSL = K / CH_KS;        // staged slices along K
    const uint T = a.T, H = a.H, V = a.V;
    const uint kh = a.hv / (H / a.Hg);
    const uint vr = 8 * sg;                // this simdgroup's first row within the group
    const uint er = sgm_row(lane);         // row of this lane's elements in every tile
    threadgroup bfloat *sbf = (threadgroup bfloat *)stage;  // [32][K] bf16(S), aliases stage

    sgmat S[KT];
    {
        device const float *src = a.h0 + (((ulong)a.b * H + a.hv) * V + a.v0 + vr) * K;
        for (uint kt = 0; kt < KT; kt++) simdgroup_load(S[kt], src + kt * 8, K);
    }

    for (uint c = 0; c < a.NT; c++) {
        const uint t0 = c * CH_BT;
        const uint n = min(CH_BT, T - t0);
        const ulong tok0 = (ulong)a.b * T + t0;

        // (1) bf16(S) into the stage; gc and the u tile of this chunk.
        for (uint kt = 0; kt < KT; kt++) {
            const thread auto &e = S[kt].thread_elements();
            for (uint q = 0; q < 2; q++) sbf[(vr + er) * K + kt * 8 + sgm_col(lane, q)] = bfloat(e[q]);
        }
        if (tid < CH_BT) g_s[tid] = tid < n ? a.g[(tok0 + tid) * H + a.hv] : 0.0f;
        for (uint e = tid; e < CH_BT * CH_BV / 4; e += CH_THREADS) {
            const uint row = e / (CH_BV / 4), c4 = e % (CH_BV / 4);
            bfloat4 x = bfloat4(0.0f);
            if (row < n) x = *(device const bfloat4 *)(a.u + ((tok0 + row) * H + a.hv) * V + a.v0 + c4 * 4);
            *(threadgroup bfloat4 *)(ubuf + row * CH_BV + c4 * 4) = x;
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);

        // h[c]: the group's 32 rows are contiguous in h.
        {
            device bfloat *dst = a.h + ((((ulong)a.b * a.NT + c) * H + a.hv) * V + a.v0) * K;
            for (uint e = tid; e < CH_BV * K / 4; e += CH_THREADS)
                *(device bfloat4 *)(dst + e * 4) = *(threadgroup bfloat4 *)(sbf + e * 4);
        }

        // (2) vt[tt] = S x w^T: [8 v, 8 t] tiles for t = 8tt .. 8tt+7 (f32 S, as mlx-native).
        sgmat vt[8];
        for (uint tt = 0; tt < 8; tt++) vt[tt] = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);
        for (uint sl = 0; sl < NSL; sl++) {
            threadgroup_barrier(mem_flags::mem_threadgroup);  // stage free (h copy / last slice read)
            // w[t][sl*32 + kk] -> stage[kk][t]
            for (uint e = tid; e < CH_BT * CH_KS / 4; e += CH_THREADS) {
                const uint row = e / (CH_KS / 4), c4 = e % (CH_KS / 4);
                float4 x = float4(0.0f);
                if (row < n) x = float4(*(device const bfloat4 *)(a.w + ((tok0 + row) * H + a.hv) * K + sl * CH_KS + c4 * 4));
                for (uint q = 0; q < 4; q++) stage[(c4 * 4 + q) * CH_BT + row] = x[q];
            }
            threadgroup_barrier(mem_flags::mem_threadgroup);
            for (uint kk = 0; kk < CH_KS / 8; kk++) {
                thread const sgmat &s = S[sl * (CH_KS / 8) + kk];
                for (uint tt = 0; tt < 8; tt++) {
                    sgmat wt;
                    simdgroup_load(wt, stage + kk * 8 * CH_BT + tt * 8, CH_BT);
                    simdgroup_multiply_accumulate(vt[tt], s, wt, vt[tt]);
                }
            }
        }

        // (3) v_new = u - vt, stored through ubuf; vt becomes the gated bf16 update.
        const float gl = g_s[n - 1];
        for (uint tt = 0; tt < 8; tt++) {
            thread auto &e = vt[tt].thread_elements();
            for (uint q = 0; q < 2; q++) {
                const uint t = tt * 8 + sgm_col(lane, q), vv = vr + er;
                const float x = float(ubuf[t * CH_BV + vv]) - e[q];
                ubuf[t * CH_BV + vv] = bfloat(x);
                e[q] = t < n ? float(bfloat(x * exp(gl - g_s[t]))) : 0.0f;
            }
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        for (uint e = tid; e < CH_BT * CH_BV / 4; e += CH_THREADS) {
            const uint row = e / (CH_BV / 4), c4 = e % (CH_BV / 4);
            if (row < n)
                *(device bfloat4 *)(a.v_new + ((tok0 + row) * H + a.hv) * V + a.v0 + c4 * 4) =
                    *(threadgroup bfloat4 *)(ubuf + row * CH_BV + c4 * 4);
        }

        // (4) S = exp(gl) S + v_dec^T k, k staged [t][kk] in 32-column slices.  The
        // update of each 8-column tile is summed over the chunk's tokens on its own and
        // then added, as the parity reference does.
        const float egl = exp(gl);
        for (uint sl = 0; sl < NSL; sl++) {
            for (uint e = tid; e < CH_BT * CH_KS / 4; e += CH_THREADS) {
                const uint row = e / (CH_KS / 4), c4 = e % (CH_KS / 4);
                float4 x = float4(0.0f);
                if (row < n) x = float4(*(device const bfloat4 *)(a.k + ((tok0 + row) * a.Hg + kh) * K + sl * CH_KS + c4 * 4));
                *(threadgroup float4 *)(stage + row * CH_KS + c4 * 4) = x;
            }
            threadgroup_barrier(mem_flags::mem_threadgroup);
            for (uint kk = 0; kk < CH_KS / 8; kk++) {
                sgmat upd = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);
                for (uint tt = 0; tt < 8; tt++) {
                    sgmat kt;
                    simdgroup_load(kt, stage + tt * 8 * CH_KS + kk * 8, CH_KS);
                    simdgroup_multiply_accumulate(upd, vt[tt], kt, upd);
                }
                thread auto &e = S[sl * (CH_KS / 8) + kk].thread_elements();
                thread const auto &u = upd.thread_elements();
                e[0] = e[0] * egl + u[0];
                e[1] = e[1] * egl + u[1];
            }
            threadgroup_barrier(mem_flags::mem_threadgroup);
        }
    }

    device float *dst = a.final_state + (((ulong)a.b * H + a.hv) * V + a.v0 + vr) * K;
    for (uint kt = 0; kt < KT; kt++) simdgroup_store(S[kt], dst + kt * 8, K);
}

kernel void gated_delta_net_chunk_inter_state_bf16(device const bfloat *k [[buffer(0)]],
                                                   device const bfloat *w [[buffer(1)]],
                                                   device const bfloat *u [[buffer(2)]],
                                                   device const float *g [[buffer(3)]],
                                                   device const float *h0 [[buffer(4)]],
                                                   device bfloat *h [[buffer(5)]],
                                                   device bfloat *v_new [[buffer(6)]],
                                                   device float *final_state [[buffer(7)]],
                                                   constant uint *params [[buffer(8)]],
                                                   threadgroup uchar *scratch [[threadgroup(0)]],
                                                   uint3 tgid [[threadgroup_position_in_grid]],
                                                   uint tid [[thread_index_in_threadgroup]],
                                                   uint sg [[simdgroup_index_in_threadgroup]],
                                                   uint lane [[thread_index_in_simdgroup]]) {
    // Carve the host's scratch: stage (a [32, 64] / [64, 32] f32 slice, or bf16(S)
    // [32, K]), then the u / v_new tile, then gc.
    const uint K = params[4];
    const uint stage_bytes = max(CH_BT * CH_KS * 4, CH_BV * K * 2);
    threadgroup float *stage = (threadgroup float *)scratch;
    threadgroup bfloat *ubuf = (threadgroup bfloat *)(scratch + stage_bytes);
    threadgroup float *g_s = (threadgroup float *)(scratch + stage_bytes + CH_BT * CH_BV * 2);

    const chunk_h_args a = {k, w, u, g, h0, h, v_new, final_state,
                            params[1], params[2], params[3], params[5], params[7],
                            tgid.z, tgid.y, tgid.x * CH_BV};
    switch (K) {
    case 64: chunk_h_run<64>(a, stage, ubuf, g_s, tid, sg, lane); break;
    case 128: chunk_h_run<128>(a, stage, ubuf, g_s, tid, sg, lane); break;
    case 256: chunk_h_run<256>(a, stage, ubuf, g_s, tid, sg, lane); break;
    default: break;  // refused by the op's validate
    }
}
