// metal_stdlib.h — the MSL standard library in C++17 for the software Metal device.
//
// Every generated kernel translation unit includes this first (compiled with
// clang++ >= 17, -std=c++17).  Design notes:
// - Vector types are clang ext_vector_type typedefs: swizzles (v.xy, v.zyx = ...),
//   component-wise operators and scalar splats come from the compiler.  C++ has no
//   multi-argument functional cast for them, so the front end rewrites MSL's
//   constructor calls `float4(a.xy, 0, 1)` into `::metal::sw_mk<float4>(...)`
//   (see msl_front.c); a one-argument `float4(x)` is rewritten too, so that vector
//   to vector conversions convert values (a plain cast would reinterpret bits).
// - bool vectors are ext vectors of bool: indexing works, swizzles do not, and
//   comparisons of vectors yield integer masks (int4 for float4), as in OpenCL C.
//   select/all/any accept both.
// - half = _Float16 and bfloat = __bf16; every operation rounds to the type
//   (the compile step passes -ffloat16/-fbfloat16-excess-precision=none).
// - Address spaces are macros defined at the end: device/thread/threadgroup vanish,
//   constant becomes const.  Function-scope threadgroup variables are rewritten by
//   the front end into sw_rt_tg_alloc() references.
// - Functions that synchronise (barriers, simd_*) take the .metal line through a
//   defaulted `int line = __builtin_LINE()` argument; line markers make it a .metal line.
#ifndef GDN_SW_METAL_STDLIB_H
#define GDN_SW_METAL_STDLIB_H

#include <limits>
#include <stddef.h>
#include <stdint.h>
#include <type_traits>

#include "sw_abi.h"

#define __METAL_VERSION__ 310
#define __HAVE_BFLOAT__ 1
#define __HAVE_SIMDGROUP_MATRIX__ 1

// libgcc 12 has no __truncsfbf2/__truncdfbf2, which clang calls for every
// float -> __bf16 conversion on x86-64.  Round to nearest even; NaN stays a quiet NaN
// (same rule as src/core/dtype.h's bf16_from_f32).
extern "C" __attribute__((visibility("hidden"), weak)) __bf16 __truncsfbf2(float f) {
    uint32_t u;
    __builtin_memcpy(&u, &f, 4);
    uint16_t h;
    if ((u & 0x7fffffffu) > 0x7f800000u) h = (uint16_t)((u >> 16) | 0x40u);
    else h = (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
    __bf16 r;
    __builtin_memcpy(&r, &h, 2);
    return r;
}

// double -> bf16 must round once: double -> float (RNE) -> bf16 could round twice.
// An inexact float is replaced by its toward-zero neighbour with the lowest bit
// set (a sticky bit), which float->bf16 then rounds exactly like the double would.
extern "C" __attribute__((visibility("hidden"), weak)) __bf16 __truncdfbf2(double d) {
    float f = (float)d;
    if (d == d && (double)f != d) {
        uint32_t b;
        __builtin_memcpy(&b, &f, 4);
        if (__builtin_fabs((double)f) > __builtin_fabs(d)) b -= 1;   // toward zero (f may have been inf)
        b |= 1u;
        __builtin_memcpy(&f, &b, 4);
    }
    return __truncsfbf2(f);
}

namespace metal {

typedef unsigned char uchar;
typedef unsigned short ushort;
typedef unsigned int uint;
typedef unsigned long ulong;
typedef _Float16 half;
typedef __bf16 bfloat;
typedef __bf16 bfloat16_t;
typedef size_t size_t;
typedef ptrdiff_t ptrdiff_t;

#define SW_DEFINE_VECTORS(T, NAME)                                                                                 \
    typedef T NAME##2 __attribute__((ext_vector_type(2)));                                                         \
    typedef T NAME##3 __attribute__((ext_vector_type(3)));                                                         \
    typedef T NAME##4 __attribute__((ext_vector_type(4)));
SW_DEFINE_VECTORS(float, float)
SW_DEFINE_VECTORS(half, half)
SW_DEFINE_VECTORS(bfloat, bfloat)
SW_DEFINE_VECTORS(int, int)
SW_DEFINE_VECTORS(uint, uint)
SW_DEFINE_VECTORS(short, short)
SW_DEFINE_VECTORS(ushort, ushort)
SW_DEFINE_VECTORS(char, char)
SW_DEFINE_VECTORS(uchar, uchar)
SW_DEFINE_VECTORS(long, long)
SW_DEFINE_VECTORS(ulong, ulong)
SW_DEFINE_VECTORS(bool, bool)
#undef SW_DEFINE_VECTORS

template <class T, int N> using vec = T __attribute__((ext_vector_type(N)));

// ---- traits ----
template <class T> struct sw_vec_traits {
    static constexpr int size = 1;
    static constexpr bool is_vector = false;
    typedef T elem;
};
template <class T, int N> struct sw_vec_traits<T __attribute__((ext_vector_type(N)))> {
    static constexpr int size = N;
    static constexpr bool is_vector = true;
    typedef T elem;
};
template <class T> using sw_elem_t = typename sw_vec_traits<std::remove_cv_t<std::remove_reference_t<T>>>::elem;
template <class T> constexpr int sw_vec_size = sw_vec_traits<std::remove_cv_t<std::remove_reference_t<T>>>::size;
template <class T>
constexpr bool sw_is_vector = sw_vec_traits<std::remove_cv_t<std::remove_reference_t<T>>>::is_vector;

template <class T>
constexpr bool sw_is_float_scalar = std::is_same_v<T, float> || std::is_same_v<T, half> ||
                                    std::is_same_v<T, bfloat> || std::is_same_v<T, double>;
template <class T> constexpr bool sw_is_int_scalar = std::is_integral_v<T> && !std::is_same_v<T, bool>;
template <class T> constexpr bool sw_is_float_type = sw_is_float_scalar<sw_elem_t<T>>;
template <class T> constexpr bool sw_is_int_type = sw_is_int_scalar<sw_elem_t<T>>;
template <class T> constexpr bool sw_is_arith_type = sw_is_float_type<T> || sw_is_int_type<T>;

// ---- packed vectors: element arrays without vector alignment (packed_float3 is 12 bytes) ----
template <class T, int N> struct sw_packed;
template <class T> struct sw_packed<T, 2> {
    union {
        T elems[2];
        struct { T x, y; };
    };
};
template <class T> struct sw_packed<T, 3> {
    union {
        T elems[3];
        struct { T x, y, z; };
    };
};
template <class T> struct sw_packed<T, 4> {
    union {
        T elems[4];
        struct { T x, y, z, w; };
    };
};
template <class T, int N> struct packed_vec : sw_packed<T, N> {
    packed_vec() = default;
    packed_vec(vec<T, N> v) {
        for (int i = 0; i < N; i++) this->elems[i] = v[i];
    }
    template <class U, class = std::enable_if_t<std::is_arithmetic_v<U> || sw_is_float_scalar<U>>>
    explicit packed_vec(U s) {
        for (int i = 0; i < N; i++) this->elems[i] = T(s);
    }
    operator vec<T, N>() const {
        vec<T, N> v;
        for (int i = 0; i < N; i++) v[i] = this->elems[i];
        return v;
    }
    T &operator[](int i) { return this->elems[i]; }
    const T &operator[](int i) const { return this->elems[i]; }
};
template <class T, int N> struct sw_vec_traits<packed_vec<T, N>> {
    static constexpr int size = N;
    static constexpr bool is_vector = true;
    typedef T elem;
};
#define SW_DEFINE_PACKED(T, NAME)                                                                                  \
    typedef packed_vec<T, 2> packed_##NAME##2;                                                                     \
    typedef packed_vec<T, 3> packed_##NAME##3;                                                                     \
    typedef packed_vec<T, 4> packed_##NAME##4;
SW_DEFINE_PACKED(float, float)
SW_DEFINE_PACKED(half, half)
SW_DEFINE_PACKED(bfloat, bfloat)
SW_DEFINE_PACKED(int, int)
SW_DEFINE_PACKED(uint, uint)
SW_DEFINE_PACKED(short, short)
SW_DEFINE_PACKED(ushort, ushort)
SW_DEFINE_PACKED(char, char)
SW_DEFINE_PACKED(uchar, uchar)
#undef SW_DEFINE_PACKED

// ---- MSL constructor syntax: float4(x), float4(v.xy, 0, 1), float2(half2 v) ----
template <class E, class A> inline void sw_mk_put(E *out, int &k, const A &a) {
    if constexpr (sw_is_vector<A>) {
        for (int i = 0; i < sw_vec_size<A>; i++) out[k++] = static_cast<E>(a[i]);
    } else {
        out[k++] = static_cast<E>(a);
    }
}
template <class V, class A> inline V sw_mk_splat(const A &s) {
    V v;
    for (int i = 0; i < sw_vec_size<V>; i++) v[i] = static_cast<sw_elem_t<V>>(s);
    return v;
}
template <class V, class... A> inline V sw_mk(const A &...a) {
    typedef sw_elem_t<V> E;
    constexpr int N = sw_vec_size<V>;
    if constexpr (sizeof...(A) == 0) {
        return V{};
    } else if constexpr (sizeof...(A) == 1 && (!sw_is_vector<A> && ...)) {
        return sw_mk_splat<V>(a...);
    } else {
        static_assert(((sw_vec_size<A>) + ...) == N, "wrong number of components in a vector constructor");
        E tmp[N];
        int k = 0;
        (sw_mk_put(tmp, k, a), ...);
        V v;
        for (int i = 0; i < N; i++) v[i] = tmp[i];
        return v;
    }
}

// ---- as_type: bit reinterpretation between types of the same size ----
template <class To, class From> inline To as_type(const From &x) {
    static_assert(sizeof(To) == sizeof(From), "as_type needs types of the same size");
    To r;
    __builtin_memcpy(&r, &x, sizeof(To));
    return r;
}

// ---- std pieces MSL exposes in namespace metal ----
#define SW_USING_TRAIT(name) using std::name;
#define SW_USING_TRAIT_V(name) using std::name; using std::name##_v;
#define SW_USING_TRAIT_T(name) using std::name; using std::name##_t;
SW_USING_TRAIT_T(conditional)
SW_USING_TRAIT_T(enable_if)
SW_USING_TRAIT_T(make_signed)
SW_USING_TRAIT_T(make_unsigned)
SW_USING_TRAIT_T(remove_const)
SW_USING_TRAIT_T(remove_volatile)
SW_USING_TRAIT_T(remove_cv)
SW_USING_TRAIT_T(remove_reference)
SW_USING_TRAIT_T(remove_pointer)
SW_USING_TRAIT_T(remove_extent)
SW_USING_TRAIT_T(add_const)
SW_USING_TRAIT_T(add_pointer)
SW_USING_TRAIT_T(decay)
SW_USING_TRAIT_T(common_type)
SW_USING_TRAIT_T(underlying_type)
SW_USING_TRAIT_V(is_same)
SW_USING_TRAIT_V(is_const)
SW_USING_TRAIT_V(is_volatile)
SW_USING_TRAIT_V(is_pointer)
SW_USING_TRAIT_V(is_reference)
SW_USING_TRAIT_V(is_lvalue_reference)
SW_USING_TRAIT_V(is_array)
SW_USING_TRAIT_V(is_void)
SW_USING_TRAIT_V(is_enum)
SW_USING_TRAIT_V(is_class)
SW_USING_TRAIT_V(is_union)
SW_USING_TRAIT_V(is_integral)
SW_USING_TRAIT_V(is_convertible)
SW_USING_TRAIT_V(is_base_of)
SW_USING_TRAIT_V(is_trivially_copyable)
SW_USING_TRAIT(integral_constant)
SW_USING_TRAIT(bool_constant)
SW_USING_TRAIT(true_type)
SW_USING_TRAIT(false_type)
SW_USING_TRAIT(void_t)
SW_USING_TRAIT(declval)
SW_USING_TRAIT(extent)
#undef SW_USING_TRAIT
#undef SW_USING_TRAIT_V
#undef SW_USING_TRAIT_T
// MSL counts half and bfloat as floating point (std does not).
template <class T> struct is_floating_point : std::bool_constant<sw_is_float_scalar<std::remove_cv_t<T>>> {};
template <class T> constexpr bool is_floating_point_v = is_floating_point<T>::value;
template <class T>
struct is_arithmetic : std::bool_constant<std::is_arithmetic_v<T> || sw_is_float_scalar<std::remove_cv_t<T>>> {};
template <class T> constexpr bool is_arithmetic_v = is_arithmetic<T>::value;
template <class T> struct is_scalar : std::bool_constant<is_arithmetic_v<T> || std::is_pointer_v<T>> {};
template <class T> constexpr bool is_scalar_v = is_scalar<T>::value;
template <class T> struct is_signed : std::bool_constant<std::is_signed_v<T> || sw_is_float_scalar<std::remove_cv_t<T>>> {};
template <class T> constexpr bool is_signed_v = is_signed<T>::value;
template <class T> struct is_unsigned : std::is_unsigned<T> {};
template <class T> constexpr bool is_unsigned_v = is_unsigned<T>::value;
template <class T> struct is_vector : std::bool_constant<sw_is_vector<T>> {};
template <class T> constexpr bool is_vector_v = is_vector<T>::value;
template <class T> struct vec_elements : std::integral_constant<int, sw_vec_size<T>> {};
template <class T> struct numeric_limits : std::numeric_limits<T> {};
template <> struct numeric_limits<bfloat> {
    static constexpr bool is_specialized = true;
    static constexpr bool has_infinity = true;
    static constexpr bool has_quiet_NaN = true;
    static constexpr int digits = 8;
    static bfloat min() { return as_type<bfloat>((ushort)0x0080); }
    static bfloat max() { return as_type<bfloat>((ushort)0x7f7f); }
    static bfloat lowest() { return as_type<bfloat>((ushort)0xff7f); }
    static bfloat epsilon() { return as_type<bfloat>((ushort)0x3c00); }
    static bfloat infinity() { return as_type<bfloat>((ushort)0x7f80); }
    static bfloat quiet_NaN() { return as_type<bfloat>((ushort)0x7fc0); }
};
template <> struct numeric_limits<half> {
    static constexpr bool is_specialized = true;
    static constexpr bool has_infinity = true;
    static constexpr bool has_quiet_NaN = true;
    static constexpr int digits = 11;
    static constexpr half min() { return (half)0x1p-14; }
    static constexpr half max() { return (half)65504.0; }
    static constexpr half lowest() { return (half)-65504.0; }
    static constexpr half epsilon() { return (half)0x1p-10; }
    static half infinity() { return as_type<half>((ushort)0x7c00); }
    static half quiet_NaN() { return as_type<half>((ushort)0x7e00); }
};

} // namespace metal

using namespace metal;

// ---- kernel argument unpacking (used by the generated extern "C" entries) ----
namespace sw {

template <int I> struct buffer_arg_t {
    void *p;
    template <class A> A get() const {
        if constexpr (std::is_pointer_v<A>) return reinterpret_cast<A>(p);
        else if constexpr (std::is_reference_v<A>) return *reinterpret_cast<std::remove_reference_t<A> *>(p);
        else return *reinterpret_cast<const A *>(p);
    }
};
template <int I> inline buffer_arg_t<I> buffer_arg(const sw_thread_args *a) { return {a->buffers[I]}; }

template <int I> struct threadgroup_arg_t {
    void *p;
    template <class A> A get() const {
        if constexpr (std::is_pointer_v<A>) return reinterpret_cast<A>(p);
        else return *reinterpret_cast<std::remove_reference_t<A> *>(p);
    }
};
template <int I> inline threadgroup_arg_t<I> threadgroup_arg(const sw_thread_args *a) { return {a->tg_params[I]}; }

template <int ATTR> struct id_arg_t {
    const sw_ids *ids;
    const uint32_t *source() const {
        switch (ATTR) {
        case SW_ATTR_THREAD_POSITION_IN_GRID: return ids->thread_position_in_grid;
        case SW_ATTR_THREAD_POSITION_IN_THREADGROUP: return ids->thread_position_in_threadgroup;
        case SW_ATTR_THREADGROUP_POSITION_IN_GRID: return ids->threadgroup_position_in_grid;
        case SW_ATTR_THREADS_PER_THREADGROUP: return ids->threads_per_threadgroup;
        case SW_ATTR_THREADGROUPS_PER_GRID: return ids->threadgroups_per_grid;
        case SW_ATTR_THREADS_PER_GRID: return ids->threads_per_grid;
        case SW_ATTR_THREAD_INDEX_IN_THREADGROUP: return &ids->thread_index_in_threadgroup;
        case SW_ATTR_SIMDGROUP_INDEX_IN_THREADGROUP: return &ids->simdgroup_index_in_threadgroup;
        case SW_ATTR_THREAD_INDEX_IN_SIMDGROUP: return &ids->thread_index_in_simdgroup;
        case SW_ATTR_SIMDGROUPS_PER_THREADGROUP: return &ids->simdgroups_per_threadgroup;
        default: return &ids->threads_per_simdgroup;
        }
    }
    static constexpr int components() {
        return ATTR <= SW_ATTR_THREADS_PER_GRID ? 3 : 1;
    }
    template <class A> A get() const {
        typedef std::remove_cv_t<std::remove_reference_t<A>> V;
        const uint32_t *s = source();
        if constexpr (metal::sw_is_vector<V>) {
            V v = 0;
            for (int i = 0; i < metal::sw_vec_size<V> && i < components(); i++) v[i] = (metal::sw_elem_t<V>)s[i];
            return v;
        } else {
            return (V)s[0];
        }
    }
};
template <int ATTR> inline id_arg_t<ATTR> id_arg(const sw_thread_args *a) { return {a->ids}; }

template <class... A, class... P> inline void invoke(void (*f)(A...), P... p) {
    static_assert(sizeof...(A) == sizeof...(P), "kernel parameter count differs from its bindings");
    f(p.template get<A>()...);
}

} // namespace sw

#include "sw_math.h"
#include "sw_sync.h"

// Address spaces and other MSL words: defined last so that no library header
// above sees them.
#define device
#define thread
#define threadgroup
#define threadgroup_imageblock
#define constant const
#define ray_data
#define object_data
#define METAL_FUNC inline __attribute__((always_inline))
#define is_function_constant_defined(name) sw_fcdef_##name

#endif
