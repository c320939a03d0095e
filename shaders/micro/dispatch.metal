// dispatch.metal — micro.dispatch: a kernel that does almost nothing.
//
// Each dispatch is one simdgroup adding 1 to its own 32 words (the runner moves
// the buffer offsets by 128 bytes per repeated dispatch), so after N dispatches
// every word of out is in + 1 — which proves all N ran — while the time is the
// cost of launching, not of the work.
// ABI: 0 in uint[N*32], 1 out uint[N*32] (offset per dispatch).
#include <metal_stdlib>
using namespace metal;

kernel void micro_tick(device const uint *in [[buffer(0)]],
                       device uint *out [[buffer(1)]],
                       uint tid [[thread_position_in_grid]]) {
    out[tid] = in[tid] + 1u;
}
