// validate_cumsum.metal — small kernels with the cumsum ABI for tests/cli/test_validate.sh:
// one correct, and one per kind of bug `gdnbench validate` must report.
//
// ABI (op cumsum): buffer 0 g f32[B,T,H], buffer 1 g_cumsum f32[B,T,H],
// buffer 2 params u32[5] = {B, T, H, BT, NT}; grid (1, H, B*NT), 64 threads.
#include <metal_stdlib>
using namespace metal;

// Correct: thread 0 scans its chunk serially in f32 (the parity order).
kernel void cumsum_serial(device const float *g [[buffer(0)]], device float *gc [[buffer(1)]],
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
        gc[i] = acc;
    }
}

// Bug: the last, partial chunk is skipped (its outputs stay unwritten).
kernel void cumsum_drop_tail(device const float *g [[buffer(0)]], device float *gc [[buffer(1)]],
                             constant uint *p [[buffer(2)]], uint3 tg [[threadgroup_position_in_grid]],
                             uint tid [[thread_index_in_threadgroup]]) {
    const uint T = p[1], H = p[2], BT = p[3], NT = p[4];
    const uint h = tg.y, b = tg.z / NT, t0 = (tg.z % NT) * BT;
    if (tid != 0 || t0 + BT > T) return;
    float acc = 0.0f;
    for (uint t = 0; t < BT; t++) {
        const ulong i = ((ulong)b * T + t0 + t) * H + h;
        acc += g[i];
        gc[i] = acc;
    }
}

// Bug: a race between threadgroups — each chunk also writes its running total into
// the first token of the next chunk, which that chunk's threadgroup overwrites only
// if it runs later.  The output depends on the threadgroup order.
kernel void cumsum_tg_race(device const float *g [[buffer(0)]], device float *gc [[buffer(1)]],
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
        gc[i] = acc;
    }
    if (t0 + BT < T) gc[((ulong)b * T + t0 + BT) * H + h] = acc;
}

// Bug: the chunk is staged in threadgroup memory with no barrier before thread 0
// reads it (the software device's full checks report the race).
kernel void cumsum_no_barrier(device const float *g [[buffer(0)]], device float *gc [[buffer(1)]],
                              constant uint *p [[buffer(2)]], uint3 tg [[threadgroup_position_in_grid]],
                              uint tid [[thread_index_in_threadgroup]]) {
    const uint T = p[1], H = p[2], BT = p[3], NT = p[4];
    const uint h = tg.y, b = tg.z / NT, t0 = (tg.z % NT) * BT;
    threadgroup float stage[64];
    if (t0 >= T) return;
    const uint n = min(BT, T - t0);
    if (tid < n) stage[tid] = g[((ulong)b * T + t0 + tid) * H + h];
    if (tid != 0) return;
    float acc = 0.0f;
    for (uint t = 0; t < n; t++) {
        acc += stage[t];
        gc[((ulong)b * T + t0 + t) * H + h] = acc;
    }
}

// Bug: the running sum is kept in bfloat (precision lost long before the output).
kernel void cumsum_bf16_acc(device const float *g [[buffer(0)]], device float *gc [[buffer(1)]],
                            constant uint *p [[buffer(2)]], uint3 tg [[threadgroup_position_in_grid]],
                            uint tid [[thread_index_in_threadgroup]]) {
    const uint T = p[1], H = p[2], BT = p[3], NT = p[4];
    const uint h = tg.y, b = tg.z / NT, t0 = (tg.z % NT) * BT;
    if (tid != 0 || t0 >= T) return;
    const uint n = min(BT, T - t0);
    bfloat acc = 0.0f;
    for (uint t = 0; t < n; t++) {
        const ulong i = ((ulong)b * T + t0 + t) * H + h;
        acc = bfloat(float(acc) + g[i]);
        gc[i] = float(acc);
    }
}

// Bug: head 1 is read with the wrong stride (as if heads were T apart).
kernel void cumsum_head_stride(device const float *g [[buffer(0)]], device float *gc [[buffer(1)]],
                               constant uint *p [[buffer(2)]], uint3 tg [[threadgroup_position_in_grid]],
                               uint tid [[thread_index_in_threadgroup]]) {
    const uint T = p[1], H = p[2], BT = p[3], NT = p[4];
    const uint h = tg.y, b = tg.z / NT, t0 = (tg.z % NT) * BT;
    if (tid != 0 || t0 >= T) return;
    const uint n = min(BT, T - t0);
    float acc = 0.0f;
    for (uint t = 0; t < n; t++) {
        const ulong i = ((ulong)b * T + t0 + t) * H + h;
        const ulong src = h == 1 ? ((ulong)b * T + t0 + t) * H : i;
        acc += g[src];
        gc[i] = acc;
    }
}

// Bug: every output scaled by (1 + 6e-7), a systematic bias.  Each element stays
// within cumsum's parity bound (atol 1e-6 + rtol 1e-6*|ref|) and the f64 one, but all
// move the same way: rel_l2 against parity is 6e-7, above its bound of 4e-7, so only
// the rel_l2 check can catch it (the negative control of that check).
kernel void cumsum_biased(device const float *g [[buffer(0)]], device float *gc [[buffer(1)]],
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
        gc[i] = acc * 1.0000006f;
    }
}
