// findings.metal — one kernel per kind of finding the software device's checks
// report, each with one planted bug, for tests/unit/test_sw_findings.c (which asserts
// each finding's kind, source lines and count of distinct findings) and
// tests/cli/test_findings.sh (the same through `gdnbench validate` and its JSON).
//
// ABI (op cumsum): buffer 0 g f32[B,T,H], buffer 1 g_cumsum f32[B,T,H],
// buffer 2 params u32[5] = {B, T, H, BT, NT}; grid (1, H, B*NT), 64 threads.
// The lines a test looks for end in a marker comment "// @name".
#include <metal_stdlib>
using namespace metal;

// threadgroup_race (and uninitialized_read): the chunk_h "2d" pattern.  Simdgroup 0
// scales the whole state in place while simdgroup 1 may still be loading its half:
// no barrier between the load and the scale.
kernel void inplace_scale_no_barrier(device const float *g [[buffer(0)]], device float *gc [[buffer(1)]],
                                     constant uint *p [[buffer(2)]], uint3 tg [[threadgroup_position_in_grid]],
                                     uint tid [[thread_index_in_threadgroup]]) {
    const uint T = p[1], H = p[2], BT = p[3], NT = p[4];
    const uint h = tg.y, b = tg.z / NT, t0 = (tg.z % NT) * BT;
    const float scale = float(p[0]);
    threadgroup float st[64]; // @st-array
    if (t0 >= T) return;
    const uint n = min(BT, T - t0);
    const ulong base = ((ulong)b * T + t0) * H + h;
    st[tid] = tid < n ? g[base + (ulong)tid * H] : 0.0f; // @load
    if (tid < 32) {
        st[tid] *= scale;
        st[tid + 32] *= scale; // @scale
    }
    threadgroup_barrier(mem_flags::mem_threadgroup); // @scale-barrier
    if (tid != 0) return;
    float acc = 0.0f;
    for (uint t = 0; t < n; t++) {
        acc += st[t];
        gc[base + (ulong)t * H] = acc;
    }
}

// threadgroup_race between two barriers: the chunk is staged after a barrier, and
// thread 0 reads it before the next one.
kernel void read_before_barrier(device const float *g [[buffer(0)]], device float *gc [[buffer(1)]],
                                constant uint *p [[buffer(2)]], uint3 tg [[threadgroup_position_in_grid]],
                                uint tid [[thread_index_in_threadgroup]]) {
    const uint T = p[1], H = p[2], BT = p[3], NT = p[4];
    const uint h = tg.y, b = tg.z / NT, t0 = (tg.z % NT) * BT;
    threadgroup float st[64];
    if (t0 >= T) return;
    const uint n = min(BT, T - t0);
    const ulong base = ((ulong)b * T + t0) * H + h;
    st[tid] = 0.0f;
    threadgroup_barrier(mem_flags::mem_threadgroup); // @open
    if (tid < n) st[tid] = g[base + (ulong)tid * H]; // @stage
    if (tid == 0) {
        float acc = 0.0f;
        for (uint t = 0; t < n; t++) {
            acc += st[t]; // @early-read
            gc[base + (ulong)t * H] = acc;
        }
    }
    threadgroup_barrier(mem_flags::mem_threadgroup); // @close
}

// device_write_conflict: a wrong grid-to-head map — two threadgroups take head 0 and
// write the same outputs (the values even agree).
kernel void head_collapse(device const float *g [[buffer(0)]], device float *gc [[buffer(1)]],
                          constant uint *p [[buffer(2)]], uint3 tg [[threadgroup_position_in_grid]],
                          uint tid [[thread_index_in_threadgroup]]) {
    const uint T = p[1], H = p[2], BT = p[3], NT = p[4];
    const uint h = tg.y / 2, b = tg.z / NT, t0 = (tg.z % NT) * BT; // @head
    if (tid != 0 || t0 >= T) return;
    const uint n = min(BT, T - t0);
    float acc = 0.0f;
    for (uint t = 0; t < n; t++) {
        const ulong i = ((ulong)b * T + t0 + t) * H + h;
        acc += g[i];
        gc[i] = acc; // @collapse-store
    }
}

// device_read_write_conflict: each chunk carries on from the previous chunk's last
// output, which another threadgroup writes; Metal does not order threadgroups.
kernel void carry_from_previous_chunk(device const float *g [[buffer(0)]], device float *gc [[buffer(1)]],
                                      constant uint *p [[buffer(2)]], uint3 tg [[threadgroup_position_in_grid]],
                                      uint tid [[thread_index_in_threadgroup]]) {
    const uint T = p[1], H = p[2], BT = p[3], NT = p[4];
    const uint h = tg.y, b = tg.z / NT, t0 = (tg.z % NT) * BT;
    if (tid != 0 || t0 >= T) return;
    const uint n = min(BT, T - t0);
    float acc = t0 > 0 ? gc[((ulong)b * T + t0 - 1) * H + h] : 0.0f; // @carry
    for (uint t = 0; t < n; t++) {
        const ulong i = ((ulong)b * T + t0 + t) * H + h;
        acc += g[i];
        gc[i] = acc; // @carry-store
    }
}

// out_of_bounds (device memory): the last, partial chunk runs a whole chunk's loop
// and reads past the end of g.
kernel void tail_overrun(device const float *g [[buffer(0)]], device float *gc [[buffer(1)]],
                         constant uint *p [[buffer(2)]], uint3 tg [[threadgroup_position_in_grid]],
                         uint tid [[thread_index_in_threadgroup]]) {
    const uint T = p[1], H = p[2], BT = p[3], NT = p[4];
    const uint h = tg.y, b = tg.z / NT, t0 = (tg.z % NT) * BT;
    if (tid != 0 || t0 >= T) return;
    float acc = 0.0f;
    for (uint t = 0; t < BT; t++) {
        const ulong i = ((ulong)b * T + t0 + t) * H + h;
        acc += g[i]; // @tail-read
        if (t0 + t < T) gc[i] = acc;
    }
}

// out_of_bounds (threadgroup memory): the stage is written one element off, and the
// last thread writes past the end of the array.
kernel void stage_overrun(device const float *g [[buffer(0)]], device float *gc [[buffer(1)]],
                          constant uint *p [[buffer(2)]], uint3 tg [[threadgroup_position_in_grid]],
                          uint tid [[thread_index_in_threadgroup]]) {
    const uint T = p[1], H = p[2], BT = p[3], NT = p[4];
    const uint h = tg.y, b = tg.z / NT, t0 = (tg.z % NT) * BT;
    threadgroup float st[64]; // @stage-array
    if (t0 >= T) return;
    const uint n = min(BT, T - t0);
    const ulong base = ((ulong)b * T + t0) * H + h;
    st[tid + 1] = tid < n ? g[base + (ulong)tid * H] : 0.0f; // @overrun
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (tid != 0) return;
    float acc = 0.0f;
    for (uint t = 0; t < n && t < 63; t++) {
        acc += st[t + 1];
        gc[base + (ulong)t * H] = acc;
    }
}

// divergent_barrier: half the threadgroup waits at one barrier, half at another.
kernel void divergent_barrier(device const float *g [[buffer(0)]], device float *gc [[buffer(1)]],
                              constant uint *p [[buffer(2)]], uint3 tg [[threadgroup_position_in_grid]],
                              uint tid [[thread_index_in_threadgroup]]) {
    const uint T = p[1], H = p[2], BT = p[3], NT = p[4];
    const uint h = tg.y, b = tg.z / NT, t0 = (tg.z % NT) * BT;
    threadgroup float st[64];
    if (t0 >= T) return;
    const uint n = min(BT, T - t0);
    const ulong base = ((ulong)b * T + t0) * H + h;
    st[tid] = tid < n ? g[base + (ulong)tid * H] : 0.0f;
    if (tid < 32) {
        threadgroup_barrier(mem_flags::mem_threadgroup); // @barrier-low
    } else {
        threadgroup_barrier(mem_flags::mem_threadgroup); // @barrier-high
    }
    if (tid != 0) return;
    float acc = 0.0f;
    for (uint t = 0; t < n; t++) {
        acc += st[t];
        gc[base + (ulong)t * H] = acc;
    }
}

// The software device defers simdgroup-matrix products until a result is read (the
// prelude's product log): the checks must still see what happens around them.
// mma_store_overrun: a chain of deferred products whose result is stored 8 floats
// per row from element 72 + 8 * simdgroup, past the 130-float g_cumsum.
kernel void mma_store_overrun(device const float *g [[buffer(0)]], device float *gc [[buffer(1)]],
                              constant uint *p [[buffer(2)]], uint sg [[simdgroup_index_in_threadgroup]]) {
    simdgroup_float8x8 a, acc = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);
    simdgroup_load(a, g, 8);
    for (int i = 0; i < 3; i++) simdgroup_multiply_accumulate(acc, a, a, acc);
    simdgroup_store(acc, gc + 72 + 8 * sg, 8); // @mma-overrun
}

// mma_divergent: lanes 0-15 make two products, lanes 16-31 one, then all read the
// result: simdgroup matrix operations in divergent control flow.
kernel void mma_divergent(device const float *g [[buffer(0)]], device float *gc [[buffer(1)]],
                          constant uint *p [[buffer(2)]], uint lane [[thread_index_in_simdgroup]]) {
    simdgroup_float8x8 a = make_filled_simdgroup_matrix<float, 8, 8>(1.0f), d;
    if (lane < 16) {
        simdgroup_multiply(d, a, a);
        simdgroup_multiply(d, a, d);
    } else {
        simdgroup_multiply(d, a, a);
    }
    simdgroup_store(d, gc, 8); // @mma-read
}
