// reduce.metal — micro.reduce: three ways to sum a threadgroup's floats.
//
// Every threadgroup (256 threads) sums its block of 256*items floats into
// partial[g].  Each thread first adds its `items` elements serially (coalesced:
// element i of thread t is at block + i*256 + t); the kernels differ only in how
// the 256 per-thread sums are combined:
//   micro_reduce_simd   simd_sum per simdgroup, then one simdgroup over the 8 sums
//   micro_reduce_tree   classic scalar tree in threadgroup memory, 8 barriers
//   micro_reduce_atomic every thread atomic_fetch_add's into partial[g]
// ABI: 0 x f32[n], 1 partial f32[groups], 2 params uint[2] = {n, items}.
#include <metal_stdlib>
using namespace metal;

constant constexpr uint TG = 256;

static float thread_sum(device const float *x, uint n, uint items, uint tid, uint g) {
    uint base = g * TG * items + tid;
    float acc = 0.0f;
    for (uint i = 0; i < items; i++) {
        uint idx = base + i * TG;
        if (idx < n) acc += x[idx];
    }
    return acc;
}

kernel void micro_reduce_simd(device const float *x [[buffer(0)]],
                              device float *partial [[buffer(1)]],
                              constant uint *params [[buffer(2)]],
                              uint tid [[thread_index_in_threadgroup]],
                              uint g [[threadgroup_position_in_grid]],
                              uint lane [[thread_index_in_simdgroup]],
                              uint sg [[simdgroup_index_in_threadgroup]]) {
    threadgroup float sg_sums[TG / 32];
    float v = simd_sum(thread_sum(x, params[0], params[1], tid, g));
    if (lane == 0) sg_sums[sg] = v;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (sg == 0) {
        float s = simd_sum(lane < TG / 32 ? sg_sums[lane] : 0.0f);
        if (lane == 0) partial[g] = s;
    }
}

kernel void micro_reduce_tree(device const float *x [[buffer(0)]],
                              device float *partial [[buffer(1)]],
                              constant uint *params [[buffer(2)]],
                              uint tid [[thread_index_in_threadgroup]],
                              uint g [[threadgroup_position_in_grid]]) {
    threadgroup float sums[TG];
    sums[tid] = thread_sum(x, params[0], params[1], tid, g);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint s = TG / 2; s > 0; s >>= 1) {
        if (tid < s) sums[tid] += sums[tid + s];
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    if (tid == 0) partial[g] = sums[0];
}

kernel void micro_reduce_atomic(device const float *x [[buffer(0)]],
                                device atomic_float *partial [[buffer(1)]],
                                constant uint *params [[buffer(2)]],
                                uint tid [[thread_index_in_threadgroup]],
                                uint g [[threadgroup_position_in_grid]]) {
    float v = thread_sum(x, params[0], params[1], tid, g);
    if (tid == 0) atomic_store_explicit(&partial[g], 0.0f, memory_order_relaxed);
    threadgroup_barrier(mem_flags::mem_device);
    atomic_fetch_add_explicit(&partial[g], v, memory_order_relaxed);
}
