// counters_patterns.metal — access and control-flow patterns whose exact counters
// (--counters) test_counters.sh knows in advance.
//   strided_copy: dst[i] = src[32 i]: each lane of a simdgroup reads a 128-byte
//                 line of its own (32 lines where 1 would do: coalescing 1/32); the
//                 store is contiguous (1 line for 32 lanes x 4 bytes: coalescing 1);
//   half_busy:    only the odd lanes run a long loop: lane utilisation just above 1/2;
//   uniform_work: every lane runs the same work: lane utilisation 1;
//   fma_chain:    fma() counts 2 flops;
//   odd_more:     the odd lanes run the loop's load 3 times, the even ones once: the
//                 k-th execution of the load by the lanes that reach it is one access
//                 (k = 0: 32 lanes, line 0; k = 1 and 2: 16 lanes, lines 1 and 2),
//                 and every lane's load of x[0] one more: x: 4 accesses of 4 lines, 4
//                 at least (divergent lanes' grouping);
//   tg_both:      threadgroup memory both ways a kernel gets it, a declared array (the
//                 front end's allocation: counted by block) and a [[threadgroup(0)]]
//                 argument (counted by address): each thread stores a float into
//                 each and loads one back from each: 8 bytes stored, 8 loaded;
//   rev_strided:  strided_copy backwards, two loads 80 bytes apart in each lane's line:
//                 lanes in descending order (the unsorted path of the reduction): 2048
//                 distinct bytes read, 1024 written, 256 + 8 lines;
//   tile_copy:    one simdgroup copies an 8x8 float matrix through simdgroup_load and
//                 simdgroup_store: each lane loads and stores its 2 elements and
//                 counts those accesses and their addresses, not the emulation's
//                 look-up of where a lane's elements sit (a GPU executes none).
#include <metal_stdlib>
using namespace metal;

kernel void strided_copy(device const float *src [[buffer(0)]], device float *dst [[buffer(1)]],
                         uint i [[thread_position_in_grid]]) {
    dst[i] = src[32 * i];
}

kernel void half_busy(device const float *x [[buffer(0)]], device float *y [[buffer(1)]],
                      uint i [[thread_position_in_grid]]) {
    float v = x[i];
    if (i % 2 == 1)
        for (int k = 0; k < 1000; k++) v = v * 0.5f + 1.0f;
    y[i] = v;
}

kernel void uniform_work(device const float *x [[buffer(0)]], device float *y [[buffer(1)]],
                         uint i [[thread_position_in_grid]]) {
    float v = x[i];
    for (int k = 0; k < 1000; k++) v = v * 0.5f + 1.0f;
    y[i] = v;
}

// fma_chain: 100 explicit fma() a thread, 2 flops each (the only float arithmetic).
kernel void fma_chain(device const float *x [[buffer(0)]], device float *y [[buffer(1)]],
                      uint i [[thread_position_in_grid]]) {
    float v = x[i];
    for (int k = 0; k < 100; k++) v = fma(v, 0.5f, 1.0f);
    y[i] = v;
}

kernel void odd_more(device const float *x [[buffer(0)]], device float *y [[buffer(1)]],
                     uint i [[thread_position_in_grid]]) {
    uint extra = uint(x[0]) + 2; // 2, unknown to the compiler: the loop stays one load
    float s = 0;
    for (uint k = 0; k < 1 + extra * (i & 1); k++) s += x[k * 32 + i];
    y[i] = s;
}

kernel void tg_both(device const float *x [[buffer(0)]], device float *y [[buffer(1)]],
                    threadgroup float *arg [[threadgroup(0)]], uint gid [[thread_position_in_grid]],
                    uint tid [[thread_index_in_threadgroup]]) {
    threadgroup float local[32];
    local[tid] = x[gid];
    arg[tid] = x[gid] * 2.0f;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    y[gid] = local[tid ^ 1] + arg[31 - tid];
}

kernel void tile_copy(device const float *src [[buffer(0)]], device float *dst [[buffer(1)]]) {
    simdgroup_float8x8 m;
    simdgroup_load(m, src, 8);
    simdgroup_store(m, dst, 8);
}

kernel void rev_strided(device const float *src [[buffer(0)]], device float *dst [[buffer(1)]],
                        uint i [[thread_position_in_grid]]) {
    dst[255 - i] = src[32 * (255 - i)] + src[32 * (255 - i) + 20];
}
