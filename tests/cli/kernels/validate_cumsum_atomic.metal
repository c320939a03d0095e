// validate_cumsum_atomic.metal — a cumsum-ABI kernel for tests/cli/test_validate.sh that
// uses float atomics (its own file: validate treats every kernel of a source that uses
// atomics as allowed to differ between schedules within tolerance).
#include <metal_stdlib>
using namespace metal;

// Correct but order-dependent: every thread adds its token's g into the sums of the
// later tokens with float atomics, so the f32 rounding order — and the last bits —
// follow the fiber schedule.  Within tolerance: a note, not a failure.
kernel void cumsum_atomic(device const float *g [[buffer(0)]], device atomic_float *gc [[buffer(1)]],
                          constant uint *p [[buffer(2)]], uint3 tg [[threadgroup_position_in_grid]],
                          uint tid [[thread_index_in_threadgroup]]) {
    const uint T = p[1], H = p[2], BT = p[3], NT = p[4];
    const uint h = tg.y, b = tg.z / NT, t0 = (tg.z % NT) * BT;
    if (t0 >= T) return;
    const uint n = min(BT, T - t0);
    const ulong base = ((ulong)b * T + t0) * H + h;
    if (tid < n) atomic_store_explicit(&gc[base + (ulong)tid * H], 0.0f, memory_order_relaxed);
    threadgroup_barrier(mem_flags::mem_device);
    if (tid >= n) return;
    const float x = g[base + (ulong)tid * H];
    for (uint s = tid; s < n; s++) atomic_fetch_add_explicit(&gc[base + (ulong)s * H], x, memory_order_relaxed);
}

// Bug that the device-memory conflict check cannot see (atomics are exempt): each
// chunk also stores its running total into the first token of the next chunk, which
// that chunk's own store overwrites only if it runs later.  The output depends on the
// threadgroup order far beyond tolerance: the runs under other orders catch it.
kernel void cumsum_atomic_race(device const float *g [[buffer(0)]], device atomic_float *gc [[buffer(1)]],
                               constant uint *p [[buffer(2)]], uint3 tg [[threadgroup_position_in_grid]],
                               uint tid [[thread_index_in_threadgroup]]) {
    const uint T = p[1], H = p[2], BT = p[3], NT = p[4];
    const uint h = tg.y, b = tg.z / NT, t0 = (tg.z % NT) * BT;
    if (tid != 0 || t0 >= T) return;
    const uint n = min(BT, T - t0);
    float acc = 0.0f;
    for (uint t = 0; t < n; t++) {
        const ulong i = ((ulong)b * T + t0 + t) * H + h;
        acc += g[i];
        atomic_store_explicit(&gc[i], acc, memory_order_relaxed);
    }
    if (t0 + BT < T) atomic_store_explicit(&gc[((ulong)b * T + t0 + BT) * H + h], acc, memory_order_relaxed);
}
