// sw_builtins.h — Apple's __metal_* builtins, which Metal's own headers are made
// of and which some kernels call directly (MLX's bf16_math.h defines bfloat math
// and simd functions through them), and the __METAL_*_MATH__ selectors they take.
// Part of the software device's prelude (included by metal_stdlib.h).
//
// Each builtin is the library function of the same name; the trailing fast-math
// selector is accepted and ignored (see sw_math.h: fast:: and precise:: are the
// same functions here).
#ifndef GDN_SW_BUILTINS_H
#define GDN_SW_BUILTINS_H

namespace metal {
enum sw_math_mode : int { sw_math_precise = 0, sw_math_fast = 1 };
}
#define __METAL_FAST_MATH__ (::metal::sw_math_fast)
#define __METAL_PRECISE_MATH__ (::metal::sw_math_precise)
#define __METAL_MAYBE_FAST_MATH__ (::metal::sw_math_fast)
#ifndef __METAL_MEMORY_SCOPE_DEVICE__
#define __METAL_MEMORY_SCOPE_DEVICE__ 2
#endif

#define SW_BUILTIN_1(NAME)                                                                                         \
    template <class T, class... M> inline auto __metal_##NAME(T x, M...) { return ::metal::NAME(x); }
#define SW_BUILTIN_2(NAME)                                                                                         \
    template <class T, class U, class... M> inline auto __metal_##NAME(T x, U y, M...) { return ::metal::NAME(x, y); }
#define SW_BUILTIN_3(NAME)                                                                                         \
    template <class T, class U, class V, class... M> inline auto __metal_##NAME(T x, U y, V z, M...) {              \
        return ::metal::NAME(x, y, z);                                                                             \
    }
SW_BUILTIN_1(fabs) SW_BUILTIN_1(acos) SW_BUILTIN_1(acosh) SW_BUILTIN_1(asin) SW_BUILTIN_1(asinh)
SW_BUILTIN_1(atan) SW_BUILTIN_1(atanh) SW_BUILTIN_1(ceil) SW_BUILTIN_1(cos) SW_BUILTIN_1(cosh)
SW_BUILTIN_1(cospi) SW_BUILTIN_1(exp) SW_BUILTIN_1(exp10) SW_BUILTIN_1(exp2) SW_BUILTIN_1(floor)
SW_BUILTIN_1(fract) SW_BUILTIN_1(log) SW_BUILTIN_1(log10) SW_BUILTIN_1(log2) SW_BUILTIN_1(rint)
SW_BUILTIN_1(round) SW_BUILTIN_1(rsqrt) SW_BUILTIN_1(sin) SW_BUILTIN_1(sinh) SW_BUILTIN_1(sinpi)
SW_BUILTIN_1(sqrt) SW_BUILTIN_1(tan) SW_BUILTIN_1(tanh) SW_BUILTIN_1(tanpi) SW_BUILTIN_1(trunc)
SW_BUILTIN_1(saturate) SW_BUILTIN_1(sign)
SW_BUILTIN_2(atan2) SW_BUILTIN_2(divide) SW_BUILTIN_2(fmax) SW_BUILTIN_2(fmin) SW_BUILTIN_2(fmod)
SW_BUILTIN_2(pow) SW_BUILTIN_2(powr) SW_BUILTIN_2(copysign) SW_BUILTIN_2(fdim) SW_BUILTIN_2(step)
SW_BUILTIN_3(fma) SW_BUILTIN_3(fmax3) SW_BUILTIN_3(fmin3) SW_BUILTIN_3(fmedian3)
#undef SW_BUILTIN_1
#undef SW_BUILTIN_2
#undef SW_BUILTIN_3
// No fast-math selector on these.
template <class T, class U> inline auto __metal_nextafter(T x, U y) { return ::metal::nextafter(x, y); }
template <class T, class I, class... M> inline auto __metal_ldexp(T x, I e, M...) { return ::metal::ldexp(x, e); }
template <class T, class I, class... M> inline auto __metal_frexp(T x, I *e, M...) { return ::metal::frexp(x, *e); }

// Simd-group builtins.  The line is that of the call in the header that wraps them.
#define SW_SIMD_BUILTIN_1(NAME)                                                                                    \
    template <class T> inline T __metal_##NAME(T x, int line = __builtin_LINE()) { return ::metal::NAME(x, line); }
#define SW_SIMD_BUILTIN_2(NAME)                                                                                    \
    template <class T, class I> inline T __metal_##NAME(T x, I i, int line = __builtin_LINE()) {                   \
        return ::metal::NAME(x, i, line);                                                                          \
    }
SW_SIMD_BUILTIN_1(simd_sum) SW_SIMD_BUILTIN_1(simd_product) SW_SIMD_BUILTIN_1(simd_max)
SW_SIMD_BUILTIN_1(simd_min) SW_SIMD_BUILTIN_1(simd_and) SW_SIMD_BUILTIN_1(simd_or) SW_SIMD_BUILTIN_1(simd_xor)
SW_SIMD_BUILTIN_1(simd_prefix_inclusive_sum) SW_SIMD_BUILTIN_1(simd_prefix_exclusive_sum)
SW_SIMD_BUILTIN_1(simd_prefix_inclusive_product) SW_SIMD_BUILTIN_1(simd_prefix_exclusive_product)
SW_SIMD_BUILTIN_1(simd_broadcast_first)
SW_SIMD_BUILTIN_2(simd_broadcast) SW_SIMD_BUILTIN_2(simd_shuffle) SW_SIMD_BUILTIN_2(simd_shuffle_xor)
SW_SIMD_BUILTIN_2(simd_shuffle_up) SW_SIMD_BUILTIN_2(simd_shuffle_down)
SW_SIMD_BUILTIN_2(simd_shuffle_rotate_up) SW_SIMD_BUILTIN_2(simd_shuffle_rotate_down)
#undef SW_SIMD_BUILTIN_1
#undef SW_SIMD_BUILTIN_2
template <class T, class D, class M>
inline T __metal_simd_shuffle_and_fill_down(T x, T fill, D delta, M modulo, int line = __builtin_LINE()) {
    return ::metal::simd_shuffle_and_fill_down(x, fill, delta, modulo, line);
}
template <class T, class D, class M>
inline T __metal_simd_shuffle_and_fill_up(T x, T fill, D delta, M modulo, int line = __builtin_LINE()) {
    return ::metal::simd_shuffle_and_fill_up(x, fill, delta, modulo, line);
}
// The argument only selects the result type (`__metal_get_simdgroup_size(ushort())`).
template <class T> inline T __metal_get_simdgroup_size(T) { return (T)SW_SIMD_WIDTH; }
template <class T> inline T __metal_get_thread_index_in_simdgroup(T) {
    return (T)sw_ids_here()->thread_index_in_simdgroup;
}
template <class T> inline T __metal_get_simdgroup_index_in_threadgroup(T) {
    return (T)sw_ids_here()->simdgroup_index_in_threadgroup;
}

#endif
