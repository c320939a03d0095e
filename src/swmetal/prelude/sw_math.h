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
SW_FLOAT_UNARY(erf, __builtin_erff(v))
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

} // namespace metal

#endif
