// add_one.metal — the kernel-case tests' simplest kernel: out[i] = x[i] + 1 for i < n
// (tests/cli/test_kernel_case.sh).
#include <metal_stdlib>
using namespace metal;

kernel void add_one(device const float *x [[buffer(0)]],
                    device float *out [[buffer(1)]],
                    constant uint &n [[buffer(2)]],
                    uint i [[thread_position_in_grid]]) {
    if (i < n) out[i] = x[i] + 1.0f;
}
