// counters_patterns.metal — access and control-flow patterns whose exact counters
// (--counters) test_counters.sh knows in advance.
//   strided_copy: dst[i] = src[32 i]: each lane of a simdgroup reads a 128-byte
//                 line of its own (32 lines where 1 would do: coalescing 1/32); the
//                 store is contiguous (1 line for 32 lanes x 4 bytes: coalescing 1);
//   half_busy:    only the odd lanes run a long loop: lane utilisation just above 1/2;
//   uniform_work: every lane runs the same work: lane utilisation 1;
//   fma_chain:    fma() counts 2 flops.
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
