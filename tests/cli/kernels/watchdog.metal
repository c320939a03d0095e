// watchdog.metal — a kernel that never terminates and its fixed twin, for
// tests/cli/test_watchdog.sh (the software device's --sw-timeout, issue 32).
//
// ABI (op cumsum): buffer 0 g f32[B,T,H], buffer 1 g_cumsum f32[B,T,H],
// buffer 2 params u32[5] = {B, T, H, BT, NT}; grid (1, H, B*NT), 64 threads.
// The lines a test looks for end in a marker comment "// @name".
#include <metal_stdlib>
using namespace metal;

// Each thread copies the elements t = tid, tid + stride, ... of its chunk, with the
// thread's index where the threadgroup's size belongs as the stride: thread 0's
// stride is 0, so its loop's exit condition is never met and it runs forever.
kernel void loop_forever(device const float *g [[buffer(0)]], device float *gc [[buffer(1)]],
                         constant uint *p [[buffer(2)]], uint3 tg [[threadgroup_position_in_grid]],
                         uint tid [[thread_index_in_threadgroup]]) {
    const uint T = p[1], H = p[2], BT = p[3], NT = p[4];
    const uint h = tg.y, b = tg.z / NT, t0 = (tg.z % NT) * BT;
    if (t0 >= T) return;
    const uint n = min(BT, T - t0);
    const ulong base = ((ulong)b * T + t0) * H + h;
    for (uint t = tid; t < n; t += tid) { // @loop
        gc[base + (ulong)t * H] = g[base + (ulong)t * H]; // @loop-body
    }
}

// A scan that ends: every element once, in order.
kernel void loop_fixed(device const float *g [[buffer(0)]], device float *gc [[buffer(1)]],
                       constant uint *p [[buffer(2)]], uint3 tg [[threadgroup_position_in_grid]],
                       uint tid [[thread_index_in_threadgroup]]) {
    const uint T = p[1], H = p[2], BT = p[3], NT = p[4];
    const uint h = tg.y, b = tg.z / NT, t0 = (tg.z % NT) * BT;
    if (t0 >= T || tid != 0) return;
    const uint n = min(BT, T - t0);
    const ulong base = ((ulong)b * T + t0) * H + h;
    float acc = 0.0f;
    for (uint t = 0; t != n; t += 1) {
        acc += g[base + (ulong)t * H];
        gc[base + (ulong)t * H] = acc;
    }
}
