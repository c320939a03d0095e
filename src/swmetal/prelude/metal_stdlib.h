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
// - Address spaces are macros defined at the end, as clang's address-space type
//   qualifiers: device = opencl_global, threadgroup = opencl_local, constant =
//   const opencl_global_device, thread = none (the default address space).  So
//   `device float *` and `threadgroup float *` are distinct types to overload
//   resolution and templates, as in MSL.  The compile runs clang in SYCL device mode
//   (-fsycl-is-device), whose rules make the default address space a superset of
//   these: an object in device memory copies into a thread variable and calls
//   unqualified member functions, as MSL allows; on x86-64 and arm64 they all map to
//   LLVM address space 0, so the code and its instrumentation (tsan hooks) are
//   those of plain pointers.  Member functions qualified by an address space
//   (`operator bool() const device`) have no C++ spelling: the front end removes the
//   qualifier and keeps one of the variants that then coincide (msl_front.c).
//   Function-scope threadgroup variables are rewritten by the front end into
//   sw_rt_tg_alloc() references.
// - Functions that synchronise (barriers, simd_*) take the .metal line through a
//   defaulted `int line = __builtin_LINE()` argument; line markers make it a .metal line.
#ifndef GDN_SW_METAL_STDLIB_H
#define GDN_SW_METAL_STDLIB_H

#include <limits>
#include <stddef.h>
#include <stdint.h>
#include <tuple>
#include <type_traits>

#include "sw_abi.h"

#define __METAL_VERSION__ 310
#define __HAVE_BFLOAT__ 1
#define __HAVE_SIMDGROUP_MATRIX__ 1

// libgcc 12 has no __truncsfbf2/__truncdfbf2, which clang calls for every
// float -> __bf16 conversion on x86-64.  Round to nearest even; NaN stays a quiet NaN
// (same rule as src/core/dtype.h's bf16_from_f32).
#if SW_NUMERICS
// The numeric checks (--sw-checks numerics, full; src/swmetal/numerics.c): clang's
// integer and cast checks call these hidden __ubsan_handle_* (no sanitizer runtime),
// which hand the check's data, operands and the kernel's call site to the device.
// Kinds as numerics.h's SW_NUM_*.
extern "C" void sw_rt_num_check(int kind, const void *data, uintptr_t a, uintptr_t b, const void *ret);
#define SW_UB_HANDLER __attribute__((visibility("hidden"), noinline, no_sanitize("thread", "undefined")))
#define SW_UB_RET __builtin_return_address(0)
extern "C" {
SW_UB_HANDLER void __ubsan_handle_add_overflow(void *d, uintptr_t a, uintptr_t b) { sw_rt_num_check(1, d, a, b, SW_UB_RET); }
SW_UB_HANDLER void __ubsan_handle_sub_overflow(void *d, uintptr_t a, uintptr_t b) { sw_rt_num_check(2, d, a, b, SW_UB_RET); }
SW_UB_HANDLER void __ubsan_handle_mul_overflow(void *d, uintptr_t a, uintptr_t b) { sw_rt_num_check(3, d, a, b, SW_UB_RET); }
SW_UB_HANDLER void __ubsan_handle_negate_overflow(void *d, uintptr_t a) { sw_rt_num_check(4, d, a, 0, SW_UB_RET); }
SW_UB_HANDLER void __ubsan_handle_divrem_overflow(void *d, uintptr_t a, uintptr_t b) { sw_rt_num_check(5, d, a, b, SW_UB_RET); }
SW_UB_HANDLER void __ubsan_handle_shift_out_of_bounds(void *d, uintptr_t a, uintptr_t b) {
    sw_rt_num_check(6, d, a, b, SW_UB_RET);
}
SW_UB_HANDLER void __ubsan_handle_float_cast_overflow(void *d, uintptr_t a) { sw_rt_num_check(7, d, a, 0, SW_UB_RET); }
SW_UB_HANDLER void __ubsan_handle_implicit_conversion(void *d, uintptr_t a, uintptr_t b) {
    sw_rt_num_check(8, d, a, b, SW_UB_RET);
}
}
#undef SW_UB_RET
#endif

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

// ---- address spaces as types (see the notes at the top): which one, and the
// type without it ----
template <class T> struct sw_space { static constexpr int value = 0; };
template <class T> struct sw_space<__attribute__((opencl_global)) T> { static constexpr int value = 1; };
template <class T> struct sw_space<__attribute__((opencl_global_device)) T> { static constexpr int value = 2; };
template <class T> struct sw_space<__attribute__((opencl_local)) T> { static constexpr int value = 3; };
template <class T> struct sw_unspaced { typedef T type; };
template <class T> struct sw_unspaced<__attribute__((opencl_global)) T> { typedef T type; };
template <class T> struct sw_unspaced<__attribute__((opencl_global_device)) T> { typedef T type; };
template <class T> struct sw_unspaced<__attribute__((opencl_local)) T> { typedef T type; };
// T without reference, const/volatile and address space
template <class T>
using sw_bare_t = std::remove_cv_t<typename sw_unspaced<std::remove_cv_t<std::remove_reference_t<T>>>::type>;

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
template <class T> using sw_elem_t = typename sw_vec_traits<sw_bare_t<T>>::elem;
template <class T> constexpr int sw_vec_size = sw_vec_traits<sw_bare_t<T>>::size;
template <class T> constexpr bool sw_is_vector = sw_vec_traits<sw_bare_t<T>>::is_vector;

template <class T>
constexpr bool sw_is_float_scalar = std::is_same_v<T, float> || std::is_same_v<T, half> ||
                                    std::is_same_v<T, bfloat> || std::is_same_v<T, double>;
template <class T> constexpr bool sw_is_int_scalar = std::is_integral_v<T> && !std::is_same_v<T, bool>;
template <class T> constexpr bool sw_is_float_type = sw_is_float_scalar<sw_elem_t<T>>;
template <class T> constexpr bool sw_is_int_type = sw_is_int_scalar<sw_elem_t<T>>;
template <class T> constexpr bool sw_is_arith_type = sw_is_float_type<T> || sw_is_int_type<T>;
template <class T>
constexpr bool sw_is_arith_vec_or_scalar = sw_is_arith_type<T> || std::is_same_v<sw_elem_t<T>, bool>;

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

// ---- value conversions: half <-> bfloat (clang refuses a direct cast; Metal
// converts, rounding once: every half is exact in float) ----
template <class T> constexpr bool sw_is_fp16 = std::is_same_v<T, half> || std::is_same_v<T, bfloat>;
template <class E, class X> constexpr E sw_cvt(X x) {   // by value: the copy is in the default space
    if constexpr (sw_is_fp16<E> && sw_is_fp16<sw_bare_t<X>> && !std::is_same_v<E, sw_bare_t<X>>) return (E)(float)x;
    else return static_cast<E>(x);
}

// ---- MSL constructor syntax: float4(x), float4(v.xy, 0, 1), float2(half2 v) ----
template <class E, class A> inline void sw_mk_put(E *out, int &k, const A &a) {
    if constexpr (sw_is_vector<A>) {
        for (int i = 0; i < sw_vec_size<A>; i++) out[k++] = sw_cvt<E>(a[i]);
    } else {
        out[k++] = sw_cvt<E>(a);
    }
}
template <class V, class A> inline V sw_mk_splat(const A &s) {
    V v;
    for (int i = 0; i < sw_vec_size<V>; i++) v[i] = sw_cvt<sw_elem_t<V>>(s);
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

// A braced initialiser of one vector (msl_front.c rewrites those that name a value):
// as in MSL, a vector in the list gives its elements in order (float4 v = {p.xy, q.xy})
// and missing elements are zero.  A constant expression, for constant declarations.
template <class E, class A> constexpr void sw_brace_put(E *out, int &k, const A &a) {
    if constexpr (sw_is_vector<A>) {
        for (int i = 0; i < sw_vec_size<A>; i++) out[k++] = sw_cvt<E>(a[i]);
    } else {
        out[k++] = sw_cvt<E>(a);
    }
}
template <class V, class E, int... I> constexpr V sw_brace_from(const E *t, std::integer_sequence<int, I...>) {
    return V{t[I]...};
}
template <class V, class... A> constexpr V sw_brace(const A &...a) {
    typedef sw_elem_t<V> E;
    constexpr int N = sw_vec_size<V>;
    static_assert((0 + ... + sw_vec_size<A>) <= N, "excess elements in a vector initializer");
    E tmp[N] = {};
    int k = 0;
    (sw_brace_put(tmp, k, a), ...);
    return sw_brace_from<V>(tmp, std::make_integer_sequence<int, N>{});
}

// C-style and functional casts to a vector, half or bfloat ((float4)h4, half(b)),
// and every static_cast (msl_front.c rewrites them): vector to vector converts
// each component, scalar to vector splats, half <-> bfloat converts through float.
template <class T, class X> constexpr T sw_convert(const X &x) {
    typedef sw_bare_t<X> S;
    if constexpr (sw_is_vector<T> && sw_is_vector<S> && !std::is_same_v<T, S>) {
        static_assert(sw_vec_size<T> == sw_vec_size<S>, "vector conversion between different sizes");
        T r{};
        for (int i = 0; i < sw_vec_size<T>; i++) r[i] = sw_cvt<sw_elem_t<T>>(x[i]);
        return r;
    } else if constexpr (sw_is_vector<T> && !sw_is_vector<S>) {
        return sw_mk_splat<T>(x);
    } else if constexpr (!sw_is_vector<T> && !std::is_class_v<T> && !std::is_class_v<S>) {
        return sw_cvt<T>(x);
    } else {
        return T(x);
    }
}
// The argument by const reference: a vector element (v.x) binds to no other.
// (Casts to references and pointers are left as static_cast by the front end.)
template <class T, class X> constexpr T sw_static_cast(const X &x) {
    typedef sw_bare_t<X> S;
    if constexpr (!std::is_reference_v<T> && (sw_is_vector<T> || sw_is_fp16<T>) && sw_is_arith_vec_or_scalar<S>)
        return sw_convert<T>(x);
    else
        return static_cast<T>(x);
}
// A C-style cast to a template parameter or a vector alias, `(TC) x` (msl_front.c
// rewrites them; the type is known only here): as in MSL, a vector, half or bfloat
// target converts each value (half4 -> float4 never reinterprets bits, and a cast
// between vectors of one size in bytes would); any other target is C's cast.
template <class T, class X> constexpr T sw_ccast(const X &x) {
    typedef sw_bare_t<X> S;
    if constexpr ((sw_is_vector<T> || sw_is_fp16<T>) && sw_is_arith_vec_or_scalar<S>)
        return sw_convert<T>(x);
    else
        return (T)x;
}
// T(a...) of a template parameter T (msl_front.c rewrites them): MSL's vector
// constructor or conversion where T is a vector, half or bfloat; T's own otherwise.
template <class T, class... A> constexpr T sw_fcast(const A &...a) {
    if constexpr (sw_is_vector<T> && !std::is_class_v<T> && sizeof...(A) > 0)
        return sw_mk<T>(a...);
    else if constexpr (sw_is_fp16<T> && sizeof...(A) == 1 && (sw_is_arith_vec_or_scalar<sw_bare_t<A>> && ...))
        return sw_convert<T>(a...);
    else
        return T(a...);
}
// A comparison as an operand of a constructor or cast (msl_front.c wraps them): MSL
// makes it a bool or bool vector, clang an int vector of 0 / -1; float4(a < b) is 1.
template <class X> constexpr auto sw_truth(const X &x) {
    if constexpr (sw_is_vector<X>) {
        vec<bool, sw_vec_size<X>> r;
        for (int i = 0; i < sw_vec_size<X>; i++) r[i] = x[i] != 0;
        return r;
    } else {
        return (bool)x;
    }
}
// Metal's trait for a type without its address space.
template <class T> struct remove_addrspace { typedef typename sw_unspaced<T>::type type; };
template <class T> using remove_addrspace_t = typename remove_addrspace<T>::type;

// ---- address spaces as types (see the notes at the top) ----

// An operand of ?: (msl_front.c wraps them): an object of class type in device,
// constant or threadgroup memory becomes a copy in the default address space, so
// that both operands meet at one type as in MSL.  Otherwise: a class object
// itself (an lvalue stays assignable, a temporary stays a temporary), and a
// value of any other type (a vector element, v.x or v[i], binds to no
// non-const reference; a scalar ?: is then not assignable, which MSL code does not do).
template <class T, std::enable_if_t<std::is_class_v<T> && sw_space<T>::value == 0, int> = 0>
constexpr T &sw_cond_operand(T &x) {
    return x;
}
template <class T, std::enable_if_t<!std::is_lvalue_reference_v<T> && std::is_class_v<T>, int> = 0>
constexpr T sw_cond_operand(T &&x) {
    return static_cast<T &&>(x);
}
// An array (a threadgroup buffer, `c ? nullptr : buf`): its first element's address, as
// the array would decay to, constness kept as declared.
template <class T, size_t N> constexpr T *sw_cond_operand(T (&x)[N]) {
    return x;
}
template <class T> constexpr decltype(auto) sw_cond_operand(const T &x) {
    typedef std::remove_cv_t<T> U;
    if constexpr (std::is_class_v<U> && sw_space<U>::value != 0) return (typename sw_unspaced<U>::type)x;
    else if constexpr (std::is_class_v<U> || std::is_array_v<U>) return (const T &)x;
    else return (typename sw_unspaced<U>::type)x;
}

// A string literal in a call: a `constant char *` as in MSL.
template <size_t N> constexpr const __attribute__((opencl_global_device)) char *sw_str(const char (&s)[N]) {
    return (const __attribute__((opencl_global_device)) char *)s;
}

// ---- a braced list as a call argument: f({a, b, c}) (see msl_front.c) ----
template <class V, class... A> struct sw_brace_init_from {
    template <class W, class = decltype(W{std::declval<A>()...})> static std::true_type test(int);
    template <class W> static std::false_type test(...);
    static constexpr bool value = decltype(test<V>(0))::value;
};
template <class V, class... A> constexpr bool sw_brace_fits() {
    if constexpr (sw_is_vector<V>) return (sw_vec_size<A> + ... + 0) == sw_vec_size<V>;
    else return sw_brace_init_from<V, A...>::value;
}
template <class... A> struct sw_braced_t {
    std::tuple<A...> values;
    template <class V, std::enable_if_t<sw_brace_fits<V, A...>(), int> = 0> operator V() const {
        return std::apply(
            [](const A &...a) -> V {
                if constexpr (sw_is_vector<V>) return sw_mk<V>(a...);
                else return V{a...};
            },
            values);
    }
};
template <class... A> inline sw_braced_t<A...> sw_braced(A... a) { return {std::tuple<A...>(a...)}; }

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
SW_USING_TRAIT(declval)
SW_USING_TRAIT(extent)
// Metal's internal names for the std logical traits (MLX uses _disjunction)
template <class... B> using _disjunction = std::disjunction<B...>;
template <class... B> using _conjunction = std::conjunction<B...>;
template <class B> using _negation = std::negation<B>;
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
// What every IEEE floating type's limits share (Apple's metal_limits has this base
// too: kernels derive their own types' limits from it).
struct _fp_numeric_limits_impl_base {
    static constexpr bool is_specialized = true;
    static constexpr bool is_signed = true;
    static constexpr bool is_integer = false;
    static constexpr bool is_exact = false;
    static constexpr bool has_infinity = true;
    static constexpr bool has_quiet_NaN = true;
    static constexpr bool has_signaling_NaN = true;
    static constexpr std::float_denorm_style has_denorm = std::denorm_present;
    static constexpr bool has_denorm_loss = false;
    static constexpr std::float_round_style round_style = std::round_to_nearest;
    static constexpr bool is_iec559 = true;
    static constexpr bool is_bounded = true;
    static constexpr bool is_modulo = false;
    static constexpr bool traps = false;
    static constexpr bool tinyness_before = false;
};
// half and bfloat limits are constant expressions (MLX's Limits<T> uses them in
// constexpr initialisers); the bit patterns are IEEE binary16 and bfloat16's.
template <class T, uint16_t Min, uint16_t Max, uint16_t Eps, uint16_t Denorm, int Digits, int MinExp, int MaxExp>
struct sw_fp16_limits : _fp_numeric_limits_impl_base {
    static constexpr int radix = 2;
    static constexpr int digits = Digits;
    static constexpr int min_exponent = MinExp;
    static constexpr int max_exponent = MaxExp;
    static constexpr T min() { return __builtin_bit_cast(T, Min); }
    static constexpr T max() { return __builtin_bit_cast(T, Max); }
    static constexpr T lowest() { return __builtin_bit_cast(T, (uint16_t)(Max | 0x8000u)); }
    static constexpr T epsilon() { return __builtin_bit_cast(T, Eps); }
    static constexpr T denorm_min() { return __builtin_bit_cast(T, Denorm); }
    static constexpr T round_error() { return __builtin_bit_cast(T, (uint16_t)(Digits == 11 ? 0x3800u : 0x3f00u)); }
    static constexpr T infinity() { return __builtin_bit_cast(T, (uint16_t)(Digits == 11 ? 0x7c00u : 0x7f80u)); }
    static constexpr T quiet_NaN() { return __builtin_bit_cast(T, (uint16_t)(Digits == 11 ? 0x7e00u : 0x7fc0u)); }
    static constexpr T signaling_NaN() { return __builtin_bit_cast(T, (uint16_t)(Digits == 11 ? 0x7d00u : 0x7fa0u)); }
};
// As in Apple's metal_limits, numeric_limits<T> is _numeric_limits_impl<T>, which
// kernels specialise for their own types (MLX's bfloat16_t, an indexed<T> pair).
template <class T> struct _numeric_limits_impl : std::numeric_limits<T> {};
template <> struct _numeric_limits_impl<half> : sw_fp16_limits<half, 0x0400, 0x7bff, 0x1400, 0x0001, 11, -13, 16> {};
template <>
struct _numeric_limits_impl<bfloat> : sw_fp16_limits<bfloat, 0x0080, 0x7f7f, 0x3c00, 0x0001, 8, -125, 128> {};
using std::float_denorm_style;
using std::float_round_style;
using std::denorm_absent;
using std::denorm_indeterminate;
using std::denorm_present;
using std::round_indeterminate;
using std::round_to_nearest;
using std::round_toward_infinity;
using std::round_toward_neg_infinity;
using std::round_toward_zero;
template <class T> struct numeric_limits : _numeric_limits_impl<T> {};
template <class T> struct numeric_limits<const T> : numeric_limits<T> {};

// ---- metal::array<T, N>: a fixed-size array that copies like a value ----
template <class T, size_t N> struct array {
    T sw_elems[N ? N : 1];
    constexpr T &operator[](size_t i) { return sw_elems[i]; }
    constexpr const T &operator[](size_t i) const { return sw_elems[i]; }
    constexpr size_t size() const { return N; }
    constexpr bool empty() const { return N == 0; }
    constexpr T *data() { return sw_elems; }
    constexpr const T *data() const { return sw_elems; }
    constexpr T *begin() { return sw_elems; }
    constexpr T *end() { return sw_elems + N; }
    constexpr const T *begin() const { return sw_elems; }
    constexpr const T *end() const { return sw_elems + N; }
};

// ---- uniform<T>: a value the same in every thread (a hint to Metal's compiler;
// here the value itself) ----
template <class T> using uniform = T;
template <class T> constexpr T make_uniform(T x) { return x; }

} // namespace metal

using namespace metal;

// ---- kernel argument unpacking (used by the generated extern "C" entries) ----
namespace sw {

template <int I> struct buffer_arg_t {
    void *p;
    template <class A> A get() const {
        // C-style casts: they may change the address space (reinterpret_cast may not)
        if constexpr (std::is_pointer_v<A>) return (A)p;
        else if constexpr (std::is_reference_v<A>) return *(std::remove_reference_t<A> *)p;
        else return *(const A *)p;
    }
};
template <int I> inline buffer_arg_t<I> buffer_arg(const sw_thread_args *a) { return {a->buffers[I]}; }

template <int I> struct threadgroup_arg_t {
    void *p;
    template <class A> A get() const {
#ifdef SW_COUNT
        void *q = sw_rt_tg_arg(p); // counted by block where the kernel uses it (count_pass.c)
#else
        void *q = p;
#endif
        if constexpr (std::is_pointer_v<A>) return (A)q;
        else return *(std::remove_reference_t<A> *)q;
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
        if constexpr (ATTR >= SW_ATTR_THREAD_INDEX_IN_QUADGROUP) {
            uint32_t q = ATTR == SW_ATTR_THREAD_INDEX_IN_QUADGROUP        ? ids->thread_index_in_simdgroup % 4
                         : ATTR == SW_ATTR_QUADGROUP_INDEX_IN_THREADGROUP ? ids->thread_index_in_threadgroup / 4
                                                                          : (ids->threads_per_threadgroup[0] *
                                                                                 ids->threads_per_threadgroup[1] *
                                                                                 ids->threads_per_threadgroup[2] +
                                                                             3) / 4;
            return (V)q;
        }
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

// The type of a kernel's parameter I as the compiler prints it: the compile
// command reads element type, address space and access from it.  The text is
// __PRETTY_FUNCTION__ of type_name<T>, "... [T = const __global float *]".
template <class T> constexpr const char *type_name() { return __PRETTY_FUNCTION__; }
template <int I, class A0, class... A> struct param_at { typedef typename param_at<I - 1, A...>::type type; };
template <class A0, class... A> struct param_at<0, A0, A...> { typedef A0 type; };
template <int I, class... A> constexpr const char *param_type(void (*)(A...)) {
    return type_name<typename param_at<I, A...>::type>();
}

// The struct a kernel parameter I points to or refers to, without address space
// and cv (the layout tables measure it: msl_emit_struct.c).
template <class F> struct fn_params;
template <class... A> struct fn_params<void (*)(A...)> {
    template <int I> using at = typename param_at<I, A...>::type;
};
template <int I, class F>
using param_struct_t = sw_bare_t<std::remove_pointer_t<sw_bare_t<typename fn_params<F>::template at<I>>>>;

// MTLDataType of a struct member's type (Apple's values), for the layout tables
// the front end emits for struct parameters (sw_abi.h sw_struct_member): a
// vector or packed vector is its scalar's value + width - 1, anything else a struct.
template <class T> constexpr unsigned mtl_scalar_type() {
    if constexpr (std::is_same_v<T, float>) return 3;
    else if constexpr (std::is_same_v<T, half>) return 16;
    else if constexpr (std::is_same_v<T, int>) return 29;
    else if constexpr (std::is_same_v<T, unsigned>) return 33;
    else if constexpr (std::is_same_v<T, short>) return 37;
    else if constexpr (std::is_same_v<T, unsigned short>) return 41;
    else if constexpr (std::is_same_v<T, char> || std::is_same_v<T, signed char>) return 45;
    else if constexpr (std::is_same_v<T, unsigned char>) return 49;
    else if constexpr (std::is_same_v<T, bool>) return 53;
    else if constexpr (std::is_same_v<T, long> || std::is_same_v<T, long long>) return 81;
    else if constexpr (std::is_same_v<T, unsigned long> || std::is_same_v<T, unsigned long long>) return 85;
    else if constexpr (std::is_same_v<T, bfloat>) return 121;
    else return 1;
}
template <class T> struct mtl_type_of {
    static constexpr unsigned value = sw_vec_traits<T>::is_vector
        ? (mtl_scalar_type<typename sw_vec_traits<T>::elem>() == 1 ? 1 : mtl_scalar_type<typename sw_vec_traits<T>::elem>() + sw_vec_traits<T>::size - 1)
        : mtl_scalar_type<T>();
};
template <class T, int N> struct mtl_type_of<metal::packed_vec<T, N>> {
    static constexpr unsigned value = mtl_scalar_type<T>() == 1 ? 1 : mtl_scalar_type<T>() + N - 1;
};
template <class T> constexpr unsigned mtl_data_type() { return mtl_type_of<std::remove_cv_t<T>>::value; }
template <class T> constexpr unsigned mtl_member_type() {
    return std::is_array_v<T> ? 2u : mtl_data_type<T>();
}
template <class T> constexpr unsigned mtl_element_type() {
    return std::is_array_v<T> ? mtl_data_type<std::remove_all_extents_t<T>>() : 0u;
}
template <class T> constexpr size_t mtl_array_length() {
    return std::is_array_v<T> ? sizeof(T) / sizeof(std::remove_all_extents_t<T>) : 0;
}
template <class T> constexpr size_t mtl_array_stride() {
    return std::is_array_v<T> ? sizeof(std::remove_all_extents_t<T>) : 0;
}

// Static threadgroup memory per kernel: each function-scope threadgroup variable of
// a kernel body registers (at load time) its size and alignment under the
// kernel's address (msl_front.c emits `(void)sw::tg_static<&kernel, ...>::reg;`).
struct tg_static_entry {
    const void *fn;
    size_t size, align;
    int key;                     // the declaration's position: its order in the body
};
enum { TG_STATIC_MAX = 1024 };
inline tg_static_entry tg_static_table[TG_STATIC_MAX];
inline int tg_static_count, tg_static_overflow;
inline int tg_static_add(const void *fn, size_t size, size_t align, int key) {
    if (tg_static_count < TG_STATIC_MAX) tg_static_table[tg_static_count++] = {fn, size, align, key};
    else tg_static_overflow = 1;
    return 0;
}
template <auto F, size_t S, size_t A, int K> struct tg_static {
    static const int reg;
};
template <auto F, size_t S, size_t A, int K> const int tg_static<F, S, A, K>::reg = tg_static_add((const void *)F, S, A, K);

#ifdef SW_COUNT
// The counting variant keeps the kernel a function of its own: what an entry does
// around it (a thread's arguments unpacked from sw_thread_args) is the device's, not
// the kernel's, and the count pass counts the kernel alone (count_pass.c).
template <class T> struct same_type {
    using type = T;
};
template <class... A> inline void call_kernel(void (*f)(A...), typename same_type<A>::type... a) {
    [[clang::noinline]] f(static_cast<A>(a)...);
}
#endif

template <class... A, class... P> inline void invoke(void (*f)(A...), P... p) {
    static_assert(sizeof...(A) == sizeof...(P), "kernel parameter count differs from its bindings");
#ifdef SW_COUNT
    call_kernel(f, p.template get<A>()...);
#else
    f(p.template get<A>()...);
#endif
}

// sw_range_fn (sw_abi.h): the threads of a threadgroup of a kernel that never
// synchronises, one after another, as the executor's plain loop runs them, with
// the call to the kernel in the loop instead of behind a function pointer.  The
// kernel reads a local copy of the ids (registers, once inlined); the executor's
// copy gets only the thread index, from which a report or sw_rt_ids() rebuilds the
// rest (range_sync_thread in exec.c).
template <class Call> inline void run_range(sw_ids *shared, const uint32_t *base, uint32_t n, Call call) {
    sw_ids id = *shared;
    const uint32_t ax = id.threads_per_threadgroup[0], ay = id.threads_per_threadgroup[1];
    const bool one_d = ay == 1 && id.threads_per_threadgroup[2] == 1; // no divisions then (loop-invariant)
    for (uint32_t i = 0; i < n; i++) {
        const uint32_t l[3] = {one_d ? i : i % ax, one_d ? 0 : (i / ax) % ay, one_d ? 0 : i / (ax * ay)};
        for (int k = 0; k < 3; k++) {
            id.thread_position_in_threadgroup[k] = l[k];
            id.thread_position_in_grid[k] = base[k] + l[k];
        }
        id.thread_index_in_threadgroup = i;
        id.simdgroup_index_in_threadgroup = i / SW_SIMD_WIDTH;
        id.thread_index_in_simdgroup = i % SW_SIMD_WIDTH;
        shared->thread_index_in_threadgroup = i;
        // The fault handler reads which thread faulted from that store: it must be
        // made before the thread's accesses, and the threads must not be merged into
        // vector iterations (a scatter would fault for a thread the record does not
        // name).  A signal fence says both to the compiler and costs no instruction.
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        call(&id);
    }
}

} // namespace sw

// The kernel's static threadgroup bytes (sw_abi.h), in declaration order with each
// variable aligned as sw_rt_tg_alloc aligns it.
extern "C" long sw_tg_static_bytes(const void *fn) {
    if (sw::tg_static_overflow) return -1;
    long off = 0;
    int last_key = -1;
    for (;;) {   // the entries of fn in key order (a handful per kernel)
        const sw::tg_static_entry *next = nullptr;
        for (int i = 0; i < sw::tg_static_count; i++) {
            const sw::tg_static_entry *e = &sw::tg_static_table[i];
            if (e->fn == fn && e->key > last_key && (!next || e->key < next->key)) next = e;
        }
        if (!next) return off;
        off = (off + (long)next->align - 1) / (long)next->align * (long)next->align + (long)next->size;
        last_key = next->key;
    }
}

#include "sw_math.h"
#include "sw_matrix.h"
#include "sw_sync.h"
#include "sw_builtins.h"

// Address spaces and other MSL words: defined last so that no library header
// above sees them.
#define device __attribute__((opencl_global))
#define thread
#define threadgroup __attribute__((opencl_local))
#define constant const __attribute__((opencl_global_device))
#define METAL_FUNC inline __attribute__((always_inline))
#define is_function_constant_defined(name) sw_fcdef_##name

#ifdef SW_LANES
#include "sw_lanes.h"
#endif

#endif
