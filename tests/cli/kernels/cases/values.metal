// values.metal — kernels for "value" buffers (tests/cli/test_kernel_values.sh): a
// table read through a constant pointer (bound with setBytes up to Metal's 4 KiB, as
// a buffer above it) and a kernel that reads one element past a one-element value.
#include <metal_stdlib>
using namespace metal;

// out[i] = table[i] + table[i + half_n]
kernel void table_sum(constant float *table [[buffer(0)]], device float *out [[buffer(1)]],
                      constant uint &half_n [[buffer(2)]], uint i [[thread_position_in_grid]]) {
    out[i] = table[i] + table[i + half_n];
}

// Thread 1 reads n[1]: past the end of a one-element value.
kernel void past_value(constant uint *n [[buffer(0)]], device uint *out [[buffer(1)]],
                       uint i [[thread_position_in_grid]]) {
    out[i] = n[i];
}
