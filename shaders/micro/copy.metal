// copy.metal — micro.copy: device-to-device copy, one element per thread.
//
// The simplest kernel that can reach the memory system's limit: every thread
// reads one element and writes it back at the same index, so reads and writes are
// fully coalesced.  float4 moves 16 bytes per thread, float 4 bytes.
// ABI: 0 src, 1 dst, 2 params uint[1] = {elements of the kernel's type}.
#include <metal_stdlib>
using namespace metal;

kernel void micro_copy_f32(device const float *src [[buffer(0)]],
                           device float *dst [[buffer(1)]],
                           constant uint *params [[buffer(2)]],
                           uint gid [[thread_position_in_grid]]) {
    if (gid < params[0]) dst[gid] = src[gid];
}

kernel void micro_copy_f32x4(device const float4 *src [[buffer(0)]],
                             device float4 *dst [[buffer(1)]],
                             constant uint *params [[buffer(2)]],
                             uint gid [[thread_position_in_grid]]) {
    if (gid < params[0]) dst[gid] = src[gid];
}
