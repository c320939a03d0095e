// barriers.metal — one kernel per barrier rule of the race checks and its fixed twin,
// for tests/cli/test_barriers.sh (issue 32 item 3): a barrier orders memory only in
// the address spaces its mem_flags name; simdgroup_barrier only its simdgroup.
//
// ABI (op cumsum): buffer 0 g f32[B,T,H], buffer 1 g_cumsum f32[B,T,H],
// buffer 2 params u32[5] = {B, T, H, BT, NT}; grid (1, H, B*NT), 64 threads.
// Each thread stages one element of its chunk; thread 0 then scans the chunk.
// The lines a test looks for end in a marker comment "// @name".
#include <metal_stdlib>
using namespace metal;

#define SCAN_HEAD                                                                    \
    const uint T = p[1], H = p[2], BT = p[3], NT = p[4];                             \
    const uint h = tg.y, b = tg.z / NT, t0 = (tg.z % NT) * BT;                       \
    if (t0 >= T) return;                                                             \
    const uint n = min(BT, T - t0);                                                  \
    const ulong base = ((ulong)b * T + t0) * H + h;
#define PARAMS                                                                       \
    device const float *g [[buffer(0)]], device float *gc [[buffer(1)]],             \
        constant uint *p [[buffer(2)]], uint3 tg [[threadgroup_position_in_grid]],   \
        uint tid [[thread_index_in_threadgroup]]

// mem_none orders execution only: thread 0's reads of the others' staged values race
// with their writes (the bug of ml-explore/mlx-lm#1714).
kernel void scan_mem_none(PARAMS) {
    SCAN_HEAD
    threadgroup float stage[64];
    stage[tid] = tid < n ? g[base + (ulong)tid * H] : 0.0f; // @none-store
    threadgroup_barrier(mem_flags::mem_none); // @bar-none
    if (tid != 0) return;
    float acc = 0.0f;
    for (uint t = 0; t < n; t++) {
        acc += stage[t]; // @none-load
        gc[base + (ulong)t * H] = acc;
    }
}

// mem_device does not order threadgroup memory.
kernel void scan_mem_device(PARAMS) {
    SCAN_HEAD
    threadgroup float stage[64];
    stage[tid] = tid < n ? g[base + (ulong)tid * H] : 0.0f;
    threadgroup_barrier(mem_flags::mem_device); // @bar-device
    if (tid != 0) return;
    float acc = 0.0f;
    for (uint t = 0; t < n; t++) {
        acc += stage[t];
        gc[base + (ulong)t * H] = acc;
    }
}

// simdgroup_barrier orders its own simdgroup only: thread 0 reads what simdgroup 1
// staged.
kernel void scan_simd_barrier(PARAMS) {
    SCAN_HEAD
    threadgroup float stage[64];
    stage[tid] = tid < n ? g[base + (ulong)tid * H] : 0.0f;
    simdgroup_barrier(mem_flags::mem_threadgroup); // @bar-simd
    if (tid != 0) return;
    float acc = 0.0f;
    for (uint t = 0; t < n; t++) {
        acc += stage[t];
        gc[base + (ulong)t * H] = acc;
    }
}

// The fix of all three: a threadgroup barrier that orders threadgroup memory.
kernel void scan_fixed(PARAMS) {
    SCAN_HEAD
    threadgroup float stage[64];
    stage[tid] = tid < n ? g[base + (ulong)tid * H] : 0.0f;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (tid != 0) return;
    float acc = 0.0f;
    for (uint t = 0; t < n; t++) {
        acc += stage[t];
        gc[base + (ulong)t * H] = acc;
    }
}

// mem_threadgroup does not order device memory: each thread stages its element in
// the output itself, and thread 0 overwrites those bytes with the running sum.
kernel void scan_device_tg_barrier(PARAMS) {
    SCAN_HEAD
    if (tid < n) gc[base + (ulong)tid * H] = g[base + (ulong)tid * H]; // @dev-stage
    threadgroup_barrier(mem_flags::mem_threadgroup); // @bar-tg
    if (tid != 0) return;
    float acc = 0.0f;
    for (uint t = 0; t < n; t++) {
        acc += gc[base + (ulong)t * H];
        gc[base + (ulong)t * H] = acc; // @dev-sum
    }
}

// Its fix: the barrier orders device memory.
kernel void scan_device_fixed(PARAMS) {
    SCAN_HEAD
    if (tid < n) gc[base + (ulong)tid * H] = g[base + (ulong)tid * H];
    threadgroup_barrier(mem_flags::mem_device);
    if (tid != 0) return;
    float acc = 0.0f;
    for (uint t = 0; t < n; t++) {
        acc += gc[base + (ulong)t * H];
        gc[base + (ulong)t * H] = acc;
    }
}
