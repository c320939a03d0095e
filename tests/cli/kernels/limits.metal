// limits.metal — kernels that declare [[max_total_threads_per_threadgroup(N)]], for
// tests/cli/test_pipeline_limits.sh (issue 32): the attribute is the pipeline's
// maxTotalThreadsPerThreadgroup on the software device.
//
// ABI (op cumsum): buffer 0 g f32[B,T,H], buffer 1 g_cumsum f32[B,T,H],
// buffer 2 params u32[5] = {B, T, H, BT, NT}; grid (1, H, B*NT), 64 threads.
#include <metal_stdlib>
using namespace metal;

#define SCAN_BODY                                                                    \
    const uint T = p[1], H = p[2], BT = p[3], NT = p[4];                             \
    const uint h = tg.y, b = tg.z / NT, t0 = (tg.z % NT) * BT;                       \
    if (t0 >= T || tid != 0) return;                                                 \
    const uint n = min(BT, T - t0);                                                  \
    const ulong base = ((ulong)b * T + t0) * H + h;                                  \
    float acc = 0.0f;                                                                \
    for (uint t = 0; t < n; t++) {                                                   \
        acc += g[base + (ulong)t * H];                                               \
        gc[base + (ulong)t * H] = acc;                                               \
    }

constant constexpr uint WARPS = 1;

// Declares at most 32 threads per threadgroup (MLX's spelling, an expression): the
// op's 64 are too many.
[[kernel, max_total_threads_per_threadgroup(WARPS * 32)]] void scan_capped_32(
    device const float *g [[buffer(0)]], device float *gc [[buffer(1)]], constant uint *p [[buffer(2)]],
    uint3 tg [[threadgroup_position_in_grid]], uint tid [[thread_index_in_threadgroup]]) {
    SCAN_BODY
}

// The control: at most 64, what the op dispatches.
[[max_total_threads_per_threadgroup(64)]] kernel void scan_capped_64(
    device const float *g [[buffer(0)]], device float *gc [[buffer(1)]], constant uint *p [[buffer(2)]],
    uint3 tg [[threadgroup_position_in_grid]], uint tid [[thread_index_in_threadgroup]]) {
    SCAN_BODY
}
