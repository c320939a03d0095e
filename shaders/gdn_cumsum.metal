// gdn_cumsum.metal — gdnbench's chunk-local cumulative sum of the log decay g
// (GDN pipeline step 1, kernels.md).
//
// ABI (mlx-native's chunk_local_cumsum_g_f32):
//   buffer 0  g_in      f32 [B, T, H]   per-token natural-log decay
//   buffer 1  g_cumsum  f32 [B, T, H]   gc_t = sum of g_s over s <= t in t's chunk
//   buffer 2  params    u32[5] = {B, T, H, BT, NT}
//   grid (1, H, B*NT); any threadgroup size >= 1 (gdnbench launches 64).
//
// Shapes: every T >= 1 (the partial last chunk is masked), any BT, any H.
//
// Design: one threadgroup per (b, h, chunk).  Simdgroup 0 scans the chunk in
// windows of its width (32 lanes, fewer when the threadgroup is smaller) with a
// simd prefix sum, carrying the running total from the window's last lane; the
// other simdgroups have nothing to do.  Tokens of one head are H floats apart,
// so each load/store is one 4-byte access per lane — inherent to the [B,T,H]
// layout; the whole op is tiny.
//
// Bytes at the default shape (B=1, T=4096, H=32): read g 0.52 MB + write gc
// 0.52 MB = 1.05 MB -> roofline 1.9 us on M4 Max (546 GB/s).  In practice the
// launch of 2048 small threadgroups dominates.
//
// Parity: the sum is f32 like mlx-native's serial scan, but in prefix-tree order,
// so results can differ from the serial sum in the last bit or two of an f32.
#include <metal_stdlib>
using namespace metal;

kernel void chunk_local_cumsum_g_f32(device const float *g_in [[buffer(0)]],
                                     device float *g_cumsum [[buffer(1)]],
                                     constant uint *params [[buffer(2)]],
                                     uint3 tgid [[threadgroup_position_in_grid]],
                                     uint3 tg_size [[threads_per_threadgroup]],
                                     uint sg [[simdgroup_index_in_threadgroup]],
                                     uint lane [[thread_index_in_simdgroup]]) {
    const uint T = params[1], H = params[2], BT = params[3], NT = params[4];
    if (sg != 0) return;
    const uint h = tgid.y, b = tgid.z / NT, chunk = tgid.z % NT;
    const uint t0 = chunk * BT;
    if (t0 >= T) return;
    const uint n = min(BT, T - t0);
    // Lanes in simdgroup 0: the threadgroup size, capped at the SIMD width.
    const uint threads = tg_size.x * tg_size.y * tg_size.z;
    const uint width = min(threads, 32u);
    const ulong base = ((ulong)b * T + t0) * H + h;

    float carry = 0.0f;
    for (uint s = 0; s < n; s += width) {
        const uint t = s + lane;
        const float x = t < n ? g_in[base + (ulong)t * H] : 0.0f;
        const float incl = simd_prefix_inclusive_sum(x) + carry;
        if (t < n) g_cumsum[base + (ulong)t * H] = incl;
        carry = simd_broadcast(incl, (ushort)(width - 1));
    }
}
