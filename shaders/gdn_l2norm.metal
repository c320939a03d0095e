// gdn_l2norm.metal — gdnbench's L2 normalisation of q and k rows (the optional first
// stage of chunk_fwd; FLA runs l2norm_fwd on q and k before the chunked pipeline).
//
//   y = bf16(x / sqrt(sum x^2 + eps))     per row of K elements, f32 math
//
// ABI (gdnbench's, see src/ops/gdn_stages.c):
//   buffer 0  q      bf16 [rows, K]     rows = B*T*Hg
//   buffer 1  k      bf16 [rows, K]
//   buffer 2  q_out  bf16 [rows, K]
//   buffer 3  k_out  bf16 [rows, K]
//   buffer 4  params u32[3] = {rows, K, bits of f32 eps}
//   grid (rows, 1, 1), threadgroup (32, 1, 1): one simdgroup per row of q and of k.
//
// Shapes: K up to 256 (8 elements per lane), any number of rows.
//
// Parity (FLA l2norm_fwd, the parity reference): the sum of squares in f32, then
// x * (1 / sqrt(ss + eps)), rounded to bf16.  The sum's order is lanes-then-tree.
//
// Bytes at the default shape (B=1, T=4096, Hg=16, K=128): read q, k 33.6 MB + write
// 33.6 MB = 67.1 MB -> roofline 123 us on M4 Max (546 GB/s).  Lane l touches elements
// l, l+32, ...: every access of the simdgroup is 64 contiguous bytes.
#include <metal_stdlib>
using namespace metal;

constant constexpr uint L2_MAX_PER_LANE = 8;

static void l2norm_row(device const bfloat *x, device bfloat *y, uint K, float eps, uint lane) {
    float e[L2_MAX_PER_LANE];
    float ss = 0.0f;
    for (uint i = 0; i < L2_MAX_PER_LANE; i++) {
        const uint c = lane + 32 * i;
        e[i] = c < K ? float(x[c]) : 0.0f;
        ss += e[i] * e[i];
    }
    ss = simd_sum(ss);
    const float inv = 1.0f / sqrt(ss + eps);
    for (uint i = 0; i < L2_MAX_PER_LANE; i++) {
        const uint c = lane + 32 * i;
        if (c < K) y[c] = bfloat(e[i] * inv);
    }
}

kernel void gdn_l2norm_qk_bf16(device const bfloat *q [[buffer(0)]],
                               device const bfloat *k [[buffer(1)]],
                               device bfloat *q_out [[buffer(2)]],
                               device bfloat *k_out [[buffer(3)]],
                               constant uint *params [[buffer(4)]],
                               uint3 tgid [[threadgroup_position_in_grid]],
                               uint lane [[thread_index_in_simdgroup]]) {
    const uint rows = params[0], K = params[1];
    const float eps = as_type<float>(params[2]);
    const uint row = tgid.x;
    if (row >= rows) return;
    const ulong off = (ulong)row * K;
    l2norm_row(q + off, q_out + off, K, eps, lane);
    l2norm_row(k + off, k_out + off, K, eps, lane);
}
