// lang.metal — MSL language features beyond MLX's (issue 36: what llama.cpp's
// ggml-metal and other projects use), one kernel per feature, each writing values
// test_sw_msl_lang.c checks against values it computes itself.  One file, compiled
// once for the whole test.
#include <metal_stdlib>

// ---- 5. attributes written for Apple's compiler: accepted (or ignored) ----
#define LANG_API __attribute__((__visibility__("default")))
#define LANG_HIDDEN __attribute__((visibility("hidden")))

using namespace metal;

LANG_HIDDEN inline float hidden_twice(float x) { return 2.0f * x; }
[[gnu::always_inline]] inline float inlined_plus1(float x) { return x + 1.0f; }
LANG_API __attribute__((always_inline)) static inline float api_square(float x) { return x * x; }

// ---- 1. C-style casts to a template parameter convert element by element ----
// (TC) of a half4 with TC = float4 (sizes differ: clang refuses it), of an int4 with
// TC = float4 (same size: clang would reinterpret the bits), and back to T.
template <typename T, typename TC>
inline void cast_through(device const T *src, device T *back, device TC *wide, int i) {
    const TC x = (TC) src[i];
    wide[i] = x;
    back[i] = (T) (x * TC(2.0f));
}

// T(x > 0) - T(x < 0) with T = half4: ggml's sign
template <typename T> inline T sign_of(T x) { return T(x > 0) - T(x < 0); }

kernel void casts(device const half4 *h [[buffer(0)]], device half4 *hback [[buffer(1)]],
                  device float4 *hwide [[buffer(2)]], device const int4 *n [[buffer(3)]],
                  device int4 *nback [[buffer(4)]], device float4 *nwide [[buffer(5)]],
                  device float4 *misc [[buffer(6)]], uint i [[thread_position_in_grid]]) {
    if (i >= 2) return;
    cast_through<half4, float4>(h, hback, hwide, i);
    cast_through<int4, float4>(n, nback, nwide, i);
    if (i != 0) return;
    // MSL comparisons are bool vectors: T(x > 0) is 1 where true (clang's are -1)
    float4 x = float4(-2.0f, 0.0f, 3.0f, 0.5f);
    misc[0] = float4(x > 0.0f) - float4(x < 0.0f);
    half4 xh = half4(x);
    misc[1] = float4(sign_of<half4>(xh));
    misc[2] = (float4)(x >= 0.5f);
    misc[3] = float4((float4)int4(7, -7, 0, 1));   // spelled-out type: converts too
    bool4 bm = x > 0.0f, bn = x < 0.0f;               // bool vectors declared from comparisons
    misc[4] = float4(bm) + 2.0f * float4(bn);
    misc[5] = select(float4(10.0f), x, x > 0.0f);
    misc[6] = float4(all(x > -3.0f), any(x > 3.0f), all(bm), any(bm));
}

// ---- bool vectors take comparisons after their declaration too ----
kernel void bool_assign(device const float4 *ab [[buffer(0)]], device float4 *o [[buffer(1)]],
                        uint i [[thread_position_in_grid]]) {
    if (i != 0) return;
    float4 a = ab[0], b = ab[1];
    bool4 m, n = a > b;   // a later declarator's comparison
    m = a < b;
    n |= a == b;
    o[0] = float4(m);
    o[1] = float4(n);
    m &= a != float4(2.0f);
    o[2] = float4(m);
    for (int j = 0; j < 1; j++, m ^= a > b) {}
    o[3] = float4(m);
    {
        float4 m = a;     // a redeclaration shadows it: a float4 again
        m = m * 2.0f;
        o[4] = m;
    }
}

// a bool vector's name reused by a comma declaration and by a function: floats still
bool4 is_pos(float4 v) { return bool4(v > 0.0f); }
kernel void bool_assign_shadow(device const float4 *ab [[buffer(0)]], device float4 *o [[buffer(1)]],
                               uint i [[thread_position_in_grid]]) {
    if (i != 0) return;
    bool4 m = is_pos(ab[0]);
    o[0] = float4(m);
    {
        float x = ab[0].x, m = 2.5f;
        m = m + x;        // 3.5, not a bool's 1
        o[1] = float4(m);
    }
    float is_pos = 0.25f;
    is_pos = is_pos * 2.0f;
    o[2] = float4(is_pos);
}

// ---- 1. MSL's predefined constants (every one of the spec's tables) ----
kernel void constants(device uint *u [[buffer(0)]], device float *f [[buffer(1)]], uint i [[thread_position_in_grid]]) {
    if (i != 0) return;
    int k = 0;
    u[k++] = as_type<ushort>(MAXHALF);
    u[k++] = as_type<ushort>(HUGE_VALH);
    u[k++] = as_type<uint>(MAXFLOAT);
    u[k++] = as_type<uint>(HUGE_VALF);
    u[k++] = as_type<uint>(INFINITY);
    u[k++] = isnan(NAN) ? 1u : 0u;
    u[k++] = as_type<ushort>(MAXBFLOAT);
    u[k++] = as_type<ushort>(HUGE_VALBF);
    // 8: M_*_H, 21: M_*_BF, 34: M_*_F (E LOG2E LOG10E LN2 LN10 PI PI_2 PI_4 1_PI 2_PI 2_SQRTPI SQRT2 SQRT1_2)
    half mh[13] = {M_E_H, M_LOG2E_H, M_LOG10E_H, M_LN2_H, M_LN10_H, M_PI_H, M_PI_2_H, M_PI_4_H, M_1_PI_H,
                   M_2_PI_H, M_2_SQRTPI_H, M_SQRT2_H, M_SQRT1_2_H};
    bfloat mb[13] = {M_E_BF, M_LOG2E_BF, M_LOG10E_BF, M_LN2_BF, M_LN10_BF, M_PI_BF, M_PI_2_BF, M_PI_4_BF,
                     M_1_PI_BF, M_2_PI_BF, M_2_SQRTPI_BF, M_SQRT2_BF, M_SQRT1_2_BF};
    float mf[13] = {M_E_F, M_LOG2E_F, M_LOG10E_F, M_LN2_F, M_LN10_F, M_PI_F, M_PI_2_F, M_PI_4_F, M_1_PI_F,
                    M_2_PI_F, M_2_SQRTPI_F, M_SQRT2_F, M_SQRT1_2_F};
    for (int j = 0; j < 13; j++) u[8 + j] = as_type<ushort>(mh[j]);
    for (int j = 0; j < 13; j++) u[21 + j] = as_type<ushort>(mb[j]);
    for (int j = 0; j < 13; j++) u[34 + j] = as_type<uint>(mf[j]);
    // 47: FLT_*, HALF_*, BFLOAT_* limits
    int lim[24] = {FLT_DIG, FLT_MANT_DIG, FLT_MAX_10_EXP, FLT_MAX_EXP, FLT_MIN_10_EXP, FLT_MIN_EXP, FLT_RADIX,
                   HALF_DIG, HALF_MANT_DIG, HALF_MAX_10_EXP, HALF_MAX_EXP, HALF_MIN_10_EXP, HALF_MIN_EXP, HALF_RADIX,
                   BFLOAT_DIG, BFLOAT_MANT_DIG, BFLOAT_MAX_10_EXP, BFLOAT_MAX_EXP, BFLOAT_MIN_10_EXP, BFLOAT_MIN_EXP,
                   BFLOAT_RADIX, CHAR_BIT, SCHAR_MIN, SHRT_MIN};
    for (int j = 0; j < 24; j++) u[47 + j] = uint(lim[j]);
    k = 71;
    u[k++] = as_type<uint>(FLT_MAX);
    u[k++] = as_type<uint>(FLT_MIN);
    u[k++] = as_type<uint>(FLT_EPSILON);
    u[k++] = as_type<ushort>(HALF_MAX);
    u[k++] = as_type<ushort>(HALF_MIN);
    u[k++] = as_type<ushort>(HALF_EPSILON);
    u[k++] = as_type<ushort>(BFLOAT_MAX);
    u[k++] = as_type<ushort>(BFLOAT_MIN);
    u[k++] = as_type<ushort>(BFLOAT_EPSILON);
    u[k++] = UINT_MAX;
    u[k++] = uint(INT_MIN);
    u[k++] = uint(LONG_MAX >> 32);
    u[k++] = USHRT_MAX;
    u[k++] = UCHAR_MAX;
    f[0] = -MAXHALF;   // ggml's mask value: a half, negated, widened
}

// ---- 2. simdgroup-matrix factories and load/store overloads ----
kernel void matrix_factories(device float *out [[buffer(0)]], device const half *src [[buffer(1)]],
                             uint lane [[thread_index_in_simdgroup]]) {
    threadgroup float tg[16 * 16];
    for (uint e = lane; e < 256; e += 32) tg[e] = float(e);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    simdgroup_float8x8 filled = make_filled_simdgroup_matrix<float, 8>(2.5f);   // Rows defaults to Cols
    simdgroup_half8x8 filled_h = make_filled_simdgroup_matrix<half, 8, 8>(half(-1.5f));
    simdgroup_float8x8 diag = simdgroup_float8x8(3.0f);                          // a diagonal matrix
    simdgroup_float8x8 from_tg, from_dev, transposed;
    simdgroup_load(from_tg, tg, 16, ulong2(8, 4));                  // threadgroup, stride and origin (col, row)
    simdgroup_load(from_dev, src);                                  // device, defaults: stride 8, origin 0
    simdgroup_load(transposed, tg, 16, ulong2(0, 0), true);
    simdgroup_store(filled, out, 8);
    simdgroup_store(filled_h, out + 64);
    simdgroup_store(diag, out + 128, 8, ulong2(0, 0));
    simdgroup_store(from_tg, out + 192);
    simdgroup_store(from_dev, out + 256);
    simdgroup_store(transposed, out + 320);
    threadgroup float back[8 * 16];
    simdgroup_store(diag, back, 16, ulong2(8, 0), true);            // threadgroup store, origin and transpose
    simdgroup_barrier(mem_flags::mem_threadgroup);
    for (uint e = lane; e < 64; e += 32) out[384 + e] = back[(e / 8) * 16 + 8 + e % 8];
}

// ---- 3. metal_stdlib's own templates, specialised by the kernel ----
struct scored {
    float val;
    int idx;
};
namespace metal {
template <> struct _numeric_limits_impl<scored> : _fp_numeric_limits_impl_base {
    static constexpr scored lowest() { return scored{-INFINITY, -1}; }
    static constexpr scored max() { return scored{INFINITY, 1 << 30}; }
};
}   // namespace metal

kernel void limits_impl(device float *out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    if (i != 0) return;
    scored lo = numeric_limits<scored>::lowest();
    out[0] = lo.val;
    out[1] = float(lo.idx);
    out[2] = float(numeric_limits<scored>::max().idx);
    out[3] = numeric_limits<scored>::is_iec559 && numeric_limits<scored>::has_denorm == denorm_present ? 1.0f : 0.0f;
    out[4] = float(numeric_limits<half>::max());   // the library's own specialisations stay
    out[5] = numeric_limits<scored>::round_style == round_to_nearest ? 1.0f : 0.0f;
}

// ---- 4. brace and aggregate initialisation (spec §2.2-2.4) ----
struct pair4 {
    float4 a;
    half2 b;
};
kernel void inits(device float *out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    if (i != 0) return;
    float a = 1.0f, b = 2.0f;
    float4 v = {a, b};                        // fewer elements: the rest are zero
    float4 w{a, b, 3.0f, 4.0f};
    float2 p = {5.0f, 6.0f};
    float4 spread = float4(p, p);             // vectors of vectors
    float4 arr[2] = {{7.0f, 8.0f}, {9.0f}};   // an array of vectors, each with fewer elements
    int3 ints = {1, 2, 3};
    pair4 s = {{1.0f, 2.0f, 3.0f, 4.0f}, {half(0.5f), half(0.25f)}};
    float2x2 m = {float2(1.0f, 2.0f), float2(3.0f, 4.0f)};
    float4 zero = {};
    float4 halves = {p, p};                   // vectors in braces: their elements in order
    float4 mixed = {1.0f, p, 2.0f};
    float3x3 diag3 = float3x3(2.0f);          // a scalar: the diagonal
    float2x2 scal = float2x2(1.0f, 2.0f, 3.0f, 4.0f);
    int k = 0;
    for (int j = 0; j < 4; j++) out[k++] = v[j];
    for (int j = 0; j < 4; j++) out[k++] = w[j];
    for (int j = 0; j < 4; j++) out[k++] = spread[j];
    for (int r = 0; r < 2; r++)
        for (int j = 0; j < 4; j++) out[k++] = arr[r][j];
    for (int j = 0; j < 3; j++) out[k++] = float(ints[j]);
    out[k++] = s.a.w + float(s.b.y);
    out[k++] = m[1][0];
    out[k++] = zero.x + zero.w;
    for (int j = 0; j < 4; j++) out[k++] = halves[j];
    for (int j = 0; j < 4; j++) out[k++] = mixed[j];
    out[k++] = diag3[1][1] + diag3[0][1];
    out[k++] = scal[1][0];
    out[k++] = hidden_twice(inlined_plus1(api_square(3.0f)));   // 5.: 2 * (9 + 1)
}

// ---- §6 pack and unpack functions ----
kernel void packing(device const float4 *in [[buffer(0)]], device uint *packed [[buffer(1)]],
                    device float4 *unpacked [[buffer(2)]], uint i [[thread_position_in_grid]]) {
    if (i >= 8) return;
    float4 v = in[i];
    packed[6 * i + 0] = pack_float_to_unorm4x8(v);
    packed[6 * i + 1] = pack_float_to_snorm4x8(v);
    packed[6 * i + 2] = pack_float_to_unorm2x16(v.xy);
    packed[6 * i + 3] = pack_float_to_snorm2x16(v.zw);
    packed[6 * i + 4] = pack_half_to_unorm4x8(half4(v));
    packed[6 * i + 5] = pack_half_to_snorm2x16(half2(v.xy));
    uint u = as_type<uint>(v.x);
    unpacked[6 * i + 0] = unpack_unorm4x8_to_float(u);
    unpacked[6 * i + 1] = unpack_snorm4x8_to_float(u);
    unpacked[6 * i + 2] = float4(unpack_unorm2x16_to_float(u), unpack_snorm2x16_to_float(u));
    unpacked[6 * i + 3] = float4(unpack_unorm4x8_to_half(u));
    unpacked[6 * i + 4] = float4(unpack_snorm4x8_to_half(u));
    unpacked[6 * i + 5] = float4(float2(unpack_unorm2x16_to_half(u)), float2(unpack_snorm2x16_to_half(u)));
}

// ---- §6 pack and unpack: 10a2 and 565 ----
kernel void packing_10a2_565(device const float4 *in [[buffer(0)]], device uint *packed [[buffer(1)]],
                             device float4 *unpacked [[buffer(2)]], uint i [[thread_position_in_grid]]) {
    if (i >= 8) return;
    float4 v = in[i];
    packed[4 * i + 0] = pack_float_to_unorm10a2(v);
    packed[4 * i + 1] = pack_half_to_unorm10a2(half4(v));
    packed[4 * i + 2] = pack_float_to_unorm565(v.xyz);
    packed[4 * i + 3] = pack_half_to_unorm565(half3(v.yzw));
    uint u = as_type<uint>(v.x);
    unpacked[4 * i + 0] = unpack_unorm10a2_to_float(u);
    unpacked[4 * i + 1] = float4(unpack_unorm10a2_to_half(u));
    unpacked[4 * i + 2] = float4(unpack_unorm565_to_float(ushort(u)), 0.0f);
    unpacked[4 * i + 3] = float4(float3(unpack_unorm565_to_half(ushort(u >> 16))), 0.0f);
}
