// features.metal — the MSL that other projects' kernels use (issue 14), one kernel
// per group of features, each writing values test_sw_msl_features.c checks.
// Compiled once for the whole test (a compile costs seconds): keep it one file.
#include <metal_stdlib>
#include "inc/msl_helpers.h"
#include "inc/msl_helpers.h"

using namespace metal;

#ifndef HELPERS_AGAIN_SEEN
#error the quoted include next to msl_helpers.h was not found
#endif

// ---- 1. parameters without [[buffer(n)]]: the lowest free index, in order ----
kernel void implicit_index(constant float &scale,                    // -> buffer(1)
                           device float *out [[buffer(0)]],
                           device const float *in [[buffer(3)]],
                           device float *out2,                       // -> buffer(2)
                           uint i [[thread_position_in_grid]]) {
    out[i] = in[i] * scale;
    out2[i] = float(i);
}

// ---- 2. address spaces stay distinct to overloads; member functions and
// constructors qualified by the space of `this`; ?: with a device struct ----
constant float ctab[2] = {5.0f, 6.0f};
constant int cstrides[2] = {3, 4};

kernel void spaces(device float *out [[buffer(0)]], device const float *in [[buffer(1)]],
                   device Acc *accs [[buffer(2)]], uint i [[thread_index_in_threadgroup]]) {
    threadgroup float tg[4];
    if (i == 0) tg[0] = 1.0f;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (i != 0) return;
    float local = 2.0f;
    Acc a;
    Acc b(1.5f);
    out[0] = space_tag(in);
    out[1] = space_tag(tg);
    out[2] = space_tag(ctab);
    out[3] = space_tag(&local);
    out[4] = a.get();
    out[5] = b.get();
    out[6] = accs[0].get();
    out[7] = first_of(in + 2);
    out[8] = float(sum2(cstrides));
    Acc c = i == 0 ? accs[1] : Acc(9.0f);
    out[9] = c.v;
    out[10] = erf(2.0f);
    out[11] = ctab[1];
}

// ---- 3. Apple's __metal_* builtins and the fast-math selectors ----
kernel void builtins(device float *out [[buffer(0)]], uint lane [[thread_index_in_simdgroup]]) {
    float s = __metal_simd_sum(float(lane));
    ushort width = __metal_get_simdgroup_size(ushort());
    ushort me = __metal_get_thread_index_in_simdgroup(ushort());
    float fill = __metal_simd_shuffle_and_fill_down(float(lane), float(lane + 100), ushort(1), ushort(8));
    if (lane == 0) {
        out[0] = __metal_fabs(-2.5f, __METAL_MAYBE_FAST_MATH__);
        out[1] = __metal_fmax3(1.0f, 5.0f, 3.0f, __METAL_FAST_MATH__);
        out[2] = __metal_fmedian3(1.0f, 5.0f, 3.0f, __METAL_PRECISE_MATH__);
        out[3] = s;
        out[4] = float(width);
        out[5] = __metal_pow(2.0f, 10.0f, __METAL_MAYBE_FAST_MATH__);
        out[6] = __metal_divide(1.0f, 4.0f, __METAL_FAST_MATH__);
    }
    out[8 + lane] = fill;
    out[40 + lane] = float(me);
}

// ---- 4. numeric_limits<half> / <bfloat> in constant expressions ----
constexpr constant half hmax = numeric_limits<half>::max();
constexpr constant bfloat binf = numeric_limits<bfloat>::infinity();
template <typename T> struct Lim {
    static constexpr constant T max = numeric_limits<T>::max();
    static constexpr constant T lowest = numeric_limits<T>::lowest();
};
static_assert(numeric_limits<half>::digits == 11, "half digits");

kernel void limits(device uint *out [[buffer(0)]], uint i [[thread_index_in_threadgroup]]) {
    if (i) return;
    out[0] = as_type<ushort>(hmax);
    out[1] = as_type<ushort>(binf);
    out[2] = as_type<ushort>(Lim<bfloat>::lowest);
    out[3] = as_type<ushort>(numeric_limits<half>::epsilon());
    out[4] = as_type<ushort>(numeric_limits<half>::denorm_min());
    out[5] = as_type<ushort>(Lim<half>::max);
    out[6] = uint(numeric_limits<bfloat>::digits);
}

// ---- 5. library names: shuffle-and-fill, quad-group functions and ids,
// bit fields, mulhi/madhi, sincos, M_*_F, INFINITY, metal::array, uniform ----
kernel void library(device float *out [[buffer(0)]], uint lane [[thread_index_in_simdgroup]],
                    ushort qlane [[thread_index_in_quadgroup]], uint qid [[quadgroup_index_in_threadgroup]]) {
    float up = simd_shuffle_and_fill_up(float(lane), float(lane + 100), ushort(2));
    float qs = quad_sum(float(lane));
    float qsh = quad_shuffle(float(lane), ushort(3));
    float qx = quad_shuffle_xor(float(lane), ushort(1));
    out[lane] = up;
    out[32 + lane] = qs;
    out[64 + lane] = qsh;
    out[96 + lane] = qx;
    out[128 + lane] = float(qlane) + 10.0f * float(qid);
    if (lane == 0) {
        out[160] = float(extract_bits(0xABCDu, 4u, 8u));
        out[161] = float(extract_bits(int(0xF0), 4u, 4u));
        out[162] = float(insert_bits(0u, 0x5u, 8u, 4u));
        out[163] = float(mulhi(0x80000000u, 4u));
        out[164] = float(madhi(0x80000000u, 4u, 10u));
        float c;
        float sn = sincos(0.0f, c);
        out[165] = sn + 10.0f * c;
        out[166] = M_PI_F;
        out[167] = M_SQRT1_2_F;
        out[168] = M_2_SQRTPI_F;
        out[169] = isinf(INFINITY) ? 1.0f : 0.0f;
        metal::array<int, 3> arr = {1, 2, 3};
        out[170] = float(arr[0] + arr[1] + arr[2] + int(arr.size()));
        const uniform<int> u = make_uniform(5);
        out[171] = float(u * 2);
        out[172] = tanpi(0.25f);
        out[173] = nextafter(1.0f, 2.0f) - 1.0f;
        int e;
        float m = frexp(8.0f, e);
        out[174] = m * 100.0f + float(e);
        out[175] = fmedian3(4.0f, 1.0f, 9.0f);
    }
}

// ---- 6. declaration forms ----
#define FC_BASE 10
constant int fc_expr [[function_constant(FC_BASE + 1)]];
static constant constexpr bool fc_flag [[function_constant(FC_BASE * 2)]];

template <typename T, int N>
[[kernel]] void scaled(device T *out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    out[i] = T(N) * T(i);
}
template [[host_name("scaled_f2")]] [[kernel]] decltype(scaled<float, 2>) scaled<float, 2>;
typedef void(scaled_t)(device float *, uint);
template [[host_name("scaled_f3")]] kernel scaled_t scaled<float, 3>;
template [[host_name("scaled_f4")]] [[kernel]] void scaled<float, 4>(device float *out [[buffer(0)]],
                                                                    uint i [[thread_position_in_grid]]);
// the whole signature and no template arguments: T deduced from it
template <typename T>
[[kernel]] void deduced(device T *out [[buffer(0)]], const constant T &scale [[buffer(1)]],
                        uint i [[thread_position_in_grid]]) {
    out[i] = scale * T(i);
}
template [[host_name("deduced_f")]] [[kernel]] void deduced(device float *out [[buffer(0)]],
                                                            const constant float &scale [[buffer(1)]],
                                                            uint i [[thread_position_in_grid]]);
template [[host_name("deduced_h")]] [[kernel]] void deduced(device half *out [[buffer(0)]],
                                                            const constant half &scale [[buffer(1)]],
                                                            uint i [[thread_position_in_grid]]);

kernel void fc_forms(device float *out [[buffer(0)]],
                     device float *opt [[buffer(1), function_constant(fc_flag)]],
                     volatile coherent(device) device float *co [[buffer(2)]],
                     uint i [[thread_index_in_threadgroup]]) {
    threadgroup float init_buf[4] = {1.0f, 2.0f, 3.0f, 4.0f};
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (i == 0) {
        out[0] = float(fc_expr);
        out[1] = fc_flag ? 1.0f : 0.0f;
        out[2] = init_buf[0] + init_buf[1] + init_buf[2] + init_buf[3];
        if (fc_flag) opt[0] = 42.0f;
        co[0] = 5.0f;
        out[3] = is_function_constant_defined(fc_expr) ? 1.0f : 0.0f;
    }
}

// ---- 7. matrices ----
kernel void matrices(device float *out [[buffer(0)]], uint i [[thread_index_in_threadgroup]]) {
    if (i) return;
    float4x4 m(1.0f);
    m[3] = float4(1, 2, 3, 1);
    float4 p = m * float4(1, 1, 1, 1);
    out[0] = p.x, out[1] = p.y, out[2] = p.z, out[3] = p.w;
    float2x3 a(float3(1, 2, 3), float3(4, 5, 6));
    float3 av = a * float2(1, 10);
    float2 va = float3(1, 0, 1) * a;
    matrix<float, 3, 2> at = transpose(a);
    out[4] = av.x, out[5] = av.y, out[6] = av.z;
    out[7] = va.x, out[8] = va.y;
    out[9] = at[2][1];
    float2x2 b(1.0f, 2.0f, 3.0f, 4.0f);
    out[10] = determinant(b);
    float2x2 bb = b * b;
    out[11] = bb[0][0], out[12] = bb[0][1], out[13] = bb[1][0], out[14] = bb[1][1];
    half4x4 h(half(2));
    half4 hv = h * half4(1, 2, 3, 4);
    out[15] = float(hv.w);
    float3x3 m3 = float3x3(2.0f) + float3x3(1.0f);
    out[16] = m3[1][1];
    out[17] = determinant(m3);
    float2x2 s = 2.0f * b;
    out[18] = s[1][1];
}

// ---- 8. conversions: half <-> bfloat, C-style vector casts, simdgroup_matrix
// operator*, braced arguments, float literals ----
inline uint sum3(uint3 v) { return v.x + v.y + v.z; }
template <int N> struct IntBox { static constexpr int value = N; };
template <typename T, bool B> inline T pick() { return T(IntBox<B ? 3 : 5>::value); }   // ?: in template arguments
template <typename U> inline U cast_elem(uint3 v) { return static_cast<U>(v.y); }      // a vector element
template <typename S> struct VecUser {
    using pair_t = vec<S, 2>;
    static pair_t make(S a, S b) { return pair_t(a, b); }                                // an alias of a vector
};

struct Pair2 {
    float a, b;
    Pair2() = default;
    Pair2(float x, float y) : a(x), b(y) {}
    template <typename U> Pair2(U x) : a(float(x)), b(0) {}   // converting, as MLX's complex_t
};
constant Pair2 pair_init = {7.0f, 8.0f};

kernel void conversions(device float *out [[buffer(0)]], device const half *hin [[buffer(1)]],
                        device const bfloat *bin [[buffer(2)]], uint lane [[thread_index_in_simdgroup]]) {
    threadgroup float ta[64], tb[64], tc[64], td[64];
    threadgroup Pair2 tpair[1];
    if (lane == 0) tpair[0] = Pair2(1.0f, 2.0f);
    for (uint k = lane; k < 64; k += 32) {
        ta[k] = float(k / 8 + k % 8);
        tb[k] = (k / 8 == k % 8) ? 2.0f : 0.0f;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    simdgroup_float8x8 A, B, D;
    simdgroup_load(A, ta, 8);
    simdgroup_load(B, tb, 8);
    simdgroup_float8x8 C = A * B;
    simdgroup_multiply(D, A, B);
    simdgroup_store(C, tc, 8);
    simdgroup_store(D, td, 8);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint k = lane; k < 64; k += 32) {
        out[k] = tc[k];
        out[64 + k] = tc[k] - td[k];
    }
    if (lane == 0) {
        half h = hin[0];
        bfloat b = static_cast<bfloat>(h);
        half h2 = static_cast<half>(bin[0]);
        out[128] = float(b) + float(h2);
        half4 h4 = half4(hin[1], hin[2], hin[3], hin[4]);
        float4 f4 = (float4)h4;
        out[129] = f4.x + f4.y + f4.z + f4.w;
        half2 hh = (half2)float2(0.25f, 3.0f);
        out[130] = float(hh.x) * float(hh.y);
        bfloat4 b4 = static_cast<bfloat4>(h4);
        out[131] = float(b4.w);
        half hb = half(bin[0]);
        out[132] = float(hb);
        out[133] = float(sum3({1u, 2u, 3u}));
        out[134] = (1.0 + 1e-8 == 1.0) ? 1.0f : 0.0f;
        out[135] = pick<float, true>() + pick<float, false>();
        out[136] = cast_elem<float>(uint3(4, 7, 9));
        float2 pr = VecUser<float>::make(1.5f, 2.5f);
        out[137] = pr.x * pr.y;
        const int2 dinit(3, 4), dinit2(5, 6);                       // vectors direct-initialised
        float4 ve = float4(1, 2, 3, 4);
        ve[0] = lane == 0 ? ve[2] : -ve[3];                          // ?: of vector elements
        out[138] = float(dinit.x * dinit.y + dinit2.y) + ve[0];
        threadgroup const float *tp = lane > 100 ? nullptr : ta;     // ?: of nullptr and an array
        out[139] = tp[9];
        Pair2 pp = lane < 100 ? tpair[0] : pair_init;                // `a < b ? x : y`, x and y structs of two spaces
        Pair2 pq = lane > 100 ? tpair[0] : pair_init;
        out[140] = pp.a + pp.b * 10.0f + pq.a * 100.0f;
    }
}

// ---- threadgroup memory a kernel declares, as `gdnbench compile` reports it ----
template <typename T, int N>
[[kernel]] void tg_sized(device T *out [[buffer(0)]], uint i [[thread_index_in_threadgroup]]) {
    threadgroup T buf[N];
    threadgroup float2 pair;
    if (i < uint(N)) buf[i] = T(i);
    if (i == 0) pair = float2(1.0f, 2.0f);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (i == 0) out[0] = float(buf[N - 1]) + pair.y;
}
template [[host_name("tg_sized_f64")]] [[kernel]] decltype(tg_sized<float, 64>) tg_sized<float, 64>;
template [[host_name("tg_sized_h8")]] [[kernel]] decltype(tg_sized<half, 8>) tg_sized<half, 8>;
