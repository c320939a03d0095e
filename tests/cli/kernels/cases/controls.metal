// controls.metal — kernels with planted bugs, the negative controls of the kernel-case
// checks (tests/cli/test_kernel_case.sh), and two passes for a "dispatches" sequence.
#include <metal_stdlib>
using namespace metal;

// Leaves out[n-1] unwritten: the poison check must count it.
kernel void skip_last(device const float *x [[buffer(0)]], device float *out [[buffer(1)]],
                      constant uint &n [[buffer(2)]], uint i [[thread_position_in_grid]]) {
    if (i + 1 < n) out[i] = x[i] + 1.0f;
}

// Writes its input (declared writable, marked readonly by the case).
kernel void clobber(device float *x [[buffer(0)]], device float *out [[buffer(1)]],
                    constant uint &n [[buffer(2)]], uint i [[thread_position_in_grid]]) {
    if (i < n) {
        out[i] = x[i] + 1.0f;
        x[i] = 0.0f;
    }
}

// Divides by zero at one element: NaN in an output without an expectation.
kernel void nan_at_zero(device const float *x [[buffer(0)]], device float *out [[buffer(1)]],
                        constant uint &n [[buffer(2)]], uint i [[thread_position_in_grid]]) {
    if (i < n) out[i] = x[i] / x[i];
}

constant bool add_two [[function_constant(0)]];

// Two passes: tmp = 2x, then out = tmp + (add_two ? 2 : 1).
kernel void twice(device const float *x [[buffer(0)]], device float *y [[buffer(1)]],
                  uint i [[thread_position_in_grid]]) {
    y[i] = 2.0f * x[i];
}
kernel void plus(device const float *x [[buffer(0)]], device float *y [[buffer(1)]],
                 uint i [[thread_position_in_grid]]) {
    y[i] = x[i] + (add_two ? 2.0f : 1.0f);
}

// Reads a neighbour's threadgroup slot with no barrier between the write and the read:
// in order the neighbour has not written yet (0), in reverse it has.  One schedule
// gives the same bytes run after run, so only validate's schedules expose it.
kernel void neighbour_race(device float *out [[buffer(0)]], threadgroup float *slot [[threadgroup(0)]],
                           uint t [[thread_index_in_threadgroup]], uint n [[threads_per_threadgroup]]) {
    slot[t] = 0.0f;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    slot[t] = float(t + 1);
    out[t] = slot[(t + 1) % n];
}

// The same with the barrier in place: every schedule agrees.
kernel void neighbour_fixed(device float *out [[buffer(0)]], threadgroup float *slot [[threadgroup(0)]],
                            uint t [[thread_index_in_threadgroup]], uint n [[threads_per_threadgroup]]) {
    slot[t] = float(t + 1);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[t] = slot[(t + 1) % n];
}

// Reads its output before writing it: fmax ignores the NaN poison, so a plain run
// passes; validate's finite poison (0x5a bytes) wins the max and changes the bytes.
kernel void max_into(device const float *x [[buffer(0)]], device float *out [[buffer(1)]],
                     uint i [[thread_position_in_grid]]) {
    out[i] = fmax(out[i], x[i]);
}
