// numerics.metal — one kernel per kind of numeric finding (--sw-checks numerics,
// issue 32 item 1) and its fixed twin (name_ok), for tests/cli/test_numerics.sh.
//
// ABI: x float[n] in, y float[n] out, s float (a scale), k int (a count);
// one thread per element.  The scale and count come from the command line, so
// the compiler cannot fold the bad values away.  The lines a test looks for end in
// a marker comment "// @name".
#include <metal_stdlib>
using namespace metal;

#define PARAMS                                                                      \
    device const float *x [[buffer(0)]], device float *y [[buffer(1)]],             \
        constant float &s [[buffer(2)]], constant int &k [[buffer(3)]],             \
        uint i [[thread_position_in_grid]]

// A half accumulator that passes 65504 (ggml-org/llama.cpp#25442): x = 1, s = 10000.
kernel void half_acc(PARAMS) {
    half acc = 0.0h;
    for (int j = 0; j < k; j++) acc += (half)(x[i] * s); // @half-acc
    y[i] = (float)acc;
}
kernel void half_acc_ok(PARAMS) {
    float acc = 0.0f;
    for (int j = 0; j < k; j++) acc += x[i] * s;
    y[i] = acc;
}

// float -> half of a value past 65504: s = 100000.
kernel void to_half(PARAMS) {
    half h = (half)(x[i] * s); // @to-half
    y[i] = (float)h;
}
kernel void to_half_ok(PARAMS) {
    half h = (half)clamp(x[i] * s, -65504.0f, 65504.0f);
    y[i] = (float)h;
}

// float -> bfloat of a value that rounds past bfloat's largest: s = 3.4e38.
kernel void to_bfloat(PARAMS) {
    bfloat b = (bfloat)(x[i] * s); // @to-bfloat
    y[i] = (float)b;
}
kernel void to_bfloat_ok(PARAMS) {
    bfloat b = (bfloat)min(x[i] * s, 3.38e38f);
    y[i] = (float)b;
}

// float -> int out of range: s = 1e10.
kernel void to_int(PARAMS) {
    int v = (int)(x[i] * s); // @to-int
    y[i] = (float)(v & 7);
}
kernel void to_int_ok(PARAMS) {
    int v = (int)clamp(x[i] * s, -2147483520.0f, 2147483520.0f);
    y[i] = (float)(v & 7);
}

// 0 / 0 of finite values: x = 1, s = 1.
kernel void zero_div_zero(PARAMS) {
    float z = x[i] - s;
    y[i] = z / z; // @nan
}
kernel void zero_div_zero_ok(PARAMS) {
    float z = x[i] - s;
    y[i] = z != 0.0f ? z / z : 1.0f;
}

// A product of finite floats past FLT_MAX: s = 1e30, x = 1e10.
kernel void float_overflow(PARAMS) {
    y[i] = (x[i] * s) * s; // @fmul
}
kernel void float_overflow_ok(PARAMS) {
    y[i] = (x[i] * 1e-30f) * s;
}

// Integer division by zero: k = 1.
kernel void int_div(PARAMS) {
    int d = k - 1;
    y[i] = (float)((int)i / d); // @int-div
}
kernel void int_div_ok(PARAMS) {
    int d = max(k - 1, 1);
    y[i] = (float)((int)i / d);
}

// Signed overflow: k = 2147483600, and i up to 63.
kernel void int_overflow(PARAMS) {
    int v = k + (int)i; // @int-add
    y[i] = (float)(v & 255);
}
kernel void int_overflow_ok(PARAMS) {
    uint v = (uint)k + i;
    y[i] = (float)(v & 255);
}

// A shift by the type's width or more: k = 0, i % 40 up to 39.
kernel void shift(PARAMS) {
    uint v = 1u << (k + (int)(i % 40)); // @shift
    y[i] = (float)(v & 1);
}
kernel void shift_ok(PARAMS) {
    uint v = 1u << (k + (int)(i % 32));
    y[i] = (float)(v & 1);
}

// A short offset that wraps past 32767 (ml-explore/mlx#3360): k = 1000.
kernel void short_wrap(PARAMS) {
    short off = 0;
    for (uint j = 0; j <= i; j++) off += k; // @short-wrap
    y[i] = (float)(off & 1);
}
kernel void short_wrap_ok(PARAMS) {
    int off = 0;
    for (uint j = 0; j <= i; j++) off += k;
    y[i] = (float)(off & 1);
}

// Op cumsum's ABI (as tests/cli/kernels/barriers.metal: g f32[B,T,H], g_cumsum
// f32[B,T,H], params u32[5] = {B, T, H, BT, NT}; grid (1, H, B*NT), 64 threads): the
// chunk's scan in a half accumulator of g scaled by 2^16, and an int index that
// overflows: two findings for the JSON and --sw-max-findings.
#define SCAN_PARAMS                                                                  \
    device const float *g [[buffer(0)]], device float *gc [[buffer(1)]],             \
        constant uint *p [[buffer(2)]], uint3 tg [[threadgroup_position_in_grid]],   \
        uint tid [[thread_index_in_threadgroup]]
kernel void scan_half(SCAN_PARAMS) {
    const uint T = p[1], H = p[2], BT = p[3], NT = p[4];
    const uint h = tg.y, b = tg.z / NT, t0 = (tg.z % NT) * BT;
    if (tid != 0 || t0 >= T) return;
    const uint n = min(BT, T - t0);
    int big = 2147483000 + (int)(p[0] * 700); // @scan-int
    half acc = 0.0h;
    for (uint t = 0; t < n; t++) {
        ulong at = ((ulong)b * T + t0 + t) * H + h;
        acc += (half)(g[at] * 65536.0f - 65536.0f); // @scan-half
        gc[at] = (float)acc + (float)(big & 0);
    }
}

// 0 * Inf, the Inf made from its bits (no operation overflows): x = 1, s = 1, k = 0.
kernel void zero_times_inf(PARAMS) {
    float inf = as_type<float>(0x7f800000u | (uint)k);
    y[i] = (x[i] - s) * inf; // @zero-inf
}
kernel void zero_times_inf_ok(PARAMS) {
    float inf = as_type<float>(0x7f800000u | (uint)k);
    y[i] = (x[i] - s) * (isinf(inf) ? 0.0f : inf);
}

// A finite value divided by zero: x = 1, s = 1.
kernel void div_zero(PARAMS) {
    y[i] = x[i] / (x[i] - s); // @div-zero
}
kernel void div_zero_ok(PARAMS) {
    float d = x[i] - s;
    y[i] = d != 0.0f ? x[i] / d : 0.0f;
}

// A math function past float's range: exp(100), s = 100.
kernel void exp_overflow(PARAMS) {
    y[i] = exp(x[i] * s); // @exp
}
kernel void exp_overflow_ok(PARAMS) {
    y[i] = exp(min(x[i] * s, 88.0f));
}

// A math function outside its domain: sqrt(-1), s = 2.
kernel void sqrt_domain(PARAMS) {
    y[i] = sqrt(x[i] - s); // @sqrt
}
kernel void sqrt_domain_ok(PARAMS) {
    y[i] = sqrt(max(x[i] - s, 0.0f));
}

// A half4 conversion whose third element overflows (every element of a vector
// instruction is checked): s = 100000.
kernel void to_half4(PARAMS) {
    float4 v = ((device const float4 *)x)[i % 16] * float4(1.0f, 2.0f, s, 1.0f);
    half4 h = half4(v); // @to-half4
    y[i] = (float)h.x + (float)h.z;
}
kernel void to_half4_ok(PARAMS) {
    float4 v = ((device const float4 *)x)[i % 16] * float4(1.0f, 2.0f, min(s, 65504.0f), 1.0f);
    half4 h = half4(v);
    y[i] = (float)h.x + (float)h.z;
}
