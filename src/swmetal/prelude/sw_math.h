// sw_math.h — MSL math, integer, geometric and relational functions (part of the
// software device's prelude; included by metal_stdlib.h inside no namespace).
//
// Accuracy: every float function calls the libm float function (glibc: < 1 ulp for
// exp/log/pow/sin/cos..., correctly rounded sqrt/fma), which meets Metal's precise::
// bounds.  half and bfloat arguments are computed in float and rounded once.
// fast:: and precise:: are the same functions here: fast:: is *more* accurate than
// on a GPU (Apple's fast exp/log are ~2-4 ulp, fast::divide is approximate), so a
// kernel that only passes with fast-math error will pass here too.
// Vector arguments apply the scalar function per component; where MSL accepts a
// scalar next to a vector (min(v, 0.0f), clamp(v, lo, hi), mix(a, b, t)) the
// scalar is splat.
#ifndef GDN_SW_MATH_H
#define GDN_SW_MATH_H

// ---- MSL's math constants (macros, as in Metal's headers) ----
#define M_E_F 2.71828182845904523536028747135266250f
#define M_LOG2E_F 1.44269504088896340735992468100189214f
#define M_LOG10E_F 0.434294481903251827651128918916605082f
#define M_LN2_F 0.693147180559945309417232121458176568f
#define M_LN10_F 2.30258509299404568401799145468436421f
#define M_PI_F 3.14159265358979323846264338327950288f
#define M_PI_2_F 1.57079632679489661923132169163975144f
#define M_PI_4_F 0.785398163397448309615660845819875721f
#define M_1_PI_F 0.318309886183790671537767526745028724f
#define M_2_PI_F 0.636619772367581343075535053490057448f
#define M_2_SQRTPI_F 1.12837916709551257389615890312154517f
#define M_SQRT2_F 1.41421356237309504880168872420969808f
#define M_SQRT1_2_F 0.707106781186547524400844362104849039f
// The half and bfloat constants are the float ones rounded once more: for each of
// these values that equals rounding the exact value (checked in test_sw_msl_features.c).
#define M_E_H ((half)M_E_F)
#define M_LOG2E_H ((half)M_LOG2E_F)
#define M_LOG10E_H ((half)M_LOG10E_F)
#define M_LN2_H ((half)M_LN2_F)
#define M_LN10_H ((half)M_LN10_F)
#define M_PI_H ((half)M_PI_F)
#define M_PI_2_H ((half)M_PI_2_F)
#define M_PI_4_H ((half)M_PI_4_F)
#define M_1_PI_H ((half)M_1_PI_F)
#define M_2_PI_H ((half)M_2_PI_F)
#define M_2_SQRTPI_H ((half)M_2_SQRTPI_F)
#define M_SQRT2_H ((half)M_SQRT2_F)
#define M_SQRT1_2_H ((half)M_SQRT1_2_F)
#define M_E_BF ((bfloat)M_E_F)
#define M_LOG2E_BF ((bfloat)M_LOG2E_F)
#define M_LOG10E_BF ((bfloat)M_LOG10E_F)
#define M_LN2_BF ((bfloat)M_LN2_F)
#define M_LN10_BF ((bfloat)M_LN10_F)
#define M_PI_BF ((bfloat)M_PI_F)
#define M_PI_2_BF ((bfloat)M_PI_2_F)
#define M_PI_4_BF ((bfloat)M_PI_4_F)
#define M_1_PI_BF ((bfloat)M_1_PI_F)
#define M_2_PI_BF ((bfloat)M_2_PI_F)
#define M_2_SQRTPI_BF ((bfloat)M_2_SQRTPI_F)
#define M_SQRT2_BF ((bfloat)M_SQRT2_F)
#define M_SQRT1_2_BF ((bfloat)M_SQRT1_2_F)
#undef INFINITY
#undef NAN
#undef HUGE_VALF
#define INFINITY __builtin_inff()
#define NAN __builtin_nanf("")
#define HUGE_VALF __builtin_huge_valf()
#define HUGE_VALH ((half)__builtin_inff())
#define HUGE_VALBF ((bfloat)__builtin_inff())
#define MAXFLOAT 0x1.fffffep+127f
#define MAXHALF ((half)0x1.ffcp+15f)
#define MAXBFLOAT ((bfloat)0x1.fep+127f)
// <float.h>'s macros (the spec's tables of single-, half- and bfloat-precision
// limits); C's own definitions, where a system header brought them, are the same.
#ifndef FLT_MAX
#define FLT_MAX 0x1.fffffep+127f
#define FLT_MIN 0x1p-126f
#define FLT_EPSILON 0x1p-23f
#define FLT_DIG 6
#define FLT_MANT_DIG 24
#define FLT_MAX_EXP 128
#define FLT_MIN_EXP (-125)
#define FLT_MAX_10_EXP 38
#define FLT_MIN_10_EXP (-37)
#define FLT_RADIX 2
#endif
#define HALF_MAX ((half)0x1.ffcp+15f)
#define HALF_MIN ((half)0x1p-14f)
#define HALF_EPSILON ((half)0x1p-10f)
#define HALF_DIG 3
#define HALF_MANT_DIG 11
#define HALF_MAX_EXP 16
#define HALF_MIN_EXP (-13)
#define HALF_MAX_10_EXP 4
#define HALF_MIN_10_EXP (-4)
#define HALF_RADIX 2
#define BFLOAT_MAX ((bfloat)0x1.fep+127f)
#define BFLOAT_MIN ((bfloat)0x1p-126f)
#define BFLOAT_EPSILON ((bfloat)0x1p-7f)
#define BFLOAT_DIG 2
#define BFLOAT_MANT_DIG 8
#define BFLOAT_MAX_EXP 128
#define BFLOAT_MIN_EXP (-125)
#define BFLOAT_MAX_10_EXP 38
#define BFLOAT_MIN_10_EXP (-37)
#define BFLOAT_RADIX 2
// <limits.h>'s integer macros, at MSL's sizes (char 8, short 16, int 32, long 64 bits).
#ifndef INT_MAX
#define CHAR_BIT 8
#define SCHAR_MAX 127
#define SCHAR_MIN (-128)
#define UCHAR_MAX 255
#define CHAR_MAX SCHAR_MAX
#define CHAR_MIN SCHAR_MIN
#define USHRT_MAX 65535
#define SHRT_MAX 32767
#define SHRT_MIN (-32768)
#define UINT_MAX 0xffffffffu
#define INT_MAX 2147483647
#define INT_MIN (-2147483647 - 1)
#define ULONG_MAX 0xffffffffffffffffUL
#define LONG_MAX 0x7fffffffffffffffL
#define LONG_MIN (-0x7fffffffffffffffL - 1)
#endif

namespace metal {

// Apply f to every component (or to the scalar).
template <class T, class F> inline T sw_map(const T &x, F f) {
    if constexpr (sw_is_vector<T>) {
        T r;
        for (int i = 0; i < sw_vec_size<T>; i++) r[i] = f(x[i]);
        return r;
    } else {
        return f(x);
    }
}
template <class T, class F> inline T sw_map2(const T &x, const T &y, F f) {
    if constexpr (sw_is_vector<T>) {
        T r;
        for (int i = 0; i < sw_vec_size<T>; i++) r[i] = f(x[i], y[i]);
        return r;
    } else {
        return f(x, y);
    }
}
template <class T, class F> inline T sw_map3(const T &x, const T &y, const T &z, F f) {
    if constexpr (sw_is_vector<T>) {
        T r;
        for (int i = 0; i < sw_vec_size<T>; i++) r[i] = f(x[i], y[i], z[i]);
        return r;
    } else {
        return f(x, y, z);
    }
}

// The type two arguments meet at.  A double literal next to float/half/bfloat
// takes the other type (MSL has no double: 1.0 is a float literal there).
template <class A, class B> struct sw_meet {
    typedef std::remove_cv_t<std::remove_reference_t<A>> X;
    typedef std::remove_cv_t<std::remove_reference_t<B>> Y;
    typedef std::conditional_t<
        std::is_same_v<X, Y>, X,
        std::conditional_t<
            sw_is_vector<X>, X,
            std::conditional_t<
                sw_is_vector<Y>, Y,
                std::conditional_t<
                    std::is_same_v<X, double> && sw_is_float_scalar<Y>, Y,
                    std::conditional_t<std::is_same_v<Y, double> && sw_is_float_scalar<X>, X,
                                       std::conditional_t<sw_is_float_scalar<X> && !sw_is_float_scalar<Y>, X,
                                                          std::conditional_t<sw_is_float_scalar<Y> &&
                                                                                 !sw_is_float_scalar<X>,
                                                                             Y, std::common_type_t<X, Y>>>>>>>>
        type;
};
template <class A, class B> using sw_meet_t = typename sw_meet<A, B>::type;
template <class A, class B, class C> using sw_meet3_t = sw_meet_t<sw_meet_t<A, B>, C>;
template <class T, class U> inline T sw_to(const U &u) {
    if constexpr (std::is_same_v<T, U>) return u;
    else if constexpr (sw_is_vector<T> && !sw_is_vector<U>) return sw_mk<T>(u);
    else if constexpr (sw_is_vector<T> && sw_is_vector<U>) return __builtin_convertvector(u, T);
    else return static_cast<T>(u);
}

#define SW_REQUIRE(cond) std::enable_if_t<(cond), int> = 0

// ---- float functions of one argument ----
#define SW_FLOAT_UNARY(NAME, EXPR)                                                                                 \
    template <class T, SW_REQUIRE(sw_is_float_type<T>)> inline T NAME(T x) {                                      \
        return sw_map(x, [](auto e) {                                                                              \
            float v = (float)e;                                                                                    \
            return (decltype(e))(EXPR);                                                                            \
        });                                                                                                        \
    }
SW_FLOAT_UNARY(exp, __builtin_expf(v))
SW_FLOAT_UNARY(exp2, __builtin_exp2f(v))
SW_FLOAT_UNARY(exp10, __builtin_powf(10.0f, v))
SW_FLOAT_UNARY(log, __builtin_logf(v))
SW_FLOAT_UNARY(log2, __builtin_log2f(v))
SW_FLOAT_UNARY(log10, __builtin_log10f(v))
SW_FLOAT_UNARY(sqrt, __builtin_sqrtf(v))
SW_FLOAT_UNARY(rsqrt, 1.0f / __builtin_sqrtf(v))
SW_FLOAT_UNARY(sin, __builtin_sinf(v))
SW_FLOAT_UNARY(cos, __builtin_cosf(v))
SW_FLOAT_UNARY(tan, __builtin_tanf(v))
SW_FLOAT_UNARY(asin, __builtin_asinf(v))
SW_FLOAT_UNARY(acos, __builtin_acosf(v))
SW_FLOAT_UNARY(atan, __builtin_atanf(v))
SW_FLOAT_UNARY(sinh, __builtin_sinhf(v))
SW_FLOAT_UNARY(cosh, __builtin_coshf(v))
SW_FLOAT_UNARY(tanh, __builtin_tanhf(v))
SW_FLOAT_UNARY(asinh, __builtin_asinhf(v))
SW_FLOAT_UNARY(acosh, __builtin_acoshf(v))
SW_FLOAT_UNARY(atanh, __builtin_atanhf(v))
SW_FLOAT_UNARY(sinpi, __builtin_sinf(v * 3.14159265358979323846f))
SW_FLOAT_UNARY(cospi, __builtin_cosf(v * 3.14159265358979323846f))
SW_FLOAT_UNARY(floor, __builtin_floorf(v))
SW_FLOAT_UNARY(ceil, __builtin_ceilf(v))
SW_FLOAT_UNARY(round, __builtin_roundf(v))
SW_FLOAT_UNARY(rint, __builtin_rintf(v))
SW_FLOAT_UNARY(trunc, __builtin_truncf(v))
SW_FLOAT_UNARY(fabs, __builtin_fabsf(v))
SW_FLOAT_UNARY(fract, __builtin_fminf(v - __builtin_floorf(v), 0x1.fffffep-1f))
SW_FLOAT_UNARY(saturate, __builtin_fminf(__builtin_fmaxf(v, 0.0f), 1.0f))
SW_FLOAT_UNARY(sign, v > 0.0f ? 1.0f : v < 0.0f ? -1.0f : v == v ? v : 0.0f)
SW_FLOAT_UNARY(tanpi, __builtin_tanf(v * 3.14159265358979323846f))
#undef SW_FLOAT_UNARY

// ---- float functions of two and three arguments ----
#define SW_FLOAT_BINARY(NAME, EXPR)                                                                                \
    template <class A, class B, class T = sw_meet_t<A, B>, SW_REQUIRE(sw_is_float_type<T>)>                        \
    inline T NAME(A a, B b) {                                                                                      \
        return sw_map2(sw_to<T>(a), sw_to<T>(b), [](auto e, auto f) {                                              \
            float x = (float)e, y = (float)f;                                                                      \
            return (decltype(e))(EXPR);                                                                            \
        });                                                                                                        \
    }
SW_FLOAT_BINARY(pow, __builtin_powf(x, y))
SW_FLOAT_BINARY(powr, __builtin_powf(x, y))
SW_FLOAT_BINARY(atan2, __builtin_atan2f(x, y))
SW_FLOAT_BINARY(fmod, __builtin_fmodf(x, y))
SW_FLOAT_BINARY(fmin, __builtin_fminf(x, y))
SW_FLOAT_BINARY(fmax, __builtin_fmaxf(x, y))
SW_FLOAT_BINARY(copysign, __builtin_copysignf(x, y))
SW_FLOAT_BINARY(step, y < x ? 0.0f : 1.0f)
SW_FLOAT_BINARY(fdim, __builtin_fdimf(x, y))
SW_FLOAT_BINARY(divide, x / y)
#undef SW_FLOAT_BINARY

template <class A, class B, class C, class T = sw_meet3_t<A, B, C>, SW_REQUIRE(sw_is_float_type<T>)>
inline T fma(A a, B b, C c) {
    return sw_map3(sw_to<T>(a), sw_to<T>(b), sw_to<T>(c),
                   [](auto x, auto y, auto z) { return (decltype(x))__builtin_fmaf((float)x, (float)y, (float)z); });
}
template <class A, class B, class C, class T = sw_meet3_t<A, B, C>, SW_REQUIRE(sw_is_float_type<T>)>
inline T mix(A a, B b, C t) {
    return sw_map3(sw_to<T>(a), sw_to<T>(b), sw_to<T>(t), [](auto x, auto y, auto s) {
        float fx = (float)x;
        return (decltype(x))(fx + ((float)y - fx) * (float)s);
    });
}
template <class A, class B, class C, class T = sw_meet3_t<A, B, C>, SW_REQUIRE(sw_is_float_type<T>)>
inline T smoothstep(A e0, B e1, C x) {
    return sw_map3(sw_to<T>(e0), sw_to<T>(e1), sw_to<T>(x), [](auto a, auto b, auto v) {
        float t = ((float)v - (float)a) / ((float)b - (float)a);
        t = __builtin_fminf(__builtin_fmaxf(t, 0.0f), 1.0f);
        return (decltype(a))(t * t * (3.0f - 2.0f * t));
    });
}
template <class T, SW_REQUIRE(sw_is_float_type<T>)> inline T ldexp(T x, int e) {
    return sw_map(x, [e](auto v) { return (decltype(v))__builtin_ldexpf((float)v, e); });
}
template <class T, class I, SW_REQUIRE(sw_is_float_type<T> && sw_is_vector<I>)> inline T ldexp(T x, I e) {
    T r;
    for (int i = 0; i < sw_vec_size<T>; i++) r[i] = (sw_elem_t<T>)__builtin_ldexpf((float)x[i], (int)e[i]);
    return r;
}
// frexp(x, exp): mantissa in [0.5, 1) and the exponent through a reference.
template <class T, class I, SW_REQUIRE(sw_is_float_type<T>)> inline T frexp(T x, I &e) {
    if constexpr (sw_is_vector<T>) {
        T r;
        for (int i = 0; i < sw_vec_size<T>; i++) {
            int k;
            r[i] = (sw_elem_t<T>)__builtin_frexpf((float)x[i], &k);
            e[i] = k;
        }
        return r;
    } else {
        int k;
        T r = (T)__builtin_frexpf((float)x, &k);
        e = k;
        return r;
    }
}
// modf(x, intpart): the fractional part, the integral part through a reference.
template <class T, SW_REQUIRE(sw_is_float_type<T>)> inline T modf(T x, T &ip) {
    ip = trunc(x);
    return sw_map(x, [](auto v) {
        float i;
        return (decltype(v))__builtin_modff((float)v, &i);
    });
}
// sincos(x, cosval): sin(x), and cos(x) through a reference.
template <class T, SW_REQUIRE(sw_is_float_type<T>)> inline T sincos(T x, T &c) {
    c = cos(x);
    return sin(x);
}
template <class A, class B, class T = sw_meet_t<A, B>, SW_REQUIRE(sw_is_float_type<T>)> inline T nextafter(A a, B b) {
    return sw_map2(sw_to<T>(a), sw_to<T>(b), [](auto x, auto y) {
        typedef decltype(x) E;
        if constexpr (std::is_same_v<E, float>) {
            return __builtin_nextafterf(x, y);
        } else {
            // half / bfloat: step the 16-bit pattern
            if (x != x || y != y) return (E)(x + y);
            if (x == y) return y;
            uint16_t u = __builtin_bit_cast(uint16_t, x);
            if ((u & 0x7fffu) == 0) u = (uint16_t)(((y < x) ? 0x8000u : 0u) | 1u);
            else if ((x < y) == !(u & 0x8000u)) u++;
            else u--;
            return __builtin_bit_cast(E, u);
        }
    });
}

// ---- abs/min/max/clamp for float and integer types ----
template <class T, SW_REQUIRE(sw_is_arith_type<T>)> inline T abs(T x) {
    return sw_map(x, [](auto e) { return e < 0 ? (decltype(e))-e : e; });
}
template <class A, class B, class T = sw_meet_t<A, B>, SW_REQUIRE(sw_is_arith_type<T>)> inline T min(A a, B b) {
    if constexpr (sw_is_float_type<T>) return fmin(sw_to<T>(a), sw_to<T>(b));
    else return sw_map2(sw_to<T>(a), sw_to<T>(b), [](auto x, auto y) { return y < x ? y : x; });
}
template <class A, class B, class T = sw_meet_t<A, B>, SW_REQUIRE(sw_is_arith_type<T>)> inline T max(A a, B b) {
    if constexpr (sw_is_float_type<T>) return fmax(sw_to<T>(a), sw_to<T>(b));
    else return sw_map2(sw_to<T>(a), sw_to<T>(b), [](auto x, auto y) { return x < y ? y : x; });
}
template <class A, class B, class C, class T = sw_meet3_t<A, B, C>, SW_REQUIRE(sw_is_arith_type<T>)>
inline T clamp(A x, B lo, C hi) {
    return min(max(sw_to<T>(x), sw_to<T>(lo)), sw_to<T>(hi));
}
template <class A, class B, class C, class T = sw_meet3_t<A, B, C>, SW_REQUIRE(sw_is_float_type<T>)>
inline T fmin3(A a, B b, C c) {
    return fmin(fmin(sw_to<T>(a), sw_to<T>(b)), sw_to<T>(c));
}
template <class A, class B, class C, class T = sw_meet3_t<A, B, C>, SW_REQUIRE(sw_is_float_type<T>)>
inline T fmax3(A a, B b, C c) {
    return fmax(fmax(sw_to<T>(a), sw_to<T>(b)), sw_to<T>(c));
}
template <class A, class B, class C, class T = sw_meet3_t<A, B, C>, SW_REQUIRE(sw_is_float_type<T>)>
inline T fmedian3(A a, B b, C c) {
    T x = sw_to<T>(a), y = sw_to<T>(b), z = sw_to<T>(c);
    return fmax(fmin(x, y), fmin(fmax(x, y), z));
}
template <class T, SW_REQUIRE(sw_is_arith_type<T>)> inline T min3(T a, T b, T c) { return min(min(a, b), c); }
template <class T, SW_REQUIRE(sw_is_arith_type<T>)> inline T max3(T a, T b, T c) { return max(max(a, b), c); }
template <class T, SW_REQUIRE(sw_is_arith_type<T>)> inline T median3(T a, T b, T c) {
    return max(min(a, b), min(max(a, b), c));
}

// ---- integer functions ----
template <class T, SW_REQUIRE(sw_is_int_type<T>)> inline T popcount(T x) {
    return sw_map(x, [](auto e) {
        typedef std::make_unsigned_t<decltype(e)> U;
        return (decltype(e))__builtin_popcountll((unsigned long long)(U)e);
    });
}
template <class T, SW_REQUIRE(sw_is_int_type<T>)> inline T clz(T x) {
    return sw_map(x, [](auto e) {
        typedef std::make_unsigned_t<decltype(e)> U;
        constexpr int bits = 8 * sizeof(U);
        U u = (U)e;
        return (decltype(e))(u == 0 ? bits : __builtin_clzll((unsigned long long)u) - (64 - bits));
    });
}
template <class T, SW_REQUIRE(sw_is_int_type<T>)> inline T ctz(T x) {
    return sw_map(x, [](auto e) {
        typedef std::make_unsigned_t<decltype(e)> U;
        constexpr int bits = 8 * sizeof(U);
        U u = (U)e;
        return (decltype(e))(u == 0 ? bits : __builtin_ctzll((unsigned long long)u));
    });
}
template <class T, SW_REQUIRE(sw_is_int_type<T>)> inline T mulhi(T a, T b) {
    return sw_map2(a, b, [](auto x, auto y) {
        typedef decltype(x) E;
        if constexpr (sizeof(E) == 8) {
            typedef std::conditional_t<std::is_signed_v<E>, __int128, unsigned __int128> W;
            return (E)(((W)x * (W)y) >> 64);
        } else {
            typedef std::conditional_t<std::is_signed_v<E>, long long, unsigned long long> W;
            return (E)(((W)x * (W)y) >> (8 * sizeof(E)));
        }
    });
}
template <class T, SW_REQUIRE(sw_is_int_type<T>)> inline T madhi(T a, T b, T c) { return mulhi(a, b) + c; }
// extract_bits: `bits` bits from `offset`, sign-extended for signed types; 0 bits give 0.
template <class T, SW_REQUIRE(sw_is_int_type<T>)> inline T extract_bits(T x, uint offset, uint bits) {
    return sw_map(x, [offset, bits](auto e) {
        typedef decltype(e) E;
        typedef std::make_unsigned_t<E> U;
        constexpr uint W = 8 * sizeof(U);
        if (bits == 0) return E(0);
        U u = (U)((U)e >> offset);
        if (bits < W) u &= (U)(((U)1 << bits) - 1);
        if constexpr (std::is_signed_v<E>) {
            if (bits < W && (u >> (bits - 1)) & 1u) u |= (U)(~(U)0 << bits);
        }
        return (E)u;
    });
}
// insert_bits: `base` with bits [offset, offset + bits) replaced by the low bits of `insert`.
template <class T, SW_REQUIRE(sw_is_int_type<T>)> inline T insert_bits(T base, T insert, uint offset, uint bits) {
    return sw_map2(base, insert, [offset, bits](auto b, auto i) {
        typedef decltype(b) E;
        typedef std::make_unsigned_t<E> U;
        constexpr uint W = 8 * sizeof(U);
        if (bits == 0) return b;
        U mask = bits < W ? (U)(((U)1 << bits) - 1) : (U)~(U)0;
        mask = (U)(mask << offset);
        return (E)(((U)b & (U)~mask) | ((U)((U)i << offset) & mask));
    });
}
template <class T, SW_REQUIRE(sw_is_int_type<T>)> inline T reverse_bits(T x) {
    return sw_map(x, [](auto e) {
        typedef std::make_unsigned_t<decltype(e)> U;
        U u = (U)e, r = 0;
        for (unsigned i = 0; i < 8 * sizeof(U); i++) r |= (U)(((u >> i) & 1u) << (8 * sizeof(U) - 1 - i));
        return (decltype(e))r;
    });
}
template <class T, SW_REQUIRE(sw_is_int_type<T>)> inline T absdiff(T a, T b) {
    return sw_map2(a, b, [](auto x, auto y) { return (decltype(x))(x > y ? x - y : y - x); });
}

// ---- geometric ----
template <class T, SW_REQUIRE(sw_is_float_type<T> && sw_is_vector<T>)> inline sw_elem_t<T> dot(T a, T b) {
    float s = 0.0f;
    for (int i = 0; i < sw_vec_size<T>; i++) s += (float)a[i] * (float)b[i];
    return (sw_elem_t<T>)s;
}
template <class T, SW_REQUIRE(sw_is_float_type<T>)> inline sw_elem_t<T> length_squared(T a) {
    if constexpr (sw_is_vector<T>) return dot(a, a);
    else return a * a;
}
template <class T, SW_REQUIRE(sw_is_float_type<T>)> inline sw_elem_t<T> length(T a) {
    return (sw_elem_t<T>)__builtin_sqrtf((float)length_squared(a));
}
template <class T, SW_REQUIRE(sw_is_float_type<T>)> inline sw_elem_t<T> distance(T a, T b) { return length(a - b); }
template <class T, SW_REQUIRE(sw_is_float_type<T>)> inline T normalize(T a) {
    float inv = 1.0f / __builtin_sqrtf((float)length_squared(a));
    return sw_map(a, [inv](auto e) { return (decltype(e))((float)e * inv); });
}
template <class T, SW_REQUIRE(sw_is_float_type<T> && sw_vec_size<T> == 3)> inline T cross(T a, T b) {
    return sw_mk<T>(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}

// ---- relational ----
template <class T, SW_REQUIRE(sw_is_float_type<T>)> inline auto isnan(T x) {
    if constexpr (sw_is_vector<T>) return x != x;
    else return x != x;
}
template <class T, SW_REQUIRE(sw_is_float_type<T>)> inline auto isinf(T x) {
    if constexpr (sw_is_vector<T>) {
        vec<bool, sw_vec_size<T>> r;
        for (int i = 0; i < sw_vec_size<T>; i++) r[i] = __builtin_isinf((float)x[i]);
        return r;
    } else {
        return (bool)__builtin_isinf((float)x);
    }
}
template <class T, SW_REQUIRE(sw_is_float_type<T>)> inline auto isfinite(T x) {
    if constexpr (sw_is_vector<T>) {
        vec<bool, sw_vec_size<T>> r;
        for (int i = 0; i < sw_vec_size<T>; i++) r[i] = __builtin_isfinite((float)x[i]);
        return r;
    } else {
        return (bool)__builtin_isfinite((float)x);
    }
}
template <class T, SW_REQUIRE(sw_is_float_type<T>)> inline auto signbit(T x) {
    if constexpr (sw_is_vector<T>) {
        vec<bool, sw_vec_size<T>> r;
        for (int i = 0; i < sw_vec_size<T>; i++) r[i] = __builtin_signbit((float)x[i]);
        return r;
    } else {
        return (bool)__builtin_signbit((float)x);
    }
}
inline bool all(bool b) { return b; }
inline bool any(bool b) { return b; }
template <class M, SW_REQUIRE(sw_is_vector<M>)> inline bool all(M m) {
    for (int i = 0; i < sw_vec_size<M>; i++)
        if (!m[i]) return false;
    return true;
}
template <class M, SW_REQUIRE(sw_is_vector<M>)> inline bool any(M m) {
    for (int i = 0; i < sw_vec_size<M>; i++)
        if (m[i]) return true;
    return false;
}
// select(a, b, c): c ? b : a per component; c is bool, a bool vector or a comparison mask.
template <class A, class B, class C, class T = sw_meet_t<A, B>> inline T select(A a, B b, C c) {
    T x = sw_to<T>(a), y = sw_to<T>(b);
    if constexpr (sw_is_vector<T> && sw_is_vector<C>) {
        T r;
        for (int i = 0; i < sw_vec_size<T>; i++) r[i] = c[i] ? y[i] : x[i];
        return r;
    } else {
        return c ? y : x;
    }
}

// ---- fast:: and precise:: (same functions: see the accuracy note above) ----
#define SW_MATH_NAMES(X)                                                                                           \
    X(exp) X(exp2) X(exp10) X(log) X(log2) X(log10) X(sqrt) X(rsqrt) X(sin) X(cos) X(tan) X(asin) X(acos)       \
    X(atan) X(sinh) X(cosh) X(tanh) X(asinh) X(acosh) X(atanh) X(sinpi) X(cospi) X(floor) X(ceil) X(round)       \
    X(rint) X(trunc) X(fabs) X(fract) X(saturate) X(sign) X(pow) X(powr) X(atan2) X(fmod) X(fmin) X(fmax)        \
    X(copysign) X(step) X(fdim) X(divide) X(fma) X(mix) X(smoothstep) X(ldexp) X(abs) X(min) X(max) X(clamp)     \
    X(tanpi) X(frexp) X(modf) X(sincos) X(nextafter) X(min3) X(max3) X(median3) X(fmin3) X(fmax3) X(fmedian3) X(isnan) X(isinf) X(isfinite)    \
    X(dot) X(length) X(length_squared) X(distance) X(normalize) X(cross)
#define SW_USING(name) using metal::name;
namespace fast {
SW_MATH_NAMES(SW_USING)
}
namespace precise {
SW_MATH_NAMES(SW_USING)
}
#undef SW_USING
#undef SW_MATH_NAMES

// ---- pack and unpack functions: normalized integers in a uint (x in the low bits) ----
// As the spec's conversion rules: unorm n bits -> c / (2^n - 1); snorm -> max(c / (2^(n-1) - 1), -1);
// float -> unorm: clamp to [0, 1] (NaN: 0), scale, round to nearest even; snorm likewise in [-1, 1].
inline uint sw_to_unorm(float f, float scale) {
    return (uint)__builtin_rintf(__builtin_fminf(__builtin_fmaxf(f, 0.0f), 1.0f) * scale);
}
inline uint sw_to_snorm(float f, float scale, uint mask) {
    if (f != f) return 0;   // NaN
    return (uint)(int)__builtin_rintf(__builtin_fminf(__builtin_fmaxf(f, -1.0f), 1.0f) * scale) & mask;
}
template <int B, int N> inline vec<float, N> sw_unpack_unorm(uint v) {
    vec<float, N> r;
    for (int i = 0; i < N; i++) r[i] = (float)((v >> (B * i)) & ((1u << B) - 1)) / (float)((1u << B) - 1);
    return r;
}
template <int B, int N> inline vec<float, N> sw_unpack_snorm(uint v) {
    vec<float, N> r;
    for (int i = 0; i < N; i++) {
        int c = (int)(v << (32 - B * (i + 1))) >> (32 - B);   // the field, sign-extended
        r[i] = __builtin_fmaxf((float)c / (float)((1 << (B - 1)) - 1), -1.0f);
    }
    return r;
}
template <int B, int N, class V> inline uint sw_pack_unorm(V v) {
    uint r = 0;
    for (int i = 0; i < N; i++) r |= sw_to_unorm((float)v[i], (float)((1u << B) - 1)) << (B * i);
    return r;
}
template <int B, int N, class V> inline uint sw_pack_snorm(V v) {
    uint r = 0;
    for (int i = 0; i < N; i++) r |= sw_to_snorm((float)v[i], (float)((1 << (B - 1)) - 1), (1u << B) - 1) << (B * i);
    return r;
}
inline float4 unpack_unorm4x8_to_float(uint v) { return sw_unpack_unorm<8, 4>(v); }
inline float4 unpack_snorm4x8_to_float(uint v) { return sw_unpack_snorm<8, 4>(v); }
inline half4 unpack_unorm4x8_to_half(uint v) { return sw_convert<half4>(sw_unpack_unorm<8, 4>(v)); }
inline half4 unpack_snorm4x8_to_half(uint v) { return sw_convert<half4>(sw_unpack_snorm<8, 4>(v)); }
inline float2 unpack_unorm2x16_to_float(uint v) { return sw_unpack_unorm<16, 2>(v); }
inline float2 unpack_snorm2x16_to_float(uint v) { return sw_unpack_snorm<16, 2>(v); }
inline half2 unpack_unorm2x16_to_half(uint v) { return sw_convert<half2>(sw_unpack_unorm<16, 2>(v)); }
inline half2 unpack_snorm2x16_to_half(uint v) { return sw_convert<half2>(sw_unpack_snorm<16, 2>(v)); }
inline uint pack_float_to_unorm4x8(float4 v) { return sw_pack_unorm<8, 4>(v); }
inline uint pack_float_to_snorm4x8(float4 v) { return sw_pack_snorm<8, 4>(v); }
inline uint pack_half_to_unorm4x8(half4 v) { return sw_pack_unorm<8, 4>(v); }
inline uint pack_half_to_snorm4x8(half4 v) { return sw_pack_snorm<8, 4>(v); }
inline uint pack_float_to_unorm2x16(float2 v) { return sw_pack_unorm<16, 2>(v); }
inline uint pack_float_to_snorm2x16(float2 v) { return sw_pack_snorm<16, 2>(v); }
inline uint pack_half_to_unorm2x16(half2 v) { return sw_pack_unorm<16, 2>(v); }
inline uint pack_half_to_snorm2x16(half2 v) { return sw_pack_snorm<16, 2>(v); }
// 10a2 (x, y, z: 10 bits, w: 2) and 565 (x: 5 bits, y: 6, z: 5): fields of unequal
// widths, x in the low bits as in the packs above; the same conversion rules.
inline float sw_unorm_field(uint v, int shift, int bits) {
    return (float)((v >> shift) & ((1u << bits) - 1)) / (float)((1u << bits) - 1);
}
inline float4 unpack_unorm10a2_to_float(uint v) {
    return float4{sw_unorm_field(v, 0, 10), sw_unorm_field(v, 10, 10), sw_unorm_field(v, 20, 10),
                  sw_unorm_field(v, 30, 2)};
}
inline half4 unpack_unorm10a2_to_half(uint v) { return sw_convert<half4>(unpack_unorm10a2_to_float(v)); }
inline float3 unpack_unorm565_to_float(ushort v) {
    return float3{sw_unorm_field(v, 0, 5), sw_unorm_field(v, 5, 6), sw_unorm_field(v, 11, 5)};
}
inline half3 unpack_unorm565_to_half(ushort v) { return sw_convert<half3>(unpack_unorm565_to_float(v)); }
template <class V> inline uint sw_pack_10a2(V v) {
    return sw_to_unorm((float)v[0], 1023.0f) | sw_to_unorm((float)v[1], 1023.0f) << 10 |
           sw_to_unorm((float)v[2], 1023.0f) << 20 | sw_to_unorm((float)v[3], 3.0f) << 30;
}
template <class V> inline ushort sw_pack_565(V v) {
    return (ushort)(sw_to_unorm((float)v[0], 31.0f) | sw_to_unorm((float)v[1], 63.0f) << 5 |
                    sw_to_unorm((float)v[2], 31.0f) << 11);
}
inline uint pack_float_to_unorm10a2(float4 v) { return sw_pack_10a2(v); }
inline uint pack_half_to_unorm10a2(half4 v) { return sw_pack_10a2(v); }
inline ushort pack_float_to_unorm565(float3 v) { return sw_pack_565(v); }
inline ushort pack_half_to_unorm565(half3 v) { return sw_pack_565(v); }

} // namespace metal

#endif
