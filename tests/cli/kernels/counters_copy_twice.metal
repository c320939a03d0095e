// counters_copy_twice.metal — micro.copy's kernels changed to read their input twice
// (test_counters.sh): each thread also reads the element mirrored from the end, so
// every element of src is read by two threads.  The output is unchanged (x + (y - y)
// is x for finite y, and the inputs are finite): requested load bytes grow by exactly
// src's size, distinct bytes stay those of the copy.
// ABI: as shaders/micro/copy.metal.
#include <metal_stdlib>
using namespace metal;

kernel void micro_copy_f32(device const float *src [[buffer(0)]],
                           device float *dst [[buffer(1)]],
                           constant uint *params [[buffer(2)]],
                           uint gid [[thread_position_in_grid]]) {
    uint n = params[0];
    if (gid < n) {
        float y = src[n - 1 - gid];
        dst[gid] = src[gid] + (y - y);
    }
}

kernel void micro_copy_f32x4(device const float4 *src [[buffer(0)]],
                             device float4 *dst [[buffer(1)]],
                             constant uint *params [[buffer(2)]],
                             uint gid [[thread_position_in_grid]]) {
    uint n = params[0];
    if (gid < n) {
        float4 y = src[n - 1 - gid];
        dst[gid] = src[gid] + (y - y);
    }
}
